"""What the kernel estimators share: kernel and landmark parameters, the landmark choice, class
labels, the Nystrom predictor's bookkeeping, a PSD solve."""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from .. import approx, kernels, sampling
from ..seeding import check_random_state


def _psd_solve(A, b):
    """Solve a symmetric PSD system; Cholesky, falling back to least squares if singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(A, lower=True, check_finite=False), b, check_finite=False)
    except linalg.LinAlgError:
        A = (A + A.T) / 2
        return linalg.lstsq(A, b, cond=approx.RCOND, check_finite=False)[0]


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


#: the estimators' defaults, chosen from the measurements in the README's "Choosing parameters"
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
#: ... and of the approximation and its landmarks
_LANDMARK_CONSTRAINTS = {
    "approximation": [StrOptions({"exact", "nystrom"})],
    "n_components": _N_COMPONENTS_CONSTRAINT,
    "n_landmarks": _N_LANDMARKS_CONSTRAINT,
    "sampler": [str, callable],
    "landmarks": ["array-like", None],
    "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": ["random_state", np.random.Generator],
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


def _choose_landmarks(self, X, y, kern, c=None):
    """An estimator's landmarks (:func:`nystrom_bench.sampling.choose_landmarks`): its ``landmarks`` (indices,
    points or a sketch), or ``c`` (default ``n_components``, a count or a fraction of n) from its sampler."""
    if self.landmarks is not None:
        return sampling.choose_landmarks(X, kern, landmarks=self.landmarks)
    c = _landmark_count(self, X.shape[0]) if c is None else min(c, X.shape[0])
    return sampling.choose_landmarks(X, kern, c, sampler=self.sampler, seed=check_random_state(self.random_state),
                                     y=y)


def _landmark_operator(self, X, y, kern, c=None, **build_options):
    """An estimator's Nystrom operator: :func:`nystrom_bench.approx.landmark_operator` on the landmarks of
    :func:`_choose_landmarks` (``build_options``: ``rank``, ``store_C``...)."""
    return approx.landmark_operator(X, kern, landmarks=_choose_landmarks(self, X, y, kern, c), **build_options)


def _partial_labels(est, X, y, where, _depth=0):
    """``(X, y, indices of the labelled samples)`` of a semi-supervised fit: ``y = -1`` marks an
    unlabelled sample (scikit-learn's convention); at least two labelled classes."""
    from sklearn.utils.validation import validate_data

    est._validate_params()
    _check_renamed_landmarks(est, where, stacklevel=5 + _depth)  # fit -> [_depth helpers] -> here
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


class _SemiSupervised:
    """Mixin of the semi-supervised learners: ``fit(X, y)`` needs y (``-1`` marks unlabelled samples)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class _TransductiveKernel(_SemiSupervised):
    """Mixin of a semi-supervised kernel learned on a fixed sample set (cluster kernel, spectral graph
    kernel): the factor ``factor_`` (``G`` with ``K~ = G G^T``) exists for the fitted samples only, so
    ``transform`` accepts exactly the fitted X and explains otherwise."""

    def transform(self, X):
        """The rows of the learned factor for the fitted samples (X must be the X given to fit)."""
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self, "factor_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if X.shape != self.X_fit_.shape or not np.array_equal(X, self.X_fit_):
            raise ValueError(f"{type(self).__name__} is transductive: its kernel exists on the samples it was fitted "
                             "on only, so transform takes exactly that X (fit on every sample, labelled and "
                             "unlabelled, to embed them)")
        return self.factor_
