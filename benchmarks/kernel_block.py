"""Gaussian kernel blocks against the same machine's GEMM, and thin blocks (one kernel column), side by side.

Three cases (``--cases``, comma-separated):

- ``wide``: the block n x m x d (default 10^5 x 10^3 x 90) in float64 and float32 against ``np.dot`` of the
  same shape into the same preallocated output; the kernel as it is now (the GEMM of each row block into a
  per-thread scratch, the clamp + exp fused with the one write of the block), the kernel of before this change
  (``Legacy``: the augmented GEMM into the block, then the exp in place over it) and, where they differ, the
  kernel on numpy's exp (``fastexp.set_choice("numpy")``); ``--tile-kib`` sweeps the tile size;
- ``thin``: one kernel column and blocks of a few columns, ``K(X, X[:m])`` at n = 10^5, d = 10 and 90:
  the thin path (at most ``distance.THIN_MAX_COLS`` columns), the GEMM path (thin path off) and ``Legacy``;
- ``rpc``: ``sampling.sample("rpcholesky", X, k, 1000)`` at n = 10^5, d = 10 with the kernel and with
  ``Legacy`` (its ``info["seconds"]`` and the kernel entries).

Every variant of a case runs once per round, rounds interleaved (after a warm-up round), so that the load of
a shared machine falls on all alike; the table gives the best (min) wall seconds and CPU seconds (all
threads of this process) of the rounds and their ratios to GEMM's (or to Legacy's). ``--threads 1,2`` runs
each case under each BLAS/kernel thread count; ``--avx2`` runs the same again in a child process that
emulates an AVX2-only CPU (``run.AVX2_ENV``: numpy's AVX-512 code paths off, OpenBLAS's Haswell kernels,
numba compiling for Haswell). Timings on a loaded machine are noisy: read the ratios of one run.

    python benchmarks/kernel_block.py --cases wide,thin --threads 1,2 --avx2
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from nystrom_bench import fastexp, kernels, sampling  # noqa: E402
from nystrom_bench.kernels import distance  # noqa: E402
from nystrom_bench.kernels.base import Kernel  # noqa: E402
from nystrom_bench.kernels.blas import n_rows  # noqa: E402


class Legacy(distance.Gaussian):
    """The Gaussian kernel's block path before the tiles and the thin path (commit 3d6bdb0): per row block an
    augmented copy ``[x, 1, |x|^2]`` of X's rows, one GEMM into the block, then ``exp_nonpos`` in place."""

    def _prepare(self, X, Y):
        X, Y, _ = Kernel._prepare(self, X, Y)
        g = self.gamma
        shift = Y.mean(axis=0) if self.dtype != np.float64 and n_rows(Y) else None
        Ys = Y if shift is None else Y - shift
        ysq = np.einsum("ij,ij->i", Ys, Ys)
        Ya = np.hstack([2.0 * g * Ys, (-g * ysq)[:, None], np.full((n_rows(Y), 1), -g)]).astype(self.dtype)
        return X, Y, (Ya, shift)

    def _fill_rows(self, X, Y, aux, sl, out):
        Ya, shift = aux
        Xb = X[sl] if shift is None else X[sl] - shift
        Xa = np.empty((n_rows(Xb), Xb.shape[1] + 2), dtype=out.dtype)
        Xa[:, :-2] = Xb
        Xa[:, -2] = 1.0
        Xa[:, -1] = np.einsum("ij,ij->i", Xb, Xb)
        np.dot(Xa, Ya.T, out=out)
        fastexp.exp_nonpos(out)


def rounds(fns, repeat):
    """{name: (wall seconds list, CPU seconds list)}, every callable once per round after a warm-up round."""
    res = {name: ([], []) for name in fns}
    for r in range(repeat + 1):
        for name, fn in fns.items():
            gc.collect()
            w, c = time.perf_counter(), time.process_time()
            fn()
            if r:
                res[name][0].append(time.perf_counter() - w)
                res[name][1].append(time.process_time() - c)
    return res


def kind():
    from run import cpu_kind

    return cpu_kind()


def emit(rows, case, res, base, threads, **extra):
    bw, bc = min(res[base][0]), min(res[base][1])
    for name, (w, c) in res.items():
        rows.append({"cpu": kind(), "threads": threads, "case": case, "variant": name, "wall_s": min(w),
                     "cpu_s": min(c), f"wall/{base}": min(w) / bw, f"cpu/{base}": min(c) / bc, **extra})
        print(f"{kind():<22} t={threads} {case:<24} {name:<34} wall {min(w):8.4f} s ({min(w) / bw:5.2f}x)  "
              f"cpu {min(c):8.4f} s ({min(c) / bc:5.2f}x)", flush=True)


def with_choice(choice, fn):
    def run():
        old = fastexp.set_choice(choice)
        try:
            fn()
        finally:
            fastexp.set_choice(old)
    return run


def with_tile(kib, fn):
    def run():
        old = distance.TILE_BYTES
        distance.TILE_BYTES = int(kib * 1024)
        try:
            fn()
        finally:
            distance.TILE_BYTES = old
    return run


def wide(args, threads, rows):
    n, m, d = args.n, args.m, args.d
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    Z = X[:m].copy()
    gamma = 1.0 / kernels.median_sq_dist(X)
    for dt in args.dtypes.split(","):
        buf = np.ones((n, m), dtype=dt)  # pre-faulted: time the computation, not first-touch page faults
        emit(rows, f"{dt} {n}x{m}x{d}", rounds(_wide_variants(args, dt, X, Z, gamma, buf), args.repeat), "gemm",
             threads)
        del buf


def _wide_variants(args, dt, X, Z, gamma, buf):
    """name -> callable filling ``buf``: the GEMM, the kernel (per tile size), Legacy, numpy's exp."""
    Xd, Zd = X.astype(dt), Z.astype(dt)
    new, old = kernels.make("gaussian", gamma=gamma, dtype=dt), Legacy(gamma=gamma).astype(dt)
    fns = {"gemm": lambda: np.dot(Xd, Zd.T, out=buf)}
    for kib in args.tile_kib:
        label = "" if kib == distance.TILE_BYTES / 1024 else f" tile {kib:g} KiB"
        fns[f"kernel (exp {fastexp.backend(dt)}){label}"] = with_tile(kib, lambda: new(X, Z, out=buf))
    fns[f"legacy (exp {fastexp.backend(dt)})"] = lambda: old(X, Z, out=buf)
    if fastexp.backend(dt) == "numba":
        fns["kernel (exp numpy)"] = with_choice("numpy", lambda: new(X, Z, out=buf))
    return fns


def thin(args, threads, rows):
    n = args.n
    for d in (10, 90):
        X = np.random.default_rng(1).normal(size=(n, d))
        gamma = 1.0 / kernels.median_sq_dist(X)
        new, old = kernels.make("gaussian", gamma=gamma), Legacy(gamma=gamma)
        for m in args.thin_m:
            emit(rows, f"thin {n}x{m}x{d}", rounds(_thin_variants(new, old, X, m), args.repeat), "legacy", threads)


def _thin_variants(new, old, X, m):
    def gemm_path():
        keep = distance.THIN_MAX_COLS
        distance.THIN_MAX_COLS = 0
        try:
            new(X, X[:m])
        finally:
            distance.THIN_MAX_COLS = keep

    return {"legacy": lambda: old(X, X[:m]), "kernel": lambda: new(X, X[:m]), "GEMM path": gemm_path}


def rpc(args, threads, rows):
    n, d, c = args.n, 10, 1000
    X = np.random.default_rng(2).normal(size=(n, d))
    gamma = 1.0 / kernels.median_sq_dist(X)
    info = {}

    def run(k):
        def go():
            inf = {}
            sampling.sample("rpcholesky", X, k, c, seed=0, info=inf)
            info[type(k).__name__] = inf
        return go

    res = rounds({"legacy": run(Legacy(gamma=gamma)), "kernel": run(kernels.make("gaussian", gamma=gamma))},
                 max(1, args.repeat_rpc))
    emit(rows, f"rpcholesky {n}x{d} c={c}", res, "legacy", threads,
         entries=info.get("Gaussian", {}).get("kernel_entries"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="wide,thin")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--d", type=int, default=90)
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--threads", default="1,2", help="comma-separated BLAS/kernel thread counts")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--repeat-rpc", type=int, default=1)
    ap.add_argument("--tile-kib", default=None, help="comma-separated tile sizes (KiB) to sweep")
    ap.add_argument("--thin-m", default="1,4,16,32")
    ap.add_argument("--avx2", action="store_true", help="also run in a child emulating an AVX2-only CPU")
    ap.add_argument("--csv", default=None, help="write the rows here (the --avx2 child's rows are appended)")
    args = ap.parse_args(argv)
    args.tile_kib = [float(v) for v in args.tile_kib.split(",")] if args.tile_kib else [distance.TILE_BYTES / 1024]
    args.thin_m = [int(v) for v in args.thin_m.split(",")]
    from threadpoolctl import threadpool_limits

    rows = []
    for t in map(int, args.threads.split(",")):
        with threadpool_limits(t):
            for case in args.cases.split(","):
                {"wide": wide, "thin": thin, "rpc": rpc}[case](args, t, rows)
    if args.avx2:
        from run import AVX2_ENV

        child = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--avx2"]
        print("AVX2-only emulation:", " ".join(f"{k}={v!r}" for k, v in AVX2_ENV.items()), flush=True)
        subprocess.run([sys.executable, __file__, *child], env={**os.environ, **AVX2_ENV}, check=True)
    if args.csv:
        import pandas as pd

        df = pd.DataFrame(rows)
        path = Path(args.csv)
        df.to_csv(path, mode="a" if path.exists() else "w", header=not path.exists(), index=False)
    return rows


if __name__ == "__main__":
    main()
