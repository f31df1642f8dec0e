"""The selection family: choose the Gaussian width, then fit the exact learner there (the selection study).

A block's ``approximation`` (default ``nystrom``) is one of the :mod:`~nystrom_bench.studies.consistency.methods`
approximations -- the width minimises the trial's criterion (the coord ``criterion``) computed on
that K~ over ``params.log2_gammas`` (:func:`nystrom_bench.selection.criterion_path`, the papers'
defaults filled in as there) -- or ``cv``: ``folds``-fold cross-validation of the learner's own
error (:func:`nystrom_bench.selection.cv_path`; the same for both criteria, computed once per
(data set, seed) and ``folds``).

A selection made on an approximation outside its assumptions at any width of the grid (MCM off its
grid, or ``U_m + mu l I`` indefinite: :meth:`~nystrom_bench.studies.consistency.methods.Criterion.assumption`)
records why as the param ``assumption``: the result row is flagged, shown apart and never averaged in.

The estimator then fits the exact learner at the chosen width on the training part: KRR with
``alpha = mu l`` on the standardised targets (regression) or the exact
:class:`~nystrom_bench.learners.LSSVM` with ``mu`` on the labels (classification) -- one fit per
(data set, seed) and width, shared by the methods that choose it -- and predicts with it.
"""

from __future__ import annotations

from ... import learners, selection
from ...methods import Method, family, register
from ..consistency.methods import MCM, Exact, ModifiedNystrom, Nystrom, Optimal, settings

family("selection", key="approximation", default="nystrom")


def library_call(block):
    """The library call that selects a width as the method ``block`` does (the practitioner's guide shows it)."""
    approx = block.get("approximation", "nystrom")
    if approx == "cv":
        return f"selection.cv_path(X, y, gammas, cv={block.get('folds', 5)})"
    sampler = f', sampler="{block["sampler"]}"' if block.get("sampler") not in (None, "uniform") else ""
    return f'selection.criterion_path(X, y, gammas, "{approx}", "ree"{sampler})'


class _Selects:
    """Select by a criterion path on this method's K~ (mixed into a criterion method)."""

    family = "selection"

    def select(self, trial, X, y, grid):
        """``(SelectionResult, what the row records of the selection)``.

        Every criterion's path comes from one K~ per width (:func:`nystrom_bench.selection.criterion_paths`:
        the bits of its own :func:`~nystrom_bench.selection.criterion_path`, each candidate charged the
        build's measured seconds plus its own criterion), computed by the (data set, seed)'s first trial of
        this method and kept for its other criteria, as is the path's assumption check (untimed; MCM's reads the
        operators the criteria built instead of building them again): the
        criteria do not change the build, and the stream is the same for every criterion (common random
        numbers, :meth:`~nystrom_bench.studies.Study.rng_names`)."""
        p = trial.params
        opts = self.build(p, len(X), trial.split.info)
        common = settings(p, y)
        def paths():
            ops = [] if self.assumption_reads_operators else None  # MCM's U_m of every width, for its check
            return selection.criterion_paths(X, y, grid, self.name, tuple(p["criteria"]), mu=p["mu"],
                                             noise_sd=common["noise_sd"], spectrum=p["spectrum"], seed=trial.rng,
                                             operators=ops, **opts), ops

        done, ops = trial.shared(("criterion_paths", trial.label), paths)
        res = done[trial.coords["criterion"]]
        # over the whole path: any width can win the arg-min
        reason = trial.shared(("assumption", trial.label), lambda: self.assumption(X, grid, p["mu"], opts,
                                                                                   operators=ops))
        return res, {"approximation": self.name, **opts, **({"assumption": reason} if reason else {})}

    def estimator(self, trial):
        return _Selected(self, trial)

    def fit_key(self, trial):
        return None

    def record(self, est, trial):
        return dict(est.record_)


@register
class ExactSelection(_Selects, Exact):
    pass


@register
class OptimalSelection(_Selects, Optimal):
    pass


@register
class NystromSelection(_Selects, Nystrom):
    pass


@register
class ModifiedNystromSelection(_Selects, ModifiedNystrom):
    pass


@register
class MCMSelection(_Selects, MCM):
    pass


@register
class CV(_Selects, Method):
    """``folds``-fold cross-validation of the learner's error over the grid."""

    name = "cv"
    options = {"folds": {"type": "integer", "minimum": 2, "default": 5}}

    def select(self, trial, X, y, grid):
        folds, task = int(self.opts["folds"]), trial.split.info["task"]
        labels = y if task == "regression" else trial.split.y_train
        return trial.shared(("cv", folds), lambda: (
            selection.cv_path(X, labels, grid, task, mu=trial.params["mu"], cv=folds, seed=trial.seed),
            {"approximation": "cv", "folds": folds}))


class _Selected:
    """fit(X, y): the width (``gamma_``, ``result_``), then the exact learner there (``learner_``,
    ``learner_seconds_``); predict(X): the learner's."""

    def __init__(self, method, trial):
        self.method, self.trial = method, trial

    def fit(self, X, y):
        trial, p = self.trial, self.trial.params
        grid = [float(2.0**g) for g in p["log2_gammas"]]
        self.result_, info = self.method.select(trial, X, y, grid)
        gamma = self.gamma_ = self.result_.best_gamma
        regression = trial.split.info["task"] == "regression"
        learner, extra = (learners.KRR, {"fit_intercept": False}) if regression else (learners.LSSVM, {})
        alpha = p["mu"] * len(trial.split.y_train)
        self.learner_, self.learner_seconds_ = trial.fitted(
            ("learner", gamma), lambda: learner(kernel="gaussian", gamma=gamma, alpha=alpha, approximation="exact",
                                                **extra), X, y if regression else trial.split.y_train)
        self.record_ = {"gamma": gamma, **info, "mu": p["mu"], "log2_gammas": list(p["log2_gammas"])}
        return self

    def predict(self, X):
        return self.learner_.predict(X)
