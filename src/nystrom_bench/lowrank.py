"""Low-rank factors of symmetric matrices, shared by the samplers and the approximations.

``RCOND`` (the pseudo-inverse cut-off), :func:`lowrank_pinv_factor` (``W_k^+ = T T^T``) and
:func:`top_eigh` (the top-k eigenpairs).  :mod:`nystrom_bench.approx` re-exports all three.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["RCOND", "eigh_evr", "lowrank_pinv_factor", "top_eigh"]

#: eigenvalues below ``RCOND * largest eigenvalue`` are treated as zero (pseudo-inverse cut-off)
RCOND = 1e-10


#: ``n -> (lwork, liwork)``: SciPy's optimal ``dsyevr`` workspace for an n x n matrix (a LAPACK query per n)
_EVR_WORK = {}


def eigh_evr(A):
    """``scipy.linalg.eigh(A, check_finite=False)`` of a float64 ndarray, bit for bit, without SciPy's wrapper.

    The same LAPACK driver (``dsyevr``, all eigenpairs, lower triangle) called with the same arguments and
    the same workspace (SciPy's optimal one, queried once per n): the wrapper's argument handling, driver
    lookup and workspace query cost 15-20 microseconds a call, as much as the LAPACK work on a 5 x 5 W and
    a fifth of it at 25 x 25 (the samplers job calls it ~33,000 times on W of 25-100 rows).  Any other
    input (another dtype, an empty matrix, an array subclass) and any LAPACK failure go through
    ``scipy.linalg.eigh`` itself, which raises its own errors.

    Returns ``(w, U)``, eigenvalues ascending.
    """
    if type(A) is not np.ndarray or A.dtype != np.float64 or A.ndim != 2 or A.shape[0] != A.shape[1] \
            or A.shape[0] == 0:
        return linalg.eigh(A, check_finite=False)
    n = A.shape[0]
    work = _EVR_WORK.get(n)
    if work is None:
        from scipy.linalg import lapack

        drv, drvlw = lapack.get_lapack_funcs(("syevr", "syevr_lwork"), (A,))
        work = _EVR_WORK[n] = (drv,) + tuple(lapack._compute_lwork(drvlw, n=n, lower=True))
    drv, lwork, liwork = work
    w, v, _, _, info = drv(a=A, overwrite_a=False, lower=True, compute_v=1, lwork=lwork, liwork=liwork)
    if info != 0:
        return linalg.eigh(A, check_finite=False)
    return w, v


def lowrank_pinv_factor(W, rank=None, rcond=RCOND):
    """T with ``W_k^+ = T T^T`` for the symmetric matrix W.

    Keeps the eigenvalues above ``rcond * lambda_max`` (negative ones of an
    indefinite kernel are dropped), then the top ``rank`` of them.  Returns
    ``(T, eigenvalues kept)``.
    """
    w, U = eigh_evr(W)  # reads one triangle: no symmetrised copy needed
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


def _arpack_params():
    """SciPy's ARPACK driver class for symmetric problems where it has the interface
    :func:`eigsh_largest_magnitude` was checked against (SciPy >= 1.15: ``rng=``, the C ARPACK), else None."""
    try:
        import inspect

        from scipy.sparse.linalg._eigen.arpack import arpack
    except ImportError:  # pragma: no cover - another SciPy layout
        return None
    cls = getattr(arpack, "_SymmetricArpackParams", None)
    if cls is None or not hasattr(arpack, "_arpacklib"):  # pragma: no cover - older SciPy (Fortran ARPACK)
        return None
    params = list(inspect.signature(cls.__init__).parameters)
    expected = ["self", "n", "k", "tp", "matvec", "mode", "M_matvec", "Minv_matvec", "sigma", "ncv", "v0",
                "maxiter", "which", "tol", "rng"]
    return cls if params == expected else None


_ARPACK = []


def eigsh_largest_magnitude(A, tol, v0):
    """The eigenvalue of largest magnitude of the symmetric float64 ndarray A by Lanczos:
    ``scipy.sparse.linalg.eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=tol, v0=v0)[0]``,
    bit for bit (raises its ``ArpackNoConvergence`` likewise).

    The same ARPACK driver (SciPy's ``_SymmetricArpackParams``: ``dsaupd`` / ``dseupd``, mode 1) with the
    same matrix-vector product as ``eigsh`` takes for a dense A (``aslinearoperator(A).matvec``:
    ``A.dot(x.reshape(-1, 1))``), without the ``LinearOperator`` layer around each product (its shape and
    type checks cost ~30 microseconds per product: more than the product itself at a few hundred rows,
    where ARPACK takes ~25 of them).  Where SciPy's ARPACK classes are not the ones this was checked
    against (:func:`_arpack_params`), ``eigsh`` itself runs.
    """
    if not _ARPACK:
        _ARPACK.append(_arpack_params())
    cls = _ARPACK[0]
    n = A.shape[0]
    if cls is None or type(A) is not np.ndarray or A.dtype != np.float64 or A.ndim != 2 or A.shape[1] != n \
            or n < 2:
        from scipy.sparse.linalg import eigsh

        return eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=tol, v0=v0)[0]

    def matvec(x):  # MatrixLinearOperator.matvec of a 1-D x: A.dot on the (n, 1) view, reshaped to (n,)
        return A.dot(x.reshape(-1, 1)).reshape(n)

    params = cls(n, 1, A.dtype.char, matvec, 1, None, None, None, None, v0, None, "LM", tol, np.random.default_rng())
    while not params.converged:
        params.iterate()
    return params.extract(False)[0]
