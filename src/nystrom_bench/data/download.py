"""Real downloads: HTTP(S) with timeout, retries and back-off, streaming to a temporary
file with atomic rename, decompression, checksums (trust on first use) and mirrors.

``fetch(urls, dest, ...)`` tries each URL in order; for each it retries transient
failures (timeouts, connection errors, HTTP 5xx, truncated bodies) with
exponential back-off, and gives up at once on permanent ones (HTTP 4xx).  The body
streams into a temporary file beside the destination (:mod:`nystrom_bench.atomic`:
``.<dest>.<host>.<pid>.tmp``, mode 0644 under the usual umask) while its SHA-256 is
computed; only a complete, verified file is renamed onto ``dest``.  A failure removes
the temporary file; a killed download leaves it, and the next write of the same
``dest`` removes it.  :func:`decompress` and :class:`LockFile` write the same way.

Checksums: a known SHA-256 (from the registry) is verified; otherwise the first
download's SHA-256 is recorded in a lock file (YAML, meant to be committed) and
verified on every later download ("trust on first use").
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import sys
import time
import zipfile
import zlib
from pathlib import Path

import yaml

from .. import atomic

__all__ = ["DownloadError", "fetch", "decompress", "LockFile", "sha256_file", "describe_failures"]

CHUNK = 1 << 16


class DownloadError(OSError):
    """A download that failed for good (after retries, or permanently).

    ``failures``: ``[(url, reason, tries), ...]``, each URL tried once listed once with its last
    reason (empty for errors that are not about reaching a URL, e.g. a corrupt archive)."""

    def __init__(self, message, failures=()):
        super().__init__(message)
        self.failures = list(failures)


class _Transient(Exception):
    pass


def sha256_file(path):
    """SHA-256 of a file's bytes, as hex (read in blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


class LockFile:
    """``{key: sha256}`` in a YAML file, updated under a file lock and written atomically."""

    def __init__(self, path):
        self.path = Path(path)

    def read(self):
        if not self.path.exists():
            return {}
        data = yaml.safe_load(self.path.read_text()) or {}
        if not isinstance(data, dict):
            raise DownloadError(f"checksum lock file {self.path} is malformed; delete it to start afresh")
        return data

    def get(self, key):
        return self.read().get(key)

    def record(self, key, digest):
        try:
            from filelock import FileLock

            lock = FileLock(str(self.path) + ".lock", timeout=60)
        except ImportError:  # the library install (no workflow extra): the file is still written atomically
            from contextlib import nullcontext

            lock = nullcontext()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with lock:
            data = self.read()
            data[key] = digest
            with atomic.open_atomic(self.path, "w") as fh:
                fh.write("# SHA-256 of downloaded files (trust on first use); commit this file.\n")
                yaml.safe_dump(dict(sorted(data.items())), fh, sort_keys=True)


def _progress(done, total, label, stream):
    if stream is None:
        return
    if total:
        pct = 100.0 * done / total
        bar = "#" * int(pct // 4)
        stream.write(f"\r{label}: [{bar:<25}] {pct:5.1f}% of {total / 2**20:.1f} MiB")
    else:
        stream.write(f"\r{label}: {done / 2**20:.1f} MiB")
    stream.flush()


def _download_once(url, fh, timeout, label, stream):
    """Stream url into the open binary file ``fh``; return the SHA-256. Raises _Transient or DownloadError."""
    # imported here, by a download: urllib.request (http.client, email) is ~30 ms of every obtain and split job's
    # start-up, which mostly read embedded or generated data (issue 39)
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": "nystrom-bench"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            total = resp.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            h, done = hashlib.sha256(), 0
            while True:
                block = resp.read(CHUNK)
                if not block:
                    break
                fh.write(block)
                h.update(block)
                done += len(block)
                _progress(done, total, label, stream)
            if stream is not None:
                stream.write("\n")
            if total is not None and done != total:
                raise _Transient(f"truncated download: got {done} of {total} bytes")
            return h.hexdigest()
    except urllib.error.HTTPError as exc:
        if 500 <= exc.code < 600 or exc.code in (408, 429):
            raise _Transient(f"HTTP {exc.code}") from None
        raise DownloadError(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Transient(f"{type(reason).__name__}: {reason}") from None


def fetch(urls, dest, *, sha256=None, lock=None, key=None, timeout=30.0, retries=3, backoff=1.0,
          progress=None):
    """Download the first URL of ``urls`` that works to ``dest`` (atomically); return ``dest``.

    Parameters
    ----------
    urls : str or list of str
        Mirrors, tried in order.
    sha256 : str, optional
        Known checksum; a mismatch is an error.
    lock, key : LockFile and its key, optional
        Trust-on-first-use checksum store: recorded after the first download,
        verified after later ones.
    timeout : float
        Seconds without data before a try fails.
    retries : int
        Tries per URL for transient failures, with back-off ``backoff * 2**i`` seconds.
    progress : file-like or None
        Where to draw a progress bar; default: stderr if it is a terminal.
    """
    urls = [urls] if isinstance(urls, str) else list(urls)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if progress is None and sys.stderr.isatty():
        progress = sys.stderr
    expected = sha256 or (lock.get(key) if lock is not None and key else None)
    failures = []  # (url, last reason, tries): each URL named once in the error
    for url in urls:
        reason, tries = None, 0
        for attempt in range(max(1, retries)):
            tries = attempt + 1
            try:
                with atomic.open_atomic(dest, "wb") as fh:  # renamed onto dest only if the block succeeds
                    digest = _download_once(url, fh, timeout, dest.name, progress)
                    if expected and digest != expected:
                        raise DownloadError(
                            f"checksum mismatch for {url}: expected sha256 {expected}, got {digest}; the file "
                            "changed upstream or is corrupt (delete its entry in the lock file to accept it)"
                        )
                if lock is not None and key and not expected:
                    lock.record(key, digest)
                return dest
            except _Transient as exc:
                reason = str(exc)
                if attempt + 1 < retries:
                    time.sleep(backoff * 2**attempt)
            except DownloadError as exc:
                if "checksum mismatch" in str(exc):
                    raise
                reason = str(exc)
                break  # permanent for this URL: next mirror
        failures.append((url, reason, tries))
    raise DownloadError(describe_failures(failures) or "no URL given", failures)


def describe_failures(failures):
    """``url: reason (3 tries); mirror: reason``: every URL once, with its last reason."""
    return "; ".join(f"{url}: {reason}" + (f" ({tries} tries)" if tries > 1 else "")
                     for url, reason, tries in failures)


#: what reading a damaged archive raises (bz2/gzip: OSError, EOFError; zip: BadZipFile, zlib.error)
_UNREADABLE = (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, zlib.error, KeyError)


def _unreadable(src, exc):
    if isinstance(exc, DownloadError):
        return exc
    return DownloadError(f"corrupt or unreadable archive {src}: {type(exc).__name__}: {exc}")


def _open_decompressed(src, member):
    """A binary stream of the decompressed content of ``src`` (by suffix; else ``src`` itself)."""
    suffix = src.suffix.lower()
    if suffix == ".zip":
        with zipfile.ZipFile(src) as zf:  # the member stream keeps the file open after this block
            names = [n for n in zf.namelist() if not n.endswith("/")]
            if member is None:
                if len(names) != 1:
                    raise DownloadError(f"{src} holds {len(names)} files; name the member to extract")
                member = names[0]
            return zf.open(member)
    opener = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}.get(suffix, open)
    return opener(src, "rb")


def decompress(src, dest, member=None):
    """Decompress ``src`` (by suffix: .bz2, .gz, .xz, .zip; else copy) to ``dest`` atomically.

    For a zip, ``member`` names the file to extract (default: the only file).
    A corrupt archive raises :class:`DownloadError`; nothing is left at ``dest``.
    Errors writing ``dest`` (a full disk) are not taken for a corrupt archive: they
    propagate as they are.
    """
    src, dest = Path(src), Path(dest)
    with atomic.open_atomic(dest, "wb") as fout:  # renamed onto dest only if the block succeeds
        try:
            fin = _open_decompressed(src, member)
        except _UNREADABLE as exc:
            raise _unreadable(src, exc) from None
        with fin:
            while True:
                try:
                    block = fin.read(CHUNK)
                except _UNREADABLE as exc:
                    raise _unreadable(src, exc) from None
                if not block:
                    break
                fout.write(block)
    return dest
