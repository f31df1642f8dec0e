"""The KRR family: kernel ridge regression methods (the krr and krc studies).

A block without ``approach:`` is :class:`~nystrom_bench.learners.KRR` with the block's options
(``approximation``, ``sampler``, ``n_components``, ``mode``, ...), which the estimator validates.
Targets, ``alpha`` and scoring are the study's; a study with a coord ``m`` sets the number of
landmarks from it.  Another approach (e.g. the scikit-learn pipeline of docs/developer/extending.md) is one more
:class:`~nystrom_bench.methods.Method` with ``family = "krr"``.
"""

from __future__ import annotations

import numbers
import warnings

from ... import learners
from ...methods import Method, check_sampler, family, register

family("krr", key="approach", default="krr")


@register
class KRRMethod(Method):
    family = "krr"
    name = "krr"
    #: the block keys; KRR's own parameter validation checks their values (``n_landmarks``: the deprecated
    #: name of ``n_components``, kept for one release: the estimator warns)
    options = dict.fromkeys(("approximation", "n_components", "n_landmarks", "sampler", "mode", "rank", "alpha"), {})

    def check(self, params, block):
        if "n_landmarks" in self.opts:
            warnings.warn(f"methods.{self.label}: the key 'n_landmarks' is deprecated (the estimators' n_landmarks "
                          "is now n_components); write n_components", FutureWarning, stacklevel=2)
        check_sampler(self.opts.get("sampler", "uniform"))
        learners.KRR(alpha=params.get("alpha", 1e-3), **self.opts)._validate_params()

    def landmark_counts(self, params):
        if self.opts.get("approximation", "nystrom") != "nystrom" or "landmarks" in self.opts:
            return []
        m = self.opts.get("n_components", self.opts.get("n_landmarks", learners.KRR().n_components))
        return [int(m)] if isinstance(m, numbers.Integral) else []  # a fraction never exceeds n

    def estimator(self, trial):
        kern, opts = trial.kernel, dict(self.opts)
        if "m" in trial.coords:
            opts["n_components"] = trial.coords["m"]
        return learners.KRR(kernel=kern.name, **kern.params(), **{"alpha": trial.params["alpha"], "fit_intercept": False,
                                                          **opts}, random_state=trial.rng)
