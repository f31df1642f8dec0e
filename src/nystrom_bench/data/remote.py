"""Url sources: the download cache (``<cache_dir>/raw/<name>/``, :func:`default_cache_dir`), its checks,
and parsing.

Each file of a url source is downloaded once (:func:`~nystrom_bench.data.download.fetch`:
retries, mirrors, checksums), decompressed once if it is an archive, and then reused.
A cached file is not trusted blindly:

- a cached download whose SHA-256 is known (the registry's ``sha256:`` or the lock
  file) is verified; on a mismatch it is deleted and downloaded again (warning); one the
  lock file does not know yet (fetched ahead without it, or put there by hand) has its
  SHA-256 recorded once its data pass every check;
- a cached archive that fails to decompress is deleted and downloaded again, once;
- a cached file that fails to parse, or whose data do not have the registry's shape
  (or hold non-finite values), is made again once: decompressed again from its
  archive, or downloaded again.

Only when the file made again fails too is a :class:`DataError` raised; it names the
file and the fix (delete ``<cache_dir>/raw/<name>/`` and run again).  Every step is
logged as a warning on the ``nystrom_bench.data.remote`` logger.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from .download import DownloadError, LockFile, decompress, fetch, sha256_file
from .errors import DataError

__all__ = ["default_cache_dir", "from_urls", "ARCHIVE_SUFFIXES", "CACHE_ENV"]

log = logging.getLogger(__name__)

#: suffixes of the raw downloads that are decompressed before parsing
ARCHIVE_SUFFIXES = (".bz2", ".gz", ".xz", ".zip")


#: the environment variable that names the data cache
CACHE_ENV = "NYSTROM_BENCH_DATA"


def default_cache_dir(cache_dir=None):
    """The one download cache (like scikit-learn's data home), shared by ``data.load``/``data.obtain``,
    ``python -m nystrom_bench.data fetch`` and the workflow's ``obtain`` rule: ``cache_dir`` when given,
    else ``$NYSTROM_BENCH_DATA``, else ``$XDG_CACHE_HOME/nystrom_bench`` (``~/.cache/nystrom_bench``).
    Raw downloads live in ``<cache>/raw/<name>/``."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "nystrom_bench"


def _offline_hint(e):
    alt = e.get("offline")
    if alt:
        return f"Offline alternative: the embedded copy {alt!r} (the same data, no download)."
    return ("Offline alternative: none for this set; `nystrom-bench data list` shows what each set needs "
            "(column needs: nothing, a package or a download).")


def _parse(fmt, path, e):
    from . import parsers

    if fmt == "svmlight":
        return parsers.parse_svmlight(path, n_features=e["shape"][1])
    if fmt == "csv":
        return parsers.parse_csv(path, target=e.get("target", -1), delimiter=e.get("delimiter"))
    if fmt == "mat":
        return parsers.parse_mat(path, x_key=e.get("x_key", "X"), y_key=e.get("y_key", "y"))
    return parsers.parse_keel(path)


class _CachedFile:
    """One file of a url source: its raw download and, for an archive, the decompressed copy."""

    def __init__(self, name, e, role, cache_dir, lock, timeout, retries):
        urls = e["files"][role]
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        fname = Path(self.urls[0].split("?")[0]).name
        self.name, self.e, self.role = name, e, role
        self.folder = cache_dir / "raw" / name
        self.raw = self.folder / fname
        self.key = f"{name}/{fname}"
        self.archive = self.raw.suffix.lower() in ARCHIVE_SUFFIXES
        self.plain = self.raw.with_suffix("") if self.archive else self.raw
        self.sha256 = (e.get("sha256") or {}).get(role)
        self.lock, self.timeout, self.retries = lock, timeout, retries
        self.made = set()  # paths written by this call (not reused from the cache)
        self.verified = False  # the raw download matches a known SHA-256

    # -- the raw download ------------------------------------------------------------------------
    def _expected(self):
        if self.sha256 or self.lock is None:
            return self.sha256
        try:
            return self.lock.get(self.key)
        except DownloadError as exc:  # a malformed lock file
            raise DataError(f"data set {self.name!r}: {exc}") from None

    def _download(self):
        try:
            fetch(self.urls, self.raw, sha256=self.sha256, lock=self.lock, key=self.key,
                  timeout=self.timeout, retries=self.retries)
        except DownloadError as exc:
            if not exc.failures:  # a checksum mismatch: its message says what to do
                raise DataError(f"data set {self.name!r}: {exc}") from None
            by_hand = (f"By hand: download {'it' if len(self.urls) == 1 else 'one of them'} elsewhere and "
                       f"put the file at {self.raw} (in the data cache; ${CACHE_ENV} moves it).")
            raise DataError(f"data set {self.name!r}: download failed: {exc}. {by_hand} "
                            f"{_offline_hint(self.e)}") from None
        self.made.add(self.raw)
        self.verified = bool(self._expected())

    def _ensure_raw(self):
        if self.raw.exists() and self.raw not in self.made and not self.verified:
            expected = self._expected()
            if expected:
                digest = sha256_file(self.raw)
                if digest == expected:
                    self.verified = True
                else:
                    log.warning("%s: the cached download has SHA-256 %s, expected %s (truncated or "
                                "changed); deleting it and downloading it again", self.raw, digest, expected)
                    self.raw.unlink()
                    if self.archive:
                        self.plain.unlink(missing_ok=True)  # made from a file we no longer trust
        if not self.raw.exists():
            self._download()

    def remember(self):
        """Record the SHA-256 of a cached download that the lock file does not know yet (fetched ahead
        with the command line or put there by hand), once its data have passed every check."""
        if self.lock is not None and self.raw.exists() and not self._expected():
            self.lock.record(self.key, sha256_file(self.raw))
            log.info("%s: its SHA-256 recorded in %s (trust on first use)", self.raw, self.lock.path)

    # -- the decompressed copy -------------------------------------------------------------------
    def _decompress(self):
        decompress(self.raw, self.plain, member=self.e.get("member"))
        self.made.add(self.plain)

    def _ensure_plain(self):
        self._ensure_raw()
        if not self.archive or self.plain.exists():
            return
        try:
            self._decompress()
            return
        except DownloadError as exc:
            self.raw.unlink(missing_ok=True)  # a corrupt archive is not kept in the cache
            if self.raw in self.made:
                raise DataError(f"data set {self.name!r}: {exc}; it was deleted, run again to re-download") from None
            log.warning("%s: the cached archive is corrupt or truncated (%s); deleting it and "
                        "downloading it again", self.raw, exc)
        self._download()
        try:
            self._decompress()
        except DownloadError as exc:
            self.raw.unlink(missing_ok=True)
            raise DataError(f"data set {self.name!r}: {exc} (downloaded twice); it was deleted, run again "
                            "to re-download") from None

    # -- parsing ---------------------------------------------------------------------------------
    @property
    def reusable(self):
        """Whether the parsed file came from the cache and making it again could change it."""
        return self.plain not in self.made and not (not self.archive and self.verified)

    def refresh(self):
        """Delete the parsed file so that :meth:`read` makes it again (decompress or download)."""
        self.plain.unlink(missing_ok=True)
        if not self.archive:
            self.verified = False

    def _parse(self):
        try:
            return _parse(self.e["format"], self.plain, self.e)
        except DataError:
            raise
        except (ValueError, OSError) as exc:  # e.g. undecodable bytes in a damaged text file
            raise DataError(f"{self.plain}: cannot read it ({type(exc).__name__}: {exc})") from None

    def read(self):
        """``(X, y)`` of this file, made again once if the cached copy cannot be parsed."""
        self._ensure_plain()
        try:
            return self._parse()
        except DataError as exc:
            if not self.reusable:
                raise DataError(f"data set {self.name!r}: {exc} (a fresh copy; if the download was cut "
                                f"short, delete {self.folder}/ and run again)") from None
            log.warning("%s: the cached file cannot be parsed (%s); making it again", self.plain, exc)
        self.refresh()
        self._ensure_plain()
        try:
            return self._parse()
        except DataError as exc:
            raise DataError(f"data set {self.name!r}: {exc}; {self.plain} was made again and still fails: "
                            f"delete {self.folder}/ and run again (if it fails again, the file at the "
                            "source is malformed)") from None


def _shape_problem(e, parts):
    """Why the parsed files do not have the registry's shape (or None).  With ``classes:`` the
    registry's row count is that of the class subset, so only the number of columns is checked
    here (obtain() checks the rows after taking the subset)."""
    rows = sum(len(p[0]) for p in parts)
    shape = (rows, parts[0][0].shape[1] if parts[0][0].ndim == 2 else -1)
    expected = (rows if "classes" in e else e["shape"][0], e["shape"][1])
    if shape != expected or any(p[0].ndim != 2 or p[0].shape[1] != shape[1] for p in parts):
        return f"parsed shape {shape} differs from the registry's {expected}"
    return None


def _problem(e, parts):
    """Why the parsed files look damaged (wrong shape, or non-finite inputs from a cut-off
    line), or None."""
    return _shape_problem(e, parts) or (
        None if all(np.isfinite(p[0]).all() for p in parts) else "the parsed inputs hold NaN or infinite values")


def from_urls(name, e, cache_dir=None, lock=None, timeout=30.0, retries=3):
    """Download (or reuse) every file of the url source ``e``, decompress, parse, check.

    Returns ``(X, y, n_train)``: the files stacked, the training file first
    (``n_train`` its row count; ``None`` without a separate training file).
    """
    cache_dir = default_cache_dir(cache_dir)
    made = [p for p in (*reversed(cache_dir.parents), cache_dir, cache_dir / "raw", cache_dir / "raw" / name)
            if not p.exists()]
    try:
        return _from_urls(name, e, cache_dir, lock, timeout, retries)
    except BaseException:
        for p in reversed(made):  # a failed first download leaves no empty folders behind
            if p.is_dir() and not any(p.iterdir()):
                p.rmdir()
        raise


def _from_urls(name, e, cache_dir, lock, timeout, retries):
    lock = LockFile(lock) if isinstance(lock, (str, Path)) else lock
    files = [_CachedFile(name, e, role, cache_dir, lock, timeout, retries)
             for role in ("train", "test", "data") if e["files"].get(role)]
    parts = [f.read() for f in files]
    problem = _problem(e, parts)
    stale = [i for i, f in enumerate(files) if f.reusable]
    if problem and stale:
        log.warning("data set %r: %s; making the cached files %s again", name, problem,
                    ", ".join(str(files[i].plain) for i in stale))
        for i in stale:
            files[i].refresh()
            parts[i] = files[i].read()
    problem = _shape_problem(e, parts)  # non-finite values that stay: obtain() names them
    if problem:
        paths = ", ".join(str(f.plain) for f in files)
        raise DataError(f"data set {name!r}: {problem}; the file may be truncated or a different version "
                        f"({paths}): delete {cache_dir / 'raw' / name}/ and run again")
    if _problem(e, parts) is None:  # only data that pass every check vouch for a cached file
        for f in files:
            f.remember()
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    n_train = next((len(p[0]) for f, p in zip(files, parts, strict=True) if f.role == "train"), None)
    return X, y, n_train
