"""Gather a study's result files into one table; log its jobs to MLflow, drop the runs of removed jobs
(thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.jobs import aggregate_study
    from nystrom_bench.tracking import resolve_tracking_uri

    sm = snakemake  # noqa: F821
    # the store is no job parameter: moving the project or the store re-runs nothing
    tracking_uri = resolve_tracking_uri(sm.config.get("mlflow", {}).get("tracking_uri"))
    # MLflow starts once per study here, not in every run job (about a second each)
    aggregate_study(sm.wildcards.study, list(sm.input), sm.output[0], sm.params.coords, sm.params.job_keys,
                    tracking_uri, log=log, block=sm.config["studies"][sm.wildcards.study])
