"""Deterministic train/test splits of one data set for every seed (thin adapter).

Run as a command by the rule ``split`` (``shell:``, not ``script:``): no Snakemake import and no
pickled preamble in the job, about 0.1 CPU-s and 0.3 s of wall time less per job (issue 39)::

    python split.py DATASET DATA_NPZ OUT_NPZ LOG --seeds SEED [SEED ...]
"""
import argparse

from nystrom_bench.jobs import job_log


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("data", help="the data set's .npz (rule obtain)")
    p.add_argument("out", help="the splits' .npz to write")
    p.add_argument("log", help="the job's log file")
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    a = p.parse_args(argv)
    with job_log(a.log) as log:
        from nystrom_bench.jobs import save_splits

        save_splits(a.dataset, a.seeds, a.data, a.out)
        log.info("splits for seeds %s", a.seeds)


if __name__ == "__main__":
    main()
