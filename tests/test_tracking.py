import multiprocessing as mp

import pytest

from nystrom_bench import tracking


def _rows(dataset, n_seeds=3):
    return [{"dataset": dataset, "method": m, "kernel": "gaussian", "seed": s,
             "params": {"alpha": 0.1}, "metrics": {"test_mse": 0.5 + s}}
            for m in ("exact", "nystrom") for s in range(n_seeds)]


def _log(args):
    uri, dataset = args
    tracking.log_job("race", f"race/{dataset}", _rows(dataset), tracking_uri=uri)
    return dataset


def test_uri_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking.resolve_tracking_uri(None, tmp_path) == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    assert tracking.resolve_tracking_uri("sqlite:///x/y.db", tmp_path) == f"sqlite:///{tmp_path.resolve()}/x/y.db"
    assert tracking.resolve_tracking_uri("http://server:5000", tmp_path) == "http://server:5000"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://cluster:5000")
    assert tracking.resolve_tracking_uri("sqlite:///mlflow.db", tmp_path) == "http://cluster:5000"


def test_one_run_per_result_and_idempotent(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    result_file = tmp_path / "r.csv"
    result_file.write_text("a,b\n1,2\n")
    ids1 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri,
                            tags={"git_commit": "abc", "config_hash": "123"})
    ids2 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri)
    assert not set(ids1) & set(ids2)
    runs = tracking.active_runs("s", uri)
    assert len(runs) == 6
    assert runs["tags.run_key"].is_unique
    assert set(runs["params.method"]) == {"exact", "nystrom"}
    assert "metrics.test_mse" in runs and "params.alpha" in runs
    art = runs["artifact_uri"].iloc[0].removeprefix("file://")
    assert (tmp_path / "mlartifacts" / "s").as_posix() in art


def test_parallel_jobs_lose_nothing(tmp_path):
    """Six processes create the same experiment and log at once on a fresh SQLite store."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    ctx = mp.get_context("spawn")
    with ctx.Pool(6) as pool:
        done = pool.map(_log, [(uri, f"d{i}") for i in range(6)])
    assert sorted(done) == [f"d{i}" for i in range(6)]
    runs = tracking.active_runs("race", uri)
    assert len(runs) == 36
    assert runs["tags.run_key"].is_unique


def test_nan_metrics_are_skipped(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    rows = _rows("d", 1)
    rows[0]["metrics"]["bad"] = float("nan")
    tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    runs = tracking.active_runs("s", uri)
    assert len(runs) == 2


@pytest.mark.parametrize("key", [("a", "b", "c", "d", 1)])
def test_run_key(key):
    assert tracking.run_key(*key) == "a/b/c/d/seed1"
