"""A job's configuration runs written to a SQLite MLflow store in one transaction.

Through ``MlflowClient`` a configuration run is four calls (``create_run``, ``log_batch``,
``log_inputs``, ``set_terminated``), and MLflow's ``SqlAlchemyStore`` spends about 90 ms of CPU on
them, nearly all in SQLAlchemy's ORM (one object, one flush and one query per metric, parameter and
tag): 33 CPU-s for the largest study's 561 runs, ~145 CPU-s for the default run's 18 ``track_runs``
jobs, more than their MLflow imports (issue 39).  :func:`write_runs` writes the same rows -- the run,
its tags (``mlflow.runName`` added as ``create_run`` adds it), parameters, metric histories, latest
metrics, dataset inputs and their tags, status ``FINISHED`` -- with bulk ``INSERT``\\ s into the tables
of MLflow's own ORM models (``mlflow.store.tracking.dbmodels.models``: their columns and defaults, not a
copy of the schema), after MLflow's own validation of every metric, parameter and tag
(``_validate_batch_log_data`` and unique parameter keys per run, as ``log_batch`` does).

Which rows the four calls write is pinned by ``tests/test_tracking_bulk.py``: the same job logged
both ways gives equal tables (run ids, dataset and input ids and times aside), and MLflow's own reads
(``search_runs``, ``get_metric_history``, the datasets of a run) return the same.  Only a local SQLite
store takes this path (:func:`sqlite_store`); a tracking server, any other database, or an MLflow
without these internals is logged call by call as before.  A store MLflow has made already is written
without MLflow at all where :mod:`nystrom_bench.tracking_sqlite` was verified with its schema (the
same rows; this path is then for a store MLflow creates or migrates, and ``NYSTROM_BENCH_TRACKING_SQLITE=0``).
"""

from __future__ import annotations

import uuid

__all__ = ["sqlite_store", "write_runs"]


def sqlite_store(client):
    """The ``SqlAlchemyStore`` behind ``client`` if it is a local SQLite store MLflow's own client
    writes, else None (the caller then logs call by call)."""
    tracking_client = getattr(client, "_tracking_client", None)
    if tracking_client is None:  # e.g. the REST client of a tracking server, which never imports MLflow
        return None
    try:
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        store = tracking_client.store
    except Exception:  # noqa: BLE001 - another MLflow version: the call-by-call path
        return None
    if not isinstance(store, SqlAlchemyStore) or not str(store.db_uri).startswith("sqlite:"):
        return None
    return store


def write_runs(store, experiment_id, runs, now_ms):
    """Write ``runs`` as finished MLflow runs of ``experiment_id`` in one transaction; return their ids.

    Parameters
    ----------
    store : mlflow.store.tracking.sqlalchemy_store.SqlAlchemyStore
        A local SQLite store (:func:`sqlite_store`).
    experiment_id : str
        An active experiment of ``store``.
    runs : list of dict
        ``{"name", "tags": {key: value}, "params": [Param], "metrics": [Metric], "dataset":
        DatasetInput or None}``: what ``create_run(tags, run_name)``, ``log_batch(metrics, params)`` and
        ``log_inputs([dataset])`` would be given.
    now_ms : int
        The first run's start and end time (milliseconds since the epoch); each next run's is 1 ms later,
        so that MLflow's runs table (newest first, then by id) lists them as if created one by one.

    Returns
    -------
    list of str
        The new runs' ids, in the order of ``runs``.
    """
    from mlflow.entities import RunStatus, RunTag, SourceType
    from mlflow.entities.lifecycle_stage import LifecycleStage
    from mlflow.store.tracking.dbmodels.models import (
        SqlDataset,
        SqlInput,
        SqlInputTag,
        SqlLatestMetric,
        SqlMetric,
        SqlParam,
        SqlRun,
        SqlTag,
    )
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME, MLFLOW_USER
    from mlflow.utils.uri import append_to_uri_path
    from mlflow.utils.validation import _validate_batch_log_data, _validate_param_keys_unique
    from sqlalchemy import insert

    experiment = store.get_experiment(experiment_id)
    store._check_experiment_is_active(experiment)
    table = {k: [] for k in ("runs", "tags", "params", "metrics", "latest", "datasets", "inputs", "input_tags")}
    run_ids, wanted_datasets = [], {}
    for i, run in enumerate(runs):
        rid = uuid.uuid4().hex
        run_ids.append(rid)
        tags = [RunTag(k, v) for k, v in run["tags"].items()]
        if MLFLOW_RUN_NAME not in run["tags"]:  # as SqlAlchemyStore.create_run adds it
            tags.append(RunTag(MLFLOW_RUN_NAME, run["name"]))
        metrics, params, _ = _validate_batch_log_data(run["metrics"], run["params"], [])  # create_run: tags as given
        _validate_param_keys_unique(params)
        table["runs"].append(dict(
            run_uuid=rid, name=run["name"], artifact_uri=append_to_uri_path(
                experiment.artifact_location, rid, store.ARTIFACTS_FOLDER_NAME),
            experiment_id=int(experiment_id), source_type=SourceType.to_string(SourceType.UNKNOWN),
            source_name="", entry_point_name="", user_id=run["tags"].get(MLFLOW_USER, "unknown"),
            status=RunStatus.to_string(RunStatus.FINISHED), start_time=now_ms + i, end_time=now_ms + i,
            deleted_time=None, source_version="", lifecycle_stage=LifecycleStage.ACTIVE))
        table["tags"] += [dict(key=t.key, value=t.value, run_uuid=rid) for t in tags]
        table["params"] += [dict(key=p.key, value=p.value, run_uuid=rid) for p in params]
        _metric_rows(store, rid, metrics, table)
        ds = run.get("dataset")
        if ds is not None:
            wanted_datasets.setdefault((ds.dataset.name, ds.dataset.digest), ds)
            table["inputs"].append((rid, ds))

    with store.ManagedSessionMaker(read_only=False) as session:
        names = sorted({k[0] for k in wanted_datasets})
        digests = sorted({k[1] for k in wanted_datasets})
        known = {(d.name, d.digest): d.dataset_uuid for d in session.query(SqlDataset).filter(
            SqlDataset.experiment_id == experiment_id, SqlDataset.name.in_(names),
            SqlDataset.digest.in_(digests))} if wanted_datasets else {}
        for key, ds in wanted_datasets.items():  # log_inputs: a data set new to the experiment first
            if key not in known:
                known[key] = uuid.uuid4().hex
                d = ds.dataset
                table["datasets"].append(dict(
                    dataset_uuid=known[key], experiment_id=int(experiment_id), name=d.name, digest=d.digest,
                    dataset_source_type=d.source_type, dataset_source=d.source, dataset_schema=d.schema,
                    dataset_profile=d.profile))
        edges = []
        for rid, ds in table["inputs"]:
            iid = uuid.uuid4().hex
            edges.append(dict(input_uuid=iid, source_type="DATASET",
                              source_id=known[(ds.dataset.name, ds.dataset.digest)],
                              destination_type="RUN", destination_id=rid))
            table["input_tags"] += [dict(input_uuid=iid, name=t.key, value=t.value) for t in ds.tags]
        for model, rows in ((SqlRun, table["runs"]), (SqlTag, table["tags"]), (SqlParam, table["params"]),
                            (SqlMetric, table["metrics"]), (SqlLatestMetric, table["latest"]),
                            (SqlDataset, table["datasets"]), (SqlInput, edges),
                            (SqlInputTag, table["input_tags"])):
            if rows:
                session.execute(insert(model), rows)
    return run_ids


def _metric_rows(store, run_id, metrics, table):
    """The run's metric rows as ``SqlAlchemyStore._log_metrics`` writes them: values sanitised (NaN
    stored as 0 with ``is_nan``, +-inf as the largest float), repeats of one (key, value, timestamp,
    step) once, and per key the latest by (step, timestamp, value), the first of equals kept."""
    seen, latest = set(), {}
    for m in metrics:
        if m in seen:
            continue
        seen.add(m)
        is_nan, value = store.sanitize_metric_value(m.value)
        row = dict(key=m.key, value=value, timestamp=m.timestamp, step=m.step, is_nan=is_nan, run_uuid=run_id)
        table["metrics"].append(row)
        old = latest.get(m.key)
        if old is None or (row["step"], row["timestamp"], row["value"]) > (old["step"], old["timestamp"], old["value"]):
            latest[m.key] = row
    table["latest"] += [dict(r) for r in latest.values()]
