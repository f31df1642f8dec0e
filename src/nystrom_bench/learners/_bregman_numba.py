"""The compiled sweep behind :func:`nystrom_bench.learners.bregman.logdet_projections` (imported only there, and
only when numba is).

One sweep of the cyclic LogDet Bregman projections (Kulis, Sustik & Dhillon, JMLR 2009, Algorithm 1 on the
kernel matrix; Davis et al.'s ITML slack update): per constraint the column difference ``Kv = K e_i - K e_j``,
the scalar step and the rank-one update ``K += beta Kv Kv^T``.  Every floating-point operation is the one
numpy's loop in :func:`~nystrom_bench.learners.bregman._sweep_numpy` performs, in the same order and without
contraction or reassociation (no ``fastmath``): ``K[a, b] + beta * (Kv[a] * Kv[b])`` element by element,
Python's ``min`` as ``x if x < d else d`` -- the same bits, without numpy's per-constraint temporaries
(an l x l outer product and its scaled copy for each of the ~5,000 labelled pairs of a sweep).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(["int64(float64[:, ::1], int64[::1], int64[::1], float64[::1], float64[::1], float64[::1], float64, "
             "float64)"], cache=True, nogil=True)
def sweep(K, first, second, sign, xi, duals, shrink, inv_gamma):  # pragma: no cover - compiled (tested vs numpy)
    """One sweep over the constraints in order, K, xi and duals updated in place; returns the projections made."""
    n = K.shape[0]
    Kv = np.empty(n)
    made = 0
    for c in range(sign.shape[0]):
        i, j = first[c], second[c]
        for a in range(n):
            Kv[a] = K[a, i] - K[a, j]
        p = Kv[i] - Kv[j]
        if p <= 1e-12:
            continue
        delta = sign[c]
        x = delta * shrink * (1.0 / p - 1.0 / xi[c])
        d = duals[c]
        alpha = x if x < d else d
        if alpha == 0.0:
            continue
        beta = delta * alpha / (1.0 - delta * alpha * p)
        xi[c] = 1.0 / (1.0 / xi[c] + delta * alpha * inv_gamma)
        duals[c] -= alpha
        for a in range(n):
            va = Kv[a]
            for b in range(n):
                K[a, b] += beta * (va * Kv[b])
        made += 1
    return made
