"""The HTML report's figures: each study's headline figures with their captions (thin adapter of
nystrom_bench.html_report.write_report_figures)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.html_report import write_report_figures

    sm = snakemake  # noqa: F821
    studies = {s: (f, a) for s, f, a in zip(sm.params.studies, sm.input.figures, sm.input.answers, strict=True)}
    written = write_report_figures(studies, sm.output[0])
    log.info("report figures: %s", written)
