"""The workflow's ``.npz`` files (written by the obtain and split stages): atomic writes and
checked reads.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from .. import atomic
from .errors import DataError

__all__ = ["save_npz_atomic", "load_npz"]


def save_npz_atomic(path, **arrays):
    """Write an ``.npz`` atomically (:func:`nystrom_bench.atomic.save_npz`): never a
    half-written file, mode 0644 under the usual umask."""
    atomic.save_npz(path, **arrays)


def load_npz(path, keys=()):
    """Read a workflow ``.npz`` completely: ``{name: array}``.

    Every array is read (so a truncated or corrupt member shows here, not later), and
    each name in ``keys`` must be present.  A damaged file raises :class:`DataError`
    ``"<path> is corrupt or truncated (<reason>); delete it and run again: the workflow
    re-creates it"``; a missing file raises :class:`FileNotFoundError` as usual.
    """
    path = Path(path)
    try:
        npz = np.load(path, allow_pickle=False)
        if not hasattr(npz, "files"):
            raise ValueError("a single .npy array, not an .npz archive")
        with npz:
            arrays = {name: npz[name] for name in npz.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, KeyError) as exc:
        raise _corrupt(path, f"{type(exc).__name__}: {exc}") from None
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise _corrupt(path, f"missing arrays {missing}; it holds {sorted(arrays)}")
    return arrays


def _corrupt(path, reason):
    return DataError(f"{path} is corrupt or truncated ({reason}); delete it and run again: "
                     "the workflow re-creates it")
