"""How to run a kernel machine on a Nystrom approximation: GSA vs LLA (vs NCR) (Li et al., geometric view).

Li et al. conjecture that the naive Gram-matrix substitution (GSA: train with K~, predict
with the exact kernel) gives solutions closer to the exact machine's than the low-rank
linearisation (LLA: train and predict on the Nystrom features), NCR being LLA for KRR.
For every data set, seed, landmark ratio (the coord ``ratio``: c = ratio x the training
size) and sampler (a method: ``gaussian_sketch``, ``uniform``, ``leverage``, ``kmeans``)
one Nystrom machine is trained and each integration (the coord ``integration``) gives a
row:

- classification (binary, multi-class): :class:`~nystrom_bench.learners.NuSVM` -- one
  training serves GSA and LLA (Li et al.'s Algorithm 1), their predictions differ;
- regression: :class:`~nystrom_bench.learners.KRR` in the modes gsa, lla and ncr.

Metrics: ``rel_error`` = ``||w* - w|| / ||w*||`` in the RKHS against the exact machine
(:func:`nystrom_bench.integration.approximation_error`; for the nu-SVM the solutions of
the nu-SVM problem itself, and ``rel_error_decision`` for libsvm's rescaled output, see
there), test accuracy (or test MSE of standardised targets), training and prediction
time.  The method ``exact`` gives the exact machine's row (integration ``exact``).

The paper's protocol: the kernel width gamma and nu (KRR: alpha) are chosen per data set
and seed on a validation part (``validation_fraction`` of the training part, stratified
for classes) by the exact machine, over ``gamma = s / median squared distance`` for s in
``gamma_scales`` and nu in ``nus`` (the paper's ranges were lost in the extraction of its text); every
machine is then trained on the whole training part with those values.

A row can be recomputed from the public API::

    sp = data.load(dataset, seed=seed, scaling=scaling, split=params.get("split"))
    exact = NuSVM(gamma=params["gamma"], nu=params["nu"], approximation="exact").fit(sp.X_train, sp.y_train)
    model = NuSVM(gamma=..., nu=..., sampler=params["sampler"], n_components=params["n_landmarks"],
                  random_state=seeding.rng(seed, study, dataset)).fit(sp.X_train, sp.y_train)
    integration.approximation_error(exact, model, mode=row_integration)
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd
from scipy import linalg

from .. import kernels, papers, sampling, seeding, stats
from ..integration import approximation_error, approximation_errors
from ..learners import KRR, NuSVM, max_feasible_nu
from . import Study, check_sampler, register

#: the paper data file of Li et al. (geometric view) (:mod:`nystrom_bench.papers`)
PAPER = "li_geometric"


def paper_table_ii():
    """Li et al.'s Table II: ``{data set: {train, test, features, classes, col_a, col_b}}`` (col_a, col_b:
    the two columns whose headers were lost in extraction; see the table's ``note``)."""
    return papers.table(PAPER, "table2")["rows"]


_CLASSIFICATION = ("binary", "multiclass")


def _is_num(v, lo=0.0, hi=None):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and v > lo and (hi is None or v <= hi)


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
        "part by the exact machine. Paired tests compare samplers against the reference within each integration."
    )
    tasks = ("regression", "binary", "multiclass")
    coords = ("ratio", "integration")
    metrics = {
        "rel_error": ("Relative RKHS error ||w*-w||/||w*||", True),
        "rel_error_decision": ("Relative RKHS error, libsvm's scale (margin 1)", True),
        "test_accuracy": ("Test accuracy", False),
        "test_mse": ("Test MSE (standardised targets)", True),
        "fit_time": ("Training time (s)", True),
        "predict_time": ("Prediction time (s)", True),
    }
    tested_metrics = ("rel_error", "test_accuracy", "test_mse")
    primary_metric = "rel_error"
    reference_method = "uniform"
    summary_coords = ("integration",)
    figure_coords = ()
    param_defaults = {
        "ratios": [0.01, 0.02, 0.05, 0.1],
        "gamma_scales": [0.125, 0.25, 0.5, 1.0, 2.0, 4.0],
        "nus": [0.1, 0.2, 0.3, 0.5],
        "alphas": [1e-3, 1e-2, 1e-1, 1.0],
        "validation_fraction": 0.2,
        "tol": 1e-3,
        "max_iter": -1,
    }
    method_keys = ("approximation", "sampler")
    kernel_names = ("gaussian",)
    kernel_keys = ()
    kernel_keys_note = " (gamma is tuned over params.gamma_scales / the median squared distance)"

    # -- config checks ---------------------------------------------------------------------------
    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        for key, hi in (("ratios", 1.0), ("gamma_scales", None), ("nus", 1.0), ("alphas", None)):
            v = p[key]
            if not isinstance(v, list) or not v or not all(_is_num(x, 0.0, hi) for x in v):
                rng = "(0, 1]" if hi else "> 0"
                raise ValueError(f"{key} must be a non-empty list of numbers in {rng}, got {v!r}")
            if len(set(v)) != len(v):
                raise ValueError(f"{key} has repeated values")
        if not _is_num(p["validation_fraction"], 0.0, 0.5):
            raise ValueError(f"validation_fraction must be in (0, 0.5], got {p['validation_fraction']!r}")
        if not _is_num(p["tol"]):
            raise ValueError(f"tol must be > 0, got {p['tol']!r}")
        if not isinstance(p["max_iter"], numbers.Integral) or p["max_iter"] < -1 or p["max_iter"] == 0:
            raise ValueError(f"max_iter must be -1 (no limit) or a positive integer, got {p['max_iter']!r}")

    def check_method(self, method_name, method_cfg, study_cfg):
        opts = self.check_method_keys(method_cfg)
        if opts.get("approximation", "nystrom") not in ("exact", "nystrom"):
            raise ValueError(f"approximation must be 'exact' or 'nystrom', got {opts['approximation']!r}")
        sampler = opts.get("sampler", "uniform")
        check_sampler(sampler)
        if sampling.needs_y(sampler):
            raise ValueError(f"sampler {sampler!r} needs targets; this study compares label-free samplers")

    # -- the experiment --------------------------------------------------------------------------
    def coord_grid(self, params, method_name, method_cfg):
        if method_cfg.get("approximation", "nystrom") == "exact":
            return [{"integration": "exact"}]
        return [{"ratio": r} for r in params["ratios"]]

    def targets(self, split):
        if split.info["task"] in _CLASSIFICATION:
            return split.y_train, None
        mean, sd = float(np.mean(split.y_train)), float(np.std(split.y_train)) or 1.0
        return (split.y_train - mean) / sd, {"y_mean": mean, "y_sd": sd}

    def _tuned(self, trial):
        """``(params, exact model, its metrics)`` of this (data set, seed, kernel), computed once."""
        return trial.shared(("tuned", trial.kernel_label), lambda: self._tune_and_fit_exact(trial))

    def _classify(self, trial):
        return trial.split.info["task"] in _CLASSIFICATION

    def _make(self, trial, gamma, hyper, **kw):
        p = trial.params
        if self._classify(trial):
            return NuSVM(gamma=gamma, nu=hyper, tol=p["tol"], max_iter=p["max_iter"], **kw)
        return KRR(gamma=gamma, alpha=hyper, fit_intercept=False, **kw)

    def _score(self, trial, model, X, y, mode=None):
        t0 = time.perf_counter()
        pred = model.predict(X, mode=mode) if isinstance(model, NuSVM) else model.predict(X)
        seconds = time.perf_counter() - t0
        if self._classify(trial):
            return {"test_accuracy": float(np.mean(pred == y))}, seconds
        return {"test_mse": float(np.mean((pred - y) ** 2))}, seconds

    def _test_targets(self, trial):
        y = trial.split.y_test
        if self._classify(trial):
            return y
        return (y - trial.state["y_mean"]) / trial.state["y_sd"]

    def _validation_scores(self, trial, gamma, X_fit, y_fit, X_val, y_val):
        """``{nu or alpha: validation score}`` of the exact machine at one width: one kernel matrix for
        the whole grid (nu-SVM: scikit-learn's NuSVC on it, as :class:`NuSVM` exact; KRR: one eigh).
        Infeasible nu (above :func:`~nystrom_bench.learners.max_feasible_nu`) are left out."""
        from sklearn.metrics import r2_score
        from sklearn.svm import NuSVC

        p = trial.params
        kern = kernels.make("gaussian", gamma=gamma)
        K, K_val = kern(X_fit), kern(X_val, X_fit)
        if self._classify(trial):
            top = max_feasible_nu(y_fit)
            return {nu: NuSVC(nu=nu, kernel="precomputed", tol=p["tol"], max_iter=p["max_iter"]).fit(K, y_fit)
                    .score(K_val, y_val) for nu in p["nus"] if nu <= top}
        w, Q = linalg.eigh(K)
        Qty = Q.T @ y_fit
        return {alpha: r2_score(y_val, K_val @ (Q @ (Qty / (np.maximum(w, 0.0) + alpha)))) for alpha in p["alphas"]}

    def _tune_and_fit_exact(self, trial):
        from sklearn.model_selection import train_test_split

        p = trial.params
        X, y = trial.split.X_train, trial.y_fit
        classify = self._classify(trial)
        rng = seeding.rng(trial.seed, trial.study, trial.dataset, "validation")
        fit_idx, val_idx = train_test_split(np.arange(len(X)), test_size=p["validation_fraction"],
                                            random_state=int(rng.integers(2**31 - 1)),
                                            stratify=y if classify else None)
        base = 1.0 / kernels.median_sq_dist(X[fit_idx])
        best, tried = None, 0
        for s in p["gamma_scales"]:
            scores = self._validation_scores(trial, s * base, X[fit_idx], y[fit_idx], X[val_idx], y[val_idx])
            tried += len(scores)
            for h, score in scores.items():  # accuracy or R^2: higher is better; ties keep the first
                if best is None or score > best[0] + 1e-12:
                    best = (score, s, h)
        if best is None:
            raise ValueError(f"{trial.dataset}: every nu in params.nus is infeasible for its classes (the largest "
                             f"feasible is {max_feasible_nu(y[fit_idx]):.3g}); add smaller values")
        score, s, h = best
        gamma = s * base
        hyper_name = "nu" if classify else "alpha"
        exact = self._make(trial, gamma, h, approximation="exact")
        t0 = time.perf_counter()
        exact.fit(X, y)
        fit_time = time.perf_counter() - t0
        metrics, predict_time = self._score(trial, exact, trial.split.X_test, self._test_targets(trial))
        params = {"gamma": gamma, "sigma_equivalent": float(np.sqrt(0.5 / gamma)), "gamma_scale": s,
                  hyper_name: h, "validation_score": score, "validation_metric": "accuracy" if classify else "R^2",
                  "candidates": tried, "learner": "NuSVM" if classify else "KRR"}
        if classify:
            params["n_support_exact"] = len(exact.support_)
        return params, exact, {**metrics, "fit_time": fit_time, "predict_time": predict_time}

    def evaluate(self, trial):
        tuned, exact, exact_metrics = self._tuned(trial)
        if trial.method_cfg.get("approximation", "nystrom") == "exact":
            return [{"params": tuned, "metrics": exact_metrics}]
        sp = trial.split
        sampler = trial.method_cfg.get("sampler", "uniform")
        c = max(1, min(len(sp.X_train), int(round(trial.coords["ratio"] * len(sp.X_train)))))
        hyper = tuned["nu"] if self._classify(trial) else tuned["alpha"]
        y_test = self._test_targets(trial)
        common = {**tuned, "sampler": sampler, "n_landmarks": c}
        out = []
        if self._classify(trial):
            model = self._make(trial, tuned["gamma"], hyper, n_components=c, sampler=sampler, random_state=trial.rng)
            t0 = time.perf_counter()
            model.fit(sp.X_train, trial.y_fit)
            fit_time = time.perf_counter() - t0
            errors = approximation_errors(exact, model)
            for mode in ("gsa", "lla"):
                metrics, seconds = self._score(trial, model, sp.X_test, y_test, mode)
                out.append({"coords": {"integration": mode},
                            "params": {**common, "rank": int(model.n_components_), "n_support": len(model.support_)},
                            "metrics": {"rel_error": errors[(mode, "nu")], "rel_error_decision": errors[(mode, "decision")],
                                        **metrics, "fit_time": fit_time, "predict_time": seconds}})
            return out
        state = trial.rng.bit_generator.state
        for mode in ("gsa", "lla", "ncr"):
            trial.rng.bit_generator.state = state  # the same landmarks for every mode
            model = self._make(trial, tuned["gamma"], hyper, n_components=c, sampler=sampler, mode=mode,
                               random_state=trial.rng)
            t0 = time.perf_counter()
            model.fit(sp.X_train, trial.y_fit)
            fit_time = time.perf_counter() - t0
            metrics, seconds = self._score(trial, model, sp.X_test, y_test)
            out.append({"coords": {"integration": mode},
                        "params": {**common, "rank": int(model.rank_ if hasattr(model, "rank_") else model.operator_.rank)},
                        "metrics": {"rel_error": approximation_error(exact, model), **metrics,
                                    "fit_time": fit_time, "predict_time": seconds}})
        return out

    # -- statistics and report ---------------------------------------------------------------------
    def tested_rows(self, df):
        """The generic paired tests compare samplers within an integration: the exact rows have no ratio."""
        return df[df["integration"] != "exact"] if "integration" in df else df

    def report_tables(self, df, study_cfg):
        out = []
        for metric in ("rel_error", "rel_error_decision", "test_accuracy", "test_mse"):
            if metric in df and df[metric].notna().any():
                t = gsa_vs_lla(df, metric, self.metrics[metric][1])
                if len(t):
                    note = _GSA_LLA_NOTE if not out else None
                    if metric == "test_mse":
                        note = _KRR_NOTE if note is None else f"{note} {_KRR_NOTE}"
                    out.append((f"GSA vs LLA on {self.metrics[metric][0].lower()}: cells (data set, sampler, ratio), "
                                "each the mean over seeds; Wilcoxon signed-rank test of GSA - LLA over the cells",
                                t, note))
        table_ii = paper_table_ii()
        paper = bool(set(df["dataset"]) & set(table_ii))
        out.append(("Hyperparameters chosen on the validation part (median over seeds)"
                    + (", beside Li et al.'s Table II as extracted from the paper's text" if paper else ""),
                    tuned_table(df, paper),
                    f"{papers.table(PAPER, 'table2')['note']} {_SIGMA_NOTE}" if paper else _SIGMA_NOTE))
        out.append(("Time: training (one fit per sampler and ratio; the nu-SVM's is shared by GSA and LLA) and "
                    "prediction of the test part, mean over seeds and ratios, beside the exact machine's",
                    time_table(df), None))
        return out

    def figures(self, df, info, out_dir):
        from pathlib import Path

        listing = []
        approx_rows = df[df["integration"] != "exact"]
        if not len(approx_rows):
            return listing
        exact = df[df["integration"] == "exact"]
        for metric in ("rel_error", "rel_error_decision", "test_accuracy", "test_mse"):
            rows = approx_rows[approx_rows[metric].notna()] if metric in approx_rows else approx_rows.iloc[:0]
            if not len(rows):
                continue
            name = f"{metric}_by_sampler.png"
            log = metric != "test_accuracy"
            sampler_grid(rows, exact, metric, self.metrics[metric][0], Path(out_dir) / name,
                         order=[m for m in info.get("methods", []) if m in set(rows["method"])], logy=log)
            listing.append({"file": name, "caption": f"{self.metrics[metric][0]} against the landmark ratio: one row "
                            "per data set, one panel per sampler, one line per integration, "
                            + ("geometric mean and x/ geometric sd band over seeds (log scale)" if log else
                               "mean and +- sd band over seeds")
                            + ("; dashed grey: the exact machine." if "error" not in metric else ".")})
        return listing


_SIGMA_NOTE = ("sigma_eq = 1 / sqrt(2 gamma) is gamma as the width sigma of exp(-||x-y||^2 / (2 sigma^2)); the widths "
               "refer to the features as scaled by the block's scaling. The paper's scaling is not stated, so its "
               "widths and ours need not agree.")
_GSA_LLA_NOTE = ("Li et al. conjecture that GSA's solution is closer to the exact machine than LLA's (Sec. III-D); the "
                 "claims ledger (results/claims.csv) gives the verdicts on this and the paper's other claims. Holm p: "
                 "Holm's correction over the data sets' tests.")
_KRR_NOTE = ("For KRR the paper runs no experiment; its analysis bounds both errors by the kernel approximation error "
             "over the ridge parameter, and GSA's exact-kernel prediction multiplies the part of "
             "a = (K~ + alpha I)^-1 y outside the landmarks' span, of size ~ 1/alpha, by K - K~.")


def _cells(df, metric):
    keys = ["dataset", "kernel", "method", "ratio", "integration"]
    return df[df[metric].notna()].groupby(keys, as_index=False)[metric].mean()


def gsa_vs_lla(df, metric, lower_is_better=True):
    """Per data set and over all: in how many (sampler, ratio) cells GSA beats LLA on ``metric``, the
    median difference and the Wilcoxon signed-rank p over the cells (:func:`nystrom_bench.stats.paired_tests`;
    Holm's correction over the data sets)."""
    cells = _cells(df[df["integration"].isin(["gsa", "lla"])], metric)
    blocks = ("dataset", "kernel", "method", "ratio")
    if not {"gsa", "lla"} <= set(cells["integration"]):
        return pd.DataFrame()
    wide = stats.pivot_pairs(cells, metric, "integration", blocks)
    if not len(wide):
        return pd.DataFrame()
    rows = []
    for ds, sub in [*cells.groupby("dataset"), ("all data sets", cells)]:
        pair = wide.loc[wide.index.get_level_values("dataset").isin(sub["dataset"].unique())]
        if not len(pair):
            continue
        t = stats.paired_tests(sub, metric, "lla", "integration", blocks, lower_is_better)
        r = t[t["method"] == "gsa"].iloc[0]
        p = r["wilcoxon_p"] if r["wilcoxon_stat"] == r["wilcoxon_stat"] else np.nan  # no test: < 2 or all-equal pairs
        rows.append({"data set": ds, "cells": int(r["n_pairs"]), "GSA better": int(r["wins"]),
                     "LLA better": int(r["losses"]), "mean GSA": f"{pair['gsa'].mean():.4g}",
                     "mean LLA": f"{pair['lla'].mean():.4g}", "median GSA-LLA": f"{r['median_diff']:.3g}",
                     "Wilcoxon p": "n/a" if p != p else f"{p:.2g}", "_p": p})
    out = pd.DataFrame(rows)
    per = out["data set"] != "all data sets"
    tested = per & out["_p"].notna()
    out["Holm p"] = "-"
    if tested.any():
        out.loc[tested, "Holm p"] = [f"{v:.2g}" for v in stats.holm(out.loc[tested, "_p"].to_numpy())]
    return out.drop(columns="_p")


def _params(df):
    import json

    return df["params"].map(lambda s: json.loads(s) if isinstance(s, str) else (s or {}))


def tuned_table(df, paper=True):
    """The tuned gamma / nu (alpha) per data set, median over seeds (``paper``: beside Table II)."""
    ex = df[df["integration"] == "exact"]
    if not len(ex):
        ex = df.drop_duplicates(["dataset", "seed"])
    p = pd.DataFrame(list(_params(ex)), index=ex.index)
    p["dataset"] = ex["dataset"].to_numpy()
    table_ii = paper_table_ii() if paper else {}
    rows = []
    for ds, g in p.groupby("dataset"):
        hyper = "nu" if "nu" in g and g["nu"].notna().any() else "alpha"
        row = {
            "data set": ds, "learner": g["learner"].iloc[0], "n train": int(g["n_train"].iloc[0]),
            "gamma": f"{g['gamma'].median():.3g}", "sigma_eq": f"{g['sigma_equivalent'].median():.3g}",
            hyper: f"{g[hyper].median():g}",
            "validation": f"{g['validation_score'].mean():.3f} ({g['validation_metric'].iloc[0]})",
        }
        if paper:
            t2 = table_ii.get(ds)
            row["paper: n train / cols"] = "-" if not t2 else f"{t2['train']} / {t2['col_a']}, {t2['col_b']}"
        rows.append(row)
    return pd.DataFrame(rows)


def time_table(df):
    """Mean training and prediction seconds per data set and sampler (GSA and LLA), and the exact machine's."""
    rows = []
    for ds, g in df.groupby("dataset"):
        ex = g[g["integration"] == "exact"]
        for m, gm in g[g["integration"] != "exact"].groupby("method", sort=False):
            row = {"data set": ds, "sampler": m, "train": f"{gm['fit_time'].mean():.3g}"}
            for mode, gi in gm.groupby("integration"):
                row[f"predict {mode.upper()}"] = f"{gi['predict_time'].mean():.3g}"
            if len(ex):
                row["exact train / predict"] = f"{ex['fit_time'].mean():.3g} / {ex['predict_time'].mean():.3g}"
            rows.append(row)
    return pd.DataFrame(rows).fillna("-")


def sampler_grid(rows, exact, metric, label, out_png, order=None, logy=False):
    """One row of panels per data set, one panel per sampler: ``metric`` against the ratio, one line
    per integration (mean, +- sd band over seeds); the exact machine as a dashed grey line."""
    from ..atomic import replace_into
    from ..report import _plt

    plt = _plt()
    datasets = sorted(rows["dataset"].unique())
    samplers = order or list(dict.fromkeys(rows["method"]))
    fig, axes = plt.subplots(len(datasets), len(samplers), figsize=(2.9 * len(samplers), 2.4 * len(datasets)),
                             squeeze=False, sharex=True)
    colors = {"gsa": "#1f77b4", "lla": "#d62728", "ncr": "#2ca02c"}
    for r, ds in enumerate(datasets):
        for c, m in enumerate(samplers):
            ax = axes[r, c]
            sub = rows[(rows["dataset"] == ds) & (rows["method"] == m)]
            log = logy and len(sub) and (sub[metric] > 0).all()
            for mode, g in sub.groupby("integration"):
                v = np.log(g[metric]) if log else g[metric]
                agg = v.groupby(g["ratio"]).agg(["mean", "std"]).reset_index().sort_values("ratio")
                lo, mid, hi = (agg["mean"] - agg["std"].fillna(0.0), agg["mean"], agg["mean"] + agg["std"].fillna(0.0))
                if log:  # geometric mean and x/ geometric sd: a band that a log axis can show
                    lo, mid, hi = np.exp(lo), np.exp(mid), np.exp(hi)
                col = colors.get(mode, "black")
                ls = ":" if mode == "ncr" else "-"
                ax.plot(agg["ratio"], mid, marker="o", ms=3, lw=1.2, ls=ls, color=col, label=mode.upper())
                ax.fill_between(agg["ratio"], lo, hi, color=col, alpha=0.15, lw=0)
            if metric in exact and "error" not in metric:
                e = exact[(exact["dataset"] == ds)][metric]
                if len(e):
                    ax.axhline(e.mean(), color="grey", ls="--", lw=1, label="exact")
            if log:
                ax.set_yscale("log")
            ax.set_title(f"{ds} / {m}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if c == 0:
                ax.set_ylabel(label, fontsize=7)
            if r == len(datasets) - 1:
                ax.set_xlabel("landmark ratio c / n", fontsize=7)
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    replace_into(out_png, lambda tmp: fig.savefig(tmp, dpi=130, format="png"))
    plt.close(fig)
