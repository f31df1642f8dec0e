"""Kernel ridge regression, exact or Nystrom.

``KRR`` -- kernel ridge regression, exact or Nystrom in three integrations:

``mode="gsa"``
    train with K~ (Woodbury solve of ``(K~ + alpha I) a = y``), predict with the
    exact kernel ``K(X_new, X) a``.
``mode="lla"``
    ridge regression on the Nystrom features ``F = V``:
    ``(F^T F + alpha I) w = F^T y``, predict ``phi(X_new) w``.
``mode="ncr"``
    Rudi et al.'s Nystrom computational regularisation:
    ``beta = (K_nm^T K_nm + alpha K_mm)^+ K_nm^T y``, predict ``K(X_new, Z) beta``
    (with a sketch S: ``K_nm = K S``, ``K_mm = S^T K S``, predict ``K(X_new, X) S beta``).

For KRR, NCR and LLA give the same predictor whenever ``K_mm`` has full rank
(substitute ``F = K_nm U L^{-1/2}``); the tests check that identity.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import approx
from ._base import (
    _KERNEL_CONSTRAINTS,
    _LANDMARK_CONSTRAINTS,
    DEFAULT_ALPHA,
    DEFAULT_N_COMPONENTS,
    DEPRECATED,
    _as_columns,
    _bordered,
    _estimator_kernel,
    _fit_input,
    _landmark_count,
    _landmark_param,
    _Landmarks,
    _new_input,
    _psd_solve,
    _set_params,
    _SparseInput,
    _warn_clipped,
    _weighted_solver,
)

#: the ``dtype`` an estimator with a float32 path takes: the strings, the NumPy types or dtypes
_DTYPE_CONSTRAINT = [StrOptions({"float64", "float32"}), Options(type, {np.float32, np.float64}),
                     Options(np.dtype, {np.dtype(np.float32), np.dtype(np.float64)})]


def _dtype_name(dtype):
    """``"float32"`` or ``"float64"`` of any accepted ``dtype`` form (string, NumPy type or dtype)."""
    return np.dtype(dtype).name

#: ``solver="auto"`` picks conjugate gradient above this ``n c^2`` (the direct solve's flops) ...
AUTO_CG_WORK = 1e11
#: ... and only when C fits the solver's memory budget (then each iteration is two O(n c) products) or
#: c >= this times the number of features (when streamed, each iteration re-evaluates the kernel
#: blocks, O(n c d), while the direct solve pays O(n c^2) once).  Measured (n = 10^5, d = 90, c = 3,000,
#: AVX-512, 2 threads, C streamed under a 2 GiB budget): direct 19.6 s, CG 168 s (49 iterations to 1e-8).
AUTO_CG_PER_FEATURE = 40
#: ... and holds C between iterations only when it takes at most this many bytes (and fits the solver's
#: budget); above it, ``"auto"`` never materialises C: CG streams its blocks (c >= AUTO_CG_PER_FEATURE d), or
#: the direct solve runs streamed -- ``C^T C`` from float32 kernel blocks, its Cholesky factor refined by CG
#: on the float64 blocks to ``cg_tol`` (float64 accuracy, O(c^2) memory).  Measured (``make bench``,
#: n = 10^5, d = 90, c = 3,000, 2 cores): C held (the rule before) 0.51x scikit-learn's memory (Nystroem +
#: Ridge); streamed direct 0.064x at 5.2x its speed (7.4 s vs 38.3 s, 2 CG passes), test RMSE ratio 1.00000001.
AUTO_HOLD_BYTES = 256 * 2**20
#: ``fit(..., cg_eval_set=...)``: CG stops when the held-out RMSE has improved by less than this (relative) ...
CG_EVAL_REL_TOL = 1e-4
#: ... for this many iterations in a row.  Measured (n = 2 10^5, m = 4,000, d = 90, float32, alpha = 10^-6 n, the
#: data of benchmarks/large.py, test RMSE after each iteration through nystrom_cg's callback): it improved by
#: 2.7e-4, 1.0e-4, 1.8e-4 in CG iterations 10 to 12 of 15 (to a relative residual of 1e-3), and the 11th
#: iterate's was 2e-4 (relative) above the 15th's; the bench's held-out stop took 13 iterations (+5e-5)
CG_EVAL_PATIENCE = 1


class _KRRParams(_SparseInput, BaseEstimator):
    """The parameters :class:`KRR` and :class:`KRRClassifier` share, defined once (documented on KRR)."""

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],  # > 0, as LSSVM's and GNKR's
        "fit_intercept": ["boolean"],
        **_LANDMARK_CONSTRAINTS,
        "mode": [StrOptions({"gsa", "lla", "ncr"})],
        "solver": [StrOptions({"auto", "direct", "cg"})],
        "cg_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "cg_max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "dtype": _DTYPE_CONSTRAINT,
    }

    def __init__(self, kernel="gaussian", gamma=None, degree=None, coef0=None, sigma=None, alpha=DEFAULT_ALPHA,
                 fit_intercept=True, approximation="nystrom", n_components=DEFAULT_N_COMPONENTS, sampler="uniform",
                 mode="lla", solver="auto", cg_tol=1e-6, cg_max_iter=100, dtype="float64", landmarks=None, rank=None,
                 random_state=None, n_landmarks=DEPRECATED):
        _set_params(self, locals())


class KRR(_Landmarks, RegressorMixin, _KRRParams):
    """Kernel ridge regression, exact or with a Nystrom approximation.

    Parameters
    ----------
    kernel : {"gaussian", "rbf", "laplacian", "polynomial", "linear", "epanechnikov"}, default="gaussian"
    gamma : float, "median", "mean" or None, default=None
        Width of the gaussian/rbf/laplacian kernel, scale of the polynomial one;
        ``"median"``/``"mean"``: ``1 / median (mean) pairwise squared distance`` of
        the training X.  None (with ``sigma`` None too): the median heuristic for the
        gaussian/rbf/laplacian kernels (and the epanechnikov kernel's ``sigma``), 1.0
        for the polynomial kernel.  The median heuristic is the default because, with the
        default alpha, it was within 4.1% (R^2 or accuracy) of the tuned (width, alpha) on
        every offline set measured, where scikit-learn's ``1 / (n_features var(X))`` lost up
        to 7.9% (diabetes R^2 0.443 vs 0.461; friedman1 0.855 vs 0.876) and a fixed 1.0 was
        at chance on standardised data (R^2 0.02 on friedman1, digits accuracy 0.11); the
        table is in the docs' "Choosing parameters" (docs/guide/choosing_parameters.md).
    degree : int or None, default=None
        Degree of the polynomial kernel (None: 3).
    coef0 : float or None, default=None
        Offset of the polynomial kernel (None: 1.0).
    sigma : float, "median", "mean" or None, default=None
        Width of the gaussian (``gamma = 1 / (2 sigma^2)``; not together with
        ``gamma``) or epanechnikov kernel (None: see ``gamma``); ``"median"``/``"mean"``:
        ``sqrt(median (mean) pairwise squared distance)`` of the training X.

        The kernel is ``kernels.from_spec({"kernel": kernel, **the non-None ones of
        gamma, sigma, degree, coef0})``: a parameter the chosen kernel does not take
        is an error at fit, never silently ignored.
    alpha : float > 0, default=1.0
        Ridge parameter, as scikit-learn's ``KernelRidge``: the exact fit solves
        ``(K + alpha I) a = y`` (without intercept).  ``alpha=0`` is refused (InvalidParameterError, a
        ValueError), as by ``LSSVM`` and ``GNKR``: without a ridge the fit interpolates the noise (measured
        on diabetes: test R^2 -0.38 with 200 Nystrom landmarks, -3.31 exact); for a nearly unregularised
        fit pass a small positive alpha.  The default 1.0 (scikit-learn's too) was
        within 4.2% (R^2 or accuracy) of the tuned (width, alpha) on every offline set measured
        with the median width and 200 landmarks; 0.1 was closer on friedman1 and digits (1%) but
        23% below tuned on the noisy diabetes (R^2 0.369 vs 0.481), and 1e-3 gave R^2 -0.09
        there (the docs' "Choosing parameters" has the table).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept ``intercept_``.  False is scikit-learn's ``KernelRidge`` (and the
        papers' KRR, which the studies run): then centre y yourself, or a Gaussian model shrinks towards
        0 away from the data (friedman1, unscaled, 200 uniform landmarks: test MSE 8.7% above exact KRR
        without intercept, 2.3% with).  Exact and GSA
        solve the bordered system ``[[K + alpha I, 1], [1^T, 0]] [a; b] = [y; 0]``; LLA and NCR are
        ridge regressions on centred features (the Nystrom features, ``k(x, Z)``).
    approximation : {"exact", "nystrom"}
        ``"exact"`` ignores every landmark parameter below.
    n_components : int or float, default=200
        Number of landmarks m, or a fraction in (0, 1] of n_samples; more than n_samples is set to
        n_samples with a warning (as scikit-learn's ``Nystroem``).  The same name (scikit-learn's) and
        default in every estimator of :mod:`nystrom_bench.learners` but ``NystromFeatures`` (100, as
        ``Nystroem``).
    sampler : str, default="uniform"
        Any name of :func:`nystrom_bench.sampling.available`.
    mode : {"lla", "gsa", "ncr"}, default="lla"
        How the approximation enters (see the module docstring).  LLA is the default: GSA predicts with
        the exact kernel on coefficients fitted to K~, whose norm explodes for small alpha (measured on
        friedman1 at gamma = 1, alpha = 1e-3: test R^2 -31,100 with GSA, 0.904 with LLA, 0.905 exact).
    solver : {"auto", "direct", "cg"}, default="auto"
        How LLA and NCR (one predictor) are solved: ``"direct"`` forms ``C^T C`` (O(n c^2));
        ``"cg"`` runs FALKON's preconditioned conjugate gradient (:func:`nystrom_bench.solvers.nystrom_cg`,
        O(n c) per iteration, C streamed in blocks).  ``"auto"``: below ``n c^2 = AUTO_CG_WORK`` (1e11) the
        direct solve (moments streamed, C never held); above it, memory-aware -- CG with C held where C
        takes at most ``AUTO_HOLD_BYTES`` (256 MiB), CG streaming C where c is at least 40 times the
        number of features (below that, streamed kernel passes cost more than the direct solve's
        ``C^T C``), else the direct solve streamed with a ``C^T C`` from float32 kernel blocks, refined by
        CG on the float64 blocks to ``cg_tol`` (``n_iter_`` is set): at n = 10^5, c = 3,000 it needs O(c^2)
        memory instead of the 2.4 GB of C (measured: 5.2x scikit-learn's speed at 0.064x its memory).  Weighted fits, rank truncation and
        sketches are solved directly (``solver="cg"`` with ``sample_weight`` is an error).
    cg_tol : float, default=1e-6
        Relative residual at which CG stops (measured at n = 3e4, c = 1,500: 35 iterations and the
        direct solve's test RMSE to 1e-6 relative; 1e-4 takes 16).
    cg_max_iter : int, default=100
    dtype : {"float64", "float32"}, np.float64 or np.float32, default="float64"
        Precision of the kernel blocks on the Nystrom paths: ``"float32"`` evaluates C = K(X, Z) in
        float32 -- GEMM and exp at twice the float64 speed, half the memory of a held C -- and the direct
        solve's ``C^T C`` as a float32 SYRK (refined by CG); the other products with C, their sums and
        the c x c systems are float64.  Exact KRR runs in float64 only.
    landmarks : array-like, default=None
        Explicit landmark indices into X, ``(c, d)`` points, or an ``(n, c)``
        :class:`~nystrom_bench.approx.Sketch`; overrides ``sampler``.
    rank : int, default=None
        Rank-k truncation of the Nystrom approximation (``None``: all of W's rank).
    random_state : int, Generator or None
    n_landmarks : int or float
        Deprecated (FutureWarning; removed in the next release): use ``n_components``.

    Attributes
    ----------
    expansion_ : (points, coef, indices)
        LLA and NCR: the predictor ``K(x, points) @ coef`` -- the landmarks (with a sketch, the training
        X), so a fitted model keeps O(c) rows, not the training set.  Exact and GSA keep ``X_fit_`` and
        ``dual_coef_`` instead (GSA predicts with the exact kernel on every training point).
    rank_ : int
        Rank of the Nystrom approximation (Nystrom only).
    solver_ : str
        "direct" or "cg": what the fit ran.  With cg -- and with a float32 direct LLA/NCR fit or "auto"'s streamed direct one, whose
        float32 ``C^T C`` factor is refined by CG on the kernel blocks -- ``n_iter_`` and
        ``cg_residuals_`` too, and ``coef_`` holds beta (the landmark coefficients) for LLA as for NCR.
    cg_eval_history_ : list of float
        After ``fit(..., cg_eval_set=...)`` only: the held-out RMSE after each CG iteration.
    landmarks_ : ndarray of shape (c, d) or None
        The landmark points (Nystrom from landmarks; None for a sketch).
    component_indices_ : ndarray of shape (c,) or None
        Indices of the landmarks in X when they are rows of X.
    kernel_ : Kernel
        The kernel used (widths resolved).
    dual_coef_ / coef_ : fitted coefficients.
    intercept_ : float or ndarray of shape (n_targets,)
        0 without ``fit_intercept``.

    ``fit(X, y, sample_weight=None)`` accepts per-sample weights of the squared loss.
    fit_time_ : float
        Seconds spent in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import KRR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(300, 1)); y = np.sin(X[:, 0])
    >>> model = KRR(gamma=0.5, alpha=1e-3, n_components=30, random_state=0).fit(X, y)
    >>> float(np.abs(model.predict(X) - y).max()) < 0.05
    True
    """

    def fit(self, X, y, sample_weight=None, cg_eval_set=None):
        """Fit on X of shape (n, d) and targets y of shape (n,) or (n, t).

        ``sample_weight`` (n,): weighted squared loss ``sum_i s_i (f(x_i) - y_i)^2`` (scikit-learn's
        ``KernelRidge`` convention for the exact fit).  Landmarks are chosen without the weights.

        ``cg_eval_set`` ``(X_val, y_val)``, held-out points (not in X): with ``solver="cg"``, CG also stops once
        their RMSE has improved by less than ``CG_EVAL_REL_TOL`` (relative) in ``CG_EVAL_PATIENCE`` iterations,
        and the iterate of the lowest held-out RMSE is kept (:class:`nystrom_bench.solvers.HeldOutStop`;
        ``cg_eval_history_`` holds the RMSEs).  Each check streams ``K(X_val, Z) beta``."""
        X, y, sw = _fit_input(self, X, y, sample_weight, y_numeric=True, multi_output=True)
        if sw is not None and self.solver == "cg" and self.approximation == "nystrom" and self.mode != "gsa":
            raise ValueError("KRR: solver='cg' does not take sample_weight (weighted fits are solved directly); use "
                             "solver='direct' or 'auto', or repeat the rows instead of weighting them")
        t0 = time.perf_counter()
        kern = _estimator_kernel(self, X, "KRR", require_psd=True, sample_weight=sw)
        if _dtype_name(self.dtype) != "float64":
            if self.approximation == "exact":
                raise ValueError(f"KRR(approximation='exact') runs in float64 only, got dtype={self.dtype!r}; "
                                 "use dtype='float64' or approximation='nystrom'")
            kern = kern.astype(_dtype_name(self.dtype))
        self.kernel_ = kern
        self.component_indices_ = None
        n = X.shape[0]
        Y = _as_columns(y)
        self.__dict__.pop("cg_eval_history_", None)  # set again below by a fit with cg_eval_set
        if cg_eval_set is not None and not (self.approximation == "nystrom" and self._use_cg(n, sw)):
            raise ValueError("KRR.fit: cg_eval_set stops conjugate gradient on held-out error, but this fit is solved "
                             f"directly (solver={self.solver!r}, approximation={self.approximation!r}, "
                             f"mode={self.mode!r}); use approximation='nystrom', mode='lla' or 'ncr' and solver='cg', "
                             "or drop cg_eval_set")
        self.solver_ = "direct"
        if self.approximation == "exact":
            op = approx.build("exact", X, kern)
            if sw is not None:  # (S K + alpha I)^-1 S = S^1/2 (S^1/2 K S^1/2 + alpha I)^-1 S^1/2
                solve = _weighted_solver(op, sw, self.alpha, exact=True)
            else:
                solve = lambda B: op.solve(self.alpha, B)  # noqa: E731
            dual, b = _bordered(solve, Y, self.fit_intercept)
            self.X_fit_ = X
        elif self._use_cg(n, sw) or self._refined_float32(sw) or self._streamed_direct(n, sw):
            landmarks = self._choose_landmarks(X, y, kern)
            if isinstance(landmarks, approx.Sketch):
                raise ValueError("KRR(solver='cg') needs landmark points, not a sketch; use solver='direct'"
                                 if self.solver_ == "cg" else
                                 "KRR(dtype='float32') needs landmark points, not a sketch; use dtype='float64'")
            L = np.asarray(landmarks)
            idx = L.astype(np.intp) if L.ndim == 1 else None
            Z = X[idx] if idx is not None else L.astype(np.float64)
            from ..solvers import HeldOutStop, nystrom_cg

            # direct (float32 blocks, or "auto" with float64 blocks above AUTO_HOLD_BYTES): a float32 C^T C's
            # Cholesky factor, refined by CG on the blocks themselves; O(c^2) memory, C never held
            streamed64 = self.solver_ == "direct" and _dtype_name(self.dtype) == "float64"
            stop = None
            if cg_eval_set is not None:
                Xv, yv = cg_eval_set
                stop = HeldOutStop(kern, Z, Xv, yv, rel_tol=CG_EVAL_REL_TOL, patience=CG_EVAL_PATIENCE)
            res = nystrom_cg(X, kern, Z, Y, self.alpha, center=self.fit_intercept, tol=self.cg_tol,
                             max_iter=self.cg_max_iter,
                             preconditioner="falkon" if self.solver_ == "cg" else "gram",
                             store_budget=(self._hold_budget() if self.solver == "auto" else None)
                             if self.solver_ == "cg" else 0,
                             gram_dtype="float32" if streamed64 else None, callback=stop)
            beta, b = res["beta"], res["intercept"]
            if stop is not None:
                self.cg_eval_history_ = stop.history
                if res["stopped"] and stop.history_best < stop.history[-1]:  # stopped on it: keep the best iterate
                    _, beta, b = stop.best
            self.landmarks_, self.component_indices_, self.rank_ = Z, idx, Z.shape[0]
            self.n_iter_, self.cg_residuals_ = res["n_iter"], res["residuals"]
            self.coef_ = beta[:, 0] if y.ndim == 1 else beta
            self.expansion_ = (Z, beta, idx)
        else:
            # LLA and NCR only need C^T C, C^T y and W: stream them, never hold the n x c matrix C
            op = self._landmark_operator(X, y, kern, rank=self.rank, store_C=self.mode == "gsa" or sw is not None)
            self.landmarks_, self.component_indices_ = op.Z, op.landmark_indices
            self.rank_ = int(op.rank)
            if self.mode == "gsa":
                if sw is None:
                    solve = lambda B: op.solve(self.alpha, B)  # noqa: E731
                else:  # Woodbury on W W^T + alpha I with W = S^1/2 V
                    solve = _weighted_solver(op, sw, self.alpha, exact=False)
                dual, b = _bordered(solve, Y, self.fit_intercept)
                self.X_fit_ = X
            else:
                if sw is None:
                    CtC, CtY = op.moments(np.column_stack([Y, np.ones(n)]) if self.fit_intercept else Y)
                    total, y_mean = float(n), Y.mean(axis=0)
                else:  # weighted moments from the stored C
                    Cw = sw[:, None] * op.C
                    CtC, CtY = op.C.T @ Cw, Cw.T @ (np.column_stack([Y, np.ones(n)]) if self.fit_intercept else Y)
                    total, y_mean = float(sw.sum()), sw @ Y / max(float(sw.sum()), np.finfo(np.float64).tiny)
                if self.fit_intercept:  # centre the columns of C and the targets (weighted means)
                    c_mean = CtY[:, -1] / total
                    CtC = CtC - total * np.outer(c_mean, c_mean)
                    CtY = CtY[:, :-1] - total * np.outer(c_mean, y_mean)
                if self.mode == "lla":  # (V^T V + alpha I) w = V^T y with V = C T
                    A = op.T.T @ CtC @ op.T
                    A.flat[:: A.shape[0] + 1] += self.alpha
                    coef = _psd_solve(A, op.T.T @ CtY)
                    beta = op.T @ coef
                else:  # ncr: (C^T C + alpha W)^+ C^T y, predictions cross(X_new) beta
                    coef = beta = _psd_solve(CtC + self.alpha * op.W, CtY)
                b = y_mean - c_mean @ beta if self.fit_intercept else np.zeros(Y.shape[1])
                self.coef_ = coef[:, 0] if y.ndim == 1 else coef
                # prediction is K(x, points) @ coef: keep only that (landmarks; with a sketch, X and S beta)
                if op.S is not None:
                    self.expansion_ = (op.X, np.asarray(op.S) @ beta, np.arange(op.X.shape[0]))
                else:
                    self.expansion_ = (op.Z, beta, op.landmark_indices)
        if self.approximation == "exact" or self.mode == "gsa":
            self.dual_coef_ = dual[:, 0] if y.ndim == 1 else dual
        self.intercept_ = float(b[0]) if y.ndim == 1 else b
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _use_cg(self, n, sw):
        """Whether this LLA/NCR fit runs the iterative solver (sets ``solver_``)."""
        c = self._n_landmarks(n)
        cg = (self.approximation == "nystrom" and self.mode in ("lla", "ncr") and sw is None
              and (self.solver == "cg" or (self.solver == "auto" and n * float(c) ** 2 > AUTO_CG_WORK
                                           and (np.dtype(_dtype_name(self.dtype)).itemsize * n * c <= self._hold_budget()
                                                or c >= AUTO_CG_PER_FEATURE * self.n_features_in_))))
        self.solver_ = "cg" if cg else "direct"
        return cg

    def _n_landmarks(self, n):
        return _landmark_count(self, n) if self.landmarks is None else min(len(np.asarray(self.landmarks)), n)

    @staticmethod
    def _hold_budget():
        """Bytes of C that ``solver="auto"`` holds between CG iterations (``AUTO_HOLD_BYTES``, at most the
        solver's budget)."""
        from .. import solvers

        return min(AUTO_HOLD_BYTES, solvers.STORE_BUDGET_BYTES)

    def _streamed_direct(self, n, sw):
        """Whether ``solver="auto"`` runs the streamed direct solve with float64 blocks: above ``AUTO_CG_WORK``
        where CG was not chosen and C (8 n c bytes) exceeds ``AUTO_HOLD_BYTES``.  Below that the direct solve
        is the exact one (moments streamed, W's eigendecomposition): small fits are unchanged."""
        c = self._n_landmarks(n)
        return (self.solver == "auto" and _dtype_name(self.dtype) == "float64" and self.approximation == "nystrom"
                and self.mode in ("lla", "ncr") and sw is None and self.rank is None
                and not isinstance(self.landmarks, approx.Sketch) and self.alpha > 0
                and n * float(c) ** 2 > AUTO_CG_WORK and 8.0 * n * c > self._hold_budget())

    def _refined_float32(self, sw):
        """Whether this float32 direct LLA/NCR fit is refined by CG (the float32 C^T C alone loses accuracy
        at small alpha; see :func:`nystrom_bench.solvers.nystrom_cg`'s ``preconditioner="gram"``)."""
        return (_dtype_name(self.dtype) == "float32" and self.approximation == "nystrom" and self.mode in ("lla", "ncr")
                and sw is None and self.rank is None and not isinstance(self.landmarks, approx.Sketch)
                and self.alpha > 0)

    def predict(self, X):
        """Predictions for X of shape (n_new, d)."""
        X = _new_input(self, X, "kernel_")
        if self.approximation == "exact" or self.mode == "gsa":
            out = self.kernel_.mmv(X, self.X_fit_, self.dual_coef_)
        else:  # LLA phi(X) w = K(X, Z) (T w); NCR K(X, Z) beta: one block-wise kernel product
            points, coef, _ = self.expansion_
            out = self.kernel_.mmv(X, points, coef)
            out = out[:, 0] if self.coef_.ndim == 1 else out
        return out + self.intercept_

    def _rkhs_expansion(self, mode=None):
        """The predictor's ``w`` as ``sum_i coef[i] phi(points[i])`` (one column per target):
        ``(points, coef, indices of points in the training X or None)``; the fitted ``mode``
        decides (another ``mode`` is an error: a KRR's integrations are separate fits)."""
        check_is_fitted(self, "kernel_")
        if mode is not None and self.approximation == "nystrom" and mode != self.mode:
            raise ValueError(f"KRR: this model was fitted with mode={self.mode!r}, not {mode!r}; fit one per mode")
        if self.approximation == "exact" or self.mode == "gsa":
            return self.X_fit_, _as_columns(self.dual_coef_), np.arange(self.X_fit_.shape[0])
        return self.expansion_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        # a low-rank approximation with default width cannot fit arbitrary data well: honest tag
        tags.regressor_tags.poor_score = self.approximation == "nystrom"
        return tags


def ovr_targets(y):
    """One-vs-rest least-squares targets: ``(T, classes)`` with T in {-1, +1}, one column per class, or a
    single column (a vector) for two classes (+1 for ``classes[1]``)."""
    from sklearn.utils.multiclass import check_classification_targets

    check_classification_targets(y)
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"a classifier needs samples of at least 2 classes in y, but y contains only 1 class: "
                         f"{classes.tolist()!r}")
    y = np.asarray(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0), classes
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0), classes


def ovr_predict(scores, classes):
    """Labels from one-vs-rest scores: the sign for two classes, else the arg-max."""
    scores = np.asarray(scores)
    if scores.ndim == 1:
        return np.where(scores > 0, classes[1], classes[0])
    return classes[np.argmax(scores, axis=1)]


class KRRClassifier(ClassifierMixin, _KRRParams):
    """Kernel ridge (least-squares) classifier: :class:`KRR` on one-vs-rest +-1 targets.

    Every parameter is :class:`KRR`'s (exact or Nystrom, any sampler, lla / gsa / ncr,
    ``fit_intercept``); labels may be of any type (strings included).  Two classes: one output, its
    sign decides; more: one output per class, the largest decides -- the least-squares classifier of
    Ding et al. (AAAI 2019; TNNLS 2020) that the krc study runs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    regressor_ : KRR
        The fitted regression on the +-1 targets.

    Examples
    --------
    >>> import numpy as np
    >>> from nystrom_bench.learners import KRRClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, "same", "opposite")
    >>> clf = KRRClassifier(gamma=0.5, alpha=0.1, n_components=40, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9, clf.classes_.tolist()
    (True, ['opposite', 'same'])
    """

    def fit(self, X, y, sample_weight=None):
        """Fit on X of shape (n, d) and class labels y of shape (n,) (``sample_weight`` as in :class:`KRR`)."""
        X, y, sample_weight = _fit_input(self, X, y, sample_weight)
        T, self.classes_ = ovr_targets(y)
        m = _landmark_param(self)
        _warn_clipped(self, X.shape[0])  # named KRRClassifier; the inner KRR gets the clipped count
        m = min(m, X.shape[0]) if isinstance(m, numbers.Integral) else m
        params = {**self.get_params(), "n_components": m, "n_landmarks": DEPRECATED}
        self.regressor_ = KRR(**params).fit(X, T, sample_weight=sample_weight)
        return self

    def decision_function(self, X):
        """Scores: shape (n,) for two classes (positive for ``classes_[1]``), else (n, n_classes)."""
        X = _new_input(self, X, "regressor_")
        return self.regressor_.predict(X)

    def predict(self, X):
        """Class labels."""
        return ovr_predict(self.decision_function(X), self.classes_)
