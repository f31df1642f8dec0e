"""Orchestration overhead of a finished workflow run, from its `benchmark:` files and job logs.

Usage: python benchmarks/workflow_overhead.py [results_dir]

For every job, Snakemake's benchmark file gives its wall time (process start,
imports, work, exit).  Run jobs also log the seconds spent in the study's
computation and in MLflow logging, and every job logs the seconds it spent
inside its script (``job_seconds``).  Orchestration overhead = job wall time
minus in-script time (process start, Snakemake's script preamble, importing
numpy/pandas), plus Snakemake's own start-up and scheduling (the whole run's
wall time not covered by jobs on the critical path is not counted: it is
reported separately as the total).
"""

import re
import sys
from pathlib import Path

import pandas as pd


def main(results="results"):
    results = Path(results)
    rows = []
    for tsv in results.glob("benchmarks/**/*.tsv"):
        b = pd.read_csv(tsv, sep="\t")
        rule = tsv.relative_to(results / "benchmarks").parts[0]
        rows.append({"rule": rule, "job": str(tsv.relative_to(results / "benchmarks")), "wall_s": float(b["s"].iloc[0])})
    jobs = pd.DataFrame(rows)
    in_job = 0.0
    for log in results.glob("logs/**/*.log"):
        m = re.search(r"job_seconds=([\d.]+)", log.read_text())
        in_job += float(m.group(1)) if m else 0.0
    compute = tracking = 0.0
    for log in results.glob("logs/run/**/*.log"):
        m = re.search(r"compute_seconds=([\d.]+) tracking_seconds=([\d.]+)", log.read_text())
        if m:
            compute += float(m.group(1))
            tracking += float(m.group(2))
    # MLflow is logged once per study by its track_runs step
    for log in results.glob("logs/track_runs/*.log"):
        tracking += sum(float(t) for t in re.findall(r"tracking_seconds=([\d.]+)", log.read_text()))
    total = jobs["wall_s"].sum()
    by_rule = jobs.groupby("rule")["wall_s"].agg(["count", "sum"]).sort_values("sum", ascending=False)
    print(by_rule.to_string())
    print(f"jobs: {len(jobs)}, summed job wall time: {total:.1f} s")
    print(f"study computation: {compute:.1f} s ({compute / total:.1%}), MLflow logging: {tracking:.1f} s "
          f"({tracking / total:.1%})")
    other = in_job - compute - tracking
    print(f"other in-job work (data loading, stats, plots, PDFs): {other:.1f} s ({other / total:.1%})")
    over = total - in_job
    print(f"orchestration overhead (process start + script preamble): {over:.1f} s = {over / total:.1%} "
          f"of job time, {over / len(jobs):.2f} s per job")
    return over / total


if __name__ == "__main__":
    main(*sys.argv[1:])
