"""Each study's report as one MLflow run beside its configuration runs: PDF, figures, claims (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    import json
    from pathlib import Path

    import pandas as pd

    from nystrom_bench import findings, tracking
    from nystrom_bench.atomic import open_atomic

    sm = snakemake  # noqa: F821
    uri = tracking.resolve_tracking_uri(sm.config.get("mlflow", {}).get("tracking_uri"))
    logged = {}
    for study, pdf, figures, claims_csv in zip(sm.params.studies, sm.input.pdfs, sm.input.figures, sm.input.claims,
                                               strict=True):
        claims = pd.read_csv(claims_csv)
        note = findings.study_note(sm.params.infos[study], claims, Path(pdf).name)
        tags = {f"claim.{cid}": verdict for cid, verdict in zip(claims["claim_id"], claims["verdict"], strict=True)}
        artifacts = {"": [pdf, claims_csv], "figures": sorted(Path(figures).glob("*.png"))}
        logged[study] = tracking.log_report(study, artifacts, uri, note=note, tags=tags)
        log.info("%s: report run %s", study, logged[study])
    with open_atomic(sm.output[0], "w") as fh:
        json.dump(logged, fh, indent=1, sort_keys=True)
