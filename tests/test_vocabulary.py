"""One vocabulary across the public API (issue 25, item 2): ``alpha`` for every ridge term,
``n_components`` (a count or a fraction of n) for the landmarks, the same kernel names, widths and
dtypes; the old names warn (FutureWarning) for one release and give the same fits."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from nystrom_bench import kernels
from nystrom_bench.learners import (
    GNKR,
    KRR,
    LSSVM,
    GeneralizedNystrom,
    GeneralizedNystromMKL,
    KRRClassifier,
    LogDetKernelLearning,
    NuSVM,
    NystromFeatures,
    gnkr_path,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=120)
    labels = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    return X, y, labels


def _no_future_warning(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        return make()


# -- regularisation: alpha ------------------------------------------------------------------------

@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
@pytest.mark.parametrize("mu", [None, 0.005])
def test_lssvm_mu_warns_and_equals_alpha_mu_n(data, approximation, mu):
    X, _, labels = data
    kw = dict(gamma=0.5, approximation=approximation, n_components=30, random_state=0)
    with pytest.warns(FutureWarning, match=r"'mu' is deprecated.*alpha = mu \* n_samples"):
        old = LSSVM(mu=mu, **kw).fit(X, labels)
    new = _no_future_warning(lambda: LSSVM(alpha=1.0 if mu is None else mu * len(X), **kw).fit(X, labels))
    np.testing.assert_array_equal(old.decision_function(X), new.decision_function(X))  # bit-identical


def test_lssvm_mu_and_alpha_together_is_an_error(data):
    X, _, labels = data
    with pytest.raises(ValueError, match="mu=0.005 and alpha=2.0 both given"):
        LSSVM(mu=0.005, alpha=2.0).fit(X, labels)


def test_gnkr_lam_warns_and_equals_alpha(data):
    X, y, _ = data
    kw = dict(sigma=0.8, n_components=20, random_state=0)
    with pytest.warns(FutureWarning, match="'lam' is deprecated"):
        old = GNKR(lam=1e-8, **kw).fit(X, y)
    new = _no_future_warning(lambda: GNKR(alpha=1e-8, **kw).fit(X, y))
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    with pytest.raises(ValueError, match="both given"):
        GNKR(lam=1e-8, alpha=1e-3).fit(X, y)


def test_gnkr_lams_keyword_warns_and_equals_alphas(data):
    X, y, _ = data
    est = GNKR(n_components=20, random_state=0)
    with pytest.warns(FutureWarning, match="'lams' is deprecated"):
        old = clone(est).fit_path(X, y, [0.5, 1.0], lams=[1e-9, 1e-6])
    new = _no_future_warning(lambda: clone(est).fit_path(X, y, [0.5, 1.0], alphas=[1e-9, 1e-6]))
    np.testing.assert_array_equal(old.predict_path(X), new.predict_path(X))
    np.testing.assert_array_equal(new.path_alphas_, new.path_lams_)
    with pytest.raises(ValueError, match="both given"):
        clone(est).fit_path(X, y, [0.5], alphas=[1e-6], lams=[1e-6])
    kern = kernels.from_spec({"kernel": "gaussian", "sigma": 1.0})
    with pytest.warns(FutureWarning, match="'lams' is deprecated"):
        a = gnkr_path(X, y, X[:10], kern, lams=[1e-6])
    np.testing.assert_array_equal(a, gnkr_path(X, y, X[:10], kern, [1e-6]))


def test_nusvm_keeps_nu_and_says_why():
    assert "not a ridge" in NuSVM.__doc__ and "nu" in NuSVM().get_params()


# -- landmarks: n_components -----------------------------------------------------------------------

#: (estimator with 15 landmarks drawn by a seeded sampler, target kind, output)
LANDMARK_ESTIMATORS = [
    (KRR(gamma=0.5, random_state=0), "y", "predict"),
    (KRRClassifier(gamma=0.5, random_state=0), "labels", "decision_function"),
    (LSSVM(gamma=0.5, approximation="nystrom", random_state=0), "labels", "decision_function"),
    (NuSVM(gamma=0.5, random_state=0), "labels", "decision_function"),
    (GNKR(sigma=0.8, sampler="uniform", random_state=0), "y", "predict"),
    (GeneralizedNystrom(gamma=0.5, sampler="uniform", lambda_grid=(1.0,), max_iter=3, random_state=0), "partial",
     "transform"),
    (GeneralizedNystromMKL(width_scales=(0.5, 2.0), sampler="uniform", lambda_grid=(1.0,), max_outer=1, max_iter=2,
                           random_state=0), "partial", "transform"),
    (LogDetKernelLearning(gamma=0.5, sampler="uniform", max_sweeps=2, random_state=0), "partial", "transform"),
]
IDS = [type(e).__name__ for e, _, _ in LANDMARK_ESTIMATORS]


def _targets(data, kind):
    X, y, labels = data
    if kind == "partial":
        part = np.full(len(X), -1)
        part[:30] = (labels[:30] == "a").astype(int)
        return part
    return y if kind == "y" else labels


def _fit_output(est, data, kind, method):
    X = data[0]
    return getattr(clone(est).fit(X, _targets(data, kind)), method)(X)


@pytest.mark.parametrize(("est", "kind", "method"), LANDMARK_ESTIMATORS, ids=IDS)
def test_n_landmarks_warns_and_equals_n_components(data, est, kind, method):
    with pytest.warns(FutureWarning, match="'n_landmarks' is deprecated.*n_components=15"):
        old = _fit_output(clone(est).set_params(n_landmarks=15), data, kind, method)
    new = _no_future_warning(lambda: _fit_output(clone(est).set_params(n_landmarks="deprecated", n_components=15),
                                                 data, kind, method))
    np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize(("est", "kind", "method"), LANDMARK_ESTIMATORS, ids=IDS)
def test_n_landmarks_and_n_components_together_is_an_error(data, est, kind, method):
    with pytest.raises(ValueError, match="n_landmarks=15 and n_components=20 both given"):
        clone(est).set_params(n_landmarks=15, n_components=20).fit(data[0], _targets(data, kind))


@pytest.mark.parametrize(("est", "kind", "method"),
                         [*LANDMARK_ESTIMATORS, (NystromFeatures(gamma=0.5, random_state=0), "y", "transform")],
                         ids=[*IDS, "NystromFeatures"])
def test_a_fraction_of_n_samples_is_that_many_landmarks(data, est, kind, method):
    n = len(data[0])
    frac = _no_future_warning(lambda: _fit_output(clone(est).set_params(n_components=0.125), data, kind, method))
    count = _fit_output(clone(est).set_params(n_components=round(0.125 * n)), data, kind, method)
    np.testing.assert_array_equal(frac, count)


@pytest.mark.parametrize("value", [0.0, 1.5, -3, "many"])
def test_a_bad_count_or_fraction_is_an_error(data, value):
    X, y, _ = data
    for est in (KRR(), NystromFeatures(), GNKR()):
        with pytest.raises(ValueError, match="n_components"):
            clone(est).set_params(n_components=value).fit(X, y)


def test_the_old_name_keeps_get_params_and_clone_working():
    est = KRR(n_landmarks=50)
    assert clone(est).get_params()["n_landmarks"] == 50 and KRR().get_params()["n_landmarks"] == "deprecated"


# -- the same kernel names, widths and dtypes -----------------------------------------------------

def test_nystrom_features_take_the_library_kernel_name_and_width_heuristics(data):
    X = data[0]
    med = NystromFeatures(kernel="gaussian", gamma="median", n_components=20, random_state=0).fit(X)
    rbf = NystromFeatures(kernel="rbf", gamma=1.0 / kernels.median_sq_dist(X), n_components=20, random_state=0).fit(X)
    assert med.gamma_ == pytest.approx(rbf.gamma_, rel=1e-12)
    np.testing.assert_allclose(med.transform(X), rbf.transform(X), rtol=1e-10, atol=1e-12)
    mean = NystromFeatures(kernel="gaussian", gamma="mean", n_components=20, random_state=0).fit(X)
    assert mean.gamma_ == pytest.approx(1.0 / kernels.mean_sq_dist(X))


@pytest.mark.parametrize(("given", "same_as"), [(np.float32, "float32"), (np.dtype("float32"), "float32"),
                                                (np.float64, "float64")])
def test_krr_dtype_takes_numpy_types(data, given, same_as):
    X, y, _ = data
    kw = dict(gamma=0.5, n_components=30, random_state=0)
    a = KRR(dtype=given, **kw).fit(X, y).predict(X)
    b = KRR(dtype=same_as, **kw).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="dtype"):
        KRR(dtype=np.float16).fit(X, y)


def test_a_krr_method_block_with_n_landmarks_warns():
    from nystrom_bench.config import check

    cfg = {"studies": {"krr": {"datasets": ["diabetes"], "seeds": [0], "kernels": {"gaussian": {"gamma": "median"}},
                               "methods": {"exact": {"approximation": "exact"},
                                           "ny": {"approximation": "nystrom", "n_landmarks": 10}}}}}
    with pytest.warns(FutureWarning, match="methods.ny: the key 'n_landmarks' is deprecated"):
        check(cfg)
