"""Approximate consistency of kernel selection criteria (Ding et al. AAAI 2019 Fig. 1; TNNLS 2020 Figs. 1-3).

For every data set, seed, Gaussian width ``gamma = 2^log2_gamma`` and criterion (C_ree or C_ipe;
both coords) the criterion is computed on the exact kernel matrix K of the training part
("Original") and on every approximation K~ of the config (the :mod:`~nystrom_bench.studies.consistency.methods`
family: OptApp, Nystrom with any landmark sampler, modified Nystrom, MCM).  A row records
``criterion_approx`` C(K~), ``criterion_exact`` C(K), ``relative_gap`` ``|C(K~) - C(K)| / C(K)`` and
``seconds`` (building K~, sampling included, plus the criterion); both criteria come from one K~,
so the two rows of a (method, width) share their landmarks.

``params:`` defaults are the papers' (their data files in ``papers/``).  Regression targets are
standardised on the training part (the papers do not say; with raw targets a criterion without
intercept is dominated by the mean); binary labels become +-1.  ``train_sizes`` (a list of l)
makes ``l`` a coord: each size is a random training subsample of that many points
(``split: {n_train: l}``), for the measured order of approximate consistency (the slope of the gap
against l on log-log axes; no paper has this table).

Every row can be recomputed from the public API::

    sp = data.load(dataset, seed=seed, scaling=scaling, split=params["split"])
    y = (sp.y_train - mean) / sd            # or +-1 labels
    selection.criterion_values(sp.X_train, y, params["gamma"], params["approximation"],
                               seed=seeding.rng(seed, study, dataset), ...)
"""

from __future__ import annotations

import numpy as np

from ... import data, papers, selection
from .. import Study, register

#: the papers' settings (AAAI 2019 Sec. "Empirical Studies"; TNNLS 2020 Sec. VII): the defaults of ``params:``
_AAAI = papers.table("ding_aaai2019", "settings")
_TNNLS = papers.table("ding_tnnls2020", "settings")
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_FRACTION = {**_POSITIVE, "maximum": 1}


@register
class ConsistencyStudy(Study):
    name = "consistency"
    title = "Approximate consistency of kernel selection criteria (Ding et al., AAAI 2019 and TNNLS 2020)"
    description = (
        "The kernel selection criteria C_ree = mu y'(K + mu l I)^-1 y and C_ipe (in-sample prediction error) "
        "computed on the exact kernel matrix K of the training half and on approximations K~ (OptApp, Nystrom "
        "with uniform, column-norm, leverage, adaptive Deshpande/Kumar and criterion-driven Adapt-MS landmarks, "
        "modified Nystrom with uniform+adaptive^2 columns, MCM), for every Gaussian width on a log2 grid. "
        "relative_gap = |C(K~) - C(K)| / C(K); seconds = time to build K~ (sampling included) and evaluate the "
        "criterion for one width (a deterministic K~ -- Original, OptApp, MCM -- is computed once per training "
        "part and reused by the other seeds, each row charged that computation's measured seconds). Tables "
        "average over widths (and seeds); paired tests pair on data set, seed and width within each criterion."
    )
    family = "criterion"
    tasks = ("regression", "binary")
    coords = ("criterion", "log2_gamma", "l")
    curve_coords = ("l", "log2_gamma")
    #: its findings question, answered by the claims whose rule is a slope over the training size l
    questions = ({"id": "consistency", "question": "How fast does the approximate criterion become consistent?",
                  "role": [], "claims": {"rule": "slope_below", "slope": "l"}},)
    metrics = {
        "relative_gap": ("Relative gap |C(K~)-C(K)|/C(K)", True),
        "criterion_approx": ("Criterion on K~", True),
        "criterion_exact": ("Criterion on K (Original)", True),
        "seconds": ("Seconds per width (K~ + criterion)", True),
    }
    tested_metrics = ("relative_gap", "seconds")
    primary_metric = "relative_gap"
    reference_method = "uniform"
    summary_coords = ("criterion", "l")
    figure_coords = ()
    params_schema = {
        "mu": {**_POSITIVE, "default": _TNNLS["mu"], "description": "the criteria's regularisation (K + mu l I)"},
        "landmark_fraction": {**_FRACTION, "default": _TNNLS["landmark_fraction"],
                              "description": "c = landmark_fraction * l landmarks"},
        "adaptive_fraction": {**_FRACTION, "default": _AAAI["adaptive_fraction"],
                              "description": "the adaptive samplers' round size s = adaptive_fraction * c"},
        "k": {"type": "integer", "minimum": 1, "default": _TNNLS["k"],
              "description": "rank of OptApp and the Nystrom family"},
        "noise_fraction": {**_POSITIVE, "default": _TNNLS["noise_fraction"],
                           "description": "C_ipe's noise sd as a fraction of sd(y)"},
        "log2_gammas": {"type": "array", "items": {"type": "number"}, "minItems": 1, "uniqueItems": True,
                        "default": list(_AAAI["log2_gammas"]), "description": "the width grid (exponents of 2)"},
        "criteria": {"type": "array", "items": {"enum": list(selection.CRITERIA)}, "minItems": 1,
                     "uniqueItems": True, "default": list(selection.CRITERIA), "description": "the criteria (a coord)"},
        "spectrum": {"enum": ["exact", "estimate"], "default": "exact",
                     "description": "C_ipe's eigenvalues: of K~, or the Nystrom estimate of K's"},
        "train_sizes": {"anyOf": [{"type": "null"}, {"type": "array", "minItems": 1,
                                                     "items": {"type": "integer", "minimum": 10}}],
                        "default": None, "description": "training sizes l (a coord): the order of consistency"},
    }
    kernel_names = ("gaussian",)
    kernel_keys = ()
    kernel_keys_note = " (the width is the coord log2_gamma, from params.log2_gammas)"
    predicts = False

    def check_data(self, params, dataset, n_train):
        n = int(data.info(dataset)["shape"][0])
        sizes = params.get("train_sizes") or []
        if sizes and max(sizes) >= n:
            return (f"train_sizes: {max(sizes)} training points asked, but {dataset!r} has only {n} rows; "
                    f"use sizes below {n}")
        return None

    def variants(self, cfg, params):
        sizes = params.get("train_sizes")
        if not sizes:
            return super().variants(cfg, params)
        split = {k: v for k, v in (cfg.get("split") or {}).items() if k != "test_fraction"}
        return [({**split, "n_train": int(size)}, {"l": int(size)}) for size in sizes]

    def coord_grid(self, params, method, dataset):
        return [{"log2_gamma": g, "criterion": c} for g in params["log2_gammas"] for c in params["criteria"]]

    def targets(self, split):
        y = split.y_train
        if split.info["task"] == "regression":
            mean, sd = float(np.mean(y)), float(np.std(y)) or 1.0
            return (y - mean) / sd, {"targets": "standardized", "y_mean": mean, "y_sd": sd}
        classes = np.unique(y)
        return np.where(y == classes[-1], 1.0, -1.0), {"targets": "+-1", "positive_class": str(classes[-1])}

    def score(self, prediction, trial):
        name = trial.coords["criterion"]
        value, seconds = trial.estimator.values_[name]
        ref = trial.estimator.exact_[name][0]
        return {"criterion_approx": value, "criterion_exact": ref,
                "relative_gap": abs(value - ref) / abs(ref) if ref else float("nan"), "seconds": seconds}

    def record(self, trial):
        return dict(trial.state)
