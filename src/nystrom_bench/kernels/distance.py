"""Distance kernels: Gaussian, Laplacian (L1) and Epanechnikov, ``k(x, y) = f(||x - y||)``."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from ..fastexp import exp_nonpos
from .base import DEFAULT_BLOCK_BYTES, Kernel, _sq_dists_into
from .blas import as_2d, dot_t, issparse, n_rows, row_sq_norms

__all__ = ["Gaussian", "Laplacian", "Epanechnikov"]


class Gaussian(Kernel):
    """Gaussian (RBF) kernel ``exp(-gamma ||x - y||^2)``.

    Give exactly one of ``gamma``, ``sigma`` (``gamma = 1 / (2 sigma^2)``, Ding et al. (AAAI 2019) / Chen et al. (NIPS 2016))
    or ``b`` (``exp(-||x-y||^2 / b)``, ``gamma = 1 / b``, Ding et al. (TNNLS 2020)).
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

    # The whole exponent comes out of one GEMM, [x, 1, |x|^2] . [2g z, -g |z|^2, -g]^T
    # = -g |x - z|^2, leaving only a clamp (round-off) and an in-place exp per block.
    # In float32 both point sets are first shifted by the mean of Y (in float64): distances are
    # unchanged, and |x|^2, |z|^2 stay of the order of the distances, so the sum keeps its digits.
    def _prepare(self, X, Y):
        X, Y, _ = super()._prepare(X, Y)
        g = self.gamma
        if issparse(X) or issparse(Y):  # sparse: -g |x - z|^2 from the norms and X Z^T (sparse products)
            return X, Y, (None, row_sq_norms(Y))
        shift = Y.mean(axis=0) if self.dtype != np.float64 and n_rows(Y) else None
        Ys = Y if shift is None else Y - shift
        ysq = np.einsum("ij,ij->i", Ys, Ys)
        Ya = np.hstack([2.0 * g * Ys, (-g * ysq)[:, None], np.full((n_rows(Y), 1), -g)]).astype(self.dtype)
        return X, Y, (Ya, shift)

    def _fill_rows(self, X, Y, aux, sl, out):
        Ya, shift = aux
        if Ya is None:  # sparse X or Y: 2 g x.z - g |x|^2 - g |z|^2 in float64, then the same clamp + exp
            g, Xb = self.gamma, X[sl]
            E = dot_t(Xb, Y)
            E *= 2.0 * g
            E -= g * row_sq_norms(Xb)[:, None]
            E -= g * shift[None, :]
            out[...] = E
            exp_nonpos(out)
            return
        Xb = X[sl] if shift is None else X[sl] - shift
        Xa = np.empty((n_rows(Xb), Xb.shape[1] + 2), dtype=out.dtype)
        Xa[:, :-2] = Xb
        Xa[:, -2] = 1.0
        Xa[:, -1] = np.einsum("ij,ij->i", Xb, Xb)
        np.dot(Xa, Ya.T, out=out)
        exp_nonpos(out)  # clamp + exp in place: one vectorised pass where numpy's exp is scalar

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

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
        if issparse(Xb) or issparse(Y):
            from sklearn.metrics.pairwise import manhattan_distances

            out[...] = manhattan_distances(Xb, Y)
        else:
            cdist(Xb, Y, metric="cityblock", out=out)
        out *= -self.gamma
        exp_nonpos(out)

    def diag(self, X):
        return np.ones(n_rows(as_2d(X)))

    def params(self):
        return {"gamma": self.gamma}


class Epanechnikov(Kernel):
    """Epanechnikov kernel ``(1 - ||x - y||^2 / (2 sigma^2))_+`` (Chen et al. (NIPS 2016)).

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
        return np.ones(n_rows(as_2d(X)))

    def profile(self, r):
        """Radial profile: k(x, y) = profile(||x - y||_2)."""
        return np.maximum(1.0 - np.asarray(r, dtype=np.float64) ** 2 / (2.0 * self.sigma**2), 0.0)

    def params(self):
        return {"sigma": self.sigma}
