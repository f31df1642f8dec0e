"""The summary PDF over all studies (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report

    sm = snakemake  # noqa: F821
    report.summary_pdf(list(sm.input.results), list(sm.input.paired), sm.params.infos,
                       sm.params.title, sm.output[0])
