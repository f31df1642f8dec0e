"""Figures (seaborn/matplotlib), tables and PDF assembly (fpdf2, searchable text).

Each study gets ``reports/<study>.pdf``: set-up, provenance (date, git commit,
package versions, hardware, config hash), tables of mean +- sd per data set and
method (and coord value), the paired tests against the reference method overall
and per coord value, and figures: a box plot per metric, or -- for a study with
coords -- each metric against each coord (mean and sd band over seeds, one line
per method, the paper's numbers dashed where the study knows them).
``reports/summary.pdf`` gathers the headline result of every study.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import provenance
from .atomic import atomic_dir, replace_into
from .results import format_coord

__all__ = ["metric_figure", "coord_figure", "study_figures", "study_pdf", "summary_pdf", "mean_sd_table",
           "describe_tests", "varying_coords"]


def varying_coords(df, coords):
    """The coords that take more than one value in ``df``."""
    return [c for c in coords if c in df and df[c].notna().any() and df[c].nunique() > 1]


# -- figures --------------------------------------------------------------------------------------
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panels(plt, n, width=3.2, height=2.9):
    ncol = min(4, n)
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol, height * nrow), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes


def metric_figure(df, info, metric, out_png):
    """Box plot of ``metric``: one panel per data set, one box per method, points = seeds."""
    import seaborn as sns

    plt = _plt()
    label, _lower = info["metrics"][metric]
    df = df[df[metric].notna()]
    datasets = sorted(df["dataset"].unique())
    sns.set_theme(style="whitegrid", context="paper")
    fig, axes = _panels(plt, len(datasets))
    order = _method_order(df, info.get("methods"))
    kernels_ = sorted(df["kernel"].unique())
    for ax, ds in zip(axes.flat, datasets, strict=False):
        sub = df[df["dataset"] == ds]
        hue = "kernel" if len(kernels_) > 1 else None
        sns.boxplot(data=sub, x="method", y=metric, hue=hue, order=order, ax=ax, fliersize=0,
                    color="#a6c8e0" if hue is None else None)
        sns.stripplot(data=sub, x="method", y=metric, hue=hue, order=order, ax=ax, dodge=hue is not None,
                      size=3, color="#1b3a57" if hue is None else None, legend=False)
        ax.set_title(ds)
        ax.set_xlabel("")
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=30)
        if "time" in metric and sub[metric].min() > 0 and sub[metric].max() / sub[metric].min() > 20:
            ax.set_yscale("log")
    fig.suptitle(label, fontsize=10)
    fig.tight_layout()
    replace_into(out_png, lambda tmp: fig.savefig(tmp, dpi=150, format="png"))
    plt.close(fig)


def coord_figure(df, info, metric, coord, out_png, paper_curve=None, title=None, logx=None, logy=None,
                 robust_ylim=False):
    """``metric`` against ``coord``: one panel per data set, one line per method (x kernel, x other
    coords), mean and +- sd band over seeds; ``paper_curve(dataset, method, kernel, metric, coord)``
    may return the paper's points, drawn dashed in the line's colour.  ``logx``/``logy``: log
    axes (None: log where the values span more than a factor 20, y only for times).
    ``robust_ylim``: each panel's y range from the 2-98% quantiles of its values, so that a few
    wild values (a method far off on some widths) do not flatten every other line."""
    plt = _plt()
    label, _lower = info["metrics"][metric]
    df = df[df[metric].notna() & df[coord].notna()]
    datasets = sorted(df["dataset"].unique())
    others = [c for c in varying_coords(df, info.get("coords", ())) if c != coord]
    fig, axes = _panels(plt, len(datasets), 3.3, 2.9)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    order = {m: i for i, m in enumerate(_method_order(df, info.get("methods")))}
    many_kernels = df["kernel"].nunique() > 1
    for ax, ds in zip(axes.flat, datasets, strict=False):
        sub = df[df["dataset"] == ds]
        keys = ["method", "kernel", *others]
        lines = sorted(sub.groupby(keys), key=lambda kv: (order.get(kv[0][0], 99), *map(str, kv[0][1:])))
        for i, (key, g) in enumerate(lines):
            method, kernel = key[0], key[1]
            name = "/".join([method] + ([kernel] if many_kernels else [])
                            + [f"{c}={format_coord(v)}" for c, v in zip(others, key[2:], strict=True)])
            agg = g.groupby(coord)[metric].agg(["mean", "std"]).reset_index().sort_values(coord)
            c = colors[i % len(colors)]
            ax.plot(agg[coord], agg["mean"], marker="o", ms=3, lw=1.2, color=c, label=name)
            sd = agg["std"].fillna(0.0)
            ax.fill_between(agg[coord], agg["mean"] - sd, agg["mean"] + sd, color=c, alpha=0.15, lw=0)
            ref = paper_curve(ds, method, kernel, metric, coord) if paper_curve else None
            if ref:
                ax.plot(*zip(*ref, strict=True), ls="--", lw=1, color=c, label=f"{name} (paper)")
        xs = sub[coord].to_numpy(dtype=float)
        if logx or (logx is None and len(xs) and xs.min() > 0 and xs.max() / xs.min() > 20):
            ax.set_xscale("log")
        if logy or (logy is None and "time" in metric and sub[metric].min() > 0
                    and sub[metric].max() / sub[metric].min() > 20):
            ax.set_yscale("log")
        if robust_ylim and len(sub):
            lo, hi = sub[metric].quantile([0.02, 0.98])
            pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
            ax.set_ylim(lo - pad, hi + pad)
        ax.set_title(ds, fontsize=9)
        ax.set_xlabel(coord)
        ax.set_ylabel(label, fontsize=7)
        ax.grid(alpha=0.3)
    if len(datasets):
        axes.flat[0].legend(fontsize=6)
    fig.suptitle(title or f"{label} against {coord}", fontsize=10)
    fig.tight_layout()
    replace_into(out_png, lambda tmp: fig.savefig(tmp, dpi=150, format="png"))
    plt.close(fig)


def study_figures(results_csv, info, out_dir):
    """Every figure of a study into the directory ``out_dir`` (replaced atomically), plus
    ``figures.json`` listing ``[{"file", "caption"}]`` in the order the PDF shows them.

    A tested metric gets one figure per coord that varies (metric against coord), or a
    box plot when no coord varies.  Returns the figure paths.
    """
    from . import studies

    df = pd.read_csv(results_csv)
    kind = studies.get(info["kind"])
    listing = []
    with atomic_dir(out_dir) as tmp:
        for metric in info.get("tested_metrics") or list(info["metrics"]):
            label = info["metrics"][metric][0]
            rows = df[df[metric].notna()] if metric in df else df.iloc[:0]
            if not len(rows):
                continue
            varying = varying_coords(rows, info.get("coords", ()))
            shown = varying if kind.figure_coords is None else [c for c in varying if c in kind.figure_coords]
            for coord in shown:
                name = f"{metric}_vs_{coord}.png"
                coord_figure(rows, info, metric, coord, Path(tmp) / name, kind.paper_curve)
                listing.append({"file": name, "caption": f"{label} against {coord}: mean (line) and +- sd (band) "
                                "over seeds, one line per method; dashed: the paper's numbers where known."})
            if not varying:
                metric_figure(rows, info, metric, Path(tmp) / f"{metric}.png")
                listing.append({"file": f"{metric}.png", "caption": f"{label}: one panel per data set, one box "
                                "per method; dots are seeds."})
        listing += kind.figures(df, info, tmp)
        (Path(tmp) / "figures.json").write_text(json.dumps(listing, indent=1))
    return [Path(out_dir) / f["file"] for f in listing]


def _method_order(df, order=None):
    """Methods in the config's order (``order``), then any others as they appear."""
    present = list(dict.fromkeys(df["method"]))
    first = [m for m in (order or []) if m in present]
    return first + [m for m in present if m not in first]


# -- tables ---------------------------------------------------------------------------------------
def fmt_num(v, sig=3):
    """A number for people: ``sig`` significant digits, scientific only below 1e-3 or from 1e6 on."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    v = float(v)
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e6:
        digits = max(sig - 1 - int(math.floor(math.log10(abs(v)))), 0)
        return f"{v:.{digits}f}"
    return _short_exp(f"{v:.{sig - 1}e}")


def _short_exp(text):
    """'2.0e-05' -> '2.0e-5', '3e+07' -> '3e7'."""
    mant, _, exp = text.partition("e")
    return f"{mant}e{int(exp)}"


def fmt_mean_sd(mean, sd):
    """'mean +- sd' with sd to 2 significant digits and the mean to the same decimal place
    (34.13, 2.287 -> '34.1 +- 2.3'; 0.004077, 0.000608 -> '0.00408 +- 0.00061')."""
    if mean is None or not math.isfinite(float(mean)):
        return "n/a"
    mean, sd = float(mean), (0.0 if sd is None or not math.isfinite(float(sd)) else float(sd))
    if sd <= 0:
        return f"{mean:.4g} +- 0"
    place = 1 - int(math.floor(math.log10(sd)))  # decimals that keep 2 significant digits of sd
    if place > 6 or abs(mean) >= 1e6 or (place > 3 and abs(mean) < 1e-3):
        return f"{fmt_num(mean)} +- {fmt_num(sd, 2)}"
    place = max(place, 0)
    return f"{mean:.{place}f} +- {sd:.{place}f}"


def mean_sd_table(df, metric, fmt=None, order=None, coords=()):
    """Rows = dataset (x kernel) (x each coord that varies), columns = method (in ``order`` if
    given), cells = 'mean +- sd' over seeds."""
    df = df[df[metric].notna()]
    rows_key = ["dataset"] if df["kernel"].nunique() == 1 else ["dataset", "kernel"]
    rows_key += varying_coords(df, coords)
    g = df.groupby(rows_key + ["method"])[metric].agg(["mean", "std", "count"]).reset_index()
    methods = _method_order(df, order)
    table = []
    for key, sub in g.groupby(rows_key, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = {"/".join(rows_key): "/".join(map(format_coord, key))}
        for m in methods:
            r = sub[sub["method"] == m]
            if len(r):
                r = r.iloc[0]
                sd = 0.0 if pd.isna(r["std"]) else r["std"]
                row[m] = (f"{fmt.format(r['mean'])} +- {fmt.format(sd)}" if fmt else fmt_mean_sd(r["mean"], sd))
            else:
                row[m] = "n/a"
        table.append(row)
    return pd.DataFrame(table)


def _fmt_p(p):
    if p is None or (isinstance(p, float) and np.isnan(p)):
        return "n/a"
    return f"{p:.2g}" if p >= 1e-3 else _short_exp(f"{p:.0e}")


def _fmt_ranks(ranks):
    """``{"a": 1.5625, ...}`` (JSON or dict) as 'a 1.56, b 2.0' in rank order."""
    if isinstance(ranks, str):
        try:
            ranks = json.loads(ranks)
        except ValueError:
            return ranks
    return ", ".join(f"{k} {fmt_num(v)}" for k, v in sorted(ranks.items(), key=lambda kv: kv[1]))


def describe_tests(paired, info, metric, scope=None):
    """Plain sentences stating each paired comparison's outcome on ``metric`` (in ``scope``, if given)."""
    label, lower = info["metrics"][metric]
    out = []
    rows = paired[paired["metric"] == metric]
    if scope is not None and "scope" in rows:
        rows = rows[rows["scope"] == scope]
    for _, r in rows.iterrows():
        where = "" if r.get("scope", "all") in ("all", None) or pd.isna(r.get("scope")) else f" at {r['scope']}"
        better = "lower" if lower else "higher"
        p = r.get("wilcoxon_p_holm", r["wilcoxon_p"])
        verdict = "significant at 5% (Holm)" if (not pd.isna(p) and p < 0.05) else "not significant at 5% (Holm)"
        out.append(
            f"{r['method']} vs {r['reference']} on {label.lower()}{where}: {r['method']} is {better} (better) in "
            f"{int(r['wins'])} and worse in {int(r['losses'])} of {int(r['n_pairs'])} paired runs; "
            f"median difference {r['median_diff']:.3g}; Wilcoxon signed-rank p = {_fmt_p(r['wilcoxon_p'])}, "
            f"Holm-adjusted p = {_fmt_p(p)} ({verdict})."
        )
    return out


# -- PDF assembly ---------------------------------------------------------------------------------
def _latin1(text):
    text = str(text).replace("\u2014", "-").replace("\u2013", "-").replace("\u00b1", "+-")
    return text.encode("latin-1", "replace").decode("latin-1")


class _PDF:
    """A thin layer over fpdf2 with headings, paragraphs, tables and images."""

    def __init__(self, title):
        from fpdf import FPDF

        self.pdf = FPDF(orientation="P", unit="mm", format="A4")
        self.pdf.set_auto_page_break(auto=True, margin=15)
        self.pdf.set_title(_latin1(title))
        self.pdf.set_author("nystrom-bench")
        self.pdf.add_page()
        self.width = self.pdf.w - self.pdf.l_margin - self.pdf.r_margin

    def title(self, text):
        self.pdf.set_font("Helvetica", "B", 16)
        self.pdf.multi_cell(self.width, 8, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(2)

    def heading(self, text):
        self.pdf.ln(3)
        self.pdf.set_font("Helvetica", "B", 12)
        self.pdf.multi_cell(self.width, 6, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(1)

    def para(self, text, size=9.5, style=""):
        self.pdf.set_font("Helvetica", style, size)
        self.pdf.multi_cell(self.width, 4.6, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(1)

    def table(self, df, size=8, col_widths=None):
        if df is None or len(df) == 0:
            self.para("(no rows)")
            return
        self.pdf.set_font("Helvetica", "", size)
        with self.pdf.table(col_widths=col_widths, text_align="LEFT", line_height=4.2,
                            first_row_as_headings=True) as t:
            t.row([_latin1(c) for c in df.columns])
            for _, r in df.iterrows():
                t.row([_latin1(v) for v in r.tolist()])
        self.pdf.ln(2)

    def image(self, path, caption=None):
        from PIL import Image

        with Image.open(path) as im:
            w, h = im.size
        height = self.width * h / w
        if self.pdf.get_y() + height > self.pdf.h - self.pdf.b_margin:
            self.pdf.add_page()
        self.pdf.image(str(path), w=self.width)
        if caption:
            self.para(caption, size=8, style="I")

    def provenance(self, extra=None):
        p = provenance.summary()
        vers = ", ".join(f"{k[len('version_'):]} {v}" for k, v in p.items() if k.startswith("version_"))
        lines = [f"Generated {p['date']} from git commit {p['git_commit']}.", f"Hardware: {p['hardware']}.",
                 f"Versions: {vers}."]
        if extra:
            lines.append(extra)
        self.para(" ".join(lines), size=8)

    def save(self, out_pdf):
        replace_into(out_pdf, lambda tmp: self.pdf.output(tmp))


def _setup_tables(df):
    params = df.drop_duplicates("dataset").set_index("dataset")["params"].map(json.loads)
    ds = pd.DataFrame(
        [{"data set": d, "n train": p.get("n_train", "?"), "n test": p.get("n_test", "?"),
          "features": p.get("n_features", "?")} for d, p in params.items()]
    )
    return ds


def _paired_table(paired):
    if paired is None or len(paired) == 0:
        return pd.DataFrame()
    t = paired[["metric", "scope", "method", "reference", "n_pairs", "wins", "losses", "median_diff",
                "wilcoxon_p", "wilcoxon_p_holm", "ttest_p"]].copy()
    t["median_diff"] = t["median_diff"].map(lambda v: f"{v:.3g}")
    for c in ("wilcoxon_p", "wilcoxon_p_holm", "ttest_p"):
        t[c] = t[c].map(_fmt_p)
    return t.rename(columns={"n_pairs": "pairs", "median_diff": "median diff", "wilcoxon_p": "Wilcoxon p",
                             "wilcoxon_p_holm": "Holm p", "ttest_p": "paired t p"})


def _table_coords(info):
    """The coords the mean +- sd tables break down by (the study's ``summary_coords``, else all)."""
    coords = info.get("coords", [])
    by = info.get("summary_coords")
    return coords if by is None else [c for c in coords if c in by]


def _read_optional(path):
    try:
        return pd.read_csv(path)
    except (pd.errors.EmptyDataError, FileNotFoundError):
        return pd.DataFrame()


def study_pdf(results_csv, paired_csv, friedman_csv, figures, info, out_pdf):
    """Assemble ``reports/<study>.pdf``; ``figures`` is the directory of :func:`study_figures`."""
    from . import studies

    df = pd.read_csv(results_csv)
    paired = _read_optional(paired_csv)
    fried = _read_optional(friedman_csv)
    cfg = info["config"]
    coords = info.get("coords", [])
    doc = _PDF(info["title"])
    doc.title(info["title"])
    doc.provenance(f"Study '{info['study']}' (kind '{info['kind']}'), config hash {info['config_hash']}.")
    doc.heading("1. Set-up")
    doc.para(info["description"])
    grid = "".join(f" x {df[c].nunique()} values of {c}" for c in varying_coords(df, coords))
    blocks = ", ".join(info.get("block_cols", ["dataset", "kernel", "seed"]))
    doc.para(
        f"{len(df)} results: {df['dataset'].nunique()} data sets x {df['method'].nunique()} methods x "
        f"{df['kernel'].nunique()} kernel(s) x {df['seed'].nunique()} seeds{grid}. Features scaled with "
        f"'{cfg.get('scaling', 'standardize')}' fitted on the training part. Study parameters: "
        f"{json.dumps(cfg.get('params', {}))}. Paired tests pair results on ({blocks})"
        + (f", within each value of {', '.join(coords)} and over all of them." if coords else ".")
    )
    doc.table(_setup_tables(df))
    methods = pd.DataFrame([{"method": m, "settings": json.dumps(c)} for m, c in cfg["methods"].items()])
    kernels_ = pd.DataFrame([{"kernel": k, "settings": json.dumps(c)} for k, c in cfg["kernels"].items()])
    doc.table(methods, col_widths=(30, 130))
    doc.table(kernels_, col_widths=(30, 130))
    doc.heading("2. Results (mean +- sd over seeds)")
    for metric, (label, lower) in info["metrics"].items():
        if metric not in df or df[metric].isna().all():
            continue
        doc.para(f"{label} ({'lower' if lower else 'higher'} is better)", style="B")
        doc.table(mean_sd_table(df, metric, order=info.get("methods"), coords=_table_coords(info)))
    for title, table, note in studies.get(info["kind"]).report_tables(df, cfg):
        doc.para(title, style="B")
        doc.table(table, size=6.5)
        if note:
            doc.para(note, size=8.5)
    doc.heading(f"3. Paired tests against '{info.get('reference')}'")
    doc.para(
        "Wilcoxon signed-rank test (two-sided) and paired t-test over the paired blocks; Holm's "
        "correction over the methods compared within each metric and scope ('all' pools every coord value, "
        "with the coords part of the block). 'wins' counts blocks where the method beats the reference."
    )
    doc.table(_paired_table(paired), size=6.5)
    if len(paired):
        for line in describe_tests(paired, info, info["primary_metric"]):
            doc.para(line)
    for _, r in fried.iterrows():
        scope = "" if r.get("scope", "all") == "all" else f" at {r['scope']}"
        doc.para(f"Friedman test on {r['metric']}{scope}: chi2 = {r['statistic']:.3g}, p = {_fmt_p(r['p'])} over "
                 f"{r['n_blocks']} blocks; mean ranks (1 = best): {_fmt_ranks(r['mean_ranks'])}.")
    doc.heading("4. Figures")
    listing = Path(figures) / "figures.json"
    for fig in json.loads(listing.read_text()) if listing.exists() else []:
        doc.image(Path(figures) / fig["file"], caption=fig["caption"])
    doc.save(out_pdf)


def summary_pdf(results_csvs, paired_csvs, infos, title, out_pdf):
    """Assemble ``reports/summary.pdf`` over every study."""
    doc = _PDF(f"{title}: summary")
    doc.title(f"{title}: summary of all studies")
    doc.provenance()
    for i, (res, pair, info) in enumerate(zip(results_csvs, paired_csvs, infos, strict=True), 1):
        df = pd.read_csv(res)
        paired = _read_optional(pair)
        doc.heading(f"{i}. {info['title']} (reports/{info['study']}.pdf)")
        doc.para(info["description"])
        metric = info["primary_metric"]
        label, _ = info["metrics"][metric]
        doc.para(f"{label}, mean +- sd over seeds:", style="B")
        doc.table(mean_sd_table(df, metric, order=info.get("methods"), coords=_table_coords(info)))
        if len(paired):
            for line in describe_tests(paired, info, metric, scope="all"):
                doc.para(line)
    doc.save(out_pdf)
