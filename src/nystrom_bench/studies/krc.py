"""Kernel ridge classification: exact vs Nystrom on binary and multi-class data.

The least-squares classifier of Ding et al. (AAAI 2019; TNNLS 2020) without a bias term: KRR on
one-vs-rest targets in {-1, +1} (one column per class; one column for two
classes), prediction by the largest output (sign for two classes).  Reports test
accuracy; everything else is the KRR study.
"""

from __future__ import annotations

import numpy as np

from . import register
from .krr import KRRStudy


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
        classes = np.unique(split.y_train)
        if len(classes) == 2:
            return np.where(split.y_train == classes[1], 1.0, -1.0), classes
        return np.where(split.y_train[:, None] == classes[None, :], 1.0, -1.0), classes

    def score(self, raw_prediction, classes, split):
        if raw_prediction.ndim == 1:
            pred = np.where(raw_prediction > 0, classes[1], classes[0])
        else:
            pred = classes[np.argmax(raw_prediction, axis=1)]
        return {"test_accuracy": float(np.mean(pred == split.y_test))}
