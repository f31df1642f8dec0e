"""The summary PDF, reports/FINDINGS.md and results/answers.csv: the studies' answer records rendered,
answers first, then the appendix (thin adapter)."""
from nystrom_bench.jobs import job_log, scipy_docstrings_left_as_they_are

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    with scipy_docstrings_left_as_they_are():  # findings imports scipy.stats: ~0.5 CPU-s less (issue 39)
        from nystrom_bench import findings

    sm = snakemake  # noqa: F821
    infos = dict(sm.params.infos)
    found = findings.summary_pdf(sm.input.claims, list(sm.input.answers), dict(zip(infos, sm.input.results, strict=True)),
                                 infos, sm.params.title, sm.output.pdf, findings_md=sm.output.markdown,
                                 config_name=sm.params.config_name, answers_csv=sm.output.answers)
    log.info("findings: %s", found["counts"])
