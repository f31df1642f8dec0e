import numpy as np
import pytest
from scipy.spatial.distance import cdist

from nystrom_bench import kernels


def dense_reference(name, X, Y, **p):
    """Textbook kernel formulas, entry by entry."""
    D2 = cdist(X, Y, "sqeuclidean")
    if name == "gaussian":
        return np.exp(-p["gamma"] * D2)
    if name == "laplacian":
        return np.exp(-p["gamma"] * cdist(X, Y, "cityblock"))
    if name == "polynomial":
        return (p["gamma"] * X @ Y.T + p["coef0"]) ** p["degree"]
    if name == "linear":
        return X @ Y.T
    if name == "epanechnikov":
        return np.maximum(1 - D2 / (2 * p["sigma"] ** 2), 0)
    raise AssertionError(name)


CASES = [
    ("gaussian", {"gamma": 0.3}),
    ("laplacian", {"gamma": 0.2}),
    ("polynomial", {"gamma": 0.5, "coef0": 1.0, "degree": 3}),
    ("linear", {}),
    ("epanechnikov", {"sigma": 1.5}),
]


@pytest.mark.parametrize("name,params", CASES)
@pytest.mark.parametrize("block_bytes", [8 * 7 * 3, 2**20])
def test_kernel_matches_dense_formula(name, params, block_bytes, rng):
    X, Y = rng.normal(size=(37, 5)), rng.normal(size=(23, 5))
    kern = kernels.make(name, **params, block_bytes=block_bytes)
    ref = dense_reference(name, X, Y, **params)
    np.testing.assert_allclose(kern(X, Y), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kern.diag(X), np.diag(dense_reference(name, X, X, **params)), rtol=1e-12)
    v = rng.normal(size=(23, 2))
    np.testing.assert_allclose(kern.mmv(X, Y, v), ref @ v, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(kern.column_sq_norms(X), (dense_reference(name, X, X, **params) ** 2).sum(0),
                               rtol=1e-9)


def test_gaussian_parameterisations(X):
    ref = kernels.make("gaussian", gamma=1 / 8.0)(X)
    np.testing.assert_allclose(kernels.make("gaussian", sigma=2.0)(X), ref)
    np.testing.assert_allclose(kernels.make("gaussian", b=8.0)(X), ref)
    with pytest.raises(ValueError, match="only one of"):
        kernels.make("gaussian", gamma=1.0, sigma=1.0)


def test_kernel_matrix_symmetric_unit_diagonal(X):
    K = kernels.make("gaussian", gamma=0.7)(X)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-15)  # GEMM round-off only
    assert np.all(np.diag(K) == 1.0)
    assert K.min() >= 0 and K.max() <= 1


def test_epanechnikov_is_indefinite():
    x = np.linspace(0, 3, 40)[:, None]
    K = kernels.make("epanechnikov", sigma=0.5)(x)
    assert np.linalg.eigvalsh(K).min() < -1e-6
    assert not kernels.make("epanechnikov").psd


@pytest.mark.parametrize("bad", ["nope", "Gauss"])
def test_unknown_kernel_names_choices(bad):
    with pytest.raises(ValueError, match="unknown kernel .* choose one of .*gaussian"):
        kernels.make(bad)


@pytest.mark.parametrize("name,params", [("gaussian", {"gamma": -1}), ("epanechnikov", {"sigma": 0}),
                                          ("polynomial", {"degree": 0}), ("laplacian", {"gamma": 0})])
def test_invalid_kernel_parameters(name, params):
    with pytest.raises(ValueError, match=name):
        kernels.make(name, **params)


def test_width_heuristics(rng):
    X = rng.normal(size=(50, 3))
    D2 = cdist(X, X, "sqeuclidean")[np.triu_indices(50, 1)]
    assert kernels.median_sq_dist(X) == pytest.approx(np.median(D2))
    assert kernels.mean_sq_dist(X) == pytest.approx(D2.mean())
    assert kernels.resolve_width("median", X) == pytest.approx(1 / np.median(D2))
    assert kernels.resolve_width(0.25, X) == 0.25
    with pytest.raises(ValueError, match="width heuristic"):
        kernels.resolve_width("mode", X)


@pytest.mark.parametrize("n,m", [(50, 7), (700, 300), (20000, 260)])  # the last one runs threaded
def test_gram_streams_ctc_and_cty(rng, n, m):
    X, y = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    kern = kernels.make("gaussian", gamma=0.3)
    C = kern(X, X[:m])
    G, b = kern.gram(X, X[:m], y)
    np.testing.assert_allclose(G, C.T @ C, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(b, C.T @ y, rtol=1e-10, atol=1e-10)
    assert kern.gram(X, X[:m])[1] is None
