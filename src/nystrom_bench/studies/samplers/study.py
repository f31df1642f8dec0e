"""Landmark samplers: do non-uniform landmarks beat uniform ones, and when?

Per data set, seed, kernel, sampler (a :mod:`~nystrom_bench.studies.samplers.methods` block ``{sampler: NAME}``) and
m (the coord), on the training part subsampled to ``max_train`` points (the test part to ``max_test``), the
Nystrom approximation ``F F^T`` on the sampler's landmarks (the sampler's own factor where it reports one) is
scored by ``trace_error`` = (tr K - ||F||_F^2) / tr K on all training points (the trace-norm error: K - F F^T
is PSD, Gittens & Mahoney, JMLR 2016, Sec. 2; RPCholesky's measure, Chen, Epperly, Tropp & Webber, CPAM 2024;
a value below the sum's rounding n eps is recorded as n eps), ``frobenius_error`` and ``spectral_error`` on
the exact block of a uniform subsample of at most ``exact_points`` rows (shared by every sampler and m),
``test_error`` of KRR in LLA mode at ``alpha`` on the same landmarks (test MSE over the test targets'
variance, targets centred as in the krr study; misclassification rate with one-vs-rest +-1 targets as in the
krc study), ``sampling_seconds`` and ``kernel_entries`` (the sampler's plus those of C = K(X, landmarks) and W
where no factor came back; ``leverage`` and ``kdpp`` share K's decomposition between the m, each row charged its
measured seconds).  Each row records its data set's properties (:func:`nystrom_bench.spectrum.properties` at lam =
alpha, per data set, seed and kernel) as params ``prop_*`` for the findings' "When do non-uniform landmarks beat
uniform?".  The m up to half the training points run (the config check refuses a set where none fits); every sampler
and m of a (data set, seed) starts from the same stream (common random numbers).  A sampler that cannot draw
(``max_n``, or a k-DPP of m points on K of numerical rank below m) gives rows without numbers and the param
``skipped`` with the reason."""

from __future__ import annotations

import numpy as np

from ... import seeding
from .. import Study, register
from .methods import block_errors, exact_block, subsample_split

#: the properties of :func:`nystrom_bench.spectrum.properties`, as the prefix of the params that hold them
PROP_PREFIX = "prop_"


def _int(default, minimum=1, description=""):
    return {"type": "integer", "minimum": minimum, "default": default, "description": description}


@register
class SamplersStudy(Study):
    name = "samplers"
    title = "Landmark samplers: do non-uniform landmarks beat uniform, and when?"
    description = ("Every landmark sampler on the same training parts, for every m: trace-norm, Frobenius and spectral "
                   "errors of the Nystrom approximation, the test error of LLA KRR on its landmarks, sampling time "
                   "and kernel entries.")
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
    summary_coords = ()  # tables and paired tests pool m (per m: a 72-page report); figures and answers show m
    warm_up_rows = (64, 128)  # the untimed warm-up: every sampler's code path at a small m
    figure_coords = ()  # no generic linear curves: the section draws error vs m per width on log axes
    tracking_fold = ("seed",)  # MLflow: a run per data set x method x kernel (551 runs log in 0.38x the time of 2,800)
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

    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        if max(p["m"]) > p["max_train"] // 2:
            raise ValueError(f"parameter 'm': {max(p['m'])} landmarks, but max_train is {p['max_train']} and m may "
                             "be at most half the training points; lower m or raise max_train")

    def check_data(self, params, dataset, n_train):
        p = self.resolve_params(params)
        n = min(int(n_train), p["max_train"]) if n_train is not None else None
        return (f"{dataset!r} has {n} training points: every m of the grid ({p['m']}) exceeds half of them; add a "
                "smaller m or drop the data set") if n is not None and min(p["m"]) > n // 2 else None

    def coord_grid(self, params, method, dataset):  # the m up to half the training points
        n = dataset.get("n_train")
        return [{"m": int(m)} for m in params["m"] if n is None or int(m) <= int(n) // 2]

    def prepare(self, split, params):
        """At most ``max_train`` training and ``max_test`` test points, uniformly from the (data set, seed) stream
        (scaling was fitted on the whole training part); ``info["n_train"]`` for :meth:`coord_grid`."""
        return subsample_split(split, params["max_train"], params["max_test"],
                               seeding.rng(split.seed, self.name, split.name, "subsample"))

    def targets(self, split):
        from ...learners.krr import ovr_targets

        if split.info.get("task") == "regression":
            return split.y_train - split.y_train.mean(), ("regression", float(split.y_train.mean()))
        T, classes = ovr_targets(split.y_train)
        return T, ("classification", classes)

    def _exact_rows(self, trial):  # the exact block's rows: one subsample per (data set, seed)
        from ... import spectrum

        n = len(trial.split.y_train)
        return trial.shared(("exact_rows", n), lambda: spectrum.subsample(n, trial.params["exact_points"],
                                                                            trial.stream("exact_rows")))

    def _exact_block(self, trial):
        X = trial.split.X_train
        return trial.shared(("exact_block", trial.kernel_label, len(X)),
                            lambda: exact_block(X, trial.kernel, self._exact_rows(trial)))

    def score(self, prediction, trial):
        from ... import spectrum
        from ...learners.krr import ovr_predict

        est, split = trial.estimator, trial.split
        if getattr(est, "skipped_", None):  # not run on this data set: no number, the row says why
            if trial.log:
                trial.log.warning("%s seed=%s method=%s skipped: %s", trial.dataset, trial.seed, trial.label,
                                  est.skipped_)
            return dict.fromkeys(self.metrics, float("nan"))
        X, F, (kind, state) = split.X_train, est.factor_, trial.state
        errs = block_errors(self._exact_block(trial), F)
        if kind == "regression":
            var = float(np.var(split.y_test))
            test_error = float(np.mean((prediction + state - split.y_test) ** 2) / var) if var > 0 else float("nan")
        else:
            test_error = float(np.mean(ovr_predict(prediction, state) != split.y_test))
        # below n eps (-8e-13 on a 1-D set of rank < m) it is 0 to working precision; > 0 keeps the tests on ratios
        trace = max(spectrum.trace_error(X, trial.kernel, F), len(X) * np.finfo(np.float64).eps)
        return {"trace_error": trace, "frobenius_error": errs["frobenius"], "spectral_error": errs["spectral"],
                "test_error": test_error, "sampling_seconds": est.sampling_seconds_, "kernel_entries": float(est.kernel_entries_)}

    def record(self, trial):
        """The data set's properties (once per data set, seed and kernel) and the exact block's size."""
        from ... import spectrum

        X, p = trial.split.X_train, trial.params

        def props():
            seed = int(trial.stream("properties").integers(2**31 - 1))
            return spectrum.properties(X, trial.kernel, lam=p["alpha"], max_points=p["exact_points"], seed=seed)

        found = trial.shared(("properties", trial.kernel_label, len(X)), props)
        return {"exact_points": int(len(self._exact_rows(trial))),
                **{PROP_PREFIX + k: float(v) for k, v in found.items()}}
