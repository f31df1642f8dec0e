"""Kernel functions, evaluated block-wise under a memory budget.

Every kernel is a small object with

- ``kern(X, Y=None)`` -- the kernel matrix ``K[i, j] = k(X[i], Y[j])`` (n x m),
  filled block by block so that temporaries stay in cache;
- ``kern.diag(X)`` -- ``k(x_i, x_i)`` without forming any matrix;
- ``kern.mmv(X, Y, v)`` -- ``K(X, Y) @ v`` without ever holding ``K(X, Y)``;
- ``kern.column_sq_norms(X)`` -- ``||K[:, j]||^2`` for all j, O(n) memory;
- ``kern.gram_mv(X, Z, V)`` -- ``C^T (C V)`` with ``C = K(X, Z)``, one fused pass, C never held.

Precision: ``kern.astype("float32")`` (or ``make(..., dtype="float32")``) evaluates the blocks in
float32 -- the GEMM and the exp, both about twice as fast as in float64 (the exp of a block is
:func:`nystrom_bench.fastexp.exp_nonpos`: a compiled vectorised loop where numpy's own exp is
scalar, i.e. float64 without AVX-512, and for float32) -- while the products with a
block (``mmv``, ``gram_mv``, ``t_mv``; :func:`matmul` for a held float32 C) run in float64 on the
block cast in cache, and every sum over blocks is float64.  ``gram``'s ``C^T C`` is the exception:
its O(n m^2) SYRK runs in float32 (summed over chunks in float64) -- the solvers that use it refine
the result against the exact products.  The Gaussian kernel shifts both
point sets by the mean of Y before its float32 GEMM, so ``|x|^2`` stays small and the distance
``|x|^2 + |y|^2 - 2 x.y`` keeps its digits for data far from the origin.

Distance-based kernels use the norms trick ``||x-y||^2 = ||x||^2 + ||y||^2 - 2 x.y``
(one GEMM per block) followed by in-place element-wise operations.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import kernels
>>> X = np.random.default_rng(0).normal(size=(5, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> K = kern(X)
>>> K.shape, bool(np.allclose(np.diag(K), kern.diag(X)))
((5, 5), True)

A kernel *spec* is the dict form used in configs and by the estimators:
``{"kernel": "gaussian", "gamma": "median"}``.  :func:`check_spec` validates one
without data, :func:`from_spec` builds the kernel (resolving ``"median"``/``"mean"``
widths on X); :func:`spec_keys` lists the keys a kernel accepts.

>>> kernels.from_spec({"kernel": "gaussian", "sigma": 2.0})
Gaussian(gamma=0.125)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
from scipy.spatial.distance import cdist

from nystrom_bench.fastexp import exp_nonpos

__all__ = [
    "Kernel",
    "Gaussian",
    "Laplacian",
    "Polynomial",
    "Linear",
    "Epanechnikov",
    "make",
    "available",
    "median_sq_dist",
    "mean_sq_dist",
    "resolve_width",
    "as_2d",
    "check_dtype",
    "matmul",
    "matmul_t",
    "crossprod",
    "as_float64",
    "spec_keys",
    "check_spec",
    "from_spec",
]

#: default size of one block of kernel values (bytes); 4 MiB keeps a block in L2/L3.
DEFAULT_BLOCK_BYTES = 4 * 2**20


def issparse(X):
    """Whether X is a SciPy sparse matrix or array."""
    from scipy import sparse

    return sparse.issparse(X)


def as_2d(X, name="X"):
    """X as a float64 2-D array; a sparse X (any SciPy format) as a float64 CSR matrix -- kernel blocks take
    rows of it -- never densified (a CSC X is converted once, O(nnz))."""
    if issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), got shape {X.shape}")
        X = X.tocsr()
        return X if X.dtype == np.float64 else X.astype(np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features), got {X.ndim}-D")
    return X


#: the precisions a kernel computes in
DTYPES = ("float64", "float32")


def check_dtype(dtype, where="dtype"):
    """``np.dtype`` of ``"float64"``/``"float32"`` (or their numpy types); ValueError naming the choices."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in DTYPES:
        raise ValueError(f"{where}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return dt


def matmul(A, B, chunk_bytes=4 * 2**20):
    """``A @ B`` in float64 for a float32 A (a block of kernel values), without a float64 copy of A: rows of
    A are cast in chunks of ``chunk_bytes``.  The products of float32 kernel values run in float64 so that
    their accuracy does not depend on how much the coefficients cancel (a float32 dot product over m terms
    keeps ~7 digits of the largest term, not of the sum).  Measured at n = 10^5, m = 3,000: float32
    products gave predictions 1.6e-5 off (relative) and the same test RMSE to 6 digits, while the cast
    costs ~20% of a streamed CG pass -- a price paid for robustness, not for a failure seen."""
    if A.dtype == np.float64:
        return A @ B
    B = np.asarray(B, dtype=np.float64)
    rows = max(1, chunk_bytes // (8 * max(A.shape[1], 1)))
    out = np.empty((A.shape[0],) + B.shape[1:])
    for i in range(0, A.shape[0], rows):
        out[i:i + rows] = A[i:i + rows].astype(np.float64) @ B
    return out


def n_rows(X):
    """Number of rows of a dense or sparse 2-D X (``len`` is not defined for a sparse matrix)."""
    return X.shape[0]


def row_sq_norms(X):
    """``||x_i||^2`` of every row, dense or sparse (``X.multiply(X).sum(1)``)."""
    if issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def dot_t(A, B, out=None):
    """``A @ B.T`` as a dense array (into ``out``), for dense or sparse A and B: one GEMM when both are dense;
    sparse @ dense, or sparse @ sparse.T made dense, otherwise."""
    if not issparse(A) and not issparse(B):
        return np.dot(A, B.T, out=out)
    P = A @ B.T
    P = P.toarray() if issparse(P) else np.asarray(P)
    if out is None:
        return P
    out[...] = P
    return out


def as_float64(block):
    """A block of kernel values in float64: itself, or a float32 block cast (in cache) before a product."""
    return block if block.dtype == np.float64 else block.astype(np.float64)


def crossprod(C, chunk_bytes=4 * 2**20):
    """``C^T C`` in float64 for a held C; a float32 C is cast in row chunks and summed in float64 (a float32
    C^T C carries ~1e-6 relative errors, which a solve with a small shift turns into an indefinite system)."""
    if C.dtype == np.float64:
        return C.T @ C
    rows = max(1, chunk_bytes // (8 * max(C.shape[1], 1)))
    G = np.zeros((C.shape[1], C.shape[1]))
    for i in range(0, len(C), rows):
        Cb = C[i:i + rows].astype(np.float64)
        G += Cb.T @ Cb
    return G


def matmul_t(A, B, chunk_bytes=4 * 2**20):
    """``A^T @ B`` in float64 for a float32 A, summed over row chunks of A cast to float64 (as :func:`matmul`)."""
    if A.dtype == np.float64:
        return A.T @ B
    B = np.asarray(B, dtype=np.float64)
    rows = max(1, chunk_bytes // (8 * max(A.shape[1], 1)))
    out = np.zeros((A.shape[1],) + B.shape[1:])
    for i in range(0, A.shape[0], rows):
        out += A[i:i + rows].astype(np.float64).T @ B[i:i + rows]
    return out


class Kernel:
    """Base class: subclasses implement :meth:`_fill` for one block.

    Parameters
    ----------
    block_bytes : int
        Upper bound on the size of one block of kernel values.

    Attributes
    ----------
    dtype : numpy.dtype
        Precision of the kernel values (float64; :meth:`astype` gives a float32 copy).
    """

    name = "kernel"
    #: whether every kernel matrix of this kernel is positive semi-definite
    psd = True
    dtype = np.dtype(np.float64)

    def __init__(self, block_bytes=DEFAULT_BLOCK_BYTES):
        self.block_bytes = int(block_bytes)

    def astype(self, dtype):
        """This kernel computing in ``dtype`` ("float64" or "float32"): a copy, or self if unchanged."""
        import copy

        dt = check_dtype(dtype, f"{self.name} kernel")
        if dt == self.dtype:
            return self
        out = copy.copy(self)
        out.dtype = dt
        return out

    # -- to implement -------------------------------------------------------------------------
    def _fill(self, Xb, Y, out, xsq=None, ysq=None):  # pragma: no cover - abstract
        """Write k(Xb, Y) into ``out`` (shape n_rows(Xb) x n_rows(Y)) in place."""
        raise NotImplementedError

    def diag(self, X):
        """Diagonal ``k(x_i, x_i)``, shape (n,), without forming a matrix."""
        raise NotImplementedError  # pragma: no cover - abstract

    def params(self):
        """Hyper-parameters as a flat dict (for logging)."""
        return {}

    # -- shared machinery -----------------------------------------------------------------------
    uses_sq_norms = False
    #: below this many kernel values a call runs in one thread (threading costs ~ms)
    PARALLEL_MIN = 4_000_000

    def _rows_per_block(self, m):
        return max(1, self.block_bytes // (self.dtype.itemsize * max(m, 1)))

    def _prepare(self, X, Y):
        X = as_2d(X)
        Y = X if Y is None else as_2d(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
        ysq = row_sq_norms(Y) if self.uses_sq_norms else None
        return X, Y, ysq

    def _fill_rows(self, X, Y, ysq, sl, out):
        xsq = row_sq_norms(X[sl]) if self.uses_sq_norms else None
        if out.dtype == np.float64:
            self._fill(X[sl], Y, out, xsq, ysq)
        else:  # a float32 block of a kernel without a float32 path: fill in float64, then cast
            tmp = np.empty(out.shape)
            self._fill(X[sl], Y, tmp, xsq, ysq)
            out[...] = tmp

    def _for_blocks(self, X, Y, ysq, work, step=None):
        """Call ``work(slice, scratch)`` for every row block, on ``n_threads`` threads.

        Each thread runs whole blocks (GEMM + element-wise work while the block is
        in cache) with single-threaded BLAS, so the element-wise part (exp) is
        parallel too; the thread count is the number of BLAS threads in force
        (``threadpoolctl.threadpool_limits`` in a job sets both).
        """
        step = step or self._rows_per_block(n_rows(Y))
        slices = [slice(i, min(i + step, n_rows(X))) for i in range(0, n_rows(X), step)]
        threads = _blas_threads() if n_rows(X) * n_rows(Y) >= self.PARALLEL_MIN else 1
        if threads <= 1 or len(slices) < 2:
            for sl in slices:
                work(sl)
            return
        from concurrent.futures import ThreadPoolExecutor

        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(threads) as pool:
            for f in [pool.submit(work, sl) for sl in slices]:
                f.result()

    def blocks(self, X, Y=None):
        """Yield ``(row_slice, block)`` covering ``K(X, Y)``; each block is a fresh array."""
        X, Y, ysq = self._prepare(X, Y)
        step = self._rows_per_block(n_rows(Y))
        for start in range(0, n_rows(X), step):
            sl = slice(start, min(start + step, n_rows(X)))
            out = np.empty((sl.stop - sl.start, n_rows(Y)), dtype=self.dtype)
            self._fill_rows(X, Y, ysq, sl, out)
            yield sl, out

    def __call__(self, X, Y=None, out=None):
        """Kernel matrix K(X, Y), shape (n_X, n_Y); ``Y=None`` means ``Y = X``.

        ``out``: an optional C-contiguous array of that shape and the kernel's ``dtype`` to fill (no
        allocation).
        """
        same = Y is None
        X, Y, ysq = self._prepare(X, Y)
        if out is None:
            out = np.empty((n_rows(X), n_rows(Y)), dtype=self.dtype)
        elif out.shape != (n_rows(X), n_rows(Y)) or out.dtype != self.dtype or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous {self.dtype} array of shape {(n_rows(X), n_rows(Y))}")
        self._for_blocks(X, Y, ysq, lambda sl: self._fill_rows(X, Y, ysq, sl, out[sl]))
        if same:  # exact diagonal (the norms trick leaves ~1e-16 round-off there)
            out.flat[:: n_rows(X) + 1] = self.diag(X)
        return out

    def _scratch_work(self, X, Y, ysq, consume, step=None):
        """Block worker with one reusable scratch buffer per thread."""
        import threading

        local = threading.local()
        step = step or self._rows_per_block(n_rows(Y))

        def work(sl):
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = np.empty((step, n_rows(Y)), dtype=self.dtype)
            blk = buf[: sl.stop - sl.start]
            self._fill_rows(X, Y, ysq, sl, blk)
            consume(sl, blk)

        return work

    def mmv(self, X, Y, v):
        """``K(X, Y) @ v`` computed block-wise; ``v`` has shape (n_Y,) or (n_Y, t); float64 result."""
        v = np.asarray(v, dtype=np.float64)
        X, Y, ysq = self._prepare(X, Y)
        if v.shape[0] != n_rows(Y):
            raise ValueError(f"v has {v.shape[0]} rows, K(X, Y) has {n_rows(Y)} columns")
        res = np.empty((n_rows(X),) + v.shape[1:])

        def consume(sl, blk):  # a float32 block is cast first: its products run in float64 (see matmul)
            res[sl] = as_float64(blk) @ v

        self._for_blocks(X, Y, ysq, self._scratch_work(X, Y, ysq, consume))
        return res

    #: memory for one chunk of C in :meth:`gram` (bytes)
    GRAM_CHUNK_BYTES = 128 * 2**20

    def gram(self, X, Z, y=None, gram_dtype=None):
        """``(C^T C, C^T y)`` for ``C = K(X, Z)``, streaming over row chunks, never holding C.

        Each chunk of C (``GRAM_CHUNK_BYTES``, one reused buffer) is evaluated by the
        threaded kernel and folded in with one multithreaded GEMM (``G += C_b^T C_b``;
        SYRK has half the flops but measured slower with the bundled OpenBLAS):
        memory O(m^2 + chunk) instead of O(n m).  ``C^T y`` is None if y is None.
        With float32 blocks ``C^T C`` is a float32 product per chunk (the O(n m^2) part at twice the
        speed; ~1e-6 relative error) and ``C^T y`` a float64 one.

        ``gram_dtype="float32"`` with float64 blocks: each chunk is cast to float32 for its ``C_b^T C_b``
        only (the O(n m^2) part at float32 speed, ~1e-6 relative error: a preconditioner, as
        :func:`nystrom_bench.solvers.nystrom_cg` uses it), while ``C^T y`` comes from the float64 chunk.
        """
        X, Z, _ = self._prepare(X, Z)
        m = n_rows(Z)
        rows = min(n_rows(X), max(512, self.GRAM_CHUNK_BYTES // (self.dtype.itemsize * m)))
        y = None if y is None else np.asarray(y, dtype=np.float64)
        gdt = self.dtype if gram_dtype is None else check_dtype(gram_dtype, "gram")
        G, tmp = np.zeros((m, m)), np.empty((m, m), dtype=gdt)
        Cty = None if y is None else np.zeros((m,) + y.shape[1:])
        buf = np.empty((rows, m), dtype=self.dtype)
        cast = None if gdt == self.dtype else np.empty((rows, m), dtype=gdt)
        for start in range(0, n_rows(X), rows):
            sl = slice(start, min(start + rows, n_rows(X)))
            Cb = self(X[sl], Z, out=buf[: sl.stop - sl.start])
            # numpy's BLAS (it runs SYRK for Cb.T @ Cb); scipy.linalg.blas gemm/syrk measured slower here.
            # In float32 each chunk's product is float32 and the sum over chunks float64.
            Cg = Cb if cast is None else cast[: len(Cb)]
            if cast is not None:
                Cg[...] = Cb
            np.dot(Cg.T, Cg, out=tmp)
            G += tmp
            if y is not None:
                Cty += matmul_t(Cb, y[sl])
        G += G.T
        G /= 2
        return G, Cty

    def _fold(self, X, Z, shape, contribution):
        """``sum over row blocks b of contribution(rows_b, C_b)`` for ``C = K(X, Z)``, float64 result of
        ``shape``: blocks are cache-sized, evaluated, used and dropped; each thread sums into its own
        accumulator, so C is never held."""
        import threading

        X, Z, aux = self._prepare(X, Z)
        parts, local = [], threading.local()

        def consume(sl, blk):
            acc = getattr(local, "acc", None)
            if acc is None:
                acc = local.acc = np.zeros(shape)
                parts.append(acc)
            # a float32 block is cast first: the products run in float64 (see matmul)
            acc += contribution(sl, as_float64(blk))

        self._for_blocks(X, Z, aux, self._scratch_work(X, Z, aux, consume))
        return np.sum(parts, axis=0) if parts else np.zeros(shape)

    def gram_mv(self, X, Z, V):
        """``C^T (C V)`` for ``C = K(X, Z)`` and V of shape (m,) or (m, t): one fused pass over cache-sized
        blocks of C, never holding C; float64 result (the streamed product of
        :func:`nystrom_bench.solvers.nystrom_cg`)."""
        V = np.asarray(V, dtype=np.float64)
        if V.shape[0] != n_rows(as_2d(Z, "Z")):
            raise ValueError(f"V has {V.shape[0]} rows, K(X, Z) has {n_rows(Z)} columns")
        return self._fold(X, Z, V.shape, lambda sl, blk: blk.T @ (blk @ V))

    def t_mv(self, X, Z, Y):
        """``C^T Y`` for ``C = K(X, Z)`` and Y of shape (n,) or (n, t), streamed like :meth:`gram_mv`."""
        Y = np.asarray(Y, dtype=np.float64)
        if Y.shape[0] != n_rows(as_2d(X)):
            raise ValueError(f"Y has {Y.shape[0]} rows, K(X, Z) has {n_rows(X)}")
        return self._fold(X, Z, (n_rows(as_2d(Z, "Z")),) + Y.shape[1:], lambda sl, blk: blk.T @ Y[sl])

    def column_sq_norms(self, X):
        """``||K[:, j]||_2^2`` for every column j of K(X, X), in O(n) extra memory per thread."""
        X, Y, ysq = self._prepare(X, None)
        import threading

        lock, total = threading.Lock(), np.zeros(n_rows(X))

        def consume(sl, blk):
            part = np.einsum("ij,ij->j", blk, blk)
            with lock:
                total[:] += part

        self._for_blocks(X, Y, ysq, self._scratch_work(X, Y, ysq, consume))
        return total

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def _blas_threads():
    """Number of BLAS threads currently in force (1 if unknown)."""
    from threadpoolctl import threadpool_info

    counts = [i.get("num_threads", 1) for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else 1


def _sq_dists_into(Xb, Y, out, xsq, ysq):
    """out <- ||x_i - y_j||^2 via one GEMM, clipped at 0 against round-off."""
    dot_t(Xb, Y, out=out)
    out *= -2.0
    out += xsq[:, None]
    out += ysq[None, :]
    np.maximum(out, 0.0, out=out)
    return out


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

    # The whole exponent comes out of one GEMM, [x, 1, |x|^2] . [2g z, -g |z|^2, -g]^T
    # = -g |x - z|^2, leaving only a clamp (round-off) and an in-place exp per block.
    # In float32 both point sets are first shifted by the mean of Y (in float64): distances are
    # unchanged, and |x|^2, |z|^2 stay of the order of the distances, so the sum keeps its digits.
    def _prepare(self, X, Y):
        X, Y, _ = super()._prepare(X, Y)
        g = self.gamma
        if issparse(X) or issparse(Y):  # sparse: -g |x - z|^2 from the norms and X Z^T (sparse products)
            return X, Y, (None, row_sq_norms(Y))
        shift = Y.mean(axis=0) if self.dtype != np.float64 and n_rows(Y) else None
        Ys = Y if shift is None else Y - shift
        ysq = np.einsum("ij,ij->i", Ys, Ys)
        Ya = np.hstack([2.0 * g * Ys, (-g * ysq)[:, None], np.full((n_rows(Y), 1), -g)]).astype(self.dtype)
        return X, Y, (Ya, shift)

    def _fill_rows(self, X, Y, aux, sl, out):
        Ya, shift = aux
        if Ya is None:  # sparse X or Y: 2 g x.z - g |x|^2 - g |z|^2 in float64, then the same clamp + exp
            g, Xb = self.gamma, X[sl]
            E = dot_t(Xb, Y)
            E *= 2.0 * g
            E -= g * row_sq_norms(Xb)[:, None]
            E -= g * shift[None, :]
            out[...] = E
            exp_nonpos(out)
            return
        Xb = X[sl] if shift is None else X[sl] - shift
        Xa = np.empty((n_rows(Xb), Xb.shape[1] + 2), dtype=out.dtype)
        Xa[:, :-2] = Xb
        Xa[:, -2] = 1.0
        Xa[:, -1] = np.einsum("ij,ij->i", Xb, Xb)
        np.dot(Xa, Ya.T, out=out)
        exp_nonpos(out)  # clamp + exp in place: one vectorised pass where numpy's exp is scalar

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
            cdist(Xb, Y, metric="cityblock", out=out)
        out *= -self.gamma
        exp_nonpos(out)

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

    def params(self):
        return {"gamma": self.gamma}


class Polynomial(Kernel):
    """Polynomial kernel ``(gamma x.y + coef0)^degree``."""

    name = "polynomial"

    def __init__(self, degree=3, gamma=1.0, coef0=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if int(degree) != degree or degree < 1:
            raise ValueError(f"polynomial kernel: degree must be a positive integer, got {degree}")
        self.degree, self.gamma, self.coef0 = int(degree), float(gamma), float(coef0)
        # even degree with coef0 >= 0, or any degree with coef0 >= 0 and gamma > 0, is PSD
        self.psd = self.coef0 >= 0 and self.gamma > 0

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        dot_t(Xb, Y, out=out)
        out *= self.gamma
        out += self.coef0
        np.power(out, self.degree, out=out)

    def diag(self, X):
        X = as_2d(X)
        return (self.gamma * row_sq_norms(X) + self.coef0) ** self.degree

    def params(self):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


class Linear(Kernel):
    """Linear kernel ``x.y``."""

    name = "linear"

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        dot_t(Xb, Y, out=out)

    def diag(self, X):
        return row_sq_norms(as_2d(X))


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


class Pairwise(Kernel):
    """Any scikit-learn pairwise kernel: a name of ``sklearn.metrics.pairwise.kernel_metrics()`` or a
    callable ``k(x, y, **params)``, evaluated block-wise by ``sklearn.metrics.pairwise.pairwise_kernels``.

    Lets the samplers run on the kernels scikit-learn's ``Nystroem`` accepts (``chi2``, ``sigmoid``,
    ``cosine``, a user function).  Whether the kernel is PSD is the user's claim (``psd``).
    """

    name = "pairwise"

    def __init__(self, metric, params=None, psd=True, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        self.metric = metric
        self.kernel_params = dict(params or {})
        self.psd = bool(psd)

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        from sklearn.metrics.pairwise import pairwise_kernels

        out[...] = pairwise_kernels(Xb, Y, metric=self.metric, filter_params=True, **self.kernel_params)

    def diag(self, X):
        X = as_2d(X)
        step = 256
        return np.concatenate([np.diag(self(X[i:i + step], X[i:i + step])) for i in range(0, n_rows(X), step)]
                              or [np.empty(0)])

    def params(self):
        return {"metric": getattr(self.metric, "__name__", self.metric), **self.kernel_params}


_REGISTRY = {cls.name: cls for cls in (Gaussian, Laplacian, Polynomial, Linear, Epanechnikov)}
_REGISTRY["rbf"] = Gaussian


def available():
    """Names accepted by :func:`make`."""
    return sorted(_REGISTRY)


def make(name, dtype=None, **params):
    """Build a kernel by name: ``make("gaussian", gamma=0.5)``.

    Parameters
    ----------
    name : str or Kernel
        One of :func:`available`; a :class:`Kernel` instance is returned unchanged (in ``dtype``
        if given).
    dtype : {"float64", "float32"} or None
        Precision of the kernel blocks (None: float64, or the instance's own).
    **params
        The kernel's hyper-parameters (see each class).
    """
    if isinstance(name, Kernel):
        return name if dtype is None else name.astype(dtype)
    if dtype is not None:
        return make(name, **params).astype(dtype)
    try:
        cls = _REGISTRY[str(name).lower()]
    except KeyError:
        from ._names import unknown

        raise ValueError(unknown("kernel", name, available())) from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"kernel {name!r}: bad parameters {params}: {exc}") from None


# -- width heuristics ----------------------------------------------------------------------------
def _pair_sq_dists(X, max_points, seed):
    X = as_2d(X)
    if n_rows(X) > max_points:
        rng = np.random.default_rng(seed)
        X = X[rng.choice(n_rows(X), max_points, replace=False)]
    if issparse(X):  # sparse rows: the norms trick (sparse products), never a dense copy of the sample
        from sklearn.metrics.pairwise import euclidean_distances

        D = euclidean_distances(X, squared=True)
    else:
        D = cdist(X, X, metric="sqeuclidean")
    return D[np.triu_indices(n_rows(X), k=1)]


def median_sq_dist(X, max_points=2000, seed=0):
    """Median pairwise squared Euclidean distance (on a sample of ``max_points`` rows)."""
    return float(np.median(_pair_sq_dists(X, max_points, seed)))


def mean_sq_dist(X, max_points=2000, seed=0):
    """Mean pairwise squared distance; exact formula ``2 (mean ||x||^2 - ||mean x||^2) n/(n-1)``."""
    X = as_2d(X)
    n = n_rows(X)
    if n < 2:
        raise ValueError("mean_sq_dist needs at least two points")
    mu = np.asarray(X.mean(axis=0)).ravel()
    sq = row_sq_norms(X).sum() if issparse(X) else np.einsum("ij,ij->", X, X)
    return float(2.0 * (sq / n - mu @ mu) * n / (n - 1))


def _heuristic_sq_dist(value, X):
    """The pairwise squared distance statistic of X named by ``value`` ("median" or "mean")."""
    if value == "median":
        d = median_sq_dist(X)
    elif value == "mean":
        d = mean_sq_dist(X)
    else:
        raise ValueError(f"unknown width heuristic {value!r}; use a number, 'median' or 'mean'")
    if d <= 0:
        raise ValueError("all points coincide: cannot set a kernel width from distances")
    return d


def resolve_width(value, X, scale=1.0):
    """Turn a width spec into ``gamma``: a number is returned as is; ``"median"``/``"mean"``
    give ``scale / median (mean) pairwise squared distance`` of X."""
    if isinstance(value, str):
        return float(scale) / _heuristic_sq_dist(value, X)
    return float(value)


# -- kernel specs ----------------------------------------------------------------------------------
#: the hyper-parameters each kernel takes in a spec (``rbf`` is an alias of ``gaussian``)
_SPEC_PARAMS = {
    "gaussian": ("gamma", "sigma", "b"),
    "rbf": ("gamma", "sigma", "b"),
    "laplacian": ("gamma",),
    "polynomial": ("gamma", "degree", "coef0"),
    "linear": (),
    "epanechnikov": ("sigma",),
}
#: keys that set a kernel width: a positive number or one of HEURISTICS
WIDTH_KEYS = ("gamma", "sigma", "b")
#: width heuristics: computed from the pairwise squared distances of the data
HEURISTICS = ("median", "mean")


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _kernel_name(spec, where):
    name = spec.get("kernel")
    if name is None:
        raise ValueError(f"{where}: no 'kernel' given; choose one of {', '.join(available())}")
    key = name.lower() if isinstance(name, str) else name
    if not isinstance(key, str) or key not in _SPEC_PARAMS:
        from ._names import unknown

        raise ValueError(f"{where}: {unknown('kernel', name, available())}")
    return key


def spec_keys(name):
    """The keys (besides ``"kernel"``) that kernel ``name`` accepts in a spec.

    Parameters
    ----------
    name : str
        One of :func:`available` (case-insensitive).

    Returns
    -------
    tuple of str
        The kernel's hyper-parameters (gaussian/rbf: ``gamma, sigma, b``; laplacian:
        ``gamma``; polynomial: ``gamma, degree, coef0``; linear: none; epanechnikov:
        ``sigma``), followed by ``"scale"`` (the factor of a ``"median"``/``"mean"``
        width) for every kernel that has a width.
    """
    params = _SPEC_PARAMS[_kernel_name({"kernel": name}, "spec_keys")]
    return params + (("scale",) if any(k in WIDTH_KEYS for k in params) else ())


def check_spec(spec, where="kernel"):
    """Validate a kernel spec without data and return a normalised copy.

    Parameters
    ----------
    spec : Mapping
        ``{"kernel": name, **params}``: ``name`` one of :func:`available`
        (case-insensitive), params among :func:`spec_keys` of it:

        - widths ``gamma``, ``sigma``, ``b`` (at most one of them): a positive finite
          number, or ``"median"``/``"mean"`` -- resolved on data by :func:`from_spec`;
        - ``degree``: a positive integer; ``coef0``: a finite number;
        - ``scale``: a positive finite number, only together with a heuristic width.
    where : str, default="kernel"
        Where the spec comes from; every error message starts with it
        (e.g. ``"studies.krr.kernels.g"`` or ``"KRR"``).

    Returns
    -------
    dict
        A new dict ``{"kernel": name, **params}`` with ``name`` lower-cased (``"rbf"``
        stays ``"rbf"``: it is an alias of ``"gaussian"`` that :func:`make` accepts),
        widths, ``coef0`` and ``scale`` as float, ``degree`` as int, heuristics as
        given; keys in the order given.

    Raises
    ------
    ValueError
        One message, starting with ``where``, naming the offending key and the fix.
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: a kernel spec must be a mapping like {{'kernel': 'gaussian', 'gamma': 0.5}}, "
                         f"got {spec!r}")
    name = _kernel_name(spec, where)
    allowed = _SPEC_PARAMS[name]
    keys = spec_keys(name)
    out = {"kernel": name}
    for key, value in spec.items():
        if key == "kernel":
            continue
        if key not in keys:
            takes = f"it takes: {', '.join(allowed)}" if allowed else "it takes no parameters"
            raise ValueError(f"{where}: {key!r} is not a parameter of the {name} kernel; {takes}")
        if key in WIDTH_KEYS:
            if isinstance(value, str):
                if value not in HEURISTICS:
                    raise ValueError(f"{where}: {key} = {value!r} is not a width heuristic; give a positive number "
                                     f"or one of {', '.join(map(repr, HEURISTICS))}")
            elif not _is_number(value) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: {key} must be a positive finite number or one of "
                                 f"{', '.join(map(repr, HEURISTICS))}, got {value!r}")
            else:
                value = float(value)
        elif key == "degree":
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)) or value < 1:
                raise ValueError(f"{where}: degree must be a positive integer, got {value!r}")
            value = int(value)
        elif key == "coef0":
            if not _is_number(value) or not np.isfinite(value):
                raise ValueError(f"{where}: coef0 must be a finite number, got {value!r}")
            value = float(value)
        else:  # scale
            if not _is_number(value) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: scale must be a positive finite number, got {value!r}")
            value = float(value)
        out[key] = value
    widths = [k for k in WIDTH_KEYS if k in out]
    if len(widths) > 1:
        raise ValueError(f"{where}: give at most one of {', '.join(k for k in WIDTH_KEYS if k in allowed)} for the "
                         f"{name} kernel, got {' and '.join(widths)}")
    if "scale" in out and not (widths and isinstance(out[widths[0]], str)):
        got = f"{widths[0]} = {out[widths[0]]!r}" if widths else "no width"
        raise ValueError(f"{where}: scale only applies to a heuristic width ({' or '.join(map(repr, HEURISTICS))}), "
                         f"got {got}; drop scale or set the width to 'median'/'mean'")
    return out


def from_spec(spec, X=None, where="kernel"):
    """Build the :class:`Kernel` of a spec, resolving heuristic widths on X.

    Parameters
    ----------
    spec : dict
        A kernel spec, validated by :func:`check_spec`.
    X : array-like of shape (n_samples, n_features), default=None
        The data a ``"median"``/``"mean"`` width is computed from (``d`` = median or mean
        pairwise squared distance, ``s`` = ``scale``, default 1): ``gamma = s / d``,
        ``sigma = sqrt(s / (1 / d))`` (i.e. ``sqrt(s d)``), ``b = d / s``.  Needed only
        for heuristic widths.
    where : str, default="kernel"
        Prefix of every error message.

    Returns
    -------
    Kernel
    """
    spec = check_spec(spec, where)
    name = spec.pop("kernel")
    scale = spec.pop("scale", 1.0)
    for key, value in spec.items():
        if not isinstance(value, str):
            continue
        if X is None:
            raise ValueError(f"{where}: {key} = {value!r} is computed from the data: pass X (or give {key} as a "
                             f"number)")
        try:
            if key == "gamma":
                spec[key] = resolve_width(value, X, scale)
            elif key == "sigma":  # as the KRR study always did: sigma = sqrt(scale / (1 / d))
                spec[key] = float(np.sqrt(scale / resolve_width(value, X)))
            else:  # b
                spec[key] = _heuristic_sq_dist(value, X) / scale
        except ValueError as exc:
            raise ValueError(f"{where}: {key} = {value!r}: {exc}") from None
    try:
        return make(name, **spec)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
