"""Landmark selection for Nystrom approximation: one function per strategy, one registry.

Each sampler takes ``(X, kernel, c, rng, **options)`` and returns the indices of
the ``c`` chosen rows of X (int array), or -- for samplers whose landmarks are
not data points -- a ``(c, d)`` float array of points.  Call them through
:func:`sample`, which resolves the seed and checks the arguments:

>>> import numpy as np
>>> from nystrom_bench import kernels, sampling
>>> X = np.random.default_rng(0).normal(size=(50, 2))
>>> idx = sampling.sample("uniform", X, kernels.make("gaussian"), c=5, seed=0)
>>> len(idx), len(set(idx.tolist()))
(5, 5)

Adding a sampler: write a function and decorate it with ``@register("name")``.
"""

from __future__ import annotations

import numpy as np

from .kernels import _as_2d, make
from .seeding import check_random_state

__all__ = ["sample", "register", "available"]

_REGISTRY = {}


def register(name):
    """Decorator adding a sampler function to the registry under ``name``."""

    def deco(func):
        _REGISTRY[name] = func
        func.sampler_name = name
        return func

    return deco


def available():
    """Names accepted by :func:`sample`."""
    return sorted(_REGISTRY)


def sample(name, X, kernel, c, seed=None, **options):
    """Choose ``c`` landmarks of X with the sampler ``name``.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    X : array of shape (n, d)
    kernel : Kernel or str
    c : int
        Number of landmarks, ``1 <= c <= n``.
    seed : None, int, SeedSequence or Generator
    **options
        Sampler-specific options (e.g. ``replace=True`` for ``column_norm``).

    Returns
    -------
    ndarray
        ``(c,)`` int indices into X, or ``(c, d)`` landmark points.
    """
    try:
        func = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown sampler {name!r}; choose one of {', '.join(available())}"
        ) from None
    X = _as_2d(X)
    c = int(c)
    if not 1 <= c <= len(X):
        raise ValueError(f"sampler {name!r}: need 1 <= c <= n = {len(X)}, got c = {c}")
    return func(X, make(kernel), c, check_random_state(seed), **options)


@register("uniform")
def uniform(X, kernel, c, rng):
    """``c`` distinct rows chosen uniformly at random (without replacement)."""
    return np.sort(rng.choice(len(X), size=c, replace=False))


@register("column_norm")
def column_norm(X, kernel, c, rng, replace=False):
    """Rows drawn with probability ``p_i = ||K[:, i]||^2 / ||K||_F^2``.

    ``replace=True`` draws c independent indices (seed 001's scheme; an index may
    repeat); ``replace=False`` draws c distinct indices by successive sampling.
    The column norms are computed block-wise: O(n) memory, no n x n matrix.
    """
    p = kernel.column_sq_norms(X)
    p = p / p.sum()
    return rng.choice(len(X), size=c, replace=bool(replace), p=p)


@register("kmeans")
def kmeans(X, kernel, c, rng, max_iter=20):
    """k-means centres as landmarks (Zhang & Kwok 2008); returns ``(c, d)`` points."""
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=c, n_init=1, max_iter=max_iter, random_state=int(rng.integers(2**31 - 1)))
    return km.fit(X).cluster_centers_


@register("leverage")
def leverage(X, kernel, c, rng, rank=None):
    """Exact rank-k leverage scores of K (forms K: small n only).

    ``p_i = ||U_k[i, :]||^2 / k`` with U_k the top-k eigenvectors of K
    (``rank`` k defaults to c); c distinct indices by successive sampling.
    """
    from scipy.linalg import eigh

    n = len(X)
    k = min(int(rank or c), n)
    _, U = eigh(kernel(X), subset_by_index=[n - k, n - 1])
    p = np.einsum("ij,ij->i", U, U)
    p = np.maximum(p, 0)
    return rng.choice(n, size=c, replace=False, p=p / p.sum())
