"""The workflow's ``.npz`` files (written by the obtain and split stages): atomic writes."""

from __future__ import annotations

from .. import atomic

__all__ = ["save_npz_atomic"]


def save_npz_atomic(path, **arrays):
    """Write an ``.npz`` atomically (:func:`nystrom_bench.atomic.save_npz`): never a
    half-written file, mode 0644 under the usual umask."""
    atomic.save_npz(path, **arrays)
