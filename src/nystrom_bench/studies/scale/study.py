"""Scale: time, memory and accuracy of Nystrom KRR as n and m grow, against scikit-learn and exact KRR.

For every seed, training size ``n`` (a nested random subset of the training part) and landmark
count ``m`` (the study's coords), each method (:mod:`nystrom_bench.studies.scale.methods`: ``approach``
``nystrom`` -- KRR, LLA, with ``solver``/``dtype``/``cg_tol``/``cg_max_iter`` --, ``sklearn`` or
``exact``) fits kernel ridge regression with ``alpha = lam * n`` (FALKON's ``lambda n``) on the
same ``m`` uniform landmarks (common random numbers), then predicts the test part.  scikit-learn
runs only where its n x m features fit ``params.max_memory_mb``, exact KRR only for
``n <= params.exact_max_n`` (its rows have no ``m``).

Each (method, n, m) cell runs in a forked child (``isolated``): fit and predict are timed there and
``peak_mem_mb`` is the memory the cell added at its peak (the resident set's high-water mark above
its start: BLAS buffers and temporaries included, the data not).  A cell past
``params.cell_timeout`` is stopped and recorded as such.  The report (:mod:`nystrom_bench.studies.scale.section`)
fits the exponent of ``time ~ n^a`` per method on log-log axes.
"""

from __future__ import annotations

import numpy as np

from .. import Study, register
from .methods import draws, sizes

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}


def _sizes(description, default):
    """The schema of a positive integer or a non-empty list of them."""
    return {"oneOf": [{"type": "integer", "minimum": 1},
                      {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}}],
            "description": description, "default": default}


@register
class ScaleStudy(Study):
    name = "scale"
    title = "Scale: Nystrom KRR from 10^4 to 10^6 points"
    description = (
        "Fit time, predict time, peak memory and test RMSE of Nystrom KRR (LLA) solved directly or by "
        "FALKON-preconditioned conjugate gradient, in float64 and float32, against scikit-learn's Nystroem + Ridge "
        "(the same landmarks) and exact KRR, as the training size n and the number of landmarks m grow; "
        "alpha = lam n. Each cell runs in its own process; peak memory is what it added to the resident set."
    )
    family = "scale"
    tasks = ("regression",)
    metrics = {
        "test_rmse": ("Test RMSE", True),
        "fit_time": ("Fit time (s)", True),
        "predict_time": ("Predict time (s)", True),
        "peak_mem_mb": ("Peak memory added (MiB)", True),
    }
    tested_metrics = ("test_rmse", "fit_time", "peak_mem_mb")
    primary_metric = "fit_time"
    reference_method = "direct"
    coords = ("n", "m")
    curve_coords = ("n", "m")
    figure_coords = ()  # the section draws its own log-log figures
    #: paired tests and mean +- sd tables per m, paired over sizes n and seeds (one seed per (n, m) cell
    #: would give one-pair tests); the tables by size are the section's
    summary_coords = ("m",)
    params_schema = {
        "n": _sizes("training sizes (nested random subsets)", [10000, 30000, 100000]),
        "m": _sizes("landmark counts", [1000]),
        "lam": {**_POSITIVE, "description": "alpha = lam * n", "default": 1e-6},
        "exact_max_n": {"type": "integer", "minimum": 0, "default": 20000},
        "max_memory_mb": {**_POSITIVE, "description": "scikit-learn's and exact KRR's cells above it are not run",
                          "default": 16000},
        "cell_timeout": {**_POSITIVE, "description": "seconds per (method, n, m) cell", "default": 1800},
    }
    kernel_names = ("gaussian", "rbf")
    isolated = True

    def check_data(self, params, dataset, n_train):
        big = max(sizes(params["n"]))
        if n_train is not None and big > n_train:
            return f"n = {big} exceeds the {n_train} training points of {dataset!r}; lower params.n"
        return None

    def coord_grid(self, params, method, dataset):
        return method.grid(sizes(params["n"]), sizes(params["m"]), params)

    def fit_data(self, trial):
        """The first n of one random permutation of the training part per (data set, seed): nested
        subsets, the same for every method."""
        perm, _ = draws(trial)
        n = trial.coords["n"]
        if n > len(perm):
            raise ValueError(f"params.n = {n} exceeds the {len(perm)} training points of {trial.dataset!r}")
        idx = np.sort(perm[:n])
        return trial.split.X_train[idx], trial.y_fit[idx]

    def score(self, prediction, trial):
        return {"test_rmse": float(np.sqrt(np.mean((prediction - trial.split.y_test) ** 2)))}
