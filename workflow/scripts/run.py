"""Run one job of a study: result file + MLflow runs (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from threadpoolctl import threadpool_limits

    from nystrom_bench.jobs import run_study_job
    from nystrom_bench.tracking import resolve_tracking_uri

    sm = snakemake  # noqa: F821
    # the store is no job parameter: moving the project or the store re-runs nothing
    tracking_uri = resolve_tracking_uri(sm.config.get("mlflow", {}).get("tracking_uri"))
    with threadpool_limits(limits=sm.threads):
        run_study_job(sm.wildcards.study, sm.params.job, list(sm.input.data), list(sm.input.split), sm.output[0],
                      tracking_uri, f"{sm.wildcards.study}/{sm.wildcards.job}", sm.params.config_hash,
                      log=log)
