"""The HTML report's figures (nystrom_bench.html_report): which figures, their captions, their bytes."""

import json

import numpy as np
import pytest
from docutils.core import publish_parts
from PIL import Image

from nystrom_bench import html_report

FIGURES = [
    {"file": "cd_trace_error.png", "kind": "cd", "metric": "trace_error", "caption": "CD of trace."},
    {"file": "cd_sampling_seconds.png", "kind": "cd", "metric": "sampling_seconds", "caption": "CD of time."},
    {"file": "trace_error_vs_m_median.png", "kind": "figure", "caption": "||K - K~||_* against m | *all*."},
    {"file": "trace_error_vs_m_median_over_4.png", "kind": "figure", "caption": "The same, over 4."},
    {"file": "pareto_trace_error_kernel_entries.png", "kind": "figure", "caption": "Pareto."},
]


def _record(metric, headline=True, question="sampler"):
    return {"question": question, "asks": "Which landmark sampler?", "study": "samplers", "metric": metric,
            "label": metric.replace("_", " "), "lower_is_better": True, "headline": headline,
            "contenders": [{"name": "a_b", "value": "a_b", "mean_rank": 1.2}, {"name": "c", "value": "c",
                                                                               "mean_rank": 1.8}],
            "friedman": {"statistic": 3.0, "p": 0.01},
            "pair": {"a": "a_b", "b": "c", "effect": "ratio", "estimate": 0.9, "ci": [0.8, 0.95], "n_pairs": 12,
                     "better": 9, "worse": 3, "p_holm": 0.02, "outcome": "win"},
            "n_datasets": 4, "ranks": "per data set", "groups": ["dataset", "kernel"], "n_groups": 4, "best": "a_b", "runner_up": "c", "significant": True,
            "winner": "a_b"}


def test_select_keeps_the_headline_metrics_cd_and_its_first_other_figure():
    chosen = [f["file"] for f in html_report.select(FIGURES, [_record("trace_error"),
                                                             _record("sampling_seconds", headline=False)])]
    # the metric of a section's own figure comes from its file name; the time's CD is no headline
    assert chosen == ["cd_trace_error.png", "trace_error_vs_m_median.png"]


def test_select_takes_every_answer_when_none_is_a_headline_and_one_other_figure():
    chosen = [f["file"] for f in html_report.select(FIGURES, [_record("sampling_seconds", headline=False),
                                                             _record("trace_error", headline=False)])]
    assert chosen == ["cd_trace_error.png", "cd_sampling_seconds.png", "trace_error_vs_m_median.png"]


def test_select_falls_back_to_the_first_plain_figure_and_never_to_nothing():
    figs = [{"file": "cd_x.png", "kind": "cd", "metric": "x"}, {"file": "criterion_c_ree.png", "kind": "figure"},
            {"file": "criterion_c_ipe.png", "kind": "figure"}]
    assert [f["file"] for f in html_report.select(figs, [_record("relative_gap")])] == ["criterion_c_ree.png"]
    # a file name with the metric's last word: that figure, not the first
    figs += [{"file": "gap_c_ree.png", "kind": "figure"}]
    assert [f["file"] for f in html_report.select(figs, [_record("relative_gap")])] == ["gap_c_ree.png"]
    only_cd = [{"file": "cd_a.png", "kind": "cd", "metric": "a"}, {"file": "cd_b.png", "kind": "cd", "metric": "b"}]
    assert [f["file"] for f in html_report.select(only_cd, [])] == ["cd_a.png"]


def test_caption_opens_with_the_answers_and_renders_as_restructuredtext_without_warnings():
    text = html_report.caption("samplers", FIGURES[2], [_record("trace_error"), _record("x", headline=False)])
    assert text.startswith("- **Which landmark sampler?** samplers, trace error (lower is better)")
    assert text.count("\n- ") == 0  # the one headline answer only
    assert "Figure ``trace_error_vs_m_median.png`` of study ``samplers``" in text
    html = publish_parts(text, writer="html", settings_overrides={"report_level": 2, "halt_level": 2})["body"]
    # the escaped characters come back as they were: names with '_', norms with '|', '*'
    assert "a_b" in html and "||K - K~||_* against m | *all*." in html and "<strong>Which landmark" in html


def _figure(path, seed):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 255, size=(40, 60, 3), dtype=np.uint8)  # far more than 64 colours
    Image.fromarray(arr).save(path)


def test_write_report_figures_writes_the_chosen_figures_as_64_colour_pngs_with_captions(tmp_path):
    fig_dir = tmp_path / "samplers_figures"
    fig_dir.mkdir()
    for i, f in enumerate(FIGURES):
        _figure(fig_dir / f["file"], i)
    (fig_dir / "figures.json").write_text(json.dumps(FIGURES))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([_record("trace_error")]))
    bare = tmp_path / "bare"  # no figures.json, no answers: its PNGs in name order, the first plain one kept
    bare.mkdir()
    _figure(bare / "b.png", 7)
    _figure(bare / "a.png", 8)
    out = tmp_path / "out"
    written = html_report.write_report_figures({"samplers": (fig_dir, answers),
                                                "bare": (bare, tmp_path / "missing.json")}, out)
    assert written == {"samplers": ["cd_trace_error.png", "trace_error_vs_m_median.png"], "bare": ["a.png"]}
    assert sorted(p.name for p in (out / "samplers").iterdir()) == [
        "cd_trace_error.png", "cd_trace_error.rst", "trace_error_vs_m_median.png", "trace_error_vs_m_median.rst"]
    with Image.open(out / "samplers" / "cd_trace_error.png") as im:
        assert im.mode == "P" and im.size == (60, 40) and len(im.getcolors()) <= html_report.REPORT_COLORS
    assert (out / "samplers" / "cd_trace_error.rst").read_text().startswith("- **Which landmark sampler?**")
    assert (out / "bare" / "a.rst").read_text() == (
        "Figure ``a.png`` of study ``bare`` (the study's PDF ``reports/bare.pdf`` has every figure).\n")
    # written again, the directory is replaced: a study gone is gone
    html_report.write_report_figures({"bare": (bare, tmp_path / "missing.json")}, out)
    assert sorted(p.name for p in out.iterdir()) == ["bare"]


@pytest.mark.parametrize("text", ["a_b", "x*y", "`code`", "p | q", "back\\slash"])
def test_rst_escape_round_trips(text):
    html = publish_parts(html_report.rst_escape(text), writer="html")["body"]
    assert text.replace("\\", "\\") in html.replace("&lt;", "<")
