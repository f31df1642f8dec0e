"""sample_weight in LSSVM and NuSVM (issue 25, item 4): integer weights are repeated rows, zero weights
removed rows, and bad weights are errors (the shared check of learners._base)."""

import numpy as np
import pytest

from nystrom_bench.learners import KRR, LSSVM, KRRClassifier, NuSVM


def _data(n=120, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) if classes == 2 else np.digitize(X[:, 0], [-0.5, 0.5])
    return X, y


def _repeat(X, y, w):
    rows = np.repeat(np.arange(len(X)), w)
    return X[rows], y[rows]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_lssvm_integer_weights_equal_repeated_rows(classes, approximation, alpha):
    X, y = _data(classes=classes)
    w = np.random.default_rng(1).integers(0, 4, size=len(X))
    Z = X[:30] + 0.01  # the same landmark points for both fits (a sampler's draw depends on the rows)
    kw = dict(alpha=alpha, approximation=approximation, landmarks=Z if approximation == "nystrom" else None)
    weighted = LSSVM(**kw).fit(X, y, sample_weight=w)
    repeated = LSSVM(**kw).fit(*_repeat(X, y, w))
    Xt = np.random.default_rng(2).normal(size=(50, 3))
    np.testing.assert_allclose(weighted.decision_function(Xt), repeated.decision_function(Xt), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_array_equal(weighted.predict(Xt), repeated.predict(Xt))


def test_lssvm_unit_weights_are_no_weights():
    X, y = _data()
    for approximation in ("exact", "nystrom"):
        a = LSSVM(approximation=approximation, n_components=20, random_state=0).fit(X, y)
        b = LSSVM(approximation=approximation, n_components=20, random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
def test_nusvm_zero_weight_removes_the_row(approximation):
    X, y = _data(n=150)
    w = np.ones(len(X))
    w[::4] = 0.0
    Z = X[1:40:2]  # landmark points shared by both fits
    kw = dict(approximation=approximation, landmarks=Z if approximation == "nystrom" else None, gamma=0.5,
              tol=1e-8)
    weighted = NuSVM(**kw).fit(X, y, sample_weight=w)
    removed = NuSVM(**kw).fit(X[w > 0], y[w > 0])
    Xt = np.random.default_rng(3).normal(size=(60, 3))
    np.testing.assert_allclose(weighted.decision_function(Xt), removed.decision_function(Xt), rtol=1e-6, atol=1e-6)
    assert not np.isin(weighted.support_, np.flatnonzero(w == 0)).any()


def test_nusvm_weights_are_honoured():
    X, y = _data(n=150)
    base = NuSVM(approximation="exact", gamma=0.5).fit(X, y)
    w = np.where(y == 1, 5.0, 1.0)
    weighted = NuSVM(approximation="exact", gamma=0.5).fit(X, y, sample_weight=w)
    assert not np.allclose(base.decision_function(X), weighted.decision_function(X))
    # the up-weighted class wins more of the training points
    assert (weighted.predict(X) == 1).sum() >= (base.predict(X) == 1).sum()
    # unit weights: the unweighted fit
    ones = NuSVM(approximation="exact", gamma=0.5).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(ones.decision_function(X), base.decision_function(X), rtol=1e-10, atol=1e-10)


def test_nusvm_nu_bound_uses_the_weights():
    X, y = _data(n=100)
    w = np.where(y == 1, 0.1, 1.0)
    with pytest.raises(ValueError, match="infeasible"):
        NuSVM(approximation="exact", nu=0.5).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("est", [LSSVM(), NuSVM(n_components=20, random_state=0), KRR(n_components=20),
                                 KRRClassifier(n_components=20)])
@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_bad_weights_raise(est, bad):
    X, y = _data()
    w = np.ones(len(y))
    w[3] = bad
    with pytest.raises(ValueError):
        est.fit(X, y, sample_weight=w)


@pytest.mark.parametrize("est", [LSSVM(), NuSVM(n_components=20, random_state=0), KRR(n_components=20)])
def test_zero_weights_raise(est):
    X, y = _data()
    with pytest.raises(ValueError, match="sample_weight|weights"):
        est.fit(X, y, sample_weight=np.zeros(len(y)))
