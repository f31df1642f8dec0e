"""The rule ``analysis`` (one Python process per study: table, tests, figures, the study's own claims, answer
records, PDF) writes what the separate steps wrote, and each step imports only what it uses.

The separate steps are recomputed here from the tiny workflow run's run files with the library calls the
old one-job-per-step scripts made -- ``results.aggregate``, ``stats.run_study_stats``, ``report.study_figures``,
``claims.write_ledger`` over every block (the old global ``claims`` rule), ``findings.study_answers`` -- and
the files compared byte for byte, the figures by name (a strip plot's jitter draws from numpy's global random
state: its pixels differ from run to run), the PDF by its text (when and from which checkout it was made aside).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_workflow import ROOT, TINY, workdir  # noqa: F401 - workdir: the shared run (a fixture)

from nystrom_bench import jobs

#: the two tests reading the tiny run here are no part of its xdist_group (test_workflow.READS_RUN): they only read
#: it (their outputs go to tmp_path) and are the group's longest (about half its time after the build), so either
#: worker runs them once the build is done (they are collected last; a worker reaching them sooner waits on its lock)
pytestmark = pytest.mark.workflow
HEAVY = ("matplotlib", "seaborn", "mlflow")


def _blocks():
    """The tiny config's blocks as the workflow reads them: from tiny.yaml (yaml sorts the keys: the method order),
    with the schema's defaults filled in (the Snakefile's validate)."""
    import yaml
    from snakemake.utils import validate

    from nystrom_bench.config import check

    config = yaml.safe_load(yaml.safe_dump(TINY))
    validate(config, str(ROOT / "config/schema.yaml"))
    return check(config)


def _report_info(study, block):
    """The workflow's study_report_params (workflow/rules/common.smk), without Snakemake."""
    from nystrom_bench import studies
    from nystrom_bench.provenance import config_hash

    kind = studies.get(block.get("kind", study))
    shown = {k: v for k, v in block.items() if k not in ("threads", "mem_mb", "runtime")}
    return {**jobs.analysis_info(kind, block), "study": study, "title": block.get("title", kind.title),
            "description": kind.description, "config": shown, "config_hash": config_hash(shown)}


def _same_bytes(a, b):
    assert Path(a).read_bytes() == Path(b).read_bytes(), f"{a} differs from {b}"


def test_the_analysis_job_writes_what_the_separate_steps_wrote(workdir, tmp_path):  # noqa: F811 - the fixture
    from pypdf import PdfReader

    from nystrom_bench import claims, findings, report, results, stats, studies

    blocks = _blocks()
    res = workdir / "results"
    infos = {}
    for study, block in blocks.items():
        kind = studies.get(block.get("kind", study))
        info = infos[study] = jobs.analysis_info(kind, block)
        section = studies.section(info["kind"])
        out = tmp_path / study
        out.mkdir()
        runs = [res / study / "runs" / f"{j}.csv" for j in jobs.plan(block)]
        results.aggregate(runs, out / "results.csv", kind.coords)
        stats.run_study_stats(out / "results.csv", info, out / "stats.csv", out / "friedman.csv",
                              tested_rows=section.tested_rows, out_wtl=out / "wtl.csv", out_cd=out / "cd.csv")
        for name in ("results", "stats", "friedman", "wtl", "cd"):
            _same_bytes(out / f"{name}.csv", res / study / f"{name}.csv")
    # the old global claims rule: the ledger over every block's results, each block's own claims cut from it
    claims.write_ledger({s: res / s / "results.csv" for s in blocks}, infos, tmp_path / "claims.csv",
                        per_study={s: tmp_path / s / "claims.csv" for s in blocks})
    _same_bytes(tmp_path / "claims.csv", res / "claims.csv")
    for study in blocks:
        _same_bytes(tmp_path / study / "claims.csv", res / study / "claims.csv")
    # figures, answer records and report of two studies (a kind with figures and tables of its own)
    for study in ("krr", "gnkr_tiny"):
        info, section, out = _report_info(study, blocks[study]), studies.section(infos[study]["kind"]), tmp_path / study
        report.study_figures(out / "results.csv", infos[study], out / "figures",
                             figure_coords=infos[study].get("figure_coords"), paper_curve=section.paper_curve,
                             extra_figures=section.figures, cd_csv=out / "cd.csv")
        made = sorted(p.name for p in (out / "figures").iterdir())
        assert made == sorted(p.name for p in (res / study / "figures").iterdir() if not p.name.startswith("."))
        assert "figures.json" in made and len(made) > 1
        _same_bytes(out / "figures" / "figures.json", res / study / "figures" / "figures.json")
        records = findings.study_answers(section.tested_rows(results.read_results(out / "results.csv")), info,
                                         coord_roles=section.coord_roles)
        findings.write_answers(records, out / "answers.json")
        _same_bytes(out / "answers.json", res / study / "answers.json")
        key = findings.answer_figure(records, out / "answer_cd.png")
        report.study_pdf(out / "results.csv", out / "stats.csv", out / "friedman.csv", out / "figures", info,
                         out / "report.pdf", report_tables=section.tables, claims_csv=out / "claims.csv",
                         wtl_csv=out / "wtl.csv", cd_csv=out / "cd.csv", answers=findings.answer_lines(records),
                         key_figure=key)

        def text(pdf):  # when and from which checkout it was made aside
            return [re.sub(r"Generated .* UTC from git commit \S+", "<made>", p.extract_text())
                    for p in PdfReader(pdf).pages]

        assert text(out / "report.pdf") == text(workdir / f"reports/{study}.pdf")


def test_study_claims_takes_the_first_configured_block():
    cl = [{"id": "a", "study": "x"}, {"id": "b", "study": ["y", "x"]}, {"id": "c", "study": ["z", "y"]},
          {"id": "d", "study": "z"}]
    assert [c["id"] for c in jobs.study_claims(cl, "x", ["x", "y"])] == ["a"]
    assert [c["id"] for c in jobs.study_claims(cl, "y", ["x", "y"])] == ["b", "c"]
    assert [c["id"] for c in jobs.study_claims(cl, "x", ["x"])] == ["a", "b"]
    assert jobs.study_claims(cl, "z", ["x", "y"]) == []


def test_gather_claims_refuses_a_stale_study_file(tmp_path):
    import pandas as pd

    from nystrom_bench.claims import COLUMNS

    cl = [{"id": "a", "claim": "A.", "where": "Fig. 1", "study": "x", "not_testable": "no data"},
          {"id": "b", "claim": "B.", "where": "Fig. 2", "study": "gone", "not_testable": "no data"}]
    pd.DataFrame([{c: "" for c in COLUMNS} | {"claim_id": "other", "study": "x"}], columns=COLUMNS).to_csv(
        tmp_path / "x.csv", index=False)
    with pytest.raises(ValueError, match=r"x.csv does not hold claim 'a'.*run its analysis again"):
        jobs.gather_claims({"x": tmp_path / "x.csv"}, tmp_path / "ledger.csv", claims=cl)
    pd.DataFrame([{c: "" for c in COLUMNS} | {"claim_id": "a", "study": "x", "p_value": "0.0312500000001"}],
                 columns=COLUMNS).to_csv(tmp_path / "x.csv", index=False)
    out = jobs.gather_claims({"x": tmp_path / "x.csv"}, tmp_path / "ledger.csv", claims=cl)
    assert list(out["claim_id"]) == ["a", "b"] and out["p_value"][0] == "0.0312500000001"  # the text, unchanged
    assert list(out["verdict"]) == ["", "not testable"]


_WHO_IMPORTS = """
import importlib.abc, json, logging, sys

first = {}


class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in %(heavy)r and top not in first:
            handlers = [h for h in logging.getLogger().handlers if hasattr(h, "stream")]
            first[top] = getattr(handlers[0].stream, "name", "?") if handlers else "outside any step"
        return None


sys.meta_path.insert(0, Spy())
%(call)s
print(json.dumps(first))
"""


def _first_importers(call, cwd):
    """``{heavy module: the log file active when it was first imported}`` while ``call`` runs."""
    code = _WHO_IMPORTS % {"heavy": HEAVY, "call": call}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_each_step_imports_only_what_it_uses(workdir, tmp_path, mlflow_uri):  # noqa: F811 - the fixture
    block = _blocks()["gnkr_tiny"]
    info = _report_info("gnkr_tiny", block)
    from nystrom_bench import studies

    analysis = jobs.analysis_info(studies.get("gnkr"), block)
    runs = [str(workdir / "results/gnkr_tiny/runs" / f"{j}.csv") for j in jobs.plan(block)]
    out = {k: str(tmp_path / v) for k, v in {
        "results": "results.csv", "paired": "stats.csv", "friedman": "friedman.csv", "wtl": "wtl.csv",
        "cd": "cd.csv", "figures": "figures", "claims": "claims.csv", "answers": "answers.json",
        "pdf": "gnkr_tiny.pdf"}.items()}
    logs = {s: str(tmp_path / "logs" / f"{s}.log") for s in ("aggregate", "stats", "figures", "claims", "report")}
    call = (f"from nystrom_bench import jobs\njobs.analyze_study('gnkr_tiny', {runs!r}, {out!r}, {info!r}, "
            f"{list(analysis['coords'])!r}, {logs!r}, analysis={analysis!r})")
    first = _first_importers(call, workdir)
    # plotting first imported by the figures step (the report step draws too), MLflow never
    assert first.get("matplotlib") == logs["figures"] and "mlflow" not in first, first
    assert set(first) <= {"matplotlib", "seaborn"} and first.get("seaborn", logs["figures"]) in (
        logs["figures"], logs["report"]), first
    assert Path(out["pdf"]).stat().st_size > 1000
    # the track_runs job logs to MLflow and draws nothing
    call = (f"from nystrom_bench import jobs\nblock = {block!r}\n"
            f"jobs.track_study_runs('gnkr_tiny', {runs!r}, ['gnkr_tiny/' + j for j in jobs.plan(block)], "
            f"{mlflow_uri!r}, block)")
    first = _first_importers(call, workdir)
    assert not {"matplotlib", "seaborn"} & set(first), first
    # the claims rule gathers text: no plotting, no MLflow
    ledger = tmp_path / "ledger.csv"
    call = (f"from nystrom_bench import jobs\njobs.gather_claims({{s: '{workdir}/results/' + s + '/claims.csv' "
            f"for s in {list(TINY['studies'])!r}}}, {str(ledger)!r})")
    assert _first_importers(call, workdir) == {}
    _same_bytes(ledger, workdir / "results/claims.csv")
