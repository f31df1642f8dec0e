"""Generalized Nystrom low-rank decomposition with side information (Lan, Zhang et al., AIJ 2017).

The Nystrom method extrapolates the dictionary kernel ``W = K(Z, Z)`` on m landmarks to all
samples, ``K ~ E W^+ E^T`` with ``E = K(X, Z)``.  Lan, Zhang et al. learn the (inverse)
dictionary kernel S from a few labels instead (their eq. 7)::

    min_S  lambda ||S - S0||_F^2 + ||E_l S E_l^T - K*_l||_F^2   s.t.  S >= 0 (PSD)

with ``S0 = beta W^+`` (eq. 5), ``beta = ||E_l^+ K*_l (E_l^T)^+||_F / ||W^+||_F`` (eq. 8) so that
both terms' solutions have one magnitude, ``E_l`` the rows of E of the labelled samples and
``K*_l`` the ideal kernel on them (1 for a pair of one class, else 0; eq. 6).  The learned
kernel ``E S E^T = G G^T`` has the factor ``G = E S^{1/2}``, which extends to new points as
``K(x, Z) S^{1/2}``.

Solver (Section 3.4-3.5):

- initial S: the stationary point without the PSD constraint, ``S + P S P = Q`` (eq. 12)
  with ``P = E_l^T E_l / sqrt(lambda)``, ``Q = S0 + E_l^T K* E_l / lambda``, solved in P's
  eigenbasis (eq. 13: ``S~_ij = Q~_ij / (1 + L_i L_j)``), then projected on the PSD cone;
- projected gradient ("gradient mapping") with the Armijo-Goldstein rule, accelerated as Beck &
  Teboulle's monotone FISTA (the paper mentions Nesterov's method as an option): with the gradient
  ``D = 2 lambda (S - S0) + 2 E_l^T (E_l S E_l^T - K*) E_l``, the trial point
  ``B_a = P_psd(S - D / a)`` (eq. 10) is accepted when
  ``J(B_a) <= J(S) + <D, B_a - S> + a/2 ||B_a - S||^2``, else a grows by ``armijo_factor``.
  The paper's eq. (9) prints ``S + eta D``: a step *up* the gradient; the descent step and its
  projection are ``B_a`` above (derived from eq. 10, which the paper itself solves that way).
  The objective cannot increase: an iterate is kept only where it lowers J.
- beta (``beta="iterative"``, the paper's Appendix A, "optimised iteratively with S"): eq. (7)
  minimised over S and beta together.  For a fixed S the best beta is the least-squares multiple of
  W^+, ``<S, W^+>_F / ||W^+||_F^2`` (>= 0, both being PSD), so the joint problem is eq. (7) in S alone
  with the prior term ``lambda ||S - <S, U> U||_F^2``, ``U = W^+ / ||W^+||_F``: only S's part
  orthogonal to W^+ is penalised, its scale along W^+ is free.  That is convex with the gradient
  ``2 lambda (S - <S, U> U) + 2 E_l^T (E_l S E_l^T - K*) E_l`` (the projection is self-adjoint), and
  the same solver runs on it from eq. (8)'s solution (or the closed-form start, where that is lower).  The paper does not say how it iterated;
  alternating beta and S, the obvious reading, reaches the same optimum only in the limit and
  crawls there (on a 160-point test problem 1,000 alternations still moved beta by a factor of 4).
- lambda: when not given, each value of ``lambda_grid`` is solved and the one maximising the
  product of normalised (centred) kernel alignments ``rho[S, S0] * rho[E_l S E_l^T, K*]``
  (eqs. 14-15) is kept: no validation labels are needed.

Must-link constraints (Section 3.3) restrict the second term to the labelled pairs the
0/1 mask ``T`` marks: ``||T o (E_l S E_l^T - K*)||_F^2``; pass ``must_link=T``.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import linalg, optimize
from sklearn.utils._param_validation import Interval, StrOptions

from .. import approx, kernels
from ._base import (
    _KERNEL_CONSTRAINTS,
    _SAMPLER_CONSTRAINTS,
    DEPRECATED,
    _LandmarkKernel,
    _new_input,
    _set_params,
)

__all__ = ["GeneralizedNystrom", "GeneralizedNystromMKL", "ideal_kernel", "centered_alignment", "project_psd", "solve_stationary"]

#: up to this many landmarks the solvers run in one BLAS thread (see ``_blas_for``)
SMALL_M = 400
#: the paper's lambda candidates (Section 6.2): 1e-5, 1e-4, ..., 1e5
LAMBDA_GRID = tuple(10.0**k for k in range(-5, 6))


def ideal_kernel(y):
    """``K*_ij = 1`` where ``y_i == y_j``, else 0 (Lan, Zhang et al., eq. 6)."""
    y = np.asarray(y)
    return (y[:, None] == y[None, :]).astype(np.float64)


def centered_alignment(A, B):
    """Normalised kernel alignment of centred matrices (Cortes et al.; eq. 14):
    ``<A_c, B_c>_F / (||A_c||_F ||B_c||_F)`` with ``A_c = H A H``, ``H = I - 11^T / n``; 0 if one
    of them is 0 after centring."""
    def centre(M):
        M = M - M.mean(axis=0, keepdims=True)
        return M - M.mean(axis=1, keepdims=True)

    Ac, Bc = centre(np.asarray(A, dtype=np.float64)), centre(np.asarray(B, dtype=np.float64))
    den = np.linalg.norm(Ac) * np.linalg.norm(Bc)
    return float(np.sum(Ac * Bc) / den) if den > 0 else 0.0


#: ``{(dtype char, m): (LAPACK syevd, lwork, liwork)}``: what ``scipy.linalg.eigh(driver="evd")`` looks up and
#: queries on every call (the workspace query is a LAPACK call of its own), once per size
_SYEVD = {}


def _eigh_evd(A):
    """``(w, U)`` of the symmetric ``A`` (overwritten) by LAPACK's ``?syevd`` on its lower triangle: what
    ``scipy.linalg.eigh(A, driver="evd", overwrite_a=True, check_finite=False)`` computes, bit for bit (the
    same routine and workspace sizes), without its per-call lookup, workspace query and checks.  The
    projected-gradient solver projects thousands of 77 x 77 to 231 x 231 matrices per fit (the gen_nystrom
    study): that overhead was 10-15% of each projection."""
    key = (A.dtype.char, A.shape[0])
    if key not in _SYEVD:
        drv, drv_lw = linalg.get_lapack_funcs(("syevd", "syevd_lwork"), (A,))
        lwork, liwork, info = drv_lw(A.shape[0], lower=1)
        if info != 0:  # pragma: no cover - LAPACK's workspace query does not fail for n >= 0
            raise linalg.LinAlgError(f"syevd workspace query failed (info={info})")
        _SYEVD[key] = (drv, int(lwork), int(liwork))
    drv, lwork, liwork = _SYEVD[key]
    w, U, info = drv(A, compute_v=1, lower=1, lwork=lwork, liwork=liwork, overwrite_a=1)
    if info != 0:
        raise linalg.LinAlgError(f"the eigendecomposition of a {A.shape[0]} x {A.shape[0]} matrix did not converge "
                                 f"(LAPACK syevd info={info}); check the input for NaN or inf")
    return w, U


def project_psd(S):
    """The nearest PSD matrix in Frobenius norm: negative eigenvalues set to 0 (eq. 11)."""
    w, U = _eigh_evd((S + S.T) / 2)
    pos = w > 0
    U = U[:, pos]
    return (U * w[pos]) @ U.T


def solve_stationary(A, Q_lambda, lam, eig=None):
    """The S with ``lambda S + A S A = Q_lambda`` for symmetric PSD A (the unconstrained stationary
    point of eq. 7 with ``A = E_l^T E_l`` and ``Q_lambda = E_l^T K* E_l + lambda S0``): eqs. 12-13 in
    A's eigenbasis, ``S~_ij = Q~_ij / (lambda + a_i a_j)``; ``eig``: A's ``(eigenvalues, vectors)`` if known."""
    a, U = linalg.eigh(A, check_finite=False) if eig is None else eig
    Qt = U.T @ Q_lambda @ U
    St = Qt / (lam + np.outer(a, a))
    return U @ St @ U.T


class _Problem:
    """Objective, gradient and solver of eq. (7) for one S0, E_l, K* (and must-link mask)."""

    def __init__(self, E_l, K_star, S0, mask=None, eig=None):
        """``eig``: the ``(eigenvalues, vectors)`` of ``E_l^T E_l`` when already known (they depend on E_l
        only: the multiple-kernel alternation solves many problems with one E_l)."""
        self.E_l, self.K_star, self.S0 = E_l, K_star, S0
        self.mask = mask
        # E_l^T E_l itself is needed only for its eigendecomposition (solve_stationary takes the eigenpairs):
        # the multiple-kernel alternation passes them in, and would otherwise form it again for every problem
        self.eig = linalg.eigh(E_l.T @ E_l, check_finite=False) if eig is None else eig
        self.top_eig = float(self.eig[0][-1])
        target = K_star if mask is None else mask * K_star
        self.EtKE = E_l.T @ target @ E_l
        self._last = None  # (S, its residual): the solver asks for the residual at its starting point twice

    def prior(self, S):
        """The prior S0 the objective measures S against (fixed here; :class:`_FreeScaleProblem`: S's own
        projection on W^+)."""
        return self.S0

    def residual(self, S):
        if self._last is not None and self._last[0] is S:
            return self._last[1]
        R = self.E_l @ S @ self.E_l.T - self.K_star
        R = R if self.mask is None else self.mask * R
        self._last = (S, R)
        return R

    def objective(self, S, lam):
        return float(lam * np.sum((S - self.prior(S)) ** 2) + np.sum(self.residual(S) ** 2))

    def gradient(self, S, lam):
        return self.objective_and_gradient(S, lam)[1]

    def objective_and_gradient(self, S, lam):
        """J(S) and its gradient from one residual."""
        R = self.residual(S)
        S0 = self.prior(S)
        J = float(lam * np.sum((S - S0) ** 2) + np.sum(R**2))
        return J, 2 * lam * (S - S0) + 2 * self.E_l.T @ R @ self.E_l

    def initial(self, lam):
        if self.mask is None:
            return project_psd(solve_stationary(None, self.EtKE + lam * self.S0, lam, eig=self.eig))
        return project_psd(self.S0)  # the masked problem has no closed form: start at the prior

    def solve(self, lam, max_iter, tol, armijo_factor=2.0, start=None):
        """``(S, objective values per iteration)``: projected gradient with the Armijo rule, accelerated
        (Beck & Teboulle's monotone FISTA), from the closed-form initialisation or from ``start`` (a PSD
        matrix) where that is lower.

        Each iteration takes the paper's gradient-mapping step ``B_a = P_psd(Y - D(Y) / a)`` at the
        extrapolated point Y, with a raised by ``armijo_factor`` until the Armijo condition holds
        (a starts at 1/16 of the gradient's Lipschitz constant ``2 lambda + 2 ||E_l^T E_l||^2`` and is
        halved before each iteration, so the step follows the local curvature), and keeps the better of
        ``B_a`` and the current S: the objective never increases.  Plain projected gradient (the paper's scheme) needed hundreds of iterations
        for small lambda; the acceleration reaches the same optimum in far fewer.
        """
        S = self.initial(lam)
        J = self.objective(S, lam)
        J_start = None if start is None else self.objective(start, lam)
        if J_start is not None and J_start < J:
            S, J = start, J_start
        path = [J]
        lipschitz = 2 * lam + 2 * self.top_eig**2
        a = lipschitz / 16
        Y, t = S, 1.0
        for _ in range(max_iter):
            JY, D = self.objective_and_gradient(Y, lam)
            a = max(a / armijo_factor, lipschitz * 1e-9)  # let the step grow again where the curvature allows
            while True:
                B = project_psd(Y - D / a)
                step = B - Y
                JB = self.objective(B, lam)
                if JB <= JY + np.sum(D * step) + a / 2 * np.sum(step**2) + 1e-12 * abs(JY) or a > 4 * lipschitz:
                    break
                a *= armijo_factor
            previous, J_prev = S, J
            if JB <= J:
                S, J = B, JB
            path.append(J)
            t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
            Y = S + (t / t_next) * (B - S) + ((t - 1) / t_next) * (S - previous)
            t = t_next
            if JB <= J_prev and J_prev - J <= tol * max(abs(J_prev), 1e-300):
                break
        return S, path


class _FreeScaleProblem(_Problem):
    """Eq. (7) minimised over S and the prior's scale beta together (``beta="iterative"``, module docstring): the
    prior of S is its own least-squares multiple of ``W^+`` (``S0`` gives W^+'s direction; its scale is not used
    but by the closed-form start, which the solver keeps only where it is lower)."""

    def __init__(self, base):
        self.__dict__.update(base.__dict__)  # E_l, K*, their products and eigenpairs: shared
        self._last = None
        self.U = self.S0 / np.linalg.norm(self.S0)

    def prior(self, S):
        return float(np.sum(S * self.U)) * self.U

    def beta(self, S, W_pinv):
        """The prior's scale at S: ``<S, W^+> / ||W^+||^2``."""
        return max(float(np.sum(S * W_pinv)) / float(np.sum(W_pinv * W_pinv)), 0.0)


#: parameter constraints of both versions
_SHARED_CONSTRAINTS = {
    **_SAMPLER_CONSTRAINTS,
    "lam": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "lambda_grid": ["array-like"],
    "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "rcond": [Interval(numbers.Real, 0, 1, closed="neither")],
}


class _GeneralizedNystromBase(_LandmarkKernel):
    """What the single- and multiple-kernel versions share: the checks of a fit, lambda grid, prior."""

    def _check_fit_params(self, X, labelled):
        super()._check_fit_params(X, labelled)
        if self.sampler == "gaussian_sketch" and self.landmarks is None or isinstance(self.landmarks, approx.Sketch):
            raise ValueError(f"{type(self).__name__} needs landmark points (a dictionary kernel on them); a Gaussian "
                             "sketch has none: choose a landmark sampler (e.g. kmeans, uniform)")

    def _lambdas(self):
        grid = [float(self.lam)] if self.lam is not None else [float(v) for v in self.lambda_grid]
        if not grid or min(grid) <= 0:
            raise ValueError(f"lambda_grid must hold positive values, got {list(self.lambda_grid)!r}")
        return grid

    @staticmethod
    def _prior(E_l, K_star, W, rcond=approx.RCOND):
        """``(beta, S0 = beta W^+, W^+)`` with beta of eq. (8), W^+ without W's eigenvalues below ``rcond`` times
        the largest."""
        T, _ = approx.lowrank_pinv_factor(W, rcond=rcond)
        W_pinv = T @ T.T
        # the same numerical rank for both pseudo-inverses: W^+ drops eigenvalues below rcond * max, so E_l^+
        # drops singular values below sqrt(rcond) * max (E_l^T E_l's eigenvalues are their squares).  With
        # scipy's default cut-off (~1e-14 * max) the noise directions of a fast-decaying Gaussian E_l dominate
        # ||E_l^+ K* E_l^+T||: measured beta = 10^5 ... 10^21 over the nine widths on segment.
        E_pinv = linalg.pinv(E_l, rtol=np.sqrt(rcond))
        beta = float(np.linalg.norm(E_pinv @ K_star @ E_pinv.T) / np.linalg.norm(W_pinv))
        return beta, beta * W_pinv, W_pinv

    @staticmethod
    def _blas_for(m):
        """A context that runs m x m work in one BLAS thread when m is small: OpenBLAS threads on
        matrices of a few hundred rows cost more than they save (measured: the multiple-kernel fit on
        segment, m = 77, took 11.7 s with 2 threads and 0.56 s with one)."""
        from contextlib import nullcontext

        from threadpoolctl import threadpool_limits

        return threadpool_limits(limits=1, user_api="blas") if m <= SMALL_M else nullcontext()

    @staticmethod
    def _root(S):
        """R with ``S = R R^T`` (S PSD)."""
        w, U = linalg.eigh(S)
        return U * np.sqrt(np.maximum(w, 0.0))


class GeneralizedNystrom(_GeneralizedNystromBase):
    """Generalized Nystrom low-rank kernel with side information (Lan, Zhang et al., AIJ 2017).

    A semi-supervised transformer: ``fit(X, y)`` with ``y = -1`` for unlabelled samples
    (scikit-learn's semi-supervised convention) learns the inverse dictionary kernel S on the
    landmarks; ``transform(X)`` returns the factor ``G = K(X, Z) S^{1/2}`` of the learned
    kernel ``K~ = G G^T``, for the fitted points and for new ones alike, so a linear model on
    G is a kernel machine with the learned kernel.  See the module docstring for the problem
    and its solver.

    Parameters
    ----------
    kernel, gamma, degree, coef0, sigma : as in :class:`~nystrom_bench.learners.KRR`
    n_components : int or float, default=0.1
        Number of landmarks m, or a fraction in (0, 1] of n_samples (the paper: 10%).
    sampler : str, default="kmeans"
        Any name of :func:`nystrom_bench.sampling.available` (the paper: k-means centres).
    landmarks : array-like, default=None
        Explicit landmark indices into X or ``(m, d)`` points; overrides ``sampler``.
    lam : float or None, default=None
        The trade-off lambda of eq. (7); None: chosen on ``lambda_grid`` by eq. (15).
    lambda_grid : sequence of float, default=1e-5, 1e-4, ..., 1e5
    must_link : array-like of shape (n_labelled, n_labelled) or None
        The 0/1 mask T of Section 3.3 over the labelled samples (in their order in X): only
        the marked pairs count in the second term.  None: every labelled pair.
    max_iter : int, default=20
        Projected-gradient iterations per lambda.  The paper reports that "only a few iterations are
        needed" after the closed-form initialisation; the objective still decreases after 20 (slowly,
        for small lambda, where the problem is ill-conditioned: measured on segment, 400 iterations
        lower it by another factor of 8 at lambda = 1e-5), so raise it where the exact optimum matters.
    tol : float, default=1e-6
        Stop when an iteration lowers the objective by less than ``tol`` times its value.
    rcond : float, default=1e-10
        W^+ of the prior drops W's eigenvalues below ``rcond`` times the largest (E_l^+ of eq. (8) its
        singular values below ``sqrt(rcond)`` times the largest).  It matters: over five repeats of the
        gen_nystrom block, 1e-4 instead of 1e-10 gave 32.5% instead of 40.8% error on german and 21.0%
        instead of 14.3% on segment -- a better-conditioned prior helps where the data fit is noisy.
    beta : {"heuristic", "iterative"}, default="heuristic"
        The scale of the prior ``S0 = beta W^+``: eq. (8) (the paper's choice), or optimised with S for
        each lambda (its Appendix A, "a little more accurate but more expensive"): eq. (7) minimised over
        S and beta together, from eq. (8)'s solution or the closed-form start, whichever is lower (module
        docstring), ``max_iter`` more iterations.
    random_state : int, Generator or None
        The sampler's randomness.
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

    Attributes
    ----------
    landmarks_ : ndarray of shape (m, n_features)
    component_indices_ : ndarray of shape (m,) or None
    dictionary_ : ndarray of shape (m, m)
        The learned S (PSD).
    prior_ : ndarray of shape (m, m)
        ``S0 = beta W^+``.
    beta_ : float
        The prior's scale (``beta="iterative"``: S's least-squares multiple of W^+ at ``lam_``).
    lam_ : float
        The lambda used.
    alignment_ : dict
        ``{lambda: criterion (15)}`` over the grid (one entry when ``lam`` is given).
    objective_path_ : list of float
        The objective at the initial S and after every iteration, for ``lam_`` (``beta="iterative"``: of the
        joint problem, from eq. (8)'s solution).
    dictionary_path_ : dict
        ``{lambda: S(lambda)}`` over the grid (for the alignment-vs-error curve of the paper's Fig. 1).
    n_iter_ : int
    root_ : ndarray of shape (m, m)
        R with ``S = R R^T``: ``transform(X) = K(X, landmarks_) R``.
    n_components_ : int
        The number of landmarks m (``n_landmarks_``: the same, its name before issue 25).
    kernel_ : Kernel
    fit_time_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GeneralizedNystrom
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))])
    >>> y = np.repeat([0, 1], 100); y_partial = np.full(200, -1); y_partial[::20] = y[::20]
    >>> gn = GeneralizedNystrom(gamma=0.5, n_components=20, random_state=0).fit(X, y_partial)
    >>> G = gn.transform(X); G.shape[0]
    200
    """

    _parameter_constraints = {**_KERNEL_CONSTRAINTS, **_SHARED_CONSTRAINTS, "must_link": ["array-like", None],
                              "beta": [StrOptions({"heuristic", "iterative"})]}

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, n_components=0.1,
                 sampler="kmeans", landmarks=None, lam=None, lambda_grid=LAMBDA_GRID, must_link=None, max_iter=20,
                 tol=1e-6, rcond=1e-10, beta="heuristic", random_state=None, n_landmarks=DEPRECATED):
        _set_params(self, locals())

    def _mask(self):
        """The must-link mask as float64, or None."""
        return None if self.must_link is None else np.asarray(self.must_link, dtype=np.float64)

    def _check_fit_params(self, X, labelled):
        super()._check_fit_params(X, labelled)
        mask = self._mask()
        if mask is not None and mask.shape != (len(labelled), len(labelled)):
            raise ValueError(f"must_link must have shape (n_labelled, n_labelled) = ({len(labelled)}, "
                             f"{len(labelled)}), got {mask.shape}")

    def _fit(self, X, y, labelled, m):
        """Learn S on m landmarks from X (all samples) and y (class labels, -1 for unlabelled ones)."""
        self.n_components_ = self.n_landmarks_ = m
        op = self._landmark_operator(X, None, self.kernel_, c=m)
        self.landmarks_, self.component_indices_ = op.Z, op.landmark_indices
        E_l = op.C[labelled]
        K_star = ideal_kernel(y[labelled])
        beta, S0, W_pinv = self._prior(E_l, K_star, op.W, self.rcond)
        problem = _Problem(E_l, K_star, S0, self._mask())
        best = None
        self.alignment_, self.dictionary_path_ = {}, {}
        for lam in self._lambdas():
            with self._blas_for(len(S0)):
                S, path = problem.solve(lam, self.max_iter, self.tol)
                fit = (S, path, beta, S0) if self.beta == "heuristic" else self._with_beta(problem, lam, S, path,
                                                                                          beta, S0, W_pinv)
            S = fit[0]
            score = centered_alignment(S, S0) * centered_alignment(E_l @ S @ E_l.T, K_star)
            self.alignment_[lam] = score
            self.dictionary_path_[lam] = S
            if best is None or score > best[0]:
                best = (score, lam, fit)
        _, self.lam_, (self.dictionary_, self.objective_path_, self.beta_, self.prior_) = best
        self.n_iter_ = len(self.objective_path_) - 1
        self.root_ = self._root(self.dictionary_)

    def _with_beta(self, problem, lam, S, path, beta, S0, W_pinv):
        """``beta="iterative"``: ``(S, objective path, beta, S0 = beta W^+)`` of eq. (7) minimised over S and beta
        together (:class:`_FreeScaleProblem`), started from eq. (8)'s solution ``S``; eq. (8)'s fit as it is
        (``S``, ``path``) where its prior is degenerate (beta 0 or not finite)."""
        if not (beta > 0 and np.isfinite(S0).all()):
            return S, path, beta, S0
        free = _FreeScaleProblem(problem)
        S, path = free.solve(lam, self.max_iter, self.tol, start=S)
        beta = free.beta(S, W_pinv)
        return S, path, beta, beta * W_pinv

    def transform(self, X, lam=None):
        """The factor ``G = K(X, Z) S^{1/2}`` (n_samples x m): ``G G^T`` is the learned kernel.

        ``lam``: the factor of ``S(lam)`` of ``dictionary_path_`` instead of the chosen one."""
        if lam is None:
            return super().transform(X)
        X = _new_input(self, X, "root_", sparse=False)
        return self.kernel_(X, self.landmarks_) @ self._root(self.dictionary_path_[lam])


#: the paper's M = 9 widths b = 2^-4 b0, ..., 2^4 b0 of exp(-||x - y||^2 / b), b0 the mean squared distance
WIDTH_SCALES = tuple(2.0**k for k in range(-4, 5))


class GeneralizedNystromMKL(_GeneralizedNystromBase):
    """Generalized Nystrom with multiple Gaussian kernels (Lan, Zhang et al., AIJ 2017, Section 4).

    M Gaussian kernels ``exp(-||x - y||^2 / b_j)``, ``b_j = s_j b0`` (``width_scales`` s_j, b0 the mean
    pairwise squared distance) share one landmark set; each has its own ``E_j = K_j(X, Z)`` and prior
    ``S0_j = beta_j W_j^+``.  Eq. (17) is solved for ``T_j = alpha_j S_j`` and the weights
    ``alpha_j >= 0`` by alternating optimisation (Section 4.1):

    - ``T_j`` for fixed alpha, cyclically: problem (7) with prior ``alpha_j S0_j`` and target
      ``K* - sum_{k != j} E_l^(k) T_k E_l^(k)T`` (warm-started at the current ``T_j``);
    - ``alpha_j = max(<S0_j, T_j>_F / ||S0_j||_F^2, 0)`` (eq. 19) for fixed T.

    Each step lowers ``J = lambda sum_j ||T_j - alpha_j S0_j||^2 + ||sum_j E_l^(j) T_j E_l^(j)T - K*||^2``
    (recorded in ``objective_path_``).  The criterion's product runs over the kernels that contribute
    to the mixture on the labelled samples (``||E_l T_j E_l^T|| > 1e-6 ||K~_l||``): a kernel with a
    negligible weight has an arbitrary, tiny alignment with its prior that would otherwise decide the
    product (measured on german: every lambda scored ~1e-12 and the choice was noise); a lambda whose
    mixture vanishes on the labelled samples scores -inf.  The paper gives no starting point: we start from
    its lambda -> inf limit, ``T_j = alpha_j S0_j`` with the alphas >= 0 of the least-squares fit of K*
    by the prior parts ``E_l^(j) S0_j E_l^(j)T`` (an NNLS over M weights), so a kernel that cannot fit
    the labels starts (and mostly stays) at ``alpha_j = 0``.  From ``alpha = 0, T = 0`` (our first
    version) the alternation barely moved for large lambda and the criterion chose a lambda whose
    mixture was still ~0 (german, 5 repeats: 51.6% error; 35.8% over 3 repeats from this start and with
    the beta cut-off of ``_prior``).  lambda: the product over the kernels with ``alpha_j > 0`` of
    ``rho[T_j, alpha_j S0_j]`` times ``rho[K~_l, K*]`` (Section 6.2; a kernel with ``alpha_j = 0``
    contributes nothing to the mixture, and its alignment with the zero matrix is undefined, so
    it is left out of the product).  The factor of ``K~ = sum_j E_j T_j E_j^T`` is
    ``[E_1 R_1, ..., E_M R_M]`` with ``T_j = R_j R_j^T`` (eqs. 20-22).

    Parameters
    ----------
    width_scales : sequence of float, default=2^-4, ..., 2^4
    n_components : int or float, default=1/30
        Landmarks m~ shared by the kernels, or a fraction of n_samples (the paper:
        ``m~ = m tau / M`` with m = 10% of n, tau = 3 and M = 9).
    sampler, landmarks, lam, lambda_grid, max_iter, tol, rcond, random_state, n_landmarks : as in :class:`GeneralizedNystrom`
        (``max_iter`` and ``tol`` per T_j problem).
    max_outer : int, default=5
        Alternations between the T_j and the weights (each T_j problem gets ``max_iter``, default 10,
        warm-started iterations).

    Attributes
    ----------
    gammas_ : ndarray of shape (M,)
        ``1 / b_j``.
    weights_ : ndarray of shape (M,)
        The alphas.
    dictionaries_ : list of M ndarrays (m, m)
        The ``T_j = alpha_j S_j``.
    priors_ : list of M ndarrays (m, m)
        The ``S0_j``.
    betas_ : ndarray of shape (M,)
    lam_, alignment_, objective_path_, n_iter_ (alternations), landmarks_, n_components_, fit_time_
        As in :class:`GeneralizedNystrom`.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import GeneralizedNystromMKL
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))])
    >>> y = np.full(200, -1); y[::20] = np.repeat([0, 1], 100)[::20]
    >>> mk = GeneralizedNystromMKL(n_components=10, lambda_grid=(0.1, 10.0), random_state=0).fit(X, y)
    >>> mk.transform(X).shape[0], len(mk.weights_)
    (200, 9)
    """

    _parameter_constraints = {**_SHARED_CONSTRAINTS, "width_scales": ["array-like"],
                              "max_outer": [Interval(numbers.Integral, 1, None, closed="left")]}

    def __init__(self, width_scales=WIDTH_SCALES, n_components=0.1 / 3, sampler="kmeans", landmarks=None, lam=None,
                 lambda_grid=LAMBDA_GRID, max_outer=5, max_iter=10, tol=1e-6, rcond=1e-10, random_state=None,
                 n_landmarks=DEPRECATED):
        _set_params(self, locals())

    @staticmethod
    def _mixture_objective(lam, T, alpha, S0, parts, K_star):
        """J of eq. (17) from ``parts = [E_l^(j) T_j E_l^(j)T]``."""
        return float(lam * sum(np.sum((Tj - a * S) ** 2) for Tj, a, S in zip(T, alpha, S0, strict=True))
                     + np.sum((sum(parts) - K_star) ** 2))

    @staticmethod
    def _start(S0, E_l, K_star):
        """The alternation's start, the same for every lambda: ``(alpha, prior parts E_l^(j) S0_j E_l^(j)T)``."""
        # the paper gives no starting point.  We start from the lambda -> inf solution: T_j = alpha_j S0_j with
        # the alphas >= 0 that fit K* best (an NNLS over the M prior parts E_l S0_j E_l^T).  Measured: from
        # alpha = 0, T = 0 the alternation barely moves for large lambda (each round scales T by ~1 + 1/lambda)
        # and the criterion then chose a lambda whose mixture was still ~0.
        prior_parts = [E @ S @ E.T for E, S in zip(E_l, S0, strict=True)]
        alpha, _ = optimize.nnls(np.column_stack([P.ravel() for P in prior_parts]), K_star.ravel())
        return alpha, prior_parts

    def _solve(self, lam, S0, E_l, K_star, eigs, start=None):
        """Alternating optimisation for one lambda: ``(T list, alpha, objective path, E_l T_j E_l^T list)``;
        ``eigs``: the eigendecompositions of every ``E_l^(j)T E_l^(j)``; ``start``: :meth:`_start`'s result
        when already computed (it does not depend on lambda)."""
        M = len(S0)
        alpha, prior_parts = self._start(S0, E_l, K_star) if start is None else start
        T = [a * S for a, S in zip(alpha, S0, strict=True)]
        parts = [a * P for a, P in zip(alpha, prior_parts, strict=True)]
        path = [self._mixture_objective(lam, T, alpha, S0, parts, K_star)]
        for _ in range(self.max_outer):
            for j in range(M):
                rest = K_star - (sum(parts) - parts[j])
                T[j], _ = _Problem(E_l[j], rest, alpha[j] * S0[j], eig=eigs[j]).solve(lam, self.max_iter, self.tol,
                                                                                     start=T[j])
                parts[j] = E_l[j] @ T[j] @ E_l[j].T
            alpha = np.array([max(np.sum(S * Tj) / np.sum(S * S), 0.0) for S, Tj in zip(S0, T, strict=True)])
            path.append(self._mixture_objective(lam, T, alpha, S0, parts, K_star))
            if path[-2] - path[-1] <= self.tol * max(abs(path[-2]), 1e-300):
                break
        return T, alpha, path, parts

    def _scales(self):
        """The width scales s_j as a flat float64 array."""
        return np.asarray(self.width_scales, dtype=np.float64).ravel()

    def _check_fit_params(self, X, labelled):
        super()._check_fit_params(X, labelled)
        scales = self._scales()
        if not len(scales) or scales.min() <= 0:
            raise ValueError(f"width_scales must hold positive numbers, got {self.width_scales!r}")

    def _fit(self, X, y, labelled, m):
        """Learn the T_j and weights on m landmarks from X and y (class labels, -1 for unlabelled samples)."""
        self.n_components_ = self.n_landmarks_ = m
        b0 = kernels.mean_sq_dist(X)
        self.gammas_ = 1.0 / (self._scales() * b0)
        kerns = [kernels.make("gaussian", gamma=float(g)) for g in self.gammas_]
        Z = np.asarray(self._choose_landmarks(X, None, kerns[len(kerns) // 2], c=m))
        Z = X[Z] if Z.ndim == 1 else Z
        self.landmarks_ = Z
        K_star = ideal_kernel(y[labelled])
        E_l = [k(X[labelled], Z) for k in kerns]
        priors = [self._prior(E, K_star, k(Z), self.rcond) for E, k in zip(E_l, kerns, strict=True)]
        self.betas_ = np.array([b for b, *_ in priors])
        S0 = [S for _, S, _ in priors]
        self.priors_ = S0
        eigs = [linalg.eigh(E.T @ E, check_finite=False) for E in E_l]  # once per kernel, for every problem
        with self._blas_for(len(Z)):
            start = self._start(S0, E_l, K_star)  # and the start, once for every lambda
        best = None
        self.alignment_ = {}
        for lam in self._lambdas():
            with self._blas_for(len(Z)):
                T, alpha, path, parts = self._solve(lam, S0, E_l, K_star, eigs, start)
            K_l = sum(parts)
            size = np.linalg.norm(K_l)
            if size <= 1e-8 * np.linalg.norm(K_star):
                score = -np.inf  # the mixture vanishes on the labelled samples: its alignment is undefined
            else:
                score = centered_alignment(K_l, K_star)
                for part, Tj, a, S in zip(parts, T, alpha, S0, strict=True):
                    if a > 0 and np.linalg.norm(part) > 1e-6 * size:  # kernels that contribute to the mixture
                        score *= centered_alignment(Tj, a * S)
            self.alignment_[lam] = score
            if best is None or score > best[0]:
                best = (score, lam, T, alpha, path)
        _, self.lam_, self.dictionaries_, self.weights_, self.objective_path_ = best
        self.n_iter_ = len(self.objective_path_) - 1
        self.roots_ = [self._root(Tj) for Tj in self.dictionaries_]
        self._kernels = kerns

    def transform(self, X):
        """The factor ``[K_1(X, Z) R_1, ..., K_M(X, Z) R_M]`` of the learned mixture kernel."""
        X = _new_input(self, X, "roots_", sparse=False)
        return np.hstack([k(X, self.landmarks_) @ R for k, R in zip(self._kernels, self.roots_, strict=True)])
