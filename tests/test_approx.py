import numpy as np
import pytest

from nystrom_bench import approx, kernels


@pytest.fixture
def kern():
    return kernels.make("gaussian", gamma=0.3)


def textbook_nystrom(K, idx, rank=None):
    C, W = K[:, idx], K[np.ix_(idx, idx)]
    w, U = np.linalg.eigh(W)
    order = np.argsort(w)[::-1]
    w, U = w[order], U[:, order]
    keep = w > 1e-10 * w[0]
    if rank:
        keep[rank:] = False
    Wk_pinv = (U[:, keep] / w[keep]) @ U[:, keep].T
    return C @ Wk_pinv @ C.T


def test_all_columns_equals_exact(X, kern):
    op = approx.build("nystrom", X, kern, landmarks=np.arange(len(X)))
    np.testing.assert_allclose(op.dense(), kern(X), atol=1e-7)


@pytest.mark.parametrize("rank", [None, 5])
def test_matches_textbook(X, kern, rank):
    idx = np.array([3, 7, 11, 19, 23, 31, 40, 41, 50])
    op = approx.build("nystrom", X, kern, landmarks=idx, rank=rank)
    Kt = textbook_nystrom(kern(X), idx, rank)
    np.testing.assert_allclose(op.dense(), Kt, atol=1e-10)
    np.testing.assert_allclose(op.factor() @ op.factor().T, Kt, atol=1e-10)
    np.testing.assert_allclose(op.features(X), op.factor(), atol=1e-10)
    ev = np.sort(np.linalg.eigvalsh(Kt))[::-1][: op.rank]
    np.testing.assert_allclose(op.eigvals(), ev, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shift", [1e-3, 0.5, 10.0])
def test_woodbury_solve_matches_dense(X, kern, rng, shift):
    idx = np.arange(0, 60, 4)
    op = approx.build("nystrom", X, kern, landmarks=idx)
    y = rng.normal(size=(60, 2))
    ref = np.linalg.solve(op.dense() + shift * np.eye(60), y)
    np.testing.assert_allclose(op.solve(shift, y), ref, rtol=1e-7, atol=1e-8)


def test_duplicate_landmarks_are_handled(X, kern):
    idx = np.array([1, 5, 9, 13])
    a = approx.build("nystrom", X, kern, landmarks=idx)
    b = approx.build("nystrom", X, kern, landmarks=np.concatenate([idx, idx]))
    assert b.rank == 4
    np.testing.assert_allclose(a.dense(), b.dense(), atol=1e-9)


def test_landmark_points_equal_indices(X, kern):
    idx = np.array([2, 4, 8])
    np.testing.assert_allclose(approx.build("nystrom", X, kern, landmarks=X[idx]).dense(),
                               approx.build("nystrom", X, kern, landmarks=idx).dense())


def test_indefinite_kernel_keeps_positive_part():
    x = np.linspace(0, 3, 40)[:, None]
    kern = kernels.make("epanechnikov", sigma=0.5)
    op = approx.build("nystrom", x, kern, landmarks=np.arange(40))
    assert np.all(op.eigvals() >= 0)
    assert np.linalg.eigvalsh(op.dense()).min() > -1e-9


def test_exact_operator(X, kern, rng):
    op = approx.build("exact", X, kern)
    K = kern(X)
    y = rng.normal(size=60)
    np.testing.assert_allclose(op.solve(0.1, y), np.linalg.solve(K + 0.1 * np.eye(60), y), rtol=1e-9)
    np.testing.assert_allclose(op.eigvals(), np.sort(np.linalg.eigvalsh(K))[::-1], atol=1e-10)
    V = op.factor()
    np.testing.assert_allclose(V @ V.T, K, atol=1e-8)
    assert op.fit_time_ >= 0


def test_errors(X, kern):
    op = approx.build("nystrom", X, kern, landmarks=np.arange(5))
    with pytest.raises(ValueError, match="shift must be > 0"):
        op.solve(0.0, np.ones(60))
    with pytest.raises(ValueError, match="unknown approximation 'nope'"):
        approx.build("nope", X, kern)
    with pytest.raises(ValueError, match="indices must lie in"):
        approx.build("nystrom", X, kern, landmarks=np.array([0, 60]))
    with pytest.raises(ValueError, match="pass landmarks="):
        approx.build("nystrom", X, kern)


# -- modified Nystrom, optimal, sketch, MCM ---------------------------------------------------------
def test_modified_nystrom_matches_textbook(X, kern):
    idx = np.arange(0, 60, 6)
    K = kern(X)
    C = K[:, idx]
    Cp = np.linalg.pinv(C)
    ref = C @ (Cp @ K @ Cp.T) @ C.T
    op = approx.build("modified_nystrom", X, kern, landmarks=idx)
    np.testing.assert_allclose(op.dense(), ref, atol=1e-8)
    np.testing.assert_allclose(op.features(X), op.factor(), atol=1e-8)
    # modified Nystrom is never worse than standard Nystrom in Frobenius norm (Wang & Zhang 2013)
    std = approx.build("nystrom", X, kern, landmarks=idx).dense()
    assert np.linalg.norm(K - op.dense()) <= np.linalg.norm(K - std) + 1e-10


@pytest.mark.parametrize("k", [1, 3, 8])
def test_modified_nystrom_rank_k_is_the_best_rank_k_of_its_ktilde(X, kern, k):
    idx = np.arange(0, 60, 6)
    full = approx.build("modified_nystrom", X, kern, landmarks=idx).dense()
    w, U = np.linalg.eigh(full)
    best = (U[:, -k:] * w[-k:]) @ U[:, -k:].T
    op = approx.build("modified_nystrom", X, kern, landmarks=idx, rank=k)
    assert op.rank == k
    np.testing.assert_allclose(op.dense(), best, atol=1e-8)


@pytest.mark.parametrize("k", [1, 5, 20])
def test_optimal_rank_k_error_is_tail_eigenvalues(X, kern, k):
    K = kern(X)
    ev = np.sort(np.linalg.eigvalsh(K))[::-1]
    op = approx.build("optimal", X, kern, rank=k)
    assert np.linalg.norm(K - op.dense(), 2) == pytest.approx(ev[k], rel=1e-6)
    assert np.linalg.norm(K - op.dense()) == pytest.approx(np.sqrt(np.sum(ev[k:] ** 2)), rel=1e-6)
    np.testing.assert_allclose(op.eigvals(), ev[:k], rtol=1e-8)
    np.testing.assert_allclose(op.features(X), op.factor(), atol=1e-8)


def test_sketch_nystrom_matches_textbook(X, kern, rng):
    S = approx.Sketch(rng.normal(size=(60, 8)))
    K = kern(X)
    C, W = K @ S, S.T @ K @ S
    ref = C @ np.linalg.pinv(W) @ C.T
    op = approx.build("nystrom", X, kern, landmarks=S)
    np.testing.assert_allclose(op.dense(), ref, atol=1e-7)
    np.testing.assert_allclose(op.features(X), op.factor(), atol=1e-8)


def test_nystrom_spectrum_estimate_is_scaled_landmark_spectrum(X, kern):
    idx = np.arange(0, 60, 3)
    op = approx.build("nystrom", X, kern, landmarks=idx, rank=5)
    w = np.sort(np.linalg.eigvalsh(kern(X[idx])))[::-1][:5]
    np.testing.assert_allclose(op.spectrum_estimate(), 60 / 20 * w)


def _grid(m, h=0.1):
    axes = [np.arange(ms) * h for ms in m]
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(m))


def _dense_mcm(m, h, profile):
    """Textbook Algorithm 1 entry by entry: u_i = sum over the set D_i of t_j, U = circ_m[u]."""
    import itertools

    G = np.array(list(itertools.product(*[range(ms) for ms in m])))
    u = {}
    for i in G:
        D = [{0} if i_s == 0 else {i_s, ms - i_s} for i_s, ms in zip(i, m, strict=True)]
        u[tuple(i)] = sum(profile(np.linalg.norm(np.array(j) * h)) for j in itertools.product(*D))
    n = len(G)
    U = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            U[a, b] = u[tuple((G[a] - G[b]) % np.array(m))]
    return U


@pytest.mark.parametrize("m", [(6,), (4, 5), (4, 3, 2)])
def test_mcm_matches_dense_construction_and_fft_eigenvalues(m):
    kern = kernels.make("gaussian", gamma=3.0)
    X = _grid(m)
    op = approx.build("mcm", X, kern, levels=len(m), grid=m)
    assert op.h == pytest.approx(0.1)
    U = _dense_mcm(m, 0.1, kern.profile)
    np.testing.assert_allclose(op.dense(), U, atol=1e-12)
    np.testing.assert_allclose(U, U.T, atol=1e-14)
    np.testing.assert_allclose(op.eigvals(), np.sort(np.linalg.eigvalsh(U))[::-1], atol=1e-10)
    y = np.arange(len(X), dtype=float)
    np.testing.assert_allclose(op.solve(0.7, y), np.linalg.solve(U + 0.7 * np.eye(len(X)), y), rtol=1e-9)


def test_mcm_converges_to_kernel_on_growing_grid():
    kern = kernels.make("gaussian", gamma=20.0)
    errs = []
    for s in (10, 20, 40):
        X = _grid((s,)) - s * 0.05
        op = approx.build("mcm", X, kern, levels=1)
        K = kern(X)
        errs.append(np.abs(op.dense() - K)[s // 4 : 3 * s // 4, s // 4 : 3 * s // 4].max())
    assert errs[2] < errs[0] and errs[2] < 1e-6


def test_mcm_grid_handling():
    assert approx.balanced_grid(1000, 3) == (10, 10, 10)
    assert approx.balanced_grid(12, 2) == (4, 3)
    assert approx.balanced_grid(13, 3) == (13, 1, 1)
    X = np.zeros((12, 2))
    with pytest.raises(ValueError, match="grid .* has 10 cells but there are 12 points"):
        approx.build("mcm", X, kernels.make("gaussian"), grid=(5, 2))
    with pytest.raises(ValueError, match="radial kernel"):
        approx.build("mcm", X, kernels.make("polynomial"))


def test_streaming_nystrom_equals_stored(X, kern, rng):
    idx = np.arange(0, 60, 4)
    a = approx.build("nystrom", X, kern, landmarks=idx)
    b = approx.build("nystrom", X, kern, landmarks=idx, store_C=False)
    assert b.C is None
    y = rng.normal(size=60)
    np.testing.assert_allclose(b.solve(0.3, y), a.solve(0.3, y), rtol=1e-9)
    np.testing.assert_allclose(b.eigvals(), a.eigvals(), rtol=1e-9)
    np.testing.assert_allclose(b.factor() @ b.factor().T, a.dense(), atol=1e-10)  # V up to signs
    CtC, Cty = b.moments(y)
    np.testing.assert_allclose(CtC, a.C.T @ a.C, atol=1e-10)
    np.testing.assert_allclose(Cty, a.C.T @ y, atol=1e-10)


def test_operators_report_time_and_memory(X, kern):
    op = approx.build("nystrom", X, kern, landmarks=np.arange(10))
    assert op.fit_time_ > 0
    assert op.nbytes_ >= op.C.nbytes + op.T.nbytes
    lean = approx.build("nystrom", X, kern, landmarks=np.arange(10), store_C=False)
    assert lean.nbytes_ < op.nbytes_


def test_top_eigh_falls_back_when_the_subset_driver_misses_eigenvalues(monkeypatch):
    """LAPACK's subset driver returned no eigenvalue for a Gaussian K close to I (german_keel,
    gamma = 4); top_eigh then takes the full decomposition."""
    from scipy import linalg as sla

    A = np.eye(30) + 1e-9 * np.random.default_rng(0).normal(size=(30, 30))
    A = (A + A.T) / 2
    real = sla.eigh

    def flaky(a, *args, subset_by_index=None, **kw):
        if subset_by_index is not None:
            return np.empty(0), np.empty((len(a), 0))
        return real(a, *args, **kw)

    monkeypatch.setattr(approx.linalg, "eigh", flaky)
    w, U = approx.top_eigh(A, 5)
    ref = np.sort(np.linalg.eigvalsh(A))[::-1][:5]
    np.testing.assert_allclose(w, ref, rtol=1e-12)
    assert U.shape == (30, 5)
    op = approx.build("optimal", np.random.default_rng(1).normal(size=(30, 2)), kernels.make("gaussian"), rank=4)
    assert op.rank == 4


@pytest.mark.parametrize("sampler", ["uniform", "kmeans", "ridge_leverage", "gaussian_sketch"])
def test_landmark_operator_is_sample_then_build(sampler):
    # the one landmark pipeline: the same landmarks and the same operator as the two steps by hand
    from nystrom_bench import sampling

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(120, 4)), rng.normal(size=120)
    kern = kernels.make("gaussian", gamma=0.3)
    op = approx.landmark_operator(X, kern, 15, sampler=sampler, seed=7, y=y)
    by_hand = approx.build("nystrom", X, kern, landmarks=sampling.sample(sampler, X, kern, c=15, seed=7, y=y))
    np.testing.assert_array_equal(op.factor(), by_hand.factor())
    given = approx.landmark_operator(X, kern, landmarks=np.arange(10))
    np.testing.assert_array_equal(given.landmark_indices, np.arange(10))


@pytest.mark.parametrize("landmarks,match", [(np.array([0.5, 1.5]), "integer indices"),
                                             (np.array([0, 500]), r"lie in \[0, 120\)"),
                                             (np.zeros((3, 2)), r"shape \(c, 4\)"),
                                             (np.zeros((2, 2, 2)), "give")])
def test_landmark_operator_checks_given_landmarks(landmarks, match):
    X = np.random.default_rng(0).normal(size=(120, 4))
    with pytest.raises(ValueError, match=match):
        approx.landmark_operator(X, kernels.make("gaussian", gamma=0.3), landmarks=landmarks)
