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


# -- Gaussian block paths (kernels/distance.py): tiled GEMM + fused exp, thin blocks, numpy's exp ------------

def _textbook_gaussian(X, Y, gamma):
    """exp(-gamma ||x - y||^2) entry by entry from the differences, in float64."""
    return np.exp(-gamma * ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


@pytest.fixture
def exp_choice():
    """Set the exp choice (auto/numba/numpy) for one test; restored afterwards."""
    from nystrom_bench import fastexp

    old = fastexp.set_choice("auto")
    yield fastexp.set_choice
    fastexp.set_choice(old)


@pytest.fixture
def small_tiles(monkeypatch):
    """GEMM tiles of a few rows: several per row block, the last one ragged."""
    from nystrom_bench.kernels import distance

    monkeypatch.setattr(distance, "TILE_BYTES", 8 * 7 * 12)
    return distance


@pytest.mark.parametrize("choice", ["numba", "numpy"])
@pytest.mark.parametrize("m", [1, 3, 4, 17, 41])  # thin (<= 3 columns) and GEMM tiles
def test_gaussian_block_paths_match_textbook_formula(rng, exp_choice, small_tiles, choice, m):
    pytest.importorskip("numba")
    exp_choice(choice)
    X = rng.normal(size=(53, 10)) + 3.0  # off-centre: the norms trick's round-off is larger than the distances'
    Y = X[rng.choice(53, m, replace=False)] + 0.1 * rng.normal(size=(m, 10))
    kern = kernels.make("gaussian", gamma=0.05, block_bytes=8 * 9 * m)  # row blocks of 9 rows
    ref = _textbook_gaussian(X, Y, 0.05)
    got = kern(X, Y)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.vstack([b for _, b in kern.blocks(X, Y)]), ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(kern.mmv(X, Y, np.ones(m)), ref.sum(1), rtol=1e-12)


@pytest.mark.parametrize("m", [2, 30])
def test_gaussian_float32_block_accuracy_kept(rng, exp_choice, small_tiles, m):
    """float32 blocks: the tiled path within float32's round-off of the exponent's terms (the bound of the
    norms trick on points shifted by Y's mean: measured up to 1.7 eps (1 + s) before and after the tiles);
    the thin path (float64 rounded once) within 1 float32 ulp."""
    pytest.importorskip("numba")
    exp_choice("numba")
    X = rng.normal(size=(80, 6)) * 2 + 5
    Y = X[:m] + 0.2
    ref = _textbook_gaussian(X, Y, 0.1)
    got = kernels.make("gaussian", gamma=0.1, dtype="float32")(X, Y)
    assert got.dtype == np.float32
    eps = np.finfo(np.float32).eps
    err = np.abs(got - ref) / ref
    from nystrom_bench.kernels import distance

    if m <= distance.THIN_MAX_COLS:
        assert err.max() <= eps
    c = Y.mean(0)
    s = 0.1 * (((X - c) ** 2).sum(1)[:, None] + ((Y - c) ** 2).sum(1)[None, :])
    assert np.all(err <= 4 * eps * (1 + s))


def test_thin_column_equals_wide_column(rng, exp_choice):
    """One column K(X, x_s) (thin path) equals the same column of a wide block (tiled path), is exactly 1 at
    x_s, and the counting kernel counts both."""
    pytest.importorskip("numba")
    exp_choice("numba")
    X = rng.normal(size=(3000, 12))
    kern = kernels.counting(kernels.make("gaussian", gamma=0.08))
    wide = kern(X, X[:40])
    for s in (0, 7, 39):
        col = kern(X, X[[s]])
        assert col.shape == (3000, 1) and col[s, 0] == 1.0
        np.testing.assert_allclose(col[:, 0], wide[:, s], rtol=1e-13, atol=0)
    assert kern.entries == 3000 * 40 + 3 * 3000


def test_thin_block_of_a_strided_x_and_into_a_strided_block(rng, exp_choice):
    pytest.importorskip("numba")
    exp_choice("numba")
    X = np.asfortranarray(rng.normal(size=(200, 5)))
    kern = kernels.make("gaussian", gamma=0.3)
    ref = _textbook_gaussian(X, X[:3], 0.3)
    np.testing.assert_allclose(kern(X, X[:3]), ref, rtol=1e-13)
    out = np.empty((3, 200)).T  # not C-contiguous: _fill_rows writes through a copy
    kern._fill_rows(*kern._prepare(X, X[:3]), slice(0, 200), out)
    np.testing.assert_allclose(out, ref, rtol=1e-13)


def test_exp_choice_changed_between_prepare_and_fill(rng, exp_choice):
    """A thin block prepared with the compiled loops and filled after NYSTROM_BENCH_EXP=numpy still fills
    (through the augmented GEMM)."""
    pytest.importorskip("numba")
    exp_choice("numba")
    X = rng.normal(size=(50, 3))
    kern = kernels.make("gaussian", gamma=0.5)
    gen = kern.blocks(X, X[:2])
    exp_choice("numpy")
    _, blk = next(gen)
    np.testing.assert_allclose(blk, _textbook_gaussian(X, X[:2], 0.5), rtol=1e-12)


def test_tiles_threaded_equal_single_threaded(rng, exp_choice, small_tiles, monkeypatch):
    """Per-thread scratch: blocks filled on two threads equal those filled on one."""
    pytest.importorskip("numba")
    from threadpoolctl import threadpool_limits

    exp_choice("numba")
    X = rng.normal(size=(400, 4))
    kern = kernels.make("gaussian", gamma=0.2, block_bytes=8 * 30 * 20)
    with threadpool_limits(1):
        one = kern(X, X[:30])
    monkeypatch.setattr(type(kern), "PARALLEL_MIN", 0)
    monkeypatch.setattr("nystrom_bench.kernels.base._blas_threads", lambda: 2)
    two = kern(X, X[:30])
    np.testing.assert_allclose(two, one, rtol=1e-14, atol=0)


def test_blas_threads_follows_threadpool_limits():
    """The cached BLAS controllers read the thread count live: a later threadpool_limits context is honoured."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from nystrom_bench.kernels.base import _blas_threads

    with threadpool_limits(2, user_api="blas"):  # two, whatever the test process runs with (tests/conftest.py)
        counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        assert _blas_threads() == max(counts) == 2
        with threadpool_limits(1, user_api="blas"):
            assert _blas_threads() == 1
        assert _blas_threads() == 2
