"""Array helpers of the kernel blocks: 2-D float64 input (dense or CSR), dtypes, and float64
products with float32 blocks (:func:`matmul`, :func:`matmul_t`, :func:`crossprod`)."""

from __future__ import annotations

import numpy as np

__all__ = ["issparse", "as_2d", "DTYPES", "check_dtype", "matmul", "n_rows", "row_sq_norms", "dot_t",
           "as_float64", "crossprod", "matmul_t"]


def issparse(X):
    """Whether X is a SciPy sparse matrix or array."""
    if type(X) is np.ndarray:  # the common case, without the import lookup: ~47,000 calls per samplers job
        return False
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
