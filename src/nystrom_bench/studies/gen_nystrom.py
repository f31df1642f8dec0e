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

from .. import papers, sampling, seeding
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
#: the paper data file (:mod:`nystrom_bench.papers`) holding Tables 1 and 2 and the claims this study tests
PAPER_KEY = "lan_aij2017"


def paper_columns(table):
    """The paper's column names of Table ``table`` (1 or 2), in its order."""
    return list(papers.table(PAPER_KEY, f"table{table}")["columns"])


def paper_table(table):
    """``{paper row: {column: (error, sd, seconds)}}`` of the paper's Table ``table`` (1 or 2); a cell the paper
    did not run is absent."""
    data = papers.table(PAPER_KEY, f"table{table}")["data"]
    return {row: {col: tuple(float(v) for v in cell) for col, cell in cells.items()} for row, cells in data.items()}


def paper_dataset(dataset):
    """The paper's row name of our data set ``dataset`` (None where our data set is not the paper's)."""
    return (papers.load(PAPER_KEY).get("our_datasets") or {}).get(dataset)


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

        # liblinear's dual coordinate descent shuffles with its random_state: seeded, or a row would change
        # from run to run (it did: segment's cluster kernel, seed 3)
        svc_seed = int(trial.stream("linear_svc", n_labels).integers(2**31 - 1))

        def linear(G):
            G = unit_mean_diagonal(G)
            return LinearSVC(C=p["C"], max_iter=20000, random_state=svc_seed).fit(G[lab], y[lab]).predict(G[unl])

        t0 = time.perf_counter()
        if approach == "svm":
            pred = SVC(C=p["C"], kernel="precomputed").fit(kern(X[lab]), y[lab]).predict(kern(X[unl], X[lab]))
        elif approach == "nystrom":
            c = max(1, round(p["landmark_fraction"] * len(X)))
            pred = linear(approx.landmark_operator(X, kern, c, sampler=sampler, seed=trial.rng).factor())
            params["n_landmarks"] = c
        elif approach in _LEARNED_KERNELS:
            est = _LEARNED_KERNELS[approach](kern, p["landmark_fraction"], sampler, trial.rng).fit(X, y_part)
            pred = linear(est.transform(X))
            params.update({k: _jsonable(getattr(est, k)) for k in _REPORTED.get(approach, ())})
        elif approach == "gen_nystrom":
            gn = GeneralizedNystrom(**_kernel_params(kern), n_components=p["landmark_fraction"], sampler=sampler,
                                    lambda_grid=tuple(p["lambda_grid"]), random_state=trial.rng).fit(X, y_part)
            pred = linear(gn.transform(X))
            seconds = time.perf_counter() - t0
            params.update(n_landmarks=gn.n_components_, lam=gn.lam_, beta=gn.beta_, n_iter=gn.n_iter_)
            if p["lambda_curve"]:  # the paper's Fig. 1: the error at every lambda (not part of the time)
                params["lambda_path"] = [
                    [lam, gn.alignment_[lam], 100 * float(np.mean(linear(gn.transform(X, lam=lam)) != y[unl]))]
                    for lam in gn.alignment_]
            return [{"params": params, "metrics": {"error": 100 * float(np.mean(pred != y[unl])),
                                                   "seconds": seconds}}]
        elif approach == "gen_nystrom_mkl":
            frac = p["landmark_fraction"] * p["mkl_tau"] / len(p["width_scales"])
            mk = GeneralizedNystromMKL(width_scales=tuple(p["width_scales"]), n_components=min(1.0, frac),
                                       sampler=sampler, lambda_grid=tuple(p["lambda_grid"]),
                                       random_state=trial.rng).fit(X, y_part)
            pred = linear(mk.transform(X))
            params.update(n_landmarks=mk.n_components_, lam=mk.lam_, weights=[float(w) for w in mk.weights_])
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
                            "set is the paper's", t, _NOTE))
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


_NOTE = ("Our german_keel is KEEL's encoding of the Statlog German credit data, not LIBSVM's that the paper used; "
         "digits49 and digits27 stand in for usps49 and usps27 (8x8 instead of 16x16 digits). C = 1 for every linear "
         "SVM (the paper says it used LIBLINEAR's heuristic without naming it), so its LibSVM column was probably not "
         "run at C = 1; the cluster kernel's cut r (here the number of classes) and the spectral kernel's graph "
         "(10-NN, unweighted) are choices the paper does not state; CSI's semi-supervised prediction term is ours (the "
         "paper calls that extension open). 'not implemented': a baseline of the paper that has no implementation "
         "here yet; 'not run': implemented, not in this block. The paper's claims and their verdicts on these "
         "results are in the claims ledger.")


#: approach -> (kernel, rank fraction, sampler, rng) -> an unfitted semi-supervised kernel learner
_LEARNED_KERNELS = {
    "csi": lambda kern, frac, sampler, rng: _learners().CSI(**_kernel_params(kern), n_components=frac),
    "spectral": lambda kern, frac, sampler, rng: _learners().SpectralGraphKernel(n_components=frac),
    "cluster": lambda kern, frac, sampler, rng: _learners().ClusterKernel(**_kernel_params(kern), n_components=frac),
    "breg": lambda kern, frac, sampler, rng: _learners().LogDetKernelLearning(
        **_kernel_params(kern), n_components=frac, sampler=sampler, random_state=rng),
}
#: fitted attributes recorded in a result row's params
_REPORTED = {"csi": ("n_components_",), "spectral": ("n_components_", "alignment_"),
             "cluster": ("n_components_", "cut_"), "breg": ("n_sweeps_", "n_constraints_", "violation_")}


def _learners():
    from .. import learners

    return learners


def _jsonable(v):
    return v.item() if isinstance(v, np.generic) else v


def _kernel_params(kern):
    return {"kernel": "gaussian", "gamma": float(kern.params()["gamma"])}


def _params(df):
    import json

    return df["params"].map(lambda s: json.loads(s) if isinstance(s, str) else (s or {}))


def _best_marks(df):
    """Methods whose error is not significantly above the best mean's: paired t-test over repeats (5%, two-sided,
    :func:`nystrom_bench.stats.paired_tests` against the best), as the paper marks its best."""
    from .. import stats

    means = df.groupby("method")["error"].mean()
    best = means.idxmin()
    marked = {best}
    if len(means) < 2:
        return marked
    for r in stats.paired_tests(df, "error", best, block_cols=("seed",)).itertuples():
        tied = r.n_pairs < 2 or (r.wins == 0 and r.losses == 0)  # no pair to test, or identical errors
        # ttest_p is NaN for a constant nonzero difference: significant (a t statistic of infinity)
        if tied or (not np.isnan(r.ttest_p) and r.ttest_p >= 0.05) or means[r.method] <= means[best]:
            marked.add(r.method)
    return marked


def paper_layout(df, methods, table):
    """Rows = data set (x n_labels), columns = the paper's methods of ``table``: 'err +- sd / seconds'."""
    approach = {m: (cfg or {}).get("approach") for m, cfg in methods.items()}
    ours = {APPROACHES[a][1]: m for m, a in approach.items() if a in APPROACHES and APPROACHES[a][0] == table}
    if not ours:
        return pd.DataFrame()
    paper_rows, columns = paper_table(table), paper_columns(table)
    rows = []
    for (ds, nl), g in df.groupby(["dataset", "n_labels"]):
        g = g[g["method"].isin(ours.values())]
        if not len(g):
            continue
        marks = _best_marks(g)
        paper = paper_rows.get(paper_dataset(ds), {})
        p0 = _params(g).iloc[0]
        row = {"data set": f"{ds} ({p0['n_labelled'] + p0['n_unlabelled']} rows, {int(nl)} labels)"}
        for col in columns:
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
