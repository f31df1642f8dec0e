"""Approximate consistency of kernel selection criteria (Ding et al. AAAI 2019 Fig. 1; TNNLS 2020 Figs. 1-3).

For every data set, seed and Gaussian width ``gamma = 2^log2_gamma`` (a coord), the
criterion C_ree or C_ipe (the coord ``criterion``) is computed on the exact kernel
matrix K of the training part ("Original") and on every approximation K~ of the
config: OptApp (best rank k), Nystrom with uniform, column-norm, leverage-score,
adaptive Deshpande / Kumar / Ding et al.'s criterion-driven Adapt-MS landmarks, the
modified Nystrom approximation with uniform + adaptive^2 columns, and MCM.  A row
records ``criterion_approx`` C(K~), ``criterion_exact`` C(K), ``relative_gap``
``|C(K~) - C(K)| / C(K)`` and ``seconds`` (building K~, sampling included, plus the
criterion) -- both criteria come from one K~, so the two rows of a (method, width) share
their landmarks.

Settings (``params:``; the defaults are the papers', read from their data files in ``papers/``):
``mu`` 0.005, ``c = landmark_fraction * l`` (0.2), the adaptive samplers' round size
``s = adaptive_fraction * c`` (0.1), rank ``k`` 20 for OptApp and the Nystrom family, C_ipe's
noise sd ``noise_fraction * sd(y)`` (1%), the grid ``log2_gammas``.  Regression targets are standardised on the training part
(the papers do not say; with raw targets a criterion without intercept is dominated by
the mean); binary labels become +-1.  ``train_sizes`` (a list of l) makes ``l`` a coord:
each size is a random training subsample of that many points (``split: {n_train: l}``),
for the measured order of approximate consistency (the slope of the gap against l on
log-log axes; no paper has this table).

Every row can be recomputed from the public API::

    sp = data.load(dataset, seed=seed, scaling=scaling, split=params["split"])
    y = (sp.y_train - mean) / sd            # or +-1 labels
    selection.criterion_values(sp.X_train, y, params["gamma"], params["approximation"],
                               seed=seeding.rng(seed, study, dataset), ...)
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .. import papers, selection
from . import Study, check_sampler, register

#: the papers' settings (Ding et al., AAAI 2019 Sec. "Empirical Studies"; TNNLS 2020 Sec. VII), from
#: the paper data files: the defaults of ``params:`` below
_AAAI = papers.table("ding_aaai2019", "settings")
_TNNLS = papers.table("ding_tnnls2020", "settings")

#: method labels of the papers (config labels map to these in the report where they match)
PAPER_NAMES = {
    "original": "Original", "optapp": "OptApp", "uniform": "Uniform", "colnorm": "ColNorm",
    "leverage": "Leverage", "adapt_deshp": "AdaptDeshp", "adapt_kumar": "AdaptKumar", "adapt_ms": "AdaptMS",
    "modified": "Modified", "mcm": "MCM",
}
_LOW_RANK = ("optimal", "nystrom", "modified_nystrom")


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
        "criterion for one width. Tables average over widths (and seeds); paired tests pair on data set, seed "
        "and width within each criterion."
    )
    tasks = ("regression", "binary")
    coords = ("criterion", "log2_gamma", "l")
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
    param_defaults = {
        "mu": _TNNLS["mu"], "landmark_fraction": _TNNLS["landmark_fraction"],
        "adaptive_fraction": _AAAI["adaptive_fraction"], "k": _TNNLS["k"], "noise_fraction": _TNNLS["noise_fraction"],
        "log2_gammas": list(_AAAI["log2_gammas"]), "criteria": list(selection.CRITERIA), "spectrum": "exact",
        "train_sizes": None,
    }
    method_keys = ("approximation", "sampler", "rank", "levels", "n_landmarks", "s")
    kernel_names = ("gaussian",)
    kernel_keys = ()
    kernel_keys_note = " (the width is the coord log2_gamma, from params.log2_gammas)"

    # -- config checks ---------------------------------------------------------------------------
    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        grid = p["log2_gammas"]
        if not isinstance(grid, list) or not grid or not all(isinstance(g, numbers.Real) for g in grid):
            raise ValueError(f"log2_gammas must be a non-empty list of numbers (exponents of 2), got {grid!r}")
        if len(set(grid)) != len(grid):
            raise ValueError("log2_gammas has repeated values")
        crits = p["criteria"]
        if not isinstance(crits, list) or not crits or any(c not in selection.CRITERIA for c in crits):
            raise ValueError(f"criteria must be a non-empty list of {', '.join(selection.CRITERIA)}, "
                             f"got {p['criteria']!r}")
        for key in ("landmark_fraction", "adaptive_fraction"):
            if not isinstance(p[key], numbers.Real) or not 0 < p[key] <= 1:
                raise ValueError(f"{key} must be in (0, 1], got {p[key]!r}")
        for key in ("mu", "noise_fraction"):
            if not isinstance(p[key], numbers.Real) or not p[key] > 0:
                raise ValueError(f"{key} must be > 0, got {p[key]!r}")
        if not isinstance(p["k"], numbers.Integral) or p["k"] < 1:
            raise ValueError(f"k must be an integer >= 1, got {p['k']!r}")
        if p["spectrum"] not in ("exact", "estimate"):
            raise ValueError(f"spectrum must be 'exact' or 'estimate', got {p['spectrum']!r}")
        sizes = p["train_sizes"]
        if sizes is not None and (not isinstance(sizes, list) or not sizes
                                  or not all(isinstance(s, numbers.Integral) and s >= 10 for s in sizes)):
            raise ValueError(f"train_sizes must be null or a list of integers >= 10, got {sizes!r}")

    def check_method(self, method_name, method_cfg, study_cfg):
        from .. import data

        opts = self.check_method_keys(method_cfg)
        approximation = opts.get("approximation", "nystrom")
        if approximation not in selection.APPROXIMATIONS:
            raise ValueError(f"unknown approximation {approximation!r}; choose one of "
                             f"{', '.join(selection.APPROXIMATIONS)}")
        check_sampler(opts.get("sampler", "uniform"))
        for key in ("rank", "levels", "s"):
            if key in opts and (not isinstance(opts[key], numbers.Integral) or opts[key] < 1):
                raise ValueError(f"{key} must be an integer >= 1, got {opts[key]!r}")
        if "n_landmarks" in opts:
            selection.landmark_count(opts["n_landmarks"], 10**9)  # raises naming a bad value
        sizes = self.resolve_params(study_cfg.get("params")).get("train_sizes") or []
        for ds in study_cfg["datasets"]:
            n = int(data.info(ds)["shape"][0])
            if sizes and max(sizes) >= n:
                raise ValueError(f"params.train_sizes: {max(sizes)} training points asked, but {ds!r} has only "
                                 f"{n} rows; use sizes below {n}")

    def landmark_counts(self, params, method_name, method_cfg):
        m = method_cfg.get("n_landmarks")
        return [int(m)] if isinstance(m, numbers.Integral) else []

    # -- the experiment --------------------------------------------------------------------------
    def coord_grid(self, params, method_name, method_cfg):
        return [{"log2_gamma": g} for g in params["log2_gammas"]]

    def run(self, study, cfg, dataset, X, y, splits, log=None, source_n_train=None):
        sizes = self.resolve_params(cfg.get("params")).get("train_sizes")
        if not sizes:
            return super().run(study, cfg, dataset, X, y, splits, log, source_n_train)
        rows = []
        for size in sizes:
            split = {k: v for k, v in (cfg.get("split") or {}).items() if k != "test_fraction"}
            sub = {**cfg, "split": {**split, "n_train": int(size)}}
            for row in super().run(study, sub, dataset, X, y, splits, log, source_n_train):
                row["coords"]["l"] = int(size)
                rows.append(row)
        return rows

    def targets(self, split):
        y = split.y_train
        if split.info["task"] == "regression":
            mean, sd = float(np.mean(y)), float(np.std(y)) or 1.0
            return (y - mean) / sd, {"targets": "standardized", "y_mean": mean, "y_sd": sd}
        classes = np.unique(y)
        return np.where(y == classes[-1], 1.0, -1.0), {"targets": "+-1", "positive_class": str(classes[-1])}

    def build_options(self, method_cfg, params, n):
        """``selection.criterion_values`` options of a method block (the papers' defaults filled in)."""
        approximation = method_cfg.get("approximation", "nystrom")
        opts = {}
        if approximation in _LOW_RANK:
            opts["rank"] = int(method_cfg.get("rank", params["k"]))
        if approximation in ("nystrom", "modified_nystrom"):
            sampler = method_cfg.get("sampler", "uniform")
            n_landmarks = method_cfg.get("n_landmarks", params["landmark_fraction"])
            c = selection.landmark_count(n_landmarks, n)
            opts.update(sampler=sampler, n_landmarks=c)
            if sampler.startswith("adaptive"):
                opts["sampler_options"] = {"s": int(method_cfg.get("s", max(1, round(params["adaptive_fraction"] * c))))}
        if approximation == "mcm":
            opts["levels"] = int(method_cfg.get("levels", _TNNLS["mcm_levels"]))
        return approximation, opts

    def evaluate(self, trial):
        p = trial.params
        X, y = trial.split.X_train, trial.y_fit
        gamma = float(2.0 ** trial.coords["log2_gamma"])
        crits = tuple(p["criteria"])
        common = {"mu": p["mu"], "noise_sd": p["noise_fraction"] * float(np.std(y)), "spectrum": p["spectrum"]}
        exact = trial.shared(("exact", gamma),
                             lambda: selection.criterion_values(X, y, gamma, "exact", crits, **common))
        approximation, opts = self.build_options(trial.method_cfg, p, len(X))
        if approximation == "exact":
            values = exact
        else:
            values = selection.criterion_values(X, y, gamma, approximation, crits, seed=trial.rng, **common, **opts)
        params = {"gamma": gamma, "approximation": approximation, **opts, **common, **trial.state}
        out = []
        for name in crits:
            value, seconds = values[name]
            ref = exact[name][0]
            out.append({
                "coords": {"criterion": name},
                "params": params,
                "metrics": {"criterion_approx": value, "criterion_exact": ref,
                            "relative_gap": abs(value - ref) / abs(ref) if ref else float("nan"),
                            "seconds": seconds},
            })
        return out

    # -- report ----------------------------------------------------------------------------------
    def report_tables(self, df, study_cfg):
        out = [("Per method: mean relative gap over widths, data sets and seeds; how often the arg-min over the "
                "grid equals Original's; Spearman rank correlation of the C(K~) and C(K) curves; seconds per width",
                method_summary(df, study_cfg["methods"]), SUMMARY_NOTE)]
        if "l" in df and df["l"].nunique() > 1:
            out.append(("Measured order of approximate consistency: slope b of log(mean gap over the grid) = a + b "
                        "log(l), over seeds and sizes, with its 95% confidence interval",
                        slope_table(df, list(study_cfg["methods"])), SLOPE_NOTE))
        return out

    def figures(self, df, info, out_dir):
        from pathlib import Path

        from ..report import coord_figure

        listing = []
        for crit in sorted(df["criterion"].dropna().unique()):
            sub = df[df["criterion"] == crit]
            label = _CRIT_LABEL.get(crit, crit)
            if "l" in sub and sub["l"].nunique() > 1:
                mean = (sub.groupby(["dataset", "method", "kernel", "seed", "l"], as_index=False)["relative_gap"]
                        .mean())
                mean = mean[mean["method"].isin(_with_gap(mean))]
                name = f"gap_vs_l_{crit}.png"
                coord_figure(mean, info, "relative_gap", "l", Path(out_dir) / name, logx=True, logy=True,
                             title=f"{label}: mean relative gap over the grid against the training size l")
                listing.append({"file": name, "caption": f"{label}: the relative gap averaged over the width grid "
                                "against l (log-log), mean and +- sd over seeds; the slopes are in the table above."})
                continue
            name = f"criterion_{crit}.png"
            coord_figure(sub, info, "criterion_approx", "log2_gamma", Path(out_dir) / name, robust_ylim=True,
                         title=f"{label} on K (Original) and on K~ against log2 gamma")
            listing.append({"file": name, "caption": f"{label} against log2 gamma, one panel per data set, one line "
                            "per method (Original = exact K), mean and +- sd band over seeds (Ding et al., AAAI 2019 "
                            "Fig. 1; TNNLS 2020 Figs. 1-3). The y range covers 96% of the values: a method off the "
                            "chart there (MCM on data that are no grid) is far off."})
            gap = sub[sub["method"].isin(_with_gap(sub))]
            name = f"gap_{crit}.png"
            coord_figure(gap, info, "relative_gap", "log2_gamma", Path(out_dir) / name, logy=True,
                         title=f"{label}: relative gap |C(K~)-C(K)|/C(K) against log2 gamma")
            listing.append({"file": name, "caption": f"{label}: relative gap per width (log scale), mean and +- sd "
                            "over seeds; Original (gap 0) is not drawn."})
        return listing


_CRIT_LABEL = {"c_ree": "C_ree", "c_ipe": "C_ipe"}


def _with_gap(df):
    """Methods whose gap is not identically 0 (Original is; a log axis cannot show it)."""
    return [m for m, g in df.groupby("method")["relative_gap"] if (g > 0).any()]


def curve_stats(df):
    """Per curve (data set, seed, criterion, l, method): arg-min agreement with Original and the
    Spearman correlation of C(K~) with C(K) over the width grid."""
    from scipy import stats as sps

    keys = [c for c in ("dataset", "kernel", "seed", "criterion", "l") if c in df and df[c].notna().any()]
    rows = []
    for key, g in df.groupby([*keys, "method"], dropna=False):
        g = g.sort_values("log2_gamma")
        a, e = g["criterion_approx"].to_numpy(float), g["criterion_exact"].to_numpy(float)
        rho = sps.spearmanr(a, e).statistic if len(g) > 2 and np.ptp(a) > 0 and np.ptp(e) > 0 else np.nan
        rows.append({**dict(zip([*keys, "method"], key, strict=True)),
                     "argmin_equal": float(g["log2_gamma"].iloc[np.argmin(a)] == g["log2_gamma"].iloc[np.argmin(e)]),
                     "spearman": rho})
    return pd.DataFrame(rows)


def method_summary(df, methods):
    """The per-method summary table, one block of rows per criterion (``methods``: the config's blocks)."""
    curves = curve_stats(df)
    exact = [m for m, cfg in methods.items() if (cfg or {}).get("approximation") == "exact"]
    out = []
    for crit in sorted(df["criterion"].unique()):
        d, c = df[df["criterion"] == crit], curves[curves["criterion"] == crit]
        base = float(d[d["method"].isin(exact)]["seconds"].mean()) if exact else np.nan
        for m in [m for m in methods if m in set(d["method"])]:
            dm, cm = d[d["method"] == m], c[c["method"] == m]
            secs = float(dm["seconds"].mean())
            out.append({
                "criterion": _CRIT_LABEL.get(crit, crit), "method": m,
                "mean gap": f"{dm['relative_gap'].mean():.3g}", "median gap": f"{dm['relative_gap'].median():.3g}",
                "arg-min = Original": f"{cm['argmin_equal'].mean():.0%} of {len(cm)}",
                "Spearman": "n/a" if cm["spearman"].isna().all() else f"{cm['spearman'].mean():.3f}",
                "s / width": f"{secs:.3g}",
                "x Original time": f"{secs / base:.2g}" if base == base and base > 0 else "n/a",
            })
    return pd.DataFrame(out)


#: under the per-method table: what its means can and cannot say
SUMMARY_NOTE = (
    "Means over widths, data sets and seeds: a few widths with a large gap can set a method's mean, so a ranking "
    "by these means can disagree with the paired tests. The papers' claims (which approximation is closer to "
    "Original) are judged by paired Wilcoxon tests in the claims ledger, each verdict naming its comparison.")

#: under the slope table: the papers' definition of p-order approximate consistency
SLOPE_NOTE = (
    "b is the measured exponent of gap ~ l^b. Both Ding et al. papers call an approximate kernel selection p-order "
    "consistent when eps(l) / l^p -> 0 -- here any b < p -- and strongly consistent when eps(l) -> 0, i.e. b < 0. "
    "So the 1/2-order proven for leverage-score Nystrom (TNNLS 2020, Theorem 4) allows any b < 1/2, and b = -1/2 "
    "already meets the strong form (proven for modified Nystrom, TNNLS Theorem 5, and Adapt-MS, AAAI 2019 "
    "Theorem 1); b near 0 or above means no measurable convergence over these sizes. The gap is relative, but "
    "C(K) stays between mu/(1+mu) and 1 times the mean of y^2 at every l, so the relative and absolute gaps have "
    "the same order in l. Whether a method's gap decays faster than another's is a paired test in the claims "
    "ledger.")


def slope_table(df, order):
    """Slope of log(mean gap over the grid) against log(l) per data set, criterion and method, with a 95% CI."""
    from scipy import stats as sps

    g = df.groupby(["dataset", "criterion", "method", "seed", "l"], as_index=False)["relative_gap"].mean()
    out = []
    for (ds, crit, m), sub in g.groupby(["dataset", "criterion", "method"]):
        sub = sub[sub["relative_gap"] > 0]
        if sub["l"].nunique() < 2 or len(sub) < 3:
            continue
        x, yv = np.log(sub["l"].to_numpy(float)), np.log(sub["relative_gap"].to_numpy(float))
        fit = sps.linregress(x, yv)
        half = sps.t.ppf(0.975, len(sub) - 2) * fit.stderr if len(sub) > 2 else np.nan
        out.append({"data set": ds, "criterion": _CRIT_LABEL.get(crit, crit), "method": m,
                    "slope b": f"{fit.slope:.2f}", "95% CI": f"[{fit.slope - half:.2f}, {fit.slope + half:.2f}]",
                    "points": len(sub), "_order": order.index(m) if m in order else 99})
    t = pd.DataFrame(out)
    if not len(t):
        return t
    return t.sort_values(["data set", "criterion", "_order"]).drop(columns="_order").reset_index(drop=True)
