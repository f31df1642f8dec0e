"""MLflow logging: one experiment per study, one parent run per job with one child run per result;
idempotent, parallel-safe.

- Store: ``MLFLOW_TRACKING_URI`` if set (e.g. a tracking server on a cluster),
  else the config's ``mlflow.tracking_uri``, else ``sqlite:///mlflow.db``;
  a relative SQLite path is resolved against the workflow's directory.
- Layout: every job gets one parent run (run name = its ``job_key``, tag
  ``nystrom_bench.level = "job"``, the job's parameters, the job's result file as
  its only artifact); every result is a child run of it (tag ``mlflow.parentRunId``,
  ``nystrom_bench.level = "result"``, no artifact).  With a SQLite store the
  artifacts go under ``<db dir>/mlartifacts/<study>``.
- Identity: every run carries the ``job_key`` of the job that made it, every result
  run a deterministic ``run_key`` (study/dataset/method/kernel/seed, then
  ``/name=value`` for each of the row's ``coords``, e.g. ``.../seed1/m=300/lam=1e-15``);
  coords are logged as params too, so the MLflow UI can filter on them.
- Idempotent: logging a job first deletes the active runs (parent and children)
  with its ``job_key``, so re-running a job replaces its runs instead of
  duplicating them; :func:`prune` deletes the runs of jobs no longer in a study.
- Parallel jobs: with a SQLite store, every write happens under an inter-process
  file lock next to the database (``mlflow.db.lock``): no "database is locked",
  no lost runs, and the create-experiment race cannot happen.  With a tracking
  server the race is handled by catching ``RESOURCE_ALREADY_EXISTS``; transient
  errors are retried with back-off.
- Non-finite metrics (NaN, inf) are not logged.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from .results import format_coord

__all__ = ["resolve_tracking_uri", "log_job", "run_key", "format_coord", "active_runs", "prune",
           "LEVEL_TAG"]

DEFAULT_URI = "sqlite:///mlflow.db"
LEVEL_TAG = "nystrom_bench.level"
_PARENT_TAG = "mlflow.parentRunId"
_ID_PARAMS = ("study", "dataset", "method", "kernel", "seed")
_MAX_PARAM = 6000
log = logging.getLogger(__name__)


def resolve_tracking_uri(configured=None, base_dir="."):
    """``MLFLOW_TRACKING_URI`` > ``configured`` > ``sqlite:///mlflow.db`` (relative to base_dir)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI") or configured or DEFAULT_URI
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        path = Path(base_dir).resolve() / uri[len("sqlite:///") :]
        uri = "sqlite:///" + str(path)
    return uri


def _sqlite_path(uri):
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def _coord_suffix(coords):
    return "".join(f"/{name}={format_coord(v)}" for name, v in (coords or {}).items())


def run_key(study, dataset, method, kernel, seed, coords=None):
    """The deterministic identity of one result.

    ``study/dataset/method/kernel/seed<seed>`` followed by ``/name=value`` for each
    coordinate in the order of ``coords`` (values through :func:`format_coord`).
    """
    return f"{study}/{dataset}/{method}/{kernel}/seed{seed}" + _coord_suffix(coords)


def _retry(fn, what, attempts=8):
    for i in range(attempts):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - retried, then re-raised
            msg = str(exc).lower()
            transient = "locked" in msg or "busy" in msg or "temporarily" in msg or "connection" in msg
            if not transient or i == attempts - 1:
                raise
            delay = min(10.0, 0.2 * 2**i) * (0.5 + random.random())
            log.warning("%s failed (%s); retrying in %.1fs", what, exc, delay)
            time.sleep(delay)


#: MLflow 3's UI opens an experiment in its GenAI view ("No traces") unless this tag says otherwise
EXPERIMENT_KIND_TAG, EXPERIMENT_KIND = "mlflow.experimentKind", "custom_model_development"
#: the tag the UI shows as the experiment's description
DESCRIPTION_TAG = "mlflow.note.content"


def _experiment_id(client, name, artifact_location, description=None):
    """The id of the experiment ``name`` (created or restored), tagged as a model-training experiment
    and, where given, with its description."""
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is not None:
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp.experiment_id)
        exp_id = exp.experiment_id
    else:
        try:
            exp_id = client.create_experiment(name, artifact_location=artifact_location)
        except MlflowException as exc:  # another process created it first
            if "already exists" not in str(exc).lower() and "RESOURCE_ALREADY_EXISTS" not in str(exc):
                raise
            exp_id = client.get_experiment_by_name(name).experiment_id
    tags = client.get_experiment(exp_id).tags
    if tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(exp_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    if description and tags.get(DESCRIPTION_TAG) != description:
        client.set_experiment_tag(exp_id, DESCRIPTION_TAG, description)
    return exp_id


def _dataset_input(name, info):
    """An MLflow dataset input (name, digest, source) for the Dataset column and filter of the UI."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    ds = Dataset(name=name, digest=str(info.get("digest", ""))[:36], source_type=str(info.get("source_type", "local")),
                 source=str(info.get("source", name)), schema=info.get("schema"), profile=info.get("profile"))
    return DatasetInput(ds, tags=[InputTag("mlflow.data.context", str(info.get("context", "train")))])


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@contextmanager
def _store(study, tracking_uri):
    """Yield ``(client, artifact_root)`` while holding the SQLite store's file lock (if any)."""
    from filelock import FileLock
    from mlflow.tracking import MlflowClient

    uri = tracking_uri or resolve_tracking_uri()
    db = _sqlite_path(uri)
    lock = nullcontext()
    artifact_root = None
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(db) + ".lock", timeout=600)
        artifact_root = (db.parent / "mlartifacts" / study).as_uri()
    with lock:
        yield MlflowClient(tracking_uri=uri), artifact_root


def _search_all(client, exp_id, filter_string=""):
    """Every active run of ``exp_id`` matching ``filter_string``, across result pages."""
    runs, token = [], None
    while True:
        page = _retry(
            lambda token=token: client.search_runs(
                [exp_id], filter_string=filter_string, max_results=50000, page_token=token
            ),
            "search runs",
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _delete(client, runs):
    for r in runs:
        _retry(lambda r=r: client.delete_run(r.info.run_id), "delete run")
    return len(runs)


def _params(pairs):
    from mlflow.entities import Param

    return [Param(k, str(v)[:_MAX_PARAM]) for k, v in pairs.items()]


def _result_run(study, res):
    """``(run_key, run name, params)`` of one result row."""
    coords = res.get("coords") or {}
    clash = set(coords) & set(_ID_PARAMS)
    if clash:
        raise ValueError(f"coords may not be named {sorted(clash)}: {res}")
    key = run_key(study, res["dataset"], res["method"], res["kernel"], res["seed"], coords)
    name = f"{res['dataset']}/{res['method']}/{res['kernel']}/seed{res['seed']}" + _coord_suffix(coords)
    params = {
        "study": study, "dataset": res["dataset"], "method": res["method"],
        "kernel": res["kernel"], "seed": res["seed"], **res.get("params", {}),
    }
    for cname, v in coords.items():
        if cname in params and str(params[cname]) != format_coord(v) and params[cname] != v:
            log.warning("%s: param %s=%r differs from coord %s=%r; logging the coord",
                        key, cname, params[cname], cname, v)
        params[cname] = format_coord(v)
    return key, name, params


def log_job(study, job_key, results, result_file=None, tracking_uri=None, tags=None, job_params=None,
            description=None, datasets=None):
    """Log the results of one workflow job to MLflow, replacing any earlier runs of that job.

    Creates one parent run for the job and one child run per result.

    Parameters
    ----------
    study : str
        Experiment name.
    job_key : str
        Identity of the job (e.g. ``"krr/diabetes"``); its old runs (parent and
        children) are deleted first.
    results : list of dict
        One dict per result with keys ``dataset, method, kernel, seed``, optionally
        ``coords`` (dict name -> value, part of the ``run_key`` and logged as params),
        ``params`` (dict) and ``metrics`` (dict of floats; non-finite ones are skipped).
    result_file : path, optional
        Logged as the only artifact, of the parent run.
    tags : dict, optional
        Extra tags for every run, parent and children (git commit, config hash, versions);
        they cannot override the level, parent, ``run_key`` or ``job_key`` tags.
    job_params : dict, optional
        Params of the parent run (values stringified, cut to 6000 characters).
    description : str, optional
        The experiment's description (shown on its page in the UI).
    datasets : dict, optional
        ``{data set name: {"digest", "source", ...}}``: the job run gets them as MLflow dataset inputs
        (the UI's Dataset column and filter on the runs table); result runs carry ``params.dataset``.

    Returns
    -------
    list of str
        The ids of the result (child) runs, in the order of ``results``.
    """
    from mlflow.entities import Metric

    prepared = [_result_run(study, res) for res in results]
    keys = [key for key, _, _ in prepared]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})
        log.warning("job %s logs %d results under duplicate run_keys (add coords?): %s",
                    job_key, len(keys) - len(set(keys)), dup[:5])
    extra = {k: str(v) for k, v in (tags or {}).items()}
    with _store(study, tracking_uri) as (client, artifact_root):
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root, description), "create experiment")
        inputs = {name: _dataset_input(name, info) for name, info in (datasets or {}).items()}
        _delete(client, _search_all(client, exp_id, f"tags.job_key = '{job_key}'"))

        parent_tags = {**extra, LEVEL_TAG: "job", "job_key": job_key}
        parent = _retry(
            lambda: client.create_run(exp_id, run_name=job_key, tags=parent_tags), "create job run"
        ).info.run_id
        # the job run carries its data sets (the UI lists job runs, their results fold under them); not each
        # result run: one more store transaction per row took the tracking cost from 42 to 79 ms per row
        if inputs:
            _retry(lambda: client.log_inputs(parent, datasets=list(inputs.values())), "log job datasets")
        if job_params:
            _retry(lambda: client.log_batch(parent, params=_params(job_params)), "log job params")
        if result_file is not None:
            _retry(lambda: client.log_artifact(parent, str(result_file)), "log artifact")

        run_ids = []
        now = int(time.time() * 1000)
        for res, (key, name, params) in zip(results, prepared, strict=True):
            run_tags = {**extra, LEVEL_TAG: "result", _PARENT_TAG: parent, "run_key": key,
                        "job_key": job_key}
            rid = _retry(
                lambda run_tags=run_tags, name=name: client.create_run(exp_id, run_name=name, tags=run_tags),
                "create run",
            ).info.run_id
            metrics = [
                Metric(k, float(v), now, 0)
                for k, v in res.get("metrics", {}).items()
                if _clean(float(v)) is not None
            ]
            _retry(
                lambda rid=rid, params=params, metrics=metrics: client.log_batch(
                    rid, metrics=metrics, params=_params(params)
                ),
                "log batch",
            )
            _retry(lambda rid=rid: client.set_terminated(rid, "FINISHED"), "finish run")
            run_ids.append(rid)
        _retry(lambda: client.set_terminated(parent, "FINISHED"), "finish job run")
    return run_ids


def prune(study, keep_job_keys, tracking_uri=None):
    """Delete the active runs of ``study`` whose ``job_key`` is not in ``keep_job_keys``.

    Parents and children go alike; runs without a ``job_key`` tag are left alone.
    Used when a data set leaves a study.  Returns the number of runs deleted (0 if
    the experiment does not exist; a deleted experiment is not restored).
    """
    keep = set(keep_job_keys)
    with _store(study, tracking_uri) as (client, _):
        exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
        if exp is None:
            return 0
        stale = [r for r in _search_all(client, exp.experiment_id)
                 if "job_key" in r.data.tags and r.data.tags["job_key"] not in keep]
        return _delete(client, stale)


def active_runs(study, tracking_uri=None, level="result"):
    """Active runs of the experiment ``study`` as a pandas DataFrame (empty if none).

    ``level="result"`` (default): the result runs (runs without a level tag, from
    older stores, count as results); ``level="job"``: the job (parent) runs;
    ``level=None``: all active runs.
    """
    import mlflow
    import pandas as pd

    uri = tracking_uri or resolve_tracking_uri()
    mlflow.set_tracking_uri(uri)
    exp = mlflow.get_experiment_by_name(study)
    if exp is None:
        return pd.DataFrame()
    runs = mlflow.search_runs([exp.experiment_id], max_results=50000)
    if level is None or runs.empty:
        return runs
    col = f"tags.{LEVEL_TAG}"
    levels = runs[col].fillna("result") if col in runs else pd.Series("result", index=runs.index)
    return runs[levels == level].reset_index(drop=True)
