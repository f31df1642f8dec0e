"""Figures (seaborn/matplotlib), tables and PDF assembly (fpdf2, searchable text).

Each study gets ``reports/<study>.pdf``, laid out like a results section:

1. page one -- the study's question, its set-up in a few lines (data, methods, grid,
   seeds, protocol), the paper claims it tests with their verdicts (``claims.csv``),
   the answer in one line per tested metric (ranks and win/tie/loss counts), and the
   key figure (the critical-difference diagram of the primary metric, else the
   study's first figure);
2. the tables in the paper's layout (the study's ``report_tables`` hook, the paper's
   numbers beside ours);
3. mean +- sd tables, rounded to the digits the spread supports (on landscape pages where a table has more
   than ``WIDE_TABLE_COLUMNS`` columns: one line a cell);
4. which method wins: a win/tie/loss matrix of Holm-adjusted Wilcoxon tests with
   Hodges-Lehmann effects (``wtl.csv``) and critical-difference diagrams (``cd.csv``);
5. the figures, each with a caption that says what to look for;
6. an appendix: provenance, config, data sets, every test as a table.

This module never imports a study or a report section (both sit above it): the workflow
scripts pass the kind's report section (:mod:`nystrom_bench.sections`) in (``paper_curve``,
``extra_figures``, ``report_tables``) and the analysis info its ``figure_coords``.  ``reports/summary.pdf`` (findings first) is assembled by
:mod:`nystrom_bench.findings` with :class:`PDF`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import provenance
from .atomic import atomic_dir, replace_into
from .results import assumption_summary, format_coord, outside_assumptions

__all__ = ["metric_figure", "coord_figure", "cd_figure", "study_figures", "finish_figure", "study_pdf", "PDF",
           "mean_sd_table", "wtl_matrix", "claims_table", "varying_coords", "fmt_num",
           "fmt_mean_sd", "fmt_p", "pyplot", "panels", "OUTSIDE", "mark_outside", "outside_label",
           "assumption_note"]

#: what marks a method's results outside its assumptions in tables and legends (the PDF's core fonts
#: have no dagger): ``"mcm (outside assumptions)"``
OUTSIDE = "(outside assumptions)"


def outside_label(method, row=None):
    """``"mcm (outside assumptions)"``, with the data sets counted where ``row`` (a row of
    :func:`nystrom_bench.results.assumption_summary`) is given: ``"mcm (outside assumptions: 8 of 10
    data sets)"``."""
    if row is None:
        return f"{method} {OUTSIDE}"
    return f"{method} {OUTSIDE[:-1]}: {int(row['datasets_out'])} of {int(row['datasets'])} data sets)"


def mark_outside(df, col="method"):
    """``df`` with ``col`` of each row outside its method's assumptions marked (:func:`outside_label`),
    so that every grouping by method keeps those rows apart from the method's others (a copy where
    anything is marked, else ``df`` itself)."""
    out = outside_assumptions(df)
    if not out.any():
        return df
    df = df.copy()
    df[col] = df[col].astype(object)
    df.loc[out, col] = [outside_label(m) for m in df.loc[out, col]]
    return df


def assumption_note(df, what="results", mark=OUTSIDE):
    """One sentence on the rows of ``df`` outside their method's assumptions -- per method how many, on how
    many data sets and why -- or ``""`` where there are none; ``mark``: how the table at hand marks them."""
    summary = assumption_summary(df)
    if not len(summary):
        return ""
    parts = [f"{r['method']} {r['rows_out']} of {r['rows']} {what} on {r['datasets_out']} of {r['datasets']} data "
             f"sets ({r['reasons']})" for _, r in summary.iterrows()]
    return (f"Outside the method's assumptions, shown apart{f' (marked {mark!r})' if mark else ''} and never averaged "
            f"in, tested or ranked with its other {what}: " + "; ".join(parts) + ".")


def _ordered_marked(df, order=None):
    """``df``'s methods in the config's ``order`` (then as they appear), each followed by its marked twin
    (:func:`outside_label`) where :func:`mark_outside` made one."""
    def base(m):
        return str(m)[: -len(OUTSIDE) - 1] if str(m).endswith(OUTSIDE) else m

    present = list(dict.fromkeys(df["method"]))
    names = list(dict.fromkeys(base(m) for m in present))
    names = [m for m in (order or []) if m in names] + [m for m in names if m not in (order or [])]
    return [x for n in names for x in (n, outside_label(n)) if x in present]


def varying_coords(df, coords):
    """The coords that take more than one value in ``df``."""
    return [c for c in coords if c in df and df[c].notna().any() and df[c].nunique() > 1]


# -- figures --------------------------------------------------------------------------------------
def pyplot():
    """matplotlib's pyplot on the Agg backend (no display): what a report section draws with."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _widen_mathtext_cache()
    return plt


def _widen_mathtext_cache(size=4096):
    """Give matplotlib's mathtext parser a cache of ``size`` entries instead of its 50.

    Every log-axis tick label is mathtext (``10^{-2}``), parsed once per text, size and dpi; a study's
    many-panel figures hold more than 50 of those, so the small cache thrashed and the same labels were
    parsed again (pyparsing, ~8% of the samplers study's figure time).  Only the cache changes: the
    same parse results, the same pixels.  A matplotlib without the private ``_parse_cached`` is left as it is.
    """
    from matplotlib import mathtext

    cached = getattr(mathtext.MathTextParser, "_parse_cached", None)
    inner = getattr(cached, "__wrapped__", None)
    if inner is None or getattr(cached, "_widened", False):
        return
    wider = functools.lru_cache(size)(inner)
    wider._widened = True
    mathtext.MathTextParser._parse_cached = wider


def save_png(fig, out_png, dpi=150, **savefig_kw):
    """Write ``fig`` to ``out_png`` (atomically) as a 256-colour palette PNG: about a third of the bytes of
    matplotlib's RGBA PNG for these line and box plots (measured on a default run's 50 figures: 6.4 MB ->
    2.1 MB), which keeps the study PDFs and the HTML report (every figure embedded) small."""
    from PIL import Image

    # the Agg canvas's RGBA pixels straight to the palette (savefig's raw "rgba" format: the same pixels
    # its PNG holds, without encoding a PNG to decode it again, ~0.08 s a many-panel figure)
    buf = _AggPixels()
    fig.savefig(buf, dpi=dpi, format="rgba", **savefig_kw)
    data = _palette_bytes(Image.fromarray(buf.rgba), 256)  # (height, width, 4) uint8: RGBA
    return replace_into(out_png, lambda tmp: Path(tmp).write_bytes(data))


class _AggPixels:
    """The file ``savefig(format="rgba")`` writes to: it keeps the canvas's RGBA buffer with its shape
    (height, width, 4), which raw bytes lack (the size ``bbox_inches="tight"`` gives is known only there)."""

    rgba = None

    def seek(self, *args):  # matplotlib takes an object with ``seek`` for a file
        return 0

    def write(self, data):
        self.rgba = np.array(data, dtype=np.uint8, copy=True)
        if self.rgba.ndim != 3 or self.rgba.shape[2] != 4:
            raise ValueError(f"matplotlib wrote a raw buffer of shape {self.rgba.shape}, not (height, width, 4): "
                             "its rgba format changed; write the figure as a PNG instead")
        return self.rgba.nbytes


def palette_png(src, colors, compress_level=6):
    """The PNG bytes of the image ``src`` (a path or a binary file) re-encoded as a ``colors``-colour palette
    PNG (median cut), as :func:`save_png` writes every figure.

    ``compress_level``: zlib's level (0-9).  6, zlib's default, and not Pillow's ``optimize`` (level 9 and a
    search over the filters): the same pixels, about 8% more bytes, and a twentieth of the encoding's CPU --
    on the default run's 81 figures 0.35 instead of 5-6 CPU-seconds (the median cut, 4.6 s, is the same)."""
    from PIL import Image

    with Image.open(src) as im:
        return _palette_bytes(im, colors, compress_level)


def _palette_bytes(im, colors, compress_level=6):
    """The PIL image ``im`` as the PNG bytes of a ``colors``-colour palette image (median cut of its RGB)."""
    import io

    from PIL import Image

    pal = im.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    pal.save(out, format="PNG", compress_level=compress_level)
    return out.getvalue()


def panels(plt, n, width=3.2, height=2.9):
    """A figure of ``n`` panels, at most 4 a row, ``width x height`` inches each (spare axes hidden):
    ``(fig, axes)`` with ``axes`` 2-D."""
    ncol = min(4, n)
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol, height * nrow), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes


def finish_figure(fig, out_png, dpi=150, rect=None, **savefig_kw):
    """Lay ``fig`` out with matplotlib's tight layout (``rect`` as there) and write it with :func:`save_png` at
    ``dpi`` (``savefig_kw`` as there), then close it.

    The same pixels as ``fig.tight_layout(rect=rect)`` then ``save_png(fig, out_png, dpi)`` (tests/test_report.py
    compares them), at about two thirds of the CPU for the many-panel figures: matplotlib lays out each axis's
    ticks and measures its tick labels about a dozen times for one layout and one draw, here once per state
    (:func:`_measured_once`), and a log panel's title is not placed by measuring its y tick labels again
    (:func:`_pin_log_titles`).
    """
    plt = pyplot()
    _pin_log_titles(fig)
    if savefig_kw.get("bbox_inches") is None:
        # laid out at the dpi it is drawn at: each text measured (and each log tick label's mathtext parsed) at
        # one dpi, not at the figure's 100 for the layout and again at ``dpi`` for the picture (~10% of a
        # many-panel figure's CPU); the panels' margins then differ from a layout at 100 dpi by a pixel or two
        # (hinting).  A tight box (the critical-difference diagrams) is measured at ``dpi`` by savefig anyway.
        fig.set_dpi(dpi)
    with _measured_once(fig):
        fig.tight_layout(rect=rect)
        save_png(fig, out_png, dpi=dpi, **savefig_kw)
    plt.close(fig)


def _pin_log_titles(fig):
    """Pin the titles of ``fig``'s log-y panels at ``y = 1`` (just above the axes), where matplotlib's automatic
    placement leaves them: it moves a title only above x tick labels or an x label at the top, or above the y
    axis's offset text, and a log axis has no offset text.  The automatic placement measures the y tick labels once
    more per title, at every layout and draw.  Matplotlib's only public switch, ``set_title(y=...)``, resets the
    title's font; a matplotlib without the private ``_autotitlepos`` or ``get_tick_params`` keeps its placement."""
    for ax in fig.axes:
        if not (ax.get_visible() and ax.get_yscale() == "log" and getattr(ax, "_autotitlepos", None) is True
                and hasattr(ax.xaxis, "get_tick_params")):
            continue
        labels_on_top = any(ax.xaxis.get_tick_params(which=w).get("labeltop", True) for w in ("major", "minor"))
        if labels_on_top or ax.xaxis.get_label_position() == "top":
            continue
        ax._autotitlepos = False
        for t in (ax.title, ax._left_title, ax._right_title):
            t.set_y(1.0)


@contextlib.contextmanager
def _measured_once(fig):
    """While the block runs, ``fig``'s panels measure each thing once per state instead of at every ask.

    Matplotlib lays out an axis's ticks (locations, labels, which to draw) and measures its tick labels again
    each time anything asks -- the axis's box, its label's position, each spine's box, the title's position --
    about a dozen times per axis for a layout and a draw, all at the same limits and panel position.  Here
    each axis answers from its last answer while its state (view limits, panel position in pixels, dpi,
    scale, locators and formatters, renderer) is the same, and each panel its layout box (``get_tightbbox``:
    ``tight_layout(rect=...)`` measures every panel twice without moving any).  Tick objects, texts and
    positions are the ones the first ask set, so the picture is the same (tests/test_report.py compares the
    pixels).  A matplotlib without the private ``Axis._update_ticks`` / ``_get_ticklabel_bboxes`` is left as is.
    """
    patched = []

    def memo(obj, name, key_of):
        inner = getattr(obj, name, None)
        if inner is None:
            return
        cache = {}

        def once(*args, **kwargs):
            key = (key_of(*args), tuple(sorted(kwargs.items())))
            try:
                hash(key)
            except TypeError:  # an argument that is no key (a list of extra artists): asked afresh
                return inner(*args, **kwargs)
            if key not in cache:
                cache.clear()  # only the latest state's answer is ever asked for again
                cache[key] = inner(*args, **kwargs)
            return cache[key]

        setattr(obj, name, once)
        patched.append((obj, name))

    for ax in fig.axes:
        def state(ax=ax):
            return (tuple(ax.bbox.bounds), fig.dpi, tuple(ax.viewLim.bounds))

        memo(ax, "get_tightbbox", lambda renderer=None, *args, ax=ax, state=state: (id(renderer), state(), args))
        for axis in (ax.xaxis, ax.yaxis):
            if not (hasattr(axis, "_update_ticks") and hasattr(axis, "_get_ticklabel_bboxes")):
                continue

            def axis_state(axis=axis, state=state):
                return (state(), axis.get_scale(), id(axis.get_major_locator()), id(axis.get_minor_locator()),
                        id(axis.get_major_formatter()), id(axis.get_minor_formatter()))

            memo(axis, "_update_ticks", lambda axis_state=axis_state: axis_state())
            memo(axis, "_get_ticklabel_bboxes",
                 lambda ticks, renderer, axis_state=axis_state: (axis_state(), id(renderer), tuple(map(id, ticks))))
    try:
        yield
    finally:
        for obj, name in patched:
            delattr(obj, name)


@contextlib.contextmanager
def _seeded_global_rng(seed=0):
    """Seed numpy's global random state for the block and give the caller's state back after it.

    seaborn's strip-plot jitter draws from ``np.random`` (seaborn 0.13, ``categorical.py``): without this
    the same results gave other PNG bytes on every run.
    """
    state = np.random.get_state()  # noqa: NPY002 - seaborn reads the legacy global state
    np.random.seed(seed)  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


#: seaborn 0.13's ``set_theme(style="whitegrid", context="paper")`` as matplotlib settings (its
#: ``axes_style("whitegrid")``, ``plotting_context("paper")`` and the "deep" palette; its colormap "rocket" left
#: out, which no box plot uses): the box plots' look, without importing seaborn (tests/test_report.py checks the
#: values against seaborn's own where it is installed)
_BOX_THEME = {
    "figure.facecolor": "white", "axes.labelcolor": ".15", "xtick.direction": "out", "ytick.direction": "out",
    "xtick.color": ".15", "ytick.color": ".15", "axes.axisbelow": True, "grid.linestyle": "-", "text.color": ".15",
    "font.family": ["sans-serif"],
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True, "xtick.top": False,
    "ytick.right": False, "axes.grid": True, "axes.facecolor": "white", "axes.edgecolor": ".8", "grid.color": ".8",
    "axes.spines.left": True, "axes.spines.bottom": True, "axes.spines.right": True, "axes.spines.top": True,
    "xtick.bottom": False, "ytick.left": False,
    "axes.linewidth": 1.0, "grid.linewidth": 0.8, "lines.linewidth": 1.2000000000000002,
    "lines.markersize": 4.800000000000001, "patch.linewidth": 0.8, "xtick.major.width": 1.0,
    "ytick.major.width": 1.0, "xtick.minor.width": 0.8, "ytick.minor.width": 0.8,
    "xtick.major.size": 4.800000000000001, "ytick.major.size": 4.800000000000001, "xtick.minor.size": 3.2,
    "ytick.minor.size": 3.2, "font.size": 9.600000000000001, "axes.labelsize": 9.600000000000001,
    "axes.titlesize": 9.600000000000001, "xtick.labelsize": 8.8, "ytick.labelsize": 8.8, "legend.fontsize": 8.8,
    "legend.title_fontsize": 9.600000000000001,
}
#: seaborn's "deep" palette: the theme's colour cycle
_DEEP = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")
#: a box plot's fill and its points' colour
_BOX_COLOR, _DOT_COLOR = "#a6c8e0", "#1b3a57"


def _desaturate(color, prop):
    """``color`` with its HLS saturation times ``prop`` (seaborn's ``desaturate``): an RGB tuple."""
    import colorsys

    from matplotlib.colors import to_rgb

    h, light, s = colorsys.rgb_to_hls(*to_rgb(color))
    return colorsys.hls_to_rgb(h, light, s * prop)


def _grey_of(color):
    """The grey seaborn outlines ``color`` with: 0.6 times its HLS lightness (``_complement_color``)."""
    import colorsys

    from matplotlib.colors import to_rgb

    lum = colorsys.rgb_to_hls(*to_rgb(color))[1] * 0.6
    return (lum, lum, lum)


def metric_figure(df, info, metric, out_png):
    """Box plot of ``metric``: one panel per data set, one box per method, points = seeds.

    Drawn with matplotlib as seaborn 0.13's ``boxplot`` (no fliers) and ``stripplot`` drew it before -- the same
    theme (:data:`_BOX_THEME`, for this figure only), boxes, whiskers, jitter (seeded) and colours -- without
    seaborn's per-call overhead and import (:func:`_box_strip_panel`); a study with several kernels (boxes
    coloured and dodged by kernel, with a legend) still goes through seaborn."""
    plt = pyplot()
    label, _lower = info["metrics"][metric]
    df = df[df[metric].notna()].reset_index(drop=True)
    out = outside_assumptions(df)
    df = mark_outside(df)  # results outside their method's assumptions: a box of their own
    datasets = sorted(df["dataset"].unique())
    if df["kernel"].nunique() > 1:
        import seaborn as sns

        # seaborn's theme for this figure only: set_theme changes matplotlib's global rcParams, and figures
        # drawn after a box plot in the same process (a study's critical-difference diagrams) took its grid
        with plt.rc_context():
            sns.set_theme(style="whitegrid", context="paper")
            _draw_metric_panels(plt, sns, df, info, metric, label, out, datasets, out_png)
        return
    with plt.rc_context({**_BOX_THEME, "axes.prop_cycle": plt.cycler(color=list(_DEEP))}):
        _draw_metric_panels(plt, None, df, info, metric, label, out, datasets, out_png)


def _box_strip_panel(ax, sub, metric, order):
    """One panel of :func:`metric_figure`: a box per method of ``order`` holding values, no fliers, and its
    values as jittered points -- seaborn 0.13's ``boxplot(..., fliersize=0, color=_BOX_COLOR)`` and
    ``stripplot(..., size=3, color=_DOT_COLOR)`` on a categorical x axis, drawn with matplotlib's ``bxp`` and
    ``scatter`` as seaborn draws them: boxes 0.8 wide at 0, 1, ... (caps half that), the fill desaturated to 75%,
    outlines in the grey of the fill, whiskers at 1.5 IQR (matplotlib's ``boxplot_stats``), each method's points
    jittered by U(-0.1, 0.1) from numpy's global state (seeded per panel by the caller, as seaborn drew them);
    x from -0.5 to n - 0.5 without a vertical grid."""
    import matplotlib as mpl

    code = {m: i for i, m in enumerate(order)}
    xs = sub["method"].map(code).to_numpy()
    ys = sub[metric].to_numpy(dtype=float)
    keep = ~np.isnan(xs.astype(float)) & ~np.isnan(ys)
    xs, ys = xs[keep].astype(int), ys[keep]
    face = _desaturate(_BOX_COLOR, 0.75)
    line = _grey_of(face)
    at = sorted(set(xs.tolist()))
    if at:
        stats = mpl.cbook.boxplot_stats([ys[xs == i] for i in at], whis=1.5,
                                        bootstrap=mpl.rcParams["boxplot.bootstrap"])
        ax.bxp(stats, positions=[float(i) for i in at], widths=[0.8] * len(at), capwidths=[0.4] * len(at),
               patch_artist=True, manage_ticks=False,
               boxprops={"facecolor": face, "edgecolor": line}, medianprops={"color": line, "solid_capstyle": "butt"},
               whiskerprops={"color": line, "solid_capstyle": "butt"},
               flierprops={"markeredgecolor": line, "markersize": 0}, capprops={"color": line})
    dot_edge = _grey_of(_DOT_COLOR)
    for i in range(len(order)):  # seaborn's order of draws: one jitter per method, in the order, over its rows
        y = ys[xs == i]
        if not len(y):
            continue
        jitter = np.random.uniform(low=-0.1, high=0.1, size=len(y)) if len(y) > 1 else 0  # noqa: NPY002
        ax.scatter(i + jitter + np.zeros(len(y)), y, color=_DOT_COLOR, zorder=3, s=9, edgecolor=dot_edge, linewidth=0)
    ax.set_xticks(range(len(order)), [str(m) for m in order])
    ax.xaxis.grid(False)
    ax.set_xlim(-0.5, len(order) - 0.5)


def _draw_metric_panels(plt, sns, df, info, metric, label, out, datasets, out_png):
    fig, axes = panels(plt, len(datasets))
    order = _ordered_marked(df, info.get("methods"))
    kernels_ = sorted(df["kernel"].unique())
    for ax, ds in zip(axes.flat, datasets, strict=False):
        sub = df[df["dataset"] == ds]
        if sns is None:
            with _seeded_global_rng():  # the points' jitter, as seaborn drew it from numpy's global state
                _box_strip_panel(ax, sub, metric, order)
        else:
            hue = "kernel" if len(kernels_) > 1 else None
            sns.boxplot(data=sub, x="method", y=metric, hue=hue, order=order, ax=ax, fliersize=0,
                        color=_BOX_COLOR if hue is None else None)
            with _seeded_global_rng():  # seaborn's jitter draws from numpy's global state
                sns.stripplot(data=sub, x="method", y=metric, hue=hue, order=order, ax=ax, dodge=hue is not None,
                              size=3, color=_DOT_COLOR if hue is None else None, legend=False)
        ax.set_title(ds)
        ax.set_xlabel("")
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=30)
        if "time" in metric and sub[metric].min() > 0 and sub[metric].max() / sub[metric].min() > 20:
            ax.set_yscale("log")
        _limit_to_within(ax, sub[metric], out.loc[sub.index])
    fig.suptitle(label, fontsize=10)
    finish_figure(fig, out_png)


def coord_figure(df, info, metric, coord, out_png, paper_curve=None, title=None, logx=None, logy=None,
                 robust_ylim=False):
    """``metric`` against ``coord``: one panel per data set, one line per method (x kernel, x other
    coords), mean and +- sd band over seeds; ``paper_curve(dataset, method, kernel, metric, coord)``
    may return the paper's points, drawn dashed in the line's colour.  ``logx``/``logy``: log
    axes (None: log where the values span more than a factor 20, y only for times).
    ``robust_ylim``: each panel's y range from the 2-98% quantiles of its values, so that a few
    wild values (a method far off on some widths) do not flatten every other line.

    Results outside their method's assumptions (:func:`nystrom_bench.results.outside_assumptions`) are a
    line of their own, dashed, labelled ``"<method> (outside assumptions)"``; where a panel has other
    lines too, its y range is theirs, so the flagged line cannot flatten them (it runs off the panel
    where it is far off)."""
    plt = pyplot()
    label, _lower = info["metrics"][metric]
    df = df[df[metric].notna() & df[coord].notna()].reset_index(drop=True)
    out = outside_assumptions(df)
    df = mark_outside(df)
    datasets = sorted(df["dataset"].unique())
    others = [c for c in varying_coords(df, info.get("coords", ())) if c != coord]
    fig, axes = panels(plt, len(datasets), 3.3, 2.9)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    order = {m: i for i, m in enumerate(_ordered_marked(df, info.get("methods")))}
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
            flagged = str(method).endswith(OUTSIDE)
            ax.plot(agg[coord], agg["mean"], marker="x" if flagged else "o", ms=3, lw=0.9 if flagged else 1.2,
                    ls="--" if flagged else "-", color=c, label=name)
            sd = agg["std"].fillna(0.0)
            ax.fill_between(agg[coord], agg["mean"] - sd, agg["mean"] + sd, color=c, alpha=0.06 if flagged else 0.15,
                            lw=0)
            ref = paper_curve(ds, method, kernel, metric, coord) if paper_curve else None
            if ref:
                ax.plot(*zip(*ref, strict=True), ls="--", lw=1, color=c, label=f"{name} (paper)")
        xs = sub[coord].to_numpy(dtype=float)
        if logx or (logx is None and len(xs) and xs.min() > 0 and xs.max() / xs.min() > 20):
            ax.set_xscale("log")
        if logy or (logy is None and "time" in metric and sub[metric].min() > 0
                    and sub[metric].max() / sub[metric].min() > 20):
            ax.set_yscale("log")
        within = sub[~out.loc[sub.index]] if out.loc[sub.index].any() and not out.loc[sub.index].all() else sub
        if robust_ylim and len(within):
            lo, hi = within[metric].quantile([0.02, 0.98])
            pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
            ax.set_ylim(lo - pad, hi + pad)
        elif within is not sub:
            _limit_to_within(ax, sub[metric], out.loc[sub.index])
        ax.set_title(ds, fontsize=9)
        ax.set_xlabel(coord)
        ax.set_ylabel(label, fontsize=7)
        ax.grid(alpha=0.3)
    if len(datasets):
        axes.flat[0].legend(fontsize=6)
    fig.suptitle((title or f"{label} against {coord}")
                 + ("\n(dashed: outside the method's assumptions, y range set by the other lines)" if out.any() else ""),
                 fontsize=10)
    finish_figure(fig, out_png)


def _limit_to_within(ax, values, outside):
    """Set a panel's y range to the values within their method's assumptions (``outside``: the flags of
    ``values``) where it holds both kinds, so a flagged line or box far off cannot flatten the others."""
    within = values[~outside].to_numpy(dtype=float)
    within = within[np.isfinite(within)]
    if not outside.any() or outside.all() or not len(within):
        return
    lo, hi = float(within.min()), float(within.max())
    if ax.get_yscale() == "log":
        pos = within[within > 0]
        if len(pos):
            ax.set_ylim(float(pos.min()) / 2, hi * 2)
        return
    pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
    ax.set_ylim(lo - pad, hi + pad)


def cd_figure(mean_ranks, pvalues, out_png, title=None, cd=None, alpha=0.05):
    """A critical-difference diagram (Demsar 2006), drawn by scikit-posthocs: the methods on an axis of
    mean rank (1 = best), a bar joining each group that the post-hoc test ``pvalues`` (a square
    DataFrame) cannot tell apart at ``alpha``, and the critical difference ``cd`` above the axis."""
    import scikit_posthocs as skp

    plt = pyplot()
    ranks = pd.Series(mean_ranks, dtype=float).sort_values()
    k = len(ranks)
    fig, ax = plt.subplots(figsize=(7.0, 1.1 + 0.24 * k))
    drawn = skp.critical_difference_diagram(ranks, pvalues.loc[ranks.index, ranks.index], ax=ax, alpha=alpha,
                                            label_fmt_left="{label} ({rank:.2f})",
                                            label_fmt_right="({rank:.2f}) {label}",
                                            label_props={"fontsize": 8}, text_h_margin=0.05)
    # scikit-posthocs draws each bar through its methods' ranks in the order of a Python set (of labels), so a bar
    # could double back: a darker overlap and a join whose spike moved the tight box, and with it every pixel,
    # with the hash seed or anything else that changes a set's order.  In rank order the bar is the same line,
    # drawn the same way in every process.
    for bar in drawn.get("crossbars", []) if isinstance(drawn, dict) else []:
        for line in bar:
            x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
            order = np.argsort(x, kind="stable")
            line.set_data(x[order], y[order])
    lo, hi = 1.0, float(max(k, ranks.max()))
    ax.set_xlim(lo - 0.1, hi + 0.1)
    ax.set_xticks(range(1, int(np.ceil(hi)) + 1))
    ax.tick_params(axis="x", labelsize=7)
    bottom, _top = ax.get_ylim()
    if cd is not None:  # above the tick labels (the library draws it across them)
        ax.plot([lo, lo + cd], [1.6, 1.6], color="k", lw=1.5)
        ax.plot([lo, lo], [1.45, 1.75], color="k", lw=1)
        ax.plot([lo + cd, lo + cd], [1.45, 1.75], color="k", lw=1)
        ax.text(lo + cd / 2, 1.9, f"CD = {cd:.2g}", ha="center", va="bottom", fontsize=7)
    ax.set_ylim(bottom, 2.6 if cd is not None else 1.0)
    ax.grid(False)
    if title:
        ax.set_title(title, fontsize=9)
    finish_figure(fig, out_png, bbox_inches="tight")


def _cd_caption(label, row, n_methods):
    sig = row["friedman_p"] < 0.05
    return (f"Critical-difference diagram of {label}: each method at its mean rank over "
            f"{int(row['n_blocks'])} blocks ({int(row['n_datasets'])} data sets; 1 = best, left; within a data set "
            f"the ranks are averaged over its seeds and grid points). Friedman chi2 = {fmt_num(row['friedman_stat'])}, "
            f"p = {_fmt_p(row['friedman_p'])}; "
            + (f"a bar joins methods the Nemenyi test cannot tell apart (p >= 0.05); two methods further apart "
               f"than CD = {fmt_num(row['cd'], 2)} differ. " if sig else
               "not significant, so no post-hoc test: all methods are joined. ")
            + "Look for which methods sit left of the others and which bars separate them.")


def study_figures(results_csv, info, out_dir, figure_coords=None, paper_curve=None, extra_figures=None,
                  cd_csv=None):
    """Every figure of a study into the directory ``out_dir`` (replaced atomically), plus
    ``figures.json`` listing ``[{"file", "caption", "kind"}]`` in the order the PDF shows them.

    A tested metric gets one figure per coord that varies (metric against coord; only the coords in
    ``figure_coords`` if given), or a box plot when no coord varies; ``cd_csv`` (the stats stage's
    ``cd.csv``) adds a critical-difference diagram per metric (kind ``"cd"``).  The kind's report
    section comes in as arguments (this module imports neither a study nor a section): ``paper_curve(dataset, method, kernel,
    metric, coord)`` -> the paper's points or None; ``extra_figures(df, info, out_dir)`` -> the
    study's own ``[{"file", "caption"}]``, listed after the generic ones.  Returns the figure paths.
    """
    from .stats import read_cd

    df = pd.read_csv(results_csv)
    cd_table = _read_optional(cd_csv) if cd_csv else pd.DataFrame()
    apart = (" Dashed (and boxes marked '" + OUTSIDE + "'): results outside their method's assumptions, drawn "
             "apart; the y range is set by the others." if outside_assumptions(df).any() else "")
    listing = []
    with atomic_dir(out_dir) as tmp:
        for metric in info.get("tested_metrics") or list(info["metrics"]):
            label, lower = info["metrics"][metric]
            better = "lower" if lower else "higher"
            cd = read_cd(cd_table, metric)
            if cd is not None:
                ranks, pvals, row = cd
                name = f"cd_{metric}.png"
                cd_figure(ranks, pvals, Path(tmp) / name, title=f"{label}: mean rank over data sets (1 = best)",
                          cd=float(row["cd"]) if row["friedman_p"] < 0.05 else None)
                listing.append({"file": name, "kind": "cd", "metric": metric,
                                "caption": _cd_caption(label, row, len(ranks))})
            rows = df[df[metric].notna()] if metric in df else df.iloc[:0]
            if not len(rows):
                continue
            varying = varying_coords(rows, info.get("coords", ()))
            shown = varying if figure_coords is None else [c for c in varying if c in figure_coords]
            for coord in shown:
                name = f"{metric}_vs_{coord}.png"
                coord_figure(rows, info, metric, coord, Path(tmp) / name, paper_curve)
                listing.append({"file": name, "kind": "figure", "metric": metric, "caption": (
                    f"{label} against {coord} ({better} is better): one panel per data set, one line per method, "
                    f"mean over seeds (line) and +- sd (band). The best method's line runs {better}; "
                    "where bands overlap, the seeds do not separate the methods"
                    + ("; dashed: the paper's numbers where known." if paper_curve else ".") + apart)})
            if not varying:
                metric_figure(rows, info, metric, Path(tmp) / f"{metric}.png")
                listing.append({"file": f"{metric}.png", "kind": "figure", "metric": metric, "caption": (
                    f"{label} ({better} is better): one panel per data set, one box per method, dots are seeds. "
                    f"Look for boxes that sit {better} than the others without overlapping them." + apart)})
        for fig in (extra_figures(df, info, tmp) if extra_figures else []):
            listing.append({"kind": "figure", **fig})
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
    if sd <= 0:  # 4 significant digits, scientific only where fmt_num is (90000 -> '90000', not '9e+04')
        text = f"{mean:.4g}"
        if "e" in text:
            text = f"{float(text):f}".rstrip("0").rstrip(".") if 1e-3 <= abs(mean) < 1e6 else _short_exp(text)
        return f"{text} +- 0"
    place = 1 - int(math.floor(math.log10(sd)))  # decimals that keep 2 significant digits of sd
    if place > 6 or abs(mean) >= 1e6 or (place > 3 and abs(mean) < 1e-3):
        return f"{fmt_num(mean)} +- {fmt_num(sd, 2)}"
    place = max(place, 0)
    return f"{mean:.{place}f} +- {sd:.{place}f}"


def mean_sd_table(df, metric, fmt=None, order=None, coords=()):
    """Rows = dataset (x kernel) (x each coord that varies), columns = method (in ``order`` if
    given), cells = 'mean +- sd' over seeds.

    Results outside their method's assumptions (:func:`nystrom_bench.results.outside_assumptions`) are
    never averaged in: they get a column of their own, ``"<method> (outside assumptions)"``, right after
    the method's (which is left out where none of its results is within them), and
    ``table.attrs["footnote"]`` says how many and why (:func:`assumption_note`; ``""`` if none)."""
    df = df[df[metric].notna()]
    note = assumption_note(df)
    df = mark_outside(df)
    rows_key = ["dataset"] if df["kernel"].nunique() == 1 else ["dataset", "kernel"]
    rows_key += varying_coords(df, coords)
    g = df.groupby(rows_key + ["method"])[metric].agg(["mean", "std", "count"]).reset_index()
    methods = _ordered_marked(df, order)
    table = []
    for key, sub in g.groupby(rows_key, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = {"/".join(rows_key): "/".join(map(format_coord, key))}
        cells = {}  # method -> (mean, sd): one row per method (the group-by above)
        for m, mean, sd in zip(sub["method"], sub["mean"].to_numpy(), sub["std"].to_numpy(), strict=True):
            cells.setdefault(m, (mean, sd))
        for m in methods:
            if m in cells:
                mean, sd = cells[m]
                sd = 0.0 if pd.isna(sd) else sd
                row[m] = (f"{fmt.format(mean)} +- {fmt.format(sd)}" if fmt else fmt_mean_sd(mean, sd))
            else:
                row[m] = "n/a"
        table.append(row)
    out = pd.DataFrame(table)
    out.attrs["footnote"] = note
    return out


def fmt_p(p):
    """A p-value for people: two significant digits, '2e-10' below 1e-3, 'n/a' for a missing one."""
    if p is None or not math.isfinite(float(p)):
        return "n/a"
    return f"{p:.2g}" if p >= 1e-3 else _short_exp(f"{p:.0e}")


_fmt_p = fmt_p

#: the most p-values one page of a PDF carries: longer lists of tests are paginated or summarised (an effect
#: with its interval and the outcome at Holm 5%), the p-values staying in the CSV files
P_PER_PAGE = 12
_P_TEXT = re.compile(r"\bp = ")
_P_COLUMN = re.compile(r"(^|\s)p(\s|$)|p-value", re.IGNORECASE)


def count_p(text):
    """How many p-values a sentence reports ('p = 0.03', 'Holm p = 2e-5', 'Friedman p = n/a')."""
    return len(_P_TEXT.findall(str(text or "")))


def p_columns(df):
    """The columns of a table that hold p-values (named 'p', '... p' or '... p-value')."""
    return [c for c in df.columns if _P_COLUMN.search(str(c))]


def count_p_table(df):
    """How many p-values a table shows: the filled cells of its p-value columns and the p-values its
    text cells report."""
    if df is None or not len(df):
        return 0
    cols = p_columns(df)
    filled = sum(int((~df[c].astype(str).isin(["", "-", "n/a", "nan", "None"])).sum()) for c in cols)
    return filled + sum(count_p(v) for c in df.columns if c not in cols for v in df[c].tolist())


class _PBudget:
    """Paragraphs, tables and captions onto a :class:`PDF` with at most :data:`P_PER_PAGE` p-values a page:
    a new page where the next item would exceed it, a long table split over pages."""

    def __init__(self, doc):
        self.doc, self.used = doc, {}

    def _room(self, n):
        if n and self.used.get(self.doc.pdf.page, 0) + n > P_PER_PAGE:
            self.doc.new_page()
        return self.doc.pdf.page

    def _add(self, start, n):
        for page in range(start, self.doc.pdf.page + 1):  # a table running onto the next page: counted on both
            self.used[page] = self.used.get(page, 0) + n

    def para(self, text, size=9.5, style=""):
        n = count_p(text)
        start = self._room(n)
        self.doc.para(text, size=size, style=style)
        self._add(start, n)

    def image(self, path, caption=None, **kw):
        n = count_p(caption)
        self._room(n)
        self.doc.image(path, caption=caption, **kw)
        self._add(self.doc.pdf.page, n)

    def table(self, df, **kw):
        n = count_p_table(df)
        if n <= P_PER_PAGE:
            start = self._room(n)
            self.doc.table(df, **kw)
            self._add(start, n)
            return
        chunk, count = [], 0
        for i in range(len(df)):
            k = count_p_table(df.iloc[i:i + 1])
            if chunk and count + k > P_PER_PAGE:
                self.table(df.iloc[chunk], **kw)
                chunk, count = [], 0
            chunk.append(i)
            count += k
        if chunk:
            self.table(df.iloc[chunk], **kw)


def _fmt_ranks(ranks):
    """``{"a": 1.5625, ...}`` (JSON or dict) as 'a 1.56, b 2.0' in rank order."""
    if isinstance(ranks, str):
        try:
            ranks = json.loads(ranks)
        except ValueError:
            return ranks
    return ", ".join(f"{k} {fmt_num(v)}" for k, v in sorted(ranks.items(), key=lambda kv: kv[1]))


_MIRROR = {"win": "loss", "loss": "win", "tie": "tie", "no pairs": "no pairs"}


def _fmt_effect(v, effect):
    """A ratio with the digits that show how far it is from 1 (1.0037 -> '1.004', 0.52 -> '0.520'),
    a difference to 2 significant digits."""
    if v is None or not np.isfinite(v):
        return "n/a"
    if effect != "ratio":
        return fmt_num(v, 2)
    off = abs(v - 1.0)
    sig = 3 if off == 0 else min(5, max(3, 1 + math.ceil(-math.log10(off))))
    return fmt_num(v, sig)


def wtl_matrix(wtl, metric, order=None):
    """The win/tie/loss matrix of ``metric`` from :func:`nystrom_bench.stats.pairwise_tests` rows.

    Returns ``(text, outcome)``: two square DataFrames (rows and columns = methods in ``order``),
    ``text`` the row-vs-column effect (ratio row / column, or difference row - column) and
    ``outcome`` ``win``/``tie``/``loss``/``no pairs`` for the row method; plus a ``W/T/L`` column
    in ``text`` counting the row's outcomes.  Empty frames if the metric has no rows.
    """
    rows = wtl[wtl["metric"] == metric] if len(wtl) else wtl
    if not len(rows):
        return pd.DataFrame(), pd.DataFrame()
    present = list(dict.fromkeys([*rows["method"], *rows["versus"]]))
    methods = [m for m in (order or []) if m in present] + [m for m in present if m not in (order or [])]
    at = {m: i for i, m in enumerate(methods)}
    text = [["-"] * len(methods) for _ in methods]  # filled as lists, framed once (cell by cell .loc is slow)
    outcome = [[""] * len(methods) for _ in methods]
    for a, b, eff, est, out in zip(rows["method"], rows["versus"], rows["effect"], rows["estimate"].tolist(),
                                   rows["outcome"], strict=True):
        a, b, est = at[a], at[b], float(est)
        back = (1.0 / est if eff == "ratio" else -est) if np.isfinite(est) else np.nan
        text[a][b], text[b][a] = _fmt_effect(est, eff), _fmt_effect(back, eff)
        outcome[a][b], outcome[b][a] = out, _MIRROR.get(out, out)
    counts = [f"{row.count('win')}/{row.count('tie')}/{row.count('loss')}" for row in outcome]
    text = pd.DataFrame(text, index=methods, columns=methods)
    text["W/T/L"] = counts
    return text, pd.DataFrame(outcome, index=methods, columns=methods)


def _wtl_long_table(wtl):
    """Every pairwise test as a table (appendix): effect, interval and outcome at Holm 5% (the p-values of
    so many tests stay in ``wtl.csv``: a page carries at most :data:`P_PER_PAGE`)."""
    if wtl is None or not len(wtl):
        return pd.DataFrame()
    t = pd.DataFrame({
        "metric": wtl["metric"], "comparison": wtl["method"] + " vs " + wtl["versus"],
        "pairs": wtl["n_pairs"], "better": wtl["better"], "worse": wtl["worse"],
        "effect": [("ratio " if e == "ratio" else "diff ") + _fmt_effect(v, e)
                   for e, v in zip(wtl["effect"], wtl["estimate"], strict=True)],
        "95% CI": [f"[{_fmt_effect(lo, e)}, {_fmt_effect(hi, e)}]" if np.isfinite(lo) else "n/a"
                   for e, lo, hi in zip(wtl["effect"], wtl["ci_low"], wtl["ci_high"], strict=True)],
        "outcome (Holm 5%)": wtl["outcome"]})
    return t


def _cell(r, c):
    v = r.get(c)
    return "" if v is None or (isinstance(v, float) and not np.isfinite(v)) else str(v)


def claims_table(claims):
    """The compact claims table of page one: claim (with paper and where), paper vs ours, verdict."""
    rows = []
    for _, r in claims.iterrows():
        where = ", ".join(x for x in (_cell(r, "paper"), _cell(r, "where")) if x)
        rows.append({"claim": _cell(r, "claim") + (f" ({where})" if where else ""),
                     "paper": _cell(r, "paper_value") or "-", "ours": _cell(r, "ours") or "-",
                     "verdict": _cell(r, "verdict") or "-"})
    return pd.DataFrame(rows, columns=["claim", "paper", "ours", "verdict"])


_VERDICT_FILLS = {"reproduced": (190, 232, 196), "partly reproduced": (250, 230, 170),
                  "not reproduced": (245, 196, 196), "not run": (225, 225, 225)}


def _claims_section(doc, claims):
    """Page one's claims: a table of the claims tested here, one line for those not testable."""
    verdict = claims["verdict"].fillna("") if "verdict" in claims else pd.Series("", index=claims.index)
    untestable = claims[verdict == "not testable"]
    tested = claims[verdict != "not testable"]
    if len(tested):
        counts = tested["verdict"].value_counts()
        doc.para(f"{len(tested)} claim(s) tested: " + ", ".join(f"{n} {v}" for v, n in counts.items())
                 + ". Tests and evidence: appendix D.", size=8.5)
        doc.table(claims_table(tested), size=6.5, col_widths=(80, 42, 38, 24), fills={"verdict": _VERDICT_FILLS})
    if len(untestable):
        ids = ", ".join(_cell(r, "claim_id") or _cell(r, "claim")[:40] for _, r in untestable.iterrows())
        doc.para(f"Not testable in this run ({len(untestable)}; reasons in appendix D): {ids}.", size=8)


#: appendix D shows this much of a claim's evidence
_EVIDENCE_CHARS = 360


def _claims_appendix(doc, claims, budget=None):
    """Each claim's test and evidence, one short block per claim (the evidence can be long)."""
    for _, r in claims.iterrows():
        head = " - ".join(x for x in (_cell(r, "claim_id"), _cell(r, "verdict")) if x)
        doc.para(head, size=8, style="B")
        bits = [f"{_cell(r, 'claim')}" + (f" ({_cell(r, 'where')})" if _cell(r, "where") else "")]
        if _cell(r, "test"):
            try:
                p = f", p = {_fmt_p(float(r.get('p_value')))}" if _cell(r, "p_value") else ""
            except (TypeError, ValueError):
                p = f", p = {_cell(r, 'p_value')}"
            bits.append(f"Test: {_cell(r, 'test')}{p}"
                        + (f", effect {_cell(r, 'effect')}" if _cell(r, "effect") else "") + ".")
        evidence = _cell(r, "evidence")
        if len(evidence) > _EVIDENCE_CHARS:  # the ledger keeps it whole
            evidence = evidence[:_EVIDENCE_CHARS].rsplit(" ", 1)[0] + " ... (in full: the study's claims.csv)"
        if evidence:
            bits.append(f"Evidence: {evidence}")
        (budget or doc).para(" ".join(bits), size=7.5)


def _answer_lines(info, wtl, cd):
    """One line per tested metric: the ranking over data sets and each method's W/T/L count."""
    from .stats import read_cd

    out = []
    for metric in info.get("tested_metrics") or list(info["metrics"]):
        label, lower = info["metrics"][metric]
        parts = []
        got = read_cd(cd, metric) if len(cd) else None
        if got is not None:
            ranks, _p, row = got
            parts.append(f"mean rank over {int(row['n_datasets'])} data sets (1 = best): "
                         + ", ".join(f"{m} {v:.1f}" for m, v in ranks.items())
                         + f" (Friedman p = {_fmt_p(row['friedman_p'])})")
        text, outcome = wtl_matrix(wtl, metric, info.get("methods"))
        if len(text):
            score = {m: (outcome.loc[m] == "win").sum() - (outcome.loc[m] == "loss").sum() for m in text.index}
            ranked = sorted(text.index, key=lambda m: -score[m])
            wins = [(a, b) for a in ranked for b in ranked if outcome.loc[a, b] == "win"]
            if not wins:
                parts.append("no pair of methods differs significantly (Wilcoxon, Holm 5%)")
            elif len(wins) <= 4:
                eff = "ratio" if (wtl.loc[wtl["metric"] == metric, "effect"] == "ratio").all() else "difference"
                parts.append("significantly better (Wilcoxon, Holm 5%): "
                             + "; ".join(f"{a} than {b} ({eff} {text.loc[a, b]})" for a, b in wins))
            else:
                top = ranked[:3] if len(ranked) > 5 else ranked
                parts.append(("most wins" if len(top) < len(ranked) else "wins/ties/losses")
                             + " against the other methods (Wilcoxon, Holm 5%): "
                             + ", ".join(f"{m} {text.loc[m, 'W/T/L']}" for m in top)
                             + (f"; least: {ranked[-1]} {text.loc[ranked[-1], 'W/T/L']}"
                                if len(top) < len(ranked) else ""))
        if parts:
            out.append(f"{label} ({'lower' if lower else 'higher'} is better): " + "; ".join(parts) + ".")
    return out


# -- PDF assembly ---------------------------------------------------------------------------------
def _latin1(text):
    text = str(text).replace("\u2014", "-").replace("\u2013", "-").replace("\u00b1", "+-")
    return text.encode("latin-1", "replace").decode("latin-1")


def _break_at_joins(pdf, text, width):
    """``text`` with a line break after a ``/`` or ``_`` of each word wider than a table cell ``width`` mm wide (in
    the font set), the pieces joined again while they fit, at a ``/`` first: a heading ``ridge_leverage`` in a
    narrow column reads ``ridge_`` / ``leverage`` and a row ``gnkr_f1/median_over_4`` reads ``gnkr_f1/`` /
    ``median_over_4``, where fpdf2 breaks inside words (``ridge_l`` / ``everag`` / ``e``).  A piece wider than
    the cell is still broken by fpdf2; a text without ``_`` or ``/`` (a number) is returned unmeasured."""
    if "_" not in text and "/" not in text:
        return text
    room = width - 2 * float(pdf.c_margin) - 0.01
    if pdf.get_string_width(text) <= room:
        return text

    def pack(pieces):  # the pieces in order, as many on a line as fit
        lines = [pieces[0]]
        for piece in pieces[1:]:
            if pdf.get_string_width(lines[-1] + piece) <= room:
                lines[-1] += piece
            else:
                lines.append(piece)
        return lines

    words = []
    for word in text.split(" "):
        if pdf.get_string_width(word) <= room:
            words.append(word)
            continue
        lines = []
        for part in pack(re.findall(r"[^/]+/*|/+", word)):
            fits = pdf.get_string_width(part) <= room
            lines += [part] if fits else pack(re.findall(r"[^_]+_*|_+", part))
        words.append("\n".join(lines))
    return " ".join(words)


#: a table with more columns than this (its row names and the methods) is drawn on landscape pages
#: (:func:`study_pdf`'s means section)
WIDE_TABLE_COLUMNS = 9


class PDF:
    """A thin layer over fpdf2 with headings, paragraphs, tables and images."""

    def __init__(self, title):
        from fpdf import FPDF

        self.pdf = FPDF(orientation="P", unit="mm", format="A4")
        self.pdf.set_auto_page_break(auto=True, margin=15)
        self.pdf.set_title(_latin1(title))
        self.pdf.set_author("nystrom-bench")
        self.pdf.add_page()

    @property
    def width(self):
        """The current page's width between its margins (mm): 180 on a portrait A4 page, 267 on a landscape one."""
        return self.pdf.epw

    def orient(self, orientation):
        """Go on on a new ``orientation`` page ("P" portrait, "L" landscape) unless this page has it already;
        the pages that follow (page breaks) keep it until the next call."""
        from fpdf.enums import PageOrientation

        if self.pdf.cur_orientation is not PageOrientation.coerce(orientation):
            self.pdf.add_page(orientation=orientation)

    def title(self, text):
        self.pdf.set_font("Helvetica", "B", 16)
        self.pdf.multi_cell(self.width, 8, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(2)

    def heading(self, text, keep=35):
        """A section heading; a new page first if less than ``keep`` mm are left (no orphan heading)."""
        if self.pdf.h - self.pdf.b_margin - self.pdf.get_y() < keep:
            self.pdf.add_page()
        self.pdf.ln(3)
        self.pdf.set_font("Helvetica", "B", 12)
        self.pdf.multi_cell(self.width, 6, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(1)

    def para(self, text, size=9.5, style=""):
        self.pdf.set_font("Helvetica", style, size)
        self.pdf.multi_cell(self.width, 4.6, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(1)

    def table(self, df, size=8, col_widths=None, fills=None):
        """``df`` as a table; ``fills``: ``{column: {cell text: (r, g, b)}}`` colours cells by their text.

        Drawn by :func:`nystrom_bench.pdftable.draw_table`: fpdf2's ``table()`` layout, each short cell
        measured once."""
        if df is None or len(df) == 0:
            self.para("(no rows)")
            return
        from .pdftable import column_widths, draw_table

        fills = fills or {}
        columns = list(df.columns)
        body = df.to_numpy().tolist()  # each row's values as iterrows() gives them (one dtype per row)
        cell_fills = [[None] * len(columns)]
        cell_fills += [[fills[c].get(str(v)) if c in fills else None for c, v in zip(columns, r, strict=True)]
                       for r in body]
        rows = [[_latin1(c) for c in columns], *([_latin1(v) for v in r] for r in body)]
        widths = column_widths(self.width, len(columns), col_widths)
        self.pdf.set_font("Helvetica", "B", size)  # the headings' face (draw_table's)
        rows[0] = [_break_at_joins(self.pdf, t, w) for t, w in zip(rows[0], widths, strict=True)]
        self.pdf.set_font("Helvetica", "", size)
        for r in rows[1:]:
            r[0] = _break_at_joins(self.pdf, r[0], widths[0])  # the row's name (a data set / kernel, a method)
        draw_table(self.pdf, rows, col_widths=col_widths, line_height=4.2, text_align="LEFT",
                   fills=cell_fills if any(map(any, cell_fills)) else None)
        self.pdf.ln(2)

    def image(self, path, caption=None, max_height=None, width=None):
        """The image at full width (or ``width``), at most ``max_height`` mm high; a new page if it
        does not fit on this one."""
        from PIL import Image

        with Image.open(path) as im:
            w, h = im.size
        width = min(width or self.width, self.width)
        height = width * h / w
        if max_height and height > max_height:
            width, height = width * max_height / height, max_height
        if self.pdf.get_y() + height > self.pdf.h - self.pdf.b_margin:
            self.pdf.add_page()
        self.pdf.image(str(path), w=width, x=self.pdf.l_margin + (self.width - width) / 2)
        if caption:
            self.para(caption, size=8, style="I")

    def space_left(self):
        """Millimetres left on this page."""
        return self.pdf.h - self.pdf.b_margin - self.pdf.get_y()

    def new_page(self):
        self.pdf.add_page()

    def matrix(self, text, outcome, size=7, first_width=34, numbered=False):
        """A win/tie/loss matrix: ``text`` cells coloured by ``outcome`` (win green, loss red)."""
        from .pdftable import draw_table

        fills = {"win": (190, 232, 196), "loss": (245, 196, 196), "no pairs": (225, 225, 225)}
        methods = list(text.index)
        extra = [c for c in text.columns if c not in methods]
        k = len(methods)
        rest = self.width - first_width - 14 * len(extra)
        widths = (first_width, *([rest / k] * k), *([14] * len(extra)))
        heads = [str(i + 1) for i in range(k)] if numbered else methods
        rows = [["row vs column", *[_latin1(h) for h in heads], *extra]]
        aligns = [[None] * len(rows[0])]
        cell_fills = [[None] * len(rows[0])]
        for i, m in enumerate(methods):
            rows.append([_latin1(f"{i + 1} {m}" if numbered else m), *[_latin1(text.loc[m, c]) for c in methods],
                         *[_latin1(text.loc[m, c]) for c in extra]])
            aligns.append(["LEFT"] + [None] * (len(rows[0]) - 1))
            cell_fills.append([None, *[fills.get(outcome.loc[m, c]) for c in methods], *[None] * len(extra)])
        self.pdf.set_font("Helvetica", "", size)
        draw_table(self.pdf, rows, col_widths=widths, line_height=4.0, text_align="CENTER", aligns=aligns,
                   fills=cell_fills)
        self.pdf.ln(2)

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


def _paired_table(paired, metrics=None):
    """The paired tests against the reference, summarised: the Hodges-Lehmann effect with its 95% interval
    and the outcome at Holm 5% (``metrics``: ``{name: [label, lower_is_better]}`` for its direction); the
    p-values of so many tests stay in ``stats.csv`` (a page carries at most :data:`P_PER_PAGE`)."""
    if paired is None or len(paired) == 0:
        return pd.DataFrame()

    def effect(r):
        kind = r.get("effect", "difference")
        if "estimate" not in r or not np.isfinite(r["estimate"]):
            return fmt_num(r["median_diff"], 2) + " (median diff)"
        lo, hi = r.get("ci_low", np.nan), r.get("ci_high", np.nan)
        ci = f" [{_fmt_effect(lo, kind)}, {_fmt_effect(hi, kind)}]" if np.isfinite(lo) and np.isfinite(hi) else ""
        return f"{'ratio' if kind == 'ratio' else 'diff'} {_fmt_effect(r['estimate'], kind)}{ci}"

    def outcome(r):
        if not r["wilcoxon_p_holm"] < 0.05:
            return "no difference"
        lower = bool((metrics or {}).get(r["metric"], [None, True])[1])
        centre = 1.0 if r.get("effect") == "ratio" else 0.0
        est = r.get("estimate", np.nan)
        lower_value = est < centre if np.isfinite(est) else r["median_diff"] < 0
        return "better" if lower_value == lower else "worse"

    rows = [r for _, r in paired.iterrows()]
    return pd.DataFrame({
        "metric": paired["metric"],
        "where": ["all" if sc == "all" else f"at {sc}" for sc in paired["scope"]],
        "comparison": paired["method"] + " vs " + paired["reference"],
        "pairs": paired["n_pairs"], "wins": paired["wins"], "losses": paired["losses"],
        "effect [95% CI]": [effect(r) for r in rows], "Holm 5%": [outcome(r) for r in rows]})


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


def _read_claims(claims_csv):
    if not claims_csv:
        return pd.DataFrame()
    claims = _read_optional(claims_csv)
    return claims if "claim" in claims else pd.DataFrame()


def _setup_lines(df, info):
    """The set-up in a few lines: data, methods, grid, seeds, protocol."""
    cfg = info["config"]
    params = df.drop_duplicates("dataset").set_index("dataset")["params"].map(json.loads)
    sizes = ", ".join(f"{d} {p.get('n_train', '?')}/{p.get('n_test', '?')}/{p.get('n_features', '?')}"
                      for d, p in params.items())
    methods = list(_method_order(df, info.get("methods")))
    ref = info.get("reference")
    seeds = sorted(df["seed"].unique())
    grid = "; ".join(f"{c} = {', '.join(format_coord(v) for v in sorted(df[c].dropna().unique()))}"
                     for c in varying_coords(df, info.get("coords", [])))
    kernels_ = ", ".join(f"{k} ({', '.join(f'{a}={b}' for a, b in v.items())})" for k, v in cfg["kernels"].items())
    blocks = ", ".join(info.get("block_cols", ["dataset", "kernel", "seed"]))
    lines = [
        f"Data ({df['dataset'].nunique()} sets; train/test points/features): {sizes}.",
        f"Methods ({len(methods)}): {', '.join(methods)}" + (f"; reference {ref}." if ref else ".")
        + f" Kernels: {kernels_}.",
        (f"Grid: {grid}. " if grid else "") + f"Seeds: {len(seeds)} ({format_coord(seeds[0])}"
        + (f"-{format_coord(seeds[-1])})" if len(seeds) > 1 else ")") + f"; {len(df)} results.",
        f"Protocol: features scaled ('{cfg.get('scaling', 'standardize')}') on the training part"
        + (f", split {json.dumps(cfg['split'])}" if cfg.get("split") else "")
        + f"; paired tests pair results on ({blocks}"
        + (", and the grid point)." if grid else ")."),
    ]
    if cfg.get("params"):
        lines.append(f"Parameters of the block: {'; '.join(f'{k} = {_param_text(v)}' for k, v in cfg['params'].items())}.")
    note = assumption_note(df, mark=None)
    if note:
        lines.append(note)
    return lines


def _param_text(value, most=8):
    """A config parameter for the set-up: a list in full up to ``most`` values, else its ends and count."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_param_text(v, most)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        if not value:
            return "none"
        shown = [format_coord(v) for v in value]
        return ", ".join(shown) if len(shown) <= most else f"{shown[0]}, {shown[1]}, ..., {shown[-1]} ({len(shown)} values)"
    return format_coord(value)


def _friedman_table(fried):
    if fried is None or not len(fried):
        return pd.DataFrame()
    return pd.DataFrame({"metric": fried["metric"], "scope": fried["scope"],
                         "chi2": fried["statistic"].map(fmt_num), "p": fried["p"].map(_fmt_p),
                         "blocks": fried["n_blocks"], "mean ranks (1 = best)": fried["mean_ranks"].map(_fmt_ranks)})


def study_pdf(results_csv, paired_csv, friedman_csv, figures, info, out_pdf, report_tables=None, claims_csv=None,
              wtl_csv=None, cd_csv=None, answers=None, key_figure=None):
    """Assemble ``reports/<study>.pdf`` (layout: module docstring).

    ``answers``: the study's answers as ``[{"question", "lines"}]`` (the workflow renders its answer
    records, :func:`nystrom_bench.findings.answer_lines`; None: one line per tested metric from
    ``wtl_csv``/``cd_csv``); ``key_figure``: ``(png, caption)`` for page one (else the primary
    metric's critical-difference diagram).  No page carries more than :data:`P_PER_PAGE` p-values.

    ``figures`` is the directory of :func:`study_figures`; ``report_tables`` a callable
    ``(results DataFrame, study config) -> [(title, DataFrame, note)]`` (the study's hook, passed in
    by the workflow script); ``claims_csv`` the study's claims ledger (columns ``paper, claim_id,
    claim, where, paper_value, ours, test, p_value, effect, verdict, evidence``; may be missing or
    empty); ``wtl_csv``/``cd_csv`` the stats stage's win/tie/loss and critical-difference tables.
    """

    df = pd.read_csv(results_csv)
    paired = _read_optional(paired_csv)
    fried = _read_optional(friedman_csv)
    wtl = _read_optional(wtl_csv) if wtl_csv else pd.DataFrame()
    cd = _read_optional(cd_csv) if cd_csv else pd.DataFrame()
    claims = _read_claims(claims_csv)
    cfg = info["config"]
    listing_path = Path(figures) / "figures.json"
    listing = json.loads(listing_path.read_text()) if listing_path.exists() else []
    cd_figs = {f.get("metric"): f for f in listing if f.get("kind") == "cd"}
    plain_figs = [f for f in listing if f.get("kind") != "cd"]
    primary = info.get("primary_metric")
    key = cd_figs.get(primary) or (plain_figs[0] if plain_figs else None)
    if key_figure is not None:
        key = {"file": str(key_figure[0]), "caption": key_figure[1]}

    # -- page one: question, set-up, claims, answer, key figure
    doc = PDF(info["title"])
    budget = _PBudget(doc)
    doc.title(info["title"])
    doc.para(f"Study '{info['study']}' (kind '{info['kind']}'); provenance and the full config: appendix.", size=8)
    doc.heading("Question")
    doc.para(info["description"], size=9)
    doc.heading("Set-up")
    for line in _setup_lines(df, info):
        doc.para(line, size=8.5)
    doc.heading("Claims tested")
    if len(claims):
        _claims_section(doc, claims)
    else:
        doc.para("This study tests no paper claim (no claims ledger rows for it); its results are "
                 "reported as measured.", size=9)
    if answers is None:
        answers = [{"question": "", "lines": _answer_lines(info, wtl, cd)}]
    if any(a["lines"] for a in answers):
        doc.heading("Answer")
    for a in answers:
        if a["question"] and a["lines"]:
            budget.para(a["question"], size=8.5, style="B")
        for line in a["lines"]:
            budget.para(line, size=8.5 if a["question"] else 9)
    if key is not None:
        budget.image(Path(figures) / key["file"], caption=key["caption"], max_height=max(doc.space_left() - 22, 45))

    # -- the paper's layout, then means
    n = 1
    tables = report_tables(df, cfg) if report_tables else []
    if doc.pdf.page == 1:  # page one holds only the answer
        doc.new_page()
    if tables:
        doc.heading(f"{n}. Results in the paper's layout")
        n += 1
        for title, table, note in tables:
            budget.para(title, style="B")
            budget.table(table, size=6.5)
            if note:
                budget.para(note, size=8)
    means = [(label, lower, mean_sd_table(df, metric, order=info.get("methods"), coords=_table_coords(info)))
             for metric, (label, lower) in info["metrics"].items()
             if metric in df and not df[metric].isna().all()]
    # a table of many methods on landscape pages, its row names in a column twice as wide, in 6.5 pt: on a
    # portrait page each of 14 columns is 13 mm wide and a cell ("0.0013 +- 0.0046") or a name
    # ("ridge_leverage") ran over two or three lines (the samplers study's means took 14 pages)
    wide = any(t.shape[1] > WIDE_TABLE_COLUMNS for *_, t in means)
    if wide:
        doc.orient("L")
    doc.heading(f"{n}. Mean +- sd over seeds")
    n += 1
    doc.para("Each cell: mean +- standard deviation over the seeds, the mean rounded to the sd's second digit.",
             size=8)
    said = set()
    for label, lower, table in means:
        doc.para(f"{label} ({'lower' if lower else 'higher'} is better)", style="B")
        if wide:  # 6.5 pt: a cell "0.177 +- 0.076" on one line of its 17 mm
            doc.table(table, size=6.5, col_widths=(2, *[1] * (table.shape[1] - 1)))
        else:
            doc.table(table)
        if table.attrs.get("footnote") and table.attrs["footnote"] not in said:  # once, under the first table
            said.add(table.attrs["footnote"])
            doc.para(table.attrs["footnote"], size=7.5)
    if wide:
        doc.orient("P")

    # -- who wins
    tested = [m for m in info.get("tested_metrics") or list(info["metrics"])
              if len(wtl) and (wtl["metric"] == m).any()]
    if tested:
        doc.heading(f"{n}. Which method wins")
        n += 1
        doc.para("Win/tie/loss matrix: each cell compares the row's method with the column's over the paired "
                 "results (every data set, seed and grid point both have): green = the row is significantly "
                 "better, red = significantly worse (two-sided Wilcoxon signed-rank test, Holm's correction over "
                 "all pairs, 5%), white = no significant difference. The number is the Hodges-Lehmann effect, "
                 "row / column for positive metrics (else row - column); 95% intervals: appendix C, p-values: "
                 f"results/{info['study']}/wtl.csv. "
                 "W/T/L counts the row's wins, ties and losses. The critical-difference diagrams ask another "
                 "question: each data set is one block (Demsar 2006), so they show whether a difference holds "
                 "across data sets, while the matrix pools every run and shows whether it is consistent over runs.",
                 size=8)
        for metric in tested:
            label, lower = info["metrics"][metric]
            text, outcome = wtl_matrix(wtl, metric, info.get("methods"))
            eff = wtl.loc[wtl["metric"] == metric, "effect"].iloc[0]
            if doc.space_left() < 14 + 4.5 * len(text):  # keep the matrix with its title
                doc.new_page()
            doc.para(f"{label} ({'lower' if lower else 'higher'} is better; cells: "
                     f"{'ratio row / column' if eff == 'ratio' else 'difference row - column'})", style="B")
            doc.matrix(text, outcome, numbered=len(text) > 6)
            fig = cd_figs.get(metric)
            if fig is not None and fig is not key:
                budget.image(Path(figures) / fig["file"], caption=fig["caption"], max_height=90)
        if not len(cd):
            doc.para("No critical-difference diagram: it needs at least four data sets (Demsar's blocks) and "
                     "three methods.", size=8)

    # -- figures
    rest = [f for f in plain_figs if f is not key]
    if rest:
        doc.heading(f"{n}. Figures", keep=110)
        n += 1
        for fig in rest:
            budget.image(Path(figures) / fig["file"], caption=fig["caption"])

    # -- appendix
    doc.new_page()
    doc.heading("Appendix A. Provenance and configuration")
    doc.provenance(f"Study '{info['study']}' (kind '{info['kind']}'), config hash {info['config_hash']}.")
    doc.table(_setup_tables(df))
    methods = pd.DataFrame([{"method": m, "settings": json.dumps(c)} for m, c in cfg["methods"].items()])
    kernels_ = pd.DataFrame([{"kernel": k, "settings": json.dumps(c)} for k, c in cfg["kernels"].items()])
    doc.table(methods, size=7, col_widths=(30, 150))
    doc.table(kernels_, size=7, col_widths=(30, 150))
    if cfg.get("params"):
        doc.para("Study parameters: " + json.dumps(cfg["params"]), size=7.5)
    doc.heading(f"Appendix B. Paired tests against '{info.get('reference')}'")
    doc.para("Wilcoxon signed-rank test (two-sided) over the paired blocks; Holm's correction over the methods "
             "compared within each metric and scope ('all' pools every grid point, with the grid point part of the "
             "block). 'wins' counts blocks where the method beats the reference; effect: the Hodges-Lehmann ratio "
             "(or difference) of the method to the reference with its 95% interval; 'Holm 5%': better, worse or no "
             f"difference. The p-values (Wilcoxon, Holm, paired t): results/{info['study']}/stats.csv.", size=8)
    budget.table(_paired_table(paired, info.get("metrics")), size=6.5, col_widths=(20, 26, 40, 10, 10, 10, 50, 16))
    if len(fried):
        doc.para("Friedman tests (all methods, complete blocks)", style="B")
        budget.table(_friedman_table(fried), size=6.5, col_widths=(24, 26, 14, 14, 14, 88))
    if len(wtl):
        doc.heading("Appendix C. Every pair of methods")
        doc.para("The tests behind the win/tie/loss matrices: Hodges-Lehmann effect (ratio or difference of the "
                 "first method to the second) with its 95% confidence interval and the outcome of the Wilcoxon "
                 "signed-rank test, Holm-adjusted over all pairs of a metric (5%); 'better'/'worse' count the "
                 f"pairs the first method wins/loses. The p-values: results/{info['study']}/wtl.csv.",
                 size=8)
        budget.table(_wtl_long_table(wtl), size=6, col_widths=(24, 44, 12, 12, 12, 22, 34, 30))
    if len(claims):
        doc.heading("Appendix D. Claims: test and evidence")
        _claims_appendix(doc, claims, budget)
    doc.save(out_pdf)
