"""Landmark samplers: do non-uniform landmarks beat uniform ones, and when?

For every data set, seed, kernel, sampler (a :mod:`~nystrom_bench.methods.samplers` block, ``{sampler:
NAME}``) and number of landmarks ``m`` (the study's coord), the training part -- subsampled uniformly to
at most ``params.max_train`` points, the test part to ``params.max_test`` -- gets ``m`` landmarks from
:func:`nystrom_bench.sampling.sample`, and the Nystrom approximation ``K~ = F F^T`` on them
(:func:`nystrom_bench.spectrum.nystrom_factor`, reusing the factor RPCholesky and greedy pivoting report)
is scored by:

``trace_error``
    ``(tr K - ||F||_F^2) / tr K`` on all training points (:func:`~nystrom_bench.spectrum.trace_error`):
    the relative trace-norm error, since ``K - F F^T`` is PSD (Gittens & Mahoney, JMLR 2016, Sec. 2;
    the measure the RPCholesky paper reports: Chen, Epperly, Tropp & Webber, CPAM 2024); values below the
    sum's rounding ``n eps`` (the approximation is exact to working precision) are recorded as ``n eps``;
``frobenius_error``, ``spectral_error``
    ``||K - K~||_F / ||K||_F`` and ``||K - K~||_2 / ||K||_2`` on the exact block of a uniform subsample of
    at most ``params.exact_points`` training points (:func:`~nystrom_bench.spectrum.subsample_errors`),
    the same subsample for every sampler and m of a (data set, seed);
``test_error``
    kernel ridge regression in LLA mode (:class:`~nystrom_bench.learners.KRR`, ``mode="lla"``,
    ``alpha = params.alpha``, no intercept) on the same landmarks: for regression the test MSE over the
    test targets' variance (targets centred on the training mean, as the krr study), for classification
    the misclassification rate (one-vs-rest +-1 targets and arg-max, as the krc study);
``sampling_seconds``
    the sampler's wall time (:func:`~nystrom_bench.sampling.sample`'s ``info["seconds"]``);
``kernel_entries``
    the kernel entries the sampler evaluated plus those spent building ``C = K(X, landmarks)`` (and ``W``)
    where the sampler returned no factor -- the cost of the approximation, not of the learner.

Each row also records the data set's properties (:func:`nystrom_bench.spectrum.properties` at ``lam =
params.alpha``, on the same exact subsample size; computed once per data set, seed and kernel) as params
``prop_d_eff_ratio``, ``prop_decay``, ``prop_coherence``, ``prop_leverage_gini``: the findings' question
"When do non-uniform landmarks beat uniform?" correlates the gain over uniform with them.

The m of the grid run on a data set are those up to half its training points (a small set runs the
smaller m only; the config check refuses a set where none fits).  Common random numbers: every sampler and m of a (data set, seed) starts from the same stream
(:meth:`Study.rng_names` default), as the other studies.  A sampler that cannot run on a data set
(it declares ``max_n`` and the training part is larger, or it needs a dense X) is not faked: its rows carry
no metric and the param ``skipped`` with the reason (so does a draw the sampler refuses, e.g. a k-DPP of m points
on a kernel matrix of numerical rank below m: no such subset exists).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import seeding
from . import Study, register

#: the properties of :func:`nystrom_bench.spectrum.properties`, as the prefix of the params that hold them
PROP_PREFIX = "prop_"


def spectral_norm(A):
    """``||A||_2`` of a symmetric A: the largest eigenvalue magnitude, by Lanczos (ARPACK ``eigsh``, k = 1,
    tolerance 1e-10) with a full ``eigvalsh`` where ARPACK does not converge or A is tiny.

    :func:`nystrom_bench.spectrum.subsample_errors` takes ``eigvalsh`` below 1,000 rows; at the study's
    exact block of 400-500 rows Lanczos took a quarter of its time (2.7 vs 11.6 ms, measured on a Gaussian
    kernel residual at 500 rows, one thread), and the study takes one per cell.
    """
    from scipy import linalg
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    m = A.shape[0]
    if m > 20:
        try:
            return float(abs(eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=1e-10,
                                   v0=np.full(m, 1.0 / np.sqrt(m)))[0]))
        except ArpackNoConvergence:
            pass
    w = linalg.eigvalsh(A, check_finite=False)
    return float(max(abs(w[0]), abs(w[-1])))


def _int(default, minimum=1, description=""):
    return {"type": "integer", "minimum": minimum, "default": default, "description": description}


@register
class SamplersStudy(Study):
    name = "samplers"
    title = "Landmark samplers: do non-uniform landmarks beat uniform, and when?"
    description = (
        "Every landmark sampler on the same training parts: the Nystrom approximation's relative trace-norm error "
        "(all training points), Frobenius and spectral errors (exact block of a subsample), the test error of KRR "
        "in LLA mode on the same landmarks (relative test MSE or misclassification rate), the sampler's time and "
        "the kernel entries the approximation evaluated, for every number of landmarks m (a coordinate)."
    )
    family = "samplers"
    tasks = ("regression", "binary", "multiclass")
    metrics = {
        "trace_error": ("Relative trace-norm error (tr K - tr K~) / tr K", True),
        "frobenius_error": ("Relative Frobenius error ||K - K~||_F / ||K||_F (subsample)", True),
        "spectral_error": ("Relative spectral error ||K - K~||_2 / ||K||_2 (subsample)", True),
        "test_error": ("Test error of LLA KRR (relative MSE or misclassification rate)", True),
        "sampling_seconds": ("Sampling time (s)", True),
        "kernel_entries": ("Kernel entries evaluated", True),
    }
    tested_metrics = ["trace_error", "frobenius_error", "spectral_error", "test_error", "sampling_seconds"]
    primary_metric = "trace_error"
    reference_method = "uniform"
    coords = ("m",)
    #: the mean +- sd tables and paired tests pool the m of the grid (blocks per m; 20 data sets x 2 widths x 3 m
    #: x 14 samplers per metric made a 72-page report); the figures and the answers show each m
    summary_coords = ()
    #: the warm-up (imports, first-call caches; untimed) on at most 128 training rows: every sampler's code path
    #: at a small m, without paying twice the largest m's cell per job
    warm_up_rows = (64, 128)
    #: no generic metric-vs-m figures (one linear panel per data set with every sampler and width in it): the
    #: report section draws the error against m per width on log axes, and the Pareto plots
    figure_coords = ()
    params_schema = {
        "m": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1},
              "default": [25, 50, 100, 200], "description": "landmark counts m (the coordinate)"},
        "alpha": {"type": "number", "exclusiveMinimum": 0, "default": 0.1,
                  "description": "KRR's ridge (LLA mode) and the properties' lam"},
        "max_train": _int(1000, 2, "training points used (a uniform subsample of the training part)"),
        "max_test": _int(2000, 1, "test points used (a uniform subsample of the test part)"),
        "exact_points": _int(1000, 2, "points of the exact kernel block behind frobenius_error, spectral_error "
                                      "and the data-set properties"),
    }

    # -- config ------------------------------------------------------------------------------------------
    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        if max(p["m"]) > p["max_train"] // 2:
            raise ValueError(f"parameter 'm': {max(p['m'])} landmarks, but max_train is {p['max_train']} and m may "
                             "be at most half the training points; lower m or raise max_train")

    def check_data(self, params, dataset, n_train):
        p = self.resolve_params(params)
        n = min(int(n_train), p["max_train"]) if n_train is not None else None
        if n is not None and min(p["m"]) > n // 2:
            return (f"{dataset!r} has {n} training points: every m of the grid ({p['m']}) exceeds half of them; add "
                    f"a smaller m or drop the data set")
        return None

    def coord_grid(self, params, method, dataset):
        """The m of the grid up to half the training points (``dataset["n_train"]``, set by :meth:`prepare`):
        a small data set runs the smaller m only."""
        n = dataset.get("n_train")
        return [{"m": int(m)} for m in params["m"] if n is None or int(m) <= int(n) // 2]

    # -- the learning problem ------------------------------------------------------------------------------
    def prepare(self, split, params):
        """The training part subsampled to ``max_train`` points and the test part to ``max_test`` (uniformly,
        from the (data set, seed) stream; scaling was fitted on the whole training part); ``info["n_train"]``
        the training points kept (:meth:`coord_grid` reads it)."""
        rng = seeding.rng(split.seed, self.name, split.name, "subsample")
        tr, te = len(split.y_train), len(split.y_test)
        keep_tr = np.sort(rng.choice(tr, params["max_train"], replace=False)) if tr > params["max_train"] else None
        keep_te = np.sort(rng.choice(te, params["max_test"], replace=False)) if te > params["max_test"] else None
        if keep_tr is None and keep_te is None:
            return dataclasses.replace(split, info={**split.info, "n_train": tr})
        keep_tr = np.arange(tr) if keep_tr is None else keep_tr
        keep_te = np.arange(te) if keep_te is None else keep_te
        return dataclasses.replace(split, X_train=split.X_train[keep_tr], y_train=split.y_train[keep_tr],
                                   X_test=split.X_test[keep_te], y_test=split.y_test[keep_te],
                                   info={**split.info, "n_train": len(keep_tr)})

    def targets(self, split):
        from ..learners.krr import ovr_targets

        if split.info.get("task") == "regression":
            mu = float(split.y_train.mean())
            return split.y_train - mu, ("regression", mu)
        T, classes = ovr_targets(split.y_train)
        return T, ("classification", classes)

    def _exact_rows(self, trial):
        """The uniform subsample of the training part whose exact kernel block scores every sampler and m
        of this (data set, seed)."""
        from .. import spectrum

        n = len(trial.split.y_train)
        return trial.shared(("exact_rows", n), lambda: spectrum.subsample(n, trial.params["exact_points"],
                                                                            trial.stream("exact_rows")))

    def _exact_block(self, trial):
        """``(idx, K_SS, ||K_SS||_F, ||K_SS||_2)`` of this (data set, seed, kernel): evaluated once and shared
        by every sampler and m, so a cell pays only for its residual."""
        X, idx = trial.split.X_train, self._exact_rows(trial)

        def make():
            K = np.asarray(trial.kernel(X[idx]), dtype=np.float64)
            K = (K + K.T) / 2
            return idx, K, float(np.linalg.norm(K)), spectral_norm(K)

        return trial.shared(("exact_block", trial.kernel_label, len(X)), make)

    def approximation_errors(self, trial, F):
        """``{"frobenius", "spectral"}``: :func:`nystrom_bench.spectrum.subsample_errors` on the shared exact
        block (the same numbers; the block and its norms are computed once per data set, seed and kernel)."""
        idx, K, norm_f, norm_2 = self._exact_block(trial)
        if norm_2 <= 0:
            raise ValueError("samplers: the exact kernel block is zero; relative errors need a non-zero K")
        FS = F[idx]
        R = K - FS @ FS.T
        R = (R + R.T) / 2
        return {"frobenius": float(np.linalg.norm(R) / norm_f), "spectral": spectral_norm(R) / norm_2}

    def score(self, prediction, trial):
        from .. import spectrum
        from ..learners.krr import ovr_predict

        est, split = trial.estimator, trial.split
        if getattr(est, "skipped_", None):  # not run on this data set: no number, the row says why
            if trial.log:
                trial.log.warning("%s seed=%s method=%s skipped: %s", trial.dataset, trial.seed, trial.method,
                                  est.skipped_)
            return dict.fromkeys(self.metrics, float("nan"))
        X, kern = split.X_train, trial.kernel
        F = est.factor_
        errs = self.approximation_errors(trial, F)
        kind, state = trial.state
        if kind == "regression":
            resid = prediction + state - split.y_test
            var = float(np.var(split.y_test))
            test_error = float(np.mean(resid**2) / var) if var > 0 else float("nan")
        else:
            test_error = float(np.mean(ovr_predict(prediction, state) != split.y_test))
        # K - F F^T is PSD (Gittens & Mahoney, Lemma 1): a computed trace error below the sum's rounding, n eps
        # (-8e-13 on a 1-D set whose K has numerical rank < m), is 0 to working precision: it is recorded as n eps,
        # so that the paired tests can take ratios (a value <= 0 would switch every comparison to differences)
        trace = max(spectrum.trace_error(X, kern, F), len(X) * np.finfo(np.float64).eps)
        return {"trace_error": trace, "frobenius_error": errs["frobenius"],
                "spectral_error": errs["spectral"], "test_error": test_error,
                "sampling_seconds": est.sampling_seconds_, "kernel_entries": float(est.kernel_entries_)}

    def record(self, trial):
        """The data set's properties (once per data set, seed and kernel) and the exact block's size."""
        from .. import spectrum

        X, p = trial.split.X_train, trial.params

        def props():
            seed = int(trial.stream("properties").integers(2**31 - 1))
            return spectrum.properties(X, trial.kernel, lam=p["alpha"], max_points=p["exact_points"], seed=seed)

        found = trial.shared(("properties", trial.kernel_label, len(X)), props)
        return {"exact_points": int(len(self._exact_rows(trial))),
                **{PROP_PREFIX + k: float(v) for k, v in found.items()}}
