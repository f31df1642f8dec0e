"""Performance benchmarks, measured side by side in one run (`make bench`).

Writes benchmarks/results.csv and benchmarks/results.md: wall time (best of ``--repeat``) and peak
memory of

1. the Gaussian kernel block n x m x d against the bare X Z^T product, in float64 and float32, with
   the block's exp on its automatic path (nystrom_bench.fastexp) and on numpy's exp, interleaved
   (median and range of ``--repeat`` rounds, at least 5), and one kernel column K(X, z) (the thin
   path) against the GEMV X z (``benchmarks/kernel_block.py`` compares these with the code before
   the tiles and the thin path, in CPU seconds, at 1 and 2 threads); on an AVX-512 CPU the same cases run again
   in a child process that emulates an AVX2-only CPU (``AVX2_ENV``: numpy's AVX-512 code paths off,
   OpenBLAS's Haswell kernels, numba compiling for Haswell), ``--no-avx2`` skips it;
2. Nystrom KRR (fit + predict, LLA) against scikit-learn's Nystroem + Ridge with the same landmarks,
   m = 1000 and 3000: KRR's default (solver="auto", whatever it picks: ``solver`` column), our direct and
   CG solvers in float64 and float32, CG with C held or streamed;
   each variant in a forked child (nystrom_bench.profiling), peak = resident memory it added;
3. ridge_leverage (recursive RLS) sampling + Nystrom build against uniform + build (tracemalloc);
4. the machine's limits the cases are held against: GEMM GFLOP/s (float64, float32), numpy's
   float64 and float32 exp rates and the memory bandwidth; each case gets ``bound_s`` (the time its
   GEMM flops, or its bytes streamed, need at those rates) and ``of_bound`` (measured / bound), and
   every figure is also given in the machine's own units (``gemm_gflop``: the float64 GEMM GFLOP
   its seconds buy here; ``exp_g``: the G numpy float64 exponentials they buy), which compare across
   machines: a case that keeps its ``gemm_gflop`` scales with GEMM, one that keeps its ``exp_g`` with exp;
5. the projection of the default ``make reproduce`` onto the slowest machine kind (``benchmarks/project.py``)
   from the per-job costs of the finished run in this checkout (``--project RUN_DIR`` for another one).

``make bench-large`` (``--large``) runs the n = 10^6, m = 10^4 case instead (benchmarks/large.md).
Timings on a shared 2-core machine are noisy: read the ratios, not the seconds.
``--quick`` runs a 10x smaller version (a smoke test, e.g. in CI).
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from nystrom_bench import approx, fastexp, kernels, profiling, sampling
from nystrom_bench.data import make_scalable
from nystrom_bench.learners import KRR


def measure(fn, repeat):
    """(best wall seconds, peak traced bytes, result of the last call)."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
        out = None
    gc.collect()
    tracemalloc.start()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(times), peak, out


def _cpu_flags():
    """The vector extensions the numbers depend on (numpy's float64 exp is vectorised with AVX-512 only)."""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return "CPU flags unknown"
    have = [f for f in ("avx512f", "avx2", "fma") if f" {f}" in flags]
    return "flags: " + (", ".join(have) or "no AVX2")


#: an AVX2-only CPU (Haswell .. Zen 3) emulated on an AVX-512 one: numpy >= 2.4 names its AVX-512
#: dispatch targets X86_V4, AVX512_ICL, AVX512_SPR (older numpy: AVX512F, AVX512CD, AVX512_SKX, ...)
AVX2_ENV = {
    "NPY_DISABLE_CPU_FEATURES": ("X86_V4 AVX512_ICL AVX512_SPR" if tuple(map(int, np.__version__.split(".")[:2])) >= (2, 4)
                                 else "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"),
    "OPENBLAS_CORETYPE": "Haswell",
    "NUMBA_CPU_NAME": "haswell",
    "NUMBA_CPU_FEATURES": ("+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fsgsbase,+lzcnt,+mmx,+movbe,"
                           "+pclmul,+popcnt,+rdrnd,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave,+xsaveopt"),
}


def cpu_kind():
    """What the vector code in use can do: "AVX-512", "AVX2-only (emulated)" or "AVX2-only"."""
    if os.environ.get("OPENBLAS_CORETYPE") == AVX2_ENV["OPENBLAS_CORETYPE"] and not fastexp.numpy_exp_vectorised():
        return "AVX2-only (emulated)"
    return "AVX-512" if fastexp.numpy_exp_vectorised() else "AVX2-only" if "avx2" in _cpu_flags() else "other"


def interleaved(fns, repeat):
    """{name: list of seconds}: every callable once per round (after one warm-up round), so that
    the load of a shared machine falls on all of them alike."""
    times = {name: [] for name in fns}
    for r in range(repeat + 1):
        for name, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            if r:
                times[name].append(time.perf_counter() - t0)
    return times


def kernel_cases(X, Z, gamma, lim, repeat, add):
    """Gaussian block vs bare GEMM, float64 and float32; the block with its automatic exp and
    with numpy's exp (fastexp.set_choice), interleaved rounds, ratios of medians."""
    n, m, d = len(X), len(Z), X.shape[1]
    kind = cpu_kind()
    for dt in ("float64", "float32"):
        kern = kernels.make("gaussian", gamma=gamma, dtype=dt)
        buf = np.ones((n, m), dtype=dt)
        Xd, Zd = X.astype(dt), Z.astype(dt)

        def block(choice, kern=kern, buf=buf):
            def run():
                old = fastexp.set_choice(choice)
                try:
                    kern(X, Z, out=buf)
                finally:
                    fastexp.set_choice(old)
            return run

        auto = fastexp.backend(dt)
        times = interleaved({"gemm": lambda buf=buf, Xd=Xd, Zd=Zd: np.dot(Xd, Zd.T, out=buf),
                             "auto": block("auto"), "numpy": block("numpy")}, max(repeat, 5))
        bound = 2.0 * n * m * (d + 2) / lim[f"gemm_{dt}"]
        med = {k: float(np.median(v)) for k, v in times.items()}
        case = f"kernel {n}x{m}x{d}"
        for name, variant in (("gemm", f"X @ Z.T (bare GEMM) {dt}"),
                              ("auto", f"gaussian kernel {dt}, exp: {auto}"),
                              ("numpy", f"gaussian kernel {dt}, exp: numpy")):
            extra = {"cpu": kind, "min_s": min(times[name]), "max_s": max(times[name]), "bound_s": bound,
                     "of_bound": med[name] / bound}
            if name != "gemm":
                extra["ratio"] = med[name] / med["gemm"]
            add(case, variant, med[name], np.nan, **extra)
        del buf
    # one kernel column K(X, z) (the thin path: RPCholesky and greedy pivoting evaluate one per pivot)
    # against the GEMV X z of the same shape; bound: one read of X at the memory bandwidth
    kern, z = kernels.make("gaussian", gamma=gamma), Z[:1].copy()
    times = interleaved({"gemv": lambda: np.dot(X, z[0]), "column": lambda: kern(X, z)}, 4 * max(repeat, 5))
    med = {k: float(np.median(v)) for k, v in times.items()}
    bound = X.nbytes / lim["bandwidth"]
    for name, variant in (("gemv", "X @ z (bare GEMV) float64"), ("column", "gaussian kernel column float64")):
        extra = {"cpu": kind, "min_s": min(times[name]), "max_s": max(times[name]), "bound_s": bound,
                 "of_bound": med[name] / bound}
        if name != "gemv":
            extra["ratio"] = med[name] / med["gemv"]
        add(f"kernel column {n}x1x{d}", variant, med[name], np.nan, **extra)


def avx2_child(args):
    """Re-run the kernel cases in a child process that emulates an AVX2-only CPU; its rows."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results_avx2"
        cmd = [sys.executable, __file__, "--cases", "kernel", "--no-avx2", "--repeat", str(args.repeat),
               "--out", str(out)] + (["--quick"] if args.quick else []) + (
               ["--threads", str(args.threads)] if args.threads else [])
        print("AVX2-only emulation:", " ".join(f"{k}={v!r}" for k, v in AVX2_ENV.items()), flush=True)
        subprocess.run(cmd, env={**os.environ, **AVX2_ENV}, check=True)
        return pd.read_csv(out.with_suffix(".csv")).to_dict("records")


def _rate(fn, work, repeat=3):
    """``work / best seconds`` of ``fn`` over ``repeat`` calls (after one warm-up call)."""
    fn()
    best = min(_timed(fn) for _ in range(repeat))
    return work / best


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def machine_limits(scale=1):
    """GEMM GFLOP/s (float64, float32) at the kernel blocks' shape, float32 and float64 exp per second, and the memory
    bandwidth (bytes/s of a large array sum): what the cases are held against."""
    rng = np.random.default_rng(0)
    k, mm, d = 4096 // scale, 1024, 92
    lim = {}
    for dt in ("float64", "float32"):
        A = rng.normal(size=(k * 8, d)).astype(dt)
        B = rng.normal(size=(mm, d)).astype(dt)
        out = np.empty((len(A), mm), dtype=dt)
        lim[f"gemm_{dt}"] = _rate(lambda A=A, B=B, out=out: np.dot(A, B.T, out=out), 2.0 * len(A) * mm * d)
        C = rng.normal(size=(k * 4, 2048)).astype(dt)
        lim[f"syrk_{dt}"] = _rate(lambda C=C: C.T @ C, 1.0 * len(C) * 2048**2)  # numpy runs SYRK: n m^2
    E = -rng.random(size=(k * 8, mm)).astype(np.float32)
    lim["exp_float32"] = _rate(lambda: np.exp(E, out=E), E.size)
    E64 = -50 * rng.random(size=(k * 2, mm))  # numpy's float64 exp: vectorised with AVX-512 only
    buf = np.empty_like(E64)
    lim["exp_float64"] = _rate(lambda: np.exp(E64, out=buf), E64.size)
    big = np.ones(2**27 // scale)  # 1 GiB
    lim["bandwidth"] = _rate(lambda: big.sum(), big.nbytes)
    return lim


def krr_variants(gamma, alpha, idx, X, y, Xt):
    """name -> (fit + predict on X, y, Xt) callables: ours in every solver and precision, and scikit-learn's."""
    def ours(solver, dtype, budget=None, cg_tol=1e-4):
        def run():
            from nystrom_bench import solvers

            old = solvers.STORE_BUDGET_BYTES
            if budget is not None:
                solvers.STORE_BUDGET_BYTES = budget
            try:
                model = KRR(gamma=gamma, alpha=alpha, mode="lla", landmarks=idx, fit_intercept=False, solver=solver,
                            dtype=dtype, cg_tol=cg_tol).fit(X, y)
            finally:
                solvers.STORE_BUDGET_BYTES = old
            n_iter = getattr(model, "n_iter_", 0)
            solver_run = model.solver_ + (" refined" if model.solver_ == "direct" and n_iter else "")
            return {"pred": model.predict(Xt), "n_iter": n_iter, "solver": solver_run}
        return run

    def sk():
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        ny = Nystroem(kernel="rbf", gamma=gamma, n_components=len(idx), random_state=0).fit(X[idx])
        r = Ridge(alpha=alpha, fit_intercept=False).fit(ny.transform(X), y)
        return {"pred": r.predict(ny.transform(Xt)), "n_iter": 0}

    return {
        "sklearn Nystroem+Ridge": sk,
        # KRR's defaults (solver="auto", float64, cg_tol=1e-6) with the same width, alpha and landmarks
        "ours default (auto)": ours("auto", "float64", cg_tol=1e-6),
        "ours direct float64": ours("direct", "float64"),
        "ours direct float32": ours("direct", "float32"),
        "ours cg float64, C held": ours("cg", "float64"),
        "ours cg float32, C held": ours("cg", "float32"),
        "ours cg float32, C streamed": ours("cg", "float32", budget=0),
    }


def measure_isolated(fn, repeat):
    """(best seconds, largest peak bytes added, last result) over ``repeat`` forked runs."""
    best, peak, out = np.inf, 0, None
    for _ in range(repeat):
        def timed():
            t0 = time.perf_counter()
            res = fn()
            return {**res, "seconds": time.perf_counter() - t0}
        out = profiling.isolated(timed)
        best, peak = min(best, out["seconds"]), max(peak, out["peak_bytes"] or 0)
    return best, peak, out


def krr_bound(variant, n, m, d, n_iter, lim):
    """Seconds the variant's dominant work needs at the machine's measured rates."""
    dt = "float32" if "float32" in variant else "float64"
    kernel = 2.0 * n * m * (d + 2) / lim[f"gemm_{dt}"]
    if "sklearn" in variant:  # kernel, features C @ N (GEMM, 2 n m^2), Ridge X^T X (SYRK, n m^2)
        return kernel + 2.0 * n * m * m / lim["gemm_float64"] + 1.0 * n * m * m / lim["syrk_float64"]
    if variant.startswith("ours default"):  # what "auto" ran: the bound of that solver
        variant = {"direct": "direct float64", "direct refined": "direct float64 refined",
                   "cg": "cg float64, C held"}.get(variant.split(": ", 1)[-1], variant)
    if "refined" in variant:  # float64 kernel + float32 SYRK of the cast blocks + n_iter float64 kernel passes
        return kernel * (1 + n_iter) + 1.0 * n * m * m / lim["syrk_float32"]
    if "direct" in variant:  # kernel + C^T C (SYRK); the float32 refinement re-evaluates the kernel n_iter times
        return kernel * (1 + n_iter) + 1.0 * n * m * m / lim[f"syrk_{dt}"]
    if "streamed" in variant:  # every iteration one kernel pass (the two products run on cached blocks)
        return kernel * (1 + n_iter)
    item = 4 if dt == "float32" else 8  # C held: built once, then two reads of it per iteration
    return kernel + n_iter * 2.0 * n * m * item / lim["bandwidth"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--large", action="store_true", help="the n = 10^6, m = 10^4 case (make bench-large)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", default="kernel,krr,sampling", help="comma-separated subset to run")
    ap.add_argument("--no-avx2", action="store_true", help="no AVX2-only emulation of the kernel cases")
    ap.add_argument("--project", default=None, metavar="RUN_DIR",
                    help="the finished run to project onto the slowest machine kind (default: this checkout's)")
    ap.add_argument("--threads", type=int, default=None,
                    help="BLAS (and kernel block) threads; default: as many as BLAS has (1: per-core ratios)")
    args = ap.parse_args(argv)
    if args.large:
        from large import main as large_main

        return large_main(args)
    args.cases = set(args.cases.split(","))
    if args.threads:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(args.threads):
            return _main(args)
    return _main(args)


def _main(args):
    scale = 10 if args.quick else 1
    n, d, n_test = 100_000 // scale, 90, 10_000 // scale
    X, y = make_scalable(n + n_test, d, seed=0)
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    gamma = 1.0 / kernels.median_sq_dist(X)
    alpha = 1e-3 * n
    rows = []
    lim = machine_limits(scale)
    print({k: f"{v:.3g}" for k, v in lim.items()}, flush=True)

    def add(case, variant, secs, peak, **extra):
        units = in_units(secs, lim)
        rows.append({"case": case, "variant": variant, "seconds": secs, "peak_MiB": peak / 2**20, **units, **extra})
        print(f"{case:<28} {variant:<30} {secs:8.3f} s = {units['gemm_gflop']:7.2f} GEMM-GFLOP = "
              f"{units['exp_g']:6.3f} G exp {peak / 2**20:9.1f} MiB {extra}", flush=True)

    # 1. kernel block vs GEMM, both into a preallocated (pre-faulted) output: this times the
    #    computation, not the first-touch page faults of a fresh 800 MB allocation
    if "kernel" in args.cases:
        m = 1000 // scale
        kernel_cases(X, X[:m].copy(), gamma, lim, args.repeat, add)

    # 2. Nystrom KRR vs scikit-learn Nystroem + Ridge, same landmarks, each variant in a forked child
    for m in (1000 // scale, 3000 // scale) if "krr" in args.cases else ():
        idx = np.sort(np.random.default_rng(0).choice(n, m, replace=False))
        case = f"Nystrom KRR n={n} m={m}"
        ref = None
        for variant, fn in krr_variants(gamma, alpha, idx, X, y, Xt).items():
            secs, peak, out = measure_isolated(fn, args.repeat)
            pred = out["pred"]
            mse = float(np.mean((pred - yt) ** 2))
            extra = {"test_rmse": float(np.sqrt(mse)), "n_iter": out["n_iter"],
                     "bound_s": krr_bound(f"{variant}: {out.get('solver')}", n, m, d, out["n_iter"], lim)}
            if out.get("solver"):
                extra["solver"] = out["solver"]
            extra["of_bound"] = secs / extra["bound_s"]
            if ref is None:
                ref = (secs, peak, pred, extra["test_rmse"])
            else:
                extra.update(speedup=ref[0] / secs, memory_ratio=peak / ref[1], rmse_ratio=extra["test_rmse"] / ref[3],
                             rel_pred_diff=float(np.linalg.norm(pred - ref[2]) / np.linalg.norm(ref[2])))
            add(case, variant, secs, peak, **extra)

    # 3. ridge leverage vs uniform (sampling + building the operator)
    m = 1000 // scale
    kern = kernels.make("gaussian", gamma=gamma)

    def build(name):
        def run():
            L = sampling.sample(name, X, kern, c=m, seed=0)
            return approx.build("nystrom", X, kern, landmarks=L)
        return run

    if "sampling" in args.cases:
        t_u, p_u, _ = measure(build("uniform"), args.repeat)
        t_r, p_r, _ = measure(build("ridge_leverage"), args.repeat)
        add(f"sampling n={n} m={m}", "uniform + nystrom", t_u, p_u)
        add(f"sampling n={n} m={m}", "ridge_leverage + nystrom", t_r, p_r, ratio=t_r / t_u)

    if "kernel" in args.cases and not args.no_avx2 and cpu_kind() == "AVX-512":
        rows.extend(avx2_child(args))
    df = pd.DataFrame(rows)
    if not args.quick and not args.out:
        projection(args.project)
    out = Path(args.out or Path(__file__).with_name("results"))
    df.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(header(args.repeat, lim) + df.to_markdown(index=False, floatfmt=".3g") + "\n")
    return df


def in_units(seconds, lim):
    """``seconds`` in this machine's own units: the float64 GEMM GFLOP (``gemm_gflop``) and the G numpy
    float64 exponentials (``exp_g``) it computes in that time. Across machines, a figure that scales
    with GEMM keeps its ``gemm_gflop``, one that scales with exp keeps its ``exp_g``."""
    return {"gemm_gflop": seconds * lim["gemm_float64"] / 1e9, "exp_g": seconds * lim["exp_float64"] / 1e9}


def projection(run_dir=None):
    """Print the projection of a finished run (default: this checkout's) onto the slowest machine kind."""
    import project

    run_dir = Path(run_dir) if run_dir else Path(__file__).resolve().parents[1]
    if not any((run_dir / "results" / "benchmarks").glob("**/*.tsv")):
        print(f"no projection: {run_dir}/results/benchmarks has no benchmark files (run `make reproduce` first, "
              "or give --project RUN_DIR)", flush=True)
        return None
    return project.report(run_dir)


def _numba_version():
    try:
        import numba
    except ImportError:
        return "not installed"
    return numba.__version__


def header(repeat, lim):
    return (f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores, {kernels._blas_threads()} BLAS threads "
            f"({_cpu_flags()}; {cpu_kind()}), python "
            f"{sys.version.split()[0]}, numpy {np.__version__}, numba {_numba_version()}; best of {repeat} (kernel "
            "cases: median of interleaved rounds, min_s/max_s their range; the rows of cpu 'AVX2-only "
            "(emulated)' come from a child process with AVX2_ENV, against its own GEMM). Machine limits: GEMM "
            f"{lim['gemm_float64'] / 1e9:.0f} GFLOP/s float64, {lim['gemm_float32'] / 1e9:.0f} float32; SYRK "
            f"{lim['syrk_float64'] / 1e9:.0f} / {lim['syrk_float32'] / 1e9:.0f}; float32 exp "
            f"{lim['exp_float32'] / 1e9:.2f} G/s, float64 exp {lim['exp_float64'] / 1e9:.2f} G/s (numpy's); memory "
            f"bandwidth {lim['bandwidth'] / 1e9:.1f} GB/s. gemm_gflop, exp_g: seconds times the float64 GEMM "
            "rate and the float64 exp rate (each row against its own process's rates), comparable across "
            "machines. peak_MiB: "
            "tracemalloc for the kernel and sampling cases, resident memory added (forked child) for the KRR "
            "cases. bound_s: the GEMM flops (or bytes streamed) at those rates; of_bound = seconds / bound_s.\n\n")


if __name__ == "__main__":
    main()
