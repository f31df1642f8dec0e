"""Job-level glue between the Snakemake workflow and the library.

The scripts in ``workflow/scripts`` are thin adapters that call these functions
with ``snakemake.input/params/output``.  Every function writes its outputs
atomically (temporary file + rename), so a killed job never leaves a
half-written file that a later run would mistake for a result.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["job_log", "file_log", "obtain_dataset", "write_csv_atomic", "read_results", "run_study_job", "aggregate", "run_stats",
           "save_splits", "load_splits"]

ID_COLS = ["study", "dataset", "method", "kernel", "seed"]


@contextmanager
def job_log(path):
    """Send logging and stderr of the job to its log file; log a failure's traceback there."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "w", buffering=1)  # noqa: SIM115 - closed below
    old_stderr = sys.stderr
    sys.stderr = fh
    logging.basicConfig(stream=fh, level=logging.INFO, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("nystrom_bench.job")
    t0 = time.perf_counter()
    try:
        yield log
        log.info("job_seconds=%.3f", time.perf_counter() - t0)
    except Exception as exc:
        log.error("job failed: %s: %s", type(exc).__name__, exc)
        traceback.print_exc(file=fh)
        raise
    finally:
        sys.stderr = old_stderr
        fh.close()


@contextmanager
def file_log(path):
    """Like :func:`job_log` for code that runs inside Snakemake's own process (``run:``):
    a private logger writing to the job's log file, no global stderr/logging changes."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    log = logging.getLogger(f"nystrom_bench.job.{path}")
    log.propagate = False
    log.setLevel(logging.INFO)
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s: %(message)s"))
    log.addHandler(handler)
    t0 = time.perf_counter()
    try:
        yield log
        log.info("job_seconds=%.3f", time.perf_counter() - t0)
    except Exception as exc:
        log.error("job failed: %s: %s\n%s", type(exc).__name__, exc, traceback.format_exc())
        raise
    finally:
        log.removeHandler(handler)
        handler.close()


def obtain_dataset(dataset, out_npz, cache_dir, lock, log=None):
    """Workflow stage 1: obtain ``dataset`` from its source and store X, y, n_train as .npz."""
    from . import data

    X, y, meta = data.obtain(dataset, cache_dir=cache_dir, lock=lock, return_meta=True)
    n_train = -1 if meta["n_train"] is None else meta["n_train"]
    data.save_npz_atomic(out_npz, X=X, y=y, n_train=n_train)
    if log:
        log.info("obtained %s: X %s, y %s, source training part %s", dataset, X.shape, y.shape, n_train)


def _atomic_target(path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return path, Path(tmp)


def write_csv_atomic(df, path):
    """Write a DataFrame as CSV through a temporary file and ``os.replace``."""
    path, tmp = _atomic_target(path)
    try:
        df.to_csv(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_splits(dataset, seeds, data_path, out_path):
    """Compute the splits of ``dataset`` for every seed and store them in one .npz."""
    from . import data

    arrays = np.load(data_path)
    X, y = arrays["X"], arrays["y"]
    n_train = int(arrays["n_train"]) if "n_train" in arrays.files and int(arrays["n_train"]) >= 0 else None
    out = {}
    for seed in seeds:
        sp = data.make_split(dataset, seed, len(X), y, source_n_train=n_train)
        for key, val in sp.items():
            out[f"seed{seed}_{key}"] = val
    data.save_npz_atomic(out_path, **out)


def load_splits(path):
    """Inverse of :func:`save_splits`: ``{seed: {"train", "test", "train_noise"}}``."""
    arrays = np.load(path)
    splits = {}
    for key in arrays.files:
        seed, _, part = key.partition("_")
        splits.setdefault(int(seed[4:]), {})[part] = arrays[key]
    return splits


def results_frame(study, rows):
    """Result dicts -> tidy DataFrame: id columns, one column per metric, params as JSON."""
    import pandas as pd  # lazy: obtain/split jobs never need pandas

    records = []
    for r in rows:
        rec = {"study": study, **{k: r[k] for k in ID_COLS[1:]}}
        rec.update(r["metrics"])
        rec["params"] = json.dumps(r.get("params", {}), sort_keys=True, default=str)
        records.append(rec)
    return pd.DataFrame.from_records(records)


def read_results(path):
    """Read a tidy result file back."""
    import pandas as pd

    return pd.read_csv(path)


def run_study_job(study, kind, cfg, dataset, data_path, split_path, out_csv, tracking_uri,
                  config_hash, log=None):
    """One workflow job: run study ``kind`` on ``dataset`` and record the results.

    Writes the tidy result file ``out_csv`` (the workflow's source of truth) and
    logs one MLflow run per result, tagged with the git commit, config hash and
    package versions.  Returns the result DataFrame.
    """
    from . import provenance, studies, tracking

    t0 = time.perf_counter()
    arrays = np.load(data_path)
    splits = load_splits(split_path)
    missing = [s for s in cfg["seeds"] if int(s) not in splits]
    if missing:
        raise ValueError(f"split file {split_path} lacks seeds {missing}; re-run the split rule")
    rows = studies.get(kind).run(study, cfg, dataset, arrays["X"], arrays["y"], splits, log=log)
    df = results_frame(study, rows)
    write_csv_atomic(df, out_csv)
    t1 = time.perf_counter()
    tags = {"git_commit": provenance.git_commit(), "config_hash": config_hash,
            **{f"version.{k}": v for k, v in provenance.versions().items()}}
    tracking.log_job(study, f"{study}/{dataset}", rows, result_file=out_csv, tracking_uri=tracking_uri,
                     tags=tags)
    t2 = time.perf_counter()
    if log:
        log.info("compute_seconds=%.3f tracking_seconds=%.3f results=%d", t1 - t0, t2 - t1, len(rows))
    return df


def aggregate(inputs, output):
    """Concatenate a study's result files into one table."""
    import pandas as pd  # lazy: obtain/split jobs never need pandas

    df = pd.concat([read_results(p) for p in inputs], ignore_index=True)
    dup = df.duplicated(ID_COLS)
    if dup.any():
        raise ValueError(f"duplicate results for {df.loc[dup, ID_COLS].head().to_dict('records')}")
    write_csv_atomic(df.sort_values(ID_COLS).reset_index(drop=True), output)
    return df


def run_stats(results_csv, info, out_paired, out_friedman):
    """Paired tests of every method against the reference, per metric and overall."""
    import pandas as pd  # lazy: obtain/split jobs never need pandas

    from . import stats

    df = read_results(results_csv)
    df["block"] = df["dataset"].astype(str) + "/" + df["kernel"].astype(str)
    paired, fried = [], []
    for metric, (_, lower) in info["metrics"].items():
        if info.get("reference"):
            t = stats.paired_tests(df, metric, info["reference"], block_cols=("block", "seed"),
                                   lower_is_better=lower)
            paired.append(t)
        f = stats.friedman(df, metric, block_cols=("block", "seed"), lower_is_better=lower)
        if f:
            fried.append({**{k: v for k, v in f.items() if k != "mean_ranks"},
                          "mean_ranks": json.dumps(f["mean_ranks"])})
    paired_df = pd.concat(paired, ignore_index=True) if paired else pd.DataFrame()
    write_csv_atomic(paired_df, out_paired)
    write_csv_atomic(pd.DataFrame(fried, columns=["metric", "statistic", "p", "n_blocks", "mean_ranks"]),
                     out_friedman)
    return paired_df
