import multiprocessing as mp

import numpy as np
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


def _artifacts(client, run_id):
    return [f.path for f in client.list_artifacts(run_id)]


@pytest.fixture
def uri(tmp_path):
    return f"sqlite:///{tmp_path}/mlflow.db"


@pytest.fixture
def client(uri):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def test_uri_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking.resolve_tracking_uri(None, tmp_path) == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    assert tracking.resolve_tracking_uri("sqlite:///x/y.db", tmp_path) == f"sqlite:///{tmp_path.resolve()}/x/y.db"
    assert tracking.resolve_tracking_uri("http://server:5000", tmp_path) == "http://server:5000"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://cluster:5000")
    assert tracking.resolve_tracking_uri("sqlite:///mlflow.db", tmp_path) == "http://cluster:5000"


def test_one_run_per_result_and_idempotent(tmp_path, uri):
    result_file = tmp_path / "r.csv"
    result_file.write_text("a,b\n1,2\n")
    ids1 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri,
                            tags={"git_commit": "abc", "config_hash": "123"})
    ids2 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri)
    assert len(ids2) == 6 and not set(ids1) & set(ids2)
    runs = tracking.active_runs("s", uri)
    assert len(runs) == 6
    assert set(runs["run_id"]) == set(ids2)
    assert runs["tags.run_key"].is_unique
    assert set(runs["params.method"]) == {"exact", "nystrom"}
    assert "metrics.test_mse" in runs and "params.alpha" in runs
    art = runs["artifact_uri"].iloc[0].removeprefix("file://")
    assert (tmp_path / "mlartifacts" / "s").as_posix() in art
    assert len(tracking.active_runs("s", uri, level=None)) == 7
    assert len(tracking.active_runs("s", uri, level="job")) == 1


def test_returned_ids_follow_results(uri, client):
    rows = _rows("d")
    ids = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    for rid, row in zip(ids, rows, strict=True):
        tags = client.get_run(rid).data.tags
        assert tags["run_key"] == tracking.run_key("s", "d", row["method"], row["kernel"], row["seed"])


def test_parent_holds_the_artifact_and_children_point_at_it(tmp_path, uri, client):
    result_file = tmp_path / "r.csv"
    result_file.write_text("a,b\n1,2\n")
    ids = tracking.log_job("s", "s/d", _rows("d", 2), result_file=result_file, tracking_uri=uri,
                           tags={"git_commit": "abc"}, job_params={"n_rows": 4, "long": "x" * 7000})
    jobs = tracking.active_runs("s", uri, level="job")
    assert len(jobs) == 1
    job = jobs.iloc[0]
    parent = job["run_id"]
    assert parent not in ids
    assert job["tags.mlflow.runName"] == "s/d"
    assert job["tags.job_key"] == "s/d"
    assert job["tags.git_commit"] == "abc"
    assert job["tags.nystrom_bench.level"] == "job"
    assert job["status"] == "FINISHED"
    assert job["params.n_rows"] == "4" and len(job["params.long"]) == 6000
    assert _artifacts(client, parent) == ["r.csv"]
    for rid in ids:
        run = client.get_run(rid)
        assert run.data.tags["mlflow.parentRunId"] == parent
        assert run.data.tags["nystrom_bench.level"] == "result"
        assert run.data.tags["job_key"] == "s/d"
        assert run.data.tags["git_commit"] == "abc"
        assert run.info.status == "FINISHED"
        assert _artifacts(client, rid) == []


def test_relogging_replaces_parent_and_children(uri):
    tracking.log_job("s", "s/a", _rows("a"), tracking_uri=uri)
    tracking.log_job("s", "s/b", _rows("b"), tracking_uri=uri)
    before = tracking.active_runs("s", uri, level=None)
    old_a = set(before.loc[before["tags.job_key"] == "s/a", "run_id"])
    old_b = set(before.loc[before["tags.job_key"] == "s/b", "run_id"])
    assert len(old_a) == len(old_b) == 7
    tracking.log_job("s", "s/a", _rows("a", 2), tracking_uri=uri)
    after = tracking.active_runs("s", uri, level=None)
    new_a = set(after.loc[after["tags.job_key"] == "s/a", "run_id"])
    assert len(new_a) == 5 and not new_a & old_a
    assert set(after.loc[after["tags.job_key"] == "s/b", "run_id"]) == old_b
    assert len(tracking.active_runs("s", uri, level="job")) == 2


def test_parallel_jobs_lose_nothing(uri):
    """Six processes create the same experiment and log at once on a fresh SQLite store."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(6) as pool:
        done = pool.map(_log, [(uri, f"d{i}") for i in range(6)])
    assert sorted(done) == [f"d{i}" for i in range(6)]
    runs = tracking.active_runs("race", uri)
    assert len(runs) == 36
    assert runs["tags.run_key"].is_unique
    jobs = tracking.active_runs("race", uri, level="job")
    assert sorted(jobs["tags.job_key"]) == [f"race/d{i}" for i in range(6)]
    assert set(runs["tags.mlflow.parentRunId"]) == set(jobs["run_id"])
    assert len(tracking.active_runs("race", uri, level=None)) == 42


def test_nan_metrics_are_skipped(uri):
    rows = _rows("d", 1)
    rows[0]["metrics"]["bad"] = float("nan")
    rows[0]["metrics"]["worse"] = float("inf")
    tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    runs = tracking.active_runs("s", uri)
    assert len(runs) == 2
    assert "metrics.bad" not in runs and "metrics.worse" not in runs
    assert runs["metrics.test_mse"].notna().all()


def test_rows_differing_only_in_a_coord_are_distinct(uri):
    base = {"dataset": "d", "method": "nystrom", "kernel": "gaussian", "seed": 0,
            "params": {"alpha": 0.1}, "metrics": {"test_mse": 1.0}}
    rows = [{**base, "coords": {"m": 300, "lam": lam}} for lam in (1e-15, 1.0000001e-15)]
    rows.append({**base, "coords": {}})
    rows.append({k: v for k, v in base.items()})  # no coords at all
    rows[-1]["seed"] = 1
    ids = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    assert len(ids) == 4
    runs = tracking.active_runs("s", uri).set_index("run_id").loc[ids]
    assert list(runs["tags.run_key"]) == [
        "s/d/nystrom/gaussian/seed0/m=300/lam=1e-15",
        "s/d/nystrom/gaussian/seed0/m=300/lam=1.0000001e-15",
        "s/d/nystrom/gaussian/seed0",
        "s/d/nystrom/gaussian/seed1",
    ]
    assert list(runs["tags.mlflow.runName"][:2]) == [
        "d/nystrom/gaussian/seed0/m=300/lam=1e-15",
        "d/nystrom/gaussian/seed0/m=300/lam=1.0000001e-15",
    ]
    assert list(runs["params.m"][:2]) == ["300", "300"]
    assert list(runs["params.lam"][:2]) == ["1e-15", "1.0000001e-15"]
    assert list(runs["params.study"]) == ["s"] * 4 and list(runs["params.alpha"]) == ["0.1"] * 4


def test_coords_cannot_shadow_identity_params(uri):
    row = {**_rows("d", 1)[0], "coords": {"seed": 3}}
    with pytest.raises(ValueError, match="seed"):
        tracking.log_job("s", "s/d", [row], tracking_uri=uri)


def test_prune_removes_exactly_the_dropped_jobs(uri, client):
    for d in ("a", "b", "c"):
        tracking.log_job("s", f"s/{d}", _rows(d, 1), tracking_uri=uri)
    exp_id = client.get_experiment_by_name("s").experiment_id
    manual = client.create_run(exp_id, run_name="by hand").info.run_id  # no job_key: left alone
    before = tracking.active_runs("s", uri, level=None)
    assert len(before) == 3 * 3 + 1
    keep = set(before.loc[before["tags.job_key"] != "s/b", "run_id"])
    assert tracking.prune("s", ["s/a", "s/c", "s/gone"], tracking_uri=uri) == 3
    after = tracking.active_runs("s", uri, level=None)
    assert set(after["run_id"]) == keep and manual in keep
    assert tracking.prune("s", {"s/a", "s/c"}, tracking_uri=uri) == 0
    assert tracking.prune("s", [], tracking_uri=uri) == 6
    assert list(tracking.active_runs("s", uri, level=None)["run_id"]) == [manual]


def test_prune_without_experiment(tmp_path, uri):
    assert tracking.prune("nothing", ["x"], tracking_uri=uri) == 0
    assert tracking.active_runs("nothing", uri).empty


def test_old_runs_without_level_count_as_results(uri, client):
    exp_id = client.create_experiment("old")
    client.create_run(exp_id, tags={"run_key": "old/d/m/k/seed0", "job_key": "old/d"})
    assert len(tracking.active_runs("old", uri)) == 1
    assert tracking.active_runs("old", uri, level="job").empty
    tracking.log_job("old", "old/e", _rows("e", 1), tracking_uri=uri)
    assert len(tracking.active_runs("old", uri)) == 3
    assert len(tracking.active_runs("old", uri, level="job")) == 1
    assert len(tracking.active_runs("old", uri, level=None)) == 4


@pytest.mark.parametrize(("key", "expected"), [
    (("a", "b", "c", "d", 1), "a/b/c/d/seed1"),
    (("a", "b", "c", "d", 1, {}), "a/b/c/d/seed1"),
    (("a", "b", "c", "d", 1, {"m": 300, "lam": 1e-15}), "a/b/c/d/seed1/m=300/lam=1e-15"),
    (("a", "b", "c", "d", 1, {"lam": 1e-15, "m": 300}), "a/b/c/d/seed1/lam=1e-15/m=300"),
    (("a", "b", "c", "d", 1, {"lam": 1.0000001e-15}), "a/b/c/d/seed1/lam=1.0000001e-15"),
    (("a", "b", "c", "d", 1, {"m": 300.0, "s": "uniform"}), "a/b/c/d/seed1/m=300/s=uniform"),
])
def test_run_key(key, expected):
    assert tracking.run_key(*key) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (300, "300"), (300.0, "300"), (np.int64(300), "300"), (np.float64(300.0), "300"),
    (1e-15, "1e-15"), (1.0000001e-15, "1.0000001e-15"), (np.float32(0.5), "0.5"), (0.1, "0.1"),
    (-2.5, "-2.5"), ("gsa", "gsa"), (True, "True"), (None, "None"),
])
def test_format_coord(value, expected):
    assert tracking.format_coord(value) == expected


def test_duplicate_run_keys_are_logged_with_a_warning(uri, caplog):
    rows = _rows("d", 1) * 2
    with caplog.at_level("WARNING", logger="nystrom_bench.tracking"):
        ids = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    assert len(ids) == 4 and "duplicate run_keys" in caplog.text


def test_experiments_open_as_model_training_with_description_and_dataset_inputs(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path}/m.db"
    tracking.log_job("s", "s/d", _rows("d", 2), tracking_uri=uri, description="A study.\n\nWhat it does.",
                     datasets={"d": {"digest": "abc123", "source": "https://example.org/d.svm", "source_type": "http"}})
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("s")
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    assert exp.tags["mlflow.note.content"] == "A study.\n\nWhat it does."
    jobs = client.search_runs([exp.experiment_id], "tags.`nystrom_bench.level` = 'job'")
    assert [i.dataset.name for i in jobs[0].inputs.dataset_inputs] == ["d"]
    assert jobs[0].inputs.dataset_inputs[0].dataset.digest == "abc123"
