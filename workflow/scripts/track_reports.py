"""Each study's report as one MLflow run beside its configuration runs (PDF, figures, claims), and the
findings as the run of the experiment "findings" (thin adapter)."""
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
    # the benchmark's answer: verdicts per paper, headline claims (no tag per claim: MLflow shows tags above
    # the description, and 87 of them would push the answer off the page; the ledger is an artifact)
    logged[tracking.FINDINGS_EXPERIMENT] = tracking.log_report(
        tracking.FINDINGS_EXPERIMENT, {"": [sm.input.summary, sm.input.findings, sm.input.ledger]}, uri,
        note=findings.findings_note(sm.input.findings),
        description="The benchmark's findings: every claim of the five papers (and of this project) with the "
                    "verdict this run's results give it, the answers and the practitioner's guide. Open the run "
                    "'findings · report'; each study's own experiment holds its runs and its report.")
    log.info("findings: %s (%s)", logged[tracking.FINDINGS_EXPERIMENT], tracking.ui_link(tracking.FINDINGS_EXPERIMENT, uri))
    with open_atomic(sm.output[0], "w") as fh:
        json.dump(logged, fh, indent=1, sort_keys=True)
