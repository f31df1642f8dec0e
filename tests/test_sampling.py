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
