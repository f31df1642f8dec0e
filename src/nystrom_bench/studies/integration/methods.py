"""The integration family: the exact kernel machine and a Nystrom machine per sampler (Li et al., geometric view).

Both run the machine of the data set's task -- :class:`~nystrom_bench.learners.NuSVM` for
classification, :class:`~nystrom_bench.learners.KRR` without intercept (on standardised targets)
for regression -- at the width gamma and the nu (KRR: alpha) that the exact machine picks on a
validation part of the training part (:func:`tuned`: once per data set, seed and kernel).  A block's
``approximation`` picks the method:

- ``exact``: that machine on the whole training part (:func:`exact_machine`: fitted once per data
  set, seed and kernel, whichever method asks first -- every Nystrom row's ``rel_error`` needs it);
- ``nystrom`` (default): c = ratio x n landmarks drawn by its ``sampler`` (the trial's coord
  ``ratio``) from the trial's stream; one nu-SVM training serves GSA and LLA (:meth:`fit_key`:
  the ratio; the mode is a predict option), KRR fits once per mode (the coord ``integration``) on
  the same landmarks, drawn once (:class:`~nystrom_bench.sharedwork.SharedDraw`: the modes' fits start
  from the same stream and drew them three times).  The ``leverage`` sampler's eigendecomposition of K
  shares its tridiagonal reduction across the ratios (:class:`~nystrom_bench.sharedwork.SharedLeverage`,
  the same landmarks bit for bit); a fit that reused shared work is charged its measured seconds
  (:func:`charged_seconds`).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ... import kernels, learners, sampling, sharedwork
from ...methods import Method, check_sampler, family, register

family("integration", key="approximation", default="nystrom")

#: the tasks a nu-SVM runs on (the others: KRR)
CLASSIFICATION = ("binary", "multiclass")


def classify(trial):
    """Whether the trial's data set is a classification one (nu-SVM; else KRR)."""
    return trial.split.info["task"] in CLASSIFICATION


def tuned(trial):
    """The exact machine's validated hyperparameters of this (data set, seed, kernel), chosen once."""
    return trial.shared(("tuned", trial.kernel_label), lambda: _tune(trial))


def machine(trial, **kw):
    """The (unfitted) machine of the trial's task at the tuned hyperparameters."""
    t, p = tuned(trial), trial.params
    if classify(trial):
        return learners.NuSVM(gamma=t["gamma"], nu=t["nu"], tol=p["tol"], max_iter=p["max_iter"], **kw)
    return learners.KRR(gamma=t["gamma"], alpha=t["alpha"], fit_intercept=False, **kw)


def exact_machine(trial):
    """``(fitted exact machine, its fit seconds)`` on the training part, once per (data set, seed, kernel)."""
    return trial.fitted(("exact", trial.kernel_label), lambda: machine(trial, approximation="exact"),
                        trial.split.X_train, trial.y_fit)


def exact_record(trial):
    """What every row of a (data set, seed, kernel) records of the tuning (and the exact nu-SVM's support)."""
    out = dict(tuned(trial))
    if classify(trial):
        out["n_support_exact"] = len(exact_machine(trial)[0].support_)
    return out


def validation_scores(trial, gamma, X_fit, y_fit, X_val, y_val):
    """``{nu or alpha: validation score}`` of the exact machine at one width: one kernel matrix for
    the whole grid (nu-SVM: scikit-learn's NuSVC on it, as :class:`NuSVM` exact; KRR: one eigh for
    every alpha).  Infeasible nu (above :func:`~nystrom_bench.learners.max_feasible_nu`) are left out."""
    from sklearn.metrics import r2_score
    from sklearn.svm import NuSVC

    p = trial.params
    kern = kernels.make("gaussian", gamma=gamma)
    K, K_val = kern(X_fit), kern(X_val, X_fit)
    if classify(trial):
        top = learners.max_feasible_nu(y_fit)
        return {nu: NuSVC(nu=nu, kernel="precomputed", tol=p["tol"], max_iter=p["max_iter"]).fit(K, y_fit)
                .score(K_val, y_val) for nu in p["nus"] if nu <= top}
    w, Q = linalg.eigh(K)
    Qty = Q.T @ y_fit
    return {alpha: r2_score(y_val, K_val @ (Q @ (Qty / (np.maximum(w, 0.0) + alpha)))) for alpha in p["alphas"]}


def _tune(trial):
    """gamma = s / median squared distance over ``gamma_scales`` and nu (alpha) over ``nus`` (``alphas``),
    scored (accuracy or R^2) on ``validation_fraction`` of the training part (stratified for classes)."""
    from sklearn.model_selection import train_test_split

    p, classes = trial.params, classify(trial)
    X, y = trial.split.X_train, trial.y_fit
    fit_idx, val_idx = train_test_split(np.arange(len(X)), test_size=p["validation_fraction"],
                                        random_state=int(trial.stream("validation").integers(2**31 - 1)),
                                        stratify=y if classes else None)
    base = 1.0 / kernels.median_sq_dist(X[fit_idx])
    best, tried = None, 0
    for s in p["gamma_scales"]:
        scores = validation_scores(trial, s * base, X[fit_idx], y[fit_idx], X[val_idx], y[val_idx])
        tried += len(scores)
        for h, score in scores.items():  # accuracy or R^2: higher is better; ties keep the first
            if best is None or score > best[0] + 1e-12:
                best = (score, s, h)
    if best is None:
        raise ValueError(f"{trial.dataset}: every nu in params.nus is infeasible for its classes (the largest "
                         f"feasible is {learners.max_feasible_nu(y[fit_idx]):.3g}); add smaller values")
    score, s, h = best
    return {"gamma": s * base, "sigma_equivalent": float(np.sqrt(0.5 / (s * base))), "gamma_scale": s,
            "nu" if classes else "alpha": h, "validation_score": score,
            "validation_metric": "accuracy" if classes else "R^2", "candidates": tried,
            "learner": "NuSVM" if classes else "KRR"}


class _Exact:
    """The exact machine as a trial's estimator: ``fit`` takes the shared fit (:func:`exact_machine`)."""

    def __init__(self, trial):
        self.trial = trial

    def fit(self, X, y):
        self.model_, self.fit_seconds_ = exact_machine(self.trial)
        return self

    def predict(self, X):
        return self.model_.predict(X)


@register
class ExactMachine(Method):
    family = "integration"
    name = "exact"
    options = {}

    def estimator(self, trial):
        return _Exact(trial)

    def record(self, est, trial):
        return exact_record(trial)


def charged_seconds(est):
    """Seconds of shared work a fitted machine reused (its :class:`~nystrom_bench.sharedwork.SharedLeverage`
    sampler's), charged to its row."""
    return float(getattr(getattr(est, "sampler", None), "shared_seconds", 0.0))


@register
class NystromMachine(Method):
    family = "integration"
    name = "nystrom"
    options = {"sampler": {"type": "string", "default": "uniform"}}

    def check(self, params, block):
        check_sampler(self.opts["sampler"])
        if sampling.needs_y(self.opts["sampler"]):
            raise ValueError(f"sampler {self.opts['sampler']!r} needs targets; this study compares label-free samplers")

    def estimator(self, trial):
        n = len(trial.split.X_train)
        c = max(1, min(n, int(round(trial.coords["ratio"] * n))))
        mode = {} if classify(trial) else {"mode": trial.coords["integration"]}
        sharedwork.MEMO.enter(trial.study, trial.dataset)
        sampler = sharedwork.SharedLeverage() if self.opts["sampler"] == "leverage" else self.opts["sampler"]
        if mode:  # KRR fits once per mode, each from the same stream: one draw of the ratio's landmarks
            sampler = sharedwork.SharedDraw(sampler)
        return machine(trial, n_components=c, sampler=sampler, **mode, random_state=trial.rng)

    def fit_key(self, trial):
        return (trial.coords["ratio"],) if classify(trial) else None  # the nu-SVM: one fit, GSA and LLA

    def record(self, est, trial):
        out = {**exact_record(trial), "sampler": self.opts["sampler"], "n_components": est.n_components}
        if classify(trial):
            return {**out, "rank": int(est.n_components_), "n_support": len(est.support_)}
        return {**out, "rank": int(est.rank_ if hasattr(est, "rank_") else est.operator_.rank)}
