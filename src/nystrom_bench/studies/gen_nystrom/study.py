"""Generalized Nystrom low-rank kernel learning with side information (Lan, Zhang et al., AIJ 2017, Tables 1-2).

The paper's semi-supervised protocol: in every repeat (a seed) ``n_labels`` samples (a coord;
the paper: 100) are drawn evenly over the classes (:func:`labelled_indices`), the rest of the
data set is unlabelled; each method (a block's ``approach:``, :mod:`nystrom_bench.studies.gen_nystrom.methods`)
learns a kernel (or runs a baseline) on all samples with those labels, a linear SVM (C = 1) is
trained on the labelled rows of the factor G (``K~ = G G^T``), and the error is measured on the
unlabelled samples.  The Gaussian kernel ``exp(-||x - y||^2 / b0)`` with b0 the mean pairwise
squared distance (the block's kernel spec, ``gamma: mean``) serves the single-kernel methods; the
multiple-kernel methods use ``b = 2^-4 b0, ..., 2^4 b0`` (``width_scales``).

``error`` is in percent; ``seconds`` is the time of learning the kernel and the classifier and
predicting the unlabelled samples (the fit and the prediction; the gen_nystrom method's
``lambda_path`` of the paper's Fig. 1 is recorded outside it).  The spectral and cluster kernels'
eigendecompositions do not depend on the labels, so a job computes each once per data set and reuses
it for every seed (:func:`~nystrom_bench.studies.gen_nystrom.methods.shared_spectrum`), and the k-means
landmarks a seed's methods and coords draw from one stream are computed once per seed and count
(:class:`~nystrom_bench.studies.gen_nystrom.methods.SharedKMeans`); a row that reused such work is
charged its one computation's measured seconds (:mod:`nystrom_bench.sharedwork`).  The
paper's tables and Fig. 1 are the report section's (:mod:`nystrom_bench.studies.gen_nystrom.section`).
"""

from __future__ import annotations

import numpy as np

from .. import Study, register


def _positive(**kw):
    return {"type": "number", "exclusiveMinimum": 0, **kw}


def _grid(**kw):
    return {"type": "array", "minItems": 1, "items": _positive(), **kw}


def labelled_indices(y, n_labels, rng):
    """``n_labels`` indices spread evenly over the classes (the first ``n_labels mod k`` classes get one
    more), drawn without replacement; a class smaller than its share gives all its samples."""
    classes = np.unique(y)
    share = np.full(len(classes), n_labels // len(classes))
    share[: n_labels % len(classes)] += 1
    picked = [rng.choice(np.flatnonzero(y == c), size=min(s, int(np.sum(y == c))), replace=False)
              for c, s in zip(classes, share, strict=True)]
    return np.sort(np.concatenate(picked))


@register
class GenNystromStudy(Study):
    name = "gen_nystrom"
    title = "Generalized Nystrom low-rank kernel learning with side information (Lan, Zhang et al., AIJ 2017)"
    description = (
        "Semi-supervised protocol of Lan, Zhang et al.: per repeat (seed) n_labels samples drawn evenly over the "
        "classes are labelled and the rest is not; each method learns a kernel (or runs a baseline) with these "
        "labels, a linear SVM (C = 1) on the learned factor is trained on the labelled samples, and error is the "
        "percentage of unlabelled samples misclassified. seconds covers learning the kernel, the classifier and "
        "the prediction; label-free work the job computes once and reuses (the spectral and cluster kernels' "
        "eigendecompositions across seeds, the k-means landmarks across a seed's methods) is charged to every row "
        "that uses it at its one computation's measured seconds. "
        "Single-kernel methods use exp(-||x-y||^2 / b0), b0 the mean squared distance; the "
        "multiple-kernel ones 2^-4 b0 ... 2^4 b0. Paired tests pair on data set, seed and n_labels."
    )
    family = "semi_supervised"
    tasks = ("binary", "multiclass")
    coords = ("n_labels",)
    metrics = {"error": ("Error on unlabelled samples (%)", True), "seconds": ("Time (s)", True)}
    tested_metrics = ("error", "seconds")
    primary_metric = "error"
    reference_method = "nystrom"
    params_schema = {
        "n_labels": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 2}, "default": [100],
                     "description": "numbers of labelled samples (a coord)"},
        "landmark_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.1,
                              "description": "rank of every low-rank method, a fraction of n"},
        "mkl_tau": _positive(default=3, description="the multiple-kernel rank, times the single-kernel one"),
        "C": _positive(default=1.0, description="C of every SVM"),
        "width_scales": _grid(default=[2.0**k for k in range(-4, 5)],
                              description="the multiple-kernel widths, times b0"),
        "lambda_grid": _grid(default=[10.0**k for k in range(-5, 6)],
                             description="the generalized Nystrom methods' lambda grid"),
        "lambda_curve": {"type": "boolean", "default": True,
                         "description": "record the error at every lambda (the paper's Fig. 1)"},
    }
    kernel_names = ("gaussian",)

    # -- config checks ---------------------------------------------------------------------------
    def check_data(self, params, dataset, n_train):
        too_many = [v for v in params["n_labels"] if n_train is not None and v >= n_train]
        if too_many:
            return f"n_labels: {max(too_many)} labels asked, but {dataset!r} has only {n_train} rows"
        return None

    # -- the experiment --------------------------------------------------------------------------
    def coord_grid(self, params, method, dataset):
        return [{"n_labels": int(v)} for v in params["n_labels"]]

    def _labelled(self, trial):
        """The labelled indices of the trial's (data set, seed, n_labels) and the unlabelled ones."""
        n_labels, y = trial.coords["n_labels"], trial.split.y_train

        def draw():
            lab = labelled_indices(y, n_labels, trial.stream("labels", n_labels))
            return lab, np.setdiff1d(np.arange(len(y)), lab)

        return trial.shared(("labels", n_labels), draw)

    def fit_data(self, trial):
        lab, _ = self._labelled(trial)
        y_part = np.full(len(trial.split.y_train), -1)
        y_part[lab] = trial.split.y_train[lab]
        return trial.split.X_train, y_part

    def test_data(self, trial):
        return trial.split.X_train[self._labelled(trial)[1]]

    def score(self, prediction, trial):
        unl = self._labelled(trial)[1]
        charged = getattr(trial.estimator, "shared_seconds_", 0.0)  # shared work reused: its one computation's seconds
        return {"error": 100 * float(np.mean(prediction != trial.split.y_train[unl])),
                "seconds": trial.fit_time + trial.predict_time + charged}

    def record(self, trial):
        lab, unl = self._labelled(trial)
        return {"n_labelled": len(lab), "n_unlabelled": len(unl), "C": trial.params["C"]}
