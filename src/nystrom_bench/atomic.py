"""Atomic file and directory writes: nothing half-written, readable by others, no litter.

Every output of the workflow goes through this module:

- :func:`temp_path` names a temporary file *beside* the target, so the final
  ``os.replace`` is an atomic rename on the same file system;
- files are created with mode ``0666 & ~umask`` (0644 under the usual umask 022) and
  directories with ``0777 & ~umask`` (0755), unlike :func:`tempfile.mkstemp` /
  :func:`tempfile.mkdtemp` (0600 / 0700), so a group on a shared cluster file
  system can read the results;
- a temporary name carries the host and the process id
  (``.<name>.<host>.<pid>.tmp``).  A kill leaves it behind, but the next write of
  the same target removes every leftover of a process that no longer runs on this
  host (or that is older than :data:`STALE_SECONDS`, for other hosts).

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> with open_atomic(d / "a.txt", "w") as fh:
...     _ = fh.write("hello")
>>> (d / "a.txt").read_text()
'hello'
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = ["temp_path", "open_atomic", "replace_into", "atomic_dir", "write_csv", "save_npz", "clean_leftovers"]

#: a leftover temporary of another host is removed once it is this old (seconds)
STALE_SECONDS = 24 * 3600
_SUFFIX = ".tmp"


def _host():
    return socket.gethostname().split(".")[0].replace(".", "_") or "host"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def clean_leftovers(path):
    """Remove temporaries of ``path`` left by killed writers; returns the removed paths."""
    path = Path(path)
    removed = []
    if not path.parent.is_dir():
        return removed
    host, now = _host(), time.time()
    for tmp in path.parent.glob(f".{path.name}.*{_SUFFIX}"):
        parts = tmp.name[len(path.name) + 2 : -len(_SUFFIX)].rsplit(".", 1)
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        tmp_host, pid = parts[0], int(parts[1])
        if pid == os.getpid() and tmp_host == host:
            continue
        try:
            stale = (not _alive(pid)) if tmp_host == host else now - tmp.lstat().st_mtime > STALE_SECONDS
        except FileNotFoundError:
            continue
        if stale:
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def temp_path(path):
    """A fresh temporary name beside ``path`` (parent created, leftovers of dead writers removed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(path)
    tmp = path.parent / f".{path.name}.{_host()}.{os.getpid()}{_SUFFIX}"
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp)
    else:
        tmp.unlink(missing_ok=True)
    return tmp


@contextmanager
def open_atomic(path, mode="wb", **kwargs):
    """``open`` for writing that appears at ``path`` only when the block succeeds."""
    path = Path(path)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def replace_into(path, write):
    """Call ``write(tmp_path)`` (e.g. a library's ``savefig``), then rename onto ``path``."""
    path = Path(path)
    tmp = temp_path(path)
    # create it ourselves so the mode follows the umask even if ``write`` only truncates
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        write(str(tmp))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


@contextmanager
def atomic_dir(path):
    """Fill a temporary directory (yielded) that replaces ``path`` only when the block succeeds."""
    path = Path(path)
    tmp = temp_path(path)
    os.mkdir(tmp, 0o777)
    try:
        yield tmp
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_csv(df, path):
    """Write a DataFrame as CSV (no index) atomically."""
    with open_atomic(path, "w", newline="") as fh:
        df.to_csv(fh, index=False)
    return Path(path)


def save_npz(path, **arrays):
    """Write an ``.npz`` atomically."""
    import numpy as np

    with open_atomic(path, "wb") as fh:
        np.savez(fh, **arrays)
    return Path(path)
