"""GNKR.fit_path / predict_path: a whole (sigma, lambda) grid, bit-identical to the GNKR study's old loop."""

import time

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from nystrom_bench import kernels, sampling
from nystrom_bench.learners import GNKR, gnkr_path

SIGMAS = [0.1, 1.0, 10.0]
LAMS = [1e-12, 1e-9, 1e-6, 1e-3]


# -- the GNKR study's grid loop before fit_path (commit 2bce70c), frozen as the reference -----------
def _old_landmarks(sampler, X, kern, m, rng, norms=None):
    if sampler == "uniform":
        t0 = time.perf_counter()
        return sampling.sample("uniform", X, kern, c=min(m, len(X)), seed=rng), time.perf_counter() - t0
    norms = {} if norms is None else norms
    key = repr(kern)
    if key not in norms:
        t0 = time.perf_counter()
        norms[key] = (sampling.column_norm_probabilities(X, kern), time.perf_counter() - t0)
    p, t_norms = norms[key]
    t0 = time.perf_counter()
    idx = sampling.sample("column_norm", X, kern, c=m, seed=rng, replace=True, probabilities=p)
    return idx, t_norms + time.perf_counter() - t0


def _old_grid_rmse(X_fit, y_fit, X_eval, y_eval, sampler, kernel_name, m, sigmas, lams, rng, norms=None, idx=None):
    out = np.empty((len(sigmas), len(lams)))
    fit_t = samp_t = t_s = 0.0
    for i, sigma in enumerate(sigmas):
        kern = kernels.make(kernel_name, sigma=sigma)
        if sampler == "column_norm" or idx is None:
            idx, t_s = _old_landmarks(sampler, X_fit, kern, m, rng, norms)
        t1 = time.perf_counter()
        path = gnkr_path(X_fit, y_fit, X_fit[idx], kern, lams)
        t2 = time.perf_counter()
        pred = kern(X_eval, X_fit[idx]) @ path.T
        out[i] = np.sqrt(np.mean((pred - y_eval[:, None]) ** 2, axis=0))
        samp_t += t_s
        fit_t += t2 - t1
    return out, fit_t / len(sigmas), samp_t / len(sigmas), idx


def _old_fit(X, y, kernel, sigma, lam, m, sampler, seed):
    """GNKR.fit before fit_path: (landmark indices, coef)."""
    kern = kernels.make(kernel, sigma=sigma)
    rng = np.random.default_rng(seed)
    if sampler == "uniform":
        idx = sampling.sample("uniform", X, kern, c=min(m, len(X)), seed=rng)
    else:
        idx = sampling.sample("column_norm", X, kern, c=m, seed=rng, replace=True)
    return idx, gnkr_path(X, y, X[idx], kern, [lam])[0]


@pytest.fixture
def reg(rng):
    X = rng.uniform(-2, 2, size=(400, 2))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * rng.normal(size=400)
    return X[:300], y[:300], X[300:], y[300:]


def _rmse(pred, y):
    return np.sqrt(np.mean((pred - y) ** 2, axis=-1))


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
@pytest.mark.parametrize("sampler", ["uniform", "column_norm"])
def test_fit_path_reproduces_the_study_grid_bit_for_bit(kernel, sampler, reg):
    """The old study's three fits (test grid, validation grid, extra widths) on one continued stream,
    against a frozen copy of its code (the GNKR study now runs on fit_path)."""
    grid_rmse = _old_grid_rmse
    X, y, Xt, yt = reg
    sub, val = np.arange(60, 300), np.arange(60)
    extra = [0.3, 3.0]
    m = 40
    old_rng, new_rng = np.random.default_rng(5), np.random.default_rng(5)
    old_norms, new_norms = ({}, {}), ({}, {})

    old_test, _, old_samp, old_idx = grid_rmse(X, y, Xt, yt, sampler, kernel, m, SIGMAS, LAMS, old_rng, old_norms[0])
    old_val = grid_rmse(X[sub], y[sub], X[val], y[val], sampler, kernel, m, SIGMAS, LAMS, old_rng, old_norms[1])[0]
    old_more = grid_rmse(X, y, Xt, yt, sampler, kernel, m, extra, LAMS, old_rng, old_norms[0],
                         idx=old_idx if sampler == "uniform" else None)[0]

    def est():
        return GNKR(kernel=kernel, n_components=m, sampler=sampler, random_state=new_rng)

    full = est().fit_path(X, y, SIGMAS, LAMS, probabilities=new_norms[0])
    part = est().fit_path(X[sub], y[sub], SIGMAS, LAMS, probabilities=new_norms[1])
    more = est().fit_path(X, y, extra, LAMS, probabilities=new_norms[0],
                          landmarks=full.path_indices_[-1] if sampler == "uniform" else None)

    np.testing.assert_array_equal(_rmse(full.predict_path(Xt), yt), old_test)
    np.testing.assert_array_equal(_rmse(part.predict_path(X[val]), y[val]), old_val)
    np.testing.assert_array_equal(_rmse(more.predict_path(Xt), yt), old_more)
    # the per-sigma form the old loop used gives the same bits too
    P = full.predict_path(Xt)
    for i in range(len(SIGMAS)):
        np.testing.assert_array_equal(np.sqrt(np.mean((P[i].T - yt[:, None]) ** 2, axis=0)), old_test[i])
    np.testing.assert_array_equal(full.path_indices_[-1], old_idx)
    assert new_rng.bit_generator.state == old_rng.bit_generator.state  # same number of draws
    assert full.path_sampling_times_.shape == (3,) and np.all(full.path_sampling_times_ > 0)
    if sampler == "uniform":
        assert np.all(more.path_sampling_times_ == 0)
        assert all(i is full.path_indices_[0] for i in full.path_indices_)
    else:
        assert sorted(new_norms[0]) == sorted(SIGMAS + extra) and sorted(new_norms[1]) == SIGMAS
        assert not all(np.array_equal(i, full.path_indices_[0]) for i in full.path_indices_[1:])


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
@pytest.mark.parametrize("sampler", ["uniform", "column_norm"])
@pytest.mark.parametrize("m", [25, 400])  # 400 > n: uniform caps at n, column-norm draws with replacement
def test_fit_is_unchanged(kernel, sampler, m, reg):
    X, y, Xt, _ = reg
    idx, coef = _old_fit(X, y, kernel, 0.7, 1e-8, m, sampler, seed=3)
    model = GNKR(kernel=kernel, sigma=0.7, alpha=1e-8, n_components=m, sampler=sampler, random_state=3).fit(X, y)
    np.testing.assert_array_equal(model.component_indices_, idx)
    np.testing.assert_array_equal(model.coef_, coef)
    np.testing.assert_array_equal(model.landmarks_, X[idx])
    assert 0 < model.sampling_time_ <= model.fit_time_


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_uniform_path_equals_separate_fits(kernel, reg):
    """Uniform landmarks drawn from the same seed coincide for every sigma: the grid is the separate fits."""
    X, y, Xt, _ = reg
    path = GNKR(kernel=kernel, n_components=30, sampler="uniform", random_state=11).fit_path(X, y, SIGMAS, LAMS)
    P = path.predict_path(Xt)
    assert P.shape == (3, 4, 100)
    for i, s in enumerate(SIGMAS):
        for j, lam in enumerate(LAMS):
            one = GNKR(kernel=kernel, sigma=s, alpha=lam, n_components=30, sampler="uniform", random_state=11).fit(X, y)
            np.testing.assert_array_equal(path.path_indices_[i], one.component_indices_)
            np.testing.assert_array_equal(path.path_coef_[i][j], one.coef_)
            np.testing.assert_allclose(P[i, j], one.predict(Xt), rtol=1e-9, atol=1e-9 * np.abs(one.predict(Xt)).max())


@pytest.mark.parametrize("sampler", ["uniform", "column_norm"])
def test_fixed_landmarks_serve_every_sigma_and_draw_nothing(sampler, reg):
    X, y, Xt, _ = reg
    idx = np.array([3, 3, 10, 50, 120, 299])  # duplicates allowed
    g = np.random.default_rng(0)
    state = g.bit_generator.state
    path = GNKR(kernel="epanechnikov", sampler=sampler, random_state=g).fit_path(X, y, SIGMAS, LAMS, landmarks=idx)
    assert g.bit_generator.state == state
    assert np.all(path.path_sampling_times_ == 0)
    P = path.predict_path(Xt)
    for i, s in enumerate(SIGMAS):
        kern = kernels.make("epanechnikov", sigma=s)
        np.testing.assert_array_equal(path.path_indices_[i], idx)
        np.testing.assert_array_equal(path.path_coef_[i], gnkr_path(X, y, X[idx], kern, LAMS))
        np.testing.assert_array_equal(P[i], (kern(Xt, X[idx]) @ path.path_coef_[i].T).T)


def test_path_attributes_and_shapes(reg):
    X, y, Xt, _ = reg
    path = GNKR(n_components=20, random_state=0).fit_path(X, y, np.array(SIGMAS), LAMS)
    np.testing.assert_array_equal(path.path_sigmas_, SIGMAS)
    np.testing.assert_array_equal(path.path_alphas_, LAMS)
    assert path.path_sigmas_.dtype == np.float64 and path.path_alphas_.dtype == np.float64
    assert len(path.path_indices_) == len(path.path_coef_) == 3
    assert all(i.shape == (20,) for i in path.path_indices_)
    assert all(c.shape == (4, 20) for c in path.path_coef_)
    assert path.path_fit_times_.shape == path.path_sampling_times_.shape == (3,)
    assert np.all(path.path_fit_times_ > 0)
    assert path.predict_path(Xt[:5]).shape == (3, 4, 5)
    assert path.n_features_in_ == 2
    assert [k.params() for k in path.path_kernels_] == [kernels.make("gaussian", sigma=s).params() for s in SIGMAS]
    with pytest.raises(NotFittedError):
        path.predict(Xt)  # fit_path fits a grid, not the (sigma, lam) of predict
    one = GNKR(n_components=20, random_state=0).fit(X, y)
    with pytest.raises(NotFittedError):
        one.predict_path(Xt)
    path.fit(X, y)  # the other kind of fit replaces the attributes of the first
    assert not hasattr(path, "path_coef_") and path.predict(Xt).shape == (100,)
    path.fit_path(X, y, SIGMAS, LAMS)
    assert not hasattr(path, "coef_")


def test_column_norm_cache_gives_identical_draws_and_counts_its_seconds(reg, monkeypatch):
    X, y, _, _ = reg
    calls = []
    real = sampling.column_norm_probabilities
    monkeypatch.setattr(sampling, "column_norm_probabilities", lambda X, k: calls.append(k) or real(X, k))
    cache = {}
    for m in (10, 30):  # the norms do not depend on m: computed once, shared
        a = GNKR(n_components=m, random_state=4).fit_path(X, y, SIGMAS, LAMS, probabilities=cache)
        b = GNKR(n_components=m, random_state=4).fit_path(X, y, SIGMAS, LAMS)
        for ia, ib, ca, cb in zip(a.path_indices_, b.path_indices_, a.path_coef_, b.path_coef_, strict=True):
            np.testing.assert_array_equal(ia, ib)
            np.testing.assert_array_equal(ca, cb)
    assert len(calls) == 3 + 3 + 3  # cache: once per sigma; no cache: every time
    assert sorted(cache) == SIGMAS and all(type(k) is float for k in cache)
    # a cached sigma still reports the seconds its norms took
    cache = {s: (real(X, kernels.make("gaussian", sigma=s)), 100.0) for s in SIGMAS}
    c = GNKR(n_components=10, random_state=4).fit_path(X, y, SIGMAS, LAMS, probabilities=cache)
    assert np.all(c.path_sampling_times_ >= 100.0)
    ref = GNKR(n_components=10, random_state=4).fit_path(X, y, SIGMAS, LAMS)
    for ic, ir in zip(c.path_indices_, ref.path_indices_, strict=True):
        np.testing.assert_array_equal(ic, ir)


def test_a_generator_continues_over_calls(reg):
    X, y, _, _ = reg
    g = np.random.default_rng(8)
    a = GNKR(n_components=15, sampler="uniform", random_state=g).fit_path(X, y, SIGMAS, LAMS)
    b = GNKR(n_components=15, sampler="uniform", random_state=g).fit_path(X, y, SIGMAS, LAMS)
    ref = np.random.default_rng(8)
    np.testing.assert_array_equal(a.path_indices_[0], sampling.sample("uniform", X, "gaussian", c=15, seed=ref))
    np.testing.assert_array_equal(b.path_indices_[0], sampling.sample("uniform", X, "gaussian", c=15, seed=ref))
    # an int seed starts afresh every call
    c1 = GNKR(n_components=15, random_state=8).fit_path(X, y, SIGMAS, LAMS)
    c2 = GNKR(n_components=15, random_state=8).fit_path(X, y, SIGMAS, LAMS)
    np.testing.assert_array_equal(np.concatenate(c1.path_indices_), np.concatenate(c2.path_indices_))


@pytest.mark.parametrize("kwargs,match", [
    ({"sigmas": [1.0, -1.0]}, r"^GNKR.fit_path: sigmas must be a non-empty 1-D sequence of positive finite"),
    ({"sigmas": []}, r"sigmas must be a non-empty"),
    ({"sigmas": [[1.0]]}, r"sigmas must be a non-empty 1-D"),
    ({"sigmas": [float("inf")]}, r"sigmas must be"),
    ({"sigmas": ["median"]}, r"sigmas must be"),
    ({"alphas": [0.0]}, r"^GNKR.fit_path: alphas must be a non-empty 1-D sequence of positive finite"),
    ({"alphas": [True]}, r"alphas must be"),
    ({"landmarks": np.array([0, 300])}, r"^GNKR.fit_path: landmarks must be a non-empty 1-D array of indices in "
                                        r"\[0, 300\)"),
    ({"landmarks": np.array([0.0, 1.0])}, r"landmarks must be"),
    ({"landmarks": np.array([], dtype=int)}, r"landmarks must be"),
    ({"probabilities": [1]}, r"probabilities must be a dict"),
])
def test_fit_path_errors(kwargs, match, reg):
    X, y, _, _ = reg
    args = {"sigmas": SIGMAS, "alphas": LAMS, **kwargs}
    with pytest.raises(ValueError, match=match):
        GNKR().fit_path(X, y, **args)


def test_fit_path_validates_the_estimator_params(reg):
    X, y, _, _ = reg
    with pytest.raises(ValueError, match="sampler"):
        GNKR(sampler="leverage").fit_path(X, y, SIGMAS, LAMS)


# -- work shared across widths (issue 39): the same bits as the plain per-(sigma, lambda) computation -------
@pytest.fixture
def small_blocks(monkeypatch):
    """Kernel blocks of 7 rows, Gram chunks of 512 rows and element-wise pieces of a few rows: several of each
    on small data, so the shared distances must follow the library's blocking to give its bits."""
    from nystrom_bench.learners._gnkr_path import _SquaredDistances

    monkeypatch.setattr(kernels.Kernel, "_rows_per_block", lambda self, m: 7)
    monkeypatch.setattr(kernels.Kernel, "GRAM_CHUNK_BYTES", 1)  # gram's floor: 512-row chunks
    monkeypatch.setattr(_SquaredDistances, "PIECE_BYTES", 1000)  # element-wise passes in pieces of 2-6 rows


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("how", ["uniform", "fixed"])
@pytest.mark.parametrize("m", [20, 50])
def test_shared_distances_path_equals_plain_fits_bit_for_bit(d, how, m, small_blocks):
    """Epanechnikov widths sharing one matrix of squared distances (uniform or fixed landmarks): every
    (sigma, lambda) coefficient vector and prediction equals gnkr_path / kern(X, Z) of that pair alone."""
    rng = np.random.default_rng(d + m)
    X, Xt = rng.uniform(-3, 3, size=(1100, d)), rng.uniform(-3, 3, size=(90, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.normal(size=1100)
    sigmas = [1e-3, 0.2, 1.0, 30.0]
    fixed = np.sort(rng.choice(1100, m))  # with repeats
    path = GNKR(kernel="epanechnikov", n_components=m, sampler="uniform", random_state=4).fit_path(
        X, y, sigmas, LAMS, landmarks=fixed if how == "fixed" else None)
    assert all(Z is path.path_landmarks_[0] for Z in path.path_landmarks_)  # one landmark set, shared
    P = path.predict_path(Xt)
    idx = path.path_indices_[0]
    for i, s in enumerate(sigmas):
        kern = kernels.make("epanechnikov", sigma=s)
        for j, lam in enumerate(LAMS):
            np.testing.assert_array_equal(path.path_coef_[i][j], gnkr_path(X, y, X[idx], kern, [lam])[0])
        # predict_path's product over all lambdas at once (a GEMM, not one GEMV per lambda)
        np.testing.assert_array_equal(P[i], (kern(Xt, X[idx]) @ path.path_coef_[i].T).T)


@pytest.mark.parametrize("d", [1, 3])
def test_shared_gram_and_column_norms_equal_the_kernels_bit_for_bit(d, small_blocks):
    from nystrom_bench.learners.gnkr import (
        _epanechnikov_column_norm_probabilities,
        _gram_rows,
        _row_blocks,
        _SquaredDistances,
    )

    rng = np.random.default_rng(d)
    X = rng.normal(size=(1300, d))
    Z, y = X[rng.choice(1300, 30)], rng.normal(size=(1300, 2))  # 2-D y: C^T y for several targets
    kerns = [kernels.make("epanechnikov", sigma=s) for s in (0.05, 0.5, 5.0)]
    dist = _SquaredDistances(X, Z, _row_blocks(kerns[0], 1300, 30, _gram_rows(kerns[0], 1300, 30)))
    blocks = _row_blocks(kerns[0], 1300, 30, 512)  # chunks of 512, 512 and 276 rows, each in 7-row blocks
    assert len(blocks) == 74 + 74 + 40 and slice(511, 512) in blocks and slice(1297, 1300) in blocks
    for kern, p in zip(kerns, _epanechnikov_column_norm_probabilities(X, kerns), strict=True):
        G, b = dist.gram(kern, y)
        G0, b0 = kern.gram(X, Z, y)
        np.testing.assert_array_equal(G, G0)
        np.testing.assert_array_equal(b, b0)
        np.testing.assert_array_equal(p, sampling.column_norm_probabilities(X, kern))
    K = kerns[0](X, Z)
    assert np.any(K == 0) and np.any((K > 0) & (K < 1))  # compact support cut inside the data: not trivial


def test_column_norm_path_computes_every_width_once(reg, monkeypatch):
    """Column-norm probabilities of an Epanechnikov path: one pass for every missing width, cached."""
    from nystrom_bench.learners import _gnkr_path as mod

    X, y, _, _ = reg
    calls, real = [], mod._epanechnikov_column_norm_probabilities
    monkeypatch.setattr(mod, "_epanechnikov_column_norm_probabilities",
                        lambda X, ks: calls.append([k.sigma for k in ks]) or real(X, ks))
    cache = {}
    path = GNKR(kernel="epanechnikov", n_components=20, sampler="column_norm", random_state=1).fit_path(
        X, y, SIGMAS, LAMS, probabilities=cache)
    GNKR(kernel="epanechnikov", n_components=20, sampler="column_norm", random_state=1).fit_path(
        X, y, SIGMAS + [3.0], LAMS, probabilities=cache)
    assert calls == [SIGMAS]  # the second path finds SIGMAS cached and computes 3.0 alone, as before
    assert sorted(cache) == sorted(SIGMAS + [3.0]) and np.all(path.path_sampling_times_ > 0)
    for s in SIGMAS:
        np.testing.assert_array_equal(cache[s][0], sampling.column_norm_probabilities(
            X, kernels.make("epanechnikov", sigma=s)))


@pytest.mark.parametrize("sigma", [0.05, 0.1, 1.0])
def test_gaussian_gram_without_subnormals_gives_the_kernels_eigendecomposition(sigma, small_blocks):
    """_gaussian_gram (each chunk of C scaled by 2^s before its SYRK, the sum scaled back): C^T y bit for
    bit; C^T C bit for bit wherever its products stay normal (everywhere at sigma = 1), the rest only in
    entries below 2^-950; the coefficient path of every lambda bit for bit that of Kernel.gram's Gram."""
    from nystrom_bench.learners.gnkr import _eigh_path, _gram

    rng = np.random.default_rng(7)
    X = rng.uniform(0, 6, size=(1300, 1))  # 1-D points spread wide: exp(-d^2 / (2 sigma^2)) spans 1 ... 0
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=1300)
    Z = X[rng.choice(1300, 80, replace=False)]
    kern = kernels.make("gaussian", sigma=sigma)
    G0, b0 = kern.gram(X, Z, y)
    G, b = _gram(kern, X, Z, y)
    np.testing.assert_array_equal(b, b0)
    C = kern(X, Z)
    if sigma == 1.0:  # every entry above 2^-511: no product of two is subnormal
        assert C.min() > 2.0**-511
        np.testing.assert_array_equal(G, G0)
    else:  # the case it exists for: entries whose products are subnormal, and G differs only far below them
        assert np.any((C > 0) & (C < 2.0**-511)) and np.any((G0 > 0) & (G0 < 2.0**-1022))
        big = np.abs(G0) >= 2.0**-950
        np.testing.assert_array_equal(G[big], G0[big])
        assert np.all(np.abs(G - G0) < 2.0**-950) and np.any(G != G0)  # (the scaled path ran)
    np.testing.assert_array_equal(_eigh_path(G, b, 1300, LAMS), _eigh_path(G0, b0, 1300, LAMS))
    np.testing.assert_array_equal(gnkr_path(X, y, Z, kern, LAMS), _eigh_path(G0, b0, 1300, LAMS))


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
@pytest.mark.parametrize("sampler", ["uniform", "column_norm"])
def test_the_studys_path_function_is_gnkr_fit_path(kernel, sampler, reg):
    """The gnkr study calls learners._gnkr_path.fit_path on its float64 splits: the bits of GNKR.fit_path."""
    from nystrom_bench.learners import _gnkr_path

    X, y, Xt, _ = reg
    est = GNKR(kernel=kernel, n_components=25, sampler=sampler, random_state=np.random.default_rng(3)).fit_path(
        X, y, SIGMAS, LAMS)
    fit = _gnkr_path.fit_path(X, y, np.array(SIGMAS), np.array(LAMS), kernel, sampler, 25, np.random.default_rng(3))
    for a, b in zip(est.path_indices_ + est.path_coef_, fit.path_indices_ + fit.path_coef_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(est.predict_path(Xt), fit.predict_path(Xt))


def test_a_gnkr_path_imports_no_scikit_learn():
    """What a gnkr run job runs (its study kind and the path) imports no scikit-learn (issue 39)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from nystrom_bench.studies.gnkr import methods\n"
            "from nystrom_bench.learners import _gnkr_path\n"
            "X = np.random.default_rng(0).normal(size=(60, 2)); y = X[:, 0]\n"
            "fit = _gnkr_path.fit_path(X, y, np.array([1.0, 2.0]), np.array([1e-6]), 'epanechnikov', 'column_norm', "
            "10, np.random.default_rng(1))\n"
            "fit.predict_path(X)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_chunked_gram_on_one_reused_buffer_equals_the_kernels_gram(kernel, small_blocks):
    """_gram over several widths on one scratch buffer (as fit_path calls it): each width's (C^T C, C^T y) bit
    for bit Kernel.gram's (Gaussian widths whose products stay normal: nothing to scale away)."""
    from nystrom_bench.learners._gnkr_path import _gram, _Scratch

    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(1300, 3)), rng.normal(size=(1300, 2))
    Z = X[rng.choice(1300, 40)]
    scratch = _Scratch()
    for s in (0.5, 2.0, 8.0):
        kern = kernels.make(kernel, sigma=s)
        G, b = _gram(kern, X, Z, y, scratch)
        G0, b0 = kern.gram(X, Z, y)
        np.testing.assert_array_equal(G, G0)
        np.testing.assert_array_equal(b, b0)
    assert list(scratch._bufs) == ["chunk"] and scratch._bufs["chunk"].shape == (512 * 40,)  # one buffer for all
