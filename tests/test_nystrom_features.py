"""NystromFeatures: a drop-in for scikit-learn's Nystroem (same defaults; same features with the same landmarks;
scikit-learn's own Nystroem tests run unmodified against it) with any sampler."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_almost_equal
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import approx, kernels, sampling
from nystrom_bench.learners import NystromFeatures


@parametrize_with_checks([NystromFeatures(n_components=5, random_state=0),
                          NystromFeatures(n_components=5, sampler="kmeans", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.3}), ("polynomial", {"degree": 2, "coef0": 1.0}),
                                            ("laplacian", {"gamma": 0.25}), ("chi2", {})])
def test_same_landmarks_same_features_as_sklearn(kernel, params):
    X = np.random.default_rng(0).uniform(size=(60, 4))
    ours = NystromFeatures(kernel, n_components=12, random_state=3, **params).fit(X)
    theirs = Nystroem(kernel, n_components=12, random_state=3, **params).fit(X)
    np.testing.assert_array_equal(ours.component_indices_, theirs.component_indices_)
    np.testing.assert_allclose(ours.normalization_, theirs.normalization_, atol=1e-10)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), atol=1e-10)
    assert ours.get_feature_names_out().tolist()[:2] == ["nystromfeatures0", "nystromfeatures1"]


@pytest.mark.parametrize("sampler", ["kmeans", "ridge_leverage", "column_norm", "adaptive_kumar"])
def test_other_samplers_give_nystrom_features_of_their_landmarks(sampler):
    X = np.random.default_rng(1).normal(size=(80, 3))
    nf = NystromFeatures(gamma=0.5, n_components=10, sampler=sampler, random_state=0).fit(X)
    F = nf.transform(X)
    Z = nf.components_
    K_nm, W = rbf_kernel(X, Z, gamma=0.5), rbf_kernel(Z, Z, gamma=0.5)
    np.testing.assert_allclose(F @ F.T, K_nm @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ K_nm.T, atol=1e-6)
    if nf.component_indices_ is not None:
        np.testing.assert_array_equal(X[nf.component_indices_], Z)


def test_callable_sampler_explicit_landmarks_and_targets():
    X = np.random.default_rng(2).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)

    def first_rows(X, kernel, c, rng):
        return np.arange(c)

    nf = NystromFeatures(gamma=1.0, n_components=4, sampler=first_rows).fit(X)
    np.testing.assert_array_equal(nf.component_indices_, [0, 1, 2, 3])
    pts = NystromFeatures(gamma=1.0, landmarks=X[:3] + 0.1).fit(X)
    assert pts.component_indices_ is None and pts.transform(X).shape == (50, 3)
    assert NystromFeatures(gamma=1.0, n_components=4, sampler="adaptive_ms", random_state=0).fit(X, y).transform(
        X).shape == (50, 4)
    with pytest.raises(ValueError, match="needs the targets"):
        NystromFeatures(n_components=4, sampler="adaptive_ms").fit(X)
    with pytest.raises(ValueError, match="gives a sketch"):
        NystromFeatures(n_components=4, sampler="gaussian_sketch").fit(X)
    with pytest.raises(ValueError, match="unknown sampler"):
        NystromFeatures(n_components=4, sampler="nope").fit(X)


def test_pipeline_with_a_linear_svm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    for sampler in ("uniform", "kmeans", "ridge_leverage"):
        model = make_pipeline(NystromFeatures(gamma=0.5, n_components=25, sampler=sampler, random_state=0),
                              LinearSVC()).fit(X[:300], y[:300])
        assert model.score(X[300:], y[300:]) > 0.9


# -- scikit-learn's own Nystroem tests (sklearn/tests/test_kernel_approximation.py of the installed scikit-learn),
# run unmodified against NystromFeatures: the module's name ``Nystroem`` is NystromFeatures while they run --------
SKLEARN_NYSTROEM_TESTS = ["test_nystroem_approximation", "test_nystroem_default_parameters",
                          "test_nystroem_singular_kernel", "test_nystroem_poly_kernel_params", "test_nystroem_callable",
                          "test_nystroem_precomputed_kernel", "test_nystroem_component_indices"]


@pytest.fixture
def sklearn_tests(monkeypatch):
    module = pytest.importorskip("sklearn.tests.test_kernel_approximation")
    monkeypatch.setattr(module, "Nystroem", NystromFeatures)
    return module


@pytest.mark.parametrize("name", SKLEARN_NYSTROEM_TESTS)
def test_scikit_learns_own_nystroem_tests_pass_unmodified(sklearn_tests, name):
    getattr(sklearn_tests, name)()


def test_scikit_learns_feature_names_test_passes_unmodified(sklearn_tests):
    sklearn_tests.test_get_feature_names_out(NystromFeatures)  # "nystromfeatures0", ... as Nystroem's


def test_the_defaults_are_scikit_learns_and_the_median_is_one_argument_away():
    X = np.random.RandomState(42).uniform(size=(30, 4)) * [1, 10, 100, 1000]  # unequal scales
    ours, theirs = NystromFeatures(), Nystroem()
    assert ours.n_components == theirs.n_components == 100 and ours.gamma is theirs.gamma is None
    assert {k: v for k, v in ours.get_params().items() if k in theirs.get_params()} == theirs.get_params()
    F = NystromFeatures(n_components=30).fit(X)
    assert F.gamma_ == 1 / 4  # scikit-learn's None: 1 / n_features
    assert_array_almost_equal(F.transform(X) @ F.transform(X).T, rbf_kernel(X))
    med = NystromFeatures(gamma="median", n_components=30).fit(X)
    assert med.gamma_ == pytest.approx(1 / kernels.median_sq_dist(X))
    assert_array_almost_equal(med.transform(X) @ med.transform(X).T, rbf_kernel(X, gamma=med.gamma_))
    assert NystromFeatures(kernel="chi2", n_components=5).fit(np.abs(X)).gamma_ == 1.0  # chi2_kernel's default


def test_too_many_components_warns_like_sklearn():
    X = np.random.RandomState(0).uniform(size=(6, 2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert NystromFeatures(n_components=10).fit(X).transform(X).shape == (6, 6)
    assert any("n_components > n_samples" in str(x.message) for x in w)


def test_every_sampler_runs_with_y_in_one_loop():
    """The issue's loop: every registered sampler, called the same way, y passed to all."""
    X = np.random.default_rng(4).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    for name in sampling.available():
        out = sampling.sample(name, X, "gaussian", c=6, seed=0, y=y)
        assert (out.shape[1] if isinstance(out, approx.Sketch) else len(out)) == 6, name


def test_library_kernel_names_and_width_heuristics_as_in_krr():
    """kernel="gaussian" and gamma="median"/"mean" as KRR takes them (issue 25): the same features as rbf
    with the resolved number."""
    X = np.random.default_rng(5).normal(size=(70, 3))
    for heuristic, stat in (("median", kernels.median_sq_dist), ("mean", kernels.mean_sq_dist)):
        nf = NystromFeatures(kernel="gaussian", gamma=heuristic, n_components=15, random_state=0).fit(X)
        ref = NystromFeatures(kernel="rbf", gamma=1 / stat(X), n_components=15, random_state=0).fit(X)
        assert nf.gamma_ == pytest.approx(1 / stat(X))
        np.testing.assert_allclose(nf.transform(X), ref.transform(X), atol=1e-12)
    assert NystromFeatures(kernel="polynomial", n_components=5).fit(X).gamma_ == 1 / 3  # scikit-learn's default
