"""The semi-supervised kernel-learning baselines of Lan, Zhang et al.'s Table 1: cluster kernel (Chapelle et
al.), spectral graph kernel (Zhu et al.), CSI (Bach & Jordan), LogDet kernel learning (Kulis et al.) --
each against a dense textbook computation and its paper's defining property."""

import numpy as np
import pytest
from scipy import linalg, optimize
from sklearn.utils.estimator_checks import parametrize_with_checks

from nystrom_bench import kernels
from nystrom_bench.learners import CSI, ClusterKernel, LogDetKernelLearning, SpectralGraphKernel
from nystrom_bench.learners.bregman import logdet_projections
from nystrom_bench.learners.cluster_kernel import transfer
from nystrom_bench.learners.spectral_kernel import knn_laplacian, order_constrained_weights


def _blobs(n=60, seed=0, d=3, label_every=4):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-2, 1, (n // 2, d)), rng.normal(2, 1, (n - n // 2, d))])
    y = np.repeat([0, 1], [n // 2, n - n // 2])
    yp = np.full(n, -1)
    yp[::label_every] = y[::label_every]
    return X, y, yp


# the transductive kernels exist on the fitted samples only: checks that transform other samples cannot pass
_TRANSDUCTIVE = {name: "transductive: transform takes exactly the fitted X" for name in (
    "check_methods_subset_invariance", "check_methods_sample_order_invariance", "check_fit_idempotent")}


@parametrize_with_checks([ClusterKernel(gamma=0.5, n_components=5), SpectralGraphKernel(n_neighbors=5, n_components=5),
                          CSI(gamma=0.5, n_components=5), LogDetKernelLearning(gamma=0.5, n_components=5, random_state=0)],
                         expected_failed_checks=lambda est: _TRANSDUCTIVE if isinstance(
                             est, (ClusterKernel, SpectralGraphKernel)) else {})
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- cluster kernel -----------------------------------------------------------------------------
def test_cluster_kernel_linear_transfer_at_full_rank_gives_back_the_kernel():
    X, _, yp = _blobs(40)
    ck = ClusterKernel(gamma=0.3, transfer="linear", n_components=40).fit(X, yp)
    K = kernels.make("gaussian", gamma=0.3)(X)
    np.testing.assert_allclose(ck.factor_ @ ck.factor_.T, K, atol=1e-8)


@pytest.mark.parametrize("name", ["poly_step", "step", "linear_step", "polynomial"])
def test_cluster_kernel_equals_the_dense_construction(name):
    X, _, yp = _blobs(40, seed=1)
    K = kernels.make("gaussian", gamma=0.3)(X)
    d = K.sum(axis=1)
    L = K / np.sqrt(np.outer(d, d))
    w, U = np.linalg.eigh(L)
    w, U = w[::-1], U[:, ::-1]
    phi = {"poly_step": np.where(np.arange(40) < 3, np.sqrt(np.clip(w, 0, None)), w**2),
           "step": (np.arange(40) < 3).astype(float), "linear_step": np.where(np.arange(40) < 3, w, 0),
           "polynomial": np.clip(w, 0, None) ** 2}[name]
    Lt = (U * phi) @ U.T
    Kt = Lt / np.sqrt(np.outer(np.diag(Lt), np.diag(Lt)))
    ck = ClusterKernel(gamma=0.3, transfer=name, cut=3, n_components=40).fit(X, yp)
    np.testing.assert_allclose(ck.factor_ @ ck.factor_.T, Kt, atol=1e-8)
    np.testing.assert_allclose(np.diag(ck.factor_ @ ck.factor_.T), 1.0)


def test_cluster_kernel_defaults_and_errors():
    X, _, yp = _blobs(50)
    ck = ClusterKernel(gamma=0.3).fit(X, yp)
    assert ck.cut_ == 2 and ck.n_components_ == 5 and np.all(np.diff(ck.eigenvalues_) <= 1e-12)
    with pytest.raises(ValueError, match="transductive"):
        ck.transform(X[:10])
    with pytest.raises(ValueError, match="non-negative kernel"):
        ClusterKernel(kernel="linear").fit(X, yp)
    with pytest.raises(ValueError, match="at least 2 classes"):
        ClusterKernel().fit(X, np.where(yp == 1, -1, yp))
    with pytest.raises(ValueError, match="transfer"):
        transfer([1.0], "cubic", 1)


# -- spectral graph kernel ----------------------------------------------------------------------
def test_knn_laplacian_is_a_symmetric_graph_laplacian():
    X, _, _ = _blobs(30)
    L = knn_laplacian(X, 4)
    np.testing.assert_allclose(L, L.T)
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    assert np.all(np.diag(L) >= 4) and set(np.unique(L[~np.eye(30, dtype=bool)])) <= {0.0, -1.0}


def test_spectral_weights_maximise_the_alignment_under_the_order_constraints():
    """Zhu et al.'s QCQP, solved here as an NNLS, against a general-purpose solver on the same problem."""
    rng = np.random.default_rng(3)
    Phi = linalg.qr(rng.normal(size=(12, 6)), mode="economic")[0]
    yl = np.array([1, 1, -1, 1, -1, -1, 1, -1, 1, 1, -1, -1])
    T = np.outer(yl, yl).astype(float)
    free = np.array([True, False, False, False, False, False])
    mu = order_constrained_weights(Phi, T, free)
    assert np.all(mu >= -1e-12) and np.all(np.diff(mu[1:]) <= 1e-12)

    def alignment(m):
        K = (Phi * m) @ Phi.T
        return np.sum(K * T) / (np.linalg.norm(K) * np.linalg.norm(T))

    cons = [{"type": "ineq", "fun": lambda m, i=i: m[i] - m[i + 1]} for i in range(1, 5)]
    best = max((optimize.minimize(lambda m: -alignment(m), x0, bounds=[(0, None)] * 6, constraints=cons,
                                  method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
                for x0 in rng.uniform(0.1, 1, size=(8, 6))), key=lambda r: -r.fun)
    assert alignment(mu) >= -best.fun - 1e-6
    for _ in range(200):  # and no random feasible point beats it
        m = np.concatenate([[rng.uniform()], np.sort(rng.uniform(size=5))[::-1]])
        assert alignment(m) <= alignment(mu) + 1e-9


def test_spectral_graph_kernel_factor():
    X, y, yp = _blobs(60)
    sk = SpectralGraphKernel(n_neighbors=6, n_components=8).fit(X, yp)
    L = knn_laplacian(X, 6)
    w, Phi = np.linalg.eigh(L)
    np.testing.assert_allclose(sk.eigenvalues_, w[:8], atol=1e-9)
    G = sk.transform(X)
    np.testing.assert_allclose(np.trace(G @ G.T), 60)
    # the learned kernel is a function of the smooth eigenvectors: G G^T commutes with L's projector
    P = Phi[:, :8] @ Phi[:, :8].T
    np.testing.assert_allclose(P @ G @ G.T, G @ G.T, atol=1e-8)
    assert sk.alignment_ > 0.5


# -- CSI ----------------------------------------------------------------------------------------
def _csi_cost(K, G, Yc, lam, mu, labelled, centering=True):
    """The dense cost J of Bach & Jordan on the labelled rows."""
    Gl = G[labelled]
    if centering:
        Gl = Gl - Gl.mean(axis=0)
    Q = linalg.orth(Gl) if Gl.size else np.zeros((len(labelled), 0))
    return lam * np.trace(K - G @ G.T) + mu * np.sum((Yc - Q @ (Q.T @ Yc)) ** 2)


@pytest.mark.parametrize("kappa", [0.0, 0.5, 0.99])
def test_csi_chooses_the_pivot_of_largest_exact_gain(kappa):
    X, _, yp = _blobs(40, seed=2, label_every=3)
    csi = CSI(gamma=0.4, n_components=12, kappa=kappa).fit(X, yp)
    K = kernels.make("gaussian", gamma=0.4)(X)
    labelled = np.flatnonzero(yp != -1)
    Y = (yp[labelled][:, None] == np.array([0, 1])[None, :]).astype(float)
    Yc = Y - Y.mean(axis=0)
    lam, mu = (1 - kappa) / np.trace(K), kappa / np.sum(Yc**2)
    G = np.zeros((40, 0))
    for step, p in enumerate(csi.pivots_):
        J0 = _csi_cost(K, G, Yc, lam, mu, labelled)
        gains = {}
        for i in range(40):
            R = K - G @ G.T
            if R[i, i] <= 1e-10:
                continue
            gains[i] = J0 - _csi_cost(K, np.column_stack([G, R[:, i] / np.sqrt(R[i, i])]), Yc, lam, mu, labelled)
        assert gains[p] >= max(gains.values()) - 1e-9, step
        assert csi.gains_[step] == pytest.approx(gains[p], rel=1e-6, abs=1e-12)
        R = K - G @ G.T
        G = np.column_stack([G, R[:, p] / np.sqrt(R[p, p])])
    np.testing.assert_allclose(csi.factor_, G, atol=1e-10)
    np.testing.assert_allclose(csi.approximation_error_[-1], np.trace(K - G @ G.T) / np.trace(K), atol=1e-10)


def test_csi_factor_is_a_pivoted_cholesky_that_extends_to_new_points():
    X, _, yp = _blobs(50, seed=4)
    csi = CSI(gamma=0.4, n_components=15).fit(X, yp)
    K = kernels.make("gaussian", gamma=0.4)(X)
    G, P = csi.factor_, csi.pivots_
    np.testing.assert_allclose((G @ G.T)[:, P], K[:, P], atol=1e-9)  # exact on the pivot columns
    assert np.linalg.eigvalsh(K - G @ G.T).min() > -1e-9
    np.testing.assert_allclose(np.triu(csi.pivot_factor_, 1), 0, atol=1e-12)
    np.testing.assert_allclose(csi.transform(X), G, atol=1e-7)
    Xn = np.random.default_rng(5).normal(size=(7, 3))
    np.testing.assert_allclose(csi.transform(Xn) @ G[P].T, kernels.make("gaussian", gamma=0.4)(Xn, X[P]), atol=1e-7)
    full = CSI(gamma=0.4, n_components=50).fit(X, yp)
    np.testing.assert_allclose(full.factor_ @ full.factor_.T, K, atol=1e-6)
    assert np.all(np.diff(full.approximation_error_) <= 1e-12) and np.all(np.diff(full.prediction_error_) <= 1e-12)


# -- LogDet kernel learning ---------------------------------------------------------------------
def test_logdet_projection_with_hard_constraint_reaches_the_target_and_is_the_bregman_update():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(6, 4))
    K = A @ A.T
    for sign, factor in [(1.0, 0.5), (-1.0, 2.0)]:
        p = K[0, 0] + K[1, 1] - 2 * K[0, 1]
        target = factor * p
        K1, duals, _ = logdet_projections(K, np.array([[0, 1]]), np.array([sign]), np.array([target]),
                                          gamma=np.inf, max_sweeps=1)
        assert K1[0, 0] + K1[1, 1] - 2 * K1[0, 1] == pytest.approx(target, rel=1e-10)
        v = np.zeros(6)
        v[[0, 1]] = [1, -1]
        beta = (target - p) / p**2  # p' = p + beta p^2
        np.testing.assert_allclose(K1, K + beta * K @ np.outer(v, v) @ K, atol=1e-10)
        assert duals[0] > 0
    K2, duals, _ = logdet_projections(K, np.array([[0, 1]]), np.array([1.0]), np.array([10 * p]), gamma=np.inf)
    np.testing.assert_allclose(K2, K)  # a satisfied constraint moves nothing
    assert duals[0] == 0


@pytest.mark.parametrize("slack", [1.0, np.inf])
def test_logdet_compiled_sweep_is_numpys_loop_bit_for_bit(slack, monkeypatch):
    """The numba sweep (learners._bregman_numba) and numpy's loop give the same bits (and the same sweeps)."""
    compiled = pytest.importorskip("nystrom_bench.learners._bregman_numba").sweep
    from nystrom_bench.learners import bregman

    rng = np.random.default_rng(11)
    A = rng.normal(size=(40, 5))
    K0 = A @ A.T
    y = rng.integers(0, 3, 40)
    i, j = np.triu_indices(40, k=1)
    sign = np.where(y[i] == y[j], 1.0, -1.0)
    d0 = np.diag(K0)[i] + np.diag(K0)[j] - 2 * K0[i, j]
    targets = np.where(sign > 0, *np.percentile(d0, [5, 95]))
    out = {}
    for name, sweep in [("numpy", bregman._sweep_numpy), ("numba", compiled)]:
        monkeypatch.setattr(bregman, "_SWEEP", sweep)
        out[name] = logdet_projections(K0, np.column_stack([i, j]), sign, targets, gamma=slack, max_sweeps=8)
    (Ka, da, sa), (Kb, db, sb) = out["numpy"], out["numba"]
    assert sa == sb and np.array_equal(da, db) and np.array_equal(Ka, Kb)
    assert not np.array_equal(Ka, K0) and np.any(da != 0)  # it moved


def test_logdet_kernel_learning_meets_hard_constraints_and_stays_in_the_nystrom_range():
    X, y, yp = _blobs(80, seed=7, label_every=8)
    lk = LogDetKernelLearning(gamma=0.3, n_components=20, slack=np.inf, max_sweeps=500, tol=1e-9,
                              random_state=0).fit(X, yp)
    assert lk.violation_ < 1e-4 and lk.n_constraints_ == 45
    G = lk.transform(X)
    lab = np.flatnonzero(yp != -1)
    K = G[lab] @ G[lab].T
    upper, lower = lk.bounds_
    for a in range(len(lab)):
        for b in range(a + 1, len(lab)):
            d = K[a, a] + K[b, b] - 2 * K[a, b]
            assert d <= upper * (1 + 1e-4) if yp[lab[a]] == yp[lab[b]] else d >= lower * (1 - 1e-4)
    assert np.linalg.eigvalsh(lk.metric_).min() > -1e-9
    # G = K(X, Z) T M^{1/2}: in the span of the Nystrom features
    F = kernels.make("gaussian", gamma=0.3)(X, lk.landmarks_)
    coef = np.linalg.lstsq(F, G, rcond=None)[0]
    np.testing.assert_allclose(F @ coef, G, atol=1e-8)


def test_logdet_kernel_learning_rejects_bad_quantiles():
    X, _, yp = _blobs(40)
    with pytest.raises(ValueError, match="quantiles"):
        LogDetKernelLearning(quantiles=(90, 10), n_components=5).fit(X, yp)
