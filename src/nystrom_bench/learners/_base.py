"""What the kernel estimators share: kernel and landmark parameters, the landmark choice, class
labels, the opening of a fit and of a prediction, the Nystrom predictor's bookkeeping, the (weighted,
bordered) solves, and the base of the semi-supervised kernel learners."""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import approx, kernels, sampling
from ..seeding import check_random_state


def _psd_solve(A, b):
    """Solve a symmetric PSD system; Cholesky, falling back to least squares if singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(A, lower=True, check_finite=False), b, check_finite=False)
    except linalg.LinAlgError:
        A = (A + A.T) / 2
        return linalg.lstsq(A, b, cond=approx.RCOND, check_finite=False)[0]


def _weighted_solver(op, sw, shift, exact):
    """``B -> (K + shift V^-1)^-1 B`` for the sample weights ``V = diag(sw)``, as ``R (R K R + shift I)^-1 R``
    with ``R = V^1/2`` (a zero weight removes its sample): by Cholesky on the exact operator's K
    (``exact``), else by Woodbury on the factor F of the approximation (``K~ = F F^T``)."""
    r = np.sqrt(sw)[:, None]
    if exact:
        A = r * op.K * r.T
        A.flat[:: A.shape[0] + 1] += shift
        return lambda B: r * _psd_solve(A, r * B)
    F = r * op.factor()
    inner = F.T @ F
    inner.flat[:: inner.shape[0] + 1] += shift

    def solve(B):
        Bw = r * B
        return r * (Bw - F @ _psd_solve(inner, F.T @ Bw)) / shift

    return solve


def _bordered(solve, Y, intercept=True):
    """``(a, b)`` of the bordered system ``(K + s I) a + b 1 = Y``, ``1^T a = 0`` (b = 0 without ``intercept``)
    from ``solve`` (``B -> (K + s I)^-1 B``), one call: ``A [u, v] = [Y, 1]``, ``b = 1^T u / 1^T v``,
    ``a = u - v b``."""
    if not intercept:
        return solve(Y), np.zeros(Y.shape[1])
    both = solve(np.column_stack([Y, np.ones(len(Y))]))
    a_y, a_1 = both[:, :-1], both[:, -1]
    b = a_y.sum(axis=0) / a_1.sum()
    return a_y - np.outer(a_1, b), b


def _set_params(est, arguments):
    """Store an ``__init__``'s arguments (its ``locals()``) as attributes of the same names, unchanged --
    scikit-learn's convention, written once for every estimator here."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


def _forget(est, names):
    """Remove the fitted attributes ``names`` a previous fit may have left (a refit sets its own)."""
    for name in names:
        est.__dict__.pop(name, None)


#: the sparse formats the estimators with sparse input take
_SPARSE = ("csr", "csc")


def _fit_input(est, X, y, sample_weight=None, **validate):
    """The opening of a supervised fit: the parameters checked (the ``n_landmarks`` rename warned),
    ``(X, y)`` validated -- float64, a sparse X (CSR or CSC) as CSR (kernel blocks take row slices of
    it); ``validate``: more of ``validate_data``'s options -- and ``sample_weight`` checked: ``(X, y, sw)``."""
    where = type(est).__name__
    est._validate_params()
    _check_renamed_landmarks(est, where, stacklevel=5)  # fit's caller: fit -> here -> check -> warn
    if _checked_already(X) and X.ndim == 2 and _checked_already(y, 2 if validate.get("multi_output") else 1) \
            and len(y) == len(X) and set(validate) <= {"y_numeric", "multi_output"}:
        X, y = validate_data(est, X, y, skip_check_array=True)  # check_X_y would return them as they are
    else:
        X, y = validate_data(est, X, y, dtype=np.float64, accept_sparse=_SPARSE, **validate)
    X = kernels.as_2d(X)
    return X, y, _check_weights(sample_weight, X, where)


def _checked_already(a, max_ndim=2):
    """Whether ``a`` is an array scikit-learn's ``check_array`` / ``check_X_y`` would pass and return as it is,
    with this module's options (float64, finite, at least one row -- and one column where 2-D --, at most
    ``max_ndim`` dimensions; a plain ndarray, not a subclass): their full checks cost ~0.15 ms a call, as much
    as a small Nystrom fit (the samplers study fits ~8,000 of 300 points).  Anything else takes the full
    checks, which raise their own errors."""
    return (type(a) is np.ndarray and a.dtype == np.float64 and 1 <= a.ndim <= max_ndim and a.shape[0] >= 1
            and (a.ndim == 1 or a.shape[1] >= 1) and bool(np.isfinite(a).all()))


def _new_input(est, X, fitted, sparse=True):
    """X for a fitted estimator's predict / transform: ``check_is_fitted`` on the attribute ``fitted``, then
    validated against the fitted features (float64; sparse CSR or CSC where ``sparse``)."""
    check_is_fitted(est, fitted)
    if _checked_already(X) and X.ndim == 2:  # check_array would return it as it is: the feature checks only
        return validate_data(est, X, reset=False, skip_check_array=True)
    return validate_data(est, X, reset=False, dtype=np.float64, accept_sparse=_SPARSE if sparse else False)


class _SparseInput:
    """Mixin of the estimators that take a sparse X (CSR or CSC): kernel blocks of sparse products
    (:mod:`nystrom_bench.kernels`)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _check_weights(sample_weight, X, where):
    """``sample_weight`` validated for a fit on X: None, or a float64 (n,) array of finite weights >= 0 with a
    positive sum (scikit-learn's checks and messages, then the sum).  Every estimator here that takes
    ``sample_weight`` calls this, so a negative, NaN or infinite weight is a ValueError everywhere."""
    if sample_weight is None:
        return None
    from sklearn.utils.validation import _check_sample_weight

    sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not sw.sum() > 0:
        raise ValueError(f"{where}: sample_weight sums to 0; give at least one sample a positive weight")
    return sw


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
    return est.X_fit_, est.sketch_ @ coef, np.arange(est.X_fit_.shape[0])


#: the estimators' defaults, chosen from the measurements in the docs' "Choosing parameters"
#: (``gamma=None``: the median heuristic; ridge ``alpha``; landmark count)
DEFAULT_ALPHA = 1.0
DEFAULT_N_LANDMARKS = 200
DEFAULT_N_COMPONENTS = DEFAULT_N_LANDMARKS


def _weighted_median_sq_dist(X, w):
    """The median pairwise squared distance of X with row i repeated ``w_i`` times (integer weights: exactly
    ``median_sq_dist`` of the repeated rows, so that a weight equals a repetition; fractional weights
    weigh the pairs alike).  The copies of one row are pairs at distance 0."""
    from scipy.spatial.distance import pdist

    n = X.shape[0]
    iu = np.triu_indices(n, k=1)
    if kernels.issparse(X):  # the norms trick on sparse rows (no dense copy)
        from sklearn.metrics.pairwise import euclidean_distances

        d = np.concatenate([euclidean_distances(X, squared=True)[iu], np.zeros(n)])
    else:
        d = np.concatenate([pdist(X, "sqeuclidean"), np.zeros(n)])
    pw = np.concatenate([w[iu[0]] * w[iu[1]], np.maximum(w * (w - 1) / 2, 0.0)])
    order = np.argsort(d, kind="stable")
    d, cw = d[order], np.cumsum(pw[order])
    total = cw[-1]
    if total <= 0:
        return 0.0
    lo, hi = np.floor((total - 1) / 2), np.floor(total / 2)  # the ranks np.median averages
    return float((d[np.searchsorted(cw, lo, side="right")] + d[np.searchsorted(cw, hi, side="right")]) / 2)


def default_gamma(X, sample_weight=None):
    """The default width of a Gaussian/Laplacian kernel: ``1 / median pairwise squared distance`` of X
    (the ``gamma="median"`` heuristic; with ``sample_weight``, of the rows repeated by their weights up to
    2,000 rows), falling back to the mean squared distance where the median is 0 (more than half of the
    pairs coincide) and to 1.0 where every point coincides or n < 2."""
    X = X if kernels.issparse(X) else np.asarray(X, dtype=np.float64)
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        X, w = X[w > 0], w[w > 0]
        if 2 <= X.shape[0] <= 2000 and not np.all(w == 1):
            d = _weighted_median_sq_dist(X, w)
            if np.isfinite(d) and d > 0:
                return 1.0 / d
    if X.shape[0] >= 2:
        for stat in (kernels.median_sq_dist, kernels.mean_sq_dist):
            d = stat(X)
            if np.isfinite(d) and d > 0:
                return 1.0 / d
    return 1.0


def default_width(kernel, params, X, sample_weight=None):
    """The width a kernel spec gets when the estimator's ``gamma`` and ``sigma`` are both None: the
    median heuristic for the gaussian/rbf and laplacian kernels (``gamma``) and the epanechnikov kernel
    (``sigma`` with ``gamma = 1 / (2 sigma^2)`` equal to the Gaussian default); nothing for the others
    (polynomial keeps gamma = 1, linear has no width)."""
    if any(k in params for k in kernels.WIDTH_KEYS) or not isinstance(kernel, str):
        return {}
    name = kernel.lower()
    if name in ("gaussian", "rbf", "laplacian"):
        return {"gamma": default_gamma(X, sample_weight)}
    if name == "epanechnikov":
        return {"sigma": float(np.sqrt(0.5 / default_gamma(X, sample_weight)))}
    return {}


def _estimator_kernel(est, X, where, require_psd=False, sample_weight=None):
    """The kernel of an estimator with ``kernel, gamma, sigma, degree, coef0`` parameters: the
    non-None ones through ``kernels.from_spec`` (data-driven widths resolved on X).  ``require_psd``:
    warn when the kernel is not positive semi-definite (ridge and SVM solutions assume it)."""
    import warnings

    params = {k: getattr(est, k) for k in ("gamma", "sigma", "degree", "coef0") if getattr(est, k) is not None}
    params.update(default_width(est.kernel, params, X, sample_weight))
    kern = kernels.from_spec({"kernel": est.kernel, **params}, X, where=where)
    if require_psd and not kern.psd:
        warnings.warn(f"{where}: the {est.kernel!r} kernel with these parameters is not positive semi-definite, so "
                      "K + alpha I can be singular or indefinite and the fit is not a kernel ridge/SVM solution "
                      "(the Nystrom approximation drops W's negative eigenvalues); use a PSD kernel such as "
                      "'gaussian' or 'laplacian' (GNKR is the learner here that allows indefinite kernels)",
                      UserWarning, stacklevel=3)
    return kern


#: parameter constraints of the kernel (shared by the kernel estimators)
_KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions({"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"})],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
    "degree": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "coef0": [numbers.Real, None],
    "sigma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(kernels.HEURISTICS)), None],
}
#: the default of a parameter renamed in issue 25 (kept for one release): scikit-learn's pattern
DEPRECATED = "deprecated"
#: a landmark count: an int, or a fraction in (0, 1] of n_samples
_N_COMPONENTS_CONSTRAINT = [Interval(numbers.Integral, 1, None, closed="left"),
                            Interval(numbers.Real, 0, 1, closed="right")]
#: ``n_landmarks``: the deprecated name of ``n_components``
_N_LANDMARKS_CONSTRAINT = [*_N_COMPONENTS_CONSTRAINT, Hidden(StrOptions({DEPRECATED}))]
#: ... of the landmark choice (:class:`_Landmarks`)
_SAMPLER_CONSTRAINTS = {
    "n_components": _N_COMPONENTS_CONSTRAINT,
    "n_landmarks": _N_LANDMARKS_CONSTRAINT,
    "sampler": [str, callable],
    "landmarks": ["array-like", None],
    "random_state": ["random_state", np.random.Generator],
}
#: ... and of the approximation and its landmarks
_LANDMARK_CONSTRAINTS = {
    "approximation": [StrOptions({"exact", "nystrom"})],
    **_SAMPLER_CONSTRAINTS,
    "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
}


def _given(value):
    """Whether a deprecated parameter was set (its default is ``"deprecated"``)."""
    return not (isinstance(value, str) and value == DEPRECATED)


def _default(est, name):
    import inspect

    return inspect.signature(type(est).__init__).parameters[name].default


def _renamed(est, old, new, where, how=None, stacklevel=3):
    """The value of parameter ``new`` of ``est`` after the rename ``old -> new`` (issue 25; ``old`` kept
    for one release with the default ``"deprecated"``, as scikit-learn does): ``est.<new>``, or --
    ``old`` given -- a FutureWarning naming the replacement (``how``, default ``new = old``) and
    ``est.<old>``.  ``old`` given with ``new`` set away from its default is a ValueError."""
    import warnings

    value = getattr(est, old)
    if not _given(value):
        return getattr(est, new)
    cls = type(est).__name__
    current, default = getattr(est, new), _default(est, new)
    if not (current is default or (isinstance(current, numbers.Number) and current == default)):
        raise ValueError(f"{where}: {old}={value!r} and {new}={current!r} both given; {old!r} is the deprecated "
                         f"name of {new!r}: pass {new} only")
    warnings.warn(f"{cls}: {old!r} is deprecated and will be removed in the next release; use "
                  f"{how or f'{new}={value!r}'} instead", FutureWarning, stacklevel=stacklevel)
    return value


def _landmark_param(est):
    """``n_components``, or the deprecated ``n_landmarks`` when given (no warning: fit warns once)."""
    old = getattr(est, "n_landmarks", DEPRECATED)
    return old if _given(old) else est.n_components


def _landmark_count(est, n):
    """The number of landmarks a fit on n samples draws: ``n_components`` (an int count or a fraction of n)
    capped at n."""
    return _n_components(_landmark_param(est), n)


def _check_renamed_landmarks(est, where, stacklevel=4):
    """Fit's check of the ``n_landmarks -> n_components`` rename: warn (FutureWarning) or raise (both given).
    ``stacklevel``: the warning's frame, default fit's caller when fit calls this."""
    if hasattr(est, "n_landmarks"):
        _renamed(est, "n_landmarks", "n_components", where, stacklevel=stacklevel)


def _outside_stacklevel():
    """The ``stacklevel`` of a warning raised by this package's caller's frame: the first frame outside
    nystrom_bench (the user's ``fit``), however deep the package calls."""
    import sys

    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("nystrom_bench"):
        frame, level = frame.f_back, level + 1
    return level


def _warn_clipped(est, n):
    """Warn (UserWarning, as scikit-learn's ``Nystroem`` does) when an int ``n_components`` above n_samples
    is clipped to n_samples: every training point is then a landmark, the full kernel at Nystrom's cost."""
    import warnings

    value = _landmark_param(est)
    if getattr(est, "landmarks", None) is None and isinstance(value, numbers.Integral) and value > n:
        warnings.warn(f"{type(est).__name__}: n_components > n_samples ({value} > {n}); n_components was set to "
                      f"n_samples = {n}: every training point is a landmark, the full kernel at the Nystrom "
                      f"method's cost (pass n_components <= {n}, or a fraction of n_samples)", UserWarning,
                      stacklevel=_outside_stacklevel())


def _choose_landmarks(self, X, y, kern, c=None):
    """An estimator's landmarks (:func:`nystrom_bench.sampling.choose_landmarks`): its ``landmarks`` (indices,
    points or a sketch), or ``c`` (default ``n_components``, a count or a fraction of n, clipped to n with a
    warning) from its sampler."""
    if self.landmarks is not None:
        return sampling.choose_landmarks(X, kern, landmarks=self.landmarks)
    if c is None:
        _warn_clipped(self, X.shape[0])
    c = _landmark_count(self, X.shape[0]) if c is None else min(c, X.shape[0])
    return sampling.choose_landmarks(X, kern, c, sampler=self.sampler, seed=check_random_state(self.random_state),
                                     y=y)


def _landmark_operator(self, X, y, kern, c=None, **build_options):
    """An estimator's Nystrom operator: :func:`nystrom_bench.approx.landmark_operator` on the landmarks of
    :func:`_choose_landmarks` (``build_options``: ``rank``, ``store_C``...)."""
    return approx.landmark_operator(X, kern, landmarks=_choose_landmarks(self, X, y, kern, c), **build_options)


class _Landmarks:
    """Mixin of the estimators with ``n_components`` (or the deprecated ``n_landmarks``), ``sampler``,
    ``landmarks`` and ``random_state`` parameters: their landmark choice and Nystrom operator."""

    _choose_landmarks = _choose_landmarks
    _landmark_operator = _landmark_operator


def _partial_labels(est, X, y, where):
    """``(X, y, indices of the labelled samples)`` of a semi-supervised fit: ``y = -1`` marks an
    unlabelled sample (scikit-learn's convention); at least two labelled classes."""
    est._validate_params()
    _check_renamed_landmarks(est, where, stacklevel=5)  # fit's caller: fit -> here -> check -> warn
    X, y = validate_data(est, X, y, dtype=np.float64)
    y = np.asarray(y)
    labelled = np.flatnonzero(y != -1)
    if len(np.unique(y[labelled])) < 2:
        raise ValueError(f"{where} needs labelled samples of at least 2 classes (y = -1 marks the "
                         f"unlabelled ones); got {len(labelled)} labelled sample(s) of "
                         f"{len(np.unique(y[labelled]))} class(es)")
    return X, y, labelled


def _n_components(value, n):
    """An int count, or a fraction in (0, 1] of n (at least 1), capped at n."""
    k = int(value) if isinstance(value, numbers.Integral) else max(1, int(round(value * n)))
    return min(k, n)


def _check_label_free_sampler(est):
    """A semi-supervised fit has partial labels: refuse a sampler that needs every target."""
    if est.landmarks is None and sampling.needs_y(est.sampler):
        raise ValueError(f"sampler {est.sampler!r} needs the targets of every sample; the labels here are "
                         "partial: choose a label-free sampler (e.g. kmeans, uniform)")


class _SemiSupervised(TransformerMixin, BaseEstimator):
    """Base of the semi-supervised kernel learners (CSI, ClusterKernel, SpectralGraphKernel,
    LogDetKernelLearning, GeneralizedNystrom, GeneralizedNystromMKL): ``fit(X, y)`` needs y (``-1``
    marks unlabelled samples) and opens the same way for all -- parameters and partial labels checked,
    then a learner's own checks (:meth:`_check_fit_params`), then on the clock the base kernel ``kernel_`` (learners with a ``kernel`` parameter)
    and :meth:`_fit` with the count ``n_components`` resolves to; ``fit_time_`` the seconds from there."""

    def fit(self, X, y):
        """Learn the kernel on X (every sample, labelled or not) with the labels of y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; -1 marks an unlabelled sample.  At least two labelled classes.

        Returns
        -------
        self : object
            The fitted learner.
        """
        where = type(self).__name__
        X, y, labelled = _partial_labels(self, X, y, where)
        self._check_fit_params(X, labelled)
        t0 = time.perf_counter()
        if "kernel" in self._parameter_constraints:
            self.kernel_ = _estimator_kernel(self, X, where)
        _warn_clipped(self, len(X))
        self._fit(X, y, labelled, _landmark_count(self, len(X)))
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _check_fit_params(self, X, labelled):
        """A learner's checks of its parameters against the data, before the clock starts."""

    def _fit(self, X, y, labelled, n_components):  # pragma: no cover - abstract
        """Learn the kernel: X and y validated, ``labelled`` the indices of the labelled samples,
        ``n_components`` the count ``n_components`` resolves to on X."""
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class _TransductiveKernel(_SemiSupervised):
    """Base of a semi-supervised kernel learned on a fixed sample set (cluster kernel, spectral graph
    kernel): the factor ``factor_`` (``G`` with ``K~ = G G^T``) exists for the fitted samples only, so
    ``transform`` accepts exactly the fitted X and explains otherwise."""

    def transform(self, X):
        """The rows of the learned factor for the fitted samples (X must be the X given to fit)."""
        X = _new_input(self, X, "factor_", sparse=False)
        if X.shape != self.X_fit_.shape or not np.array_equal(X, self.X_fit_):
            raise ValueError(f"{type(self).__name__} is transductive: its kernel exists on the samples it was fitted "
                             "on only, so transform takes exactly that X (fit on every sample, labelled and "
                             "unlabelled, to embed them)")
        return self.factor_


class _LandmarkKernel(_Landmarks, _SemiSupervised):
    """Base of a semi-supervised kernel learned on landmarks (LogDet kernel learning, generalized
    Nystrom): the landmarks come from a sampler that needs no targets (the labels are partial), and
    the learned kernel's factor extends to new points as ``K(X, landmarks_) root_``."""

    def _check_fit_params(self, X, labelled):
        """The sampler needs no targets (the labels are partial)."""
        _check_label_free_sampler(self)

    def transform(self, X):
        """The factor ``G = K(X, landmarks_) root_`` of the learned kernel (``K~ = G G^T``), for fitted and new
        samples alike."""
        X = _new_input(self, X, "root_", sparse=False)
        return self.kernel_(X, self.landmarks_) @ self.root_
