"""The figures of one study (thin adapter: the generic figures and the kind's report section's)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import report, sections

    sm = snakemake  # noqa: F821
    section = sections.get(sm.params.info["kind"])
    paths = report.study_figures(sm.input[0], sm.params.info, sm.output[0],
                                 figure_coords=sm.params.info.get("figure_coords"), paper_curve=section.paper_curve,
                                 extra_figures=section.figures, cd_csv=sm.input.get("cd"))
    log.info("figures: %s", paths)
