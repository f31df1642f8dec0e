"""Low-rank kernel learning with the LogDet Bregman divergence (Kulis, Sustik & Dhillon, JMLR 2009): the
"Breg" baseline of Lan, Zhang et al.

Given a low-rank initial kernel ``K0 = G0 G0^T`` and distance constraints on labelled pairs --
``d_K(i, j) = K_ii + K_jj - 2 K_ij <= u`` for a pair of one class, ``>= l`` for a pair of two --
the learned kernel minimises ``D_ld(K, K0)`` subject to them (with slack).  LogDet keeps K in the
range of K0 and PSD, so ``K = G0 M G0^T`` with M (r x r) PSD, and new points get ``G0(x) M^{1/2}``.

Algorithm (cyclic Bregman projections with slack, Kulis et al. Alg. 1 / Davis et al.'s ITML with
its slack parameter gamma): for a constraint c = (i, j) with sign delta (+1 similar, -1 dissimilar),
dual ``lambda_c >= 0`` and slack target ``xi_c``::

    p      = v^T K v,  v = e_i - e_j
    alpha  = min(lambda_c, delta gamma / (gamma + 1) (1/p - 1/xi_c))
    beta   = delta alpha / (1 - delta alpha p)
    xi_c   = 1 / (1/xi_c + delta alpha / gamma)
    lambda_c -= alpha
    K     += beta K v v^T K

Derivation of the alpha and xi lines (ITML's paper prints ``delta/2 (1/p - gamma/xi)`` and
``gamma xi / (gamma + delta alpha xi)``, which do not reach the constraint for gamma = inf): the
update gives ``1/p' = 1/p - delta alpha``; the projection onto ``p' = xi'`` with the slack's own
LogDet term moving ``1/xi' = 1/xi + delta alpha / gamma`` solves to the alpha above, which for
gamma = inf is the exact projection ``p' = xi``.

Every constraint lives on the labelled samples, so the iterations run on the l x l block
``K_ll`` only (O(l^2) per projection, not O(r^2) or O(n^2)): ``K = K0 + K0[:, L] Psi K0[L, :]``
throughout, hence ``M = I + G0_l^+ (K_ll - K0_ll) G0_l^{+T}`` at the end.  The initial kernel is the
standard Nystrom factor of the base kernel (k-means landmarks by default), the paper's other
single-kernel methods' starting point; the bounds u and l are the 5th and 95th percentiles of the
initial distances over the labelled pairs (ITML's choice).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval

from .. import approx
from ._base import (
    _KERNEL_CONSTRAINTS,
    _SAMPLER_CONSTRAINTS,
    DEPRECATED,
    _LandmarkKernel,
    _set_params,
)

__all__ = ["LogDetKernelLearning", "logdet_projections"]


def logdet_projections(K, pairs, sign, targets, gamma=1.0, max_sweeps=50, tol=1e-3):
    """Cyclic LogDet Bregman projections of K onto distance constraints (in place on a copy).

    Parameters
    ----------
    K : (l, l) array
        PSD start.
    pairs : (c, 2) int array
    sign : (c,) array of +1 (``d <= target``) / -1 (``d >= target``)
    targets : (c,) array
    gamma : float
        Slack trade-off (``np.inf``: hard constraints).
    max_sweeps : int
    tol : float
        Stop when the duals' relative change over a sweep is below ``tol``.

    Returns
    -------
    (K, duals, n_sweeps)
    """
    K = np.array(K, dtype=np.float64, copy=True, order="C")
    xi = np.asarray(targets, dtype=np.float64).copy()
    duals = np.zeros(len(xi))
    shrink = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    inv_gamma = 0.0 if np.isinf(gamma) else 1.0 / gamma
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    sign = np.ascontiguousarray(sign, dtype=np.float64)
    sweep = _sweep()
    sweeps = 0
    for _ in range(max_sweeps):
        sweeps += 1
        before = duals.copy()
        sweep(K, first, second, sign, xi, duals, float(shrink), float(inv_gamma))
        change = np.abs(duals - before).sum()
        if change <= tol * max(np.abs(duals).sum() + np.abs(before).sum(), np.finfo(np.float64).tiny):
            break
    return K, duals, sweeps


def _sweep_numpy(K, first, second, sign, xi, duals, shrink, inv_gamma):
    """One sweep of :func:`logdet_projections` over the constraints in order (K, xi, duals in place): per
    constraint the projection onto ``d(i, j) <= / >= target`` (``sign`` +1 / -1) with the slack update; the
    compiled sweep (:mod:`nystrom_bench.learners._bregman_numba`) gives these bits without the temporaries."""
    made = 0
    for c, (i, j, delta) in enumerate(zip(first, second, sign, strict=True)):
        Kv = K[:, i] - K[:, j]
        p = Kv[i] - Kv[j]
        if p <= 1e-12:
            continue  # the two points coincide under K: no direction to move them in
        alpha = min(duals[c], delta * shrink * (1.0 / p - 1.0 / xi[c]))
        if alpha == 0.0:
            continue
        beta = delta * alpha / (1.0 - delta * alpha * p)
        xi[c] = 1.0 / (1.0 / xi[c] + delta * alpha * inv_gamma)
        duals[c] -= alpha
        K += beta * np.outer(Kv, Kv)
        made += 1
    return made


def _sweep():
    """The compiled sweep where numba is installed (and compiles), else :func:`_sweep_numpy`: the same bits."""
    global _SWEEP
    if _SWEEP is None:
        try:
            from ._bregman_numba import sweep as _SWEEP
        except Exception:  # noqa: BLE001 - numba missing or broken: numpy's loop, the same bits
            _SWEEP = _sweep_numpy
    return _SWEEP


_SWEEP = None


class LogDetKernelLearning(_LandmarkKernel):
    """Low-rank LogDet kernel learning from labelled pairs (Kulis et al., JMLR 2009), inductive.

    ``fit(X, y)`` with ``y = -1`` for unlabelled samples; ``transform(X)`` returns G with
    ``K = G G^T`` for fitted and new samples.  See the module docstring.

    Parameters
    ----------
    kernel, gamma, degree, coef0, sigma : as in :class:`~nystrom_bench.learners.KRR`
        The base kernel of the initial (Nystrom) kernel.
    n_components : int or float, default=0.1
        Rank of the initial kernel: landmarks (count, or fraction in (0, 1] of n_samples).
    sampler : str, default="kmeans"
    slack : float, default=1.0
        gamma of the slack term (ITML's default 1); ``np.inf``: hard constraints.
    quantiles : (float, float), default=(5, 95)
        Percentiles of the initial labelled-pair distances that set u and l.
    max_sweeps : int, default=20
        Sweeps over all labelled pairs (ITML stops after 10^5 projections: ~20 sweeps over the 4,950 pairs
        of 100 labels); ``n_sweeps_`` tells whether ``tol`` was reached first.
    tol : float, default=1e-3
    random_state : int, Generator or None
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

    Attributes
    ----------
    metric_ : ndarray of shape (r, r)
        M with ``K = G0 M G0^T``.
    root_ : ndarray of shape (r, r)
        ``M^{1/2}`` times the Nystrom map: ``transform(X) = K(X, landmarks_) root_``.
    landmarks_ : ndarray of shape (r, n_features)
    bounds_ : (float, float)
        (u, l).
    n_constraints_, n_sweeps_ : int
    violation_ : float
        Largest relative violation of a constraint by the learned kernel.
    kernel_ : Kernel
    fit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import LogDetKernelLearning
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); y = np.full(120, -1); y[:30] = (X[:30, 0] > 0)
    >>> G = LogDetKernelLearning(gamma=0.5, n_components=20, random_state=0).fit(X, y).transform(X)
    >>> G.shape
    (120, 20)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        **_SAMPLER_CONSTRAINTS,
        "slack": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "quantiles": [tuple, list],
        "max_sweeps": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, n_components=0.1,
                 sampler="kmeans", landmarks=None, slack=1.0, quantiles=(5, 95), max_sweeps=20, tol=1e-3,
                 random_state=None, n_landmarks=DEPRECATED):
        _set_params(self, locals())

    def _check_fit_params(self, X, labelled):
        lo_q, hi_q = self._percentiles()
        if not 0 <= lo_q <= hi_q <= 100:
            raise ValueError(f"quantiles must be two percentiles 0 <= lo <= hi <= 100, got {self.quantiles!r}")
        super()._check_fit_params(X, labelled)

    def _percentiles(self):
        """``quantiles`` as the two floats (lo, hi)."""
        return [float(q) for q in self.quantiles]

    def _fit(self, X, y, labelled, c):
        """Learn M from the labelled pairs of y (-1 for unlabelled samples) on the Nystrom kernel of X on c
        landmarks."""
        op = self._landmark_operator(X, None, self.kernel_, c=c)
        T, _ = approx.lowrank_pinv_factor(op.W)
        self.landmarks_ = op.Z
        G0_l = op.C[labelled] @ T
        K0 = G0_l @ G0_l.T
        yl = y[labelled]
        i, j = np.triu_indices(len(labelled), k=1)
        sign = np.where(yl[i] == yl[j], 1.0, -1.0)
        d0 = np.diag(K0)[i] + np.diag(K0)[j] - 2 * K0[i, j]
        upper, lower = np.percentile(d0, self._percentiles())
        self.bounds_ = (float(upper), float(lower))
        targets = np.where(sign > 0, upper, lower)
        K, _, self.n_sweeps_ = logdet_projections(K0, np.column_stack([i, j]), sign, targets, gamma=self.slack,
                                                  max_sweeps=self.max_sweeps, tol=self.tol)
        G0_pinv = linalg.pinv(G0_l)
        M = np.eye(T.shape[1]) + G0_pinv @ (K - K0) @ G0_pinv.T
        w, U = linalg.eigh((M + M.T) / 2)
        self.metric_ = M
        self.root_ = T @ (U * np.sqrt(np.maximum(w, 0.0)))
        d = np.diag(K)[i] + np.diag(K)[j] - 2 * K[i, j]
        self.violation_ = float(np.max(np.maximum(sign * (d - targets), 0.0) / targets)) if len(d) else 0.0
        self.n_constraints_ = len(sign)
