"""Non-parametric spectral graph kernels (Zhu, Kandola, Ghahramani & Lafferty, NIPS 2004): a single-kernel
baseline of Lan, Zhang et al.

A graph over every sample (labelled and unlabelled; an unweighted, symmetrised k-nearest-neighbour
graph as in the paper's experiments) has the combinatorial Laplacian ``L = D - W`` with eigenpairs
``(lambda_i, phi_i)``, ``lambda_1 <= lambda_2 <= ...``.  The kernel is a spectral transform
``K = sum_i mu_i phi_i phi_i^T`` over the k smoothest eigenvectors whose weights are *learned*: they
maximise the kernel-target alignment on the labelled samples,

    max_mu  <K_l, T>_F / ||K_l||_F   s.t.  mu_i >= mu_{i+1} >= 0,

with ``T = y y^T`` (+-1 labels; for several classes ``T_ij = +1`` for a pair of one class, else -1).
The order constraints make smoother eigenvectors weigh more; the "improved order" of the paper
exempts the eigenvectors of eigenvalue 0 (constant on a connected component), whose weights are
only ``>= 0``.

The problem is a QP: with ``mu_i = sum_{j >= i} delta_j`` (``delta >= 0`` is exactly the order
constraint) the kernel is a conic combination of the cumulative kernels ``C_j = sum_{i <= j} phi_i
phi_i^T``, and the alignment-maximising conic combination is the non-negative least-squares problem
of :func:`~nystrom_bench.learners.mkl.alignment_weights` (uncentred), as for ABMKL.  The learned
kernel is scaled to trace n (the Gaussian kernels' trace), so a linear SVM with the same C sees
features of the same magnitude.

Cost: a sparse graph, a dense partial eigendecomposition of the n x n Laplacian (O(n^2 k)) and an
NNLS over k weights with l^2 rows -- a transductive baseline, not a Nystrom method.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval

from ._base import _N_COMPONENTS_CONSTRAINT, _set_params, _TransductiveKernel
from .mkl import alignment_weights

__all__ = ["SpectralGraphKernel", "knn_laplacian", "order_constrained_weights"]


def knn_laplacian(X, n_neighbors):
    """``L = D - W`` of the unweighted k-nearest-neighbour graph, symmetrised (an edge where either end
    is among the other's k nearest), as a dense array."""
    from sklearn.neighbors import kneighbors_graph

    k = min(n_neighbors, len(X) - 1)
    W = kneighbors_graph(X, k, mode="connectivity", include_self=False)
    W = W.maximum(W.T).toarray()
    return np.diag(W.sum(axis=1)) - W


def order_constrained_weights(Phi_l, T, free):
    """Weights ``mu`` of ``sum_i mu_i phi_i phi_i^T`` maximising the alignment with T on the labelled rows.

    Parameters
    ----------
    Phi_l : (l, k) array
        The eigenvectors' labelled rows, in increasing eigenvalue order.
    T : (l, l) array
        The target.
    free : (k,) bool array
        Components exempt from the order (only ``mu_i >= 0``).

    Returns
    -------
    ndarray of shape (k,)
        ``mu >= 0``, non-increasing over the non-free components, ``||delta|| = 1`` scale.
    """
    free = np.asarray(free, dtype=bool)
    ordered = np.flatnonzero(~free)
    outer = [np.outer(Phi_l[:, i], Phi_l[:, i]) for i in range(Phi_l.shape[1])]
    Ks = [outer[i] for i in np.flatnonzero(free)]
    cumulative = np.zeros_like(T, dtype=np.float64)
    for i in ordered:
        cumulative = cumulative + outer[i]
        Ks.append(cumulative)
    delta = alignment_weights(Ks, T, centered=False)
    mu = np.zeros(Phi_l.shape[1])
    n_free = int(free.sum())
    mu[free] = delta[:n_free]
    mu[ordered] = np.cumsum(delta[n_free:][::-1])[::-1]  # mu_(i) = sum_{j >= i} delta_j
    return mu


class SpectralGraphKernel(_TransductiveKernel):
    """Order-constrained spectral graph kernel of Zhu et al. (NIPS 2004), as a low-rank factor.

    ``fit(X, y)`` (``y = -1`` for unlabelled samples) builds the graph on every sample of X and learns
    the spectral weights from the labelled ones; ``transform(X)`` on the same X returns G with
    ``K = G G^T``.  See the module docstring.

    Parameters
    ----------
    n_neighbors : int, default=10
        k of the k-nearest-neighbour graph (the paper's experiments: unweighted 10-NN graphs).
    n_components : int or float, default=0.1
        Number of smoothest eigenvectors (count, or fraction of n_samples).

    Attributes
    ----------
    factor_ : ndarray of shape (n_samples, n_components_)
    eigenvalues_ : ndarray of shape (n_components_,)
        The Laplacian's smallest eigenvalues, increasing.
    weights_ : ndarray of shape (n_components_,)
        mu (the learned spectrum), scaled to ``sum(mu) = n_samples``.
    alignment_ : float
        Uncentred alignment of the learned kernel with T on the labelled samples.
    n_components_ : int
    X_fit_ : ndarray of shape (n_samples, n_features)
    fit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import SpectralGraphKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (50, 2)), rng.normal(3, 1, (50, 2))])
    >>> y = np.full(100, -1); y[[0, 1, 98, 99]] = [0, 0, 1, 1]
    >>> sk = SpectralGraphKernel(n_components=10).fit(X, y)
    >>> sk.transform(X).shape, bool(np.all(np.diff(sk.weights_[1:]) <= 1e-9))
    ((100, 10), True)
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_components": _N_COMPONENTS_CONSTRAINT,
    }

    def __init__(self, n_neighbors=10, n_components=0.1):
        _set_params(self, locals())

    def _spectrum(self, X, k):
        """``(w, Phi)``: the k smallest eigenpairs of the k-NN graph Laplacian of X, increasing (no labels: a
        caller may share them between fits on the same X, e.g. the gen_nystrom study across its seeds)."""
        return linalg.eigh(knn_laplacian(X, self.n_neighbors), subset_by_index=[0, k - 1], overwrite_a=True,
                           check_finite=False)

    def _fit(self, X, y, labelled, k):
        """Learn the weights of the k smoothest eigenvectors on X with the labels of y (-1 for unlabelled samples)."""
        n = len(X)
        w, Phi = self._spectrum(X, k)
        yl = y[labelled]
        T = np.where(yl[:, None] == yl[None, :], 1.0, -1.0)
        free = w <= 1e-8 * max(float(np.max(np.abs(w))), 1.0)  # eigenvalue 0: constant on a component
        mu = order_constrained_weights(Phi[labelled], T, free)
        mu *= n / mu.sum() if mu.sum() > 0 else 0.0
        Kl = (Phi[labelled] * mu) @ Phi[labelled].T
        self.alignment_ = float(np.sum(Kl * T) / (np.linalg.norm(Kl) * np.linalg.norm(T))) if mu.any() else 0.0
        self.eigenvalues_, self.weights_, self.n_components_ = w, mu, k
        self.factor_, self.X_fit_ = Phi * np.sqrt(mu), X
