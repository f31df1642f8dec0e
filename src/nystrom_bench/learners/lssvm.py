"""``LSSVM`` -- least-squares SVM classifier with bias (Suykens), one-vs-rest for more
than two classes, as used by Ding et al. (TNNLS 2020) for classification in
approximate kernel selection: the bordered system with ``K + alpha I`` (the
criteria's ``K_mu`` with ``alpha = mu l``), exact (Cholesky) or on a Nystrom ``K~ = V V^T`` (Woodbury)
predicting with the Nystrom extension ``phi(x)^T V^T a + b``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import approx
from ._base import (
    _KERNEL_CONSTRAINTS,
    _LANDMARK_CONSTRAINTS,
    DEFAULT_ALPHA,
    DEFAULT_N_COMPONENTS,
    DEPRECATED,
    _bordered,
    _class_indices,
    _estimator_kernel,
    _fit_input,
    _forget,
    _given,
    _keep_landmarks,
    _landmark_expansion,
    _Landmarks,
    _new_input,
    _renamed,
    _set_params,
    _SparseInput,
    _weighted_solver,
)


class LSSVM(_Landmarks, _SparseInput, ClassifierMixin, BaseEstimator):
    """Least-squares SVM classifier with bias (Suykens & Vandewalle), exact or Nystrom.

    Targets are coded as +1/-1: with two classes one column (+1 for ``classes_[1]``),
    with ``k > 2`` classes one-vs-rest, one column and one bias per class.  Each
    column ``y`` solves the bordered system (``s = alpha``)::

        [ 0   1^T       ] [b]   [0]
        [ 1   K + s I   ] [a] = [y]

    through two solves with ``A = K + s I`` (one call with a 2-D right-hand side):
    ``b = 1^T A^-1 y / 1^T A^-1 1`` and ``a = A^-1 (y - b 1)``.  With ``alpha = mu l``
    (``l`` = n_samples), ``K + alpha I`` is the ``K_mu = K + mu l I`` of
    :mod:`nystrom_bench.criteria` (Ding et al. (TNNLS 2020)), so the criteria's ``mu``
    and this classifier's ``alpha = mu * n_samples`` are the same regularisation.

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
        As in :class:`KRR` (None: the median heuristic for the gaussian, laplacian and
        epanechnikov kernels).
    degree : int or None, default=None
        As in :class:`KRR`.
    coef0 : float or None, default=None
        As in :class:`KRR`.
    sigma : float, "median", "mean" or None, default=None
        As in :class:`KRR`: the kernel is ``kernels.from_spec({"kernel": kernel, **the
        non-None ones of gamma, sigma, degree, coef0})``, a parameter the kernel does
        not take is an error at fit.
    alpha : float, default=1.0
        Regularisation, > 0: the system uses ``K + alpha I``, as :class:`KRR`'s ``alpha`` (the
        same name and default in every estimator with a ridge term).  Ding et al.'s ``K_mu =
        K + mu l I`` is ``alpha = mu * n_samples`` (their experiments use mu = 0.005).  The
        default 1.0 was measured with the median width: digits accuracy 0.97 exact where
        mu = 0.005 gave 0.950 (see the docs' "Choosing parameters").
    approximation : {"exact", "nystrom"}, default="exact"
        ``"exact"`` ignores every landmark parameter below (and needs a positive
        definite ``K + alpha I``: an indefinite kernel such as epanechnikov may fail).
    n_components : int or float, default=200
        Number of landmarks (more than n_samples: n_samples, with a warning), or a fraction in (0, 1] of n_samples, as in
        every estimator here.
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
    mu : float or None
        Deprecated (FutureWarning; removed in the next release): the regularisation as
        ``K + mu * n_samples * I``; use ``alpha = mu * n_samples``.  Given, the fit uses it as
        before (None: ``K + I``).
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

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
    >>> model = LSSVM(gamma=2.0, alpha=0.04).fit(X, y)  # alpha = mu l: Ding et al.'s mu = 1e-4, l = 400
    >>> model.classes_.tolist(), model.decision_function(X[:3]).shape
    (['diff', 'same'], (3,))
    >>> float(model.score(X, y)) > 0.95
    True
    >>> ny = LSSVM(gamma=2.0, alpha=0.04, approximation="nystrom", n_components=40, random_state=0).fit(X, y)
    >>> float(ny.score(X, y)) > 0.95
    True
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        **_LANDMARK_CONSTRAINTS,
        "mu": [Interval(numbers.Real, 0, None, closed="neither"), None, Hidden(StrOptions({DEPRECATED}))],
    }

    _FIT_ATTRS = ("dual_coef_", "X_fit_", "coef_", "landmarks_", "component_indices_", "sketch_")

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, alpha=DEFAULT_ALPHA,
                 approximation="exact", n_components=DEFAULT_N_COMPONENTS, sampler="uniform", landmarks=None,
                 rank=None, random_state=None, mu=DEPRECATED, n_landmarks=DEPRECATED):
        _set_params(self, locals())

    def fit(self, X, y, sample_weight=None):
        """Fit the LSSVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (any type :func:`numpy.unique` sorts: ints, strings, ...);
            at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Suykens' weighted LS-SVM: sample i's squared error is weighted by ``v_i``.  The primal
            ``min 1/2 ||w||^2 + 1/(2 s) sum_i v_i e_i^2`` subject to ``y_i = w^T phi(x_i) + b + e_i`` has the
            Lagrangian stationarity conditions ``w = sum_i a_i phi(x_i)``, ``sum_i a_i = 0`` and
            ``a_i = v_i e_i / s``, so ``e_i = s a_i / v_i`` and the bordered system becomes
            ``[0 1^T; 1 K + s V^-1] [b; a] = [0; y]``, ``V = diag(v)``: the ridge term of sample i scaled by
            ``1 / v_i``.  It is solved as ``(K + s V^-1)^-1 = V^1/2 (V^1/2 K V^1/2 + s I)^-1 V^1/2`` (Cholesky,
            or Woodbury on ``V^1/2 K~ V^1/2`` with the Nystrom factor), so a zero weight removes the sample
            (``a_i = 0``).  An integer weight equals repeating the row (with the deprecated ``mu``, ``l`` in
            ``s = mu l`` is the sum of the weights; landmarks drawn by a sampler depend on the rows, so with a sampler the equality holds
            for the same landmarks).  Negative or non-finite weights are an error.

        Returns
        -------
        self : LSSVM
        """
        X, y, sw = _fit_input(self, X, y, sample_weight)
        mu_given = _given(self.mu)
        if mu_given:
            _renamed(self, "mu", "alpha", "LSSVM",
                     how="alpha = mu * n_samples (the system is K + alpha I; mu=None was alpha=1.0)")
        y_idx = _class_indices(self, y)
        t0 = time.perf_counter()
        _forget(self, self._FIT_ATTRS)
        if len(self.classes_) == 2:
            Y = np.where(y_idx == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.where(y_idx[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)
        kern = _estimator_kernel(self, X, "LSSVM", require_psd=True, sample_weight=sw)
        self.kernel_ = kern
        if self.approximation == "exact":
            op = approx.build("exact", X, kern)
        else:
            op = self._landmark_operator(X, Y[:, 0], kern, rank=self.rank)
        self.operator_ = op
        if mu_given:  # the deprecated mu: today's arithmetic, K + mu l I (None: K + I)
            l_eff = len(Y) if sw is None else float(sw.sum())  # weighted: the number of samples the weights count
            shift = DEFAULT_ALPHA if self.mu is None else self.mu * l_eff
        else:
            shift = float(self.alpha)
        if sw is None:
            solve = lambda B: op.solve(shift, B)  # noqa: E731
        else:  # (K + s V^-1)^-1 = R (R K R + s I)^-1 R, R = V^1/2 (see fit's docstring)
            solve = _weighted_solver(op, sw, shift, exact=self.approximation == "exact")
        # [0 1^T; 1 A] [b; a] = [0; y], A = K + alpha I: solve A [u, v] = [y, 1] once, then
        # b = 1^T u / 1^T v and a = u - b v
        a, b = _bordered(solve, Y)
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
        X = _new_input(self, X, "intercept_")
        points, coef, _ = self._rkhs_expansion()
        f = self.kernel_.mmv(X, points, coef) + self.intercept_
        return f[:, 0] if len(self.classes_) == 2 else f

    def _rkhs_expansion(self, mode=None):
        """The predictor's ``w`` of every column as ``sum_i coef[i] phi(points[i])``:
        ``(points, coef, indices of points in the training X or None)``."""
        check_is_fitted(self, "intercept_")
        if hasattr(self, "dual_coef_"):  # exact (the fitted state, not a parameter set since)
            return self.X_fit_, self.dual_coef_, np.arange(self.X_fit_.shape[0])
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
