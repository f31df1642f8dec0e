"""Distance kernels: Gaussian, Laplacian (L1) and Epanechnikov, ``k(x, y) = f(||x - y||)``."""

from __future__ import annotations

import threading

import numpy as np

from .. import fastexp
from ..fastexp import exp_nonpos
from .base import DEFAULT_BLOCK_BYTES, Kernel, _sq_dists_into
from .blas import as_2d, dot_t, issparse, n_rows, row_sq_norms

__all__ = ["Gaussian", "Laplacian", "Epanechnikov"]

#: a dense Gaussian block with at most this many columns is computed from the differences (the thin path);
#: measured (benchmarks/kernel_block.py, n = 10^5, one thread, CPU seconds): one column 0.3-0.4x the GEMM
#: path's time at d = 10 and 90, two columns 0.3-0.7x; from 4 columns on the GEMM path is as fast or faster
THIN_MAX_COLS = 3

#: largest GEMM tile of a Gaussian block (bytes): a block's GEMM lands in a per-thread scratch of at most
#: this size (one tile per block at the default ``block_bytes``; bigger blocks are split by rows), and the
#: fused clamp + exp writes it to its place in the block
TILE_BYTES = DEFAULT_BLOCK_BYTES

_tls = threading.local()


def _scratch(key, size, dtype):
    """A per-thread reusable 1-D buffer of at least ``size`` elements (no allocation, no page faults
    per tile)."""
    name = f"{key}_{np.dtype(dtype).char}"
    buf = getattr(_tls, name, None)
    if buf is None or buf.size < size:
        buf = np.empty(max(size, 1), dtype=dtype)
        setattr(_tls, name, buf)
    return buf



def _aug_gemm(xr, shift, Ya, Xa_buf, E_buf):
    """One tile's augmented GEMM into scratch: rows ``[x - shift, 1, ||x - shift||^2]`` times ``Ya.T``
    (``Ya``: the landmarks' augmented rows): the tile's exponents before the clamp and the exp."""
    r, p = xr.shape[0], Ya.shape[1]
    if shift is not None:
        xr = xr - shift
    Xa = Xa_buf[: r * p].reshape(r, p)
    Xa[:, :-2] = xr
    Xa[:, -2] = 1.0
    Xa[:, -1] = np.einsum("ij,ij->i", xr, xr)
    E = E_buf[: r * Ya.shape[0]].reshape(r, Ya.shape[0])
    np.dot(Xa, Ya.T, out=E)
    return E

class Gaussian(Kernel):
    """Gaussian (RBF) kernel ``exp(-gamma ||x - y||^2)``.

    Give exactly one of ``gamma``, ``sigma`` (``gamma = 1 / (2 sigma^2)``, Ding et al. (AAAI 2019) / Chen et al. (NIPS 2016))
    or ``b`` (``exp(-||x-y||^2 / b)``, ``gamma = 1 / b``, Ding et al. (TNNLS 2020)).
    """

    name = "gaussian"
    uses_sq_norms = True

    def __init__(self, gamma=None, sigma=None, b=None, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        given = [p is not None for p in (gamma, sigma, b)]
        if sum(given) > 1:
            raise ValueError("gaussian kernel: give only one of gamma, sigma or b")
        if sigma is not None:
            gamma = 1.0 / (2.0 * float(sigma) ** 2)
        elif b is not None:
            gamma = 1.0 / float(b)
        elif gamma is None:
            gamma = 1.0
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"gaussian kernel: gamma must be a positive finite number, got {gamma}")
        self.gamma = float(gamma)

    # Three paths, chosen per call in _prepare (aux[0]):
    # "gemm": the whole exponent comes out of one GEMM, [x, 1, |x|^2] . [2g z, -g |z|^2, -g]^T
    #   = -g |x - z|^2, leaving only a clamp (round-off) and an exp. Where the exp is the compiled one
    #   (fastexp.compiled(dtype)), the GEMM of a block lands in a per-thread scratch (reused: hot in cache,
    #   no page faults) and one fused pass (clamp + exp) writes it to the block, so the block is written
    #   once (GEMM-then-exp-in-place writes it, then reads and writes it again). Otherwise (numpy's exp:
    #   AVX-512 float64, NYSTROM_BENCH_EXP=numpy, no numba) the GEMM writes the block and the exp runs on
    #   it in place. The values agree up to the GEMM's round-off (OpenBLAS's sums depend on the shape of
    #   the call: ~1e-16 relative) and exp's (<= 2 ulp). Measured (benchmarks/kernel_block.py, CPU
    #   seconds, AVX2 emulated, 10^5 x 10^3 x 90): 1.18-1.24x the GEMM against 1.24-1.25x before in
    #   float64, 1.12-1.18x against 1.15-1.24x in float32; tiles of 1 MiB (L2-sized) measured slower
    #   (more, smaller GEMM calls: 1.29-1.37x; 5x on a small block with 2 BLAS threads on a loaded machine).
    #   In float32 both point sets are first shifted by the mean of Y
    #   (in float64): distances are unchanged, and |x|^2, |z|^2 stay of the order of the distances, so
    #   the sum keeps its digits.
    # "thin" (dense, at most THIN_MAX_COLS columns, compiled loops available): one compiled pass over
    #   the rows of X, exp(-g sum_k (x_k - z_k)^2) from the differences in float64 (a float32 block
    #   stores that rounded once): no augmented n x (d + 2) copy of X per call, which made one column at
    #   n = 10^5 cost 6 ms (d = 10) to 45 ms (d = 90) of CPU, more in wall time (page faults of the
    #   copy); now 1.6-2.2 ms and 11-14 ms (RPCholesky and greedy pivoting evaluate one per pivot).
    # "sparse": 2 g x.z - g |x|^2 - g |z|^2 in float64 from sparse products, then the clamp + exp.
    def _prepare(self, X, Y):
        X, Y = self._pair(X, Y)  # (not the base's squared norms of Y: every path below makes its own)
        g = self.gamma
        if issparse(X) or issparse(Y):
            return X, Y, ("sparse", None, row_sq_norms(Y))
        if n_rows(Y) <= THIN_MAX_COLS and fastexp.compiled() is not None:
            return X, Y, ("thin", np.ascontiguousarray(Y), None)
        shift = Y.mean(axis=0) if self.dtype != np.float64 and n_rows(Y) else None
        Ys = Y if shift is None else Y - shift
        ysq = np.einsum("ij,ij->i", Ys, Ys)
        # the rows [2 g y, -g |y|^2, -g], each value rounded once to the kernel's dtype (as the float64 hstack
        # and its cast did: the same bits), written in place: no hstack and no cast copy per call
        m, d = Ys.shape
        Ya = np.empty((m, d + 2), dtype=self.dtype)
        Ya[:, :d] = 2.0 * g * Ys
        Ya[:, d] = -g * ysq
        Ya[:, d + 1] = -g
        return X, Y, ("gemm", Ya, shift)

    def _fill_rows(self, X, Y, aux, sl, out):
        kind, A, B = aux
        if kind == "thin":
            nb = fastexp.compiled()
            if nb is not None:
                self._fill_thin(nb, X[sl], A, out)
                return
            # the choice changed since _prepare: the augmented GEMM, as for a wide block
            kind, A, B = self._prepare(X, Y)[2]
        if kind == "sparse":
            g, Xb = self.gamma, X[sl]
            E = dot_t(Xb, Y)
            E *= 2.0 * g
            E -= g * row_sq_norms(Xb)[:, None]
            E -= g * B[None, :]
            out[...] = E
            exp_nonpos(out)
            return
        Ya, shift = A, B
        nb = fastexp.compiled(out.dtype)
        if nb is not None and out.flags.c_contiguous:
            self._fill_tiles(nb, X[sl], Ya, shift, out)
            return
        Xb = X[sl] if shift is None else X[sl] - shift
        Xa = np.empty((n_rows(Xb), Xb.shape[1] + 2), dtype=out.dtype)
        Xa[:, :-2] = Xb
        Xa[:, -2] = 1.0
        Xa[:, -1] = np.einsum("ij,ij->i", Xb, Xb)
        np.dot(Xa, Ya.T, out=out)
        exp_nonpos(out)  # clamp + exp in place

    def _fill_thin(self, nb, Xb, Yc, out):
        """``out <- exp(-g ||x_i - y_j||^2)`` from the differences, one compiled pass over the rows."""
        Xb = np.ascontiguousarray(Xb)
        dst = out if out.flags.c_contiguous else np.empty(out.shape, dtype=out.dtype)
        (nb.gauss_thin_f64 if dst.dtype == np.float64 else nb.gauss_thin_f32)(Xb, Yc, self.gamma, dst)
        if dst is not out:
            out[...] = dst

    @staticmethod
    def _fill_tiles(nb, Xb, Ya, shift, out):
        """The augmented GEMM of each tile of rows (at most ``TILE_BYTES``) into a per-thread scratch; its
        clamp + exp written to its place in ``out`` (C-contiguous) by one compiled pass."""
        nr, m, p = n_rows(Xb), n_rows(Ya), Ya.shape[1]
        if nr == 0 or m == 0:
            return
        dt = out.dtype
        rows = max(1, min(nr, TILE_BYTES // (dt.itemsize * max(m, p))))
        E_buf, Xa_buf = _scratch("tile", rows * m, dt), _scratch("aug", rows * p, dt)
        tile = nb.exp_tile_f64 if dt == np.float64 else nb.exp_tile_f32
        for r0 in range(0, nr, rows):
            r1 = min(r0 + rows, nr)
            tile(_aug_gemm(Xb[r0:r1], shift, Ya, Xa_buf, E_buf), out, r0, 0)

    def _fused_fold(self, X, Z, which, M):
        """Row-fused streamed products (``Kernel.gram_mv(..., fused=True)``, ``t_mv``): per tile of rows the
        augmented GEMM into a per-thread scratch, then one compiled pass per row (``_fastexp_numba.gram_tile_*``
        / ``t_tile_*``): its exp in place and at once its products with the row (u = k_i . v, then
        acc += u k_i; or acc += y_i k_i) in float64, while the row is in L1/L2.  None (the blocked pass runs)
        for sparse or thin blocks, without the compiled exp for this dtype, or for a counting kernel."""
        if getattr(self, "_counts_entries", False):
            return None
        nb = fastexp.compiled(self.dtype)
        if nb is None:
            return None
        X, Z, aux = self._prepare(X, Z)
        kind, Ya, shift = aux
        if kind != "gemm":
            return None
        M = np.asarray(M, dtype=np.float64)
        M2 = M[:, None] if M.ndim == 1 else M
        m, p, dt = n_rows(Z), Ya.shape[1], self.dtype
        f32 = dt == np.float32
        tile_fn = (nb.gram_tile_f32 if f32 else nb.gram_tile_f64) if which == "gram" else \
            (nb.t_tile_f32 if f32 else nb.t_tile_f64)
        VT = np.ascontiguousarray(M2.T) if which == "gram" else None
        rows = max(1, TILE_BYTES // (dt.itemsize * max(m, p)))
        parts, local = [], threading.local()

        def work(sl):
            acc = getattr(local, "acc", None)
            if acc is None:
                acc = local.acc = np.zeros((M2.shape[1], m))
                parts.append(acc)
            Xb = X[sl]
            nr = n_rows(Xb)
            step = min(rows, nr)
            E_buf, Xa_buf = _scratch("tile", step * m, dt), _scratch("aug", step * p, dt)
            for r0 in range(0, nr, step):
                r1 = min(r0 + step, nr)
                E = _aug_gemm(Xb[r0:r1], shift, Ya, Xa_buf, E_buf)
                tile_fn(E, VT if VT is not None else M2[sl.start + r0: sl.start + r1], acc)

        self._for_blocks(X, Z, aux, work)
        out = np.sum(parts, axis=0).T if parts else np.zeros((m, M2.shape[1]))
        return out[:, 0].copy() if M.ndim == 1 else np.ascontiguousarray(out)

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

    def profile(self, r):
        """Radial profile: k(x, y) = profile(||x - y||_2)."""
        return np.exp(-self.gamma * np.asarray(r, dtype=np.float64) ** 2)

    def params(self):
        return {"gamma": self.gamma}


class Laplacian(Kernel):
    """Laplacian kernel ``exp(-gamma ||x - y||_1)`` (L1 distance, as scikit-learn's)."""

    name = "laplacian"

    def __init__(self, gamma=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"laplacian kernel: gamma must be positive, got {gamma}")
        self.gamma = float(gamma)

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        if issparse(Xb) or issparse(Y):
            from sklearn.metrics.pairwise import manhattan_distances

            out[...] = manhattan_distances(Xb, Y)
        else:
            # imported here: scipy.spatial costs ~0.2 CPU-s to import, and most processes that import the
            # kernels (analysis, MLflow logging, Snakemake's config check) never build a Laplacian block
            from scipy.spatial.distance import cdist

            cdist(Xb, Y, metric="cityblock", out=out)
        out *= -self.gamma
        exp_nonpos(out)

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

    def params(self):
        return {"gamma": self.gamma}


class Epanechnikov(Kernel):
    """Epanechnikov kernel ``(1 - ||x - y||^2 / (2 sigma^2))_+`` (Chen et al. (NIPS 2016)).

    Bounded with compact support but *not* positive semi-definite: its kernel
    matrices can have negative eigenvalues, so only methods that do not need a
    PSD matrix (e.g. GNKR) are valid with it.
    """

    name = "epanechnikov"
    psd = False
    uses_sq_norms = True

    def __init__(self, sigma=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"epanechnikov kernel: sigma must be positive, got {sigma}")
        self.sigma = float(sigma)

    def _fill(self, Xb, Y, out, xsq, ysq):
        _sq_dists_into(Xb, Y, out, xsq, ysq)
        out *= -1.0 / (2.0 * self.sigma**2)
        out += 1.0
        np.maximum(out, 0.0, out=out)

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

    def profile(self, r):
        """Radial profile: k(x, y) = profile(||x - y||_2)."""
        return np.maximum(1.0 - np.asarray(r, dtype=np.float64) ** 2 / (2.0 * self.sigma**2), 0.0)

    def params(self):
        return {"sigma": self.sigma}
