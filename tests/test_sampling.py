import numpy as np
import pytest

from nystrom_bench import kernels, sampling


@pytest.fixture
def kern():
    return kernels.make("gaussian", gamma=0.5)


@pytest.mark.parametrize("name", ["uniform", "column_norm", "leverage"])
def test_reproducible_distinct_in_range(name, X, kern):
    a = sampling.sample(name, X, kern, c=15, seed=3)
    b = sampling.sample(name, X, kern, c=15, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.dtype.kind == "i" and len(np.unique(a)) == 15
    assert a.min() >= 0 and a.max() < len(X)
    assert not np.array_equal(a, sampling.sample(name, X, kern, c=15, seed=4))


def test_all_columns_is_a_permutation(X, kern):
    idx = sampling.sample("uniform", X, kern, c=len(X), seed=0)
    np.testing.assert_array_equal(np.sort(idx), np.arange(len(X)))


def _frequencies(draw, n, trials):
    counts = np.zeros(n)
    for t in range(trials):
        counts[draw(t)] += 1
    return counts / counts.sum()


def test_column_norm_distribution_matches_formula(kern, rng):
    X = np.concatenate([rng.normal(size=(4, 2)), rng.normal(size=(4, 2)) * 0.05 + 3])
    K = kern(X)
    p = (K**2).sum(0) / (K**2).sum()
    freq = _frequencies(lambda t: sampling.sample("column_norm", X, kern, c=1, seed=t, replace=True), 8, 6000)
    np.testing.assert_allclose(freq, p, atol=0.02)


def test_leverage_distribution_matches_formula(kern, rng):
    X = rng.normal(size=(8, 2))
    w, U = np.linalg.eigh(kern(X))
    k = 3
    p = (U[:, -k:] ** 2).sum(1) / k
    freq = _frequencies(lambda t: sampling.sample("leverage", X, kern, c=1, seed=t, rank=k), 8, 6000)
    np.testing.assert_allclose(freq, p, atol=0.02)


def test_column_norm_with_replacement_may_repeat(kern, X):
    idx = sampling.sample("column_norm", X, kern, c=200, seed=0, replace=True) if len(X) >= 200 else \
        sampling.sample("column_norm", np.repeat(X, 4, axis=0), kern, c=200, seed=0, replace=True)
    assert len(np.unique(idx)) < 200


def test_kmeans_returns_points(X, kern):
    Z = sampling.sample("kmeans", X, kern, c=7, seed=0)
    assert Z.shape == (7, X.shape[1])


@pytest.mark.parametrize("c", [0, 61])
def test_bad_c(X, kern, c):
    with pytest.raises(ValueError, match="need 1 <= c <= n"):
        sampling.sample("uniform", X, kern, c=c, seed=0)


def test_unknown_sampler(X, kern):
    with pytest.raises(ValueError, match="unknown sampler 'nope'; choose one of .*uniform"):
        sampling.sample("nope", X, kern, c=3)


NEW = ["ridge_leverage", "adaptive_deshpande", "adaptive_kumar", "adaptive_ms"]


@pytest.mark.parametrize("name", NEW)
def test_new_samplers_reproducible_distinct(name, kern, rng):
    X = rng.normal(size=(300, 3))
    y = np.sign(X[:, 0])
    a = sampling.sample(name, X, kern, c=40, seed=5, y=y) if name == "adaptive_ms" else \
        sampling.sample(name, X, kern, c=40, seed=5)
    b = sampling.sample(name, X, kern, c=40, seed=5, y=y) if name == "adaptive_ms" else \
        sampling.sample(name, X, kern, c=40, seed=5)
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) == 40 and a.min() >= 0 and a.max() < 300


def _clustered(rng):
    """A dense blob and a few far points: uniform sampling misses the far points."""
    return np.concatenate([rng.normal(size=(190, 2)) * 0.3, rng.normal(size=(10, 2)) * 0.3 + 6])


@pytest.mark.parametrize("name", ["adaptive_deshpande", "ridge_leverage"])
def test_adaptive_samplers_reduce_residual_against_uniform(name, kern, rng):
    # not adaptive_kumar: its residual lives on the sampled columns only, so rows of a cluster
    # that no sampled column reaches are ~0 and it cannot discover that cluster (tested below)
    X = _clustered(rng)
    K = kern(X)

    def err(idx):
        from nystrom_bench import approx
        return np.linalg.norm(K - approx.build("nystrom", X, kern, landmarks=idx).dense())

    e_ad = np.mean([err(sampling.sample(name, X, kern, c=12, seed=t)) for t in range(8)])
    e_un = np.mean([err(sampling.sample("uniform", X, kern, c=12, seed=t)) for t in range(8)])
    assert e_ad < e_un


def _dense_residual(K, idx, k):
    """C - C~ on the sampled columns with the rank-k Nystrom approximation, textbook."""
    C, W = K[:, idx], K[np.ix_(idx, idx)]
    w, U = np.linalg.eigh(W)
    top = np.argsort(w)[::-1][:k]
    Wk_pinv = U[:, top] @ np.diag(1 / w[top]) @ U[:, top].T
    return C - C @ Wk_pinv @ C[idx].T


def test_kumar_and_ms_scores_match_formulas(kern, rng):
    from nystrom_bench.approx import lowrank_pinv_factor

    X = rng.normal(size=(15, 2))
    K = kern(X)
    idx = np.array([0, 3, 5, 9])
    T, _ = lowrank_pinv_factor(K[np.ix_(idx, idx)], 2)
    R = _dense_residual(K, idx, 2)
    np.testing.assert_allclose(sampling.kumar_scores(K[:, idx], K[np.ix_(idx, idx)], idx, T), (R**2).sum(1),
                               atol=1e-12)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    yw = sampling._ms_labels(y)
    assert np.allclose(yw[y > 0], 1 / np.sum(y > 0)) and np.allclose(yw[y < 0], -1 / np.sum(y < 0))
    E = R * np.outer(yw, yw[idx])  # Ding et al. (AAAI 2019), Algorithm 2, step 3
    np.testing.assert_allclose(sampling.ms_scores(K[:, idx], K[np.ix_(idx, idx)], idx, T, yw), (E**2).sum(1),
                               atol=1e-14)
    # regression targets are used as they are
    np.testing.assert_array_equal(sampling._ms_labels(np.array([0.5, 1.5, 2.0])), [0.5, 1.5, 2.0])


def test_draw_follows_probabilities_and_excludes(rng):
    p = np.array([0.0, 1.0, 3.0, 0.0, 4.0, 2.0])
    draws = [sampling._draw(np.random.default_rng(t), p.copy(), 1, exclude=np.array([5]))[0] for t in range(4000)]
    freq = np.bincount(draws, minlength=6) / 4000
    np.testing.assert_allclose(freq, [0, 1 / 8, 3 / 8, 0, 4 / 8, 0], atol=0.03)
    # fewer positive entries than requested: the rest are filled uniformly, still distinct
    out = sampling._draw(rng, np.array([0, 0, 1.0, 0]), 3)
    assert len(set(out.tolist())) == 3 and 2 in out


def test_adaptive_rounds_never_repeat_and_start_uniform(kern, rng):
    X = rng.normal(size=(100, 2))
    y = X[:, 0]
    idx = sampling.sample("adaptive_ms", X, kern, c=30, seed=4, y=y, s=5)
    first = np.random.default_rng(4).choice(100, size=5, replace=False)
    np.testing.assert_array_equal(idx[:5], first)
    assert len(set(idx.tolist())) == 30


def test_adaptive_ms_needs_y(kern, X):
    with pytest.raises(ValueError, match="needs the training targets: pass y="):
        sampling.sample("adaptive_ms", X, kern, c=10, seed=0)


def test_gaussian_sketch(kern, X):
    from nystrom_bench.approx import Sketch

    S = sampling.sample("gaussian_sketch", X, kern, c=7, seed=0)
    assert isinstance(S, Sketch) and S.shape == (60, 7)
    np.testing.assert_array_equal(S, sampling.sample("gaussian_sketch", X, kern, c=7, seed=0))


def test_unknown_option(kern, X):
    with pytest.raises(ValueError, match="sampler 'uniform': .*unexpected keyword"):
        sampling.sample("uniform", X, kern, c=3, seed=0, bogus=1)


def test_column_norm_reuses_given_probabilities(rng):
    X = rng.normal(size=(60, 3))
    p = sampling.column_norm_probabilities(X, "gaussian")
    np.testing.assert_allclose(p.sum(), 1.0)
    a = sampling.sample("column_norm", X, "gaussian", c=20, seed=5, replace=True)
    b = sampling.sample("column_norm", X, "gaussian", c=20, seed=5, replace=True, probabilities=p)
    np.testing.assert_array_equal(a, b)


# -- uniform_adaptive2 (Wang & Zhang 2013) ---------------------------------------------------------


def test_uniform_adaptive2_reproducible_distinct_starts_uniform(kern, rng):
    X = rng.normal(size=(300, 3))
    a = sampling.sample("uniform_adaptive2", X, kern, c=40, seed=5)
    np.testing.assert_array_equal(a, sampling.sample("uniform_adaptive2", X, kern, c=40, seed=5))
    assert a.dtype.kind == "i" and len(np.unique(a)) == 40 and a.min() >= 0 and a.max() < 300
    assert not np.array_equal(a, sampling.sample("uniform_adaptive2", X, kern, c=40, seed=6))
    c1, c2, c3 = sampling.uniform_adaptive2_split(40)
    assert (c1, c2, c3) == (14, 13, 13)
    np.testing.assert_array_equal(a[:c1], np.random.default_rng(5).choice(300, size=c1, replace=False))


@pytest.mark.parametrize("kernel", [kernels.make("gaussian", gamma=0.5, block_bytes=8 * 25 * 4),
                                    kernels.make("linear", block_bytes=8 * 25 * 7)])
def test_residual_sq_norms_match_dense(kernel, rng):
    from nystrom_bench.approx import RCOND

    X = rng.normal(size=(25, 3))
    K = kernel(X)
    # the linear K has rank 3, so C below is rank-deficient and the cut-off matters
    for idx in ([0], [2, 7, 11, 19], [1, 4, 4, 9, 13, 20]):
        C = K[:, idx]
        dense = np.linalg.norm(K - C @ np.linalg.pinv(C, rcond=RCOND) @ K, axis=0) ** 2
        got = sampling.residual_sq_norms(X, kernel, C)
        assert got.min() >= 0
        np.testing.assert_allclose(got, dense, rtol=1e-8, atol=1e-10 * (K**2).sum(0).max())
    np.testing.assert_allclose(sampling.residual_sq_norms(X, kernel, np.zeros((25, 0))), (K**2).sum(0))
    with pytest.raises(ValueError, match="C must have shape"):
        sampling.residual_sq_norms(X, kernel, K[:10, :2])


def test_uniform_adaptive2_draws_follow_residual(kern, rng):
    # c = 2 split (1, 1, 0): one uniform index i, then j with P(j | i) ~ ||(K - P_{K[:, i]} K)[:, j]||^2
    X = np.concatenate([rng.normal(size=(4, 2)), rng.normal(size=(3, 2)) * 0.3 + 3])
    K, n, trials = kern(X), 7, 7000
    joint = np.zeros((n, n))
    for i in range(n):
        r = np.linalg.norm(K - np.outer(K[:, i], K[:, i]) / (K[:, i] @ K[:, i]) @ K, axis=0) ** 2
        r[i] = 0
        joint[i] = r / r.sum() / n
    counts = np.zeros((n, n))
    for t in range(trials):
        i, j = sampling.sample("uniform_adaptive2", X, kern, c=2, seed=t, fractions=(1, 1, 0))
        counts[i, j] += 1
    np.testing.assert_allclose(counts / trials, joint, atol=0.01)


def _blobs(rng, sizes=(150, 30, 10, 6, 4), sep=6.0):
    """Well-separated Gaussian blobs of unequal size: uniform landmarks tend to miss the small ones."""
    centres = [(sep * i, (i % 2) * sep) for i in range(len(sizes))]
    return np.concatenate([rng.normal(size=(m, 2)) * 0.5 + ctr for m, ctr in zip(sizes, centres, strict=True)])


def test_uniform_adaptive2_beats_uniform_for_modified_nystrom(kern, rng):
    from nystrom_bench import approx

    X = _blobs(rng)
    K = kern(X)

    def err(name, seed):
        idx = sampling.sample(name, X, kern, c=12, seed=seed)
        return np.linalg.norm(K - approx.build("modified_nystrom", X, kern, landmarks=idx).dense())

    e_ua2 = np.mean([err("uniform_adaptive2", t) for t in range(10)])
    e_un = np.mean([err("uniform", t) for t in range(10)])
    # on 6 data draws the ratio e_un / e_ua2 was 1.43 - 1.76 (c = 12 and 15)
    assert e_ua2 < 0.8 * e_un


@pytest.mark.parametrize("c", [1, 2, 3, 4, 5, 7, 8, 11, 29, 30])
def test_uniform_adaptive2_any_c(c, kern, rng):
    X = _blobs(rng, sizes=(20, 6, 4))
    c1, c2, c3 = sampling.uniform_adaptive2_split(c)
    assert c1 + c2 + c3 == c and c1 >= 1 and c2 == c3 == c // 3 and c1 - c2 <= 2
    idx = sampling.sample("uniform_adaptive2", X, kern, c=c, seed=c)
    assert len(idx) == c and len(np.unique(idx)) == c and idx.min() >= 0 and idx.max() < 30
    if c == 30:  # every column: a permutation, even though the residual is ~0 by then
        np.testing.assert_array_equal(np.sort(idx), np.arange(30))


def test_uniform_adaptive2_fractions(kern, rng):
    X = rng.normal(size=(50, 2))
    assert sampling.uniform_adaptive2_split(10, (0.5, 0.25, 0.25)) == (6, 2, 2)
    assert sampling.uniform_adaptive2_split(9, (1, 1, 1)) == (3, 3, 3)
    assert sampling.uniform_adaptive2_split(10, (0, 1, 1)) == (0, 5, 5)
    idx = sampling.sample("uniform_adaptive2", X, kern, c=10, seed=1, fractions=(0, 1, 1))
    assert len(np.unique(idx)) == 10
    # all uniform: the same draw as rng.choice
    np.testing.assert_array_equal(sampling.sample("uniform_adaptive2", X, kern, c=10, seed=1, fractions=(1, 0, 0)),
                                  np.random.default_rng(1).choice(50, size=10, replace=False))
    for bad in [(1, 1), (1, -1, 1), (0, 0, 0), (1, np.nan, 1)]:
        with pytest.raises(ValueError, match="fractions must be 3 non-negative"):
            sampling.sample("uniform_adaptive2", X, kern, c=10, seed=1, fractions=bad)


def test_registering_an_existing_name_is_an_error_unless_replaced():
    from nystrom_bench import sampling as smp

    with pytest.raises(ValueError, match="a sampler named 'uniform' exists already"):
        smp.register("uniform")(lambda X, kernel, c, rng: np.arange(c))
    original = smp._REGISTRY["uniform"]
    try:
        smp.register("uniform", replace=True)(lambda X, kernel, c, rng: np.arange(c))
        np.testing.assert_array_equal(smp.sample("uniform", np.zeros((5, 1)), "gaussian", c=2), [0, 1])
    finally:
        smp._REGISTRY["uniform"] = original


def test_a_function_is_a_sampler_wherever_a_name_is():
    from nystrom_bench import sampling as smp

    def last_rows(X, kernel, c, rng):
        return np.arange(len(X) - c, len(X))

    X = np.random.default_rng(0).normal(size=(10, 2))
    np.testing.assert_array_equal(smp.sample(last_rows, X, "gaussian", c=3, y=np.zeros(10)), [7, 8, 9])
    with pytest.raises(ValueError, match="unknown sampler 'nope'"):
        smp.sample("nope", X, "gaussian", c=3)


def test_exact_leverage_warns_above_its_size(monkeypatch):
    from nystrom_bench import sampling as smp

    monkeypatch.setattr(smp, "LEVERAGE_WARN_N", 50)
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.warns(UserWarning, match="ridge_leverage"):
        smp.sample("leverage", X, "gaussian", c=5, seed=0)


# -- what a draw costs: kernel entries and time (sampling.sample(info=...)) ----------------------------


def test_counting_kernel_counts_every_path():
    from nystrom_bench import kernels

    X = np.random.default_rng(0).normal(size=(30, 3))
    base = kernels.make("gaussian", gamma=0.5)
    k = kernels.counting(base)
    np.testing.assert_array_equal(k(X, X[:4]), base(X, X[:4]))
    assert k.entries == 120
    k.diag(X)
    assert k.entries == 150
    k.mmv(X, X[:5], np.ones(5))
    assert k.entries == 300
    sum(b.size for _, b in k.blocks(X[:7], X))
    assert k.entries == 510
    assert not hasattr(base, "entries") and type(k).__name__ == type(base).__name__
    assert kernels.counting(k).entries == 0  # a counter of a counter starts afresh


@pytest.mark.parametrize("name, expected", [("uniform", lambda n, c: 0),
                                             ("uniform_adaptive2", lambda n, c: n * (c - 2 * (c // 3)) + n * (c // 3) + 2 * n * n)])
def test_sample_reports_kernel_entries(name, expected):
    X = np.random.default_rng(1).normal(size=(40, 2))
    info = {}
    idx = sampling.sample(name, X, "gaussian", c=7, seed=0, info=info)
    assert len(idx) == 7
    assert info["kernel_entries"] == expected(40, 7)
    assert info["seconds"] >= 0
    info = {}
    sampling.choose_landmarks(X, "gaussian", landmarks=np.arange(3), info=info)
    assert info == {"kernel_entries": 0, "seconds": 0.0}
