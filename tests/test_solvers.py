"""FALKON-style preconditioned CG for the Nystrom KRR system."""

import tracemalloc

import numpy as np
import pytest

from nystrom_bench import kernels
from nystrom_bench.learners import KRR
from nystrom_bench.solvers import nystrom_cg


def _problem(n=600, m=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=n) + 2.0
    return X, y, X[rng.choice(n, m, replace=False)]


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("budget", [0, 2**30])
def test_cg_reaches_the_direct_solution(center, budget):
    X, y, Z = _problem()
    k = kernels.make("gaussian", gamma=0.5)
    C, W = k(X, Z), k(Z)
    alpha = 1e-3 * len(X)
    yc = y - y.mean() if center else y
    Cc = C - C.mean(axis=0) if center else C
    direct = np.linalg.solve(Cc.T @ Cc + alpha * W, Cc.T @ yc)
    res = nystrom_cg(X, k, Z, y, alpha, center=center, tol=1e-12, max_iter=200, store_budget=budget, block_rows=97)
    np.testing.assert_allclose(res["beta"][:, 0], direct, rtol=1e-6, atol=1e-8 * np.abs(direct).max())
    assert res["stored"] == (budget > 0)
    if center:
        assert res["intercept"][0] == pytest.approx(y.mean() - C.mean(axis=0) @ direct, abs=1e-7)


def test_the_preconditioner_cuts_the_iterations():
    X, y, Z = _problem(n=800, m=60)
    k = kernels.make("gaussian", gamma=0.5)
    C, W = k(X, Z), k(Z)
    alpha = 1e-4 * len(X)
    H, b = C.T @ C + alpha * W, C.T @ y
    # plain CG on H to the same relative residual
    x, r = np.zeros(len(b)), b.copy()
    p, rs, plain = r.copy(), r @ r, 0
    while np.sqrt(rs) > 1e-8 * np.linalg.norm(b) and plain < 5000:
        Ap = H @ p
        a = rs / (p @ Ap)
        x, r = x + a * p, r - a * Ap
        rs_new = r @ r
        p, rs, plain = r + rs_new / rs * p, rs_new, plain + 1
    res = nystrom_cg(X, k, Z, y, alpha, tol=1e-8, max_iter=5000)
    assert res["residuals"][-1] <= 1e-8 and res["n_iter"] * 3 < plain, (res["n_iter"], plain)  # measured 37 vs 125


def test_streaming_never_holds_the_n_by_m_matrix():
    rng = np.random.default_rng(1)
    n, m = 20000, 200
    X = rng.normal(size=(n, 4))
    y = X[:, 0]
    Z = X[:m].copy()
    k = kernels.make("gaussian", gamma=0.5)
    tracemalloc.start()
    nystrom_cg(X, k, Z, y, 1.0, max_iter=3, store_budget=0, block_rows=1000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * n * m / 4, peak  # C would be 32 MB; blocks are 1.6 MB


@pytest.mark.parametrize("mode", ["lla", "ncr"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_krr_solver_cg_equals_direct(mode, fit_intercept):
    X, y, _ = _problem()
    kw = dict(gamma=0.5, alpha=0.1, n_components=40, random_state=0, mode=mode, fit_intercept=fit_intercept)
    direct = KRR(solver="direct", **kw).fit(X, y)
    cg = KRR(solver="cg", cg_tol=1e-12, **kw).fit(X, y)
    np.testing.assert_allclose(cg.predict(X[:20]), direct.predict(X[:20]), atol=1e-6)
    assert cg.n_iter_ >= 1 and cg.solver_ == "cg" and direct.solver_ == "direct"


def test_auto_solver_rule(monkeypatch):
    from nystrom_bench import solvers
    from nystrom_bench.learners import krr

    X, y, _ = _problem()
    assert KRR(gamma=0.5, n_components=40, random_state=0).fit(X, y).solver_ == "direct"  # small: direct
    monkeypatch.setattr(krr, "AUTO_CG_WORK", 1.0)
    assert KRR(gamma=0.5, n_components=40, random_state=0).fit(X, y).solver_ == "cg"  # C fits the budget
    monkeypatch.setattr(solvers, "STORE_BUDGET_BYTES", 0)  # streamed: only where c >= 40 d (d = 3)
    assert KRR(gamma=0.5, n_components=40, random_state=0).fit(X, y).solver_ == "direct"
    assert KRR(gamma=0.5, n_components=150, random_state=0).fit(X, y).solver_ == "cg"



@pytest.mark.parametrize("fit_intercept", [False, True])
def test_auto_streams_large_C_and_keeps_small_fits(monkeypatch, fit_intercept):
    """Above AUTO_CG_WORK with C over AUTO_HOLD_BYTES, "auto" never holds C: the streamed direct solve (a
    float32 C^T C factor refined by CG on float64 blocks) -- the direct solve's predictions to cg_tol; below
    AUTO_CG_WORK the fit is the exact direct one, bit for bit."""
    from nystrom_bench.learners import krr

    X, y, _ = _problem()
    kw = dict(gamma=0.5, alpha=0.1, n_components=40, random_state=0, fit_intercept=fit_intercept)
    direct = KRR(solver="direct", **kw).fit(X, y)
    small = KRR(**kw).fit(X, y)
    assert small.solver_ == "direct" and not hasattr(small, "n_iter_")
    np.testing.assert_array_equal(small.predict(X), direct.predict(X))
    monkeypatch.setattr(krr, "AUTO_CG_WORK", 1.0)
    monkeypatch.setattr(krr, "AUTO_HOLD_BYTES", 0)
    big = KRR(cg_tol=1e-12, **kw).fit(X, y)
    assert big.solver_ == "direct" and big.n_iter_ >= 1
    np.testing.assert_allclose(big.predict(X), direct.predict(X), rtol=1e-8, atol=1e-10)
    truncated = KRR(rank=20, **kw).fit(X, y)  # rank truncation and sample weights: the exact direct solve
    assert truncated.solver_ == "direct" and not hasattr(truncated, "n_iter_")
    weighted = KRR(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    assert weighted.solver_ == "direct" and not hasattr(weighted, "n_iter_")
    monkeypatch.setattr(krr, "AUTO_HOLD_BYTES", 2**40)  # C fits: CG with C held, as before
    assert KRR(cg_tol=1e-12, **kw).fit(X, y).solver_ == "cg"


def test_gram_dtype_preconditioner_reaches_float64_accuracy():
    """gram_dtype='float32': the preconditioner from float32 blocks, CG on the float64 ones -- the float64
    direct solution to tol."""
    X, y, Z = _problem()
    k = kernels.make("gaussian", gamma=0.5)
    direct = nystrom_cg(X, k, Z, y, 0.1, preconditioner="gram", store_budget=0, tol=1e-14, max_iter=5)
    mixed = nystrom_cg(X, k, Z, y, 0.1, preconditioner="gram", store_budget=0, gram_dtype="float32", tol=1e-12)
    assert mixed["n_iter"] >= 2  # the float32 factor alone is not the solution
    np.testing.assert_allclose(mixed["beta"], direct["beta"], rtol=1e-8, atol=1e-8 * np.abs(direct["beta"]).max())
    with pytest.raises(ValueError, match="preconditioner='gram'"):
        nystrom_cg(X, k, Z, y, 0.1, gram_dtype="float32")


def test_float32_gram_products_reuse_one_buffer_with_the_same_bits():
    """``C^T C V`` from a held float32 C: each chunk cast into one reused float64 buffer gives the bits of
    casting each chunk afresh (the formula before the buffer), over several chunks, a short last one and
    repeated products, and the dense product to float64 rounding."""
    from nystrom_bench.solvers import _Gram

    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(2500, 5)), rng.normal(size=(700, 5))
    g = _Gram(X, kernels.make("gaussian", gamma=0.2, dtype="float32"), Z, budget=2**40, block_rows=None)
    assert g.C.dtype == np.float32
    rows = (4 * 2**20) // (8 * 700)
    assert 2500 % rows and 2500 > 2 * rows  # several chunks, the last one short
    for V in (rng.normal(size=(700, 1)), rng.normal(size=(700, 3)), rng.normal(size=(700, 1))):
        expected = np.zeros(V.shape)
        for i in range(0, 2500, rows):
            Cb = g.C[i:i + rows].astype(np.float64)
            expected += Cb.T @ (Cb @ V)
        got = g.gram_mv(V)
        assert got.tobytes() == expected.tobytes()
        C64 = g.C.astype(np.float64)
        np.testing.assert_allclose(got, C64.T @ (C64 @ V), rtol=1e-10, atol=1e-10)
