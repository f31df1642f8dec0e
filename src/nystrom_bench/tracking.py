"""MLflow at the grain people compare: one run per (study, data set, method, kernel, seed), the curves
over a study's coords as metric histories, one job run per workflow job holding its result table.

Reads and writes go through MLflow's own ``MlflowClient``, except against a tracking server, where
:class:`nystrom_bench._tracking_rest.RestClient` makes the same calls without ``import mlflow`` (the
measured exception of issue 38: that import is most of the logging cost on the cluster test's slice,
see that module), and except writes to a local SQLite store that MLflow has made, at the schema
revision and MLflow version :mod:`nystrom_bench.tracking_sqlite` was verified with: its
:class:`~nystrom_bench.tracking_sqlite.SqliteClient` makes the same calls with Python's ``sqlite3``,
one transaction per :func:`prune`, :func:`log_job` or :func:`log_report` (issue 39: ``import mlflow``
and its store were about 2.2 of a ``track_runs`` job's 2.8-5.5 CPU-s).  How a result row becomes a run (params, metric histories, key prefixes, tags) and
comes back is :mod:`nystrom_bench.tracking_layout`; both clients log the same plan with the same calls.

In the workflow, each study's ``track_runs`` job (:func:`nystrom_bench.jobs.track_study_runs`, one MLflow
start-up per study, beside the study's ``analysis`` job, which never imports MLflow) calls :func:`prune`
and :func:`log_job` for every job of the study and writes ``results/<study>/runs_logged.json``; the
``track_reports`` job calls :func:`log_report`.  A study kind may fold its seeds into the metric keys
(``samplers``: one run per data set, method and kernel; "Folded seeds" in the layout module).

Layout
------
- **Store**: ``MLFLOW_TRACKING_URI`` if set (e.g. a tracking server on a cluster), else the config's
  ``mlflow.tracking_uri``, else ``sqlite:///mlflow.db``; a relative SQLite path is resolved against the
  workflow's directory.  One experiment per study (config block), tagged as a model-training experiment,
  its description = the study's title, what it asks, and how to read its runs (:func:`describe`).
- **Job runs** (tag ``nystrom_bench.level = job``, name ``<job> (job)``): one per workflow job, with the
  job's config slice as params, its result file (every result row) as the artifact, its data sets as
  MLflow dataset inputs (name, digest of the arrays, source, shape), and the result file's digest
  (``nystrom_bench.result_digest``) that makes logging incremental.  Logged after its configuration
  runs, so the runs table (newest first) shows it as the heading of its runs.
- **Configuration runs** (``nystrom_bench.level = config``, tag ``job_key`` = their job's), one per
  (study, data set, method, kernel, seed), each with its data set as a dataset input; their params,
  metrics and tags: :mod:`nystrom_bench.tracking_layout`.  A study kind with ``tracking_fold =
  ("seed",)`` (``samplers``) logs one per (study, data set, method, kernel), its seeds as metric-key
  prefixes (``seed:0/trace_error``): see "Folded seeds" in that module.
- **Report runs** (``nystrom_bench.level = report``, name ``<study> · report``), one per study, logged
  by the workflow's last step (:func:`log_report`): the study's PDF, figures and claims as artifacts,
  the claims' verdicts as its description and as tags ``claim.<id>``; no metrics, no ``job_key``.  The
  experiment :data:`FINDINGS_EXPERIMENT` holds one such run with the summary PDF, ``FINDINGS.md`` and the
  claims ledger.

No parent runs: MLflow 3.17's runs table folds child runs under their parent and its charts draw only
the rows on show, so a parent per job would show a fresh browser one row per job and empty charts
(checked in headless Chromium); "Group by" (data set, method, any param) groups runs side by side.

Cost
----
Through ``MlflowClient`` a configuration run is 4 calls, the fewest MLflow allows: ``create_run`` (with
every tag) + ``log_batch`` (params and metrics; more batches only beyond 100 params or 1,000 entries) +
``log_inputs`` + ``set_terminated``, about 90 ms of CPU a run on a SQLite store, nearly all in MLflow's
SqlAlchemyStore (its ORM).  So on a local SQLite store a job's configuration runs are written in ONE
transaction instead (:mod:`nystrom_bench.tracking_bulk`: the same rows, into MLflow's own tables, after
MLflow's own validation; tests compare the two ways table by table): the samplers study's 561 runs in
9.1 CPU-s against 29 (issue 39).  The job run stays call by call.  On a store MLflow has made already,
:mod:`nystrom_bench.tracking_sqlite` writes the same rows without MLflow (its ``write_runs`` for the
configuration runs): a ``track_runs`` job of krr 0.7-0.9 CPU-s through Snakemake against 3.2-4.6, samplers
2.5 against 7.1 (2026-11-27, load 9-11).  Against a tracking server each call
is one request, and a job's runs go 4 side by side (through ``MlflowClient`` too,
``NYSTROM_BENCH_TRACKING_REST=0``: ``MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT`` is set while logging, else
``set_terminated`` fetches the run again to print its link).  The measurements: the docs' MLflow guide,
"Cost and guarantees".

Guarantees
----------
- SQLite: the store is switched to WAL with ``synchronous=NORMAL`` (consistent after a crash, commits
  without an fsync each); every write of a job happens under an inter-process file lock next to the
  database (``mlflow.db.lock``); through :mod:`nystrom_bench.tracking_sqlite` also in one ``BEGIN
  IMMEDIATE`` transaction, so a job killed midway leaves nothing of its runs.
- Idempotent and incremental: :func:`log_job` skips a job whose result file (digest) is logged already;
  otherwise it deletes every active run of that ``job_key`` first and logs the job again; a job run
  without its digest tag (an interrupted logging) is re-logged next time.  :func:`prune` deletes the
  runs of jobs no longer in a study.
- Tracking servers: connection errors and 429/5xx are retried for 120 s (a server restart;
  ``NYSTROM_BENCH_HTTP_RETRY_SECONDS``; through ``MlflowClient``: MLflow's own back-off,
  ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``); this module retries "database is locked" and the like too.
  A create retried after a lost reply may make a run twice: after logging a job, duplicates of its runs
  are deleted.  The experiment-creation race is handled by catching ``RESOURCE_ALREADY_EXISTS``.
- Reading back: :func:`results_from_mlflow` turns a study's configuration runs into the tidy table of
  ``results/<study>/results.csv``.
- The UI: MLflow 3.17's experiment page opens the GenAI overview unless the link says
  ``?workflowType=machine_learning`` (it ignores the ``mlflow.experimentKind`` tag); :func:`ui_link` gives
  that link to a study's runs table with ``viewStateShareKey`` naming the experiment's saved view
  (:data:`~nystrom_bench.tracking_layout.VIEW_TAG`, written by :func:`log_job`: headline metric and setting
  columns, charts over the curve coord; :func:`nystrom_bench.tracking_layout.view`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

from . import tracking_bulk, tracking_sqlite
from . import tracking_layout as layout
from ._tracking_rest import RestClient, use_rest
from .data.download import sha256_file as file_digest  # what marks a job's result file as logged
from .results import ID_COLS, format_coord
from .tracking_sqlite import SqliteClient

# the layout's public names, re-exported (this module's API before the layout had its own)
ASSUMPTION_TAG, LEVEL_TAG, OUTSIDE_SUFFIX = layout.ASSUMPTION_TAG, layout.LEVEL_TAG, layout.OUTSIDE_SUFFIX
describe, rows_from_frame, run_key, run_name = layout.describe, layout.rows_from_frame, layout.run_key, layout.run_name

__all__ = ["resolve_tracking_uri", "log_job", "run_key", "run_name", "format_coord", "active_runs", "prune",
           "results_from_mlflow", "rows_from_frame", "ui_link", "file_digest", "describe", "LEVEL_TAG", "log_report",
           "FINDINGS_EXPERIMENT", "OUTSIDE_SUFFIX", "ASSUMPTION_TAG"]

DEFAULT_URI = "sqlite:///mlflow.db"
#: where ``mlflow ui`` serves a local store by default
DEFAULT_UI = "http://127.0.0.1:5000"
#: the layout written by this module; a job logged in another layout is logged again
LAYOUT = layout.LAYOUT
_DIGEST_TAG, _REPORT_DIGEST_TAG = "nystrom_bench.result_digest", "nystrom_bench.report_digest"
#: the experiment of the benchmark's findings (the summary PDF, FINDINGS.md, the claims ledger)
FINDINGS_EXPERIMENT = "findings"
#: the experiment kind tag (MLflow 3.17's UI keys its default view on the workflow type instead, see above)
EXPERIMENT_KIND_TAG, EXPERIMENT_KIND = "mlflow.experimentKind", "custom_model_development"
#: the tag the UI shows as the experiment's description
DESCRIPTION_TAG = "mlflow.note.content"
#: configuration runs of one job logged side by side against a tracking server
SERVER_THREADS = 4
log = logging.getLogger(__name__)


def resolve_tracking_uri(configured=None, base_dir="."):
    """``MLFLOW_TRACKING_URI`` > ``configured`` > ``sqlite:///mlflow.db`` (relative to base_dir)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI") or configured or DEFAULT_URI
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        path = Path(base_dir).resolve() / uri[len("sqlite:///") :]
        uri = "sqlite:///" + str(path)
    return uri


def _sqlite_path(uri):
    """The absolute path of a SQLite store's file (a relative one is taken from the working directory)."""
    return Path(uri[len("sqlite:///") :]).resolve() if uri.startswith("sqlite:///") else None


def _absolute(uri):
    db = _sqlite_path(uri)
    return uri if db is None else f"sqlite:///{db}"


def _remote(uri):
    return uri.startswith(("http://", "https://"))


_TRANSIENT = ("locked", "busy", "temporarily", "connection", "timed out", "timeout", "deadlock",
              "too many requests", "502", "503", "504")


def _retry(fn, what, attempts=8):
    for i in range(attempts):
        try:
            return fn()
        except tracking_sqlite.Unsupported:  # never transient, whatever its text names
            raise
        except Exception as exc:  # noqa: BLE001 - retried, then re-raised
            msg = str(exc).lower()
            if not any(t in msg for t in _TRANSIENT) or i == attempts - 1:
                raise
            delay = min(10.0, 0.2 * 2**i) * (0.5 + random.random())
            log.warning("%s failed (%s); retrying in %.1fs", what, exc, delay)
            time.sleep(delay)


def _experiment_id(client, name, artifact_location, description=None, view=None):
    """The id of the experiment ``name`` (created or restored), tagged as a model-training experiment
    and, where given, with its description and its saved view (``view``: the state of
    :func:`nystrom_bench.tracking_layout.view`, written where the experiment's differs)."""
    exp = client.get_experiment_by_name(name)
    if exp is None:
        try:
            tags = {EXPERIMENT_KIND_TAG: EXPERIMENT_KIND, **({DESCRIPTION_TAG: description} if description else {}),
                    **({layout.VIEW_TAG: layout.view_envelope(view, time.time() * 1000, None)} if view else {})}
            exp_id = client.create_experiment(name, artifact_location=artifact_location, tags=tags)  # one request
        except Exception as exc:  # noqa: BLE001 - another process created it first (else re-raised)
            if "already exists" not in str(exc).lower() and "RESOURCE_ALREADY_EXISTS" not in str(exc):
                raise
            exp = client.get_experiment_by_name(name)
    if exp is not None:  # its tags came with it: no second request for them
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp.experiment_id)
        exp_id, tags = exp.experiment_id, dict(exp.tags or {})
    if tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(exp_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    if description and tags.get(DESCRIPTION_TAG) != description:
        client.set_experiment_tag(exp_id, DESCRIPTION_TAG, description)
    if view is not None:
        try:
            old = json.loads(tags.get(layout.VIEW_TAG) or "{}")
            same, created = json.loads(old.get("state") or "null") == view, old.get("createdAt")
        except (ValueError, AttributeError, TypeError):
            same, created = False, None
        if not same:
            client.set_experiment_tag(exp_id, layout.VIEW_TAG,
                                      layout.view_envelope(view, time.time() * 1000, created))
    return exp_id


def _entities(client):
    """``(Metric, Param, dataset input)`` that ``client``'s calls take: MLflow's entities, or the REST
    client's own."""
    if isinstance(client, RestClient | SqliteClient):
        return client.Metric, client.Param, client.dataset_input
    from mlflow.entities import Metric, Param

    return Metric, Param, _dataset_input


def _dataset_input(name, info):
    """An MLflow dataset input (name, digest, source) for the Dataset column and filter of the UI."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    ds = Dataset(name=name, digest=str(info.get("digest", ""))[:36], source_type=str(info.get("source_type", "local")),
                 source=str(info.get("source", name)), schema=info.get("schema"), profile=info.get("profile"))
    return DatasetInput(ds, tags=[InputTag("mlflow.data.context", str(info.get("context", "train")))])


def _tune_sqlite(client, db):
    """WAL journal (readers such as ``mlflow ui`` never block the writer) and ``synchronous=NORMAL`` (no
    fsync per commit; the database stays consistent after a crash).  Best effort: MLflow internals."""
    import sqlite3

    try:
        con = sqlite3.connect(str(db), timeout=60)
        try:
            con.execute("PRAGMA journal_mode=WAL")
        finally:
            con.close()
    except sqlite3.Error as exc:  # e.g. a reader holds it: logging still works, only slower
        log.info("could not switch %s to WAL: %s", db, exc)
    try:
        from sqlalchemy import event

        engine = client._tracking_client.store.engine
        if not getattr(engine, "_nystrom_bench_tuned", False):
            event.listen(engine, "connect", lambda con, _: con.execute("PRAGMA synchronous=NORMAL"))
            engine.dispose()
            engine._nystrom_bench_tuned = True
    except Exception as exc:  # noqa: BLE001 - an MLflow without these internals: default settings
        log.info("SQLite store left at its default settings: %s", exc)


def _quiet_links():
    """``set_terminated`` against a server without the ``runs/get`` MLflow makes to print the run's link."""
    return mock.patch.dict(os.environ, {"MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"})


@contextmanager
def _store(study, tracking_uri, lock=True, fast=True):
    """Yield ``(client, artifact_root)``: the client of the store (``MlflowClient``,
    :class:`~nystrom_bench._tracking_rest.RestClient` for a server, or -- a writer (``lock``) on an
    existing local SQLite store MLflow made, ``fast`` true -- a
    :class:`~nystrom_bench.tracking_sqlite.SqliteClient` whose one transaction commits at the end of
    the block) and where a SQLite store keeps the study's artifacts (None: the server's default).  A
    SQLite store's inter-process lock is held throughout if ``lock`` is true."""
    uri = _absolute(tracking_uri or resolve_tracking_uri())
    db = _sqlite_path(uri)
    if use_rest(uri):
        client = RestClient(uri)
        try:
            yield client, None
        finally:
            client.close()
        return
    if db is None:
        from mlflow.tracking import MlflowClient

        with _quiet_links() if _remote(uri) else nullcontext():
            yield MlflowClient(tracking_uri=uri), None
        return
    from filelock import FileLock

    db.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(db) + ".lock", timeout=600) if lock else nullcontext():
        if lock and not db.exists():
            for side in ("-wal", "-shm"):  # left by a killed writer before the store was deleted
                Path(str(db) + side).unlink(missing_ok=True)
        root = (db.parent / "mlartifacts" / study).as_uri()
        fast_client = tracking_sqlite.connect(db, uri) if fast and lock else None
        if fast_client is not None:  # no import mlflow (tracking_sqlite)
            with fast_client.transaction():
                yield fast_client, root
            return
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
        if lock:  # writers only: a reader leaves the store as it is
            _tune_sqlite(client, db)
        yield client, root


def _in_store(study, tracking_uri, body, lock=True):
    """``body(client, artifact_root)`` in the store (:func:`_store`).  Where the SQLite client meets
    something it does not replicate (:class:`~nystrom_bench.tracking_sqlite.Unsupported`), its
    transaction is rolled back and ``body`` runs again through MLflow."""
    try:
        with _store(study, tracking_uri, lock) as (client, artifact_root):
            return body(client, artifact_root)
    except tracking_sqlite.Unsupported as why:
        log.info("%s: logged through MLflow (%s)", study, why)
    with _store(study, tracking_uri, lock, fast=False) as (client, artifact_root):
        return body(client, artifact_root)


def _search_all(client, exp_id, filter_string=""):
    """Every active run of ``exp_id`` matching ``filter_string``, across result pages."""
    runs, token = [], None
    while True:
        page = _retry(lambda token=token: client.search_runs([exp_id], filter_string=filter_string,
                                                             max_results=50000, page_token=token), "search runs")
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _side_by_side(client, fn, items):
    """``[fn(item) for item in items]``, 4 at a time against a tracking server (one writer on SQLite)."""
    if len(items) < 2 or not _remote(client.tracking_uri):
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(SERVER_THREADS, len(items))) as pool:
        return list(pool.map(fn, items))


def _delete(client, runs):
    _side_by_side(client, lambda r: _retry(lambda: client.delete_run(r.info.run_id), "delete run"), runs)
    return len(runs)


def _job_filter(job_key, level=None):
    """The search filter of a job's runs (at ``level``, else all of them)."""
    return f"tags.job_key = '{job_key}'" + (f" AND {_level_filter(level)}" if level else "")


def _level_filter(level):
    return f"tags.`{LEVEL_TAG}` = '{level}'"


def _logged_job(client, exp_id, job_key, digest, keys):
    """The ids of a job's configuration runs (in the order of their run ``keys``) if the job is logged
    complete from a result file with ``digest`` (its one job run has the digest, tagged last), else None.
    Narrowed by level: a search costs about 7 ms a run it returns on SQLite, so the configuration runs
    are read only when the job run says they are complete."""
    if digest is None:
        return None
    jobs = _search_all(client, exp_id, _job_filter(job_key, "job"))
    if len(jobs) != 1 or jobs[0].data.tags.get(_DIGEST_TAG) != digest or jobs[0].data.tags.get(
            layout.LAYOUT_TAG) != LAYOUT:
        return None
    runs = _search_all(client, exp_id, _job_filter(job_key, "config"))
    ids = {r.data.tags.get("run_key"): r.info.run_id for r in runs}
    return [ids[k] for k in keys] if len(runs) == len(keys) and set(ids) == set(keys) else None


def log_job(study, job_key, results, result_file=None, tracking_uri=None, tags=None, job_params=None,
            description=None, datasets=None, coords=None, metrics_info=None, digest=None, fold=(), curve=()):
    """Log one workflow job: a job run and one configuration run per (data set, method, kernel, seed).

    Parameters
    ----------
    study : str
        Experiment name.
    job_key : str
        Identity of the job (e.g. ``"krr/diabetes"``); its old runs (job and configuration runs) are
        deleted first -- unless it is logged already from the same result file (``digest``).
    results : list of dict
        Result rows ``{dataset, method, kernel, seed, coords?, params?, metrics}`` (see
        :mod:`nystrom_bench.results`; :func:`rows_from_frame` makes them from a result table).
    result_file : path, optional
        The job's result table, the job run's artifact; its digest marks the job as logged.
    tags : dict, optional
        Extra tags for every run (git commit, config hash, versions); they cannot override this
        module's tags.
    job_params : dict, optional
        Params of the job run (values stringified, cut to 6000 characters).
    description : str, optional
        The experiment's description; :func:`describe` of the runs is appended.
    datasets : dict, optional
        ``{data set name: {"digest", "source", "source_type", "schema"}}``: MLflow dataset inputs of
        the job run and of each configuration run on that data set.
    coords : sequence of str, optional
        The study's coords in their order (default: as they appear in the rows).
    metrics_info : dict, optional
        ``{metric: (label, lower_is_better)}`` for the description.
    digest : str, optional
        The result file's digest (default: computed from ``result_file``).
    fold : sequence of str, optional
        The study kind's ``tracking_fold``: ``("seed",)`` logs one run per (data set, method, kernel),
        the seeds as key prefixes (:mod:`nystrom_bench.tracking_layout`, "Folded seeds").
    curve : sequence of str, optional
        The study kind's ``curve_coords``: the coords a run's metric curves prefer, in order.

    Returns
    -------
    list of str
        The ids of the configuration runs, in the order their identities first appear in ``results``.
    """
    plans = layout.plan(study, results, coords, fold, curve)
    extra = {k: str(v) for k, v in (tags or {}).items()}
    if digest is None and result_file is not None:
        digest = file_digest(result_file)
    if description is not None:
        description = f"{description}\n\n{describe(plans, metrics_info)}".strip()
    state = layout.view(plans, metrics_info)

    def body(client, artifact_root):
        Metric, Param, dataset_input = _entities(client)
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root, description, state),
                        "create experiment")
        done = _logged_job(client, exp_id, job_key, digest, [p["key"] for p in plans])
        if done is not None:
            log.info("%s: logged already (result digest %s)", job_key, digest[:12])
            return done
        _delete(client, _search_all(client, exp_id, _job_filter(job_key)))
        inputs = {name: dataset_input(name, info) for name, info in (datasets or {}).items()}
        now = int(time.time() * 1000)

        def log_run(plan):  # the 4 calls of the module docstring
            run_tags = {**extra, **plan["tags"], "job_key": job_key}
            rid = _retry(lambda: client.create_run(exp_id, run_name=plan["name"], tags=run_tags),
                         "create run").info.run_id
            params = [Param(k, v) for k, v in plan["params"].items()]
            metrics = [Metric(k, v, now, s) for k, v, s in plan["metrics"]]
            for p, m in layout.batches(params, metrics):
                _retry(lambda p=p, m=m: client.log_batch(rid, metrics=m, params=p), "log batch")
            if plan["dataset"] in inputs:
                _retry(lambda: client.log_inputs(rid, datasets=[inputs[plan["dataset"]]]), "log datasets")
            _retry(lambda: client.set_terminated(rid, "FINISHED"), "finish run")
            return rid

        bulk = client if isinstance(client, SqliteClient) else tracking_bulk.sqlite_store(client)
        if bulk is not None:  # a local SQLite store: the same rows in one transaction (tracking_bulk)
            runs = [{"name": plan["name"], "tags": {**extra, **plan["tags"], "job_key": job_key},
                     "params": [Param(k, v) for k, v in plan["params"].items()],
                     "metrics": [Metric(k, v, now, s) for k, v, s in plan["metrics"]],
                     "dataset": inputs.get(plan["dataset"])} for plan in plans]
            write = client.write_runs if bulk is client else (lambda *a: tracking_bulk.write_runs(bulk, *a))
            run_ids = _retry(lambda: write(exp_id, runs, now), "write runs")
        else:
            # on a server a data set's first run alone: the server inserts the dataset row then, and two
            # first inserts side by side violate its unique key (experiment, name, digest)
            first = (sorted({p["dataset"]: i for i, p in reversed(list(enumerate(plans)))}.values())
                     if _remote(client.tracking_uri) else range(len(plans)))
            ids = dict(zip(first, [log_run(plans[i]) for i in first], strict=True))
            rest = [i for i in range(len(plans)) if i not in ids]
            ids.update(zip(rest, _side_by_side(client, lambda i: log_run(plans[i]), rest), strict=True))
            run_ids = [ids[i] for i in range(len(plans))]

        # the job run last: the runs table (newest first) shows it above its runs, as their heading
        job_tags = {**extra, LEVEL_TAG: "job", "job_key": job_key, layout.LAYOUT_TAG: LAYOUT}
        job_name = f"{job_key.split('/', 1)[-1]} (job)"
        job = _retry(lambda: client.create_run(exp_id, run_name=job_name, tags=job_tags), "create job run").info.run_id
        if inputs:
            _retry(lambda: client.log_inputs(job, datasets=list(inputs.values())), "log job datasets")
        if job_params:
            _retry(lambda: client.log_batch(job, params=[Param(k, str(v)[:layout.MAX_PARAM])
                                                         for k, v in job_params.items()]), "log job params")
        if result_file is not None:
            _retry(lambda: client.log_artifact(job, str(result_file)), "log artifact")
        if _remote(client.tracking_uri):  # a create retried after a lost reply may have made a run twice
            extra_runs = [r for r in _search_all(client, exp_id, _job_filter(job_key))
                          if r.info.run_id not in {job, *run_ids}]
            if extra_runs:
                log.warning("%s: deleting %d duplicate runs", job_key, _delete(client, extra_runs))
        if digest is not None:  # last: marks the job as logged complete
            _retry(lambda: client.set_tag(job, _DIGEST_TAG, digest), "tag job run")
        _retry(lambda: client.set_terminated(job, "FINISHED"), "finish job run")
        return run_ids

    return _in_store(study, tracking_uri, body)


def log_report(study, artifacts, tracking_uri=None, note=None, tags=None, description=None):
    """Log a study's report as one run of its experiment: the PDF, figures and claims beside its runs.

    The run (tag ``nystrom_bench.level = report``, named ``<study> · report``) holds ``artifacts``
    (``{artifact folder ("" = the root): [paths]}``), ``note`` (Markdown: the run page's description)
    and ``tags`` (e.g. ``claim.<id>`` = its verdict); ``description`` sets the experiment's (made if
    need be).  A note beyond MLflow's 8,000 characters is cut at a line, saying so.  It has no metrics,
    so the chart view skips it, and no ``job_key``, so :func:`prune` leaves it alone.  Idempotent: a
    report run logged from the same files, note and tags (digest tag ``nystrom_bench.report_digest``) is
    kept; otherwise the study's report runs are replaced.  Returns the run id.
    """
    files = sorted((folder.strip("/"), Path(path)) for folder, paths in artifacts.items() for path in paths)
    h = hashlib.sha256()
    for folder, path in files:
        h.update(f"{folder}/{path.name}={file_digest(path)}\n".encode())
    h.update(json.dumps([note, sorted((tags or {}).items())], default=str).encode())
    digest = h.hexdigest()
    cap = layout.MAX_NOTE
    if note and len(note) > cap:
        cut = note.rfind("\n", 0, cap - 200)  # at a line; mid-line if the first line is that long
        note = note[:cut if cut > 0 else cap - 200] + ("\n\n... (cut to MLflow's limit of 8,000 characters: "
                                                      "the whole text is in the artifacts)\n")

    def body(client, artifact_root):
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root, description), "create experiment")
        old = _search_all(client, exp_id, _level_filter("report"))
        done = [r for r in old if r.data.tags.get(_REPORT_DIGEST_TAG) == digest]
        if len(done) == 1 and len(old) == 1:
            log.info("%s: report logged already (digest %s)", study, digest[:12])
            return done[0].info.run_id
        _delete(client, old)
        run_tags = {**{k: str(v)[:layout.MAX_PARAM] for k, v in (tags or {}).items()}, LEVEL_TAG: "report",
                    **({DESCRIPTION_TAG: note} if note else {})}
        rid = _retry(lambda: client.create_run(exp_id, run_name=f"{study} · report", tags=run_tags),
                     "create report run").info.run_id
        for folder, path in files:
            _retry(lambda folder=folder, path=path: client.log_artifact(rid, str(path), folder or None),
                   "log report artifact")
        _retry(lambda: client.set_tag(rid, _REPORT_DIGEST_TAG, digest), "tag report run")  # last: complete
        _retry(lambda: client.set_terminated(rid, "FINISHED"), "finish report run")
        return rid

    return _in_store(study, tracking_uri, body)


def prune(study, keep_job_keys, tracking_uri=None):
    """Delete the active runs of ``study`` whose ``job_key`` is not in ``keep_job_keys``.

    Job and configuration runs go alike; runs without a ``job_key`` tag are left alone.  Used when a
    data set leaves a study.  Returns the number of runs deleted (0 if the experiment does not exist;
    a deleted experiment is not restored).
    """
    keep = set(keep_job_keys)

    def body(client, _):
        exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
        if exp is None:
            return 0
        # the job runs name the jobs logged; a job interrupted before its job run is found by its runs
        jobs = {r.data.tags.get("job_key") for r in _search_all(client, exp.experiment_id, _level_filter("job"))} - {None}
        unfinished = "tags.job_key LIKE '%'" + "".join(f" AND tags.job_key != '{k}'" for k in sorted(jobs))
        stale = [r for k in sorted(jobs - keep) for r in _search_all(client, exp.experiment_id, _job_filter(k))]
        stale += [r for r in _search_all(client, exp.experiment_id, unfinished) if r.data.tags["job_key"] not in keep]
        return _delete(client, stale)

    return _in_store(study, tracking_uri, body)


def active_runs(study, tracking_uri=None, level="config"):
    """Active runs of the experiment ``study`` as a pandas DataFrame (empty if none).

    ``level="config"`` (default): the configuration runs (``"result"``, the per-row runs of older
    stores, and runs without a level tag count as these); ``level="job"``: the job runs;
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
    levels = runs[col].fillna("config") if col in runs else pd.Series("config", index=runs.index)
    levels = levels.replace("result", "config")
    return runs[levels == ("config" if level == "result" else level)].reset_index(drop=True)


def results_from_mlflow(study, tracking_uri=None):
    """The tidy result table of ``study`` rebuilt from its MLflow configuration runs.

    The same rows, coords and metrics as ``results/<study>/results.csv`` (column order aside; rows
    sorted by identity and coords as there), with ``params`` as JSON: the run's params plus the numeric
    params that vary along a curve.  Params that vary along a curve and are no numbers (tag
    ``nystrom_bench.dropped_params``) are only in the job's result table, the artifact of its job run.
    The ``assumption`` column comes back from the runs' ``nystrom_bench.assumptions`` tags (``""`` where
    the assumptions held), the metrics of such results from their ``..._outside_assumptions`` keys.
    Works on a local store and against a tracking server; an empty DataFrame if the study has no runs
    (or the SQLite store does not exist: it is not created).
    """
    import pandas as pd

    db = _sqlite_path(tracking_uri or resolve_tracking_uri())
    if db is not None and not db.exists():  # reading creates no store
        return pd.DataFrame()
    recs, coords = [], []
    with _store(study, tracking_uri, lock=False) as (client, _):
        exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
        if exp is None:
            return pd.DataFrame()
        for run in _search_all(client, exp.experiment_id, _level_filter("config")):
            t = run.data.tags
            if t.get(layout.LAYOUT_TAG) != LAYOUT:
                continue
            keys = [k for k in run.data.metrics if not k.startswith(layout.MEAN)]
            if int(t.get(layout.STEPS_TAG, "0")) > 1:
                rid = run.info.run_id
                hist = {k: [(m.value, m.step) for m in _retry(
                    lambda k=k, rid=rid: client.get_metric_history(rid, k), "metric history")] for k in keys}
            else:
                hist = {k: [(run.data.metrics[k], 0)] for k in keys}
            rows, run_coords = layout.records(study, run.data.params, t, hist)
            recs += rows
            coords += [c for c in run_coords if c not in coords]
    if not recs:
        return pd.DataFrame()
    df = pd.DataFrame.from_records(recs)
    for c in coords:
        if c not in df:
            df[c] = float("nan")
    metric_cols = [c for c in df.columns if c not in (*ID_COLS, *coords, layout.ASSUMPTION, "params")]
    df = df[[*ID_COLS, *coords, *metric_cols, layout.ASSUMPTION, "params"]]
    return df.sort_values([*ID_COLS, *coords], na_position="first").reset_index(drop=True)


def ui_link(study, tracking_uri=None, ui=None):
    """The link that opens ``study``'s runs table in the MLflow UI (None if the study has no experiment).

    ``ui``: where the UI is served (default: the tracking server itself, or ``mlflow ui``'s
    http://127.0.0.1:5000 for a local store).  The link names the runs tab and
    ``workflowType=machine_learning``: without it MLflow 3.17 opens the GenAI overview (module docstring);
    and the study's saved view (``viewStateShareKey``, where logged): headline columns, charts over the coord.
    """
    uri = _absolute(tracking_uri or resolve_tracking_uri())
    db = _sqlite_path(uri)
    if db is not None and not db.exists():
        return None
    if ui is None:
        ui = uri if _remote(uri) else DEFAULT_UI
    reader = tracking_sqlite.connect(db, uri, write=False) if db is not None else None
    if reader is not None:  # no import mlflow (tracking_sqlite)
        with reader.transaction():
            exp = reader.get_experiment_by_name(study)
        return None if exp is None else layout.runs_link(
            ui, exp.experiment_id, layout.VIEW_ID if layout.VIEW_TAG in exp.tags else None)
    if use_rest(uri):
        client = RestClient(uri)
    else:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
    exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
    if exp is None:
        return None
    return layout.runs_link(ui, exp.experiment_id, layout.VIEW_ID if layout.VIEW_TAG in (exp.tags or {}) else None)

