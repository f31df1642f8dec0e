# nystrom-bench workflow: obtain data -> split -> run -> analysis per study (aggregate, stats, figures, claims,
# report; MLflow logging beside it: track_runs) -> claims ledger -> summary -> track_reports.
# Thin on purpose: validation and helpers live in workflow/rules/common.smk, one rule file per stage.
import os

from snakemake.utils import min_version, validate

min_version("9.0")

# The jobs that log to MLflow would otherwise start its usage telemetry (a thread that fetches a config from
# the internet and sends usage records): a reproduction runs offline and sends nothing. The jobs inherit
# this process's environment (sbatch passes it on a cluster); MLFLOW_DISABLE_TELEMETRY=false turns it back on.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# Python's string hashing is salted per process, so the order of a set of strings differs from run to run.  No
# output is known to depend on it (the critical-difference bars, drawn by scikit-posthocs in a set's order, are put
# in rank order by report.cd_figure: krr's cd_test_mse.png differed by 1,292 pixels between two hash seeds before);
# one seed for every job keeps any such order the same in a re-run, so its files are the same bytes.
os.environ.setdefault("PYTHONHASHSEED", "0")


# The default config is read only when no --configfile/--config is given: Snakemake would
# otherwise deep-merge a user's config into it, running the default studies as well.
if not config:

    configfile: "config/config.yaml"



try:
    validate(config, "config/schema.yaml")
except Exception as exc:  # jsonschema's text appends the whole schema fragment: one line instead
    from snakemake.exceptions import WorkflowError

    from nystrom_bench.config import schema_error

    raise WorkflowError(schema_error(exc)) from None

# A cluster run logs from jobs on other hosts: the MLflow store should be a tracking server
# (docs/guide/cluster.md), not a SQLite file.
if workflow.is_main_process and workflow.non_local_exec and not workflow.dryrun:
    from nystrom_bench.tracking import resolve_tracking_uri

    if resolve_tracking_uri(config.get("mlflow", {}).get("tracking_uri")).startswith("sqlite:"):
        logger.warning("MLflow store: a SQLite file, but jobs run on a cluster; export "
                       "MLFLOW_TRACKING_URI=http://<tracking server>:5000 (docs/guide/cluster.md)")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True
