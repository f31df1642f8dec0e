"""How to run a kernel machine on a Nystrom approximation: GSA vs LLA (vs NCR) (Li et al., geometric view).

Li et al. conjecture that the naive Gram-matrix substitution (GSA: train with K~, predict with the
exact kernel) gives solutions closer to the exact machine's than the low-rank linearisation (LLA:
train and predict on the Nystrom features), NCR being LLA for KRR.  The methods
(:mod:`nystrom_bench.studies.integration.methods`) are the exact machine (integration ``exact``) and one
Nystrom machine per sampler, evaluated per landmark ratio (the coord ``ratio``: c = ratio x the
training size) and integration (the coord ``integration``): a nu-SVM for classification -- one
training serves GSA and LLA (Li et al.'s Algorithm 1) -- and KRR in the modes gsa, lla and ncr for
regression.  gamma and nu (KRR: alpha) are tuned per data set and seed on a validation part
(``validation_fraction`` of the training part, stratified for classes) by the exact machine, over
``gamma = s / median squared distance`` for s in ``gamma_scales`` and nu in ``nus`` (``alphas``);
every machine then trains on the whole training part.

Metrics: ``rel_error`` = ``||w* - w|| / ||w*||`` in the RKHS against the exact machine
(:func:`nystrom_bench.integration.approximation_error`; for the nu-SVM the solutions of the nu-SVM
problem itself, and ``rel_error_decision`` for libsvm's rescaled output), test accuracy (or test
MSE of standardised targets), training and prediction time.  A row from the public API::

    sp = data.load(dataset, seed=seed, scaling=scaling, split=params.get("split"))
    exact = NuSVM(gamma=params["gamma"], nu=params["nu"], approximation="exact").fit(sp.X_train, sp.y_train)
    model = NuSVM(gamma=..., nu=..., sampler=params["sampler"], n_components=params["n_components"],
                  random_state=seeding.rng(seed, study, dataset)).fit(sp.X_train, sp.y_train)
    integration.approximation_error(exact, model, mode=row_integration)
"""

from __future__ import annotations

import numpy as np

from ...integration import approximation_error, approximation_errors
from .. import Study, register
from .methods import CLASSIFICATION, charged_seconds, classify, exact_machine

#: the integrations of a Nystrom machine: a nu-SVM's (classification), KRR's (regression: NCR too)
SVM_MODES, KRR_MODES = ("gsa", "lla"), ("gsa", "lla", "ncr")


def _numbers(description, default, hi=None):
    item = {"type": "number", "exclusiveMinimum": 0, **({"maximum": hi} if hi else {})}
    return {"type": "array", "items": item, "minItems": 1, "uniqueItems": True, "description": description,
            "default": default}


#: the integration study's metrics: name -> (label, lower_is_better)
METRICS = {
    "rel_error": ("Relative RKHS error ||w*-w||/||w*||", True),
    "rel_error_decision": ("Relative RKHS error, libsvm's scale (margin 1)", True),
    "test_accuracy": ("Test accuracy", False),
    "test_mse": ("Test MSE (standardised targets)", True),
    "fit_time": ("Training time (s)", True),
    "predict_time": ("Prediction time (s)", True),
}


@register
class IntegrationStudy(Study):
    name = "integration"
    title = "How to run a kernel machine on a Nystrom approximation: GSA vs LLA (Li et al., geometric view)"
    description = (
        "Li et al. conjecture that Gram-matrix substitution (GSA: train with K~, predict with the exact kernel) "
        "gives solutions closer to the exact kernel machine's than low-rank linearisation (LLA: train and predict "
        "on the Nystrom features; NCR is LLA for KRR). Per data set, seed, landmark ratio (c / training size) and "
        "sampler one Nystrom machine is trained: a nu-SVM (scikit-learn's NuSVC; one training serves GSA and LLA) "
        "for classification, KRR (gsa, lla, ncr) for regression. rel_error = ||w* - w|| / ||w*|| in the RKHS "
        "against the exact machine (nu-SVM: the solutions of the nu-SVM problem; rel_error_decision: libsvm's "
        "output rescaled to margin 1). gamma and nu (KRR: alpha) are tuned per data set and seed on a validation "
        "part by the exact machine. The leverage sampler's tridiagonal reduction of K is computed once per training part "
        "and width and shared by the ratios; a fit that reused it is charged its measured seconds. Paired tests compare samplers against the reference within each integration."
    )
    family = "integration"
    tasks = ("regression", "binary", "multiclass")
    coords = ("ratio", "integration")
    metrics = METRICS
    tested_metrics = ("rel_error", "test_accuracy", "test_mse")
    primary_metric = "rel_error"
    reference_method = "uniform"
    summary_coords = ("integration",)
    figure_coords = ()
    params_schema = {
        "ratios": _numbers("landmark ratios c / training size (a coord)", [0.01, 0.02, 0.05, 0.1], 1.0),
        "gamma_scales": _numbers("widths tried: gamma = scale / median squared distance",
                                 [0.125, 0.25, 0.5, 1.0, 2.0, 4.0]),
        "nus": _numbers("nu tried for the nu-SVM (infeasible ones are left out)", [0.1, 0.2, 0.3, 0.5], 1.0),
        "alphas": _numbers("ridge alphas tried for KRR", [1e-3, 1e-2, 1e-1, 1.0]),
        "validation_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5, "default": 0.2,
                                "description": "the part of the training part the tuning validates on"},
        "tol": {"type": "number", "exclusiveMinimum": 0, "default": 1e-3, "description": "libsvm's tolerance"},
        "max_iter": {"type": "integer", "anyOf": [{"const": -1}, {"minimum": 1}], "default": -1,
                     "description": "libsvm's iteration limit, -1: none"},
    }
    kernel_names = ("gaussian",)
    kernel_keys = ()
    kernel_keys_note = " (gamma is tuned over params.gamma_scales / the median squared distance)"

    def coord_grid(self, params, method, dataset):
        if method.name == "exact":
            return [{"integration": "exact"}]
        modes = SVM_MODES if dataset["task"] in CLASSIFICATION else KRR_MODES  # a nu-SVM has no NCR
        return [{"ratio": r, "integration": m} for r in params["ratios"] for m in modes]

    def targets(self, split):
        if split.info["task"] in CLASSIFICATION:
            return split.y_train, None
        mean, sd = float(np.mean(split.y_train)), float(np.std(split.y_train)) or 1.0
        return (split.y_train - mean) / sd, {"y_mean": mean, "y_sd": sd}

    def predict_options(self, trial):
        nystrom_svm = trial.method.name == "nystrom" and classify(trial)
        return {"mode": trial.coords["integration"]} if nystrom_svm else {}

    def score(self, prediction, trial):
        exact, fit_seconds = exact_machine(trial)
        if classify(trial):
            out = {"test_accuracy": float(np.mean(prediction == trial.split.y_test))}
        else:
            y = (trial.split.y_test - trial.state["y_mean"]) / trial.state["y_sd"]
            out = {"test_mse": float(np.mean((prediction - y) ** 2))}
        if trial.method.name == "exact":
            return {**out, "fit_time": fit_seconds}
        mode, model = trial.coords["integration"], trial.estimator
        out["fit_time"] = trial.fit_time + charged_seconds(model)  # shared work reused: its one computation's seconds
        if not classify(trial):
            return {"rel_error": approximation_error(exact, model), **out}
        errors = trial.shared(("errors", trial.kernel_label, trial.label, trial.coords["ratio"]),
                              lambda: approximation_errors(exact, model))  # both modes of the one fit
        return {"rel_error": errors[(mode, "nu")], "rel_error_decision": errors[(mode, "decision")], **out}
