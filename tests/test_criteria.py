import numpy as np
import pytest

from nystrom_bench import approx, criteria, kernels

MU = 0.005


def dense_criteria(Kt, y, mu=MU, sd=1.0):
    n = len(y)
    A = Kt + mu * n * np.eye(n)
    Ai = np.linalg.inv(A)
    ree = mu * y @ Ai @ y
    ipe = mu**2 * n * y @ Ai @ Ai @ y + sd**2 / n * np.trace(Kt @ Kt @ Ai @ Ai)
    return ree, ipe


@pytest.fixture
def problem(rng):
    X = rng.normal(size=(80, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=80), kernels.make("gaussian", gamma=0.4)


@pytest.mark.parametrize("name,opts", [
    ("exact", {}),
    ("nystrom", {"landmarks": np.arange(0, 80, 4)}),
    ("nystrom", {"landmarks": np.arange(0, 80, 4), "rank": 8}),
    ("modified_nystrom", {"landmarks": np.arange(0, 80, 8)}),
    ("optimal", {"rank": 10}),
])
def test_criteria_equal_dense_criteria_on_the_approximate_matrix(problem, name, opts):
    X, y, kern = problem
    op = approx.build(name, X, kern, **opts)
    ree, ipe = dense_criteria(op.dense(), y, sd=0.3)
    assert criteria.c_ree(op, y, MU) == pytest.approx(ree, rel=1e-8)
    assert criteria.c_ipe(op, y, MU, noise_sd=0.3) == pytest.approx(ipe, rel=1e-7)


def test_mcm_criteria_by_fft_equal_dense(rng):
    g = np.stack(np.meshgrid(np.arange(8) * 0.1, np.arange(9) * 0.1, indexing="ij"), -1).reshape(-1, 2)
    y = rng.normal(size=72)
    op = approx.build("mcm", g, kernels.make("gaussian", gamma=10.0), levels=2, grid=(8, 9))
    ree, ipe = dense_criteria(op.dense(), y, sd=0.5)
    assert criteria.c_ree(op, y, MU) == pytest.approx(ree, rel=1e-8)
    assert criteria.c_ipe(op, y, MU, noise_sd=0.5) == pytest.approx(ipe, rel=1e-8)


def test_all_columns_nystrom_criteria_equal_exact(problem):
    X, y, kern = problem
    exact = approx.build("exact", X, kern)
    full = approx.build("nystrom", X, kern, landmarks=np.arange(80))
    assert criteria.c_ree(full, y) == pytest.approx(criteria.c_ree(exact, y), rel=1e-6)
    assert criteria.c_ipe(full, y) == pytest.approx(criteria.c_ipe(exact, y), rel=1e-6)


def test_c_ree_is_regularised_empirical_error(problem):
    """C_ree = (1/l)||f - y||^2 + mu ||f||_H^2 at the minimiser alpha = (K + mu l I)^-1 y (Ding et al. (TNNLS 2020), eq. 1)."""
    X, y, kern = problem
    K = kern(X)
    a = np.linalg.solve(K + MU * 80 * np.eye(80), y)
    f = K @ a
    assert criteria.c_ree(approx.build("exact", X, kern), y) == pytest.approx(
        np.mean((f - y) ** 2) + MU * a @ K @ a, rel=1e-9)


def test_spectrum_estimate_option(problem):
    X, y, kern = problem
    op = approx.build("nystrom", X, kern, landmarks=np.arange(0, 80, 4), rank=5)
    b1, v1 = criteria.bias_variance(op, y, spectrum="exact")
    b2, v2 = criteria.bias_variance(op, y, spectrum="estimate")
    lam = 80 / 20 * op.w_kept
    assert b1 == b2 and v2 == pytest.approx(np.sum((lam / (lam + MU * 80)) ** 2) / 80)
    with pytest.raises(ValueError, match="spectrum must be"):
        criteria.c_ipe(op, y, spectrum="nope")


def test_errors(problem):
    X, y, kern = problem
    op = approx.build("exact", X, kern)
    with pytest.raises(ValueError, match="y has 3 entries"):
        criteria.c_ree(op, y[:3])
    with pytest.raises(ValueError, match="NaN"):
        criteria.c_ree(op, np.full(80, np.nan))
    with pytest.raises(ValueError, match="mu must be > 0"):
        criteria.c_ree(op, y, mu=0)
