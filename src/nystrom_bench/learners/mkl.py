"""Alignment-based multiple kernel learning: ABMKL and CABMKL (the MKL baselines of Lan, Zhang et al., AIJ 2017).

The kernel is a conic combination ``K = sum_j mu_j K_j`` of Gaussian kernels of widths
``b_j = s_j b0`` (``exp(-||x - y||^2 / b)``, b0 the mean pairwise squared distance of the
training points), with weights that maximise the kernel-target alignment with the ideal
kernel ``K*`` (1 for a pair of one class, else 0) on the training (labelled) points:

- CABMKL (Cortes, Mohri & Rostamizadeh, JMLR 2012, Prop. 9): centred kernels,
  ``v* = argmin_{v >= 0} v^T M v - 2 v^T a`` with ``M_jk = <K_j^c, K_k^c>_F``,
  ``a_j = <K_j^c, K*^c>_F``, ``mu = v* / ||v*||``, which maximises the centred alignment
  ``<K^c, K*^c> / ||K^c||`` over ``mu >= 0``;
- ABMKL (alignment-based MKL as in Gonen & Alpaydin's survey of the MKL baselines the paper
  used): the same on uncentred kernels (Cristianini et al.'s alignment).

An SVM (scikit-learn's ``SVC``, ``C`` = 1 as in the paper) is then trained with ``K`` on the
training points.  The QP is a non-negative least-squares problem: with ``M = L^T L``,
``v^T M v - 2 v^T a = ||L v - L^{-T} a||^2 - const``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg, optimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import kernels
from ._base import _class_indices

__all__ = ["AlignmentMKL", "alignment_weights"]

#: the paper's nine widths 2^-4 b0 ... 2^4 b0
WIDTH_SCALES = tuple(2.0**k for k in range(-4, 5))


def _centre(K):
    K = K - K.mean(axis=0, keepdims=True)
    return K - K.mean(axis=1, keepdims=True)


def alignment_weights(Ks, K_star, centered=True):
    """The weights ``mu >= 0``, ``||mu|| = 1``, of the (centred) alignment-maximising combination of ``Ks``.

    Parameters
    ----------
    Ks : list of (l, l) arrays
    K_star : (l, l) array
        The target (ideal) kernel.
    centered : bool
        Centre every kernel first (CABMKL) or not (ABMKL).

    Returns
    -------
    ndarray of shape (len(Ks),)
    """
    prep = _centre if centered else (lambda K: K)
    V = np.stack([prep(np.asarray(K, dtype=np.float64)).ravel() for K in Ks])  # one kernel per row
    M = V @ V.T  # <K_j, K_k>_F
    a = V @ prep(np.asarray(K_star, dtype=np.float64)).ravel()
    w, U = linalg.eigh(M)
    keep = w > 1e-12 * max(w.max(), 0.0)
    if not keep.any() or not np.any(a > 0):
        return np.full(len(Ks), 1.0 / np.sqrt(len(Ks)))  # nothing aligns: the uniform combination
    L = np.sqrt(w[keep])[:, None] * U[:, keep].T  # M = L^T L on its range
    rhs = (U[:, keep].T @ a) / np.sqrt(w[keep])  # L^{-T} a
    v, _ = optimize.nnls(L, rhs)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else np.full(len(Ks), 1.0 / np.sqrt(len(Ks)))


class AlignmentMKL(ClassifierMixin, BaseEstimator):
    """An SVM on the alignment-maximising combination of Gaussian kernels (ABMKL / CABMKL).

    Parameters
    ----------
    centered : bool, default=True
        True: CABMKL (centred alignment, Cortes et al.); False: ABMKL (uncentred).
    width_scales : sequence of float, default=2^-4, ..., 2^4
        The widths ``b_j = s_j b0`` of ``exp(-||x - y||^2 / b_j)``.
    C : float, default=1.0
        The SVM's C (the paper: 1 for every method).

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
    gammas_ : ndarray of shape (M,)
        ``1 / b_j``.
    svc_ : sklearn.svm.SVC
        Trained on the combined kernel (precomputed).
    X_fit_ : ndarray of shape (n_samples, n_features)
    classes_ : ndarray
    fit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import AlignmentMKL
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> mkl = AlignmentMKL().fit(X, y)
    >>> float(mkl.score(X, y)) > 0.8, bool(np.all(mkl.weights_ >= 0))
    (True, True)
    """

    _parameter_constraints = {
        "centered": ["boolean"],
        "width_scales": ["array-like"],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, centered=True, width_scales=WIDTH_SCALES, C=1.0):
        self.centered = centered
        self.width_scales = width_scales
        self.C = C

    def _gram(self, X, Y):
        return sum(w * kernels.make("gaussian", gamma=float(g))(X, Y)
                   for w, g in zip(self.weights_, self.gammas_, strict=True) if w > 0)

    def fit(self, X, y):
        """Choose the weights on (X, y) and train the SVM on the combined kernel."""
        from sklearn.svm import SVC

        from .gen_nystrom import ideal_kernel

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = _class_indices(self, y)
        scales = np.asarray(self.width_scales, dtype=np.float64).ravel()
        if not len(scales) or scales.min() <= 0:
            raise ValueError(f"width_scales must hold positive numbers, got {self.width_scales!r}")
        t0 = time.perf_counter()
        b0 = kernels.mean_sq_dist(X) if len(X) > 1 else 1.0
        self.gammas_ = 1.0 / (scales * (b0 or 1.0))
        Ks = [kernels.make("gaussian", gamma=float(g))(X) for g in self.gammas_]
        self.weights_ = alignment_weights(Ks, ideal_kernel(y_idx), centered=self.centered)
        K = sum(w * Kj for w, Kj in zip(self.weights_, Ks, strict=True))
        self.svc_ = SVC(C=self.C, kernel="precomputed").fit(K, y_idx)
        self.X_fit_ = X
        self.fit_time_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        """The SVM's decision values on the combined kernel."""
        check_is_fitted(self, "svc_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.svc_.decision_function(self._gram(X, self.X_fit_))

    def predict(self, X):
        """Class labels."""
        check_is_fitted(self, "svc_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.classes_[self.svc_.predict(self._gram(X, self.X_fit_))]
