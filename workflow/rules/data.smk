# Stage 1: obtain each data set from its source (embedded, synthetic or download) as .npz;
# downloads are cached under resources/data/raw and their checksums kept in the lock file.
rule obtain:
    output:
        "resources/data/{dataset}.npz",
    params:
        dataset=lambda wildcards: wildcards.dataset,
        cache=lambda wildcards, output: os.path.dirname(output[0]),
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
    script:
        "../scripts/obtain.py"


# Stage 2: deterministic train/test splits for every seed that any study uses.
rule split:
    input:
        "resources/data/{dataset}.npz",
    output:
        "results/splits/{dataset}.npz",
    params:
        seeds=lambda wildcards: all_seeds(config, wildcards.dataset),
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
    script:
        "../scripts/split.py"
