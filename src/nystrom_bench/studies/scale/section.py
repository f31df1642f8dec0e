"""The scale study's report: tables by size, fitted exponents of ``time ~ n^a``, the ratios against
scikit-learn, and log-log figures of time, memory and RMSE against n."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...sections import Section, register

#: the titles of the metrics in the tables by size
LABELS = {"fit_time": "Fit time (s)", "peak_mem_mb": "Peak memory added (MiB)", "test_rmse": "Test RMSE",
          "predict_time": "Predict time (s)"}


_SIZE_NOTE = ("Rows: landmarks m and training size n; exact KRR's row has no m. An empty cell: the method was not "
              "run there (scikit-learn above params.max_memory_mb, exact KRR above params.exact_max_n) or failed (see "
              "the job log).")
_EXPONENT_NOTE = ("Least squares on log-log axes over the n values of each (method, m); theory: n^1 for the Nystrom "
                  "fits' time and a streamed solver's memory is O(m^2) (exponent ~0), exact KRR n^3 in time and n^2 "
                  "in memory.")
_RATIO_NOTE = ("speed-up = scikit-learn fit + predict time / ours; memory = our peak / scikit-learn's; RMSE ratio = "
               "ours / scikit-learn's (same landmarks, same alpha).")


@register
class ScaleSection(Section):
    kind = "scale"

    def tested_rows(self, df):
        """The paired tests pair methods within each m (over n and seeds): exact KRR has no m."""
        return df[df["m"].notna()] if "m" in df else df

    def tables(self, df, block):
        order = [m for m in block.get("methods", {}) if m in set(df["method"])]
        made = [(f"{LABELS[metric]} by size (mean over seeds)", size_table(df, metric, order), _SIZE_NOTE)
                for metric in ("fit_time", "peak_mem_mb", "test_rmse", "predict_time")]
        made += [("Fitted exponents a of time ~ n^a and memory ~ n^a", exponent_table(df, order), _EXPONENT_NOTE),
                 ("Against scikit-learn at the largest n both ran", ratio_table(df, order), _RATIO_NOTE)]
        return [(title, table, note) for title, table, note in made if table is not None]

    def figures(self, df, info, out_dir):
        listing = []
        order = [m for m in info.get("methods", []) if m in set(df["method"])]
        labels = {**LABELS, **{k: v[0] for k, v in info.get("metrics", {}).items()}}
        for metric, caption in (("fit_time", "Fit time"), ("peak_mem_mb", "Peak memory added"),
                                ("test_rmse", "Test RMSE")):
            rows = df[df[metric].notna()] if metric in df else df.iloc[:0]
            if not len(rows):
                continue
            name = f"{metric}_vs_n.png"
            loglog_figure(rows, metric, labels[metric], Path(out_dir) / name, order,
                          exponents=metric != "test_rmse")
            listing.append({"file": name, "caption": f"{caption} against n on log-log axes: one panel per (data set, "
                            "m), one line per method (mean over seeds)"
                            + ("; the legend gives the fitted exponent a of n^a." if metric != "test_rmse" else ".")
                            + " Exact KRR (no m) is drawn in every panel of its data set."})
        return listing


def _cell_means(df, metric):
    keys = ["dataset", "m", "n", "method"]
    d = df[df[metric].notna()].copy()
    d["m"] = d["m"].fillna(-1)  # exact KRR: no m
    return d.groupby(keys, as_index=False)[metric].mean()


def size_table(df, metric, order):
    """Mean ``metric`` per (data set, m, n), one column per method."""
    if metric not in df or not df[metric].notna().any():
        return None
    import pandas as pd

    from ...report import fmt_num

    c = _cell_means(df, metric)
    wide = c.pivot_table(index=["dataset", "m", "n"], columns="method", values=metric)
    wide = wide[[m for m in order if m in wide.columns]].reset_index()
    wide["m"] = wide["m"].map(lambda v: "-" if v < 0 else str(int(v)))
    wide["n"] = wide["n"].map(lambda v: f"{int(v):,}")
    for col in wide.columns[3:]:
        wide[col] = wide[col].map(lambda v: "" if pd.isna(v) else fmt_num(v, 3))
    return wide


def fit_exponent(ns, values):
    """Slope of log(values) against log(ns) (least squares), or NaN with fewer than two sizes."""
    ns, values = np.asarray(ns, dtype=float), np.asarray(values, dtype=float)
    ok = (ns > 0) & (values > 0) & np.isfinite(values)
    if ok.sum() < 2 or np.ptp(np.log(ns[ok])) == 0:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(values[ok]), 1)[0])


def exponent_table(df, order):
    import pandas as pd

    rows = []
    for metric in ("fit_time", "peak_mem_mb"):
        if metric not in df:
            continue
        c = _cell_means(df, metric)
        for (ds, m, method), g in c.groupby(["dataset", "m", "method"]):
            if g["n"].nunique() >= 2:
                rows.append({"dataset": ds, "m": m, "method": method, "metric": metric,
                             "a": fit_exponent(g["n"], g[metric])})
    if not rows:
        return None
    t = pd.DataFrame(rows).pivot_table(index=["dataset", "m", "method"], columns="metric", values="a").reset_index()
    t["method"] = pd.Categorical(t["method"], [m for m in order if m in set(t["method"])] or None)
    t = t.sort_values(["dataset", "m", "method"]).rename(columns={"fit_time": "a (fit time)",
                                                                   "peak_mem_mb": "a (peak memory)"})
    t["method"] = t["method"].astype(str)
    t["m"] = t["m"].map(lambda v: "-" if v < 0 else str(int(v)))
    for col in ("a (fit time)", "a (peak memory)"):
        if col in t:
            t[col] = t[col].map(lambda v: "" if pd.isna(v) else f"{v:.2f}".replace("-0.00", "0.00"))
    return t


def ratio_table(df, order):
    """Each method against scikit-learn (method label with approach sklearn) at the largest n where both ran."""
    import json

    import pandas as pd

    if "params" not in df:
        return None
    approach = df["params"].map(lambda s: json.loads(s).get("approach") if isinstance(s, str) else None)
    sk = df[approach == "sklearn"]
    if not len(sk):
        return None
    rows = []
    for (ds, m), g in df[df["m"].notna()].groupby(["dataset", "m"]):
        skg = sk[(sk["dataset"] == ds) & (sk["m"] == m) & sk["fit_time"].notna()]
        if not len(skg):
            continue
        n = skg["n"].max()
        cell = g[g["n"] == n]
        ref = skg[skg["n"] == n]
        ref_t = (ref["fit_time"] + ref["predict_time"]).mean()
        for method in [x for x in order if x in set(cell["method"]) and x not in set(skg["method"])]:
            r = cell[cell["method"] == method]
            rows.append({"dataset": ds, "m": int(m), "n": f"{int(n):,}", "method": method,
                         "speed-up": f"{ref_t / (r['fit_time'] + r['predict_time']).mean():.2f}",
                         "memory": f"{r['peak_mem_mb'].mean() / ref['peak_mem_mb'].mean():.3f}",
                         "RMSE ratio": f"{r['test_rmse'].mean() / ref['test_rmse'].mean():.4f}"})
    return pd.DataFrame(rows) if rows else None


def loglog_figure(df, metric, label, out_png, order, exponents=True):
    """``metric`` against n, log-log: one panel per (data set, m), one line per method; exact KRR in every
    panel of its data set; the legend gives the fitted exponent."""
    from ...report import finish_figure, panels, pyplot

    plt = pyplot()
    c = _cell_means(df, metric)
    cells = sorted({(ds, m) for ds, m in zip(c["dataset"], c["m"], strict=True) if m >= 0}) or \
        sorted({(ds, m) for ds, m in zip(c["dataset"], c["m"], strict=True)})
    fig, axes = panels(plt, len(cells), 3.4, 3.0)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    methods = [m for m in order if m in set(c["method"])] + sorted(set(c["method"]) - set(order))
    for ax, (ds, m) in zip(axes.flat, cells, strict=False):
        for i, method in enumerate(methods):
            g = c[(c["dataset"] == ds) & (c["method"] == method) & ((c["m"] == m) | (c["m"] < 0))]
            if not len(g):
                continue
            g = g.sort_values("n")
            name = method
            if exponents:
                a = fit_exponent(g["n"], g[metric])
                if np.isfinite(a):
                    name += f" (n^{a:.2f})"
            ax.plot(g["n"], g[metric], marker="o", ms=3, lw=1.2, color=colors[i % len(colors)], label=name,
                    ls="--" if (g["m"] < 0).all() else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{ds}, m = {int(m)}" if m >= 0 else ds, fontsize=9)
        ax.set_xlabel("n (training points)")
        ax.set_ylabel(label, fontsize=7)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle(f"{label} against n", fontsize=10)
    finish_figure(fig, out_png)
