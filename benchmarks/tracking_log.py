"""Time a study's MLflow logging as the workflow's aggregate step does it (prune, then ``log_job`` per
result file, then the UI link), with the tracking module of this tree and, interleaved job by job,
that of another git revision, each into its own scratch SQLite store (issue 38, item 2; issue 39).

    python benchmarks/tracking_log.py RESULTS_DIR OUT_DIR [--study samplers] [--coords m] [--old REV]
                                      [--files N] [--rerun] [--servers URL_NEW URL_OLD] [--fold seed]

RESULTS_DIR holds the study's job result files (``results/<study>/runs/*.csv``).  The stores are
``OUT_DIR/new`` and ``OUT_DIR/old``; ``--rerun`` logs everything a second time (nothing changed: the
incremental path); ``--servers`` logs to two tracking servers instead (e.g. ``mlflow server``
on two ports).  Prints per module and pass the seconds of each MlflowClient method (calls, ms a
call), the SQLite transactions and the total; compare the stores with benchmarks/tracking_compare.py.
Runs on a shared machine are noisy: the two modules alternate which goes first at every job, so
their ratio is what to read.
"""

import argparse
import collections
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module(rev):
    if rev is None:
        from nystrom_bench import tracking
        return tracking
    src = subprocess.run(["git", "show", f"{rev}:src/nystrom_bench/tracking.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "tracking_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("nystrom_bench._tracking_old", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--study", default="samplers")
    ap.add_argument("--coords", default="m", help="the study's coords, comma-separated")
    ap.add_argument("--old", default=None, help="git revision of the other tracking module")
    ap.add_argument("--files", type=int, default=None)
    ap.add_argument("--fold", default="", help="identity columns this tree's module folds into the metric keys "
                    "(the study kind's tracking_fold, e.g. seed); the other module logs as it does")
    ap.add_argument("--rerun", action="store_true")
    ap.add_argument("--servers", nargs=2, default=None, metavar=("URL_NEW", "URL_OLD"))
    args = ap.parse_args()

    t0 = time.perf_counter()
    from mlflow.tracking import MlflowClient
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from nystrom_bench import results
    import_s = time.perf_counter() - t0
    mods = {"new": _module(None)}
    if args.old:
        mods["old"] = _module(args.old)
    prof = {(m, p): collections.defaultdict(lambda: [0, 0.0]) for m in mods for p in ("first", "rerun")}
    current = [None]

    def wrap(name):
        real = getattr(MlflowClient, name)

        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return real(*a, **k)
            finally:
                rec = prof[current[0]][name]
                rec[0] += 1
                rec[1] += time.perf_counter() - t
        setattr(MlflowClient, name, timed)

    for name in ("create_run", "log_batch", "log_inputs", "set_terminated", "search_runs", "delete_run",
                 "log_artifact", "set_tag", "get_experiment_by_name", "get_experiment", "create_experiment",
                 "set_experiment_tag", "get_run"):
        wrap(name)
    commits = collections.Counter()
    event.listen(Engine, "commit", lambda conn: commits.update([current[0]]))

    files = sorted(Path(args.results_dir).glob("*.csv"))[:args.files]
    coords = [c for c in args.coords.split(",") if c]
    tags = {"git_commit": "0" * 40, "config_hash": "0" * 16, "version.mlflow": "3.17.2"}
    totals = collections.defaultdict(float)
    uris = {}
    for m in mods:
        (Path(args.out_dir) / m).mkdir(parents=True, exist_ok=True)
        uris[m] = f"sqlite:///{Path(args.out_dir).resolve() / m / 'mlflow.db'}"
        if args.servers:
            uris[m] = args.servers[0 if m == "new" else 1]
    for phase in ("first", "rerun") if args.rerun else ("first",):
        order = list(mods)
        for step, f in enumerate([None, *files, "link"]):
            for m in order if step % 2 == 0 else order[::-1]:
                tr, current[0] = mods[m], (m, phase)
                t = time.perf_counter()
                if f is None:
                    tr.prune(args.study, {f"{args.study}/{p.stem}" for p in files}, tracking_uri=uris[m])
                elif f == "link":
                    tr.ui_link(args.study, uris[m])
                else:
                    rows = tr.rows_from_frame(results.read_results(f), coords)
                    info = {"digest": f.stem[:16], "source": "code", "source_type": "code",
                            "schema": json.dumps({"n_samples": 500, "n_features": 8, "task": "classification"})}
                    tr.log_job(args.study, f"{args.study}/{f.stem}", rows, result_file=f, tracking_uri=uris[m],
                               tags=tags, job_params={"kind": args.study, "datasets": [f.stem]},
                               description=f"{args.study}.\n\nA study.", datasets={f.stem: info}, coords=coords,
                               metrics_info={"test_error": ("Test error", True)},
                               **({"fold": tuple(args.fold.split(","))} if args.fold and m == "new" else {}))
                totals[(m, phase)] += time.perf_counter() - t
    out = {"files": len(files), "import_mlflow_s": round(import_s, 2)}
    for key, total in totals.items():
        out["/".join(key)] = {"seconds": round(total, 2), "sqlite_commits": commits[key],
                              "calls": {k: f"{c} x {1000 * s / c:.1f} ms = {s:.1f} s"
                                        for k, (c, s) in sorted(prof[key].items())}}
    if "old" in mods:
        for phase in ("first", "rerun") if args.rerun else ("first",):
            out[f"new/old {phase}"] = round(totals[("new", phase)] / totals[("old", phase)], 3)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
