"""`make bench-large`: Nystrom KRR at n = 10^6, d = 90, m = 10^4 on this machine (benchmarks/large.md).

1. FALKON-preconditioned CG in float32 with C streamed (C would be 40 GB in float32), stopped on held-out error
   (``KRR.fit(cg_eval_set=...)``: 10^4 held-out points, neither trained nor tested on) or at a relative residual
   of 1e-3: fit + predict time, the resident memory the fit added and the whole process's peak, iterations,
   test RMSE; held against the machine's limits (``bound_s``, below).
2. The accuracy check on a subsample where the direct solve also runs (n = 10^5, the same m and landmarks
   drawn the same way): test RMSE of CG float32 (to the residual alone, and with the held-out stop) against
   the direct float64 solve.

What the bounds count (every rate measured in this process, at the kernel block's shape):

- ``gemm_bound_s`` (the bound of before): every pass over the kernel blocks (CG's iterations + 1 for the
  right-hand side) as its GEMM alone, ``2 n m (d + 2)`` flops at the float32 GEMM rate;
- ``bound_s``: what the solve cannot avoid, each at its measured rate: per pass that GEMM plus ``n m`` float32
  ``exp`` (the compiled exp the kernel uses, times the threads); the preconditioner's two Cholesky
  factorisations and its triangular product (``m^3`` flops, float64 GEMM rate); the held-out checks
  (``2 n_val m (d + 2)`` flops each).  Not counted: the kernel values' products (``4 n m`` flops a pass), the
  m x m triangular solves per iteration, and the memory traffic.

Run by ``python benchmarks/run.py --large [--quick]`` (``--quick``: n and m 10x smaller).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from nystrom_bench import kernels, profiling
from nystrom_bench.data import make_scalable
from nystrom_bench.learners import KRR

LAM = 1e-6  # alpha = LAM n, FALKON's lambda for YearPredictionMSD
#: CG's relative residual: 1e-3 is reached in 15 iterations at n = 10^6 (1.7e-4 in 21, after which the
#: residual rose to 1.4e-3 by iteration 33: CG's residual is not monotone); the subsample checks the cost
TOL = 1e-3


def _cell(X, y, Xt, yt, gamma, idx, solver, dtype, tol, val=None):
    def run():
        from nystrom_bench import solvers

        solvers.STORE_BUDGET_BYTES = 0  # the large case cannot hold C: the subsample streams it too (child only)
        t0 = time.perf_counter()
        model = KRR(gamma=gamma, alpha=LAM * len(X), landmarks=idx, solver=solver, dtype=dtype, cg_tol=tol,
                    cg_max_iter=200).fit(X, y, cg_eval_set=val)
        t1 = time.perf_counter()
        pred = model.predict(Xt)
        t2 = time.perf_counter()
        return {"fit_s": t1 - t0, "predict_s": t2 - t1, "n_iter": getattr(model, "n_iter_", 0),
                "test_rmse": float(np.sqrt(np.mean((pred - yt) ** 2))), "process_peak": profiling._status("VmHWM")}
    return run


def exp_rate(threads):
    """float32 values per second of the kernel's compiled ``exp`` (``fastexp.exp_nonpos``) on one thread, times
    ``threads`` (the kernel runs it on every block's thread)."""
    from run import _rate

    from nystrom_bench import fastexp

    E = -np.random.default_rng(0).random(2**22).astype(np.float32)
    buf = np.empty_like(E)

    def go():
        buf[...] = E
        fastexp.exp_nonpos(buf)
    copy = _rate(lambda: np.copyto(buf, E), 1.0)  # seconds^-1 of the copy alone, taken off below
    return threads * E.size / max(1.0 / _rate(go, 1.0) - 1.0 / copy, 1e-12)


def main(args):
    import logging

    from run import _cpu_flags, machine_limits

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    from nystrom_bench.kernels.base import _blas_threads

    scale = 10 if args.quick else 1
    n, m, d, n_test, sub = 1_000_000 // scale, 10_000 // scale, 90, 10_000, 100_000 // scale
    n, m, sub = getattr(args, "n", None) or n, getattr(args, "m", None) or m, getattr(args, "sub", None) or sub
    n_val = n_test
    lim = machine_limits(scale)
    lim["exp_float32_kernel"] = exp_rate(_blas_threads())
    t0 = time.perf_counter()
    X, y = make_scalable(n + n_test + n_val, d, seed=0)
    Xv, yv = X[n + n_test:].copy(), y[n + n_test:].copy()  # held-out points: the generator's next rows
    del X, y
    X, y = make_scalable(n + n_test, d, seed=0)  # training and test data as before the held-out points
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    print(f"data {X.shape} in {time.perf_counter() - t0:.1f} s", flush=True)
    gamma = 1.0 / kernels.median_sq_dist(X)
    rows = []
    base = profiling.rss_bytes() or 0
    cases = [(f"n={n} m={m}", n, "cg", "float32", True),
             (f"subsample n={sub} m={m}", sub, "cg", "float32", False),
             (f"subsample n={sub} m={m}", sub, "cg", "float32", True),
             (f"subsample n={sub} m={m}", sub, "direct", "float64", False)]
    if getattr(args, "residual_too", False):  # the large case to the residual alone as well (twice the time)
        cases.insert(1, (f"n={n} m={m}", n, "cg", "float32", False))
    for case, size, solver, dtype, held_out in cases:
        idx = np.sort(np.random.default_rng(0).choice(size, m, replace=False))
        variant = f"{solver} {dtype}" + (", held-out stop" if held_out else "")
        print(f"{case} {variant} ...", flush=True)
        out = profiling.isolated(_cell(X[:size], y[:size], Xt, yt, gamma, idx, solver, dtype, TOL,
                                       (Xv, yv) if held_out else None))
        gemm = 2.0 * size * m * (d + 2) / lim["gemm_float32" if dtype == "float32" else "gemm_float64"]
        if solver == "cg":
            passes = out["n_iter"] + 1
            gemm_bound = gemm * passes
            bound = passes * (gemm + 1.0 * size * m / lim["exp_float32_kernel"]) + \
                float(m) ** 3 / lim["gemm_float64"] + \
                (out["n_iter"] * 2.0 * n_val * m * (d + 2) / lim["gemm_float32"] if held_out else 0.0)
        else:
            gemm_bound = bound = gemm + 1.0 * size * m * m / lim["syrk_float64"]
        row = {"case": case, "variant": variant, "fit_s": out["fit_s"], "predict_s": out["predict_s"],
               "total_min": (out["fit_s"] + out["predict_s"]) / 60, "n_iter": out["n_iter"],
               "test_rmse": out["test_rmse"], "added_GiB": (out["peak_bytes"] or 0) / 2**30,
               "process_peak_GiB": max(out["process_peak"] or 0, base) / 2**30, "gemm_bound_s": gemm_bound,
               "of_gemm_bound": out["fit_s"] / gemm_bound, "bound_s": bound, "of_bound": out["fit_s"] / bound}
        rows.append(row)
        print(row, flush=True)
    df = pd.DataFrame(rows)
    sub_rows = df[df.case.str.startswith("subsample")]
    a, h, b = sub_rows.iloc[0], sub_rows.iloc[1], sub_rows.iloc[2]
    note = (f"\nOn the subsample all run: test RMSE against the direct float64 solve's ({b.test_rmse:.5f}): CG float32 "
            f"to the residual {a.test_rmse / b.test_rmse:.5f} ({a.n_iter} iterations, fit {b.fit_s / a.fit_s:.1f}x "
            f"faster), with the held-out stop {h.test_rmse / b.test_rmse:.5f} ({h.n_iter} iterations, "
            f"{b.fit_s / h.fit_s:.1f}x faster).\n")
    header = (f"Measured {time.strftime('%Y-%m-%d')} on the `make bench-large` machine ({_cpu_flags()}); d = {d}, "
              f"{n_test} test points, alpha = {LAM:g} n, Gaussian gamma = 1 / median squared distance, CG to a "
              f"relative residual of {TOL:g} or on held-out error ({n_val} held-out points). Limits: GEMM "
              f"{lim['gemm_float32'] / 1e9:.0f} GFLOP/s float32, {lim['gemm_float64'] / 1e9:.0f} float64, "
              f"kernel exp {lim['exp_float32_kernel'] / 1e9:.1f} 10^9/s float32 ({_blas_threads()} threads); "
              "gemm_bound_s = every CG pass over the kernel blocks (iterations + 1) as its GEMM (2 n m (d + 2) "
              "flops) at that rate (the bound of before), or the direct solve's kernel GEMM + SYRK; bound_s adds "
              "each pass's n m exp, the preconditioner's m^3 float64 flops and the held-out checks "
              "(benchmarks/large.py says what is not counted); process_peak: the whole process's resident "
              "high-water mark (data included), added: what the fit and predict added.\n\n")
    out = Path(args.out or Path(__file__).with_name("large"))
    df.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(header + df.to_markdown(index=False, floatfmt=".4g") + "\n" + note)
    print(note)
    return df
