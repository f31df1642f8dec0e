# Stage 6: the figures of each study (one job per study: plotting imports are slow).
rule figures:
    input:
        "results/{study}/results.csv",
    output:
        report(
            directory("results/{study}/figures"),
            patterns=["{name}.png"],
            caption="../report/figure.rst",
            category="{study}",
            labels={"study": "{study}", "figure": "{name}"},
        ),
    params:
        info=analysis_params,
    log:
        "results/logs/figures/{study}.log",
    benchmark:
        "results/benchmarks/figures/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/figures.py"


# Stage 7: the study's PDF report (tables, tests, figures, provenance).
rule report:
    input:
        results="results/{study}/results.csv",
        paired="results/{study}/stats.csv",
        friedman="results/{study}/friedman.csv",
        figures="results/{study}/figures",
    output:
        "reports/{study}.pdf",
    params:
        info=study_report_params,
    log:
        "results/logs/report/{study}.log",
    benchmark:
        "results/benchmarks/report/{study}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/report.py"


# Stage 8: one summary PDF over all studies.
rule summary:
    input:
        reports=expand("reports/{study}.pdf", study=STUDIES),
        paired=expand("results/{study}/stats.csv", study=STUDIES),
        results=expand("results/{study}/results.csv", study=STUDIES),
    output:
        "reports/summary.pdf",
    params:
        infos=lambda wildcards: [study_report_params(SimpleNamespace(study=s)) for s in STUDIES],
        title=config.get("report", {}).get("title", "nystrom-bench"),
    log:
        "results/logs/report/summary.log",
    benchmark:
        "results/benchmarks/report/summary.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/summary.py"
