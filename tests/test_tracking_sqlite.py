"""tracking_sqlite writes the rows MLflow writes, without importing MLflow, and steps aside where it must."""
import json
import multiprocessing as mp
import shutil
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest
from test_tracking import COORDS, _curve_rows, _rows, _sampler_rows
from test_tracking_bulk import DATASETS, _tables

from nystrom_bench import results, tracking, tracking_sqlite

MLFLOW = tracking_sqlite.SQLITE_ENV


def _copy(mlflow_uri, tmp_path, name):
    path = tmp_path / name / "mlflow.db"
    path.parent.mkdir()
    shutil.copyfile(mlflow_uri[len("sqlite:///"):], path)
    return f"sqlite:///{path}"


def _scenario(uri, files):
    """A study's life in a store: jobs logged with curves, non-finite values, data sets, job params and
    result files (one twice, skipped), a folded study, a job re-logged from a changed file, a job pruned,
    report runs (kept, then replaced), and an experiment deleted (by MLflow) and restored by logging."""
    rows = _curve_rows(seeds=(0, 1)) + _curve_rows("wine")
    rows[0]["metrics"]["relative_gap"] = float("nan")
    rows[1]["metrics"]["relative_gap"] = float("inf")
    rows[2]["metrics"]["seconds"] = float("-inf")
    kw = {"tracking_uri": uri, "tags": {"git_commit": "abc"}, "datasets": DATASETS}
    tracking.log_job("cons", "cons/both", rows, result_file=files["a"], coords=COORDS, job_params={"seeds": [0, 1]},
                     description="A study.", metrics_info={"relative_gap": ("Relative gap", True)}, **kw)
    tracking.log_job("cons", "cons/both", rows, result_file=files["a"], coords=COORDS, **kw)  # logged already
    tracking.log_job("cons", "cons/wine", _curve_rows("wine"), result_file=files["b"], coords=COORDS, **kw)
    tracking.log_job("samplers", "samplers/wine", _sampler_rows(), result_file=files["a"], coords=("m",),
                     fold=("seed",), curve=("m",), **kw)
    tracking.log_job("krr", "krr/a", _rows("a"), result_file=files["a"], **kw)
    tracking.log_job("krr", "krr/b", _rows("b"), result_file=files["b"], **kw)
    tracking.log_job("krr", "krr/a", _rows("a", 2), result_file=files["b"], **kw)  # another file: replaced
    assert tracking.prune("krr", ["krr/a"], tracking_uri=uri) == 7  # krr/b's job run and 6 runs
    for _ in range(2):  # the second is kept
        tracking.log_report("krr", {"": [files["a"]], "figures": [files["b"]]}, uri, note="### krr",
                            tags={"claim.c1": "reproduced"}, description="what krr asks")
    tracking.log_report("krr", {"": [files["b"]]}, uri, note="### krr, again", tags={"claim.c1": "refuted"})
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    client.delete_experiment(client.get_experiment_by_name("samplers").experiment_id)
    tracking.log_job("samplers", "samplers/wine", _sampler_rows(), result_file=files["b"], coords=("m",),
                     fold=("seed",), curve=("m",), **kw)


def _masked(text):
    """An experiment tag's value without the saved view's times."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return {k: v for k, v in value.items() if k not in ("createdAt", "updatedAt")} if isinstance(value, dict) else value


def _store_tables(uri):
    """_tables (runs, tags, params, metrics, data sets, inputs) plus the experiments, their tags, the runs'
    deletion and artifact locations, and the artifact files, run ids replaced by run names."""
    out = _tables(uri)
    db = uri[len("sqlite:///"):]
    root = str(__import__("pathlib").Path(db).parent)
    con = sqlite3.connect(db)
    try:
        names = dict(con.execute("select run_uuid, name from runs"))
        exps = dict(con.execute("select experiment_id, name from experiments"))
        out["experiments"] = sorted(
            (n, (a or "").replace(root, "ROOT"), s, w, c <= u)
            for n, a, s, w, c, u in con.execute("select name, artifact_location, lifecycle_stage, workspace, "
                                                "creation_time, last_update_time from experiments"))
        out["experiment_tags"] = sorted((exps[e], k, json.dumps(_masked(v), sort_keys=True))
                                        for k, v, e in con.execute("select key, value, experiment_id from experiment_tags"))
        out["run_states"] = sorted((names[r], s, st, d is not None, (e or 0) >= (b or 0), a.replace(root, "ROOT")
                                    .replace(r, "RUN"), u) for r, s, st, d, b, e, a, u in con.execute(
            "select run_uuid, lifecycle_stage, status, deleted_time, start_time, end_time, artifact_uri, user_id "
            "from runs"))
        files = []
        for f in sorted(__import__("pathlib").Path(root, "mlartifacts").rglob("*")):
            if f.is_file():
                rel = f.relative_to(root).parts
                files.append((rel[1], names.get(rel[2], rel[2]), *rel[3:], f.read_bytes()))
        out["artifacts"] = sorted(files)
        return out
    finally:
        con.close()


def _run_view(client, run):
    ds = sorted((d.dataset.name, d.dataset.digest, d.dataset.source, d.dataset.source_type, d.dataset.schema,
                 tuple((t.key, t.value) for t in d.tags)) for d in run.inputs.dataset_inputs)
    return (run.info.run_name, run.info.status, run.info.lifecycle_stage, run.info.user_id,
            sorted(run.data.tags.items()), sorted(run.data.params.items()), str(sorted(run.data.metrics.items())), ds)


def _mlflow_reads(uri):
    """What MLflow's own reads give: experiments, runs under the UI's kinds of filters, metric histories."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exps = client.search_experiments(view_type=ViewType.ALL)
    out = {"experiments": sorted((e.name, e.lifecycle_stage, json.dumps({k: _masked(v) for k, v in e.tags.items()},
                                                                         sort_keys=True)) for e in exps)}
    filters = ["", "tags.job_key = 'cons/both'", "tags.`nystrom_bench.level` = 'config'", "params.method = 'uniform'",
               "tags.run_key LIKE '%bupa%'", "tags.run_key ILIKE '%BUPA%'", "metrics.`mean/criterion:c_ree/relative_gap` > 1",
               "attributes.status = 'FINISHED' AND tags.job_key != 'cons/both'", "metrics.test_mse < 1"]
    for e in exps:
        for f in filters:
            for view in (ViewType.ACTIVE_ONLY, ViewType.ALL):
                runs = client.search_runs([e.experiment_id], filter_string=f, run_view_type=view, max_results=1000)
                out[(e.name, f, view)] = sorted(_run_view(client, r) for r in runs)
                if f == "" and view == ViewType.ALL:
                    out[(e.name, "history")] = sorted(
                        (r.info.run_name, r.info.lifecycle_stage, k,
                         str(sorted((m.step, m.value) for m in client.get_metric_history(r.info.run_id, k))))
                        for r in runs for k in r.data.metrics)
        out[(e.name, "results")] = tracking.results_from_mlflow(e.name, uri)
    return out


def test_the_same_study_through_mlflow_and_through_sqlite3_gives_the_same_store(tmp_path, mlflow_uri, monkeypatch,
                                                                                 caplog):
    files = {k: tmp_path / f"{k}.csv" for k in "ab"}
    files["a"].write_text("x\n1\n")
    files["b"].write_text("x\n2\n")
    through_mlflow, through_sqlite = _copy(mlflow_uri, tmp_path, "mlflow"), _copy(mlflow_uri, tmp_path, "sqlite3")
    with monkeypatch.context() as m:
        m.setenv(MLFLOW, "0")
        _scenario(through_mlflow, files)
    used = []
    real = tracking_sqlite.connect
    monkeypatch.setattr(tracking_sqlite, "connect", lambda *a, **k: used.append(real(*a, **k)) or used[-1])
    with caplog.at_level("INFO", logger="nystrom_bench.tracking"):
        _scenario(through_sqlite, files)
    assert used and all(c is not None for c in used)  # every store call went through tracking_sqlite
    assert "through MLflow" not in caplog.text
    a, b = _store_tables(through_mlflow), _store_tables(through_sqlite)
    assert a.keys() == b.keys()
    assert len(a["runs"]) == 7 + 3 + 3 + 3 + 7 + 7 + 5 + 2 and len(a["artifacts"]) >= 8 and any(s[2] for s in a["run_states"])
    for table in a:
        assert a[table] == b[table], table
    ra, rb = _mlflow_reads(through_mlflow), _mlflow_reads(through_sqlite)
    assert ra.keys() == rb.keys()
    for key in ra:
        if isinstance(ra[key], pd.DataFrame):
            pd.testing.assert_frame_equal(ra[key], rb[key])
            assert len(ra[key]) or key[0] == "Default"
        else:
            assert ra[key] == rb[key], key


def test_a_track_runs_job_imports_no_mlflow(mlflow_uri, tmp_path):
    """Logging, pruning, a report run and the UI link on an existing store: no ``import mlflow``."""
    result = tmp_path / "r.csv"
    result.write_text("x\n")
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from test_tracking import _rows, COORDS\n"
        "from nystrom_bench import tracking\n"
        "uri = %r\n"
        "tracking.prune('s', ['s/a'], tracking_uri=uri)\n"
        "ids = tracking.log_job('s', 's/a', _rows('a'), result_file=%r, tracking_uri=uri, datasets={'a': {'digest': 'd'}})\n"
        "assert len(ids) == 6 and tracking.log_job('s', 's/a', _rows('a'), result_file=%r, tracking_uri=uri) == ids\n"
        "tracking.log_report('s', {'': [%r]}, uri, note='n')\n"
        "assert tracking.ui_link('s', uri).startswith('http://127.0.0.1:5000/#/experiments/1/runs')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mlflow', 'sqlalchemy', 'alembic')))\n"
    ) % (str(__import__("pathlib").Path(__file__).parent), mlflow_uri, str(result), str(result), str(result))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert len(tracking.active_runs("s", mlflow_uri)) == 6 and len(tracking.active_runs("s", mlflow_uri, "report")) == 1


def test_the_pinned_revision_is_the_installed_mlflows_head(mlflow_uri):
    """Fails when MLflow is upgraded: its migrations end elsewhere or its version leaves the verified range.
    Then re-verify tracking_sqlite against the new MLflow (this module's tests, and what its docstring
    lists against MLflow's sqlalchemy_store.py) and move MLFLOW_REVISION and MLFLOW_VERSIONS."""
    con = sqlite3.connect(mlflow_uri[len("sqlite:///"):])
    try:
        head = [r[0] for r in con.execute("select version_num from alembic_version")]
    finally:
        con.close()
    import mlflow

    msg = (f"MLflow {mlflow.__version__} (migrations' head {head}) is not the one tracking_sqlite was verified with "
           f"({tracking_sqlite.MLFLOW_VERSIONS}, {tracking_sqlite.MLFLOW_REVISION}): re-verify it, then move the pin")
    assert head == [tracking_sqlite.MLFLOW_REVISION], msg
    version = tracking_sqlite.mlflow_version()
    assert version == tuple(int(p) for p in mlflow.__version__.split(".")[:3]), msg
    assert tracking_sqlite.MLFLOW_VERSIONS[0] <= version[:2] < tracking_sqlite.MLFLOW_VERSIONS[1], msg


@pytest.mark.parametrize("mismatch", ["revision", "version", "switched off", "no store", "workspaces"])
def test_a_store_it_was_not_verified_with_is_written_through_mlflow(mlflow_uri, tmp_path, monkeypatch, caplog, mismatch):
    db = tmp_path / "mlflow.db"
    if mismatch == "revision":
        monkeypatch.setattr(tracking_sqlite, "MLFLOW_REVISION", "0123456789ab")
    elif mismatch == "version":
        monkeypatch.setattr(tracking_sqlite, "MLFLOW_VERSIONS", ((3, 18), (3, 19)))
    elif mismatch == "switched off":
        monkeypatch.setenv(MLFLOW, "0")
    elif mismatch == "no store":
        db = tmp_path / "new" / "mlflow.db"
    else:
        monkeypatch.setenv("MLFLOW_ENABLE_WORKSPACES", "false")  # off: taken
        taken = tracking_sqlite.connect(db, mlflow_uri)
        assert taken is not None
        taken.close()
        monkeypatch.setenv("MLFLOW_ENABLE_WORKSPACES", "true")
    assert tracking_sqlite.connect(db, f"sqlite:///{db}") is None
    if mismatch == "workspaces":
        return  # MLflow's workspace-aware store needs a server: only that it is not taken here
    with caplog.at_level("INFO", logger="nystrom_bench.tracking"):
        ids = tracking.log_job("s", "s/d", _rows("d"), tracking_uri=f"sqlite:///{db}")
    assert len(ids) == 6 and len(tracking.active_runs("s", f"sqlite:///{db}")) == 6
    if mismatch in ("revision", "version"):
        assert "written through MLflow" in caplog.text


def test_what_it_does_not_replicate_is_rolled_back_and_logged_through_mlflow(mlflow_uri, caplog):
    """An experiment whose artifacts live elsewhere (made by someone else): the transaction is rolled back
    and the job goes through MLflow, at once (no retry, though the reason names a "connection")."""
    from mlflow.tracking import MlflowClient

    MlflowClient(tracking_uri=mlflow_uri).create_experiment("s", artifact_location="s3://connection/s")
    with caplog.at_level("INFO", logger="nystrom_bench.tracking"):
        ids = tracking.log_job("s", "s/d", _rows("d"), tracking_uri=mlflow_uri)
    assert "logged through MLflow" in caplog.text and "s3://connection/s" in caplog.text
    assert "retrying" not in caplog.text
    runs = tracking.active_runs("s", mlflow_uri, level=None)
    assert len(runs) == 7 and set(ids) < set(runs["run_id"])
    assert runs["artifact_uri"].str.startswith("s3://connection/s/").all()


def test_mlflows_checks_apply_and_a_refused_call_writes_nothing(mlflow_uri):
    db = mlflow_uri[len("sqlite:///"):]
    client = tracking_sqlite.connect(db, mlflow_uri)
    P, M = client.Param, client.Metric
    with client.transaction():
        exp = client.create_experiment("e", artifact_location=f"file://{db}-artifacts")
        rid = client.create_run(exp, run_name="r", tags={"t": "1"}).info.run_id
        bad = [([P("p", "1"), P("p", "2")], [], "duplicate param key"), ([P("../p", "1")], [], "would resolve"),
               ([P("p?", "1")], [], "only alphanumerics"), ([], [M("m", "x", 0, 0)], "not a number"),
               ([], [M("m", 1.0, -1, 0)], "timestamp"), ([P("p" * 251, "1")], [], "longer than 250")]
        for params, metrics, match in bad:
            with pytest.raises(ValueError, match=match):
                client.log_batch(rid, metrics=metrics, params=params)
        with pytest.raises(ValueError, match="duplicate param key"):
            client.write_runs(exp, [{"name": "w", "tags": {}, "params": [P("p", "1"), P("p", "2")], "metrics": []}], 5)
        client.log_batch(rid, params=[P("p", "1"), P("long", "x" * 7000)], metrics=[M("m", True, 0, 0)])
        with pytest.raises(ValueError, match="Changing param values"):
            client.log_batch(rid, params=[P("p", "2")])
        client.log_batch(rid, params=[P("p", "1")])  # the same value again: fine, as in MLflow
        client.set_terminated(rid)
        with pytest.raises(tracking_sqlite.Unsupported):
            client.search_runs([exp], "params.p = '1'")
    from mlflow.tracking import MlflowClient

    run = MlflowClient(tracking_uri=mlflow_uri).get_run(rid)
    assert run.data.params == {"p": "1", "long": "x" * 6000} and run.data.metrics == {"m": 1.0}  # cut as MLflow cuts
    from mlflow.entities import ViewType

    assert len(MlflowClient(tracking_uri=mlflow_uri).search_runs([exp], run_view_type=ViewType.ALL)) == 1  # no "w"


def _log_job(args):
    uri, dataset = args
    tracking.log_job("race", f"race/{dataset}", _curve_rows(dataset, seeds=(0, 1)), tracking_uri=uri, coords=COORDS)
    return dataset, "mlflow" in sys.modules


def test_parallel_writers_lose_nothing(mlflow_uri):
    """Four processes log jobs of one study at once into one store (the experiment made by the first):
    each transaction waits for the others, nothing is lost or doubled."""
    with mp.get_context("spawn").Pool(4) as pool:
        done = pool.map(_log_job, [(mlflow_uri, f"d{i}") for i in range(4)])
    assert sorted(done) == [(f"d{i}", False) for i in range(4)]
    runs = tracking.active_runs("race", mlflow_uri)
    assert len(runs) == 4 * 2 * 2 and runs["tags.run_key"].is_unique
    jobs = tracking.active_runs("race", mlflow_uri, level="job")
    assert sorted(jobs["tags.job_key"]) == [f"race/d{i}" for i in range(4)]
    table = tracking.results_from_mlflow("race", mlflow_uri)
    assert len(table) == 4 * 2 * 2 * 6 and not table.duplicated([*results.ID_COLS, *COORDS]).any()


def test_a_track_runs_job_reads_its_study_kind_without_importing_the_others():
    """The study kind a track_runs job reads (studies.get): in a fresh process the other kinds' packages stay
    unimported (0.9 CPU-s of a track_runs job's imports)."""
    code = ("import sys; from nystrom_bench import studies\n"
            "assert studies.get('krc').name == 'krc'\n"
            "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('nystrom_bench.studies.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['krc', 'krr']"  # krc's study extends krr's
