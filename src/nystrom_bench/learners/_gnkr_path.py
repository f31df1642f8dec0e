"""The (sigma, lambda) path of generalized Nystrom kernel regression (Chen et al., NIPS 2016, eq. 5), without
scikit-learn: the algebra, the landmarks of every width and the shared work behind
:class:`~nystrom_bench.learners.GNKR` and its :meth:`~nystrom_bench.learners.GNKR.fit_path`.

The gnkr study calls :func:`fit_path` directly on its validated splits, so that a gnkr run job imports no
scikit-learn (about 1 CPU-s of imports per job, issue 39); ``GNKR.fit_path`` validates its input and calls the
same function, so both give the same bits."""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy import linalg

from .. import kernels, sampling


def _deprecated_lams(alphas, lams, where):
    """``alphas``, or the deprecated keyword ``lams`` (FutureWarning); both or neither -> error."""
    import warnings

    if lams is None:
        if alphas is None:
            raise TypeError(f"{where}: missing the argument 'alphas' (the regularisation lambdas)")
        return alphas
    if alphas is not None:
        raise ValueError(f"{where}: alphas and lams both given; 'lams' is the deprecated name of 'alphas': pass "
                         "alphas only")
    warnings.warn(f"{where}: the keyword 'lams' is deprecated and will be removed in the next release; use alphas= "
                  "(the same values: alpha is the paper's lambda)", FutureWarning, stacklevel=3)
    return lams


def gnkr_path(X, y, Z, kernel, alphas=None, solver="eigh", *, lams=None):
    """GNKR coefficients for every lambda (``alpha``) in ``alphas`` (Chen et al. (NIPS 2016), eq. 5):

    ``alpha_lambda = (K_nm^T K_nm + lambda m n I_m)^-1 K_nm^T y``.

    ``solver="eigh"`` (default): K_nm^T K_nm is symmetric PSD for *any* kernel (a Gram
    matrix of columns), so one eigendecomposition ``U S U^T`` serves the whole path,
    ``alpha = U (S + lambda m n)^-1 U^T K_nm^T y``: exact even when it is singular
    (duplicate landmarks from sampling with replacement).  ``K_nm^T K_nm`` and
    ``K_nm^T y`` are streamed (never the n x m matrix).  Forming K_nm^T K_nm squares
    the condition number, so ``lambda m n`` below about 1e-15 of its largest
    eigenvalue is lost in rounding.

    ``solver="svd"``: the thin SVD ``K_nm = P diag(s) Q^T`` gives
    ``alpha = Q diag(s / (s^2 + lambda m n)) P^T y``, accurate down to much smaller
    lambda (the condition number is not squared), at the cost of holding K_nm
    (n x m) and about 3x the flops.

    ``lams=``: the deprecated name of ``alphas`` (FutureWarning).

    Returns an array of shape (len(alphas), m) (or (len(alphas), m, t) for 2-D y).
    """
    alphas = _deprecated_lams(alphas, lams, "gnkr_path")
    n, m = X.shape[0], Z.shape[0]
    if solver == "eigh":
        return _eigh_path(*_gram(kernel, X, Z, y), n, alphas)
    if solver != "svd":
        raise ValueError(f"GNKR solver must be 'eigh' or 'svd', got {solver!r}")
    P, sv, Qt = linalg.svd(kernel(X, Z), full_matrices=False, check_finite=False)
    return _filter_path(sv**2, Qt.T, P.T @ y, sv, n, m, alphas)


class _Scratch:
    """Float64 work arrays reused within one :func:`fit_path` / :func:`predict_path` call: a large block is
    allocated once instead of once per width (the fresh pages of a 40 MB block cost ~10 ms of system time)."""

    def __init__(self):
        self._bufs = {}

    def get(self, slot, shape):
        """A C-contiguous float64 array of ``shape`` (contents undefined) from the buffer of ``slot``."""
        n = int(np.prod(shape))
        buf = self._bufs.get(slot)
        if buf is None or buf.size < n:
            buf = self._bufs[slot] = np.empty(n)
        return buf[:n].reshape(shape)


def _gram(kern, X, Z, y, scratch=None):
    """``(K_nm^T K_nm, K_nm^T y)``: :meth:`~nystrom_bench.kernels.Kernel.gram`, or for a dense float64 Gaussian
    or Epanechnikov kernel :func:`_chunked_gram` (its chunks and products; the Gaussian's without subnormal
    arithmetic)."""
    if type(kern) in (kernels.Gaussian, kernels.Epanechnikov) and kern.dtype == np.float64 \
            and isinstance(X, np.ndarray) and isinstance(Z, np.ndarray) and X.dtype == np.float64 \
            and Z.dtype == np.float64 and X.ndim == 2:
        return _chunked_gram(kern, X, Z, y, scale=type(kern) is kernels.Gaussian, scratch=scratch)
    return kern.gram(X, Z, y)


def _chunked_gram(kern, X, Z, y, scale=False, scratch=None):
    """:meth:`Kernel.gram <nystrom_bench.kernels.Kernel.gram>`'s loop for dense float64 X and Z -- its chunks,
    kernel calls, SYRKs and sums, so its bits -- with the chunk buffer from ``scratch`` (a :class:`_Scratch`;
    None: a fresh one) and, where ``scale`` (the Gaussian kernel), each chunk ``C_b`` of ``C = K(X, Z)``
    scaled by ``2^s`` before its SYRK and the sum scaled back by ``2^-2s``.

    At small widths most of ``C`` is below ``1e-154`` (e.g. ``exp(-d^2 / 0.02)`` for ``d > 2.7``): the
    products ``C_ij C_ik`` of ``C^T C`` then fall in the subnormal range, where every floating-point
    operation takes a microcode assist on Intel CPUs -- the SYRK of a 5,000 x 1,000 block took 1.3 s
    instead of 0.08 s (issue 39).  ``2^s`` with ``2^(2s) n < 2^1022`` lifts them into the normal range;
    ``C <= 1`` keeps every sum finite.  Scaling by a power of two commutes with rounding in the normal
    range, so every entry of the result whose computation never went below ``2^-1022`` has the bits of
    :meth:`Kernel.gram`; the others are entries of magnitude ``< ~1e-300`` (they differ by less than
    ``n 2^-1074``, where subnormal rounding had been), far below the rounding of the eigendecomposition
    that uses them: its eigenvalues and eigenvectors came out bit for bit those of :meth:`Kernel.gram`'s
    Gram on every Gram tested (gnkr_f1-f4, m = 300 and 1,000, sigma = 0.01 and 0.1) and every result row of
    the default gnkr jobs is byte-identical (``tests/test_gnkr_path.py`` checks both properties).
    ``C^T y`` is computed from the unscaled chunk, bit for bit :meth:`Kernel.gram`'s.  The Epanechnikov
    kernel's values are 0 or at least ``2^-53`` (``1 - t`` rounded): no subnormal products, nothing scaled."""
    from ..kernels.blas import matmul_t

    n, m = X.shape[0], Z.shape[0]
    rows = _gram_rows(kern, n, m)
    s = (1022 - n.bit_length()) // 2  # n 2^(2s) < 2^1022: the largest sum (a diagonal entry) stays finite
    up, down = 2.0**s, 2.0 ** (-2 * s)
    y = np.asarray(y, dtype=np.float64)
    G, tmp = np.zeros((m, m)), np.empty((m, m))
    Cty = np.zeros((m,) + y.shape[1:])
    buf = (_Scratch() if scratch is None else scratch).get("chunk", (rows, m))
    for start in range(0, n, rows):
        sl = slice(start, min(start + rows, n))
        Cb = kern(X[sl], Z, out=buf[: sl.stop - sl.start])
        Cty += matmul_t(Cb, y[sl])
        if scale:
            Cb *= up
        np.dot(Cb.T, Cb, out=tmp)  # SYRK, as Kernel.gram
        G += tmp
    if scale:
        G *= down
    G += G.T
    G /= 2
    return G, Cty


def _eigh_path(G, b, n, alphas):
    """:func:`gnkr_path`'s ``eigh`` solver from ``(G, b) = (K_nm^T K_nm, K_nm^T y)``: one eigendecomposition
    (LAPACK ``syevr``, scipy's default driver) for every lambda."""
    s, U = linalg.eigh(G, check_finite=False)
    return _filter_path(np.maximum(s, 0.0), U, U.T @ b, None, n, G.shape[0], alphas)


def _filter_path(s, U, Utb, num, n, m, alphas):
    """``U diag(f) U^T b`` for every lambda, ``f = 1 / (s + lambda m n)`` (eigh) or ``num / (s + lambda m n)``
    (SVD): the coefficients of :func:`gnkr_path`, shape (n_lambdas, m) or (n_lambdas, m, t)."""
    out = []
    for lam in np.atleast_1d(alphas):
        d = s + float(lam) * m * n
        if np.any(d <= 0):
            raise ValueError(f"GNKR: lambda = {lam} makes the system singular; use lambda > 0")
        f = 1.0 / d if num is None else num / d  # filter factors of the eigh / SVD form
        w = Utb * (f if Utb.ndim == 1 else f[:, None])
        out.append(U @ w)
    return np.stack(out)


#: the most memory (bytes) the squared distances of one (points, landmarks) pair may take to be shared
#: by the widths of a path (else each width evaluates its kernel as before)
SHARED_DISTANCE_BYTES = 256 * 2**20


def _row_blocks(kern, n, m, chunk_rows=None):
    """The row blocks in which ``kern`` evaluates K(X, Z) for n points and m landmarks: ``kern(X, Z)``
    (``chunk_rows=None``) or :meth:`~nystrom_bench.kernels.Kernel.gram`'s chunks of ``chunk_rows`` rows, each
    evaluated by ``kern(X[chunk], Z)`` in blocks of ``kern._rows_per_block(m)`` rows from its start."""
    chunk_rows = n if chunk_rows is None else chunk_rows
    step = kern._rows_per_block(m)
    return [slice(c + i, min(c + i + step, c + chunk_rows, n))
            for c in range(0, n, chunk_rows) for i in range(0, min(chunk_rows, n - c), step)]


def _gram_rows(kern, n, m):
    """Rows of one chunk of :meth:`~nystrom_bench.kernels.Kernel.gram` (its formula)."""
    return min(n, max(512, kern.GRAM_CHUNK_BYTES // (kern.dtype.itemsize * m)))


def _shares_distances(kern, X, m):
    """Whether the Epanechnikov matrices of every width can be made from one matrix of squared distances
    (:class:`_SquaredDistances`): a float64 Epanechnikov kernel on dense points, within
    :data:`SHARED_DISTANCE_BYTES`.  The Gaussian kernel takes its exponent from one GEMM that carries the
    width (:class:`~nystrom_bench.kernels.Gaussian`), so ``exp(-gamma D)`` would change its last bits."""
    return (type(kern) is kernels.Epanechnikov and kern.dtype == np.float64 and isinstance(X, np.ndarray)
            and X.shape[0] * m * 8 <= SHARED_DISTANCE_BYTES)


class _SquaredDistances:
    """``D = ||x_i - z_j||^2`` of one (X, Z), computed once in the row blocks the library's kernel uses, so
    that :meth:`epanechnikov_into` gives, for every width, the bits of ``Epanechnikov(sigma)`` evaluating
    those blocks itself (the same GEMM operands, then the same element-wise operations); the Gram matrix of
    :meth:`gram` is that of :meth:`~nystrom_bench.kernels.Kernel.gram` bit for bit (tests/test_gnkr_path.py)."""

    def __init__(self, X, Z, blocks):
        from ..kernels.base import _sq_dists_into
        from ..kernels.blas import row_sq_norms

        zsq = row_sq_norms(Z)
        self.D = np.empty((X.shape[0], Z.shape[0]))
        for sl in blocks:
            _sq_dists_into(X[sl], Z, self.D[sl], row_sq_norms(X[sl]), zsq)

    #: bytes of one piece of :meth:`epanechnikov_into`'s three element-wise passes (they run piece by piece
    #: while it is in cache: 0.72x the time of three passes over a 40 MB block)
    PIECE_BYTES = 256 * 2**10

    def epanechnikov_into(self, kern, rows, out):
        """``out <- (1 - D[rows] / (2 sigma^2))_+``: :class:`~nystrom_bench.kernels.Epanechnikov`'s operations,
        element by element (so in pieces of rows, with the same bits)."""
        D, c = self.D[rows], -1.0 / (2.0 * kern.sigma**2)
        step = max(1, self.PIECE_BYTES // (8 * max(D.shape[1], 1)))
        for i in range(0, D.shape[0], step):
            o = out[i:i + step]
            np.multiply(D[i:i + step], c, out=o)
            o += 1.0
            np.maximum(o, 0.0, out=o)
        return out

    def gram(self, kern, y, scratch=None):
        """``(C^T C, C^T y)`` for ``C = kern(X, Z)``, chunk by chunk as :meth:`Kernel.gram` sums them."""
        from ..kernels.blas import matmul_t

        n, m = self.D.shape
        rows = _gram_rows(kern, n, m)
        y = np.asarray(y, dtype=np.float64)
        G, tmp = np.zeros((m, m)), np.empty((m, m))
        Cty = np.zeros((m,) + y.shape[1:])
        buf = (_Scratch() if scratch is None else scratch).get("chunk", (rows, m))
        for start in range(0, n, rows):
            sl = slice(start, min(start + rows, n))
            Cb = self.epanechnikov_into(kern, sl, buf[: sl.stop - sl.start])
            np.dot(Cb.T, Cb, out=tmp)
            G += tmp
            Cty += matmul_t(Cb, y[sl])
        G += G.T
        G /= 2
        return G, Cty


def _epanechnikov_column_norm_probabilities(X, kerns):
    """:func:`nystrom_bench.sampling.column_norm_probabilities` of X for several Epanechnikov kernels in one
    pass over the row blocks of K(X, X): each block's squared distances serve every width; the sums are
    those of :meth:`~nystrom_bench.kernels.Kernel.column_sq_norms` on one thread, bit for bit."""
    from ..kernels.base import _sq_dists_into
    from ..kernels.blas import row_sq_norms

    n = X.shape[0]
    xsq = row_sq_norms(X)
    totals = [np.zeros(n) for _ in kerns]
    step = kerns[0]._rows_per_block(n)
    D, K = np.empty((step, n)), np.empty((step, n))
    dist = _SquaredDistances.__new__(_SquaredDistances)
    for start in range(0, n, step):
        sl = slice(start, min(start + step, n))
        dist.D = _sq_dists_into(X[sl], X, D[: sl.stop - sl.start], row_sq_norms(X[sl]), xsq)
        for kern, total in zip(kerns, totals, strict=True):
            blk = dist.epanechnikov_into(kern, slice(None), K[: sl.stop - sl.start])
            total[:] += np.einsum("ij,ij->j", blk, blk)
    return [t / t.sum() for t in totals]


def _positive_1d(values, name, where):
    """A non-empty 1-D float array of positive finite numbers, or a ValueError."""
    arr = np.atleast_1d(np.asarray(values, dtype=object))
    ok = arr.ndim == 1 and arr.size > 0 and all(
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and np.isfinite(v) and v > 0 for v in arr)
    if not ok:
        raise ValueError(f"{where}: {name} must be a non-empty 1-D sequence of positive finite numbers, got {values!r}")
    return arr.astype(np.float64)


def landmark_path(X, sigmas, rng, kernel, sampler, m, landmarks=None, probabilities=None):
    """Yield ``(kernel, indices, sampling seconds)`` for each sigma, in order (:meth:`GNKR.fit_path`'s landmarks).

    ``kernel``: ``"gaussian"`` or ``"epanechnikov"``; ``sampler``: ``"uniform"`` or ``"column_norm"``; ``m``:
    the landmark count (an int; uniform draws ``min(m, n)`` distinct points).  Fixed ``landmarks`` serve every
    sigma (0 seconds); uniform landmarks are drawn once, at the first sigma, and shared (each sigma reports that
    draw's seconds); column-norm landmarks are drawn per sigma from ``p = column_norm_probabilities``, taken from
    / stored in the ``probabilities`` cache (float sigma -> (p, seconds)) if one is given; the seconds include
    computing p even when it was cached.
    """
    idx, t_s = (None, 0.0) if landmarks is None else (landmarks, 0.0)
    cache = {} if probabilities is None else probabilities
    if landmarks is None and sampler == "column_norm" and kernel == "epanechnikov" \
            and isinstance(X, np.ndarray):  # every width's p in one pass over K(X, X)'s row blocks
        missing = [s for s in dict.fromkeys(float(v) for v in sigmas) if s not in cache]
        if len(missing) > 1:
            t1 = time.perf_counter()
            ps = _epanechnikov_column_norm_probabilities(X, [kernels.make("epanechnikov", sigma=s)
                                                             for s in missing])
            each = (time.perf_counter() - t1) / len(missing)  # the pass's seconds, shared evenly
            cache.update({s: (p, each) for s, p in zip(missing, ps, strict=True)})
    for sigma in sigmas:
        t0 = time.perf_counter()
        kern = kernels.from_spec({"kernel": kernel, "sigma": sigma}, where="GNKR")
        if idx is None and sampler == "uniform":
            idx = sampling.sample("uniform", X, kern, c=min(m, X.shape[0]), seed=rng)
            t_s = time.perf_counter() - t0
        elif landmarks is None and sampler == "column_norm":
            key = float(sigma)
            if key not in cache:
                t1 = time.perf_counter()
                cache[key] = (sampling.column_norm_probabilities(X, kern), time.perf_counter() - t1)
            p, t_norms = cache[key]
            t1 = time.perf_counter()
            # m independent draws, p_i ~ ||K[:, i]||^2, as the paper states
            idx = sampling.sample("column_norm", X, kern, c=m, seed=rng, replace=True,
                                  probabilities=p)
            t_s = t_norms + time.perf_counter() - t1
        yield kern, idx, t_s


class PathFit:
    """A fitted (sigma, lambda) path: the ``path_*`` attributes of :meth:`GNKR.fit_path` (see there) and
    :meth:`predict_path`; made by :func:`fit_path`."""

    def predict_path(self, X):
        """:meth:`GNKR.predict_path` on X (float64, dense or CSR; converted as the kernels convert it)."""
        return predict_path(self, kernels.as_2d(X))


def fit_path(X, y, sigmas, lams, kernel, sampler, m, rng, landmarks=None, probabilities=None):
    """:meth:`GNKR.fit_path` on validated input: X float64 (dense or CSR), y float64, ``sigmas`` and ``lams``
    1-D float64 arrays of positive numbers, ``m`` an int, ``rng`` a Generator (used as is), ``landmarks`` None
    or valid indices into X, ``probabilities`` None or a dict; returns a :class:`PathFit`.

    Work shared across the widths gives the same bits as the plain loop: with the Epanechnikov kernel, widths
    on one landmark set take their kernel matrices from one matrix of squared distances (here and in
    :func:`predict_path`, up to :data:`SHARED_DISTANCE_BYTES` of it)."""
    kerns, indices, points, coefs, fit_t, samp_t = [], [], [], [], [], []
    dist = None  # (landmark indices, their _SquaredDistances): shared while the landmarks are
    scratch = _Scratch()  # one chunk buffer for every width's Gram
    for kern, idx, t_s in landmark_path(X, sigmas, rng, kernel, sampler, m, landmarks, probabilities):
        t1 = time.perf_counter()
        shared = len(sigmas) > 1 and (landmarks is not None or sampler == "uniform") \
            and _shares_distances(kern, X, len(idx))
        if shared and dist is not None and dist[0] is idx:
            Z = points[-1]
        else:
            Z = X[idx]
            dist = (idx, _SquaredDistances(X, Z, _row_blocks(kern, X.shape[0], len(idx),
                                                              _gram_rows(kern, X.shape[0], len(idx))))) \
                if shared else None
        # (n_lams, m): gnkr_path's eigh solver; the shared distances give kern.gram's bits without its distances
        coefs.append(_eigh_path(*(dist[1].gram(kern, y, scratch) if shared else _gram(kern, X, Z, y, scratch)),
                                X.shape[0], lams))
        fit_t.append(time.perf_counter() - t1)
        kerns.append(kern)
        indices.append(idx)
        points.append(Z)
        samp_t.append(t_s)
    fit = PathFit()
    fit.path_sigmas_, fit.path_alphas_, fit.path_lams_ = sigmas, lams, lams
    fit.path_indices_, fit.path_coef_ = indices, coefs
    fit.path_kernels_, fit.path_landmarks_ = kerns, points
    fit.path_fit_times_, fit.path_sampling_times_ = np.array(fit_t), np.array(samp_t)
    return fit


def predict_path(fit, X):
    """:meth:`GNKR.predict_path` of a fitted path ``fit`` (an object with its ``path_*`` attributes) on a
    validated float64 X: shape (n_sigmas, n_lams, n_samples)."""
    out = np.empty((len(fit.path_sigmas_), X.shape[0], len(fit.path_alphas_)))
    dist = None  # (landmark points, _SquaredDistances of X to them) while widths share the landmarks
    scratch = _Scratch()  # one buffer for every width's K(X, Z)
    for i, (kern, Z, coef) in enumerate(zip(fit.path_kernels_, fit.path_landmarks_, fit.path_coef_,
                                            strict=True)):
        shared = any(Zo is Z for Zo in fit.path_landmarks_[i + 1:]) or (dist is not None and dist[0] is Z)
        K = scratch.get("K", (X.shape[0], Z.shape[0]))  # (Z: dense or sparse landmark rows)
        if not (shared and _shares_distances(kern, X, len(Z))):
            out[i] = kern(X, Z, out=K) @ coef.T
            continue
        if dist is None or dist[0] is not Z:
            dist = (Z, _SquaredDistances(X, Z, _row_blocks(kern, X.shape[0], len(Z))))
        out[i] = dist[1].epanechnikov_into(kern, slice(None), K) @ coef.T
    return out.transpose(0, 2, 1)
