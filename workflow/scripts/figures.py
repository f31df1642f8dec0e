"""The figures of one study (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report

    sm = snakemake  # noqa: F821
    paths = report.study_figures(sm.input[0], sm.params.info, sm.output[0])
    log.info("figures: %s", paths)
