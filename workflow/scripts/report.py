"""The PDF report of one study (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report

    sm = snakemake  # noqa: F821
    report.study_pdf(sm.input.results, sm.input.paired, sm.input.friedman, sm.input.figures,
                     sm.params.info, sm.output[0])
