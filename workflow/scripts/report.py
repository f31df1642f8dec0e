"""The PDF report of one study and its answer records (thin adapter: the generic report, the kind's report
section's tables, and the findings' answers of this study -- computed once here, rendered by every reader)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    import tempfile
    from pathlib import Path

    from nystrom_bench import findings, report, sections
    from nystrom_bench.results import read_results

    sm = snakemake  # noqa: F821
    info = sm.params.info
    section = sections.get(info["kind"])
    records = findings.study_answers(section.tested_rows(read_results(sm.input.results)), info,
                                     coord_roles=section.coord_roles)
    findings.write_answers(records, sm.output.answers)
    log.info("answers: %d records", len(records))
    with tempfile.TemporaryDirectory() as tmp:
        key = findings.answer_figure(records, Path(tmp) / "answer_cd.png")
        report.study_pdf(sm.input.results, sm.input.paired, sm.input.friedman, sm.input.figures, info,
                         sm.output.pdf, report_tables=section.tables, claims_csv=sm.input.get("claims"),
                         wtl_csv=sm.input.get("wtl"), cd_csv=sm.input.get("cd"),
                         answers=findings.answer_lines(records), key_figure=key)
