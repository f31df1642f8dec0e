# Stages 4-7, one job (one Python start-up) per study: gather the study's result files into one tidy
# table (the source of truth, never MLflow); paired tests (Wilcoxon signed-rank, paired t, Holm) and
# Friedman tests, over all results and per coord value, every pair of methods (win/tie/loss,
# Hodges-Lehmann effects) and, with four data sets or more, Demsar's critical-difference analysis; the
# figures; the study's own claims with their verdicts (every claim's verdict comes from one block's
# results: nystrom_bench.jobs.study_claims); its answer records (results/{study}/answers.json: each
# question it answers, ranked once by nystrom_bench.findings.study_answers) and its PDF report
# (question, claims, answer, tables, tests, figures, provenance). Each step logs to its own file.
rule analysis:
    input:
        runs=run_files,
        papers=PAPER_FILES,
    output:
        results="results/{study}/results.csv",
        paired="results/{study}/stats.csv",
        friedman="results/{study}/friedman.csv",
        wtl="results/{study}/wtl.csv",
        cd="results/{study}/cd.csv",
        figures=directory("results/{study}/figures"),  # every figure; the HTML report's: rule report_figures
        claims="results/{study}/claims.csv",
        pdf="reports/{study}.pdf",
        answers="results/{study}/answers.json",
    params:
        coords=lambda wildcards: list(KINDS[wildcards.study].coords),
        analysis=analysis_params,
        info=study_report_params,
        claims=study_claim_keys,
    log:
        aggregate="results/logs/aggregate/{study}.log",
        stats="results/logs/stats/{study}.log",
        figures="results/logs/figures/{study}.log",
        claims="results/logs/claims/{study}.log",
        report="results/logs/report/{study}.log",
    benchmark:
        "results/benchmarks/analysis/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/analysis.py"


# Stage 4b, beside the analysis: log the study's MLflow runs from its result files (one MLflow
# start-up per study; jobs whose result file is already logged skipped, runs of jobs no longer in
# the study -- a removed data set -- deleted). Nothing the analysis writes reads MLflow.
rule track_runs:
    input:
        run_files,
    output:
        "results/{study}/runs_logged.json",
    params:
        job_keys=job_keys,
    log:
        "results/logs/track_runs/{study}.log",
    benchmark:
        "results/benchmarks/track_runs/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/track_runs.py"
