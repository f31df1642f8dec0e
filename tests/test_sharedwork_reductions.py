"""One tridiagonal reduction of K shared by the exact eigenvalues, the optimal rank-k eigenpairs and the leverage
sampler (nystrom_bench.sharedwork.SharedOperatorWork, approx.shared_work): LAPACK's bits, the reuse charged."""

import numpy as np
import pytest
from scipy import linalg

from nystrom_bench import approx, kernels, sampling, selection, sharedwork
from nystrom_bench.studies.consistency.methods import deterministic_values


@pytest.fixture(autouse=True)
def _fresh_memo():
    sharedwork.MEMO.clear()
    yield
    sharedwork.MEMO.clear()


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


def _matrices():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(160, 3))
    yield kernels.make("gaussian", gamma=0.3)(X)
    yield kernels.make("gaussian", gamma=3e-3)(X)  # nearly rank one
    yield np.cov(rng.normal(size=(90, 200)))
    yield np.array([[2.0, 1.0], [1.0, 3.0]])
    grid = np.array([[a, b] for a in np.arange(20) * 0.1 for b in np.arange(20) * 0.1])
    yield kernels.make("gaussian", gamma=2.0**4)(grid)


@pytest.mark.parametrize("K", list(_matrices()), ids=["gauss", "wide", "cov", "2x2", "grid"])
def test_eigenvalues_from_the_reduction_are_eighs_bits(K):
    w = sharedwork.eigvals_tridiagonal(sharedwork.tridiagonal(K))
    assert w is not None
    assert np.array_equal(_bits(w), _bits(linalg.eigh(K)[0]))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(K), rtol=1e-9, atol=1e-12 * abs(w).max())


def test_exact_eigvals_are_eighs_bits_also_where_mrrr_fails():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 2))
    failed = 0
    for gamma in (0.05, 1.0, 256.0):  # 256: K close to I, a tight cluster where dstemr gives up (dsyevr falls back)
        kern = kernels.make("gaussian", gamma=gamma)
        K = kern(X)
        failed += sharedwork.eigvals_tridiagonal(sharedwork.tridiagonal(K)) is None
        op = approx.build("exact", X, kern)
        ref = linalg.eigh(K)[0][::-1]
        assert np.array_equal(_bits(op.eigvals()), _bits(ref))
        assert np.array_equal(_bits(op.eigvals()), _bits(ref))  # cached
        op.factor()  # the full decomposition afterwards: the same eigenvalues
        assert np.array_equal(_bits(op.eigvals()), _bits(ref))
    assert failed == 1  # the fallback path was exercised


def test_no_reduction_where_dsyevr_would_scale_the_matrix():
    K = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert sharedwork.tridiagonal(K * 1e80) is None and sharedwork.tridiagonal(K * 1e-120) is None
    assert sharedwork.tridiagonal(K * 1e70) is not None
    op = approx.build("exact", np.zeros((2, 1)), kernels.make("gaussian", gamma=1.0))
    op.K = K * 1e80  # outside the reduction's range: eigh itself, the same values
    np.testing.assert_array_equal(op.eigvals(), linalg.eigh(K * 1e80)[0][::-1])


def test_exact_optimal_and_leverage_share_one_reduction_with_the_same_bits():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(140, 3))
    kern = kernels.make("gaussian", gamma=0.4)
    plain_opt = approx.build("optimal", X, kern, rank=7)
    plain_w = approx.build("exact", X, kern).eigvals()
    plain_lev = sampling.sample("leverage", X, kern, 20, seed=np.random.default_rng(1))
    source = sharedwork.SharedOperatorWork()
    with approx.shared_work(source) as s:
        assert s is source
        w = approx.build("exact", X, kern).eigvals()
        assert source.shared_seconds == 0.0  # computed here: on this clock
        opt = approx.build("optimal", X, kern, rank=7)
        charged = source.shared_seconds
        assert charged > 0.0
    assert approx._SHARED is None  # the block restores the default
    lev = sharedwork.SharedLeverage()
    assert np.array_equal(sampling.sample(lev, X, kern, 20, seed=np.random.default_rng(1)), plain_lev)
    assert lev.shared_seconds == charged  # the same reduction, the same charge
    assert np.array_equal(_bits(w), _bits(plain_w))
    for a in ("C", "T", "_U", "_w"):
        assert np.array_equal(_bits(getattr(opt, a)), _bits(getattr(plain_opt, a)))
    assert sharedwork.MEMO.misses == 1 and sharedwork.MEMO.hits == 2
    # another width: another K, another reduction
    with approx.shared_work(sharedwork.SharedOperatorWork()) as s2:
        approx.build("optimal", X, kernels.make("gaussian", gamma=0.4 * (1 + 1e-15)), rank=7)
        assert s2.shared_seconds == 0.0


def test_optimal_where_the_subset_path_does_not_apply_falls_back_to_top_eigh():
    X = np.random.default_rng(8).normal(size=(12, 2))
    kern = kernels.make("gaussian", gamma=0.5)
    with approx.shared_work(sharedwork.SharedOperatorWork()):
        full = approx.build("optimal", X, kern, rank=12)  # k = n: dsyevr's other path
    np.testing.assert_array_equal(full.C, approx.build("optimal", X, kern, rank=12).C)
    with approx.shared_work(type("NoReduction", (), {"tridiagonal": lambda self, K: None})()):  # computed as outside
        np.testing.assert_array_equal(approx.build("optimal", X, kern, rank=3).C,
                                      approx.build("optimal", X, kern, rank=3).C)


def test_a_reused_reduction_is_charged_where_it_is_read():
    g = np.linspace(0, 1, 9)
    X = np.array([[a, b] for a in g for b in g])
    y = np.sin(3 * X[:, 0]) - X[:, 1]
    common = {"mu": 0.005, "noise_sd": 0.01, "spectrum": "exact"}
    crit = ("c_ree", "c_ipe")
    K = kernels.make("gaussian", gamma=20.0)(X)
    tri, _, _ = sharedwork.MEMO.get(K, ("tridiagonal",), lambda: sharedwork.tridiagonal(K))
    # the reduction computed elsewhere first; its recorded seconds made large, so that a charge shows
    reduce_seconds = 1e3
    (key, (value, _, nbytes)), = sharedwork.MEMO._store.items()
    sharedwork.MEMO._store[key] = (value, reduce_seconds, nbytes)
    exact = deterministic_values(X, y, 20.0, "exact", crit, common, {})
    optimal = deterministic_values(X, y, 20.0, "optimal", crit, common, {"rank": 6})
    for approximation, got, opts in (("exact", exact, {}), ("optimal", optimal, {"rank": 6})):
        ref = selection.criterion_values(X, y, 20.0, approximation, crit, **common, **opts)
        assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in ref.items()}  # the same bits
    # the exact operator reads K's eigenvalues in C_ipe only; the optimal one in its build (both criteria)
    assert exact["c_ipe"][1] >= reduce_seconds > exact["c_ree"][1]
    assert optimal["c_ree"][1] >= reduce_seconds and optimal["c_ipe"][1] >= reduce_seconds
    with approx.shared_work(sharedwork.SharedOperatorWork()) as s:
        selection.criterion_values(X, y, 20.0, "exact", ("c_ree",), **common)
        assert s.shared_seconds == 0.0  # C_ree on K reads no eigenvalue: nothing to charge


def test_mcm_spacing_shared_across_widths_same_operator_and_charged():
    g = np.arange(12) * 0.1
    X = np.array([[a, b] for a in g for b in g]) + np.random.default_rng(9).normal(scale=0.01, size=(144, 2))
    source = sharedwork.SharedOperatorWork()
    ops = []
    with approx.shared_work(source):
        for gamma in (1.0, 4.0):
            ops.append(approx.build("mcm", X, kernels.make("gaussian", gamma=gamma), grid=[12, 12]))
    assert source.shared_seconds > 0.0 and (sharedwork.MEMO.misses, sharedwork.MEMO.hits) == (1, 1)
    for gamma, op in zip((1.0, 4.0), ops, strict=True):
        ref = approx.build("mcm", X, kernels.make("gaussian", gamma=gamma), grid=[12, 12])
        assert (op.h, op.grid_misfit_) == (ref.h, ref.grid_misfit_) and ref.grid_misfit_ > 0
        np.testing.assert_array_equal(op.v, ref.v)
    with approx.shared_work(sharedwork.SharedOperatorWork()) as s:  # another grid: another fit
        approx.build("mcm", X, kernels.make("gaussian", gamma=1.0), grid=[16, 9])
        assert s.shared_seconds == 0.0


def test_mcm_assumption_once_per_data_and_settings():
    from nystrom_bench.studies.consistency.methods import MCM, _assumption

    g = np.arange(6) * 0.1
    X = np.array([[a, b] for a in g for b in g])
    method = MCM("mcm", {"levels": 3, "grid": "data"})
    for gamma in (2.0**-4, 2.0**6):
        want = method.assumption(X, [gamma], 0.005, {"grid": [6, 6]})
        assert _assumption(method, X, gamma, 0.005, {"grid": [6, 6]}) == want
        assert _assumption(method, X.copy(), gamma, 0.005, {"grid": [6, 6]}) == want
    assert "indefinite" in method.assumption(X, [2.0**-4], 0.005, {"grid": [6, 6]})  # both kinds of answer seen
    assert method.assumption(X, [2.0**6], 0.005, {"grid": [6, 6]}) == ""
    # one assumption and one grid spacing per width: the second call of each width reused it
    assert sharedwork.MEMO.hits >= 2
