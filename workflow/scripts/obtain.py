"""Obtain one data set from its source and store it as .npz (thin adapter)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import data

    sm = snakemake  # noqa: F821
    X, y, meta = data.obtain(sm.params.dataset, cache_dir=sm.params.cache, lock=sm.params.lock, return_meta=True)
    n_train = -1 if meta["n_train"] is None else meta["n_train"]
    data.save_npz_atomic(sm.output[0], X=X, y=y, n_train=n_train)
    log.info("obtained %s: X %s, y %s, source training part %s", sm.params.dataset, X.shape, y.shape, n_train)
