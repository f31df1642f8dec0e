"""Learners: scikit-learn-compatible estimators on top of kernel operators.

``KRR`` -- kernel ridge regression, exact or Nystrom in three integrations:

``mode="gsa"``
    train with K~ (Woodbury solve of ``(K~ + alpha I) a = y``), predict with the
    exact kernel ``K(X_new, X) a``.
``mode="lla"``
    ridge regression on the Nystrom features ``F = V``:
    ``(F^T F + alpha I) w = F^T y``, predict ``phi(X_new) w``.
``mode="ncr"``
    Rudi et al.'s Nystrom computational regularisation:
    ``beta = (K_nm^T K_nm + alpha K_mm)^+ K_nm^T y``, predict ``K(X_new, Z) beta``
    (with a sketch S: ``K_nm = K S``, ``K_mm = S^T K S``, predict ``K(X_new, X) S beta``).

For KRR, NCR and LLA give the same predictor whenever ``K_mm`` has full rank
(substitute ``F = K_nm U L^{-1/2}``); the tests check that identity.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import approx, kernels, sampling
from .seeding import check_random_state

__all__ = ["KRR", "GNKR", "gnkr_path"]


def _kernel_from_params(est):
    name = est.kernel
    if name in ("gaussian", "rbf", "laplacian"):
        return kernels.make(name, gamma=est.gamma)
    if name == "polynomial":
        return kernels.make(name, gamma=est.gamma, degree=est.degree, coef0=est.coef0)
    if name == "epanechnikov":
        return kernels.make(name, sigma=est.sigma)
    return kernels.make(name)


def _psd_solve(A, b):
    """Solve a symmetric PSD system; Cholesky, falling back to least squares if singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(A, lower=True, check_finite=False), b, check_finite=False)
    except linalg.LinAlgError:
        A = (A + A.T) / 2
        return linalg.lstsq(A, b, cond=approx.RCOND, check_finite=False)[0]


class KRR(RegressorMixin, BaseEstimator):
    """Kernel ridge regression, exact or with a Nystrom approximation.

    Parameters
    ----------
    kernel : {"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"}
    gamma : float, default=1.0
        Width of gaussian/laplacian, scale of polynomial.
    degree, coef0 : polynomial kernel parameters.
    sigma : float, default=1.0
        Width of the epanechnikov kernel.
    alpha : float, default=1e-3
        Ridge parameter, as scikit-learn's ``KernelRidge``: the exact fit solves
        ``(K + alpha I) a = y`` (no intercept).
    approximation : {"exact", "nystrom"}
        ``"exact"`` ignores every landmark parameter below.
    n_landmarks : int, default=200
        Number of landmarks (capped at n_samples).
    sampler : str, default="uniform"
        Any name of :func:`nystrom_bench.sampling.available`.
    mode : {"gsa", "lla", "ncr"}
    landmarks : array-like, default=None
        Explicit landmark indices into X, ``(c, d)`` points, or an ``(n, c)``
        :class:`~nystrom_bench.approx.Sketch`; overrides ``sampler``.
    rank : int, default=None
        Rank-k truncation of the Nystrom approximation (``None``: all of W's rank).
    random_state : int, Generator or None

    Attributes
    ----------
    operator_ : KernelOperator
        The fitted kernel operator.
    landmarks_ : ndarray of shape (c, d) or None
        The landmark points (Nystrom from landmarks; None for a sketch).
    component_indices_ : ndarray of shape (c,) or None
        Indices of the landmarks in X when they are rows of X.
    dual_coef_ / coef_ : fitted coefficients.
    fit_time_ : float
        Seconds spent in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import KRR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(300, 1)); y = np.sin(X[:, 0])
    >>> model = KRR(gamma=0.5, alpha=1e-3, n_landmarks=30, random_state=0).fit(X, y)
    >>> float(np.abs(model.predict(X) - y).max()) < 0.05
    True
    """

    _parameter_constraints = {
        "kernel": [StrOptions({"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither")],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [numbers.Real],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "approximation": [StrOptions({"exact", "nystrom"})],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left")],
        "sampler": [str],
        "mode": [StrOptions({"gsa", "lla", "ncr"})],
        "landmarks": ["array-like", None],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        kernel="gaussian",
        gamma=1.0,
        degree=3,
        coef0=1.0,
        sigma=1.0,
        alpha=1e-3,
        approximation="nystrom",
        n_landmarks=200,
        sampler="uniform",
        mode="gsa",
        landmarks=None,
        rank=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.sigma = sigma
        self.alpha = alpha
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.mode = mode
        self.landmarks = landmarks
        self.rank = rank
        self.random_state = random_state

    def _choose_landmarks(self, X, y, kern):
        """Landmarks for approx.build: explicit (indices or points) or from the sampler."""
        if isinstance(self.landmarks, approx.Sketch):
            return self.landmarks
        if self.landmarks is not None:
            L = np.asarray(self.landmarks)
            if L.ndim == 1 and not np.issubdtype(L.dtype, np.integer):
                raise ValueError("landmarks: 1-D landmarks must be integer indices into X")
            if L.ndim == 1 and (L.size == 0 or L.min() < 0 or L.max() >= len(X)):
                raise ValueError(f"landmarks: indices must lie in [0, {len(X)})")
            if L.ndim == 2 and L.shape[1] != X.shape[1]:
                raise ValueError(f"landmarks: points must have shape (c, {X.shape[1]})")
            return L
        c = min(self.n_landmarks, len(X))
        extra = {"y": y} if sampling.needs_y(self.sampler) else {}
        return sampling.sample(self.sampler, X, kern, c=c, seed=check_random_state(self.random_state), **extra)

    def fit(self, X, y):
        """Fit on X of shape (n, d) and targets y of shape (n,) or (n, t)."""
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, multi_output=True, dtype=np.float64)
        t0 = time.perf_counter()
        kern = _kernel_from_params(self)
        self.kernel_ = kern
        self.component_indices_ = None
        if self.approximation == "exact":
            self.operator_ = approx.build("exact", X, kern)
            if self.alpha == 0:
                self.dual_coef_ = linalg.lstsq(self.operator_.K, y, check_finite=False)[0]
            else:
                self.dual_coef_ = self.operator_.solve(self.alpha, y)
            self.X_fit_ = X
        else:
            # LLA and NCR only need C^T C, C^T y and W: stream them, never hold the n x c matrix C
            op = approx.build("nystrom", X, kern, landmarks=self._choose_landmarks(X, y, kern), rank=self.rank,
                              store_C=self.mode == "gsa")
            self.operator_ = op
            self.landmarks_, self.component_indices_ = op.Z, op.landmark_indices
            if self.mode == "gsa":
                if self.alpha <= 0:
                    raise ValueError("KRR(mode='gsa') needs alpha > 0: K~ is low-rank")
                self.dual_coef_ = op.solve(self.alpha, y)
                self.X_fit_ = X
            else:
                CtC, Cty = op.moments(y)
                if self.mode == "lla":  # (V^T V + alpha I) w = V^T y with V = C T
                    A = op.VtV.copy()
                    A.flat[:: A.shape[0] + 1] += self.alpha
                    self.coef_ = _psd_solve(A, op.T.T @ Cty)
                else:  # ncr: (C^T C + alpha W)^+ C^T y, predictions cross(X_new) beta
                    A = CtC + self.alpha * op.W
                    self.coef_ = _psd_solve(A, Cty)
        self.fit_time_ = time.perf_counter() - t0
        return self

    def predict(self, X):
        """Predictions for X of shape (n_new, d)."""
        check_is_fitted(self, "kernel_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.approximation == "exact" or self.mode == "gsa":
            return self.kernel_.mmv(X, self.X_fit_, self.dual_coef_)
        if self.mode == "lla":  # phi(X) w = cross(X) (T w): one block-wise kernel product
            return self.operator_.cross_mv(X, self.operator_.T @ self.coef_)
        return self.operator_.cross_mv(X, self.coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        # a low-rank approximation with default width cannot fit arbitrary data well: honest tag
        tags.regressor_tags.poor_score = self.approximation == "nystrom"
        return tags


def gnkr_path(X, y, Z, kernel, lams, solver="eigh"):
    """GNKR coefficients for every lambda in ``lams`` (seed 001, eq. 5):

    ``alpha_lambda = (K_nm^T K_nm + lambda m n I_m)^-1 K_nm^T y``.

    ``solver="eigh"`` (default): K_nm^T K_nm is symmetric PSD for *any* kernel (a Gram
    matrix of columns), so one eigendecomposition ``U S U^T`` serves the whole path,
    ``alpha = U (S + lambda m n)^-1 U^T K_nm^T y``: exact even when it is singular
    (duplicate landmarks from sampling with replacement).  ``K_nm^T K_nm`` and
    ``K_nm^T y`` are streamed (never the n x m matrix).  Forming K_nm^T K_nm squares
    the condition number, so ``lambda m n`` below about 1e-15 of its largest
    eigenvalue is lost in rounding.

    ``solver="svd"``: the thin SVD ``K_nm = P diag(s) Q^T`` gives
    ``alpha = Q diag(s / (s^2 + lambda m n)) P^T y``, accurate down to much smaller
    lambda (the condition number is not squared), at the cost of holding K_nm
    (n x m) and about 3x the flops.

    Returns an array of shape (len(lams), m) (or (len(lams), m, t) for 2-D y).
    """
    n, m = len(X), len(Z)
    if solver == "eigh":
        G, b = kernel.gram(X, Z, y)
        s, U = linalg.eigh(G, check_finite=False)
        s = np.maximum(s, 0.0)
        Utb = U.T @ b
        num = None
    elif solver == "svd":
        P, sv, Qt = linalg.svd(kernel(X, Z), full_matrices=False, check_finite=False)
        s, U, Utb, num = sv**2, Qt.T, P.T @ y, sv
    else:
        raise ValueError(f"GNKR solver must be 'eigh' or 'svd', got {solver!r}")
    out = []
    for lam in np.atleast_1d(lams):
        d = s + float(lam) * m * n
        if np.any(d <= 0):
            raise ValueError(f"GNKR: lambda = {lam} makes the system singular; use lambda > 0")
        f = 1.0 / d if num is None else num / d  # filter factors of the eigh / SVD form
        w = Utb * (f if Utb.ndim == 1 else f[:, None])
        out.append(U @ w)
    return np.stack(out)


class GNKR(RegressorMixin, BaseEstimator):
    """Generalized Nystrom kernel regression (Chen et al., NIPS 2016; seed 001).

    ``f(x) = sum_j alpha_j K(xbar_j, x)`` over m landmarks xbar_j, with
    ``(K_nm^T K_nm + lambda m n I_m) alpha = K_nm^T y`` (l2 regularisation of the
    coefficients, not the RKHS norm), so the kernel need only be bounded: the
    Epanechnikov kernel, which is indefinite, works.

    Parameters
    ----------
    kernel : {"gaussian", "epanechnikov"}
        Gaussian ``exp(-||x-t||^2 / (2 sigma^2))`` or Epanechnikov ``(1 - ||x-t||^2 / (2 sigma^2))_+``.
    sigma : float, default=1.0
        Width of either kernel.
    lam : float, default=1e-6
        Regularisation lambda (the system uses ``lambda m n``).
    n_landmarks : int, default=500
        m, capped at n_samples for uniform sampling.
    sampler : {"uniform", "column_norm"}, default="column_norm"
        ``uniform``: m distinct points; ``column_norm``: m independent draws with
        ``p_i ~ ||K[:, i]||^2`` (with replacement, as the paper states).
    random_state : int, Generator or None

    Attributes
    ----------
    landmarks_ : ndarray of shape (m, d)
    component_indices_ : ndarray of shape (m,)
    coef_ : ndarray of shape (m,)
    fit_time_, sampling_time_ : float
        Seconds for the whole fit and for choosing the landmarks.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GNKR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 2 * np.pi, size=(500, 1)); y = X[:, 0] * np.sin(X[:, 0])
    >>> model = GNKR(kernel="epanechnikov", sigma=1.0, lam=1e-9, n_landmarks=50, random_state=0).fit(X, y)
    >>> float(np.sqrt(np.mean((model.predict(X) - y) ** 2))) < 0.1
    True
    """

    _parameter_constraints = {
        "kernel": [StrOptions({"gaussian", "epanechnikov"})],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "lam": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left")],
        "sampler": [StrOptions({"uniform", "column_norm"})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, kernel="gaussian", sigma=1.0, lam=1e-6, n_landmarks=500, sampler="column_norm",
                 random_state=None):
        self.kernel = kernel
        self.sigma = sigma
        self.lam = lam
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on X of shape (n, d) and targets y of shape (n,)."""
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        t0 = time.perf_counter()
        self.kernel_ = kernels.make(self.kernel, sigma=self.sigma)
        rng = check_random_state(self.random_state)
        if self.sampler == "uniform":
            idx = sampling.sample("uniform", X, self.kernel_, c=min(self.n_landmarks, len(X)), seed=rng)
        else:
            idx = sampling.sample("column_norm", X, self.kernel_, c=self.n_landmarks, seed=rng, replace=True)
        self.sampling_time_ = time.perf_counter() - t0
        self.component_indices_, self.landmarks_ = idx, X[idx]
        self.coef_ = gnkr_path(X, y, self.landmarks_, self.kernel_, [self.lam])[0]
        self.fit_time_ = time.perf_counter() - t0
        return self

    def predict(self, X):
        """Predictions ``K(X, landmarks) alpha``, block-wise."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.kernel_.mmv(X, self.landmarks_, self.coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # fixed default width: not tuned to arbitrary data
        return tags
