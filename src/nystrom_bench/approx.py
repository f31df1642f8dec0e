"""Approximators: turn ``(X, kernel, landmarks)`` into a kernel *operator*.

Every operator offers the same small interface, so criteria and learners work
with any approximation and no special cases:

``solve(shift, y)``
    ``(K~ + shift I)^-1 y`` for ``y`` of shape (n,) or (n, t).
``eigvals()``
    Eigenvalues of K~ in descending order (for low-rank operators: the
    ``rank`` non-zero ones; all others are exactly 0).
``spectrum_estimate()``
    An estimate of the eigenvalues of the *exact* K (default: ``eigvals()``;
    Nystrom from c landmarks: ``(n/c) lambda_i(W_k)``, Ding et al. (TNNLS 2020) Section VI-B).
``factor()``
    V with ``K~ = V V^T`` (n x r), where K~ is PSD.
``features(X_new)``
    The out-of-sample map phi with ``phi(X) = V`` on the training points.
``dense()``
    K~ as an n x n array (small n, for tests and diagnostics).

plus ``fit_time_`` (seconds spent building it), ``nbytes_`` (memory of the arrays it
holds, X excluded) and ``rank``.

Available: ``exact``, ``nystrom`` (landmark indices, points, or a sketch),
``modified_nystrom``, ``optimal`` and ``mcm``.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import approx, kernels
>>> X = np.random.default_rng(0).normal(size=(40, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> op = approx.build("nystrom", X, kern, landmarks=np.arange(40))
>>> bool(np.allclose(op.dense(), kern(X), atol=1e-8))
True
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
from scipy import linalg

from .kernels import as_2d, crossprod, issparse, make, matmul, matmul_t
from .lowrank import RCOND, lowrank_pinv_factor, top_eigh
from .sampling import Sketch, choose_landmarks

__all__ = [
    "KernelOperator", "ExactOperator", "LowRankOperator", "NystromOperator", "ModifiedNystromOperator",
    "OptimalOperator", "MCMOperator", "Sketch", "build", "available", "register", "lowrank_pinv_factor",
    "balanced_grid", "top_eigh", "landmark_operator", "shared_work",
]

_REGISTRY = {}


def register(name):
    """Decorator adding an operator class (built by ``cls.build(X, kernel, **kw)``) to the registry."""

    def deco(cls):
        _REGISTRY[name] = cls
        cls.name = name
        return cls

    return deco


def available():
    """Names accepted by :func:`build`."""
    return sorted(_REGISTRY)


#: names an approximation is looked up by that are other parts of the library: what to use instead
ELSEWHERE = {
    "generalized_nystrom": "the generalized Nystrom kernel (Lan, Zhang et al., AIJ 2017) is learned from labels, "
                           "not built from landmarks: nystrom_bench.learners.GeneralizedNystrom "
                           "(GeneralizedNystromMKL for several kernels)",
    "gnkr": "generalized Nystrom kernel regression (Chen et al., NIPS 2016) is a learner: "
            "nystrom_bench.learners.GNKR",
}


def unknown_message(name):
    """The error message of an unknown approximation ``name``: where the name lives elsewhere in the library
    (:data:`ELSEWHERE`, a sampler's name), else a "did you mean" among close names only
    (similarity 0.7 or more, ``_names.SUGGEST_CUTOFF``), then the choices."""
    from . import sampling
    from ._names import suggest

    choices = available()
    key = name.lower().replace("-", "_").replace(" ", "_") if isinstance(name, str) else None
    if key in ELSEWHERE:
        hint = f": {ELSEWHERE[key]}"
    elif key in sampling.available():
        hint = (f": {name!r} is a landmark sampler; build the Nystrom approximation on its landmarks, "
                f"approx.build('nystrom', X, kernel, landmarks=sampling.sample({name!r}, X, kernel, c))")
    else:
        hint = suggest(key, choices) if key else ""
    return f"unknown approximation {name!r}{hint}; choose one of {', '.join(choices)}"


def build(name, X, kernel, dtype=None, **options):
    """Build the approximate kernel operator ``name`` on the training points X.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    X : array of shape (n, d)
    kernel : Kernel or str
    dtype : {"float64", "float32"} or None
        Precision of the kernel blocks (None: the kernel's own).  float32 is for ``nystrom`` from
        landmarks: C = K(X, Z) is evaluated (and held, if stored) in float32; its products with
        vectors and every m x m matrix (W, C^T C, the factors) are float64.
    **options
        ``landmarks=`` (indices into X, ``(c, d)`` points, or a :class:`Sketch`) and
        ``rank=`` for the Nystrom family; ``rank=`` for ``optimal``; ``levels=``,
        ``grid=`` for ``mcm``.
    """
    try:
        cls = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(unknown_message(name)) from None
    kernel = make(kernel, dtype=dtype)
    if kernel.dtype != np.float64 and (name != "nystrom" or isinstance(options.get("landmarks"), Sketch)):
        raise ValueError(f"approx.build({name!r}): dtype={kernel.dtype.name!r} is supported by the "
                         "nystrom operator from landmarks only; use dtype='float64'")
    X = as_2d(X)  # a sparse X stays sparse (CSR): every operator but mcm evaluates its kernel blocks on it
    if issparse(X) and name == "mcm":
        raise ValueError("approx.build('mcm'): the multilevel circulant approximation needs dense X (distances "
                         "on its grid); use X.toarray(), or one of " + ", ".join(n for n in available() if n != "mcm"))
    values = X.data if issparse(X) else X
    if not np.isfinite(values).all():
        raise ValueError(f"approx.build({name!r}): X contains NaN or infinity ({int(np.sum(~np.isfinite(values)))} "
                         "entries); remove or impute them first (e.g. sklearn.impute.SimpleImputer)")
    lm = options.get("landmarks")
    if lm is not None and not isinstance(lm, Sketch) and not issparse(lm):
        L = np.asarray(lm)
        if L.ndim == 2 and (L.shape[1] != X.shape[1] or not np.isfinite(L.astype(np.float64)).all()):
            raise ValueError(f"approx.build({name!r}): landmark points must be finite, of shape (c, {X.shape[1]}); "
                             f"got shape {L.shape}")
    t0 = time.perf_counter()
    op = cls.build(X, kernel, **options)
    op.fit_time_ = time.perf_counter() - t0
    op.nbytes_ = _held_bytes(op)
    return op


def landmark_operator(X, kernel, c=None, *, sampler="uniform", landmarks=None, seed=None, y=None,
                      approximation="nystrom", rank=None, sampler_options=None, **build_options):
    """The one landmark pipeline: (sampler or landmarks, X, kernel, c, seed) -> a low-rank operator.

    :func:`nystrom_bench.sampling.choose_landmarks` (``landmarks`` as given, else ``c`` drawn by
    ``sampler`` with ``seed``, ``y`` for samplers that need targets, ``sampler_options``), then
    :func:`build` of ``approximation`` (``"nystrom"`` or ``"modified"``) on them with ``rank`` and
    ``build_options`` (e.g. ``store_C``, ``dtype``).  The estimators, :mod:`nystrom_bench.selection` and
    the studies build every landmark approximation through it.

    >>> import numpy as np
    >>> from nystrom_bench import approx, kernels
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> op = approx.landmark_operator(X, kernels.make("gaussian", gamma=0.5), 20, sampler="kmeans", seed=0)
    >>> op.Z.shape, op.rank
    ((20, 3), 20)
    """
    L = choose_landmarks(X, kernel, c, sampler=sampler, landmarks=landmarks, seed=seed, y=y, **(sampler_options or {}))
    return build(approximation, X, kernel, landmarks=L, rank=rank, **build_options)


def _held_bytes(op):
    """Bytes of the arrays an operator holds beyond its input X (its memory footprint)."""
    seen, total = {id(op.X)}, 0
    for value in vars(op).values():
        if isinstance(value, np.ndarray) and id(value) not in seen:
            seen.add(id(value))
            total += value.nbytes
    return total


def _check_shift(shift, name):
    shift = float(shift)
    if not np.isfinite(shift) or shift <= 0:
        raise ValueError(
            f"{name}: shift must be > 0 (a low-rank K~ + shift*I is singular at shift = 0), got {shift}"
        )
    return shift


class KernelOperator:
    """Interface shared by every approximation (see module docstring)."""

    name = "operator"
    fit_time_ = 0.0
    nbytes_ = 0

    def solve(self, shift, y):  # pragma: no cover - abstract
        """``(K~ + shift I)^{-1} y`` for y of shape (n,) or (n, t): Cholesky for the exact operator,
        Woodbury (c x c) for the low-rank ones; ``shift`` must be > 0 for a low-rank K~."""
        raise NotImplementedError

    def eigvals(self):  # pragma: no cover - abstract
        """The non-zero eigenvalues of K~ (n x n), in decreasing order (at most its rank)."""
        raise NotImplementedError

    def spectrum_estimate(self):
        """Estimated eigenvalues of the exact kernel matrix (default: those of K~)."""
        return self.eigvals()

    def factor(self):  # pragma: no cover - abstract
        """V of shape (n, rank) with ``K~ = V V^T`` on the training points."""
        raise NotImplementedError

    def features(self, X_new):  # pragma: no cover - abstract
        """The feature map of new points, shape (n_new, rank): ``features(X) = factor()`` on the training
        points, and ``features(A) features(B)^T`` is the approximate kernel between A and B."""
        raise NotImplementedError

    def dense(self):
        """K~ as a dense n x n array (for tests and small n only)."""
        V = self.factor()
        return V @ V.T

    def __repr__(self):
        parts = [f"n={self.n}"] if getattr(self, "X", None) is not None else []
        rank = getattr(self, "rank", None)
        if rank is not None:
            parts.append(f"rank={int(rank)}")
        Z = getattr(self, "Z", None)
        if Z is not None:
            parts.append(f"landmarks={Z.shape[0]}")
        kern = getattr(self, "kernel", None)
        if kern is not None:
            params = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in kern.params().items())
            parts.append(f"kernel={type(kern).__name__}({params})")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def n(self):
        return self.X.shape[0]


#: where set (:func:`shared_work`): the source of the work operators may share
_SHARED = None


@contextlib.contextmanager
def shared_work(source):
    """Inside the block, operators take work that depends only on their data from ``source`` (e.g.
    :class:`nystrom_bench.sharedwork.SharedOperatorWork`: computed once per data and reused), each where
    ``source`` has the method:

    - ``tridiagonal(K)``: K's tridiagonal reduction (:func:`nystrom_bench.sharedwork.tridiagonal`'s dict, or
      ``None`` where that path does not apply), which the exact operator's eigenvalues and the optimal
      operator's top-k eigenpairs continue from -- one reduction per kernel matrix, also shared with the
      ``leverage`` sampler's draws; the reduction is the bulk of both (Golub & Van Loan, Matrix Computations,
      4th ed., Sec. 8.3.1);
    - ``mcm_spacing(X, grid, max_pairs, seed, compute)``: MCM's grid spacing and misfit
      (:meth:`MCMOperator.spacing_and_misfit`), which depend on X and the grid, not on the kernel.

    The results are the bits of the unshared computation either way."""
    global _SHARED
    saved, _SHARED = _SHARED, source
    try:
        yield source
    finally:
        _SHARED = saved


@register("exact")
class ExactOperator(KernelOperator):
    """The exact kernel matrix K (n x n; Cholesky solves). The reference, small n only."""

    def __init__(self, X, kernel):
        self.X, self.kernel = X, kernel
        self.K = kernel(X)
        self.rank = X.shape[0]
        self._eig = self._w = None
        self._chol = {}

    @classmethod
    def build(cls, X, kernel):
        return cls(X, kernel)

    def solve(self, shift, y):
        shift = float(shift)
        if shift not in self._chol:
            # one copy, in LAPACK's (Fortran) order, factored in place: a C-order copy was copied again by
            # the wrapper (0.2 CPU-s of a 1.2 s solve at n = 5000); the same values, the same factor
            A = np.array(self.K, order="F")
            A.flat[:: self.n + 1] += shift  # .flat is in C order whatever the layout: the diagonal
            try:
                self._chol = {shift: linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)}
            except linalg.LinAlgError:
                raise np.linalg.LinAlgError(
                    f"exact kernel matrix + {shift:g}*I is not positive definite "
                    f"(kernel {self.kernel!r}); increase the regularisation"
                ) from None
        return linalg.cho_solve(self._chol[shift], np.asarray(y, dtype=np.float64), check_finite=False)

    def _eigh(self):
        if self._eig is None:
            w, U = linalg.eigh(self.K)
            self._eig = (w[::-1], U[:, ::-1])
        return self._eig

    def eigvals(self):
        """K's eigenvalues, descending: ``scipy.linalg.eigh``'s bits without its eigenvectors' back-transformation
        (:func:`nystrom_bench.sharedwork.eigvals_tridiagonal`; the reduction from :func:`shared_work`'s
        source where one is set)."""
        if self._eig is not None:
            return self._eig[0].copy()
        if self._w is None:
            from .sharedwork import eigvals_tridiagonal, tridiagonal

            shared = getattr(_SHARED, "tridiagonal", None)
            tri = (shared or tridiagonal)(self.K)
            w = None if tri is None else eigvals_tridiagonal(tri)
            self._w = self._eigh()[0] if w is None else w[::-1]
        return self._w.copy()

    def factor(self):
        w, U = self._eigh()
        if w[-1] < -RCOND * max(w[0], 0):
            raise ValueError(f"kernel {self.kernel!r} gives an indefinite matrix: no factor V V^T exists")
        keep = w > RCOND * w[0]
        return U[:, keep] * np.sqrt(w[keep])

    def features(self, X_new):
        w, U = self._eigh()
        keep = w > RCOND * w[0]
        return self.kernel(X_new, self.X) @ (U[:, keep] / np.sqrt(w[keep]))

    def dense(self):
        return self.K.copy()


class LowRankOperator(KernelOperator):
    """``K~ = V V^T`` with ``V = C T`` (n x k); the shared machinery of the Nystrom family.

    Only C (n x c) is stored -- V is never materialised unless :meth:`factor` is
    called -- so the memory is one n x c array (none with ``store_C=False``):

    - ``V^T V = T^T (C^T C) T``;
    - ``solve`` uses the Woodbury identity
      ``(V V^T + s I)^-1 y = (y - V (s I_k + V^T V)^-1 V^T y) / s``
      with a Cholesky factor of the k x k matrix, applying ``V = C T`` as two
      products.  (Ding et al. (TNNLS 2020), eq. (5), writes ``mu I_k`` inside the inverse; with
      shift ``s = mu l`` it must be ``mu l I_k``, as Woodbury gives -- the paper
      has a typo there.)
    - ``eigvals`` are the exact non-zero eigenvalues of K~: those of ``V^T V``.

    Subclasses set ``X, kernel, C, T`` (via :meth:`_init_lowrank`) and implement :meth:`cross`.
    """

    def _init_lowrank(self, X, kernel, C, T):
        self.X, self.kernel, self.C, self.T = X, kernel, C, T
        self.rank = T.shape[1]
        self._CtC = None
        self._VtV = None
        self._chol = {}

    def cross(self, X_new):
        """The cross-kernel ``K(X_new, .)`` against what C was built from (landmarks, or X S)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def cross_mv(self, X_new, v):
        """``cross(X_new) @ v`` (subclasses may avoid forming the cross-kernel)."""
        return self.cross(X_new) @ v

    # -- C, stored or recomputed block-wise ----------------------------------------------------
    def _C(self):
        return self.C if self.C is not None else self.cross(self.X)

    def _Ct(self, y):
        """``C^T y``."""
        return matmul_t(self.C, y) if self.C is not None else self._cross_t(y)

    def _cross_t(self, y):  # pragma: no cover - only for operators that may skip storing C
        raise NotImplementedError

    def moments(self, y=None):
        """``(C^T C, C^T y)``; one block-wise pass when C is not stored."""
        if self.C is None:
            CtC, Cty = self._stream_gram(y)
            self._CtC = CtC if self._CtC is None else self._CtC
            return self._CtC, Cty
        return self.CtC, (None if y is None else matmul_t(self.C, y))

    def _stream_gram(self, y):  # pragma: no cover - only for operators that may skip storing C
        raise NotImplementedError

    @property
    def CtC(self):
        """``C^T C`` (c x c): one GEMM, or a streaming pass when C is not stored."""
        if self._CtC is None:
            if self.C is None:
                return self.moments()[0]
            self._CtC = crossprod(self.C)
        return self._CtC

    @property
    def VtV(self):
        if self._VtV is None:
            self._VtV = self.T.T @ self.CtC @ self.T
        return self._VtV

    def Vt(self, y):
        """``V^T y`` without forming V."""
        return self.T.T @ self._Ct(y)

    def V_mv(self, t):
        """``V t`` without forming V."""
        Tt = self.T @ t
        return matmul(self.C, Tt) if self.C is not None else self.cross_mv(self.X, Tt)

    def solve(self, shift, y):
        shift = _check_shift(shift, self.name)
        y = np.asarray(y, dtype=np.float64)
        if shift not in self._chol:
            A = self.VtV.copy()
            A.flat[:: self.rank + 1] += shift
            self._chol = {shift: linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)}
        t = linalg.cho_solve(self._chol[shift], self.Vt(y), check_finite=False)
        return (y - self.V_mv(t)) / shift

    def eigvals(self):
        return np.maximum(linalg.eigvalsh(self.VtV)[::-1], 0.0)

    def factor(self):
        """V = C T (allocates an n x k array)."""
        return matmul(self._C(), self.T)

    def features(self, X_new):
        return matmul(self.cross(as_2d(X_new)), self.T)


def _landmark_points(X, landmarks, name):
    """``(Z, indices or None)``.  Landmarks that are rows of a sparse X stay sparse (CSR, m x d): memory
    O(their non-zeros) whatever d, and the kernel blocks take sparse @ sparse^T products."""
    if issparse(landmarks):
        Z = as_2d(landmarks, "landmarks")
        if Z.shape[1] != X.shape[1]:
            raise ValueError(f"{name}: landmark points have {Z.shape[1]} features, X has {X.shape[1]}")
        return Z, None
    landmarks = np.asarray(landmarks)
    if landmarks.ndim == 1:
        if not np.issubdtype(landmarks.dtype, np.integer):
            raise ValueError(f"{name}: 1-D landmarks must be integer indices into X")
        if landmarks.size == 0 or landmarks.min() < 0 or landmarks.max() >= X.shape[0]:
            raise ValueError(f"{name}: landmark indices must lie in [0, {X.shape[0]})")
        return X[landmarks], landmarks
    Z = as_2d(landmarks, "landmarks")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"{name}: landmark points have {Z.shape[1]} features, X has {X.shape[1]}")
    return Z, None


@register("nystrom")
class NystromOperator(LowRankOperator):
    """Nystrom approximation ``K~ = C W_k^+ C^T``.

    From landmarks Z (indices into X or points): ``C = K(X, Z)``, ``W = K(Z, Z)``.
    From a sketch S (n x c, :class:`Sketch`): ``C = K S``, ``W = S^T K S`` (SPSD
    sketching model of Gittens & Mahoney; C is computed block-wise).
    Rank-deficient W (duplicate landmarks) and tiny or negative eigenvalues
    (indefinite kernels) are handled by keeping only eigenvalues of W above
    ``RCOND * lambda_max(W)``; ``rank`` truncates further to the top k.
    """

    def __init__(self, X, kernel, C, W, rank=None, landmark_indices=None, Z=None, S=None):
        W = np.asarray(W, dtype=np.float64)
        T, self.w_kept = lowrank_pinv_factor(W, rank)
        self._init_lowrank(X, kernel, C, T)
        self.W, self.Z, self.S = W, Z, S
        self.landmark_indices = landmark_indices
        self.n_landmarks = W.shape[0]

    @classmethod
    def build(cls, X, kernel, landmarks=None, rank=None, store_C=True):
        """``store_C=False`` (landmarks only) keeps O(c^2) memory: C = K(X, Z) is never held;
        :meth:`moments` streams ``C^T C, C^T y`` and :meth:`solve` re-evaluates kernel blocks."""
        if landmarks is None:
            raise ValueError("nystrom: pass landmarks= (indices into X, (c, d) points, or a Sketch)")
        if isinstance(landmarks, Sketch):
            S = np.asarray(landmarks)
            if S.ndim != 2 or S.shape[0] != X.shape[0]:
                raise ValueError(f"nystrom: a sketch must have shape (n, c) = ({X.shape[0]}, c)")
            C = kernel.mmv(X, X, S)
            return cls(X, kernel, C, S.T @ C, rank, S=S)
        Z, idx = _landmark_points(X, landmarks, "nystrom")
        W64 = kernel.astype("float64")  # W in float64 whatever C's precision (c x c: cheap)
        if not store_C:
            return cls(X, kernel, None, W64(Z), rank, landmark_indices=idx, Z=Z)
        C = kernel(X, Z)
        W = C[idx] if idx is not None and C.dtype == np.float64 else W64(Z)
        return cls(X, kernel, C, W, rank, landmark_indices=idx, Z=Z)

    def _cross_t(self, y):
        return self.kernel.t_mv(self.X, self.Z, y)

    def _stream_gram(self, y):
        return self.kernel.gram(self.X, self.Z, y)

    def cross(self, X_new):
        if self.S is not None:
            return self.kernel.mmv(X_new, self.X, self.S)
        return self.kernel(X_new, self.Z)

    def cross_mv(self, X_new, v):
        if self.S is not None:
            return self.kernel.mmv(X_new, self.X, self.S @ v)
        return self.kernel.mmv(X_new, self.Z, v)  # block-wise: never the full n_new x c matrix

    def spectrum_estimate(self):
        """``(n/c) lambda_i(W_k)``: Nystrom's estimate of the top-k eigenvalues of K (Ding et al. (TNNLS 2020))."""
        return (self.n / self.n_landmarks) * self.w_kept


@register("modified_nystrom")
class ModifiedNystromOperator(LowRankOperator):
    """Modified Nystrom ``K~ = C (C^+ K C^+T) C^T`` (Wang & Zhang 2013), C = K(X, Z).

    ``K C^+T`` is formed block-wise (O(n^2 (d + c)) time, O(n c) memory); the
    c x c core M is symmetrised and its positive eigenpairs above the cut-off
    kept, so ``V = C U_M Lambda_M^{1/2}``; ``rank`` k gives the best rank-k
    approximation of that K~ (top-k eigenvectors of ``V^T V``).
    """

    @classmethod
    def build(cls, X, kernel, landmarks=None, rank=None):
        if landmarks is None:
            raise ValueError("modified_nystrom: pass landmarks= (indices into X or (c, d) points)")
        Z, idx = _landmark_points(X, landmarks, "modified_nystrom")
        op = cls()
        C = kernel(X, Z)
        Cp = linalg.pinv(C, rtol=RCOND)  # c x n
        M = Cp @ kernel.mmv(X, X, Cp.T)
        M = (M + M.T) / 2
        w, U = linalg.eigh(M)
        w, U = w[::-1], U[:, ::-1]
        keep = w > RCOND * max(w[0], 0.0)
        T = U[:, keep] * np.sqrt(w[keep])
        if rank is not None:
            # the best rank-k approximation of K~ = V V^T (V = C T): V_k = V Q_k with Q_k the top-k
            # eigenvectors of V^T V.  Truncating M's own eigenpairs instead is not the best rank k
            # (C is not orthonormal) and can be far worse than K~ itself.
            VtV = T.T @ (C.T @ C) @ T
            wv, Q = linalg.eigh((VtV + VtV.T) / 2)
            T = T @ Q[:, ::-1][:, : int(rank)]
        op._init_lowrank(X, kernel, C, T)
        op.Z, op.landmark_indices = Z, idx
        return op

    def cross(self, X_new):
        return self.kernel(X_new, self.Z)


@register("optimal")
class OptimalOperator(LowRankOperator):
    """Best rank-k approximation ``K_k = U_k Lambda_k U_k^T`` (dense eigendecomposition: small n).

    ``features`` is the Nystrom extension of the eigenvectors, ``k(x, X) U_k Lambda_k^{-1/2}``.
    """

    @classmethod
    def build(cls, X, kernel, rank=None):
        if rank is None:
            raise ValueError("optimal: pass rank= (the k of the best rank-k approximation)")
        K = kernel(X)
        pairs = None
        shared = getattr(_SHARED, "tridiagonal", None)
        if shared is not None:  # K's shared reduction (shared_work): the same eigenpairs bit for bit
            from .sharedwork import top_eigh_tridiagonal

            tri = shared(K)
            pairs = None if tri is None else top_eigh_tridiagonal(tri, int(rank))
        w, U = top_eigh(K, int(rank)) if pairs is None else pairs
        keep = w > RCOND * max(w[0], 0.0)
        op = cls()
        # V = U_k Lambda_k^{1/2}: in the C T form, C = U_k Lambda_k and T = Lambda_k^{-1/2}
        op._init_lowrank(X, kernel, U[:, keep] * w[keep], np.diag(1 / np.sqrt(w[keep])))
        op._U, op._w = U[:, keep], w[keep]
        return op

    def cross(self, X_new):
        # C = cross(X) = K U_k = U_k Lambda_k, and phi(x) = cross(x) T = k(x, X) U_k Lambda_k^{-1/2}
        return self.kernel(X_new, self.X) @ self._U


# -- multilevel circulant matrix (Ding et al., TNNLS 2020, Algorithm 1) ------------------------
def balanced_grid(n, levels):
    """The most balanced factorisation ``m = (m_0, ..., m_{p-1})`` of n with ``prod(m) = n``.

    Prime factors are assigned largest-first to the currently smallest level.  If n
    has few factors (e.g. n prime) the grid is unbalanced, down to ``(n, 1, ..., 1)``:
    the MCM then has fewer effective levels.  Pass ``grid=`` to :func:`build` to choose m.
    """
    factors, k, rest = [], 2, int(n)
    while k * k <= rest:
        while rest % k == 0:
            factors.append(k)
            rest //= k
        k += 1
    if rest > 1:
        factors.append(rest)
    m = [1] * int(levels)
    for f in sorted(factors, reverse=True):
        m[int(np.argmin(m))] *= f
    return tuple(sorted(m, reverse=True))


def _grid_offsets(m):
    """Integer coordinates of every multi-index of the grid m, row-major, shape (prod m, p)."""
    return np.stack(np.unravel_index(np.arange(int(np.prod(m))), m), axis=1)


#: MCM warns when the data's relative misfit to its grid (assumption H4) exceeds this
MCM_MISFIT_WARN = 0.3
#: the labels of :meth:`MCMOperator.assumption`'s reasons (the text before their ``:``)
ASSUMPTION_H4 = "MCM off its grid"
ASSUMPTION_INDEFINITE = "indefinite operator"


@register("mcm")
class MCMOperator(KernelOperator):
    """Multilevel circulant approximation ``U_m`` of an RBF kernel matrix (Ding et al. (TNNLS 2020), Algorithm 1).

    The n training points are laid on a p-level grid ``m`` (``prod(m) = n``) in
    their given (row-major) order, as the paper's relabelling ``S = {x_i : i in [m]}``
    does; assumption H4 says the approximation is good when ``||x_i - x_j||`` is
    close to ``h ||i - j||``.  The spacing h is fitted by least squares between
    the data's pairwise distances and the grid distances on a random sample of
    pairs (the paper's tuning of ``||X_m - H_m||_F``); ``grid_misfit_`` is the relative residual of
    that fit (0 on an exact grid) and ``build`` warns above ``MCM_MISFIT_WARN``.

    Step 1: ``t_i = K(||(i_s h)_s||)`` from the kernel's radial profile; steps 2-3:
    ``u_i = sum_{j in D_i} t_j`` with ``D_i = prod_s D_{i,s}``, ``D_{i,s} = {0}`` if
    ``i_s = 0`` else the *set* ``{i_s, m_s - i_s}`` (one element when
    ``i_s = m_s / 2``).  Then ``U_m = circ_m[u]`` is symmetric, its eigenvalues are
    ``v = fftn(u)`` (real), and ``(U_m + s I)^-1 y = ifftn(fftn(y) / (v + s))``:
    O(n log n) time, O(n) memory.
    """

    def __init__(self, X, kernel, grid, h):
        self.X, self.kernel, self.grid, self.h = X, kernel, tuple(int(g) for g in grid), float(h)
        m = np.array(self.grid)
        idx = [np.arange(ms) for ms in m]
        coords = np.meshgrid(*[ix * self.h for ix in idx], indexing="ij")
        r = np.sqrt(sum(c**2 for c in coords))
        t = kernel.profile(r)
        u = np.zeros_like(t)
        p = len(m)
        for choice in range(2**p):
            sel, mask = [], np.ones(tuple(m), dtype=bool)
            for s in range(p):
                if choice >> s & 1:  # the reflected element m_s - i_s, where it differs from i_s
                    ix = np.where(idx[s] == 0, 0, m[s] - idx[s])
                    valid = (idx[s] != 0) & (m[s] - idx[s] != idx[s])
                else:
                    ix, valid = idx[s], np.ones(m[s], dtype=bool)
                sel.append(ix)
                shape = [1] * p
                shape[s] = m[s]
                mask &= valid.reshape(shape)
            u += np.where(mask, t[np.ix_(*sel)], 0.0)
        self.u = u
        self.v = np.fft.fftn(u).real
        self.rank = int(np.sum(self.v > RCOND * self.v.max()))

    @classmethod
    def build(cls, X, kernel, levels=3, grid=None, h=None, max_pairs=20000, seed=0):
        if not hasattr(kernel, "profile"):
            raise ValueError(f"mcm needs a radial kernel (gaussian, epanechnikov), got {kernel!r}")
        n = len(X)
        grid = balanced_grid(n, levels) if grid is None else tuple(int(g) for g in grid)
        if int(np.prod(grid)) != n:
            raise ValueError(f"mcm: grid {grid} has {int(np.prod(grid))} cells but there are {n} points")
        shared = getattr(_SHARED, "mcm_spacing", None)  # shared_work: once per X and grid
        h_fit, misfit = (shared(X, grid, max_pairs, seed, cls.spacing_and_misfit) if shared is not None
                         else cls.spacing_and_misfit(X, grid, max_pairs, seed))
        op = cls(X, kernel, grid, h_fit if h is None else h)
        op.grid_misfit_ = misfit
        # U_m is circulant, not PSD: even on an exact grid its eigenvalues go negative (measured: 8% of the
        # largest on a 10 x 10 x 5 grid, Gaussian); recorded, not warned about
        op.negative_eigen_ratio_ = float(-min(op.v.min(), 0.0) / op.v.max()) if op.v.max() > 0 else 1.0
        if misfit > MCM_MISFIT_WARN:
            import warnings

            warnings.warn(f"mcm: the data are far from the grid the multilevel circulant approximation assumes "
                          f"(Ding et al.'s H4, ||x_i - x_j|| ~ h ||i - j||: relative misfit {misfit:.2f}, warned above "
                          f"{MCM_MISFIT_WARN}; 0 on a grid in row-major order); U_m then approximates another "
                          "matrix than K, and criteria computed from it are not meaningful", UserWarning, stacklevel=3)
        return op

    def assumption(self, shift=None):
        """Why criteria computed from this U_m are outside MCM's assumptions, or ``""`` where they hold:
        the reason a result row carries (:data:`nystrom_bench.results.ASSUMPTION`).

        The precise test, two parts (``"; "``-joined when both fail):

        - **H4** -- ``grid_misfit_ > MCM_MISFIT_WARN`` (the same test as ``build``'s warning): the
          data are not the grid U_m is built on, so U_m approximates another matrix than K.
          Reason ``"MCM off its grid: H4 misfit 0.68 > 0.3"``.
        - **indefinite** (only with a ``shift``, the criteria's ``mu l``) -- ``min(eigenvalues of U_m)
          + shift <= 0``: ``U_m + mu l I`` is not positive definite, so C_ree can be negative and
          C_ipe's terms ``lambda / (lambda + mu l)`` blow up near ``lambda = -mu l`` (the condition
          :func:`nystrom_bench.criteria.c_ree` warns on).  Not ``min < 0``: a circulant U_m has
          negative eigenvalues even on its exact grid (8-11% of the largest on a 10 x 10 grid for a
          wide kernel), harmless while ``U_m + mu l I`` stays positive definite.  Reason
          ``"indefinite operator: min eigenvalue -34 <= -mu l = -0.5"``.
        """
        reasons = []
        misfit = getattr(self, "grid_misfit_", 0.0)
        if misfit > MCM_MISFIT_WARN:
            reasons.append(f"{ASSUMPTION_H4}: H4 misfit {misfit:.2f} > {MCM_MISFIT_WARN}")
        if shift is not None:
            lowest = float(self.v.min())
            if lowest + float(shift) <= 0:
                reasons.append(f"{ASSUMPTION_INDEFINITE}: min eigenvalue {lowest:.2g} <= -mu l = {-float(shift):.2g}")
        return "; ".join(reasons)

    @staticmethod
    def fit_spacing(X, grid, max_pairs=20000, seed=0):
        """Least-squares h minimising ``sum (||x_i - x_j|| - h ||i - j||)^2`` over sampled pairs."""
        return MCMOperator.spacing_and_misfit(X, grid, max_pairs, seed)[0]

    @staticmethod
    def spacing_and_misfit(X, grid, max_pairs=20000, seed=0):
        """``(h, misfit)``: the least-squares spacing and how far the data are from assumption H4,
        ``misfit = ||d_x - h d_grid|| / ||d_x||`` over the sampled pairs (0 on an exact grid)."""
        n = len(X)
        rng = np.random.default_rng(seed)
        i, j = rng.integers(0, n, size=(2, max_pairs)) if n * n > max_pairs else np.triu_indices(n, 1)
        G = _grid_offsets(grid)
        dx = np.linalg.norm(X[i] - X[j], axis=1)
        dg = np.linalg.norm((G[i] - G[j]).astype(float), axis=1)
        denom = dg @ dg
        if denom == 0:
            raise ValueError("mcm: cannot fit the grid spacing (all sampled pairs coincide on the grid)")
        h = float(dx @ dg / denom)
        return h, float(np.linalg.norm(dx - h * dg) / max(np.linalg.norm(dx), np.finfo(np.float64).tiny))

    def _apply(self, y, fn):
        y = np.asarray(y, dtype=np.float64)
        flat = y.reshape(self.n, -1)
        out = np.empty_like(flat)
        axes = tuple(range(len(self.grid)))
        for c in range(flat.shape[1]):
            Y = np.fft.fftn(flat[:, c].reshape(self.grid), axes=axes)
            out[:, c] = np.fft.ifftn(fn(Y), axes=axes).real.ravel()
        return out.reshape(y.shape)

    def solve(self, shift, y):
        shift = float(shift)
        den = self.v + shift
        if np.any(np.abs(den) < RCOND * np.abs(self.v).max()):
            raise np.linalg.LinAlgError(f"mcm: U + {shift:g} I is singular; increase the shift")
        return self._apply(y, lambda Y: Y / den)

    def matvec(self, y):
        """``U_m y`` by FFT."""
        return self._apply(y, lambda Y: Y * self.v)

    def eigvals(self):
        return np.sort(self.v.ravel())[::-1]

    def factor(self):
        if self.v.min() < -RCOND * self.v.max():
            raise ValueError("mcm: U_m has negative eigenvalues, no factor V V^T exists")
        # symmetric square root U^{1/2}, formed densely: small n only
        return self._apply(np.eye(self.n), lambda Y: Y * np.sqrt(np.maximum(self.v, 0)))

    def features(self, X_new):
        raise NotImplementedError("mcm has no out-of-sample feature map (it approximates K on the grid only)")

    def dense(self):
        return self.matvec(np.eye(self.n))
