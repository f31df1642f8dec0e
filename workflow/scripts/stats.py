"""Paired tests and Friedman tests of one study, overall and per coord value (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.stats import run_study_stats

    sm = snakemake  # noqa: F821
    out = run_study_stats(sm.input[0], sm.params.info, sm.output.paired, sm.output.friedman)
    log.info("paired tests:\n%s", out.to_string())
