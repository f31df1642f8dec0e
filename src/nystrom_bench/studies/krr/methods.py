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

#: the values of KRR's parameter constraints (``KRR._parameter_constraints``) that a block's options plainly meet:
#: scikit-learn's check imports scikit-learn, 1.1 CPU-s of every Snakemake start-up (issue 39), so it runs only
#: where an option is not one of these (tests/test_krr_config_check.py keeps the two in step)
PLAIN_CHOICES = {"approximation": {"exact", "nystrom"}, "mode": {"gsa", "lla", "ncr"}}


def _plainly_valid(opts, alpha):
    """Whether ``KRR(alpha=alpha, **opts)`` plainly passes KRR's parameter validation: a positive finite ``alpha``;
    ``approximation`` and ``mode`` among :data:`PLAIN_CHOICES`; ``n_components`` an int >= 1 or a float in (0, 1];
    ``rank`` an int >= 1 or None; ``sampler`` a name.  False for anything else (other keys, other types): then
    scikit-learn's own check decides, with its message."""
    import math

    def count(v):
        return (type(v) is int and v >= 1) or (type(v) is float and 0 < v <= 1)

    def choice(key):
        return lambda v: type(v) is str and v in PLAIN_CHOICES[key]

    plain = {"approximation": choice("approximation"), "mode": choice("mode"), "n_components": count,
             "rank": lambda v: v is None or (type(v) is int and v >= 1), "sampler": lambda v: type(v) is str}
    return (type(alpha) in (int, float) and math.isfinite(alpha) and alpha > 0
            and all(k in plain and plain[k](v) for k, v in opts.items()))


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
        alpha = params.get("alpha", 1e-3)
        if not _plainly_valid(self.opts, alpha):  # else the estimator's own check, and its error
            learners.KRR(alpha=alpha, **self.opts)._validate_params()

    def landmark_counts(self, params):
        if self.opts.get("approximation", "nystrom") != "nystrom" or "landmarks" in self.opts:
            return []
        opts = self.opts  # KRR's default only where the block sets no count (it imports scikit-learn)
        m = opts["n_components"] if "n_components" in opts else opts.get("n_landmarks") if "n_landmarks" in opts \
            else learners.KRR().n_components
        return [int(m)] if isinstance(m, numbers.Integral) else []  # a fraction never exceeds n

    def estimator(self, trial):
        kern, opts = trial.kernel, dict(self.opts)
        if "m" in trial.coords:
            opts["n_components"] = trial.coords["m"]
        return learners.KRR(kernel=kern.name, **kern.params(), **{"alpha": trial.params["alpha"], "fit_intercept": False,
                                                          **opts}, random_state=trial.rng)
