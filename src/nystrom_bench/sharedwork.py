"""Deterministic work a run job shares across seeds and methods: computed once, charged to every row.

Some fits of a job compute a result that depends only on the data and a few settings, not on the
seed or the method: the spectral and cluster kernels' eigendecompositions in the gen_nystrom kind
(every seed uses all rows, only the labelled set changes), the exact, optimal-rank and MCM criteria
of the consistency kind on a fixed grid (MCM is deterministic; the seeds vary the samplers).  Such a
result is computed once per data set (:data:`MEMO`) and returned, bit for bit, to every later fit
that asks for it with the same inputs.

The timing rule: a fit that reused a shared result is *charged* the measured seconds of that
result's one computation (as :meth:`nystrom_bench.learners.GNKR.fit_path` charges cached
column-norm probabilities), so a row's seconds still answer "what does this fit cost" -- the
first fit measures the work on its own clock, every later one adds the first one's measurement
(:meth:`SharedWork.get` returns it) instead of doing the work again.

A key covers every input that changes the result: the data's bits (a SHA-256 digest of the array's
dtype, shape and bytes, never ``id()``; :func:`digest`) and the caller's settings (kernel and its
parameters, rank, ...).  Memory is bounded: the memo holds one data set of one study at a time (a
kind's method calls :meth:`SharedWork.enter` with the trial's study and data set: another one empties
it), and never more than :attr:`SharedWork.max_bytes` of arrays (the oldest results go first).
"""

from __future__ import annotations

import contextlib
import hashlib
import time

import numpy as np

__all__ = ["MEMO", "SharedDraw", "SharedLeverage", "SharedOperatorWork", "SharedWork", "digest", "eigvals_tridiagonal", "tridiagonal",
           "top_eigh_tridiagonal"]


def digest(*parts):
    """A SHA-256 hex digest of ``parts``: arrays by dtype, shape and bytes (C order), anything else by ``repr``.

    Two arrays of equal values but another dtype or shape digest differently, as do ``0.1`` and
    ``0.1 + 1e-17`` when they differ in bits (``repr`` of a float is its shortest round-trip form).
    """
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(f"ndarray{part.dtype.str}{part.shape}".encode())
            h.update(np.ascontiguousarray(part).data)
        else:
            h.update(repr(part).encode())
        h.update(b"\x00")
    return h.hexdigest()


def _read_only(value):
    """``value`` with its arrays (also inside tuples, lists and dicts) made read-only: a caller that would
    write into a shared result raises instead of changing what the next fit gets."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _read_only(v)
    elif isinstance(value, dict):
        for v in value.values():
            _read_only(v)
    return value


def _nbytes(value):
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    return 0


class SharedWork:
    """A memo of deterministic results of one data set, each with the seconds its computation took.

    Attributes
    ----------
    hits, misses : int
        Lookups answered from the memo and computed, since creation or :meth:`clear`.
    """

    #: the most bytes of arrays held; beyond it the oldest results are dropped
    max_bytes = 512 * 2**20

    def __init__(self):
        self._store, self._scope = {}, None
        self.hits = self.misses = 0

    def enter(self, *scope):
        """Work on ``scope`` (a study and data set): results of another scope are dropped first."""
        if scope != self._scope:
            self._store, self._scope = {}, scope

    def get(self, data, key, make):
        """``(value, seconds, hit)``: ``make()`` computed once for the data ``data`` and ``key``.

        Parameters
        ----------
        data : ndarray or tuple of ndarrays
            The data the result is computed from (its digest is part of the key).
        key : hashable
            Everything else the result depends on (what is computed, kernel and parameters, rank...);
            its ``repr`` enters the digest, so floats are told apart by their bits.
        make : callable
            Computes the result; it must be deterministic in ``data`` and ``key``.

        Returns
        -------
        value
            ``make()``'s result, its arrays read-only (the same object on every hit).
        seconds : float
            The wall seconds of the one ``make()`` call: what a fit that reused it is charged.
        hit : bool
            Whether ``value`` came from the memo (the caller charges ``seconds``) or was computed now
            (the caller's clock measured it already).
        """
        full = (digest(*(data if isinstance(data, tuple) else (data,))), digest(key))
        if full in self._store:
            self.hits += 1
            value, seconds, _ = self._store[full]
            return value, seconds, True
        self.misses += 1
        t0 = time.perf_counter()
        value = _read_only(make())
        seconds = time.perf_counter() - t0
        self._store[full] = (value, seconds, _nbytes(value))
        while len(self._store) > 1 and sum(v[2] for v in self._store.values()) > self.max_bytes:
            del self._store[next(iter(self._store))]  # the oldest (dicts keep insertion order)
        return value, seconds, False

    @contextlib.contextmanager
    def apart(self):
        """Work in a memo of its own inside the block, the stored results untouched (the study loop's untimed
        warm-up: its slice could equal a small data set, whose results a timed row must not be charged with
        the warm-up's cold seconds)."""
        saved = self._store, self._scope
        self._store, self._scope = {}, None
        try:
            yield self
        finally:
            self._store, self._scope = saved

    @property
    def nbytes(self):
        """Bytes of the arrays held."""
        return sum(v[2] for v in self._store.values())

    def clear(self):
        """Drop every stored result and reset the counts."""
        self._store, self._scope = {}, None
        self.hits = self.misses = 0




# -- the top eigenpairs of one matrix at several ranks: its tridiagonal reduction once ------------------------
def tridiagonal(A):
    """The tridiagonal reduction of the symmetric ``A`` (lower triangle) exactly as LAPACK's ``dsyevr`` makes it
    inside ``scipy.linalg.eigh(A, subset_by_index=...)``: ``dsytrd`` with the workspace ``dsyevr`` gives it
    (SciPy's optimal ``dsyevr`` workspace less 5 n), so :func:`top_eigh_tridiagonal` continues bit for bit.

    Returns ``None`` where that path does not apply (not float64, n < 2, or a matrix ``dsyevr`` would scale
    first: max ``|a_ij|`` outside [1e-100, 1e76], inside its own bounds sqrt(safmin / eps) ~ 1e-146 and
    min(sqrt(eps / safmin), safmin^(-1/4)) ~ 8e76); else a dict ``{"reflectors", "d", "e", "tau", "lwork"}``
    (``reflectors``: the Householder vectors below the diagonal, ``dsytrd``'s ``A[1:, :n-1]``, held contiguous so
    that each back-transformation reads it without copying it first).  The
    reduction is ~(4/3) n^3 of the eigendecomposition's ~(4/3) n^3 + O(n^2 k) flops (Golub & Van Loan,
    Matrix Computations, 4th ed., Sec. 8.3.1): what a sampler that needs the top-k eigenvectors of one K at
    several k can share."""
    from scipy.linalg import lapack

    A = np.asarray(A)
    n = A.shape[0]
    if A.dtype != np.float64 or A.ndim != 2 or n < 2 or A.shape[1] != n:
        return None
    anrm = float(np.max(np.abs(A)))
    if not (1e-100 <= anrm <= 1e76):  # dsyevr would scale A first (ISCALE)
        return None
    lwork = int(lapack.dsyevr_lwork(n, lower=1)[0])
    c, d, e, tau, info = lapack.dsytrd(np.array(A, order="F"), lower=1, lwork=lwork - 5 * n, overwrite_a=1)
    if info != 0:
        return None
    return {"reflectors": np.asfortranarray(c[1:, : n - 1]), "d": d, "e": e, "tau": tau, "lwork": lwork}


def top_eigh_tridiagonal(tri, k):
    """The top-k eigenpairs, largest first, from :func:`tridiagonal`'s reduction: ``(w, U)``, the bits of
    :func:`nystrom_bench.lowrank.top_eigh` (``dsyevr``'s path for an index range below the whole spectrum:
    ``dstebz`` bisection, ``dstein`` inverse iteration, the back-transformation ``dormtr`` = ``dormqr`` on
    the reflectors below the diagonal, and ``dsyevr``'s selection sort); ``None`` where ``dsyevr`` would take
    another path (k = n: ``dstemr``) or a step fails -- the caller then calls ``top_eigh`` itself."""
    from scipy.linalg import lapack

    v, d, e, tau, lwork = tri["reflectors"], tri["d"], tri["e"], tri["tau"], tri["lwork"]
    n = len(d)
    k = min(int(k), n)
    if not 1 <= k < n:
        return None
    m, w, iblock, isplit, info = lapack.dstebz(d, e, 2, 0.0, 0.0, n - k + 1, n, 0.0, "B")  # RANGE='I', ORDER='B'
    if info != 0 or m != k:
        return None
    w = np.array(w[:m])
    z, info = lapack.dstein(d, e, w, iblock, isplit)
    if info != 0:
        return None
    z = np.asfortranarray(z[:, :m])
    cq, _, info = lapack.dormqr("L", "N", v, tau[: n - 1], z[1:, :], lwork - 2 * n)  # dsyevr: LWORK - INDE + 1
    if info != 0:
        return None
    z[1:, :] = cq
    for j in range(m - 1):  # dsyevr's sort: the smallest remaining eigenvalue swapped into place j
        i = j + int(np.argmin(w[j:]))
        if w[i] < w[j]:
            w[[i, j]] = w[[j, i]]
            z[:, [i, j]] = z[:, [j, i]]
    if not np.isfinite(w).all():
        return None
    return w[::-1], z[:, ::-1]


def eigvals_tridiagonal(tri):
    """All eigenvalues, ascending, from :func:`tridiagonal`'s reduction: the bits of ``scipy.linalg.eigh(A)[0]``.

    ``dsyevr``'s path for the whole spectrum with eigenvectors (RANGE = 'A', JOBZ = 'V', ABSTOL = 0): the
    MRRR solver ``dstemr`` on copies of the diagonals (TRYRAC set, as ``dsyevr`` sets it for ABSTOL <= 2 n eps),
    whose eigenvalues ``dsyevr`` returns as they are -- its back-transformation ``dormtr`` (~2 n^3 flops: what
    is skipped here) and its sort touch only the eigenvectors (Dhillon, Parlett & Voemel, ACM TOMS 2006,
    "The design and implementation of the MRRR algorithm").  ``dstemr``'s eigenvectors are computed and
    dropped: with JOBZ = 'N' it refines the eigenvalues otherwise, so they would differ in the last bits.
    ``None`` where ``dstemr`` fails (``dsyevr`` then falls back to ``dstebz`` and ``dstein``: a tight
    cluster, e.g. a kernel matrix close to I) -- the caller then calls ``eigh`` itself."""
    from scipy.linalg import lapack

    d, e = tri["d"], tri["e"]
    n = len(d)
    e_n = np.zeros(n)  # dstemr takes E of length n (the last entry is workspace)
    e_n[:-1] = e
    lwork, liwork, info = lapack.dstemr_lwork(d, e_n, 0, 0.0, 0.0, 1, n, compute_v=1)  # range 0: all
    if info != 0:
        return None
    m, w, _, info = lapack.dstemr(np.array(d), e_n, 0, 0.0, 0.0, 1, n, compute_v=1, lwork=lwork, liwork=liwork)
    if info != 0 or m != n or not np.isfinite(w).all():
        return None
    return np.array(w[:m])


class SharedDraw:
    """A landmark sampler whose draws are shared by the fits that would repeat them: ``sampler`` (a name of
    :func:`nystrom_bench.sampling.sample`'s registry, or a callable such as :class:`SharedLeverage`) drawn
    once per data (X's bits), kernel, count, options and *generator state*, the draw and the generator's state
    after it kept in :data:`MEMO`.  A fit that asks again gets the same landmarks (a copy) and its generator
    is left in the state the draw leaves it in, so everything after the draw is as if it drew them itself:
    the integration kind's KRR fits of one ratio in the modes gsa, lla and ncr start from one stream
    (common random numbers) and drew the same landmarks three times.
    ``shared_seconds``: the seconds of the draw when this call reused it (plus the shared work the draw
    itself was charged, e.g. :class:`SharedLeverage`'s reduction), else the shared work the draw was charged
    now -- the row charges them."""

    def __init__(self, sampler):
        self.sampler = sampler
        self.__name__ = getattr(sampler, "__name__", sampler) if callable(sampler) else str(sampler)
        self.shared_seconds = 0.0

    def __call__(self, X, kernel, c, rng, **options):
        from . import sampling

        func = self.sampler if callable(self.sampler) else sampling._REGISTRY[self.sampler]
        kern = (type(kernel).__name__, sorted(kernel.params().items()), str(np.dtype(kernel.dtype)),
                getattr(kernel, "block_bytes", None))
        key = ("draw", self.__name__, kern, int(c), sorted(options.items()), rng.bit_generator.state)

        def make():
            out = func(X, kernel, c, rng, **options)
            return out, rng.bit_generator.state, float(getattr(self.sampler, "shared_seconds", 0.0))

        (landmarks, state, inner), seconds, hit = MEMO.get(np.asarray(X), key, make)
        if hit:
            rng.bit_generator.state = state
            self.shared_seconds = seconds + inner
        else:
            self.shared_seconds = inner
        return landmarks.copy()  # writable, of its type (a Sketch stays one)


class SharedOperatorWork:
    """A source for :func:`nystrom_bench.approx.shared_work`: the work an operator shares, from :data:`MEMO`.

    ``tridiagonal(K)``: K's tridiagonal reduction, keyed as :class:`SharedLeverage`'s, so the exact operator's
    eigenvalues, the optimal rank-k eigenpairs and the ``leverage`` sampler's draws on one kernel matrix share
    one reduction bit for bit.  ``mcm_spacing(X, grid, max_pairs, seed, compute)``: MCM's least-squares grid
    spacing and misfit (``compute``: :meth:`nystrom_bench.approx.MCMOperator.spacing_and_misfit`), the same for every kernel width.
    ``shared_seconds``: the seconds of the work it reused rather than computed (a row charges them)."""

    def __init__(self):
        self.shared_seconds = 0.0

    def _get(self, data, key, make):
        value, seconds, hit = MEMO.get(data, key, make)
        if hit:
            self.shared_seconds += seconds
        return value

    def tridiagonal(self, K):
        return self._get(K, ("tridiagonal",), lambda: tridiagonal(K))

    def mcm_spacing(self, X, grid, max_pairs, seed, compute):
        # ``compute``: the operator's own fit (approx.MCMOperator.spacing_and_misfit), passed in: this layer
        # sits below approx and never imports it
        return self._get(np.asarray(X), ("mcm_spacing", tuple(int(g) for g in grid), int(max_pairs), seed),
                         lambda: compute(X, grid, max_pairs, seed))


#: the process's memo
MEMO = SharedWork()


class SharedLeverage:
    """The ``leverage`` sampler (:func:`nystrom_bench.sampling.leverage`: rank-k leverage scores of K, k =
    ceil(c / 2)) with K's tridiagonal reduction -- the bulk of its eigendecomposition -- computed once per
    kernel matrix (its bits) and shared by every draw on it (:data:`MEMO`): the integration kind's machines of
    every landmark ratio (one training part and tuned width), the consistency kind's seeds on one training
    part; each draw's top-k eigenpairs continue from it bit for bit (:func:`top_eigh_tridiagonal`), so the
    landmarks are those of ``sampling.leverage`` with the same generator (Gittens & Mahoney, JMLR 2016: the
    rank-k leverage scores; ``sampling.leverage`` says why k = ceil(c / 2)).
    ``shared_seconds``: the seconds of the reduction when this draw reused it (0 where it computed it on
    the fit's own clock) -- the row charges them."""

    __name__ = "leverage"

    def __init__(self):
        self.shared_seconds = 0.0

    def __call__(self, X, kernel, c, rng, rank=None):
        from . import lowrank, sampling

        n = X.shape[0]
        if n > sampling.LEVERAGE_WARN_N:  # its warning and its path, unshared
            return sampling.leverage(X, kernel, c, rng, rank=rank)
        K = kernel(X)
        k = int(rank or -(-c // 2))
        tri, seconds, hit = MEMO.get(K, ("tridiagonal",), lambda: tridiagonal(K))
        self.shared_seconds = seconds if hit else 0.0
        pairs = None if tri is None else top_eigh_tridiagonal(tri, k)
        _, U = lowrank.top_eigh(K, k) if pairs is None else pairs
        p = np.einsum("ij,ij->i", U, U)
        p = np.maximum(p, 0)
        return rng.choice(n, size=c, replace=False, p=p / p.sum())
