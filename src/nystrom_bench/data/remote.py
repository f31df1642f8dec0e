"""Url sources: the download cache (``<cache_dir>/raw/<name>/``) and parsing."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .errors import DataError

__all__ = ["default_cache_dir", "from_urls"]


def default_cache_dir():
    """Where downloads go: ``$NYSTROM_BENCH_DATA`` or ``resources/data`` under the working directory."""
    return Path(os.environ.get("NYSTROM_BENCH_DATA", "resources/data"))


def _parse(fmt, path, e):
    from . import parsers

    if fmt == "svmlight":
        return parsers.parse_svmlight(path, n_features=e["shape"][1])
    if fmt == "csv":
        return parsers.parse_csv(path, target=e.get("target", -1), delimiter=e.get("delimiter"))
    return parsers.parse_keel(path)


def from_urls(name, e, cache_dir=None, lock=None, timeout=30.0, retries=3):
    """Download (or reuse) every file of a url source, decompress, parse; train part first."""
    from .download import DownloadError, LockFile, decompress, fetch

    cache_dir = Path(cache_dir or default_cache_dir())
    lock = LockFile(lock) if isinstance(lock, (str, Path)) else lock
    parts, n_train = [], None
    for role in ("train", "test", "data"):
        urls = e["files"].get(role)
        if not urls:
            continue
        urls = [urls] if isinstance(urls, str) else urls
        fname = Path(urls[0].split("?")[0]).name
        raw = cache_dir / "raw" / name / fname
        if not raw.exists():
            try:
                fetch(urls, raw, sha256=(e.get("sha256") or {}).get(role), lock=lock,
                      key=f"{name}/{fname}", timeout=timeout, retries=retries)
            except DownloadError as exc:
                alt = e.get("offline")
                hint = f" Offline alternative: the embedded data set {alt!r}." if alt else \
                    " Offline alternative: use config/config.yaml (embedded data only)."
                raise DataError(f"data set {name!r}: download failed ({exc}).{hint}") from None
        plain = raw
        if raw.suffix.lower() in (".bz2", ".gz", ".xz", ".zip"):
            plain = raw.with_suffix("")
            if not plain.exists():
                try:
                    decompress(raw, plain, member=e.get("member"))
                except DownloadError as exc:
                    raw.unlink(missing_ok=True)  # a corrupt archive is not kept in the cache
                    raise DataError(f"data set {name!r}: {exc}; it was deleted, run again to re-download") from None
        X, y = _parse(e["format"], plain, e)
        if role == "train":
            n_train = len(X)
        parts.append((X, y))
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    return X, y, n_train
