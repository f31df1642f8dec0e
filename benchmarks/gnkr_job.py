"""One gnkr run job of the workflow, run directly: profile it, time it, compare its result rows.

The job is the one ``make reproduce`` runs for a data set of a config block (default: the ``gnkr``
block of ``config/config.yaml``): its data set and splits are built in ``--work`` (once), then
``run_study_job`` runs it with one BLAS thread, as ``workflow/scripts/run.py`` does.

    .venv/bin/python benchmarks/gnkr_job.py run gnkr_f1 --out /tmp/new.csv [--profile /tmp/prof.txt]
    .venv/bin/python benchmarks/gnkr_job.py compare /tmp/old.csv /tmp/new.csv
    .venv/bin/python benchmarks/gnkr_job.py ab /tmp/old_worktree gnkr_f1 --rounds 2 [--avx2]
    .venv/bin/python benchmarks/gnkr_job.py sensitivity gnkr_f1 [--against grids_avx2.npz]

``ab`` runs the job with the code of another checkout (its ``src`` first on PYTHONPATH) and with this
one, alternately, each in a fresh process under the same load, and prints each run's seconds, the
ratio new / old per round and the comparison of their result rows (``compare``: every column equal,
timings excepted; float metrics within ``--rtol``).
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# one thread everywhere, as Snakemake's environment gives a 1-thread job: libraries loaded after
# threadpool_limits (scipy's OpenBLAS, scikit-learn's OpenMP: imported on first use) would take every core
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
TIMING = {"fit_time", "sampling_time", "predict_time", "seconds"}  # by substring: sampling_seconds, ...


def job_inputs(study, dataset, config, work, seeds=None):
    """(job config slice, data file, split file) of ``study``'s job on ``dataset``; files built once."""
    import yaml

    from nystrom_bench import jobs, studies
    from nystrom_bench.config import check

    whole = yaml.safe_load(Path(config).read_text())
    whole["studies"] = {study: whole["studies"][study]}  # this block alone: an older checkout may lack others' kinds
    block = check(whole)[study]
    kind = studies.get(block.get("kind", study))
    # the data set's own slice of the block, whether the workflow runs it alone or in a split_jobs: block job
    job = {"id": dataset, "datasets": [dataset], "methods": list(block["methods"])}
    cfg = jobs.job_config(kind, block, job)
    if seeds:  # a part of the job: these seeds only
        cfg = {**cfg, "seeds": [int(s) for s in seeds]}
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    data_path, split_path = work / f"{dataset}.npz", work / f"{dataset}_splits.npz"
    if not data_path.exists():
        jobs.obtain_dataset(dataset, data_path)
    if not split_path.exists():
        jobs.save_splits(dataset, [int(s) for s in block["seeds"]], data_path, split_path)
    return cfg, data_path, split_path


def run_job(study, dataset, config, work, out, profile=None, seeds=None):
    """Run the job with one BLAS thread; write its result file ``out``; return (wall, CPU) seconds."""
    from threadpoolctl import threadpool_limits

    from nystrom_bench.jobs import run_study_job

    cfg, data_path, split_path = job_inputs(study, dataset, config, work, seeds)
    with threadpool_limits(limits=1):
        t0, c0 = time.perf_counter(), time.process_time()
        if profile:
            import cProfile
            import io
            import pstats

            prof = cProfile.Profile()
            prof.enable()
        run_study_job(study, cfg, [str(data_path)], [str(split_path)], out, None, f"{study}/{dataset}", "bench")
        seconds = time.perf_counter() - t0, time.process_time() - c0
        if profile:
            prof.disable()
            buf = io.StringIO()
            stats = pstats.Stats(prof, stream=buf).sort_stats("tottime")
            stats.print_stats(30)
            stats.sort_stats("cumulative").print_stats(40)
            Path(profile).write_text(buf.getvalue())
    return seconds


def _cell(value):
    """A result cell as a Python value: dicts / lists written as text are parsed."""
    if isinstance(value, str) and value[:1] in "{[(":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def _close(a, b, rtol):
    """Equal, or floats (also inside dicts / lists) within ``rtol`` relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rtol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if a != a and b != b:  # both NaN
            return True
        return abs(a - b) <= rtol * max(abs(a), abs(b))
    return a == b


def compare(old, new, rtol=1e-10):
    """Compare two result files row by row (timings excepted): ``(ok, lines)``."""
    import pandas as pd

    a, b = pd.read_csv(old, keep_default_na=False), pd.read_csv(new, keep_default_na=False)
    lines = [f"rows: {len(a)} vs {len(b)}"]
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False, lines + [f"columns differ: {list(a.columns)} vs {list(b.columns)}"]
    cols = [c for c in a.columns if not any(t in c for t in TIMING) and c not in ("run_id", "started", "git_commit")]
    exact = bitwise = 0
    worst = (0.0, None)
    bad = []
    for c in cols:
        for i, (x, y) in enumerate(zip(a[c], b[c], strict=True)):
            x, y = _cell(x), _cell(y)
            try:
                x, y = (float(x), float(y)) if isinstance(x, (int, float)) and isinstance(y, (int, float)) else (x, y)
            except (TypeError, ValueError):
                pass
            if x == y or (isinstance(x, float) and x != x and y != y):
                exact += 1
                bitwise += 1
                continue
            if isinstance(x, float) and isinstance(y, float):
                rel = abs(x - y) / max(abs(x), abs(y))
                worst = max(worst, (rel, f"{c}[{i}]"), key=lambda t: t[0])
            if _close(x, y, rtol):
                exact += 1
            else:
                bad.append(f"{c}[{i}]: {x!r} vs {y!r}")
    lines.append(f"cells compared: {len(cols) * len(a)} in {len(cols)} columns (timings excepted); "
                 f"bit-identical: {bitwise}; within rtol {rtol:g}: {exact}; differing: {len(bad)}")
    if worst[1]:
        lines.append(f"largest relative difference of a float cell: {worst[0]:.3g} ({worst[1]})")
    lines += bad[:20]
    return not bad, lines


def ab(old_tree, study, dataset, config, work, rounds, rtol, avx2, seeds=None):
    """Interleave old and new runs of the job in fresh processes; print seconds and ratios."""
    env = dict(os.environ)
    if avx2:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from run import AVX2_ENV

        env.update(AVX2_ENV)
    job_inputs(study, dataset, config, work)  # build the inputs once, untimed
    trees = {"old": Path(old_tree).resolve(), "new": ROOT}
    times, cpu = {"old": [], "new": []}, {"old": [], "new": []}
    for r in range(rounds):
        for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
            out = Path(work) / f"{dataset}_{name}.csv"
            cmd = [sys.executable, str(ROOT / "benchmarks" / "gnkr_job.py"), "run", dataset, "--study", study,
                   "--config", str(config), "--work", str(work), "--out", str(out)] + \
                (["--seeds", ",".join(map(str, seeds))] if seeds else [])
            e = {**env, "PYTHONPATH": str(trees[name] / "src")}
            res = subprocess.run(cmd, env=e, capture_output=True, text=True)
            if res.returncode:
                raise RuntimeError(f"{name} run failed:\n{res.stderr[-3000:]}")
            secs, cpus = map(float, res.stdout.strip().splitlines()[-1].split()[-2:])
            times[name].append(secs)
            cpu[name].append(cpus)
            print(f"round {r} {name}: {secs:.1f} s wall, {cpus:.1f} s CPU", flush=True)
        print(f"round {r} ratio new / old: wall {times['new'][-1] / times['old'][-1]:.3f}, CPU "
              f"{cpu['new'][-1] / cpu['old'][-1]:.3f}", flush=True)
    ratios = [n / o for n, o in zip(times["new"], times["old"], strict=True)]
    print(f"{dataset}: old {' '.join(f'{t:.1f}' for t in times['old'])} s; new "
          f"{' '.join(f'{t:.1f}' for t in times['new'])} s; ratio new / old per round "
          f"{' '.join(f'{x:.3f}' for x in ratios)}; CPU seconds old {' '.join(f'{t:.1f}' for t in cpu['old'])}, new "
          f"{' '.join(f'{t:.1f}' for t in cpu['new'])}, ratio "
          f"{' '.join(f'{n / o:.3f}' for n, o in zip(cpu['new'], cpu['old'], strict=True))}"
          f"{' (AVX2 emulated)' if avx2 else ''}")
    ok, lines = compare(Path(work) / f"{dataset}_old.csv", Path(work) / f"{dataset}_new.csv", rtol)
    print("\n".join(lines))
    return ok


def _grid(X, y, Xt, yt, Z, kname, sigmas, lams, variant):
    """Test RMSE over sigmas x lams of GNKR on landmarks Z: ``variant`` "base" (the library), "perturbed"
    (K_nm^T K_nm times 1 + 1e-16 N(0, 1), symmetrised), "evd" (LAPACK syevd instead of syevr)."""
    import numpy as np
    from scipy import linalg

    from nystrom_bench import kernels
    from nystrom_bench.learners.gnkr import _filter_path, gnkr_path

    out = []
    for sg in sigmas:
        k = kernels.make(kname, sigma=sg)
        if variant == "base":
            A = gnkr_path(X, y, Z, k, lams)
        else:
            G, b = k.gram(X, Z, y)
            if variant == "perturbed":
                G = G * (1 + 1e-16 * np.random.default_rng(5).standard_normal(G.shape))
                G = (G + G.T) / 2
            s, U = linalg.eigh(G, check_finite=False, driver="evd" if variant == "evd" else "evr")
            A = _filter_path(np.maximum(s, 0.0), U, U.T @ b, None, len(X), len(Z), lams)
        out.append(np.sqrt(np.mean((k(Xt, Z) @ A.T - yt[:, None]) ** 2, axis=0)))
    return np.array(out)


def sensitivity(dataset, seed, m, work, config, save=None, against=None):
    """How far the recorded RMSEs move under a last-bit change of the Gram matrix (gnkr block, US landmarks
    of one seed): per-width minima (``rmse_by_sigma``) and the overall minimum, for each kernel."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from nystrom_bench import data, jobs

    cfg, data_path, split_path = job_inputs("gnkr", dataset, config, work)
    a, sp = data.load_npz(data_path), jobs.load_splits(split_path)[seed]
    X, y, Xt, yt = a["X"][sp["train"]], a["y"][sp["train"]], a["X"][sp["test"]], a["y"][sp["test"]]
    p = cfg["params"]
    sigmas, lams = [float(v) for v in p["sigma_grid"] + p["extra_sigmas"]], [float(v) for v in p["lambda_grid"]]
    Z = X[np.random.default_rng(1).choice(len(X), m, replace=False)]
    with threadpool_limits(limits=1):
        base = {k: _grid(X, y, Xt, yt, Z, k, sigmas, lams, "base") for k in ("gaussian", "epanechnikov")}
        if save:
            np.savez(save, **base)
            return
        other = {"perturbed": {}, "evd": {}}
        for v in other:
            for k in base:
                other[v][k] = _grid(X, y, Xt, yt, Z, k, sigmas, lams, v)
        if against:
            other["other machine (" + Path(against).stem + ")"] = dict(np.load(against))
    print(f"{dataset}, seed {seed}, {m} uniform landmarks, {len(sigmas)} widths x {len(lams)} lambdas: relative "
          "change against the library on this machine")
    print("| change | per-width minima, largest | overall minimum G / E | best lambda index per width (G) |")
    print("|---|---|---|---|")
    for v, grids in other.items():
        per = max(float(np.max(np.abs(g.min(1) - base[k].min(1)) / base[k].min(1))) for k, g in grids.items())
        overall = [abs(grids[k].min() - base[k].min()) / base[k].min() for k in base]
        print(f"| {v} | {per:.1g} | {overall[0]:.1g} / {overall[1]:.1g} | {base['gaussian'].argmin(1).tolist()} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "ab"):
        p = sub.add_parser(name)
        if name == "ab":
            p.add_argument("old_tree", help="checkout of the old code (its src/ goes first on PYTHONPATH)")
            p.add_argument("--rounds", type=int, default=2)
            p.add_argument("--rtol", type=float, default=1e-10)
            p.add_argument("--avx2", action="store_true", help="emulate an AVX2-only CPU (benchmarks/run.py)")
        p.add_argument("dataset")
        p.add_argument("--study", default="gnkr")
        p.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
        p.add_argument("--work", default="/tmp/gnkr_job")
        if name == "run":
            p.add_argument("--out", required=True)
            p.add_argument("--profile", help="write cProfile statistics here")
        p.add_argument("--seeds", help="comma-separated seeds: a part of the job (default: all of the block's)")
    p = sub.add_parser("sensitivity", help="how far recorded RMSEs move under a last-bit change")
    p.add_argument("dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
    p.add_argument("--work", default="/tmp/gnkr_job")
    p.add_argument("--save", help="only save this machine's grids (.npz), e.g. run with AVX2 emulated")
    p.add_argument("--against", help="grids saved by --save (another machine kind) to compare with")
    p = sub.add_parser("compare")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rtol", type=float, default=1e-10)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        secs = run_job(args.study, args.dataset, args.config, args.work, args.out, args.profile,
                       args.seeds and args.seeds.split(","))
        print(f"seconds (wall, CPU) {secs[0]:.3f} {secs[1]:.3f}")
        return 0
    if args.cmd == "sensitivity":
        sensitivity(args.dataset, args.seed, args.m, args.work, args.config, args.save, args.against)
        return 0
    if args.cmd == "compare":
        ok, lines = compare(args.old, args.new, args.rtol)
        print("\n".join(lines))
        return 0 if ok else 1
    return 0 if ab(args.old_tree, args.study, args.dataset, args.config, args.work, args.rounds, args.rtol,
                   args.avx2, args.seeds and args.seeds.split(",")) else 1


if __name__ == "__main__":
    sys.exit(main())
