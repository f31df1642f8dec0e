"""Dot-product kernels: polynomial ``(gamma x.y + coef0)^degree`` and linear ``x.y``."""

from __future__ import annotations

import numpy as np

from .base import DEFAULT_BLOCK_BYTES, Kernel
from .blas import as_2d, dot_t, row_sq_norms

__all__ = ["Polynomial", "Linear"]


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
        dot_t(Xb, Y, out=out)
        out *= self.gamma
        out += self.coef0
        np.power(out, self.degree, out=out)

    def diag(self, X):
        X = as_2d(X)
        return (self.gamma * row_sq_norms(X) + self.coef0) ** self.degree

    def params(self):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


class Linear(Kernel):
    """Linear kernel ``x.y``."""

    name = "linear"

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        dot_t(Xb, Y, out=out)

    def diag(self, X):
        return row_sq_norms(as_2d(X))
