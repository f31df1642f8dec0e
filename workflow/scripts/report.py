"""The PDF report of one study (thin adapter: the generic report plus the kind's report section's tables)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report, sections

    sm = snakemake  # noqa: F821
    section = sections.get(sm.params.info["kind"])
    report.study_pdf(sm.input.results, sm.input.paired, sm.input.friedman, sm.input.figures, sm.params.info,
                     sm.output[0], report_tables=section.tables, claims_csv=sm.input.get("claims"),
                     wtl_csv=sm.input.get("wtl"), cd_csv=sm.input.get("cd"))
