"""The samplers study's report: error against m for every sampler, error against time and against kernel
entries (Pareto plots), and the gain over uniform per data set beside the data set's properties.

The critical-difference diagrams of every tested metric and the paired tests against the reference come from
the generic report; the answer to "When do non-uniform landmarks beat uniform?" (the property analysis) from
:func:`nystrom_bench.findings.property_records`, whose per-unit gains (:func:`nystrom_bench.findings.unit_gains`)
the table here shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...report import finish_figure, fmt_num, panels, pyplot
from ...sections import Section, register

#: the metrics drawn against m, one figure per kernel width
CURVE_METRICS = ("trace_error", "test_error")
#: the error of the Pareto plots (x: sampling seconds, kernel entries)
PARETO_METRIC = "trace_error"
PARETO_COSTS = (("sampling_seconds", "Sampling time (s)"), ("kernel_entries", "Kernel entries evaluated"))


def _geomean(values):
    from ... import findings  # with scipy.stats: imported where used, not with the kind

    v = np.maximum(np.asarray(values, dtype=np.float64), findings.ERROR_FLOOR)
    v = v[np.isfinite(v)]
    return float(np.exp(np.mean(np.log(v)))) if len(v) else float("nan")


def _order(df, info):
    present = list(dict.fromkeys(df["method"]))
    first = [m for m in info.get("methods", []) if m in present]
    return first + [m for m in present if m not in first]


def _colors(plt, names):
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


def pareto_front(points):
    """Indices of the points ``[(cost, error), ...]`` no other point beats on both (lower is better on both),
    sorted by cost."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best = [], np.inf
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front


def curve_figure(df, info, metric, kernel, out_png):
    """``metric`` against m for one kernel width: one panel per data set, one line per sampler (geometric mean
    over the seeds), log axes."""
    from matplotlib.ticker import NullLocator

    plt = pyplot()
    label = info["metrics"][metric][0]
    sub = df[(df["kernel"] == kernel) & df[metric].notna()]
    datasets = sorted(sub["dataset"].unique())
    methods = _order(sub, info)
    colors = _colors(plt, methods)
    fig, axes = panels(plt, len(datasets), 3.0, 2.6)
    # every line's points in one pass: (data set, method) -> geometric mean per m, m ascending
    curves = {key: g.droplevel([0, 1]) for key, g in
              sub.groupby(["dataset", "method", "m"])[metric].agg(_geomean).groupby(level=[0, 1])}
    ms_of = sub.groupby("dataset")["m"].unique()
    for ax, ds in zip(axes.flat, datasets, strict=False):
        for meth in methods:
            g = curves.get((ds, meth))
            if g is not None and len(g):
                ax.plot(g.index, g.to_numpy(), marker="o", ms=2.5, lw=1.0, color=colors[meth], label=meth,
                        ls="--" if meth == info.get("reference") else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ms = sorted(ms_of[ds])
        ax.set_xticks(ms, [f"{v:g}" for v in ms])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_title(ds, fontsize=8)
        ax.set_xlabel("m", fontsize=7)
        ax.tick_params(which="both", labelsize=6)
        ax.grid(alpha=0.3, which="both", lw=0.4)
    if datasets:
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(7, len(labels)), fontsize=7, frameon=False)
    fig.suptitle(f"{label} against m, kernel {kernel} (geometric mean over seeds; log axes)", fontsize=10)
    finish_figure(fig, out_png, dpi=130, rect=(0, 0.06, 1, 0.97))


def pareto_figure(df, info, metric, cost, cost_label, out_png):
    """``metric`` against ``cost`` (log axes), one panel per kernel width: each sampler one line through its m
    values (geometric means over data sets and seeds), the Pareto front (no other (sampler, m) is cheaper and
    more accurate) in black."""
    plt = pyplot()
    label = info["metrics"][metric][0]
    sub = df[df[metric].notna() & df[cost].notna()]
    kernels = sorted(sub["kernel"].unique())
    methods = _order(sub, info)
    colors = _colors(plt, methods)
    fig, axes = panels(plt, len(kernels), 5.0, 4.0)
    for ax, kern in zip(axes.flat, kernels, strict=False):
        d = sub[sub["kernel"] == kern]
        pts, names = [], []
        for meth in methods:
            g = d[d["method"] == meth].groupby("m").agg(err=(metric, _geomean), cost=(cost, _geomean))
            if not len(g):
                continue
            ax.plot(g["cost"], g["err"], marker="o", ms=3, lw=1.0, color=colors[meth], label=meth,
                    ls="--" if meth == info.get("reference") else "-")
            for m, r in g.iterrows():
                pts.append((r["cost"], r["err"]))
                names.append(f"{meth} m={m:g}")
        front = pareto_front(pts)
        if front:
            ax.step([pts[i][0] for i in front], [pts[i][1] for i in front], where="post", color="black", lw=0.8,
                    alpha=0.6, label="Pareto front")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"kernel {kern}", fontsize=9)
        ax.set_xlabel(cost_label + " (geometric mean)", fontsize=8)
        ax.set_ylabel(label + " (geometric mean)", fontsize=7)
        ax.grid(alpha=0.3, which="both", lw=0.4)
    if kernels:
        axes.flat[0].legend(fontsize=6, ncol=2)
    fig.suptitle(f"{label} against {cost_label.lower()}: each line one sampler through its m values", fontsize=10)
    finish_figure(fig, out_png, dpi=130)


def gains_table(df, info, metric, top=3):
    """Per unit (data set, and kernel where it varies): the data set's properties and the change of the ``top``
    samplers (by median change over all units) against the reference, and the unit's best sampler; or None."""
    from ... import findings

    df, props = findings.property_columns(df)
    ref = info.get("reference")
    if not props or ref not in set(df["method"]) or metric not in df:
        return None
    units = ["dataset"] + (["kernel"] if df["kernel"].nunique() > 1 else [])
    others = [m for m in _order(df, info) if m != ref]
    cells = ["dataset", "kernel", "seed", *[c for c in info.get("coords", []) if c in df and df[c].nunique() > 1]]
    gains = findings.unit_gains(df, metric, "method", ref, others, units, cells)
    if not gains:
        return None
    wide = pd.DataFrame(gains)
    ranked = sorted(wide.columns, key=lambda c: float(np.median(wide[c].dropna())))
    if not info["metrics"][metric][1]:
        ranked = ranked[::-1]
    prop = df.groupby(units)[props].median().reindex(wide.index)
    out = wide.index.to_frame(index=False)
    out.columns = ["data set", *units[1:]]
    for p in props:
        out[p[len(findings.PROPERTY_PREFIX):]] = [fmt_num(v, 3) for v in prop[p]]
    for c in ranked[:top]:
        out[f"{c} vs {ref}"] = [_change(v) for v in wide[c]]
    best = wide[ranked].idxmin(axis=1) if info["metrics"][metric][1] else wide[ranked].idxmax(axis=1)
    out["best here"] = [f"{b} ({_change(wide.loc[i, b])})" for i, b in zip(wide.index, best, strict=True)]
    return out


def _change(log_ratio):
    if log_ratio is None or not np.isfinite(log_ratio):
        return "n/a"
    from ... import findings

    return findings._pct(float(np.exp(log_ratio)))


def correlation_table(df, info, metric):
    """Spearman's rho (95% CI) between each sampler's gain over the reference and each property, over the
    units: the evidence of the answer, without p-values (those are in the answer and in FINDINGS.md)."""
    from ... import findings

    recs = findings.property_records(df, {**info, "primary_metric": metric},
                                     {"id": "nonuniform", "question": "", "role": ["sampler"],
                                      "reference": "uniform"},
                                     (info.get("config") or {}).get("methods"))
    if not recs:
        return None
    r = recs[0]
    rows = []
    for e in r["samplers"]:
        row = {"sampler": e["name"], f"change vs {r['reference']}": findings._pct(e["median_gain"]),
               "units better / worse": f"{e['overall'].get('better', 0)} / {e['overall'].get('worse', 0)}"}
        for p, d in e["properties"].items():
            rho, (lo, hi) = d.get("rho"), d.get("ci") or (None, None)
            row[p[len(findings.PROPERTY_PREFIX):]] = ("n/a" if rho is None else
                                                       f"{fmt_num(rho, 2)} [{fmt_num(lo, 2)}, {fmt_num(hi, 2)}]")
        rows.append(row)
    return pd.DataFrame(rows)


@register
class SamplersSection(Section):
    kind = "samplers"

    def tables(self, df, block):
        info = {"metrics": _metrics(), "reference": block.get("reference", "uniform"), "coords": ["m"],
                "methods": list(block.get("methods", {})), "config": block}
        df = df[df["trace_error"].notna()] if "trace_error" in df else df
        out = []
        for metric in ("trace_error", "test_error"):
            t = gains_table(df, info, metric)
            if t is not None:
                out.append((f"{info['metrics'][metric][0]}: change against {info['reference']} per data set and width, "
                            "with the data set's properties", t,
                            "Change: the median over seeds and m of the ratio to the reference's error on the same "
                            "landmark budget and seed (negative = lower error than the reference); the three samplers "
                            "with the largest median change over all units, and each unit's best. Properties (on the "
                            "exact block, at lam = alpha): d_eff_ratio = effective dimension / n, decay = fraction of "
                            "eigenvalues holding 90% of the trace, coherence = largest ridge leverage score / mean, "
                            "leverage_gini = Gini coefficient of the ridge leverage scores."))
        t = correlation_table(df, info, "trace_error")
        if t is not None:
            out.append(("Spearman's rho [95% CI] between each sampler's gain (the change above) and each property, "
                        "across data sets and widths", t,
                        "Negative rho: the sampler's error falls further below the reference's where the property is "
                        "larger. Fisher-z intervals (standard error 1.06 / sqrt(n - 3)); the tests with Holm's "
                        "correction and the split at each property's median: the answer on page one."))
        return out

    def figures(self, df, info, out_dir):
        listing = []
        df = df[df["trace_error"].notna()] if "trace_error" in df else df
        if not len(df):
            return listing
        for metric in CURVE_METRICS:
            if metric not in df:
                continue
            for kern in sorted(df["kernel"].unique()):
                name = f"{metric}_vs_m_{kern}.png"
                curve_figure(df, info, metric, kern, Path(out_dir) / name)
                listing.append({"file": name, "caption": (
                    f"{info['metrics'][metric][0]} against the number of landmarks m, kernel {kern}: one panel per "
                    f"data set, one line per sampler (dashed: {info.get('reference')}), geometric mean over seeds, "
                    "log axes. Lower is better.")})
        for cost, cost_label in PARETO_COSTS:
            if cost not in df:
                continue
            name = f"pareto_{PARETO_METRIC}_{cost}.png"
            pareto_figure(df, info, PARETO_METRIC, cost, cost_label, Path(out_dir) / name)
            listing.append({"file": name, "caption": (
                f"{info['metrics'][PARETO_METRIC][0]} against {cost_label.lower()}, one panel per kernel width: "
                "each sampler is a line through its m values, from the smallest m (top) to the largest (geometric "
                "means over data sets and seeds, log axes); black: the Pareto front, the (sampler, m) that no other "
                "beats on both error and cost.")})
        return listing


def _metrics():
    """The metrics the tables use, as the study declares them (a section never imports a study)."""
    return {"trace_error": ("Relative trace-norm error", True), "test_error": ("Test error of LLA KRR", True)}
