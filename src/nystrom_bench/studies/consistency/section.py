"""The consistency study's report section: the per-method summary, the measured order of consistency
(the slope of the gap against l, with ``train_sizes``) and the criterion and gap figures
(Ding et al., AAAI 2019 Fig. 1; TNNLS 2020 Figs. 1-3).

Results outside their method's assumptions (MCM off its grid, or with ``U_m + mu l I`` indefinite:
:func:`nystrom_bench.results.outside_assumptions`) are a row of their own in every table, marked
``"mcm (outside assumptions: 8 of 10 data sets)"``, and a dashed line of their own in every figure,
whose y range the other lines set: never averaged in with the method's other results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...report import OUTSIDE, assumption_note, coord_figure, mark_outside, outside_label
from ...results import ASSUMPTION, assumption_summary, outside_assumptions
from ...sections import Section, register


@register
class ConsistencySection(Section):
    kind = "consistency"

    def tables(self, df, block):
        apart = assumption_note(df)
        out = [("Per method: mean relative gap over widths, data sets and seeds; how often the arg-min over the "
                "grid equals Original's; Spearman rank correlation of the C(K~) and C(K) curves; seconds per width",
                method_summary(df, block["methods"]), f"{SUMMARY_NOTE} {apart}".strip())]
        if "l" in df and df["l"].nunique() > 1:
            out.append(("Measured order of approximate consistency: slope b of log(mean gap over the grid) = a + b "
                        "log(l), over seeds and sizes, with its 95% confidence interval",
                        slope_table(df, list(block["methods"])), f"{SLOPE_NOTE} {apart}".strip()))
        return out

    def figures(self, df, info, out_dir):
        listing = []
        for crit in sorted(df["criterion"].dropna().unique()):
            sub = df[df["criterion"] == crit]
            label = _CRIT_LABEL.get(crit, crit)
            if "l" in sub and sub["l"].nunique() > 1:
                # the mean over the grid of the results within their assumptions, and apart that of the others
                mean = (sub.assign(_out=outside_assumptions(sub))
                        .groupby(["dataset", "method", "kernel", "seed", "l", "_out"], as_index=False)["relative_gap"]
                        .mean())
                mean[ASSUMPTION] = np.where(mean.pop("_out"), OUTSIDE, "")
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
                            "Fig. 1; TNNLS 2020 Figs. 1-3). The y range covers 96% of the values within their methods' "
                            "assumptions. Dashed: results outside them (MCM off its grid, or with U_m + mu l I "
                            "indefinite), drawn apart; off the chart there, they are far off."})
            gap = sub[sub["method"].isin(_with_gap(sub))]
            name = f"gap_{crit}.png"
            coord_figure(gap, info, "relative_gap", "log2_gamma", Path(out_dir) / name, logy=True,
                         title=f"{label}: relative gap |C(K~)-C(K)|/C(K) against log2 gamma")
            listing.append({"file": name, "caption": f"{label}: relative gap per width (log scale), mean and +- sd "
                            "over seeds; Original (gap 0) is not drawn. Dashed: results outside their method's "
                            "assumptions, drawn apart; the y range is set by the others."})
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
    """The per-method summary table, one block of rows per criterion (``methods``: the config's blocks).

    A method's results outside its assumptions are summarised in a row of their own after its row,
    ``"mcm (outside assumptions: 8 of 10 data sets)"`` (its curves cut to those widths), and not in its
    row, which is left out where none of its results is within them."""
    apart = assumption_summary(df).set_index("method")
    df = mark_outside(df)
    curves = curve_stats(df)
    exact = [m for m, cfg in methods.items() if (cfg or {}).get("approximation") == "exact"]
    out = []
    for crit in sorted(df["criterion"].unique()):
        d, c = df[df["criterion"] == crit], curves[curves["criterion"] == crit]
        base = float(d[d["method"].isin(exact)]["seconds"].mean()) if exact else np.nan
        names = [(m, m) for m in methods] + [(outside_label(m), outside_label(m, apart.loc[m])) for m in methods
                                             if m in apart.index]
        names.sort(key=lambda nl: list(methods).index(nl[0].removesuffix(f" {OUTSIDE}")))
        for m, shown in [(m, shown) for m, shown in names if m in set(d["method"])]:
            dm, cm = d[d["method"] == m], c[c["method"] == m]
            secs = float(dm["seconds"].mean())
            out.append({
                "criterion": _CRIT_LABEL.get(crit, crit), "method": shown,
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


def _rank(method, order):
    """Where ``method`` (or the method it marks as outside its assumptions, just after it) sorts in ``order``."""
    base = method.removesuffix(f" {OUTSIDE}")
    return (order.index(base) if base in order else 99) + (0.5 if base != method else 0)


def slope_table(df, order):
    """Slope of log(mean gap over the grid) against log(l) per data set, criterion and method, with a 95% CI."""
    from scipy import stats as sps

    df = mark_outside(df)  # results outside their method's assumptions: a slope of their own, marked
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
                    "points": len(sub), "_order": _rank(m, order)})
    t = pd.DataFrame(out)
    if not len(t):
        return t
    return t.sort_values(["data set", "criterion", "_order"]).drop(columns="_order").reset_index(drop=True)
