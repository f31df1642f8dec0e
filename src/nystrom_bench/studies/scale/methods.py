"""The scale family: kernel ridge regression on a nested subset of n points, m landmarks (the scale study).

A block's ``approach`` picks the method: ``nystrom`` (default; :class:`~nystrom_bench.learners.KRR`, LLA,
with ``solver``, ``dtype``, ``cg_tol``, ``cg_max_iter``), ``sklearn`` (scikit-learn's ``Nystroem`` on the
same landmarks + ``Ridge``) or ``exact`` (exact KRR, no m).  Every method fits ``alpha = lam * n``; the
nystrom and sklearn methods of a (data set, seed, n, m) use the same m landmarks (:func:`landmarks`).
Each method also says which (n, m) cells it runs at (:meth:`ScaleMethod.grid`): scikit-learn and exact
KRR only where their memory (:func:`sklearn_bytes`, :func:`exact_bytes`) fits ``params.max_memory_mb``.
"""

from __future__ import annotations

import numpy as np

from ... import learners
from ...methods import Method, family, register

family("scale", key="approach", default="nystrom")

#: KRR's own defaults of the options a scale block may set, literal so that importing the kind does not import
#: scikit-learn (tests/test_scale_study.py checks them against ``KRR().get_params()``)
KRR_DEFAULTS = {"solver": "auto", "dtype": "float64", "cg_tol": 1e-6, "cg_max_iter": 100}


def sizes(value):
    """A positive integer or a list of them (``params.n``, ``params.m``) as a sorted list without repeats."""
    return sorted(set(value if isinstance(value, list) else [value]))


def sklearn_bytes(n, m):
    """What scikit-learn's Nystroem + Ridge holds at its peak: the n x m features twice (transform's
    K(X, Z) and its product with the normalisation) and Ridge's centred copy -- three n x m float64."""
    return 3 * 8 * n * m


def exact_bytes(n):
    """Exact KRR's peak: K and its Cholesky factor, two n x n float64."""
    return 2 * 8 * n * n


def draws(trial):
    """``(permutation of the training part, landmark seed)`` of this (data set, seed), drawn in that
    order from the (data set, seed)'s own stream: the same whichever method asks first."""
    def draw():
        rng = trial.stream()
        perm = rng.permutation(len(trial.split.y_train))
        return perm, int(rng.integers(2**31))

    return trial.shared("draws", draw)


def landmarks(trial):
    """The m landmark indices into the trial's n-point subset, the same for every method of a (seed, n, m)."""
    n, m = trial.coords["n"], trial.coords["m"]
    return trial.shared(("landmarks", n, m), lambda: np.sort(
        np.random.default_rng(draws(trial)[1]).choice(n, m, replace=False)))


class ScaleMethod(Method):
    family = "scale"
    options = {}

    def grid(self, ns, ms, params):
        """The (n, m) cells this method runs at."""
        return [{"n": n, "m": m} for n in ns for m in ms if m <= n]

    def landmark_counts(self, params):
        return sizes(params["m"])

    @staticmethod
    def alpha(trial):
        return trial.params["lam"] * trial.coords["n"]


@register
class NystromKRR(ScaleMethod):
    """KRR (LLA) on the shared landmarks; a row records the solver it ran and CG's iterations."""

    name = "nystrom"
    options = {"solver": {"enum": ["auto", "direct", "cg"], "default": KRR_DEFAULTS["solver"]},
               "dtype": {"enum": ["float64", "float32"], "default": KRR_DEFAULTS["dtype"]},
               "cg_tol": {"type": "number", "minimum": 0, "default": KRR_DEFAULTS["cg_tol"]},
               "cg_max_iter": {"type": "integer", "minimum": 1, "default": KRR_DEFAULTS["cg_max_iter"]}}
    approximation = "nystrom"

    def estimator(self, trial):
        est = learners.KRR(kernel="gaussian", gamma=trial.kernel.gamma, approximation=self.approximation, mode="lla",
                  alpha=self.alpha(trial), **self.opts)
        return est.set_params(landmarks=landmarks(trial)) if "m" in trial.coords else est

    def record(self, est, trial):
        out = {"approach": self.name, **super().record(est, trial)}
        if hasattr(est, "n_features_in_"):  # fitted: what it ran
            out["solver"] = getattr(est, "solver_", "exact")
            if getattr(est, "n_iter_", None) is not None:
                out["n_iter"] = est.n_iter_
        return out


@register
class ExactKRR(NystromKRR):
    """Exact KRR (Cholesky of the n x n matrix) up to ``params.exact_max_n``; no m."""

    name = "exact"
    options = {}
    approximation = "exact"

    def grid(self, ns, ms, params):
        return [{"n": n} for n in ns
                if n <= params["exact_max_n"] and exact_bytes(n) <= params["max_memory_mb"] * 2**20]

    def landmark_counts(self, params):
        return []


class _NystroemRidge:
    """scikit-learn's Nystroem on given landmark points, then Ridge on its features."""

    def __init__(self, landmarks, gamma, alpha):
        self.landmarks, self.gamma, self.alpha = landmarks, gamma, alpha

    def fit(self, X, y):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        self.nystroem_ = Nystroem(kernel="rbf", gamma=self.gamma, n_components=len(self.landmarks),
                                  random_state=0).fit(X[self.landmarks])
        self.ridge_ = Ridge(alpha=self.alpha).fit(self.nystroem_.transform(X), y)
        return self

    def predict(self, X):
        return self.ridge_.predict(self.nystroem_.transform(X))


@register
class SklearnNystroem(ScaleMethod):
    """scikit-learn's Nystroem + Ridge on the shared landmarks, where its n x m features fit the memory."""

    name = "sklearn"

    def grid(self, ns, ms, params):
        limit = params["max_memory_mb"] * 2**20
        return [c for c in super().grid(ns, ms, params) if sklearn_bytes(c["n"], c["m"]) <= limit]

    def estimator(self, trial):
        return _NystroemRidge(landmarks(trial), trial.kernel.gamma, self.alpha(trial))

    def record(self, est, trial):
        return {"approach": self.name, "alpha": est.alpha, "gamma": est.gamma}
