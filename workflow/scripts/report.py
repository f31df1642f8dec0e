"""The PDF report of one study (thin adapter: the study's ``report_tables`` hook is passed in here, the
top layer, so that ``nystrom_bench.report`` never imports a study)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report, studies

    sm = snakemake  # noqa: F821
    kind = studies.get(sm.params.info["kind"])
    report.study_pdf(sm.input.results, sm.input.paired, sm.input.friedman, sm.input.figures, sm.params.info,
                     sm.output[0], report_tables=kind.report_tables, claims_csv=sm.input.get("claims"),
                     wtl_csv=sm.input.get("wtl"), cd_csv=sm.input.get("cd"))
