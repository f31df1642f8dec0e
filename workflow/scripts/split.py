"""Deterministic train/test splits of one data set for every seed (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.jobs import save_splits

    save_splits(snakemake.wildcards.dataset, snakemake.params.seeds,  # noqa: F821
                snakemake.input[0], snakemake.output[0])  # noqa: F821
    log.info("splits for seeds %s", snakemake.params.seeds)  # noqa: F821
