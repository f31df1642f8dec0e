"""Seeded synthetic generators: Chen et al.'s f1-f4 (GNKR), Friedman #1, Ding et al.'s (TNNLS 2020) MCM grid,
and scalable data for performance studies.

:func:`generate` is the registry's ``synthetic:<kind>`` dispatch: the pool of points
is fixed per data set (seed 0); splits and training noise vary with the split seed.
"""

from __future__ import annotations

import numpy as np

from ..seeding import rng as seeded_rng
from .errors import DataError

__all__ = ["generate", "make_mcm_grid", "make_scalable"]


def _gnkr_function(fn, n, rng):
    """Chen et al. (NIPS 2016) synthetic functions: (X, clean y)."""
    intervals = {
        "f1": (0.0, 2 * np.pi),
        "f2": (-2 * np.pi, 2 * np.pi),
        "f3": (-3.0, 3.0),
        "f4": (-2.0, 4.0),
    }
    if fn not in intervals:
        raise DataError(f"gnkr function must be one of {sorted(intervals)}, got {fn!r}")
    x = rng.uniform(*intervals[fn], size=n)
    sinc = np.sinc(x / np.pi)  # sin(x)/x with the limit 1 at x = 0
    y = {"f1": x * np.sin(x), "f2": sinc, "f3": np.sign(x), "f4": np.cos(np.exp(x)) + sinc}[fn]
    return x[:, None], y


def make_mcm_grid(shape, spacing=0.1, noise_sd=0.01, seed=0):
    """Ding et al.'s (TNNLS 2020) MCM synthetic data: a p-dimensional grid, row-major, each axis centred at 0.

    ``f(x) = exp(-8 (3 - ||x||)^2) - exp(-8 (1.5 - ||x||)^2) - exp(-8 (2 - ||x||)^2)``
    (as printed in Ding et al. (TNNLS 2020), Section VII), ``y = f(x) + N(0, noise_sd^2)``.  The row-major
    order is the grid labelling the MCM approximation assumes (``approx.build("mcm", X, k,
    grid=shape)``).  Returns ``(X, y)`` with ``prod(shape)`` rows.
    """
    shape = tuple(int(m) for m in shape)
    axes = [(np.arange(m) - (m - 1) / 2.0) * spacing for m in shape]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(shape))
    r = np.linalg.norm(X, axis=1)
    f = np.exp(-8 * (3 - r) ** 2) - np.exp(-8 * (1.5 - r) ** 2) - np.exp(-8 * (2 - r) ** 2)
    rng = seeded_rng(seed, "mcm_grid", *shape)
    return X, f + noise_sd * rng.standard_normal(len(X))


def make_scalable(n_samples, n_features, seed=0, noise=0.1):
    """Scalable regression data for performance studies (n up to millions, any d).

    ``X ~ N(0, I_d)``, ``y = sin(X w) + 0.5 cos(X v) + noise``, with fixed random
    directions w, v of norm 1 (so a Gaussian kernel of width ~ sqrt(d) fits it).
    Generated in chunks: memory is the output only.
    """
    rng = seeded_rng(seed, "scalable", n_features)
    w, v = rng.normal(size=(2, n_features))
    w, v = w / np.linalg.norm(w), v / np.linalg.norm(v)
    X = np.empty((int(n_samples), int(n_features)))
    for start in range(0, len(X), 100_000):
        X[start : start + 100_000] = rng.standard_normal((min(100_000, len(X) - start), n_features))
    y = np.sin(X @ w) + 0.5 * np.cos(X @ v) + noise * rng.standard_normal(len(X))
    return X, y


def generate(kind, params, name):
    """``(X, y)`` of the registry's ``synthetic:<kind>`` data set ``name`` with ``params``."""
    # the pool of points is fixed per data set (seed 0); splits and noise vary with the seed
    rng = seeded_rng(0, "synthetic", name)
    if kind == "gnkr":
        return _gnkr_function(params["function"], int(params["n_samples"]), rng)
    if kind == "mcm_grid":
        return make_mcm_grid(params["shape"], float(params.get("spacing", 0.1)),
                             float(params.get("noise_sd", 0.01)))
    if kind == "scalable":
        return make_scalable(int(params["n_samples"]), int(params["n_features"]), seed=0,
                             noise=float(params.get("noise", 0.1)))
    if kind == "friedman1":
        from sklearn.datasets import make_friedman1

        return make_friedman1(
            n_samples=int(params["n_samples"]),
            noise=float(params.get("noise", 1.0)),
            random_state=int(rng.integers(2**31 - 1)),
        )
    raise DataError(f"unknown synthetic generator {kind!r} (data set {name!r})")
