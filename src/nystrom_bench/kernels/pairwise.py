"""Any scikit-learn pairwise kernel as a :class:`Kernel` (chi2, sigmoid, cosine, a user function)."""

from __future__ import annotations

import numpy as np

from .base import DEFAULT_BLOCK_BYTES, Kernel
from .blas import as_2d, n_rows

__all__ = ["Pairwise"]


class Pairwise(Kernel):
    """Any scikit-learn pairwise kernel: a name of ``sklearn.metrics.pairwise.kernel_metrics()`` or a
    callable ``k(x, y, **params)``, evaluated block-wise by ``sklearn.metrics.pairwise.pairwise_kernels``.

    Lets the samplers run on the kernels scikit-learn's ``Nystroem`` accepts (``chi2``, ``sigmoid``,
    ``cosine``, a user function).  Whether the kernel is PSD is the user's claim (``psd``).
    """

    name = "pairwise"

    def __init__(self, metric, params=None, psd=True, block_bytes=DEFAULT_BLOCK_BYTES):
        super().__init__(block_bytes)
        self.metric = metric
        self.kernel_params = dict(params or {})
        self.psd = bool(psd)

    def _fill(self, Xb, Y, out, xsq=None, ysq=None):
        from sklearn.metrics.pairwise import pairwise_kernels

        out[...] = pairwise_kernels(Xb, Y, metric=self.metric, filter_params=True, **self.kernel_params)

    def diag(self, X):
        X = as_2d(X)
        step = 256
        return np.concatenate([np.diag(self(X[i:i + step], X[i:i + step])) for i in range(0, n_rows(X), step)]
                              or [np.empty(0)])

    def params(self):
        return {"metric": getattr(self.metric, "__name__", self.metric), **self.kernel_params}
