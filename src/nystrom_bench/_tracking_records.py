"""The records the MLflow-free tracking clients hand :mod:`nystrom_bench.tracking` (the REST client of
:mod:`nystrom_bench._tracking_rest`, the SQLite client of :mod:`nystrom_bench.tracking_sqlite`): shaped like
MLflow's entities where tracking reads or builds them, without ``import mlflow``."""
from __future__ import annotations


class Obj:
    """Attribute access to an answer (a run, its info and data), shaped like MLflow's entities where tracking
    reads them."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Page(list):
    """A page of a search, as MLflow's ``PagedList``: ``token`` is the next page's (None: the last)."""

    token = None


class Metric:
    """``mlflow.entities.Metric``'s fields, as ``log_batch`` takes them."""

    __slots__ = ("key", "value", "timestamp", "step")

    def __init__(self, key, value, timestamp, step):
        self.key, self.value, self.timestamp, self.step = key, value, timestamp, step


class Param:
    """``mlflow.entities.Param``'s fields, as ``log_batch`` takes them."""

    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key, self.value = key, value
