import json
import multiprocessing as mp

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import results, tracking


def _rows(dataset, n_seeds=3):
    return [{"dataset": dataset, "method": m, "kernel": "gaussian", "seed": s,
             "params": {"alpha": 0.1}, "metrics": {"test_mse": 0.5 + s}}
            for m in ("exact", "nystrom") for s in range(n_seeds)]


def _curve_rows(dataset="bupa", seeds=(0,)):
    """Consistency-like rows: coords criterion (categorical) and log2_gamma (the curve)."""
    rows = []
    for method in ("uniform", "adapt_ms"):
        for seed in seeds:
            for g in (-3, -1, 1):
                for crit in ("c_ree", "c_ipe"):
                    rows.append({"dataset": dataset, "method": method, "kernel": "gaussian", "seed": seed,
                                 "coords": {"criterion": crit, "log2_gamma": g},
                                 "params": {"gamma": 2.0 ** g, "n_landmarks": 20, "split": {"test_fraction": 0.5},
                                            "sampler_options": {}, "path": [g, g + 1], "rank": None,
                                            "by_sigma": {"0.5": g}, "table": {"1.5": 2}},
                                 "metrics": {"relative_gap": abs(g) / 10 + (crit == "c_ipe") + seed,
                                             "seconds": 0.01 * (g + 4)}})
    return rows


COORDS = ("criterion", "log2_gamma", "l")


def _log(args):
    uri, dataset = args
    tracking.log_job("race", f"race/{dataset}", _curve_rows(dataset, seeds=(0, 1)), tracking_uri=uri, coords=COORDS)
    return dataset


def _artifacts(client, run_id):
    return [f.path for f in client.list_artifacts(run_id)]


@pytest.fixture
def uri(mlflow_uri):
    return mlflow_uri  # a copy of a migrated empty store (tests/conftest.py): 0.1 s instead of 3-6 s


@pytest.fixture
def client(uri):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _through_mlflow(monkeypatch):
    """Log through MLflow's client, not tracking_sqlite's (the path of a store MLflow must create or
    migrate, and of the PostgreSQL store of a cluster)."""
    monkeypatch.setenv(tracking.tracking_sqlite.SQLITE_ENV, "0")


def _history(client, run_id, key):
    return [(m.step, m.value) for m in sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)]


def test_uri_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking.resolve_tracking_uri(None, tmp_path) == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    assert tracking.resolve_tracking_uri("sqlite:///x/y.db", tmp_path) == f"sqlite:///{tmp_path.resolve()}/x/y.db"
    assert tracking.resolve_tracking_uri("http://server:5000", tmp_path) == "http://server:5000"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://cluster:5000")
    assert tracking.resolve_tracking_uri("sqlite:///mlflow.db", tmp_path) == "http://cluster:5000"


def test_one_run_per_configuration_and_idempotent(tmp_path, uri):
    result_file = tmp_path / "r.csv"
    result_file.write_text("a,b\n1,2\n")
    ids1 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri,
                            tags={"git_commit": "abc", "config_hash": "123"})
    # the same result file again: nothing is written, the same runs come back
    assert tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri) == ids1
    result_file.write_text("a,b\n1,3\n")  # a re-run job: its runs are replaced
    ids2 = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri)
    assert len(ids2) == 6 and not set(ids1) & set(ids2)
    runs = tracking.active_runs("s", uri)
    assert len(runs) == 6 and set(runs["run_id"]) == set(ids2)
    assert runs["tags.run_key"].is_unique
    assert set(runs["params.method"]) == {"exact", "nystrom"}
    assert "metrics.test_mse" in runs and "params.alpha" in runs
    assert set(runs["tags.mlflow.runName"]) == {f"d · {m} · gaussian · seed {s}" for m in ("exact", "nystrom")
                                                for s in range(3)}
    art = runs["artifact_uri"].iloc[0].removeprefix("file://")
    assert (tmp_path / "mlartifacts" / "s").as_posix() in art
    assert len(tracking.active_runs("s", uri, level=None)) == 7
    assert len(tracking.active_runs("s", uri, level="job")) == 1


def test_a_curve_is_a_metric_history_over_its_coord(uri, client):
    ids = tracking.log_job("cons", "cons/bupa", _curve_rows(), tracking_uri=uri, coords=COORDS)
    assert len(ids) == 2  # two methods, one seed: six results each
    run = client.get_run(ids[0])
    tags, metrics = run.data.tags, run.data.metrics
    assert tags["mlflow.runName"] == "bupa · uniform · gaussian · seed 0"
    assert tags["nystrom_bench.curve"] == "log2_gamma" and tags["nystrom_bench.steps"] == "3"
    assert tags["run_key"] == "cons/bupa/uniform/gaussian/seed0"
    # an integer grid: step = the coord's value; the coord's values are a history of their own too
    assert _history(client, ids[0], "log2_gamma") == [(-3, -3), (-1, -1), (1, 1)]
    assert _history(client, ids[0], "criterion:c_ree/relative_gap") == [(-3, 0.3), (-1, 0.1), (1, 0.1)]
    assert _history(client, ids[0], "criterion:c_ipe/relative_gap") == [(-3, 1.3), (-1, 1.1), (1, 1.1)]
    # a param that changes along the curve is a history; the others are params, flat
    assert _history(client, ids[0], "criterion:c_ree/param.gamma") == [(-3, 0.125), (-1, 0.5), (1, 2.0)]
    # the experiment's saved view: its headline columns, its charts over log2 gamma; the link opens it
    env = json.loads(client.get_experiment_by_name("cons").tags[tracking.layout.VIEW_TAG])
    state = json.loads(env["state"])
    assert env["name"] == tracking.layout.VIEW_NAME and "metrics.`mean/criterion:c_ree/relative_gap`" in \
        state["selectedColumns"] and state["globalLineChartConfig"]["selectedXAxisMetricKey"] == "log2_gamma"
    assert tracking.ui_link("cons", uri).endswith("/runs?workflowType=machine_learning&viewStateShareKey=nystrom-bench")
    assert metrics["mean/criterion:c_ree/relative_gap"] == pytest.approx((0.3 + 0.1 + 0.1) / 3)
    assert run.data.params["n_landmarks"] == "20" and run.data.params["split.test_fraction"] == "0.5"
    assert run.data.params["rank"] == "null" and run.data.params["sampler_options"] == "{}"
    assert json.loads(tags["nystrom_bench.dropped_params"]) == ["by_sigma", "path"]
    assert run.data.params["table"] == '{"1.5": 2}'  # keys that are no names: one JSON value


def test_scale_like_runs_draw_time_over_n_per_m(uri, client):
    rows = [{"dataset": "big", "method": meth, "kernel": "gaussian", "seed": 0,
             "coords": {"n": n, **({"m": m} if m else {})}, "params": {"lam": 1e-6},
             "metrics": {"fit_time": n / 1000 * (m or 10) / 100, "peak_mem_mb": 1.0 + n}}
            for meth, ms in (("direct", (500, 1500)), ("exact", (None,)))
            for m in ms for n in (5000, 10000, 20000) if meth != "exact" or n <= 10000]
    ids = tracking.log_job("scale", "scale/big", rows, tracking_uri=uri, coords=("n", "m"))
    direct, exact = (client.get_run(i) for i in ids)
    assert direct.data.tags["nystrom_bench.curve"] == "n"
    assert _history(client, direct.info.run_id, "n") == [(5000, 5000), (10000, 10000), (20000, 20000)]
    assert _history(client, direct.info.run_id, "m:1500/fit_time") == [(5000, 75.0), (10000, 150.0), (20000, 300.0)]
    assert _history(client, exact.info.run_id, "fit_time") == [(5000, 0.5), (10000, 1.0)]  # no m: no prefix
    assert "m:500/fit_time" not in exact.data.metrics


def test_job_run_holds_the_table_and_configuration_runs_share_its_job_key(tmp_path, uri, client):
    result_file = tmp_path / "r.csv"
    result_file.write_text("a,b\n1,2\n")
    ids = tracking.log_job("s", "s/d", _rows("d", 2), result_file=result_file, tracking_uri=uri,
                           tags={"git_commit": "abc"}, job_params={"n_rows": 4, "long": "x" * 7000},
                           datasets={"d": {"digest": "abc123", "source": "https://example.org/d.svm",
                                           "source_type": "http"}})
    jobs = tracking.active_runs("s", uri, level="job")
    assert len(jobs) == 1
    job = jobs.iloc[0]
    parent = job["run_id"]
    assert parent not in ids
    assert job["tags.mlflow.runName"] == "d (job)" and job["tags.job_key"] == "s/d"
    assert job["tags.git_commit"] == "abc" and job["tags.nystrom_bench.level"] == "job"
    assert job["tags.nystrom_bench.result_digest"] == tracking.file_digest(result_file)
    assert job["status"] == "FINISHED"
    assert job["params.n_rows"] == "4" and len(job["params.long"]) == 6000
    assert _artifacts(client, parent) == ["r.csv"]
    assert [i.dataset.name for i in client.get_run(parent).inputs.dataset_inputs] == ["d"]
    for rid in ids:
        run = client.get_run(rid)
        assert "mlflow.parentRunId" not in run.data.tags  # side by side in the runs table, not folded
        assert run.data.tags["nystrom_bench.level"] == "config"
        assert run.data.tags["job_key"] == "s/d" and run.data.tags["git_commit"] == "abc"
        assert run.info.status == "FINISHED"
        assert _artifacts(client, rid) == []
        assert run.inputs.dataset_inputs[0].dataset.digest == "abc123"


def test_relogging_replaces_job_and_configuration_runs(uri):
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


@pytest.mark.parametrize("path", ["one transaction", "call by call", "one transaction through MLflow"])
def test_an_interrupted_logging_is_done_again(tmp_path, uri, monkeypatch, path):
    """Killed after some runs (call by call through MLflow: the third run's end; in one transaction
    (tracking_sqlite, the default on an existing store): before the job run's digest, so nothing is
    written): logging again replaces what was written."""
    result_file = tmp_path / "r.csv"
    result_file.write_text("x\n")
    real = tracking._retry
    calls = {"n": 0}
    if path != "one transaction":
        _through_mlflow(monkeypatch)
    if path == "call by call":
        monkeypatch.setattr(tracking.tracking_bulk, "sqlite_store", lambda client: None)
    kill, at = ("finish run", 3) if path == "call by call" else ("tag job run", 1)

    def failing(fn, what, attempts=8):
        if what == kill:
            calls["n"] += 1
            if calls["n"] == at:
                raise RuntimeError("killed")
        return real(fn, what, attempts)

    monkeypatch.setattr(tracking, "_retry", failing)
    with pytest.raises(RuntimeError, match="killed"):
        tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri)
    written = tracking.active_runs("s", uri, level=None)
    assert written.empty == (path == "one transaction")  # tracking_sqlite's transaction: all or nothing
    monkeypatch.setattr(tracking, "_retry", real)
    ids = tracking.log_job("s", "s/d", _rows("d"), result_file=result_file, tracking_uri=uri)
    runs = tracking.active_runs("s", uri, level=None)
    assert len(runs) == 7 and set(ids) < set(runs["run_id"])


def test_prune_finds_the_runs_of_a_job_interrupted_before_its_job_run(uri, monkeypatch):
    real = tracking._retry

    def failing(fn, what, attempts=8):
        if what == "create job run":
            raise RuntimeError("killed")
        return real(fn, what, attempts)

    tracking.log_job("s", "s/a", _rows("a", 1), tracking_uri=uri)
    with monkeypatch.context() as m:  # through MLflow, which commits run by run (tracking_sqlite: all or nothing)
        _through_mlflow(m)
        m.setattr(tracking, "_retry", failing)
        with pytest.raises(RuntimeError, match="killed"):
            tracking.log_job("s", "s/b", _rows("b"), tracking_uri=uri)
    # pruned by tracking_sqlite
    runs = tracking.active_runs("s", uri, level=None)
    assert sorted(runs["tags.job_key"].value_counts().items()) == [("s/a", 3), ("s/b", 6)]
    assert tracking.prune("s", ["s/a", "s/b"], tracking_uri=uri) == 0
    assert tracking.prune("s", ["s/a"], tracking_uri=uri) == 6  # no job run of s/b: found by its runs
    assert set(tracking.active_runs("s", uri, level=None)["tags.job_key"]) == {"s/a"}


def test_transient_errors_are_retried(uri, monkeypatch):
    """Call by call (a tracking server's path; one transaction: tests/test_tracking_bulk.py)."""
    from mlflow.tracking import MlflowClient

    _through_mlflow(monkeypatch)
    monkeypatch.setattr(tracking.tracking_bulk, "sqlite_store", lambda client: None)

    real, fails = MlflowClient.log_batch, {"n": 0}

    def flaky(self, *args, **kwargs):
        if fails["n"] < 2:
            fails["n"] += 1
            raise Exception("(sqlite3.OperationalError) database is locked")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_batch", flaky)
    monkeypatch.setattr(tracking.time, "sleep", lambda s: None)
    ids = tracking.log_job("s", "s/d", _rows("d", 1), tracking_uri=uri)
    assert fails["n"] == 2 and len(ids) == 2
    assert tracking.active_runs("s", uri)["metrics.test_mse"].notna().all()


@pytest.mark.slow  # 8 spawned processes importing MLflow: 19 s on a quiet 2-core Xeon, ~40 s on the slowest kind
def test_eight_parallel_jobs_lose_nothing(tmp_path):
    """Eight processes create the same experiment and log at once on a fresh SQLite store (no file yet:
    they race to create its tables too, as a workflow's first parallel jobs do)."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    ctx = mp.get_context("spawn")
    with ctx.Pool(8) as pool:
        done = pool.map(_log, [(uri, f"d{i}") for i in range(8)])
    assert sorted(done) == [f"d{i}" for i in range(8)]
    runs = tracking.active_runs("race", uri)
    assert len(runs) == 8 * 2 * 2  # data sets x methods x seeds
    assert runs["tags.run_key"].is_unique
    jobs = tracking.active_runs("race", uri, level="job")
    assert sorted(jobs["tags.job_key"]) == [f"race/d{i}" for i in range(8)]
    assert set(runs["tags.job_key"]) == set(jobs["tags.job_key"])
    table = tracking.results_from_mlflow("race", uri)
    assert len(table) == 8 * 2 * 2 * 6 and not table.duplicated([*results.ID_COLS, *COORDS]).any()


def test_non_finite_metrics_are_not_logged_and_come_back(uri):
    rows = _curve_rows()
    rows[0]["metrics"]["relative_gap"] = float("nan")
    rows[1]["metrics"]["relative_gap"] = float("inf")
    rows[2]["metrics"]["seconds"] = float("-inf")
    tracking.log_job("s", "s/d", rows, tracking_uri=uri, coords=COORDS)
    back = tracking.results_from_mlflow("s", uri).set_index(["method", "criterion", "log2_gamma"])
    assert np.isnan(back.loc[("uniform", "c_ree", -3), "relative_gap"])
    assert back.loc[("uniform", "c_ipe", -3), "relative_gap"] == np.inf
    assert back.loc[("uniform", "c_ree", -1), "seconds"] == -np.inf
    assert back.loc[("uniform", "c_ipe", -1), "relative_gap"] == pytest.approx(1.1)


def test_reading_back_gives_the_result_table(tmp_path, uri):
    """Every result row comes back from the runs: identity, coords, metrics and params."""
    rows = _curve_rows(seeds=(0, 1)) + _curve_rows("wine", seeds=(0,))
    rows[0]["params"]["n_landmarks"] = 21  # varies along the curve: a history, an int again
    table = results.frame("cons", rows, COORDS)
    table.to_csv(tmp_path / "r.csv", index=False)
    from_file = tracking.rows_from_frame(results.read_results(tmp_path / "r.csv"), COORDS)
    tracking.log_job("cons", "cons/both", from_file, tracking_uri=uri, coords=COORDS)
    back = tracking.results_from_mlflow("cons", uri)
    keys = [*results.ID_COLS, *COORDS]
    want = results.read_results(tmp_path / "r.csv").sort_values(keys, na_position="first").reset_index(drop=True)
    assert list(back.columns) == list(want.columns)
    pd.testing.assert_frame_equal(back.drop(columns="params"), want.drop(columns="params"), check_dtype=False)
    for got, exp in zip(back["params"], want["params"], strict=True):
        exp = json.loads(exp)
        del exp["path"], exp["by_sigma"]  # change along the curve, no numbers: only in the job's table
        assert json.loads(got) == exp


def _sampler_rows(dataset="wine", seeds=(0, 1, 2)):
    """Samplers-like rows: the curve over m, a data property per seed, the rank along m."""
    return [{"dataset": dataset, "method": method, "kernel": "median", "seed": seed, "coords": {"m": m},
             "params": {"sampler": method, "rank": m, "prop_decay": 0.1 * (seed + 1), "n_train": 60},
             "metrics": {"trace_error": 1 / m + seed + (method == "kmeans"), "sampling_seconds": 1e-3 * m}}
            for method in ("uniform", "kmeans") for seed in seeds for m in (5, 10, 20)]


def test_a_folded_study_logs_a_run_per_configuration_and_reads_back(tmp_path, uri, client):
    """``fold=("seed",)`` (the samplers kind's ``tracking_fold``): a run per data set x method x kernel,
    the table comes back, logging again is skipped, a changed file or an unfolded store is logged
    again, and prune drops the folded runs of a job."""
    table = results.frame("smp", _sampler_rows(), ("m",))
    table.loc[0, "trace_error"] = float("inf")
    table.to_csv(tmp_path / "wine.csv", index=False)
    rows = tracking.rows_from_frame(results.read_results(tmp_path / "wine.csv"), ("m",))
    tracking.log_job("smp", "smp/wine", rows, tracking_uri=uri, coords=("m",))  # unfolded first: 6 runs
    assert len(tracking.active_runs("smp", uri)) == 6
    ids = tracking.log_job("smp", "smp/wine", rows, result_file=tmp_path / "wine.csv", tracking_uri=uri,
                           coords=("m",), fold=("seed",))
    runs = tracking.active_runs("smp", uri)
    assert sorted(runs["run_id"]) == sorted(ids) and len(ids) == 2
    assert sorted(runs["tags.run_key"]) == ["smp/wine/kmeans/median", "smp/wine/uniform/median"]
    assert sorted(runs["tags.mlflow.runName"]) == ["wine · kmeans · median", "wine · uniform · median"]
    run = client.get_run(ids[0])  # uniform
    assert run.data.params["seed"] == "[0, 1, 2]" and run.data.params["seed:2/prop_decay"] == "0.30000000000000004"
    assert run.data.params["n_train"] == "60" and "prop_decay" not in run.data.params
    assert _history(client, ids[0], "seed:1/trace_error") == [(5, 1.2), (10, 1.1), (20, 1.05)]  # step = m
    assert run.data.metrics["mean/sampling_seconds"] == pytest.approx(1e-3 * 35 / 3)
    back = tracking.results_from_mlflow("smp", uri)
    keys = [*results.ID_COLS, "m"]
    want = results.read_results(tmp_path / "wine.csv").sort_values(keys).reset_index(drop=True)
    assert list(back.columns) == list(want.columns) and np.isinf(back["trace_error"]).sum() == 1
    pd.testing.assert_frame_equal(back.drop(columns="params"), want.drop(columns="params"), check_dtype=False)
    assert [json.loads(p) for p in back["params"]] == [json.loads(p) for p in want["params"]]
    again = tracking.log_job("smp", "smp/wine", rows, result_file=tmp_path / "wine.csv", tracking_uri=uri,
                             coords=("m",), fold=("seed",))
    assert again == ids and len(tracking.active_runs("smp", uri, level=None)) == 3  # skipped: 2 + the job run
    rows[0]["metrics"]["sampling_seconds"] = 9.0
    table = results.frame("smp", rows, ("m",))
    table.to_csv(tmp_path / "wine.csv", index=False)
    new = tracking.log_job("smp", "smp/wine", rows, result_file=tmp_path / "wine.csv", tracking_uri=uri,
                           coords=("m",), fold=("seed",))
    assert set(new).isdisjoint(ids) and len(tracking.active_runs("smp", uri, level=None)) == 3
    assert tracking.results_from_mlflow("smp", uri)["sampling_seconds"].max() == 9.0
    tracking.log_job("smp", "smp/iris", _sampler_rows("iris", (0,)), tracking_uri=uri, coords=("m",), fold=("seed",))
    assert tracking.prune("smp", ["smp/iris"], tracking_uri=uri) == 3
    assert sorted(tracking.active_runs("smp", uri)["tags.run_key"]) == ["smp/iris/kmeans/median",
                                                                         "smp/iris/uniform/median"]


def test_the_samplers_kind_folds_its_seeds():
    from nystrom_bench import studies

    assert studies.get("samplers").tracking_fold == ("seed",)
    assert studies.get("krr").tracking_fold == ()


def test_without_coords_every_row_is_a_run(uri):
    rows = _rows("d", 2)
    ids = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    assert len(ids) == 4
    back = tracking.results_from_mlflow("s", uri)
    assert sorted(back["test_mse"]) == sorted(r["metrics"]["test_mse"] for r in rows)
    assert set(back.columns) == {*results.ID_COLS, "test_mse", "assumption", "params"}
    assert (back["assumption"] == "").all()


def test_coords_cannot_shadow_identity_or_metrics(uri):
    row = {**_rows("d", 1)[0], "coords": {"seed": 3}}
    with pytest.raises(ValueError, match="seed"):
        tracking.log_job("s", "s/d", [row], tracking_uri=uri)
    row = {**_rows("d", 1)[0], "coords": {"test_mse": 3}}
    with pytest.raises(ValueError, match="also metric names"):
        tracking.log_job("s", "s/d", [row], tracking_uri=uri)
    row = {**_rows("d", 1)[0], "coords": {"criterion": "a/b"}}
    with pytest.raises(ValueError, match="cannot be part of an MLflow metric key"):
        tracking.log_job("s", "s/d", [row], tracking_uri=uri)


def test_big_runs_are_logged_in_several_batches(uri, client):
    rows = [{"dataset": "d", "method": "m", "kernel": "k", "seed": 0, "coords": {"m": m},
             "params": {f"p{i}": i for i in range(150)}, "metrics": {f"x{j}": j * m for j in range(30)}}
            for m in range(40)]
    (rid,) = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    run = client.get_run(rid)
    assert len(run.data.params) == 150 + 5 and run.data.params["p149"] == "149"
    assert len(_history(client, rid, "x29")) == 40
    back = tracking.results_from_mlflow("s", uri)
    assert len(back) == 40 and back["x29"].tolist() == [29 * m for m in range(40)]


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
    assert tracking.results_from_mlflow("nothing", uri).empty
    assert tracking.ui_link("nothing", uri) is None
    missing = tmp_path / "elsewhere" / "m.db"  # reading creates no store
    assert tracking.results_from_mlflow("s", f"sqlite:///{missing}").empty and not missing.exists()
    assert tracking.ui_link("s", f"sqlite:///{missing}") is None and not missing.exists()


def test_old_runs_without_level_count_as_configuration_runs(uri, client):
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
    (("a", "b", "c", "d", None), "a/b/c/d"),  # a run that folds its seeds
    (("a", "b", "c", "d", 1, {}), "a/b/c/d/seed1"),
    (("a", "b", "c", "d", 1, {"m": 300, "lam": 1e-15}), "a/b/c/d/seed1/m=300/lam=1e-15"),
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


def test_duplicate_results_are_logged_with_a_warning(uri, caplog):
    rows = _rows("d", 1) * 2
    with caplog.at_level("WARNING", logger="nystrom_bench.tracking"):
        ids = tracking.log_job("s", "s/d", rows, tracking_uri=uri)
    assert len(ids) == 2 and "two results at" in caplog.text


def test_experiments_open_as_model_training_with_description_and_a_link(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path}/m.db"
    tracking.log_job("s", "s/d", _curve_rows(), tracking_uri=uri, description="A study.\n\nWhat it does.",
                     coords=COORDS, metrics_info={"relative_gap": ("Relative gap", True)})
    exp = MlflowClient(tracking_uri=uri).get_experiment_by_name("s")
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    note = exp.tags["mlflow.note.content"]
    assert note.startswith("A study.\n\nWhat it does.\n\nHow to read the runs")
    assert "Curves over log2_gamma" in note and "criterion" in note and "lower is better" in note
    assert tracking.ui_link("s", uri) == (f"http://127.0.0.1:5000/#/experiments/{exp.experiment_id}/runs"
                                          "?workflowType=machine_learning&viewStateShareKey=nystrom-bench")
    # the saved view is written once: logging again with the same view keeps its tag (and createdAt)
    view = exp.tags[tracking.layout.VIEW_TAG]
    tracking.log_job("s", "s/d", _curve_rows(), tracking_uri=uri, coords=COORDS,
                     metrics_info={"relative_gap": ("Relative gap", True)})
    assert MlflowClient(tracking_uri=uri).get_experiment_by_name("s").tags[tracking.layout.VIEW_TAG] == view
    assert tracking.ui_link("s", uri, ui="http://host:8080/").startswith("http://host:8080/#/experiments/")


def test_report_run_holds_its_files_and_a_note_cut_to_mlflows_limit(tmp_path, uri, client):
    pdf, fig = tmp_path / "s.pdf", tmp_path / "a.png"
    pdf.write_bytes(b"%PDF-1.4 test")
    fig.write_bytes(b"\x89PNG test")
    note = "### s\n\n" + "".join(f"- claim {i}: reproduced\n" for i in range(600))  # > 8,000 characters
    rid = tracking.log_report("s", {"": [pdf], "figures": [fig]}, uri, note=note, tags={"claim.c1": "reproduced"},
                              description="what s asks")
    run = client.get_run(rid)
    kept = run.data.tags["mlflow.note.content"]
    assert len(kept) <= 8000 and kept.startswith("### s") and "cut to MLflow's limit" in kept
    assert kept.split("\n\n... (cut")[0] in note  # cut at a line, nothing rewritten
    assert run.data.tags["claim.c1"] == "reproduced" and run.data.tags[tracking.LEVEL_TAG] == "report"
    assert {a.path for a in client.list_artifacts(rid)} == {"s.pdf", "figures"}
    assert client.get_experiment_by_name("s").tags["mlflow.note.content"] == "what s asks"
    assert tracking.log_report("s", {"": [pdf], "figures": [fig]}, uri, note=note, tags={"claim.c1": "reproduced"}) == rid
    fig.write_bytes(b"\x89PNG changed")  # a changed file replaces the run
    new = tracking.log_report("s", {"": [pdf], "figures": [fig]}, uri, note=note, tags={"claim.c1": "reproduced"})
    assert new != rid and list(tracking.active_runs("s", uri, level="report")["run_id"]) == [new]
    assert tracking.active_runs("s", uri).empty  # no configuration run


def test_report_note_of_one_long_line_is_cut_too(tmp_path, uri, client):
    pdf = tmp_path / "t.pdf"
    pdf.write_bytes(b"%PDF-1.4 test")
    rid = tracking.log_report("t", {"": [pdf]}, uri, note="x" * 9000)
    kept = client.get_run(rid).data.tags["mlflow.note.content"]
    assert len(kept) <= 8000 and kept.startswith("x" * 7000) and "cut to MLflow's limit" in kept
