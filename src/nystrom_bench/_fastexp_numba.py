"""Compiled loops behind :mod:`nystrom_bench.fastexp` (imported only there, and only when numba is).

``exp(min(x, 0))`` in place over a 1-D contiguous array, one pass, vectorised by LLVM for the CPU
it runs on (AVX2 lanes on AVX2 machines, also on AVX-512 ones, where LLVM prefers 256-bit vectors).
Everything in the loop body is branch-free arithmetic, compares/selects and bit casts, so it
vectorises; only FMA contraction is allowed (``fastmath={"contract"}``): no reassociation, NaN in
gives NaN out.

float64 -- fdlibm's ``e_exp.c`` (Sun Microsystems, 1993; the algorithm behind most libm ``exp``):
``x = k ln2 + r`` with ``|r| <= ln2 / 2`` (Cody-Waite: ln2 split in a 32-bit-exact high part and a
low part, so ``k * LN2_HI`` is exact), ``exp(r) = 1 + r + r c(r) / (2 - c(r))`` with ``c`` its
degree-10 minimax polynomial in ``r`` (5 coefficients in ``r^2``); fdlibm's bound: < 1 ulp.
``k`` comes from the round-to-nearest "shift" trick (``x / ln2 + 1.5 * 2^52`` holds ``k`` in its low
mantissa bits), ``2^k`` is built in the exponent field. To reach the subnormal range without a
branch the scale is ``2^(k + 64)`` (a normal number for every ``k >= -1086``, and ``x >= -746``
gives ``k >= -1077``) followed by an exact multiply by ``2^-64``: the first product is exact, the
second rounds once, as a correctly scaled result must.

float32 -- the same scheme in float32 lanes (8 per AVX2 register): Cody-Waite with Cephes' split
of ln2, Cephes' ``expf`` polynomial (degree 5 in ``r`` on top of ``1 + r``), scale
``2^(k + 32) * 2^-32``.

The element function of each precision (``_exp64``, ``_exp32``) is inlined into every loop below, so all
of them give the same value bit for bit (branch-free, contraction only):

- ``exp_nonpos_f64`` / ``_f32``: in place over a 1-D array;
- ``exp_tile_f64`` / ``_f32``: from a scratch tile (a GEMM's result, in a reused per-thread buffer) into
  its place in a C-contiguous block, ``out[r0 + i, c0 + j] = exp(min(E[i, j], 0))``: the clamp and exp
  fused with the one write of the result, so the block is written once instead of GEMM-then-rewrite;
- ``gauss_thin_f64`` / ``_f32``: a thin Gaussian block ``out[i, j] = exp(-g ||x_i - y_j||^2)`` for few
  columns, straight from the differences (one pass over X, no augmented copy; exact 1 at x_i = y_j): per
  chunk of 256 rows the squared distances (scalar sums, each in four partial sums), then their exp as
  one vectorised loop; the float32
  variant stores the float64 result rounded once;
- ``gram_tile_f64`` / ``_f32``, ``t_tile_f64`` / ``_f32``: a GEMM tile's exp in place (``exp_nonpos``'s loop)
  and at once its rows' float64 products for the streamed ``C^T (C V)`` and ``C^T Y`` (see the section below).
"""

from __future__ import annotations

import threading

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _bitcast(src, dst, ir_type):
    @intrinsic
    def cast(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir_type)

        return dst(src), codegen

    return cast


_i64_as_f64 = _bitcast(types.int64, types.float64, ir.DoubleType())
_f64_as_i64 = _bitcast(types.float64, types.int64, ir.IntType(64))
_i32_as_f32 = _bitcast(types.int32, types.float32, ir.FloatType())
_f32_as_i32 = _bitcast(types.float32, types.int32, ir.IntType(32))

# float64 (fdlibm e_exp.c)
LN2_HI = 6.93147180369123816490e-01  # ln2 to 32 bits: k * LN2_HI is exact for |k| < 2^21
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00
P1 = 1.66666666666666019037e-01
P2 = -2.77777777770155933842e-03
P3 = 6.61375632143793436117e-05
P4 = -1.65339022054652515390e-06
P5 = 4.13813679705723846039e-08
SHIFT = 6755399441055744.0  # 1.5 * 2^52: x * INV_LN2 + SHIFT rounds to an integer, held in the low bits
SHIFT_BITS = 0x4338000000000000  # the bits of SHIFT
LOW = -746.0  # exp(-745.14) is the smallest subnormal / 2: below LOW the result is 0
TWO_M64 = 2.0**-64

# float32 (Cephes expf)
LN2_HI_F = np.float32(0.693359375)
LN2_LO_F = np.float32(-2.12194440e-4)
INV_LN2_F = np.float32(1.44269504088896341)
SHIFT_F = np.float32(12582912.0)  # 1.5 * 2^23
SHIFT_F_BITS = np.int32(0x4B400000)
Q0 = np.float32(1.9875691500e-4)
Q1 = np.float32(1.3981999507e-3)
Q2 = np.float32(8.3334519073e-3)
Q3 = np.float32(4.1665795894e-2)
Q4 = np.float32(1.6666665459e-1)
Q5 = np.float32(5.0000001201e-1)
ONE_F = np.float32(1.0)
ZERO_F = np.float32(0.0)
LOW_F = np.float32(-104.0)  # exp(-103.98) is the smallest float32 subnormal / 2
TWO_M32_F = np.float32(2.0**-32)
BIAS_F = np.int32(127 + 32)
MANT_F = np.int32(23)


_JIT = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})


@numba.njit(inline="always", error_model="numpy", fastmath={"contract"})
def _exp64(x):
    x = 0.0 if x > 0.0 else x  # the clamp of round-off (NaN passes through)
    x = LOW if x < LOW else x
    z = x * INV_LN2 + SHIFT
    kf = z - SHIFT
    hi = x - kf * LN2_HI
    lo = kf * LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    k = _f64_as_i64(z) - SHIFT_BITS
    return (y * _i64_as_f64((k + (1023 + 64)) << 52)) * TWO_M64


@numba.njit(inline="always", error_model="numpy", fastmath={"contract"})
def _exp32(x):
    x = ZERO_F if x > ZERO_F else x
    x = LOW_F if x < LOW_F else x
    z = x * INV_LN2_F + SHIFT_F
    kf = z - SHIFT_F
    r = (x - kf * LN2_HI_F) - kf * LN2_LO_F
    p = Q0
    p = p * r + Q1
    p = p * r + Q2
    p = p * r + Q3
    p = p * r + Q4
    p = p * r + Q5
    p = p * (r * r) + r + ONE_F
    k = _f32_as_i32(z) - SHIFT_F_BITS
    return (p * _i32_as_f32((k + BIAS_F) << MANT_F)) * TWO_M32_F


@numba.njit(["void(float64[::1])"], **_JIT)
def exp_nonpos_f64(f):
    for i in range(f.size):
        f[i] = _exp64(f[i])


@numba.njit(["void(float32[::1])"], **_JIT)
def exp_nonpos_f32(f):
    for i in range(f.size):
        f[i] = _exp32(f[i])


@numba.njit(["void(float64[::1], float64[::1])"], **_JIT)
def _exp_row_f64(e, o):
    for j in range(e.size):
        o[j] = _exp64(e[j])


@numba.njit(["void(float32[::1], float32[::1])"], **_JIT)
def _exp_row_f32(e, o):
    for j in range(e.size):
        o[j] = _exp32(e[j])


# a row at a time through a 1-D loop over contiguous rows: measured 1.3-2x faster than one 2-D loop
# indexing out[r0 + i, c0 + j] (which LLVM vectorises less well)
@numba.njit(["void(float64[:, ::1], float64[:, ::1], int64, int64)"], **_JIT)
def exp_tile_f64(E, out, r0, c0):
    n = E.shape[1]
    for i in range(E.shape[0]):
        _exp_row_f64(E[i], out[r0 + i, c0:c0 + n])


@numba.njit(["void(float32[:, ::1], float32[:, ::1], int64, int64)"], **_JIT)
def exp_tile_f32(E, out, r0, c0):
    n = E.shape[1]
    for i in range(E.shape[0]):
        _exp_row_f32(E[i], out[r0 + i, c0:c0 + n])


THIN_CHUNK = 256  # rows per chunk of a thin block: its exponents stay in L1 between the two passes


@numba.njit(inline="always")
def _gauss_thin(X, Y, g, out):
    # two passes per chunk of rows: the squared distances, a scalar sum per entry in four partial sums
    # (short dependency chains, independent across entries, so consecutive rows overlap in the pipeline),
    # then their exp as one vectorised loop
    n, d, m = X.shape[0], X.shape[1], Y.shape[0]
    buf = np.empty(THIN_CHUNK * m)
    for i0 in range(0, n, THIN_CHUNK):
        i1 = min(i0 + THIN_CHUNK, n)
        for i in range(i0, i1):
            for j in range(m):
                s0 = s1 = s2 = s3 = 0.0
                k = 0
                while k + 4 <= d:
                    t0 = X[i, k] - Y[j, k]
                    t1 = X[i, k + 1] - Y[j, k + 1]
                    t2 = X[i, k + 2] - Y[j, k + 2]
                    t3 = X[i, k + 3] - Y[j, k + 3]
                    s0 += t0 * t0
                    s1 += t1 * t1
                    s2 += t2 * t2
                    s3 += t3 * t3
                    k += 4
                while k < d:
                    t0 = X[i, k] - Y[j, k]
                    s0 += t0 * t0
                    k += 1
                buf[(i - i0) * m + j] = (s0 + s1) + (s2 + s3)
        for i in range(i0, i1):
            for j in range(m):
                out[i, j] = _exp64(-g * buf[(i - i0) * m + j])


@numba.njit(["void(float64[:, ::1], float64[:, ::1], float64, float64[:, ::1])"], **_JIT)
def gauss_thin_f64(X, Y, g, out):
    _gauss_thin(X, Y, g, out)


@numba.njit(["void(float64[:, ::1], float64[:, ::1], float64, float32[:, ::1])"], **_JIT)
def gauss_thin_f32(X, Y, g, out):
    _gauss_thin(X, Y, g, out)


# -- fused streamed products of a Gaussian block (nystrom_bench.solvers.nystrom_cg's passes) -------------------
# A tile's exponents E (the augmented GEMM's result, rows x m, in a per-thread scratch) become kernel values in
# place, four rows at a time, and the rows are used at once while they are in L1/L2: for ``gram_tile`` their
# products u = K_i v (one per column of V) and then acc += K_i^T u (C^T (C V) summed over the rows), for
# ``t_tile`` acc += K_i^T Y_i (C^T Y). The block is never written out, cast or read again (the unfused pass
# writes it, casts a float32 block to a float64 copy and reads that twice in two GEMVs); four rows per sweep
# read v and read/write acc once for four rows. Products and sums are float64 whatever the block's precision
# (a float32 value is widened before its multiply), as in the unfused pass. The dot products' reductions are
# vectorised (``reassoc`` on that loop only: partial sums added in an order that depends on the vector width);
# the exp and the updates keep ``contract`` only, so the kernel values are exp_nonpos's bit for bit.

_DOT = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
_SIGS_DOT4 = ["UniTuple(float64, 4)(float32[:, ::1], int64, float64[::1])",
              "UniTuple(float64, 4)(float64[:, ::1], int64, float64[::1])"]


def _dot4_py(E, i, b):
    """``E[i:i + 4] @ b`` in float64 (one sweep over b)."""
    s0 = s1 = s2 = s3 = 0.0
    for j in range(b.size):
        bj = b[j]
        s0 += np.float64(E[i, j]) * bj
        s1 += np.float64(E[i + 1, j]) * bj
        s2 += np.float64(E[i + 2, j]) * bj
        s3 += np.float64(E[i + 3, j]) * bj
    return s0, s1, s2, s3


def _dot1_py(a, b):
    s = 0.0
    for j in range(a.size):
        s += np.float64(a[j]) * b[j]
    return s


def _axpy4_py(acc, E, i, u0, u1, u2, u3):
    """``acc += E[i:i + 4]^T u`` in float64 (one sweep over acc)."""
    for j in range(acc.size):
        acc[j] += (u0 * np.float64(E[i, j]) + u1 * np.float64(E[i + 1, j])) + \
            (u2 * np.float64(E[i + 2, j]) + u3 * np.float64(E[i + 3, j]))


def _axpy1_py(acc, a, u):
    for j in range(a.size):
        acc[j] += u * np.float64(a[j])


@numba.njit(inline="always")
def _gram_tile(E, VT, accT, exp_row):
    r, i = E.shape[0], 0
    while i + 4 <= r:
        for q in range(4):
            exp_row(E[i + q])
        for c in range(VT.shape[0]):
            u0, u1, u2, u3 = _dot4(E, i, VT[c])  # noqa: F821 - compiled on first use
            _axpy4(accT[c], E, i, u0, u1, u2, u3)  # noqa: F821 - compiled on first use
        i += 4
    for q in range(i, r):
        exp_row(E[q])
        for c in range(VT.shape[0]):
            _axpy1(accT[c], E[q], _dot1(E[q], VT[c]))  # noqa: F821 - compiled on first use


@numba.njit(inline="always")
def _t_tile(E, Yb, accT, exp_row):
    r, i = E.shape[0], 0
    while i + 4 <= r:
        for q in range(4):
            exp_row(E[i + q])
        for c in range(Yb.shape[1]):
            _axpy4(accT[c], E, i, Yb[i, c], Yb[i + 1, c], Yb[i + 2, c], Yb[i + 3, c])  # noqa: F821 - compiled on first use
        i += 4
    for q in range(i, r):
        exp_row(E[q])
        for c in range(Yb.shape[1]):
            _axpy1(accT[c], E[q], Yb[q, c])  # noqa: F821 - compiled on first use


def gram_tile_f32_py(E, VT, accT):
    """``accT += (K VT^T)^T K`` for the tile's kernel rows ``K = exp(min(E, 0))`` (E overwritten by K);
    VT, accT: (t, m)."""
    _gram_tile(E, VT, accT, exp_nonpos_f32)


def gram_tile_f64_py(E, VT, accT):
    """:func:`gram_tile_f32` for a float64 tile."""
    _gram_tile(E, VT, accT, exp_nonpos_f64)


def t_tile_f32_py(E, Yb, accT):
    """``accT += Yb^T K`` for the tile's kernel rows ``K = exp(min(E, 0))`` (E overwritten by K); Yb: (rows, t),
    accT: (t, m)."""
    _t_tile(E, Yb, accT, exp_nonpos_f32)


def t_tile_f64_py(E, Yb, accT):
    """:func:`t_tile_f32` for a float64 tile."""
    _t_tile(E, Yb, accT, exp_nonpos_f64)


#: the streamed-product loops: ``name -> (Python source, signatures, options)``, in dependency order (the
#: callees first: a loop's compilation looks its callees up in this module's globals)
_STREAMED = {
    "_dot4": (_dot4_py, _SIGS_DOT4, _DOT),
    "_dot1": (_dot1_py, ["float64(float32[::1], float64[::1])", "float64(float64[::1], float64[::1])"], _DOT),
    "_axpy4": (_axpy4_py, ["void(float64[::1], float32[:, ::1], int64, float64, float64, float64, float64)",
                           "void(float64[::1], float64[:, ::1], int64, float64, float64, float64, float64)"], _JIT),
    "_axpy1": (_axpy1_py, ["void(float64[::1], float32[::1], float64)", "void(float64[::1], float64[::1], float64)"],
               _JIT),
    "gram_tile_f32": (gram_tile_f32_py, ["void(float32[:, ::1], float64[:, ::1], float64[:, ::1])"], _JIT),
    "gram_tile_f64": (gram_tile_f64_py, ["void(float64[:, ::1], float64[:, ::1], float64[:, ::1])"], _JIT),
    "t_tile_f32": (t_tile_f32_py, ["void(float32[:, ::1], float64[:, :], float64[:, ::1])"], _JIT),
    "t_tile_f64": (t_tile_f64_py, ["void(float64[:, ::1], float64[:, :], float64[:, ::1])"], _JIT),
}
_streamed_lock = threading.Lock()


def _compile_streamed():
    """Compile (load from numba's cache) the streamed-product loops, once per process, on first use.

    Only the large-n CG passes (``Kernel.gram_mv(..., fused=True)``, ``t_mv``) call them: loading their 12
    cached overloads at import cost every process ~0.2 s of CPU (8 of this module's 20 overloads are the
    exp and thin-block loops every Gaussian kernel uses).  Same sources, signatures and options as when they
    were decorated at import, so the same machine code; they stay in this file, so numba's cache of them is
    invalidated with the exp they inline."""
    with _streamed_lock:
        g = globals()
        for name, (fn, sigs, opts) in _STREAMED.items():
            if name not in g:
                g[name] = numba.njit(sigs, **opts)(fn)


def __getattr__(name):
    """PEP 562: the streamed-product loops (:data:`_STREAMED`) are compiled when first looked up."""
    if name in _STREAMED:
        _compile_streamed()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
