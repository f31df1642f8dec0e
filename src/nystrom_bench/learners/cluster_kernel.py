"""Cluster kernels (Chapelle, Weston & Schoelkopf, NIPS 2002): a single-kernel baseline of Lan, Zhang et al.

The cluster assumption -- two points of one cluster likely share a label -- is built into a kernel
by reshaping the spectrum of the normalised kernel matrix on all samples (labelled and unlabelled):

1. ``K`` the base kernel on X, ``D = diag(K 1)``, ``L = D^{-1/2} K D^{-1/2}``;
2. ``L = U Lambda U^T`` (eigenvalues in decreasing order, in [0, 1] for a non-negative PSD K);
3. a transfer function ``phi`` on the eigenvalues, ``L~ = U phi(Lambda) U^T``;
4. ``D~ = diag(1 / L~_ii)`` and ``K~ = D~^{1/2} L~ D~^{1/2}`` (a unit diagonal).

Transfer functions (the paper's Section 3; ``r`` = ``cut``, ``t`` = ``power``):

=================  ==================================================================
``linear``         ``lambda`` (step 4 then returns K itself when K has a unit diagonal)
``step``           1 for the r largest eigenvalues, else 0
``linear_step``    ``lambda`` for the r largest, else 0
``polynomial``     ``lambda^t``
``poly_step``      ``lambda^(1/2)`` for the r largest, ``lambda^2`` for the others
=================  ==================================================================

The kernel is learned transductively and without labels (the labels only fix ``cut`` = the number
of classes by default, one cluster per class); its low-rank factor keeps the ``n_components``
largest eigenvalues: ``G = D~^{1/2} U_k phi(Lambda_k)^{1/2}``, ``K~ = G G^T`` -- which is exact for the
step functions when ``cut <= n_components`` and drops eigenvalues ``<= lambda_k^2`` for poly-step.
Cost: the dense n x n kernel and a partial eigendecomposition, O(n^2 k) time and O(n^2) memory --
a transductive baseline for the paper's sets (n <= ~10^4), not a Nystrom method.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import _KERNEL_CONSTRAINTS, _N_COMPONENTS_CONSTRAINT, _set_params, _TransductiveKernel

__all__ = ["ClusterKernel", "transfer"]

TRANSFERS = ("linear", "step", "linear_step", "polynomial", "poly_step")


def transfer(eigenvalues, name, cut, power=2.0):
    """The transfer function ``phi`` of Chapelle et al. on eigenvalues sorted in decreasing order."""
    lam = np.clip(np.asarray(eigenvalues, dtype=np.float64), 0.0, None)
    top = np.arange(len(lam)) < cut
    if name == "linear":
        return lam
    if name == "step":
        return top.astype(np.float64)
    if name == "linear_step":
        return np.where(top, lam, 0.0)
    if name == "polynomial":
        return lam**power
    if name == "poly_step":
        return np.where(top, np.sqrt(lam), lam**2)
    raise ValueError(f"transfer must be one of {', '.join(TRANSFERS)}, got {name!r}")


class ClusterKernel(_TransductiveKernel):
    """The cluster kernel of Chapelle, Weston & Schoelkopf (NIPS 2002), as a low-rank factor.

    ``fit(X, y)`` (``y = -1`` for unlabelled samples) builds the kernel on every sample of X;
    ``transform(X)`` on the same X returns G with ``K~ = G G^T``.  See the module docstring.

    Parameters
    ----------
    kernel, gamma, degree, coef0, sigma : as in :class:`~nystrom_bench.learners.KRR`
        The base kernel (the paper: Gaussian).
    transfer : {"poly_step", "linear", "step", "linear_step", "polynomial"}, default="poly_step"
        The paper's best transfer function in its transductive experiments is poly-step.
    cut : int or None, default=None
        r: the number of leading eigenvalues the step functions keep; None: the number of labelled
        classes.
    power : float, default=2.0
        t of the polynomial transfer.
    n_components : int or float, default=0.1
        Rank of the factor (count, or fraction of n_samples).

    Attributes
    ----------
    factor_ : ndarray of shape (n_samples, n_components_)
    eigenvalues_ : ndarray of shape (n_components_,)
        The leading eigenvalues of ``D^{-1/2} K D^{-1/2}``, decreasing.
    transferred_ : ndarray of shape (n_components_,)
        ``phi(eigenvalues_)``.
    cut_, n_components_ : int
    X_fit_ : ndarray of shape (n_samples, n_features)
    kernel_ : Kernel
    fit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import ClusterKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (50, 2)), rng.normal(3, 1, (50, 2))])
    >>> y = np.full(100, -1); y[[0, 99]] = [0, 1]
    >>> G = ClusterKernel(gamma=0.5, n_components=10).fit(X, y).transform(X)
    >>> G.shape, bool(np.allclose(np.sum(G**2, axis=1), 1))
    ((100, 10), True)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "transfer": [StrOptions(set(TRANSFERS))],
        "cut": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "power": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_components": _N_COMPONENTS_CONSTRAINT,
    }

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, transfer="poly_step",
                 cut=None, power=2.0, n_components=0.1):
        _set_params(self, locals())

    def _spectrum(self, X, k):
        """``(w, U)``: the k largest eigenpairs of ``D^{-1/2} K D^{-1/2}`` (steps 1-2), decreasing (no labels:
        a caller may share them between fits on the same X and kernel, e.g. the gen_nystrom study across its
        seeds)."""
        n = len(X)
        K = self.kernel_(X)
        if np.any(K < -1e-12):
            raise ValueError("ClusterKernel needs a non-negative kernel (row sums are degrees); choose e.g. "
                             "kernel='gaussian'")
        d = K.sum(axis=1)
        s = 1.0 / np.sqrt(np.maximum(d, np.finfo(np.float64).tiny))
        K *= s[:, None]
        K *= s[None, :]
        w, U = linalg.eigh(K, subset_by_index=[n - k, n - 1], overwrite_a=True, check_finite=False)
        return w[::-1], U[:, ::-1]

    def _fit(self, X, y, labelled, k):
        """Build the cluster kernel on X, its factor of rank k; y (-1 for unlabelled samples) only sets the
        default ``cut``."""
        w, U = self._spectrum(X, k)
        self.cut_ = int(self.cut) if self.cut is not None else len(np.unique(y[labelled]))
        phi = transfer(w, self.transfer, self.cut_, self.power)
        F = U * np.sqrt(phi)
        diag = np.sum(F**2, axis=1)  # L~_ii; D~_ii = 1 / L~_ii
        F /= np.sqrt(np.where(diag > 0, diag, 1.0))[:, None]
        self.eigenvalues_, self.transferred_, self.n_components_ = w, phi, k
        self.factor_, self.X_fit_ = F, X
