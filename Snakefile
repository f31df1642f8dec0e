# nystrom-bench workflow: obtain data -> split -> run -> aggregate -> stats -> figures -> reports.
# Thin on purpose: validation and helpers live in workflow/rules/common.smk, one rule file per stage.
from snakemake.utils import min_version, validate

min_version("9.0")


# The default config is read only when no --configfile/--config is given: Snakemake would
# otherwise deep-merge a user's config into it, running the default studies as well.
if not config:

    configfile: "config/config.yaml"



validate(config, "config/schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True
