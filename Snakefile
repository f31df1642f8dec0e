# nystrom-bench workflow: obtain data -> split -> run -> aggregate -> stats -> figures -> reports.
# Thin on purpose: validation and helpers live in workflow/rules/common.smk, one rule file per stage.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "config/schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_reports(),
    default_target: True
