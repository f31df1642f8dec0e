"""Kernel ridge regression: exact vs Nystrom (the walking-skeleton study).

For each seed's split, each kernel and each method, fit :class:`~nystrom_bench.learners.KRR`
on the centred training targets and report test MSE, fit and predict time.
Every method of a (dataset, seed) draws its landmarks from the same stream
(common random numbers), so GSA and LLA see the same landmarks and the paired
tests isolate the effect of the method.
"""

from __future__ import annotations

import time

import numpy as np

from .. import data, kernels, seeding
from ..learners import KRR
from . import Study, register

KRR_METHOD_KEYS = {"approximation", "n_landmarks", "sampler", "mode", "rank", "alpha"}


def resolve_kernel(spec, X):
    """Kernel block of the config -> ``KRR`` keyword arguments, widths resolved on X."""
    spec = dict(spec)
    name = spec.pop("kernel")
    scale = float(spec.pop("scale", 1.0))
    out = {"kernel": name}
    for key, value in spec.items():
        if key == "gamma":
            out["gamma"] = kernels.resolve_width(value, X, scale)
        elif key == "sigma":
            out["sigma"] = (
                float(np.sqrt(scale / kernels.resolve_width(value, X))) if isinstance(value, str) else float(value)
            )
        else:
            out[key] = value
    return out


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
    known_params = ("alpha",)
    reference_method = "exact"

    def check_method(self, method_name, method_cfg, study_cfg):
        unknown = set(method_cfg) - KRR_METHOD_KEYS
        if unknown:
            raise ValueError(
                f"method {method_name!r}: unknown keys {sorted(unknown)}; allowed: {sorted(KRR_METHOD_KEYS)}"
            )
        from .. import sampling

        sampler = method_cfg.get("sampler", "uniform")
        if sampler not in sampling.available():
            raise ValueError(
                f"method {method_name!r}: unknown sampler {sampler!r}; choose one of {', '.join(sampling.available())}"
            )
        KRR(**method_cfg)._validate_params()

    # hooks a subclass changes to learn another target (see KRCStudy)
    def targets(self, split):
        """Training targets for the learner and the state :meth:`score` needs."""
        y_mean = split.y_train.mean()
        return split.y_train - y_mean, y_mean

    def score(self, raw_prediction, state, split):
        """Metrics from the learner's raw predictions on the test part."""
        return {"test_mse": float(np.mean((raw_prediction + state - split.y_test) ** 2))}

    def run(self, study, cfg, dataset, X, y, splits, log=None):
        rows = []
        alpha = float(cfg.get("params", {}).get("alpha", 1e-3))
        for seed in cfg["seeds"]:
            split = data.apply_split(dataset, seed, X, y, splits[seed], cfg.get("scaling", "standardize"))
            y_train, state = self.targets(split)
            for klabel, kspec in cfg["kernels"].items():
                kparams = resolve_kernel(kspec, split.X_train)
                for mlabel, mcfg in cfg["methods"].items():
                    params = {"alpha": alpha, **mcfg}
                    est = KRR(**kparams, **params, random_state=seeding.rng(seed, study, dataset))
                    est.fit(split.X_train, y_train)
                    t0 = time.perf_counter()
                    raw = est.predict(split.X_test)
                    predict_time = time.perf_counter() - t0
                    metrics = self.score(raw, state, split)
                    logged = {k: v for k, v in est.get_params().items() if k not in ("landmarks", "random_state")}
                    rows.append({
                        "dataset": dataset, "method": mlabel, "kernel": klabel, "seed": int(seed),
                        "params": {**logged, "n_train": len(y_train), "n_test": len(split.y_test),
                                   "n_features": split.X_train.shape[1]},
                        "metrics": {**metrics, "fit_time": est.fit_time_, "predict_time": predict_time},
                    })
                    if log:
                        log.info("%s seed=%s kernel=%s method=%s: %s fit=%.3fs", dataset, seed, klabel, mlabel,
                                 ", ".join(f"{k}={v:.5g}" for k, v in metrics.items()), est.fit_time_)
        return rows
