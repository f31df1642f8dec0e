"""Kernel ridge classification: exact vs Nystrom on binary and multi-class data.

The least-squares classifier of Ding et al. (AAAI 2019; TNNLS 2020) without a bias term: KRR on
one-vs-rest targets in {-1, +1} (one column per class; one column for two
classes), prediction by the largest output (sign for two classes): ``learners.KRRClassifier``'s
``ovr_targets`` / ``ovr_predict``.  Reports test
accuracy; everything else is the KRR study.
"""

from __future__ import annotations

import numpy as np

from .. import register
from ..krr.study import KRRStudy


@register
class KRCStudy(KRRStudy):
    name = "krc"
    title = "Kernel ridge classification: exact vs Nystrom"
    description = (
        "Least-squares kernel classification (KRR on one-vs-rest +-1 targets, arg-max prediction) with the "
        "exact kernel matrix against Nystrom approximations, paired over data sets and seeds."
    )
    tasks = ("binary", "multiclass")
    metrics = {
        "test_accuracy": ("Test accuracy", False),
        "fit_time": ("Fit time (s)", True),
        "predict_time": ("Predict time (s)", True),
    }
    primary_metric = "test_accuracy"

    def targets(self, split):
        from ...learners.krr import ovr_targets

        return ovr_targets(split.y_train)

    def score(self, prediction, trial):
        from ...learners.krr import ovr_predict

        return {"test_accuracy": float(np.mean(ovr_predict(prediction, trial.state) == trial.split.y_test))}
