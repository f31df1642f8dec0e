"""Approximate kernel selection (Ding et al., TNNLS 2020, Tables I-II).

On the training half, the Gaussian width is chosen from a log2 grid by minimising a
criterion (the coord ``criterion``: C_ree or C_ipe) computed on the exact kernel matrix
("Accurate"), on the MCM approximation, or on a Nystrom approximation (uniform landmarks
as the paper; Adapt-MS landmarks beyond it) -- or, as a practitioner would, by 5-fold
cross-validation of the learner's own error (``approximation: cv``; the same for both
criteria, computed once).  Then the learner is trained on the training half with the
chosen width and tested on the other half: exact KRR with ``alpha = mu l`` on
standardised targets (test MSE in the targets' own units) for regression, the exact
:class:`~nystrom_bench.learners.LSSVM` with ``mu`` for classification (test accuracy).
``selection_seconds`` is the time of the whole grid search, the paper's "Time".

The report gives Tables I and II in the paper's layout with the paper's numbers beside
ours where our data set is the paper's (or an embedded copy of it), and a Wilcoxon
signed-rank test over data sets of each approximate method against Accurate.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd

from .. import papers, selection
from ..learners import KRR, LSSVM
from . import method_options, register
from .consistency import ConsistencyStudy

#: the paper's column heads, in the order of its tables
_PAPER_METHODS = {"accurate": "Accurate", "mcm": "MCM", "nystrom": "Nystrom"}
_PAPER_KEY = "ding_tnnls2020"
_PAPER_TABLE = {"c_ree": "table1", "c_ipe": "table2"}

#: our data set -> the paper's row (an embedded copy of the same data, or the download itself)
PAPER_DATASET = {
    "boston": "housing", "housing": "housing", "balance": "balance", "allbp": "allbp", "veh": "veh",
    "pha": "pha", "ann1": "ann1", "DNA-n": "DNA-n", "mg": "mg", "space_ga": "space-ga", "abalone": "abalone",
    "ionosphere": "ionosphere", "ionosphere-libsvm": "ionosphere", "colic": "colic", "housevotes": "vote",
    "wisconsin": "breast-cancer", "breast-cancer": "breast-cancer", "australian": "australian",
    "australian-libsvm": "australian", "pima": "pima", "diabetes-libsvm": "diabetes", "german": "german",
    "german_keel": "german", "a1a": "a1a", "a2a": "a2a",
}


def paper_tables():
    """Ding et al. (TNNLS 2020) Tables I-II from the paper data file (:mod:`nystrom_bench.papers`), as
    ``{(criterion, paper data set): {"n": int, paper method: (mean, sd or None, seconds, is_accuracy)}}``
    with the MSE in its own units, the accuracy as a fraction and the time in seconds."""
    out = {}
    for crit, tid in _PAPER_TABLE.items():
        t = papers.table(_PAPER_KEY, tid)
        for name, cells in t["regression"].items():
            row = {"n": int(cells["n"])}
            for m, head in _PAPER_METHODS.items():
                mean, sd, scale, secs = cells[m]
                row[head] = (mean * scale, sd * scale, secs, False)
            out[(crit, name)] = row
        for name, cells in t["classification"].items():
            row = {"n": int(cells["n"])}
            for m, head in _PAPER_METHODS.items():
                pct, secs = cells[m]
                row[head] = (pct / 100, None, secs, True)
            out[(crit, name)] = row
    return out


PAPER_TABLES = paper_tables()


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
    coords = ("criterion",)
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
    method_keys = ("approximation", "sampler", "rank", "levels", "n_landmarks", "s", "folds")

    def check_params(self, params):
        super().check_params(params)
        if self.resolve_params(params).get("train_sizes") is not None:
            raise ValueError("train_sizes is a parameter of the consistency study only")

    def check_method(self, method_name, method_cfg, study_cfg):
        if method_cfg.get("approximation") == "cv":
            extra = sorted(set(method_options(method_cfg)) - {"approximation", "folds"})
            if extra:
                raise ValueError(f"a cv method takes only 'folds', not {extra}")
            folds = method_cfg.get("folds", 5)
            if not isinstance(folds, numbers.Integral) or folds < 2:
                raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
            return
        if "folds" in method_cfg:
            raise ValueError("'folds' belongs to a method with approximation: cv")
        super().check_method(method_name, method_cfg, study_cfg)

    def coord_grid(self, params, method_name, method_cfg):
        return [{"criterion": c} for c in params["criteria"]]

    def _select(self, trial):
        p, m = trial.params, trial.method_cfg
        X, y = trial.split.X_train, trial.y_fit
        grid = [float(2.0**g) for g in p["log2_gammas"]]
        if m.get("approximation") == "cv":
            folds = int(m.get("folds", 5))
            task = trial.split.info["task"]
            labels = y if task == "regression" else trial.split.y_train
            return trial.shared(("cv", folds), lambda: (
                selection.cv_path(X, labels, grid, task, mu=p["mu"], cv=folds, seed=trial.seed),
                {"approximation": "cv", "folds": folds}))
        approximation, opts = self.build_options(m, p, len(X))
        res = selection.criterion_path(X, y, grid, approximation, trial.coords["criterion"], mu=p["mu"],
                                       noise_sd=p["noise_fraction"] * float(np.std(y)), spectrum=p["spectrum"],
                                       seed=trial.rng, **opts)
        return res, {"approximation": approximation, **opts}

    def evaluate(self, trial):
        p, sp = trial.params, trial.split
        res, info = self._select(trial)
        gamma = res.best_gamma

        def fit():  # the exact model at the selected width: shared by the methods that select it
            t0 = time.perf_counter()
            if sp.info["task"] == "regression":
                model = KRR(kernel="gaussian", gamma=gamma, alpha=p["mu"] * len(sp.y_train), approximation="exact",
                            fit_intercept=False)
                pred = model.fit(sp.X_train, trial.y_fit).predict(sp.X_test)
                st = trial.state
                metrics = {"test_mse": float(np.mean((pred * st["y_sd"] + st["y_mean"] - sp.y_test) ** 2))}
            else:
                model = LSSVM(kernel="gaussian", gamma=gamma, alpha=p["mu"] * len(sp.y_train), approximation="exact")
                metrics = {"test_accuracy": float(np.mean(model.fit(sp.X_train, sp.y_train).predict(sp.X_test)
                                                          == sp.y_test))}
            return {**metrics, "fit_time": time.perf_counter() - t0}

        metrics = {**trial.shared(("fit", gamma), fit), "selection_seconds": res.seconds,
                   "log2_gamma_selected": float(np.log2(gamma))}
        params = {"gamma": gamma, **info, "mu": p["mu"], "log2_gammas": list(p["log2_gammas"]), **trial.state}
        return [{"params": params, "metrics": metrics}]

    def figures(self, df, info, out_dir):
        return []

    def report_tables(self, df, study_cfg):
        out = []
        for crit in sorted(df["criterion"].unique()):
            label = "Table I (C_ree)" if crit == "c_ree" else "Table II (C_ipe)"
            out.append((f"Ding et al. (TNNLS 2020) {label} layout: ours (mean +- sd over seeds) and the paper's "
                        "numbers in brackets where our data set is the paper's; time = the whole grid search (s)",
                        paper_layout(df[df["criterion"] == crit], crit, list(study_cfg["methods"])),
                        "MSE in the targets' own units; accuracy in %. The paper ran R on other hardware, so compare "
                        "its times with ours only as ratios between methods."))
        out.append(("Wilcoxon signed-rank tests over data sets (the paper's test): each method against 'accurate' "
                    "on the per-data-set mean error (MSE, or 1 - accuracy) relative to accurate's",
                    wilcoxon_over_datasets(df, study_cfg.get("reference", self.reference_method)), None))
        return out


def _fmt(v, sd=None, acc=False):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "n/a"
    if acc:
        return f"{100 * v:.2f}%"
    return f"{v:.3g}" + ("" if sd is None else f"+-{sd:.2g}")


def paper_layout(df, crit, order):
    """One row per data set: ours (error, time) per method, the paper's in brackets where known."""
    rows = []
    for ds, d in df.groupby("dataset", sort=False):
        acc = d["test_accuracy"].notna().any() if "test_accuracy" in d else False
        metric = "test_accuracy" if acc else "test_mse"
        paper = PAPER_TABLES.get((crit, PAPER_DATASET.get(ds, "")))
        row = {"data set": ds + (f" (paper: {PAPER_DATASET[ds]})" if paper else "")}
        for m in [m for m in order if m in set(d["method"])]:
            dm = d[d["method"] == m]
            ours = _fmt(dm[metric].mean(), None if acc else dm[metric].std(), acc)
            pm = paper.get(_PAPER_METHODS.get(m)) if paper else None
            row[f"{m} error"] = ours + (f" [{_fmt(pm[0], pm[1], pm[3])}]" if pm else "")
            row[f"{m} time"] = f"{dm['selection_seconds'].mean():.2g}" + (f" [{pm[2]:.2g}]" if pm else "")
        rows.append(row)
    return pd.DataFrame(rows)


def wilcoxon_over_datasets(df, reference):
    """Per criterion and method: Wilcoxon signed-rank over data sets of (error - reference's) / reference's
    (the paper's test), through :func:`nystrom_bench.stats.paired_tests`; data sets where the two
    errors are equal carry no rank (as in the signed-rank test's usual form)."""
    from .. import stats

    err = df["test_mse"].copy() if "test_mse" in df else pd.Series(np.nan, index=df.index)
    if "test_accuracy" in df:
        err = err.fillna(1.0 - df["test_accuracy"])
    d = df.assign(error=err).groupby(["criterion", "dataset", "method"])["error"].mean().unstack("method")
    rows = []
    for crit, sub in d.groupby(level="criterion"):
        if reference not in sub:
            continue
        for m in [c for c in sub.columns if c != reference]:
            rel = ((sub[m] - sub[reference]) / sub[reference].where(sub[reference] > 0)).dropna()
            nz = rel[rel != 0].droplevel("criterion")
            p = float("nan")
            if len(nz) >= 2:
                # the relative difference as a paired sample against a reference of 0
                long = pd.DataFrame({"dataset": [*nz.index, *nz.index], "method": [m] * len(nz) + [reference] * len(nz),
                                     "rel": [*nz.to_numpy(float), *np.zeros(len(nz))]})
                p = float(stats.paired_tests(long, "rel", reference, block_cols=("dataset",))["wilcoxon_p"].iloc[0])
            rows.append({"criterion": _CRIT.get(crit, crit), "method": m, "vs": reference, "data sets": len(rel),
                         "better / worse": f"{int((rel < 0).sum())} / {int((rel > 0).sum())}",
                         "median rel. diff": f"{rel.median():+.3g}" if len(rel) else "n/a",
                         "Wilcoxon p": "n/a" if p != p else f"{p:.2g}",
                         "at 95%": "n/a" if p != p else ("differ" if p < 0.05 else "no difference")})
    return pd.DataFrame(rows)


_CRIT = {"c_ree": "C_ree", "c_ipe": "C_ipe"}
