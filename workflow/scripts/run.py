"""Run one study on one data set: result file + MLflow runs (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from threadpoolctl import threadpool_limits

    from nystrom_bench.jobs import run_study_job

    sm = snakemake  # noqa: F821
    with threadpool_limits(limits=sm.threads):
        run_study_job(sm.params.study, sm.params.kind, sm.params.cfg, sm.wildcards.dataset,
                      sm.input.data, sm.input.split, sm.output[0], sm.params.tracking_uri,
                      sm.params.config_hash, log=log)
