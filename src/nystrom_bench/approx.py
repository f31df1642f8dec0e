"""Approximators: turn ``(X, kernel, landmarks)`` into a kernel *operator*.

Every operator offers the same small interface, so criteria and learners work
with any approximation and no special cases:

``solve(shift, y)``
    ``(K~ + shift I)^-1 y`` for ``y`` of shape (n,) or (n, t).
``eigvals()``
    The eigenvalues of K~ in descending order (for low-rank operators: the
    ``rank`` non-zero ones; all others are exactly 0).
``factor()``
    V with ``K~ = V V^T`` (n x r), where K~ is PSD.
``features(X_new)``
    The out-of-sample map phi with ``phi(X) = V`` on the training points.
``dense()``
    K~ as an n x n array (small n, for tests and diagnostics).

plus ``fit_time_`` (seconds spent building it) and ``rank``.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import approx, kernels
>>> X = np.random.default_rng(0).normal(size=(40, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> op = approx.build("nystrom", X, kern, landmarks=np.arange(40))
>>> bool(np.allclose(op.dense(), kern(X), atol=1e-8))
True
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg

from .kernels import _as_2d, make

__all__ = ["KernelOperator", "ExactOperator", "NystromOperator", "build", "available", "register"]

#: eigenvalues of W below ``RCOND * max eigenvalue`` are treated as zero (pseudo-inverse cut-off)
RCOND = 1e-10

_REGISTRY = {}


def register(name):
    """Decorator adding an operator class (built by ``cls.build(X, kernel, **kw)``) to the registry."""

    def deco(cls):
        _REGISTRY[name] = cls
        cls.name = name
        return cls

    return deco


def available():
    """Names accepted by :func:`build`."""
    return sorted(_REGISTRY)


def build(name, X, kernel, **options):
    """Build the approximate kernel operator ``name`` on the training points X.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    X : array of shape (n, d)
    kernel : Kernel or str
    **options
        ``landmarks=`` (indices into X or ``(c, d)`` points) and ``rank=`` for
        ``"nystrom"``.
    """
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown approximation {name!r}; choose one of {', '.join(available())}"
        ) from None
    t0 = time.perf_counter()
    op = cls.build(_as_2d(X), make(kernel), **options)
    op.fit_time_ = time.perf_counter() - t0
    return op


def _check_shift(shift, name):
    shift = float(shift)
    if not np.isfinite(shift) or shift <= 0:
        raise ValueError(
            f"{name}: shift must be > 0 (a low-rank K~ + shift*I is singular at shift = 0), got {shift}"
        )
    return shift


class KernelOperator:
    """Interface shared by every approximation (see module docstring)."""

    name = "operator"
    fit_time_ = 0.0

    def solve(self, shift, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def eigvals(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def factor(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def features(self, X_new):  # pragma: no cover - abstract
        raise NotImplementedError

    def dense(self):
        V = self.factor()
        return V @ V.T

    @property
    def n(self):
        return self.X.shape[0]


@register("exact")
class ExactOperator(KernelOperator):
    """The exact kernel matrix K (n x n; Cholesky solves). The reference, small n only."""

    def __init__(self, X, kernel):
        self.X, self.kernel = X, kernel
        self.K = kernel(X)
        self._eig = None
        self._chol = {}

    @classmethod
    def build(cls, X, kernel):
        return cls(X, kernel)

    def solve(self, shift, y):
        shift = float(shift)
        if shift not in self._chol:
            A = self.K.copy()
            A.flat[:: self.n + 1] += shift
            try:
                self._chol = {shift: linalg.cho_factor(A, lower=True, check_finite=False)}
            except linalg.LinAlgError:
                raise np.linalg.LinAlgError(
                    f"exact kernel matrix + {shift:g}*I is not positive definite "
                    f"(kernel {self.kernel!r}); increase the regularisation"
                ) from None
        return linalg.cho_solve(self._chol[shift], np.asarray(y, dtype=np.float64), check_finite=False)

    def _eigh(self):
        if self._eig is None:
            w, U = linalg.eigh(self.K)
            self._eig = (w[::-1], U[:, ::-1])
        return self._eig

    def eigvals(self):
        return self._eigh()[0].copy()

    def factor(self):
        w, U = self._eigh()
        if self.kernel.psd is False and w[-1] < -RCOND * max(w[0], 0):
            raise ValueError(f"kernel {self.kernel!r} gives an indefinite matrix: no factor V V^T exists")
        keep = w > RCOND * w[0]
        return U[:, keep] * np.sqrt(w[keep])

    def features(self, X_new):
        w, U = self._eigh()
        keep = w > RCOND * w[0]
        return self.kernel(X_new, self.X) @ (U[:, keep] / np.sqrt(w[keep]))

    def dense(self):
        return self.K.copy()


@register("nystrom")
class NystromOperator(KernelOperator):
    """Nystrom approximation ``K~ = C W_k^+ C^T`` with ``C = K(X, Z)``, ``W = K(Z, Z)``.

    Stored as the factor ``V = C U_k Lambda_k^{-1/2}`` (n x k), so
    ``K~ = V V^T`` and everything is O(n k) memory:

    - ``solve`` uses the Woodbury identity
      ``(V V^T + s I)^-1 y = (y - V (s I_k + V^T V)^-1 V^T y) / s``
      with a Cholesky factor of the k x k matrix.  (Seed 003, eq. (5), writes
      ``mu I_k`` inside the inverse; with shift ``s = mu l`` it must be
      ``mu l I_k``, as derived from Woodbury -- the paper has a typo there.)
    - ``eigvals`` are the exact non-zero eigenvalues of K~: those of ``V^T V``.

    Rank-deficient W (duplicate landmarks) and tiny or negative eigenvalues
    (indefinite kernels) are handled by keeping only eigenvalues above
    ``RCOND * lambda_max(W)``; ``rank`` truncates further to the top k.
    """

    def __init__(self, X, kernel, Z, rank=None, landmark_indices=None):
        self.X, self.kernel, self.Z = X, kernel, Z
        self.landmark_indices = landmark_indices
        W = kernel(Z)
        w, U = linalg.eigh(W)
        w, U = w[::-1], U[:, ::-1]
        keep = w > RCOND * max(w[0], 0.0)
        if rank is not None:
            rank = int(rank)
            if rank < 1:
                raise ValueError(f"nystrom: rank must be >= 1, got {rank}")
            keep[rank:] = False
        if not keep.any():
            raise ValueError("nystrom: the landmark kernel matrix W has no positive eigenvalue")
        self.rank = int(keep.sum())
        self._T = U[:, keep] / np.sqrt(w[keep])  # c x k, W_k^+ = T T^T
        self.V = kernel(X, Z) @ self._T  # n x k
        self._VtV = None
        self._chol = {}

    @classmethod
    def build(cls, X, kernel, landmarks=None, rank=None):
        if landmarks is None:
            raise ValueError("nystrom: pass landmarks= (indices into X, or (c, d) points)")
        landmarks = np.asarray(landmarks)
        if landmarks.ndim == 1:
            if not np.issubdtype(landmarks.dtype, np.integer):
                raise ValueError("nystrom: 1-D landmarks must be integer indices into X")
            if landmarks.size == 0 or landmarks.min() < 0 or landmarks.max() >= len(X):
                raise ValueError(f"nystrom: landmark indices must lie in [0, {len(X)})")
            return cls(X, kernel, X[landmarks], rank, landmark_indices=landmarks)
        Z = _as_2d(landmarks, "landmarks")
        if Z.shape[1] != X.shape[1]:
            raise ValueError(f"nystrom: landmark points have {Z.shape[1]} features, X has {X.shape[1]}")
        return cls(X, kernel, Z, rank)

    @property
    def VtV(self):
        if self._VtV is None:
            self._VtV = self.V.T @ self.V
        return self._VtV

    def solve(self, shift, y):
        shift = _check_shift(shift, "nystrom")
        y = np.asarray(y, dtype=np.float64)
        if shift not in self._chol:
            A = self.VtV.copy()
            A.flat[:: self.rank + 1] += shift
            self._chol = {shift: linalg.cho_factor(A, lower=True, check_finite=False)}
        t = linalg.cho_solve(self._chol[shift], self.V.T @ y, check_finite=False)
        return (y - self.V @ t) / shift

    def eigvals(self):
        w = linalg.eigvalsh(self.VtV)[::-1]
        return np.maximum(w, 0.0)

    def factor(self):
        return self.V

    def features(self, X_new):
        return self.kernel(X_new, self.Z) @ self._T
