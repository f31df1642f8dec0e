"""How a kernel machine runs on a Nystrom approximation, and how far its solution is from the exact one.

Li et al. (geometric view of running Nystrom-based kernel machines) compare three
integrations of a Nystrom approximation ``K~ = F F^T`` (``F(x) = k(x, Z) U L^{-1/2}``,
``W = K(Z, Z) = U L U^T``) into a kernel machine:

- **GSA** (Gram-matrix substitution): train with K~ in place of K, predict with the exact
  kernel, ``w_GSA = sum_i a_i phi(x_i)``;
- **LLA** (low-rank linearisation): train the linear machine on F, predict ``w^T F(x)``;
  in the RKHS ``w_LLA = P_Z w_GSA``, the projection of GSA's solution onto the span of
  the landmarks, with the *same* dual a (the dual of the linear machine on F is the
  dual of the kernel machine on K~);
- **NCR** (Rudi et al.): for KRR the same predictor as LLA.

Against the exact machine's ``w* = sum_i a*_i phi(x_i)`` (the seed text lost these
equations; restored from ``w_LLA = P_Z w_GSA`` and ``K~ = Phi^T P_Z Phi``)::

    ||w* - w_GSA||^2 = (a* - a)^T K (a* - a)
    ||w* - w_LLA||^2 = a*^T K a* - 2 a*^T K~ a + a^T K~ a

:func:`approximation_error` computes both -- and the error of any fitted
:class:`~nystrom_bench.learners.KRR` (gsa, lla, ncr), :class:`~nystrom_bench.learners.NuSVM`
or :class:`~nystrom_bench.learners.LSSVM` -- from the predictors' expansions
``w = sum_j c_j phi(p_j)`` (training points for GSA, landmarks for LLA/NCR), as one
quadratic form of the difference: block-wise kernel products, no n x n matrix held, and no
cancellation between two large norms when the error is small.  For LLA the landmark form
equals the closed form above (``K(X, Z) U L^{-1/2} F^T a = K~ a`` and
``L^{-1/2} U^T W U L^{-1/2} = I``); the tests check both against explicit feature vectors.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench.learners import NuSVM
>>> from nystrom_bench.integration import approximation_error
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 2)); y = (X[:, 0] ** 2 + X[:, 1] > 0.5).astype(int)
>>> exact = NuSVM(gamma=1.0, nu=0.3, approximation="exact").fit(X, y)
>>> ny = NuSVM(gamma=1.0, nu=0.3, n_components=20, random_state=0).fit(X, y)
>>> e_gsa, e_lla = (approximation_error(exact, ny, mode=m) for m in ("gsa", "lla"))
>>> 0 < e_gsa < 1 and 0 < e_lla < 1
True
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["approximation_error", "approximation_errors", "rkhs_sq_distance"]

#: the last ``||w*||^2`` of each exact machine: ``{estimator: (key, points, coef, value)}``.  Every approximate
#: machine of a training set is measured against one exact machine (the integration study: 57 per seed on
#: friedman1), and that norm is a full kernel pass over its n points
_EXACT_NORMS = weakref.WeakKeyDictionary()

def _columns(c):
    c = np.asarray(c, dtype=np.float64)
    return c[:, None] if c.ndim == 1 else c


def rkhs_sq_distance(kernel, P, a, Q, b, P_index=None, Q_index=None):
    """``sum_t ||sum_i a[i, t] phi(P_i) - sum_j b[j, t] phi(Q_j)||^2`` in the kernel's RKHS.

    Parameters
    ----------
    kernel : Kernel
    P : array of shape (m_P, d)
    a : array of shape (m_P,) or (m_P, t)
    Q : array of shape (m_Q, d)
    b : array of shape (m_Q,) or (m_Q, t)
    P_index, Q_index : int arrays or None
        Indices of the points in one common set (the training X): when both are given the
        coefficients of a point in both expansions are merged first, so the result is one
        quadratic form over the union of the points.

    Returns
    -------
    float (>= 0; round-off below 0 is clipped)
    """
    a, b = _columns(a), _columns(b)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"the expansions have {a.shape[1]} and {b.shape[1]} columns")
    points, (ca, cb) = _on_union([(P, a, P_index), (Q, b, Q_index)])
    d = ca - cb
    keep = np.any(d != 0, axis=1)
    points, d = points[keep], d[keep]
    if not len(d):
        return 0.0
    return max(float(np.sum(d * kernel.mmv(points, points, d))), 0.0)


def _on_union(expansions):
    """Expansions ``(points, coef, indices or None)`` rewritten over one point set: ``(points, [coef on it])``.
    When every expansion has indices (into one training X) a point shared by several appears once."""
    if all(e[2] is not None for e in expansions):
        idx = [np.asarray(e[2]) for e in expansions]
        union = np.unique(np.concatenate(idx))
        points = np.empty((len(union), np.shape(expansions[0][0])[1]))
        blocks = []
        for (P, c, _), i in zip(expansions, idx, strict=True):
            pos = np.searchsorted(union, i)
            points[pos] = P
            block = np.zeros((len(union), c.shape[1]))
            np.add.at(block, pos, c)
            blocks.append(block)
        return points, blocks
    points = np.vstack([e[0] for e in expansions])
    starts = np.cumsum([0] + [len(e[0]) for e in expansions])
    blocks = []
    for (_, c, _), lo, hi in zip(expansions, starts[:-1], starts[1:], strict=True):
        block = np.zeros((len(points), c.shape[1]))
        block[lo:hi] = c
        blocks.append(block)
    return points, blocks


def _same_kernel(k1, k2):
    return k1.name == k2.name and k1.params() == k2.params()


def _check_pair(exact, approx):
    for name, est in (("exact", exact), ("approx", approx)):
        if not hasattr(est, "_rkhs_expansion"):
            raise TypeError(f"approximation_error: {name} is a {type(est).__name__}, which has no kernel "
                            "expansion; pass fitted KRR, NuSVM or LSSVM models")
    if getattr(exact, "approximation", "exact") != "exact":
        raise ValueError("approximation_error: the first model must be fitted with approximation='exact'")
    if type(exact) is not type(approx):
        raise ValueError(f"approximation_error: compare models of one class, got {type(exact).__name__} and "
                         f"{type(approx).__name__}")
    if not _same_kernel(exact.kernel_, approx.kernel_):
        raise ValueError(f"approximation_error: the models use different kernels ({exact.kernel_!r} vs "
                         f"{approx.kernel_!r}); fit both with the same kernel parameters")
    if hasattr(exact, "classes_") and not np.array_equal(exact.classes_, approx.classes_):
        raise ValueError("approximation_error: the models were fitted on different classes")


def approximation_errors(exact, approx, modes=("gsa", "lla"), scales=("nu", "decision")):
    """Every relative error of :func:`approximation_error` for a fitted NuSVM pair at once:
    ``{(mode, scale): ||w* - w|| / ||w*||}``.

    One block-wise kernel pass over the union of the support vectors and landmarks gives
    every per-problem inner product ``<w*, w*>``, ``<w*, w_mode>``, ``<w_mode, w_mode>`` at
    libsvm's scale; the nu scale multiplies them by the margins ``rho_``.  The distance then
    comes from ``||w*||^2 - 2 <w*, w> + ||w||^2``, which loses relative precision when the
    error is below about 1e-7 of ``||w*||`` (use :func:`approximation_error` there).
    """
    _check_pair(exact, approx)
    if not hasattr(exact, "rho_"):
        raise ValueError(f"approximation_errors is for NuSVM models, not {type(exact).__name__}; "
                         "use approximation_error")
    expansions = [exact._rkhs_expansion(scale="decision")]
    expansions += [approx._rkhs_expansion(m, scale="decision") for m in modes]
    points, blocks = _on_union([(P, _columns(c), i) for P, c, i in expansions])
    C = np.hstack(blocks)
    G = C.T @ exact.kernel_.mmv(points, points, C)
    t = blocks[0].shape[1]

    def inner(i, j):  # per-problem <w_i, w_j> of expansions i and j
        return np.diag(G[i * t:(i + 1) * t, j * t:(j + 1) * t])

    out = {}
    for scale in scales:
        f0 = exact.rho_ if scale == "nu" else np.ones(t)
        f1 = approx.rho_ if scale == "nu" else np.ones(t)
        norm_sq = np.sum(f0**2 * inner(0, 0))
        for k, mode in enumerate(modes, 1):
            sq = np.sum(f0**2 * inner(0, 0) - 2 * f0 * f1 * inner(0, k) + f1**2 * inner(k, k))
            out[(mode, scale)] = float(np.sqrt(max(sq, 0.0) / norm_sq))
    return out


def approximation_error(exact, approx, mode=None, relative=True, scale=None):
    """``||w* - w|| / ||w*||``: the distance in the RKHS between the exact machine's solution and
    an approximate machine's (GSA or LLA), relative to the exact one's norm.

    For several problems (one-vs-one problems of a :class:`~nystrom_bench.learners.NuSVM`,
    columns of a multi-output KRR, one-vs-rest columns of an LSSVM) the squared distances and
    squared norms are summed: the Frobenius norm of the stacked machines.

    Parameters
    ----------
    exact : fitted estimator with ``approximation="exact"``
    approx : fitted estimator of the same class, kernel and training data
    mode : {"gsa", "lla"} or None
        Which solution of a :class:`~nystrom_bench.learners.NuSVM` (both come from one
        training; None: its ``mode``).  A KRR's fitted ``mode`` decides (gsa, lla or ncr).
    relative : bool, default=True
        False: the absolute distance ``||w* - w||``.
    scale : {"nu", "decision"} or None
        NuSVM only.  ``"nu"`` (None's meaning there): compare the solutions of the nu-SVM
        problem itself, ``rho_ * dual_coef_`` (Schoelkopf et al.'s form, ``sum |alpha| = nu``).
        ``"decision"``: compare libsvm's output ``dual_coef_``, which is that solution divided
        by its margin rho -- the solution of a C-SVM with ``C = 1 / (rho l)``, and rho differs
        between the exact and the approximate machine, so this compares solutions of two
        different problems and mixes the margin's change into the error.

    Returns
    -------
    float
    """
    _check_pair(exact, approx)
    extra = {}
    if scale is not None:
        if not hasattr(exact, "rho_"):
            raise ValueError(f"approximation_error: scale= applies to NuSVM models, not {type(exact).__name__}")
        extra = {"scale": scale}
    P, a, ia = exact._rkhs_expansion(**extra)
    Q, b, ib = approx._rkhs_expansion(mode, **extra)
    kern = exact.kernel_
    sq = rkhs_sq_distance(kern, P, a, Q, b, ia, ib)
    if not relative:
        return float(np.sqrt(sq))
    norm_sq = _exact_norm_sq(exact, kern, P, _columns(a), extra)
    if norm_sq <= 0:
        raise ValueError("approximation_error: the exact solution is 0 (no support vectors / zero targets); "
                         "a relative error is undefined, use relative=False")
    return float(np.sqrt(sq / norm_sq))


def _exact_norm_sq(exact, kern, P, a, extra):
    """``||w*||^2 = sum_t a_t^T K(P, P) a_t`` of the exact machine, computed once while its expansion (points,
    coefficients, kernel and ``extra``) stays the same: a later call with equal arrays returns the value
    computed then, bit for bit what computing it again gives (the same kernel pass on the same inputs)."""
    key = repr((kern.name, kern.params(), sorted(extra.items())))
    try:
        hit = _EXACT_NORMS.get(exact)
    except TypeError:  # not weak-referenceable: no memo
        hit = None
    if hit is not None and hit[0] == key and hit[1].shape == P.shape and hit[2].shape == a.shape \
            and np.array_equal(hit[1], P) and np.array_equal(hit[2], a):
        return hit[3]
    value = float(np.sum(a * kern.mmv(P, P, a)))
    try:
        _EXACT_NORMS[exact] = (key, np.array(P, copy=True), np.array(a, copy=True), value)
    except TypeError:
        pass
    return value
