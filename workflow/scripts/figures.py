"""The figures of one study (thin adapter: the study's figure hooks are passed in here, the top layer,
so that ``nystrom_bench.report`` never imports a study)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report, studies

    sm = snakemake  # noqa: F821
    kind = studies.get(sm.params.info["kind"])
    paths = report.study_figures(sm.input[0], sm.params.info, sm.output[0], figure_coords=kind.figure_coords,
                                 paper_curve=kind.paper_curve, extra_figures=kind.figures, cd_csv=sm.input.get("cd"))
    log.info("figures: %s", paths)
