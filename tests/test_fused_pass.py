"""The row-fused streamed products of a Gaussian block (``Kernel.gram_mv`` / ``t_mv`` with ``fused=True``, the
passes of FALKON's CG when C is streamed) against the dense textbook products and against the blocked pass."""

import numpy as np
import pytest

from nystrom_bench import fastexp, kernels
from nystrom_bench.kernels import distance
from nystrom_bench.solvers import nystrom_cg

needs_numba = pytest.mark.skipif(fastexp.compiled() is None, reason="the fused pass needs the compiled loops")


def _data(n=2003, m=57, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[rng.choice(n, m, replace=False)], rng


@needs_numba
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("t", [None, 1, 3])
def test_fused_products_equal_the_dense_textbook_ones(dtype, t, monkeypatch):
    # odd n and m, and tiles of 7 rows: the 4-row sweeps, their remainders and several tiles per block all run
    monkeypatch.setattr(distance, "TILE_BYTES", 7 * 57 * np.dtype(dtype).itemsize)
    X, Z, rng = _data()
    k = kernels.make("gaussian", gamma=0.3, dtype=dtype, block_bytes=300 * 57 * 8)
    # the textbook kernel matrix in float64, rounded to the block's precision as the kernel stores its values
    D = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    C = np.exp(-0.3 * D).astype(dtype).astype(np.float64)
    V = rng.normal(size=(57,) if t is None else (57, t))
    Y = rng.normal(size=(2003,) if t is None else (2003, t))
    tol = 1e-12 if dtype == "float64" else 2e-6  # float32: the GEMM's exponents carry float32 round-off
    for got, want in [(k.gram_mv(X, Z, V, fused=True), C.T @ (C @ V)), (k.t_mv(X, Z, Y, fused=True), C.T @ Y)]:
        assert got.dtype == np.float64 and got.shape == want.shape and got.flags.c_contiguous
        assert np.abs(got - want).max() <= tol * np.abs(want).max()


@needs_numba
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_pass_uses_the_blocks_values(dtype):
    """Same kernel values as the blocked pass (the exp is exp_nonpos's, bit for bit): the two passes differ
    by the summation order of float64 sums only."""
    X, Z, rng = _data(n=3000, m=40, d=9, seed=1)
    k = kernels.make("gaussian", gamma=0.05, dtype=dtype)
    V, Y = rng.normal(size=(40, 2)), rng.normal(size=(3000, 2))
    for fused, blocked in [(k.gram_mv(X, Z, V, fused=True), k.gram_mv(X, Z, V)),
                           (k.t_mv(X, Z, Y, fused=True), k.t_mv(X, Z, Y))]:
        np.testing.assert_allclose(fused, blocked, rtol=1e-12, atol=1e-12 * np.abs(blocked).max())


def test_kernels_without_a_fused_pass_run_the_blocked_one():
    X, Z, rng = _data(n=500, m=20)
    V = rng.normal(size=20)
    for k in [kernels.make("laplacian", gamma=0.2), kernels.counting(kernels.make("gaussian", gamma=0.2))]:
        np.testing.assert_array_equal(k.gram_mv(X, Z, V, fused=True), k.gram_mv(X, Z, V))
    k = kernels.counting(kernels.make("gaussian", gamma=0.2))
    k.t_mv(X, Z, rng.normal(size=500), fused=True)
    assert k.entries == 500 * 20  # a counting kernel counts every entry: it takes the blocked pass


def test_fused_pass_checks_shapes():
    X, Z, rng = _data(n=50, m=5)
    k = kernels.make("gaussian", gamma=0.2)
    with pytest.raises(ValueError, match="V has 4 rows"):
        k.gram_mv(X, Z, np.ones(4), fused=True)
    with pytest.raises(ValueError, match="Y has 49 rows"):
        k.t_mv(X, Z, np.ones(49), fused=True)


@needs_numba
def test_streamed_falkon_cg_solves_the_dense_system():
    """FALKON's CG with C streamed (the fused passes) against the dense solve of (C^T C + alpha W) beta = C^T y."""
    X, Z, rng = _data(n=1500, m=30, d=4, seed=2)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=1500)
    k = kernels.make("gaussian", gamma=0.2)
    C, W = k(X, Z), k(Z)
    beta = np.linalg.solve(C.T @ C + 1e-2 * W, C.T @ y)
    res = nystrom_cg(X, k, Z, y, 1e-2, tol=1e-10, max_iter=200, store_budget=0)
    assert not res["stored"]
    np.testing.assert_allclose(res["beta"][:, 0], beta, rtol=1e-6, atol=1e-8 * np.abs(beta).max())


def _krr_data(seed=3, n=3000, n_val=500):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n + n_val, 3))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=n + n_val)
    return X[:n], y[:n], X[n:], y[n:]


def test_held_out_stop_keeps_the_best_iterate_and_stops_without_progress():
    from nystrom_bench.learners import KRR

    X, y, Xv, yv = _krr_data()
    kw = dict(gamma=0.5, alpha=1e-4 * 3000, n_components=300, random_state=0, solver="cg", cg_tol=1e-10,
              cg_max_iter=200)
    full = KRR(**kw).fit(X, y)
    early = KRR(**kw).fit(X, y, cg_eval_set=(Xv, yv))
    hist = early.cg_eval_history_
    assert early.n_iter_ == len(hist) < full.n_iter_
    # the rule: every iteration but the last improved the best held-out RMSE by at least rel_tol
    best = np.minimum.accumulate(hist)
    assert all(hist[i] < best[i - 1] * (1 - 1e-4) for i in range(1, len(hist) - 1))
    assert hist[-1] >= best[-2] * (1 - 1e-4)
    # the model kept is the iterate of the lowest held-out RMSE: recompute that RMSE from its predictions
    rmse = np.sqrt(np.mean((early.predict(Xv) - yv) ** 2))
    assert rmse == pytest.approx(min(hist), rel=1e-9)
    # on this smooth path (measured: 13 iterations instead of 74, held-out RMSE 0.24% above) it is nearly as
    # accurate as the full solve; on a plateau the rule can stop early (HeldOutStop's docstring)
    assert rmse <= np.sqrt(np.mean((full.predict(Xv) - yv) ** 2)) * 1.01


def test_held_out_stop_needs_a_cg_fit_and_matching_points():
    from nystrom_bench.learners import KRR
    from nystrom_bench.solvers import HeldOutStop

    X, y, Xv, yv = _krr_data(n=300, n_val=50)
    with pytest.raises(ValueError, match="solver='cg'"):
        KRR(gamma=0.5, n_components=20, solver="direct").fit(X, y, cg_eval_set=(Xv, yv))
    with pytest.raises(ValueError, match="solver='cg'"):
        KRR(gamma=0.5, approximation="exact").fit(X, y, cg_eval_set=(Xv, yv))
    with pytest.raises(ValueError, match="same, non-zero number"):
        HeldOutStop(kernels.make("gaussian"), X[:5], Xv, yv[:-1])
    with pytest.raises(ValueError, match="patience >= 1"):
        HeldOutStop(kernels.make("gaussian"), X[:5], Xv, yv, patience=0)


def test_falkon_preconditioner_by_lauum_solves_the_same_system(monkeypatch):
    """T T^T by LAPACK's triangular product (m >= LAUUM_MIN_M) or by T @ T.T: the same iterates to round-off."""
    from nystrom_bench import solvers

    X, Z, rng = _data(n=1200, m=40, d=4, seed=4)
    y = np.cos(X[:, 1]) + 0.1 * rng.normal(size=1200)
    k = kernels.make("gaussian", gamma=0.2)
    monkeypatch.setattr(solvers, "LAUUM_MIN_M", 10**9)
    a = nystrom_cg(X, k, Z, y, 1e-2, tol=1e-10, max_iter=200)
    monkeypatch.setattr(solvers, "LAUUM_MIN_M", 1)
    b = nystrom_cg(X, k, Z, y, 1e-2, tol=1e-10, max_iter=200)
    assert abs(a["n_iter"] - b["n_iter"]) <= 2  # round-off moves the step that crosses tol
    # round-off (the BLAS thread count's too: one thread moved small entries by 8e-10 of the largest) against a
    # wrong product, which moves beta by O(1)
    np.testing.assert_allclose(b["beta"], a["beta"], rtol=1e-8, atol=1e-8 * np.abs(a["beta"]).max())


def test_held_out_stop_leaves_a_fit_that_met_the_residual_unchanged():
    """When the residual rule stops CG first, the final iterate is kept (it was never checked on held-out data)."""
    from nystrom_bench.learners import KRR

    X, y, Xv, yv = _krr_data(n=800, n_val=100)
    kw = dict(gamma=0.5, alpha=1.0, n_components=50, random_state=0, solver="cg", cg_tol=0.05)  # 4 iterations
    plain, early = KRR(**kw).fit(X, y), KRR(**kw).fit(X, y, cg_eval_set=(Xv, yv))
    assert early.n_iter_ == plain.n_iter_ == len(early.cg_eval_history_) + 1
    np.testing.assert_array_equal(early.coef_, plain.coef_)
    assert not hasattr(KRR(**kw).fit(X, y), "cg_eval_history_")
