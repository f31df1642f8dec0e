# Stage 6b: the claims ledger -- every claim of the papers (src/nystrom_bench/papers/*.yaml) with its
# verdict. Each claim's verdict comes from ONE study block's results (the first of its blocks in the
# configuration), so each block's analysis job evaluates its own claims (results/{study}/claims.csv,
# its report's page one) and this rule only gathers them, adding 'not run' for the claims of blocks
# this configuration leaves out.
rule claims:
    input:
        claims=expand("results/{study}/claims.csv", study=STUDIES),
        papers=PAPER_FILES,
    output:
        ledger=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="0. Findings",
            labels={"item": "claims ledger"},
        ),
    params:
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
