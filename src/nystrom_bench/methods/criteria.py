"""The criterion family: kernel selection criteria on an approximation K~ (the consistency study).

A block's ``approximation`` (default ``nystrom``) picks how K~ is built -- ``exact`` (K itself,
"Original"), ``optimal`` (best rank k, "OptApp"), ``nystrom`` and ``modified_nystrom`` (with a
landmark ``sampler``), ``mcm`` -- and :meth:`Criterion.build` fills in the papers' defaults
(Ding et al., AAAI 2019 and TNNLS 2020): rank ``k``, ``c = landmark_fraction * l`` landmarks, the
adaptive samplers' round size ``s = adaptive_fraction * c``, MCM's 3 levels.

One trial's estimator computes every criterion of the study at the trial's width on one K~
(:func:`nystrom_bench.selection.criterion_values`): its ``fit`` keeps ``values_`` =
``{criterion: (value, seconds)}`` and ``exact_``, the same on K -- shared by every method of a
(data set, seed) through ``trial.shared(("exact", gamma))``, which the ``exact`` method itself
reuses.  :meth:`Criterion.fit_key` is the width, so the criteria (a coord) of one (method,
width) come from one K~ and share its landmarks.
"""

from __future__ import annotations

import numpy as np

from .. import papers, selection
from . import Method, check_sampler, family, register

family("criterion", key="approximation", default="nystrom")

#: the papers' settings (TNNLS 2020 Sec. VII): MCM's levels
_TNNLS = papers.table("ding_tnnls2020", "settings")

_COUNT = {"type": "integer", "minimum": 1}
_RANK = {**_COUNT, "description": "k of OptApp and the Nystrom family (default: params.k)"}
_NYSTROM = {
    "sampler": {"type": "string", "default": "uniform", "description": "landmark sampler (nystrom_bench.sampling)"},
    "rank": _RANK,
    "n_landmarks": {"anyOf": [_COUNT, {"type": "number", "exclusiveMinimum": 0, "maximum": 1}],
                    "description": "a count, or a fraction of l (default: params.landmark_fraction)"},
    "s": {**_COUNT, "description": "the adaptive samplers' round size (default: params.adaptive_fraction * c)"},
}


def settings(params, y):
    """The criteria's settings of a trial (``y``: the training targets)."""
    return {"mu": params["mu"], "noise_sd": params["noise_fraction"] * float(np.std(y)),
            "spectrum": params["spectrum"]}


def exact_values(trial, X, y, gamma, common):
    """Every criterion of width ``gamma`` on K: once per (data set, seed) and width."""
    return trial.shared(("exact", gamma), lambda: selection.criterion_values(
        X, y, gamma, "exact", tuple(trial.params["criteria"]), **common))


class Criterion(Method):
    """Base of the criterion family: an approximation and its build options."""

    family = "criterion"

    def build(self, params, n):
        """``selection.criterion_values`` options for ``n`` training points (the papers' defaults filled in)."""
        return {}

    def values(self, trial, X, y, gamma, common, opts):
        """``{criterion: (value, seconds)}`` of width ``gamma`` on this method's K~."""
        return selection.criterion_values(X, y, gamma, self.name, tuple(trial.params["criteria"]), seed=trial.rng,
                                          **common, **opts)

    def estimator(self, trial):
        return _Values(self, trial)

    def fit_key(self, trial):
        return trial.coords["log2_gamma"]

    def record(self, est, trial):
        return dict(est.record_)


class _Values:
    """fit(X, y): the trial's criteria on this method's K~ (``values_``) and on K (``exact_``)."""

    def __init__(self, method, trial):
        self.method, self.trial = method, trial

    def fit(self, X, y):
        gamma = float(2.0 ** self.trial.coords["log2_gamma"])
        common = settings(self.trial.params, y)
        opts = self.method.build(self.trial.params, len(X))
        self.exact_ = exact_values(self.trial, X, y, gamma, common)
        self.values_ = self.method.values(self.trial, X, y, gamma, common, opts)
        self.record_ = {"gamma": gamma, "approximation": self.method.name, **opts, **common}
        return self


@register
class Exact(Criterion):
    name = "exact"

    def values(self, trial, X, y, gamma, common, opts):
        return exact_values(trial, X, y, gamma, common)


@register
class Optimal(Criterion):
    name = "optimal"
    options = {"rank": _RANK}

    def build(self, params, n):
        return {"rank": int(self.opts.get("rank", params["k"]))}


@register
class Nystrom(Criterion):
    name = "nystrom"
    options = _NYSTROM

    def check(self, params, block):
        check_sampler(self.opts["sampler"])

    def landmark_counts(self, params):
        m = self.opts.get("n_landmarks")
        return [int(m)] if isinstance(m, int) else []

    def build(self, params, n):
        sampler = self.opts["sampler"]
        c = selection.landmark_count(self.opts.get("n_landmarks", params["landmark_fraction"]), n)
        opts = {"rank": int(self.opts.get("rank", params["k"])), "sampler": sampler, "n_landmarks": c}
        if sampler.startswith("adaptive"):
            opts["sampler_options"] = {"s": int(self.opts.get("s", max(1, round(params["adaptive_fraction"] * c))))}
        return opts


@register
class ModifiedNystrom(Nystrom):
    name = "modified_nystrom"


@register
class MCM(Criterion):
    name = "mcm"
    options = {"levels": {**_COUNT, "default": _TNNLS["mcm_levels"]}}

    def build(self, params, n):
        return {"levels": int(self.opts["levels"])}
