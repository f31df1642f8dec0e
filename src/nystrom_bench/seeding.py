"""Deterministic seeds from names: every job re-runs identically on its own.

A job seed derives from ``(study, dataset, seed)`` through
:class:`numpy.random.SeedSequence`: the user's integer seed is the entropy and
the names become the ``spawn_key`` (CRC32 of each name), so two jobs that differ
in any of the three get independent streams, and adding a data set or a seed to
a config never changes the streams of the jobs already there.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["seed_sequence", "rng", "check_random_state"]


def _key(name):
    return zlib.crc32(str(name).encode("utf-8")) & 0xFFFFFFFF


def seed_sequence(seed, *names):
    """``SeedSequence(entropy=seed, spawn_key=crc32(names))``."""
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return np.random.SeedSequence(entropy=seed, spawn_key=tuple(_key(n) for n in names))


def rng(seed, *names):
    """A :class:`numpy.random.Generator` for ``(seed, *names)``."""
    return np.random.default_rng(seed_sequence(seed, *names))


def check_random_state(seed):
    """Turn None / int / SeedSequence / Generator into a Generator (None: fresh entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    return np.random.default_rng(seed)
