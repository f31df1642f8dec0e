"""The one exception of :mod:`nystrom_bench.data` (its own module: every other module raises it)."""

from __future__ import annotations

__all__ = ["DataError"]


class DataError(ValueError):
    """A user-fixable problem with a data set (unknown name, malformed file, bad shape)."""
