# Stage 3: one job per study x data set runs every method x kernel x seed of the study
# (one process per job keeps orchestration overhead low; see README "Job granularity"),
# writes one tidy result file and logs one MLflow run per result.
rule run:
    input:
        data="resources/data/{dataset}.npz",
        split="results/splits/{dataset}.npz",
    output:
        "results/{study}/runs/{dataset}.csv",
    params:
        study=lambda wildcards: wildcards.study,
        kind=lambda wildcards: study_kind(wildcards.study).name,
        cfg=lambda wildcards: STUDIES[wildcards.study],
        config_hash=lambda wildcards: config_hash(STUDIES[wildcards.study]),
        tracking_uri=TRACKING_URI,
    log:
        "results/logs/run/{study}/{dataset}.log",
    benchmark:
        "results/benchmarks/run/{study}/{dataset}.tsv"
    threads: study_resource("threads", 1)
    resources:
        mem_mb=study_resource("mem_mb", 2000),
        runtime=study_resource("runtime", 60),
    conda:
        "../../environment.yml"
    script:
        "../scripts/run.py"
