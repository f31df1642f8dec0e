"""Generalized Nystrom kernel regression (Chen et al., NIPS 2016): ``GNKR`` and its (sigma, lambda) path.

The paper's lambda is the estimators' ``alpha`` (the name of the ridge parameter in every estimator here)."""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ..seeding import check_random_state
from ._base import (
    _N_COMPONENTS_CONSTRAINT,
    _N_LANDMARKS_CONSTRAINT,
    DEFAULT_N_COMPONENTS,
    DEPRECATED,
    _fit_input,
    _forget,
    _landmark_param,
    _n_components,
    _new_input,
    _renamed,
    _set_params,
    _SparseInput,
    _warn_clipped,
    default_gamma,
)
from ._gnkr_path import (  # noqa: F401 - the path's algebra and shared work, re-exported where they lived
    SHARED_DISTANCE_BYTES,
    _chunked_gram,
    _deprecated_lams,
    _eigh_path,
    _epanechnikov_column_norm_probabilities,
    _filter_path,
    _gram,
    _gram_rows,
    _positive_1d,
    _row_blocks,
    _shares_distances,
    _SquaredDistances,
    gnkr_path,
    landmark_path,
)
from ._gnkr_path import fit_path as _fit_path
from ._gnkr_path import predict_path as _predict_path


class GNKR(_SparseInput, RegressorMixin, BaseEstimator):
    """Generalized Nystrom kernel regression (Chen et al., NIPS 2016; Chen et al. (NIPS 2016)).

    ``f(x) = sum_j alpha_j K(xbar_j, x)`` over m landmarks xbar_j, with
    ``(K_nm^T K_nm + lambda m n I_m) alpha = K_nm^T y`` (l2 regularisation of the
    coefficients, not the RKHS norm), so the kernel need only be bounded: the
    Epanechnikov kernel, which is indefinite, works.

    :meth:`fit` fits one ``(sigma, alpha)``; :meth:`fit_path` fits a whole grid of
    widths and lambdas (one eigendecomposition per width serves every lambda) and
    :meth:`predict_path` predicts with every ``(sigma, lambda)`` of it.

    Parameters
    ----------
    kernel : {"gaussian", "epanechnikov"}, default="gaussian"
        Gaussian ``exp(-||x-t||^2 / (2 sigma^2))`` or Epanechnikov ``(1 - ||x-t||^2 / (2 sigma^2))_+``:
        the two kernels of the paper's experiments (Sec. 5), both with the width ``sigma``, and the only
        two this implementation takes.  The method itself needs a continuous and bounded kernel (Sec. 3:
        ``sup K <= 1``), not a PSD one; the Laplacian kernel, bounded too, is not implemented here (use
        :class:`~nystrom_bench.learners.KRR` for it), nor are the polynomial and linear kernels, which are
        unbounded.
    sigma : float or None, default=None
        Width of either kernel (ignored by :meth:`fit_path`).  None: ``sqrt(median / 2)`` of the
        pairwise squared distances of the training X, i.e. the Gaussian ``gamma = 1 / median``
        of every other estimator's default (the median heuristic; ``sigma_`` holds the value).
    alpha : float, default=1e-6
        Regularisation: the paper's lambda (the system uses ``lambda m n``; ignored by
        :meth:`fit_path`).  ``alpha`` as the ridge parameter of every estimator here.
    n_components : int or float, default=200
        m (an int, or a fraction in (0, 1] of n_samples).  Uniform sampling draws distinct points, so
        more than n_samples is set to n_samples with a warning (as scikit-learn's ``Nystroem``);
        column-norm sampling draws with replacement and takes any m.  200 as in every estimator here
        (Chen et al.'s experiments use m up to 1,000: pass it).
    sampler : {"uniform", "column_norm"}, default="column_norm"
        ``uniform``: m distinct points; ``column_norm``: m independent draws with
        ``p_i ~ ||K[:, i]||^2`` (with replacement, as the paper states).
    random_state : int, Generator or None
        A Generator is used as is (not copied): successive fits continue its stream.
    lam : float
        Deprecated (FutureWarning; removed in the next release): use ``alpha`` (the same value).
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

    Attributes
    ----------
    kernel_ : Kernel
    sigma_ : float
        The width used (``sigma``, or the median heuristic's when None).
    landmarks_ : ndarray of shape (m, d)
    component_indices_ : ndarray of shape (m,)
    coef_ : ndarray of shape (m,)
    fit_time_, sampling_time_ : float
        Seconds for the whole fit and for choosing the landmarks.
    path_sigmas_, path_alphas_ (path_lams_: the same array), path_indices_, path_coef_, path_fit_times_, path_sampling_times_
        Set by :meth:`fit_path` instead of the above (see there).

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GNKR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 2 * np.pi, size=(500, 1)); y = X[:, 0] * np.sin(X[:, 0])
    >>> model = GNKR(kernel="epanechnikov", sigma=1.0, alpha=1e-9, n_components=50, random_state=0).fit(X, y)
    >>> float(np.sqrt(np.mean((model.predict(X) - y) ** 2))) < 0.1
    True
    >>> path = GNKR(kernel="gaussian", n_components=50, random_state=0).fit_path(X, y, [0.1, 1.0], [1e-9, 1e-6])
    >>> path.predict_path(X[:7]).shape  # (n_sigmas, n_alphas, n_samples)
    (2, 2, 7)
    """

    _parameter_constraints = {
        "kernel": [StrOptions({"gaussian", "epanechnikov"})],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_components": _N_COMPONENTS_CONSTRAINT,
        "sampler": [StrOptions({"uniform", "column_norm"})],
        "random_state": ["random_state", np.random.Generator],
        "lam": [Interval(numbers.Real, 0, None, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
        "n_landmarks": _N_LANDMARKS_CONSTRAINT,
    }

    _FIT_ATTRS = ("kernel_", "sigma_", "landmarks_", "component_indices_", "coef_", "fit_time_", "sampling_time_")
    _PATH_ATTRS = ("path_sigmas_", "path_alphas_", "path_lams_", "path_indices_", "path_coef_", "path_fit_times_",
                   "path_sampling_times_", "path_kernels_", "path_landmarks_")

    def __init__(self, kernel="gaussian", sigma=None, alpha=1e-6, n_components=DEFAULT_N_COMPONENTS,
                 sampler="column_norm", random_state=None, lam=DEPRECATED, n_landmarks=DEPRECATED):
        _set_params(self, locals())

    def _landmark_path(self, X, sigmas, rng, landmarks=None, probabilities=None):
        """Yield ``(kernel, indices, sampling seconds)`` for each sigma, in order
        (:func:`~nystrom_bench.learners._gnkr_path.landmark_path` with this estimator's kernel, sampler and
        landmark count)."""
        return landmark_path(X, sigmas, rng, self.kernel, self.sampler, self._m(X), landmarks, probabilities)

    def _m(self, X):
        """The landmark count: column_norm draws an int m with replacement (m > n allowed)."""
        m = _landmark_param(self)
        return int(m) if isinstance(m, numbers.Integral) else _n_components(m, X.shape[0])

    def fit(self, X, y):
        """Fit one ``(sigma, alpha)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : GNKR
        """
        X, y, _ = _fit_input(self, X, y, y_numeric=True)  # a sparse X as CSR: landmarks are its rows
        alpha = _renamed(self, "lam", "alpha", "GNKR", how="alpha (the same value: alpha is the paper's lambda)")
        if self.sampler == "uniform":
            _warn_clipped(self, X.shape[0])
        t0 = time.perf_counter()
        _forget(self, self._PATH_ATTRS)
        rng = check_random_state(self.random_state)
        self.sigma_ = float(np.sqrt(0.5 / default_gamma(X))) if self.sigma is None else float(self.sigma)
        ((self.kernel_, idx, _),) = self._landmark_path(X, [self.sigma_], rng)
        self.sampling_time_ = time.perf_counter() - t0
        self.component_indices_, self.landmarks_ = idx, X[idx]
        self.coef_ = gnkr_path(X, y, self.landmarks_, self.kernel_, [alpha])[0]
        self.fit_time_ = time.perf_counter() - t0
        return self

    def fit_path(self, X, y, sigmas, alphas=None, *, landmarks=None, probabilities=None, lams=None):
        """Fit every ``(sigma, lambda)`` of a grid: one eigendecomposition per sigma.

        This estimator's ``sigma`` and ``alpha`` are ignored.  ``rng =
        check_random_state(random_state)`` (a Generator is used as is), then for each
        sigma in order: the kernel with that sigma; its landmarks -- ``landmarks`` if
        given (for every sigma), else ``uniform``: ``min(n_components, n)`` distinct
        indices drawn once, at the first sigma, shared by all; ``column_norm``:
        ``n_components`` independent draws per sigma with ``p_i ~ ||K[:, i]||^2``; then
        :func:`gnkr_path` for all ``alphas``.

        Work shared across the widths gives the same bits as that loop: with the Epanechnikov
        kernel, widths on one landmark set (uniform or fixed landmarks) take their kernel
        matrices from one matrix of squared distances, here and in :meth:`predict_path`
        (up to :data:`SHARED_DISTANCE_BYTES` of it), and column-norm probabilities of every
        width missing from ``probabilities`` come from one pass over K(X, X)'s row blocks.
        The Gaussian kernel shares nothing: its exponent comes out of one GEMM that carries
        the width, and a last-bit change moves this path's test-selected RMSE far more than
        that (benchmarks/gnkr_grid.md).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sigmas : sequence of float, length n_sigmas
            Kernel widths, positive.
        alphas : sequence of float, length n_alphas
            Regularisation lambdas (the paper's lambda, this estimator's ``alpha``), positive.
        landmarks : array-like of int of shape (m,), default=None
            Landmark indices into X, used for every sigma (the sampler is not run and
            the random state not drawn from).
        probabilities : dict, default=None
            Cache of column-norm probabilities, ``float(sigma) -> (p, seconds to compute
            p)``: read and filled in, so that fits on the same X and kernel (e.g. several
            ``n_components``) compute them once.  Use one dict per (X, kernel).  Ignored
            unless ``sampler="column_norm"`` and ``landmarks`` is None.  Epanechnikov
            widths computed in one pass share its seconds evenly.

        Returns
        -------
        self : GNKR
            With ``path_sigmas_`` (n_sigmas,), ``path_alphas_`` (n_alphas,; ``path_lams_`` the
            same array, its name before issue 25),
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
        X, y, _ = _fit_input(self, X, y, y_numeric=True)  # a sparse X as CSR: landmarks are its rows
        sigmas = _positive_1d(sigmas, "sigmas", "GNKR.fit_path")
        lams = _positive_1d(_deprecated_lams(alphas, lams, "GNKR.fit_path"), "alphas", "GNKR.fit_path")
        if landmarks is None and self.sampler == "uniform":
            _warn_clipped(self, X.shape[0])
        if landmarks is not None:
            L = np.asarray(landmarks)
            if L.ndim != 1 or L.size == 0 or not np.issubdtype(L.dtype, np.integer) or L.min() < 0 \
                    or L.max() >= X.shape[0]:
                raise ValueError(f"GNKR.fit_path: landmarks must be a non-empty 1-D array of indices in "
                                 f"[0, {X.shape[0]})")
            landmarks = L
        if probabilities is not None and not isinstance(probabilities, dict):
            raise ValueError("GNKR.fit_path: probabilities must be a dict (float sigma -> (p, seconds)) or None")
        _forget(self, self._FIT_ATTRS)
        fit = _fit_path(X, y, sigmas, lams, self.kernel, self.sampler, self._m(X),
                        check_random_state(self.random_state), landmarks, probabilities)
        for name in self._PATH_ATTRS:
            setattr(self, name, getattr(fit, name))
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
        X = _new_input(self, X, "coef_")
        return self.kernel_.mmv(X, self.landmarks_, self.coef_)

    def predict_path(self, X):
        """Predictions for every ``(sigma, lambda)`` of :meth:`fit_path`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_sigmas, n_lams, n_samples)
            ``[i, j]``: the predictions with ``path_sigmas_[i]`` and ``path_alphas_[j]``.
            Entry ``[i]`` is the transpose of ``K(X, landmarks_i) @ path_coef_[i].T``
            (n_samples, n_lams), computed in one piece (memory n_samples x m) and stored
            in that layout, so reductions over samples give the same bits as on that
            product (e.g. ``np.mean((P[i].T - y[:, None]) ** 2, axis=0)`` or
            ``np.mean((P - y) ** 2, axis=-1)``).
        """
        return _predict_path(self, _new_input(self, X, "path_coef_"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # fixed default width: not tuned to arbitrary data
        return tags
