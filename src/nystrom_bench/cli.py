"""The ``nystrom-bench`` command line (click).

``nystrom-bench data list | show NAME | fetch NAME | cache``
    The data sets and what each needs here (:mod:`nystrom_bench.data.cli`; ``nystrom-bench-data`` is the
    same group).
``nystrom-bench ui [--store URI] [--port N]``
    The MLflow UI on the run's store with light settings -- one process, one worker, no GenAI job runners
    -- on a free port (or ``--port``), printing the link to each study's runs table.
``nystrom-bench findings [--root DIR] [--full]``
    The answers of the last run in the terminal: ``reports/FINDINGS.md``, or the studies'
    ``results/*/answers.json`` while the run has not written it.
``nystrom-bench advise``
    Your data in, a recommendation out (:mod:`nystrom_bench.advise`, where installed).
``nystrom-bench --version``
    The installed version.

Subcommands are imported on first use (:class:`~nystrom_bench._cli.LazyGroup`): ``nystrom-bench --help``
imports click and this module only.  One more subcommand is one entry of :data:`COMMANDS`.  Bad input is
one line on stderr and exit status 2.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import click

from . import __version__
from ._cli import LazyGroup, UserError
from .tracking_layout import VIEW_ID, VIEW_TAG, runs_link  # light: no numpy, no MLflow

__all__ = ["main", "COMMANDS", "study_links", "runs_link", "findings_text", "resolve_store"]

#: the subcommands imported on first use: ``name: ("module:attribute", "one-line help")``
COMMANDS = {
    "data": ("nystrom_bench.data.cli:data_group", "Data sets: list (what each needs here), show, fetch, cache."),
    "ui": ("nystrom_bench.cli:ui_command", "The MLflow UI on the run's store, light and on a free port; prints "
           "each study's runs-table link."),
    "findings": ("nystrom_bench.cli:findings_command", "The answers of the last run in the terminal."),
    "advise": ("nystrom_bench.advise:advise_command", "Your data in, a recommendation out: which sampler, "
               "approximation and landmark count."),
}

#: the local MLflow store of the workflow (``mlflow.tracking_uri`` of the default config)
DEFAULT_STORE = "sqlite:///mlflow.db"
#: seconds ``ui`` waits for the server to answer before giving up
UI_START_TIMEOUT = 180.0


@click.group("nystrom-bench", cls=LazyGroup, lazy=COMMANDS, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="nystrom-bench", message="%(prog)s %(version)s")
@click.pass_context
def main(ctx):
    """nystrom-bench: a reproducible benchmark of Nystrom kernel approximation and the library it is made of.

    The benchmark itself runs with `make reproduce` (or `snakemake --cores N`); these commands look at
    its data sets, its MLflow store and its findings.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


# -- ui --------------------------------------------------------------------------------------------------


def resolve_store(store=None):
    """The tracking URI ``ui`` serves: ``store``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``
    in the working directory; a relative SQLite path made absolute."""
    uri = store or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_STORE
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        uri = "sqlite:///" + str(Path(uri[len("sqlite:///"):]).resolve())
    return uri


def _get_json(url, timeout=5.0):
    import json
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - our own server's URL
        return json.loads(resp.read().decode("utf-8"))


def study_links(base_url, timeout=5.0):
    """``[(experiment name, runs-table link)]`` of every experiment of the MLflow server at ``base_url``
    (MLflow's REST API; the empty ``Default`` experiment left out), sorted by name."""
    out, token = [], None
    while True:
        query = "max_results=1000" + (f"&page_token={token}" if token else "")
        page = _get_json(f"{base_url.rstrip('/')}/ajax-api/2.0/mlflow/experiments/search?{query}", timeout)
        out += [(e["name"], runs_link(base_url, e["experiment_id"],
                                      VIEW_ID if any(t.get("key") == VIEW_TAG for t in e.get("tags", [])) else None))
                for e in page.get("experiments", [])
                if e.get("lifecycle_stage", "active") == "active" and e["name"] != "Default"]
        token = page.get("next_page_token")
        if not token:
            return sorted(out)


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _port_free(host, port):
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _print_links(base_url, store, t0, links=None):
    links = study_links(base_url) if links is None else links
    click.echo(f"MLflow UI on {store}: {base_url} (up in {time.perf_counter() - t0:.1f} s; Ctrl-C stops it)")
    if not links:
        click.echo("No study has been logged to this store yet: `make reproduce` logs each study as an experiment.")
        return
    click.echo("Each study's runs table:")
    width = max(len(name) for name, _ in links)
    for name, link in links:
        click.echo(f"  {name.ljust(width)}  {link}")


def _announce_when_up(base_url, store, t0, failed):
    """Wait for the server to answer a search (its store opened), then print the links."""
    while time.perf_counter() - t0 < UI_START_TIMEOUT:
        try:
            links = study_links(base_url, timeout=2.0)
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.2)
            continue
        _print_links(base_url, store, t0, links)
        return
    failed.set()
    click.echo(f"error: the MLflow server did not answer at {base_url} within {UI_START_TIMEOUT:.0f} s", err=True)


def _server_env(store, artifacts):
    """The environment of MLflow's server app for ``store`` as ``mlflow server`` sets it (names from MLflow's
    own constants), or None where this MLflow version has other names (then ``mlflow server`` runs)."""
    try:
        from mlflow.server import constants as c
    except ImportError:
        return None
    names = ("BACKEND_STORE_URI_ENV_VAR", "REGISTRY_STORE_URI_ENV_VAR", "ARTIFACT_ROOT_ENV_VAR",
             "SERVE_ARTIFACTS_ENV_VAR", "ARTIFACTS_DESTINATION_ENV_VAR")
    if not all(hasattr(c, n) for n in names):
        return None
    return {c.BACKEND_STORE_URI_ENV_VAR: store, c.REGISTRY_STORE_URI_ENV_VAR: store,
            c.ARTIFACT_ROOT_ENV_VAR: "mlflow-artifacts:/", c.SERVE_ARTIFACTS_ENV_VAR: "true",
            c.ARTIFACTS_DESTINATION_ENV_VAR: str(artifacts), "_MLFLOW_SGI_NAME": "uvicorn",
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


@click.command("ui")
@click.option("--store", default=None, metavar="URI", help="the MLflow tracking store (default: "
              "$MLFLOW_TRACKING_URI, else sqlite:///mlflow.db here); a server's http(s) URL: print its links only")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default="a free port",
              help="the port to serve on (0: a free one)")
@click.option("--host", default="127.0.0.1", show_default=True, help="the interface to serve on")
def ui_command(store, port, host):
    """The MLflow UI on the run's store, with light settings, printing each study's runs-table link.

    One process and one worker without MLflow's GenAI job runners (MLflow's default server starts about 15
    processes and 3 GiB for them); the runs tables need none of that.
    """
    t0 = time.perf_counter()
    uri = resolve_store(store)
    if uri.startswith(("http://", "https://")):  # a tracking server is its own UI
        try:
            _print_links(uri, uri, t0)
        except OSError as exc:
            raise UserError(f"no MLflow server answers at {uri} ({exc}); start it or pass another --store") from None
        return
    db = Path(uri[len("sqlite:///"):]) if uri.startswith("sqlite:///") else None
    if db is not None and not db.exists():
        raise UserError(f"no MLflow store at {db}: run `make reproduce` first (it logs every study there), or pass "
                        "--store URI")
    if port and not _port_free(host, port):
        raise UserError(f"port {port} is in use; pass another --port, or none for a free one")
    port = port or _free_port(host)
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    artifacts = (db.parent if db is not None else Path.cwd()) / "mlartifacts"
    click.echo(f"starting the MLflow UI on {uri} at {base} ...")
    failed = threading.Event()
    env = _server_env(uri, artifacts)
    if env is None:  # another MLflow: its own command with the light settings
        import subprocess

        cmd = [sys.executable, "-m", "mlflow", "server", "--workers", "1", "--host", host, "--port", str(port),
               "--backend-store-uri", uri, "--artifacts-destination", str(artifacts)]
        proc = subprocess.Popen(cmd, env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
        threading.Thread(target=_announce_when_up, args=(base, uri, t0, failed), daemon=True).start()
        try:
            proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait()
        return
    os.environ.update(env)
    import warnings

    import uvicorn

    warnings.filterwarnings("ignore", message=r"starlette\.middleware\.wsgi is deprecated")  # MLflow's import
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mlflow\.")
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"mlflow\.")

    threading.Thread(target=_announce_when_up, args=(base, uri, t0, failed), daemon=True).start()
    uvicorn.run("mlflow.server.fastapi_app:app", host=host, port=port, log_level="warning")


# -- findings --------------------------------------------------------------------------------------------

FINDINGS_MD = Path("reports") / "FINDINGS.md"
ANSWERS_GLOB = "results/*/answers.json"
_QUESTION_LINE = re.compile(r"^\*\*(?P<q>.+?\?)\*\* (?P<a>.+)$")
_CELL = re.compile(r"(?<!\\)\|")


def _wrap(text, indent="    "):
    width = max(40, min(110, shutil.get_terminal_size((100, 20)).columns))
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent)


def _cells(line):
    return [c.strip().replace("\\|", "|").replace("\\\\", "\\").strip("`") for c in _CELL.split(line)[1:-1]]


def _from_markdown(text, source):
    """The terminal text of a FINDINGS.md: where it came from, the verdict counts, each question's answer
    and the practitioner's guide (the tables and every claim stay in the file)."""
    lines = text.splitlines()
    out = [f"Findings of the last run ({source})"]
    out += [ln.strip("_") for ln in lines if ln.startswith("_") and ln.endswith("_")][:1]
    counts = next((ln for ln in lines if ln.startswith("**") and " claims " in ln), None)
    if counts:
        out += ["", _wrap(counts.replace("**", ""), indent="")]
    answers = text.split("## Answers", 1)[1] if "## Answers" in text else ""
    answers, _, guide = answers.partition("## Practitioner's guide")
    questions = [m for m in map(_QUESTION_LINE.match, answers.splitlines()) if m]
    if questions:
        out += ["", "Answers:"]
        for m in questions:
            out += [f"  {m['q']}", _wrap(m["a"])]
    rows = [_cells(ln) for ln in guide.split("<!--", 1)[0].splitlines() if ln.startswith("|")][2:]
    if rows:
        out += ["", "Practitioner's guide (task, n, budget: use -> call):"]
        for r in rows:
            if len(r) >= 6:
                out += [f"  {r[0]}, n {r[1]}, {r[2]}:", _wrap(f"{r[3]} -> {r[5]}")]
    out += ["", f"Tables, evidence and every claim: {source} (and reports/summary.pdf)."]
    return "\n".join(out)


def _from_answers(paths, note):
    """The terminal text of the studies' answer records (no ledger, so no claim counts or guide)."""
    from .findings import question_summary, read_answers
    from .studies import questions

    records = read_answers(paths)
    out = [f"Answers of the last run, from {len(paths)} studies' {ANSWERS_GLOB} ({note})", "", "Answers:"]
    for q in questions():
        if any(r["question"] == q["id"] for r in records):
            out += [f"  {q['question']}", _wrap(question_summary(q["id"], records))]
    out += ["", "The claims, their verdicts and the practitioner's guide come with reports/FINDINGS.md at the end "
            "of the run."]
    return "\n".join(out)


def findings_text(root=".", full=False):
    """What ``nystrom-bench findings`` prints for the run under ``root``: from ``reports/FINDINGS.md``,
    else (or where newer) from ``results/*/answers.json``; a :class:`~nystrom_bench._cli.UserError` when
    there is no run yet."""
    root = Path(root)
    md = root / FINDINGS_MD
    answers = sorted(root.glob(ANSWERS_GLOB))
    newest = max((p.stat().st_mtime for p in answers), default=None)
    if md.exists() and (newest is None or newest <= md.stat().st_mtime + 1.0):
        text = md.read_text(encoding="utf-8")
        return text.rstrip() if full else _from_markdown(text, FINDINGS_MD.as_posix())
    if not answers:
        raise UserError(f"no run yet: neither {FINDINGS_MD.as_posix()} nor {ANSWERS_GLOB} under {root.resolve()}; "
                        "run `make reproduce` (or `snakemake --cores N`) first")
    if full:
        raise UserError(f"--full prints {FINDINGS_MD.as_posix()}, which the run has not written yet; leave --full "
                        "out for the studies' answers")
    note = ("newer than reports/FINDINGS.md: a run after it" if md.exists()
            else "the run has not written reports/FINDINGS.md yet")
    return _from_answers(answers, note)


@click.command("findings")
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False),
              help="the checkout whose run to read (its reports/ and results/)")
@click.option("--full", is_flag=True, help="print reports/FINDINGS.md whole: every table and claim")
def findings_command(root, full):
    """The answers of the last run: each question's answer, the verdict counts and the practitioner's guide."""
    click.echo(findings_text(root, full))


if __name__ == "__main__":
    main()
