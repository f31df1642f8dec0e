"""Generalized Nystrom with side information (Lan, Zhang et al., AIJ 2017): the solver and the transformer."""

import numpy as np
import pytest
from scipy import linalg
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import approx, kernels
from nystrom_bench.learners import AlignmentMKL, GeneralizedNystrom, GeneralizedNystromMKL
from nystrom_bench.learners.gen_nystrom import (
    _Problem,
    centered_alignment,
    ideal_kernel,
    project_psd,
    solve_stationary,
)


@pytest.fixture
def problem(rng):
    """Two noisy blobs, 120 points, 12 labelled, 15 landmarks: E_l, K*, S0 of eq. (7)."""
    X = np.vstack([rng.normal(-1, 1, (60, 3)), rng.normal(1, 1, (60, 3))])
    y = np.repeat([0, 1], 60)
    kern = kernels.make("gaussian", gamma=0.3)
    Z = X[rng.choice(120, 15, replace=False)]
    E, W = kern(X, Z), kern(Z)
    lab = rng.choice(120, 12, replace=False)
    S0 = 0.7 * linalg.pinv(W)
    return X, y, E, W, E[lab], ideal_kernel(y[lab]), S0, lab


@parametrize_with_checks([GeneralizedNystrom(n_components=5, lambda_grid=(0.1, 10.0), max_iter=20, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_ideal_kernel_and_alignment():
    K = ideal_kernel(np.array([0, 1, 0]))
    np.testing.assert_array_equal(K, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    assert centered_alignment(K, 3 * K) == pytest.approx(1.0)
    assert centered_alignment(K, -K) == pytest.approx(-1.0)
    assert centered_alignment(K, np.ones((3, 3))) == 0.0  # a constant kernel centres to 0
    # centring: alignment with a dense textbook H K H computation
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(5, 5)), rng.normal(size=(5, 5))
    H = np.eye(5) - np.ones((5, 5)) / 5
    Ac, Bc = H @ A @ H, H @ B @ H
    assert centered_alignment(A, B) == pytest.approx(np.sum(Ac * Bc) / np.linalg.norm(Ac) / np.linalg.norm(Bc))


def test_projection_is_the_nearest_psd_matrix(rng):
    M = rng.normal(size=(6, 6))
    P = project_psd(M)
    assert np.linalg.eigvalsh(P).min() > -1e-12
    # nearest: no PSD matrix of a random family is closer to the symmetric part
    sym = (M + M.T) / 2
    for _ in range(50):
        R = rng.normal(size=(6, 6))
        assert np.linalg.norm(sym - P) <= np.linalg.norm(sym - (P + 0.1 * R @ R.T)) + 1e-12


@pytest.mark.parametrize("lam", [1e-3, 1.0, 1e3])
def test_closed_form_initialisation_solves_the_stationarity_equation(problem, lam):
    """Eq. (12): lambda S + A S A = E_l^T K* E_l + lambda S0 with A = E_l^T E_l (before the projection)."""
    *_, E_l, K_star, S0, _ = problem
    A = E_l.T @ E_l
    Q = E_l.T @ K_star @ E_l + lam * S0
    S = solve_stationary(A, Q, lam)
    np.testing.assert_allclose(lam * S + A @ S @ A, Q, atol=1e-8 * np.abs(Q).max())
    # ... and zeroes the gradient of the unconstrained objective
    pb = _Problem(E_l, K_star, S0)
    assert np.abs(pb.gradient(S, lam)).max() < 1e-7 * np.abs(Q).max()


@pytest.mark.parametrize("lam", [1e-2, 1.0, 100.0])
def test_projected_gradient_decreases_the_objective_and_stays_psd(problem, lam):
    *_, E_l, K_star, S0, _ = problem
    pb = _Problem(E_l, K_star, S0)
    S, path = pb.solve(lam, max_iter=200, tol=0)
    assert np.all(np.diff(path) <= 1e-12 * abs(path[0]))
    assert np.linalg.eigvalsh(S).min() > -1e-10
    # the result is optimal: no PSD perturbation in a random family lowers J
    J = pb.objective(S, lam)
    rng = np.random.default_rng(0)
    for _ in range(30):
        R = rng.normal(size=S.shape)
        trial = project_psd(S + 1e-3 * (R + R.T))
        assert pb.objective(trial, lam) >= J - 1e-9 * abs(J)


def test_large_lambda_gives_the_prior(problem):
    *_, E_l, K_star, S0, _ = problem
    pb = _Problem(E_l, K_star, S0)
    S, _ = pb.solve(1e9, max_iter=50, tol=1e-12)
    np.testing.assert_allclose(S, project_psd(S0), atol=1e-5 * np.abs(S0).max())


def test_must_link_mask_only_counts_the_marked_pairs(problem):
    *_, E_l, K_star, S0, _ = problem
    mask = np.zeros_like(K_star)
    mask[:4, :4] = 1
    pb = _Problem(E_l, K_star, S0, mask)
    S = project_psd(S0) * 1.3
    R = E_l @ S @ E_l.T - K_star
    assert pb.objective(S, 2.0) == pytest.approx(2.0 * np.sum((S - S0) ** 2) + np.sum(R[:4, :4] ** 2))
    S_opt, path = pb.solve(2.0, max_iter=100, tol=0)
    assert np.all(np.diff(path) <= 1e-12 * abs(path[0]))


def test_transformer_factor_reproduces_E_S_Et_and_new_points(rng):
    X = np.vstack([rng.normal(-2, 1, (80, 2)), rng.normal(2, 1, (80, 2))])
    y = np.repeat([0, 1], 80)
    y_part = np.full(160, -1)
    lab = rng.choice(160, 16, replace=False)
    y_part[lab] = y[lab]
    gn = GeneralizedNystrom(gamma=0.5, n_components=16, sampler="uniform", random_state=0).fit(X, y_part)
    G = gn.transform(X)
    E = kernels.make("gaussian", gamma=0.5)(X, gn.landmarks_)
    np.testing.assert_allclose(G @ G.T, E @ gn.dictionary_ @ E.T, atol=1e-8)
    # transform on a subset equals the rows of the fitted factor; new points extend it
    np.testing.assert_allclose(gn.transform(X[10:20]), G[10:20])
    assert gn.lam_ in gn.alignment_ and gn.alignment_[gn.lam_] == max(gn.alignment_.values())
    # beta of eq. (8)
    T, _ = approx.lowrank_pinv_factor(kernels.make("gaussian", gamma=0.5)(gn.landmarks_))
    E_l = E[np.flatnonzero(y_part != -1)]
    P = linalg.pinv(E_l)
    beta = np.linalg.norm(P @ ideal_kernel(y_part[y_part != -1]) @ P.T) / np.linalg.norm(T @ T.T)
    assert gn.beta_ == pytest.approx(beta, rel=1e-8)
    np.testing.assert_allclose(gn.prior_, beta * T @ T.T)


def test_side_information_helps_on_unlabelled_points():
    """Two overlapping Gaussian classes, 20 labels of 600: the learned kernel (lambda = 100) aligns better
    with the classes of the *unlabelled* points than the prior beta E W^+ E^T, and a linear SVM on its
    factor errs less (0.105 vs 0.153 measured)."""
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1, 1.5, (300, 5)), rng.normal(1, 1.5, (300, 5))])
    y = np.repeat([0, 1], 300)
    y_part = np.full(600, -1)
    lab = rng.choice(600, 20, replace=False)
    y_part[lab] = y[lab]
    unl = y_part == -1
    kern = kernels.make("gaussian", gamma=0.1)
    errors, aligns = [], []
    for lam in (100.0, 1e9):  # lambda -> infinity: the prior
        gn = GeneralizedNystrom(gamma=0.1, n_components=60, lam=lam, random_state=0).fit(X, y_part)
        G = gn.transform(X)
        aligns.append(centered_alignment((G @ G.T)[np.ix_(unl, unl)], ideal_kernel(y[unl])))
        errors.append(np.mean(LinearSVC(C=1.0).fit(G[~unl], y[~unl]).predict(G[unl]) != y[unl]))
    E = kern(X, gn.landmarks_)
    prior = centered_alignment((E @ gn.prior_ @ E.T)[np.ix_(unl, unl)], ideal_kernel(y[unl]))
    assert aligns[1] == pytest.approx(prior, abs=1e-6)
    assert aligns[0] > prior + 0.05 and errors[0] < errors[1]


@parametrize_with_checks([GeneralizedNystrom(n_components=5, lambda_grid=(0.1, 10.0), max_iter=20, beta="iterative",
                                            random_state=0)])
def test_sklearn_compatible_iterative_beta(estimator, check):
    check(estimator)


@pytest.mark.parametrize("lam", [1e-3, 1.0, 100.0])
def test_iterative_beta_minimises_eq7_over_s_and_beta(lam):
    """Appendix A's alternative to eq. (8): beta optimised with S.  At the same landmarks and lambda the joint
    objective is at most the heuristic fit's (one feasible (S, beta)); beta is the least-squares multiple of W^+
    for the final S, which no other beta near it beats; the prior is beta W^+; S is PSD; the path never rises;
    and no PSD step from S lowers the joint objective (a projected-gradient fixed point, to the tolerance)."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-1, 1.2, (80, 4)), rng.normal(1, 1.2, (80, 4))])
    y = np.full(160, -1)
    lab = rng.choice(160, 16, replace=False)
    y[lab] = np.repeat([0, 1], 80)[lab]
    fits = {b: GeneralizedNystrom(gamma=0.2, n_components=20, lam=lam, beta=b, max_iter=3000, tol=1e-14,
                                  random_state=0).fit(X, y) for b in ("heuristic", "iterative")}
    heur, it = fits["heuristic"], fits["iterative"]
    np.testing.assert_array_equal(heur.landmarks_, it.landmarks_)
    W_pinv = heur.prior_ / heur.beta_
    np.testing.assert_allclose(it.prior_, it.beta_ * W_pinv, rtol=1e-10, atol=0)
    assert it.beta_ == pytest.approx(np.sum(it.dictionary_ * W_pinv) / np.sum(W_pinv * W_pinv), rel=1e-12)
    E_l, K_star = it.kernel_(X[y != -1], it.landmarks_), ideal_kernel(y[y != -1])

    def joint(S, beta):
        return lam * np.sum((S - beta * W_pinv) ** 2) + np.sum((E_l @ S @ E_l.T - K_star) ** 2)

    best = joint(it.dictionary_, it.beta_)
    assert best <= joint(heur.dictionary_, heur.beta_) * (1 + 1e-9)
    for f in (0.9, 1.1):  # beta is the best scale for S
        assert best <= joint(it.dictionary_, f * it.beta_)
    path = np.array(it.objective_path_)
    assert np.all(np.diff(path) <= 1e-9 * np.abs(path[:-1]))
    assert path[-1] == pytest.approx(best, rel=1e-9)
    assert np.min(np.linalg.eigvalsh(it.dictionary_)) >= -1e-10 * np.abs(it.dictionary_).max()
    # optimality: a small projected-gradient step from S (at the joint gradient) lowers nothing
    S = it.dictionary_
    U = W_pinv / np.linalg.norm(W_pinv)
    grad = 2 * lam * (S - np.sum(S * U) * U) + 2 * E_l.T @ (E_l @ S @ E_l.T - K_star) @ E_l
    for step in (1e-6, 1e-4):
        assert joint(project_psd(S - step * grad / np.abs(grad).max()), it.beta_) >= best * (1 - 1e-6)


def test_fixed_lambda_and_clear_errors(rng):
    X = rng.normal(size=(50, 2))
    y = np.full(50, -1)
    y[:3] = 0
    with pytest.raises(ValueError, match="at least 2 classes"):
        GeneralizedNystrom(n_components=5).fit(X, y)
    y[3:6] = 1
    gn = GeneralizedNystrom(n_components=5, lam=3.0, random_state=0).fit(X, y)
    assert gn.lam_ == 3.0 and list(gn.alignment_) == [3.0] and gn.dictionary_.shape == (5, 5)
    with pytest.raises(ValueError, match=r"must_link must have shape \(n_labelled, n_labelled\) = \(6, 6\)"):
        GeneralizedNystrom(n_components=5, lam=1.0, must_link=np.ones((3, 3))).fit(X, y)
    with pytest.raises(ValueError, match="needs the targets of every sample"):
        GeneralizedNystrom(n_components=5, sampler="adaptive_ms").fit(X, y)


@parametrize_with_checks([GeneralizedNystromMKL(width_scales=(0.5, 2.0), n_components=5, lambda_grid=(1.0,), max_outer=3,
                                                max_iter=10, random_state=0)])
def test_mkl_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def two_blobs(rng):
    X = np.vstack([rng.normal(-1, 1.2, (90, 4)), rng.normal(1, 1.2, (90, 4))])
    y = np.repeat([0, 1], 90)
    y_part = np.full(180, -1)
    lab = rng.choice(180, 16, replace=False)
    y_part[lab] = y[lab]
    return X, y, y_part


def test_mkl_alternation_lowers_the_objective_and_keeps_the_constraints(two_blobs):
    X, _, y_part = two_blobs
    mk = GeneralizedNystromMKL(width_scales=(0.25, 1.0, 4.0), n_components=12, lam=0.5, max_outer=15, tol=0,
                               random_state=0).fit(X, y_part)
    path = np.array(mk.objective_path_)
    assert len(path) > 2 and np.all(np.diff(path) <= 1e-9 * abs(path[0]))
    assert (mk.weights_ >= 0).all() and len(mk.dictionaries_) == 3
    for T, S0, a in zip(mk.dictionaries_, mk.priors_, mk.weights_, strict=True):
        assert np.linalg.eigvalsh(T).min() > -1e-10
        assert a == pytest.approx(max(np.sum(S0 * T) / np.sum(S0 * S0), 0.0))  # eq. (19) at the end
    b0 = kernels.mean_sq_dist(X)
    np.testing.assert_allclose(mk.gammas_, 1 / (np.array([0.25, 1.0, 4.0]) * b0))


def test_mkl_factor_reproduces_the_mixture(two_blobs):
    X, _, y_part = two_blobs
    mk = GeneralizedNystromMKL(width_scales=(0.5, 2.0), n_components=10, lambda_grid=(0.1, 1.0, 10.0),
                               random_state=0).fit(X, y_part)
    G = mk.transform(X)
    K = sum(kernels.make("gaussian", gamma=g)(X, mk.landmarks_) @ T @ kernels.make("gaussian", gamma=g)(
        X, mk.landmarks_).T for g, T in zip(mk.gammas_, mk.dictionaries_, strict=True))
    np.testing.assert_allclose(G @ G.T, K, atol=1e-8 * np.abs(K).max())
    np.testing.assert_allclose(mk.transform(X[:7]), G[:7])
    assert set(mk.alignment_) == {0.1, 1.0, 10.0} and mk.alignment_[mk.lam_] == max(mk.alignment_.values())
    # lambda -> infinity: T_j = alpha_j S0_j with the alphas >= 0 of the least-squares fit of K* by the prior
    # mixture -- the starting point, which the alternation keeps
    from scipy import optimize

    stiff = GeneralizedNystromMKL(width_scales=(0.5, 2.0), n_components=10, lam=1e12, random_state=0).fit(X, y_part)
    lab = y_part != -1
    E = [kernels.make("gaussian", gamma=g)(X[lab], stiff.landmarks_) for g in stiff.gammas_]
    A = np.column_stack([(Ej @ S @ Ej.T).ravel() for Ej, S in zip(E, stiff.priors_, strict=True)])
    alpha, _ = optimize.nnls(A, ideal_kernel(y_part[lab]).ravel())
    np.testing.assert_allclose(stiff.weights_, alpha, rtol=1e-6, atol=1e-12)
    for T, S, a in zip(stiff.dictionaries_, stiff.priors_, alpha, strict=True):
        np.testing.assert_allclose(T, a * S, atol=1e-6 * np.abs(S).max() * max(a, 1e-300))
    assert np.all(np.diff(stiff.objective_path_) <= 1e-9 * stiff.objective_path_[0])


def test_sketch_landmarks_are_refused(two_blobs):
    X, _, y_part = two_blobs
    for est in (GeneralizedNystrom(sampler="gaussian_sketch"), GeneralizedNystromMKL(sampler="gaussian_sketch")):
        with pytest.raises(ValueError, match="needs landmark points"):
            est.fit(X, y_part)


@parametrize_with_checks([AlignmentMKL(), AlignmentMKL(centered=False, width_scales=(0.5, 2.0))])
def test_alignment_mkl_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("centered", [True, False])
def test_alignment_weights_maximise_the_alignment_over_the_cone(rng, centered):
    """Cortes et al.'s Prop. 9: mu = v*/||v*|| maximises <K^c, K*^c> / ||K^c|| over mu >= 0."""
    from nystrom_bench.learners.mkl import _centre, alignment_weights

    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    Ks = [kernels.make("gaussian", gamma=g)(X) for g in (0.05, 0.3, 2.0, 10.0)]
    T = ideal_kernel(y)
    prep = _centre if centered else (lambda K: K)

    def score(mu):
        K = prep(sum(m * Kj for m, Kj in zip(mu, Ks, strict=True)))
        return np.sum(K * prep(T)) / np.linalg.norm(K)

    mu = alignment_weights(Ks, T, centered=centered)
    assert (mu >= 0).all() and np.linalg.norm(mu) == pytest.approx(1.0)
    best = score(mu)
    for _ in range(300):
        assert score(np.abs(rng.normal(size=4)) * rng.integers(0, 2, size=4) + 1e-12) <= best + 1e-9
    if centered:
        np.testing.assert_allclose(mu, alignment_weights([3 * K for K in Ks], T), atol=1e-6)  # scale-free


def test_alignment_mkl_predicts_with_the_combined_kernel(rng):
    from sklearn.svm import SVC

    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")
    Xt = rng.normal(size=(20, 2))
    mkl = AlignmentMKL(width_scales=(0.25, 1.0, 4.0)).fit(X, y)
    K = sum(w * kernels.make("gaussian", gamma=g)(X) for w, g in zip(mkl.weights_, mkl.gammas_, strict=True))
    Kt = sum(w * kernels.make("gaussian", gamma=g)(Xt, X) for w, g in zip(mkl.weights_, mkl.gammas_, strict=True))
    ref = SVC(C=1.0, kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(mkl.predict(Xt), ref.predict(Kt))


@pytest.mark.parametrize("m", [1, 2, 77, 231])
def test_eigh_evd_is_scipys_evd_bit_for_bit(m):
    """The solver's cached LAPACK syevd gives scipy.linalg.eigh(driver="evd")'s eigenpairs exactly (the same
    routine and workspace): the projected-gradient iterates, and so every result, are unchanged."""
    from scipy import linalg

    from nystrom_bench.learners.gen_nystrom import _eigh_evd

    A = np.random.default_rng(m).normal(size=(m, m))
    A = A + A.T
    w0, U0 = linalg.eigh(A, driver="evd")
    w1, U1 = _eigh_evd(A.copy())
    assert np.array_equal(w0, w1) and np.array_equal(U0, U1)
    assert np.allclose((U1 * w1) @ U1.T, A)
