"""Studies: one module per study kind, found through a registry.

A study kind is a :class:`Study` subclass decorated with ``@register``.  It says
which tasks it accepts, which metrics it reports, how to check its config block
(:meth:`Study.check_method`, :meth:`Study.skip`) and how to run one workflow job
(:meth:`Study.run`: every method x kernel x seed on one data set).  Adding a
study = one module here + a config block + its test.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["Study", "register", "get", "available"]

_REGISTRY = {}


def register(cls):
    """Class decorator: add a :class:`Study` subclass under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _discover():
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


def available():
    """Names of all study kinds."""
    _discover()
    return sorted(_REGISTRY)


def get(name):
    """An instance of the study kind ``name``."""
    _discover()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown study kind {name!r}; choose one of {', '.join(sorted(_REGISTRY))}") from None


class Study:
    """Base class of a study kind (see module docstring)."""

    name = "study"
    title = "Study"
    description = ""
    #: tasks of data sets this study can run on
    tasks = ("regression", "binary", "multiclass")
    #: metric -> (label, lower_is_better)
    metrics = {}
    #: metric tested between methods and shown first
    primary_metric = None
    #: method every other method is compared with (config may override with `reference:`)
    reference_method = None

    def skip(self, dataset_info, method_name, method_cfg):
        """Why this dataset x method pairing is invalid (a string), or None if it is fine."""
        if dataset_info["task"] not in self.tasks:
            return f"study kind {self.name!r} needs a {'/'.join(self.tasks)} data set, " \
                   f"{dataset_info['name']!r} is {dataset_info['task']}"
        return None

    #: the keys ``params:`` may hold (None: anything); a typo is an error, not silently ignored
    known_params = None

    def check_method(self, method_name, method_cfg, study_cfg):
        """Raise ValueError naming the problem if a method block is invalid."""

    def check_params(self, params):
        """Raise ValueError naming the problem if the study's ``params:`` block is invalid."""
        if self.known_params is not None:
            unknown = sorted(set(params) - set(self.known_params))
            if unknown:
                raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))} for study kind "
                                 f"{self.name!r}; allowed: {', '.join(self.known_params)}")

    def result_methods(self, study_cfg):
        """The method labels the result rows will carry (default: the config's method names)."""
        return list(study_cfg["methods"])

    def report_tables(self, df, study_cfg):
        """Extra ``(title, DataFrame, note)`` tables for the study's PDF (e.g. a paper's layout)."""
        return []

    def report_figures(self, df, info, out_dir):
        """Draw extra figures into ``out_dir``; return ``[(path, caption), ...]`` (shown first in the PDF)."""
        return []

    def run(self, study, cfg, dataset, X, y, splits, log=None):  # pragma: no cover - abstract
        """Run every method x kernel x seed of ``cfg`` on one data set; return result dicts."""
        raise NotImplementedError
