"""Provenance of a run: git commit, package versions, hardware, config hash."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata

__all__ = ["git_commit", "versions", "hardware", "config_hash", "summary", "canonical", "KeyList"]

PACKAGES = ("nystrom-bench", "numpy", "scipy", "scikit-learn", "pandas", "mlflow", "snakemake")


@lru_cache(maxsize=None)
def git_commit(path="."):
    """The commit of the checkout at ``path`` (with ``-dirty`` if modified), or ``"unknown"``."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=path, capture_output=True, text=True, timeout=10, check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions(packages=PACKAGES):
    """``{package: version}`` of the packages that shape the numbers."""
    out = {"python": platform.python_version()}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def hardware():
    """A one-line description of the machine."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        mem = f", {pages * size / 2**30:.0f} GiB RAM"
    except (ValueError, OSError, AttributeError):
        pass
    return f"{cpu}, {os.cpu_count()} logical cores{mem}, {platform.system()} {platform.release()}"


class KeyList(list):
    """A list of names taken from a mapping's keys (studies, methods, job ids): its order is the
    config's, its identity is not (:func:`canonical` sorts it)."""


def _plain(obj):
    """JSON-ready ``obj`` with every :class:`KeyList` sorted (dict keys are sorted by the dump)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, KeyList):
        return sorted(_plain(v) for v in obj)
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _dump(obj):
    return json.dumps(_plain(obj), sort_keys=True, default=str)


class _CanonicalDict(dict):
    """A dict whose ``repr`` is its canonical JSON: key order (at any depth) and the order of
    :class:`KeyList` values do not show.  Iteration keeps the config's order."""

    def __repr__(self):
        return _dump(self)


class _CanonicalKeyList(KeyList):
    def __repr__(self):
        return _dump(self)


def canonical(obj):
    """``obj`` (a dict or a :class:`KeyList`) whose ``repr`` does not depend on the config's key order.

    Snakemake decides whether a job's params changed by comparing their ``repr``, so a params dict
    built from a config block would re-run its jobs when the same block is written with its keys in
    another order.  Wrapped here, the same meaning gives the same ``repr`` (and :func:`config_hash`).
    Lists other than :class:`KeyList` keep their order in the ``repr``: a grid's order can matter.
    """
    if isinstance(obj, dict):
        return _CanonicalDict(obj)
    if isinstance(obj, KeyList):
        return _CanonicalKeyList(obj)
    raise TypeError(f"canonical() takes a dict or a KeyList, got {type(obj).__name__}")


def config_hash(obj):
    """A short, stable hash of a JSON-serialisable config block (key order does not matter)."""
    return hashlib.sha256(_dump(obj).encode()).hexdigest()[:16]


def summary():
    """Everything above plus the date, as a flat dict."""
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "git_commit": git_commit(),
        "hardware": hardware(),
        **{f"version_{k}": v for k, v in versions().items()},
    }
