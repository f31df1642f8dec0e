"""A study's analysis in one process: its table, tests, figures, own claims, answer records and PDF, each step
into its own log (thin adapter)."""
from nystrom_bench.jobs import analyze_study

sm = snakemake  # noqa: F821 - injected by Snakemake
analyze_study(sm.wildcards.study, list(sm.input.runs), dict(sm.output.items()), sm.params.info, sm.params.coords,
              dict(sm.log.items()), claim_keys=sm.params.claims, analysis=sm.params.analysis)
