"""Log a study's result files to MLflow, drop the runs of removed jobs (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    import json

    from nystrom_bench.atomic import open_atomic
    from nystrom_bench.jobs import track_study_runs
    from nystrom_bench.tracking import resolve_tracking_uri

    sm = snakemake  # noqa: F821
    # the store is no job parameter: moving the project or the store re-runs nothing
    tracking_uri = resolve_tracking_uri(sm.config.get("mlflow", {}).get("tracking_uri"))
    # MLflow starts once per study here, not in every run job (about a second each)
    logged = track_study_runs(sm.wildcards.study, list(sm.input), sm.params.job_keys, tracking_uri,
                              sm.config["studies"][sm.wildcards.study], log=log)
    with open_atomic(sm.output[0], "w") as fh:
        json.dump(logged, fh, indent=1, sort_keys=True)
