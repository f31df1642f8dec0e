"""The claims ledger over every paper's claims, gathered from each study's own claims (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.claims import verdict_counts
    from nystrom_bench.jobs import gather_claims

    sm = snakemake  # noqa: F821
    out = gather_claims(dict(zip(sm.params.studies, sm.input.claims, strict=True)), sm.output.ledger)
    log.info("%d claims: %s", len(out), verdict_counts(out))
