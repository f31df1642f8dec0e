"""The :class:`Kernel` base class: block-wise evaluation under a memory budget, threaded over
blocks, and the streamed products (``mmv``, ``gram``, ``gram_mv``, ``t_mv``, ``column_sq_norms``)."""

from __future__ import annotations

import numpy as np

from .blas import as_2d, as_float64, check_dtype, dot_t, matmul_t, n_rows, row_sq_norms

__all__ = ["Kernel", "DEFAULT_BLOCK_BYTES", "counting"]

#: default size of one block of kernel values (bytes); 4 MiB keeps a block in L2/L3.
DEFAULT_BLOCK_BYTES = 4 * 2**20


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

    @staticmethod
    def _pair(X, Y):
        """``(X, Y)`` as 2-D float64 (dense or CSR), ``Y = X`` where None, with the same number of features."""
        X = as_2d(X)
        Y = X if Y is None else as_2d(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
        return X, Y

    def _prepare(self, X, Y):
        X, Y = self._pair(X, Y)
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

    def gram(self, X, Z, y=None):
        """``(C^T C, C^T y)`` for ``C = K(X, Z)``, streaming over row chunks, never holding C.

        Each chunk of C (``GRAM_CHUNK_BYTES``, one reused buffer) is evaluated by the
        threaded kernel and folded in with one multithreaded GEMM (``G += C_b^T C_b``;
        SYRK has half the flops but measured slower with the bundled OpenBLAS):
        memory O(m^2 + chunk) instead of O(n m).  ``C^T y`` is None if y is None.
        With float32 blocks ``C^T C`` is a float32 product per chunk (the O(n m^2) part at twice the
        speed; ~1e-6 relative error) and ``C^T y`` a float64 one.
        """
        X, Z, _ = self._prepare(X, Z)
        m = n_rows(Z)
        rows = min(n_rows(X), max(512, self.GRAM_CHUNK_BYTES // (self.dtype.itemsize * m)))
        y = None if y is None else np.asarray(y, dtype=np.float64)
        G, tmp = np.zeros((m, m)), np.empty((m, m), dtype=self.dtype)
        Cty = None if y is None else np.zeros((m,) + y.shape[1:])
        buf = np.empty((rows, m), dtype=self.dtype)
        for start in range(0, n_rows(X), rows):
            sl = slice(start, min(start + rows, n_rows(X)))
            Cb = self(X[sl], Z, out=buf[: sl.stop - sl.start])
            # numpy's BLAS (it runs SYRK for Cb.T @ Cb); scipy.linalg.blas gemm/syrk measured slower here.
            # In float32 each chunk's product is float32 and the sum over chunks float64.
            np.dot(Cb.T, Cb, out=tmp)
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

    def gram_mv(self, X, Z, V, fused=False):
        """``C^T (C V)`` for ``C = K(X, Z)`` and V of shape (m,) or (m, t): one fused pass over cache-sized
        blocks of C, never holding C; float64 result (the streamed product of
        :func:`nystrom_bench.solvers.nystrom_cg`).

        ``fused=True``: where the kernel has a row-fused pass (:meth:`_fused_fold`: the dense Gaussian with
        compiled loops), each row of a block is used while it is in cache -- no block written out, cast to
        float64 or read twice -- with the same float64 products and sums but another summation order (last
        bits differ; False keeps the results of before).  Elsewhere it is the blocked pass."""
        V = np.asarray(V, dtype=np.float64)
        if V.shape[0] != n_rows(as_2d(Z, "Z")):
            raise ValueError(f"V has {V.shape[0]} rows, K(X, Z) has {n_rows(Z)} columns")
        out = self._fused_fold(X, Z, "gram", V) if fused else None
        if out is not None:
            return out
        return self._fold(X, Z, V.shape, lambda sl, blk: blk.T @ (blk @ V))

    def t_mv(self, X, Z, Y, fused=False):
        """``C^T Y`` for ``C = K(X, Z)`` and Y of shape (n,) or (n, t), streamed like :meth:`gram_mv` (``fused``
        as there)."""
        Y = np.asarray(Y, dtype=np.float64)
        if Y.shape[0] != n_rows(as_2d(X)):
            raise ValueError(f"Y has {Y.shape[0]} rows, K(X, Z) has {n_rows(X)}")
        out = self._fused_fold(X, Z, "t", Y) if fused else None
        if out is not None:
            return out
        return self._fold(X, Z, (n_rows(as_2d(Z, "Z")),) + Y.shape[1:], lambda sl, blk: blk.T @ Y[sl])

    def _fused_fold(self, X, Z, which, M):
        """The row-fused ``C^T (C M)`` (``which="gram"``) or ``C^T M`` (``"t"``), or None where this kernel has
        none (then the blocked pass runs)."""
        return None

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


_COUNTING_CLASSES = {}


def counting(kernel):
    """A copy of ``kernel`` that counts the kernel entries it evaluates, in ``.entries`` (an int).

    Every evaluation path goes through one row block at a time (``_fill_rows``: ``__call__``,
    :meth:`~Kernel.blocks`, the streamed products) or :meth:`~Kernel.diag`, so the count is exact:
    ``K(X, Y)`` adds ``n_X n_Y``, ``diag(X)`` adds ``n_X`` (``K(X)`` therefore adds ``n^2 + n``: its
    diagonal is evaluated again to make it exact).  Thread-safe; the original kernel is untouched.
    :func:`nystrom_bench.sampling.sample` uses it to report what a sampler evaluated.

    >>> import numpy as np
    >>> from nystrom_bench import kernels
    >>> k = kernels.counting(kernels.make("gaussian", gamma=1.0))
    >>> X = np.zeros((10, 2))
    >>> _ = k(X, X[:3]); _ = k.diag(X)
    >>> k.entries
    40
    """
    import copy
    import threading

    base = type(kernel)
    if getattr(base, "_counts_entries", False):
        base = base.__mro__[1]
    cls = _COUNTING_CLASSES.get(base)
    if cls is None:
        def _fill_rows(self, X, Y, aux, sl, out):
            with self._entries_lock:
                self.entries += int(out.size)
            return base._fill_rows(self, X, Y, aux, sl, out)

        def diag(self, X):
            d = base.diag(self, X)
            with self._entries_lock:
                self.entries += int(np.shape(d)[0])
            return d

        cls = _COUNTING_CLASSES[base] = type(base.__name__, (base,), {
            "_fill_rows": _fill_rows, "diag": diag, "_counts_entries": True, "__module__": base.__module__,
            "__qualname__": base.__qualname__})
    out = copy.copy(kernel)
    out.__class__ = cls
    out.entries = 0
    out._entries_lock = threading.Lock()
    return out


_BLAS_LIBS = None


def _blas_threads():
    """Number of BLAS threads currently in force (1 if unknown).

    The BLAS libraries loaded at the first call are found once (``threadpoolctl.threadpool_info`` walks every
    loaded library: about 1 ms, once per kernel call before); their thread counts are read live on each call
    (about 1 microsecond), so ``threadpool_limits`` contexts entered later are honoured."""
    global _BLAS_LIBS
    if _BLAS_LIBS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_LIBS = ThreadpoolController().select(user_api="blas").lib_controllers
    counts = [lib.num_threads for lib in _BLAS_LIBS]
    return max(counts) if counts else 1


def _sq_dists_into(Xb, Y, out, xsq, ysq):
    """out <- ||x_i - y_j||^2 via one GEMM, clipped at 0 against round-off."""
    dot_t(Xb, Y, out=out)
    out *= -2.0
    out += xsq[:, None]
    out += ysq[None, :]
    np.maximum(out, 0.0, out=out)
    return out
