"""MLflow at the grain people compare: one run per (study, data set, method, kernel, seed), the curves
over a study's coords as metric histories, one job run per workflow job holding its result table.

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
  (study, data set, method, kernel, seed), named ``boston · adapt_ms · gaussian · seed 0``, identity
  tag ``run_key`` (``study/dataset/method/kernel/seed<seed>``), each with its data set as a dataset input:

  * params: the identity plus the method's resolved configuration, flat, with the library's names
    (nested settings dotted: ``split.test_fraction``); values JSON (strings as they are);
  * the **curve coord** (tag ``nystrom_bench.curve``) is one numeric coord of the study; each metric
    over it is a metric history, step = the index of the coord's value in the job's sorted grid, and
    the coord's values are a history of their own under its name (e.g. ``log2_gamma``), so the chart
    view can draw ``relative_gap`` against step or, with "X axis: metric", against ``log2_gamma``;
  * the study's **other coords** go into the metric key as ``name:value/`` prefixes, e.g.
    ``criterion:c_ree/relative_gap`` (the chart view groups keys into sections by that prefix);
  * headline metrics: a metric without coords is a single value (``test_mse``, ``fit_time``); over a
    curve of two or more points, ``mean/<key>`` is the mean over the curve (the runs table shows it; a
    history's own column shows its last point, the largest coord);
  * params that change along the curve (e.g. ``gamma`` with ``log2_gamma``, GNKR's selected
    ``best_lambda`` per m) are histories ``<prefix>param.<name>`` when numeric; other such params
    (lists per point) are only in the job's result table (tag ``nystrom_bench.dropped_params``);
  * results outside their method's assumptions (a non-empty ``assumption`` column,
    :func:`nystrom_bench.results.outside_assumptions`) log their metrics under
    ``<key>_outside_assumptions`` (e.g. ``criterion:c_ipe/relative_gap_outside_assumptions``), a chart
    of its own, so that MCM's gaps of 1e4 off its grid do not flatten every other curve of
    ``relative_gap``; the run is tagged ``assumption`` (the reason, or how many of its results and why)
    and ``nystrom_bench.assumptions`` keeps each point's reason for :func:`results_from_mlflow`.

- **Report runs** (``nystrom_bench.level = report``, name ``<study> · report``), one per study, logged
  by the workflow's last step (:func:`log_report`): the study's PDF, figures and claims as artifacts,
  the claims' verdicts as its description and as tags ``claim.<id>``; no metrics, no ``job_key``.  The
  experiment :data:`FINDINGS_EXPERIMENT` holds one such run with the summary PDF, ``FINDINGS.md`` and the
  claims ledger.

No parent runs: MLflow 3.17's runs table folds child runs under their parent, and its chart view
draws only the rows on show, so with a parent per job (or per data set x method) a fresh browser
sees one row per job and empty charts (checked in headless Chromium); runs side by side draw at
once, and the UI's "Group by" (data set, method, any param) groups them with aggregated values.  A
parent per (data set, method) would also add 351 runs to the default config (1,709 > 1,500).

Grain per study kind (default config, ``config/config.yaml``: 1,299 configuration runs + 59 job runs,
against 6,779 result runs + 59 job runs at one run per result row)
------------------------------------------------------------------------------------------------------
The curve coord is the first coord of :data:`CURVE_COORDS` that every result of the run has (numeric),
else the numeric coord with most values; a run without one logs single values.

- ``krr``, ``krc`` (no coords): a run = one fit; single-valued metrics.
- ``gnkr`` (coord ``m``; σ, λ are selected inside a result, not coords): test RMSE etc. over m;
  the selected σ/λ per m as ``param.best_sigma`` ... histories.
- ``consistency`` (coords criterion, log2_gamma, l): the curve is the gap over ``log2_gamma`` (Ding et
  al.'s Fig. 1), one history per criterion (``criterion:c_ree/relative_gap``): a criterion is a second
  curve of the same computation, and runs per criterion would double the runs (1,599 > 1,500).  With
  ``train_sizes`` (``consistency_order``) the curve is over the training size ``l`` (what that block
  asks: the order of consistency in l), each width a key prefix (``criterion:c_ree/log2_gamma:-3/...``).
- ``selection`` (coord criterion, categorical): no curve; ``criterion:c_ree/test_mse`` etc.
- ``integration`` (coords ratio, integration): curves over the landmark ``ratio``, one per integration
  step (``integration:gsa/test_accuracy``); the exact machine (no ratio) logs single values.
- ``gen_nystrom`` (coord n_labels): curves over the number of labels.
- ``scale`` (coords n, m): time, memory and error over ``n`` (the study's question: how they grow with
  n), one curve per landmark count (``m:1500/fit_time``), so one chart holds every solver at one m;
  with m in the run identity a solver's curves would be split over two runs (6 runs -> 11).

Guarantees
----------
- Batched: a configuration run is ``create_run`` + ``log_batch`` (+ more batches beyond MLflow's 1,000
  entries) + ``log_inputs`` + ``set_terminated``; a SQLite store is switched to WAL with
  ``synchronous=NORMAL`` (consistent after a crash, commits without an fsync each).
- Idempotent and incremental: :func:`log_job` skips a job whose result file (digest) is logged already;
  otherwise it deletes every active run of that ``job_key`` first and logs the job again; a job run
  without its digest tag (an interrupted logging) is re-logged next time.  After logging, duplicates of
  the job's runs (a create retried after a lost reply) are deleted.  :func:`prune` deletes the runs of
  jobs no longer in a study.
- Tracking servers (``http(s)://``): the writers speak MLflow's REST API directly (``_RestClient``,
  ``requests`` over keep-alive connections): no ``import mlflow`` in the aggregate step (about a second),
  4 requests per configuration run (create, log-batch, log-inputs, update), a job's runs logged 4 side by
  side, connection errors and 429/5xx retried for 120 s (a server restart; ``NYSTROM_BENCH_HTTP_RETRY_SECONDS``).
  ``NYSTROM_BENCH_TRACKING_REST=0`` goes through ``MlflowClient`` instead.
- Parallel: with a SQLite store every write of a job happens under an inter-process file lock next to
  the database (``mlflow.db.lock``).  With a tracking server the experiment-creation race is handled by
  catching ``RESOURCE_ALREADY_EXISTS``; transient errors are retried with back-off.
- Non-finite metrics: NaN is not logged (the table's empty cell); ±inf is not logged either and is kept
  in the tag ``nystrom_bench.nonfinite`` so :func:`results_from_mlflow` restores it.
- Reading back: :func:`results_from_mlflow` turns a study's configuration runs into the tidy table of
  ``results/<study>/results.csv``.
- The UI: MLflow 3.17's experiment page takes the experiment kind from the sidebar's workflow type
  (``WorkflowTypeContext``: the URL parameter ``workflowType``, else the browser's local storage
  ``mlflow.workflowType``, else ``genai``) and not from the ``mlflow.experimentKind`` tag, so a link
  without ``?workflowType=machine_learning`` opens the GenAI overview; :func:`ui_link` gives the link to
  a study's runs table.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import numbers
import os
import random
import re
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from .results import ASSUMPTION, ID_COLS, assumption_label, format_coord

__all__ = ["resolve_tracking_uri", "log_job", "run_key", "run_name", "format_coord", "active_runs", "prune",
           "results_from_mlflow", "rows_from_frame", "ui_link", "file_digest", "describe", "LEVEL_TAG", "log_report",
           "FINDINGS_EXPERIMENT", "OUTSIDE_SUFFIX", "ASSUMPTION_TAG",
           "CURVE_COORDS"]

DEFAULT_URI = "sqlite:///mlflow.db"
#: where ``mlflow ui`` serves a local store by default
DEFAULT_UI = "http://127.0.0.1:5000"
LEVEL_TAG = "nystrom_bench.level"
#: coords that make a curve, in order of preference (see the module docstring)
CURVE_COORDS = ("n", "l", "n_labels", "m", "ratio", "log2_gamma", "gamma", "lam", "lambda", "sigma")
#: the layout written by this module; a job logged in another layout is logged again
LAYOUT = "2"
_CURVE_TAG, _COORDS_TAG, _STEPS_TAG = "nystrom_bench.curve", "nystrom_bench.coords", "nystrom_bench.steps"
_VARYING_TAG, _DROPPED_TAG, _NONFINITE_TAG = ("nystrom_bench.varying_params", "nystrom_bench.dropped_params",
                                              "nystrom_bench.nonfinite")
_DIGEST_TAG, _LAYOUT_TAG = "nystrom_bench.result_digest", "nystrom_bench.layout"
_REPORT_DIGEST_TAG = "nystrom_bench.report_digest"
_PARAM_LEAF, _MEAN = "param.", "mean/"
#: the metric-key suffix of results outside their method's assumptions; the run's tags
OUTSIDE_SUFFIX = "_outside_assumptions"
ASSUMPTION_TAG, _ASSUMPTIONS_TAG = ASSUMPTION, "nystrom_bench.assumptions"
_MAX_PARAM = 6000
_MAX_NOTE = 8000  # MLflow's longest run tag value (a run's description is one)
#: the experiment of the benchmark's findings (the summary PDF, FINDINGS.md, the claims ledger)
FINDINGS_EXPERIMENT = "findings"
_MAX_PARAMS, _MAX_ENTITIES = 100, 1000  # MLflow's log_batch limits
_SAFE = re.compile(r"^[\w.\- ]+$")
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


def _coord_suffix(coords):
    return "".join(f"/{name}={format_coord(v)}" for name, v in (coords or {}).items())


def run_key(study, dataset, method, kernel, seed, coords=None):
    """The deterministic identity of a configuration run: ``study/dataset/method/kernel/seed<seed>``.

    With ``coords``, ``/name=value`` follows for each (values through :func:`format_coord`): the
    identity of one result row.
    """
    return f"{study}/{dataset}/{method}/{kernel}/seed{seed}" + _coord_suffix(coords)


def run_name(dataset, method, kernel, seed):
    """The name a configuration run shows in the UI: ``boston · adapt_ms · gaussian · seed 0``."""
    return f"{dataset} · {method} · {kernel} · seed {seed}"


def file_digest(path):
    """SHA-256 of a file's bytes (what marks a job's result file as logged)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_TRANSIENT = ("locked", "busy", "temporarily", "connection", "timed out", "timeout", "deadlock",
              "too many requests", "502", "503", "504")


def _retry(fn, what, attempts=8):
    for i in range(attempts):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - retried, then re-raised
            msg = str(exc).lower()
            if not any(t in msg for t in _TRANSIENT) or i == attempts - 1:
                raise
            delay = min(10.0, 0.2 * 2**i) * (0.5 + random.random())
            log.warning("%s failed (%s); retrying in %.1fs", what, exc, delay)
            time.sleep(delay)


#: the experiment kind tag (MLflow 3.17's UI keys its default view on the workflow type instead, see above)
EXPERIMENT_KIND_TAG, EXPERIMENT_KIND = "mlflow.experimentKind", "custom_model_development"
#: the tag the UI shows as the experiment's description
DESCRIPTION_TAG = "mlflow.note.content"


def _experiment_id(client, name, artifact_location, description=None):
    """The id of the experiment ``name`` (created or restored), tagged as a model-training experiment
    and, where given, with its description."""
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp.experiment_id)
        exp_id = exp.experiment_id
    else:
        try:
            exp_id = client.create_experiment(name, artifact_location=artifact_location)
        except Exception as exc:  # noqa: BLE001 - another process created it first (else re-raised)
            if "already exists" not in str(exc).lower() and "RESOURCE_ALREADY_EXISTS" not in str(exc):
                raise
            exp_id = client.get_experiment_by_name(name).experiment_id
    tags = client.get_experiment(exp_id).tags
    if tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(exp_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    if description and tags.get(DESCRIPTION_TAG) != description:
        client.set_experiment_tag(exp_id, DESCRIPTION_TAG, description)
    return exp_id


def _dataset_input(name, info, rest=False):
    """An MLflow dataset input (name, digest, source) for the Dataset column and filter of the UI (the
    REST API's JSON with ``rest``)."""
    if rest:
        ds = {"name": name, "digest": str(info.get("digest", ""))[:36],
              "source_type": str(info.get("source_type", "local")), "source": str(info.get("source", name))}
        ds.update({k: info[k] for k in ("schema", "profile") if info.get(k) is not None})
        return {"tags": [{"key": "mlflow.data.context", "value": str(info.get("context", "train"))}], "dataset": ds}
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


# -- the fast path for tracking servers: MLflow's REST API, without importing mlflow --------------
#: set to 0 to log to a tracking server through MlflowClient instead
REST_ENV = "NYSTROM_BENCH_TRACKING_REST"
#: how long a request is retried while the server cannot be reached or answers 429/5xx (a restart)
HTTP_RETRY_SECONDS = float(os.environ.get("NYSTROM_BENCH_HTTP_RETRY_SECONDS", "120"))
#: configuration runs of one job logged side by side (each thread its own keep-alive connection)
REST_THREADS = 4


def _rest_ok(uri):
    return uri.startswith(("http://", "https://")) and os.environ.get(REST_ENV, "1") != "0"


class _RestError(Exception):
    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status, self.code = status, code


class _Obj:
    """Attribute access to a REST answer, shaped like MLflow's entities where this module reads them."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _kv(items):
    return {t["key"]: t.get("value", "") for t in items or []}


def _run_obj(run):
    info, data = run.get("info", {}), run.get("data", {})
    return _Obj(info=_Obj(run_id=info.get("run_id") or info.get("run_uuid"), artifact_uri=info.get("artifact_uri"),
                          experiment_id=info.get("experiment_id"), status=info.get("status")),
                data=_Obj(tags=_kv(data.get("tags")), params=_kv(data.get("params")),
                          metrics={m["key"]: m.get("value") for m in data.get("metrics", [])}))


class _Page(list):
    token = None


class _RestClient:
    """The part of ``MlflowClient`` this module writes with, as MLflow's REST API calls over keep-alive
    connections (``requests``): a job's logging costs no ``import mlflow`` (about a second) and no
    extra request (``set_terminated`` is one ``runs/update``; MlflowClient fetches the run again to
    print its link).  Auth as MLflow reads it: ``MLFLOW_TRACKING_TOKEN`` or ``MLFLOW_TRACKING_USERNAME``
    / ``MLFLOW_TRACKING_PASSWORD``; ``MLFLOW_TRACKING_INSECURE_TLS``.  Connection errors, 429 and 5xx are
    retried for :data:`HTTP_RETRY_SECONDS` (a server restart), then raised."""

    rest = True
    threads = REST_THREADS

    def __init__(self, uri):
        import threading

        self.uri = uri.rstrip("/")
        self._local = threading.local()
        self._sessions = []
        self._lock = threading.Lock()
        self._artifact_uris = {}

    def _session(self):
        sess = getattr(self._local, "session", None)
        if sess is None:
            import requests

            sess = requests.Session()
            token = os.environ.get("MLFLOW_TRACKING_TOKEN")
            user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
            if token:
                sess.headers["Authorization"] = f"Bearer {token}"
            elif user and password:
                sess.auth = (user, password)
            if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").lower() == "true":
                sess.verify = False
            self._local.session = sess
            with self._lock:
                self._sessions.append(sess)
        return sess

    def close(self):
        for sess in self._sessions:
            sess.close()

    def _call(self, method, path, json_body=None, params=None, data=None, api="/api/2.0/mlflow/"):
        import requests

        url = self.uri + api + path
        deadline = time.monotonic() + HTTP_RETRY_SECONDS
        for attempt in range(1000):
            try:
                r = self._session().request(method, url, json=json_body, params=params, data=data, timeout=120)
            except (requests.ConnectionError, requests.Timeout) as exc:
                err = _RestError(f"{method} {url}: connection failed: {exc}")
            else:
                if r.status_code < 300:
                    return r.json() if r.content else {}
                try:
                    body = r.json()
                except ValueError:
                    body = {"message": r.text[:500]}
                err = _RestError(f"{method} {url}: HTTP {r.status_code} {body.get('error_code', '')}: "
                                 f"{body.get('message', '')}", r.status_code, body.get("error_code"))
                if r.status_code not in (429, 500, 502, 503, 504):
                    raise err
            if time.monotonic() > deadline:
                raise err
            delay = min(5.0, 0.1 * 2**attempt) * (0.5 + random.random())
            log.warning("%s; retrying in %.1fs", err, delay)
            time.sleep(delay)

    # experiments
    def get_experiment_by_name(self, name):
        try:
            exp = self._call("GET", "experiments/get-by-name", params={"experiment_name": name})["experiment"]
        except _RestError as exc:
            if exc.code == "RESOURCE_DOES_NOT_EXIST" or exc.status == 404:
                return None
            raise
        return self._experiment(exp)

    @staticmethod
    def _experiment(exp):
        return _Obj(experiment_id=exp["experiment_id"], name=exp.get("name"), tags=_kv(exp.get("tags")),
                    lifecycle_stage=exp.get("lifecycle_stage", "active"))

    def get_experiment(self, experiment_id):
        return self._experiment(self._call("GET", "experiments/get", params={"experiment_id": experiment_id})["experiment"])

    def create_experiment(self, name, artifact_location=None):
        body = {"name": name, **({"artifact_location": artifact_location} if artifact_location else {})}
        return self._call("POST", "experiments/create", body)["experiment_id"]

    def restore_experiment(self, experiment_id):
        self._call("POST", "experiments/restore", {"experiment_id": experiment_id})

    def set_experiment_tag(self, experiment_id, key, value):
        self._call("POST", "experiments/set-experiment-tag", {"experiment_id": experiment_id, "key": key,
                                                              "value": str(value)})

    # runs
    def search_runs(self, experiment_ids, filter_string="", max_results=50000, page_token=None):
        body = {"experiment_ids": list(experiment_ids), "filter": filter_string, "run_view_type": "ACTIVE_ONLY",
                "max_results": max_results, **({"page_token": page_token} if page_token else {})}
        out = self._call("POST", "runs/search", body)
        page = _Page(_run_obj(r) for r in out.get("runs", []))
        page.token = out.get("next_page_token") or None
        return page

    def create_run(self, experiment_id, run_name=None, tags=None):
        body = {"experiment_id": experiment_id, "start_time": int(time.time() * 1000),
                "tags": [{"key": k, "value": str(v)} for k, v in (tags or {}).items()]}
        if run_name:
            body["run_name"] = run_name
        run = _run_obj(self._call("POST", "runs/create", body)["run"])
        self._artifact_uris[run.info.run_id] = run.info.artifact_uri  # log_artifact needs no runs/get then
        return run

    def log_batch(self, run_id, metrics=(), params=(), tags=()):
        self._call("POST", "runs/log-batch", {
            "run_id": run_id,
            "metrics": [{"key": m.key, "value": m.value, "timestamp": m.timestamp, "step": m.step} for m in metrics],
            "params": [{"key": p.key, "value": p.value} for p in params],
            "tags": [{"key": t.key, "value": t.value} for t in tags]})

    def log_inputs(self, run_id, datasets):
        self._call("POST", "runs/log-inputs", {"run_id": run_id, "datasets": list(datasets)})

    def set_terminated(self, run_id, status="FINISHED"):
        self._call("POST", "runs/update", {"run_id": run_id, "status": status, "end_time": int(time.time() * 1000)})

    def set_tag(self, run_id, key, value):
        self._call("POST", "runs/set-tag", {"run_id": run_id, "key": key, "value": str(value)})

    def delete_run(self, run_id):
        self._call("POST", "runs/delete", {"run_id": run_id})

    def get_metric_history(self, run_id, key):
        out, token = [], None
        while True:
            page = self._call("GET", "metrics/get-history", params={"run_id": run_id, "metric_key": key,
                                                                   "max_results": 25000,
                                                                   **({"page_token": token} if token else {})})
            out += [_Obj(key=m["key"], value=m.get("value"), step=int(m.get("step", 0)),
                         timestamp=m.get("timestamp")) for m in page.get("metrics", [])]
            token = page.get("next_page_token")
            if not token:
                return out

    def log_artifact(self, run_id, local_path, artifact_path=None):
        """Upload through the server's artifact proxy (``mlflow-artifacts:``, the server's default); any
        other artifact store (e.g. s3:// without the proxy) through MlflowClient."""
        if self._artifact_uris.get(run_id) is None:
            run = _run_obj(self._call("GET", "runs/get", params={"run_id": run_id})["run"])
            self._artifact_uris[run_id] = run.info.artifact_uri
        uri = self._artifact_uris[run_id] or ""
        if not uri.startswith("mlflow-artifacts:"):
            from mlflow.tracking import MlflowClient

            return MlflowClient(tracking_uri=self.uri).log_artifact(run_id, str(local_path), artifact_path)
        rel = "/".join(filter(None, [re.sub(r"^mlflow-artifacts:(//[^/]*)?/?", "", uri).strip("/"),
                                     (artifact_path or "").strip("/")]))
        with open(local_path, "rb") as fh:
            self._call("PUT", f"{rel}/{Path(local_path).name}", data=fh.read(), api="/api/2.0/mlflow-artifacts/artifacts/")


# the entities log_job builds (MLflow's own classes for MlflowClient)
class _Metric:
    __slots__ = ("key", "value", "timestamp", "step")

    def __init__(self, key, value, timestamp, step):
        self.key, self.value, self.timestamp, self.step = key, value, timestamp, step


class _Param:
    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key, self.value = key, value


@contextmanager
def _store(study, tracking_uri, lock=True):
    """Yield ``(client, artifact_root, lock)``: the client of the store, where a SQLite store keeps the
    study's artifacts, and the inter-process lock of a SQLite store (a no-op otherwise), held
    throughout if ``lock`` is true."""
    from filelock import FileLock

    uri = _absolute(tracking_uri or resolve_tracking_uri())
    if _rest_ok(uri):
        client = _RestClient(uri)
        try:
            yield client, None, nullcontext()
        finally:
            client.close()
        return
    from mlflow.tracking import MlflowClient

    db = _sqlite_path(uri)
    file_lock = nullcontext()
    artifact_root = None
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
        file_lock = FileLock(str(db) + ".lock", timeout=600)
        artifact_root = (db.parent / "mlartifacts" / study).as_uri()
    with file_lock if lock else nullcontext():
        if db is not None and lock and not db.exists():
            for side in ("-wal", "-shm"):  # left by a killed writer before the store was deleted
                Path(str(db) + side).unlink(missing_ok=True)
        client = MlflowClient(tracking_uri=uri)
        if db is not None and lock:  # writers only: a reader leaves the store as it is
            _tune_sqlite(client, db)
        yield client, artifact_root, file_lock


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
    def delete(r):
        _retry(lambda: client.delete_run(r.info.run_id), "delete run")

    if getattr(client, "rest", False) and len(runs) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(client.threads, len(runs))) as pool:
            list(pool.map(delete, runs))
    else:
        for r in runs:
            delete(r)
    return len(runs)


# -- planning: result rows -> configuration runs ----------------------------------------------------
def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


_NAME = re.compile(r"^[A-Za-z_][\w\-]*$")


def _flatten(params, prefix=""):
    """Nested settings as dotted names (``split.test_fraction``); a dict whose keys are no plain names
    (e.g. ``{"0.5": rmse}``) stays one value."""
    out = {}
    for k, v in params.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v and all(isinstance(key, str) and _NAME.match(key) for key in v):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def _param_text(v):
    """A param value as MLflow stores it: strings as they are (JSON-quoted if they would read back as
    something else), everything else as JSON."""
    if isinstance(v, str):
        try:
            json.loads(v)
        except ValueError:
            return v[:_MAX_PARAM]
        return json.dumps(v)[:_MAX_PARAM]
    return json.dumps(v, default=str)[:_MAX_PARAM]


def _param_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def _key_part(name, value):
    text = format_coord(value)
    if not _SAFE.match(str(name)) or not _SAFE.match(text):
        raise ValueError(f"coord {name}={text!r} cannot be part of an MLflow metric key (letters, digits, "
                         "'_', '-', '.', ' ' only)")
    return f"{name}:{text}"


def _choose_curve(rows, coords):
    """The run's curve coord: see the module docstring."""
    present = [c for c in coords
               if all(_is_number((r.get("coords") or {}).get(c)) and not _missing(r["coords"][c]) for r in rows)]
    for c in CURVE_COORDS:
        if c in present:
            return c
    if not present:
        return None
    return max(present, key=lambda c: (len({float(r["coords"][c]) for r in rows}), -coords.index(c)))


def _plan(study, results, coords):
    """Group result rows into configuration runs: ``[{key, name, identity, params, metrics, tags, rows}]``."""
    groups = {}
    for res in results:
        rc = res.get("coords") or {}
        clash = set(rc) & set(ID_COLS)
        if clash:
            raise ValueError(f"coords may not be named {sorted(clash)}: {res}")
        ident = (res["dataset"], res["method"], res["kernel"], res["seed"])
        groups.setdefault(ident, []).append(res)
    coords = list(coords or [])
    for res in results:
        coords += [c for c in (res.get("coords") or {}) if c not in coords]
    metric_names = {k for res in results for k in res.get("metrics", {})}
    clash = metric_names & set(coords)
    if clash:
        raise ValueError(f"coords {sorted(clash)} are also metric names; rename one")
    # the job's grid of each coord: a step is a value's index in it (the same for every run of the job)
    grids = {}
    for c in coords:
        vals = {float(v) for res in results for v in [(res.get("coords") or {}).get(c)] if _is_number(v)
                and not _missing(v)}
        grids[c] = {v: i for i, v in enumerate(sorted(vals))}

    plans = []
    for (dataset, method, kernel, seed), rows in groups.items():
        curve = _choose_curve(rows, coords)
        flat = [_flatten(r.get("params", {})) for r in rows]
        names = list(dict.fromkeys(k for f in flat for k in f))
        common, varying = {}, {}
        for name in names:
            texts = {_param_text(f[name]) if name in f else None for f in flat}
            if len(texts) == 1 and None not in texts:
                common[name] = texts.pop()
            else:
                varying[name] = [f.get(name) for f in flat]
        numeric = {n: ("int" if all(isinstance(v, numbers.Integral) for v in vs if v is not None) else "float")
                   for n, vs in varying.items()
                   if all(v is None or _is_number(v) for v in vs) and any(v is not None for v in vs)}
        dropped = sorted(set(varying) - set(numeric))
        params = {"study": study, "dataset": dataset, "method": method, "kernel": kernel, "seed": str(seed)}
        for name, text in common.items():
            params[_PARAM_LEAF + name if name in params else name] = text

        metrics, nonfinite, seen, curve_points, outside = [], {}, set(), {}, {}
        for res, f in zip(rows, flat, strict=True):
            rc = res.get("coords") or {}
            step = grids[curve][float(rc[curve])] if curve else 0
            if curve:
                curve_points[step] = float(rc[curve])
            prefix = "".join(_key_part(c, rc[c]) + "/" for c in coords
                             if c != curve and c in rc and not _missing(rc[c]))
            if (prefix, step) in seen:
                log.warning("%s: two results at %s step %d (the same identity and coords); both logged",
                            run_key(study, dataset, method, kernel, seed), prefix or "(no prefix)", step)
            seen.add((prefix, step))
            reason = str(res.get(ASSUMPTION) or "").strip()
            suffix = OUTSIDE_SUFFIX if reason else ""
            if reason:
                outside[f"{prefix}@{step}"] = reason
            values = {k + suffix: v for k, v in res.get("metrics", {}).items()}
            values.update({_PARAM_LEAF + n: f[n] for n in numeric if f.get(n) is not None})
            for k, v in values.items():
                if v is None:
                    continue
                v = float(v)
                if math.isfinite(v):
                    metrics.append((prefix + k, v, step))
                elif not math.isnan(v):
                    nonfinite[f"{prefix}{k}@{step}"] = repr(v)
        if curve:
            metrics += [(curve, v, s) for s, v in sorted(curve_points.items())]
        if len(curve_points) >= 2:
            by_key = {}
            for k, v, _ in metrics:
                if k != curve and not k.rsplit("/", 1)[-1].startswith(_PARAM_LEAF):
                    by_key.setdefault(k, []).append(v)
            metrics += [(_MEAN + k, sum(vs) / len(vs), 0) for k, vs in by_key.items()]
        tags = {LEVEL_TAG: "config", "run_key": run_key(study, dataset, method, kernel, seed),
                _COORDS_TAG: json.dumps(coords), _CURVE_TAG: curve or "", _STEPS_TAG: str(len(curve_points)),
                _LAYOUT_TAG: LAYOUT}
        if numeric:
            tags[_VARYING_TAG] = json.dumps(numeric)
        if dropped:
            tags[_DROPPED_TAG] = json.dumps(dropped)
        if nonfinite:
            tags[_NONFINITE_TAG] = json.dumps(nonfinite)
        if outside:
            text = json.dumps(outside)
            if len(text) > _MAX_NOTE:  # MLflow's longest tag value: the reasons' labels, without their numbers
                text = json.dumps({k: assumption_label(v) for k, v in outside.items()})
            tags[_ASSUMPTIONS_TAG] = text
            tags[ASSUMPTION_TAG] = _assumption_tag(list(outside.values()), len(rows))
        plans.append({"key": tags["run_key"], "name": run_name(dataset, method, kernel, seed), "dataset": dataset,
                      "params": params, "metrics": metrics, "tags": tags, "curve": curve})
    return plans


def _assumption_tag(reasons, n_rows):
    """The run's ``assumption`` tag: its one reason where every result has it, else how many results are
    outside their assumptions and why (the reasons' labels)."""
    distinct = list(dict.fromkeys(reasons))
    if len(distinct) == 1 and len(reasons) == n_rows:
        return distinct[0][:_MAX_PARAM]
    labels = dict.fromkeys(lab for r in distinct for lab in assumption_label(r).split("; "))
    return f"{len(reasons)} of {n_rows} results: {'; '.join(labels)}"[:_MAX_PARAM]


def describe(plans_or_curves, metrics=None):
    """How to read a study's runs (appended to the experiment description): the grain, the curve and
    the key prefixes, and ``metrics`` (``{name: (label, lower_is_better)}``) explained."""
    curves = sorted({p["curve"] for p in plans_or_curves if p.get("curve")})
    keyed = sorted({k.split(":", 1)[0] for p in plans_or_curves for k, _, _ in p["metrics"] if ":" in k
                    and not k.startswith(_MEAN)})
    lines = ["How to read the runs: one run per data set x method x kernel x seed, named "
             "'data set · method · kernel · seed', grouped under the run of the job that made them "
             "(its artifact: every result row)."]
    if curves:
        lines.append(f"Curves over {', '.join(curves)} are metric histories: open a run's Model metrics, or "
                     f"the Chart view (X axis: Step, or the metric {' / '.join(curves)} itself); step i is the "
                     "i-th smallest value. mean/<metric> is the mean over the curve.")
    if keyed:
        lines.append(f"Metric keys start with the other coords ({', '.join(keyed)}), e.g. 'criterion:c_ree/...'; "
                     "the Chart view groups them into sections by that prefix.")
    if any(ASSUMPTION_TAG in p.get("tags", {}) for p in plans_or_curves):
        lines.append(f"Results outside their method's assumptions (tag '{ASSUMPTION_TAG}' says why) log their metrics "
                     f"as '<metric>{OUTSIDE_SUFFIX}', a chart of their own: they do not flatten the other curves.")
    if metrics:
        lines.append("Metrics: " + "; ".join(f"{k} = {label} ({'lower' if low else 'higher'} is better)"
                                             for k, (label, low) in metrics.items()) + ".")
    return "\n\n".join(lines)


def _batches(params, metrics):
    """log_batch payloads within MLflow's limits (100 params, 1,000 entities a call)."""
    out = []
    params, metrics = list(params), list(metrics)
    while params or metrics or not out:
        p, params = params[:_MAX_PARAMS], params[_MAX_PARAMS:]
        m, metrics = metrics[: _MAX_ENTITIES - len(p)], metrics[_MAX_ENTITIES - len(p):]
        out.append((p, m))
        if not params and not metrics:
            break
    return out


def _logged_job(client, exp_id, job_key, digest, n_runs):
    """The configuration run ids of ``job_key`` if it is logged complete from a result file with
    ``digest``, else None."""
    runs = _search_all(client, exp_id, f"tags.job_key = '{job_key}'")
    jobs = [r for r in runs if r.data.tags.get(LEVEL_TAG) == "job"]
    children = [r for r in runs if r.data.tags.get(LEVEL_TAG) == "config"]
    if (len(jobs) == 1 and jobs[0].data.tags.get(_DIGEST_TAG) == digest
            and jobs[0].data.tags.get(_LAYOUT_TAG) == LAYOUT and len(children) == n_runs
            and len(children) + 1 == len(runs)):
        return {r.data.tags.get("run_key"): r.info.run_id for r in children}
    return None


def log_job(study, job_key, results, result_file=None, tracking_uri=None, tags=None, job_params=None,
            description=None, datasets=None, coords=None, metrics_info=None, digest=None):
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

    Returns
    -------
    list of str
        The ids of the configuration runs, in the order their identities first appear in ``results``.
    """
    plans = _plan(study, results, coords)
    extra = {k: str(v) for k, v in (tags or {}).items()}
    if digest is None and result_file is not None:
        digest = file_digest(result_file)
    if description is not None:
        description = f"{description}\n\n{describe(plans, metrics_info)}".strip()
    with _store(study, tracking_uri) as (client, artifact_root, _):
        rest = getattr(client, "rest", False)
        if rest:
            Metric, Param = _Metric, _Param
        else:
            from mlflow.entities import Metric, Param
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root, description), "create experiment")
        if digest is not None:
            done = _logged_job(client, exp_id, job_key, digest, len(plans))
            if done is not None and set(done) == {p["key"] for p in plans}:
                log.info("%s: logged already (result digest %s)", job_key, digest[:12])
                return [done[p["key"]] for p in plans]
        _delete(client, _search_all(client, exp_id, f"tags.job_key = '{job_key}'"))

        inputs = {name: _dataset_input(name, info, rest) for name, info in (datasets or {}).items()}
        now = int(time.time() * 1000)

        def log_run(plan):  # create + log_batch (+ batches beyond MLflow's limits) + log_inputs + finish
            run_tags = {**extra, **plan["tags"], "job_key": job_key}
            rid = _retry(lambda: client.create_run(exp_id, run_name=plan["name"], tags=run_tags),
                         "create run").info.run_id
            params = [Param(k, v) for k, v in plan["params"].items()]
            metrics = [Metric(k, v, now, s) for k, v, s in plan["metrics"]]
            for p, m in _batches(params, metrics):
                _retry(lambda p=p, m=m: client.log_batch(rid, metrics=m, params=p), "log batch")
            if plan["dataset"] in inputs:
                _retry(lambda: client.log_inputs(rid, datasets=[inputs[plan["dataset"]]]), "log datasets")
            _retry(lambda: client.set_terminated(rid, "FINISHED"), "finish run")
            return rid

        if rest and len(plans) > 1:  # a server takes requests side by side; a SQLite store one writer
            from concurrent.futures import ThreadPoolExecutor

            # a data set's first run alone: the server inserts the dataset row then, and two first
            # inserts side by side violate its unique key (experiment, name, digest)
            first = {}
            for i, plan in enumerate(plans):
                first.setdefault(plan["dataset"], i)
            ids = {i: log_run(plans[i]) for i in first.values()}
            rest_of = [i for i in range(len(plans)) if i not in ids]
            with ThreadPoolExecutor(min(client.threads, max(1, len(rest_of)))) as pool:
                ids.update(zip(rest_of, pool.map(lambda i: log_run(plans[i]), rest_of), strict=True))
            run_ids = [ids[i] for i in range(len(plans))]
        else:
            run_ids = [log_run(plan) for plan in plans]

        # the job run last: the runs table (newest first) shows it above its runs, as their heading
        job_tags = {**extra, LEVEL_TAG: "job", "job_key": job_key, _LAYOUT_TAG: LAYOUT}
        job_name = f"{job_key.split('/', 1)[-1]} (job)"
        job = _retry(lambda: client.create_run(exp_id, run_name=job_name, tags=job_tags), "create job run").info.run_id
        if inputs:
            _retry(lambda: client.log_inputs(job, datasets=list(inputs.values())), "log job datasets")
        if job_params:
            _retry(lambda: client.log_batch(job, params=[Param(k, str(v)[:_MAX_PARAM])
                                                         for k, v in job_params.items()]), "log job params")
        if result_file is not None:
            _retry(lambda: client.log_artifact(job, str(result_file)), "log artifact")
        # a create retried after a lost reply may have made a run twice: keep only ours
        extra_runs = [r for r in _search_all(client, exp_id, f"tags.job_key = '{job_key}'")
                      if r.info.run_id not in {job, *run_ids}]
        if extra_runs:
            log.warning("%s: deleting %d duplicate runs", job_key, _delete(client, extra_runs))
        if digest is not None:  # last: marks the job as logged complete
            _retry(lambda: client.set_tag(job, _DIGEST_TAG, digest), "tag job run")
        _retry(lambda: client.set_terminated(job, "FINISHED"), "finish job run")
    return run_ids


def log_report(study, artifacts, tracking_uri=None, note=None, tags=None, description=None):
    """Log a study's report as one run of its experiment: the PDF, figures and claims beside its runs.

    The run (tag ``nystrom_bench.level = report``, named ``<study> · report``) holds ``artifacts``
    (``{artifact folder ("" = the root): [paths]}``), ``note`` (Markdown: the run page's description)
    and ``tags`` (e.g. ``claim.<id>`` = its verdict); ``description`` sets the experiment's (made if
    need be).  A note beyond MLflow's 8,000 characters is cut at a line, saying so.  It has no metrics, so the chart view skips it,
    and no ``job_key``, so :func:`prune` leaves it alone.  Idempotent: a report run logged from the same
    files, note and tags (digest tag ``nystrom_bench.report_digest``) is kept; otherwise the study's
    report runs are replaced.  Returns the run id.
    """
    files = sorted((folder.strip("/"), Path(path)) for folder, paths in artifacts.items() for path in paths)
    h = hashlib.sha256()
    for folder, path in files:
        h.update(f"{folder}/{path.name}={file_digest(path)}\n".encode())
    h.update(json.dumps([note, sorted((tags or {}).items())], default=str).encode())
    digest = h.hexdigest()
    if note and len(note) > _MAX_NOTE:
        cut = note.rfind("\n", 0, _MAX_NOTE - 200)  # at a line; mid-line if the first line is that long
        note = note[:cut if cut > 0 else _MAX_NOTE - 200] + ("\n\n... (cut to MLflow's limit of 8,000 characters: "
                                                            "the whole text is in the artifacts)\n")
    with _store(study, tracking_uri) as (client, artifact_root, _):
        exp_id = _retry(lambda: _experiment_id(client, study, artifact_root, description), "create experiment")
        old = [r for r in _search_all(client, exp_id) if r.data.tags.get(LEVEL_TAG) == "report"]
        done = [r for r in old if r.data.tags.get(_REPORT_DIGEST_TAG) == digest]
        if len(done) == 1 and len(old) == 1:
            log.info("%s: report logged already (digest %s)", study, digest[:12])
            return done[0].info.run_id
        _delete(client, old)
        run_tags = {**{k: str(v)[:_MAX_PARAM] for k, v in (tags or {}).items()}, LEVEL_TAG: "report",
                    **({DESCRIPTION_TAG: note} if note else {})}
        rid = _retry(lambda: client.create_run(exp_id, run_name=f"{study} · report", tags=run_tags),
                     "create report run").info.run_id
        for folder, path in files:
            _retry(lambda folder=folder, path=path: client.log_artifact(rid, str(path), folder or None),
                   "log report artifact")
        _retry(lambda: client.set_tag(rid, _REPORT_DIGEST_TAG, digest), "tag report run")  # last: complete
        _retry(lambda: client.set_terminated(rid, "FINISHED"), "finish report run")
    return rid


def rows_from_frame(df, coords=()):
    """Result rows (dicts, as :func:`log_job` takes them) from a tidy result table."""
    rows = []
    metric_cols = [c for c in df.columns if c not in (*ID_COLS, *coords, ASSUMPTION, "params")]
    for rec in df.to_dict("records"):
        rc = {c: rec[c] for c in coords if c in rec and not _missing(rec[c])}
        rc = {c: (int(v) if _is_number(v) and float(v).is_integer() and not isinstance(v, int) else v)
              for c, v in rc.items()}
        seed = rec["seed"]
        rows.append({"dataset": rec["dataset"], "method": rec["method"], "kernel": rec["kernel"],
                     "seed": int(seed) if _is_number(seed) else seed, "coords": rc,
                     "params": json.loads(rec["params"]) if isinstance(rec.get("params"), str) else {},
                     "metrics": {m: rec[m] for m in metric_cols if not _missing(rec[m])}})
        flag = rec.get(ASSUMPTION)
        if not _missing(flag) and str(flag).strip():
            rows[-1][ASSUMPTION] = str(flag).strip()
    return rows


def prune(study, keep_job_keys, tracking_uri=None):
    """Delete the active runs of ``study`` whose ``job_key`` is not in ``keep_job_keys``.

    Job and configuration runs go alike; runs without a ``job_key`` tag are left alone.  Used when a
    data set leaves a study.  Returns the number of runs deleted (0 if the experiment does not exist;
    a deleted experiment is not restored).
    """
    keep = set(keep_job_keys)
    with _store(study, tracking_uri) as (client, _, _lock):
        exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
        if exp is None:
            return 0
        stale = [r for r in _search_all(client, exp.experiment_id)
                 if "job_key" in r.data.tags and r.data.tags["job_key"] not in keep]
        return _delete(client, stale)


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


def _coord_value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _unflatten(params):
    out = {}
    for k, v in params.items():
        node, *path = k.split(".")
        target = out
        for part in [node, *path][:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):  # a dotted name that was no nesting
                target = None
                break
        if target is None:
            out[k] = v
        else:
            target[[node, *path][-1]] = v
    return out


def _histories(client, run, keys):
    """``{key: [(value, step), ...]}`` of a run's metric histories."""
    return {k: [(m.value, m.step) for m in _retry(lambda k=k: client.get_metric_history(run.info.run_id, k),
                                                  "metric history")] for k in keys}


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
    with _store(study, tracking_uri, lock=False) as (client, _, _lock):
        exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
        if exp is None:
            return pd.DataFrame()
        runs = [r for r in _search_all(client, exp.experiment_id)
                if r.data.tags.get(LEVEL_TAG) == "config" and r.data.tags.get(_LAYOUT_TAG) == LAYOUT]
        records, coords = [], []
        for run in runs:
            t, p = run.data.tags, run.data.params
            run_coords = json.loads(t.get(_COORDS_TAG, "[]"))
            coords += [c for c in run_coords if c not in coords]
            curve = t.get(_CURVE_TAG) or None
            keys = [k for k in run.data.metrics if not k.startswith(_MEAN)]
            if int(t.get(_STEPS_TAG, "0")) > 1:
                hist = _histories(client, run, keys)
            else:
                hist = {k: [(run.data.metrics[k], 0)] for k in keys}
            for where, text in json.loads(t.get(_NONFINITE_TAG, "{}")).items():
                key, _, step = where.rpartition("@")
                hist.setdefault(key, []).append((float(text), int(step)))
            curve_at = {s: v for v, s in hist.pop(curve, [])} if curve else {}
            varying = json.loads(t.get(_VARYING_TAG, "{}"))
            outside = json.loads(t.get(_ASSUMPTIONS_TAG, "{}"))
            base = {"study": study, "dataset": p["dataset"], "method": p["method"], "kernel": p["kernel"],
                    "seed": _coord_value(p["seed"])}
            common = {}
            for k, v in p.items():
                if k in base:
                    continue
                common[k[len(_PARAM_LEAF):] if k.startswith(_PARAM_LEAF) and k[len(_PARAM_LEAF):] in base
                       else k] = _param_value(v)
            rows = {}
            for key, points in hist.items():
                *prefix, leaf = key.split("/")
                for value, step in points:
                    row = rows.setdefault((tuple(prefix), step), {"metrics": {}, "params": {}})
                    if leaf.startswith(_PARAM_LEAF):
                        name = leaf[len(_PARAM_LEAF):]
                        row["params"][name] = int(value) if varying.get(name) == "int" else value
                    else:
                        row["metrics"][leaf.removesuffix(OUTSIDE_SUFFIX)] = value
            for (prefix, step), row in rows.items():
                rec = dict(base)
                if curve:
                    v = curve_at[step]
                    rec[curve] = int(v) if float(v).is_integer() else v
                for part in prefix:
                    name, _, text = part.partition(":")
                    rec[name] = _coord_value(text)
                rec.update(row["metrics"])
                rec[ASSUMPTION] = outside.get("".join(p + "/" for p in prefix) + f"@{step}", "")
                rec["params"] = json.dumps(_unflatten({**common, **row["params"]}), sort_keys=True, default=str)
                records.append(rec)
    if not records:
        return pd.DataFrame()
    df = pd.DataFrame.from_records(records)
    for c in coords:
        if c not in df:
            df[c] = float("nan")
    metric_cols = [c for c in df.columns if c not in (*ID_COLS, *coords, ASSUMPTION, "params")]
    df = df[[*ID_COLS, *coords, *metric_cols, ASSUMPTION, "params"]]
    return df.sort_values([*ID_COLS, *coords], na_position="first").reset_index(drop=True)


def ui_link(study, tracking_uri=None, ui=None):
    """The link that opens ``study``'s runs table in the MLflow UI (None if the study has no experiment).

    ``ui``: where the UI is served (default: the tracking server itself, or ``mlflow ui``'s
    http://127.0.0.1:5000 for a local store).  The link names the runs tab and
    ``workflowType=machine_learning``: without it MLflow 3.17 opens the GenAI overview (module docstring).
    """
    uri = _absolute(tracking_uri or resolve_tracking_uri())
    db = _sqlite_path(uri)
    if db is not None and not db.exists():
        return None
    if ui is None:
        ui = uri if uri.startswith(("http://", "https://")) else DEFAULT_UI
    if _rest_ok(uri):
        client = _RestClient(uri)
    else:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
    exp = _retry(lambda: client.get_experiment_by_name(study), "get experiment")
    if exp is None:
        return None
    return f"{ui.rstrip('/')}/#/experiments/{exp.experiment_id}/runs?workflowType=machine_learning"


if __name__ == "__main__":  # python -m nystrom_bench.tracking [tracking URI]: every study's runs-table link
    import sys

    from mlflow.tracking import MlflowClient

    _uri = sys.argv[1] if len(sys.argv) > 1 else resolve_tracking_uri()
    for _exp in sorted(MlflowClient(tracking_uri=_uri).search_experiments(), key=lambda e: e.name):
        if _exp.name != "Default":
            print(f"{_exp.name}: {ui_link(_exp.name, _uri)}")
