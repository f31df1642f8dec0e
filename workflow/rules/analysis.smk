# Stage 4: gather a study's result files into one tidy table (the source of truth, never MLflow),
# then log the study's MLflow runs from them: one MLflow start-up per study, jobs whose result file
# is already logged skipped, runs of jobs no longer in the study (a removed data set) deleted.
rule aggregate:
    input:
        run_files,
    output:
        "results/{study}/results.csv",
    params:
        coords=lambda wildcards: list(KINDS[wildcards.study].coords),
        job_keys=job_keys,
    log:
        "results/logs/aggregate/{study}.log",
    benchmark:
        "results/benchmarks/aggregate/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/aggregate.py"


# Stage 5: paired tests (Wilcoxon signed-rank, paired t, Holm) and Friedman tests, over all
# results and per coord value; every pair of methods (win/tie/loss, Hodges-Lehmann effects) and,
# with four data sets or more, Demsar's critical-difference analysis (Friedman + Nemenyi).
rule stats:
    input:
        "results/{study}/results.csv",
    output:
        paired="results/{study}/stats.csv",
        friedman="results/{study}/friedman.csv",
        wtl="results/{study}/wtl.csv",
        cd="results/{study}/cd.csv",
    params:
        info=analysis_params,
    log:
        "results/logs/stats/{study}.log",
    benchmark:
        "results/benchmarks/stats/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/stats.py"
