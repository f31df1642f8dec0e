# Config checks (beyond the schema) and input functions shared by the rule files.
import os
from types import SimpleNamespace

from snakemake.exceptions import WorkflowError

from nystrom_bench import papers as _papers
from nystrom_bench import studies as _studies
from nystrom_bench.config import ConfigError, all_seeds, check
from nystrom_bench.jobs import analysis_info, claim_key, plan, study_claims
from nystrom_bench.jobs import job_config as _job_config
from nystrom_bench.jobs import job_resources as _job_resources
from nystrom_bench.provenance import KeyList, canonical, config_hash

try:
    STUDIES = check(config)
except ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

KINDS = {s: _studies.get(block.get("kind", s)) for s, block in STUDIES.items()}
# study -> {job id: {"id", "datasets", "methods"}}: one run job each
JOBS = {s: plan(block) for s, block in STUDIES.items()}
# the paper data files (tables and claims): editing a claim re-runs the ledger and the reports
PAPER_FILES = _papers.files()


wildcard_constraints:
    study="|".join(STUDIES),
    dataset="[A-Za-z0-9_\\-]+",
    job="[A-Za-z0-9_\\-+]+",


def _job(wildcards):
    return JOBS[wildcards.study][wildcards.job]


def job_inputs(wildcards):
    """The data and split files of a run job, one per data set of the job."""
    sets = _job(wildcards)["datasets"]
    return {
        "data": [f"resources/data/{d}.npz" for d in sets],
        "split": [f"results/splits/{d}.npz" for d in sets],
    }


# Every params value below is canonical(...): Snakemake compares params by repr, and the same
# block written with its keys in another order must schedule no job.
def job_config(wildcards):
    """The slice of the study block this job depends on (a title or resource change re-runs nothing)."""
    return _job_config(KINDS[wildcards.study], STUDIES[wildcards.study], _job(wildcards))


def job_resource(key):
    return lambda wildcards: _job_resources(STUDIES[wildcards.study], _job(wildcards))[key]


def run_files(wildcards):
    return [f"results/{wildcards.study}/runs/{j}.csv" for j in JOBS[wildcards.study]]


def job_keys(wildcards):
    return canonical(KeyList(f"{wildcards.study}/{j}" for j in JOBS[wildcards.study]))


def analysis_params(wildcards):
    """What the stats and figures stages need of a study: nothing a title change touches."""
    info = analysis_info(KINDS[wildcards.study], STUDIES[wildcards.study])
    return canonical({**info, "methods": KeyList(info["methods"])})


def study_report_params(wildcards):
    kind = KINDS[wildcards.study]
    block = STUDIES[wildcards.study]
    # the block as the report prints it: resources (threads, mem_mb, runtime) change no number
    shown = {k: v for k, v in block.items() if k not in ("threads", "mem_mb", "runtime")}
    return canonical({
        **analysis_params(wildcards),
        "study": wildcards.study,
        "title": block.get("title", kind.title),
        "description": kind.description,
        "config": shown,
        "config_hash": config_hash(shown),
    })


def all_targets():
    """Every report plus every result file, so deleting any result file re-runs it and its dependents."""
    runs = [f"results/{s}/runs/{j}.csv" for s in STUDIES for j in JOBS[s]]
    tables = expand("results/{study}/{table}.csv", study=STUDIES, table=["results", "stats"])
    return (runs + tables + expand("reports/{study}.pdf", study=STUDIES)
            + ["results/claims.csv", "reports/summary.pdf", "results/reports_logged.json", "results/report_figures"])


# study -> the keys ("<paper file>/<claim id>") of the claims its results decide (the first of a claim's
# blocks in this configuration: nystrom_bench.jobs.study_claims); the paper files are an input of every
# analysis job (tables and claims), so editing one re-runs each study's analysis
STUDY_CLAIMS = {s: [claim_key(c) for c in study_claims(_papers.all_claims(), s, STUDIES)] for s in STUDIES}


def study_claim_keys(wildcards):
    return canonical(KeyList(STUDY_CLAIMS[wildcards.study]))


# The obtain and split jobs (data.smk) run their scripts as commands (`shell:`): a `script:` job's process imports
# Snakemake and unpickles its preamble, about 0.1 CPU-s and 0.3 s of wall time of each of these small jobs
# (issue 39).  The script is an input (found from this file, not the working directory); the
# interpreter is the environment's `python` where Snakemake deploys one (--use-conda, containers,
# modules), as `script:` would use, else this Snakemake's own.
import os as _os
import sys as _sys


class _Interpreter(str):
    """The data jobs' interpreter; its repr (what Snakemake compares to decide whether params changed)
    names no path, so moving the environment re-runs nothing."""

    def __repr__(self):
        return "'python'"


DATA_PYTHON = _Interpreter("python" if workflow.deployment_settings.deployment_method else _sys.executable)
_SCRIPTS = _os.path.join(workflow.current_basedir.get_path_or_uri(secret_free=True), "..", "scripts")


def _data_script(name):
    """The script's path, relative to the working directory where it lies below it: an input path, so a
    moved or copied project must give the same one (else Snakemake re-runs every obtain job)."""
    path = _os.path.normpath(_os.path.join(_SCRIPTS, f"{name}.py"))
    rel = _os.path.relpath(path)
    return path if rel.startswith("..") else rel


DATA_SCRIPT = {name: _data_script(name) for name in ("obtain", "split")}
