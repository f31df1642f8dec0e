"""Obtain one data set from its source and store it as .npz (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench.jobs import obtain_dataset

    sm = snakemake  # noqa: F821
    obtain_dataset(sm.params.dataset, sm.output[0], lock=sm.params.lock, log=log)
