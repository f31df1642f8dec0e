"""Low-rank factors of symmetric matrices, shared by the samplers and the approximations.

``RCOND`` (the pseudo-inverse cut-off), :func:`lowrank_pinv_factor` (``W_k^+ = T T^T``) and
:func:`top_eigh` (the top-k eigenpairs).  :mod:`nystrom_bench.approx` re-exports all three.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["RCOND", "lowrank_pinv_factor", "top_eigh"]

#: eigenvalues below ``RCOND * largest eigenvalue`` are treated as zero (pseudo-inverse cut-off)
RCOND = 1e-10


def lowrank_pinv_factor(W, rank=None, rcond=RCOND):
    """T with ``W_k^+ = T T^T`` for the symmetric matrix W.

    Keeps the eigenvalues above ``rcond * lambda_max`` (negative ones of an
    indefinite kernel are dropped), then the top ``rank`` of them.  Returns
    ``(T, eigenvalues kept)``.
    """
    w, U = linalg.eigh(W, check_finite=False)  # reads one triangle: no symmetrised copy needed
    w, U = w[::-1], U[:, ::-1]
    keep = w > rcond * max(w[0], 0.0)
    if rank is not None:
        rank = int(rank)
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        keep[rank:] = False
    if not keep.any():
        raise ValueError("the landmark kernel matrix W has no positive eigenvalue")
    T = U[:, keep]
    T /= np.sqrt(w[keep])
    return T, w[keep]


def top_eigh(A, k):
    """The top-k eigenpairs of the symmetric matrix A, largest first: ``(w, U)``.

    LAPACK's subset driver (``subset_by_index``) is used, and the full decomposition where it
    returns fewer than k pairs: it can miss eigenvalues of a tight cluster (a Gaussian kernel
    matrix with a large width parameter is close to I), seen as an empty result.
    """
    n = A.shape[0]
    k = min(int(k), n)
    w, U = linalg.eigh(A, subset_by_index=[n - k, n - 1])
    if len(w) < k or not np.isfinite(w).all():
        w, U = linalg.eigh(A, driver="evd")
        w, U = w[n - k:], U[:, n - k:]
    return w[::-1], U[:, ::-1]
