"""SimpleMKL and GLMKL: the l1-MKL problem min_{d in simplex} J(d), J the SVM's optimal dual objective."""

import numpy as np
import pytest
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import kernels
from nystrom_bench.learners import GroupLassoMKL, SimpleMKL
from nystrom_bench.learners.mkl import svm_mkl_terms


@parametrize_with_checks([SimpleMKL(width_scales=(0.5, 2.0), max_iter=5), GroupLassoMKL(width_scales=(0.5, 2.0), max_iter=5)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=60, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    r = X[:, 0] ** 2 + X[:, 1] ** 2
    y = np.digitize(r, np.quantile(r, np.linspace(0, 1, classes + 1)[1:-1]))
    y[rng.choice(n, n // 10, replace=False)] = rng.integers(0, classes, n // 10)  # label noise: not separable
    return X, y


def _J(X, y, gammas, d, C=1.0):
    Ks = [kernels.make("gaussian", gamma=g)(X) for g in gammas]
    svc = SVC(C=C, kernel="precomputed", tol=1e-8).fit(sum(w * K for w, K in zip(d, Ks, strict=True)), y)
    g, total = svm_mkl_terms(svc, Ks)
    return total - 0.5 * d @ g, g


@pytest.mark.parametrize("classes", [2, 3])
def test_the_dual_objective_and_its_gradient(classes):
    """J(d) equals the SVM dual objective computed from scratch; dJ/dd = -g/2 (Danskin) by finite differences."""
    X, y = _data(classes=classes)
    gammas = [0.2, 1.0, 5.0]
    d = np.array([0.2, 0.5, 0.3])
    J, g = _J(X, y, gammas, d)
    # from scratch for a binary problem: sum alpha - 1/2 (y alpha)^T K (y alpha)
    if classes == 2:
        K = sum(w * kernels.make("gaussian", gamma=gm)(X) for w, gm in zip(d, gammas, strict=True))
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-8).fit(K, y)
        a = np.zeros(len(X))
        a[svc.support_] = svc.dual_coef_[0]
        assert J == pytest.approx(np.abs(a).sum() - 0.5 * a @ K @ a, rel=1e-9)
    D = np.array([0.3, -0.1, -0.2])
    h = 1e-4
    fd = (_J(X, y, gammas, d + h * D)[0] - _J(X, y, gammas, d - h * D)[0]) / (2 * h)
    assert fd == pytest.approx(-0.5 * g @ D, rel=2e-3, abs=1e-4)


@pytest.mark.parametrize("classes", [2, 3])
def test_simplemkl_and_glmkl_reach_the_l1_mkl_optimum(classes):
    X, y = _data(classes=classes, seed=1)
    scales = (0.25, 1.0, 4.0)
    smkl = SimpleMKL(width_scales=scales, tol=1e-5, max_iter=200).fit(X, y)
    gl = GroupLassoMKL(width_scales=scales, tol=1e-4, max_iter=2000).fit(X, y)
    for est in (smkl, gl):
        assert est.weights_.min() >= 0 and est.weights_.sum() == pytest.approx(1.0)
        assert est.scale_ == pytest.approx(1.0)
    assert np.all(np.diff(smkl.objective_path_) <= 1e-9 * abs(smkl.objective_path_[0]))
    J_opt = _J(X, y, smkl.gammas_, smkl.weights_)[0]
    # the optimum over the simplex: no vertex, no uniform mix, no random point is lower
    others = [np.eye(3)[m] for m in range(3)] + [np.full(3, 1 / 3)] + list(np.random.default_rng(2).dirichlet(
        np.ones(3), 10))
    for d in others:
        assert J_opt <= _J(X, y, smkl.gammas_, d)[0] + 1e-4 * abs(J_opt)
    assert smkl.gap_ <= 1e-5
    # GLMKL solves the same problem
    assert _J(X, y, gl.gammas_, gl.weights_)[0] == pytest.approx(J_opt, rel=1e-3)
