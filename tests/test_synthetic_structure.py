"""The synthetic data sets with a known spectral structure: shapes, determinism, and that the structure is there.

Margins of the spectral checks come from measured values (median-width Gaussian kernel, lam = 1e-3,
500-point subsamples, seeds 0-2): coherence 5.3-5.8 (unequal_clusters, outliers) vs 1.5 (slow_decay);
leverage Gini 0.42-0.70 vs 0.10; decay 0.01 (fast_decay) vs 0.23 (slow_decay); d_eff ratio 0.023 vs 0.29.
"""

import numpy as np
import pytest

from nystrom_bench import approx, data, kernels, spectrum
from nystrom_bench.data import synthetic

STRUCTURE = ["unequal_clusters", "outliers", "fast_decay", "slow_decay"]


@pytest.fixture(scope="module")
def raw():
    return {name: data.obtain(name) for name in STRUCTURE}


@pytest.fixture(scope="module")
def props(raw):
    out = {}
    for name, (X, _) in raw.items():
        kern = kernels.make("gaussian", gamma=kernels.heuristics.resolve_width("median", X))
        out[name] = spectrum.properties(X, kern, 1e-3, max_points=500, seed=0)
    return out


@pytest.mark.parametrize("name", STRUCTURE)
def test_registered_offline_with_shape_and_description(raw, name):
    e = data.info(name)
    X, y = raw[name]
    assert e["source"] == f"synthetic:{name}" and e["task"] == "regression"
    assert X.shape == tuple(e["shape"]) and y.shape == (X.shape[0],)
    assert 1900 <= len(X) <= 3000
    assert np.isfinite(X).all() and np.isfinite(y).all() and y.std() > 0.3
    assert len(e["description"]) > 80


@pytest.mark.parametrize("name", STRUCTURE)
def test_deterministic_and_seeded_by_name(raw, name):
    X, y = data.obtain(name)
    np.testing.assert_array_equal(X, raw[name][0])
    np.testing.assert_array_equal(y, raw[name][1])
    X2, _ = synthetic.generate(name, data.info(name).get("params", {}), name + "_other")
    assert X2.shape == X.shape and not np.allclose(X2, X)
    a, b = data.load(name, seed=3), data.load(name, seed=3)
    np.testing.assert_array_equal(a.y_train, b.y_train)  # the training noise is seeded too
    assert not np.array_equal(a.y_train, data.load(name, seed=4).y_train)


def test_bad_params_are_a_data_error():
    with pytest.raises(data.DataError, match="bad params for synthetic:outliers"):
        synthetic.generate("outliers", {"n_points": 10}, "x")


def _clusters(X):
    """Label each point by its cell of the unit lattice through the densest cluster's mean; labels and centres."""
    dense = np.argmax((np.linalg.norm(X[::10, None] - X[None], axis=2) < 0.3).sum(axis=1)) * 10
    c0 = X[np.linalg.norm(X - X[dense], axis=1) < 0.5].mean(axis=0)  # a centre (spacing 1 apart)
    _, label = np.unique(np.round(X - c0).astype(int), axis=0, return_inverse=True)
    label = label.ravel()
    centres = np.array([X[label == k].mean(axis=0) for k in range(label.max() + 1)])
    return label, centres


def test_unequal_clusters_sizes_separation_and_target(raw):
    X, y = raw["unequal_clusters"]
    label, centres = _clusters(X)
    assert sorted(np.bincount(label).tolist()) == [15] * 29 + [1500]
    spread = np.sqrt(np.mean(np.sum((X - centres[label]) ** 2, axis=1)) / 2)
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)[np.triu_indices(30, 1)]
    assert spread == pytest.approx(0.1, rel=0.1)
    assert gaps.min() > 0.9 and gaps.min() > 5 * spread  # spacing well above the spread
    # every point is nearer its own centre than any other: the clusters do not touch
    d = np.linalg.norm(X[:, None] - centres[None], axis=2)
    assert np.array_equal(np.argmin(d, axis=1), label)
    # the noise-free target is constant on each cluster and differs between clusters
    for k in range(30):
        assert np.ptp(y[label == k]) == 0
    assert np.std([y[label == k][0] for k in range(30)]) > 0.5


def test_unequal_clusters_missing_clusters_costs_test_error(raw):
    """Nystrom KRR (lam = 1e-5) on 40 landmarks: 11 in the big cluster + 1 per small one learns the target;
    40 in the big cluster miss the small ones, whose test points then get about 0 (their mean square target)."""
    X, y = raw["unequal_clusters"]
    label, _ = _clusters(X)
    big = np.argmax(np.bincount(label))
    rng = np.random.default_rng(0)
    train = np.sort(rng.permutation(len(X))[: int(0.7 * len(X))])
    test = np.setdiff1d(np.arange(len(X)), train)
    kern = kernels.make("gaussian", gamma=kernels.heuristics.resolve_width("median", X[train]))
    lt, small = label[train], label[test] != big
    in_big = np.flatnonzero(lt == big)
    cover = np.concatenate([np.flatnonzero(lt == k)[:1] for k in range(30) if k != big] + [in_big[:11]])
    missing = in_big[:40]

    def errors(landmarks):
        op = approx.build("nystrom", X[train], kern, landmarks=landmarks)
        V = op.factor()
        w = np.linalg.solve(V.T @ V + 1e-5 * len(train) * np.eye(V.shape[1]), V.T @ y[train])
        e = (op.features(X[test]) @ w - y[test]) ** 2
        return 1 - e.mean() / np.var(y[test]), e[small].mean()

    (r2_cover, small_cover), (r2_miss, small_miss) = errors(cover), errors(missing)
    assert r2_cover > 0.9 and r2_cover > r2_miss + 0.2, (r2_cover, r2_miss)
    assert small_miss > 0.9 * np.mean(y[test][small] ** 2) and small_miss > 4 * small_cover, (small_miss, small_cover)


def test_outliers_are_far_and_two_percent(raw):
    X, _ = raw["outliers"]
    r = np.linalg.norm(X, axis=1)
    far = r > 7  # a 5-D standard normal exceeds radius 7 with probability ~1e-9
    assert far.sum() == 40
    np.testing.assert_allclose(r[far], 10.0)
    assert r[~far].max() < 6 and abs(np.median(r[~far]) - np.sqrt(5)) < 0.3


def test_fast_decay_lies_near_a_four_dimensional_subspace(raw):
    X, _ = raw["fast_decay"]
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    assert s[3] > 100 * s[4]  # four directions hold the data, the rest is the 1e-3 noise
    assert s[4] < 1e-3 * np.sqrt(len(X)) * 1.5


def test_slow_decay_is_uniform_in_the_cube(raw):
    X, _ = raw["slow_decay"]
    assert X.min() >= 0 and X.max() <= 1
    np.testing.assert_allclose(X.mean(axis=0), 0.5, atol=0.03)
    np.testing.assert_allclose(X.var(axis=0), 1 / 12, rtol=0.1)


def test_coherence_ranks_clusters_and_outliers_above_slow_decay(props):
    slow = props["slow_decay"]
    for name in ("unequal_clusters", "outliers"):
        assert props[name]["coherence"] > 2.5 * slow["coherence"], (name, props[name], slow)
        assert props[name]["leverage_gini"] > 3 * slow["leverage_gini"], (name, props[name], slow)


def test_fast_decay_decays_faster_than_slow_decay(props):
    fast, slow = props["fast_decay"], props["slow_decay"]
    assert fast["decay"] < slow["decay"] / 5, (fast, slow)
    assert fast["d_eff_ratio"] < slow["d_eff_ratio"] / 4, (fast, slow)
