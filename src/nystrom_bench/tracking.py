"""MLflow logging: one experiment per study, one run per result, idempotent, parallel-safe.

- Store: ``MLFLOW_TRACKING_URI`` if set (e.g. a tracking server on a cluster),
  else the config's ``mlflow.tracking_uri``, else ``sqlite:///mlflow.db``;
  a relative SQLite path is resolved against the workflow's directory.
- Idempotent: every run carries a deterministic ``run_key`` tag
  (study/dataset/method/kernel/seed) and the ``job_key`` of the job that made it.
  Logging a job first deletes the active runs with its ``job_key``, so re-running
  a job replaces its runs instead of duplicating them.
- Parallel jobs: with a SQLite store, every write happens under an inter-process
  file lock next to the database (``mlflow.db.lock``): no "database is locked",
  no lost runs, and the create-experiment race cannot happen.  With a tracking
  server the race is handled by catching ``RESOURCE_ALREADY_EXISTS``; transient
  errors are retried with back-off.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from contextlib import nullcontext
from pathlib import Path

__all__ = ["resolve_tracking_uri", "log_job", "run_key", "active_runs"]

DEFAULT_URI = "sqlite:///mlflow.db"
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


def run_key(study, dataset, method, kernel, seed):
    """The deterministic identity of one result."""
    return f"{study}/{dataset}/{method}/{kernel}/seed{seed}"


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


def _experiment_id(client, name, artifact_location):
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is not None:
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp.experiment_id)
        return exp.experiment_id
    try:
        return client.create_experiment(name, artifact_location=artifact_location)
    except MlflowException as exc:  # another process created it first
        if "already exists" not in str(exc).lower() and "RESOURCE_ALREADY_EXISTS" not in str(exc):
            raise
        return client.get_experiment_by_name(name).experiment_id


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def log_job(study, job_key, results, result_file=None, tracking_uri=None, tags=None):
    """Log the results of one workflow job to MLflow, replacing any earlier runs of that job.

    Parameters
    ----------
    study : str
        Experiment name.
    job_key : str
        Identity of the job (e.g. ``"krr/diabetes"``); its old runs are deleted first.
    results : list of dict
        One dict per result with keys ``dataset, method, kernel, seed``, ``params``
        (dict) and ``metrics`` (dict of floats).
    result_file : path, optional
        Logged as an artifact of every run.
    tags : dict, optional
        Extra tags for every run (git commit, config hash, versions).

    Returns
    -------
    list of str
        The run ids created, in the order of ``results``.
    """
    from filelock import FileLock
    from mlflow.entities import Metric, Param, RunTag
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
        client = MlflowClient(tracking_uri=uri)
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root), "create experiment")
        old = _retry(
            lambda: client.search_runs(
                [exp_id], filter_string=f"tags.job_key = '{job_key}'", max_results=50000
            ),
            "search runs",
        )
        for r in old:
            _retry(lambda r=r: client.delete_run(r.info.run_id), "delete run")
        run_ids = []
        now = int(time.time() * 1000)
        for res in results:
            key = run_key(study, res["dataset"], res["method"], res["kernel"], res["seed"])
            run_tags = {"run_key": key, "job_key": job_key, **(tags or {})}
            name = f"{res['dataset']}/{res['method']}/{res['kernel']}/seed{res['seed']}"
            run = _retry(
                lambda run_tags=run_tags, name=name: client.create_run(exp_id, run_name=name, tags=run_tags),
                "create run",
            )
            rid = run.info.run_id
            params = {
                "study": study, "dataset": res["dataset"], "method": res["method"],
                "kernel": res["kernel"], "seed": res["seed"], **res.get("params", {}),
            }
            metrics = [
                Metric(k, float(v), now, 0)
                for k, v in res.get("metrics", {}).items()
                if _clean(float(v)) is not None
            ]
            _retry(
                lambda rid=rid, params=params, metrics=metrics, run_tags=run_tags: client.log_batch(
                    rid,
                    metrics=metrics,
                    params=[Param(k, str(v)[:6000]) for k, v in params.items()],
                    tags=[RunTag(k, str(v)) for k, v in run_tags.items()],
                ),
                "log batch",
            )
            if result_file is not None:
                _retry(lambda rid=rid: client.log_artifact(rid, str(result_file)), "log artifact")
            _retry(lambda rid=rid: client.set_terminated(rid, "FINISHED"), "finish run")
            run_ids.append(rid)
    return run_ids


def active_runs(study, tracking_uri=None):
    """All active runs of the experiment ``study`` as a pandas DataFrame (empty if none)."""
    import mlflow
    import pandas as pd

    uri = tracking_uri or resolve_tracking_uri()
    mlflow.set_tracking_uri(uri)
    exp = mlflow.get_experiment_by_name(study)
    if exp is None:
        return pd.DataFrame()
    return mlflow.search_runs([exp.experiment_id], max_results=50000)
