"""The box plots (report.metric_figure) drawn with matplotlib directly: the same pixels as seaborn 0.13's
boxplot + stripplot drew, seaborn's theme values, and no seaborn import."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import report


def _toy(rng, methods=("uniform", "kmeans", "rls"), datasets=("a", "b", "c"), seeds=6):
    rows = []
    for d in datasets:
        for i, m in enumerate(methods):
            for s in range(seeds):
                rows.append({"dataset": d, "kernel": "gaussian", "method": m, "seed": s,
                             "rmse": 1.0 + 0.2 * i + rng.standard_normal() * 0.3, "fit_time": rng.uniform(0.01, 5.0)})
    return pd.DataFrame(rows)


def _pixels(path):
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def _seaborn_figure(df, info, metric, out_png):
    """The box plot as seaborn drew it (the code before the matplotlib panels)."""
    sns = pytest.importorskip("seaborn")
    plt = report.pyplot()
    label = info["metrics"][metric][0]
    df = df[df[metric].notna()].reset_index(drop=True)
    out = report.outside_assumptions(df)
    df = report.mark_outside(df)
    with plt.rc_context():
        sns.set_theme(style="whitegrid", context="paper")
        report._draw_metric_panels(plt, sns, df, info, metric, label, out, sorted(df["dataset"].unique()), out_png)


@pytest.mark.parametrize("metric", ["rmse", "fit_time"])
def test_box_plot_has_seaborns_pixels(tmp_path, metric):
    """Boxes, whiskers, caps, jittered points, ticks, grid and colours as seaborn's boxplot + stripplot drew them:
    pixel for pixel, on a linear and a log (times) axis, with a method missing from one panel and one with a
    single value (no jitter, no draw from the random state)."""
    rng = np.random.default_rng(3)
    df = _toy(rng)
    df = df[~((df["dataset"] == "b") & (df["method"] == "kmeans"))]  # a method absent from a panel
    df = df[~((df["dataset"] == "c") & (df["method"] == "rls") & (df["seed"] > 0))]  # one value only
    info = {"metrics": {"rmse": ["test RMSE", True], "fit_time": ["fit time (s)", True]},
            "methods": ["uniform", "kmeans", "rls"]}
    _seaborn_figure(df, info, metric, tmp_path / "sns.png")
    report.metric_figure(df, info, metric, tmp_path / "mpl.png")
    np.testing.assert_array_equal(_pixels(tmp_path / "mpl.png"), _pixels(tmp_path / "sns.png"))


def test_box_theme_is_seaborns_whitegrid_paper_theme():
    """The theme's values are seaborn's own (its colormap aside, which no box plot uses)."""
    sns = pytest.importorskip("seaborn")
    want = {**sns.axes_style("whitegrid"), **sns.plotting_context("paper")}
    want.pop("image.cmap")
    assert report._BOX_THEME == dict(want)
    assert list(report._DEEP) == sns.color_palette("deep").as_hex()


def test_box_plot_imports_no_seaborn(tmp_path):
    """A one-kernel study's box plot draws without importing seaborn (its import and per-call overhead were
    most of a box-plot study's figure time)."""
    code = f"""
import sys, numpy as np, pandas as pd
from nystrom_bench import report
df = pd.DataFrame({{"dataset": "d", "kernel": "gaussian", "method": np.repeat(["u", "k"], 4),
                    "seed": np.tile(range(4), 2), "rmse": np.linspace(1, 2, 8)}})
report.metric_figure(df, {{"metrics": {{"rmse": ["RMSE", True]}}, "methods": ["u", "k"]}}, "rmse", {str(tmp_path / "b.png")!r})
print("seaborn" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert (tmp_path / "b.png").stat().st_size > 0
