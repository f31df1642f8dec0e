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
