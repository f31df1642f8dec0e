"""The figures of Snakemake's HTML report (``snakemake --report``): each study's headline figures, with
captions that open with the study's answers.

The study PDFs keep every figure (``results/<study>/figures/``, 81 in a default run); the HTML report,
one file with every figure embedded as base64 beside about 3 MB of Snakemake's own JavaScript, holds
only the figures of the metrics a study's headline answers rank on (:func:`select`), re-encoded with
:data:`REPORT_COLORS` colours (:func:`write_report_figures`).  Measured on a default run (81 figures,
3.8 MB as 256-colour PNGs): ``reports/report.html`` 9.0 MB with every figure, under 5 MB with these.

Layout of the directory written (the workflow's ``results/report_figures``, marked for the report with
the pattern ``{study}/{name}.png``, so that each study is a category of its own):

- ``<study>/<name>.png``: the figure, the same name as in the study's figures directory;
- ``<study>/<name>.rst``: its caption (reStructuredText): the study's headline answers
  (:func:`nystrom_bench.findings.answer_text`), then what the figure shows (its ``figures.json`` entry).

Pure file in, file out: no Snakemake, no MLflow.
"""

from __future__ import annotations

import json
from pathlib import Path

from .atomic import atomic_dir
from .report import palette_png

__all__ = ["REPORT_COLORS", "select", "caption", "write_report_figures", "rst_escape"]

#: colours of a report figure's palette: line and box plots keep every line and band apart with 64
#: (1.34 MB -> 1.07 MB for a default run's 30 headline figures at 256 colours)
REPORT_COLORS = 64


def _headline_metrics(records):
    """The metrics a study's headline answers rank on, in order (every answer's if none is a headline)."""
    head = [r["metric"] for r in records if r.get("headline") and r.get("metric")]
    return list(dict.fromkeys(head or [r["metric"] for r in records if r.get("metric")]))


def _figure_metric(fig, metrics):
    """A figure's metric: its ``metric`` entry, else the longest of ``metrics`` its file name starts with
    (a study section's own figures, e.g. ``trace_error_vs_m_median.png``), else the first of ``metrics``
    whose last word is a word of the file name (``gap_c_ree.png``: ``relative_gap``), else None."""
    if fig.get("metric"):
        return fig["metric"]
    stem = Path(fig["file"]).stem
    by_prefix = next((m for m in sorted(metrics, key=len, reverse=True) if stem.startswith(m)), None)
    words = stem.split("_")
    return by_prefix or next((m for m in metrics if m.split("_")[-1] in words), None)


def select(figures, records):
    """The figures of a study that the HTML report shows, in the order of its ``figures.json``.

    ``figures``: the study's ``figures.json`` entries (``{"file", "kind", "metric"?, "caption"}``);
    ``records``: its answer records (``answers.json``).  The critical-difference diagram of each metric
    of a headline answer (each answer's metric where none is a headline), and one other figure: the
    first of the first such metric that has one, else the study's first figure that is no
    critical-difference diagram (or its first figure).
    """
    metrics = _headline_metrics(records)
    chosen = set()
    for m in metrics:
        mine = [f["file"] for f in figures if _figure_metric(f, metrics) == m]
        cd = [f for f in mine if _kind(figures, f) == "cd"]
        other = [f for f in mine if _kind(figures, f) != "cd"]
        chosen.update(cd[:1])
        if not any(_kind(figures, f) != "cd" for f in chosen):
            chosen.update(other[:1])
    if not any(_kind(figures, f) != "cd" for f in chosen):
        plain = [f["file"] for f in figures if f.get("kind") != "cd"] or [f["file"] for f in figures]
        chosen.update(plain[:1])
    return [f for f in figures if f["file"] in chosen]


def _kind(figures, name):
    return next(f.get("kind") for f in figures if f["file"] == name)


def rst_escape(text):
    """``text`` as literal reStructuredText inline text (``*``, backquotes, ``|`` and ``_`` escaped)."""
    out = str(text).replace("\\", "\\\\")
    for ch in "*`|_":
        out = out.replace(ch, "\\" + ch)
    return out


def caption(study, fig, records, questions=None):
    """A report figure's caption (reStructuredText): the study's headline answers, one bullet each
    (the question in bold, then :func:`~nystrom_bench.findings.answer_text`), then the figure's own
    caption.  ``questions``: ``{question id: question text}`` (default: the records' ``asks``)."""
    from .findings import answer_text

    lines = []
    heads = [r for r in records if r.get("headline")] or list(records)
    for r in heads:
        asks = (questions or {}).get(r["question"]) or r.get("asks") or r["question"]
        lines.append(f"- **{rst_escape(asks)}** {rst_escape(answer_text(r))}")
    text = "\n".join(lines)
    own = rst_escape(fig.get("caption") or "")
    what = f"Figure ``{fig['file']}`` of study ``{study}`` (the study's PDF ``reports/{study}.pdf`` has every figure)"
    return (f"{text}\n\n" if text else "") + (f"{what}: {own}" if own else f"{what}.") + "\n"


def write_report_figures(studies, out_dir, colors=REPORT_COLORS):
    """Write the HTML report's figures of every study into ``out_dir`` (replaced atomically).

    ``studies``: ``{study: (figures directory, answers.json path)}``; a figures directory without
    ``figures.json`` contributes its PNGs in name order, each with a caption of its answers only.
    Returns ``{study: [file names]}``.
    """
    from .findings import read_answers

    written = {}
    with atomic_dir(out_dir) as tmp:
        for study, (fig_dir, answers) in studies.items():
            fig_dir = Path(fig_dir)
            listing = fig_dir / "figures.json"
            figures = (json.loads(listing.read_text(encoding="utf-8")) if listing.exists()
                       else [{"file": p.name, "kind": "figure"} for p in sorted(fig_dir.glob("*.png"))])
            figures = [f for f in figures if (fig_dir / f["file"]).exists()]
            records = read_answers([answers])
            chosen = select(figures, records) if figures else []
            target = Path(tmp) / study
            target.mkdir(parents=True, exist_ok=True)
            for fig in chosen:
                (target / fig["file"]).write_bytes(palette_png(fig_dir / fig["file"], colors))
                (target / Path(fig["file"]).with_suffix(".rst").name).write_text(
                    caption(study, fig, records), encoding="utf-8")
            written[study] = [f["file"] for f in chosen]
    return written
