"""Kernel selection criteria (Ding et al. (TNNLS 2020) Section IV, Ding et al. (AAAI 2019) eq. 1), through the operator interface.

With l training points, ``K_mu = K + mu l I`` and the regularised square loss
``E(f) = (1/l) sum (f(x_i) - y_i)^2 + mu ||f||^2``, whose minimiser has
``alpha = K_mu^-1 y``:

``C_ree(K) = E(f_K) = mu y^T K_mu^-1 y``  (regularised empirical error)

``C_ipe(K) = mu^2 l y^T K_mu^-2 y + (sigma^2 / l) tr(K^2 K_mu^-2)``  (in-sample prediction error:
bias + variance for noise of variance sigma^2)

Ding et al. (TNNLS 2020) Section IV writes ``K_mu = K + mu I``; its own derivation
(``f - y = -mu l K_mu^-1 y``) and Ding et al. (AAAI 2019) need ``K + mu l I``, used here.

Only ``op.solve`` and ``op.eigvals`` (or ``op.spectrum_estimate``) are used, so
the exact matrix (Cholesky), every Nystrom variant (Woodbury) and the MCM (FFT)
work with no special case here.

>>> import numpy as np
>>> from nystrom_bench import approx, criteria, kernels
>>> X = np.random.default_rng(0).normal(size=(30, 2)); y = X[:, 0]
>>> op = approx.build("exact", X, kernels.make("gaussian", gamma=0.5))
>>> round(criteria.c_ree(op, y, mu=0.005), 6) > 0
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["c_ree", "c_ipe", "bias_variance"]


def _check(op, y, mu):
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != op.n:
        raise ValueError(f"y has {len(y)} entries but the operator is {op.n} x {op.n}")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu}")
    return y


def c_ree(op, y, mu=0.005):
    """``mu y^T (K~ + mu l I)^-1 y``.

    Meaningful for a PSD K~ only: an operator with negative eigenvalues below ``-mu l`` (MCM's
    circulant U_m for a kernel wide relative to its grid) gets a warning, since the value can then be
    negative."""
    y = _check(op, y, mu)
    lowest = getattr(op, "v", None)  # MCM keeps its eigenvalues; others are PSD by construction
    if lowest is not None and float(np.min(lowest)) + mu * op.n <= 0:
        import warnings

        warnings.warn(f"c_ree: K~ + mu l I is not positive definite here (smallest eigenvalue of K~ "
                      f"{float(np.min(lowest)):.3g} below -mu l = {-mu * op.n:.3g}), so the criterion is meaningless; for "
                      "MCM use a kernel that decays within the grid (a larger gamma) or a larger mu",
                      UserWarning, stacklevel=2)
    return float(mu * y @ op.solve(mu * op.n, y))


def bias_variance(op, y, mu=0.005, noise_sd=1.0, spectrum="exact"):
    """The two terms of :func:`c_ipe`: ``(bias, variance)``.

    ``spectrum="exact"`` uses the eigenvalues of K~ (``op.eigvals()``; for Nystrom
    the exact non-zero ones from ``V^T V``); ``spectrum="estimate"`` uses
    ``op.spectrum_estimate()`` (for Nystrom Ding et al.'s (TNNLS 2020) ``(l/c) lambda_i(W_k)``).
    """
    y = _check(op, y, mu)
    shift = mu * op.n
    u = op.solve(shift, y)
    bias = mu**2 * op.n * float(u @ u)
    if spectrum == "exact":
        lam = op.eigvals()
    elif spectrum == "estimate":
        lam = op.spectrum_estimate()
    else:
        raise ValueError(f"spectrum must be 'exact' or 'estimate', got {spectrum!r}")
    lam = np.asarray(lam, dtype=np.float64)
    variance = noise_sd**2 / op.n * float(np.sum((lam / (lam + shift)) ** 2))
    return bias, variance


def c_ipe(op, y, mu=0.005, noise_sd=1.0, spectrum="exact"):
    """``mu^2 l y^T (K~ + mu l I)^-2 y + (sigma^2 / l) tr(K~^2 (K~ + mu l I)^-2)``."""
    bias, variance = bias_variance(op, y, mu, noise_sd, spectrum)
    return bias + variance
