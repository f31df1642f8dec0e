"""The workflow's ``.npz`` files (written by the obtain and split stages): atomic writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["save_npz_atomic"]


def save_npz_atomic(path, **arrays):
    """Write an ``.npz`` via a temporary file and ``os.replace``: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
