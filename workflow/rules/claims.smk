# Stage 6b: the claims ledger -- every claim of the papers (src/nystrom_bench/papers/*.yaml)
# with a verdict computed from the result files; each study's own claims for its report.
rule claims:
    input:
        results=expand("results/{study}/results.csv", study=STUDIES),
        papers=PAPER_FILES,
    output:
        ledger=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="0. Findings",
            labels={"item": "claims ledger"},
        ),
        per_study=expand("results/{study}/claims.csv", study=STUDIES),
    params:
        infos=lambda wildcards: canonical({s: analysis_params(SimpleNamespace(study=s)) for s in STUDIES}),
        studies=canonical(KeyList(STUDIES)),
    log:
        "results/logs/claims.log",
    benchmark:
        "results/benchmarks/claims.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/claims.py"
