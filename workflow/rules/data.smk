# Stage 1: obtain each data set from its source (embedded, synthetic or download) as .npz.
# Downloads go to the one data cache that data.load and `python -m nystrom_bench.data fetch` use
# too ($NYSTROM_BENCH_DATA, else $XDG_CACHE_HOME/nystrom_bench: nystrom_bench.data.default_cache_dir,
# resolved in the job, so the path is no param and moving the cache re-runs nothing); their
# checksums are kept in the lock file.  resources/data/{dataset}.npz is this rule's output only.
rule obtain:
    input:
        script=DATA_SCRIPT["obtain"],
    output:
        "resources/data/{dataset}.npz",
    params:
        dataset=lambda wildcards: wildcards.dataset,
        python=DATA_PYTHON,
        lock=config.get("data", {}).get("lock", "config/datasets.lock"),
    log:
        "results/logs/obtain/{dataset}.log",
    benchmark:
        "results/benchmarks/obtain/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../environment.yml"
    shell:
        "{params.python:q} {input.script:q} {wildcards.dataset:q} {output:q} {log:q} --lock {params.lock:q}"


# Stage 2: deterministic train/test splits for every seed that any study uses.
rule split:
    input:
        data="resources/data/{dataset}.npz",
        script=DATA_SCRIPT["split"],
    output:
        "results/splits/{dataset}.npz",
    params:
        seeds=lambda wildcards: all_seeds(config, wildcards.dataset),
        python=DATA_PYTHON,
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/benchmarks/split/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    shell:
        "{params.python:q} {input.script:q} {wildcards.dataset:q} {input.data:q} {output:q} {log:q} --seeds {params.seeds}"
