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
