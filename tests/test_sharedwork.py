"""The shared deterministic work of a run job (nystrom_bench.sharedwork): same bits, charged time, honest keys."""

import time

import numpy as np
import pytest
from scipy import linalg

from nystrom_bench import kernels, lowrank, sampling, selection, sharedwork
from nystrom_bench.learners.cluster_kernel import ClusterKernel
from nystrom_bench.learners.spectral_kernel import SpectralGraphKernel, knn_laplacian
from nystrom_bench.sharedwork import SharedLeverage
from nystrom_bench.studies.consistency.methods import deterministic_values
from nystrom_bench.studies.gen_nystrom.methods import SharedKMeans, _LinearOnFactor, shared_spectrum
from nystrom_bench.studies.integration.methods import charged_seconds


def _data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-2, 1, (n // 2, 3)), rng.normal(2, 1, (n // 2, 3))])
    y = np.full(n, -1)
    y[[0, 1, 2, n - 3, n - 2, n - 1]] = [0, 0, 0, 1, 1, 1]
    return X, y


@pytest.fixture(autouse=True)
def _fresh_memo():
    sharedwork.MEMO.clear()
    yield
    sharedwork.MEMO.clear()


def test_digest_tells_bits_dtype_and_shape_apart():
    a = np.arange(6.0)
    assert sharedwork.digest(a) == sharedwork.digest(a.copy())
    assert sharedwork.digest(a) != sharedwork.digest(a.astype(np.float32))
    assert sharedwork.digest(a) != sharedwork.digest(a.reshape(2, 3))
    b = a.copy()
    b[3] = np.nextafter(b[3], 10)
    assert sharedwork.digest(a) != sharedwork.digest(b)
    assert sharedwork.digest(0.1) != sharedwork.digest(np.nextafter(0.1, 1))


def test_memo_returns_the_same_bits_and_charges_the_measured_seconds():
    memo, X = sharedwork.SharedWork(), np.ones((4, 2))

    def slow():
        time.sleep(0.05)
        return np.arange(3.0)

    v1, s1, hit1 = memo.get(X, ("a", 1), slow)
    v2, s2, hit2 = memo.get(X.copy(), ("a", 1), lambda: pytest.fail("recomputed on a hit"))
    assert (hit1, hit2) == (False, True) and v2 is v1 and s2 == s1 >= 0.05
    with pytest.raises(ValueError):  # read-only: a consumer cannot change what the next fit gets
        v2[0] = 1.0
    # other data (even one bit) or another key misses
    Y = X.copy()
    Y[0, 0] = np.nextafter(1.0, 2.0)
    assert memo.get(Y, ("a", 1), lambda: 7)[2] is False
    assert memo.get(Y, ("a", 2), lambda: 8)[2] is False
    assert memo.get(X, ("a", 1), lambda: 9)[0] is v1
    assert (memo.hits, memo.misses) == (2, 3)


def test_memo_is_bounded_oldest_first():
    memo = sharedwork.SharedWork()
    memo.max_bytes = 3 * 800
    for i in range(5):
        memo.get(np.full(3, i), "x", lambda: np.zeros(100))  # 800 bytes each
    assert memo.nbytes == 3 * 800
    assert memo.get(np.full(3, 0), "x", lambda: 1)[2] is False  # dropped: recomputed
    assert memo.get(np.full(3, 4), "x", lambda: 1)[2] is True


@pytest.mark.parametrize("base", ["SpectralGraphKernel", "ClusterKernel"])
def test_shared_spectrum_same_bits_as_the_learner_and_charges_the_first_fit(base):
    X, y = _data()
    plain = getattr(__import__("nystrom_bench.learners", fromlist=[base]), base)
    kw = {"gamma": 0.2} if base == "ClusterKernel" else {}
    ref = plain(n_components=12, **kw).fit(X, y)
    cls = shared_spectrum(base)
    first = cls(n_components=12, **kw).fit(X, y)
    y2 = y.copy()
    y2[[5, 6]] = [0, 1]  # another labelled set (another seed): the spectrum is label-free
    second = cls(n_components=12, **kw).fit(X, y2)
    assert first.shared_seconds_ == 0.0 and second.shared_seconds_ > 0.0
    assert sharedwork.MEMO.hits == 1 and sharedwork.MEMO.misses == 1
    for attr in ("factor_", "eigenvalues_"):
        np.testing.assert_array_equal(getattr(first, attr), getattr(ref, attr))
    np.testing.assert_array_equal(second.eigenvalues_, ref.eigenvalues_)
    ref2 = plain(n_components=12, **kw).fit(X, y2)
    np.testing.assert_array_equal(second.factor_, ref2.factor_)
    # the row charges the reused seconds: _LinearOnFactor carries them
    def learn(X, y):
        m = cls(n_components=12, **kw).fit(X, y)
        return m, m.transform(X)

    est = _LinearOnFactor(learn, 1.0, 0).fit(X, y)
    assert est.shared_seconds_ == second.shared_seconds_


def test_shared_kmeans_same_centres_and_stream_as_the_sampler_and_charges_the_reuse():
    X, _ = _data(2, n=200)
    kern = kernels.make("gaussian", gamma=0.3)
    ref_rng = np.random.default_rng(5)
    ref = sampling.kmeans(X, kern, 12, ref_rng)
    after = ref_rng.random(3)  # what a fit draws after its landmarks
    draws = []
    for _ in range(2):  # a second method (or coord) of the same (data set, seed): the same stream
        rng, sampler = np.random.default_rng(5), SharedKMeans()
        Z = sampling.choose_landmarks(X, kern, 12, sampler=sampler, seed=rng)
        np.testing.assert_array_equal(Z, ref)
        np.testing.assert_array_equal(rng.random(3), after)  # the stream left where k-means left it
        draws.append(sampler.shared_seconds)
    assert draws[0] == 0.0 and draws[1] > 0.0
    assert (sharedwork.MEMO.hits, sharedwork.MEMO.misses) == (1, 1)
    # another stream state, count or data misses, and gives the sampler's own centres
    X2 = X.copy()
    X2[0, 0] = np.nextafter(X2[0, 0], 10)
    for data, c, seed in [(X, 12, 6), (X, 13, 5), (X2, 12, 5)]:
        sampler = SharedKMeans()
        Z = sampler(data, kern, c, np.random.default_rng(seed))
        assert sampler.shared_seconds == 0.0
        np.testing.assert_array_equal(Z, sampling.kmeans(data, kern, c, np.random.default_rng(seed)))
    assert sharedwork.MEMO.misses == 4
    # a fit that reused the centres charges their seconds to its row (_LinearOnFactor)
    est = _LinearOnFactor(lambda X, y: (None, X), 1.0, 0)  # the factor: X itself
    est.sampler = SharedKMeans()
    est.sampler(X, kern, 12, np.random.default_rng(5))
    y = np.full(len(X), -1)
    y[[0, 1, -2, -1]] = [0, 0, 1, 1]
    assert est.fit(X, y).shared_seconds_ == est.sampler.shared_seconds == draws[1]


def test_spectral_eigenpairs_are_the_laplacians():
    X, y = _data(1)
    sk = shared_spectrum("SpectralGraphKernel")(n_components=8).fit(X, y)
    L = knn_laplacian(X, 10)
    w = linalg.eigvalsh(L)[:8]
    np.testing.assert_allclose(sk.eigenvalues_, w, atol=1e-9)


def test_shared_spectrum_misses_on_other_data_or_parameters():
    X, y = _data()
    cls = shared_spectrum("ClusterKernel")
    cls(gamma=0.2, n_components=10).fit(X, y)
    other_gamma = cls(gamma=0.2 * (1 + 1e-15), n_components=10).fit(X, y)
    other_rank = cls(gamma=0.2, n_components=11).fit(X, y)
    X2 = X.copy()
    X2[0, 0] += 1e-12
    other_data = cls(gamma=0.2, n_components=10).fit(X2, y)
    assert [e.shared_seconds_ for e in (other_gamma, other_rank, other_data)] == [0.0] * 3
    assert sharedwork.MEMO.hits == 0 and sharedwork.MEMO.misses == 4
    np.testing.assert_array_equal(other_data.eigenvalues_,
                                  ClusterKernel(gamma=0.2, n_components=10).fit(X2, y).eigenvalues_)
    spec = shared_spectrum("SpectralGraphKernel")
    spec(n_neighbors=5, n_components=10).fit(X2, y)
    assert spec(n_neighbors=6, n_components=10).fit(X2, y).shared_seconds_ == 0.0
    np.testing.assert_array_equal(spec(n_neighbors=6, n_components=10).fit(X2, y).eigenvalues_,
                                  SpectralGraphKernel(n_neighbors=6, n_components=10).fit(X2, y).eigenvalues_)


@pytest.mark.parametrize(("approximation", "opts"), [("exact", {}), ("optimal", {"rank": 5}),
                                                     ("mcm", {"grid": [8, 8]})])
def test_deterministic_criterion_values_shared_with_their_seconds(approximation, opts):
    g = np.linspace(0, 1, 8)
    X = np.array([[a, b] for a in g for b in g])
    y = np.sin(3 * X[:, 0]) - X[:, 1]
    common = {"mu": 0.005, "noise_sd": 0.01, "spectrum": "exact"}
    crit = ("c_ree", "c_ipe")
    ref = selection.criterion_values(X, y, 20.0, approximation, crit, **common, **opts)
    first = deterministic_values(X, y, 20.0, approximation, crit, common, opts)
    again = deterministic_values(X.copy(), y.copy(), 20.0, approximation, crit, common, opts)
    assert {k: v[0] for k, v in first.items()} == {k: v[0] for k, v in ref.items()}
    assert again == first  # the values' bits and the one computation's seconds: charged to the reusing row
    assert sharedwork.MEMO.hits == 1
    # another width, another target or another setting misses
    deterministic_values(X, y, 20.0 * (1 + 1e-15), approximation, crit, common, opts)
    deterministic_values(X, y + 1e-12, 20.0, approximation, crit, common, opts)
    deterministic_values(X, y, 20.0, approximation, crit, {**common, "mu": 0.01}, opts)
    # exact and optimal also keep K's tridiagonal reduction: missed by the first call and the other width,
    # reused by the other target and setting (the same K); MCM its grid spacing: the same for every call here
    hits, misses = {"exact": (2, 2), "optimal": (2, 2), "mcm": (3, 1)}[approximation]
    assert sharedwork.MEMO.hits == 1 + hits and sharedwork.MEMO.misses == 4 + misses


def test_top_eigenpairs_from_one_tridiagonal_reduction_are_top_eighs_bits():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4))
    for K in (kernels.make("gaussian", gamma=0.2)(X), np.cov(rng.normal(size=(200, 300)))):
        tri = sharedwork.tridiagonal(K)
        for k in (1, 5, 17, 60, 199):
            w0, U0 = lowrank.top_eigh(K, k)
            w1, U1 = sharedwork.top_eigh_tridiagonal(tri, k)
            np.testing.assert_array_equal(w1, w0)
            np.testing.assert_array_equal(U1, U0)
        np.testing.assert_allclose(w1[:5], np.linalg.eigvalsh(K)[::-1][:5], rtol=1e-10)
        assert sharedwork.top_eigh_tridiagonal(tri, 200) is None  # k = n: dsyevr's other path, not replicated
    assert sharedwork.tridiagonal(K.astype(np.float32)) is None and sharedwork.tridiagonal(K * 1e-120) is None


def test_shared_leverage_same_landmarks_charged_and_keyed_on_the_kernel_matrix():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 3))
    kern = kernels.make("gaussian", gamma=0.3)
    draws = []
    for c in (6, 15, 40):
        s = SharedLeverage()
        ours = sampling.sample(s, X, kern, c, seed=np.random.default_rng(c))
        np.testing.assert_array_equal(ours, sampling.sample("leverage", X, kern, c, seed=np.random.default_rng(c)))
        draws.append(s.shared_seconds)
    assert draws[0] == 0.0 and draws[1] == draws[2] > 0.0  # the first computed it; the others are charged it
    est = type("Fitted", (), {"sampler": s})()
    assert charged_seconds(est) == draws[2] and charged_seconds(type("Plain", (), {"sampler": "uniform"})()) == 0.0
    # another width or other data: another K, a miss
    s = SharedLeverage()
    sampling.sample(s, X, kernels.make("gaussian", gamma=0.3 * (1 + 1e-15)), 15, seed=0)
    assert s.shared_seconds == 0.0
    sampling.sample(s, X[1:], kern, 15, seed=0)
    assert s.shared_seconds == 0.0 and (sharedwork.MEMO.hits, sharedwork.MEMO.misses) == (2, 3)


def test_memo_holds_one_study_and_data_set_at_a_time():
    memo = sharedwork.SharedWork()
    memo.enter("gen_nystrom", "segment")
    memo.get(np.ones(3), "x", lambda: np.zeros(4))
    memo.enter("gen_nystrom", "segment")  # the same: kept
    assert memo.get(np.ones(3), "x", lambda: None)[2] is True
    memo.enter("gen_nystrom", "german_keel")  # another data set: dropped
    assert memo.nbytes == 0 and memo.get(np.ones(3), "x", lambda: 1)[:3:2] == (1, False)


def test_memo_apart_keeps_the_warm_up_to_itself():
    memo = sharedwork.SharedWork()
    memo.get(np.ones(3), "x", lambda: 1)
    with memo.apart():
        assert memo.get(np.ones(3), "x", lambda: 2)[:3:2] == (2, False)
        memo.get(np.zeros(3), "y", lambda: 3)
    assert memo.get(np.ones(3), "x", lambda: None)[0] == 1 and memo.get(np.zeros(3), "y", lambda: 4)[0] == 4


@pytest.mark.parametrize("kind", ["gen_nystrom", "consistency", "integration"])
def test_the_kinds_warm_up_apart(kind, monkeypatch):
    import logging

    from nystrom_bench import studies

    seen = []  # the study loop's warm-up (Study._warm_up around every kind's warm_up) works in a memo apart
    monkeypatch.setattr(studies.Study, "warm_up", lambda self, *a, **k: seen.append(sharedwork.MEMO._store) or None)
    sharedwork.MEMO.get(np.ones(2), "kept", lambda: 1)
    studies.get(kind)._warm_up(logging.getLogger("test"))
    assert seen and seen[0] is not sharedwork.MEMO._store and sharedwork.MEMO.get(np.ones(2), "kept", lambda: 0)[2]
