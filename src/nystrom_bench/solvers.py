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
iteration one pass over the data and four m x m triangular solves.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["nystrom_cg"]

def _default_budget():
    """A quarter of the physical memory (2 GiB where it cannot be read)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4)
    except (ValueError, OSError, AttributeError):
        return 2 * 2**30


#: hold C = K(X, Z) between iterations when it takes at most this many bytes; else stream it
STORE_BUDGET_BYTES = _default_budget()


class _Gram:
    """Products with ``C^T C`` (C = K(X, Z), optionally column-centred) without holding C unless it fits."""

    def __init__(self, X, kernel, Z, center, budget, block_rows):
        self.X, self.kernel, self.Z = X, kernel, Z
        n, m = len(X), len(Z)
        self.step = int(block_rows or max(1, min(n, (64 * 2**20) // (8 * max(m, 1)))))
        self.C = kernel(X, Z) if 8 * n * m <= budget else None
        self.mean = self.matvec_t(np.ones((n, 1)))[:, 0] / n if center else None

    def blocks(self):
        if self.C is not None:
            yield slice(0, len(self.X)), self.C
            return
        for i in range(0, len(self.X), self.step):
            sl = slice(i, min(i + self.step, len(self.X)))
            yield sl, self.kernel(self.X[sl], self.Z)

    def matvec_t(self, Y):
        """``C^T Y`` (uncentred)."""
        out = np.zeros((len(self.Z), Y.shape[1]))
        for sl, Cb in self.blocks():
            out += Cb.T @ Y[sl]
        return out

    def gram_mv(self, V):
        """``C_c^T C_c V`` with ``C_c`` the (centred) C: one pass."""
        out = np.zeros_like(V)
        for _, Cb in self.blocks():
            out += Cb.T @ (Cb @ V)
        if self.mean is not None:
            out -= len(self.X) * np.outer(self.mean, self.mean @ V)
        return out


def nystrom_cg(X, kernel, Z, Y, alpha, *, center=False, max_iter=100, tol=1e-6, store_budget=None,
               block_rows=None):
    """Solve ``(C^T C + alpha W) beta = C^T Y`` by FALKON-preconditioned conjugate gradient.

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
        Rows per streamed block (default: 64 MiB of C).

    Returns
    -------
    dict
        ``beta`` (m, t), ``intercept`` (t,), ``n_iter``, ``residuals`` (relative, per iteration, the
        worst column), ``stored`` (whether C was held).
    """
    if alpha <= 0:
        raise ValueError(f"nystrom_cg needs alpha > 0, got {alpha}")
    X, Z = np.asarray(X, dtype=np.float64), np.asarray(Z, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y2 = Y[:, None] if Y.ndim == 1 else Y
    n, m = len(X), len(Z)
    budget = STORE_BUDGET_BYTES if store_budget is None else store_budget
    gram = _Gram(X, kernel, Z, center, budget, block_rows)
    y_mean = Y2.mean(axis=0) if center else np.zeros(Y2.shape[1])
    rhs = gram.matvec_t(Y2) - (n * np.outer(gram.mean, y_mean) if center else 0.0)

    W = kernel(Z)
    jitter = 1e-10 * max(float(np.trace(W)) / m, 1e-300)
    T = linalg.cholesky(W + jitter * m * np.eye(m), lower=False, check_finite=False)
    inner = (n / m) * (T @ T.T)
    inner.flat[:: m + 1] += alpha
    A = linalg.cholesky(inner, lower=False, check_finite=False)

    def B(v):  # T^{-1} A^{-1} v
        return linalg.solve_triangular(T, linalg.solve_triangular(A, v, check_finite=False), check_finite=False)

    def Bt(v):  # A^{-T} T^{-T} v
        return linalg.solve_triangular(A, linalg.solve_triangular(T, v, trans="T", check_finite=False),
                                       trans="T", check_finite=False)

    def op(g):  # B^T H B g
        v = B(g)
        return Bt(gram.gram_mv(v) + alpha * (W @ v))

    b = Bt(rhs)
    g = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    r0 = np.sqrt(rs)
    r0[r0 == 0] = 1.0
    residuals = []
    it = 0
    for _ in range(max_iter):
        it += 1
        Ap = op(p)
        step = rs / np.maximum(np.einsum("ij,ij->j", p, Ap), np.finfo(np.float64).tiny)
        g += p * step
        r -= Ap * step
        rs_new = np.einsum("ij,ij->j", r, r)
        residuals.append(float(np.max(np.sqrt(rs_new) / r0)))
        if residuals[-1] <= tol:
            break
        p = r + p * (rs_new / np.maximum(rs, np.finfo(np.float64).tiny))
        rs = rs_new
    beta = B(g)
    intercept = y_mean - gram.mean @ beta if center else np.zeros(Y2.shape[1])
    return {"beta": beta, "intercept": intercept, "n_iter": it, "residuals": residuals, "stored": gram.C is not None}
