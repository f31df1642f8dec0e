import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import approx, criteria, kernels
from nystrom_bench.learners import LSSVM

GAMMA, MU = 0.4, 0.005


@pytest.fixture
def data(rng):
    """120 training and 40 test points in 3-D with three classes (and a binary split of them)."""
    X = rng.uniform(-2, 2, size=(120, 3))
    Xt = rng.uniform(-2, 2, size=(40, 3))
    y3 = np.digitize(np.sin(X[:, 0]) + X[:, 1] ** 2 / 2 + 0.2 * rng.normal(size=120), [0.0, 1.0])
    return X, y3, Xt


def _targets(y, binary):
    """+1/-1 target columns as LSSVM codes them: one column (classes_[1]) or one-vs-rest."""
    classes = np.unique(y)
    if binary:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes, 1.0, -1.0)


def _bordered(K, Y, shift):
    """Dense solve of [0 1^T; 1 K + shift I] [b; a] = [0; y] per column: (a (n, t), b (t,))."""
    n = len(K)
    M = np.zeros((n + 1, n + 1))
    M[0, 1:] = M[1:, 0] = 1.0
    M[1:, 1:] = K + shift * np.eye(n)
    sol = np.linalg.solve(M, np.vstack([np.zeros((1, Y.shape[1])), Y]))
    return sol[1:], sol[0]


def _labels(y3, binary):
    return (y3 == 2).astype(int) if binary else y3


@parametrize_with_checks([LSSVM(), LSSVM(approximation="nystrom", n_components=20, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("binary", [True, False])
def test_exact_equals_dense_bordered_system(data, binary):
    X, y3, Xt = data
    y = _labels(y3, binary)
    model = LSSVM(gamma=GAMMA, alpha=MU * len(X)).fit(X, y)
    kern = kernels.make("gaussian", gamma=GAMMA)
    a, b = _bordered(kern(X), _targets(y, binary), MU * len(X))
    np.testing.assert_allclose(model.dual_coef_, a, rtol=1e-8)
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-8)
    ref = kern(Xt, X) @ a + b
    np.testing.assert_allclose(model.decision_function(Xt), ref[:, 0] if binary else ref, rtol=1e-8)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("rank", [None, 12])
def test_nystrom_equals_dense_bordered_system_with_approximate_matrix(data, binary, rank):
    X, y3, Xt = data
    y = _labels(y3, binary)
    idx = np.arange(0, 120, 5)
    model = LSSVM(gamma=GAMMA, alpha=MU * len(X), approximation="nystrom", landmarks=idx, rank=rank).fit(X, y)
    op = approx.build("nystrom", X, kernels.make("gaussian", gamma=GAMMA), landmarks=idx, rank=rank)
    F, Ft = op.features(X), op.features(Xt)
    a, b = _bordered(F @ F.T, _targets(y, binary), MU * len(X))
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-8)
    np.testing.assert_allclose(model.coef_, op.T @ (F.T @ a), rtol=1e-8, atol=1e-10)
    ref = Ft @ (F.T @ a) + b  # the Nystrom extension phi(x)^T V^T a + b
    np.testing.assert_allclose(model.decision_function(Xt), ref[:, 0] if binary else ref, rtol=1e-8)
    np.testing.assert_array_equal(model.component_indices_, idx)
    np.testing.assert_array_equal(model.landmarks_, X[idx])


def test_nystrom_with_a_sketch_equals_dense_bordered_system(data, rng):
    X, y3, Xt = data
    S = approx.Sketch(rng.normal(size=(120, 15)))
    model = LSSVM(gamma=GAMMA, alpha=MU * len(X), approximation="nystrom", landmarks=S).fit(X, y3)
    op = approx.build("nystrom", X, kernels.make("gaussian", gamma=GAMMA), landmarks=S)
    F = op.features(X)
    a, b = _bordered(F @ F.T, _targets(y3, False), MU * len(X))
    assert model.landmarks_ is None and model.sketch_.shape == (120, 15)
    np.testing.assert_allclose(model.decision_function(Xt), op.features(Xt) @ (F.T @ a) + b, rtol=1e-7)


@pytest.mark.parametrize("binary", [True, False])
def test_all_landmarks_equals_exact(data, binary):
    X, y3, Xt = data
    y = _labels(y3, binary)
    exact = LSSVM(gamma=GAMMA, alpha=MU * len(X)).fit(X, y)
    full = LSSVM(gamma=GAMMA, alpha=MU * len(X), approximation="nystrom", n_components=500, random_state=0).fit(X, y)
    assert len(full.component_indices_) == 120  # capped at n
    np.testing.assert_allclose(full.intercept_, exact.intercept_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(full.decision_function(Xt), exact.decision_function(Xt), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(full.predict(Xt), exact.predict(Xt))


@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
@pytest.mark.parametrize("labels", [["cat", "ant", "dog"], [11, 3, 7], ["no", "yes"]])
def test_labels_classes_and_shapes(data, approximation, labels):
    X, y3, Xt = data
    k = len(labels)
    y = np.asarray(labels)[y3 % k]
    model = LSSVM(gamma=GAMMA, approximation=approximation, n_components=40, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.classes_, np.sort(labels))
    pred = model.predict(Xt)
    assert pred.shape == (40,) and pred.dtype == np.asarray(labels).dtype and set(pred) <= set(labels)
    f = model.decision_function(Xt)
    assert f.shape == ((40,) if k == 2 else (40, k))
    expected = model.classes_[(f > 0).astype(int)] if k == 2 else model.classes_[f.argmax(axis=1)]
    np.testing.assert_array_equal(pred, expected)
    assert model.intercept_.shape == ((1,) if k == 2 else (k,))
    assert model.n_features_in_ == 3 and model.fit_time_ > 0
    assert model.score(X, y) > 0.8  # a kernel classifier should fit its training data


def test_binary_positive_class_is_the_second(data):
    X, y3, _ = data
    y = np.where(y3 == 2, "b", "a")
    model = LSSVM(gamma=GAMMA, alpha=MU * len(X)).fit(X, y)
    f = model.decision_function(X)
    assert np.mean((f > 0) == (y == "b")) > 0.9
    flipped = LSSVM(gamma=GAMMA, alpha=MU * len(X)).fit(X, np.where(y == "b", "a", "b"))
    np.testing.assert_allclose(flipped.decision_function(X), -f, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mu", [1e-3, 0.005, 0.1])
def test_mu_is_the_criteria_shift(data, mu):
    """a = (K + mu l I)^-1 (y - b 1): the criteria's K_mu, l = number of training points."""
    X, y3, _ = data
    y = (y3 == 2).astype(int)
    model = LSSVM(gamma=GAMMA, alpha=mu * len(X)).fit(X, y)
    K = kernels.make("gaussian", gamma=GAMMA)(X)
    yb = np.where(y == 1, 1.0, -1.0) - model.intercept_[0]
    a = model.dual_coef_[:, 0]
    np.testing.assert_allclose(a, np.linalg.solve(K + mu * len(X) * np.eye(len(X)), yb), rtol=1e-8)
    assert abs(a.sum()) < 1e-10 * np.abs(a).sum()  # the first row of the bordered system: 1^T a = 0
    # c_ree(op, y - b) = mu (y - b)^T (K + mu l I)^-1 (y - b) on the model's own operator
    np.testing.assert_allclose(criteria.c_ree(model.operator_, yb, mu=mu), mu * yb @ a, rtol=1e-10)


@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
def test_prediction_does_not_need_the_operator(data, approximation):
    X, y3, Xt = data
    model = LSSVM(gamma=GAMMA, approximation=approximation, n_components=30, random_state=0).fit(X, y3)
    before = model.decision_function(Xt)
    del model.operator_
    np.testing.assert_array_equal(model.decision_function(Xt), before)
    if approximation == "nystrom":
        assert not hasattr(model, "X_fit_") and model.coef_.shape == (30, 3)


def test_sampler_with_targets_and_reproducible(data):
    X, y3, Xt = data
    y = (y3 == 2).astype(int)
    a = LSSVM(gamma=GAMMA, approximation="nystrom", sampler="adaptive_ms", n_components=20, random_state=3).fit(X, y)
    b = LSSVM(gamma=GAMMA, approximation="nystrom", sampler="adaptive_ms", n_components=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)
    np.testing.assert_array_equal(a.decision_function(Xt), b.decision_function(Xt))
    assert len(np.unique(a.component_indices_)) == 20


def test_refit_with_other_approximation_forgets_old_coefficients(data):
    X, y3, Xt = data
    model = LSSVM(gamma=GAMMA, approximation="nystrom", n_components=30, random_state=0).fit(X, y3)
    model.set_params(approximation="exact").fit(X, y3)
    assert not hasattr(model, "coef_")
    ref = LSSVM(gamma=GAMMA).fit(X, y3)
    np.testing.assert_array_equal(model.decision_function(Xt), ref.decision_function(Xt))


@pytest.mark.parametrize("params,match", [
    ({"alpha": 0.0}, "alpha"),
    ({"alpha": -1.0}, "alpha"),
    ({"approximation": "optimal"}, "approximation"),
    ({"kernel": "foo"}, "kernel"),
    ({"approximation": "nystrom", "sampler": "nope"}, "unknown sampler 'nope'"),
    ({"approximation": "nystrom", "landmarks": np.array([0, 500])}, "indices must lie"),
    ({"kernel": "laplacian", "sigma": 1.0}, r"^LSSVM: 'sigma' is not a parameter of the laplacian kernel"),
])
def test_invalid_parameters(data, params, match):
    X, y3, _ = data
    with pytest.raises(ValueError, match=match):
        LSSVM(**params).fit(X, y3)


@pytest.mark.parametrize("y,match", [
    (np.zeros(120, dtype=int), "at least 2 classes.*1 class"),
    (np.linspace(0, 1, 120), "Unknown label type"),
])
def test_invalid_targets(data, y, match):
    X, _, _ = data
    with pytest.raises(ValueError, match=match):
        LSSVM().fit(X, y)
