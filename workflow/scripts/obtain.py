"""Obtain one data set from its source and store it as .npz (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import data

    X, y = data.obtain(snakemake.wildcards.dataset)  # noqa: F821
    data.save_npz_atomic(snakemake.output[0], X=X, y=y)  # noqa: F821
    log.info("obtained %s: X %s, y %s", snakemake.wildcards.dataset, X.shape, y.shape)  # noqa: F821
