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
