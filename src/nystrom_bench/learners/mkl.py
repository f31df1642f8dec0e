"""Multiple kernel learning baselines of Lan, Zhang et al. (AIJ 2017): ABMKL, CABMKL, SimpleMKL and GLMKL.

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

SimpleMKL and GLMKL instead learn the weights *with* the SVM: both solve the l1-MKL problem
``min_{d in simplex} J(d)``, ``J(d)`` the optimal SVM dual objective with ``K = sum_m d_m K_m``
(Lanckriet et al.; Bach et al.'s SKM solves the same problem by SMO on a smoothed dual):

- SimpleMKL (Rakotomamonjy, Bach, Canu & Grandvalet, JMLR 2008): reduced-gradient descent on the
  simplex with ``dJ/dd_m = -1/2 a^T K_m a`` (a the signed duals, Danskin's theorem), the step to the
  next face while J decreases, then an Armijo line search; stop at a relative duality gap
  ``(max_m g_m - sum_m d_m g_m) / 2 <= tol J``, ``g_m = a^T K_m a``;
- GLMKL (Xu, Jin, Yang, King & Lyu, ICML 2010, group lasso, p = 1): alternate the SVM and the
  closed form ``d_m = ||f_m|| / sum_k ||f_k||`` with ``||f_m||^2 = d_m^2 g_m``.

Several classes: scikit-learn's one-vs-one SVC with one weight vector d shared by the problems;
J and g sum over them.  A weight vector on the simplex keeps the combination's unit diagonal.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg, optimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from .. import kernels
from ._base import _class_indices, _new_input, _set_params

__all__ = ["AlignmentMKL", "SimpleMKL", "GroupLassoMKL", "alignment_weights", "svm_mkl_terms"]

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


class _GaussianMKL(ClassifierMixin, BaseEstimator):
    """An SVM on a learned combination of Gaussian kernels; subclasses choose the weights
    (``_learn_weights(Ks, y_idx)``)."""

    def _gram(self, X, Y):
        return sum(w * kernels.make("gaussian", gamma=float(g))(X, Y)
                   for w, g in zip(self.weights_, self.gammas_, strict=True) if w > 0) / self.scale_

    def fit(self, X, y):
        """Choose the weights on (X, y) and train the SVM on the combined kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        from sklearn.svm import SVC

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
        self.weights_ = self._learn_weights(Ks, y_idx)
        K = sum(w * Kj for w, Kj in zip(self.weights_, Ks, strict=True))
        # the SVM sees the combination at unit mean diagonal (every Gaussian's diagonal is 1, so this is
        # sum(weights)), the scale its C is meant for: the alignment fixes the weights only up to scale
        diag = float(np.mean(np.diag(K)))
        self.scale_ = diag if self.normalize and diag > 0 else 1.0
        self.svc_ = SVC(C=self.C, kernel="precomputed").fit(K / self.scale_, y_idx)
        self.X_fit_ = X
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _svc_output(self, X, method):
        """The fitted SVM's ``method`` on the combined kernel between X and the training points."""
        X = _new_input(self, X, "svc_", sparse=False)
        return getattr(self.svc_, method)(self._gram(X, self.X_fit_))

    def decision_function(self, X):
        """The SVM's decision values on the combined kernel."""
        return self._svc_output(X, "decision_function")

    def predict(self, X):
        """Class labels."""
        labels = self._svc_output(X, "predict")
        return self.classes_[labels]


_MKL_CONSTRAINTS = {
    "width_scales": ["array-like"],
    "C": [Interval(numbers.Real, 0, None, closed="neither")],
    "normalize": ["boolean"],
}
class AlignmentMKL(_GaussianMKL):
    """An SVM on the alignment-maximising combination of Gaussian kernels (ABMKL / CABMKL).

    Parameters
    ----------
    centered : bool, default=True
        True: CABMKL (centred alignment, Cortes et al.); False: ABMKL (uncentred).
    width_scales : sequence of float, default=2^-4, ..., 2^4
        The widths ``b_j = s_j b0`` of ``exp(-||x - y||^2 / b_j)``.
    C : float, default=1.0
        The SVM's C (the paper: 1 for every method).
    normalize : bool, default=True
        Train the SVM on the combination divided by its mean diagonal (``sum(weights_)``): the weights'
        scale is arbitrary (alignment is scale-free), C is not.

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
    gammas_ : ndarray of shape (M,)
        ``1 / b_j``.
    scale_ : float
        The divisor of the combined kernel (1 without ``normalize``).
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

    _parameter_constraints = {"centered": ["boolean"], **_MKL_CONSTRAINTS}

    def __init__(self, centered=True, width_scales=WIDTH_SCALES, C=1.0, normalize=True):
        _set_params(self, locals())

    def _learn_weights(self, Ks, y_idx):
        from .gen_nystrom import ideal_kernel

        return alignment_weights(Ks, ideal_kernel(y_idx), centered=self.centered)


def svm_mkl_terms(svc, Ks):
    """``(g, sum |a|)`` of a fitted precomputed-kernel SVC over its one-vs-one problems:
    ``g_m = sum_p a_p^T K_m a_p`` (a_p the problem's signed duals) -- ``dJ/dd_m = -g_m / 2`` -- and the
    duals' total, so that the dual objective is ``J(d) = sum |a| - d . g / 2``."""
    from .nusvm import _ovo_duals

    support, A, _ = _ovo_duals(svc)
    g = np.array([np.einsum("ps,st,pt->", A, K[np.ix_(support, support)], A) for K in Ks])
    return g, float(np.abs(A).sum())


class _SimplexMKL(_GaussianMKL):
    """l1-MKL: the weights on the simplex that minimise the SVM's optimal dual objective J(d)."""

    _parameter_constraints = {**_MKL_CONSTRAINTS, "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
                              "tol": [Interval(numbers.Real, 0, None, closed="left")]}

    def __init__(self, width_scales=WIDTH_SCALES, C=1.0, normalize=True, max_iter=100, tol=1e-3):
        _set_params(self, locals())

    def _learn_weights(self, Ks, y_idx):
        """From the uniform weights, one :meth:`_step` of the subclass per iteration until the relative duality
        gap is at most ``tol`` (or ``max_iter`` iterations, or a step that cannot go on); records
        ``objective_path_``, ``n_iter_`` and ``gap_``."""
        d = np.full(len(Ks), 1.0 / len(Ks))
        J, g = self._svm(Ks, d, y_idx)
        self.objective_path_ = [J]
        self.n_iter_ = 0
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            if self._gap(J, d, g) <= self.tol:
                break
            step = self._step(Ks, y_idx, d, J, g)
            if step is None:  # no direction to move in
                break
            d, J, g, go_on = step
            self.objective_path_.append(J)
            if not go_on:
                break
        self.gap_ = self._gap(J, d, g)
        return d

    def _step(self, Ks, y_idx, d, J, g):  # pragma: no cover - abstract
        """One iteration from the weights d with ``(J, g)``: ``(d, J, g, go on?)``, or None where there is no
        direction to move in (nothing recorded)."""
        raise NotImplementedError

    def _move(self, Ks, y_idx, d, D, t):
        """The weights ``d + t D`` (clipped at 0, back on the simplex) and their ``(J, g)``."""
        d_new = np.clip(d + t * D, 0.0, None)
        d_new /= d_new.sum()
        return (d_new, *self._svm(Ks, d_new, y_idx))

    def _svm(self, Ks, d, y_idx):
        """``(J(d), g)`` of the SVM trained on ``sum_m d_m K_m``."""
        from sklearn.svm import SVC

        K = sum(w * Km for w, Km in zip(d, Ks, strict=True))
        svc = SVC(C=self.C, kernel="precomputed", tol=1e-6).fit(K, y_idx)
        g, alpha_sum = svm_mkl_terms(svc, Ks)
        return alpha_sum - 0.5 * float(d @ g), g

    @staticmethod
    def _gap(J, d, g):
        """The l1-MKL duality gap ``(max_m g_m - d . g) / 2`` relative to J."""
        return 0.5 * (g.max() - d @ g) / max(abs(J), np.finfo(np.float64).tiny)


class SimpleMKL(_SimplexMKL):
    """SimpleMKL (Rakotomamonjy et al., JMLR 2008): an SVM on the l1-MKL combination of Gaussian kernels.

    Parameters
    ----------
    width_scales : sequence of float, default=2^-4, ..., 2^4
        The widths ``b_j = s_j b0`` of ``exp(-||x - y||^2 / b_j)``, b0 the mean squared distance.
    C : float, default=1.0
        The SVM's C (the paper: 1 for every method).
    normalize : bool, default=True
        As in :class:`AlignmentMKL` (a no-op on the simplex).
    max_iter : int, default=100
        Reduced-gradient iterations.
    tol : float, default=1e-3
        Relative duality gap at which to stop.

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
        d on the simplex.
    objective_path_ : list of float
        J(d) after every iteration (non-increasing).
    gap_ : float
        Final relative duality gap.
    gammas_, scale_, svc_, X_fit_, classes_, fit_time_ : as in :class:`AlignmentMKL`
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import SimpleMKL
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> mkl = SimpleMKL().fit(X, y)
    >>> float(mkl.score(X, y)) > 0.8, bool(np.isclose(mkl.weights_.sum(), 1))
    (True, True)
    """

    def _direction(self, d, g):
        """The reduced-gradient descent direction of the paper's eq. (14) (grad = -g/2)."""
        grad = -0.5 * g
        mu = int(np.argmax(d))
        D = np.where((d <= 0) & (grad - grad[mu] > 0), 0.0, grad[mu] - grad)
        D[mu] = 0.0
        D[mu] = -D.sum()
        return D

    def _step(self, Ks, y_idx, d, J, g):
        D = self._direction(d, g)
        if not np.any(D < 0):
            return None
        # follow D to the next face while J decreases (a weight reaches 0), as the paper's Algorithm 1
        while True:
            neg = D < 0
            d_new, J_new, g_new = self._move(Ks, y_idx, d, D, float(np.min(-d[neg] / D[neg])))
            if J_new >= J:
                break
            d, J, g = d_new, J_new, g_new
            D = self._direction(d, g)
            if not np.any(D < 0):
                break
        # Armijo backtracking along D on [0, step]
        slope = float(-0.5 * g @ D)
        if slope >= 0 or not np.any(D < 0):
            return d, J, g, True
        neg = D < 0
        t = float(np.min(-d[neg] / D[neg]))
        while t > 1e-12:
            d_new, J_new, g_new = self._move(Ks, y_idx, d, D, t)
            if J_new <= J + 1e-4 * t * slope:
                d, J, g = d_new, J_new, g_new
                break
            t *= 0.5
        return d, J, g, t > 1e-12


class GroupLassoMKL(_SimplexMKL):
    """GLMKL (Xu et al., ICML 2010; p = 1): an SVM on the l1-MKL combination, by alternating the SVM and
    the group-lasso closed form ``d_m = ||f_m|| / sum_k ||f_k||``.

    Parameters
    ----------
    width_scales : sequence of float, default=2^-4, ..., 2^4
        The widths ``b_j = s_j b0`` of ``exp(-||x - y||^2 / b_j)``, b0 the mean squared distance.
    C : float, default=1.0
        The SVM's C (the paper: 1 for every method).
    normalize : bool, default=True
        As in :class:`AlignmentMKL` (a no-op on the simplex).
    max_iter : int, default=100
    tol : float, default=1e-3
        Relative duality gap at which to stop.

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
    objective_path_ : list of float
    gap_ : float
    gammas_, scale_, svc_, X_fit_, classes_, fit_time_ : as in :class:`AlignmentMKL`
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GroupLassoMKL
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> float(GroupLassoMKL().fit(X, y).score(X, y)) > 0.8
    True
    """

    def _step(self, Ks, y_idx, d, J, g):
        norms = d * np.sqrt(np.maximum(g, 0.0))  # ||f_m|| = d_m sqrt(a^T K_m a)
        if norms.sum() <= 0:
            return None
        d = norms / norms.sum()
        return (d, *self._svm(Ks, d, y_idx), True)
