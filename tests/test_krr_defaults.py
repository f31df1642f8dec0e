"""KRR as a user meets it: the default integration, the intercept."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from nystrom_bench import data, kernels
from nystrom_bench.learners import KRR


def test_the_default_krr_is_close_to_exact_on_friedman1():
    """The issue's case: friedman1 as generated (features in [0, 1]), every parameter at its default."""
    sp = data.load("friedman1", seed=0, scaling="none")
    mse = {}
    for name, model in {"default": KRR(random_state=0), "exact": KRR(approximation="exact"),
                        "lla_small_alpha": KRR(alpha=1e-3, random_state=0),
                        "exact_small_alpha": KRR(alpha=1e-3, approximation="exact"),
                        "gsa_small_alpha": KRR(alpha=1e-3, mode="gsa", random_state=0)}.items():
        model.fit(sp.X_train, sp.y_train)
        mse[name] = float(np.mean((model.predict(sp.X_test) - sp.y_test) ** 2))
    assert KRR().mode == "lla" and KRR().fit_intercept
    assert mse["default"] <= 1.15 * mse["exact"]  # measured: 2.886 vs 2.572 (R^2 0.883 vs 0.896)
    # why GSA is not the default: at a small alpha it predicts with K on K~'s exploding coefficients
    assert mse["lla_small_alpha"] <= 1.05 * mse["exact_small_alpha"]  # measured: 2.411 vs 2.401
    assert mse["gsa_small_alpha"] > 100 * mse["exact_small_alpha"]  # measured: 76,407 (R^2 -3,097)


def _data(n=80, seed=0, t=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    Y = np.column_stack([np.sin(X[:, 0]) + 5.0 + k + 0.1 * rng.normal(size=n) for k in range(t)])
    return X, Y[:, 0] if t == 1 else Y


@pytest.mark.parametrize("approximation, mode", [("exact", "lla"), ("nystrom", "gsa")])
def test_intercept_of_the_dual_fits_solves_the_bordered_system(approximation, mode):
    X, y = _data()
    m = KRR(gamma=0.7, alpha=0.1, fit_intercept=True, approximation=approximation, mode=mode, n_components=15,
            random_state=0).fit(X, y)
    K = kernels.make("gaussian", gamma=0.7)(X)
    if approximation == "nystrom":
        idx = m.component_indices_
        K = K[:, idx] @ np.linalg.pinv(K[np.ix_(idx, idx)], rcond=1e-10, hermitian=True) @ K[idx]
    n = len(X)
    A = np.block([[K + 0.1 * np.eye(n), np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.append(y, 0.0))
    np.testing.assert_allclose(m.dual_coef_, sol[:n], atol=1e-7)
    assert m.intercept_ == pytest.approx(sol[n], abs=1e-7)


@pytest.mark.parametrize("t", [1, 2])
def test_lla_intercept_is_ridge_on_the_nystrom_features(t):
    X, Y = _data(t=t)
    m = KRR(gamma=0.7, alpha=0.1, fit_intercept=True, n_components=15, random_state=0).fit(X, Y)
    Z = X[m.component_indices_]
    W = kernels.make("gaussian", gamma=0.7)(Z)
    w, U = np.linalg.eigh(W)
    F = kernels.make("gaussian", gamma=0.7)(X, Z) @ (U / np.sqrt(w))
    r = Ridge(alpha=0.1).fit(F, Y)
    np.testing.assert_allclose(m.intercept_, r.intercept_, atol=1e-7)
    np.testing.assert_allclose(m.predict(X), r.predict(F), atol=1e-7)


def test_ncr_equals_lla_with_an_intercept_and_the_intercept_matters():
    X, y = _data()
    kw = dict(gamma=0.7, alpha=0.1, fit_intercept=True, n_components=15, random_state=0)
    lla, ncr = KRR(mode="lla", **kw).fit(X, y), KRR(mode="ncr", **kw).fit(X, y)
    np.testing.assert_allclose(lla.predict(X), ncr.predict(X), atol=1e-7)
    far = np.array([[10.0, 10.0]])  # far from the data a Gaussian model returns its intercept
    assert lla.predict(far)[0] == pytest.approx(lla.intercept_, abs=1e-6) and lla.intercept_ > 4
    assert KRR(**{**kw, "fit_intercept": False}).fit(X, y).predict(far)[0] == pytest.approx(0, abs=1e-6)


def test_a_fitted_nystrom_model_keeps_landmarks_not_the_training_set():
    import pickle

    rng = np.random.default_rng(0)
    sizes = {}
    for n in (500, 4000):
        X = rng.normal(size=(n, 3))
        y = np.sin(X[:, 0])
        for mode in ("lla", "ncr"):
            m = KRR(gamma=0.5, n_components=20, mode=mode, random_state=0).fit(X, y)
            sizes[(n, mode)] = len(pickle.dumps(m))
            np.testing.assert_allclose(pickle.loads(pickle.dumps(m)).predict(X[:5]), m.predict(X[:5]))
    for mode in ("lla", "ncr"):
        assert sizes[(4000, mode)] == sizes[(500, mode)] < 20_000


def test_string_labels_multiclass_and_the_regression_it_wraps():
    from sklearn.utils.estimator_checks import check_estimator

    from nystrom_bench.learners import KRRClassifier

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.5, size=(40, 2)) for c in ((0, 0), (3, 0), (0, 3))])
    y = np.repeat(["a", "b", "c"], 40)
    clf = KRRClassifier(gamma=0.5, alpha=0.1, n_components=20, random_state=0).fit(X, y)
    assert clf.classes_.tolist() == ["a", "b", "c"] and clf.score(X, y) > 0.95
    T = np.where(y[:, None] == np.array(["a", "b", "c"])[None, :], 1.0, -1.0)
    reg = KRR(gamma=0.5, alpha=0.1, n_components=20, random_state=0).fit(X, T)
    np.testing.assert_allclose(clf.decision_function(X), reg.predict(X))
    binary = KRRClassifier(gamma=0.5, alpha=0.1, approximation="exact").fit(X[:80], y[:80])
    assert binary.decision_function(X[:80]).shape == (80,) and set(binary.predict(X[:80])) <= {"a", "b"}
    with pytest.raises(ValueError, match="at least 2 classes"):
        KRRClassifier().fit(X[:40], y[:40])
    check_estimator(KRRClassifier(approximation="exact"))
    # with sampled landmarks, repeated rows change the draw: weights equal repetition only for given landmarks
    check_estimator(KRRClassifier(n_components=10, random_state=0), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": "landmarks are drawn from the (repeated) rows",
        "check_sample_weight_equivalence_on_sparse_data": "landmarks are drawn from the (repeated) rows"})


def test_an_indefinite_kernel_is_flagged():
    X, y = _data()
    with pytest.warns(UserWarning, match="not positive semi-definite"):
        KRR(kernel="epanechnikov", sigma=0.5, n_components=10, random_state=0).fit(X, y)


def test_mcm_measures_its_grid_assumption_and_c_ree_flags_an_indefinite_operator():
    import warnings

    from nystrom_bench import approx, criteria

    grid = np.stack(np.meshgrid(np.arange(20) * 0.1, np.arange(20) * 0.1, indexing="ij"), -1).reshape(-1, 2)
    k = kernels.make("gaussian", gamma=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        op = approx.build("mcm", grid, k, grid=(20, 20))
        value = criteria.c_ree(op, np.sin(3 * grid[:, 0]), mu=0.005)
    assert op.grid_misfit_ < 1e-12 and value == pytest.approx(0.0403, abs=5e-4)
    assert "MCMOperator(n=400" in repr(op)
    scattered = np.random.default_rng(0).uniform(size=(400, 2))
    with pytest.warns(UserWarning, match="far from the grid"):
        assert approx.build("mcm", scattered, k, grid=(20, 20)).grid_misfit_ > 0.3
    wide = approx.build("mcm", grid, kernels.make("gaussian", gamma=0.1), grid=(20, 20))
    with pytest.warns(UserWarning, match="not positive definite"):
        criteria.c_ree(wide, np.sin(grid[:, 0]), mu=0.005)


@pytest.mark.parametrize("approximation, mode", [("exact", "lla"), ("nystrom", "gsa"), ("nystrom", "lla"),
                                                  ("nystrom", "ncr")])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_integer_sample_weights_equal_repeated_rows(approximation, mode, fit_intercept):
    """Weights 2 on some rows = those rows twice (same landmarks: given explicitly)."""
    X, y = _data(40)
    w = np.ones(40)
    w[:10] = 2
    Xr, yr = np.vstack([X, X[:10]]), np.concatenate([y, y[:10]])
    kw = dict(gamma=0.7, alpha=0.1, approximation=approximation, mode=mode, fit_intercept=fit_intercept,
              landmarks=X[::4])
    a = KRR(**kw).fit(X, y, sample_weight=w)
    b = KRR(**kw).fit(Xr, yr)
    Xt = np.random.default_rng(3).uniform(-2, 2, size=(7, 2))
    np.testing.assert_allclose(a.predict(Xt), b.predict(Xt), atol=1e-7)
    np.testing.assert_allclose(KRR(**kw).fit(X, y, sample_weight=np.ones(40)).predict(Xt), KRR(**kw).fit(X, y).predict(Xt),
                               atol=1e-8)


def _every_third_row(X, kernel, c, rng):
    return np.arange(0, 3 * c, 3)


def test_a_function_sampler_works_in_parallel_grid_search():
    """A registered name lives in one process; a function travels to the workers."""
    from sklearn.model_selection import GridSearchCV

    X, y = _data(90)
    gs = GridSearchCV(KRR(sampler=_every_third_row, n_components=10), {"alpha": [0.01, 0.1]}, cv=2, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(gs.best_estimator_.component_indices_, np.arange(0, 30, 3))


# -- the defaults of issue 25: chosen from the measurements in the docs' "Choosing parameters" -------------
@pytest.mark.parametrize("scaling", ["none", "standardize"])
def test_default_krr_fits_friedman1_as_generated_and_standardised(scaling):
    """KRR() with every default: R^2 >= 0.8 (measured 0.876 / 0.877 over seeds 0-2; gamma = 1.0, the old
    default, gave 0.024 on the standardised data)."""
    sp = data.load("friedman1", seed=0, scaling=scaling)
    assert KRR().fit(sp.X_train, sp.y_train).score(sp.X_test, sp.y_test) >= 0.8


@pytest.mark.parametrize("name", ["digits", "twonorm"])
def test_default_classifiers_reach_95_percent(name):
    from nystrom_bench.learners import LSSVM, KRRClassifier, NuSVM

    sp = data.load(name, seed=0)
    # a fixed random_state: with None the landmarks differ per run and KRRClassifier on digits ranged over
    # 0.957-0.974 over random_state 0-5 and 0.9499 once in CI: the test failed by chance at its threshold
    for clf in (KRRClassifier(random_state=0), NuSVM(random_state=0), LSSVM(approximation="nystrom", random_state=0)):
        assert clf.fit(sp.X_train, sp.y_train).score(sp.X_test, sp.y_test) >= 0.95, clf


def test_the_defaults_are_the_same_in_every_estimator():
    from nystrom_bench.learners import GNKR, LSSVM, KRRClassifier, NuSVM, NystromFeatures

    counts = {type(e).__name__: e.get_params()["n_components"]
              for e in (KRR(), KRRClassifier(), LSSVM(), NuSVM(), GNKR())}
    assert set(counts.values()) == {200}, counts
    assert NystromFeatures().n_components == 100  # the drop-in keeps scikit-learn's Nystroem defaults (issue 36)
    assert KRR().alpha == KRRClassifier().alpha == LSSVM().alpha == 1.0
    assert all(e.gamma is None for e in (KRR(), KRRClassifier(), LSSVM(), NuSVM(), NystromFeatures()))
    assert GNKR().sigma is None


def test_default_width_is_the_median_heuristic_everywhere():
    from nystrom_bench.learners import GNKR, LSSVM, NuSVM, NystromFeatures

    X, y = _data(60)
    labels = (y > y.mean()).astype(int)
    gamma = 1 / kernels.median_sq_dist(X)
    for est in (KRR(n_components=10, random_state=0).fit(X, y), LSSVM().fit(X, labels),
                NuSVM(n_components=10, random_state=0).fit(X, labels)):
        assert est.kernel_.gamma == pytest.approx(gamma), est
    assert NystromFeatures(gamma="median", n_components=10, random_state=0).fit(X).gamma_ == pytest.approx(gamma)
    assert NystromFeatures(n_components=10, random_state=0).fit(X).gamma_ == 1 / X.shape[1]  # Nystroem's default
    assert GNKR(n_components=10, random_state=0).fit(X, y).kernel_.gamma == pytest.approx(gamma)
    assert KRR(kernel="laplacian", n_components=10, random_state=0).fit(X, y).kernel_.gamma == pytest.approx(gamma)
    with pytest.warns(UserWarning, match="not positive semi-definite"):
        epa = KRR(kernel="epanechnikov", n_components=10, random_state=0).fit(X, y)
    assert epa.kernel_.sigma == pytest.approx(np.sqrt(0.5 / gamma))
    assert KRR(kernel="polynomial", n_components=10, random_state=0).fit(X, y).kernel_.gamma == 1.0
    assert KRR(kernel="linear", n_components=2, random_state=0).fit(X, y).score(X, y) > 0  # no width to set
    # an explicit width wins; a constant column or coinciding points fall back instead of failing
    assert KRR(gamma=0.3, n_components=10).fit(X, y).kernel_.gamma == 0.3
    assert KRR(sigma=2.0, n_components=10).fit(X, y).kernel_.gamma == pytest.approx(1 / 8)
    assert KRR(n_components=3).fit(np.ones((5, 2)), np.arange(5.0)).kernel_.gamma == 1.0
