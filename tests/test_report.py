import pandas as pd

from nystrom_bench import report

INFO = {"metrics": {"mse": ["Test MSE", True]}, "reference": "exact"}


def test_mean_sd_table():
    df = pd.DataFrame({"dataset": ["a"] * 4, "kernel": ["g"] * 4, "seed": [0, 1, 0, 1],
                       "method": ["exact", "exact", "ny", "ny"], "mse": [1.0, 3.0, 2.0, 2.0]})
    t = report.mean_sd_table(df, "mse")
    assert list(t.columns) == ["dataset", "exact", "ny"]
    assert t.iloc[0]["exact"] == "2.0 +- 1.4" and t.iloc[0]["ny"] == "2 +- 0"


def test_numbers_are_formatted_for_people():
    assert report.fmt_mean_sd(34.13, 2.287) == "34.1 +- 2.3"
    assert report.fmt_mean_sd(0.004077, 0.000608) == "0.00408 +- 0.00061"
    assert report.fmt_mean_sd(150.0, 12.0) == "150 +- 12"
    # no spread over the seeds: 4 significant digits, scientific only below 1e-3 or from 1e6 on
    assert report.fmt_mean_sd(90000.0, 0.0) == "90000 +- 0" and report.fmt_mean_sd(123456.7, 0) == "123500 +- 0"
    assert report.fmt_mean_sd(2.0, 0.0) == "2 +- 0" and report.fmt_mean_sd(0.8, 0.0) == "0.8 +- 0"
    assert report.fmt_mean_sd(6.661e-14, 0.0) == "6.661e-14 +- 0" and report.fmt_mean_sd(2.5e7, 0) == "2.5e7 +- 0"
    assert report._fmt_p(2.3e-10) == "2e-10" and report._fmt_p(0.041) == "0.041"
    assert report.fmt_num(2.08333333333333) == "2.08" and report.fmt_num(1234567.0) == "1.23e6"
    assert report._fmt_ranks('{"b": 2.4375, "a": 1.5625}') == "a 1.56, b 2.44"


def _study(tmp_path, n_sets=5):
    """A toy study on disk: results, the stats stage's tables, figures; returns (paths, info)."""
    import json

    import numpy as np

    from nystrom_bench import stats

    rng = np.random.default_rng(0)
    rows = []
    for d in range(n_sets):
        for seed in range(3):
            for m in (10, 20):
                base = rng.uniform(1, 2)
                for method, shift in (("exact", 0.0), ("ny_a", 0.3), ("ny_b", 0.02)):
                    rows.append({"study": "toy", "dataset": f"set{d}", "method": method, "kernel": "g", "seed": seed,
                                 "m": m, "params": json.dumps({"n_train": 80, "n_test": 20, "n_features": 4}),
                                 "mse": base + shift + 0.01 * rng.normal()})
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    info = {"kind": "toy", "study": "toy", "title": "Toy study", "description": "Does Nystrom lose accuracy?",
            "metrics": {"mse": ["Test MSE", True]}, "tested_metrics": ["mse"], "primary_metric": "mse",
            "reference": "exact", "coords": ["m"], "summary_coords": None, "block_cols": ["dataset", "kernel", "seed"],
            "methods": ["exact", "ny_a", "ny_b"], "config_hash": "0",
            "config": {"methods": {"exact": {}, "ny_a": {}, "ny_b": {}}, "kernels": {"g": {"kernel": "gaussian"}}}}
    p = {k: tmp_path / f"{k}.csv" for k in ("stats", "friedman", "wtl", "cd")}
    stats.run_study_stats(tmp_path / "results.csv", info, p["stats"], p["friedman"], out_wtl=p["wtl"], out_cd=p["cd"])
    report.study_figures(tmp_path / "results.csv", info, tmp_path / "figures", cd_csv=p["cd"],
                         paper_curve=lambda *a: None, extra_figures=lambda df, info, out: [])
    return p, info


def _pages(pdf):
    from pypdf import PdfReader

    return [p.extract_text() for p in PdfReader(pdf).pages]


def test_study_pdf_opens_with_question_claims_and_answer(tmp_path):
    p, info = _study(tmp_path)
    assert (tmp_path / "figures" / "cd_mse.png").exists()
    claims = pd.DataFrame([{"paper": "Somebody et al. (X 2020)", "claim_id": "s1", "claim": "Nystrom is as accurate",
                            "where": "Table 1", "paper_value": "0.5", "ours": "0.52", "test": "Wilcoxon",
                            "p_value": 0.3, "effect": 1.01, "verdict": "partly reproduced", "evidence": "ratio 1.01"},
                           {"paper": "Somebody et al. (X 2020)", "claim_id": "s2", "claim": "On usps, ...",
                            "verdict": "not testable", "evidence": "usps is not in this run's results"}])
    claims.to_csv(tmp_path / "claims.csv", index=False)
    paper = [("Table 1 as in the paper", pd.DataFrame({"x": [1]}), None)]
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "toy.pdf", report_tables=lambda df, cfg: paper,
                     claims_csv=tmp_path / "claims.csv", wtl_csv=p["wtl"], cd_csv=p["cd"])
    pages = _pages(tmp_path / "toy.pdf")
    first = pages[0]
    for text in ("Question", "Does Nystrom lose accuracy?", "Set-up", "Claims tested", "Nystrom is as accurate",
                 "partly reproduced", "Not testable in this run (1", "Answer", "mean rank over 5 data sets", "Critical-difference diagram"):
        assert text in first, text
    body = "".join(pages)
    assert "Table 1 as in the paper" in body and "Which method wins" in body and "W/T/L" in body
    assert "Appendix A" in body and "git commit" in body and "Every pair of methods" in body
    assert "usps is not in this run's results" in body  # appendix D: each claim's evidence
    assert "Wilcoxon signed-rank p =" not in body  # no per-pair sentences
    # no ledger: page one says so; a missing or empty claims file is the same
    (tmp_path / "empty.csv").write_text("")
    for claims_csv in (None, tmp_path / "missing.csv", tmp_path / "empty.csv"):
        report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                         tmp_path / "toy2.pdf", claims_csv=claims_csv, wtl_csv=p["wtl"], cd_csv=p["cd"])
        assert "tests no paper claim" in _pages(tmp_path / "toy2.pdf")[0]


def test_cd_needs_four_data_sets(tmp_path, monkeypatch):
    p, info = _study(tmp_path, n_sets=3)
    assert pd.read_csv(p["cd"]).empty
    assert not (tmp_path / "figures" / "cd_mse.png").exists()
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "toy.pdf", wtl_csv=p["wtl"], cd_csv=p["cd"])
    first = _pages(tmp_path / "toy.pdf")[0]
    assert "Answer" in first and "mean rank over" not in first and "Test MSE against m" in first
    # a means table wider than WIDE_TABLE_COLUMNS (here: any): its section on landscape pages, then portrait again
    from pypdf import PdfReader

    assert all(pg.mediabox.width < pg.mediabox.height for pg in PdfReader(tmp_path / "toy.pdf").pages)
    monkeypatch.setattr(report, "WIDE_TABLE_COLUMNS", 3)
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "wide.pdf", wtl_csv=p["wtl"], cd_csv=p["cd"])
    pages = PdfReader(tmp_path / "wide.pdf").pages
    wide = [i for i, pg in enumerate(pages) if pg.mediabox.width > pg.mediabox.height]
    assert wide and wide == list(range(wide[0], wide[-1] + 1)) and wide[-1] < len(pages) - 1
    assert "Mean +- sd over seeds" in pages[wide[0]].extract_text()
    assert "Mean +- sd" not in pages[wide[0] - 1].extract_text()  # the section starts on its landscape page
    assert "Which method wins" in pages[wide[-1] + 1].extract_text()  # and what follows on a portrait one


def test_names_too_wide_for_their_cell_break_after_an_underscore_or_slash():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", "B", 8)
    assert report._break_at_joins(pdf, "ridge_leverage", 15) == "ridge_\nleverage"
    assert report._break_at_joins(pdf, "ridge_leverage", 40) == "ridge_leverage"  # it fits
    assert report._break_at_joins(pdf, "0.0013 +- 0.0046", 5) == "0.0013 +- 0.0046"  # a number: fpdf2's
    pdf.set_font("Helvetica", "", 8)
    got = report._break_at_joins(pdf, "gnkr_f1/median_over_4", 25)
    assert got == "gnkr_f1/\nmedian_over_4"
    room = 25 - 2 * pdf.c_margin
    assert all(pdf.get_string_width(line) <= room for line in got.split("\n"))


def _p_values_per_page(monkeypatch, build, pdf_path):
    """p-values on each page of the PDF ``build()`` writes: the 'p = ' of its text (pypdf) plus the filled
    cells of table columns named like a p-value, counted as the tables are emitted (pypdf cannot tell a
    table's p column from its others)."""
    import re

    from pypdf import PdfReader

    cells = {}
    original = report.PDF.table

    def table(self, df, *args, **kwargs):
        page = self.pdf.page
        cols = [c for c in df.columns if re.search(r"(^|\s)p(\s|$)|p-value", str(c), re.IGNORECASE)]
        n = sum(int((~df[c].astype(str).isin(["", "-", "n/a", "nan"])).sum()) for c in cols)
        original(self, df, *args, **kwargs)
        for p in range(page, self.pdf.page + 1):
            cells[p] = cells.get(p, 0) + n

    monkeypatch.setattr(report.PDF, "table", table)
    build()
    texts = [p.extract_text() for p in PdfReader(pdf_path).pages]
    return [len(re.findall(r"\bp = ", t)) + cells.get(i + 1, 0) for i, t in enumerate(texts)]


def test_no_page_carries_more_than_twelve_p_values(tmp_path, monkeypatch):
    """Many methods, grid points, claims with long evidence and a paper table of 30 p-values: the long test
    tables are summarised (effect, interval, outcome) or split over pages, at most 12 p-values a page."""
    import json

    import numpy as np

    from nystrom_bench import stats

    rng = np.random.default_rng(1)
    methods = [f"m{i}" for i in range(8)]
    rows = [{"study": "toy", "dataset": f"set{d}", "method": m, "kernel": "g", "seed": s, "m": g,
             "params": json.dumps({"n_train": 80, "n_test": 20, "n_features": 4}),
             "mse": 1 + 0.05 * i + 0.01 * rng.normal(), "time": 1 + 0.1 * rng.random()}
            for d in range(5) for s in range(3) for g in (10, 20, 30) for i, m in enumerate(methods)]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    info = {"kind": "toy", "study": "toy", "title": "Toy", "description": "Which?",
            "metrics": {"mse": ["Test MSE", True], "time": ["Fit time (s)", True]}, "tested_metrics": ["mse", "time"],
            "primary_metric": "mse", "reference": "m0", "coords": ["m"], "summary_coords": None,
            "block_cols": ["dataset", "kernel", "seed"], "methods": methods, "config_hash": "0",
            "config": {"methods": {m: {} for m in methods}, "kernels": {"g": {"kernel": "gaussian"}}}}
    p = {k: tmp_path / f"{k}.csv" for k in ("stats", "friedman", "wtl", "cd")}
    stats.run_study_stats(tmp_path / "results.csv", info, p["stats"], p["friedman"], out_wtl=p["wtl"], out_cd=p["cd"])
    report.study_figures(tmp_path / "results.csv", info, tmp_path / "figures", cd_csv=p["cd"])
    evidence = "; ".join(f"m{i} vs m0: median change +{i}%, Holm p = 0.0{i}" for i in range(1, 8))
    pd.DataFrame([{"paper": "P (2020)", "claim_id": f"c{i}", "claim": "m1 beats m0", "where": "Fig. 1",
                   "paper_value": "yes", "ours": "+1%", "test": "Wilcoxon", "p_value": 0.01, "effect": "+1%",
                   "verdict": "reproduced", "evidence": evidence} for i in range(6)]).to_csv(tmp_path / "claims.csv",
                                                                                             index=False)
    paper = [("A paper's table of tests", pd.DataFrame({"row": range(30), "Wilcoxon p": [0.01] * 30}), "note")]
    answers = [{"question": "Which?", "lines": [f"m0 vs m{i}: Holm p = 0.01, Friedman p = 0.2." for i in range(5)]}]

    def build():
        report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                         tmp_path / "toy.pdf", report_tables=lambda df, cfg: paper, claims_csv=tmp_path / "claims.csv",
                         wtl_csv=p["wtl"], cd_csv=p["cd"], answers=answers)

    counts = _p_values_per_page(monkeypatch, build, tmp_path / "toy.pdf")
    assert max(counts) <= report.P_PER_PAGE, counts
    assert sum(counts) >= 30 + 6 * 8 + 10  # the paper table, the claims' evidence and the answers are all there
    body = "".join(_pages(tmp_path / "toy.pdf"))
    assert "outcome (Holm 5%)" in body and "Holm 5%" in body and "results/toy/wtl.csv" in body


def test_strip_plot_is_the_same_picture_every_time_and_leaves_numpys_global_state_alone(tmp_path):
    """seaborn jitters strip-plot points with ``np.random``: the figure seeds it for the call only."""
    import numpy as np

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"dataset": "d", "kernel": "gaussian", "method": np.repeat(["uniform", "kmeans"], 10),
                       "seed": np.tile(range(10), 2), "rmse": rng.uniform(1, 2, 20)})
    info = {"metrics": {"rmse": ["test RMSE (lower is better)", True]}, "methods": ["uniform", "kmeans"]}
    np.random.seed(123)  # noqa: NPY002 - the legacy global state seaborn reads
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    report.metric_figure(df, info, "rmse", tmp_path / "a.png")
    assert (np.random.get_state()[1] == before).all()  # noqa: NPY002
    np.random.uniform()  # noqa: NPY002 - a caller's own draws in between change nothing
    report.metric_figure(df, info, "rmse", tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_box_plot_theme_stays_in_its_figure(tmp_path):
    """seaborn's whitegrid theme is the box plot's own: matplotlib's settings after it are those before, so a
    figure drawn next in the same job (a critical-difference diagram) gets no grid from a box plot before it."""
    import matplotlib as mpl
    import numpy as np

    df = pd.DataFrame({"dataset": "d", "kernel": "gaussian", "method": np.repeat(["uniform", "kmeans"], 4),
                       "seed": np.tile(range(4), 2), "rmse": np.linspace(1, 2, 8)})
    info = {"metrics": {"rmse": ["test RMSE (lower is better)", True]}, "methods": ["uniform", "kmeans"]}
    ranks = pd.Series([1.2, 1.8, 3.0], index=["uniform", "kmeans", "dpp"])
    pvals = pd.DataFrame(1.0, index=ranks.index, columns=ranks.index)
    report.pyplot()
    before = {k: v for k, v in mpl.rcParams.items() if k not in ("backend", "backend_fallback")}
    report.cd_figure(ranks, pvals, tmp_path / "cd.png", cd=1.0)
    report.metric_figure(df, info, "rmse", tmp_path / "box.png")
    after = {k: v for k, v in mpl.rcParams.items() if k not in ("backend", "backend_fallback")}
    assert {k for k in before if str(before[k]) != str(after[k])} == set()  # d1c0a5d: axes.grid, colours, ...


def test_set_up_names_the_blocks_parameters_with_long_grids_shortened():
    """Page one's set-up lists the block's own parameters (a GNKR block's widths and lambdas), not only the
    coordinates that vary across rows."""
    import json

    df = pd.DataFrame({"dataset": "f1", "method": ["US", "CS"], "kernel": "gaussian", "seed": 0,
                       "params": json.dumps({"n_train": 100, "n_test": 50, "n_features": 5})})
    params = {"sigma_grid": [0.01, 0.1, 1.0, 10.0], "lambda_grid": [10.0 ** -k for k in range(15, 2, -1)],
              "extra_sigmas": [], "standardize_target": True}
    info = {"config": {"kernels": {"gaussian": {"kernel": "gaussian"}}, "params": params}, "methods": ["US", "CS"]}
    line = [t for t in report._setup_lines(df, info) if t.startswith("Parameters")]
    assert line == ["Parameters of the block: sigma_grid = 0.01, 0.1, 1, 10; lambda_grid = 1e-15, 1e-14, ..., "
                    "0.001 (13 values); extra_sigmas = none; standardize_target = True."]


def test_save_png_holds_matplotlibs_pixels_as_a_palette_png(tmp_path):
    """save_png takes the Agg canvas's raw RGBA (no PNG encoded and decoded on the way) and writes the palette
    PNG of exactly the pixels matplotlib's own PNG holds, at the figure's size with and without a tight box."""
    import io

    import numpy as np
    from PIL import Image

    plt = report.pyplot()
    for kw in ({}, {"bbox_inches": "tight"}):
        fig, axes = report.panels(plt, 3)
        for i, ax in enumerate(axes.flat[:3]):
            ax.loglog([1, 10, 100], [1, 0.1 * (i + 1), 0.03], marker="o", label=f"m{i}")
            ax.set_title("$10^{-2}$ panel")
            ax.legend()
        report.save_png(fig, tmp_path / "fig.png", dpi=120, **kw)
        ref = io.BytesIO()
        fig.savefig(ref, dpi=120, format="png", **kw)
        plt.close(fig)
        ref.seek(0)
        with Image.open(tmp_path / "fig.png") as im:
            assert im.mode == "P"
            ours = np.asarray(im.convert("RGB"))
        with Image.open(ref) as im:
            theirs = np.asarray(im.convert("RGB"))
            want = np.asarray(Image.open(io.BytesIO(report.palette_png(ref, 256))).convert("RGB"))
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, want)  # the same pixels as the palette of matplotlib's own PNG
        # the palette is the picture, to the nearest of 256 colours
        assert np.abs(ours.astype(int) - theirs.astype(int)).mean() < 2


_CD_SCRIPT = """
import sys
import numpy as np, pandas as pd
from nystrom_bench import jobs, report
with jobs.scipy_docstrings_left_as_they_are():  # as the analysis job imports it (~0.5 CPU-s less a draw)
    import scipy.stats
names = ["a", "b", "c", "d", "e", "f"]
ranks = pd.Series([1.2, 1.9, 2.6, 3.1, 4.4, 5.3], index=names)
p = pd.DataFrame(1.0, index=names, columns=names)  # overlapping groups: a-c, b-d, c-e, d-f
for i, x in enumerate(names):
    for j, y in enumerate(names):
        if abs(i - j) > 2:
            p.loc[x, y] = 0.001
report.cd_figure(ranks, p, sys.argv[1], cd=1.5)
"""


def test_critical_difference_figure_bytes_are_the_same_under_every_hash_seed(tmp_path):
    """scikit-posthocs draws each bar through its methods in the order of a Python set, whose order follows the
    process's string-hash seed; cd_figure puts every bar in rank order, so the PNG is the same bytes under any
    seed (before: other pixels under each seed).  The Snakefile still gives every job one seed (PYTHONHASHSEED=0)
    for any set order elsewhere."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    def draw(seed, name):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "MPLBACKEND": "Agg"}
        subprocess.run([sys.executable, "-c", _CD_SCRIPT, str(tmp_path / name)], env=env, check=True)
        return (tmp_path / name).read_bytes()

    first = draw(0, "a.png")
    for seed in (1, 2):  # before, each of six seeds drew other pixels
        assert draw(seed, f"s{seed}.png") == first, f"hash seed {seed} drew other pixels"
    snakefile = (Path(__file__).resolve().parents[1] / "Snakefile").read_text()
    assert re.search(r'os\.environ\.setdefault\("PYTHONHASHSEED", "0"\)', snakefile)


def test_critical_difference_bars_run_in_rank_order(tmp_path, monkeypatch):
    """Each bar's line visits its methods from the lowest mean rank to the highest (one horizontal line, never
    doubling back), whatever order scikit-posthocs gave them in."""
    import numpy as np
    import pandas as pd
    import scikit_posthocs as skp

    drawn = []
    real = skp.critical_difference_diagram

    def keep(*args, **kwargs):
        out = real(*args, **kwargs)
        drawn.append(out)
        for bar in out["crossbars"]:  # as a set's order may give them
            for line in bar:
                line.set_data(line.get_xdata()[::-1], line.get_ydata()[::-1])
        return out

    monkeypatch.setattr(skp, "critical_difference_diagram", keep)
    names = ["a", "b", "c", "d", "e", "f"]
    ranks = pd.Series([1.2, 1.9, 2.6, 3.1, 4.4, 5.3], index=names)
    p = pd.DataFrame(1.0, index=names, columns=names)
    for i, x in enumerate(names):
        for j, y in enumerate(names):
            if abs(i - j) > 2:
                p.loc[x, y] = 0.001
    report.cd_figure(ranks, p, tmp_path / "cd.png", cd=1.5)
    bars = [line for bar in drawn[0]["crossbars"] for line in bar]
    assert len(bars) == 4  # the groups a-c, b-d, c-e, d-f
    for line in bars:
        x = np.asarray(line.get_xdata(), dtype=float)
        assert len(x) == 3 and np.all(np.diff(x) > 0), x


def _grid_figure(plt, title_y=None):
    """A figure with what the studies' figures hold: log and linear panels with titles, a shared x axis, minor
    log ticks with labels, a legend, a suptitle and a hidden spare panel."""
    import numpy as np

    fig, axes = plt.subplots(2, 3, figsize=(7, 4.6), squeeze=False, sharex=True)
    x = np.linspace(0.01, 0.1, 6)
    for i, ax in enumerate(axes.flat[:5]):
        ax.plot(x, np.exp(-(i + 1) * 20 * x) * 10.0 ** -i, marker="o", label="GSA")
        ax.plot(x, 0.5 + 0.01 * i + 0 * x, ls="--", label="exact")
        if i % 2 == 0:
            ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
        ax.set_title(f"data set {i} / a sampler", fontsize=8)
        ax.tick_params(which="both", labelsize=7)
        ax.set_ylabel("Relative error", fontsize=7)
    axes[1, 2].set_visible(False)
    axes[0, 0].legend(fontsize=6)
    fig.suptitle("error against the ratio", fontsize=10)
    return fig


def test_finish_figure_draws_the_pixels_of_tight_layout_then_save_png(tmp_path):
    """finish_figure measures each axis once per state and pins log panels' titles: the same pixels as matplotlib's
    own tight layout at the save dpi and draw, with and without ``rect`` and a tight box, and no measuring left
    patched in."""
    import numpy as np
    from PIL import Image

    plt = report.pyplot()
    for kw in ({}, {"rect": (0, 0.06, 1, 0.97)}, {"bbox_inches": "tight"}):
        fig = _grid_figure(plt)
        report.finish_figure(fig, tmp_path / "ours.png", dpi=110, **kw)
        assert not any(name in vars(obj) for ax in fig.axes for obj in (ax, ax.xaxis, ax.yaxis)
                       for name in ("get_tightbbox", "_update_ticks", "_get_ticklabel_bboxes"))
        ref = _grid_figure(plt)
        if "bbox_inches" not in kw:
            ref.set_dpi(110)  # laid out at the dpi it is drawn at (a tight box: savefig measures at its dpi)
        ref.tight_layout(rect=kw.get("rect"))
        report.save_png(ref, tmp_path / "ref.png", dpi=110, **{k: v for k, v in kw.items() if k != "rect"})
        plt.close(ref)
        with Image.open(tmp_path / "ours.png") as a, Image.open(tmp_path / "ref.png") as b:
            np.testing.assert_array_equal(np.asarray(a.convert("RGB")), np.asarray(b.convert("RGB")))


def test_finish_figure_pins_only_the_titles_of_log_panels():
    """A linear panel's title stays placed by matplotlib (its y axis may show an offset text the title must
    clear); a log panel's is pinned where that placement leaves it."""
    plt = report.pyplot()
    fig = _grid_figure(plt)
    report._pin_log_titles(fig)
    pinned = [ax.title.get_position()[1] == 1.0 and not ax._autotitlepos for ax in fig.axes[:5]]
    plt.close(fig)
    assert pinned == [True, False, True, False, True]


def test_measured_once_answers_again_after_a_panel_moves():
    """The memo of an axis's ticks is keyed by the panel's position and limits: moving or rescaling a panel
    inside the block measures it afresh (the boxes follow the panel)."""
    plt = report.pyplot()
    fig = _grid_figure(plt)
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    with report._measured_once(fig):
        before = ax.get_tightbbox(renderer)
        assert ax.get_tightbbox(renderer) is before  # the same state: the same answer
        fig.subplots_adjust(left=0.3)
        moved = ax.get_tightbbox(renderer)
        ax.set_ylim(1e-6, 10)
        rescaled = ax.get_tightbbox(renderer)
    plt.close(fig)
    assert moved.x0 > before.x0 + 10
    assert rescaled.bounds != moved.bounds
