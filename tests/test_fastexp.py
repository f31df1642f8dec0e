"""The kernel blocks' exp (nystrom_bench.fastexp): accuracy of the compiled loops against numpy's exp
and the exact value, the extremes (0, tiny, subnormal, underflow, NaN, inf), the automatic choice
and the fallback to numpy. No timings are asserted."""

import warnings

import numpy as np
import pytest

from nystrom_bench import fastexp, kernels


@pytest.fixture(autouse=True)
def fresh_state():
    fastexp._state.clear()
    yield
    fastexp._state.clear()


def _numba_loops():
    pytest.importorskip("numba")
    from nystrom_bench import _fastexp_numba as nb

    return {np.dtype(np.float64): nb.exp_nonpos_f64, np.dtype(np.float32): nb.exp_nonpos_f32}


def _args(dtype, n=400_000, seed=0):
    """Arguments over the range the kernels use: uniform on [low, 0], log-uniform magnitudes from
    1e-300 (float32: 1e-30) to |low|, and the grid of the self-check (edges included)."""
    rng = np.random.default_rng(seed)
    low = -746.0 if dtype == np.float64 else -104.0
    tiny = -300 if dtype == np.float64 else -30
    x = np.concatenate([rng.uniform(low, 0.0, n), -np.logspace(tiny, np.log10(-low), n)])
    return np.concatenate([x.astype(dtype), fastexp._check_args(dtype)])


def _run(fn, x):
    y = x.copy()
    fn(y)
    return y


def test_float64_loop_within_one_ulp_of_exact_and_two_of_numpy():
    fn = _numba_loops()[np.dtype(np.float64)]
    x = _args(np.float64)
    got = _run(fn, x)
    ref = np.exp(np.minimum(x, 0.0))
    assert np.max(fastexp.ulp_distance(got, ref)) <= 2
    # against the exact value (x86 long double: 64-bit mantissa), where the result is normal
    if np.finfo(np.longdouble).nmant >= 63:
        exact = np.exp(np.minimum(x.astype(np.longdouble), 0))
        normal = exact >= np.finfo(np.float64).tiny
        err = np.abs(got[normal].astype(np.longdouble) - exact[normal]) / np.spacing(exact[normal].astype(np.float64))
        assert float(err.max()) <= 1.0


def test_float32_loop_within_one_ulp_of_the_correctly_rounded_value():
    fn = _numba_loops()[np.dtype(np.float32)]
    x = _args(np.float32)
    got = _run(fn, x)
    ref = np.exp(np.minimum(x.astype(np.float64), 0.0)).astype(np.float32)
    assert np.max(fastexp.ulp_distance(got, ref)) <= 1
    assert np.max(fastexp.ulp_distance(got, np.exp(np.minimum(x, 0)))) <= 2  # numpy's float32 exp


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_extremes(dtype):
    fn = _numba_loops()[np.dtype(dtype)]
    fi = np.finfo(dtype)
    x = np.array([0.0, -0.0, -1e-300, -1e-30, 5.0, np.inf, -np.inf, np.nan, -0.5 * fi.max], dtype=dtype)
    got = _run(fn, x)
    assert got[:6].tolist() == [1.0] * 6  # 0, -0, tiny, and positive arguments (clamped) give exactly 1
    assert got[6] == 0.0 and np.isnan(got[7]) and got[8] == 0.0
    # the underflow threshold: exp(x) < smallest subnormal / 2 rounds to 0, just above it to the smallest subnormal
    ln_min_sub = np.log(np.float64(fi.smallest_subnormal))
    edge = np.array([ln_min_sub - np.log(2) - 0.01, ln_min_sub, ln_min_sub + 0.01], dtype=dtype)
    got = _run(fn, edge)
    assert got[0] == 0.0 and got[1] == fi.smallest_subnormal
    # the whole subnormal range: within one unit of the smallest subnormal (= its ulp)
    sub = np.linspace(np.log(np.float64(fi.tiny)), ln_min_sub, 20_000).astype(dtype)
    ref = np.exp(sub.astype(np.float64)).astype(dtype)
    assert np.max(np.abs(_run(fn, sub).astype(np.float64) - ref)) <= fi.smallest_subnormal


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exp_nonpos_paths_agree_and_ignore_layout(dtype):
    _numba_loops()
    rng = np.random.default_rng(1)
    a = -rng.random((300, 50)).astype(dtype) * 30
    a[0, 0] = 1e-9  # round-off above 0 is clamped on both paths
    fastexp.set_choice("numba")
    assert fastexp.backend(dtype) == "numba"
    fast = fastexp.exp_nonpos(a.copy())
    strided = np.asfortranarray(a)  # not C-contiguous: through a copy, same values
    fastexp.exp_nonpos(strided)
    assert np.array_equal(strided, fast)
    fastexp.set_choice("numpy")
    assert fastexp.backend(dtype) == "numpy"
    ref = fastexp.exp_nonpos(a.copy())
    assert fast[0, 0] == ref[0, 0] == 1.0
    assert np.max(fastexp.ulp_distance(fast, ref)) <= 2


def test_auto_keeps_numpy_float64_exp_where_it_is_vectorised():
    _numba_loops()
    assert fastexp.backend(np.float32) == "numba"
    assert fastexp.backend(np.float64) == ("numpy" if fastexp.numpy_exp_vectorised() else "numba")
    assert fastexp.backend(np.int64) == "numpy"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["gaussian", "laplacian"])
def test_kernel_blocks_same_on_both_paths(name, dtype):
    _numba_loops()
    rng = np.random.default_rng(2)
    X, Z = rng.normal(size=(500, 7)), rng.normal(size=(60, 7))
    kern = kernels.make(name, gamma=0.3, dtype=dtype)
    fastexp.set_choice("numba")
    K1 = kern(X, Z)
    fastexp.set_choice("numpy")
    K2 = kern(X, Z)
    assert np.max(fastexp.ulp_distance(K1, K2)) <= 2


def test_missing_numba_falls_back_to_numpy(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nystrom_bench._fastexp_numba", None)  # import raises ImportError
    fastexp.set_choice("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fastexp.backend(np.float32) == "numpy"
    a = np.array([-1.0, 0.5])
    np.testing.assert_array_equal(fastexp.exp_nonpos(a), [np.exp(-1.0), 1.0])


def test_a_loop_failing_its_self_check_is_not_used(monkeypatch):
    pytest.importorskip("numba")
    from nystrom_bench import _fastexp_numba as nb

    def wrong(f):  # off by ~10 ulp
        np.minimum(f, 0.0, out=f)
        np.exp(f, out=f)
        f *= 1 + 10 * np.finfo(f.dtype).eps

    monkeypatch.setattr(nb, "exp_nonpos_f32", wrong)
    fastexp.set_choice("numba")
    with pytest.warns(RuntimeWarning, match="self-check"):
        assert fastexp.backend(np.float32) == "numpy"
    assert fastexp.backend(np.float64) == "numpy"  # both loops are dropped together


def test_choice_is_validated(monkeypatch):
    with pytest.raises(ValueError, match="auto, numba, numpy"):
        fastexp.set_choice("fast")
    monkeypatch.setenv(fastexp.ENV, "svml")
    fastexp._state.clear()
    with pytest.raises(ValueError, match="NYSTROM_BENCH_EXP"):
        fastexp.backend(np.float64)
    monkeypatch.setenv(fastexp.ENV, "NumPy")
    fastexp._state.clear()
    assert fastexp.backend(np.float32) == "numpy"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tile_loop_writes_exp_nonpos_into_its_place(dtype):
    """``exp_tile`` (the Gaussian blocks' fused clamp + exp) gives exp_nonpos's values bit for bit, at its
    offset in the block, and touches nothing else."""
    pytest.importorskip("numba")
    from nystrom_bench import _fastexp_numba as nb

    tile = {np.dtype(np.float64): nb.exp_tile_f64, np.dtype(np.float32): nb.exp_tile_f32}[np.dtype(dtype)]
    E = _args(dtype, n=3000)[:6000].reshape(40, 150).copy()
    out = np.full((60, 200), 7.0, dtype=dtype)
    tile(E, out, 13, 21)
    ref = _run(_numba_loops()[np.dtype(dtype)], E.ravel()).reshape(E.shape)
    assert np.array_equal(out[13:53, 21:171], ref, equal_nan=True)
    out[13:53, 21:171] = 7.0
    assert np.all(out == 7.0)


def test_thin_loops_float32_is_the_float64_result_rounded():
    pytest.importorskip("numba")
    from nystrom_bench import _fastexp_numba as nb

    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(700, 9)), rng.normal(size=(5, 9))  # 700 rows: several chunks of 256
    o64, o32 = np.empty((700, 5)), np.empty((700, 5), dtype=np.float32)
    nb.gauss_thin_f64(X, Y, 0.4, o64)
    nb.gauss_thin_f32(X, Y, 0.4, o32)
    np.testing.assert_allclose(o64, np.exp(-0.4 * ((X[:, None] - Y[None]) ** 2).sum(-1)), rtol=1e-14)
    assert np.array_equal(o32, o64.astype(np.float32))


def test_compiled_follows_the_choice():
    pytest.importorskip("numba")
    fastexp.set_choice("numpy")
    assert fastexp.compiled() is None and fastexp.compiled(np.float32) is None
    fastexp.set_choice("numba")
    mod = fastexp.compiled()
    assert mod is not None and fastexp.compiled(np.float64) is mod and fastexp.compiled(np.float32) is mod
    fastexp.set_choice("auto")
    assert fastexp.compiled() is mod  # thin blocks: the compiled pass wherever it loaded
    assert (fastexp.compiled(np.float64) is None) == fastexp.numpy_exp_vectorised()


def test_a_thin_loop_failing_its_self_check_is_not_used(monkeypatch):
    pytest.importorskip("numba")
    from nystrom_bench import _fastexp_numba as nb

    def wrong(X, Y, g, out):
        out[...] = 0.5

    monkeypatch.setattr(nb, "gauss_thin_f64", wrong)
    fastexp.set_choice("numba")
    with pytest.warns(RuntimeWarning, match="thin Gaussian"):
        assert fastexp.compiled() is None
    assert fastexp.backend(np.float32) == "numpy"
    X = np.random.default_rng(0).normal(size=(30, 3))
    K = kernels.make("gaussian", gamma=0.5)(X, X[:2])  # the augmented GEMM and numpy's exp instead
    np.testing.assert_allclose(K, np.exp(-0.5 * ((X[:, None] - X[None, :2]) ** 2).sum(-1)), rtol=1e-12)
