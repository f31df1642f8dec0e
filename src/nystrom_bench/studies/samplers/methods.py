"""The samplers family: one landmark sampler per method block (the ``samplers`` study).

A block ``{sampler: NAME}`` (optionally ``options: {...}``, the sampler's own keyword options) is
:class:`LandmarkMethod`: it draws ``m`` landmarks with :func:`nystrom_bench.sampling.sample` on the
training part, builds the Nystrom factor ``F`` (``F F^T = K~``) with
:func:`nystrom_bench.spectrum.nystrom_factor` -- reusing the sampler's own factor where it reports one
(``info["factor"]``: RPCholesky, greedy pivoted Cholesky), so no kernel column is evaluated twice -- and
fits kernel ridge regression in LLA mode (Li et al.'s "linearised" use of the approximation,
:class:`~nystrom_bench.learners.KRR` ``mode="lla"``) on the same landmarks at the study's ``alpha``.

Why a family of its own rather than the ``krr`` family: a KRR block fits one estimator that draws its
landmarks inside ``fit`` and keeps neither the sampler's cost (kernel entries, seconds) nor the factor;
this study scores the approximation itself, so its estimator keeps all three.  Every registered
sampler is one block away (the ``sampler`` key is checked against :func:`nystrom_bench.sampling.available`).
"""

from __future__ import annotations

import numpy as np

from ... import approx, kernels, learners, sampling
from ...methods import Method, check_sampler, family, register

family("samplers", key=None, default="landmarks")


def landmark_kind(landmarks):
    """What a sampler returned: ``"indices"`` (rows of X), ``"points"`` (e.g. k-means centres) or ``"sketch"``."""
    if isinstance(landmarks, sampling.Sketch):
        return "sketch"
    return "indices" if np.asarray(landmarks).ndim == 1 else "points"


def cannot_run(sampler, X):
    """Why ``sampler`` cannot run on X (a sentence), or None: more rows than the ``max_n`` it declares (a
    sampler that forms K), or a sparse X for a sampler registered with ``sparse=False``."""
    func = sampling._REGISTRY.get(sampler)
    limit = getattr(func, "max_n", None)
    if limit is not None and X.shape[0] > int(limit):
        return f"sampler {sampler!r} takes at most {int(limit)} points (it forms K); the training part has {X.shape[0]}"
    if kernels.issparse(X) and not getattr(func, "accepts_sparse", True):
        return f"sampler {sampler!r} needs a dense X"
    return None


class SharedKDPP:
    """The ``kdpp`` sampler (:func:`nystrom_bench.sampling.kdpp`: an exact k-DPP, Kulesza & Taskar, ICML 2011,
    Algorithm 1) with K's full eigendecomposition -- its O(n^3) part -- computed once per kernel matrix (its
    bits: :data:`nystrom_bench.sharedwork.MEMO`) and shared by the draws on it, the study's m of one (data set,
    seed, kernel): the same ``eigh`` call, so the landmarks are those of ``sampling.kdpp`` with the same
    generator (:func:`nystrom_bench.sampling.kdpp_from_eigh`).  K itself is evaluated on every draw, as
    ``kdpp`` does (the kernel entries are the sampler's).  ``shared_seconds``: the decomposition's measured
    seconds where this draw reused it (0 where it computed it on its own clock) -- the row charges them, as
    :class:`~nystrom_bench.sharedwork.SharedLeverage` does for ``leverage``."""

    __name__ = "kdpp"

    def __init__(self):
        self.shared_seconds = 0.0

    def __call__(self, X, kernel, c, rng):
        from scipy import linalg

        from ... import sharedwork

        if X.shape[0] > sampling.KDPP_WARN_N:  # its warning and its path, unshared
            return sampling.kdpp(X, kernel, c, rng)
        K = kernel(X)
        (lams, U), seconds, hit = sharedwork.MEMO.get(
            K, ("eigh", "evd"), lambda: linalg.eigh(K, check_finite=False, driver="evd"))
        self.shared_seconds = seconds if hit else 0.0
        return sampling.kdpp_from_eigh(lams, U, c, rng)


def _shared_sampler(name):
    """The sampler that shares its deterministic part across the draws of a job (:data:`nystrom_bench.sharedwork.
    MEMO`) where ``name`` has one -- ``leverage`` (K's tridiagonal reduction), ``kdpp`` (K's eigendecomposition)
    -- else None."""
    from ... import sharedwork

    return {"leverage": sharedwork.SharedLeverage, "kdpp": SharedKDPP}.get(name, lambda: None)()


class LandmarkRun:
    """One draw of landmarks and everything the samplers study measures of it.

    ``fit(X, y)`` draws ``m`` landmarks with ``sampler`` (``y_sampler``: the targets a sampler that needs
    them gets -- class labels for classification, not the one-vs-rest matrix ``y``), builds the factor
    ``factor_`` (n x r, ``F F^T`` the Nystrom approximation of ``K(X, X)``) and fits KRR in LLA mode on
    ``y`` with the same landmarks; ``predict`` is that KRR's.  Where the sampler cannot run on X
    (:func:`cannot_run`, or the sampler refuses the draw with a ValueError naming itself, e.g. a k-DPP of m
    points on a K of numerical rank below m, which has no such subset), ``fit`` only sets ``skipped_`` (the
    reason) and ``predict`` returns None.

    Attributes after ``fit``: ``landmarks_``, ``factor_``, ``sampling_seconds_`` (the sampler's wall time),
    ``kernel_entries_`` -- the kernel entries the sampler evaluated (:func:`nystrom_bench.sampling.sample`'s
    ``info``) plus those :func:`~nystrom_bench.spectrum.nystrom_factor` evaluated to build ``F`` (``C = K(X,
    landmarks)`` and ``W``; none where the sampler returned its factor) -- and ``model_`` (the KRR, or
    :class:`SharedLLA`, its bits from the factor's operator, where that applies).  The
    KRR's own kernel evaluations (``W``, and ``C`` again where it is a KRR) are the learner's, not the
    approximation's, and are not counted.
    """

    def __init__(self, sampler, m, kernel, alpha, rng, y_sampler=None, options=None, scope=None):
        self.sampler, self.m, self.kernel, self.alpha = sampler, int(m), kernel, float(alpha)
        self.rng, self.y_sampler, self.options = rng, y_sampler, dict(options or {})
        self.scope = scope

    def fit(self, X, y):
        from ... import sharedwork, spectrum

        self.skipped_ = cannot_run(self.sampler, X)
        if self.skipped_:
            return self
        info = {}
        extra = {"y": self.y_sampler} if sampling.needs_y(self.sampler) else {}
        # leverage and kdpp share their decomposition of K between the m of a (data set, seed, kernel): the
        # same landmarks, the reused decomposition's seconds charged to the row (nystrom_bench.sharedwork)
        shared = _shared_sampler(self.sampler) if self.scope is not None else None
        if shared is not None:
            sharedwork.MEMO.enter(*self.scope)
        try:
            L = sampling.sample(shared or self.sampler, X, self.kernel, self.m, seed=self.rng, info=info, **extra,
                                **self.options)
        except ValueError as exc:  # the sampler says it cannot draw here (a k-DPP of K of rank below m): no row
            if not str(exc).startswith(f"sampler {self.sampler!r}"):
                raise
            self.skipped_ = str(exc)
            return self
        counted = kernels.counting(self.kernel)
        op = None
        if info.get("factor") is None and not isinstance(L, sampling.Sketch):
            # nystrom_factor's own build (the same call, so F's bits), kept: its C serves the KRR below
            op = approx.build("nystrom", X, counted, landmarks=L)
            self.factor_ = np.asarray(op.factor(), dtype=np.float64)
        else:
            self.factor_ = np.asarray(spectrum.nystrom_factor(X, counted, L, factor=info.get("factor")))
        self.landmarks_ = L
        self.sampling_seconds_ = float(info["seconds"]) + (shared.shared_seconds if shared is not None else 0.0)
        self.kernel_entries_ = int(info["kernel_entries"]) + int(counted.entries)
        kern = self.kernel
        self.model_ = SharedLLA.fit(op, kern, self.alpha, y) if SharedLLA.applies(op, kern, X) else None
        if self.model_ is None:
            self.model_ = learners.KRR(kernel=kern.name, **kern.params(), alpha=self.alpha, approximation="nystrom",
                                       mode="lla", landmarks=L, fit_intercept=False).fit(X, y)
        return self

    def predict(self, X):
        return None if self.skipped_ else self.model_.predict(X)


class SharedLLA:
    """KRR in LLA mode without an intercept (:class:`~nystrom_bench.learners.KRR` ``mode="lla",
    fit_intercept=False`` on the same landmarks) from the Nystrom operator the row already built for its factor:
    ``C = K(X, Z)`` is that operator's, not evaluated again.

    Everything else is KRR's own arithmetic, operation for operation, so the predictions have its bits: ``W =
    K(Z, Z)`` evaluated as its operator does (``kernel.astype("float64")(Z)``; the factor's ``W`` is ``C``'s
    landmark rows when the landmarks are indices, which differ from it in the last bits, so W's pseudo-inverse
    factor ``T`` is computed again there and reused where the landmarks are points), ``C^T C`` and ``C^T Y``
    as :meth:`Kernel.gram <nystrom_bench.kernels.Kernel.gram>` forms them in its one chunk (hence
    :meth:`applies`: n within one chunk), ``A = T^T C^T C T + alpha I`` solved by Cholesky
    (``learners._base._psd_solve``), ``beta = T coef`` and predictions ``K(x, Z) beta`` (+ 0, its intercept).
    A KRR fit here repeated the kernel columns, the landmark checks and scikit-learn's parameter validation:
    factor + KRR took 1.64 / 2.39 / 5.05 ms a row at m = 25 / 50 / 100 (300 points, one thread), 0.83 / 1.55 /
    4.19 ms with this (every result row of the default samplers job byte-identical).
    """

    @staticmethod
    def applies(op, kernel, X):
        """Whether ``op`` (the row's Nystrom operator, or None) can serve: landmark points with a held float64 C,
        a dense X of at most one :meth:`~nystrom_bench.kernels.Kernel.gram` chunk, a PSD kernel (KRR warns on
        another, so it fits those itself)."""
        if op is None or op.C is None or op.Z is None or op.S is not None or op.C.dtype != np.float64:
            return False
        n, m = op.C.shape
        return (kernel.psd and kernel.dtype == np.float64 and type(X) is np.ndarray
                and n <= max(512, kernel.GRAM_CHUNK_BYTES // (8 * m)) and n == X.shape[0])

    @classmethod
    def fit(cls, op, kernel, alpha, y):
        from ...learners._base import _psd_solve
        from ...lowrank import lowrank_pinv_factor

        self = cls()
        C, Z = op.C, op.Z
        if op.landmark_indices is None:  # W = W64(Z) already: KRR's T
            T = op.T
        else:
            T, _ = lowrank_pinv_factor(np.asarray(kernel.astype("float64")(Z), dtype=np.float64), None)
        Y = np.asarray(y, dtype=np.float64)
        Y2 = Y[:, None] if Y.ndim == 1 else Y
        m = C.shape[1]
        tmp, CtC = np.empty((m, m)), np.zeros((m, m))  # Kernel.gram's one chunk
        np.dot(C.T, C, out=tmp)
        CtC += tmp
        CtC += CtC.T
        CtC /= 2
        CtY = np.zeros((m,) + Y2.shape[1:])
        CtY += C.T @ Y2
        A = T.T @ CtC @ T
        A.flat[:: A.shape[0] + 1] += alpha
        coef = _psd_solve(A, T.T @ CtY)
        self.kernel, self.Z, self.beta = kernel, Z, T @ coef
        self.vector, self.intercept = Y.ndim == 1, 0.0 if Y.ndim == 1 else np.zeros(Y2.shape[1])
        return self

    def predict(self, X):
        out = self.kernel.mmv(X, self.Z, self.beta)
        return (out[:, 0] if self.vector else out) + self.intercept


@register
class LandmarkMethod(Method):
    """A landmark sampler of :mod:`nystrom_bench.sampling`, by name (module docstring)."""

    family = "samplers"
    name = "landmarks"
    options = {
        "sampler": {"type": "string", "default": "uniform",
                    "description": "a registered sampler (python -c 'from nystrom_bench import sampling; "
                                   "print(sampling.available())')"},
        "options": {"type": "object", "default": {}, "description": "the sampler's own keyword options"},
    }

    def check(self, params, block):
        check_sampler(self.opts["sampler"])

    def estimator(self, trial):
        split = trial.split
        y_sampler = split.y_train if split.info.get("task") != "regression" else trial.y_fit
        return LandmarkRun(self.opts["sampler"], trial.coords["m"], trial.kernel, trial.params["alpha"], trial.rng,
                           y_sampler=y_sampler, options=self.opts["options"], scope=(trial.study, trial.dataset))

    def record(self, est, trial):
        if est.skipped_:
            return {"sampler": self.opts["sampler"], "skipped": est.skipped_}
        out = {"sampler": self.opts["sampler"], "landmark_kind": landmark_kind(est.landmarks_),
               "rank": int(est.factor_.shape[1])}
        if self.opts["options"]:
            out["sampler_options"] = dict(self.opts["options"])
        return out


# -- what the samplers study scores with (kept here: a study module stays small) ------------------------------
def spectral_norm(A):
    """``||A||_2`` of a symmetric A: the largest eigenvalue magnitude, by Lanczos (ARPACK ``eigsh``, k = 1,
    tolerance 1e-10) with a full ``eigvalsh`` where ARPACK does not converge or A is tiny.

    :func:`nystrom_bench.spectrum.subsample_errors` takes ``eigvalsh`` below 1,000 rows; at the study's
    exact block of 300-500 rows Lanczos took a quarter of its time (2.7 vs 11.6 ms, measured on a Gaussian
    kernel residual at 500 rows, one thread), and the study takes one per cell.
    """
    from scipy import linalg
    from scipy.sparse.linalg import ArpackNoConvergence

    from ... import lowrank

    m = A.shape[0]
    if m > 20:
        try:  # eigsh's bits, without its LinearOperator layer (lowrank.eigsh_largest_magnitude)
            return float(abs(lowrank.eigsh_largest_magnitude(A, 1e-10, np.full(m, 1.0 / np.sqrt(m)))))
        except ArpackNoConvergence:
            pass
    w = linalg.eigvalsh(A, check_finite=False)
    return float(max(abs(w[0]), abs(w[-1])))


def exact_block(X, kernel, idx):
    """``(idx, K_SS, ||K_SS||_F, ||K_SS||_2)``: the exact kernel block on the rows ``idx`` and its norms, which
    every sampler and m of a (data set, seed, kernel) shares (ValueError if the block is zero)."""
    K = np.asarray(kernel(X[idx]), dtype=np.float64)
    K = (K + K.T) / 2
    norm_2 = spectral_norm(K)
    if norm_2 <= 0:
        raise ValueError("samplers: the exact kernel block is zero; relative errors need a non-zero K")
    return idx, K, float(np.linalg.norm(K)), norm_2


def block_errors(block, F):
    """``{"frobenius", "spectral"}`` of ``F F^T`` against the exact block of :func:`exact_block`: what
    :func:`nystrom_bench.spectrum.subsample_errors` computes (``||R||_F / ||K_SS||_F`` and ``||R||_2 /
    ||K_SS||_2``, ``R = K_SS - F_S F_S^T``), with the block and its norms evaluated once."""
    idx, K, norm_f, norm_2 = block
    FS = F if len(idx) == len(F) and np.array_equal(idx, np.arange(len(F))) else F[idx]  # every row: no copy
    R = FS @ FS.T
    np.subtract(K, R, out=R)  # R = K - FS FS^T, (R + R^T) / 2: the same operations, two n x n temporaries fewer
    # K is symmetric bit for bit (exact_block) and so is FS FS^T where numpy's product runs SYRK: then R is, and
    # (R + R^T) / 2 = R exactly; the check (0.09 ms at 300 rows) costs less than the two passes (0.22 ms)
    S = R if np.array_equal(R, R.T) else (R + R.T) / 2
    return {"frobenius": float(np.linalg.norm(S) / norm_f), "spectral": spectral_norm(S) / norm_2}


def subsample_split(split, max_train, max_test, rng):
    """``split`` with its training part subsampled uniformly to ``max_train`` points and its test part to
    ``max_test`` (copies; as is where smaller), ``info["n_train"]`` the training points kept."""
    import dataclasses

    tr, te = len(split.y_train), len(split.y_test)
    keep_tr = np.sort(rng.choice(tr, max_train, replace=False)) if tr > max_train else np.arange(tr)
    keep_te = np.sort(rng.choice(te, max_test, replace=False)) if te > max_test else np.arange(te)
    if len(keep_tr) == tr and len(keep_te) == te:
        return dataclasses.replace(split, info={**split.info, "n_train": tr})
    return dataclasses.replace(split, X_train=split.X_train[keep_tr], y_train=split.y_train[keep_tr],
                               X_test=split.X_test[keep_te], y_test=split.y_test[keep_te],
                               info={**split.info, "n_train": len(keep_tr)})
