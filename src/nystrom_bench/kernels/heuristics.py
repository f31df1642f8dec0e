"""Kernel widths from the data: the median and mean pairwise squared distance heuristics."""

from __future__ import annotations

import numpy as np

from .blas import as_2d, issparse, n_rows, row_sq_norms

__all__ = ["median_sq_dist", "mean_sq_dist", "resolve_width", "HEURISTICS"]

#: the width heuristics a spec may name
HEURISTICS = ("median", "mean")


def _pair_sq_dists(X, max_points, seed):
    X = as_2d(X)
    if n_rows(X) > max_points:
        rng = np.random.default_rng(seed)
        X = X[rng.choice(n_rows(X), max_points, replace=False)]
    if issparse(X):  # sparse rows: the norms trick (sparse products), never a dense copy of the sample
        from sklearn.metrics.pairwise import euclidean_distances

        D = euclidean_distances(X, squared=True)
    else:
        # imported here: scipy.spatial's import is ~0.2 CPU-s (see distance.py)
        from scipy.spatial.distance import cdist

        D = cdist(X, X, metric="sqeuclidean")
    return D[np.triu_indices(n_rows(X), k=1)]


def median_sq_dist(X, max_points=2000, seed=0):
    """Median pairwise squared Euclidean distance (on a sample of ``max_points`` rows)."""
    return float(np.median(_pair_sq_dists(X, max_points, seed)))


def mean_sq_dist(X, max_points=2000, seed=0):
    """Mean pairwise squared distance; exact formula ``2 (mean ||x||^2 - ||mean x||^2) n/(n-1)``."""
    X = as_2d(X)
    n = n_rows(X)
    if n < 2:
        raise ValueError("mean_sq_dist needs at least two points")
    mu = np.asarray(X.mean(axis=0)).ravel()
    sq = row_sq_norms(X).sum() if issparse(X) else np.einsum("ij,ij->", X, X)
    return float(2.0 * (sq / n - mu @ mu) * n / (n - 1))


def _heuristic_sq_dist(value, X):
    """The pairwise squared distance statistic of X named by ``value`` ("median" or "mean")."""
    if value == "median":
        d = median_sq_dist(X)
    elif value == "mean":
        d = mean_sq_dist(X)
    else:
        raise ValueError(f"unknown width heuristic {value!r}; use a number, 'median' or 'mean'")
    if d <= 0:
        raise ValueError("all points coincide: cannot set a kernel width from distances")
    return d


def resolve_width(value, X, scale=1.0):
    """Turn a width spec into ``gamma``: a number is returned as is; ``"median"``/``"mean"``
    give ``scale / median (mean) pairwise squared distance`` of X."""
    if isinstance(value, str):
        return float(scale) / _heuristic_sq_dist(value, X)
    return float(value)
