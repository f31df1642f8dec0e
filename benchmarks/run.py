"""Performance benchmarks of issue 4, measured side by side in one run (`make bench`).

Writes benchmarks/results.csv and benchmarks/results.md: wall time (best of
``--repeat``) and peak memory (tracemalloc, numpy allocations) of

1. the Gaussian kernel block n x m x d against the bare X Z^T product;
2. Nystrom KRR (fit + predict, LLA) against scikit-learn's Nystroem + Ridge with
   the same landmarks, m = 1000 and 3000, with the predictions' relative difference;
3. ridge_leverage (recursive RLS) sampling + Nystrom build against uniform + build.

Timings on a shared 2-core machine are noisy: read the ratios, not the seconds.
``--quick`` runs a 10x smaller version (a smoke test, e.g. in CI).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from nystrom_bench import approx, kernels, sampling
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results")))
    ap.add_argument("--cases", default="kernel,krr,sampling", help="comma-separated subset to run")
    args = ap.parse_args(argv)
    args.cases = set(args.cases.split(","))
    scale = 10 if args.quick else 1
    n, d, n_test = 100_000 // scale, 90, 10_000 // scale
    X, y = make_scalable(n + n_test, d, seed=0)
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    gamma = 1.0 / kernels.median_sq_dist(X)
    alpha = 1e-3 * n
    rows = []

    def add(case, variant, secs, peak, **extra):
        rows.append({"case": case, "variant": variant, "seconds": secs, "peak_MiB": peak / 2**20, **extra})
        print(f"{case:<28} {variant:<26} {secs:8.3f} s {peak / 2**20:9.1f} MiB {extra}", flush=True)

    kern = kernels.make("gaussian", gamma=gamma)
    # 1. kernel block vs GEMM, both into a preallocated (pre-faulted) output: this times the
    #    computation, not the first-touch page faults of a fresh 800 MB allocation
    if "kernel" in args.cases:
        m = 1000 // scale
        Z = X[:m].copy()
        buf = np.ones((n, m))
        t_gemm, p_gemm, _ = measure(lambda: np.dot(X, Z.T, out=buf), args.repeat)
        t_k, p_k, _ = measure(lambda: kern(X, Z, out=buf), args.repeat)
        add(f"kernel {n}x{m}x{d}", "X @ Z.T (bare GEMM)", t_gemm, p_gemm)
        add(f"kernel {n}x{m}x{d}", "gaussian kernel", t_k, p_k, ratio=t_k / t_gemm)
        del buf

    # 2. Nystrom KRR vs scikit-learn Nystroem + Ridge, same landmarks
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge

    for m in (1000 // scale, 3000 // scale) if "krr" in args.cases else ():
        idx = np.sort(np.random.default_rng(0).choice(n, m, replace=False))

        def ours(idx=idx, solver="direct"):
            model = KRR(gamma=gamma, alpha=alpha, mode="lla", landmarks=idx, fit_intercept=False,
                        solver=solver).fit(X, y)
            return model.predict(Xt)

        def sk(idx=idx, m=m):
            ny = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0)
            ny.fit(X[idx])  # components = exactly these landmarks
            r = Ridge(alpha=alpha, fit_intercept=False).fit(ny.transform(X), y)
            return r.predict(ny.transform(Xt))

        t_o, p_o, pred_o = measure(ours, args.repeat)
        t_s, p_s, pred_s = measure(sk, args.repeat)
        rel = float(np.linalg.norm(pred_o - pred_s) / np.linalg.norm(pred_s))
        case = f"Nystrom KRR n={n} m={m}"
        add(case, "sklearn Nystroem+Ridge", t_s, p_s)
        add(case, "nystrom_bench KRR(lla)", t_o, p_o, speedup=t_s / t_o, memory_ratio=p_o / p_s,
            rel_pred_diff=rel, test_mse=float(np.mean((pred_o - yt) ** 2)))
        t_c, p_c, pred_c = measure(lambda idx=idx: ours(idx, "cg"), args.repeat)
        add(case, "nystrom_bench KRR(lla, cg)", t_c, p_c, speedup=t_s / t_c, memory_ratio=p_c / p_s,
            rel_pred_diff=float(np.linalg.norm(pred_c - pred_s) / np.linalg.norm(pred_s)),
            test_mse=float(np.mean((pred_c - yt) ** 2)))

    # 3. ridge leverage vs uniform (sampling + building the operator)
    m = 1000 // scale

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

    df = pd.DataFrame(rows)
    out = Path(args.out)
    df.to_csv(out.with_suffix(".csv"), index=False)
    header = (f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores ({_cpu_flags()}), "
              f"python {sys.version.split()[0]}, numpy {np.__version__}; best of {args.repeat}.\n\n")
    out.with_suffix(".md").write_text(header + df.to_markdown(index=False, floatfmt=".3g") + "\n")
    return df


if __name__ == "__main__":
    main()
