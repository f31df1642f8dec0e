"""Approximate kernel selection: a criterion over a grid of Gaussian widths, on K or on K~.

Ding et al. (TNNLS 2020, Algorithm 3) and Ding et al. (AAAI 2019, Algorithm 1) choose the
width gamma of ``k(x, x') = exp(-gamma ||x - x'||^2)`` by minimising a kernel selection
criterion (:func:`nystrom_bench.criteria.c_ree` or :func:`~nystrom_bench.criteria.c_ipe`)
computed on an approximation K~ of the kernel matrix instead of K.  This module runs that
loop for any approximation of :mod:`nystrom_bench.approx` and any landmark sampler, and --
what a practitioner would do instead -- k-fold cross-validation of the learner's own test
error over the same grid.

:func:`criterion_path`
    ``(gamma, criterion, seconds)`` for every candidate and the arg-min.
:func:`criterion_paths`
    The same for several criteria from one K~ per candidate.
:func:`criterion_values`
    Both criteria of one candidate from one approximation (what the consistency study
    records per row).
:func:`cv_path`
    k-fold cross-validated test error of KRR (regression) or :class:`~nystrom_bench.learners.LSSVM`
    (classification) per candidate, same result type.

Randomness: every candidate gets a *fresh* generator from the same ``seed`` (common
random numbers: uniform sampling picks the same landmarks at every width), so a single
candidate can be recomputed on its own from ``(X, y, gamma, seed)``.

>>> import numpy as np
>>> from nystrom_bench import selection
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 2)); y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
>>> res = selection.criterion_path(X, y, [2.0**-4, 2.0**-2, 1.0], approximation="nystrom",
...                                n_components=40, seed=0)
>>> list(res.table.columns), res.best_gamma in (2.0**-4, 2.0**-2, 1.0)
(['gamma', 'criterion', 'seconds'], True)
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass

import numpy as np

from . import approx, criteria, kernels

__all__ = ["SelectionResult", "criterion_path", "criterion_paths", "criterion_values", "cv_path", "CRITERIA", "APPROXIMATIONS",
           "landmark_count", "log2_grid"]

#: criterion names accepted here
CRITERIA = ("c_ree", "c_ipe")
#: approximations accepted here (all of :func:`nystrom_bench.approx.available`)
APPROXIMATIONS = ("exact", "optimal", "nystrom", "modified_nystrom", "mcm")


@dataclass
class SelectionResult:
    """The outcome of a selection over a grid of widths.

    Attributes
    ----------
    table : DataFrame
        One row per candidate: ``gamma``, ``criterion`` (the value minimised: the criterion,
        or the cross-validated error) and ``seconds`` (time for that candidate).
    best_index : int
        Row of the arg-min (the first one on ties, i.e. the smallest width listed first).
    """

    table: object
    best_index: int

    @property
    def best_gamma(self):
        return float(self.table["gamma"].iloc[self.best_index])

    @property
    def best_value(self):
        return float(self.table["criterion"].iloc[self.best_index])

    @property
    def seconds(self):
        """Total selection time (all candidates)."""
        return float(self.table["seconds"].sum())


def log2_grid(lo, hi, step=1):
    """``[2^lo, 2^(lo+step), ..., 2^hi]`` (the papers' width grids: AAAI 2^-10 ... 2^2)."""
    exps = np.arange(lo, hi + step / 2, step)
    return [float(2.0**e) for e in exps]


def landmark_count(n_components, n):
    """``n_components`` as a count for n points: an int as is, a float in (0, 1] a fraction of n
    (the papers' ``c = 0.2 l``), at least 1 and at most n."""
    if isinstance(n_components, (float, np.floating)) and 0 < n_components <= 1:
        c = int(round(n_components * n))
    else:
        c = int(n_components)
        if c != n_components or c < 1:
            raise ValueError(f"n_components must be a count >= 1 or a fraction in (0, 1], got {n_components!r}")
    return max(1, min(c, n))


def _check(X, y, criterion=None, approximation=None):
    X = kernels.as_2d(X)
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != len(X):
        raise ValueError(f"y has {len(y)} entries, X has {len(X)} rows")
    if not np.isfinite(X).all() or not np.isfinite(y).all():
        raise ValueError("X or y contains NaN or infinite values")
    if criterion is not None and criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")
    if approximation is not None and approximation not in APPROXIMATIONS:
        raise ValueError(f"unknown approximation {approximation!r}; choose one of {', '.join(APPROXIMATIONS)}")
    return X, y


def _fresh(seed):
    """A new generator with the same stream for every candidate (see the module docstring)."""
    if isinstance(seed, np.random.Generator):
        return copy.deepcopy(seed)
    return np.random.default_rng(seed)


def build_operator(X, y, kernel, approximation="exact", *, sampler="uniform", n_components=0.2, rank=None,
                   levels=3, grid=None, sampler_options=None, rng=None, n_landmarks=None):
    """The operator of one candidate kernel: ``approx.build`` after drawing landmarks where needed.

    ``n_components`` is the landmark count (a count, or a fraction in (0, 1] of the rows; ``n_landmarks``:
    its deprecated name, with a FutureWarning, as in the estimators); ``rank`` is the k of ``optimal``
    (required there) and the rank-k truncation of the Nystrom family; ``levels`` the number of MCM
    levels, ``grid`` MCM's grid ``m`` (overrides ``levels``; the grid the rows lie on, row-major);
    ``sampler_options`` go to the sampler (``y`` is passed to samplers that need it).
    """
    if n_landmarks is not None:
        warnings.warn("selection: 'n_landmarks' is deprecated, use n_components (the estimators' name)",
                      FutureWarning, stacklevel=3)
        n_components = n_landmarks
    if approximation == "exact":
        return approx.build("exact", X, kernel)
    if approximation == "optimal":
        if rank is None:
            raise ValueError("approximation 'optimal' needs rank= (the k of the best rank-k approximation)")
        return approx.build("optimal", X, kernel, rank=rank)
    if approximation == "mcm":
        return approx.build("mcm", X, kernel, levels=levels, grid=grid)
    return approx.landmark_operator(X, kernel, landmark_count(n_components, len(X)), sampler=sampler, seed=rng, y=y,
                                    approximation=approximation, rank=rank, sampler_options=sampler_options)


def _check_criteria(X, y, approximation, criteria_, noise_sd):
    """``(X, y, noise_sd)`` checked for a criteria call: known criteria; C_ipe's sigma defaults to 1% of sd(y)."""
    X, y = _check(X, y, approximation=approximation)
    unknown = [c for c in criteria_ if c not in CRITERIA]
    if unknown:
        raise ValueError(f"unknown criterion {unknown[0]!r}; choose one of {', '.join(CRITERIA)}")
    return X, y, 0.01 * float(np.std(y)) if noise_sd is None else noise_sd


def criterion_values(X, y, gamma, approximation="exact", criteria_=CRITERIA, *, mu=0.005, noise_sd=None,
                     spectrum="exact", seed=None, **build_options):
    """Every criterion in ``criteria_`` of one width from one approximation.

    Returns ``{name: (value, seconds)}``; each ``seconds`` counts building the operator
    (sampling included) plus that criterion's own evaluation, i.e. what selecting with that
    criterion alone costs per candidate.  ``noise_sd`` (C_ipe's sigma) defaults to 1% of
    ``sd(y)``, the papers' setting.  ``spectrum``: C_ipe's eigenvalues of K~ (``"exact"``) or
    the Nystrom estimate of K's (``"estimate"``, Ding et al. (TNNLS 2020) Section VI).
    """
    X, y, noise_sd = _check_criteria(X, y, approximation, criteria_, noise_sd)
    kern = kernels.make("gaussian", gamma=float(gamma))
    t0 = time.perf_counter()
    op = build_operator(X, y, kern, approximation, rng=_fresh(seed), **build_options)
    built = time.perf_counter() - t0
    out = {}
    for name in criteria_:
        t1 = time.perf_counter()
        if name == "c_ree":
            value = criteria.c_ree(op, y, mu=mu)
        else:
            value = criteria.c_ipe(op, y, mu=mu, noise_sd=noise_sd, spectrum=spectrum)
        out[name] = (float(value), built + time.perf_counter() - t1)
    return out


def _result(gammas, values, seconds):
    import pandas as pd

    table = pd.DataFrame({"gamma": [float(g) for g in gammas], "criterion": values, "seconds": seconds})
    vals = table["criterion"].to_numpy(dtype=float)
    if not np.isfinite(vals).any():
        raise ValueError("no candidate gave a finite criterion value")
    return SelectionResult(table, int(np.nanargmin(np.where(np.isfinite(vals), vals, np.nan))))


def _check_grid(gammas):
    gammas = [float(g) for g in np.atleast_1d(gammas)]
    if not gammas or not all(np.isfinite(g) and g > 0 for g in gammas):
        raise ValueError(f"gammas must be a non-empty list of positive widths, got {gammas!r}")
    return gammas


def criterion_path(X, y, gammas, approximation="exact", criterion="c_ree", *, mu=0.005, noise_sd=None,
                   spectrum="exact", seed=None, **build_options):
    """Select the Gaussian width by minimising ``criterion`` computed on ``approximation``.

    Parameters
    ----------
    X : array of shape (l, d)
    y : array of shape (l,)
        Regression targets, or +-1 labels (Ding et al.'s classification setting).
    gammas : sequence of float
        Candidate widths (e.g. :func:`log2_grid`).
    approximation : {"exact", "optimal", "nystrom", "modified_nystrom", "mcm"}
    criterion : {"c_ree", "c_ipe"}
    mu : float
        The criteria's regularisation (``K + mu l I``); the papers use 0.005.
    noise_sd : float, optional
        C_ipe's sigma (default 1% of ``sd(y)``).
    seed : int, SeedSequence, Generator or None
        Landmark randomness; every candidate starts from the same stream.
    **build_options
        ``sampler`` (default ``"uniform"``), ``n_components`` (count or fraction of l,
        default 0.2), ``rank`` (k), ``levels`` and ``grid`` (MCM), ``sampler_options``.

    Returns
    -------
    SelectionResult
    """
    _check_grid(gammas)
    _check(X, y, criterion, approximation)
    return criterion_paths(X, y, gammas, approximation, (criterion,), mu=mu, noise_sd=noise_sd, spectrum=spectrum,
                           seed=seed, **build_options)[criterion]


def criterion_paths(X, y, gammas, approximation="exact", criteria_=CRITERIA, *, mu=0.005, noise_sd=None,
                    spectrum="exact", seed=None, operators=None, **build_options):
    """:func:`criterion_path` of every criterion in ``criteria_``, from one K~ per width: ``{criterion: SelectionResult}``.

    Each width's operator is built once (sampling included; the same landmarks :func:`criterion_path` draws,
    every candidate from a fresh copy of ``seed``'s stream) and each criterion is evaluated on its own shallow
    copy of it as built (:func:`copy.copy`: the operator's arrays shared, its caches -- a Cholesky factor,
    an eigendecomposition, filled by the first criterion -- not), so every criterion's values are the bits
    of its own :func:`criterion_path` and its ``seconds`` per candidate are the build's measured seconds
    plus its own evaluation, as there: what selecting with that criterion alone costs.  Ding et al.
    (TNNLS 2020, Algorithm 3) run the selection once per criterion; the build does not depend on it.
    ``operators``: a list that receives every width's operator as built (e.g. for an assumption check).
    """
    gammas = _check_grid(gammas)
    X, y, noise_sd = _check_criteria(X, y, approximation, criteria_, noise_sd)
    values = {name: [] for name in criteria_}
    seconds = {name: [] for name in criteria_}
    for g in gammas:
        kern = kernels.make("gaussian", gamma=float(g))
        t0 = time.perf_counter()
        op = build_operator(X, y, kern, approximation, rng=_fresh(seed), **build_options)
        built = time.perf_counter() - t0
        if operators is not None:
            operators.append(copy.copy(op))
        for name in criteria_:
            mine = copy.copy(op) if len(criteria_) > 1 else op
            t1 = time.perf_counter()
            if name == "c_ree":
                value = criteria.c_ree(mine, y, mu=mu)
            else:
                value = criteria.c_ipe(mine, y, mu=mu, noise_sd=noise_sd, spectrum=spectrum)
            values[name].append(float(value))
            seconds[name].append(built + time.perf_counter() - t1)
    return {name: _result(gammas, values[name], seconds[name]) for name in criteria_}


def cv_path(X, y, gammas, task="regression", *, mu=0.005, cv=5, seed=0, estimator=None):
    """Select the width by ``cv``-fold cross-validation of the learner's test error.

    The learner is exact KRR with ``alpha = mu * l_fold`` (regression; error = MSE) or an
    exact :class:`~nystrom_bench.learners.LSSVM` with ``alpha = mu * l`` on each fold's ``l``
    training samples (``task`` binary/multiclass; error = 1 - accuracy), so its regularisation is the criteria's ``K + mu l I`` on each
    fold's training part.  ``estimator``: any scikit-learn regressor or classifier with a
    ``gamma`` parameter instead (same errors).  Folds are shuffled with ``seed``
    (stratified for classification) and the same for every candidate.
    """
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    gammas = _check_grid(gammas)
    X = kernels.as_2d(X)
    y = np.asarray(y)
    if len(y) != len(X):
        raise ValueError(f"y has {len(y)} entries, X has {len(X)} rows")
    if not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
    classify = task != "regression"
    splitter = (StratifiedKFold if classify else KFold)(n_splits=int(cv), shuffle=True, random_state=seed)
    ours = estimator is None  # our exact KRR / LSSVM: the fold loop below, without scikit-learn's scorer machinery
    if estimator is None:
        from .learners import KRR, LSSVM

        if classify:
            estimator = LSSVM(kernel="gaussian", approximation="exact")
        else:
            l_fold = len(X) - int(np.ceil(len(X) / cv))
            estimator = KRR(kernel="gaussian", alpha=mu * l_fold, approximation="exact", fit_intercept=False)
    # the folds, the same for every candidate (a seeded splitter splits alike on every call): drawn once, and
    # every candidate charged the seconds they took, as when each candidate drew them itself
    t0 = time.perf_counter()
    folds = list(splitter.split(X, y))
    split_seconds = time.perf_counter() - t0
    values, seconds = [], []
    for g in gammas:
        t0 = time.perf_counter()
        if ours:
            from sklearn.base import clone
            from sklearn.metrics import mean_squared_error

            if classify:  # LSSVM: alpha = mu * (the fold's training size); accuracy as accuracy_score computes it
                scores = np.array([float(np.average(clone(estimator).set_params(gamma=g, alpha=mu * len(tr))
                                                    .fit(X[tr], y[tr]).predict(X[te]) == y[te]))
                                   for tr, te in folds])
            else:  # what cross_val_score's neg_mean_squared_error gives per fold
                scores = np.array([-1 * mean_squared_error(y[te], clone(estimator).set_params(gamma=g)
                                                           .fit(X[tr], y[tr]).predict(X[te])) for tr, te in folds])
        else:
            scores = cross_val_score(estimator.set_params(gamma=g), X, y, cv=folds,
                                     scoring=None if classify else "neg_mean_squared_error")
        err = float(1.0 - scores.mean()) if classify else float(-scores.mean())
        values.append(err)
        seconds.append(time.perf_counter() - t0 + split_seconds)
    return _result(gammas, values, seconds)
