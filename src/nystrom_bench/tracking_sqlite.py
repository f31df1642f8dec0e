"""MLflow's rows written to a local SQLite store with Python's ``sqlite3``: no ``import mlflow`` (issue 39).

A workflow's ``track_runs`` job spent about 2.2 of its 2.8-5.5 CPU-s starting MLflow (``import mlflow``,
its SQLAlchemy store) to write a few dozen runs.  On a local SQLite store that MLflow has created and
migrated, :func:`connect` gives a :class:`SqliteClient` instead: the part of ``MlflowClient``
:mod:`nystrom_bench.tracking` writes with (as :class:`nystrom_bench._tracking_rest.RestClient` is for a
tracking server), writing the rows MLflow's ``SqlAlchemyStore`` writes, into its tables, inside ONE
``BEGIN IMMEDIATE`` transaction per :func:`nystrom_bench.tracking._store` (a job's prune, a job's runs,
a report run): parallel writers wait for each other (busy timeout, besides the store's file lock)
as SQLAlchemy's sessions do, and a killed job leaves nothing half-written.  Each call is a savepoint of
that transaction, so the caller's retry of a failed call cannot write twice.

When it is taken (else :func:`connect` returns None and MLflow writes as before): the store file exists,
``NYSTROM_BENCH_TRACKING_SQLITE`` is not ``0``, MLflow's workspaces are off
(``MLFLOW_ENABLE_WORKSPACES``) and every experiment is in the default workspace, the default
experiment (id 0) exists (MLflow's client would create it), the installed MLflow's version is in
:data:`MLFLOW_VERSIONS` (read from its ``version.py``, not imported) and the store's
``alembic_version`` is :data:`MLFLOW_REVISION`, the head of that MLflow's migrations; any ``sqlite3``
error while checking also falls back.  Creating or migrating a store stays MLflow's job: a workflow's
first ``track_runs`` job creates it through MLflow, the others write here.  Anything met later that
this module does not replicate (an artifact location other than a local directory, an experiment
without one, a run that assessments point at, a filter other than the tag filters below) raises
:class:`Unsupported` before the transaction writes to the artifact store; the transaction is rolled
back and the caller logs the same through MLflow (:func:`nystrom_bench.tracking._in_store`).

Verified with MLflow 3.17.2 (``tests/test_tracking_sqlite.py``: the same study, jobs re-logged, pruned
and a report run, logged through MLflow and through this client into two stores gives equal tables,
ids and times aside, and MLflow's own reads -- ``search_runs`` with tag, param and metric filters,
``get_metric_history``, the runs' datasets, ``search_experiments`` -- return the same; a test fails
when the installed MLflow's head revision or version leaves the pin: re-verify, then move the pin).

What is replicated (``mlflow/store/tracking/sqlalchemy_store.py``, ``mlflow/utils/validation.py``,
``MlflowClient``):

- values: run status ``RUNNING`` at ``create_run``, ``FINISHED`` and ``end_time`` at ``set_terminated``;
  ``source_type`` ``UNKNOWN``, empty ``source_name``/``entry_point_name``/``source_version``,
  ``user_id`` = the ``mlflow.user`` tag else ``unknown``, ``lifecycle_stage`` ``active``,
  ``artifact_uri`` = ``<experiment's artifact location>/<run id>/artifacts``; tag ``mlflow.runName``
  added where absent; a new experiment's ``creation_time`` = ``last_update_time``, workspace
  ``default``; a deleted run's ``deleted_time``; restoring an experiment restores its runs;
- metrics: NaN stored as 0 with ``is_nan``, +-inf as +-1.7976931348623157e308, a repeated (key,
  timestamp, step, value) once, ``latest_metrics`` per key the greatest (step, timestamp, value), the
  first of equals; params immutable (a different value for a logged key is an error);
- datasets: one row per (experiment, name, digest), reused; one input edge per (data set, run) with
  its tags;
- validation: metric, param and tag names (MLflow's characters ``[/\\w.\\- :]`` and no path that
  normalises to another name), key lengths (250), a param value cut to 6,000 and a run tag value to
  8,000 characters (``MLFLOW_TRUNCATE_LONG_VALUES``, else an error), experiment tags (250 / 20,000),
  metric values numbers (not bool), timestamps non-negative, duplicate param keys in one call,
  run ids, data set name/digest/source/schema lengths and input tag lengths; operations on a deleted
  run or experiment are errors.  Errors are ValueError (MLflow's are ``MlflowException``).
- search: ``tags.<key> (=|!=|LIKE|ILIKE) '<value>'`` clauses joined by ``AND``, active runs only,
  ordered by start time (newest first) then run id, LIKE case-sensitive (MLflow's
  ``case_sensitive_like`` on SQLite).
"""

from __future__ import annotations

import importlib.util
import math
import numbers
import os
import posixpath
import re
import shutil
import sqlite3
import tempfile
import time
import uuid
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlparse

from ._tracking_records import Metric, Obj, Page, Param

__all__ = ["SqliteClient", "Unsupported", "connect", "enabled", "mlflow_version", "MLFLOW_REVISION",
           "MLFLOW_VERSIONS", "SQLITE_ENV"]

#: set to 0 to write every local SQLite store through MLflow
SQLITE_ENV = "NYSTROM_BENCH_TRACKING_SQLITE"
#: the head of MLflow's schema migrations (``alembic_version``) the rows here were verified against
MLFLOW_REVISION = "dc11669786a5"
#: the MLflow versions taken as writing those rows: [3.17, 3.18) (verified with 3.17.2)
MLFLOW_VERSIONS = ((3, 17), (3, 18))
#: how long a writer waits for another's transaction (seconds)
BUSY_TIMEOUT = 60.0

_NAME = re.compile(r"^[/\w.\- :]*$")
_RUN_ID = re.compile(r"^[a-zA-Z0-9][\w\-]{0,255}$")
_MAX_KEY, _MAX_PARAM, _MAX_TAG = 250, 6000, 8000
_MAX_EXP_TAG_KEY, _MAX_EXP_TAG, _MAX_EXP_NAME = 250, 20000, 500
_INF = 1.7976931348623157e308
_CLAUSE = re.compile(r"\s*tags\.(?:`([^`]+)`|\"([^\"]+)\"|([\w.]+))\s*(!=|=|(?i:ilike|like))\s*'([^']*)'\s*"
                     r"(?:(?i:and)\b|$)")
_SOURCE_RUN_ID = "mlflow.assessment.sourceRunId"


class Unsupported(Exception):
    """Something :class:`SqliteClient` does not replicate: the caller logs the same through MLflow."""


def enabled():
    """Whether :func:`connect` may be tried (``NYSTROM_BENCH_TRACKING_SQLITE`` is not ``0``)."""
    return os.environ.get(SQLITE_ENV, "1") != "0"


def _truthy(name):
    return os.environ.get(name, "").strip().lower() in ("true", "1", "t", "yes", "y")


@lru_cache(maxsize=1)
def mlflow_version():
    """The installed MLflow's version as a tuple of ints (``(3, 17, 2)``), read from its ``version.py``
    without importing it; None if MLflow is not installed or the file says something else."""
    try:
        spec = importlib.util.find_spec("mlflow")
        text = (Path(spec.origin).parent / "version.py").read_text()
    except (ImportError, AttributeError, TypeError, ValueError, OSError):
        return None
    m = re.search(r"^VERSION\s*=\s*[\"'](\d+)\.(\d+)\.(\d+)", text, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def _why_not(con):
    """Why the store behind ``con`` is not one this module writes (None: it is)."""
    version = mlflow_version()
    if version is None or not MLFLOW_VERSIONS[0] <= version[:2] < MLFLOW_VERSIONS[1]:
        return f"MLflow {version} is outside the verified versions {MLFLOW_VERSIONS}"
    rev = [r[0] for r in con.execute("SELECT version_num FROM alembic_version")]
    if rev != [MLFLOW_REVISION]:
        return f"store at schema revision {rev}, not {MLFLOW_REVISION}"
    if con.execute("SELECT 1 FROM experiments WHERE workspace IS NOT NULL AND workspace != 'default' "
                   "LIMIT 1").fetchone():
        return "experiments outside MLflow's default workspace"
    if con.execute("SELECT 1 FROM experiments WHERE experiment_id = 0").fetchone() is None:
        return "no default experiment (MLflow's client creates it)"
    return None


def connect(db, uri, write=True):
    """A :class:`SqliteClient` inside a fresh transaction on the existing store ``db`` (``BEGIN
    IMMEDIATE`` if ``write``), or None where MLflow must write (module docstring; the reason is
    logged).  The caller ends it with :meth:`SqliteClient.close`."""
    import logging

    log = logging.getLogger("nystrom_bench.tracking")
    if not enabled() or _truthy("MLFLOW_ENABLE_WORKSPACES") or not Path(db).is_file():
        return None
    con = None
    try:
        con = sqlite3.connect(str(db), timeout=BUSY_TIMEOUT, isolation_level=None)
        if write:
            mode = con.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":  # as tracking._tune_sqlite does; best effort
                try:
                    con.execute("PRAGMA journal_mode=WAL")
                except sqlite3.Error as exc:
                    log.info("could not switch %s to WAL: %s", db, exc)
            con.execute("PRAGMA synchronous=NORMAL")
        # MLflow's session settings on SQLite (mlflow.store.db.utils)
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("PRAGMA case_sensitive_like = true")
        con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        why = _why_not(con)
    except sqlite3.Error as exc:
        why = f"sqlite3: {exc}"
    if why is not None:
        if con is not None:
            con.close()
        log.info("%s: written through MLflow (%s)", db, why)
        return None
    return SqliteClient(con, uri)


def _invalid(what):
    return ValueError(f"{what} (MLflow would refuse it; nystrom_bench.tracking_sqlite replicates its checks)")


def _to_float(v):
    """A metric value as MLflow's client passes it on (``convert_metric_value_to_float_if_possible``:
    ``float(v)`` where it converts), then checked as its store checks it (a number, not bool)."""
    if type(v) is not float:
        try:
            v = float(v)
        except ValueError:
            pass
    if isinstance(v, bool) or not isinstance(v, numbers.Number):
        raise _invalid(f"metric value {v!r}: not a number")
    return v


def _sanitize(value):
    """``SqlAlchemyStore.sanitize_metric_value``: ``(is_nan, value)``."""
    if math.isnan(value):
        return True, 0
    if math.isinf(value):
        return False, _INF if value > 0 else -_INF
    return False, value


def _local_dir(uri):
    """The local directory of a ``file:`` URI or an absolute path, else :class:`Unsupported`."""
    if not uri:
        raise Unsupported("no artifact location")
    p = urlparse(uri)
    if p.scheme == "file" and not p.netloc and not p.query and not p.fragment:
        path = unquote(p.path)
    elif not p.scheme and uri.startswith("/"):
        path = uri
    else:
        raise Unsupported(f"artifact location {uri!r} is not a local directory")
    if not path.startswith("/") or path.endswith("/") or "//" in path:
        raise Unsupported(f"artifact location {uri!r}")
    return path


def _savepoint(fn):
    """Run the method in a savepoint: all of it or nothing (a retried call writes once)."""

    def wrapper(self, *args, **kwargs):
        self.con.execute("SAVEPOINT nb")
        try:
            out = fn(self, *args, **kwargs)
        except BaseException:
            self.con.execute("ROLLBACK TO nb")
            self.con.execute("RELEASE nb")
            raise
        self.con.execute("RELEASE nb")
        return out

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


class SqliteClient:
    """The part of ``MlflowClient`` :mod:`nystrom_bench.tracking` writes with, on one open ``sqlite3``
    transaction of a store :func:`connect` accepted; ``Metric``, ``Param`` and :meth:`dataset_input` make
    what its calls take.  :meth:`write_runs` is :func:`nystrom_bench.tracking_bulk.write_runs`'s bulk
    write of a job's configuration runs."""

    Metric, Param = Metric, Param  # the records log_batch takes (_tracking_records, as RestClient's)

    def __init__(self, con, uri):
        self.con, self.tracking_uri = con, uri
        self._names = set()  # names validated already (a job repeats its keys in every run)

    def close(self, commit=True):
        """End the transaction (commit, or roll back) and the connection."""
        try:
            self.con.execute("COMMIT" if commit else "ROLLBACK")
        finally:
            self.con.close()

    @contextmanager
    def transaction(self):
        """Commit at the end of the block, roll back on an exception."""
        try:
            yield self
        except BaseException:
            self.close(commit=False)
            raise
        self.close(commit=True)

    # ---- values and checks
    @staticmethod
    def dataset_input(name, info):
        """``tracking._dataset_input``'s MLflow dataset input (name, digest, source), for this client."""
        ds = Obj(name=name, digest=str(info.get("digest", ""))[:36], source_type=str(info.get("source_type", "local")),
                 source=str(info.get("source", name)), schema=info.get("schema"), profile=info.get("profile"))
        return Obj(dataset=ds, tags=[Obj(key="mlflow.data.context", value=str(info.get("context", "train")))])

    def _check_name(self, name, what):
        if name in self._names:
            return
        if name is None or not isinstance(name, str):
            raise _invalid(f"{what} name {name!r}: a name must be given")
        if not _NAME.match(name):
            raise _invalid(f"{what} name {name!r}: only alphanumerics, '_', '-', '.', ' ', ':' and '/'")
        norm = posixpath.normpath(name)
        if norm != name or norm == "." or norm.startswith("..") or norm.startswith("/"):
            raise _invalid(f"{what} name {name!r} would resolve to {norm!r} as a path")
        if len(name) > _MAX_KEY:
            raise _invalid(f"{what} name {name[:50]!r}...: longer than {_MAX_KEY} characters")
        self._names.add(name)

    @staticmethod
    def _cut(value, limit, what):
        if value is None or len(value) <= limit:
            return value
        if os.environ.get("MLFLOW_TRUNCATE_LONG_VALUES", "true").strip().lower() in ("true", "1", "t", "yes", "y"):
            return value[:limit]
        raise _invalid(f"{what} longer than {limit} characters")

    def _metric_rows(self, run_id, metrics, latest):
        """Validated, sanitised metric rows (repeats once) and ``latest`` updated: ``{key: row}``."""
        rows, seen, names = [], set(), self._names
        for m in metrics:
            key, value, ts, step = m.key, m.value, m.timestamp, m.step
            if key not in names:
                self._check_name(key, "metric")
            if type(value) is not float:
                value = _to_float(value)
            if type(ts) is not int or ts < 0:
                if not isinstance(ts, numbers.Number) or isinstance(ts, bool) or ts < 0:
                    raise _invalid(f"metric {key!r}: timestamp {ts!r} is no non-negative integer")
            if type(step) is not int and not isinstance(step, numbers.Number):
                raise _invalid(f"metric {key!r}: step {step!r} is no integer")
            if value - value == 0:  # finite
                is_nan = False
            else:
                is_nan, value = _sanitize(value)
            ident = (key, ts, step, value, is_nan)
            if ident in seen:
                continue
            seen.add(ident)
            row = (key, value, ts, step, is_nan, run_id)
            rows.append(row)
            old = latest.get(key)
            if old is None or (step, ts, value) > (old[3], old[2], old[1]):
                latest[key] = row
        return rows

    def _param_rows(self, run_id, params):
        out, keys = [], set()
        for p in params:
            self._check_name(p.key, "param")
            if p.key in keys:
                raise _invalid(f"duplicate param key {p.key!r} in one call")
            keys.add(p.key)
            out.append((p.key, self._cut(p.value, _MAX_PARAM, f"param {p.key!r}'s value"), run_id))
        return out

    @staticmethod
    def _check_datasets(datasets):
        for d in datasets:
            ds = d.dataset
            if ds is None or None in (ds.name, ds.digest, ds.source_type, ds.source):
                raise _invalid("a dataset input needs a name, digest, source type and source")
            for value, limit, what in ((ds.name, 500, "name"), (ds.digest, 36, "digest"), (ds.source, 65535, "source"),
                                       (ds.schema, 1048575, "schema"), (ds.profile, 16777215, "profile")):
                if value is not None and len(value) > limit:
                    raise _invalid(f"dataset {what} longer than {limit} characters")
            for t in d.tags:
                if t.key is None or t.value is None or len(t.key) > 255 or len(t.value) > 500:
                    raise _invalid(f"dataset input tag {t.key!r}: key (255) or value (500) missing or too long")

    # ---- experiments
    def _experiment_row(self, where, arg):
        row = self.con.execute("SELECT experiment_id, name, artifact_location, lifecycle_stage FROM experiments "
                               f"WHERE {where} AND lifecycle_stage IN ('active', 'deleted')", (arg,)).fetchone()
        if row is None:
            return None
        tags = dict(self.con.execute("SELECT key, value FROM experiment_tags WHERE experiment_id = ?", (row[0],)))
        return Obj(experiment_id=str(row[0]), name=row[1], artifact_location=row[2], lifecycle_stage=row[3], tags=tags)

    def get_experiment_by_name(self, name):
        return self._experiment_row("name = ?", name)

    def get_experiment(self, experiment_id):
        exp = self._experiment_row("experiment_id = ?", int(experiment_id))
        if exp is None:
            raise _invalid(f"no experiment with id {experiment_id}")
        return exp

    def _active_experiment(self, experiment_id):
        exp = self.get_experiment(experiment_id)
        if exp.lifecycle_stage != "active":
            raise _invalid(f"the experiment {experiment_id} must be active, it is {exp.lifecycle_stage}")
        return exp

    def _check_experiment_tag(self, key, value):
        self._check_name(key, "experiment tag")
        if len(key) > _MAX_EXP_TAG_KEY or (value is not None and len(value) > _MAX_EXP_TAG):
            raise _invalid(f"experiment tag {key!r}: key (250) or value (20,000 characters) too long")
        if key in ("mlflow.trace.archivalRetention", "mlflow.trace.archiveNow"):  # values MLflow parses
            raise Unsupported(f"experiment tag {key!r}")

    @_savepoint
    def create_experiment(self, name, artifact_location=None, tags=None):
        if not name or not isinstance(name, str) or len(name) > _MAX_EXP_NAME:
            raise _invalid(f"experiment name {name!r}: a string of 1 to {_MAX_EXP_NAME} characters")
        if not artifact_location:
            raise Unsupported("an experiment without an artifact location (MLflow derives one)")
        _local_dir(artifact_location)  # an absolute local one: resolve_uri_if_local leaves it as it is
        if len(artifact_location) > int(os.environ.get("MLFLOW_ARTIFACT_LOCATION_MAX_LENGTH", "2048")):
            raise Unsupported("a long artifact location")
        tags = {k: v for k, v in (tags or {}).items()}
        for k, v in tags.items():
            self._check_experiment_tag(k, v)
        now = int(time.time() * 1000)
        try:
            cur = self.con.execute(
                "INSERT INTO experiments (name, artifact_location, lifecycle_stage, creation_time, last_update_time, "
                "workspace) VALUES (?, ?, 'active', ?, ?, 'default')", (name, artifact_location, now, now))
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"Experiment(name={name}) already exists. Error: {exc}") from None
        exp_id = cur.lastrowid
        self.con.executemany("INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?)",
                             [(k, v, exp_id) for k, v in tags.items()])
        return str(exp_id)

    @_savepoint
    def restore_experiment(self, experiment_id):
        exp_id = int(experiment_id)
        n = self.con.execute("UPDATE experiments SET lifecycle_stage = 'active', last_update_time = ? "
                             "WHERE experiment_id = ? AND lifecycle_stage = 'deleted'",
                             (int(time.time() * 1000), exp_id)).rowcount
        if n != 1:
            raise _invalid(f"no deleted experiment with id {experiment_id}")
        self.con.execute("UPDATE runs SET lifecycle_stage = 'active', deleted_time = NULL WHERE experiment_id = ?",
                         (exp_id,))

    @_savepoint
    def set_experiment_tag(self, experiment_id, key, value):
        value = str(value)
        self._check_experiment_tag(key, value)
        self._active_experiment(experiment_id)
        self.con.execute("INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?) "
                         "ON CONFLICT (key, experiment_id) DO UPDATE SET value = excluded.value",
                         (key, value, int(experiment_id)))

    # ---- runs
    def search_runs(self, experiment_ids, filter_string="", max_results=None, page_token=None):
        """Active runs of ``experiment_ids`` matching tag clauses (module docstring), newest first; all on
        one page.  Each run has ``info`` and ``data.tags``; ``data.params`` and ``data.metrics`` are read
        when asked for."""
        if page_token:
            raise Unsupported("paged search")
        sql, args = self._where(experiment_ids, filter_string)
        runs, by_id = Page(), {}
        for rid, name, exp, status, start, end, stage, art, user in self.con.execute(
                "SELECT run_uuid, name, experiment_id, status, start_time, end_time, lifecycle_stage, artifact_uri, "
                f"user_id FROM runs r WHERE {sql} ORDER BY start_time DESC, run_uuid", args):
            run = Obj(info=Obj(run_id=rid, run_uuid=rid, run_name=name, experiment_id=str(exp), status=status,
                               start_time=start, end_time=end, lifecycle_stage=stage, artifact_uri=art, user_id=user),
                      data=_RunData(self.con, rid))
            runs.append(run)
            by_id[rid] = run
        if by_id:
            for rid, k, v in self.con.execute(
                    f"SELECT run_uuid, key, value FROM tags WHERE run_uuid IN (SELECT run_uuid FROM runs r WHERE {sql})",
                    args):
                if rid in by_id:
                    by_id[rid].data.tags[k] = v
        return runs

    @staticmethod
    def _where(experiment_ids, filter_string):
        ids = [int(e) for e in ([experiment_ids] if isinstance(experiment_ids, str | int) else experiment_ids)]
        sql = [f"r.experiment_id IN ({', '.join('?' * len(ids))})", "r.lifecycle_stage = 'active'"]
        args = list(ids)
        text, pos, joined = (filter_string or "").strip(), 0, False
        while pos < len(text):
            m = _CLAUSE.match(text, pos)
            if m is None or m.end() == pos:
                raise Unsupported(f"search filter {filter_string!r}")
            key = m.group(1) or m.group(2) or m.group(3)
            op, value = m.group(4).upper(), m.group(5)
            cmp = {"=": "t.value = ?", "!=": "t.value != ?", "LIKE": "t.value LIKE ?",
                   "ILIKE": "lower(t.value) LIKE lower(?)"}[op]
            sql.append(f"EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = ? AND {cmp})")
            args += [key, value]
            pos, joined = m.end(), m.group(0).rstrip().lower().endswith("and")
        if joined:
            raise Unsupported(f"search filter {filter_string!r}")
        return " AND ".join(sql), args

    def _run(self, run_id, active=True):
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise _invalid(f"run id {run_id!r}")
        row = self.con.execute("SELECT experiment_id, lifecycle_stage, artifact_uri FROM runs WHERE run_uuid = ?",
                               (run_id,)).fetchone()
        if row is None:
            raise _invalid(f"no run with id {run_id}")
        if active and row[1] != "active":
            raise _invalid(f"the run {run_id} must be active, it is {row[1]}")
        return row

    def _artifact_uri(self, experiment, run_id):
        _local_dir(experiment.artifact_location)
        return f"{experiment.artifact_location}/{run_id}/artifacts"

    def _run_rows(self, experiment, run_name, tags, start_time, status, end_time):
        """The ``runs`` row and ``tags`` rows of ``create_run``."""
        tags = dict(tags or {})
        name_tag = tags.get("mlflow.runName")
        if run_name and name_tag and run_name != name_tag:
            raise _invalid(f"run_name {run_name!r} and tag mlflow.runName {name_tag!r} differ")
        run_name = run_name or name_tag
        if not run_name:
            raise Unsupported("a run without a name (MLflow draws a random one)")
        if not name_tag:
            tags["mlflow.runName"] = run_name
        rid = uuid.uuid4().hex
        run = (rid, run_name, "UNKNOWN", "", "", tags.get("mlflow.user", "unknown"), status, start_time, end_time, "",
               "active", self._artifact_uri(experiment, rid), int(experiment.experiment_id), None)
        return rid, run, [(k, v, rid) for k, v in tags.items()]

    _INSERT_RUN = ("INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, user_id, status, "
                   "start_time, end_time, source_version, lifecycle_stage, artifact_uri, experiment_id, deleted_time) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    _INSERT_TAG = "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)"
    _INSERT_PARAM = "INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)"
    _INSERT_METRIC = "INSERT INTO metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, ?, ?)"
    _INSERT_LATEST = ("INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) "
                      "VALUES (?, ?, ?, ?, ?, ?)")

    @_savepoint
    def create_run(self, experiment_id, start_time=None, tags=None, run_name=None):
        exp = self._active_experiment(experiment_id)
        rid, run, tag_rows = self._run_rows(exp, run_name, tags, start_time or int(time.time() * 1000), "RUNNING", None)
        self.con.execute(self._INSERT_RUN, run)
        self.con.executemany(self._INSERT_TAG, tag_rows)
        return Obj(info=Obj(run_id=rid, run_uuid=rid, run_name=run[1], artifact_uri=run[11],
                            experiment_id=str(run[12]), status="RUNNING"), data=Obj(tags={k: v for k, v, _ in tag_rows}))

    @_savepoint
    def log_batch(self, run_id, metrics=(), params=(), tags=()):
        if not metrics and not params and not tags:
            return
        self._run(run_id)
        param_rows = self._param_rows(run_id, params)
        old = dict(self.con.execute("SELECT key, value FROM params WHERE run_uuid = ?", (run_id,)))
        changed = [(k, old[k], v) for k, v, _ in param_rows if k in old and old[k] != v]
        if changed:
            raise _invalid(f"Changing param values is not allowed: {changed} for run ID={run_id}")
        self.con.executemany(self._INSERT_PARAM, [r for r in param_rows if r[0] not in old])
        if metrics:
            latest = {}
            rows = self._metric_rows(run_id, metrics, latest)
            self.con.executemany("INSERT OR IGNORE INTO metrics (key, value, timestamp, step, is_nan, run_uuid) "
                                 "VALUES (?, ?, ?, ?, ?, ?)", rows)
            keys = list(latest)
            stored = {}
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                for row in self.con.execute(
                        "SELECT key, value, timestamp, step, is_nan, run_uuid FROM latest_metrics WHERE run_uuid = ? "
                        f"AND key IN ({', '.join('?' * len(chunk))})", (run_id, *chunk)):
                    stored[row[0]] = row
            for key, row in latest.items():
                old_row = stored.get(key)
                if old_row is None:
                    self.con.execute(self._INSERT_LATEST, row)
                elif (row[3], row[2], row[1]) > (old_row[3], old_row[2], old_row[1]):
                    self.con.execute("UPDATE latest_metrics SET value = ?, timestamp = ?, step = ?, is_nan = ? "
                                     "WHERE key = ? AND run_uuid = ?", (row[1], row[2], row[3], row[4], key, run_id))
        for t in tags:
            self.set_tag(run_id, t.key, t.value)

    @_savepoint
    def log_inputs(self, run_id, datasets=None):
        exp_id = self._run(run_id)[0]
        datasets = list(datasets or [])
        self._check_datasets(datasets)
        self._inputs(exp_id, [(run_id, d) for d in datasets])

    def _inputs(self, exp_id, edges):
        """``_log_inputs_impl`` for ``[(run id, dataset input)]``: data sets new to the experiment, then
        each run's edges (a repeated (name, digest) of a run once, the first) with their tags."""
        wanted = {}
        for _, d in edges:
            wanted.setdefault((d.dataset.name, d.dataset.digest), d.dataset)
        known = {}
        names, digests = sorted({k[0] for k in wanted}), sorted({k[1] for k in wanted})
        if wanted:
            for uid, name, digest in self.con.execute(
                    "SELECT dataset_uuid, name, digest FROM datasets WHERE experiment_id = ? "
                    f"AND name IN ({', '.join('?' * len(names))}) AND digest IN ({', '.join('?' * len(digests))})",
                    (exp_id, *names, *digests)):
                known[(name, digest)] = uid
        new = []
        for key, ds in wanted.items():
            if key not in known:
                known[key] = uuid.uuid4().hex
                new.append((known[key], exp_id, ds.name, ds.digest, ds.source_type, ds.source, ds.schema, ds.profile))
        self.con.executemany("INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, dataset_source_type, "
                             "dataset_source, dataset_schema, dataset_profile) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", new)
        per_run = {}
        for rid, d in edges:
            per_run.setdefault(rid, {}).setdefault((d.dataset.name, d.dataset.digest), d)
        edge_rows, tag_rows = [], []
        for rid, ds in per_run.items():
            ids = [known[k] for k in ds]
            have = {s for (s,) in self.con.execute(
                "SELECT source_id FROM inputs WHERE source_type = 'DATASET' AND destination_type = 'RUN' AND "
                f"destination_id = ? AND source_id IN ({', '.join('?' * len(ids))})", (rid, *ids))}
            for key, d in ds.items():
                if known[key] in have:
                    continue
                iid = uuid.uuid4().hex
                edge_rows.append((iid, "DATASET", known[key], "RUN", rid))
                tag_rows += [(iid, t.key, t.value) for t in d.tags]
                have.add(known[key])
        self.con.executemany("INSERT INTO inputs (input_uuid, source_type, source_id, destination_type, destination_id) "
                             "VALUES (?, ?, ?, ?, ?)", edge_rows)
        self.con.executemany("INSERT INTO input_tags (input_uuid, name, value) VALUES (?, ?, ?)", tag_rows)

    @_savepoint
    def set_terminated(self, run_id, status="FINISHED", end_time=None):
        self._run(run_id)
        status = status or "FINISHED"
        if status not in ("RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"):
            raise _invalid(f"run status {status!r}")
        self.con.execute("UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                         (status, end_time or int(time.time() * 1000), run_id))

    @_savepoint
    def set_tag(self, run_id, key, value):
        value = str(value)
        self._check_name(key, "tag")
        value = self._cut(value, _MAX_TAG, f"tag {key!r}'s value")
        self._run(run_id)
        if key == "mlflow.runName":  # update_run_info: the run's name too
            self.con.execute("UPDATE runs SET name = ? WHERE run_uuid = ?", (value, run_id))
        self.con.execute("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?) "
                         "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value", (key, value, run_id))

    @_savepoint
    def delete_run(self, run_id):
        self._run(run_id, active=False)
        pattern = f'%"{_SOURCE_RUN_ID}": "{run_id}"%'
        if self.con.execute("SELECT 1 FROM assessments WHERE assessment_metadata LIKE ? LIMIT 1", (pattern,)).fetchone():
            raise Unsupported(f"assessments point at run {run_id}")
        self.con.execute("UPDATE runs SET lifecycle_stage = 'deleted', deleted_time = ? WHERE run_uuid = ?",
                         (int(time.time() * 1000), run_id))

    def log_artifact(self, run_id, local_path, artifact_path=None):
        """Copy a file into the run's local artifact directory (``LocalArtifactRepository.log_artifact``:
        a temporary file in place, its times and mode copied, then renamed)."""
        art = self._run(run_id, active=False)[2]
        root = Path(_local_dir(art))
        local_path = Path(local_path)
        if local_path.is_dir():
            raise Unsupported("a directory as an artifact")
        sub = (artifact_path or "").strip("/")
        if sub and (posixpath.normpath(sub) != sub or sub.startswith("..") or "\\" in sub):
            raise _invalid(f"artifact path {artifact_path!r}")
        folder = root / sub if sub else root
        folder.mkdir(parents=True, exist_ok=True)
        dest = folder / local_path.name
        try:
            if os.path.samefile(local_path, dest):
                return
        except FileNotFoundError:
            pass
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".mlflow-artifact-tmp-")
        try:
            with os.fdopen(fd, "wb") as out, open(local_path, "rb") as src:
                shutil.copyfileobj(src, out)
            shutil.copystat(local_path, tmp)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @_savepoint
    def write_runs(self, experiment_id, runs, now_ms):
        """A job's configuration runs as finished runs in bulk: what ``create_run(tags, run_name)``,
        ``log_batch(metrics, params)``, ``log_inputs([dataset])`` and ``set_terminated`` write for each,
        the first run's start and end at ``now_ms``, each next 1 ms later
        (:func:`nystrom_bench.tracking_bulk.write_runs`, whose argument ``runs`` this takes, with this
        client's ``Metric``, ``Param`` and :meth:`dataset_input`).  Returns the runs' ids."""
        exp = self._active_experiment(experiment_id)
        run_rows, tag_rows, param_rows, metric_rows, latest_rows, edges, ids = [], [], [], [], [], [], []
        for i, run in enumerate(runs):
            rid, row, tags = self._run_rows(exp, run["name"], run["tags"], now_ms + i, "FINISHED", now_ms + i)
            ids.append(rid)
            run_rows.append(row)
            tag_rows += tags
            param_rows += self._param_rows(rid, run["params"])
            latest = {}
            metric_rows += self._metric_rows(rid, run["metrics"], latest)
            latest_rows += latest.values()
            if run.get("dataset") is not None:
                edges.append((rid, run["dataset"]))
        self._check_datasets([d for _, d in edges])
        con = self.con
        con.executemany(self._INSERT_RUN, run_rows)
        con.executemany(self._INSERT_TAG, tag_rows)
        con.executemany(self._INSERT_PARAM, param_rows)
        con.executemany(self._INSERT_METRIC, metric_rows)
        con.executemany(self._INSERT_LATEST, latest_rows)
        self._inputs(int(experiment_id), edges)
        return ids


class _RunData:
    """A searched run's ``data``: its tags, and its params and latest metrics read when asked for."""

    def __init__(self, con, run_id):
        self.tags, self._con, self._rid = {}, con, run_id

    @property
    def params(self):
        return dict(self._con.execute("SELECT key, value FROM params WHERE run_uuid = ?", (self._rid,)))

    @property
    def metrics(self):
        return {k: (float("nan") if n else v) for k, v, n in self._con.execute(
            "SELECT key, value, is_nan FROM latest_metrics WHERE run_uuid = ?", (self._rid,))}
