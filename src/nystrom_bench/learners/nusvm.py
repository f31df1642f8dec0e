"""nu-support vector classification, exact or on a Nystrom approximation with GSA or LLA prediction
(Li et al., geometric view): ``NuSVM``, ``max_feasible_nu``."""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    _KERNEL_CONSTRAINTS,
    _LANDMARK_CONSTRAINTS,
    DEFAULT_N_COMPONENTS,
    DEPRECATED,
    _class_indices,
    _estimator_kernel,
    _fit_input,
    _forget,
    _keep_landmarks,
    _landmark_expansion,
    _Landmarks,
    _new_input,
    _set_params,
    _SparseInput,
)


def _ovo_pairs(n_classes):
    """The one-vs-one problems ``(i, j)``, ``i < j``, in libsvm's (and scikit-learn's) order."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def max_feasible_nu(y, sample_weight=None):
    """The largest nu a nu-SVM accepts for labels y: ``min 2 min(n_i, n_j) / (n_i + n_j)`` over the class pairs
    (with ``sample_weight``, ``n_i`` is the summed weight of class i, as libsvm counts it)."""
    labels, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=sample_weight, minlength=len(labels))
    if len(counts) < 2:
        raise ValueError("max_feasible_nu needs at least 2 classes")
    # 2 a / (a + b) = 2 / (1 + b / a) (a <= b) is smallest for the rarest class against the largest
    return float(2 * counts.min() / (counts.min() + counts.max()))


def _ovo_duals(svc):
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


class NuSVM(_Landmarks, _SparseInput, ClassifierMixin, BaseEstimator):
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
        (gamma and sigma None: the median heuristic for the gaussian, laplacian and epanechnikov kernels.)
        The kernel is ``kernels.from_spec({"kernel": kernel, **the non-None ones})``; a
        parameter the kernel does not take is an error at fit.
    nu : float in (0, 1], default=0.2
        The nu of nu-SVM (Schoelkopf et al.; scikit-learn's ``NuSVC`` has it under the same name).
        It is not a ridge term, so it is not called ``alpha`` as the regularisation of the other
        estimators here: it bounds fractions of the training set.  Upper bound on the fraction of margin errors and lower bound on the fraction of
        support vectors.  The default 0.2 (scikit-learn's ``NuSVC``: 0.5) was measured with the
        median width and 200 landmarks, mean test accuracy over seeds 0-2: digits 0.967 (0.5:
        0.938; 0.1: 0.970), breast_cancer 0.961 (0.942; 0.967), twonorm 0.980 for all three; a
        smaller nu is also feasible for more unbalanced classes.  Each binary problem with classes of sizes ``n_i, n_j`` needs
        ``nu <= 2 min(n_i, n_j) / (n_i + n_j)``; a larger nu is an error at fit naming the
        bound.
    approximation : {"exact", "nystrom"}, default="nystrom"
        ``"exact"`` trains on the exact kernel matrix (n x n) and ignores every landmark
        parameter and ``mode``.
    mode : {"lla", "gsa"}, default="lla"
        How the Nystrom machine predicts (see above).
    n_components : int or float, default=200
        Number of landmarks (more than n_samples: n_samples, with a warning), or a fraction in (0, 1] of n_samples, as in
        every estimator here.
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
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

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
    >>> model = NuSVM(gamma=2.0, nu=0.2, n_components=30, random_state=0).fit(X, y)
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

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, nu=0.2,
                 approximation="nystrom", mode="lla", n_components=DEFAULT_N_COMPONENTS, sampler="uniform",
                 landmarks=None, rank=None, tol=1e-3, max_iter=-1, cache_size=200, random_state=None,
                 n_landmarks=DEPRECATED):
        _set_params(self, locals())

    def _check_nu(self, y_idx, sw=None):
        bound = max_feasible_nu(y_idx, sw)
        if self.nu > bound:  # the tightest pair: the rarest class against the largest
            counts = np.bincount(y_idx, weights=sw)
            i, j = sorted((int(np.argmin(counts)), int(np.argmax(counts))))
            raise ValueError(
                f"NuSVM: nu={self.nu:g} is infeasible for the classes {str(self.classes_[i])!r} ({counts[i]} samples) "
                f"and {str(self.classes_[j])!r} ({counts[j]}): nu must be <= 2 min(n_i, n_j) / (n_i + n_j) = "
                f"{bound:.4g}; choose a smaller nu")

    def fit(self, X, y, sample_weight=None):
        """Fit the nu-SVM (all one-vs-one problems).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (ints, strings, ...); at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights, passed to scikit-learn's ``NuSVC`` (libsvm scales sample i's bound on its dual
            coefficient by its weight; a zero weight removes the sample).  The feasibility bound on nu uses
            the classes' summed weights.  Landmarks are chosen without the weights.  Negative or non-finite
            weights are an error.

        Returns
        -------
        self : NuSVM
        """
        from sklearn.svm import NuSVC

        X, y, sw = _fit_input(self, X, y, sample_weight)
        y_idx = _class_indices(self, y)
        if sw is not None and np.bincount(y_idx, weights=sw).min() <= 0:
            empty = self.classes_[np.bincount(y_idx, weights=sw) <= 0]
            raise ValueError(f"NuSVM: class(es) {empty.tolist()!r} have zero total sample_weight; give every class "
                             "a positive weight or remove its samples")
        self.pairs_ = _ovo_pairs(len(self.classes_))
        self._check_nu(y_idx, sw)
        t0 = time.perf_counter()
        _forget(self, self._FIT_ATTRS)
        kern = _estimator_kernel(self, X, "NuSVM", require_psd=True, sample_weight=sw)
        self.kernel_ = kern
        svc = NuSVC(nu=self.nu, tol=self.tol, max_iter=self.max_iter, cache_size=self.cache_size,
                    decision_function_shape="ovo")
        # zero weights: libsvm drops those rows and numbers support_ within the rest; drop them here, so
        # that the support indices map back to X
        keep = None if sw is None or (sw > 0).all() else np.flatnonzero(sw > 0)
        rows = slice(None) if keep is None else keep
        sw_rows = None if sw is None else sw[rows]
        if self.approximation == "exact":
            svc.set_params(kernel="precomputed").fit(kern(X[rows]), y_idx[rows], sample_weight=sw_rows)
        else:
            y_pm = np.where(y_idx == (1 if len(self.classes_) == 2 else 0), 1.0, -1.0)
            op = self._landmark_operator(X, y_pm, kern, rank=self.rank)
            F = op.factor()
            svc.set_params(kernel="linear").fit(F[rows], y_idx[rows], sample_weight=sw_rows)
        support, A, b = _ovo_duals(svc)
        if keep is not None:
            support = keep[support]
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
        X = _new_input(self, X, "dual_coef_")
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
