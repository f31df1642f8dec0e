"""Iterative solver for Nystrom kernel ridge regression: FALKON's preconditioned conjugate gradient.

The Nystrom (NCR) system of :class:`~nystrom_bench.learners.KRR` with landmarks Z,
``C = K(X, Z)`` (n x m) and ``W = K(Z, Z)``, is

    H beta = C^T y,    H = C^T C + alpha W

(Rudi, Carratino & Rosasco, NIPS 2017, with their ``lambda n`` = our ``alpha``).  A direct solve
forms ``C^T C`` in O(n m^2); conjugate gradient needs only products ``H v = C^T (C v) + alpha W v``,
O(n m) each, streamed over row blocks of C so that memory stays O(m^2 + block).

Preconditioner (FALKON, derived here for our scaling): with uniform landmarks ``C^T C ~ (n / m) W^2``,
so ``P = (n / m) W^2 + alpha W`` approximates H.  With ``T`` the upper Cholesky factor of W
(``W = T^T T``, a small jitter where W is singular) and ``A`` that of ``(n / m) T T^T + alpha I``,

    P = T^T ((n / m) T T^T + alpha I) T = T^T A^T A T,   P^{-1} = B B^T,   B = T^{-1} A^{-1},

and CG runs on the well-conditioned ``B^T H B gamma = B^T C^T y``, ``beta = B gamma`` -- each
iteration one pass over the data and four m x m triangular solves.  With C streamed, each pass is row-fused
(``Kernel.gram_mv(..., fused=True)``: per tile the GEMM, then exp, ``K v`` and ``K^T u`` four rows at a time
in cache); measured at n = 2 10^5, m = 4,000, d = 90, float32, one thread, CPU time, A/B in one process on a
loaded machine: 51.0 s -> 39.1 s for the same 15 iterations, 2.04x -> 1.56x the GEMM time of the passes.
:class:`HeldOutStop` stops the iterations on held-out error instead (15 -> 13 iterations at that size, test
RMSE +5e-5 relative).

``preconditioner="gram"`` uses the system's own Cholesky factor instead (one O(n m^2) pass for
``C^T C``): with float32 kernel blocks this is the float32 direct solve refined by CG against the
blocks.  The kernel's ``dtype`` sets the precision of the blocks; products with them, their sums,
the preconditioner and CG's vectors are float64.  Measured (``make bench-large``): n = 10^6,
m = 10^4, float32, C streamed: 15 iterations to 1e-3 in 4.6 min and 3.2 GiB.
"""

from __future__ import annotations

import copy
import logging
import time

import numpy as np
from scipy import linalg

from .kernels import as_2d, check_dtype, crossprod, matmul_t

__all__ = ["nystrom_cg", "HeldOutStop"]

log = logging.getLogger(__name__)
#: seconds between two progress lines of a long solve (logger ``nystrom_bench.solvers``, level INFO)
PROGRESS_EVERY = 30.0


def _default_budget():
    """A quarter of the physical memory (2 GiB where it cannot be read)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4)
    except (ValueError, OSError, AttributeError):
        return 2 * 2**30


#: hold C = K(X, Z) between iterations when it takes at most this many bytes; else stream it
STORE_BUDGET_BYTES = _default_budget()


def _cholesky_jittered(H, jitter):
    """Upper Cholesky factor of the symmetric H (overwritten), adding ``jitter * 10^k`` to the diagonal
    until it is positive definite (a float32 C^T C with a tiny alpha can lose definiteness)."""
    m = len(H)
    for k in range(12):
        try:
            return linalg.cholesky(H, lower=False, check_finite=False)
        except linalg.LinAlgError:
            H.flat[:: m + 1] += jitter * 10.0**k * m
    raise linalg.LinAlgError("nystrom_cg: the system matrix C^T C + alpha W is not positive definite even with a "
                             "jitter; increase alpha")


class _Gram:
    """Products with ``C^T C`` (C = K(X, Z), optionally column-centred) without holding C unless it fits."""

    def __init__(self, X, kernel, Z, budget, block_rows, fused=False):
        self.X, self.Z, self.fused = X, Z, fused
        n, m = X.shape[0], Z.shape[0]
        if block_rows:
            kernel = copy.copy(kernel)
            kernel.block_bytes = int(block_rows) * m * kernel.dtype.itemsize
        self.kernel = kernel
        self.C = kernel(X, Z) if kernel.dtype.itemsize * n * m <= budget else None
        self.mean = None  #: column means of C when the system is centred
        self._chunk = None  #: gram_mv's float64 buffer for a float32 C's chunks

    def matvec_t(self, Y):
        """``C^T Y`` (uncentred)."""
        return matmul_t(self.C, Y) if self.C is not None else self.kernel.t_mv(self.X, self.Z, Y, fused=self.fused)

    def gram_mv(self, V):
        """``C_c^T C_c V`` with ``C_c`` the (centred) C: one pass."""
        if self.C is not None and self.C.dtype == np.float64:
            out = self.C.T @ (self.C @ V)
        elif self.C is not None:  # float32 C: each 4 MiB chunk cast to float64 once for both products
            out = np.zeros(V.shape)
            rows = max(1, (4 * 2**20) // (8 * self.C.shape[1]))
            if self._chunk is None:  # one float64 buffer for every chunk of every product: no fresh pages per
                self._chunk = np.empty((min(rows, len(self.C)), self.C.shape[1]))  # chunk (the same values)
            for i in range(0, len(self.C), rows):
                Cb = self._chunk[: min(rows, len(self.C) - i)]
                np.copyto(Cb, self.C[i:i + rows])
                out += Cb.T @ (Cb @ V)
        else:
            out = self.kernel.gram_mv(self.X, self.Z, V, fused=self.fused)
        if self.mean is not None:
            out -= self.X.shape[0] * np.outer(self.mean, self.mean @ V)
        return out


#: FALKON's ``T T^T`` by LAPACK's ``dlauum`` (a third of SYRK's flops) from this many landmarks on: measured at
#: m = 3,000 (one thread) 0.22 s against 0.52 s, the two Cholesky factorisations 0.38 s each; at m = 10^4 the
#: three steps are about 2.6 passes over the data of n = 10^6 before, 2 after.  Below it ``T @ T.T`` as before,
#: so the smaller fits (every default-config one) keep their results bit for bit.
LAUUM_MIN_M = 2000

#: the preconditioners of :func:`nystrom_cg`
PRECONDITIONERS = ("falkon", "gram")


class HeldOutStop:
    """A stopping rule on held-out error for :func:`nystrom_cg`'s ``callback``: stop once the held-out error
    has improved by less than ``rel_tol`` (relative) over the best so far for ``patience`` iterations in a row;
    :attr:`best` holds the best iterate.

    The iterations of FALKON (Rudi, Carratino & Rosasco, NIPS 2017, Alg. 1) need not run to a small residual:
    its Thm. 3 shows O(log n) of them reach the statistical accuracy, and NYTRO (Camoriano, Angles, Rudi &
    Rosasco, AISTATS 2016) stops Nystrom iterations on held-out error; this rule does so during the one solve.  Each check predicts on the held-out points, ``K(X_val, Z)
    beta`` streamed block-wise (``n_val m (d + 2)`` flops: 1% of a pass at n_val = n / 100).

    A heuristic: where the held-out error plateaus it stops there.  Measured: n = 3,000, m = 300 (test
    ``test_held_out_stop_keeps_the_best_iterate_and_stops_without_progress``) 13 iterations instead of 74 at a
    held-out RMSE 0.24% above the full solve's; with m = 100 and alpha 100x smaller (a weak preconditioner,
    plateaus of several iterations) it stopped at 16 of 200 at 4% above.

    Parameters
    ----------
    kernel : Kernel
    Z : (m, d) array
        Landmark points.
    X_val : (n_val, d) array
    y_val : (n_val,) or (n_val, t) array
    rel_tol : float
        Smallest relative improvement of the held-out root mean squared error (the worst output's) that
        counts as progress.
    patience : int
        Iterations without progress before stopping.

    Attributes
    ----------
    history : list of float
        Held-out RMSE after each iteration.
    best : tuple or None
        ``(n_iter, beta, intercept)`` of the lowest held-out error.
    """

    def __init__(self, kernel, Z, X_val, y_val, rel_tol=1e-4, patience=1):
        if rel_tol < 0 or int(patience) < 1:
            raise ValueError(f"HeldOutStop needs rel_tol >= 0 and patience >= 1, got {rel_tol} and {patience}")
        y_val = np.asarray(y_val, dtype=np.float64)
        self.Y = y_val[:, None] if y_val.ndim == 1 else y_val
        self.X, self.kernel, self.Z = as_2d(X_val, "X_val"), kernel, Z
        if self.X.shape[0] != self.Y.shape[0] or self.X.shape[0] == 0:
            raise ValueError(f"HeldOutStop: X_val has {self.X.shape[0]} rows and y_val {self.Y.shape[0]}; give the "
                             "same, non-zero number of held-out points")
        self.rel_tol, self.patience = float(rel_tol), int(patience)
        self.history, self.best, self._stale = [], None, 0

    def __call__(self, n_iter, beta, intercept):
        pred = self.kernel.mmv(self.X, self.Z, beta) + intercept
        err = float(np.max(np.sqrt(np.mean((pred - self.Y) ** 2, axis=0))))
        self.history.append(err)
        if self.best is None or err < self.history_best * (1.0 - self.rel_tol):
            self._stale = 0
        else:
            self._stale += 1
        if self.best is None or err < self.history_best:
            self.best, self.history_best = (n_iter, beta.copy(), np.array(intercept, dtype=np.float64)), err
        return self._stale >= self.patience


def nystrom_cg(X, kernel, Z, Y, alpha, *, center=False, max_iter=100, tol=1e-6, store_budget=None,
               block_rows=None, preconditioner="falkon", gram_dtype=None, callback=None):
    """Solve ``(C^T C + alpha W) beta = C^T Y`` by preconditioned conjugate gradient.

    Parameters
    ----------
    X : (n, d) array
    kernel : Kernel
    Z : (m, d) array
        Landmark points.
    Y : (n,) or (n, t) array
    alpha : float > 0
    center : bool
        Solve with column-centred C and targets (an unpenalised intercept): returns the intercept too.
    max_iter : int
    tol : float
        Stop when every column's preconditioned residual is below ``tol`` times its initial norm.
    store_budget : int or None
        Bytes allowed for holding C between iterations (else it is recomputed block by block);
        None: ``STORE_BUDGET_BYTES``, a quarter of the physical memory.
    block_rows : int or None
        Rows per streamed block (default: the kernel's cache-sized blocks, 4 MiB).
    preconditioner : {"falkon", "gram"}
        ``"falkon"``: FALKON's ``(n / m) W^2 + alpha W`` (O(m^3), no pass over the data).  ``"gram"``:
        the Cholesky factor of the system itself, ``C^T C`` accumulated from the kernel's blocks (one
        O(n m^2) pass) -- with float32 blocks this is the direct solve refined by CG: a float32 ``C^T C``
        is accurate to ~1e-6 relative, which a small alpha turns into percent errors of a direct solve
        (measured: test RMSE +2.4% at alpha / n = 5e-8), while CG's residuals use the blocks themselves
        and bring the solution to the float32 kernel's accuracy in a few passes.
    gram_dtype : {"float32"} or None
        ``preconditioner="gram"`` with float64 blocks: that ``C^T C`` streamed from float32 kernel blocks
        (:meth:`~nystrom_bench.kernels.Kernel.gram`: GEMM, exp and SYRK at twice the float64 speed, ~1e-6
        relative error), while the right-hand side and every CG product use the float64 blocks -- the direct
        solve at float32 speed, refined to float64 accuracy by ``tol``.  Measured at n = 10^5, m = 3,000,
        d = 90: 2 iterations to 1e-6 (predictions 3e-8 from the float64 direct solve's, relative), 4 to
        1e-10 (4e-13); the float32 pass took 4.7 s where casting float64 blocks per chunk took 5.9-7.0 s.

    The kernel's ``dtype`` sets the precision of C's blocks and of the products with them (float32:
    twice the GEMM and exp speed, half the memory of a stored C); their sums over blocks, the
    preconditioner and CG's vectors are float64.

    callback : callable or None
        ``callback(n_iter, beta, intercept)`` after every iteration that has not met ``tol`` (the iterate of
        the original system: ``beta`` (m, t), ``intercept`` (t,)); a true return stops CG there (e.g.
        :class:`HeldOutStop`).  Costs two m x m triangular solves per iteration on top of the callback.

    Returns
    -------
    dict
        ``beta`` (m, t), ``intercept`` (t,), ``n_iter``, ``residuals`` (relative, per iteration, the
        worst column), ``stored`` (whether C was held), ``stopped`` (whether ``callback`` stopped it).
        The residual is not monotone -- only the error's energy norm is -- and can rise several-fold for 20 iterations before it falls again
        (measured at n = 5e4, m = 1,000, alpha / n = 1e-6, float64 and float32 alike), so the last
        iterate is returned.
    """
    if alpha <= 0:
        raise ValueError(f"nystrom_cg needs alpha > 0, got {alpha}")
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(f"nystrom_cg: unknown preconditioner {preconditioner!r}; choose one of "
                         f"{', '.join(PRECONDITIONERS)}")
    X, Z = as_2d(X), as_2d(Z, "Z")  # dense float64, or sparse CSR (kernel blocks of sparse products)
    Y = np.asarray(Y, dtype=np.float64)
    Y2 = Y[:, None] if Y.ndim == 1 else Y
    n, m = X.shape[0], Z.shape[0]
    budget = STORE_BUDGET_BYTES if store_budget is None else store_budget
    G = CtY1 = None
    Y1 = np.column_stack([Y2, np.ones(n)])
    if gram_dtype is not None and check_dtype(gram_dtype, "nystrom_cg gram_dtype") != kernel.dtype:
        if preconditioner != "gram":
            raise ValueError("nystrom_cg: gram_dtype applies to preconditioner='gram' only")
        # the preconditioner's C^T C from blocks in gram_dtype (float32: GEMM, exp and SYRK at twice the speed);
        # C^T Y below, and every CG product, from the kernel's own (float64) blocks
        G, _ = kernel.astype(gram_dtype).gram(X, Z)
    elif preconditioner == "gram" and kernel.dtype.itemsize * n * m > budget:
        G, CtY1 = kernel.gram(X, Z, Y1)  # streamed: C^T C, C^T Y and C^T 1 in one pass
    # streamed passes of FALKON's CG row-fused (Kernel.gram_mv's fused=True); the "gram" preconditioner's refinement
    # keeps the blocked pass, so the float32 and streamed direct fits give the results of before bit for bit
    gram = _Gram(X, kernel, Z, budget, block_rows, fused=preconditioner == "falkon")
    if CtY1 is None:
        CtY1 = gram.matvec_t(Y1)  # C^T Y and C^T 1 in one pass
    y_mean = Y2.mean(axis=0) if center else np.zeros(Y2.shape[1])
    rhs = CtY1[:, :-1]
    if center:
        gram.mean = CtY1[:, -1] / n
        rhs = rhs - n * np.outer(gram.mean, y_mean)

    # W in float64 whatever the kernel's precision (m x m: cheap)
    W = kernel.astype("float64")(Z)
    jitter = 1e-10 * max(float(np.trace(W)) / m, 1e-300)
    if preconditioner == "falkon":
        # factored in place: only T is kept, and W v = T^T (T v) up to the jitter
        W.flat[:: m + 1] += jitter * m
        T = linalg.cholesky(W, lower=False, overwrite_a=True, check_finite=False)
        del W
        if m >= LAUUM_MIN_M:  # LAPACK's triangular product: m^3 / 3 flops, where numpy's T @ T.T (SYRK) does m^3
            inner, info = linalg.lapack.dlauum(T, lower=0)
            if info:
                raise linalg.LinAlgError(f"nystrom_cg: LAPACK dlauum failed (info={info})")
        else:
            inner = T @ T.T
        inner *= n / m
        inner.flat[:: m + 1] += alpha
        A = linalg.cholesky(inner, lower=False, overwrite_a=True, check_finite=False)
        del inner

        def B(v):  # T^{-1} A^{-1} v
            return linalg.solve_triangular(T, linalg.solve_triangular(A, v, check_finite=False),
                                           check_finite=False)

        def Bt(v):  # A^{-T} T^{-T} v
            return linalg.solve_triangular(A, linalg.solve_triangular(T, v, trans="T", check_finite=False),
                                           trans="T", check_finite=False)

        def W_mv(v):
            return T.T @ (T @ v)
    else:
        # the system's own Cholesky factor R (H ~ R^T R), C^T C from the kernel blocks: B = R^{-1}
        if G is None:  # C held
            G = crossprod(gram.C)
        if center:
            G -= n * np.outer(gram.mean, gram.mean)
        G += alpha * W
        R = _cholesky_jittered(G, jitter)
        del G

        def B(v):
            return linalg.solve_triangular(R, v, check_finite=False)

        def Bt(v):
            return linalg.solve_triangular(R, v, trans="T", check_finite=False)

        def W_mv(v):
            return W @ v

    def op(g):  # B^T H B g
        v = B(g)
        return Bt(gram.gram_mv(v) + alpha * W_mv(v))

    b = Bt(rhs)
    g = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    r0 = np.sqrt(rs)
    r0[r0 == 0] = 1.0
    residuals = []
    it, stopped = 0, False  # stopped: by the callback
    start = last = time.perf_counter()
    for _ in range(max_iter):
        if time.perf_counter() - last > PROGRESS_EVERY:
            last = time.perf_counter()
            log.info("nystrom_cg: n=%d m=%d iteration %d, relative residual %.2e, %.0f s", n, m, it,
                     residuals[-1], last - start)
        it += 1
        Ap = op(p)
        step = rs / np.maximum(np.einsum("ij,ij->j", p, Ap), np.finfo(np.float64).tiny)
        g += p * step
        r -= Ap * step
        rs_new = np.einsum("ij,ij->j", r, r)
        residuals.append(float(np.max(np.sqrt(rs_new) / r0)))
        if residuals[-1] <= tol:
            break
        if callback is not None:
            beta_it = B(g)
            if callback(it, beta_it, y_mean - gram.mean @ beta_it if center else np.zeros(Y2.shape[1])):
                stopped = True
                break
        p = r + p * (rs_new / np.maximum(rs, np.finfo(np.float64).tiny))
        rs = rs_new
    if max_iter > 0 and residuals and residuals[-1] > tol and not stopped:
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(f"nystrom_cg: conjugate gradient stopped at max_iter={max_iter} with relative residual "
                      f"{residuals[-1]:.2e} > tol={tol:g}; raise max_iter (KRR: cg_max_iter) or tol (cg_tol), or use "
                      "solver='direct'", ConvergenceWarning, stacklevel=2)
    beta = B(g)
    intercept = y_mean - gram.mean @ beta if center else np.zeros(Y2.shape[1])
    return {"beta": beta, "intercept": intercept, "n_iter": it, "residuals": residuals, "stored": gram.C is not None,
            "stopped": stopped}
