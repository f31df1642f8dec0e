"""Generalized Nystrom low-rank kernel learning with side information (Lan, Zhang et al., AIJ 2017, Tables 1-2).

The paper's semi-supervised protocol: in every repeat (a seed) ``n_labels`` samples (a coord;
the paper: 100) are drawn evenly over the classes, the rest of the data set is unlabelled; a
kernel is learned (or a baseline run) on all samples with those labels, a linear SVM
(scikit-learn's LIBLINEAR, C = 1) is trained on the labelled rows of the factor G
(``K~ = G G^T``), and the error is measured on the unlabelled samples.  The Gaussian kernel
``exp(-||x - y||^2 / b0)`` with b0 the mean pairwise squared distance (the paper's choice; the
block's kernel spec, ``gamma: mean``) serves the single-kernel methods; the multiple-kernel
methods use ``b = 2^-4 b0, ..., 2^4 b0``.

Methods (a method block's ``approach:``):

==================  =====================================================================
``svm``             LibSVM: a kernel SVM (C = 1) on the labelled samples only
``nystrom``         standard Nystrom features (k-means landmarks, 10% of n) + linear SVM
``csi``             Cholesky with side information (Bach & Jordan): :class:`~nystrom_bench.learners.CSI`
``spectral``        spectral graph kernel (Zhu et al.): :class:`~nystrom_bench.learners.SpectralGraphKernel`
``cluster``         cluster kernel (Chapelle et al.): :class:`~nystrom_bench.learners.ClusterKernel`
``breg``            LogDet low-rank kernel learning (Kulis et al.):
                    :class:`~nystrom_bench.learners.LogDetKernelLearning`
``gen_nystrom``     ours single kernel: :class:`~nystrom_bench.learners.GeneralizedNystrom`
``gen_nystrom_mkl`` ours multiple kernels: :class:`~nystrom_bench.learners.GeneralizedNystromMKL`
``abmkl``           alignment-based MKL: :class:`~nystrom_bench.learners.AlignmentMKL` (uncentred)
``cabmkl``          centred-alignment MKL (Cortes et al.)
``simplemkl``       SimpleMKL (Rakotomamonjy et al.): :class:`~nystrom_bench.learners.SimpleMKL`
``glmkl``           group-lasso MKL (Xu et al.): :class:`~nystrom_bench.learners.GroupLassoMKL`
==================  =====================================================================

Every low-rank baseline has the rank of the Nystrom methods (``landmark_fraction`` of n, the paper's
10%).  The paper's other baselines are not implemented yet and appear in the tables as such:
:data:`NOT_IMPLEMENTED`.  ``error`` is in percent; ``seconds`` is the time of learning the
kernel and the classifier and predicting the unlabelled samples.  Every learned kernel is scaled to
unit mean diagonal before its SVM (:func:`unit_mean_diagonal`), so that C = 1 means one thing for all.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd

from .. import sampling, seeding
from . import Study, check_sampler, register

#: approach -> (table, the paper's column name)
APPROACHES = {
    "svm": (1, "LibSVM"), "nystrom": (1, "Nystrom"), "csi": (1, "CSI"), "spectral": (1, "Spectral"),
    "cluster": (1, "Cluster"), "breg": (1, "Breg"), "gen_nystrom": (1, "Ours single kernel"),
    "abmkl": (2, "ABMKL"), "cabmkl": (2, "CABMKL"), "simplemkl": (2, "SimpleMKL"), "glmkl": (2, "GLMKL"),
    "gen_nystrom_mkl": (2, "Ours multiple kernels"),
}
#: the paper's baselines without an implementation here: name -> what it is
NOT_IMPLEMENTED = {
    "NCNM": (1, "null-category noise model sparse GP (Lawrence & Jordan)"),
    "SKM": (2, "support kernel machine (Bach et al.): SMO on a smoothed dual of the l1-MKL problem that SimpleMKL and "
               "GLMKL solve here"),
}
#: the paper's column order of Tables 1 and 2
PAPER_COLUMNS = {
    1: ["LibSVM", "Nystrom", "CSI", "Spectral", "Cluster", "Breg", "NCNM", "Ours single kernel"],
    2: ["ABMKL", "CABMKL", "SKM", "SimpleMKL", "GLMKL", "Ours multiple kernels"],
}
#: our data sets that are the paper's (or a mirror of it)
PAPER_DATASET = {"g241c": "g241C", "digit1": "Digit1", "usps_ssl": "USPS", "coil": "coil", "coil2": "coil2",
                 "text_ssl": "Text", "german_keel": "german", "german": "german", "usps49": "usps49", "usps27": "usps27", "segment": "segment", "satimage": "satimage", "dna": "dna",
                 "usps": "usps-full", "a1a": "adult1a", "svmguide1": "svmgd1a", "mnist": "mnist"}


# Lan, Zhang et al. Tables 1 and 2 (seed text): data set, n/d/#cls, then per column "error+-sd seconds"
# ("- -": not run in the paper), columns in PAPER_COLUMNS order.
_PAPER = {
    1: """
g241C 1500/241/2 | 22.09+-1.34 0.9 | 27.09+-2.16 0.8 | 22.37+-1.80 0.8 | 23.64+-1.28 108.2 | 26.59+-3.96 63.3 | 26.31+-1.81 17.7 | 22.86+-1.51 22.7 | 21.57+-0.85 1.2
Digit1 1500/241/2 | 4.96+-1.15 0.1 | 5.67+-1.25 0.8 | 4.97+-0.84 0.8 | 3.87+-1.71 70.5 | 5.53+-1.01 0.5 | 6.01+-1.62 27.3 | 6.40+-1.03 22.3 | 4.71+-0.71 1.2
USPS 1500/241/2 | 11.55+-4.33 0.1 | 10.67+-3.46 0.7 | 8.60+-2.55 0.7 | 11.28+-0.51 78.4 | 6.96+-1.14 149.1 | 11.45+-2.34 27.5 | 11.29+-3.49 22.4 | 8.66+-1.14 1.0
coil 1500/241/6 | 11.00+-1.14 0.2 | 19.04+-2.90 0.8 | 19.46+-2.88 0.8 | 31.21+-10.06 31.0 | 19.38+-2.40 41.7 | 19.57+-3.41 19.8 | 19.19+-7.37 198.4 | 19.60+-3.20 1.2
coil2 1500/241/2 | 19.82+-4.10 0.1 | 12.98+-4.60 0.8 | 12.44+-4.68 0.6 | 14.57+-3.28 39.1 | 13.61+-2.24 47.6 | 14.58+-3.17 27.3 | 12.99+-3.51 22.3 | 11.83+-3.40 1.1
Text 1500/11960/2 | 26.43+-3.00 2.82 | 27.10+-2.22 37.9 | 22.69+-1.86 4.9 | 24.90+-2.04 40.5 | 27.8+-2.19 287.9 | 23.66+-0.90 44.3 | 22.71+-1.10 780 | 22.10+-1.32 28.2
german 1000/24/2 | 35.18+-1.35 0.1 | 40.31+-2.74 0.2 | 37.73+-2.27 0.6 | 33.83+-10.51 41.6 | 31.90+-3.42 2.5 | 38.42+-2.95 512.3 | 35.59+-2.51 5.19 | 36.84+-3.37 0.4
usps49 1296/256/2 | 3.21+-1.20 0.1 | 2.73+-0.72 0.7 | 2.36+-1.04 0.8 | 1.58+-0.40 26.6 | 1.74+-0.23 8.4 | 3.04+-0.39 18.5 | 1.83+-0.51 17.63 | 1.67+-0.34 1.0
usps27 1367/256/2 | 1.41+-0.22 0.1 | 1.25+-0.27 0.6 | 1.29+-0.27 0.6 | 1.98+-0.33 7.82 | 1.25+-0.31 14.6 | 1.52+-0.47 22.5 | 1.21+-0.24 19.9 | 1.10+-0.30 1.0
adult1a 1605/123/2 | 26.22+-1.53 0.1 | 29.33+-2.96 0.6 | 25.69+-2.30 0.7 | 27.27+-1.99 32.4 | 24.50+-2.68 14.1 | 32.62+-2.22 17.5 | 24.82+-2.67 17.6 | 23.93+-2.06 1.2
dna 2000/180/3 | 13.13+-0.63 0.2 | 15.92+-2.03 1.8 | 15.45+-1.36 1.2 | 15.68+-1.51 62.2 | 20.87+-2.16 48.5 | 15.80+-0.16 38.1 | 14.21+-1.06 108.2 | 15.50+-1.83 2.4
segment 2310/29/7 | 8.23+-0.76 0.1 | 9.60+-1.49 1.7 | 9.39+-1.14 2.1 | 15.51+-3.10 83.2 | 17.91+-2.82 19.9 | 10.08+-1.79 22.6 | 5.45+-0.49 141.1 | 9.59+-1.20 2.7
svmgd1a 3089/4/2 | 6.59+-1.18 0.1 | 5.22+-0.97 0.6 | 6.55+-0.33 4.5 | 6.54+-0.91 205.5 | 5.18+-1.79 47.6 | 5.51+-1.45 17.6 | 10.68+-8.57 19.9 | 4.40+-0.83 1.5
satimage 6435/36/6 | 15.11+-0.66 0.1 | 18.70+-1.82 1.7 | 18.54+-0.97 2.2 | 19.39+-1.63 285.5 | 20.78+-2.36 197.7 | 18.52+-1.82 638.4 | 14.08+-1.02 238.97 | 17.88+-1.40 2.8
usps-full 7291/256/10 | 6.01+-0.45 2.7 | 14.47+-1.43 5.5 | 13.43+-1.51 3.8 | 14.32+-1.81 521.3 | 14.79+-2.39 363.9 | 14.25+-2.29 1418.5 | - - | 13.68+-1.42 6.1
mnist 70000/780/10 | 34.68+-3.74 8.1 | 25.12+-1.85 80.4 | 24.70+-1.26 33.3 | - - | - - | 23.96+-1.73 151.7 | - - | 21.85+-1.77 82.3
""",
    2: """
g241C 1500/241/2 | 27.19+-8.76 1.1 | 23.47+-1.09 0.4 | 27.49+-6.79 0.7 | 27.55+-6.74 0.7 | 21.90+-1.37 0.7 | 18.08+-1.12 0.6
Digit1 1500/241/2 | 6.17+-0.82 0.8 | 6.86+-1.25 0.2 | 6.49+-0.91 0.2 | 6.49+-0.91 0.6 | 6.39+-0.90 0.9 | 4.77+-0.93 0.7
USPS 1500/241/2 | 17.59+-4.02 0.4 | 8.64+-2.64 0.2 | 13.04+-4.27 0.3 | 13.01+-4.23 0.7 | 14.03+-4.55 0.8 | 10.14+-3.01 0.7
coil 1500/241/6 | 15.71+-1.55 0.9 | 22.04+-3.94 0.1 | 14.09+-1.46 3.4 | 12.15+-1.51 4.1 | 14.30+-1.44 6.1 | 10.38+-0.97 0.8
coil2 1500/241/2 | 18.11+-2.23 0.4 | 11.76+-2.65 0.4 | 19.04+-2.61 0.4 | 18.61+-3.23 0.6 | 18.81+-4.52 0.8 | 12.16+-2.77 0.6
Text 1500/11960/2 | 27.62+-1.41 6.1 | 23.29+-1.61 5.2 | 27.50+-1.52 5.2 | 28.14+-2.19 5.5 | 27.50+-1.52 20.4 | 22.54+-1.49 11.1
german 1000/24/2 | 35.80+-2.64 0.1 | 33.93+-3.20 0.1 | 36.41+-2.79 0.1 | 36.29+-2.78 0.2 | 36.47+-2.85 0.2 | 34.83+-2.84 0.2
usps49 1296/256/2 | 9.78+-1.66 0.3 | 1.82+-0.73 0.2 | 5.39+-1.39 0.2 | 5.59+-1.3 0.7 | 5.7+-1.5 0.7 | 2.1+-0.6 0.5
usps27 1367/256/2 | 3.66+-1.41 0.3 | 1.24+-0.21 0.2 | 3.50+-1.41 0.2 | 3.50+-1.41 0.4 | 3.51+-1.41 0.7 | 1.42+-0.33 0.5
adult1a 1605/123/2 | 30.90+-9.81 0.3 | 26.62+-3.57 0.2 | 25.98+-1.98 0.3 | 25.88+-2.42 0.6 | 26.38+-1.63 0.7 | 25.41+-2.55 0.6
dna 2000/180/3 | 13.30+-0.70 1.7 | 18.15+-1.94 0.1 | 14.27+-1.10 1.3 | 14.29+-1.10 1.3 | 14.59+-1.51 3.6 | 12.89+-0.55 1.0
segment 2310/29/7 | 9.24+-0.74 4.0 | 9.50+-1.32 3.2 | 9.27+-1.04 5.8 | 9.18+-0.98 3.4 | 9.26+-0.97 6.1 | 6.56+-0.92 1.2
svmgd1a 3089/4/2 | 7.02+-1.55 0.2 | 4.80+-0.84 0.5 | 6.79+-1.21 0.4 | 6.67+-1.21 0.3 | 6.74+-1.26 0.8 | 5.05+-1.52 0.9
satimage 6435/36/6 | 13.60+-0.71 7.8 | 17.13+-0.86 5.9 | 14.03+-0.65 8.6 | 14.04+-0.67 3.6 | 14.29+-0.59 12.9 | 14.93+-1.01 1.5
usps-full 7291/256/10 | 7.73+-0.62 15.4 | 13.93+-1.59 21.0 | 7.83+-0.70 23.2 | 7.92+-0.81 20.9 | 8.10+-0.69 52.1 | 6.37+-0.47 3.2
webspam 350000/254/2 | 24.83+-2.87 125.1 | 16.20+-0.99 165.6 | 23.54+-2.51 153.9 | 16.86+-0.83 164.3 | 22.94+-2.59 319.9 | 15.67+-1.08 83.2
mnist 70000/780/10 | 29.74+-2.30 529.9 | 28.48+-2.15 868.6 | 26.47+-2.41 543.4 | 29.38+-1.87 663.7 | 28.58+-1.87 1574.4 | 20.74+-2.08 45.1
""",
}


def _parse_paper_tables():
    """``{table: {data set: {column: (error, sd, seconds)}}}`` from :data:`_PAPER`."""
    out = {}
    for table, text in _PAPER.items():
        for line in text.strip().splitlines():
            head, *cells = line.split(" | ")
            row = {}
            for col, cell in zip(PAPER_COLUMNS[table], cells, strict=True):
                err, secs = cell.split()
                if err != "-":
                    mean, sd = err.split("+-")
                    row[col] = (float(mean), float(sd), float(secs))
            out.setdefault(table, {})[head.split()[0]] = row
    return out


PAPER_TABLES = _parse_paper_tables()


def unit_mean_diagonal(G):
    """G scaled so that the kernel ``G G^T`` has mean diagonal 1 over the samples.

    The SVM's C = 1 means something only relative to the kernel's scale, and the learned kernels'
    scales differ by orders of magnitude: the generalized Nystrom kernel is ``beta`` times a Nystrom
    kernel at large lambda, with beta of eq. (8) ~10^4 on german, which made C = 1 a nearly hard
    margin there (measured: 37.7-41.7% error over lambda >= 10 against 29.9-37.9% normalised, three
    repeats).  Every method's kernel is therefore put on the Gaussian kernel's scale (unit diagonal)
    before its SVM; the Gaussian-based ones are unchanged up to the Nystrom residual."""
    scale = np.sqrt(np.mean(np.sum(G**2, axis=1)))
    return G / scale if scale > 0 else G


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
        "the prediction. Single-kernel methods use exp(-||x-y||^2 / b0), b0 the mean squared distance; the "
        "multiple-kernel ones 2^-4 b0 ... 2^4 b0. Paired tests pair on data set, seed and n_labels."
    )
    tasks = ("binary", "multiclass")
    coords = ("n_labels",)
    metrics = {"error": ("Error on unlabelled samples (%)", True), "seconds": ("Time (s)", True)}
    tested_metrics = ("error", "seconds")
    primary_metric = "error"
    reference_method = "nystrom"
    param_defaults = {"n_labels": [100], "landmark_fraction": 0.1, "mkl_tau": 3, "C": 1.0,
                      "width_scales": [2.0**k for k in range(-4, 5)],
                      "lambda_grid": [10.0**k for k in range(-5, 6)], "lambda_curve": True}
    method_keys = ("approach", "sampler")
    kernel_names = ("gaussian",)

    # -- config checks ---------------------------------------------------------------------------
    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        nl = p["n_labels"]
        if not isinstance(nl, list) or not nl or not all(isinstance(v, numbers.Integral) and v >= 2 for v in nl):
            raise ValueError(f"n_labels must be a non-empty list of integers >= 2, got {nl!r}")
        if not isinstance(p["landmark_fraction"], numbers.Real) or not 0 < p["landmark_fraction"] <= 1:
            raise ValueError(f"landmark_fraction must be in (0, 1], got {p['landmark_fraction']!r}")
        for key in ("mkl_tau", "C"):
            if not isinstance(p[key], numbers.Real) or p[key] <= 0:
                raise ValueError(f"{key} must be > 0, got {p[key]!r}")
        if not isinstance(p["lambda_curve"], bool):
            raise ValueError(f"lambda_curve must be true or false, got {p['lambda_curve']!r}")
        for key in ("width_scales", "lambda_grid"):
            v = p[key]
            if not isinstance(v, list) or not v or not all(isinstance(x, numbers.Real) and x > 0 for x in v):
                raise ValueError(f"{key} must be a non-empty list of positive numbers, got {v!r}")

    def check_method(self, method_name, method_cfg, study_cfg):
        opts = self.check_method_keys(method_cfg)
        approach = opts.get("approach")
        if approach in {k.lower() for k in NOT_IMPLEMENTED} | set(NOT_IMPLEMENTED):
            raise ValueError(f"approach {approach!r} is not implemented yet (the report lists it as such); "
                             f"choose one of {', '.join(APPROACHES)}")
        if approach not in APPROACHES:
            raise ValueError(f"approach must be one of {', '.join(APPROACHES)}, got {approach!r}")
        sampler = opts.get("sampler", "kmeans")
        check_sampler(sampler)
        if sampling.needs_y(sampler) or sampler == "gaussian_sketch":
            raise ValueError(f"sampler {sampler!r} cannot give landmarks here (it needs every label or gives a "
                             "sketch); choose e.g. kmeans or uniform")
        from .. import data

        for n_labels in self.resolve_params(study_cfg.get("params"))["n_labels"]:
            for ds in study_cfg["datasets"]:
                n = int(data.info(ds)["shape"][0])
                if n_labels >= n:
                    raise ValueError(f"params.n_labels: {n_labels} labels asked, but {ds!r} has only {n} rows")

    # -- the experiment --------------------------------------------------------------------------
    def coord_grid(self, params, method_name, method_cfg):
        return [{"n_labels": int(v)} for v in params["n_labels"]]

    def evaluate(self, trial):
        from sklearn.svm import SVC, LinearSVC

        from .. import approx
        from ..learners import AlignmentMKL, GeneralizedNystrom, GeneralizedNystromMKL

        p = trial.params
        X, y = trial.split.X_train, trial.split.y_train
        n_labels = trial.coords["n_labels"]
        lab = labelled_indices(y, n_labels, seeding.rng(trial.seed, trial.study, trial.dataset, "labels", n_labels))
        unl = np.setdiff1d(np.arange(len(y)), lab)
        y_part = np.full(len(y), -1)
        y_part[lab] = y[lab]
        approach = trial.method_cfg["approach"]
        sampler = trial.method_cfg.get("sampler", "kmeans")
        kern = trial.kernel
        params = {"approach": approach, "n_labelled": len(lab), "n_unlabelled": len(unl), "C": p["C"]}

        def linear(G):
            G = unit_mean_diagonal(G)
            return LinearSVC(C=p["C"], max_iter=20000).fit(G[lab], y[lab]).predict(G[unl])

        t0 = time.perf_counter()
        if approach == "svm":
            pred = SVC(C=p["C"], kernel="precomputed").fit(kern(X[lab]), y[lab]).predict(kern(X[unl], X[lab]))
        elif approach == "nystrom":
            c = max(1, round(p["landmark_fraction"] * len(X)))
            idx = sampling.sample(sampler, X, kern, c=c, seed=trial.rng)
            pred = linear(approx.build("nystrom", X, kern, landmarks=idx).factor())
            params["n_landmarks"] = c
        elif approach in _LEARNED_KERNELS:
            est = _LEARNED_KERNELS[approach](kern, p["landmark_fraction"], sampler, trial.rng).fit(X, y_part)
            pred = linear(est.transform(X))
            params.update({k: _jsonable(getattr(est, k)) for k in _REPORTED.get(approach, ())})
        elif approach == "gen_nystrom":
            gn = GeneralizedNystrom(**_kernel_params(kern), n_landmarks=p["landmark_fraction"], sampler=sampler,
                                    lambda_grid=tuple(p["lambda_grid"]), random_state=trial.rng).fit(X, y_part)
            pred = linear(gn.transform(X))
            seconds = time.perf_counter() - t0
            params.update(n_landmarks=gn.n_landmarks_, lam=gn.lam_, beta=gn.beta_, n_iter=gn.n_iter_)
            if p["lambda_curve"]:  # the paper's Fig. 1: the error at every lambda (not part of the time)
                params["lambda_path"] = [
                    [lam, gn.alignment_[lam], 100 * float(np.mean(linear(gn.transform(X, lam=lam)) != y[unl]))]
                    for lam in gn.alignment_]
            return [{"params": params, "metrics": {"error": 100 * float(np.mean(pred != y[unl])),
                                                   "seconds": seconds}}]
        elif approach == "gen_nystrom_mkl":
            frac = p["landmark_fraction"] * p["mkl_tau"] / len(p["width_scales"])
            mk = GeneralizedNystromMKL(width_scales=tuple(p["width_scales"]), n_landmarks=min(1.0, frac),
                                       sampler=sampler, lambda_grid=tuple(p["lambda_grid"]),
                                       random_state=trial.rng).fit(X, y_part)
            pred = linear(mk.transform(X))
            params.update(n_landmarks=mk.n_landmarks_, lam=mk.lam_, weights=[float(w) for w in mk.weights_])
        else:
            from ..learners import GroupLassoMKL, SimpleMKL

            make = {"abmkl": lambda **kw: AlignmentMKL(centered=False, **kw),
                    "cabmkl": lambda **kw: AlignmentMKL(centered=True, **kw),
                    "simplemkl": SimpleMKL, "glmkl": GroupLassoMKL}[approach]
            mkl = make(width_scales=tuple(p["width_scales"]), C=p["C"])
            pred = mkl.fit(X[lab], y[lab]).predict(X[unl])
            params["weights"] = [float(w) for w in mkl.weights_]
        seconds = time.perf_counter() - t0
        return [{"params": params, "metrics": {"error": 100 * float(np.mean(pred != y[unl])), "seconds": seconds}}]

    # -- report ----------------------------------------------------------------------------------
    def report_tables(self, df, study_cfg):
        out = []
        for table in (1, 2):
            t = paper_layout(df, study_cfg["methods"], table)
            if len(t):
                out.append((f"Table {table} ({'single' if table == 1 else 'multiple'} kernel) in the paper's layout: "
                            "error (%) mean +- sd over repeats / seconds; * = not significantly worse than the best "
                            "mean (paired t-test, 95%), as the paper marks its best; [paper: ...] where our data "
                            "set is the paper's", t, _NOTE + " " + paper_vs_ours(df, study_cfg["methods"], table)))
        return out

    def figures(self, df, info, out_dir):
        from pathlib import Path

        rows = df[_params(df).map(lambda p: bool(p.get("lambda_path")))]
        if not len(rows):
            return []
        name = "alignment_vs_error.png"
        alignment_figure(rows, Path(out_dir) / name)
        return [{"file": name, "caption": "The paper's Fig. 1: the alignment criterion (15) (bottom) and the error on "
                 "unlabelled samples of the single-kernel method (top) for every lambda of the grid, mean over repeats; "
                 "the chosen lambda maximises the criterion."}]


_NOTE = ("Our german is KEEL's encoding of the Statlog German credit data (61 columns), the paper's LIBSVM's "
         "(24); digits49 and digits27 stand in for usps49 and usps27 (8x8 instead of 16x16 digits). C = 1 for "
         "every linear SVM (the paper says it used LIBLINEAR's heuristic without naming it). 'not implemented': "
         "a baseline of the paper that has no implementation here yet; 'not run': implemented, not in this block.")


#: approach -> (kernel, rank fraction, sampler, rng) -> an unfitted semi-supervised kernel learner
_LEARNED_KERNELS = {
    "csi": lambda kern, frac, sampler, rng: _learners().CSI(**_kernel_params(kern), n_components=frac),
    "spectral": lambda kern, frac, sampler, rng: _learners().SpectralGraphKernel(n_components=frac),
    "cluster": lambda kern, frac, sampler, rng: _learners().ClusterKernel(**_kernel_params(kern), n_components=frac),
    "breg": lambda kern, frac, sampler, rng: _learners().LogDetKernelLearning(
        **_kernel_params(kern), n_landmarks=frac, sampler=sampler, random_state=rng),
}
#: fitted attributes recorded in a result row's params
_REPORTED = {"csi": ("n_components_",), "spectral": ("n_components_", "alignment_"),
             "cluster": ("n_components_", "cut_"), "breg": ("n_sweeps_", "n_constraints_", "violation_")}


def _learners():
    from .. import learners

    return learners


def _jsonable(v):
    return v.item() if isinstance(v, np.generic) else v


def _means(df, methods, table):
    """``{data set: {paper column: our mean error}}`` over the rows of the table's methods (all n_labels)."""
    col = {m: APPROACHES[(cfg or {}).get("approach")][1] for m, cfg in methods.items()
           if (cfg or {}).get("approach") in APPROACHES and APPROACHES[cfg["approach"]][0] == table}
    g = df[df["method"].isin(col)].groupby(["dataset", "method"])["error"].mean()
    out = {}
    for (ds, m), v in g.items():
        out.setdefault(ds, {})[col[m]] = float(v)
    return out


def paper_vs_ours(df, methods, table):
    """A computed paragraph: our errors beside the paper's on its data sets, who is best, and whether the
    generalized Nystrom kernel beats the standard Nystrom one here as in the paper."""
    ours_col = "Ours single kernel" if table == 1 else "Ours multiple kernels"
    rival = "Nystrom" if table == 1 else "CABMKL"
    means = _means(df, methods, table)
    if not means:
        return ""
    parts = []
    for ds, row in sorted(means.items()):
        paper = PAPER_TABLES[table].get(PAPER_DATASET.get(ds, ""), {})
        shared = [c for c in PAPER_COLUMNS[table] if c in row and c in paper]
        if not shared:
            continue
        best_ours = min(row, key=row.get)
        best_paper = min((c for c in paper if c in row), key=lambda c: paper[c][0])
        cells = ", ".join(f"{c} {row[c]:.1f} vs {paper[c][0]:.1f}" for c in shared)
        parts.append(f"{ds} (ours vs paper): {cells}; best here {best_ours}, in the paper among these {best_paper}.")
    wins = [ds for ds, row in means.items() if ours_col in row and rival in row and row[ours_col] < row[rival]]
    both = [ds for ds, row in means.items() if ours_col in row and rival in row]
    paper_rows = [r for r in PAPER_TABLES[table].values() if ours_col in r and rival in r]
    paper_wins = sum(r[ours_col][0] < r[rival][0] for r in paper_rows)
    if both:
        parts.append(f"{ours_col} has a lower mean error than {rival} on {len(wins)} of our {len(both)} data sets "
                     f"({', '.join(sorted(wins)) or 'none'}); in the paper on {paper_wins} of {len(paper_rows)}.")
    if table == 1:
        parts.append("Known differences: the paper's LibSVM errors are lower than a C = 1 SVM gives here (segment: "
                     "17% at C = 1 on standardised features; 10.4% at C = 10 on LIBSVM's [-1, 1] scaling, measured "
                     "on 3 repeats), so its LibSVM column was probably not run at C = 1; the cluster kernel's cut r "
                     "(here the number of classes) and the spectral kernel's graph (10-NN, unweighted) are choices the "
                     "paper does not state; CSI's semi-supervised prediction term is ours (the paper calls that "
                     "extension open); our german is KEEL's 61-column encoding.")
    return "Paper vs ours. " + " ".join(parts)


def _kernel_params(kern):
    return {"kernel": "gaussian", "gamma": float(kern.params()["gamma"])}


def _params(df):
    import json

    return df["params"].map(lambda s: json.loads(s) if isinstance(s, str) else (s or {}))


def _best_marks(df):
    """Methods whose error is not significantly above the best mean's (paired t-test over repeats, 5%)."""
    from scipy import stats as sps

    wide = df.pivot_table(index="seed", columns="method", values="error")
    means = wide.mean()
    best = means.idxmin()
    marked = {best}
    for m in wide.columns:
        if m == best:
            continue
        d = (wide[m] - wide[best]).dropna()
        if len(d) < 2 or np.allclose(d, 0):
            marked.add(m)
        elif sps.ttest_1samp(d, 0.0).pvalue >= 0.05 or d.mean() <= 0:
            marked.add(m)
    return marked


def paper_layout(df, methods, table):
    """Rows = data set (x n_labels), columns = the paper's methods of ``table``: 'err +- sd / seconds'."""
    approach = {m: (cfg or {}).get("approach") for m, cfg in methods.items()}
    ours = {APPROACHES[a][1]: m for m, a in approach.items() if a in APPROACHES and APPROACHES[a][0] == table}
    if not ours:
        return pd.DataFrame()
    rows = []
    for (ds, nl), g in df.groupby(["dataset", "n_labels"]):
        g = g[g["method"].isin(ours.values())]
        if not len(g):
            continue
        marks = _best_marks(g)
        paper = PAPER_TABLES.get(table, {}).get(PAPER_DATASET.get(ds, ""), {})
        p0 = _params(g).iloc[0]
        row = {"data set": f"{ds} ({p0['n_labelled'] + p0['n_unlabelled']} rows, {int(nl)} labels)"}
        for col in PAPER_COLUMNS[table]:
            if col in ours:
                e = g[g["method"] == ours[col]]
                cell = (f"{e['error'].mean():.2f}+-{e['error'].std(ddof=1) if len(e) > 1 else 0:.2f} / "
                        f"{e['seconds'].mean():.2g}" + ("*" if ours[col] in marks else ""))
            else:
                cell = "not implemented" if col in NOT_IMPLEMENTED else "not run"
            if col in paper:
                cell += f" [paper: {paper[col][0]:.2f}+-{paper[col][1]:.2f}]"
            row[col] = cell
        rows.append(row)
    return pd.DataFrame(rows)


def alignment_figure(rows, out_png):
    """Per data set: error (top) and the alignment criterion (bottom) against log10 lambda, mean over repeats."""
    from ..atomic import replace_into
    from ..report import _plt

    plt = _plt()
    datasets = sorted(rows["dataset"].unique())
    fig, axes = plt.subplots(2, len(datasets), figsize=(2.8 * len(datasets), 4.6), squeeze=False, sharex=True)
    for c, ds in enumerate(datasets):
        paths = [np.array(p["lambda_path"], dtype=float) for p in _params(rows[rows["dataset"] == ds])
                 if p.get("lambda_path")]
        if not paths:
            continue
        P = np.mean(paths, axis=0)
        x = np.log10(P[:, 0])
        axes[0, c].plot(x, P[:, 2], marker="o", ms=3, color="#d62728")
        axes[1, c].plot(x, P[:, 1], marker="o", ms=3, color="#1f77b4")
        best = x[np.argmax(P[:, 1])]
        for ax in axes[:, c]:
            ax.axvline(best, color="grey", ls="--", lw=0.8)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
        axes[0, c].set_title(ds, fontsize=8)
        axes[1, c].set_xlabel("log10 lambda", fontsize=7)
    axes[0, 0].set_ylabel("error on unlabelled (%)", fontsize=7)
    axes[1, 0].set_ylabel("alignment criterion (15)", fontsize=7)
    fig.tight_layout()
    replace_into(out_png, lambda tmp: fig.savefig(tmp, dpi=130, format="png"))
    plt.close(fig)
