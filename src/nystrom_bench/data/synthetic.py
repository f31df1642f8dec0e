"""Seeded synthetic generators: Chen et al.'s f1-f4 (GNKR), Friedman #1, Ding et al.'s (TNNLS 2020) MCM grid,
scalable data for performance studies, and data sets with a known kernel-spectrum structure for the
landmark-sampler study (unequal clusters, outliers, fast and slow spectral decay).

:func:`generate` is the registry's ``synthetic:<kind>`` dispatch: the pool of points
is fixed per data set (seed 0); splits and training noise vary with the split seed.
"""

from __future__ import annotations

import numpy as np

from ..seeding import rng as seeded_rng
from .errors import DataError

__all__ = ["generate", "make_mcm_grid", "make_scalable", "make_unequal_clusters", "make_outliers",
           "make_fast_decay", "make_slow_decay"]


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


# -- data sets with a known spectral structure (the samplers study: when do non-uniform landmarks pay?) --------
def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else seeded_rng(int(seed), "structure")


def make_unequal_clusters(n_big=1500, n_small=15, n_clusters=30, spacing=1.0, spread=0.1, seed=0):
    """One big cluster and ``n_clusters - 1`` small ones in 2-D, well separated: a few points carry the spectrum.

    Cluster centres lie on a near-square grid with ``spacing`` between neighbours; each cluster is an
    isotropic Gaussian of sd ``spread`` (``spacing / spread = 10`` by default: the clusters do not
    touch).  One cluster, at a random grid cell, holds ``n_big`` points, the others ``n_small`` each
    (issue 35's acceptance case: 1,500 and 29 x 15).  At a width near the cluster size the kernel
    matrix is close to block-diagonal; each small cluster is an eigen-direction that c uniform landmarks
    miss with probability about ``(1 - n_small / n)^c``, while ridge-leverage or pivoted-Cholesky
    landmarks find it.  The target is constant on a cluster -- a smooth function of its centre,
    ``f(c) = sin(1.7 c_1) + cos(2.3 c_2 + 1)`` (30 distinct values, sd about 1) -- so a missed cluster
    costs test error.  Rows are shuffled.

    Returns
    -------
    X : ndarray of shape (n_big + (n_clusters - 1) n_small, 2)
    y : ndarray of shape (n,)
        Noise-free; the registry adds training noise (``train_noise_sd``).

    Examples
    --------
    >>> from nystrom_bench.data.synthetic import make_unequal_clusters
    >>> X, y = make_unequal_clusters(seed=0)
    >>> X.shape, len(set(y.round(12)))   # 30 clusters, one target value each
    ((1935, 2), 30)
    """
    rng = _rng(seed)
    n_clusters, n_big, n_small = int(n_clusters), int(n_big), int(n_small)
    cols = int(np.ceil(np.sqrt(n_clusters)))
    cells = np.stack(np.divmod(np.arange(n_clusters), cols), axis=1)[:, ::-1].astype(np.float64)
    centres = float(spacing) * (cells - cells.mean(axis=0))
    sizes = np.full(n_clusters, n_small)
    sizes[rng.integers(n_clusters)] = n_big
    label = np.repeat(np.arange(n_clusters), sizes)
    X = centres[label] + float(spread) * rng.standard_normal((len(label), 2))
    f = np.sin(1.7 * centres[:, 0]) + np.cos(2.3 * centres[:, 1] + 1.0)
    order = rng.permutation(len(label))
    return X[order], f[label][order]


def _smooth_target(X, rng):
    """``sin(X w) + 0.5 cos(X v)`` with fixed random unit directions w, v (as :func:`make_scalable`)."""
    w, v = rng.normal(size=(2, X.shape[1]))
    return np.sin(X @ (w / np.linalg.norm(w))) + 0.5 * np.cos(X @ (v / np.linalg.norm(v)))


def make_outliers(n_samples=2000, n_features=5, outlier_fraction=0.02, radius=10.0, seed=0):
    """A standard Gaussian cloud in ``n_features`` dimensions with a fraction of far, isolated outliers.

    ``round(outlier_fraction n)`` points lie at distance ``radius`` (default 10 standard deviations, 4 to
    5 times the cloud's typical radius ``sqrt(d)``) from the origin in uniformly random directions, so far
    from the cloud and from each other that at the median width each is nearly a kernel block of its
    own: its ridge leverage score is near 1 while the bulk's are small (high coherence).  The target
    ``sin(x w) + 0.5 cos(x v)`` (fixed unit directions w, v) is the same smooth function everywhere.
    Rows are shuffled.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Noise-free; the registry adds training noise.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.data.synthetic import make_outliers
    >>> X, y = make_outliers(seed=0)
    >>> X.shape, int((np.linalg.norm(X, axis=1) > 7).sum())
    ((2000, 5), 40)
    """
    rng = _rng(seed)
    n, d = int(n_samples), int(n_features)
    n_out = int(round(float(outlier_fraction) * n))
    X = rng.standard_normal((n, d))
    u = rng.standard_normal((n_out, d))
    X[:n_out] = float(radius) * u / np.linalg.norm(u, axis=1, keepdims=True)
    X = X[rng.permutation(n)]
    return X, _smooth_target(X, rng)


def make_fast_decay(n_samples=2000, n_features=10, noise=1e-3, seed=0):
    """Points on a smooth closed curve in ``n_features`` dimensions, with tiny noise: a fast spectral decay.

    ``t ~ U[0, 1)``; the curve is ``(cos 2 pi t, sin 2 pi t, cos 4 pi t, sin 4 pi t) A`` with a fixed
    random orthonormal 4 x ``n_features`` map A (a 1-D manifold in a 4-D subspace), plus N(0, noise^2)
    in every coordinate.  A Gaussian kernel at the median width sees a one-dimensional set: its
    eigenvalues fall geometrically (a low numerical rank), so a few landmarks of any kind capture it.
    Target: ``sin(4 pi t)``, smooth along the curve.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.data.synthetic import make_fast_decay
    >>> X, y = make_fast_decay(seed=0)
    >>> sv = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    >>> X.shape, bool(sv[3] > 100 * sv[4])   # four directions hold the curve
    ((2000, 10), True)
    """
    rng = _rng(seed)
    n, d = int(n_samples), int(n_features)
    if d < 4:
        raise ValueError(f"make_fast_decay: n_features must be >= 4 (the curve spans 4 dimensions), got {d}")
    A = np.linalg.qr(rng.standard_normal((d, 4)))[0].T
    t = rng.uniform(size=n)
    a = 2 * np.pi * t
    X = np.stack([np.cos(a), np.sin(a), np.cos(2 * a), np.sin(2 * a)], axis=1) @ A
    X += float(noise) * rng.standard_normal((n, d))
    return X, np.sin(2 * a)


def make_slow_decay(n_samples=2000, n_features=20, seed=0):
    """Uniform points in the cube ``[0, 1]^n_features``: a slow spectral decay, high effective dimension.

    In 20 dimensions pairwise distances concentrate, so a Gaussian kernel at the median width is
    close to ``a I + b 1 1^T``: after the top eigenvalue the spectrum is nearly flat and every point
    equally important (leverage scores nearly equal) -- the case where no sampler beats uniform.
    Target: ``sin(pi u)`` with ``u = (x - 1/2) . 1 / sqrt(n_features)`` (sd about 0.29), a smooth
    function of one direction (exact KRR at the median width: test R^2 about 0.92; ``sin(2 pi u)``
    was too fast for 1,400 points in 20-D, R^2 about 0.2-0.3).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from nystrom_bench.data.synthetic import make_slow_decay
    >>> X, y = make_slow_decay(seed=0)
    >>> X.shape, bool(0 <= X.min() and X.max() <= 1)
    ((2000, 20), True)
    """
    rng = _rng(seed)
    n, d = int(n_samples), int(n_features)
    X = rng.uniform(size=(n, d))
    u = (X - 0.5).sum(axis=1) / np.sqrt(d)
    return X, np.sin(np.pi * u)


def make_smile(n_samples=10000, seed=0):
    """Chen, Epperly, Tropp & Webber's (CPAM 2024) "smile" test set (Figure 1): a face in 2-D.

    Two eyes -- ``ceil(sqrt(n))`` points each, uniform in unit discs centred at (-4, 4) and (4, 4) --,
    a mouth -- ``ceil(n / 10)`` evenly spaced points on ``y = x^2 / 16 - 5``, ``|x| <= 5`` -- and the
    outline -- the rest, evenly spaced on the circle of radius 10.  The paper uses it with a Gaussian
    kernel of bandwidth 2 (``exp(-|x - y|^2 / (2 * 2^2))``, i.e. ``gamma = 1/8``): the eyes are small dense
    clusters that uniform landmarks undersample.  As described in the paper's reference code
    (``gallery.smile`` of github.com/eepperly/Randomly-Pivoted-Cholesky); the paper uses no target, so the
    target here is a smooth function of position, ``sin(x_1 / 3) + cos(x_2 / 4)``, for the test-error metric.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
    """
    rng = _rng(seed)
    n = int(n_samples)
    n_eye, n_mouth = int(np.ceil(np.sqrt(n))), int(np.ceil(n / 10))
    n_face = n - 2 * n_eye - n_mouth
    if n_face < 1:
        raise ValueError(f"make_smile: n_samples = {n} is too small for two eyes and a mouth (need at least 16)")
    r, phi = np.sqrt(rng.uniform(size=2 * n_eye)), rng.uniform(0, 2 * np.pi, size=2 * n_eye)
    eyes = np.stack([r * np.cos(phi), r * np.sin(phi) + 4.0], axis=1)
    eyes[:n_eye, 0] -= 4.0
    eyes[n_eye:, 0] += 4.0
    x = np.linspace(-5.0, 5.0, n_mouth)
    mouth = np.stack([x, x**2 / 16.0 - 5.0], axis=1)
    theta = np.linspace(0, 2 * np.pi, n_face)
    face = 10.0 * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    X = np.vstack([eyes, mouth, face])[rng.permutation(n)]
    return X, np.sin(X[:, 0] / 3.0) + np.cos(X[:, 1] / 4.0)


def make_spiral(n_samples=10000, seed=0):
    """Chen, Epperly, Tropp & Webber's (CPAM 2024) "spiral" test set (Figure 1): outliers on a spiral arm.

    ``t = (2 s)^6`` for ``s`` evenly spaced in [0, 1], points ``e^{t/5} (cos t, sin t)``: most points crowd
    near the origin while the arm's outer turns (radius up to ``e^{12.8}``, about 3.6e5) hold a few isolated
    points.  The paper uses a Gaussian kernel of bandwidth 1000 (``gamma = 1 / (2 * 1000^2) = 5e-7``): each
    outer point is nearly its own kernel block, so greedy pivoting spends its pivots there and uniform
    sampling misses them.  As in the paper's reference code (``gallery.robspiral``); the target (the paper
    has none) is ``sin(2 pi s)`` of the arm position, smooth along the spiral.  Deterministic (``seed`` only
    shuffles the rows).

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
    """
    rng = _rng(seed)
    s = np.linspace(0.0, 1.0, int(n_samples))
    t = (2.0 * s) ** 6
    X = np.exp(0.2 * t)[:, None] * np.stack([np.cos(t), np.sin(t)], axis=1)
    order = rng.permutation(len(s))
    return X[order], np.sin(2 * np.pi * s)[order]


#: the structure generators by registry kind: ``synthetic:<kind>`` with the function's keyword ``params``
STRUCTURE_KINDS = {
    "unequal_clusters": make_unequal_clusters,
    "outliers": make_outliers,
    "fast_decay": make_fast_decay,
    "slow_decay": make_slow_decay,
    "smile": make_smile,
    "spiral": make_spiral,
}


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
    if kind in STRUCTURE_KINDS:
        try:
            return STRUCTURE_KINDS[kind](**params, seed=rng)
        except TypeError as exc:
            raise DataError(f"data set {name!r}: bad params for synthetic:{kind}: {exc}") from None
    raise DataError(f"unknown synthetic generator {kind!r} (data set {name!r})")
