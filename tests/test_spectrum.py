"""spectrum: Nystrom factors, approximation errors and data-set properties against dense textbook numbers."""

import numpy as np
import pytest

from nystrom_bench import kernels, sampling, spectrum
from nystrom_bench.sampling import Sketch

N = 200


@pytest.fixture
def data():
    X = np.random.default_rng(1).normal(size=(N, 3))
    kern = kernels.make("gaussian", gamma=0.4)
    return X, kern, kern(X)


def textbook_nystrom(C, W):
    """C pinv(W) C^T with NumPy's pseudo-inverse (relative cut 1e-10, the project's RCOND)."""
    return C @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ C.T


def _lev(K, lam):
    """Ridge leverage scores diag(K (K + lam n I)^-1), by a dense solve."""
    n = len(K)
    return np.diag(np.linalg.solve(K + lam * n * np.eye(n), K))  # (K + aI)^-1 K = K (K + aI)^-1


def _gini_pairs(v):
    """The Gini coefficient from its definition: mean absolute difference over twice the mean."""
    return np.abs(v[:, None] - v[None, :]).sum() / (2 * len(v) ** 2 * v.mean())


# -- nystrom_factor ----------------------------------------------------------------------------
def test_factor_from_indices_is_textbook(data):
    X, kern, K = data
    idx = np.array([0, 5, 17, 33, 60, 61, 90, 120, 150, 199])
    F = spectrum.nystrom_factor(X, kern, idx)
    assert F.shape == (N, len(idx)) and F.dtype == np.float64
    np.testing.assert_allclose(F @ F.T, textbook_nystrom(K[:, idx], K[np.ix_(idx, idx)]), atol=1e-9)


def test_factor_from_points_is_textbook(data):
    X, kern, K = data
    Z = np.random.default_rng(2).normal(size=(12, 3))
    F = spectrum.nystrom_factor(X, kern, Z)
    np.testing.assert_allclose(F @ F.T, textbook_nystrom(kern(X, Z), kern(Z)), atol=1e-9)


def test_factor_from_sketch_is_textbook(data):
    X, kern, K = data
    S = Sketch(np.random.default_rng(3).normal(size=(N, 15)))
    F = spectrum.nystrom_factor(X, kern, S)
    C = K @ np.asarray(S)
    np.testing.assert_allclose(F @ F.T, textbook_nystrom(C, np.asarray(S).T @ C), atol=1e-8)


def test_factor_of_duplicate_landmarks_drops_the_null_space(data):
    X, kern, K = data
    idx = np.array([3, 3, 8, 40, 40, 41])  # W singular: pinv, not an inverse
    F = spectrum.nystrom_factor(X, kern, idx)
    assert F.shape[1] == 4
    np.testing.assert_allclose(F @ F.T, textbook_nystrom(K[:, idx], K[np.ix_(idx, idx)]), atol=1e-9)


def test_given_factor_is_returned_as_is(data):
    X, kern, _ = data
    G = np.random.default_rng(0).normal(size=(N, 4))
    np.testing.assert_array_equal(spectrum.nystrom_factor(X, kern, landmarks=None, factor=G), G)
    # a sampler's info["factor"] is such an F: the Nystrom approximation on its own landmarks
    info = {}
    idx = sampling.sample("rpcholesky", X, kern, 10, seed=0, info=info)
    F = spectrum.nystrom_factor(X, kern, idx, factor=info["factor"])
    np.testing.assert_allclose(F @ F.T, spectrum.nystrom_factor(X, kern, idx) @ spectrum.nystrom_factor(X, kern, idx).T,
                               atol=1e-8)


@pytest.mark.parametrize("kwargs, match", [
    (dict(landmarks=None), "pass landmarks="),
    (dict(landmarks=None, factor=np.ones((N - 1, 3))), r"shape \(n, r\)"),
    (dict(landmarks=None, factor=np.ones(N)), r"shape \(n, r\)"),
    (dict(landmarks=None, factor=np.full((N, 2), np.nan)), "NaN"),
    (dict(landmarks=np.array([0, N])), r"indices must lie in \[0, 200\)"),
    (dict(landmarks=np.ones((4, 2))), "landmark points"),
    (dict(landmarks=Sketch(np.ones((N - 1, 3)))), "sketch must have shape"),
])
def test_factor_bad_input_is_a_value_error(data, kwargs, match):
    X, kern, _ = data
    with pytest.raises(ValueError, match=match):
        spectrum.nystrom_factor(X, kern, **kwargs)


# -- trace_error -------------------------------------------------------------------------------
def test_trace_error_is_the_relative_trace_norm(data):
    X, kern, K = data
    F = spectrum.nystrom_factor(X, kern, np.arange(0, N, 9))
    R = K - F @ F.T
    err = spectrum.trace_error(X, kern, F)
    assert err == pytest.approx(np.trace(R) / np.trace(K), rel=1e-10)
    # K - F F^T is PSD for Nystrom (Gittens & Mahoney 2016, Lemma 1): its trace is its nuclear norm
    assert err == pytest.approx(np.linalg.norm(R, "nuc") / np.trace(K), rel=1e-6)
    assert 0 < err < 1


def test_trace_error_shrinks_with_nested_landmarks(data):
    """Nested landmark sets: K - F F^T decreases in the Loewner order, so every error shrinks."""
    X, kern, _ = data
    order = np.random.default_rng(4).permutation(N)
    errs = [spectrum.trace_error(X, kern, spectrum.nystrom_factor(X, kern, order[:c])) for c in (5, 10, 20, 40)]
    assert all(a > b for a, b in zip(errs[:-1], errs[1:], strict=True)), errs
    assert spectrum.trace_error(X, kern, spectrum.nystrom_factor(X, kern, np.arange(N))) == pytest.approx(0, abs=1e-8)


def test_trace_error_rejects_a_bad_factor(data):
    X, kern, _ = data
    with pytest.raises(ValueError, match="trace_error"):
        spectrum.trace_error(X, kern, np.ones((3, 2)))


# -- subsample_errors --------------------------------------------------------------------------
@pytest.mark.parametrize("eigsh_min", [10**9, 10])  # the eigvalsh path, then the Lanczos path
@pytest.mark.parametrize("rows", ["all", "some"])
def test_subsample_errors_equal_dense_norms(data, monkeypatch, eigsh_min, rows):
    monkeypatch.setattr(spectrum, "EIGSH_MIN", eigsh_min)
    X, kern, K = data
    F = spectrum.nystrom_factor(X, kern, np.arange(1, N, 11))
    idx = np.arange(N) if rows == "all" else spectrum.subsample(N, 120, 5)
    KS, FS = K[np.ix_(idx, idx)], F[idx]
    R = KS - FS @ FS.T
    err = spectrum.subsample_errors(X, kern, F, idx)
    assert err["frobenius"] == pytest.approx(np.linalg.norm(R, "fro") / np.linalg.norm(KS, "fro"), rel=1e-9)
    assert err["spectral"] == pytest.approx(np.linalg.norm(R, 2) / np.linalg.norm(KS, 2), rel=1e-7)


def test_subsample_errors_of_a_non_psd_residual(data, monkeypatch):
    """A factor that overshoots K (not Nystrom): the spectral norm is the largest |eigenvalue|, of either sign."""
    X, kern, K = data
    F = 1.5 * spectrum.nystrom_factor(X, kern, np.arange(0, N, 7))
    R = K - F @ F.T
    assert np.linalg.eigvalsh(R)[0] < -abs(np.linalg.eigvalsh(R)[-1])  # the negative side dominates
    for eigsh_min in (10**9, 10):
        monkeypatch.setattr(spectrum, "EIGSH_MIN", eigsh_min)
        err = spectrum.subsample_errors(X, kern, F, np.arange(N))
        assert err["spectral"] == pytest.approx(np.linalg.norm(R, 2) / np.linalg.norm(K, 2), rel=1e-7)


@pytest.mark.parametrize("idx, match", [
    (np.array([0, 1, N]), r"\[0, 200\)"),
    (np.array([-1, 3]), r"\[0, 200\)"),
    (np.array([2, 2, 5]), "repeats rows"),
    (np.array([0.0, 1.0]), "integer row indices"),
    (np.array([], dtype=int), "non-empty"),
    (np.zeros((2, 2), dtype=int), "1-D"),
])
def test_subsample_errors_bad_idx_is_a_value_error(data, idx, match):
    X, kern, _ = data
    with pytest.raises(ValueError, match=match):
        spectrum.subsample_errors(X, kern, np.ones((N, 2)), idx)


def test_subsample_errors_bad_factor_is_a_value_error(data):
    X, kern, _ = data
    with pytest.raises(ValueError, match=r"shape \(n, r\) = \(200, r\)"):
        spectrum.subsample_errors(X, kern, np.ones((N, 2, 1)), np.arange(5))


# -- subsample ---------------------------------------------------------------------------------
def test_subsample_is_sorted_distinct_and_seeded():
    a = spectrum.subsample(1000, 50, 7)
    assert len(a) == 50 and len(np.unique(a)) == 50 and np.all(np.diff(a) > 0) and a.max() < 1000
    np.testing.assert_array_equal(a, spectrum.subsample(1000, 50, np.random.default_rng(7)))
    assert not np.array_equal(a, spectrum.subsample(1000, 50, 8))
    np.testing.assert_array_equal(spectrum.subsample(30, 30, 0), np.arange(30))
    with pytest.raises(ValueError, match="max_points"):
        spectrum.subsample(10, 0, 0)


def test_subsample_is_uniform():
    counts = np.bincount(np.concatenate([spectrum.subsample(20, 5, s) for s in range(4000)]), minlength=20)
    # each index is drawn with probability 1/4: 1000 expected per index, sd ~ 27
    assert np.all(np.abs(counts - 1000) < 150), counts


# -- properties --------------------------------------------------------------------------------
def brute_properties(K, lam):
    n = len(K)
    lev = _lev(K, lam)
    d_eff = np.trace(np.linalg.solve(K + lam * n * np.eye(n), K))
    s = np.sort(np.linalg.eigvalsh(K))[::-1]
    k = next(k for k in range(1, n + 1) if s[:k].sum() >= 0.9 * s.sum() - 1e-12 * s.sum())
    return {"d_eff_ratio": d_eff / n, "decay": k / n, "coherence": lev.max() * n / d_eff,
            "leverage_gini": _gini_pairs(lev)}


@pytest.mark.parametrize("lam", [1e-4, 1e-2])
def test_properties_equal_brute_force(data, lam):
    X, kern, K = data
    got = spectrum.properties(X, kern, lam, max_points=N)
    want = brute_properties(K, lam)
    assert tuple(got) == spectrum.PROPERTIES
    for key in spectrum.PROPERTIES:
        assert got[key] == pytest.approx(want[key], rel=1e-8), key
    assert 0 < got["d_eff_ratio"] < 1 and 0 < got["decay"] <= 1 and got["coherence"] >= 1
    assert 0 <= got["leverage_gini"] < 1


def test_properties_on_a_subsample_are_those_of_the_subsample(data):
    X, kern, _ = data
    idx = spectrum.subsample(N, 80, 3)
    got = spectrum.properties(X, kern, 1e-3, max_points=80, seed=3)
    want = brute_properties(kern(X[idx]), 1e-3)
    for key in spectrum.PROPERTIES:
        assert got[key] == pytest.approx(want[key], rel=1e-8), key


def test_identity_like_kernel_has_coherence_one():
    """A tiny width: K = I up to 1e-40, every leverage score 1 / (1 + lam n): spread evenly."""
    X = np.random.default_rng(0).normal(size=(150, 4))
    p = spectrum.properties(X, kernels.make("gaussian", gamma=1e4), lam=1e-3)
    assert p["coherence"] == pytest.approx(1.0, abs=1e-10)
    assert p["leverage_gini"] == pytest.approx(0.0, abs=1e-10)
    assert p["d_eff_ratio"] == pytest.approx(1 / (1 + 1e-3 * 150), rel=1e-10)
    assert p["decay"] == pytest.approx(np.ceil(0.9 * 150) / 150)  # flat spectrum: 90% of the eigenvalues


def test_a_lone_point_raises_coherence():
    """One far point is a 1 x 1 block of K: its leverage score is 1 / (1 + lam n), the largest, and coherence grows."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(scale=0.3, size=(199, 2)), [[50.0, 50.0]]])
    kern = kernels.make("gaussian", gamma=0.5)
    lam = 1e-3
    lone = spectrum.properties(X, kern, lam)
    bulk = spectrum.properties(X[:199], kern, lam)
    lev = _lev(kern(X), lam)
    assert np.argmax(lev) == 199 and lev[199] == pytest.approx(1 / (1 + lam * 200), rel=1e-10)
    assert lone["coherence"] == pytest.approx(lev[199] * 200 / lev.sum(), rel=1e-8)
    assert lone["coherence"] > 1.5 * bulk["coherence"]
    assert lone["leverage_gini"] > bulk["leverage_gini"]


@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan, np.inf])
def test_properties_bad_lam_is_a_value_error(data, lam):
    X, kern, _ = data
    with pytest.raises(ValueError, match="lam must be"):
        spectrum.properties(X, kern, lam)
