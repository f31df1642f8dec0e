"""Paired tests and Friedman tests of one study, overall and per coord value, plus the win/tie/loss and
critical-difference tables (thin adapter: the study's ``tested_rows`` hook is passed in here, the top
layer, so that ``nystrom_bench.stats`` never imports a study)."""
from nystrom_bench.jobs import job_log

with job_log(snakemake.log[0]) as log:  # noqa: F821 - injected by Snakemake
    from nystrom_bench import studies
    from nystrom_bench.stats import run_study_stats

    sm = snakemake  # noqa: F821
    kind = studies.get(sm.params.info["kind"])
    out = run_study_stats(sm.input[0], sm.params.info, sm.output.paired, sm.output.friedman,
                          tested_rows=kind.tested_rows, out_wtl=sm.output.get("wtl"),
                          out_cd=sm.output.get("cd"))
    log.info("paired tests:\n%s", out.to_string())
