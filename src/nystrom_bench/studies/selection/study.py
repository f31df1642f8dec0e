"""Approximate kernel selection (Ding et al., TNNLS 2020, Tables I-II).

On the training half, the Gaussian width is chosen from a log2 grid by minimising a criterion
(the coord ``criterion``: C_ree or C_ipe) computed on the exact kernel matrix ("Accurate"), on
the MCM approximation, or on a Nystrom approximation (uniform landmarks as the paper; Adapt-MS
landmarks beyond it) -- or, as a practitioner would, by 5-fold cross-validation of the learner's
own error (``approximation: cv``; the same for both criteria, computed once); the
:mod:`~nystrom_bench.studies.selection.methods` family.  Then the learner is trained on the training half
with the chosen width and tested on the other half: exact KRR with ``alpha = mu l`` on
standardised targets (test MSE in the targets' own units) for regression, the exact
:class:`~nystrom_bench.learners.LSSVM` with ``mu`` for classification (test accuracy).
``selection_seconds`` is the time of the whole grid search, the paper's "Time"; ``fit_time`` the
learner's fit at the chosen width.  Settings and targets are the consistency study's.

The report (:mod:`nystrom_bench.studies.selection.section`) gives Tables I and II in the paper's layout
with the paper's numbers beside ours where our data set is the paper's (or an embedded copy of
it), and a Wilcoxon signed-rank test over data sets of each approximate method against Accurate.
"""

from __future__ import annotations

import copy

import numpy as np

from .. import register
from ..consistency.study import ConsistencyStudy
from .methods import library_call


@register
class SelectionStudy(ConsistencyStudy):
    name = "selection"
    title = "Approximate kernel selection (Ding et al., TNNLS 2020, Tables I-II)"
    description = (
        "The Gaussian width is chosen on the training half from a log2 grid by minimising C_ree or C_ipe on the "
        "exact kernel matrix (Accurate), on MCM or on Nystrom approximations -- or by 5-fold cross-validation "
        "of the learner's error (cv, the same for both criteria) -- then exact KRR (alpha = mu l, standardised "
        "targets; test MSE in the targets' units) or the exact LSSVM (mu; test accuracy) is trained on the "
        "training half with that width and tested on the other half. selection_seconds is the whole grid "
        "search (the paper's Time)."
    )
    family = "selection"
    coords = ("criterion",)
    curve_coords = ()
    #: its own findings question (the consistency kind's is not asked here): it takes the rankings with ``cv``,
    #: which "Which approximation?" and "Exact or Nystrom?" then leave alone
    questions = ({"id": "selection", "question": "Approximate or cross-validated kernel selection?",
                  "role": ["approximation"], "free": ["sampler"], "needs": ["cv"], "exclusive": True, "time": True,
                  "before": "solver", "guide": {"task": "kernel width", "budget": "a grid of widths",
                                               "use": "select with"}},)
    metrics = {
        "test_mse": ("Test MSE", True),
        "test_accuracy": ("Test accuracy", False),
        "selection_seconds": ("Selection time over the grid (s)", True),
        "log2_gamma_selected": ("Selected log2 gamma", True),
        "fit_time": ("Learner fit time (s)", True),
    }
    tested_metrics = ("test_mse", "test_accuracy", "selection_seconds")
    primary_metric = "test_accuracy"
    reference_method = "accurate"
    summary_coords = None
    params_schema = copy.deepcopy({k: v for k, v in ConsistencyStudy.params_schema.items() if k != "train_sizes"})
    predicts = True

    def check_data(self, params, dataset, n_train):
        return None

    def method_calls(self, block):
        return {label: library_call(opts) for label, opts in block["methods"].items()}

    def coord_grid(self, params, method, dataset):
        return [{"criterion": c} for c in params["criteria"]]

    def score(self, prediction, trial):
        sp, est = trial.split, trial.estimator
        if sp.info["task"] == "regression":
            st = trial.state
            metrics = {"test_mse": float(np.mean((prediction * st["y_sd"] + st["y_mean"] - sp.y_test) ** 2))}
        else:
            metrics = {"test_accuracy": float(np.mean(prediction == sp.y_test))}
        return {**metrics, "fit_time": est.learner_seconds_, "selection_seconds": est.result_.seconds,
                "log2_gamma_selected": float(np.log2(est.gamma_))}
