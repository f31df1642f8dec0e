"""The one-transaction SQLite path (nystrom_bench.tracking_bulk) writes what MLflow's four calls a run write."""
import sqlite3

import numpy as np
import pandas as pd
import pytest
from test_tracking import COORDS, _curve_rows, _sampler_rows

from nystrom_bench import tracking, tracking_bulk

DATASETS = {"bupa": {"digest": "abc123", "source": "resources/data/bupa.npz", "source_type": "local",
                     "schema": '{"X": [345, 6]}'},
            "wine": {"digest": "def456", "source": "resources/data/wine.npz", "source_type": "local"}}


@pytest.fixture(autouse=True)
def _through_mlflow(monkeypatch):
    """This module tests MLflow's path (a store MLflow creates or migrates; tracking_sqlite's path:
    tests/test_tracking_sqlite.py)."""
    monkeypatch.setenv(tracking.tracking_sqlite.SQLITE_ENV, "0")


def _call_by_call(monkeypatch):
    monkeypatch.setattr(tracking_bulk, "sqlite_store", lambda client: None)


def _tables(uri):
    """Every row MLflow keeps of the runs, ids replaced by run names and data set names, times left out."""
    con = sqlite3.connect(uri[len("sqlite:///"):])
    try:
        names = dict(con.execute("select run_uuid, name from runs"))
        sets = dict(con.execute("select dataset_uuid, name from datasets"))
        inputs = {}
        out = {"runs": sorted(con.execute(
            "select name, source_type, source_name, entry_point_name, user_id, status, deleted_time is not null, source_version,"
            " lifecycle_stage, experiment_id, end_time >= start_time from runs"))}
        for table in ("tags", "params"):
            out[table] = sorted((names[r], k, v) for k, v, r in con.execute(f"select key, value, run_uuid from {table}"))
        for table in ("metrics", "latest_metrics"):
            out[table] = sorted((names[r], k, v, s, n) for k, v, s, n, r in con.execute(
                f"select key, value, step, is_nan, run_uuid from {table}"))
        out["datasets"] = sorted(con.execute(
            "select experiment_id, name, digest, dataset_source_type, dataset_source, dataset_schema, dataset_profile"
            " from datasets"))
        for iid, src, dst, st, dt, step in con.execute(
                "select input_uuid, source_id, destination_id, source_type, destination_type, step from inputs"):
            inputs[iid] = (sets.get(src, src), names.get(dst, dst), st, dt, step)
        out["inputs"] = sorted(inputs.values())
        out["input_tags"] = sorted((inputs[i], k, v) for i, k, v in con.execute("select input_uuid, name, value from input_tags"))
        out["artifact_uri"] = sorted(u.rsplit("/", 2)[1:] != [] for (u,) in con.execute("select artifact_uri from runs"))
        return out
    finally:
        con.close()


def _log_study(uri):
    rows = _curve_rows(seeds=(0, 1)) + _curve_rows("wine")
    rows[0]["metrics"]["relative_gap"] = float("nan")
    rows[1]["metrics"]["relative_gap"] = float("inf")
    rows[2]["metrics"]["seconds"] = float("-inf")
    tracking.log_job("cons", "cons/both", rows, tracking_uri=uri, coords=COORDS, datasets=DATASETS,
                     tags={"git_commit": "abc"}, job_params={"seeds": [0, 1]})
    tracking.log_job("samplers", "samplers/wine", _sampler_rows(), tracking_uri=uri, coords=("m",),
                     fold=("seed",), curve=("m",), datasets=DATASETS)


def test_a_job_logged_in_one_transaction_has_the_rows_of_four_calls_a_run(tmp_path, mlflow_uri, monkeypatch):
    import shutil

    other = tmp_path / "calls" / "mlflow.db"
    other.parent.mkdir()
    shutil.copyfile(mlflow_uri[len("sqlite:///"):], other)
    _log_study(mlflow_uri)
    with monkeypatch.context() as m:
        _call_by_call(m)
        _log_study(f"sqlite:///{other}")
    bulk, calls = _tables(mlflow_uri), _tables(f"sqlite:///{other}")
    # cons: 2 methods x 2 seeds (bupa) + 2 methods (wine) + its job run; samplers: 2 methods (seeds folded) + job run
    assert len(bulk["runs"]) == 4 + 2 + 1 + 2 + 1
    for table in calls:
        assert bulk[table] == calls[table], table
    # and MLflow's own reads give the same
    for study in ("cons", "samplers"):
        a = tracking.results_from_mlflow(study, mlflow_uri)
        b = tracking.results_from_mlflow(study, f"sqlite:///{other}")
        pd.testing.assert_frame_equal(a, b)


def test_mlflows_reads_of_a_bulk_run(mlflow_uri):
    from mlflow.tracking import MlflowClient

    _log_study(mlflow_uri)
    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.get_experiment_by_name("cons")
    runs = client.search_runs([exp.experiment_id], filter_string="tags.job_key = 'cons/both'")
    config = [r for r in runs if r.data.tags.get(tracking.LEVEL_TAG) == "config"]
    assert len(config) == 6 and all(r.info.status == "FINISHED" for r in runs)
    run = next(r for r in config if r.info.run_name == "bupa · uniform · gaussian · seed 0")
    assert run.data.tags["mlflow.runName"] == run.info.run_name and run.data.tags["git_commit"] == "abc"
    history = sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, "criterion:c_ipe/seconds"))
    assert history == [(-3, pytest.approx(0.01)), (-1, pytest.approx(0.03)), (1, pytest.approx(0.05))]
    assert run.data.metrics["criterion:c_ipe/seconds"] == pytest.approx(0.05)  # the latest: the largest step
    gap = sorted(m.step for m in client.get_metric_history(run.info.run_id, "criterion:c_ipe/relative_gap"))
    assert gap == [-1, 1]  # the infinity at -3 is not logged (tracking_layout), the same as call by call
    ds = run.inputs.dataset_inputs
    assert [(d.dataset.name, d.dataset.digest) for d in ds] == [("bupa", "abc123")]
    assert [(t.key, t.value) for t in ds[0].tags] == [("mlflow.data.context", "train")]
    assert run.info.artifact_uri.endswith(f"/cons/{run.info.run_id}/artifacts")


def test_latest_metric_and_repeats_as_log_batch_keeps_them(mlflow_uri):
    """Repeated points once; per key the latest by (step, timestamp, value), the first of equals; NaN and
    infinities sanitised -- the same rows as ``log_batch`` writes."""
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.create_experiment("e")
    metrics = [Metric("a", 1.0, 5, 0), Metric("a", 1.0, 5, 0), Metric("a", 3.0, 5, 2), Metric("a", 2.0, 5, 2),
               Metric("b", float("nan"), 5, 0), Metric("c", float("inf"), 5, 1), Metric("c", 7.0, 9, 1),
               Metric("d", -np.inf, 5, 0)]
    params = [Param("p", "1"), Param("q", "x")]
    api = client.create_run(exp, run_name="r", tags={"t": "1"}).info.run_id
    client.log_batch(api, metrics=metrics, params=params)
    client.set_terminated(api)
    store = tracking_bulk.sqlite_store(client)
    (bulk,) = tracking_bulk.write_runs(store, exp, [{"name": "r", "tags": {"t": "1"}, "params": params,
                                                     "metrics": metrics, "dataset": None}], now_ms=5)
    a, b = client.get_run(api), client.get_run(bulk)
    assert str(a.data.metrics) == str(b.data.metrics)  # str: NaN equal to NaN
    assert a.data.params == b.data.params and a.data.tags == b.data.tags
    assert b.data.metrics["a"] == 3.0 and b.data.metrics["c"] == 7.0 and np.isnan(b.data.metrics["b"])
    for key in "abcd":
        ha = sorted((m.step, m.timestamp, m.value) for m in client.get_metric_history(api, key))
        hb = sorted((m.step, m.timestamp, m.value) for m in client.get_metric_history(bulk, key))
        assert str(ha) == str(hb), key  # str: NaN equal to NaN
    assert b.info.status == "FINISHED" and b.info.start_time == b.info.end_time == 5


def test_mlflows_validation_applies(mlflow_uri):
    from mlflow.entities import Param
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.create_experiment("e")
    store = tracking_bulk.sqlite_store(client)
    with pytest.raises(MlflowException, match="Duplicate parameter keys"):
        tracking_bulk.write_runs(store, exp, [{"name": "r", "tags": {}, "params": [Param("p", "1"), Param("p", "2")],
                                              "metrics": [], "dataset": None}], now_ms=5)
    assert client.search_runs([exp]) == []  # nothing half-written


def test_a_transient_error_is_retried_without_duplicates(mlflow_uri, monkeypatch):
    real, fails = tracking_bulk.write_runs, {"n": 0}

    def flaky(*args, **kwargs):
        if fails["n"] < 2:
            fails["n"] += 1
            raise Exception("(sqlite3.OperationalError) database is locked")
        return real(*args, **kwargs)

    monkeypatch.setattr(tracking_bulk, "write_runs", flaky)
    monkeypatch.setattr(tracking.time, "sleep", lambda s: None)
    ids = tracking.log_job("s", "s/d", _curve_rows(), tracking_uri=mlflow_uri, coords=COORDS)
    assert fails["n"] == 2 and len(ids) == 2
    assert len(tracking.active_runs("s", mlflow_uri)) == 2


def test_only_a_local_sqlite_store_takes_the_bulk_path(mlflow_uri):
    from mlflow.tracking import MlflowClient

    assert tracking_bulk.sqlite_store(MlflowClient(tracking_uri=mlflow_uri)) is not None
    assert tracking_bulk.sqlite_store(object()) is None  # e.g. the REST client of a tracking server


def test_asking_for_the_rest_client_imports_no_mlflow():
    """The REST client logs to a tracking server without ``import mlflow`` (most of the cost on a cluster's
    slice: _tracking_rest); asking whether it has a SQLite store must not import it either."""
    import subprocess
    import sys

    code = ("import sys; from nystrom_bench import tracking_bulk\n"
            "from nystrom_bench._tracking_rest import RestClient\n"
            "assert tracking_bulk.sqlite_store(RestClient('http://127.0.0.1:9')) is None\n"
            "print('mlflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
