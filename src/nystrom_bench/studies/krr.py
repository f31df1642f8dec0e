"""Kernel ridge regression: exact vs Nystrom (the walking-skeleton study).

For each seed's split, each kernel and each method, fit :class:`~nystrom_bench.learners.KRR`
on the centred training targets and report test MSE, fit and predict time.
Every method of a (dataset, seed) draws its landmarks from the same stream
(common random numbers), so GSA and LLA see the same landmarks and the paired
tests isolate the effect of the method.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..learners import KRR
from . import Study, check_sampler, register


@register
class KRRStudy(Study):
    name = "krr"
    title = "Kernel ridge regression: exact vs Nystrom"
    description = (
        "Kernel ridge regression with the exact kernel matrix (Cholesky) against Nystrom "
        "approximations (Woodbury solve), paired over data sets and seeds."
    )
    tasks = ("regression",)
    metrics = {
        "test_mse": ("Test MSE", True),
        "fit_time": ("Fit time (s)", True),
        "predict_time": ("Predict time (s)", True),
    }
    primary_metric = "test_mse"
    reference_method = "exact"
    param_defaults = {"alpha": 1e-3}
    #: ``n_landmarks``: the estimators' deprecated name of ``n_components`` (kept for one release: the
    #: estimator warns)
    method_keys = ("approximation", "n_components", "n_landmarks", "sampler", "mode", "rank", "alpha")

    def check_params(self, params):
        super().check_params(params)
        KRR(alpha=params.get("alpha", 1e-3))._validate_params()

    def check_method(self, method_name, method_cfg, study_cfg):
        if "n_landmarks" in (method_cfg or {}):
            import warnings

            warnings.warn(f"methods.{method_name}: the key 'n_landmarks' is deprecated (the estimators' n_landmarks "
                          "is now n_components); write n_components", FutureWarning, stacklevel=2)
        check_sampler(method_cfg.get("sampler", "uniform"))
        super().check_method(method_name, method_cfg, study_cfg)

    def landmark_counts(self, params, method_name, method_cfg):
        if method_cfg.get("approximation", "nystrom") != "nystrom" or "landmarks" in method_cfg:
            return []
        m = method_cfg.get("n_components", method_cfg.get("n_landmarks", KRR().n_components))
        return [int(m)] if isinstance(m, numbers.Integral) else []  # a fraction never exceeds n

    def make_estimator(self, kernel, method_cfg, coords, params, rng):
        return KRR(kernel=kernel.name, **kernel.params(), **{"alpha": params["alpha"], "fit_intercept": False, **method_cfg},
                   random_state=rng)

    # hooks a subclass changes to learn another target (see KRCStudy)
    def targets(self, split):
        y_mean = split.y_train.mean()
        return split.y_train - y_mean, y_mean

    def score(self, raw_prediction, state, split):
        return {"test_mse": float(np.mean((raw_prediction + state - split.y_test) ** 2))}
