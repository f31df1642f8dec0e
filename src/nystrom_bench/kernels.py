"""Kernel functions, evaluated block-wise under a memory budget.

Every kernel is a small object with

- ``kern(X, Y=None)`` -- the kernel matrix ``K[i, j] = k(X[i], Y[j])`` (n x m),
  filled block by block so that temporaries stay in cache;
- ``kern.diag(X)`` -- ``k(x_i, x_i)`` without forming any matrix;
- ``kern.mmv(X, Y, v)`` -- ``K(X, Y) @ v`` without ever holding ``K(X, Y)``;
- ``kern.column_sq_norms(X)`` -- ``||K[:, j]||^2`` for all j, O(n) memory.

Distance-based kernels use the norms trick ``||x-y||^2 = ||x||^2 + ||y||^2 - 2 x.y``
(one GEMM per block) followed by in-place element-wise operations.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import kernels
>>> X = np.random.default_rng(0).normal(size=(5, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> K = kern(X)
>>> K.shape, bool(np.allclose(np.diag(K), kern.diag(X)))
((5, 5), True)
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

__all__ = [
    "Kernel",
    "Gaussian",
    "Laplacian",
    "Polynomial",
    "Linear",
    "Epanechnikov",
    "make",
    "available",
    "median_sq_dist",
    "mean_sq_dist",
    "resolve_width",
]

#: default size of one block of kernel values (bytes); 4 MiB keeps a block in L2/L3.
DEFAULT_BLOCK_BYTES = 4 * 2**20


def _as_2d(X, name="X"):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features), got {X.ndim}-D")
    return X


class Kernel:
    """Base class: subclasses implement :meth:`_fill` for one block.

    Parameters
    ----------
    block_bytes : int
        Upper bound on the size of one block of kernel values.
    """

    name = "kernel"
    #: whether every kernel matrix of this kernel is positive semi-definite
    psd = True

    def __init__(self, block_bytes=DEFAULT_BLOCK_BYTES):
        self.block_bytes = int(block_bytes)

    # -- to implement -------------------------------------------------------------------------
    def _fill(self, Xb, Y, out, xsq=None, ysq=None):  # pragma: no cover - abstract
        """Write k(Xb, Y) into ``out`` (shape len(Xb) x len(Y)) in place."""
        raise NotImplementedError

    def diag(self, X):
        """Diagonal ``k(x_i, x_i)``, shape (n,), without forming a matrix."""
        raise NotImplementedError  # pragma: no cover - abstract

    def params(self):
        """Hyper-parameters as a flat dict (for logging)."""
        return {}

    # -- shared machinery -----------------------------------------------------------------------
    uses_sq_norms = False

    def _rows_per_block(self, m):
        return max(1, self.block_bytes // (8 * max(m, 1)))

    def blocks(self, X, Y=None):
        """Yield ``(row_slice, block)`` covering ``K(X, Y)``; each block is a fresh array."""
        X = _as_2d(X)
        Y = X if Y is None else _as_2d(Y, "Y")
        ysq = np.einsum("ij,ij->i", Y, Y) if self.uses_sq_norms else None
        step = self._rows_per_block(len(Y))
        for start in range(0, len(X), step):
            sl = slice(start, min(start + step, len(X)))
            Xb = X[sl]
            xsq = np.einsum("ij,ij->i", Xb, Xb) if self.uses_sq_norms else None
            out = np.empty((len(Xb), len(Y)))
            self._fill(Xb, Y, out, xsq, ysq)
            yield sl, out

    def __call__(self, X, Y=None):
        """Kernel matrix K(X, Y), shape (n_X, n_Y); ``Y=None`` means ``Y = X``."""
        X = _as_2d(X)
        same = Y is None
        Y = X if same else _as_2d(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
        out = np.empty((len(X), len(Y)))
        ysq = np.einsum("ij,ij->i", Y, Y) if self.uses_sq_norms else None
        step = self._rows_per_block(len(Y))
        for start in range(0, len(X), step):
            sl = slice(start, min(start + step, len(X)))
            xsq = np.einsum("ij,ij->i", X[sl], X[sl]) if self.uses_sq_norms else None
            self._fill(X[sl], Y, out[sl], xsq, ysq)
        if same:  # exact diagonal (the norms trick leaves ~1e-16 round-off there)
            out.flat[:: len(X) + 1] = self.diag(X)
        return out

    def mmv(self, X, Y, v):
        """``K(X, Y) @ v`` computed block-wise; ``v`` has shape (n_Y,) or (n_Y, t)."""
        v = np.asarray(v, dtype=np.float64)
        X = _as_2d(X)
        res = np.empty((len(X),) + v.shape[1:])
        for sl, blk in self.blocks(X, Y):
            res[sl] = blk @ v
        return res

    def column_sq_norms(self, X):
        """``||K[:, j]||_2^2`` for every column j of K(X, X), in O(n) extra memory."""
        X = _as_2d(X)
        acc = np.zeros(len(X))
        for _, blk in self.blocks(X, X):
            blk *= blk
            acc += blk.sum(axis=0)
        return acc

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def _sq_dists_into(Xb, Y, out, xsq, ysq):
    """out <- ||x_i - y_j||^2 via one GEMM, clipped at 0 against round-off."""
    np.dot(Xb, Y.T, out=out)
    out *= -2.0
    out += xsq[:, None]
    out += ysq[None, :]
    np.maximum(out, 0.0, out=out)
    return out


class Gaussian(Kernel):
    """Gaussian (RBF) kernel ``exp(-gamma ||x - y||^2)``.

    Give exactly one of ``gamma``, ``sigma`` (``gamma = 1 / (2 sigma^2)``, seeds 000/001)
    or ``b`` (``exp(-||x-y||^2 / b)``, ``gamma = 1 / b``, seed 003).
    """

    name = "gaussian"
    uses_sq_norms = True

    def __init__(self, gamma=None, sigma=None, b=None, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        given = [p is not None for p in (gamma, sigma, b)]
        if sum(given) > 1:
            raise ValueError("gaussian kernel: give only one of gamma, sigma or b")
        if sigma is not None:
            gamma = 1.0 / (2.0 * float(sigma) ** 2)
        elif b is not None:
            gamma = 1.0 / float(b)
        elif gamma is None:
            gamma = 1.0
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"gaussian kernel: gamma must be a positive finite number, got {gamma}")
        self.gamma = float(gamma)

    def _fill(self, Xb, Y, out, xsq, ysq):
        # exp(-g(|x|^2 + |y|^2 - 2xy)) with the scaling folded into the GEMM output, in place
        np.dot(Xb, Y.T, out=out)
        out *= 2.0 * self.gamma
        out -= (self.gamma * xsq)[:, None]
        out -= (self.gamma * ysq)[None, :]
        np.minimum(out, 0.0, out=out)
        np.exp(out, out=out)

    def diag(self, X):
        return np.ones(len(_as_2d(X)))

    def profile(self, r):
        """Radial profile: k(x, y) = profile(||x - y||_2)."""
        return np.exp(-self.gamma * np.asarray(r, dtype=np.float64) ** 2)

    def params(self):
        return {"gamma": self.gamma}


class Laplacian(Kernel):
    """Laplacian kernel ``exp(-gamma ||x - y||_1)`` (L1 distance, as scikit-learn's)."""

    name = "laplacian"

    def __init__(self, gamma=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"laplacian kernel: gamma must be positive, got {gamma}")
        self.gamma = float(gamma)

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        cdist(Xb, Y, metric="cityblock", out=out)
        out *= -self.gamma
        np.exp(out, out=out)

    def diag(self, X):
        return np.ones(len(_as_2d(X)))

    def params(self):
        return {"gamma": self.gamma}


class Polynomial(Kernel):
    """Polynomial kernel ``(gamma x.y + coef0)^degree``."""

    name = "polynomial"

    def __init__(self, degree=3, gamma=1.0, coef0=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if int(degree) != degree or degree < 1:
            raise ValueError(f"polynomial kernel: degree must be a positive integer, got {degree}")
        self.degree, self.gamma, self.coef0 = int(degree), float(gamma), float(coef0)
        # even degree with coef0 >= 0, or any degree with coef0 >= 0 and gamma > 0, is PSD
        self.psd = self.coef0 >= 0 and self.gamma > 0

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        np.dot(Xb, Y.T, out=out)
        out *= self.gamma
        out += self.coef0
        np.power(out, self.degree, out=out)

    def diag(self, X):
        X = _as_2d(X)
        return (self.gamma * np.einsum("ij,ij->i", X, X) + self.coef0) ** self.degree

    def params(self):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


class Linear(Kernel):
    """Linear kernel ``x.y``."""

    name = "linear"

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        np.dot(Xb, Y.T, out=out)

    def diag(self, X):
        X = _as_2d(X)
        return np.einsum("ij,ij->i", X, X)


class Epanechnikov(Kernel):
    """Epanechnikov kernel ``(1 - ||x - y||^2 / (2 sigma^2))_+`` (seed 001).

    Bounded with compact support but *not* positive semi-definite: its kernel
    matrices can have negative eigenvalues, so only methods that do not need a
    PSD matrix (e.g. GNKR) are valid with it.
    """

    name = "epanechnikov"
    psd = False
    uses_sq_norms = True

    def __init__(self, sigma=1.0, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        if not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"epanechnikov kernel: sigma must be positive, got {sigma}")
        self.sigma = float(sigma)

    def _fill(self, Xb, Y, out, xsq, ysq):
        _sq_dists_into(Xb, Y, out, xsq, ysq)
        out *= -1.0 / (2.0 * self.sigma**2)
        out += 1.0
        np.maximum(out, 0.0, out=out)

    def diag(self, X):
        return np.ones(len(_as_2d(X)))

    def profile(self, r):
        """Radial profile: k(x, y) = profile(||x - y||_2)."""
        return np.maximum(1.0 - np.asarray(r, dtype=np.float64) ** 2 / (2.0 * self.sigma**2), 0.0)

    def params(self):
        return {"sigma": self.sigma}


_REGISTRY = {cls.name: cls for cls in (Gaussian, Laplacian, Polynomial, Linear, Epanechnikov)}
_REGISTRY["rbf"] = Gaussian


def available():
    """Names accepted by :func:`make`."""
    return sorted(_REGISTRY)


def make(name, **params):
    """Build a kernel by name: ``make("gaussian", gamma=0.5)``.

    Parameters
    ----------
    name : str or Kernel
        One of :func:`available`; a :class:`Kernel` instance is returned unchanged.
    **params
        The kernel's hyper-parameters (see each class).
    """
    if isinstance(name, Kernel):
        return name
    try:
        cls = _REGISTRY[str(name).lower()]
    except KeyError:
        raise ValueError(
            f"unknown kernel {name!r}; choose one of {', '.join(available())}"
        ) from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"kernel {name!r}: bad parameters {params}: {exc}") from None


# -- width heuristics ----------------------------------------------------------------------------
def _pair_sq_dists(X, max_points, seed):
    X = _as_2d(X)
    if len(X) > max_points:
        rng = np.random.default_rng(seed)
        X = X[rng.choice(len(X), max_points, replace=False)]
    D = cdist(X, X, metric="sqeuclidean")
    return D[np.triu_indices(len(X), k=1)]


def median_sq_dist(X, max_points=2000, seed=0):
    """Median pairwise squared Euclidean distance (on a sample of ``max_points`` rows)."""
    return float(np.median(_pair_sq_dists(X, max_points, seed)))


def mean_sq_dist(X, max_points=2000, seed=0):
    """Mean pairwise squared distance; exact formula ``2 (mean ||x||^2 - ||mean x||^2) n/(n-1)``."""
    X = _as_2d(X)
    n = len(X)
    if n < 2:
        raise ValueError("mean_sq_dist needs at least two points")
    mu = X.mean(axis=0)
    return float(2.0 * (np.einsum("ij,ij->", X, X) / n - mu @ mu) * n / (n - 1))


def resolve_width(value, X, scale=1.0):
    """Turn a width spec into ``gamma``: a number is returned as is; ``"median"``/``"mean"``
    give ``scale / median (mean) pairwise squared distance`` of X."""
    if isinstance(value, str):
        if value == "median":
            d = median_sq_dist(X)
        elif value == "mean":
            d = mean_sq_dist(X)
        else:
            raise ValueError(f"unknown width heuristic {value!r}; use a number, 'median' or 'mean'")
        if d <= 0:
            raise ValueError("all points coincide: cannot set a kernel width from distances")
        return float(scale) / d
    return float(value)
