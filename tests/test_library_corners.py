"""The library corners of issue 36 (item 7): a clipped landmark count warns in every estimator as scikit-learn's
Nystroem does; alpha = 0 is refused alike everywhere; GNKR says which kernels it takes; an unknown approximation
gets "did you mean" only for a close name, and the place in the library where a known other name lives."""

import warnings

import numpy as np
import pytest

from nystrom_bench import approx, data
from nystrom_bench.learners import GNKR, KRR, LSSVM, KRRClassifier, NuSVM


@pytest.fixture(scope="module")
def diabetes():
    return data.load("diabetes", seed=0)  # 309 training rows: the 500 -> 309


@pytest.fixture(scope="module")
def classes():
    return data.load("breast_cancer", seed=0)  # 398 training rows


def _clipped_warning(record):
    hits = [w for w in record if issubclass(w.category, UserWarning) and "n_components > n_samples" in str(w.message)]
    assert len(hits) == 1, [str(w.message) for w in record]
    return hits[0]


@pytest.mark.parametrize("mode", ["lla", "gsa", "ncr"])
def test_krr_warns_when_it_clips_n_components_and_fits_as_with_n_samples(diabetes, mode):
    with pytest.warns(UserWarning, match=r"KRR: n_components > n_samples \(500 > 309\)") as record:
        big = KRR(n_components=500, mode=mode, random_state=0).fit(diabetes.X_train, diabetes.y_train)
    assert _clipped_warning(record).filename == __file__  # it points at the caller's fit
    same = KRR(n_components=309, mode=mode, random_state=0).fit(diabetes.X_train, diabetes.y_train)
    assert big.landmarks_.shape[0] == 309
    np.testing.assert_array_equal(big.predict(diabetes.X_test), same.predict(diabetes.X_test))


@pytest.mark.parametrize("make", [lambda: KRRClassifier(n_components=500, random_state=0),
                                  lambda: LSSVM(approximation="nystrom", n_components=500, random_state=0),
                                  lambda: NuSVM(n_components=500, random_state=0)],
                         ids=["KRRClassifier", "LSSVM", "NuSVM"])
def test_every_landmark_classifier_warns_alike_naming_itself(classes, make):
    est = make()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(classes.X_train, classes.y_train)
    msg = str(_clipped_warning(record).message)
    assert msg.startswith(f"{type(est).__name__}: n_components > n_samples (500 > 398)")


def test_gnkr_warns_for_uniform_landmarks_only_column_norm_draws_with_replacement(diabetes):
    X, y = diabetes.X_train, diabetes.y_train
    with pytest.warns(UserWarning, match=r"GNKR: n_components > n_samples \(400 > 309\)"):
        uniform = GNKR(n_components=400, sampler="uniform", random_state=0).fit(X, y)
    assert uniform.landmarks_.shape[0] == 309
    with pytest.warns(UserWarning, match="n_components > n_samples"):
        GNKR(n_components=400, sampler="uniform", random_state=0).fit_path(X, y, [1.0], [1e-6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # m > n is the paper's sampling with replacement: no warning
        colnorm = GNKR(n_components=400, sampler="column_norm", random_state=0).fit(X, y)
    assert colnorm.landmarks_.shape[0] == 400


def test_no_warning_at_n_samples_a_fraction_or_explicit_landmarks(diabetes):
    X, y = diabetes.X_train, diabetes.y_train
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KRR(n_components=309, random_state=0).fit(X, y)
        KRR(n_components=1.0, random_state=0).fit(X, y)
        KRR(landmarks=np.arange(50), n_components=500).fit(X, y)


@pytest.mark.parametrize("make", [lambda: KRR(alpha=0), lambda: KRR(alpha=0, approximation="exact"),
                                  lambda: KRR(alpha=0, mode="ncr"), lambda: KRR(alpha=0, solver="cg"),
                                  lambda: KRRClassifier(alpha=0), lambda: LSSVM(alpha=0), lambda: GNKR(alpha=0)],
                         ids=["KRR", "KRR-exact", "KRR-ncr", "KRR-cg", "KRRClassifier", "LSSVM", "GNKR"])
def test_alpha_zero_is_refused_alike_by_every_ridge_estimator(diabetes, make):
    est = make()
    y = diabetes.y_train if not isinstance(est, (KRRClassifier, LSSVM)) else diabetes.y_train > np.median(diabetes.y_train)
    with pytest.raises(ValueError, match=rf"The 'alpha' parameter of {type(est).__name__} must be a float in the range "
                                         r"\(0.0, inf\)\. Got 0 instead"):
        est.fit(diabetes.X_train, y)


def test_a_small_positive_alpha_still_fits(diabetes):
    assert np.isfinite(KRR(alpha=1e-10, random_state=0).fit(diabetes.X_train, diabetes.y_train)
                       .predict(diabetes.X_test)).all()


def test_gnkr_takes_the_papers_two_kernels_and_says_so(diabetes):
    with pytest.raises(ValueError, match=r"'kernel' parameter of GNKR must be a str among \{('epanechnikov', 'gaussian'|'gaussian', 'epanechnikov')\}"):
        GNKR(kernel="laplacian").fit(diabetes.X_train, diabetes.y_train)
    doc = GNKR.__doc__
    assert "the only\n        two this implementation takes" in doc and "Laplacian kernel, bounded too, is not implemented" in doc


@pytest.mark.parametrize("name, says, never", [
    ("generalized_nystrom", "learners.GeneralizedNystrom", "did you mean"),
    ("Generalized-Nystrom", "learners.GeneralizedNystrom", "did you mean"),
    ("gnkr", "learners.GNKR", "did you mean"),
    ("rpcholesky", "landmarks=sampling.sample('rpcholesky'", "did you mean"),
    ("nystroem", "(did you mean 'nystrom'?)", "modified"),
    ("modifed_nystrom", "(did you mean 'modified_nystrom'?)", "learners"),
    ("optimum", "(did you mean 'optimal'?)", "learners"),
    ("modified", "choose one of exact, mcm, modified_nystrom, nystrom, optimal", "did you mean"),
    ("svd", "choose one of", "did you mean"),
])
def test_did_you_mean_only_for_a_close_name(name, says, never):
    with pytest.raises(ValueError) as info:
        approx.build(name, np.zeros((3, 1)), "gaussian")
    msg = str(info.value)
    assert msg.startswith(f"unknown approximation {name!r}") and says in msg and never not in msg.split(";")[0], msg
