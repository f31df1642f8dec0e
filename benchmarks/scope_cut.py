"""Which claim verdicts a smaller default block would keep: the verdicts of a finished run, recomputed on a
subset of its rows (fewer seeds, data sets or coord values), side by side with the full run's.

    .venv/bin/python benchmarks/scope_cut.py RUN_DIR gnkr --seeds 0,1
    .venv/bin/python benchmarks/scope_cut.py RUN_DIR samplers --drop-datasets wine,pima --seeds 0,1,2
    .venv/bin/python benchmarks/scope_cut.py RUN_DIR scale --where "n != 50000"
    .venv/bin/python benchmarks/scope_cut.py RUN_DIR gen_nystrom --subsets 3   (every 3 of its 5 seeds)

Issue 39: the default ``make reproduce`` has to fit 15 minutes on the slowest machine kind, and some of that
can only come from a smaller default config. A cut is acceptable where every claim verdict of the block stays
what the full block gives; this prints, per claim of the block (the claims its analysis job decides:
:func:`nystrom_bench.jobs.study_claims`), the full and the cut verdict, p-value and effect, computed by the
same code as the workflow (:func:`nystrom_bench.claims.ledger` on ``RUN_DIR/results/<study>/results.csv``
and the block of ``RUN_DIR/config/config.yaml``), and the share of the block's rows the cut keeps (about its
share of the block's run time). Timing claims recomputed on a subset of a run's rows are not those of a run
of the smaller block: the jobs beside them change.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def verdicts(study, df, block, blocks):
    """The ledger rows (claim_id, verdict, p_value, effect) of the claims ``study`` decides, on ``df``."""
    from nystrom_bench import claims, jobs, papers, studies

    kind = studies.get(block.get("kind", study))
    analysis = jobs.analysis_info(kind, block)
    own = jobs.study_claims(papers.all_claims(), study, blocks)
    if not own:
        return None
    return claims.ledger(own, {study: df}, {study: analysis})[["claim_id", "verdict", "p_value", "effect"]]


def cut(df, seeds=None, drop_datasets=(), where=None):
    """The rows of ``df`` a smaller block would have produced."""
    if seeds is not None:
        df = df[df["seed"].isin(seeds)]
    if drop_datasets:
        df = df[~df["dataset"].isin(drop_datasets)]
    if where:
        df = df.query(where)
    return df.reset_index(drop=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("study")
    ap.add_argument("--seeds", help="comma-separated seeds to keep")
    ap.add_argument("--drop-datasets", default="", help="comma-separated data sets to leave out")
    ap.add_argument("--where", help="a pandas query the kept rows satisfy, e.g. \"m != 1000\"")
    ap.add_argument("--subsets", type=int, help="try every subset of this many of the block's seeds (a verdict that "
                                                "holds on one subset only is luck); prints the changes per subset")
    args = ap.parse_args(argv)

    import pandas as pd
    import yaml

    from nystrom_bench.results import read_results

    run = Path(args.run_dir)
    config = yaml.safe_load((run / "config" / "config.yaml").read_text())
    blocks = config["studies"]
    block = blocks[args.study]
    full = read_results(run / "results" / args.study / "results.csv")
    if args.subsets:
        import itertools

        a = verdicts(args.study, full, block, blocks).set_index("claim_id")
        changed = 0
        for keep in itertools.combinations(block["seeds"], args.subsets):
            b = verdicts(args.study, cut(full, list(keep)), {**block, "seeds": list(keep)}, blocks).set_index("claim_id")
            diff = [f"{c}: {a.at[c, 'verdict']} -> {b.at[c, 'verdict']}" for c in a.index
                    if a.at[c, "verdict"] != b.at[c, "verdict"]]
            changed += bool(diff)
            print(f"seeds {list(keep)}: " + ("; ".join(diff) if diff else f"all {len(a)} verdicts unchanged"))
        n = math.comb(len(block["seeds"]), args.subsets)
        print(f"{args.study}: {n - changed} of {n} subsets of {args.subsets} seeds keep every verdict")
        return 0 if not changed else 1
    seeds = None if args.seeds is None else [int(s) for s in args.seeds.split(",")]
    small = cut(full, seeds, [d for d in args.drop_datasets.split(",") if d], args.where)
    if seeds is not None:
        block = {**block, "seeds": seeds}
    a, b = verdicts(args.study, full, block, blocks), verdicts(args.study, small, block, blocks)
    if a is None:
        print(f"{args.study}: no claim is decided by this block")
        return 0
    both = a.merge(b, on="claim_id", suffixes=("", "_cut"))
    both["same"] = both["verdict"] == both["verdict_cut"]
    with pd.option_context("display.width", 200, "display.max_colwidth", 40, "display.max_rows", 200):
        print(both.to_string(index=False))
    print(f"{args.study}: {len(small)} of {len(full)} rows kept ({len(small) / max(len(full), 1):.0%}); "
          f"{int(both['same'].sum())} of {len(both)} verdicts unchanged")
    return 0 if both["same"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
