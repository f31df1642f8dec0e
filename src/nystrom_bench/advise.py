"""Your data in, a recommendation out: a paired mini-study of kernel ridge models on the user's data.

:func:`advise` answers a practitioner's question -- exact or Nystrom, which sampler, how many landmarks,
which width and regularisation -- for *their* data, within a time budget, and says whether the answer
beats the default :class:`~nystrom_bench.learners.KRR` (or :class:`~nystrom_bench.learners.KRRClassifier`)
significantly; where it does not, the advice is "keep the default", said as such.
``nystrom-bench advise DATA --target COLUMN`` (:func:`advise_command`) is the same from the shell.

The design (taken from the benchmark's findings: the median-heuristic width and ``alpha = 1`` are
within a few per cent of tuned on most sets, non-uniform landmarks gain where the data has small, distant
clusters, more landmarks gain on smooth, clean targets):

1. **Selection** on ``SELECTION_BLOCKS`` repeated hold-out splits (80/20), at most ``SELECTION_SHARE`` of
   the budget.  Stage A (width x alpha x standardisation): uniform landmarks at ``m = 200``, the width
   the median heuristic times ``GAMMA_FACTORS``, alpha along ``ALPHA_PATH`` -- the whole path from one
   eigendecomposition per landmark set (:func:`lla_path`, the same predictor as ``KRR(mode="lla")``),
   standardised columns too where the columns' scales differ; successive halving: every setting on the
   first block, the best third on the others.  Stage B (landmarks): ``m`` doubled from 200 while the
   best model gains at least ``GAIN`` (1%) and the next level fits the time left, each level with every
   sampler of ``SAMPLERS`` (uniform, RPCholesky, k-means, ridge leverage) and a local width search; then
   exact KRR where the training part is small (``EXACT_MAX_ROWS``).  A model's score is the mean log
   validation error over the blocks (scale-free); ties go to the earlier (cheaper) one.
2. **Confirmation** on K-fold blocks the selection never used (K from the time left, at most
   ``MAX_FOLDS``): the selected model and the default, refitted as the estimators themselves, paired per
   fold by :func:`nystrom_bench.stats.compare_pair` (Wilcoxon's signed-rank test on the log-ratios of the
   fold errors, with the Hodges-Lehmann ratio and its 95% interval).  The selected model is recommended
   only where it is better with ``p < 0.05`` and an interval below 1 (fewer than ``MIN_FOLDS`` folds can
   never be significant: then the advice is to keep the default and raise the budget).  The folds'
   training parts overlap, so p is the usual optimistic cross-validation p (Dietterich, Neural
   Computation 1998; Nadeau & Bengio, Machine Learning 2003): it guards against noise, not against
   a different population.
3. **The answer**: the call, the expected validation metric with a 95% prediction interval for one
   held-out set of a fold's size (over the folds; on the log scale for the MSE), the fit time and memory at
   the user's full n (measured by one fit on all rows where the time left allows, else extrapolated
   linearly in n from a fold fit and labelled so), and the evidence (folds, ratio, interval, p).

The study's metric is the validation mean squared error (regression) or misclassification rate
(classification); lower is better.  The budget counts from the call (data already loaded); writing the
report and logging to MLflow come after it.  Every random choice derives from ``seed``
(:mod:`nystrom_bench.seeding`).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from pathlib import Path

import click
import numpy as np

__all__ = ["advise", "Advice", "AdviseError", "lla_path", "read_data", "infer_task", "advise_command",
           "DEFAULT_BUDGET", "SAMPLERS", "GAMMA_FACTORS", "ALPHA_PATH", "MIN_ROWS"]

#: seconds the mini-study may take by default
DEFAULT_BUDGET = 120.0
#: the landmark samplers compared (the findings' candidates)
SAMPLERS = ("uniform", "rpcholesky", "kmeans", "ridge_leverage")
#: widths tried: the median heuristic (``KRR``'s default) times these
GAMMA_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: the regularisation path (the default ``alpha = 1`` among them)
ALPHA_PATH = (10.0, 1.0, 0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
#: fewest rows ``advise`` takes (fewer: no hold-out worth the name)
MIN_ROWS = 50
#: fewest rows of a class (classification)
MIN_CLASS_ROWS = 5
#: selection blocks (80/20 hold-out splits)
SELECTION_BLOCKS = 3
#: the study's clock (the budget is wall seconds); every reading goes through it, so a test can give the study
#: the process's CPU seconds instead and get the same decisions on a loaded machine as on a quiet one
_clock = time.perf_counter

#: the share of the budget the selection may take at most (it stops earlier where the confirmation's
#: MIN_FOLDS folds of the next candidates would not fit in the rest)
SELECTION_SHARE = 0.65
#: a doubling of m is kept only if the best model gains at least this (relative error)
GAIN = 0.01
#: confirmation folds: at least MIN_FOLDS for a test that can be significant, at most MAX_FOLDS
MIN_FOLDS, MAX_FOLDS = 6, 10
#: the cost of a level of m over the one before it (n m^2 grows 4x; at small m, sampling and the rest
#: dominate and it grows ~2x): an estimate that decides whether the next level is tried
GROWTH = 3.0
#: exact KRR is tried where the selection's training part has at most this many rows
EXACT_MAX_ROWS = 2500
#: landmarks at most
MAX_COMPONENTS = 4096
#: rows the mini-study runs on at most (a seeded subsample above; the full fit still uses every row)
STUDY_MAX_ROWS = 20000
#: significance level of the confirmation test
LEVEL = 0.05
#: fits of fewer flops than this (and every fit on a machine loaded beyond its cores) run with
#: single-threaded BLAS: a multi-threaded eigh of a 200 x 200 matrix took 0.47 s on a loaded 2-core
#: machine where one thread took 5 ms (measured, load 12)
SMALL_WORK = 2e9

_DEFAULT_M = 200
_DEFAULT = {"approximation": "nystrom", "sampler": "uniform", "m": _DEFAULT_M, "gamma_factor": 1.0, "alpha": 1.0,
            "standardize": False}


class AdviseError(ValueError):
    """Bad input to :func:`advise` or ``nystrom-bench advise``: the message names the thing and the fix."""


# ----------------------------------------------------------------------------------------------------------
# input
# ----------------------------------------------------------------------------------------------------------

def infer_task(y):
    """``"classification"`` for a non-numeric target, or an integer-valued one with at most
    ``min(20, n / 10)`` distinct values; else ``"regression"``."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        return "classification"
    if y.dtype.kind == "b":
        return "classification"
    values = np.unique(y[np.isfinite(y)]) if y.dtype.kind == "f" else np.unique(y)
    integer = np.all(values == np.round(values))
    return "classification" if integer and len(values) <= min(20, max(2, len(y) // 10)) else "regression"


def _names(cols, limit=8):
    cols = [str(c) for c in cols]
    return ", ".join(cols[:limit]) + (f" and {len(cols) - limit} more" if len(cols) > limit else "")


def read_data(source, target=None, *, encode=False, impute=False):
    """``(X, y, info)`` from a CSV/Parquet file or a registered data set name.

    Parameters
    ----------
    source : str or path
        A ``.csv``/``.tsv``/``.txt`` (read by :func:`pandas.read_csv`) or ``.parquet``/``.pq`` file, or a
        name of :func:`nystrom_bench.data.available` (then ``target`` is the set's own).
    target : str
        The target column of a file.
    encode : bool
        One-hot encode non-numeric feature columns (else they are refused, named).
    impute : bool
        Fill missing feature values with the column's median and drop the rows whose target is missing
        (else missing values are refused, counted per column).

    ``info``: ``{"source", "target", "columns", "task" (a registered set's, else None), "notes"}``.

    Raises
    ------
    AdviseError
        A missing file or unknown name, an unknown file type, a missing target column, non-numeric or
        missing values without the flag that handles them, infinite values.
    """
    import pandas as pd

    path = Path(str(source))
    notes = []
    if not path.exists():
        from . import data

        if str(source) in data.available():
            X, y = data.obtain(str(source))
            task = data.info(str(source))["task"]
            task = "regression" if task == "regression" else "classification"
            return X, y, {"source": str(source), "target": "(the data set's own)", "columns": X.shape[1],
                          "task": task, "notes": notes}
        raise AdviseError(f"DATA {str(source)!r} is neither a file nor a registered data set name; give a CSV or "
                          "Parquet file, or a name of `nystrom-bench data list`")
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".txt"):
            df = pd.read_csv(path)
        elif suffix == ".tsv":
            df = pd.read_csv(path, sep="\t")
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        else:
            raise AdviseError(f"DATA {str(path)!r}: unknown file type {suffix or '(none)'!r}; give a .csv, .tsv or "
                              ".parquet file")
    except AdviseError:
        raise
    except Exception as exc:  # pandas' parser errors, a damaged Parquet file, an empty file
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise AdviseError(f"DATA {str(path)!r} could not be read as {suffix[1:]}: {msg}") from None
    if target is None:
        raise AdviseError(f"DATA {str(path)!r}: no target column given; pass --target with one of its columns "
                          f"({_names(df.columns)})")
    if target not in df.columns:
        raise AdviseError(f"target column {target!r} is not in {path.name} (columns: {_names(df.columns)}); pass "
                          "--target with one of them")
    y = df[target]
    feats = df.drop(columns=[target])
    if feats.shape[1] == 0:
        raise AdviseError(f"{path.name} has no column besides the target {target!r}: nothing to predict from")
    bad = [c for c in feats.columns if not (pd.api.types.is_numeric_dtype(feats[c])
                                            or pd.api.types.is_bool_dtype(feats[c]))]
    if bad:
        odd = [c for c in bad if pd.api.types.is_datetime64_any_dtype(feats[c])]
        if odd:
            raise AdviseError(f"date/time feature columns {_names(odd)}: convert them to numbers (e.g. days) or drop "
                              "them")
        if not encode:
            raise AdviseError(f"non-numeric feature columns: {_names(bad)}; pass --encode to one-hot encode them, or "
                              "drop them")
        feats = pd.get_dummies(feats, columns=bad, dtype=float, dummy_na=impute)
        notes.append(f"one-hot encoded {len(bad)} column(s): {_names(bad)}")
    missing_y = int(y.isna().sum())
    nan_cols = feats.isna().sum()
    nan_cols = nan_cols[nan_cols > 0]
    if (missing_y or len(nan_cols)) and not impute:
        parts = ([f"target {target!r} ({missing_y})"] if missing_y else []) + [f"{c} ({int(v)})"
                                                                             for c, v in nan_cols.items()]
        raise AdviseError(f"missing values in {len(parts)} column(s): {_names(parts)}; pass --impute to fill "
                          "features with their column median and drop rows without a target")
    if missing_y:
        keep = y.notna().to_numpy()
        y, feats = y[keep], feats[keep]
        notes.append(f"dropped {missing_y} row(s) without a target")
    if len(nan_cols):
        empty = [c for c in nan_cols.index if feats[c].isna().all()]
        if empty:
            raise AdviseError(f"feature columns with no value at all: {_names(empty)}; drop them")
        feats = feats.fillna(feats.median(numeric_only=True))
        notes.append(f"imputed {int(nan_cols.sum())} missing value(s) in {len(nan_cols)} column(s) with the "
                     "column median (of all rows)")
    X = feats.to_numpy(dtype=np.float64)
    if not np.isfinite(X).all():
        cols = [c for c, ok in zip(feats.columns, np.isfinite(X).all(axis=0), strict=True) if not ok]
        raise AdviseError(f"infinite values in feature columns {_names(cols)}; replace or drop them")
    yv = y.to_numpy()
    if yv.dtype.kind in "f" and not np.isfinite(yv).all():
        raise AdviseError(f"infinite values in the target {target!r}; replace or drop those rows")
    return X, yv, {"source": str(path), "target": target, "columns": X.shape[1], "task": None, "notes": notes}


def _check_xy(X, y, task):
    """Checked ``(X, y, task)``: numeric finite X, enough rows, a target that varies; AdviseError else."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise AdviseError("X must be numeric (encode categorical columns first)") from None
    if X.ndim != 2:
        raise AdviseError(f"X must be 2-D (rows x features), got shape {X.shape}")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(X):
        raise AdviseError(f"y must be 1-D with one value per row of X ({len(X)}), got shape {y.shape}")
    if not np.isfinite(X).all():
        raise AdviseError(f"X has {int((~np.isfinite(X)).sum())} missing or infinite values; impute or drop them "
                          "(the command's --impute fills them with the column median)")
    n = len(y)
    if n < MIN_ROWS:
        raise AdviseError(f"too few rows: {n}; advise needs at least {MIN_ROWS} for hold-out blocks")
    if y.dtype.kind in "f" and not np.isfinite(y).all():
        raise AdviseError(f"the target has {int((~np.isfinite(y)).sum())} missing or infinite values; drop those "
                          "rows (the command's --impute does)")
    values = np.unique(y)
    if len(values) < 2:
        raise AdviseError(f"the target is constant (every row is {values[0]!r}): there is nothing to learn")
    if task is None:
        task = infer_task(y)
    if task not in ("regression", "classification"):
        raise AdviseError(f"task must be 'regression' or 'classification', got {task!r}")
    if task == "regression":
        if y.dtype.kind not in "biuf":
            raise AdviseError("a regression target must be numeric; use task='classification' (--task "
                              "classification) for labels")
        y = y.astype(np.float64)
    else:
        counts = {v: int(c) for v, c in zip(*np.unique(y, return_counts=True), strict=True)}
        small = [f"{v!r} ({c})" for v, c in counts.items() if c < MIN_CLASS_ROWS]
        if small:
            raise AdviseError(f"classes with fewer than {MIN_CLASS_ROWS} rows: {_names(small)}; drop or merge them "
                              "(or, for a numeric target, pass --task regression)")
    return X, y, task


# ----------------------------------------------------------------------------------------------------------
# the regularisation path
# ----------------------------------------------------------------------------------------------------------

def lla_path(X, Y, kernel, landmarks, alphas, X_new, block_rows=4096):
    """Predictions at ``X_new`` of Nystrom KRR in LLA mode with an intercept, for every ``alpha``.

    The same predictor as ``KRR(mode="lla", fit_intercept=True, landmarks=landmarks, alpha=a)`` for each
    ``a`` (the Nystrom features ``F = C T`` of :class:`nystrom_bench.approx` with ``T T^T = W^+``;
    centred ridge regression ``(F_c^T F_c + alpha I) w = F_c^T (y - ybar)``), from one
    eigendecomposition ``F_c^T F_c = Q diag(lam) Q^T``: ``w(alpha) = Q diag(1 / (lam + alpha)) Q^T
    F_c^T y_c``, so each further alpha costs O(r^2) and one product with the new rows' features.  The
    moments ``C^T C`` and ``C^T y`` are streamed block-wise (C is never held).

    Parameters
    ----------
    X : ndarray (n, d)
    Y : ndarray (n,) or (n, t)
    kernel : Kernel
    landmarks : indices into X or (c, d) points
    alphas : sequence of float > 0
    X_new : ndarray (n_new, d)

    Returns
    -------
    ndarray of shape (len(alphas), n_new, t)
    """
    from scipy import linalg

    from . import approx

    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    n = X.shape[0]
    op = approx.build("nystrom", X, kernel, landmarks=landmarks, store_C=False)
    CtC, CtY = op.moments(np.column_stack([Y, np.ones(n)]))
    c_mean = CtY[:, -1] / n
    y_mean = Y.mean(axis=0)
    CtC = CtC - n * np.outer(c_mean, c_mean)
    CtY = CtY[:, :-1] - n * np.outer(c_mean, y_mean)
    T = op.T
    A = T.T @ CtC @ T
    lam, Q = linalg.eigh((A + A.T) / 2)
    lam = np.clip(lam, 0.0, None)
    TQ = T @ Q
    rhs = TQ.T @ CtY  # (r, t)
    P = np.empty((X_new.shape[0], TQ.shape[1]))
    shift = c_mean @ TQ
    for s in range(0, X_new.shape[0], block_rows):
        P[s:s + block_rows] = kernel(X_new[s:s + block_rows], op.Z) @ TQ - shift
    out = np.empty((len(alphas), X_new.shape[0], Y.shape[1]))
    for i, a in enumerate(alphas):
        out[i] = P @ (rhs / (lam + float(a))[:, None]) + y_mean
    return out


# ----------------------------------------------------------------------------------------------------------
# the study
# ----------------------------------------------------------------------------------------------------------

def _work(c, n, d):
    """Flops of fitting candidate ``c`` (None: the default) on n rows of d features, roughly."""
    if c is not None and c["approximation"] == "exact":
        return n ** 3 / 3 + n * n * d
    m = min(n, _DEFAULT_M if c is None else c["m"])
    return n * m * (m + d) + m ** 3


def _threads(flops):
    """Single-threaded BLAS and kernel blocks below ``SMALL_WORK`` flops, else as configured."""
    import contextlib

    from threadpoolctl import threadpool_limits

    return threadpool_limits(1) if flops < SMALL_WORK or _loaded() else contextlib.nullcontext()


def _loaded():
    """Whether the machine is busier than its cores (1-minute load average >= CPU count): then threads
    only wait for each other (measured: a 5,000 x 10 study under load 15 on 2 cores took 77 s for the
    m = 800 level with 2-thread BLAS, its m = 400 level 6.4 s single-threaded)."""
    import os

    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return False


def _metric(task, y_true, pred_or_scores, classes=None):
    """Validation error: the MSE (regression) or the misclassification rate (classification)."""
    if task == "regression":
        return float(np.mean((np.asarray(pred_or_scores).reshape(len(y_true)) - y_true) ** 2))
    from .learners.krr import ovr_predict

    s = np.asarray(pred_or_scores)
    s = s[:, 0] if s.ndim == 2 and s.shape[1] == 1 else s
    return float(np.mean(ovr_predict(s, classes) != y_true))


def _key(c):
    return (c["approximation"], c["sampler"], c["m"], round(c["gamma_factor"], 9), c["alpha"], c["standardize"])


def _describe(c):
    if c["approximation"] == "exact":
        return f"exact, gamma x{c['gamma_factor']:g}, alpha {c['alpha']:g}" + (", standardised" if c["standardize"] else "")
    return (f"{c['sampler']} m={c['m']}, gamma x{c['gamma_factor']:g}, alpha {c['alpha']:g}"
            + (", standardised" if c["standardize"] else ""))


class _Study:
    """The state of one mini-study: blocks, prepared folds, landmark cache, trials and the clock."""

    def __init__(self, X, y, task, budget, seed, log):
        from . import seeding

        self.X, self.y, self.task, self.budget, self.seed, self.log = X, y, task, float(budget), int(seed), log
        self.t0 = _clock()
        self.deadline = self.t0 + self.budget
        self.trials = []  # one dict per (candidate, block)
        self.scores = {}  # key -> {block: metric}
        self.cost, self._costs = {}, {}  # key of a setting (without alpha) -> median seconds per block
        self.candidates = {}
        n = len(y)
        if task == "classification":
            from .learners.krr import ovr_targets

            self.T, self.classes = ovr_targets(y)
            self.eps = 0.5 / max(1, round(0.2 * n))  # half a misclassified validation row
        else:
            self.T, self.classes = y, None
            self.eps = 1e-12 * float(np.var(y))
        rng = seeding.rng(self.seed, "advise", "selection")
        n_val = max(10, int(round(0.2 * n)))
        self.blocks = []
        for _ in range(SELECTION_BLOCKS):
            if task == "classification":
                from sklearn.model_selection import train_test_split

                tr, va = train_test_split(np.arange(n), test_size=n_val, stratify=y,
                                          random_state=int(rng.integers(2**31)))
            else:
                perm = rng.permutation(n)
                va, tr = perm[:n_val], perm[n_val:]
            self.blocks.append((np.sort(tr), np.sort(va)))
        self._prep = {}
        self._landmarks = {}
        stds = X.std(axis=0)
        stds = stds[stds > 0]
        self.scales = (False, True) if len(stds) >= 2 and stds.max() / stds.min() >= 1.5 else (False,)
        self.n_train = len(self.blocks[0][0])
        self.default = {**_DEFAULT, "m": min(_DEFAULT_M, self.n_train)}

    def left(self):
        return self.deadline - _clock()

    def elapsed(self):
        return _clock() - self.t0

    def prep(self, b, standardize):
        key = (b, standardize)
        if key not in self._prep:
            from .learners._base import default_gamma

            tr, va = self.blocks[b]
            Xtr, Xva = self.X[tr], self.X[va]
            if standardize:
                mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
                sd[sd == 0] = 1.0
                Xtr, Xva = (Xtr - mu) / sd, (Xva - mu) / sd
            self._prep[key] = (Xtr, Xva, self.T[tr], self.y[va], default_gamma(Xtr))
        return self._prep[key]

    def evaluate(self, setting, alphas, blocks, stage, until=None, guess=0.0):
        """Every alpha of ``setting`` (a candidate without alpha) on ``blocks``; returns seconds spent.

        ``until``: a block is not started where it would end after this clock time (its cost: the
        setting's median so far, else ``guess``); a candidate missing a block scores inf."""
        spent = 0.0
        skey = _key({**setting, "alpha": None})
        for b in blocks:
            if all(b in self.scores.get(_key({**setting, "alpha": a}), {}) for a in alphas):
                continue
            if until is not None and _clock() + self.cost.get(skey, guess) > until:
                break
            t = _clock()
            Xtr, Xva, Ttr, yva, g = self.prep(b, setting["standardize"])
            with _threads(_work(setting, len(Xtr), Xtr.shape[1])):
                preds = self._predictions(setting, alphas, b, Xtr, Xva, Ttr, g)
            dt = _clock() - t
            spent += dt
            self._costs.setdefault(skey, []).append(dt)
            self.cost[skey] = float(np.median(self._costs[skey]))
            for a, p in zip(alphas, preds, strict=True):
                c = {**setting, "alpha": float(a)}
                k = _key(c)
                self.candidates[k] = c
                err = _metric(self.task, yva, p, self.classes)
                self.scores.setdefault(k, {})[b] = err
                self.trials.append({"stage": stage, "block": b, **c, "metric": err, "seconds": dt})
        return spent

    def _predictions(self, setting, alphas, b, Xtr, Xva, Ttr, g):
        from . import kernels, sampling, seeding

        kern = kernels.make("gaussian", gamma=setting["gamma_factor"] * g)
        if setting["approximation"] == "exact":
            from .learners import KRR

            return [KRR(approximation="exact", gamma=setting["gamma_factor"] * g, alpha=a).fit(Xtr, Ttr).predict(Xva)
                    for a in alphas]
        m = min(setting["m"], len(Xtr))
        # one landmark set per (block, columns, sampler, m): drawn with the first width asked for (the
        # local width search reuses it; the confirmation refits the estimator, which draws its own)
        lkey = (b, setting["standardize"], setting["sampler"], m)
        if lkey not in self._landmarks:
            self._landmarks[lkey] = sampling.choose_landmarks(
                Xtr, kern, m, sampler=setting["sampler"],
                seed=seeding.rng(self.seed, "advise", "landmarks", b, setting["sampler"], m))
        return lla_path(Xtr, Ttr, kern, self._landmarks[lkey], alphas, Xva)

    def score(self, key, blocks=None):
        s = self.scores.get(key, {})
        blocks = range(len(self.blocks)) if blocks is None else blocks
        vals = [s[b] for b in blocks if b in s]
        if len(vals) < len(blocks):
            return np.inf
        return float(np.mean(np.log(np.asarray(vals) + self.eps)))

    def best(self, keys=None, blocks=None):
        keys = list(self.scores) if keys is None else keys
        ranked = sorted(keys, key=lambda k: self.score(k, blocks))  # stable: earlier (cheaper) first on ties
        return ranked[0] if ranked else None


def _stage_width(st):
    """Stage A: width x alpha x standardisation at uniform m = 200, by successive halving over the blocks."""
    settings = [{"approximation": "nystrom", "sampler": "uniform", "m": st.default["m"], "gamma_factor": gf,
                 "standardize": s} for s in st.scales for gf in GAMMA_FACTORS]
    # the default's own setting first: it is the reference and the cheapest to explain
    settings.sort(key=lambda c: (c["standardize"], c["gamma_factor"] != 1.0))
    for c in settings:
        if st.elapsed() > 0.25 * st.budget and c is not settings[0]:
            break
        st.evaluate(c, ALPHA_PATH, [0], "width", until=None if c is settings[0] else st.t0 + 0.25 * st.budget)

    def setting_score(c, blocks):
        return min(st.score(_key({**c, "alpha": a}), blocks) for a in ALPHA_PATH)

    done = [c for c in settings if np.isfinite(setting_score(c, [0]))]
    keep = sorted(done, key=lambda c: setting_score(c, [0]))[:max(3, math.ceil(len(done) / 3))]
    if settings[0] not in keep:
        keep.append(settings[0])
    for c in keep:
        for b in range(1, len(st.blocks)):
            if st.elapsed() > 0.35 * st.budget and c is not settings[0]:
                break
            st.evaluate(c, ALPHA_PATH, [b], "width", until=None if c is settings[0] else st.t0 + 0.35 * st.budget)
    return st.candidates[st.best()]


def _local_alphas(alpha):
    return sorted({float(a) for a in (alpha * 10, alpha, alpha / 10, alpha / 100) if 1e-8 <= a <= 100},
                  reverse=True)


def _stage_landmarks(st, best, reserve):
    """Stage B: m doubled while it gains, every sampler at each m, a local width search; then exact KRR.

    ``reserve(seconds)``: the time a confirmation of a model costing ``seconds`` per selection block
    needs; a level (or exact KRR) whose models could not be confirmed in the budget is not tried."""
    all_blocks = list(range(len(st.blocks)))
    limit = st.t0 + SELECTION_SHARE * st.budget
    m = st.default["m"]
    prev_score = st.score(_key(best))
    level_cost, prev, prev_scores, last_m = None, {}, {}, m
    while True:
        if level_cost is not None:
            nxt = [s for s in SAMPLERS if s == "uniform" or s in sorted(prev_scores, key=prev_scores.get)[:2]]
            worst = GROWTH * max(prev[s] for s in nxt)
            est = GROWTH * len(all_blocks) * (sum(prev[s] for s in nxt) + 2 * max(prev[s] for s in nxt))
            if _clock() + est + reserve(worst) > st.deadline or _clock() + est > limit:
                st.log(f"  landmarks: m = {m} would not fit the budget (about {est:.1f} s, then {reserve(worst):.1f} s "
                       f"to confirm); stopping at m = {last_m}")
                break
        t = _clock()
        level = []
        # every sampler at the first level; then uniform and the two best of the level before
        ranked = sorted(prev_scores, key=prev_scores.get)[:2]
        samplers = SAMPLERS if not prev_scores else [s for s in SAMPLERS if s == "uniform" or s in ranked]
        for s in samplers:
            setting = {"approximation": "nystrom", "sampler": s, "m": m, "gamma_factor": best["gamma_factor"],
                       "standardize": best["standardize"]}
            if s != "uniform" and s in prev and _clock() + GROWTH * prev[s] * len(all_blocks) > limit:
                continue
            st.evaluate(setting, ALPHA_PATH, all_blocks, "landmarks", until=limit, guess=GROWTH * prev.get(s, 0.0))
            prev[s] = st.cost.get(_key({**setting, "alpha": None}), 0.0)
            keys = [_key({**setting, "alpha": a}) for a in ALPHA_PATH]
            prev_scores[s] = min(st.score(k) for k in keys)
            level += keys
        top = st.candidates[st.best(level)]
        for f in (0.5, 2.0):
            if _clock() + 1.5 * st.cost.get(_key({**top, "alpha": None}), 0.0) * len(all_blocks) > limit:
                break
            setting = {k: v for k, v in top.items() if k != "alpha"}
            setting["gamma_factor"] = top["gamma_factor"] * f
            alphas = _local_alphas(top["alpha"])
            st.evaluate(setting, alphas, all_blocks, "landmarks", until=limit,
                        guess=st.cost.get(_key({**top, "alpha": None}), 0.0))
            level += [_key({**setting, "alpha": a}) for a in alphas]
        level_cost = _clock() - t
        top_key = st.best(level)
        score = st.score(top_key)
        if score < st.score(_key(best)):
            best = st.candidates[top_key]
        st.log(f"  landmarks: m = {m}: best {_describe(st.candidates[top_key])}, mean log error {score:.4g} "
               f"({level_cost:.1f} s)")
        gain = prev_score - score
        prev_score = min(prev_score, score)
        if m >= min(st.n_train, MAX_COMPONENTS) or (gain < math.log1p(GAIN) and m > st.default["m"]):
            break
        last_m, m = m, min(2 * m, st.n_train, MAX_COMPONENTS)
    if st.n_train <= EXACT_MAX_ROWS:
        # exact KRR: n^3 / 3 flops per alpha (a Cholesky), priced at the best Nystrom model's seconds per flop
        setting = {"approximation": "exact", "sampler": None, "m": None, "gamma_factor": best["gamma_factor"],
                   "standardize": best["standardize"]}
        alphas = _local_alphas(best["alpha"])[:3]
        n, d = st.n_train, st.X.shape[1]
        per_flop = st.cost.get(_key({**best, "alpha": None}), 1.0) / max(1.0, n * best["m"] * (best["m"] + d))
        fit = 3.0 * per_flop * (n ** 3 / 3 + n * n * d)
        if _clock() + fit * len(alphas) * len(all_blocks) + reserve(fit) <= limit:
            st.evaluate(setting, alphas, all_blocks, "exact", until=limit, guess=fit * len(alphas))
            top = st.best([_key({**setting, "alpha": a}) for a in alphas])
            st.log(f"  exact: {_describe(st.candidates[top])}, mean log error {st.score(top):.4g}")
            if st.score(top) < st.score(_key(best)):
                best = st.candidates[top]
    return best


def _estimator(task, c, gamma, random_state):
    """The estimator of candidate ``c`` (a Pipeline with a StandardScaler where ``c`` standardises)."""
    from .learners import KRR, KRRClassifier

    cls = KRR if task == "regression" else KRRClassifier
    if c is None:  # the default, literally
        return cls(random_state=random_state)
    if c["approximation"] == "exact":
        est = cls(approximation="exact", gamma=gamma, alpha=c["alpha"])
    else:
        est = cls(n_components=c["m"], sampler=c["sampler"], gamma=gamma, alpha=c["alpha"], random_state=random_state)
    if c["standardize"]:
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), est)
    return est


def _gamma_of(c, X):
    from .learners._base import default_gamma

    if c["standardize"]:
        sd = X.std(axis=0)
        sd[sd == 0] = 1.0
        X = (X - X.mean(axis=0)) / sd
    return float(f"{c['gamma_factor'] * default_gamma(X):.4g}")


def _call(task, c, gamma, seed):
    name = "KRR" if task == "regression" else "KRRClassifier"
    if c is None:
        return f"{name}()"
    if c["approximation"] == "exact":
        args = f'approximation="exact", gamma={gamma:.4g}, alpha={c["alpha"]:g}'
    else:
        args = (f'n_components={c["m"]}, sampler="{c["sampler"]}", gamma={gamma:.4g}, alpha={c["alpha"]:g}, '
                f"random_state={seed}")
    call = f"{name}({args})"
    return f"make_pipeline(StandardScaler(), {call})" if c["standardize"] else call


def _fold_fit(task, c, Xtr, ytr, Xva, yva, seed, memory=False):
    """Fit candidate ``c`` (None: the default) on a fold; ``(error, seconds, peak bytes or None)``."""
    import tracemalloc

    from .learners._base import default_gamma

    gamma = None
    if c is not None:
        if c["standardize"]:
            sd = Xtr.std(axis=0)
            sd[sd == 0] = 1.0
            g = default_gamma((Xtr - Xtr.mean(axis=0)) / sd)
        else:
            g = default_gamma(Xtr)
        gamma = c["gamma_factor"] * g
    est = _estimator(task, c, gamma, seed)
    if memory:
        tracemalloc.start()
    with _threads(_work(c, len(Xtr), Xtr.shape[1])), warnings.catch_warnings():
        # the default KRR() on fewer than 200 rows caps its landmarks and says so: the study knows
        warnings.filterwarnings("ignore", "(KRR|KRRClassifier): n_components > n_samples", UserWarning)
        t = _clock()
        try:
            est.fit(Xtr, ytr)
            dt = _clock() - t
            peak = tracemalloc.get_traced_memory()[1] if memory else None
        finally:
            if memory:
                tracemalloc.stop()
        pred = est.predict(Xva)
    err = float(np.mean((pred - yva) ** 2)) if task == "regression" else float(np.mean(pred != yva))
    return err, dt, peak


def _folds(y, task, k, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    from . import seeding

    rs = int(seeding.rng(seed, "advise", "confirmation").integers(2**31))
    if task == "classification":
        return list(StratifiedKFold(k, shuffle=True, random_state=rs).split(np.zeros(len(y)), y))
    return list(KFold(k, shuffle=True, random_state=rs).split(np.zeros(len(y))))


def _interval(values, log):
    """95% prediction interval for one more fold's value (Student t over the folds; on logs if ``log``)."""
    from scipy import stats as sps

    v = np.asarray(values, dtype=np.float64)
    if log:
        v = np.log(np.maximum(v, np.finfo(float).tiny))
    k = len(v)
    if k < 2:
        return [float("nan"), float("nan")]
    half = sps.t.ppf(0.975, k - 1) * v.std(ddof=1) * math.sqrt(1 + 1 / k)
    lo, hi = v.mean() - half, v.mean() + half
    if log:
        return [float(np.exp(lo)), float(np.exp(hi))]
    return [float(max(lo, 0.0)), float(min(hi, 1.0))]


def _start_up(X):
    """Import what the study uses and evaluate one tiny kernel block (a compiled exp's first call) before the
    budget's clock starts: under load the imports alone took ~10 s."""
    import pandas  # noqa: F401
    import scipy.linalg  # noqa: F401
    import scipy.stats  # noqa: F401
    import sklearn.model_selection  # noqa: F401
    import sklearn.pipeline  # noqa: F401
    import sklearn.preprocessing  # noqa: F401
    import threadpoolctl  # noqa: F401

    from . import approx, kernels, learners, sampling, seeding, stats  # noqa: F401

    kernels.make("gaussian", gamma=1.0)(X[:8], X[:8])


@dataclasses.dataclass
class Advice:
    """What :func:`advise` found.

    Attributes
    ----------
    task : {"regression", "classification"}
    estimator : str
        ``"KRR"`` or ``"KRRClassifier"``.
    params : dict
        The recommended estimator's parameters (the default's where ``keep_default``).
    standardize : bool
        Whether the columns are standardised first (``make_pipeline(StandardScaler(), ...)``).
    call : str
        The recommendation as Python, e.g. ``KRR(n_components=800, sampler="rpcholesky", ...)``.
    keep_default : bool
        True where no model beat the default significantly: the advice is the default estimator.
    verdict : str
        The answer in one sentence.
    metric_name : str
        ``"mse"`` or ``"error rate"`` (lower is better).
    metric : float
        The advised model's mean validation metric over the confirmation folds.
    interval : [float, float]
        95% prediction interval of that metric on one held-out set of ``holdout_rows`` rows.
    default_metric : float
        The default's mean over the same folds.
    evidence : dict
        The paired test of the selected model against the default over the folds: ``folds``, ``effect``,
        ``estimate`` (ratio or difference, selected / default), ``ci``, ``p``, ``better``, ``worse``;
        ``selected`` (the call tested), ``candidates`` and ``selection_blocks``.
    fit_seconds, memory_bytes : float
        Fit time and peak traced memory (tracemalloc: NumPy and Python allocations) at the full n;
        ``fit_how`` says ``"measured"`` or ``"extrapolated"`` (linearly in n from a fold's fit).
    seconds : float
        What the mini-study took (``budget``: what it was given).
    trials, confirmation : list of dict
        Every selection evaluation (stage, block, candidate, metric, seconds) and confirmation fit.
    model : estimator or None
        The advised estimator fitted on every row (where the full fit was measured).
    """

    task: str
    estimator: str
    params: dict
    standardize: bool
    call: str
    keep_default: bool
    verdict: str
    metric_name: str
    metric: float
    interval: list
    holdout_rows: int
    default_metric: float
    evidence: dict
    fit_seconds: float
    fit_how: str
    memory_bytes: float
    memory_how: str
    n_rows: int
    n_features: int
    budget: float
    seconds: float
    seed: int
    notes: list
    trials: list = dataclasses.field(repr=False, default_factory=list)
    confirmation: list = dataclasses.field(repr=False, default_factory=list)
    model: object = dataclasses.field(repr=False, default=None)

    def to_dict(self):
        """The JSON-ready answer (``trials``, ``confirmation`` and ``model`` left out)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("trials", "confirmation", "model")}
        return _plain(out)

    def make_estimator(self):
        """The advised estimator, unfitted (a Pipeline where ``standardize``)."""
        from .learners import KRR, KRRClassifier

        est = (KRR if self.estimator == "KRR" else KRRClassifier)(**self.params)
        if self.standardize:
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), est)
        return est

    def summary(self):
        """The answer as a few lines of text."""
        ev = self.evidence
        eff = (f"ratio {ev['estimate']:.3g} [{ev['ci'][0]:.3g}, {ev['ci'][1]:.3g}]" if ev.get("effect") == "ratio"
               else f"difference {ev.get('estimate', float('nan')):.3g} [{ev['ci'][0]:.3g}, {ev['ci'][1]:.3g}]")
        lines = [self.verdict,
                 f"  call: {self.call}",
                 f"  expected {self.metric_name}: {self.metric:.4g} (95% prediction interval "
                 f"[{self.interval[0]:.4g}, {self.interval[1]:.4g}] on {self.holdout_rows} held-out rows; "
                 f"default {self.default_metric:.4g})",
                 f"  fit at n = {self.n_rows}: {self.fit_seconds:.3g} s, peak memory "
                 f"{self.memory_bytes / 2**20:.3g} MiB ({self.fit_how})",
                 f"  evidence: {ev.get('selected', '')} vs the default over {ev['folds']} folds: {eff}, "
                 f"p = {ev['p']:.3g} ({ev['better']} better, {ev['worse']} worse); {ev['candidates']} candidates on "
                 f"{ev['selection_blocks']} selection blocks",
                 f"  study: {self.seconds:.1f} s of a {self.budget:g} s budget"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _plain(v):
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def advise(X, y, task=None, budget=DEFAULT_BUDGET, seed=0, verbose=False, log=None):
    """Recommend a kernel ridge model for ``(X, y)`` from a paired mini-study within ``budget`` seconds.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features (no missing values).
    y : array-like of shape (n,)
        Targets (regression) or labels (classification).
    task : {"regression", "classification"} or None
        None: :func:`infer_task`.
    budget : float, default=120
        Seconds the study may take (selection, confirmation and the full-n fit together).
    seed : int, default=0
        Every split and landmark draw derives from it.
    verbose : bool
        Progress lines on stderr (or to ``log``, a callable taking a string).

    Returns
    -------
    Advice

    Raises
    ------
    AdviseError
        Bad input (too few rows, a constant target, non-numeric or missing values, tiny classes) or a
        budget that is not a positive number.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(400, 2)); y = np.sin(2 * X[:, 0]) * X[:, 1]
    >>> a = advise(X, y, budget=5)
    >>> a.estimator, a.keep_default in (True, False)
    ('KRR', True)
    """
    if not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget > 0):
        raise AdviseError(f"budget must be a positive number of seconds, got {budget!r}")
    X, y, task = _check_xy(X, y, task)
    if log is None:
        import sys

        def log(msg):
            if verbose:
                print(msg, file=sys.stderr, flush=True)
    n_all = len(y)
    notes = []
    Xs, ys = X, y
    if n_all > STUDY_MAX_ROWS:
        from . import seeding

        sub = np.sort(seeding.rng(seed, "advise", "subsample").choice(n_all, STUDY_MAX_ROWS, replace=False))
        Xs, ys = X[sub], y[sub]
        notes.append(f"the mini-study ran on a random {STUDY_MAX_ROWS} of the {n_all} rows")
    _start_up(Xs)
    st = _Study(Xs, ys, task, budget, seed, log)  # the clock starts here
    n_fold_train = len(ys) * (MAX_FOLDS - 1) / MAX_FOLDS
    grow = (n_fold_train / st.n_train) ** 1.5  # a fold trains on more rows than a selection block

    def default_cost():
        return st.cost.get(_key({**st.default, "alpha": None}), 0.1)

    def reserve(seconds):
        # MIN_FOLDS confirmation folds of a model costing ``seconds`` per selection block, and the default
        return MIN_FOLDS * 1.3 * grow * (seconds + default_cost())

    log(f"advise: {len(ys)} rows x {X.shape[1]} features, {task}, budget {budget:g} s")
    best = _stage_width(st)
    log(f"  width: {_describe(best)}")
    best = _stage_landmarks(st, best, reserve)
    # the best model whose MIN_FOLDS confirmation folds fit in the time left (a better one that cannot be
    # confirmed in the budget could never be recommended)
    for k in sorted((k for k in st.scores if np.isfinite(st.score(k))), key=st.score):
        c = st.candidates[k]
        if k == _key(st.default) or reserve(st.cost.get(_key({**c, "alpha": None}), default_cost())) <= st.left():
            if k != _key(best):
                log(f"  {_describe(best)} could not be confirmed in the time left; the best that can: {_describe(c)}")
                notes.append(f"{_describe(best)} scored best but could not be confirmed within the budget")
            best = c
            break
    selected = None if _key(best) == _key(st.default) else best
    log(f"  selected: {_describe(best)} after {st.elapsed():.1f} s ({len(st.scores)} candidates)")

    # confirmation: the folds of a MAX_FOLDS-fold split the selection never used, run in order while the
    # budget lasts (at least MIN_FOLDS), leaving time for the fit on every row where it fits
    folds = _folds(ys, task, MAX_FOLDS, seed)
    methods = (("default", None), ("selected", selected)) if selected is not None else (("default", None),)
    rows, peaks, fold_seconds = [], {}, []
    for f, (tr, va) in enumerate(folds):
        if f >= 1:  # a fold that would end past the budget is not started; from MIN_FOLDS on, the time
            # the fit on every row needs (at most a quarter of the budget) is kept too
            per = float(np.mean(fold_seconds))
            full_est = 1.5 * per * n_all / len(tr)
            if st.left() < 1.2 * per + (min(full_est, 0.25 * st.budget) if f >= MIN_FOLDS else 0.0):
                log(f"  confirmation: stopping after {f} folds (budget)")
                break
        t = _clock()
        fseed = int(seed) * 1000 + f
        for name, c in methods:
            err, dt, peak = _fold_fit(task, c, Xs[tr], ys[tr], Xs[va], ys[va], fseed, memory=f == 0)
            if f == 0:
                peaks[name] = (peak, len(tr), dt)
            rows.append({"fold": f, "method": name, "metric": err, "seconds": dt})
        fold_seconds.append(_clock() - t)
    import pandas as pd

    conf = pd.DataFrame(rows)
    wide = conf.pivot(index="fold", columns="method", values="metric")
    n_folds = len(wide)
    from . import stats

    ev = {"folds": n_folds, "effect": None, "estimate": float("nan"), "ci": [float("nan")] * 2, "p": float("nan"),
          "better": 0, "worse": 0, "selection_blocks": len(st.blocks), "candidates": len(st.scores),
          "selected": _call(task, selected, _gamma_of(selected, X) if selected else None, seed)}
    if selected is None:
        keep, reason = True, "the mini-study's best model is the default itself"
    else:
        cmp = stats.compare_pair(wide["selected"].to_numpy(), wide["default"].to_numpy(), lower_is_better=True)
        ev.update(effect=cmp["effect"], estimate=cmp["estimate"], ci=[cmp["ci_low"], cmp["ci_high"]], p=cmp["p"],
                  better=cmp["better"], worse=cmp["worse"])
        null = 1.0 if cmp["effect"] == "ratio" else 0.0
        if n_folds < MIN_FOLDS:
            keep, reason = True, (f"the budget allowed only {n_folds} confirmation folds, too few for a significant "
                                  f"test (at least {MIN_FOLDS}); raise the budget")
        elif cmp["p"] < LEVEL and cmp["estimate"] < null and (np.isnan(cmp["ci_high"]) or cmp["ci_high"] < null):
            keep, reason = False, None
        else:
            keep, reason = True, (f"{_describe(selected)} was not significantly better than the default "
                                  f"(p = {cmp['p']:.2g})")
    advised = None if keep else selected
    col = "default" if keep else "selected"
    vals = wide[col].to_numpy()
    gamma = _gamma_of(advised, X) if advised else None

    # fit time and memory at the full n
    rec_fold = conf[conf["method"] == col]["seconds"].mean()
    est_full = rec_fold * n_all / (len(ys) * (MAX_FOLDS - 1) / MAX_FOLDS) * 1.5
    model = None
    if st.left() > est_full:
        import tracemalloc

        model = _estimator(task, advised, gamma, seed)
        with _threads(_work(advised, n_all, X.shape[1])), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "(KRR|KRRClassifier): n_components > n_samples", UserWarning)
            tracemalloc.start()
            t = _clock()
            try:
                model.fit(X, y)
                fit_s = _clock() - t
                mem = float(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
        how = mem_how = "measured"
        fitted = model.steps[-1][1] if hasattr(model, "steps") else model
        fitted = getattr(fitted, "regressor_", fitted)
        if getattr(fitted, "solver_", None) and fitted.approximation == "nystrom":
            notes.append(f"solver='auto' ran the {fitted.solver_} solve at n = {n_all} (KRR's rule by n c^2 and "
                         "memory)")
    else:
        peak, ntr, dt = peaks[col]
        fit_s, mem = dt * n_all / ntr, float(peak) * n_all / ntr
        how = mem_how = f"extrapolated linearly in n from a fit on {ntr} rows"
    name = "KRR" if task == "regression" else "KRRClassifier"
    if advised is None:
        params = {}
        call = f"{name}()"
        verdict = f"Keep the default: {call} ({reason})."
    else:
        params = ({"approximation": "exact", "gamma": gamma, "alpha": advised["alpha"]}
                  if advised["approximation"] == "exact" else
                  {"n_components": advised["m"], "sampler": advised["sampler"], "gamma": gamma,
                   "alpha": advised["alpha"], "random_state": int(seed)})
        call = _call(task, advised, gamma, seed)
        verdict = (f"Use {call}: {'lower' if task == 'regression' else 'fewer'} validation errors than the default "
                   f"{name}() in {ev['better']} of {n_folds} folds "
                   + (f"(ratio {ev['estimate']:.3g}, 95% CI [{ev['ci'][0]:.3g}, {ev['ci'][1]:.3g}], "
                      if ev["effect"] == "ratio" else
                      f"(difference {ev['estimate']:.3g}, 95% CI [{ev['ci'][0]:.3g}, {ev['ci'][1]:.3g}], ")
                   + f"p = {ev['p']:.2g}).")
    metric_name = "mse" if task == "regression" else "error rate"
    advice = Advice(
        task=task, estimator=name, params=params, standardize=bool(advised and advised["standardize"]), call=call,
        keep_default=advised is None, verdict=verdict, metric_name=metric_name, metric=float(np.mean(vals)),
        interval=_interval(vals, log=task == "regression"), holdout_rows=int(round(len(ys) / MAX_FOLDS)),
        default_metric=float(wide["default"].mean()), evidence=ev, fit_seconds=float(fit_s), fit_how=how,
        memory_bytes=float(mem), memory_how=mem_how, n_rows=int(n_all), n_features=int(X.shape[1]),
        budget=float(budget), seconds=st.elapsed(), seed=int(seed), notes=notes, trials=st.trials,
        confirmation=rows, model=model)
    log(f"  done in {advice.seconds:.1f} s")
    return advice


# ----------------------------------------------------------------------------------------------------------
# report, MLflow, command
# ----------------------------------------------------------------------------------------------------------

def _figures(advice):
    """PNG bytes of the report's figures: ``[(title, png bytes or None, note)]``."""
    import io

    import pandas as pd

    from . import report, stats

    plt = report.pyplot()
    out = []
    trials = pd.DataFrame(advice.trials)
    conf = pd.DataFrame(advice.confirmation)

    def png(fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        return buf.getvalue()

    # critical-difference diagram: the best candidate of each sampler (and exact) over the selection blocks
    nys = trials.copy()
    nys["family"] = np.where(nys["approximation"] == "exact", "exact", nys["sampler"].astype(str))
    nys["cand"] = [_describe(r) for r in nys.to_dict("records")]
    means = nys.groupby(["family", "cand"])["metric"].agg(["mean", "count"]).reset_index()
    full = means[means["count"] == means["count"].max()]
    picks = full.sort_values("mean").groupby("family").head(1)["cand"].tolist()
    d = nys[nys["cand"].isin(picks)].drop_duplicates(["cand", "block"])
    cd = stats.critical_difference(d, "metric", method_col="family", block_cols=("block",)) if len(picks) >= 3 else None
    if cd is not None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "cd.png"
            report.cd_figure(cd["mean_ranks"], cd["nemenyi"], p, title="best model per sampler, selection blocks",
                             cd=cd["cd"])
            out.append(("Critical-difference diagram", p.read_bytes(),
                        f"mean rank over {cd['n_blocks']} selection blocks (1 = best); Friedman p = "
                        f"{cd['friedman_p']:.2g}"))
    else:
        out.append(("Critical-difference diagram", None, "fewer than three samplers reached every selection block"))
    # error vs m
    lm = nys[nys["approximation"] == "nystrom"]
    per = lm.groupby(["sampler", "m", "cand"])["metric"].mean().reset_index().groupby(["sampler", "m"])["metric"].min()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for s, ser in per.groupby(level=0):
        ax.plot(ser.index.get_level_values(1), ser.to_numpy(), marker="o", label=s)
    ax.set_xscale("log", base=2)
    ms = sorted({int(v) for v in per.index.get_level_values(1)})
    ax.set_xticks(ms, [str(v) for v in ms])
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("landmarks m")
    ax.set_ylabel(f"best validation {advice.metric_name}")
    ax.axhline(advice.default_metric, color="grey", ls="--", lw=1, label="default (confirmation folds)")
    ax.legend(fontsize=7)
    out.append(("Error vs m", png(fig), "the best width and alpha per sampler and m, mean over the selection blocks"))
    # time vs error
    te = nys.groupby("cand").agg(metric=("metric", "mean"), seconds=("seconds", "mean"),
                                 family=("family", "first")).reset_index()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for fam, g in te.groupby("family"):
        ax.scatter(g["seconds"], g["metric"], s=10, label=fam)
    if len(conf):
        for name, g in conf.groupby("method"):
            ax.scatter([g["seconds"].mean()], [g["metric"].mean()], marker="*", s=120, edgecolor="k",
                       label=f"{name} (confirmation)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds per fit (a regularisation path shares one)")
    ax.set_ylabel(f"validation {advice.metric_name}")
    ax.legend(fontsize=7)
    out.append(("Time vs error", png(fig), "every candidate of the selection; stars: the confirmation folds' means"))
    return out


def write_report(advice, path, title="nystrom-bench advise"):
    """A one-page HTML report (figures embedded) at ``path``, written atomically."""
    import base64
    import html

    from .atomic import open_atomic

    figs = _figures(advice)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto}pre{background:#f4f4f4;"
             "padding:.5em;white-space:pre-wrap}img{max-width:32em}figure{display:inline-block;margin:.3em}"
             "figcaption{font-size:80%;max-width:32em}</style></head><body>",
             f"<h1>{html.escape(title)}</h1><p><b>{html.escape(advice.verdict)}</b></p>",
             f"<pre>{html.escape(advice.summary())}</pre>"]
    for name, data, note in figs:
        if data is None:
            parts.append(f"<p><i>{html.escape(name)}: {html.escape(note)}</i></p>")
        else:
            b64 = base64.b64encode(data).decode("ascii")
            parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{b64}'>"
                         f"<figcaption><b>{html.escape(name)}</b>: {html.escape(note)}</figcaption></figure>")
    parts.append("</body></html>")
    with open_atomic(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(parts))
    return Path(path)


def log_mlflow(advice, data_name, tracking_uri=None, experiment="advise"):
    """Log the mini-study to MLflow: a parent run with the answer, one child run per candidate (its
    per-block errors as a metric history) and one per confirmation method.  Returns the parent run id."""
    import pandas as pd
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    from .tracking import resolve_tracking_uri

    client = MlflowClient(resolve_tracking_uri(tracking_uri))
    exp = client.get_experiment_by_name(experiment)
    exp_id = exp.experiment_id if exp else client.create_experiment(experiment)
    now = int(time.time() * 1000)
    parent = client.create_run(exp_id, run_name=f"advise {data_name}", tags={"nystrom_bench.advise": "1"})
    pid = parent.info.run_id
    ans = advice.to_dict()
    client.log_batch(pid, params=[Param(k, str(v)[:500]) for k, v in
                                  {"data": data_name, "task": advice.task, "call": advice.call,
                                   "keep_default": advice.keep_default, "budget": advice.budget,
                                   "seed": advice.seed}.items()],
                     metrics=[Metric(k, float(v), now, 0) for k, v in
                              {"metric": advice.metric, "default_metric": advice.default_metric,
                               "fit_seconds": advice.fit_seconds, "memory_bytes": advice.memory_bytes,
                               "study_seconds": advice.seconds}.items() if v is not None and math.isfinite(v)])
    client.log_dict(pid, ans, "advice.json")
    trials = pd.DataFrame(advice.trials)
    if len(trials):
        trials["cand"] = [_describe(r) for r in trials.to_dict("records")]
        for cand, g in trials.groupby("cand", sort=False):
            r = g.iloc[0]
            run = client.create_run(exp_id, run_name=cand, tags={"mlflow.parentRunId": pid})
            params = {k: r[k] for k in ("approximation", "sampler", "m", "gamma_factor", "alpha", "standardize")}
            client.log_batch(run.info.run_id, params=[Param(k, str(v)) for k, v in params.items()],
                             metrics=[Metric("metric", float(v), now, int(b)) for b, v in zip(g["block"], g["metric"],
                                                                                                strict=True)]
                             + [Metric("seconds", float(g["seconds"].mean()), now, 0)],
                             tags=[RunTag("stage", str(r["stage"]))])
            client.set_terminated(run.info.run_id)
    conf = pd.DataFrame(advice.confirmation)
    for name, g in conf.groupby("method"):
        run = client.create_run(exp_id, run_name=f"confirmation: {name}", tags={"mlflow.parentRunId": pid})
        client.log_batch(run.info.run_id, metrics=[Metric("fold_metric", float(v), now, int(f))
                                                   for f, v in zip(g["fold"], g["metric"], strict=True)])
        client.set_terminated(run.info.run_id)
    client.set_terminated(pid)
    return pid


def _check_out(path, suffixes, what):
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise AdviseError(f"{what} {str(p)!r} must end in {' or '.join(suffixes)}")
    if p.is_dir():
        raise AdviseError(f"{what} {str(p)!r} is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise AdviseError(f"{what} {str(p)!r}: the directory {str(parent)!r} does not exist; create it first")


@click.command("advise", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("data")
@click.option("--target", help="The target column of a CSV/Parquet file (a registered data set has its own).")
@click.option("--task", type=click.Choice(["regression", "classification"]), default=None,
              help="Default: inferred from the target (labels or few integer values: classification).")
@click.option("--budget", type=float, default=DEFAULT_BUDGET, show_default=True,
              help="Seconds the mini-study may take.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the answer as JSON here.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Write a one-page HTML report here (CD diagram, error vs m, time vs error).")
@click.option("--mlflow", "use_mlflow", is_flag=True,
              help="Log the mini-study as MLflow runs (MLFLOW_TRACKING_URI, else sqlite:///mlflow.db).")
@click.option("--encode", is_flag=True, help="One-hot encode non-numeric feature columns instead of refusing.")
@click.option("--impute", is_flag=True,
              help="Fill missing feature values with the column median and drop rows without a target.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every split and landmark draw.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def advise_command(data, target, task, budget, json_path, report_path, use_mlflow, encode, impute, seed, quiet):
    """Recommend a kernel ridge model for DATA (a CSV/Parquet file or a registered data set name).

    A paired mini-study within --budget seconds: widths, regularisation, standardisation, landmark
    samplers and counts (and exact KRR on small data) on hold-out blocks, then the selected model
    against the default KRR() on K-fold blocks it never saw.  It is recommended only where it is
    significantly better (Wilcoxon on the folds' log-ratios, p < 0.05); otherwise the answer is
    "keep the default".  Bad input: one line on stderr, exit code 2, no file written.
    """
    import sys

    def fail(msg):
        click.echo(f"nystrom-bench advise: error: {msg}", err=True)
        sys.exit(2)

    try:
        if not (math.isfinite(budget) and budget > 0):
            raise AdviseError(f"--budget must be a positive number of seconds, got {budget:g}")
        if json_path:
            _check_out(json_path, (".json",), "--json")
        if report_path:
            _check_out(report_path, (".html", ".htm"), "--report")
        X, y, info = read_data(data, target, encode=encode, impute=impute)
        task = task or info["task"]
        advice = advise(X, y, task=task, budget=budget, seed=seed, verbose=not quiet)
    except (AdviseError, ValueError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    advice.notes[:0] = info["notes"]
    click.echo(advice.summary())
    if json_path:
        import json

        from .atomic import open_atomic

        with open_atomic(json_path, "w", encoding="utf-8") as fh:
            json.dump({"data": str(data), "target": info["target"], **advice.to_dict()}, fh, indent=2)
    if report_path:
        write_report(advice, report_path, title=f"nystrom-bench advise: {Path(str(data)).name}")
    if use_mlflow:
        pid = log_mlflow(advice, str(data))
        click.echo(f"  MLflow: run {pid} (experiment 'advise')")
