"""MLflow's REST API for tracking servers, without ``import mlflow``: the measured exception of issue 38.

:mod:`nystrom_bench.tracking` logs through ``MlflowClient`` everywhere except against a tracking server
(``http(s)://``), where it uses :class:`RestClient`: the same calls (the part of ``MlflowClient`` it
writes with), as MLflow's REST requests over keep-alive connections.  Why: ``make test-cluster`` (the
slice krr/diabetes + gnkr_tiny/boston, 17 configuration runs + 2 job runs; 2026-11-26, a 2-core
machine at load 12), the same 4 requests a run with either client (137-142 in all): through
``MlflowClient`` the track_runs jobs spent 15.3 s = 6.1% of the SLURM jobs' 252 s, over the 5% the
test allows; through this client 13.0 s = 4.7% of 276 s.  The difference is mostly ``import mlflow``
(4-7 s a process at that load, about 1.5 s quiet; each study is a process): the same slice logged to a
local ``mlflow server`` in fresh processes, the clients interleaved, took 7.1-10.4 s a study through
``MlflowClient`` and 2.7-4.5 s through this client.  On a quiet machine this client's share was
3.4-3.5% (docs, "Running on a cluster"); 1.5 s more a study would put it near 7%.  Set
``NYSTROM_BENCH_TRACKING_REST=0`` to use ``MlflowClient`` against a server too.

Auth as MLflow reads it: ``MLFLOW_TRACKING_TOKEN`` or ``MLFLOW_TRACKING_USERNAME`` /
``MLFLOW_TRACKING_PASSWORD``; ``MLFLOW_TRACKING_INSECURE_TLS``.  Connection errors, 429 and 5xx are
retried for ``NYSTROM_BENCH_HTTP_RETRY_SECONDS`` (default 120: a server restart), then raised.
"""

from __future__ import annotations

import logging
import os
import random
import re
import time
from pathlib import Path

from ._tracking_records import Metric, Obj, Page, Param

__all__ = ["RestClient", "REST_ENV", "use_rest"]

log = logging.getLogger("nystrom_bench.tracking")
#: set to 0 to log to a tracking server through MlflowClient instead
REST_ENV = "NYSTROM_BENCH_TRACKING_REST"
#: how long a request is retried while the server cannot be reached or answers 429/5xx (a restart)
HTTP_RETRY_SECONDS = float(os.environ.get("NYSTROM_BENCH_HTTP_RETRY_SECONDS", "120"))


def use_rest(uri):
    """Whether :mod:`nystrom_bench.tracking` writes to ``uri`` with :class:`RestClient`."""
    return uri.startswith(("http://", "https://")) and os.environ.get(REST_ENV, "1") != "0"


class _RestError(Exception):
    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status, self.code = status, code


def _kv(items):
    return {t["key"]: t.get("value", "") for t in items or []}


def _run_obj(run):
    info, data = run.get("info", {}), run.get("data", {})
    return Obj(info=Obj(run_id=info.get("run_id") or info.get("run_uuid"), artifact_uri=info.get("artifact_uri"),
                        experiment_id=info.get("experiment_id"), status=info.get("status")),
               data=Obj(tags=_kv(data.get("tags")), params=_kv(data.get("params")),
                        metrics={m["key"]: m.get("value") for m in data.get("metrics", [])}))


class RestClient:
    """The part of ``MlflowClient`` :mod:`nystrom_bench.tracking` writes with, as MLflow's REST API calls
    over keep-alive connections (``requests``, a session per thread); ``Metric``, ``Param`` and
    :meth:`dataset_input` make what its calls take (MLflow's entities for ``MlflowClient``).
    ``set_terminated`` is one ``runs/update``; ``log_artifact`` uploads through the server's artifact
    proxy (the run's location is known from ``create_run``)."""

    def __init__(self, uri):
        import threading

        self.uri = self.tracking_uri = uri.rstrip("/")
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

    @staticmethod
    def dataset_input(name, info):
        """The REST API's dataset input (name, digest, source) of ``tracking._dataset_input``."""
        ds = {"name": name, "digest": str(info.get("digest", ""))[:36],
              "source_type": str(info.get("source_type", "local")), "source": str(info.get("source", name))}
        ds.update({k: info[k] for k in ("schema", "profile") if info.get(k) is not None})
        return {"tags": [{"key": "mlflow.data.context", "value": str(info.get("context", "train"))}], "dataset": ds}

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
        return Obj(experiment_id=exp["experiment_id"], name=exp.get("name"), tags=_kv(exp.get("tags")),
                   lifecycle_stage=exp.get("lifecycle_stage", "active"))

    def get_experiment(self, experiment_id):
        return self._experiment(self._call("GET", "experiments/get", params={"experiment_id": experiment_id})["experiment"])

    def create_experiment(self, name, artifact_location=None, tags=None):
        body = {"name": name, **({"artifact_location": artifact_location} if artifact_location else {}),
                **({"tags": [{"key": k, "value": str(v)} for k, v in tags.items()]} if tags else {})}
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
        page = Page(_run_obj(r) for r in out.get("runs", []))
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
            out += [Obj(key=m["key"], value=m.get("value"), step=int(m.get("step", 0)),
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


RestClient.Metric, RestClient.Param = Metric, Param
