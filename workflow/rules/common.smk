# Config checks (beyond the schema) and input functions shared by the rule files.
import os

from snakemake.exceptions import WorkflowError

from nystrom_bench import studies as _studies
from nystrom_bench.config import ConfigError, all_seeds, check, datasets_of
from nystrom_bench.provenance import config_hash
from nystrom_bench.tracking import resolve_tracking_uri

try:
    STUDIES = check(config)
except ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None

TRACKING_URI = resolve_tracking_uri(config.get("mlflow", {}).get("tracking_uri"), workflow.basedir)


wildcard_constraints:
    study="|".join(STUDIES),
    dataset="[A-Za-z0-9_\\-]+",


def study_kind(study):
    return _studies.get(STUDIES[study].get("kind", study))


def study_resource(key, default):
    return lambda wildcards: STUDIES[wildcards.study].get(key, default)


def run_files(wildcards):
    return expand("results/{study}/runs/{dataset}.csv", study=wildcards.study, dataset=STUDIES[wildcards.study]["datasets"])


def study_report_params(wildcards):
    kind = study_kind(wildcards.study)
    block = STUDIES[wildcards.study]
    return {
        "study": wildcards.study,
        "kind": kind.name,
        "title": block.get("title", kind.title),
        "description": kind.description,
        "metrics": {m: list(v) for m, v in kind.metrics.items()},
        "primary_metric": kind.primary_metric,
        "reference": block.get("reference", kind.reference_method),
        "config": block,
        "config_hash": config_hash(block),
    }


def all_targets():
    """Every report plus every result file, so deleting any result file re-runs it and its dependents."""
    runs = [f"results/{s}/runs/{d}.csv" for s, block in STUDIES.items() for d in block["datasets"]]
    tables = expand("results/{study}/{table}.csv", study=STUDIES, table=["results", "stats"])
    return runs + tables + expand("reports/{study}.pdf", study=STUDIES) + ["reports/summary.pdf"]
