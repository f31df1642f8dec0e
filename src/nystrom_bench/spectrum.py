"""The spectrum of a kernel matrix and the error of its approximations.

What a landmark study scores a sampler by, and the data-set properties that may predict when
non-uniform landmarks beat uniform ones:

:func:`nystrom_factor`
    F (n x r) with ``F F^T = C W^+ C^T``, the Nystrom approximation on landmarks of any form.
:func:`trace_error`
    ``(tr K - ||F||_F^2) / tr K``: the relative trace-norm error, exact and cheap on all the data.
:func:`subsample_errors`
    The relative Frobenius and spectral errors on a subsample of rows (an exact ``|S| x |S|`` block).
:func:`subsample`
    A sorted uniform subset of row indices.
:func:`properties`
    ``d_eff_ratio``, ``decay``, ``coherence``, ``leverage_gini`` of the kernel matrix of a subsample.

The error measures are those of Gittens & Mahoney, "Revisiting the Nystrom method for improved
large-scale machine learning", JMLR 17 (2016), Section 2 (relative spectral, Frobenius and trace
errors of SPSD sketches ``C W^+ C^T``; Lemma 1: ``K - C W^+ C^T`` is PSD, so the trace error is the
trace norm ``||K - F F^T||_*``).  Ridge leverage scores and the effective dimension are those of
Alaoui & Mahoney, "Fast randomized kernel ridge regression with statistical guarantees", NIPS 2015
(Definition 1, eq. (3): ``l_i(lam) = (K (K + lam n I)^-1)_ii``, ``d_eff = sum_i l_i = tr K (K + lam n I)^-1``).

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import kernels, spectrum
>>> X = np.random.default_rng(0).normal(size=(300, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> F = spectrum.nystrom_factor(X, kern, np.arange(0, 300, 10))
>>> F.shape
(300, 30)
>>> 0 <= spectrum.trace_error(X, kern, F) < 1
True
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from . import approx
from .kernels import as_2d, make
from .seeding import check_random_state

__all__ = ["nystrom_factor", "trace_error", "subsample_errors", "subsample", "properties", "PROPERTIES",
           "DECAY_MASS", "EIGSH_MIN"]

#: the data-set properties :func:`properties` returns, in order
PROPERTIES = ("d_eff_ratio", "decay", "coherence", "leverage_gini")
#: ``decay`` is the fraction of the eigenvalues that hold this share of the trace
DECAY_MASS = 0.9
#: :func:`subsample_errors` takes spectral norms by Lanczos (``eigsh``) from this many rows on, below
#: by a full ``eigvalsh`` (eigsh measured 5x to 50x faster at 500 to 4,000 rows: see ``_extreme_abs_eig``)
EIGSH_MIN = 500


def _n_rows(X):
    return X.shape[0]


def _check_factor(F, n, where):
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or F.shape[0] != n:
        raise ValueError(f"{where}: the factor F must have shape (n, r) = ({n}, r) with F F^T the approximation "
                         f"of K on X's rows; got shape {F.shape}")
    if not np.isfinite(F).all():
        raise ValueError(f"{where}: the factor F contains NaN or infinity; rebuild it (nystrom_factor)")
    return F


def nystrom_factor(X, kernel, landmarks=None, factor=None):
    """The factor F (n x r) of the Nystrom approximation ``F F^T = C W^+ C^T``.

    Landmarks as indices into X or ``(c, d)`` points Z: ``C = K(X, Z)``, ``W = K(Z, Z)``; as an
    ``(n, c)`` :class:`nystrom_bench.sampling.Sketch` S: ``C = K S``, ``W = S^T K S`` (the SPSD
    sketching model of Gittens & Mahoney, JMLR 2016, Section 2).  ``W^+``'s square root comes from
    the eigendecomposition of W with the project's cut-off (:func:`nystrom_bench.lowrank.lowrank_pinv_factor`,
    eigenvalues below ``RCOND * lambda_max(W)`` dropped): ``F = C U_W Lambda_W^{-1/2}``, the operator
    of :func:`nystrom_bench.approx.build` ``("nystrom", ...)``; no inverse, memory O(n c), never n x n.

    Parameters
    ----------
    X : array of shape (n, d)
    kernel : Kernel or str
    landmarks : array of shape (c,) (int indices), (c, d) (points), or Sketch of shape (n, c)
        Ignored when ``factor`` is given.
    factor : array of shape (n, r), default=None
        An F the sampler already built (``info["factor"]`` of :func:`nystrom_bench.sampling.sample`):
        returned as is (checked, as float64).

    Returns
    -------
    F : ndarray of shape (n, r), float64
        r = the number of eigenvalues of W kept (at most c).

    Raises
    ------
    ValueError
        Neither landmarks nor factor given; a factor or landmarks of the wrong shape; indices out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench import kernels, spectrum
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> kern = kernels.make("gaussian", gamma=1.0)
    >>> F = spectrum.nystrom_factor(X, kern, np.arange(50))   # every point a landmark: F F^T = K
    >>> bool(np.allclose(F @ F.T, kern(X), atol=1e-6))
    True
    """
    X = as_2d(X)
    n = _n_rows(X)
    if factor is not None:
        return _check_factor(factor, n, "nystrom_factor")
    if landmarks is None:
        raise ValueError("nystrom_factor: pass landmarks= (indices into X, (c, d) points, or a Sketch) or "
                         "factor= (an (n, r) F with F F^T the approximation, e.g. a sampler's info['factor'])")
    # the one Nystrom build: the same W^+ cut as every approximation in the project
    return np.asarray(approx.build("nystrom", X, make(kernel), landmarks=landmarks).factor(), dtype=np.float64)


def _trace(X, kernel):
    diag = np.asarray(kernel.diag(X), dtype=np.float64)
    tr = float(diag.sum())
    if not np.isfinite(tr) or tr <= 0:
        raise ValueError(f"the kernel matrix of {kernel!r} has trace {tr:g}: relative errors need tr K > 0")
    return tr


def trace_error(X, kernel, F):
    """Relative trace-norm error ``(tr K - ||F||_F^2) / tr K`` of the approximation ``F F^T`` of K.

    ``tr K`` comes from ``kernel.diag`` and ``tr(F F^T) = ||F||_F^2``: O(n (d + r)), on all the data.
    For a Nystrom F, ``K - F F^T`` is PSD (Gittens & Mahoney, JMLR 2016, Lemma 1 / Section 2), so
    its trace is its trace norm ``||K - F F^T||_*``: the value is exact, in [0, 1], 0 when F F^T = K.

    Parameters
    ----------
    X : array of shape (n, d)
    kernel : Kernel or str
    F : array of shape (n, r)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench import kernels, spectrum
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> kern = kernels.make("gaussian", gamma=1.0)
    >>> round(spectrum.trace_error(X, kern, np.zeros((100, 1))), 6)   # F = 0: the whole trace is missed
    1.0
    """
    X = as_2d(X)
    kernel = make(kernel)
    F = _check_factor(F, _n_rows(X), "trace_error")
    tr = _trace(X, kernel)
    return float((tr - np.einsum("ij,ij->", F, F)) / tr)


def _check_idx(idx, n, where):
    idx = np.asarray(idx)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{where}: idx must be a non-empty 1-D array of integer row indices "
                         f"(e.g. spectrum.subsample(n, 2000, rng)); got shape {idx.shape}, dtype {idx.dtype}")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"{where}: row indices must lie in [0, {n}); got [{idx.min()}, {idx.max()}]")
    if len(np.unique(idx)) != len(idx):
        raise ValueError(f"{where}: idx repeats rows; pass distinct indices (spectrum.subsample draws them)")
    return idx


def _extreme_abs_eig(A):
    """``max |lambda_i(A)|`` of the symmetric A: its spectral norm ``||A||_2``.

    Lanczos (ARPACK ``eigsh``, k = 1, largest magnitude) from :data:`EIGSH_MIN` rows on: O(m^2) per
    iteration instead of LAPACK's O(m^3) tridiagonal reduction.  Measured side by side (2 shared
    cores, Gaussian K_SS and its residual after 100 landmarks, d = 5, same value to 1e-8): eigsh took
    0.02x eigvalsh's time at m = 500 (2 ms vs 96 ms), 0.21x at m = 1,000 (0.11 s vs 0.52 s) and 0.02x
    at m = 4,000 (0.63 s vs 31 s).
    Falls back to ``eigvalsh`` when ARPACK does not converge (a tight cluster of top eigenvalues).
    """
    m = A.shape[0]
    if m >= EIGSH_MIN:
        try:
            w = eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=1e-10,
                      v0=np.full(m, 1.0 / np.sqrt(m)))
            return float(abs(w[0]))
        except ArpackNoConvergence:
            pass
    w = linalg.eigvalsh(A, check_finite=False)
    return float(max(abs(w[0]), abs(w[-1])))


def subsample_errors(X, kernel, F, idx):
    """Relative Frobenius and spectral errors of ``F F^T`` against K on the rows ``idx``.

    With S = idx, ``R = K_SS - F_S F_S^T`` (forms only the ``|S| x |S|`` exact block):
    ``frobenius = ||R||_F / ||K_SS||_F`` and ``spectral = ||R||_2 / ||K_SS||_2``, the spectral norms
    being the largest eigenvalue magnitudes of the symmetric matrices (see ``_extreme_abs_eig``).
    On all rows (idx = arange(n)) these are the relative errors of Gittens & Mahoney (JMLR 2016),
    Section 2; on a uniform subsample they are estimates of them (the principal submatrix of the
    residual is the residual of the principal submatrix).

    Parameters
    ----------
    X : array of shape (n, d)
    kernel : Kernel or str
    F : array of shape (n, r)
    idx : int array of shape (m,)
        Distinct row indices (at most a few thousand: the m x m block is dense).

    Returns
    -------
    dict
        ``{"frobenius": float, "spectral": float}``.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench import kernels, spectrum
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> kern = kernels.make("gaussian", gamma=1.0)
    >>> F = spectrum.nystrom_factor(X, kern, np.arange(0, 200, 4))
    >>> err = spectrum.subsample_errors(X, kern, F, spectrum.subsample(200, 100, 0))
    >>> sorted(err), bool(0 <= err["spectral"] <= 1)
    (['frobenius', 'spectral'], True)
    """
    X = as_2d(X)
    kernel = make(kernel)
    n = _n_rows(X)
    F = _check_factor(F, n, "subsample_errors")
    idx = _check_idx(idx, n, "subsample_errors")
    K = np.asarray(kernel(X[idx]), dtype=np.float64)
    FS = F[idx]
    R = K - FS @ FS.T
    R = (R + R.T) / 2  # exactly symmetric for the eigensolvers
    normK = _extreme_abs_eig(K)
    if normK <= 0:
        raise ValueError("subsample_errors: the kernel block K_SS is zero; relative errors need a non-zero K")
    return {"frobenius": float(linalg.norm(R) / linalg.norm(K)), "spectral": _extreme_abs_eig(R) / normK}


def subsample(n, max_points, rng):
    """A sorted uniform subset of ``range(n)`` of size ``min(n, max_points)`` (all points when n <= max_points).

    Parameters
    ----------
    n : int
    max_points : int
        >= 1.
    rng : None, int, SeedSequence or numpy Generator

    Returns
    -------
    idx : ndarray of shape (min(n, max_points),), int64, sorted, distinct

    Examples
    --------
    >>> from nystrom_bench import spectrum
    >>> spectrum.subsample(5, 10, 0).tolist()
    [0, 1, 2, 3, 4]
    >>> len(spectrum.subsample(1000, 10, 0))
    10
    """
    n, max_points = int(n), int(max_points)
    if n < 1 or max_points < 1:
        raise ValueError(f"subsample: n and max_points must be >= 1, got n={n}, max_points={max_points}")
    if n <= max_points:
        return np.arange(n)
    return np.sort(check_random_state(rng).choice(n, max_points, replace=False)).astype(np.int64)


def _gini(v):
    """Gini coefficient of the non-negative values v: 0 when all are equal, (m-1)/m when one holds all."""
    v = np.sort(np.asarray(v, dtype=np.float64))
    m, total = len(v), v.sum()
    if total <= 0:
        return 0.0
    return float(2.0 * np.sum(np.arange(1, m + 1) * v) / (m * total) - (m + 1.0) / m)


def properties(X, kernel, lam, max_points=1000, seed=0):
    """Data-set properties that may predict a gain of non-uniform landmarks over uniform ones.

    Computed exactly from the eigendecomposition ``K_SS = U diag(s) U^T`` of the kernel matrix of a
    uniform subsample S of at most ``max_points`` rows (:func:`subsample` with ``seed``), ``n_s = |S|``,
    eigenvalues clipped at 0:

    ``d_eff_ratio``
        ``d_eff(lam) / n_s`` with ``d_eff(lam) = sum_i s_i / (s_i + lam n_s)``, the ridge effective
        dimension (Alaoui & Mahoney, NIPS 2015, eq. (3)), in (0, 1).  Large = many directions matter at
        this regularisation, so any c landmarks capture a small part of the spectrum; small = a few do.
    ``decay``
        The fraction of the eigenvalues, largest first, needed to hold :data:`DECAY_MASS` (90%) of the
        trace: ``k / n_s`` with k the least count whose eigenvalues sum to >= 0.9 tr K_SS, in (0, 1].
        Scale-free (unchanged by scaling K).  Small = fast spectral decay (low numerical rank; uniform
        landmarks already do well); large = slow decay (K close to a multiple of I at 1).
    ``coherence``
        ``max_i l_i(lam) n_s / d_eff(lam)`` with the ridge leverage scores
        ``l_i(lam) = (K_SS (K_SS + lam n_s I)^-1)_ii = sum_j U_ij^2 s_j / (s_j + lam n_s)``, whose sum is
        d_eff: the largest score over the mean score, >= 1.  1 = the spectrum is evenly spread over the
        points (uniform sampling is leverage sampling); large = a few points carry a direction of their
        own (small clusters, outliers), which uniform landmarks miss -- the case for non-uniform ones.
    ``leverage_gini``
        The Gini coefficient of the ridge leverage scores, in [0, 1): 0 = all equal, towards 1 = a few
        points hold the effective dimension.  Like coherence, larger = more to gain from non-uniform
        landmarks, but about the whole distribution of scores rather than its maximum.

    Parameters
    ----------
    X : array of shape (n, d)
    kernel : Kernel or str
    lam : float
        Ridge parameter (> 0), in the ``lam n`` scaling of kernel ridge regression.
    max_points : int, default=1000
        Size of the subsample (O(max_points^2) memory, O(max_points^3) time).
    seed : int, default=0
        Seed of the subsample.

    Returns
    -------
    dict
        The four floats named in :data:`PROPERTIES`.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench import kernels, spectrum
    >>> X = np.random.default_rng(0).normal(size=(400, 2))
    >>> p = spectrum.properties(X, kernels.make("gaussian", gamma=0.5), lam=1e-3, max_points=200)
    >>> sorted(p) == sorted(spectrum.PROPERTIES), p["coherence"] >= 1
    (True, True)
    """
    X = as_2d(X)
    kernel = make(kernel)
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"properties: lam must be a finite number > 0 (the ridge parameter), got {lam}")
    idx = subsample(_n_rows(X), max_points, seed)
    K = np.asarray(kernel(X[idx]), dtype=np.float64)
    if not np.isfinite(K).all():
        raise ValueError("properties: the kernel matrix has NaN or infinite entries; check X and the kernel")
    s, U = linalg.eigh(K, check_finite=False)
    s = np.maximum(s, 0.0)
    ns = len(idx)
    if s.sum() <= 0:
        raise ValueError("properties: the kernel matrix of the subsample has no positive eigenvalue")
    shrink = s / (s + lam * ns)
    lev = (U**2) @ shrink
    d_eff = float(shrink.sum())
    desc = np.sort(s)[::-1]
    k = int(np.searchsorted(np.cumsum(desc), DECAY_MASS * desc.sum() * (1 - 1e-12))) + 1
    return {
        "d_eff_ratio": d_eff / ns,
        "decay": min(k, ns) / ns,
        "coherence": float(lev.max() * ns / d_eff),
        "leverage_gini": _gini(lev),
    }
