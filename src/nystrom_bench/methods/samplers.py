"""The samplers family: one landmark sampler per method block (the ``samplers`` study).

A block ``{sampler: NAME}`` (optionally ``options: {...}``, the sampler's own keyword options) is
:class:`LandmarkMethod`: it draws ``m`` landmarks with :func:`nystrom_bench.sampling.sample` on the
training part, builds the Nystrom factor ``F`` (``F F^T = K~``) with
:func:`nystrom_bench.spectrum.nystrom_factor` -- reusing the sampler's own factor where it reports one
(``info["factor"]``: RPCholesky, greedy pivoted Cholesky), so no kernel column is evaluated twice -- and
fits kernel ridge regression in LLA mode (Li et al.'s "linearised" use of the approximation,
:class:`~nystrom_bench.learners.KRR` ``mode="lla"``) on the same landmarks at the study's ``alpha``.

Why a family of its own rather than the ``krr`` family: a KRR block fits one estimator that draws its
landmarks inside ``fit`` and keeps neither the sampler's cost (kernel entries, seconds) nor the factor;
this study scores the approximation itself, so its estimator keeps all three.  Every registered
sampler is one block away (the ``sampler`` key is checked against :func:`nystrom_bench.sampling.available`).
"""

from __future__ import annotations

import numpy as np

from .. import kernels, sampling
from ..learners import KRR
from . import Method, check_sampler, family, register

family("samplers", key=None, default="landmarks")


def landmark_kind(landmarks):
    """What a sampler returned: ``"indices"`` (rows of X), ``"points"`` (e.g. k-means centres) or ``"sketch"``."""
    if isinstance(landmarks, sampling.Sketch):
        return "sketch"
    return "indices" if np.asarray(landmarks).ndim == 1 else "points"


def cannot_run(sampler, X):
    """Why ``sampler`` cannot run on X (a sentence), or None: more rows than the ``max_n`` it declares (a
    sampler that forms K), or a sparse X for a sampler registered with ``sparse=False``."""
    func = sampling._REGISTRY.get(sampler)
    limit = getattr(func, "max_n", None)
    if limit is not None and X.shape[0] > int(limit):
        return f"sampler {sampler!r} takes at most {int(limit)} points (it forms K); the training part has {X.shape[0]}"
    if kernels.issparse(X) and not getattr(func, "accepts_sparse", True):
        return f"sampler {sampler!r} needs a dense X"
    return None


class LandmarkRun:
    """One draw of landmarks and everything the samplers study measures of it.

    ``fit(X, y)`` draws ``m`` landmarks with ``sampler`` (``y_sampler``: the targets a sampler that needs
    them gets -- class labels for classification, not the one-vs-rest matrix ``y``), builds the factor
    ``factor_`` (n x r, ``F F^T`` the Nystrom approximation of ``K(X, X)``) and fits KRR in LLA mode on
    ``y`` with the same landmarks; ``predict`` is that KRR's.  Where the sampler cannot run on X
    (:func:`cannot_run`, or the sampler refuses the draw with a ValueError naming itself, e.g. a k-DPP of m
    points on a K of numerical rank below m, which has no such subset), ``fit`` only sets ``skipped_`` (the
    reason) and ``predict`` returns None.

    Attributes after ``fit``: ``landmarks_``, ``factor_``, ``sampling_seconds_`` (the sampler's wall time),
    ``kernel_entries_`` -- the kernel entries the sampler evaluated (:func:`nystrom_bench.sampling.sample`'s
    ``info``) plus those :func:`~nystrom_bench.spectrum.nystrom_factor` evaluated to build ``F`` (``C = K(X,
    landmarks)`` and ``W``; none where the sampler returned its factor) -- and ``model_`` (the KRR).  The
    KRR's own kernel evaluations (it forms ``C`` again) are the learner's, not the approximation's, and are
    not counted.
    """

    def __init__(self, sampler, m, kernel, alpha, rng, y_sampler=None, options=None):
        self.sampler, self.m, self.kernel, self.alpha = sampler, int(m), kernel, float(alpha)
        self.rng, self.y_sampler, self.options = rng, y_sampler, dict(options or {})

    def fit(self, X, y):
        from .. import spectrum

        self.skipped_ = cannot_run(self.sampler, X)
        if self.skipped_:
            return self
        info = {}
        extra = {"y": self.y_sampler} if sampling.needs_y(self.sampler) else {}
        try:
            L = sampling.sample(self.sampler, X, self.kernel, self.m, seed=self.rng, info=info, **extra,
                                **self.options)
        except ValueError as exc:  # the sampler says it cannot draw here (a k-DPP of K of rank below m): no row
            if not str(exc).startswith(f"sampler {self.sampler!r}"):
                raise
            self.skipped_ = str(exc)
            return self
        counted = kernels.counting(self.kernel)
        self.factor_ = np.asarray(spectrum.nystrom_factor(X, counted, L, factor=info.get("factor")))
        self.landmarks_ = L
        self.sampling_seconds_ = float(info["seconds"])
        self.kernel_entries_ = int(info["kernel_entries"]) + int(counted.entries)
        kern = self.kernel
        self.model_ = KRR(kernel=kern.name, **kern.params(), alpha=self.alpha, approximation="nystrom", mode="lla",
                          landmarks=L, fit_intercept=False).fit(X, y)
        return self

    def predict(self, X):
        return None if self.skipped_ else self.model_.predict(X)


@register
class LandmarkMethod(Method):
    """A landmark sampler of :mod:`nystrom_bench.sampling`, by name (module docstring)."""

    family = "samplers"
    name = "landmarks"
    options = {
        "sampler": {"type": "string", "default": "uniform",
                    "description": "a registered sampler (python -c 'from nystrom_bench import sampling; "
                                   "print(sampling.available())')"},
        "options": {"type": "object", "default": {}, "description": "the sampler's own keyword options"},
    }

    def check(self, params, block):
        check_sampler(self.opts["sampler"])

    def estimator(self, trial):
        split = trial.split
        y_sampler = split.y_train if split.info.get("task") != "regression" else trial.y_fit
        return LandmarkRun(self.opts["sampler"], trial.coords["m"], trial.kernel, trial.params["alpha"], trial.rng,
                           y_sampler=y_sampler, options=self.opts["options"])

    def record(self, est, trial):
        if est.skipped_:
            return {"sampler": self.opts["sampler"], "skipped": est.skipped_}
        out = {"sampler": self.opts["sampler"], "landmark_kind": landmark_kind(est.landmarks_),
               "rank": int(est.factor_.shape[1])}
        if self.opts["options"]:
            out["sampler_options"] = dict(self.opts["options"])
        return out
