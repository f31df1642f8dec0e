"""Paired tests and Friedman tests of one study, overall and per coord value, plus the win/tie/loss and
critical-difference tables (thin adapter: the kind's report section picks the rows tested)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import sections
    from nystrom_bench.stats import run_study_stats

    sm = snakemake  # noqa: F821
    section = sections.get(sm.params.info["kind"])
    out = run_study_stats(sm.input[0], sm.params.info, sm.output.paired, sm.output.friedman,
                          tested_rows=section.tested_rows, out_wtl=sm.output.get("wtl"),
                          out_cd=sm.output.get("cd"))
    log.info("paired tests:\n%s", out.to_string())
