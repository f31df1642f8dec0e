"""`make bench-large`: Nystrom KRR at n = 10^6, d = 90, m = 10^4 on this machine (benchmarks/large.md).

1. FALKON-preconditioned CG in float32 with C streamed (C would be 40 GB in float32): fit + predict
   time, the resident memory the fit added and the whole process's peak, iterations, test RMSE;
   held against the machine's limit (every iteration one kernel pass: 2 n m (d + 2) flops at the
   measured float32 GEMM rate).
2. The accuracy check on a subsample where the direct solve also runs (n = 10^5, the same m and
   landmarks drawn the same way): test RMSE of CG float32 against the direct float64 solve.

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


def _cell(X, y, Xt, yt, gamma, idx, solver, dtype, tol):
    def run():
        from nystrom_bench import solvers

        solvers.STORE_BUDGET_BYTES = 0  # the large case cannot hold C: the subsample streams it too (child only)
        t0 = time.perf_counter()
        model = KRR(gamma=gamma, alpha=LAM * len(X), landmarks=idx, solver=solver, dtype=dtype, cg_tol=tol,
                    cg_max_iter=200).fit(X, y)
        t1 = time.perf_counter()
        pred = model.predict(Xt)
        t2 = time.perf_counter()
        return {"fit_s": t1 - t0, "predict_s": t2 - t1, "n_iter": getattr(model, "n_iter_", 0),
                "test_rmse": float(np.sqrt(np.mean((pred - yt) ** 2))), "process_peak": profiling._status("VmHWM")}
    return run


def main(args):
    import logging

    from run import _cpu_flags, machine_limits

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    scale = 10 if args.quick else 1
    n, m, d, n_test, sub = 1_000_000 // scale, 10_000 // scale, 90, 10_000, 100_000 // scale
    lim = machine_limits(scale)
    t0 = time.perf_counter()
    X, y = make_scalable(n + n_test, d, seed=0)
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    print(f"data {X.shape} in {time.perf_counter() - t0:.1f} s", flush=True)
    gamma = 1.0 / kernels.median_sq_dist(X)
    rows = []
    base = profiling.rss_bytes() or 0
    cases = [(f"n={n} m={m}", n, "cg", "float32"),
             (f"subsample n={sub} m={m}", sub, "cg", "float32"),
             (f"subsample n={sub} m={m}", sub, "direct", "float64")]
    for case, size, solver, dtype in cases:
        idx = np.sort(np.random.default_rng(0).choice(size, m, replace=False))
        print(f"{case} {solver} {dtype} ...", flush=True)
        out = profiling.isolated(_cell(X[:size], y[:size], Xt, yt, gamma, idx, solver, dtype, TOL))
        per_pass = 2.0 * size * m * (d + 2) / lim["gemm_float32" if dtype == "float32" else "gemm_float64"]
        bound = per_pass * (out["n_iter"] + 1) if solver == "cg" else \
            per_pass + 1.0 * size * m * m / lim["syrk_float64"]
        row = {"case": case, "variant": f"{solver} {dtype}", "fit_s": out["fit_s"], "predict_s": out["predict_s"],
               "total_min": (out["fit_s"] + out["predict_s"]) / 60, "n_iter": out["n_iter"],
               "test_rmse": out["test_rmse"], "added_GiB": (out["peak_bytes"] or 0) / 2**30,
               "process_peak_GiB": max(out["process_peak"] or 0, base) / 2**30, "bound_s": bound,
               "of_bound": out["fit_s"] / bound}
        rows.append(row)
        print(row, flush=True)
    df = pd.DataFrame(rows)
    a, b = df.iloc[1], df.iloc[2]
    note = (f"\nOn the subsample both run, CG float32 / direct float64 test RMSE = {a.test_rmse / b.test_rmse:.5f} "
            f"({a.test_rmse:.5f} vs {b.test_rmse:.5f}); fit {b.fit_s / a.fit_s:.1f}x faster.\n")
    header = (f"Measured {time.strftime('%Y-%m-%d')} on the `make bench-large` machine ({_cpu_flags()}); d = {d}, "
              f"{n_test} test points, alpha = {LAM:g} n, Gaussian gamma = 1 / median squared distance, CG to a "
              f"relative residual of {TOL:g}. Limits: GEMM {lim['gemm_float32'] / 1e9:.0f} GFLOP/s float32, "
              f"{lim['gemm_float64'] / 1e9:.0f} float64; bound_s = every CG iteration's kernel pass (2 n m (d + 2) "
              "flops) at that rate, or the direct solve's kernel + SYRK; process_peak: the whole process's "
              "resident high-water mark (data included), added: what the fit and predict added.\n\n")
    out = Path(args.out or Path(__file__).with_name("large"))
    df.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(header + df.to_markdown(index=False, floatfmt=".4g") + "\n" + note)
    print(note)
    return df
