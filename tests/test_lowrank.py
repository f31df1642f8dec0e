"""lowrank's direct LAPACK / ARPACK calls give SciPy's bits (eigh's dsyevr, eigsh's Lanczos), and the kernel
blocks' and samplers' cheaper paths give the bits of the code they replaced."""

import numpy as np
import pytest
from scipy import linalg
from scipy.sparse.linalg import eigsh

from nystrom_bench import fastexp, kernels, lowrank, sampling, sharedwork
from nystrom_bench.studies.samplers import methods as samplers_methods


def _gaussian_K(n, d=4, gamma=0.3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    K = kernels.make("gaussian", gamma=gamma)(X)
    return X, (K + K.T) / 2


@pytest.mark.parametrize("n", [1, 2, 5, 25, 60, 101])
def test_eigh_evr_is_scipys_eigh_bit_for_bit(n):
    _, K = _gaussian_K(n)
    rng = np.random.default_rng(n)
    F = rng.normal(size=(n, 3))
    for A in (K, K - F @ F.T, np.asfortranarray(K), K[::-1, ::-1].copy()):  # PSD, indefinite, layouts
        w0, U0 = linalg.eigh(A, check_finite=False)
        w1, U1 = lowrank.eigh_evr(A)
        assert w0.tobytes() == w1.tobytes() and U0.tobytes() == U1.tobytes()
    # the textbook identity: A = U diag(w) U^T, U orthogonal
    w, U = lowrank.eigh_evr(K)
    np.testing.assert_allclose(U @ np.diag(w) @ U.T, K, atol=1e-12)
    np.testing.assert_allclose(U.T @ U, np.eye(n), atol=1e-12)


def test_eigh_evr_hands_other_input_to_scipy():
    A = np.eye(3, dtype=np.float32) * 2
    w, U = lowrank.eigh_evr(A)
    assert w.dtype == np.float32 and np.allclose(w, 2)
    w, U = lowrank.eigh_evr(np.zeros((0, 0)))
    assert w.shape == (0,) and U.shape == (0, 0)


def test_lowrank_pinv_factor_is_the_pseudo_inverse():
    _, W = _gaussian_K(30, gamma=0.05)  # numerically rank deficient
    T, kept = lowrank.lowrank_pinv_factor(W)
    P = T @ T.T
    # Moore-Penrose identity on the kept eigenspace: W P W = W up to the cut-off's eigenvalues
    np.testing.assert_allclose(W @ P @ W, W, atol=1e-8 * np.abs(W).max())
    assert np.all(kept > lowrank.RCOND * kept.max())


@pytest.mark.parametrize("n", [2, 21, 100, 300])
def test_eigsh_largest_magnitude_is_scipys_eigsh_bit_for_bit(n):
    X, K = _gaussian_K(n, seed=n)
    F = np.random.default_rng(n).normal(size=(n, 5)) * 0.3
    R = K - F @ F.T
    R = (R + R.T) / 2
    v0 = np.full(n, 1.0 / np.sqrt(n))
    for A in (K, R, -K):
        ref = eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=1e-10, v0=v0)[0]
        got = lowrank.eigsh_largest_magnitude(A, 1e-10, v0)
        assert np.float64(got).tobytes() == np.float64(ref).tobytes()
        w = linalg.eigvalsh(A)
        assert abs(abs(got) - max(abs(w[0]), abs(w[-1]))) <= 1e-8 * max(abs(w[0]), abs(w[-1]))  # ||A||_2


def test_spectral_norm_is_the_largest_eigenvalue_magnitude():
    _, K = _gaussian_K(80)
    w = linalg.eigvalsh(K)
    assert samplers_methods.spectral_norm(K) == pytest.approx(max(abs(w)), rel=1e-9)
    assert samplers_methods.spectral_norm(K[:10, :10]) == pytest.approx(max(abs(linalg.eigvalsh(K[:10, :10]))))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("m", [4, 7, 40])
def test_gaussian_augmented_rows_are_the_hstack_bits(dtype, m):
    """The in-place augmented rows [2 g y, -g |y|^2, -g] equal the hstack-and-cast they replaced, bit for bit."""
    rng = np.random.default_rng(m)
    X, Y = rng.normal(size=(50, 6)), rng.normal(size=(m, 6))
    k = kernels.make("gaussian", gamma=0.7).astype(dtype)
    _, _, (kind, Ya, shift) = k._prepare(X, Y)
    assert kind == "gemm"
    g = k.gamma
    Ys = Y if shift is None else Y - shift
    ysq = np.einsum("ij,ij->i", Ys, Ys)
    ref = np.hstack([2.0 * g * Ys, (-g * ysq)[:, None], np.full((m, 1), -g)]).astype(k.dtype)
    assert Ya.dtype == ref.dtype and Ya.tobytes() == ref.tobytes()
    # and the block is the textbook exp(-g ||x - y||^2)
    D = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(k(X, Y), np.exp(-g * D), rtol=1e-5 if dtype == "float32" else 1e-12)


def test_exp_backend_follows_set_choice():
    old = fastexp.set_choice("numpy")
    try:
        assert fastexp.backend(np.float64) == "numpy" and fastexp.backend(np.float32) == "numpy"
        fastexp.set_choice("numba")
        want = "numba" if fastexp._loops() is not None else "numpy"
        assert fastexp.backend(np.float64) == want and fastexp.backend("float32") == want
    finally:
        fastexp.set_choice(old)


def test_shared_kdpp_draws_kdpps_landmarks_and_charges_the_shared_seconds():
    X = np.random.default_rng(3).normal(size=(120, 3))
    kern = kernels.make("gaussian", gamma=0.5)
    sharedwork.MEMO.clear()
    sharedwork.MEMO.enter("test", "kdpp")
    try:
        for i, c in enumerate((5, 10, 20)):
            shared = samplers_methods.SharedKDPP()
            got = sampling.sample(shared, X, kern, c, seed=c)
            assert np.array_equal(got, sampling.sample("kdpp", X, kern, c, seed=c))
            assert (shared.shared_seconds > 0) == (i > 0)  # the first draw decomposes K on its own clock
        assert sharedwork.MEMO.hits == 2 and sharedwork.MEMO.misses == 1
        with pytest.raises(ValueError, match="sampler 'kdpp': K has numerical rank"):
            sampling.sample(samplers_methods.SharedKDPP(), np.zeros((10, 2)), kern, 3, seed=0)
    finally:
        sharedwork.MEMO.clear()


def test_learner_input_fast_path_is_the_full_checks():
    """learners._base: a float64 array check_X_y / check_array would pass as it is skips them (their feature
    checks stay); anything else gets them, with their errors."""
    from sklearn.exceptions import NotFittedError

    from nystrom_bench.learners import KRR, _base

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    est = KRR(gamma=0.5, n_components=10, random_state=0)
    Xf, yf, _ = _base._fit_input(est, X, y, y_numeric=True, multi_output=True)
    assert Xf is X and yf is y and est.n_features_in_ == 3
    assert _base._checked_already(X) and _base._checked_already(y) and not _base._checked_already(X[:, :, None])
    bad = X.copy()
    bad[0, 0] = np.nan
    for Xb, yb, msg in [(bad, y, "NaN"), (X[:, 0], y, "2D array"), (X, y[:-1], "inconsistent"),
                        (X[:0], y[:0], "0 sample"), (X, np.c_[y, y], None)]:
        assert not (_base._checked_already(Xb) and Xb.ndim == 2 and _base._checked_already(yb, 1)
                    and len(yb) == len(Xb))
        if msg:
            with pytest.raises(ValueError, match=msg):
                _base._fit_input(KRR(), Xb, yb, y_numeric=True, multi_output=True)
    with pytest.raises(NotFittedError):
        KRR().predict(X)
    model = KRR(gamma=0.5, n_components=10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(bad)
    # the same fit and predictions as through the full checks (a list takes them)
    ref = KRR(gamma=0.5, n_components=10, random_state=0).fit(X.tolist(), y.tolist())
    assert np.array_equal(model.predict(X), ref.predict(X.tolist()))
