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

``GNKR`` -- generalized Nystrom kernel regression (Chen et al., NIPS 2016).

``LSSVM`` -- least-squares SVM classifier with bias (Suykens), one-vs-rest for more
than two classes, as used by Ding et al. (TNNLS 2020) for classification in
approximate kernel selection: the bordered system with ``K + mu l I`` (the
criteria's ``K_mu``), exact (Cholesky) or on a Nystrom ``K~ = V V^T`` (Woodbury)
predicting with the Nystrom extension ``phi(x)^T V^T a + b``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import approx, kernels, sampling
from .seeding import check_random_state

__all__ = ["KRR", "GNKR", "gnkr_path", "LSSVM", "NuSVM", "max_feasible_nu"]


def _psd_solve(A, b):
    """Solve a symmetric PSD system; Cholesky, falling back to least squares if singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(A, lower=True, check_finite=False), b, check_finite=False)
    except linalg.LinAlgError:
        A = (A + A.T) / 2
        return linalg.lstsq(A, b, cond=approx.RCOND, check_finite=False)[0]


def _as_columns(a):
    a = np.asarray(a, dtype=np.float64)
    return a[:, None] if a.ndim == 1 else a


def _class_indices(est, y):
    """Set ``est.classes_`` (sorted labels) and return y as indices into it; at least two classes."""
    check_classification_targets(y)
    est.classes_, y_idx = np.unique(y, return_inverse=True)
    if len(est.classes_) < 2:
        raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes in the data, but the data "
                         f"contain only 1 class: {est.classes_[0]!r}")
    return y_idx


def _keep_landmarks(est, op, X):
    """Store what a Nystrom predictor ``cross(x) @ coef`` needs of the operator: the landmark points and
    their indices in X, or the sketch and the training X."""
    est.landmarks_, est.component_indices_ = op.Z, op.landmark_indices
    est.sketch_ = None if op.S is None else np.asarray(op.S)
    if op.S is not None:
        est.X_fit_ = X


def _landmark_expansion(est, coef):
    """``cross(x) @ coef`` as an expansion ``K(x, points) @ c``: ``(points, c, indices of the points in X or None)``."""
    if est.sketch_ is None:
        return est.landmarks_, coef, est.component_indices_
    return est.X_fit_, est.sketch_ @ coef, np.arange(len(est.X_fit_))


def _estimator_kernel(est, X, where):
    """The kernel of an estimator with ``kernel, gamma, sigma, degree, coef0`` parameters: the
    non-None ones through ``kernels.from_spec`` (data-driven widths resolved on X)."""
    params = {k: getattr(est, k) for k in ("gamma", "sigma", "degree", "coef0") if getattr(est, k) is not None}
    return kernels.from_spec({"kernel": est.kernel, **params}, X, where=where)


#: parameter constraints of the kernel (shared by the kernel estimators)
_KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions({"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"})],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
    "degree": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "coef0": [numbers.Real, None],
    "sigma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
}
#: ... and of the approximation and its landmarks
_LANDMARK_CONSTRAINTS = {
    "approximation": [StrOptions({"exact", "nystrom"})],
    "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left")],
    "sampler": [str],
    "landmarks": ["array-like", None],
    "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": ["random_state", np.random.Generator],
}


class KRR(RegressorMixin, BaseEstimator):
    """Kernel ridge regression, exact or with a Nystrom approximation.

    Parameters
    ----------
    kernel : {"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"}, default="gaussian"
    gamma : float, "median", "mean" or None, default=None
        Width of the gaussian/rbf/laplacian kernel, scale of the polynomial one;
        ``"median"``/``"mean"``: ``1 / median (mean) pairwise squared distance`` of
        the training X.  None: the kernel's default (1.0).
    degree : int or None, default=None
        Degree of the polynomial kernel (None: 3).
    coef0 : float or None, default=None
        Offset of the polynomial kernel (None: 1.0).
    sigma : float, "median", "mean" or None, default=None
        Width of the gaussian (``gamma = 1 / (2 sigma^2)``; not together with
        ``gamma``) or epanechnikov kernel (None: 1.0); ``"median"``/``"mean"``:
        ``sqrt(median (mean) pairwise squared distance)`` of the training X.

        The kernel is ``kernels.from_spec({"kernel": kernel, **the non-None ones of
        gamma, sigma, degree, coef0})``: a parameter the chosen kernel does not take
        is an error at fit, never silently ignored.
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
    kernel_ : Kernel
        The kernel used (widths resolved).
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
        **_KERNEL_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        **_LANDMARK_CONSTRAINTS,
        "mode": [StrOptions({"gsa", "lla", "ncr"})],
    }

    def __init__(
        self,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        sigma=None,
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
        kern = _estimator_kernel(self, X, "KRR")
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

    def _rkhs_expansion(self, mode=None):
        """The predictor's ``w`` as ``sum_i coef[i] phi(points[i])`` (one column per target):
        ``(points, coef, indices of points in the training X or None)``; the fitted ``mode``
        decides (another ``mode`` is an error: a KRR's integrations are separate fits)."""
        check_is_fitted(self, "kernel_")
        if mode is not None and self.approximation == "nystrom" and mode != self.mode:
            raise ValueError(f"KRR: this model was fitted with mode={self.mode!r}, not {mode!r}; fit one per mode")
        if self.approximation == "exact" or self.mode == "gsa":
            return self.X_fit_, _as_columns(self.dual_coef_), np.arange(len(self.X_fit_))
        op = self.operator_
        beta = _as_columns(op.T @ self.coef_ if self.mode == "lla" else self.coef_)
        if op.S is not None:
            return op.X, np.asarray(op.S) @ beta, np.arange(len(op.X))
        return op.Z, beta, op.landmark_indices

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        # a low-rank approximation with default width cannot fit arbitrary data well: honest tag
        tags.regressor_tags.poor_score = self.approximation == "nystrom"
        return tags


def gnkr_path(X, y, Z, kernel, lams, solver="eigh"):
    """GNKR coefficients for every lambda in ``lams`` (Chen et al. (NIPS 2016), eq. 5):

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


def _positive_1d(values, name, where):
    """A non-empty 1-D float array of positive finite numbers, or a ValueError."""
    arr = np.atleast_1d(np.asarray(values, dtype=object))
    ok = arr.ndim == 1 and arr.size > 0 and all(
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and np.isfinite(v) and v > 0 for v in arr)
    if not ok:
        raise ValueError(f"{where}: {name} must be a non-empty 1-D sequence of positive finite numbers, got {values!r}")
    return arr.astype(np.float64)


class GNKR(RegressorMixin, BaseEstimator):
    """Generalized Nystrom kernel regression (Chen et al., NIPS 2016; Chen et al. (NIPS 2016)).

    ``f(x) = sum_j alpha_j K(xbar_j, x)`` over m landmarks xbar_j, with
    ``(K_nm^T K_nm + lambda m n I_m) alpha = K_nm^T y`` (l2 regularisation of the
    coefficients, not the RKHS norm), so the kernel need only be bounded: the
    Epanechnikov kernel, which is indefinite, works.

    :meth:`fit` fits one ``(sigma, lam)``; :meth:`fit_path` fits a whole grid of
    widths and lambdas (one eigendecomposition per width serves every lambda) and
    :meth:`predict_path` predicts with every ``(sigma, lambda)`` of it.

    Parameters
    ----------
    kernel : {"gaussian", "epanechnikov"}
        Gaussian ``exp(-||x-t||^2 / (2 sigma^2))`` or Epanechnikov ``(1 - ||x-t||^2 / (2 sigma^2))_+``.
    sigma : float, default=1.0
        Width of either kernel (ignored by :meth:`fit_path`).
    lam : float, default=1e-6
        Regularisation lambda (the system uses ``lambda m n``; ignored by :meth:`fit_path`).
    n_landmarks : int, default=500
        m, capped at n_samples for uniform sampling.
    sampler : {"uniform", "column_norm"}, default="column_norm"
        ``uniform``: m distinct points; ``column_norm``: m independent draws with
        ``p_i ~ ||K[:, i]||^2`` (with replacement, as the paper states).
    random_state : int, Generator or None
        A Generator is used as is (not copied): successive fits continue its stream.

    Attributes
    ----------
    kernel_ : Kernel
    landmarks_ : ndarray of shape (m, d)
    component_indices_ : ndarray of shape (m,)
    coef_ : ndarray of shape (m,)
    fit_time_, sampling_time_ : float
        Seconds for the whole fit and for choosing the landmarks.
    path_sigmas_, path_lams_, path_indices_, path_coef_, path_fit_times_, path_sampling_times_
        Set by :meth:`fit_path` instead of the above (see there).

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GNKR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 2 * np.pi, size=(500, 1)); y = X[:, 0] * np.sin(X[:, 0])
    >>> model = GNKR(kernel="epanechnikov", sigma=1.0, lam=1e-9, n_landmarks=50, random_state=0).fit(X, y)
    >>> float(np.sqrt(np.mean((model.predict(X) - y) ** 2))) < 0.1
    True
    >>> path = GNKR(kernel="gaussian", n_landmarks=50, random_state=0).fit_path(X, y, [0.1, 1.0], [1e-9, 1e-6])
    >>> path.predict_path(X[:7]).shape  # (n_sigmas, n_lams, n_samples)
    (2, 2, 7)
    """

    _parameter_constraints = {
        "kernel": [StrOptions({"gaussian", "epanechnikov"})],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "lam": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left")],
        "sampler": [StrOptions({"uniform", "column_norm"})],
        "random_state": ["random_state", np.random.Generator],
    }

    _FIT_ATTRS = ("kernel_", "landmarks_", "component_indices_", "coef_", "fit_time_", "sampling_time_")
    _PATH_ATTRS = ("path_sigmas_", "path_lams_", "path_indices_", "path_coef_", "path_fit_times_",
                   "path_sampling_times_", "path_kernels_", "path_landmarks_")

    def __init__(self, kernel="gaussian", sigma=1.0, lam=1e-6, n_landmarks=500, sampler="column_norm",
                 random_state=None):
        self.kernel = kernel
        self.sigma = sigma
        self.lam = lam
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state

    def _forget(self, names):
        for name in names:
            self.__dict__.pop(name, None)

    def _landmark_path(self, X, sigmas, rng, landmarks=None, probabilities=None):
        """Yield ``(kernel, indices, sampling seconds)`` for each sigma, in order.

        Fixed ``landmarks`` serve every sigma (0 seconds); uniform landmarks are drawn
        once, at the first sigma, and shared (each sigma reports that draw's seconds);
        column-norm landmarks are drawn per sigma from ``p = column_norm_probabilities``,
        taken from / stored in the ``probabilities`` cache (float sigma -> (p, seconds))
        if one is given; the seconds include computing p even when it was cached.
        """
        idx, t_s = (None, 0.0) if landmarks is None else (landmarks, 0.0)
        for sigma in sigmas:
            t0 = time.perf_counter()
            kern = kernels.from_spec({"kernel": self.kernel, "sigma": sigma}, where="GNKR")
            if idx is None and self.sampler == "uniform":
                idx = sampling.sample("uniform", X, kern, c=min(self.n_landmarks, len(X)), seed=rng)
                t_s = time.perf_counter() - t0
            elif landmarks is None and self.sampler == "column_norm":
                cache = {} if probabilities is None else probabilities
                key = float(sigma)
                if key not in cache:
                    t1 = time.perf_counter()
                    cache[key] = (sampling.column_norm_probabilities(X, kern), time.perf_counter() - t1)
                p, t_norms = cache[key]
                t1 = time.perf_counter()
                # m independent draws, p_i ~ ||K[:, i]||^2, as the paper states
                idx = sampling.sample("column_norm", X, kern, c=self.n_landmarks, seed=rng, replace=True,
                                      probabilities=p)
                t_s = t_norms + time.perf_counter() - t1
            yield kern, idx, t_s

    def fit(self, X, y):
        """Fit one ``(sigma, lam)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : GNKR
        """
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        t0 = time.perf_counter()
        self._forget(self._PATH_ATTRS)
        rng = check_random_state(self.random_state)
        ((self.kernel_, idx, _),) = self._landmark_path(X, [self.sigma], rng)
        self.sampling_time_ = time.perf_counter() - t0
        self.component_indices_, self.landmarks_ = idx, X[idx]
        self.coef_ = gnkr_path(X, y, self.landmarks_, self.kernel_, [self.lam])[0]
        self.fit_time_ = time.perf_counter() - t0
        return self

    def fit_path(self, X, y, sigmas, lams, *, landmarks=None, probabilities=None):
        """Fit every ``(sigma, lambda)`` of a grid: one eigendecomposition per sigma.

        This estimator's ``sigma`` and ``lam`` are ignored.  ``rng =
        check_random_state(random_state)`` (a Generator is used as is), then for each
        sigma in order: the kernel with that sigma; its landmarks -- ``landmarks`` if
        given (for every sigma), else ``uniform``: ``min(n_landmarks, n)`` distinct
        indices drawn once, at the first sigma, shared by all; ``column_norm``:
        ``n_landmarks`` independent draws per sigma with ``p_i ~ ||K[:, i]||^2``; then
        :func:`gnkr_path` for all ``lams``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sigmas : sequence of float, length n_sigmas
            Kernel widths, positive.
        lams : sequence of float, length n_lams
            Regularisation lambdas, positive.
        landmarks : array-like of int of shape (m,), default=None
            Landmark indices into X, used for every sigma (the sampler is not run and
            the random state not drawn from).
        probabilities : dict, default=None
            Cache of column-norm probabilities, ``float(sigma) -> (p, seconds to compute
            p)``: read and filled in, so that fits on the same X and kernel (e.g. several
            ``n_landmarks``) compute them once.  Use one dict per (X, kernel).  Ignored
            unless ``sampler="column_norm"`` and ``landmarks`` is None.

        Returns
        -------
        self : GNKR
            With ``path_sigmas_`` (n_sigmas,), ``path_lams_`` (n_lams,),
            ``path_indices_`` (list of n_sigmas index arrays of shape (m,); the same
            array for every sigma with uniform or fixed landmarks),
            ``path_coef_`` (list of n_sigmas arrays of shape (n_lams, m)),
            ``path_fit_times_`` (n_sigmas,) seconds in :func:`gnkr_path`,
            ``path_sampling_times_`` (n_sigmas,) seconds choosing the landmarks of
            each sigma (column-norm: including the probabilities, cached or not;
            uniform: the one draw's seconds for every sigma; fixed landmarks: 0),
            ``path_kernels_`` and ``path_landmarks_`` (lists, per sigma: the kernel and
            the (m, n_features) landmark points).  The attributes of :meth:`fit` are
            removed.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        sigmas = _positive_1d(sigmas, "sigmas", "GNKR.fit_path")
        lams = _positive_1d(lams, "lams", "GNKR.fit_path")
        if landmarks is not None:
            L = np.asarray(landmarks)
            if L.ndim != 1 or L.size == 0 or not np.issubdtype(L.dtype, np.integer) or L.min() < 0 \
                    or L.max() >= len(X):
                raise ValueError(f"GNKR.fit_path: landmarks must be a non-empty 1-D array of indices in "
                                 f"[0, {len(X)})")
            landmarks = L
        if probabilities is not None and not isinstance(probabilities, dict):
            raise ValueError("GNKR.fit_path: probabilities must be a dict (float sigma -> (p, seconds)) or None")
        self._forget(self._FIT_ATTRS)
        rng = check_random_state(self.random_state)
        kerns, indices, points, coefs, fit_t, samp_t = [], [], [], [], [], []
        for kern, idx, t_s in self._landmark_path(X, sigmas, rng, landmarks, probabilities):
            Z = X[idx]
            t1 = time.perf_counter()
            coefs.append(gnkr_path(X, y, Z, kern, lams))  # (n_lams, m)
            fit_t.append(time.perf_counter() - t1)
            kerns.append(kern)
            indices.append(idx)
            points.append(Z)
            samp_t.append(t_s)
        self.path_sigmas_, self.path_lams_ = sigmas, lams
        self.path_indices_, self.path_coef_ = indices, coefs
        self.path_kernels_, self.path_landmarks_ = kerns, points
        self.path_fit_times_, self.path_sampling_times_ = np.array(fit_t), np.array(samp_t)
        return self

    def predict(self, X):
        """Predictions ``K(X, landmarks) alpha``, block-wise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.kernel_.mmv(X, self.landmarks_, self.coef_)

    def predict_path(self, X):
        """Predictions for every ``(sigma, lambda)`` of :meth:`fit_path`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_sigmas, n_lams, n_samples)
            ``[i, j]``: the predictions with ``path_sigmas_[i]`` and ``path_lams_[j]``.
            Entry ``[i]`` is the transpose of ``K(X, landmarks_i) @ path_coef_[i].T``
            (n_samples, n_lams), computed in one piece (memory n_samples x m) and stored
            in that layout, so reductions over samples give the same bits as on that
            product (e.g. ``np.mean((P[i].T - y[:, None]) ** 2, axis=0)`` or
            ``np.mean((P - y) ** 2, axis=-1)``).
        """
        check_is_fitted(self, "path_coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = np.empty((len(self.path_sigmas_), len(X), len(self.path_lams_)))
        for i, (kern, Z, coef) in enumerate(zip(self.path_kernels_, self.path_landmarks_, self.path_coef_,
                                                strict=True)):
            out[i] = kern(X, Z) @ coef.T
        return out.transpose(0, 2, 1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # fixed default width: not tuned to arbitrary data
        return tags


class LSSVM(ClassifierMixin, BaseEstimator):
    """Least-squares SVM classifier with bias (Suykens & Vandewalle), exact or Nystrom.

    Targets are coded as +1/-1: with two classes one column (+1 for ``classes_[1]``),
    with ``k > 2`` classes one-vs-rest, one column and one bias per class.  Each
    column ``y`` solves the bordered system (``l`` = n_samples, ``s = mu l``)::

        [ 0   1^T       ] [b]   [0]
        [ 1   K + s I   ] [a] = [y]

    through two solves with ``A = K + s I`` (one call with a 2-D right-hand side):
    ``b = 1^T A^-1 y / 1^T A^-1 1`` and ``a = A^-1 (y - b 1)``.  ``K + mu l I`` is the
    ``K_mu`` of :mod:`nystrom_bench.criteria` (Ding et al. (TNNLS 2020)), so the same
    ``mu`` means the same regularisation in the criteria and in this classifier.

    ``approximation="exact"``: K by Cholesky, ``f(x) = sum_i a_i k(x, x_i) + b``.
    ``approximation="nystrom"``: the same system on ``K~ = V V^T`` (Woodbury solve of
    the operator), predicting with the Nystrom extension of K~,
    ``f(x) = phi(x)^T V^T a + b = K(x, Z) w + b`` with ``w = T V^T a`` (``phi`` =
    :meth:`~nystrom_bench.approx.KernelOperator.features`, ``W_k^+ = T T^T``), which
    equals ``K~ a + b`` on the training points.

    Parameters
    ----------
    kernel : {"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"}, default="gaussian"
    gamma : float, "median", "mean" or None, default=None
        As in :class:`KRR`.
    degree : int or None, default=None
        As in :class:`KRR`.
    coef0 : float or None, default=None
        As in :class:`KRR`.
    sigma : float, "median", "mean" or None, default=None
        As in :class:`KRR`: the kernel is ``kernels.from_spec({"kernel": kernel, **the
        non-None ones of gamma, sigma, degree, coef0})``, a parameter the kernel does
        not take is an error at fit.
    mu : float, default=0.005
        Regularisation, > 0; the system uses ``K + mu * n_samples * I``.
    approximation : {"exact", "nystrom"}, default="exact"
        ``"exact"`` ignores every landmark parameter below (and needs a positive
        definite ``K + mu l I``: an indefinite kernel such as epanechnikov may fail).
    n_landmarks : int, default=200
        Number of landmarks (capped at n_samples).
    sampler : str, default="uniform"
        Any name of :func:`nystrom_bench.sampling.available`; samplers that use the
        targets (:func:`~nystrom_bench.sampling.needs_y`) get the +1/-1 targets of the
        first column (the binary problem, or class ``classes_[0]`` against the rest).
    landmarks : array-like, default=None
        Explicit landmark indices into X, ``(c, d)`` points, or an ``(n, c)``
        :class:`~nystrom_bench.approx.Sketch`; overrides ``sampler``.
    rank : int, default=None
        Rank-k truncation of the Nystrom approximation (``None``: all of W's rank).
    random_state : int, Generator or None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (as :func:`numpy.unique`).
    kernel_ : Kernel
        The kernel used (widths resolved).
    operator_ : KernelOperator
        The kernel operator the system was solved with (as :class:`KRR`), kept for
        diagnostics and criteria on the same matrix.  It is large -- the exact one holds
        K and its Cholesky factor (2 n^2 floats), the Nystrom one C (n x c) -- and
        prediction does not use it: ``del model.operator_`` after fit frees that memory.
    dual_coef_ : ndarray of shape (n_samples, n_columns)
        ``"exact"`` only: the ``a`` of every column (``n_columns`` = 1 for two
        classes, n_classes otherwise).
    X_fit_ : ndarray of shape (n_samples, n_features)
        ``"exact"``, or ``"nystrom"`` with a sketch: the training points the
        prediction expands over.
    coef_ : ndarray of shape (c, n_columns)
        ``"nystrom"`` only: ``w = T V^T a``, so that ``f(x) = cross(x) w + b``, with
        ``cross(x) = K(x, landmarks_)`` (landmarks) or ``K(x, X_fit_) sketch_`` (sketch).
    landmarks_ : ndarray of shape (c, n_features) or None
        ``"nystrom"`` only: the landmark points (None for a sketch).
    component_indices_ : ndarray of shape (c,) or None
        ``"nystrom"`` only: indices of the landmarks in X when they are rows of X.
    sketch_ : ndarray of shape (n_samples, c) or None
        ``"nystrom"`` only: the sketch S when the landmarks were a sketch, else None.
    intercept_ : ndarray of shape (n_columns,)
        The bias ``b`` of every column.
    fit_time_ : float
        Seconds spent in ``fit``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import LSSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")
    >>> model = LSSVM(gamma=2.0, mu=1e-4).fit(X, y)
    >>> model.classes_.tolist(), model.decision_function(X[:3]).shape
    (['diff', 'same'], (3,))
    >>> float(model.score(X, y)) > 0.95
    True
    >>> ny = LSSVM(gamma=2.0, mu=1e-4, approximation="nystrom", n_landmarks=40, random_state=0).fit(X, y)
    >>> float(ny.score(X, y)) > 0.95
    True
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "mu": [Interval(numbers.Real, 0, None, closed="neither")],
        **_LANDMARK_CONSTRAINTS,
    }

    _FIT_ATTRS = ("dual_coef_", "X_fit_", "coef_", "landmarks_", "component_indices_", "sketch_")

    def __init__(
        self,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        sigma=None,
        mu=0.005,
        approximation="exact",
        n_landmarks=200,
        sampler="uniform",
        landmarks=None,
        rank=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.sigma = sigma
        self.mu = mu
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.landmarks = landmarks
        self.rank = rank
        self.random_state = random_state

    # the same landmark choice (explicit indices / points / sketch, or the sampler) as KRR
    _choose_landmarks = KRR._choose_landmarks

    def fit(self, X, y):
        """Fit the LSSVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (any type :func:`numpy.unique` sorts: ints, strings, ...);
            at least two classes.

        Returns
        -------
        self : LSSVM
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = _class_indices(self, y)
        t0 = time.perf_counter()
        for name in self._FIT_ATTRS:
            self.__dict__.pop(name, None)
        if len(self.classes_) == 2:
            Y = np.where(y_idx == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.where(y_idx[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)
        kern = _estimator_kernel(self, X, "LSSVM")
        self.kernel_ = kern
        if self.approximation == "exact":
            op = approx.build("exact", X, kern)
        else:
            op = approx.build("nystrom", X, kern, landmarks=self._choose_landmarks(X, Y[:, 0], kern), rank=self.rank)
        self.operator_ = op
        # [0 1^T; 1 A] [b; a] = [0; y], A = K + mu l I: solve A [u, v] = [y, 1] once, then
        # b = 1^T u / 1^T v and a = u - b v
        n, t = Y.shape
        sol = op.solve(self.mu * n, np.column_stack([Y, np.ones(n)]))
        u, v = sol[:, :t], sol[:, t]
        b = u.sum(axis=0) / v.sum()
        a = u - np.outer(v, b)
        self.intercept_ = b
        if self.approximation == "exact":
            self.dual_coef_, self.X_fit_ = a, X
        else:
            self.coef_ = op.T @ op.Vt(a)  # f(x) = phi(x)^T V^T a + b = cross(x) T V^T a + b
            _keep_landmarks(self, op, X)
        self.fit_time_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        """Decision values ``f(x)``: positive for ``classes_[1]`` (two classes), else one per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, (n_samples, n_classes) otherwise
        """
        check_is_fitted(self, "intercept_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        points, coef, _ = self._rkhs_expansion()
        f = self.kernel_.mmv(X, points, coef) + self.intercept_
        return f[:, 0] if len(self.classes_) == 2 else f

    def _rkhs_expansion(self, mode=None):
        """The predictor's ``w`` of every column as ``sum_i coef[i] phi(points[i])``:
        ``(points, coef, indices of points in the training X or None)``."""
        check_is_fitted(self, "intercept_")
        if hasattr(self, "dual_coef_"):  # exact (the fitted state, not a parameter set since)
            return self.X_fit_, self.dual_coef_, np.arange(len(self.X_fit_))
        return _landmark_expansion(self, self.coef_)

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the decision value is > 0 (two classes), else the argmax.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels of the same type as ``classes_``.
        """
        f = self.decision_function(X)
        idx = (f > 0).astype(np.intp) if f.ndim == 1 else np.argmax(f, axis=1)
        return self.classes_[idx]


def _ovo_pairs(n_classes):
    """The one-vs-one problems ``(i, j)``, ``i < j``, in libsvm's (and scikit-learn's) order."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def max_feasible_nu(y):
    """The largest nu a nu-SVM accepts for labels y: ``min 2 min(n_i, n_j) / (n_i + n_j)`` over the class pairs."""
    counts = np.unique(y, return_counts=True)[1]
    if len(counts) < 2:
        raise ValueError("max_feasible_nu needs at least 2 classes")
    # 2 a / (a + b) = 2 / (1 + b / a) (a <= b) is smallest for the rarest class against the largest
    return float(2 * counts.min() / (counts.min() + counts.max()))


def _ovo_duals(svc, n_samples):
    """Per-problem dual coefficients of a fitted scikit-learn ``NuSVC``/``SVC`` over the training rows.

    Returns ``(support, A, b)``: the indices of the support vectors (any problem), ``A`` of shape
    (n_problems, n_support) and ``b`` of shape (n_problems,), such that for the problem ``(i, j)``
    the decision value ``A[p] @ k(x_support, x) + b[p]`` is positive for class j.

    scikit-learn keeps libsvm's layout: ``dual_coef_[j-1]`` holds the coefficients of class i's
    support vectors in the problem ``(i, j)`` and ``dual_coef_[i]`` those of class j's; libsvm's
    decision value is positive for class i, and scikit-learn flips the signs of a two-class model
    so that it is positive for ``classes_[1]`` -- undone here, then negated once for all problems.
    """
    n_classes = len(svc.n_support_)
    starts = np.concatenate([[0], np.cumsum(svc.n_support_)])
    pairs = _ovo_pairs(n_classes)
    sign = 1.0 if n_classes == 2 else -1.0  # to "positive for class j"
    A = np.zeros((len(pairs), len(svc.support_)))
    for p, (i, j) in enumerate(pairs):
        si, sj = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
        A[p, si] = sign * svc.dual_coef_[j - 1, si]
        A[p, sj] = sign * svc.dual_coef_[i, sj]
    b = sign * np.asarray(svc.intercept_, dtype=np.float64)
    keep = np.any(A != 0, axis=0)
    return np.asarray(svc.support_)[keep], A[:, keep], b


def _ovo_vote(F, n_classes):
    """Labels (class indices) and scikit-learn's 'ovr' decision values from one-vs-one values F
    (n, n_problems; positive for the problem's second class): libsvm's majority vote (a value of 0
    votes for the second class, ties between classes go to the lowest index), and votes plus the
    summed confidences squashed into (-1/3, 1/3) (scikit-learn's ``_ovr_decision_function``)."""
    votes = np.zeros((len(F), n_classes))
    conf = np.zeros((len(F), n_classes))
    for p, (i, j) in enumerate(_ovo_pairs(n_classes)):
        second = F[:, p] >= 0
        votes[:, j] += second
        votes[:, i] += ~second
        conf[:, j] += F[:, p]
        conf[:, i] -= F[:, p]
    return np.argmax(votes, axis=1), votes + conf / (3 * (np.abs(conf) + 1))


class NuSVM(ClassifierMixin, BaseEstimator):
    """nu-support vector classifier, exact or on a Nystrom approximation (GSA or LLA prediction).

    scikit-learn's :class:`~sklearn.svm.NuSVC` (libsvm) solves every problem: one-vs-one for
    more than two classes, as ``NuSVC`` does.  With landmarks Z, ``W = K(Z, Z) = U L U^T`` (the
    eigenvalues above a relative cut-off kept) and the features ``F(x) = k(x, Z) U L^{-1/2}``
    (Li et al.'s orthogonal basis; ``K~ = F F^T``), ``approximation="nystrom"`` trains the linear
    nu-SVM on ``F(X)``.  Its dual is the dual of the kernel machine on ``K~``, so one training
    serves both integrations of Li et al. (Algorithm 1), which differ only in prediction:

    ``mode="lla"`` (low-rank linearisation)
        ``f(x) = w^T F(x) + b`` with ``w = F(X)^T a``: a kernel row against the c landmarks
        per point.
    ``mode="gsa"`` (Gram-matrix substitution)
        ``f(x) = sum_i a_i k(x_i, x) + b`` over the support vectors, with the exact kernel.

    Because the training is shared, ``mode`` is read when predicting: ``set_params(mode=...)``
    on a fitted model switches the prediction without refitting (as does the ``mode=``
    argument of :meth:`predict` and :meth:`decision_function`).
    :func:`nystrom_bench.integration.approximation_error` measures either solution against
    the exact machine's in the RKHS.

    Parameters
    ----------
    kernel : {"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"}, default="gaussian"
    gamma, degree, coef0, sigma : as in :class:`KRR`
        The kernel is ``kernels.from_spec({"kernel": kernel, **the non-None ones})``; a
        parameter the kernel does not take is an error at fit.
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of margin errors and lower bound on the fraction of
        support vectors.  Each binary problem with classes of sizes ``n_i, n_j`` needs
        ``nu <= 2 min(n_i, n_j) / (n_i + n_j)``; a larger nu is an error at fit naming the
        bound.
    approximation : {"exact", "nystrom"}, default="nystrom"
        ``"exact"`` trains on the exact kernel matrix (n x n) and ignores every landmark
        parameter and ``mode``.
    mode : {"lla", "gsa"}, default="lla"
        How the Nystrom machine predicts (see above).
    n_landmarks : int, default=200
        Number of landmarks (capped at n_samples).
    sampler : str, default="uniform"
        Any name of :func:`nystrom_bench.sampling.available`; samplers that use the targets
        get +1 for ``classes_[1]`` (two classes) or for ``classes_[0]`` against the rest.
    landmarks : array-like, default=None
        Explicit landmark indices into X, ``(c, d)`` points, or an ``(n, c)``
        :class:`~nystrom_bench.approx.Sketch`; overrides ``sampler``.
    rank : int, default=None
        Rank-k truncation of the Nystrom approximation (``None``: all of W's rank).
    tol : float, default=1e-3
        libsvm's stopping tolerance.
    max_iter : int, default=-1
        libsvm's iteration limit per problem (-1: none); reaching it warns.
    cache_size : float, default=200
        libsvm's kernel cache (MB).
    random_state : int, Generator or None
        The landmark sampler's randomness (libsvm's solver is deterministic here).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    pairs_ : list of (int, int)
        The one-vs-one problems ``(i, j)`` as indices into ``classes_`` (one for two classes).
    support_ : ndarray of shape (n_support,)
        Indices into the training X of the points with a non-zero dual coefficient.
    support_vectors_ : ndarray of shape (n_support, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_support)
        ``a`` of every problem: the exact machine's, or the Nystrom machine's shared by GSA and
        LLA; the decision value ``dual_coef_ @ k(support_vectors_, x) + intercept_`` (GSA) is
        positive for the problem's second class ``classes_[j]`` (scikit-learn's
        ``dual_coef_`` are these up to sign and layout).
    intercept_ : ndarray of shape (n_problems,)
    rho_ : ndarray of shape (n_problems,)
        The margin ``rho`` of each problem's nu-SVM solution in Schoelkopf et al.'s (2000) form
        (``min 1/2 ||w||^2 - nu rho + 1/l sum xi``, ``0 <= alpha_i <= 1/l``, ``sum alpha_i = nu``):
        libsvm divides that solution by rho so that the margin is 1, hence
        ``rho_[p] * dual_coef_[p]`` are its ``alpha_i y_i`` (``sum |.| = nu``).
    coef_ : ndarray of shape (c, n_problems)
        ``"nystrom"`` only: LLA's ``U L^{-1/2} w`` so that ``f(x) = cross(x) coef_ + b``, with
        ``cross(x) = K(x, landmarks_)`` (landmarks) or ``K(x, X_fit_) sketch_`` (a sketch).
    landmarks_ : ndarray of shape (c, n_features) or None
        ``"nystrom"`` only: the landmark points (None for a sketch).
    component_indices_ : ndarray of shape (c,) or None
        ``"nystrom"`` only: indices of the landmarks in X when they are rows of X.
    sketch_ : ndarray of shape (n_samples, c) or None
        ``"nystrom"`` only: the sketch S when the landmarks were a sketch.
    X_fit_ : ndarray of shape (n_samples, n_features)
        ``"nystrom"`` with a sketch only: the training points the LLA prediction expands over.
    n_components_ : int
        ``"nystrom"`` only: the rank of K~ (columns of F).
    kernel_ : Kernel
    n_iter_ : ndarray of shape (n_problems,)
        libsvm's iterations per problem.
    fit_time_ : float
        Seconds spent in ``fit`` (sampling and features included).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import NuSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")
    >>> model = NuSVM(gamma=2.0, nu=0.2, n_landmarks=30, random_state=0).fit(X, y)
    >>> float(model.score(X, y)) > 0.9, float(model.score(X, y, mode="gsa")) > 0.9
    (True, True)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "nu": [Interval(numbers.Real, 0, 1, closed="right")],
        **_LANDMARK_CONSTRAINTS,
        "mode": [StrOptions({"gsa", "lla"})],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, -1, None, closed="left")],
        "cache_size": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    _FIT_ATTRS = ("coef_", "landmarks_", "component_indices_", "sketch_", "X_fit_", "n_components_")

    def __init__(
        self,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        sigma=None,
        nu=0.5,
        approximation="nystrom",
        mode="lla",
        n_landmarks=200,
        sampler="uniform",
        landmarks=None,
        rank=None,
        tol=1e-3,
        max_iter=-1,
        cache_size=200,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.sigma = sigma
        self.nu = nu
        self.approximation = approximation
        self.mode = mode
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.landmarks = landmarks
        self.rank = rank
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.random_state = random_state

    _choose_landmarks = KRR._choose_landmarks

    def _check_nu(self, y_idx):
        counts = np.bincount(y_idx)
        for i, j in self.pairs_:
            bound = 2 * min(counts[i], counts[j]) / (counts[i] + counts[j])
            if self.nu > bound:
                raise ValueError(
                    f"NuSVM: nu={self.nu:g} is infeasible for the classes {str(self.classes_[i])!r} ({counts[i]} samples) "
                    f"and {str(self.classes_[j])!r} ({counts[j]}): nu must be <= 2 min(n_i, n_j) / (n_i + n_j) = "
                    f"{bound:.4g}; choose a smaller nu")

    def fit(self, X, y):
        """Fit the nu-SVM (all one-vs-one problems).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (ints, strings, ...); at least two classes.

        Returns
        -------
        self : NuSVM
        """
        from sklearn.svm import NuSVC

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = _class_indices(self, y)
        self.pairs_ = _ovo_pairs(len(self.classes_))
        self._check_nu(y_idx)
        t0 = time.perf_counter()
        for name in self._FIT_ATTRS:
            self.__dict__.pop(name, None)
        kern = _estimator_kernel(self, X, "NuSVM")
        self.kernel_ = kern
        svc = NuSVC(nu=self.nu, tol=self.tol, max_iter=self.max_iter, cache_size=self.cache_size,
                    decision_function_shape="ovo")
        if self.approximation == "exact":
            svc.set_params(kernel="precomputed").fit(kern(X), y_idx)
        else:
            y_pm = np.where(y_idx == (1 if len(self.classes_) == 2 else 0), 1.0, -1.0)
            op = approx.build("nystrom", X, kern, landmarks=self._choose_landmarks(X, y_pm, kern), rank=self.rank)
            F = op.factor()
            svc.set_params(kernel="linear").fit(F, y_idx)
        support, A, b = _ovo_duals(svc, len(X))
        self.support_, self.support_vectors_, self.dual_coef_, self.intercept_ = support, X[support], A, b
        self.rho_ = self.nu / np.abs(A).sum(axis=1)  # libsvm's rescaled a has sum |a| = nu / rho
        self.n_iter_ = np.asarray(svc.n_iter_)
        if self.approximation == "nystrom":
            # LLA: w = F(X)^T a per problem; f(x) = F(x) w + b = cross(x) (T w) + b
            self.coef_ = op.T @ (F[support].T @ A.T)
            _keep_landmarks(self, op, X)
            self.n_components_ = op.rank
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _resolve_mode(self, mode):
        mode = self.mode if mode is None else mode
        if mode not in ("gsa", "lla"):
            raise ValueError(f"NuSVM: mode must be 'gsa' or 'lla', got {mode!r}")
        return "gsa" if not hasattr(self, "coef_") else mode

    def _ovo_values(self, X, mode):
        check_is_fitted(self, "dual_coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        points, coef, _ = self._rkhs_expansion(mode, scale="decision")
        return self.kernel_.mmv(X, points, coef) + self.intercept_

    def decision_function(self, X, mode=None):
        """Decision values: positive for ``classes_[1]`` (two classes), else scikit-learn's 'ovr' values
        (votes plus squashed confidences, shape (n_samples, n_classes)).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        mode : {"gsa", "lla"} or None
            The Nystrom machine's prediction (None: the ``mode`` parameter); ignored when exact.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        F = self._ovo_values(X, mode)
        return F[:, 0] if len(self.classes_) == 2 else _ovo_vote(F, len(self.classes_))[1]

    def predict(self, X, mode=None):
        """Class labels by libsvm's one-vs-one majority vote (``mode`` as in :meth:`decision_function`).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        F = self._ovo_values(X, mode)
        return self.classes_[_ovo_vote(F, len(self.classes_))[0]]

    def score(self, X, y, sample_weight=None, mode=None):
        """Mean accuracy of :meth:`predict` (``mode`` as there)."""
        from sklearn.metrics import accuracy_score

        return accuracy_score(y, self.predict(X, mode=mode), sample_weight=sample_weight)

    def _rkhs_expansion(self, mode=None, scale="nu"):
        """Every problem's ``w`` as ``sum_i coef[i] phi(points[i])``: ``(points, coef (n_points,
        n_problems), indices of points in the training X or None)``.  ``scale="nu"``: the nu-SVM's
        own solution (``rho_ * dual_coef_``); ``"decision"``: the predictor's (libsvm's output)."""
        check_is_fitted(self, "dual_coef_")
        if scale not in ("nu", "decision"):
            raise ValueError(f"NuSVM: scale must be 'nu' or 'decision', got {scale!r}")
        factor = self.rho_ if scale == "nu" else 1.0
        if self._resolve_mode(mode) == "gsa":
            return self.support_vectors_, self.dual_coef_.T * factor, self.support_
        return _landmark_expansion(self, self.coef_ * factor)
