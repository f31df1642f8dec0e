"""Run one job of a study: its result file (thin adapter; the study's track_runs step logs it to MLflow)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from threadpoolctl import threadpool_limits

    from nystrom_bench.jobs import run_study_job

    sm = snakemake  # noqa: F821
    with threadpool_limits(limits=sm.threads):
        # tracking_uri None: no MLflow start-up in every run job; the track_runs step logs the study's jobs
        run_study_job(sm.wildcards.study, sm.params.job, list(sm.input.data), list(sm.input.split), sm.output[0],
                      None, f"{sm.wildcards.study}/{sm.wildcards.job}", sm.params.config_hash, log=log)
