"""Issue 25, item 3: every silent failure the issue lists now raises or warns, with a message naming the fix."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from nystrom_bench import approx, data, kernels, sampling
from nystrom_bench.learners import KRR, KRRClassifier


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("approximation, mode", [("exact", "lla"), ("nystrom", "lla"), ("nystrom", "gsa")])
def test_negative_or_non_finite_sample_weight_is_an_error_not_nan(approximation, mode):
    X, y = _data()
    w = np.ones(len(X))
    w[3] = -1.0
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        KRR(approximation=approximation, mode=mode, n_components=10, random_state=0).fit(X, y, sample_weight=w)
    w[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KRR(approximation=approximation, mode=mode, n_components=10, random_state=0).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        KRRClassifier(n_components=10, random_state=0).fit(X, y > 0, sample_weight=-np.ones(len(X)))


def test_cg_with_sample_weight_is_an_error_naming_the_alternative():
    X, y = _data()
    with pytest.raises(ValueError, match="solver='cg' does not take sample_weight.*solver='direct'"):
        KRR(solver="cg", n_components=10, random_state=0).fit(X, y, sample_weight=np.ones(len(X)))
    KRR(solver="auto", n_components=10, random_state=0).fit(X, y, sample_weight=np.ones(len(X)))  # direct


def test_cg_stopping_at_max_iter_warns():
    X, y = _data(300)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 .*cg_max_iter"):
        model = KRR(solver="cg", n_components=40, alpha=1e-6, cg_tol=1e-12, cg_max_iter=2, random_state=0).fit(X, y)
    assert model.n_iter_ == 2
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        KRR(solver="cg", n_components=40, cg_max_iter=500, random_state=0).fit(X, y)  # converges: no warning


def test_non_finite_and_misshapen_input_at_the_estimators():
    X, y = _data()
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KRR(n_components=10).fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KRR(n_components=10).fit(X, y[:-1])
    model = KRR(n_components=10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])


def test_non_finite_and_misshapen_input_at_approx_build():
    X, _ = _data()
    kern = kernels.make("gaussian", gamma=0.5)
    bad = X.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"approx.build\('nystrom'\): X contains NaN or infinity"):
        approx.build("nystrom", bad, kern, landmarks=np.arange(5))
    with pytest.raises(ValueError, match=r"landmark points must be finite, of shape \(c, 3\)"):
        approx.build("nystrom", X, kern, landmarks=X[:5, :2])


@pytest.mark.parametrize("call, match", [
    (lambda X, k: sampling.sample("kmean", X, k, c=5, seed=0), r"unknown sampler 'kmean' \(did you mean 'kmeans'\?\)"),
    (lambda X, k: kernels.make("gausian"), r"unknown kernel 'gausian' \(did you mean 'gaussian'\?\)"),
    (lambda X, k: kernels.from_spec({"kernel": "laplacain", "gamma": 1.0}), r"did you mean 'laplacian'"),
    (lambda X, k: approx.build("nystrm", X, k), r"unknown approximation 'nystrm' \(did you mean 'nystrom'\?\)"),
    (lambda X, k: data.info("diabetis"), r"unknown data set 'diabetis' \(did you mean 'diabetes'\?\)"),
    (lambda X, k: data.load("diabetes", split={"test_frac": 0.3}),
     r"unknown split key 'test_frac' \(did you mean 'test_fraction'\?\)"),
    (lambda X, k: KRR(sampler="unifrom", n_components=5).fit(X, X[:, 0]), r"did you mean 'uniform'"),
])
def test_unknown_names_say_did_you_mean(call, match):
    X, _ = _data()
    with pytest.raises(ValueError, match=match):
        call(X, kernels.make("gaussian", gamma=0.5))


def test_a_far_name_lists_the_choices_without_a_guess():
    X, _ = _data()
    with pytest.raises(ValueError, match="unknown sampler 'zzz'; choose one of ") as exc:
        sampling.sample("zzz", X, "gaussian", c=3)
    assert "did you mean" not in str(exc.value) and "uniform" in str(exc.value)
    with pytest.raises(ValueError, match="unknown split key 'seed'; the keys are test_fraction"):
        data.split_spec("diabetes", {"seed": 3})
