"""NuSVM (exact / Nystrom GSA / LLA) and the RKHS approximation errors of Li et al. (geometric view)."""

import numpy as np
import pytest
from sklearn.svm import NuSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import approx, kernels
from nystrom_bench.integration import approximation_error, rkhs_sq_distance
from nystrom_bench.learners import KRR, LSSVM, NuSVM
from nystrom_bench.learners.nusvm import _ovo_duals

GAMMA = 0.5


@pytest.fixture
def data(rng):
    """150 training and 50 test points in 3-D with three string classes."""
    X = rng.uniform(-2, 2, size=(150, 3))
    Xt = rng.uniform(-2, 2, size=(50, 3))

    def label(Z):
        return np.array(["a", "b", "c"])[(np.sin(2 * Z[:, 0]) + Z[:, 1] > 0).astype(int) + (Z[:, 2] > 0.8)]

    return X, label(X), Xt


def _labels(y, binary):
    return np.where(y == "a", "a", "not a") if binary else y


def _nusvm_expected_failures(estimator):
    """scikit-learn's own for NuSVC (libsvm scales each dual bound by the weight while nu bounds their sum:
    a weight is not a repetition), and, with a sampler, landmarks drawn from the repeated rows."""
    why = "libsvm's nu-SVC: sample_weight is not equivalent to removing/repeating samples (as NuSVC)"
    return {"check_sample_weight_equivalence_on_dense_data": why,
            "check_sample_weight_equivalence_on_sparse_data": why}


@parametrize_with_checks([NuSVM(approximation="exact"), NuSVM(n_components=20, random_state=0),
                          NuSVM(n_components=20, mode="gsa", random_state=0)],
                         expected_failed_checks=_nusvm_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("binary", [True, False])
def test_exact_equals_sklearn_nusvc(data, binary):
    X, y, Xt = data
    y = _labels(y, binary)
    ours = NuSVM(gamma=GAMMA, nu=0.3, approximation="exact").fit(X, y)
    ref = NuSVC(gamma=GAMMA, nu=0.3, kernel="rbf").fit(X, y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-6)
    np.testing.assert_array_equal(np.sort(ours.support_), np.sort(ref.support_))
    assert ours.classes_.tolist() == ref.classes_.tolist()
    assert len(ours.pairs_) == (1 if binary else 3) == len(ours.intercept_)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("sampler", ["uniform", "kmeans", "gaussian_sketch"])
def test_gsa_and_lla_share_the_dual_of_the_machine_on_K_tilde(data, binary, sampler):
    """The linear nu-SVM on F has the dual of the kernel nu-SVM on K~ = F F^T (Li et al., Algorithm 1)."""
    X, y, _ = data
    y = _labels(y, binary)
    model = NuSVM(gamma=GAMMA, nu=0.3, n_components=25, sampler=sampler, tol=1e-10, random_state=0).fit(X, y)
    kern = kernels.make("gaussian", gamma=GAMMA)
    lm = model.landmarks_ if model.sketch_ is None else approx.Sketch(model.sketch_)
    K_tilde = approx.build("nystrom", X, kern, landmarks=lm).dense()
    _, y_idx = np.unique(y, return_inverse=True)
    ref = NuSVC(nu=0.3, kernel="precomputed", tol=1e-10).fit(K_tilde, y_idx)
    support, A, b = _ovo_duals(ref)
    full_ours, full_ref = np.zeros((len(A), len(X))), np.zeros((len(A), len(X)))
    full_ours[:, model.support_], full_ref[:, support] = model.dual_coef_, A
    np.testing.assert_allclose(full_ours, full_ref, atol=1e-6 * np.abs(A).max())
    np.testing.assert_allclose(model.intercept_, b, atol=1e-6)
    # LLA predicts with K~ on the training points: the K~-machine's own decision values
    lla = model._ovo_values(X, "lla")
    np.testing.assert_allclose(lla, K_tilde @ full_ref.T + b, atol=1e-6)
    # GSA predicts with the exact kernel and the same a
    np.testing.assert_allclose(model._ovo_values(X, "gsa"), kern(X) @ full_ref.T + b, atol=1e-6)


def test_mode_switches_prediction_without_refit(data):
    X, y, Xt = data
    model = NuSVM(gamma=GAMMA, nu=0.3, n_components=15, random_state=0).fit(X, y)
    lla = model.decision_function(Xt)
    gsa = model.decision_function(Xt, mode="gsa")
    assert not np.allclose(lla, gsa)
    np.testing.assert_array_equal(model.set_params(mode="gsa").decision_function(Xt), gsa)
    exact = NuSVM(gamma=GAMMA, nu=0.3, approximation="exact").fit(X, y)
    np.testing.assert_array_equal(exact.predict(Xt, mode="lla"), exact.predict(Xt, mode="gsa"))
    with pytest.raises(ValueError, match="mode must be 'gsa' or 'lla'"):
        model.predict(Xt, mode="ncr")


def test_infeasible_nu_names_the_bound(data):
    X, y, _ = data
    y = np.where(np.arange(len(X)) < 10, "rare", "common")
    with pytest.raises(ValueError, match=r"nu=0.5 is infeasible .*'common'.*'rare' \(10\).* <= 2 min"):
        NuSVM(nu=0.5).fit(X, y)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("scale", ["nu", "decision"])
def test_errors_vanish_when_every_point_is_a_landmark(data, binary, scale):
    X, y, _ = data
    y = _labels(y, binary)
    exact = NuSVM(gamma=GAMMA, nu=0.3, approximation="exact", tol=1e-10).fit(X, y)
    full = NuSVM(gamma=GAMMA, nu=0.3, landmarks=np.arange(len(X)), tol=1e-10).fit(X, y)
    for mode in ("gsa", "lla"):
        assert approximation_error(exact, full, mode=mode, scale=scale) < 1e-6
    some = NuSVM(gamma=GAMMA, nu=0.3, n_components=10, random_state=0).fit(X, y)
    assert approximation_error(exact, some, mode="lla", scale=scale) > 1e-2


def _explicit_features_case(rng, n=60, d=6, c=3):
    """Linear kernel: phi(x) = x, so every w is a vector of R^d and P_Z the projection on span(Z)."""
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, 0)
    idx = rng.choice(n, size=c, replace=False)
    Q, _ = np.linalg.qr(X[idx].T)
    return X, y, idx, Q @ Q.T


@pytest.mark.parametrize("scale", ["nu", "decision"])
def test_nusvm_errors_equal_explicit_feature_vectors_on_a_linear_kernel(rng, scale):
    X, y, idx, P_Z = _explicit_features_case(rng)
    exact = NuSVM(kernel="linear", nu=0.4, approximation="exact").fit(X, y)
    ny = NuSVM(kernel="linear", nu=0.4, landmarks=idx).fit(X, y)
    f_ex = exact.rho_ if scale == "nu" else 1.0
    f_ny = ny.rho_ if scale == "nu" else 1.0
    w_star = (f_ex * exact.dual_coef_) @ exact.support_vectors_        # (problems, d)
    w_gsa = (f_ny * ny.dual_coef_) @ ny.support_vectors_
    w_lla = w_gsa @ P_Z
    for mode, w in (("gsa", w_gsa), ("lla", w_lla)):
        got = approximation_error(exact, ny, mode=mode, relative=False, scale=scale)
        assert got == pytest.approx(np.linalg.norm(w_star - w), rel=1e-8)
        rel = approximation_error(exact, ny, mode=mode, scale=scale)
        assert rel == pytest.approx(np.linalg.norm(w_star - w) / np.linalg.norm(w_star), rel=1e-8)
    # the closed forms with the training duals: (a*-a)^T K (a*-a) and a*^T K a* - 2 a*^T K~ a + a^T K~ a
    a_star, a = np.zeros(len(X)), np.zeros(len(X))
    a_star[exact.support_], a[ny.support_] = (f_ex * exact.dual_coef_)[0], (f_ny * ny.dual_coef_)[0]
    K = X @ X.T
    K_tilde = X @ P_Z @ X.T
    gsa_sq = (a_star - a) @ K @ (a_star - a)
    lla_sq = a_star @ K @ a_star - 2 * a_star @ K_tilde @ a + a @ K_tilde @ a
    assert approximation_error(exact, ny, mode="gsa", relative=False, scale=scale) ** 2 == pytest.approx(gsa_sq)
    assert approximation_error(exact, ny, mode="lla", relative=False, scale=scale) ** 2 == pytest.approx(lla_sq)


def test_krr_errors_explicit_features_and_the_shared_dual(rng):
    """KRR: w* = X^T a*, GSA's w = X^T a, LLA's = NCR's = P_Z X^T a with the same dual a (push-through)."""
    X, _, idx, P_Z = _explicit_features_case(rng)
    y = np.column_stack([X @ rng.normal(size=X.shape[1]), np.sin(X[:, 0])])
    alpha = 0.5
    exact = KRR(fit_intercept=False, kernel="linear", alpha=alpha, approximation="exact").fit(X, y)
    gsa = KRR(fit_intercept=False, kernel="linear", alpha=alpha, landmarks=idx, mode="gsa").fit(X, y)
    w_star, w_gsa = X.T @ exact.dual_coef_, X.T @ gsa.dual_coef_
    assert approximation_error(exact, gsa, relative=False) == pytest.approx(np.linalg.norm(w_star - w_gsa))
    for mode in ("lla", "ncr"):
        model = KRR(fit_intercept=False, kernel="linear", alpha=alpha, landmarks=idx, mode=mode).fit(X, y)
        want = np.linalg.norm(w_star - P_Z @ w_gsa)
        assert approximation_error(exact, model, relative=False) == pytest.approx(want, rel=1e-8)
        assert approximation_error(exact, model) == pytest.approx(want / np.linalg.norm(w_star), rel=1e-8)


@pytest.mark.parametrize("sampler", ["uniform", "kmeans", "gaussian_sketch"])
def test_krr_ncr_error_equals_lla_error(data, sampler):
    X, y, _ = data
    t = (y == "a").astype(float)
    exact = KRR(fit_intercept=False, gamma=GAMMA, alpha=0.1, approximation="exact").fit(X, t)
    errs = [approximation_error(exact, KRR(fit_intercept=False, gamma=GAMMA, alpha=0.1, n_components=20, sampler=sampler, mode=m,
                                           random_state=0).fit(X, t)) for m in ("lla", "ncr")]
    assert errs[0] == pytest.approx(errs[1], rel=1e-6)
    full = KRR(fit_intercept=False, gamma=GAMMA, alpha=0.1, landmarks=np.arange(len(X)), mode="lla").fit(X, t)
    assert approximation_error(exact, full) < 1e-6


def test_lssvm_expansion_error(data):
    X, y, _ = data
    exact = LSSVM(gamma=GAMMA).fit(X, y)
    full = LSSVM(gamma=GAMMA, approximation="nystrom", landmarks=np.arange(len(X))).fit(X, y)
    assert approximation_error(exact, full) < 1e-6


def test_rkhs_sq_distance_merges_shared_points(rng):
    X = rng.normal(size=(30, 2))
    kern = kernels.make("gaussian", gamma=0.7)
    a, b = rng.normal(size=(10, 2)), rng.normal(size=(8, 2))
    ia, ib = np.arange(10), np.arange(5, 13)
    K = kern(X)
    d = np.zeros((30, 2))
    d[ia] += a
    d[ib] -= b
    want = np.trace(d.T @ K @ d)
    assert rkhs_sq_distance(kern, X[ia], a, X[ib], b, ia, ib) == pytest.approx(want)
    assert rkhs_sq_distance(kern, X[ia], a, X[ib], b) == pytest.approx(want)
    with pytest.raises(ValueError, match="columns"):
        rkhs_sq_distance(kern, X[ia], a, X[ib], b[:, :1])


def test_approximation_error_rejects_mismatched_models(data):
    X, y, _ = data
    exact = NuSVM(gamma=GAMMA, nu=0.3, approximation="exact").fit(X, y)
    with pytest.raises(ValueError, match="approximation='exact'"):
        approximation_error(NuSVM(gamma=GAMMA, nu=0.3, n_components=10).fit(X, y), exact)
    with pytest.raises(ValueError, match="different kernels"):
        approximation_error(exact, NuSVM(gamma=1.0, nu=0.3, n_components=10).fit(X, y))
    with pytest.raises(ValueError, match="one class"):
        approximation_error(exact, LSSVM(gamma=GAMMA).fit(X, y))
    with pytest.raises(TypeError, match="no kernel expansion"):
        approximation_error(exact, object())
    t = (y == "a").astype(float)
    kr = KRR(fit_intercept=False, gamma=GAMMA, approximation="exact").fit(X, t)
    with pytest.raises(ValueError, match="fitted with mode='gsa', not 'lla'"):
        approximation_error(kr, KRR(fit_intercept=False, gamma=GAMMA, n_components=10, mode="gsa").fit(X, t), mode="lla")
    with pytest.raises(ValueError, match="scale= applies to NuSVM"):
        approximation_error(kr, KRR(fit_intercept=False, gamma=GAMMA, n_components=10).fit(X, t), scale="nu")


def test_max_feasible_nu_is_the_tightest_pair_bound():
    from nystrom_bench.learners import max_feasible_nu

    y = np.repeat(["a", "b", "c"], [10, 30, 60])
    assert max_feasible_nu(y) == pytest.approx(2 * 10 / 70)
    X = np.random.default_rng(0).normal(size=(100, 2))
    NuSVM(nu=max_feasible_nu(y) - 1e-9, approximation="exact").fit(X, y)
    with pytest.raises(ValueError, match="infeasible"):
        NuSVM(nu=max_feasible_nu(y) + 1e-3, approximation="exact").fit(X, y)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("sampler", ["uniform", "kmeans", "gaussian_sketch"])
def test_batched_errors_equal_the_single_ones(data, binary, sampler):
    from nystrom_bench.integration import approximation_errors

    X, y, _ = data
    y = _labels(y, binary)
    exact = NuSVM(gamma=GAMMA, nu=0.3, approximation="exact").fit(X, y)
    model = NuSVM(gamma=GAMMA, nu=0.3, n_components=15, sampler=sampler, random_state=0).fit(X, y)
    got = approximation_errors(exact, model)
    assert set(got) == {(m, s) for m in ("gsa", "lla") for s in ("nu", "decision")}
    for (mode, scale), value in got.items():
        assert value == pytest.approx(approximation_error(exact, model, mode=mode, scale=scale), rel=1e-7)
    with pytest.raises(ValueError, match="for NuSVM models"):
        t = (y == "a").astype(float)
        approximation_errors(KRR(fit_intercept=False, gamma=GAMMA, approximation="exact").fit(X, t), KRR(fit_intercept=False, gamma=GAMMA).fit(X, t))
