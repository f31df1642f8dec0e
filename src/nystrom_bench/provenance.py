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

__all__ = ["git_commit", "versions", "hardware", "config_hash", "summary"]

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


def config_hash(obj):
    """A short, stable hash of a JSON-serialisable config block."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def summary():
    """Everything above plus the date, as a flat dict."""
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "git_commit": git_commit(),
        "hardware": hardware(),
        **{f"version_{k}": v for k, v in versions().items()},
    }
