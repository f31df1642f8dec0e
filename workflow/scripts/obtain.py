"""Obtain one data set from its source and store it as .npz (thin adapter).

Run as a command by the rule ``obtain`` (``shell:``, not ``script:``): no Snakemake import and no
pickled preamble in the job, about 0.1 CPU-s and 0.3 s of wall time less per job (issue 39)::

    python obtain.py DATASET OUT_NPZ LOG [--lock LOCK]
"""
import argparse

from nystrom_bench.jobs import job_log


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("out", help="the .npz to write")
    p.add_argument("log", help="the job's log file")
    p.add_argument("--lock", default=None, help="the download checksums' lock file")
    a = p.parse_args(argv)
    with job_log(a.log) as log:
        from nystrom_bench.jobs import obtain_dataset

        obtain_dataset(a.dataset, a.out, lock=a.lock, log=log)


if __name__ == "__main__":
    main()
