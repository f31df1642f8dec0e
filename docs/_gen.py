"""Pages of the documentation that come from data, written before each Sphinx build (``conf.py``).

- ``_generated/findings.md``: the findings of the last run (``reports/FINDINGS.md``, written by
  ``make reproduce``), else the snapshot block of ``README.md`` (``make findings``), headings shifted
  to sit under the findings page's title.
- ``papers/<key>.md``: one page per paper data file (``src/nystrom_bench/papers/<key>.yaml``): its
  header (what the paper is and what tests it), the studies that ran its claims, each claim with
  where the paper makes it, the paper's value, the rule and, after a run, the computed verdict from
  ``results/claims.csv``; the claims without a verdict of their own (not testable, not run) and the
  notes that state deviations are its gaps.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import yaml

SNAPSHOT_START, SNAPSHOT_END = "<!-- findings:start -->", "<!-- findings:end -->"


def _findings_text(root):
    """(source label, Markdown body) of the findings: the run's FINDINGS.md, else the README snapshot."""
    run = root / "reports" / "FINDINGS.md"
    if run.is_file():
        text = run.read_text(encoding="utf-8")
        body = "\n".join(text.splitlines()[1:]) if text.startswith("# ") else text
        return "the last run's `reports/FINDINGS.md`", body
    readme = (root / "README.md").read_text(encoding="utf-8")
    if SNAPSHOT_START not in readme:
        return "nothing (no run and no README snapshot)", "No findings yet: run `make reproduce`."
    body = readme.split(SNAPSHOT_START, 1)[1].split(SNAPSHOT_END, 1)[0]
    body = "\n".join(ln[1:] if ln.startswith("###") else ln for ln in body.splitlines())  # ### -> ##
    return "the README's snapshot (`make findings`); `make reproduce` writes the full ledger", body


def _md_escape_cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ").strip()


def _header_comment(path):
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def _as_list(value):
    return [] if not value else list(value) if isinstance(value, list | tuple) else [value]


def _ledger(root):
    path = root / "results" / "claims.csv"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as fh:
        return {(r["paper"], r["claim_id"]): r for r in csv.DictReader(fh)}


def snapshot_counts(readme_text, name):
    """The README snapshot's verdict counts of paper ``name`` in words ("" where it has no row)."""
    snap = readme_text.split(SNAPSHOT_START, 1)[-1].split(SNAPSHOT_END, 1)[0]
    lines = [ln for ln in snap.splitlines() if ln.startswith("| paper | claims |")]
    row = next((ln for ln in snap.splitlines() if ln.startswith(f"| {name} |")), None)
    if not lines or row is None:
        return ""
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    counts = dict(zip(head[1:], cells[1:], strict=False))
    total = counts.pop("claims", "?")
    return f"{total} claims: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v not in ("0", ""))


def paper_page(path, ledger, snapshot_row=""):
    """The Markdown page of one paper data file (``ledger``: ``{(paper name, claim id): row}``;
    ``snapshot_row``: the README snapshot's counts for it, shown when there is no ledger)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    name, title, claims = doc["name"], doc["title"], doc.get("claims") or []
    studies = sorted({s for c in claims for s in _as_list(c.get("study"))})
    rows = [ledger.get((name, c["id"])) for c in claims]
    ran = any(rows)
    out = [f"# Reproducing {name}", "", f"*{title}*", "", _header_comment(path), ""]
    out += ["## What ran", "",
            f"{len(claims)} claims, tested by the study blocks " + ", ".join(f"`{s}`" for s in studies)
            + " of the default config (`config/config.yaml`; `config/paper.yaml` runs the paper's own data "
            "sets and settings where they differ). Each claim names the rule that computes its verdict "
            "(see [How a verdict is computed](../guide/verdicts.md)); the paper's tables, where it prints "
            "any, are drawn beside ours in `reports/<study>.pdf`.", ""]
    out += ["## Verdicts", ""]
    if ran:
        counts = Counter((r or {}).get("verdict", "not run") for r in rows)
        out += ["From the last run's ledger (`results/claims.csv`): "
                + ", ".join(f"{n} {v}" for v, n in counts.most_common()) + ".", ""]
    else:
        out += ["No run's ledger here (`results/claims.csv` is written by `make reproduce`): the claims "
                "are listed with their tests."]
        if snapshot_row:
            out[-1] += (" The README's snapshot of the last published run ([findings](../findings.md)): "
                        + snapshot_row + ".")
        out += [""]
    out += ["| claim | where | the paper | test | ours | verdict |", "|---|---|---|---|---|---|"]
    for c, r in zip(claims, rows, strict=True):
        test = f"`{c.get('rule', '')}` on `{c.get('metric', '')}`" if c.get("metric") else f"`{c.get('rule', '')}`"
        ours = _md_escape_cell((r or {}).get("ours", "")) or "--"
        verdict = _md_escape_cell((r or {}).get("verdict", "")) or "(after a run)"
        out.append(f"| {_md_escape_cell(c['claim'])} (`{c['id']}`) | {_md_escape_cell(c.get('where', ''))} | "
                   f"{_md_escape_cell(c.get('paper_value', ''))} | {test} in {', '.join(f'`{s}`' for s in _as_list(c.get('study')))} | {ours} | "
                   f"{verdict} |")
    gaps = [c for c, r in zip(claims, rows, strict=True)
            if (r or {}).get("verdict") in ("not testable", "not run") or c.get("note")]
    out += ["", "## Gaps and deviations", ""]
    if not gaps:
        out += ["None declared: every claim runs as the paper states it.", ""]
    for c, r in zip(claims, rows, strict=True):
        if c in gaps:
            v = (r or {}).get("verdict", "")
            lead = f"**`{c['id']}`**" + (f" ({v})" if v else "")
            out += [f"- {lead}: {_md_escape_cell(c.get('note', 'no note'))}"]
    return "\n".join(out) + "\n"


def write_all(root, docs):
    """Write the generated pages (only where their text changed, so Sphinx rebuilds what changed)."""
    root, docs = Path(root), Path(docs)
    pages = {}
    source, body = _findings_text(root)
    pages[docs / "_generated" / "findings.md"] = f"_Rendered from {source}._\n\n{body.strip()}\n"
    ledger = _ledger(root)
    papers = sorted((root / "src" / "nystrom_bench" / "papers").glob("*.yaml"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    for path in papers:
        name = yaml.safe_load(path.read_text(encoding="utf-8"))["name"]
        pages[docs / "papers" / f"{path.stem}.md"] = paper_page(path, ledger, snapshot_counts(readme, name))
    for path, text in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return sorted(pages)
