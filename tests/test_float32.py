"""float32 compute: kernel blocks, fused streamed products, the Nystrom operator and KRR, each against float64."""

import tracemalloc

import numpy as np
import pytest

from nystrom_bench import approx, kernels
from nystrom_bench.data import make_scalable
from nystrom_bench.learners import KRR, KRRClassifier
from nystrom_bench.solvers import nystrom_cg

KERNELS = [("gaussian", {"gamma": 0.05}), ("laplacian", {"gamma": 0.05}), ("linear", {}),
           ("polynomial", {"degree": 2, "gamma": 0.1}), ("epanechnikov", {"sigma": 3.0})]


def _points(offset, n=300, m=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    return X, X[rng.choice(n, m, replace=False)]


@pytest.mark.parametrize("name,params", KERNELS)
@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_float32_block_matches_float64(name, params, offset):
    X, Z = _points(offset)
    k64 = kernels.make(name, **params)
    k32 = k64.astype("float32")
    K64, K32 = k64(X, Z), k32(X, Z)
    assert K32.dtype == np.float32 and K64.dtype == np.float64 and k64.dtype == np.float64
    scale = np.abs(K64).max()
    # float32 rounding of the values (the Gaussian shifts the points first, so even data 100 sd away from
    # the origin keeps its distances; without the shift |x|^2 ~ 6e4 would leave ~1e-2 of them)
    assert np.abs(K32 - K64).max() <= 2e-6 * scale
    np.testing.assert_allclose(k32(X)[np.diag_indices(len(X))], k64.diag(X), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("t", [None, 3])
def test_fused_products_equal_the_dense_ones(dtype, t):
    X, Z = _points(0.0, n=5000, m=60)
    k = kernels.make("gaussian", gamma=0.1, dtype=dtype)
    C = kernels.make("gaussian", gamma=0.1)(X, Z)
    rng = np.random.default_rng(1)
    V = rng.normal(size=(60,) if t is None else (60, t))
    Y = rng.normal(size=(5000,) if t is None else (5000, t))
    tol = 1e-12 if dtype == "float64" else 2e-6
    for got, want in [(k.gram_mv(X, Z, V), C.T @ (C @ V)), (k.t_mv(X, Z, Y), C.T @ Y), (k.mmv(X, Z, V), C @ V),
                      (k.gram(X, Z, Y)[0], C.T @ C), (k.gram(X, Z, Y)[1], C.T @ Y)]:
        assert got.dtype == np.float64 and got.shape == want.shape
        assert np.abs(got - want).max() <= tol * np.abs(want).max()


def test_dtype_errors_name_the_choices():
    with pytest.raises(ValueError, match="float64, float32"):
        kernels.make("gaussian", dtype="float16")
    with pytest.raises(ValueError, match="nystrom operator from landmarks only"):
        approx.build("exact", np.eye(3), "gaussian", dtype="float32")
    with pytest.raises(ValueError, match="float64 only"):
        KRR(approximation="exact", dtype="float32").fit(np.eye(4), np.arange(4.0))
    k = kernels.make("gaussian")
    assert k.astype("float64") is k and k.astype(np.float32).dtype == np.float32 and k.dtype == np.float64


def test_float32_nystrom_operator_holds_half_and_solves_alike():
    X, _ = _points(0.0, n=2000)
    y = np.sin(X[:, 0])
    idx = np.arange(0, 2000, 25)
    op64 = approx.build("nystrom", X, "gaussian", landmarks=idx)
    op32 = approx.build("nystrom", X, kernels.make("gaussian"), landmarks=idx, dtype="float32")
    assert op32.C.dtype == np.float32 and op32.W.dtype == np.float64 and op32.nbytes_ < op64.nbytes_
    np.testing.assert_allclose(op32.eigvals()[:10], op64.eigvals()[:10], rtol=1e-5)
    s64, s32 = op64.solve(1.0, y), op32.solve(1.0, y)
    assert s32.dtype == np.float64 and np.linalg.norm(s32 - s64) <= 1e-5 * np.linalg.norm(s64)
    F, F64 = op32.features(X[:5]), op64.features(X[:5])  # equal up to the eigenvectors' signs: compare F F^T
    assert F.dtype == np.float64 and np.abs(F @ F.T - F64 @ F64.T).max() < 1e-5


def _regression(n=8000, d=10):
    X, y = make_scalable(n + 1000, d, seed=3)
    return X[:n], y[:n], X[n:], y[n:]


def _rmse(model, Xt, yt):
    return float(np.sqrt(np.mean((model.predict(Xt) - yt) ** 2)))


@pytest.mark.parametrize("mode", ["lla", "ncr", "gsa"])
@pytest.mark.parametrize("solver", ["direct", "cg"])
@pytest.mark.parametrize("alpha", [1e-3, 1.0])
def test_float32_krr_test_rmse_within_bound_of_float64(mode, solver, alpha):
    if mode == "gsa" and solver == "cg":
        pytest.skip("GSA has no iterative solver")
    X, y, Xt, yt = _regression()
    kw = dict(gamma=1 / 20, alpha=alpha, mode=mode, solver=solver, n_components=300, random_state=0, cg_max_iter=1000)
    r64 = _rmse(KRR(**kw).fit(X, y), Xt, yt)
    m32 = KRR(dtype="float32", **kw).fit(X, y)
    r32 = _rmse(m32, Xt, yt)
    # measured (n = 2e4, c = 500): <= 4e-4 relative for LLA/NCR, both solvers; GSA predicts with the exact
    # kernel on coefficients of size ~1/alpha, so its float32 error is larger at small alpha
    bound = 1e-3 if mode != "gsa" else (5e-2 if alpha < 0.1 else 5e-3)
    assert abs(r32 / r64 - 1) <= bound, (r32, r64)
    if mode != "gsa":  # the float32 direct LLA/NCR fit is refined by CG on the kernel blocks
        assert m32.n_iter_ >= 1 and m32.solver_ == solver


def test_float32_direct_refinement_is_needed_at_small_alpha():
    """The float32 C^T C alone (rank= switches the refinement off) is off by percents at alpha / n = 1e-7;
    refined it is back within 1e-3 of float64 (this documents why the refinement exists)."""
    X, y, Xt, yt = _regression()
    kw = dict(gamma=1 / 20, alpha=1e-3, n_components=300, random_state=0, solver="direct")
    r64 = _rmse(KRR(**kw).fit(X, y), Xt, yt)
    plain = _rmse(KRR(dtype="float32", rank=300, **kw).fit(X, y), Xt, yt)
    refined = _rmse(KRR(dtype="float32", **kw).fit(X, y), Xt, yt)
    assert abs(refined / r64 - 1) < 1e-3 < abs(plain / r64 - 1), (r64, plain, refined)


def test_float32_classifier():
    X, y, Xt, yt = _regression(n=3000)
    labels, test_labels = y > 0, yt > 0
    kw = dict(gamma=1 / 20, alpha=0.1, n_components=200, random_state=0)
    acc64 = KRRClassifier(**kw).fit(X, labels).score(Xt, test_labels)
    acc32 = KRRClassifier(dtype="float32", **kw).fit(X, labels).score(Xt, test_labels)
    assert abs(acc64 - acc32) <= 2e-3 and acc64 > 0.8


def test_gram_preconditioner_is_the_direct_solve():
    X, Z = _points(0.0, n=3000, m=80)
    y = np.sin(X[:, 0])
    k = kernels.make("gaussian", gamma=0.1)
    C, W = k(X, Z), k(Z)
    direct = np.linalg.solve(C.T @ C + 0.5 * W, C.T @ y)
    res = nystrom_cg(X, k, Z, y, 0.5, tol=1e-10, preconditioner="gram")
    assert res["n_iter"] <= 3
    np.testing.assert_allclose(res["beta"][:, 0], direct, rtol=1e-7, atol=1e-9 * np.abs(direct).max())
    with pytest.raises(ValueError, match="falkon, gram"):
        nystrom_cg(X, k, Z, y, 0.5, preconditioner="jacobi")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_streamed_float32_solver_never_holds_the_n_by_m_matrix(dtype):
    rng = np.random.default_rng(1)
    n, m = 20000, 200
    X = rng.normal(size=(n, 4))
    Z = X[:m].copy()
    k = kernels.make("gaussian", gamma=0.5, dtype=dtype)
    tracemalloc.start()
    nystrom_cg(X, k, Z, X[:, 0], 1.0, max_iter=3, store_budget=0, block_rows=1000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2 * n * m, peak  # C would be 32 MB in float64, 16 MB in float32
