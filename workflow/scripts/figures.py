"""One figure of one study's metric (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report

    sm = snakemake  # noqa: F821
    report.metric_figure(sm.input[0], sm.params.info, sm.wildcards.metric, sm.output[0])
