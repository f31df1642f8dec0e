"""Sparse X (issue 25, item 4): kernels, samplers and estimators on CSR/CSC input give the dense results
(to rounding); landmarks taken from a sparse X stay sparse rows."""

import numpy as np
import pytest
from scipy import sparse

from nystrom_bench import approx, kernels, sampling
from nystrom_bench.learners import GNKR, KRR, LSSVM, KRRClassifier, NuSVM, NystromFeatures

RTOL = 1e-10


def _data(n=160, d=6, seed=0, density=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


FORMATS = [sparse.csr_matrix, sparse.csc_matrix, sparse.csr_array]

KERNELS = [kernels.make("gaussian", gamma=0.3), kernels.make("laplacian", gamma=0.2),
           kernels.make("polynomial", degree=2, gamma=0.5), kernels.make("linear"),
           kernels.make("epanechnikov", sigma=3.0), kernels.make("gaussian", gamma=0.3, dtype="float32")]


@pytest.mark.parametrize("kern", KERNELS, ids=lambda k: f"{k.name}-{k.dtype.name}")
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_kernel_blocks_equal_dense(kern, fmt):
    X, y = _data()
    Z = X[:20]
    Xs, Zs = fmt(X), fmt(Z)
    rtol = 1e-5 if kern.dtype == np.float32 else RTOL
    atol = 1e-6 if kern.dtype == np.float32 else 1e-12
    ref = kern(X, Z)
    for A, B in ((Xs, Zs), (Xs, Z), (X, Zs)):  # sparse-sparse and the mixed cases
        np.testing.assert_allclose(kern(A, B), ref, rtol=rtol, atol=atol)
    np.testing.assert_allclose(kern(Xs), kern(X), rtol=rtol, atol=atol)
    np.testing.assert_allclose(kern.diag(Xs), kern.diag(X), rtol=RTOL)
    V = np.random.default_rng(1).normal(size=(20, 2))
    np.testing.assert_allclose(kern.mmv(Xs, Zs, V), kern.mmv(X, Z, V), rtol=rtol, atol=atol)
    np.testing.assert_allclose(kern.gram_mv(Xs, Zs, V), kern.gram_mv(X, Z, V), rtol=rtol, atol=atol)
    np.testing.assert_allclose(kern.t_mv(Xs, Zs, y), kern.t_mv(X, Z, y), rtol=rtol, atol=atol)
    for a, b in zip(kern.gram(Xs, Zs, y), kern.gram(X, Z, y), strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    np.testing.assert_allclose(kern.column_sq_norms(Xs), kern.column_sq_norms(X), rtol=rtol)


def test_width_heuristics_equal_dense():
    X, _ = _data()
    for stat in (kernels.median_sq_dist, kernels.mean_sq_dist):
        assert stat(sparse.csr_matrix(X)) == pytest.approx(stat(X), rel=RTOL)


@pytest.mark.parametrize("name", sampling.available())
def test_every_sampler_takes_sparse_X(name):
    X, y = _data()
    kern = kernels.make("gaussian", gamma=0.3)
    extra = {"y": np.sign(y)} if sampling.needs_y(name) else {}
    dense = sampling.sample(name, X, kern, c=12, seed=0, **extra)
    for fmt in (sparse.csr_matrix, sparse.csc_matrix):
        got = sampling.sample(name, fmt(X), kern, c=12, seed=0, **extra)
        if np.asarray(dense).ndim == 1 and np.issubdtype(np.asarray(dense).dtype, np.integer):
            np.testing.assert_array_equal(got, dense)  # the same rows
        else:  # kmeans' centres, the Gaussian sketch
            np.testing.assert_allclose(np.asarray(got), np.asarray(dense), rtol=1e-8, atol=1e-10)


def test_dense_only_sampler_refuses_sparse_naming_the_others():
    @sampling.register("_dense_only_for_test", sparse=False, replace=True)
    def dense_only(X, kernel, c, rng):
        return np.arange(c)

    try:
        X, _ = _data()
        with pytest.raises(ValueError, match="needs a dense X.*uniform"):
            sampling.sample("_dense_only_for_test", sparse.csr_matrix(X), "gaussian", c=3, seed=0)
        assert "_dense_only_for_test" not in sampling.available(sparse=True)
    finally:
        sampling._REGISTRY.pop("_dense_only_for_test")


def test_nystrom_operator_keeps_sparse_landmarks():
    X, y = _data()
    kern = kernels.make("gaussian", gamma=0.3)
    Xs = sparse.csr_matrix(X)
    op = approx.build("nystrom", Xs, kern, landmarks=np.arange(0, 40, 2))
    ref = approx.build("nystrom", X, kern, landmarks=np.arange(0, 40, 2))
    assert sparse.issparse(op.Z) and op.Z.shape == (20, X.shape[1])
    np.testing.assert_allclose(op.solve(0.1, y), ref.solve(0.1, y), rtol=1e-9, atol=1e-10)
    F, R = op.features(Xs[:5]), ref.features(X[:5])  # eigenvectors up to sign: compare phi phi^T
    np.testing.assert_allclose(F @ F.T, R @ R.T, rtol=1e-9, atol=1e-10)
    with pytest.raises(ValueError, match="dense X"):
        approx.build("mcm", Xs, kern)


def _pairs(make, X, y, fit_kw=None):
    """The same estimator fitted on dense X and on each sparse format: (dense, [sparse fits])."""
    dense = make().fit(X, y, **(fit_kw or {}))
    return dense, [make().fit(fmt(X), y, **(fit_kw or {})) for fmt in FORMATS]


REGRESSORS = {
    "krr-lla": lambda: KRR(n_components=30, random_state=0),
    "krr-ncr": lambda: KRR(n_components=30, mode="ncr", random_state=0),
    "krr-gsa": lambda: KRR(n_components=30, mode="gsa", random_state=0),
    "krr-exact": lambda: KRR(approximation="exact"),
    "krr-cg": lambda: KRR(n_components=30, solver="cg", cg_tol=1e-12, random_state=0),
    "krr-float32": lambda: KRR(n_components=30, dtype="float32", random_state=0),
    "krr-laplacian": lambda: KRR(kernel="laplacian", n_components=30, random_state=0),
    "krr-kmeans": lambda: KRR(n_components=20, sampler="kmeans", random_state=0),
    "krr-ridge_leverage": lambda: KRR(n_components=20, sampler="ridge_leverage", random_state=0),
    "krr-sketch": lambda: KRR(n_components=20, sampler="gaussian_sketch", random_state=0),
}


@pytest.mark.parametrize("name", REGRESSORS)
def test_krr_sparse_equals_dense(name):
    X, y = _data()
    dense, fits = _pairs(REGRESSORS[name], X, y)
    Xt, _ = _data(n=40, seed=5)
    tol = dict(rtol=1e-5, atol=1e-6) if "float32" in name else dict(rtol=RTOL, atol=1e-10)
    for fit in fits:
        np.testing.assert_allclose(fit.predict(sparse.csr_matrix(Xt)), dense.predict(Xt), **tol)
        np.testing.assert_allclose(fit.predict(Xt), dense.predict(Xt), **tol)  # dense X on a sparse fit


def test_krr_weighted_sparse_equals_dense():
    X, y = _data()
    w = np.random.default_rng(2).integers(0, 3, size=len(y))
    dense, fits = _pairs(lambda: KRR(n_components=30, random_state=0), X, y, {"sample_weight": w})
    for fit in fits:
        np.testing.assert_allclose(fit.predict(X), dense.predict(X), rtol=RTOL, atol=1e-10)


CLASSIFIERS = {
    "krrclassifier": lambda: KRRClassifier(n_components=30, random_state=0),
    "lssvm-exact": lambda: LSSVM(),
    "lssvm-nystrom": lambda: LSSVM(approximation="nystrom", n_components=30, random_state=0),
    "nusvm-lla": lambda: NuSVM(n_components=30, random_state=0, tol=1e-10),
    "nusvm-gsa": lambda: NuSVM(n_components=30, mode="gsa", random_state=0, tol=1e-10),
    "nusvm-exact": lambda: NuSVM(approximation="exact", tol=1e-10),
}


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifiers_sparse_equal_dense(name, n_classes):
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [0.5]) if n_classes == 2 else np.quantile(y, [1 / 3, 2 / 3]))
    dense, fits = _pairs(CLASSIFIERS[name], X, labels)
    Xt, _ = _data(n=40, seed=5)
    # libsvm stops at its tolerance: NuSVM's duals agree to it, not to rounding
    tol = dict(rtol=1e-6, atol=1e-6) if name.startswith("nusvm") else dict(rtol=RTOL, atol=1e-10)
    for fit in fits:
        np.testing.assert_allclose(fit.decision_function(sparse.csr_matrix(Xt)), dense.decision_function(Xt), **tol)
        np.testing.assert_array_equal(fit.predict(Xt), dense.predict(Xt))


@pytest.mark.parametrize("sampler", ["uniform", "kmeans", "ridge_leverage", "column_norm"])
@pytest.mark.parametrize("fmt", [sparse.csr_matrix, sparse.csc_matrix])
def test_nystrom_features_sparse_equals_dense(sampler, fmt):
    X, _ = _data()
    dense = NystromFeatures(gamma="median", n_components=20, sampler=sampler, random_state=0).fit(X)
    sp = NystromFeatures(gamma="median", n_components=20, sampler=sampler, random_state=0).fit(fmt(X))
    Fs, Fd = sp.transform(fmt(X)), dense.transform(X)
    np.testing.assert_allclose(Fs @ Fs.T, Fd @ Fd.T, rtol=1e-8, atol=1e-10)  # K~ = F F^T
    if len(np.unique(dense.components_, axis=0)) == len(dense.components_):
        np.testing.assert_allclose(Fs, Fd, rtol=1e-8, atol=1e-10)
    else:
        # column_norm draws two of X's all-zero rows here: W is singular, and scikit-learn's normalisation
        # (singular values raised to 1e-12) scales the rounding along W's null direction by 1e6 -- features
        # that differ at ~1e-9 between the sparse and dense products (and between CPUs); K~ does not see them.
        assert sampler == "column_norm"
    assert sp.gamma_ == pytest.approx(dense.gamma_, rel=RTOL)


@pytest.mark.parametrize("sampler", ["uniform", "column_norm"])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_gnkr_sparse_equals_dense(sampler, kernel):
    X, y = _data()
    Xt, _ = _data(n=40, seed=5)
    make = lambda: GNKR(kernel=kernel, sigma=2.0, alpha=1e-6, n_components=30, sampler=sampler,  # noqa: E731
                        random_state=0)
    dense, fits = _pairs(make, X, y)
    path = make().fit_path(X, y, [1.0, 3.0], [1e-8, 1e-4])
    for fmt, fit in zip(FORMATS, fits, strict=True):
        np.testing.assert_allclose(fit.predict(sparse.csr_matrix(Xt)), dense.predict(Xt), rtol=RTOL, atol=1e-10)
        sp = make().fit_path(fmt(X), y, [1.0, 3.0], [1e-8, 1e-4])
        np.testing.assert_allclose(sp.predict_path(fmt(Xt)), path.predict_path(Xt), rtol=RTOL, atol=1e-10)
