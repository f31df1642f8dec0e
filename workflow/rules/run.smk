# Stage 3: one job per study x data set (or finer: `split_jobs: method`) runs every
# method x kernel x seed x coord of its slice of the study (one process per job keeps
# orchestration overhead low; see docs/developer/workflow.md, "Job granularity"), writes one tidy result
# file (MLflow is logged once per study by its track_runs step). A job depends only on its own
# config slice.
rule run:
    input:
        unpack(job_inputs),
    output:
        "results/{study}/runs/{job}.csv",
    params:
        job=job_config,
        config_hash=lambda wildcards: config_hash(job_config(wildcards)),
    log:
        "results/logs/run/{study}/{job}.log",
    benchmark:
        "results/benchmarks/run/{study}/{job}.tsv"
    threads: job_resource("threads")
    resources:
        mem_mb=job_resource("mem_mb"),
        runtime=job_resource("runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/run.py"
