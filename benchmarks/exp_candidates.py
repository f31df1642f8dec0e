"""The candidates for the kernel blocks' exp, side by side: values per second on one core, in place on
a kernel-block-sized array (4 MiB), clamp included, and the largest distance from numpy's exp in ulps.

    python benchmarks/exp_candidates.py            # this CPU, then an AVX2-only one emulated (AVX2_ENV)

Candidates: numpy's ``exp`` (after ``np.minimum``); the numba loop of nystrom_bench.fastexp; a
range-reduced polynomial in numpy (``2^k p(r)``, in place over cache-sized chunks, Horner in ufunc
passes); numexpr's ``exp`` (if installed; its PyPI wheels call the C library's scalar exp, no VML);
and float32 versions of those that have one. Writes benchmarks/exp_candidates.md.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from run import AVX2_ENV, cpu_kind  # noqa: E402

from nystrom_bench import fastexp  # noqa: E402

LN2HI, LN2LO, INVLN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.44269504088896338700
TAYLOR = [1.0 / math.factorial(i) for i in range(13)]


def numpy_exp(a):
    np.minimum(a, 0.0, out=a)
    np.exp(a, out=a)


def numpy_poly(a, chunk=16384):
    """exp(x) = 2^k p(r), r = x - k ln2 (Cody-Waite), p: Taylor to degree 12 (|r| <= ln2/2), the scale
    split in two halves so that subnormal results come out right; float64 only."""
    f = a.reshape(-1)
    r, k, ki = np.empty(chunk), np.empty(chunk), np.empty(chunk, dtype=np.int64)
    for s in range(0, f.size, chunk):
        x = f[s:s + chunk]
        n = len(x)
        rr, kk, kii = r[:n], k[:n], ki[:n]
        np.minimum(x, 0.0, out=x)
        np.maximum(x, -746.0, out=x)
        np.multiply(x, INVLN2, out=kk)
        np.rint(kk, out=kk)
        np.multiply(kk, LN2HI, out=rr)
        np.subtract(x, rr, out=x)
        np.multiply(kk, LN2LO, out=rr)
        np.subtract(x, rr, out=rr)
        np.multiply(rr, TAYLOR[12], out=x)
        x += TAYLOR[11]
        for c in TAYLOR[10::-1]:
            x *= rr
            x += c
        np.copyto(kii, kk, casting="unsafe")
        kv = kk.view(np.int64)
        np.right_shift(kii, 1, out=kv)
        kii -= kv
        kii += 1023
        kii <<= 52
        x *= kii.view(np.float64)
        kv += 1023
        kv <<= 52
        x *= kk


def candidates():
    out = {"numpy exp": numpy_exp, "numpy polynomial (float64)": numpy_poly}
    try:
        from nystrom_bench import _fastexp_numba as nb

        out["numba loop (fastexp)"] = lambda a: (nb.exp_nonpos_f64 if a.dtype == np.float64 else nb.exp_nonpos_f32)(a.reshape(-1))
    except ImportError:
        pass
    try:
        import numexpr as ne

        ne.set_num_threads(1)
        out["numexpr exp"] = lambda a: ne.evaluate("exp(where(a > 0, 0, a))", out=a, casting="unsafe")
    except ImportError:
        pass
    return out


def measure(repeat):
    rng = np.random.default_rng(0)
    rows = []
    for dt in (np.float64, np.float32):
        src = (-rng.random((4 * 2**20 // np.dtype(dt).itemsize // 1000, 1000)) * 5).astype(dt)
        src[0, :4] = [0.0, -1e-30, -80.0, -100.0]
        ref = np.exp(src.astype(np.float64)).astype(dt)
        buf = src.copy()
        for name, fn in candidates().items():
            if "float64" in name and dt != np.float64:
                continue
            ts = []
            for _ in range(repeat + 1):
                buf[...] = src
                t0 = time.perf_counter()
                fn(buf)
                ts.append(time.perf_counter() - t0)
            ts = np.array(ts[1:])
            rows.append({"cpu": cpu_kind(), "dtype": np.dtype(dt).name, "candidate": name,
                         "G values/s (median)": src.size / np.median(ts) / 1e9,
                         "min": src.size / ts.max() / 1e9, "max": src.size / ts.min() / 1e9,
                         "max ulp from float64 numpy exp (rounded)": float(np.max(fastexp.ulp_distance(buf, ref)))})
            print(rows[-1], flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--no-avx2", action="store_true")
    ap.add_argument("--csv", default=None, help="write the rows here (the child's output)")
    args = ap.parse_args(argv)
    import pandas as pd

    with threadpool_limits(1):
        rows = measure(args.repeat)
    if not args.no_avx2 and cpu_kind() == "AVX-512":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            csv = Path(tmp) / "avx2.csv"
            subprocess.run([sys.executable, __file__, "--no-avx2", "--repeat", str(args.repeat), "--csv", str(csv)],
                           env={**os.environ, **AVX2_ENV}, check=True)
            rows += pd.read_csv(csv).to_dict("records")
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
        return df
    md = Path(__file__).with_name("exp_candidates.md")
    md.write_text(f"Measured {time.strftime('%Y-%m-%d')}, one core, python {sys.version.split()[0]}, numpy "
                  f"{np.__version__}; median (min-max) of {args.repeat} passes over a 4 MiB block.\n\n"
                  + df.to_markdown(index=False, floatfmt=".3g") + "\n")
    print(md.read_text())
    return df


if __name__ == "__main__":
    main()
