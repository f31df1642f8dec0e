"""selection: the criterion loop against a brute-force dense loop; CV against scikit-learn's loop."""

import numpy as np
import pandas as pd
import pytest
from scipy import linalg

from nystrom_bench import approx, kernels, sampling, selection

GAMMAS = selection.log2_grid(-4, 1)


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=120)
    return X, y - y.mean()


def dense_criteria(K, y, mu, noise_sd):
    """Textbook C_ree and C_ipe on an explicit matrix (Ding et al., with K + mu l I)."""
    n = len(y)
    A = K + mu * n * np.eye(n)
    u = linalg.solve(A, y)
    ree = mu * y @ u
    Ainv = linalg.inv(A)
    ipe = mu**2 * n * u @ u + noise_sd**2 / n * np.trace(K @ K @ Ainv @ Ainv)
    return ree, ipe


def dense_ktilde(X, y, gamma, approximation, seed, c=24, k=10):
    kern = kernels.make("gaussian", gamma=gamma)
    K = kern(X)
    if approximation == "exact":
        return K
    if approximation == "optimal":
        w, U = linalg.eigh(K)
        return (U[:, -k:] * w[-k:]) @ U[:, -k:].T
    if approximation == "mcm":
        return approx.build("mcm", X, kern, levels=3).dense()
    idx = sampling.sample("uniform", X, kern, c=c, seed=np.random.default_rng(seed))
    C = K[:, idx]
    if approximation == "modified_nystrom":  # the best rank-k approximation of C C^+ K C^+T C^T
        Kt = C @ linalg.pinv(C) @ K @ linalg.pinv(C).T @ C.T
        w, U = linalg.eigh((Kt + Kt.T) / 2)
        return (U[:, -k:] * w[-k:]) @ U[:, -k:].T
    w, U = linalg.eigh(C[idx])
    w, U = w[-k:], U[:, -k:]
    return C @ (U / w) @ U.T @ C.T


@pytest.mark.parametrize("criterion", ["c_ree", "c_ipe"])
@pytest.mark.parametrize("approximation", ["exact", "optimal", "nystrom", "modified_nystrom", "mcm"])
def test_criterion_path_equals_a_brute_force_dense_loop(xy, approximation, criterion):
    X, y = xy
    mu, noise_sd = 0.005, 0.01 * np.std(y)
    res = selection.criterion_path(X, y, GAMMAS, approximation, criterion, mu=mu, seed=3, n_components=24, rank=10)
    brute = []
    for g in GAMMAS:
        ree, ipe = dense_criteria(dense_ktilde(X, y, g, approximation, seed=3), y, mu, noise_sd)
        brute.append(ree if criterion == "c_ree" else ipe)
    np.testing.assert_allclose(res.table["criterion"], brute, rtol=1e-6)
    assert res.best_index == int(np.argmin(brute))
    assert res.best_gamma == GAMMAS[int(np.argmin(brute))]
    assert (res.table["seconds"] > 0).all() and res.seconds == pytest.approx(res.table["seconds"].sum())


def test_each_candidate_restarts_the_stream_so_one_row_is_recomputable(xy):
    X, y = xy
    path = selection.criterion_path(X, y, GAMMAS, "nystrom", sampler="adaptive_ms", n_components=20, seed=7, rank=5)
    one = selection.criterion_values(X, y, GAMMAS[2], "nystrom", ("c_ree",), sampler="adaptive_ms", n_components=20,
                                     seed=7, rank=5)
    assert one["c_ree"][0] == path.table["criterion"].iloc[2]
    gen = selection.criterion_path(X, y, GAMMAS, "nystrom", n_components=20, seed=np.random.default_rng(7))
    again = selection.criterion_path(X, y, GAMMAS, "nystrom", n_components=20, seed=7)
    np.testing.assert_array_equal(gen.table["criterion"], again.table["criterion"])


def test_criterion_values_gives_both_criteria_from_one_operator(xy):
    X, y = xy
    both = selection.criterion_values(X, y, 0.5, "nystrom", n_components=30, seed=0)
    for name in selection.CRITERIA:
        alone = selection.criterion_values(X, y, 0.5, "nystrom", (name,), n_components=30, seed=0)
        assert both[name][0] == alone[name][0]


@pytest.mark.parametrize("approximation, opts", [("exact", {}), ("mcm", {}),
                                               ("nystrom", {"sampler": "adaptive_ms", "rank": 5})])
def test_criterion_paths_are_each_criterions_own_path_from_one_build(xy, approximation, opts, monkeypatch):
    X, y = xy
    builds = []
    build = selection.build_operator
    monkeypatch.setattr(selection, "build_operator", lambda *a, **k: builds.append(1) or build(*a, **k))
    both = selection.criterion_paths(X, y, GAMMAS, approximation, mu=0.01, seed=7, n_components=20, **opts)
    assert len(builds) == len(GAMMAS)  # one K~ per width for both criteria
    for name in selection.CRITERIA:
        alone = selection.criterion_path(X, y, GAMMAS, approximation, name, mu=0.01, seed=7, n_components=20, **opts)
        pd.testing.assert_series_equal(both[name].table["criterion"], alone.table["criterion"], check_exact=True)
        assert both[name].best_index == alone.best_index
        assert (both[name].table["seconds"] > 0).all()
    assert len(builds) == 3 * len(GAMMAS)
    # the criterion evaluated second sees the operator as built, not with the first one's Cholesky factor
    seen = []
    c_ipe = selection.criteria.c_ipe
    monkeypatch.setattr(selection.criteria, "c_ipe", lambda op, *a, **k: seen.append(len(getattr(op, "_chol", {})))
                        or c_ipe(op, *a, **k))
    selection.criterion_paths(X, y, GAMMAS[:2], approximation, mu=0.01, seed=7, n_components=20, **opts)
    assert seen == [0, 0]
    with pytest.raises(ValueError, match="unknown criterion 'loo'"):
        selection.criterion_paths(X, y, GAMMAS, approximation, ("c_ree", "loo"))


def test_mcm_assumption_reads_the_criteria_operators_with_the_same_verdict(xy):
    from nystrom_bench.studies.consistency.methods import MCM

    X, y = xy
    method = MCM("mcm", {})
    gammas = [2.0**-6, 2.0**2, 2.0**6]  # wide and narrow widths: U_m + mu l I indefinite at some
    ops = []
    with pytest.warns(UserWarning):
        selection.criterion_paths(X, y, gammas, "mcm", mu=0.001, levels=3, operators=ops)
    assert len(ops) == len(gammas)
    rebuilt = method.assumption(X, gammas, 0.001, {"levels": 3})
    assert rebuilt and method.assumption(X, gammas, 0.001, {"levels": 3}, operators=ops) == rebuilt
    for same in ([ops[0]] * 3, [ops[2]] * 3):  # it reads them: other operators, another count of indefinite widths
        assert method.assumption(X, gammas, 0.001, {"levels": 3}, operators=same) != rebuilt


@pytest.mark.parametrize("kwargs, match", [
    ({"criterion": "loo"}, "unknown criterion 'loo'"),
    ({"approximation": "svd"}, "unknown approximation 'svd'"),
    ({"approximation": "optimal"}, "needs rank="),
    ({"approximation": "nystrom", "sampler": "nope"}, "unknown sampler 'nope'"),
    ({"approximation": "nystrom", "n_components": -3}, "n_components"),
])
def test_bad_arguments_are_named(xy, kwargs, match):
    X, y = xy
    with pytest.raises(ValueError, match=match):
        selection.criterion_path(X, y, GAMMAS, **kwargs)


def test_bad_grid_and_nan_targets(xy):
    X, y = xy
    with pytest.raises(ValueError, match="positive widths"):
        selection.criterion_path(X, y, [0.5, -1.0])
    y2 = y.copy()
    y2[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        selection.criterion_path(X, y2, GAMMAS)


def test_landmark_count_and_grid():
    assert selection.landmark_count(0.2, 350) == 70
    assert selection.landmark_count(500, 100) == 100
    assert selection.landmark_count(1.0, 10) == 10
    assert selection.log2_grid(-10, 2) == [2.0**e for e in range(-10, 3)]
    assert selection.log2_grid(-10, 2, 2)[-1] == 4.0


def test_cv_path_regression_equals_a_manual_kfold_loop(xy):
    from sklearn.model_selection import KFold

    X, y = xy
    res = selection.cv_path(X, y, GAMMAS[:3], mu=0.005, cv=5, seed=0)
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))
    for g, got in zip(GAMMAS[:3], res.table["criterion"], strict=True):
        errs = []
        for tr, te in folds:
            K = kernels.make("gaussian", gamma=g)
            a = linalg.solve(K(X[tr]) + 0.005 * 96 * np.eye(len(tr)), y[tr])
            errs.append(np.mean((K(X[te], X[tr]) @ a - y[te]) ** 2))
        assert got == pytest.approx(np.mean(errs), rel=1e-8)


def test_cv_path_is_scikit_learns_cross_validation_bit_for_bit(xy):
    """The default learners' fold loop gives the bits of scikit-learn's cross_val_score (regression) and of
    estimator.score over the stratified folds (classification); a user's estimator still goes through
    cross_val_score."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    from nystrom_bench.learners import KRR, LSSVM

    X, y = xy
    res = selection.cv_path(X, y, GAMMAS[:3], mu=0.005, cv=4, seed=2)
    krr = KRR(kernel="gaussian", alpha=0.005 * 90, approximation="exact", fit_intercept=False)
    for g, got in zip(GAMMAS[:3], res.table["criterion"], strict=True):
        scores = cross_val_score(krr.set_params(gamma=g), X, y, cv=KFold(4, shuffle=True, random_state=2),
                                 scoring="neg_mean_squared_error")
        assert got == float(-scores.mean())
    labels = np.where(y > 0, "up", "down")
    res = selection.cv_path(X, labels, GAMMAS[:3], "binary", mu=0.01, cv=3, seed=1)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, labels))
    for g, got in zip(GAMMAS[:3], res.table["criterion"], strict=True):
        scores = np.array([clone(LSSVM(kernel="gaussian")).set_params(gamma=g, alpha=0.01 * len(tr))
                           .fit(X[tr], labels[tr]).score(X[te], labels[te]) for tr, te in folds])
        assert got == float(1.0 - scores.mean())
    user = selection.cv_path(X, y, GAMMAS[:2], cv=4, seed=2, estimator=krr)
    assert user.table["criterion"].tolist() == res_regression_first_two(X, y, krr)
    assert (res.table["seconds"] > 0).all()


def res_regression_first_two(X, y, krr):
    from sklearn.model_selection import KFold, cross_val_score

    return [float(-cross_val_score(krr.set_params(gamma=g), X, y, cv=KFold(4, shuffle=True, random_state=2),
                                   scoring="neg_mean_squared_error").mean()) for g in GAMMAS[:2]]


def test_the_old_landmark_keyword_warns_and_gives_the_same_path(xy):
    """``n_landmarks`` (the name before the estimators' ``n_components``) still works, with a FutureWarning."""
    X, y = xy
    new = selection.criterion_path(X, y, GAMMAS, "nystrom", n_components=20, seed=7)
    with pytest.warns(FutureWarning, match="'n_landmarks' is deprecated, use n_components"):
        old = selection.criterion_path(X, y, GAMMAS, "nystrom", n_landmarks=20, seed=7)
    pd.testing.assert_frame_equal(new.table.drop(columns="seconds"), old.table.drop(columns="seconds"))
