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
        "kernel": [StrOptions({"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
        "degree": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "coef0": [numbers.Real, None],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
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
        params = {k: getattr(self, k) for k in ("gamma", "sigma", "degree", "coef0") if getattr(self, k) is not None}
        kern = kernels.from_spec({"kernel": self.kernel, **params}, X, where="KRR")
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
