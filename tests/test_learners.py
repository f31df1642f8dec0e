import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import approx, kernels
from nystrom_bench.learners import KRR


@pytest.fixture
def data(rng):
    X = rng.uniform(-2, 2, size=(120, 3))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=120)
    Xt = rng.uniform(-2, 2, size=(40, 3))
    return X, y, Xt


@parametrize_with_checks([
    KRR(fit_intercept=False, approximation="exact", alpha=1e-2),
    KRR(fit_intercept=False, approximation="nystrom", n_components=30, mode="gsa", random_state=0),
    KRR(fit_intercept=False, approximation="nystrom", n_components=30, mode="lla", random_state=0),
    KRR(fit_intercept=False, approximation="nystrom", n_components=30, mode="ncr", random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_exact_equals_sklearn_kernel_ridge(data):
    X, y, Xt = data
    ours = KRR(fit_intercept=False, approximation="exact", gamma=0.4, alpha=0.05).fit(X, y).predict(Xt)
    ref = KernelRidge(kernel="rbf", gamma=0.4, alpha=0.05).fit(X, y).predict(Xt)
    np.testing.assert_allclose(ours, ref, rtol=1e-8)


def test_lla_equals_sklearn_nystroem_ridge_with_same_landmarks(data):
    X, y, Xt = data
    ny = Nystroem(kernel="rbf", gamma=0.4, n_components=30, random_state=1).fit(X)
    ref = Ridge(alpha=0.05, fit_intercept=False).fit(ny.transform(X), y).predict(ny.transform(Xt))
    ours = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="lla", landmarks=ny.component_indices_).fit(X, y).predict(Xt)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)


def test_ncr_equals_lla(data):
    """NCR = LLA for KRR when K_mm has full rank (substitute F = K_nm U L^-1/2)."""
    X, y, Xt = data
    idx = np.arange(0, 120, 6)
    lla = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="lla", landmarks=idx).fit(X, y).predict(Xt)
    ncr = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="ncr", landmarks=idx).fit(X, y).predict(Xt)
    np.testing.assert_allclose(ncr, lla, rtol=1e-7, atol=1e-9)


def test_gsa_is_dense_solve_with_approximate_matrix(data):
    X, y, Xt = data
    idx = np.arange(0, 120, 5)
    model = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="gsa", landmarks=idx).fit(X, y)
    kern = kernels.make("gaussian", gamma=0.4)
    Kt = approx.build("nystrom", X, kern, landmarks=idx).dense()
    a = np.linalg.solve(Kt + 0.05 * np.eye(120), y)
    np.testing.assert_allclose(model.predict(Xt), kern(Xt, X) @ a, rtol=1e-7)


@pytest.mark.parametrize("mode", ["gsa", "lla", "ncr"])
def test_all_landmarks_equals_exact(data, mode):
    X, y, Xt = data
    exact = KRR(fit_intercept=False, approximation="exact", gamma=0.4, alpha=0.1).fit(X, y).predict(Xt)
    full = KRR(fit_intercept=False, gamma=0.4, alpha=0.1, mode=mode, n_components=120, random_state=0).fit(X, y).predict(Xt)
    np.testing.assert_allclose(full, exact, rtol=1e-5, atol=1e-6)


def test_sampler_by_name_and_reproducible(data):
    X, y, Xt = data
    a = KRR(fit_intercept=False, sampler="column_norm", n_components=20, random_state=3).fit(X, y)
    b = KRR(fit_intercept=False, sampler="column_norm", n_components=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)
    km = KRR(fit_intercept=False, sampler="kmeans", n_components=10, random_state=0).fit(X, y)
    assert km.landmarks_.shape == (10, 3) and km.component_indices_ is None


def test_landmark_points(data):
    X, y, Xt = data
    idx = np.arange(10)
    a = KRR(fit_intercept=False, landmarks=idx, mode="lla").fit(X, y).predict(Xt)
    b = KRR(fit_intercept=False, landmarks=X[idx], mode="lla").fit(X, y).predict(Xt)
    np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("params,match", [
    ({"mode": "xyz"}, "mode"),
    ({"alpha": -1.0}, "alpha"),
    ({"kernel": "foo"}, "kernel"),
    ({"landmarks": np.array([0, 500])}, "indices must lie"),
    ({"sampler": "nope"}, "unknown sampler"),
])
def test_invalid_parameters(data, params, match):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        KRR(fit_intercept=False, **params).fit(X, y)


@pytest.mark.parametrize("params,match", [
    ({"kernel": "laplacian", "sigma": 1.0}, r"^KRR: 'sigma' is not a parameter of the laplacian kernel; it takes: gamma$"),
    ({"kernel": "epanechnikov", "gamma": 0.5}, r"^KRR: 'gamma' is not a parameter of the epanechnikov kernel"),
    ({"kernel": "gaussian", "degree": 2}, r"^KRR: 'degree' is not a parameter of the gaussian kernel"),
    ({"kernel": "linear", "coef0": 1.0}, r"^KRR: 'coef0' is not a parameter of the linear kernel; it takes no "),
    ({"kernel": "gaussian", "gamma": 1.0, "sigma": 1.0}, r"^KRR: give at most one of gamma, sigma, b"),
    ({"sigma": "medain"}, r"sigma"),
    ({"gamma": 0.0}, r"gamma"),
])
def test_kernel_parameters_the_kernel_does_not_take_are_errors(data, params, match):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        KRR(fit_intercept=False, approximation="exact", **params).fit(X, y)


@pytest.mark.parametrize("kernel,defaults", [
    ("gaussian", {"gamma": "median"}), ("rbf", {"gamma": "median"}), ("laplacian", {"gamma": "median"}),
    ("polynomial", {"degree": 3, "gamma": 1.0, "coef0": 1.0}), ("linear", {}), ("epanechnikov", {"sigma": "median"}),
])
def test_kernel_defaults(data, kernel, defaults):
    """None: the median heuristic for the kernels with a width (gaussian/rbf/laplacian gamma = 1 / median
    squared distance, epanechnikov sigma = sqrt(median / 2), the same gamma), the kernel's own defaults
    otherwise (issue 25: the old gamma = 1.0 was at chance on standardised data)."""
    X, y, Xt = data
    med = kernels.median_sq_dist(X)
    defaults = {k: (1 / med if k == "gamma" else np.sqrt(med / 2)) if v == "median" else v for k, v in defaults.items()}
    fixed = {"mode": "ncr", "n_components": 30, "alpha": 0.1, "random_state": 0}  # ncr: epanechnikov is indefinite
    model = KRR(fit_intercept=False, kernel=kernel, **fixed).fit(X, y)
    assert model.kernel_.params() == pytest.approx(defaults)
    ref = KRR(fit_intercept=False, kernel=kernel, **fixed, **defaults).fit(X, y)
    np.testing.assert_allclose(model.predict(Xt), ref.predict(Xt), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sigma", [0.1, 10.0])
def test_gaussian_sigma_is_used(data, sigma):
    X, y, Xt = data
    model = KRR(fit_intercept=False, kernel="gaussian", sigma=sigma, approximation="exact", alpha=0.05).fit(X, y)
    assert model.kernel_.gamma == 1 / (2 * sigma**2)
    ref = KRR(fit_intercept=False, gamma=1 / (2 * sigma**2), approximation="exact", alpha=0.05).fit(X, y)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))
    other = KRR(fit_intercept=False, kernel="gaussian", sigma=0.1 if sigma == 10.0 else 10.0, approximation="exact", alpha=0.05)
    assert not np.allclose(other.fit(X, y).predict(Xt), model.predict(Xt))


@pytest.mark.parametrize("key,heuristic", [("gamma", "median"), ("gamma", "mean"), ("sigma", "median")])
def test_heuristic_widths_resolved_on_the_training_data(data, key, heuristic):
    X, y, Xt = data
    model = KRR(fit_intercept=False, **{key: heuristic}, n_components=30, random_state=0).fit(X, y)
    kern = kernels.from_spec({"kernel": "gaussian", key: heuristic}, X)
    assert model.kernel_.params() == kern.params()
    ref = KRR(fit_intercept=False, gamma=kern.gamma, n_components=30, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))
    assert model.get_params()[key] == heuristic  # the parameter itself stays as given


@pytest.mark.parametrize("sampler", ["ridge_leverage", "adaptive_kumar", "adaptive_ms", "gaussian_sketch", "kmeans"])
@pytest.mark.parametrize("mode", ["gsa", "lla", "ncr"])
def test_every_sampler_in_every_mode(data, sampler, mode):
    X, y, Xt = data
    model = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, sampler=sampler, n_components=30, mode=mode, random_state=0).fit(X, y)
    pred = model.predict(Xt)
    assert pred.shape == (40,) and np.isfinite(pred).all()
    if mode != "gsa":  # GSA with small alpha is genuinely unstable (K~ in training, K at prediction)
        exact = KRR(fit_intercept=False, approximation="exact", gamma=0.4, alpha=0.05).fit(X, y).predict(Xt)
        assert np.mean((pred - exact) ** 2) < np.var(exact)


def test_ncr_equals_lla_with_a_sketch(data, rng):
    X, y, Xt = data
    S = approx.Sketch(rng.normal(size=(120, 15)))
    lla = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="lla", landmarks=S).fit(X, y).predict(Xt)
    ncr = KRR(fit_intercept=False, gamma=0.4, alpha=0.05, mode="ncr", landmarks=S).fit(X, y).predict(Xt)
    np.testing.assert_allclose(ncr, lla, rtol=1e-6, atol=1e-8)


# -- GNKR (Chen et al. (NIPS 2016)) ----------------------------------------------------------------------------
from nystrom_bench.learners import GNKR, gnkr_path  # noqa: E402


@parametrize_with_checks([GNKR(n_components=10, sampler="uniform", random_state=0),
                          GNKR(n_components=10, sampler="column_norm", random_state=0)])
def test_gnkr_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
@pytest.mark.parametrize("lam", [1e-9, 1e-4])
def test_gnkr_matches_dense_linear_system(kernel, lam, rng):
    """alpha = (K_nm^T K_nm + lam m n I)^-1 K_nm^T y (Chen et al. (NIPS 2016), eq. 5), also for the indefinite kernel."""
    X = rng.uniform(-2, 2, size=(150, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=150)
    model = GNKR(kernel=kernel, sigma=0.7, alpha=lam, n_components=25, sampler="column_norm", random_state=1).fit(X, y)
    kern = kernels.make(kernel, sigma=0.7)
    K = kern(X, model.landmarks_)
    ref = np.linalg.solve(K.T @ K + lam * 25 * 150 * np.eye(25), K.T @ y)
    np.testing.assert_allclose(model.coef_, ref, rtol=1e-6, atol=1e-9)
    Xt = rng.uniform(-2, 2, size=(30, 2))
    np.testing.assert_allclose(model.predict(Xt), kern(Xt, model.landmarks_) @ ref, rtol=1e-6, atol=1e-9)


def test_gnkr_indefinite_kernel_really_is_indefinite_and_still_fits(rng):
    x = np.sort(rng.uniform(0, 2 * np.pi, size=400))[:, None]
    y = x[:, 0] * np.sin(x[:, 0])
    kern = kernels.make("epanechnikov", sigma=0.5)
    assert np.linalg.eigvalsh(kern(x[::4])).min() < -1e-3
    model = GNKR(kernel="epanechnikov", sigma=0.5, alpha=1e-10, n_components=60, random_state=0).fit(x, y)
    assert np.sqrt(np.mean((model.predict(x) - y) ** 2)) < 0.05


def test_gnkr_path_equals_separate_fits_and_handles_duplicates(rng):
    X = rng.normal(size=(80, 2))
    y = X[:, 0]
    kern = kernels.make("gaussian", sigma=1.0)
    Z = X[[1, 2, 2, 5, 5, 5, 9]]  # duplicate landmarks: K_nm^T K_nm is singular
    path = gnkr_path(X, y, Z, kern, [1e-12, 1e-3])
    K = kern(X, Z)
    for lam, a in zip([1e-12, 1e-3], path, strict=True):
        A = K.T @ K + lam * 7 * 80 * np.eye(7)
        np.testing.assert_allclose(K @ a, K @ np.linalg.lstsq(A, K.T @ y, rcond=None)[0], atol=1e-6)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_gnkr_svd_solver_equals_eigh_and_stays_accurate_for_tiny_lambda(kernel, rng):
    X = rng.uniform(-2, 2, size=(200, 1))
    y = np.sin(3 * X[:, 0])
    kern = kernels.make(kernel, sigma=2.0)
    Z = X[:30]
    K = kern(X, Z)
    a_e, a_s = gnkr_path(X, y, Z, kern, [1e-6], solver="eigh")[0], gnkr_path(X, y, Z, kern, [1e-6], solver="svd")[0]
    np.testing.assert_allclose(K @ a_s, K @ a_e, atol=1e-8)
    # lambda m n far below eps * ||K||^2: the SVD form agrees with a stable augmented least-squares
    # solve of min ||K a - y||^2 + lambda m n ||a||^2, the normal equations (eigh) cannot
    lam = 1e-22
    A = np.vstack([K, np.sqrt(lam * 30 * 200) * np.eye(30)])
    ref = np.linalg.lstsq(A, np.concatenate([y, np.zeros(30)]), rcond=None)[0]
    a_s = gnkr_path(X, y, Z, kern, [lam], solver="svd")[0]
    a_e = gnkr_path(X, y, Z, kern, [lam], solver="eigh")[0]
    r_ref, r_s, r_e = (np.linalg.norm(K @ a - y) for a in (ref, a_s, a_e))
    assert abs(r_s - r_ref) <= 1e-6 * max(r_ref, 1e-12) + 1e-9
    assert r_s <= r_e + 1e-12


def test_gnkr_path_unknown_solver():
    with pytest.raises(ValueError, match="solver must be 'eigh' or 'svd'"):
        gnkr_path(np.ones((3, 1)), np.ones(3), np.ones((2, 1)), kernels.make("gaussian"), [1e-3], solver="qr")


def test_gnkr_column_norm_draws_with_replacement(rng):
    X = rng.normal(size=(30, 1))
    model = GNKR(sampler="column_norm", n_components=100, random_state=0).fit(X, X[:, 0])
    assert len(model.component_indices_) == 100  # more draws than points: necessarily repeats


def test_krr_classifier_shares_krr_parameters_by_construction():
    from nystrom_bench.learners import KRR, KRRClassifier

    # one __init__ and one set of constraints: a parameter added to KRR is KRRClassifier's too
    assert KRRClassifier.__init__ is KRR.__init__
    assert KRRClassifier._parameter_constraints is KRR._parameter_constraints
    assert KRRClassifier().get_params() == KRR().get_params()
