"""Gather a study's result files into one table (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.jobs import aggregate

    df = aggregate(list(snakemake.input), snakemake.output[0])  # noqa: F821
    log.info("aggregated %d results", len(df))
