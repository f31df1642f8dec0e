# Stages 6 and 7 (the figures and each study's report) are steps of the rule 'analysis' (analysis.smk).


# Stage 8: the summary -- pages 1-2 the answers (the studies' answer records) and the practitioner's guide,
# then an appendix (verdicts, the answers in full, the studies, the ledger); the same findings as Markdown
# (reports/FINDINGS.md) and every answer record as one table (results/answers.csv).
rule summary:
    input:
        reports=expand("reports/{study}.pdf", study=STUDIES),
        answers=expand("results/{study}/answers.json", study=STUDIES),
        claims="results/claims.csv",
        results=expand("results/{study}/results.csv", study=STUDIES),
    output:
        pdf=report(
            "reports/summary.pdf",
            caption="../report/summary.rst",
            category="0. Findings",
            labels={"item": "summary: findings, guide, studies"},
        ),
        markdown="reports/FINDINGS.md",
        answers=report(
            "results/answers.csv",
            caption="../report/answers.rst",
            category="0. Findings",
            labels={"item": "answers: every ranking"},
        ),
    params:
        infos=lambda wildcards: canonical({s: study_report_params(SimpleNamespace(study=s)) for s in STUDIES}),
        title=config.get("report", {}).get("title", "nystrom-bench"),
        config_name=", ".join(os.path.relpath(f) for f in workflow.configfiles) or "config/config.yaml",
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


# Stage 9: each study's report in MLflow beside its runs -- one run per study (tag level = report)
# holding the PDF, the figures and the study's claims, its description the claims' verdicts -- and the
# findings (summary PDF, FINDINGS.md, the ledger) as the run of the experiment "findings"; one MLflow
# start-up for all, a report whose files are logged already skipped.
rule track_reports:
    input:
        pdfs=expand("reports/{study}.pdf", study=STUDIES),
        figures=expand("results/{study}/figures", study=STUDIES),
        claims=expand("results/{study}/claims.csv", study=STUDIES),
        answers=expand("results/{study}/answers.json", study=STUDIES),
        runs=expand("results/{study}/runs_logged.json", study=STUDIES),
        summary="reports/summary.pdf",
        findings="reports/FINDINGS.md",
        ledger="results/claims.csv",
    output:
        "results/reports_logged.json",
    params:
        infos=lambda wildcards: canonical({s: study_report_params(SimpleNamespace(study=s)) for s in STUDIES}),
        studies=canonical(KeyList(STUDIES)),
    log:
        "results/logs/report/track_reports.log",
    benchmark:
        "results/benchmarks/report/track_reports.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/track_reports.py"


# The HTML report's figures (`snakemake --report`, `make report`): each study's headline figures -- its
# headline answers' metrics: their critical-difference diagram and first other figure -- as 64-colour PNGs,
# each with a caption that opens with the study's answers (nystrom_bench.html_report). The study PDFs keep
# every figure; the report, every figure embedded beside about 3 MB of Snakemake's JavaScript, stays
# under 5 MB (a default run: 9.0 MB with all 81 figures).
rule report_figures:
    input:
        figures=expand("results/{study}/figures", study=STUDIES),
        answers=expand("results/{study}/answers.json", study=STUDIES),
    output:
        report(
            directory("results/report_figures"),
            patterns=["{study}/{name}.png"],
            caption="../report/figure.rst",
            category="{study}",
            labels={"study": "{study}", "figure": "{name}"},
        ),
    params:
        studies=canonical(KeyList(STUDIES)),
    log:
        "results/logs/report/report_figures.log",
    localrule: True
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/report_figures.py"
