"""The claims ledger over every paper's claims, and each study's own claims (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.claims import verdict_counts, write_ledger

    sm = snakemake  # noqa: F821
    studies = list(sm.params.studies)
    out = write_ledger(dict(zip(studies, sm.input.results, strict=True)), sm.params.infos, sm.output.ledger,
                       per_study=dict(zip(studies, sm.output.per_study, strict=True)))
    log.info("%d claims: %s", len(out), verdict_counts(out))
