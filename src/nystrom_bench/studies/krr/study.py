"""Kernel ridge regression: exact vs Nystrom (the walking-skeleton study).

For each seed's split, each kernel and each method (a :mod:`~nystrom_bench.studies.krr.methods` block:
:class:`~nystrom_bench.learners.KRR`'s options), fit KRR on the centred training targets and
report test MSE, fit and predict time.  Every method of a (dataset, seed) draws its landmarks
from the same stream (common random numbers), so GSA and LLA see the same landmarks and the
paired tests isolate the effect of the method.
"""

from __future__ import annotations

import numpy as np

from .. import Study, register


@register
class KRRStudy(Study):
    name = "krr"
    title = "Kernel ridge regression: exact vs Nystrom"
    description = (
        "Kernel ridge regression with the exact kernel matrix (Cholesky) against Nystrom "
        "approximations (Woodbury solve), paired over data sets and seeds."
    )
    family = "krr"
    tasks = ("regression",)
    metrics = {
        "test_mse": ("Test MSE", True),
        "fit_time": ("Fit time (s)", True),
        "predict_time": ("Predict time (s)", True),
    }
    primary_metric = "test_mse"
    reference_method = "exact"
    params_schema = {"alpha": {"type": "number", "exclusiveMinimum": 0, "default": 1e-3}}

    # hooks a subclass changes to learn another target (see KRCStudy)
    def targets(self, split):
        y_mean = split.y_train.mean()
        return split.y_train - y_mean, y_mean

    def score(self, prediction, trial):
        return {"test_mse": float(np.mean((prediction + trial.state - trial.split.y_test) ** 2))}
