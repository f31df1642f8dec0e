"""Cholesky with side information (CSI; Bach & Jordan, ICML 2005): a single-kernel baseline of Lan, Zhang et al.

A pivoted incomplete Cholesky factor ``K ~ G G^T`` (``G`` n x r, its pivot rows lower triangular)
whose pivots are chosen greedily to lower, at every step, the cost

    J(G) = lambda tr(K - G G^T) + mu ||Y - Q Q^T Y||_F^2,
    lambda = (1 - kappa) / tr K,  mu = kappa / ||Y||_F^2,

where ``Q`` is an orthonormal basis of the (centred) columns of G and Y the (centred) one-hot
labels: the factor approximates K *and* predicts the labels.  Bach & Jordan's gains of a candidate
pivot i are

- approximation: ``||(K - G G^T)[:, i]||^2 / (K - G G^T)_ii`` (the trace the new column removes);
- prediction: ``||u_i^T Y||^2 / ||u_i||^2``, u_i the new column's part orthogonal to Q.

Two departures from the paper, both deliberate:

- **Exact gains.**  Bach & Jordan estimate the gains from delta look-ahead Cholesky columns, to
  stay O(n r (r + delta)) without the kernel matrix.  We hold the dense kernel (the baseline runs
  on the paper's sets, n <= ~10^4) and update every candidate's gains exactly: per step one
  matrix-vector product with K (O(n^2)) and O(n l) for the labels -- the criterion the paper
  approximates, computed exactly.
- **Semi-supervised prediction term.**  The paper assumes every label known (Lan, Zhang et al.
  note that its semi-supervised extension is open); here Y has rows for the labelled samples only,
  and Q spans the (centred) labelled rows of G.  With every sample labelled it is the paper's cost.

New points get factor rows ``G(x) = L^{-1} k(P, x)`` with P the pivots and ``L = G[P]`` (lower
triangular): ``G(x) . G(p) = k(x, p)`` for every pivot p, which the training rows satisfy too.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval

from ._base import (
    _KERNEL_CONSTRAINTS,
    _N_COMPONENTS_CONSTRAINT,
    _new_input,
    _SemiSupervised,
    _set_params,
)

__all__ = ["CSI"]

#: a pivot whose residual diagonal is below this times max diag(K) is already spanned
_TINY = 1e-12


class CSI(_SemiSupervised):
    """Cholesky with side information (Bach & Jordan, ICML 2005), semi-supervised, exact gains.

    ``fit(X, y)`` with ``y = -1`` for unlabelled samples; ``transform(X)`` returns the factor G
    (``K ~ G G^T``) for the fitted samples and for new ones.  See the module docstring.

    Parameters
    ----------
    kernel, gamma, degree, coef0, sigma : as in :class:`~nystrom_bench.learners.KRR`
    n_components : int or float, default=0.1
        Maximal rank r (count, or fraction of n_samples).
    kappa : float in [0, 1], default=0.99
        Trade-off between approximating K (0) and predicting the labels (1); the paper's 0.99.
    centering : bool, default=True
        Centre the labels and the factor's labelled rows in the prediction term (the paper's default).
    tol : float, default=0.0
        Stop early when the best gain is below ``tol``.

    Attributes
    ----------
    factor_ : ndarray of shape (n_samples, n_components_)
        G on the fitted samples.
    pivots_ : ndarray of shape (n_components_,)
        Indices of the chosen columns, in order.
    gains_ : ndarray of shape (n_components_,)
        The gain ``lambda dJ_K + mu dJ_Y`` of each chosen pivot.
    approximation_error_ : ndarray of shape (n_components_ + 1,)
        ``tr(K - G G^T) / tr K`` before the first and after every step.
    prediction_error_ : ndarray of shape (n_components_ + 1,)
        ``||Y - Q Q^T Y||^2 / ||Y||^2`` likewise.
    pivot_points_ : ndarray of shape (n_components_, n_features)
    pivot_factor_ : ndarray of shape (n_components_, n_components_)
        ``L = G[pivots_]``, lower triangular.
    n_components_ : int
    kernel_ : Kernel
    fit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import CSI
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3)); y = np.full(100, -1); y[:20] = (X[:20, 0] > 0)
    >>> csi = CSI(gamma=0.5, n_components=10).fit(X, y)
    >>> G = csi.transform(X); G.shape, bool(np.allclose(G, csi.factor_))
    ((100, 10), True)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "n_components": _N_COMPONENTS_CONSTRAINT,
        "kappa": [Interval(numbers.Real, 0, 1, closed="both")],
        "centering": ["boolean"],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, n_components=0.1,
                 kappa=0.99, centering=True, tol=0.0):
        _set_params(self, locals())

    def _fit(self, X, y, labelled, r):
        """Choose the pivots on X with the labels of y (-1 for unlabelled samples), at most r."""
        n = len(X)
        K = self.kernel_(X)
        diag = np.diag(K).copy()
        trace = float(diag.sum())
        if trace <= 0:
            raise ValueError("CSI: the kernel matrix has a zero diagonal; nothing to factor")
        Y = (y[labelled][:, None] == np.unique(y[labelled])[None, :]).astype(np.float64)
        centre = (lambda M: M - M.mean(axis=0, keepdims=True)) if self.centering else (lambda M: M)
        Y = centre(Y)
        lam, mu = (1 - self.kappa) / trace, self.kappa / float(np.sum(Y**2))

        G = np.zeros((n, r))
        D = diag.copy()  # residual diagonal
        A = np.einsum("ij,ij->j", K, K)  # squared column norms of the residual K - G G^T
        P = centre(K[labelled])  # (I - Q Q^T) H (K - G G^T)[labelled]: candidates' orthogonal parts
        chosen, gains, err_k, err_y = [], [], [trace], [float(np.sum(Y**2))]
        for k in range(r):
            ok = D > _TINY * diag.max()
            if not ok.any():
                break
            gain_k = np.where(ok, A / np.where(ok, D, 1.0), -np.inf)
            pn2 = np.einsum("ij,ij->j", P, P)
            spans = ok & (pn2 > 1e-12 * np.where(ok, D, 1.0))  # ||u_i||^2 = pn2 / D_i
            gain_y = np.where(spans, np.sum((P.T @ Y) ** 2, axis=1) / np.where(spans, pn2, 1.0), 0.0)
            gain = lam * gain_k + mu * gain_y
            p = int(np.argmax(gain))
            if gain[p] < self.tol:
                break
            g = (K[:, p] - G[:, :k] @ G[p, :k]) / np.sqrt(D[p])
            Rg = K @ g - G[:, :k] @ (G[:, :k].T @ g)  # (K - G G^T) g before the update
            A = np.maximum(A - 2 * g * Rg + g**2 * (g @ g), 0.0)
            u = P[:, p] / np.sqrt(D[p])
            G[:, k] = g
            D = np.maximum(D - g**2, 0.0)
            D[p] = 0.0
            if u @ u > 1e-12:
                q = u / np.linalg.norm(u)
                P -= np.outer(q, q @ P)
                err_y.append(err_y[-1] - float(np.sum((q @ Y) ** 2)))
            else:
                P -= np.outer(u, g)
                err_y.append(err_y[-1])
            err_k.append(err_k[-1] - float(g @ g))
            chosen.append(p)
            gains.append(float(gain[p]))
        k = len(chosen)
        self.factor_ = G[:, :k]
        self.pivots_ = np.array(chosen, dtype=np.intp)
        self.gains_ = np.array(gains)
        self.approximation_error_ = np.maximum(np.array(err_k), 0.0) / trace
        self.prediction_error_ = np.maximum(np.array(err_y), 0.0) / max(err_y[0], np.finfo(np.float64).tiny)
        self.n_components_ = k
        self.pivot_points_ = X[self.pivots_]
        self.pivot_factor_ = np.tril(self.factor_[self.pivots_])

    def transform(self, X):
        """The factor rows ``L^{-1} k(pivots, x)`` of X (the fitted rows for the fitted samples)."""
        X = _new_input(self, X, "factor_", sparse=False)
        C = self.kernel_(self.pivot_points_, X)
        return linalg.solve_triangular(self.pivot_factor_, C, lower=True, check_finite=False).T
