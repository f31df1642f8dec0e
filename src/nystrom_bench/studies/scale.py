"""Scale: time, memory and accuracy of Nystrom KRR as n and m grow, against scikit-learn and exact KRR.

For every seed, training size ``n`` (a nested random subset of the training part) and landmark
count ``m`` (the study's coords), each method fits kernel ridge regression with
``alpha = lam * n`` (FALKON's ``lambda n``: the same per-sample regularisation at every n) on the
same ``m`` uniform landmarks (common random numbers), then predicts the test part.  Methods are
config blocks with an ``approach``:

``nystrom`` (default)
    :class:`~nystrom_bench.learners.KRR` (LLA), with ``solver`` (``direct``: ``C^T C`` streamed,
    O(n m^2); ``cg``: FALKON-preconditioned conjugate gradient, O(n m) per iteration) and ``dtype``
    (``float64``/``float32``), ``cg_tol``, ``cg_max_iter``;
``sklearn``
    scikit-learn's ``Nystroem`` (the same landmarks) + ``Ridge`` -- skipped where its features
    (n x m) would not fit ``params.max_memory_mb``;
``exact``
    exact KRR (Cholesky of the n x n matrix), only for ``n <= params.exact_max_n``; its rows have
    no ``m``.

Each (method, n, m) cell runs in a forked child (:func:`nystrom_bench.profiling.isolated`): fit
and predict are timed there and ``peak_mem_mb`` is the memory the cell added at its peak (the
resident set's high-water mark above its start: BLAS buffers and temporaries included, the data
not).  A cell past ``params.cell_timeout`` is stopped and recorded as such.  The report fits the
exponent of ``time ~ n^a`` per method on log-log axes.
"""

from __future__ import annotations

import time

import numpy as np

from .. import profiling
from ..learners import KRR
from . import Study, register

APPROACHES = ("nystrom", "sklearn", "exact")


def _positive_ints(params, key):
    vals = params[key]
    vals = vals if isinstance(vals, list) else [vals]
    if not vals or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in vals):
        raise ValueError(f"params.{key} must be a positive integer or a list of them, got {params[key]!r}")
    return sorted(set(vals))


def sklearn_bytes(n, m):
    """What scikit-learn's Nystroem + Ridge holds at its peak: the n x m features twice (transform's
    K(X, Z) and its product with the normalisation) and Ridge's centred copy -- three n x m float64."""
    return 3 * 8 * n * m


def exact_bytes(n):
    """Exact KRR's peak: K and its Cholesky factor, two n x n float64."""
    return 2 * 8 * n * n


@register
class ScaleStudy(Study):
    name = "scale"
    title = "Scale: Nystrom KRR from 10^4 to 10^6 points"
    description = (
        "Fit time, predict time, peak memory and test RMSE of Nystrom KRR (LLA) solved directly or by "
        "FALKON-preconditioned conjugate gradient, in float64 and float32, against scikit-learn's Nystroem + Ridge "
        "(the same landmarks) and exact KRR, as the training size n and the number of landmarks m grow; "
        "alpha = lam n. Each cell runs in its own process; peak memory is what it added to the resident set."
    )
    tasks = ("regression",)
    metrics = {
        "test_rmse": ("Test RMSE", True),
        "fit_time": ("Fit time (s)", True),
        "predict_time": ("Predict time (s)", True),
        "peak_mem_mb": ("Peak memory added (MiB)", True),
    }
    tested_metrics = ("test_rmse", "fit_time", "peak_mem_mb")
    primary_metric = "fit_time"
    reference_method = "direct"
    coords = ("n", "m")
    figure_coords = ()  # the study draws its own log-log figures
    #: paired tests and mean +- sd tables per m, paired over sizes n and seeds (one seed per (n, m) cell
    #: would give one-pair tests); the tables by size are the study's own (report_tables)
    summary_coords = ("m",)
    param_defaults = {"n": [10000, 30000, 100000], "m": [1000], "lam": 1e-6, "exact_max_n": 20000,
                      "max_memory_mb": 16000, "cell_timeout": 1800}
    method_keys = ("approach", "solver", "dtype", "cg_tol", "cg_max_iter")
    kernel_names = ("gaussian", "rbf")

    # -- config ----------------------------------------------------------------------------------
    def check_params(self, params):
        super().check_params(params)
        p = self.resolve_params(params)
        _positive_ints(p, "n")
        _positive_ints(p, "m")
        for key in ("lam", "max_memory_mb", "cell_timeout"):
            v = p[key]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not np.isfinite(v) or v <= 0:
                raise ValueError(f"params.{key} must be a positive number, got {v!r}")
        if not isinstance(p["exact_max_n"], int) or p["exact_max_n"] < 0:
            raise ValueError(f"params.exact_max_n must be a non-negative integer, got {p['exact_max_n']!r}")

    def check_method(self, method_name, method_cfg, study_cfg):
        opts = self.check_method_keys(method_cfg)
        approach = opts.get("approach", "nystrom")
        if approach not in APPROACHES:
            raise ValueError(f"approach {approach!r} is not one of {', '.join(APPROACHES)}")
        if approach != "nystrom":
            extra = sorted(set(opts) - {"approach"})
            if extra:
                raise ValueError(f"approach {approach!r} takes no {', '.join(extra)} (those are the nystrom approach's)")
            return
        KRR(**{k: v for k, v in opts.items() if k != "approach"})._validate_params()

    def check_data(self, params, dataset, n_train):
        big = max(_positive_ints(params, "n"))
        if n_train is not None and big > n_train:
            return f"n = {big} exceeds the {n_train} training points of {dataset!r}; lower params.n"
        return None

    def landmark_counts(self, params, method_name, method_cfg):
        return [] if method_cfg.get("approach", "nystrom") == "exact" else _positive_ints(params, "m")

    def coord_grid(self, params, method_name, method_cfg):
        approach = (method_cfg or {}).get("approach", "nystrom")
        ns, ms = _positive_ints(params, "n"), _positive_ints(params, "m")
        limit = params["max_memory_mb"] * 2**20
        if approach == "exact":
            return [{"n": n} for n in ns if n <= params["exact_max_n"] and exact_bytes(n) <= limit]
        return [{"n": n, "m": m} for n in ns for m in ms
                if m <= n and (approach != "sklearn" or sklearn_bytes(n, m) <= limit)]

    def make_estimator(self, kernel, method_cfg, coords, params, rng):
        """The estimator of one cell (landmarks are set in :meth:`evaluate`); for the config check."""
        opts = {k: v for k, v in (method_cfg or {}).items() if k != "approach"}
        approach = (method_cfg or {}).get("approach", "nystrom")
        if approach == "sklearn":
            return None
        return KRR(kernel="gaussian", gamma=kernel.gamma, approximation="exact" if approach == "exact" else "nystrom",
                   mode="lla", alpha=params["lam"] * coords.get("n", 1), **opts)

    # -- one cell ----------------------------------------------------------------------------------
    @staticmethod
    def _draws(trial):
        """``(permutation of the training part, landmark seed)`` of this (data set, seed), drawn in
        that order from the (data set, seed)'s own stream: the same whichever method asks first."""
        def draw():
            rng = trial.stream()
            perm = rng.permutation(len(trial.split.y_train))
            return perm, int(rng.integers(2**31))

        return trial.shared("draws", draw)

    def _subset(self, trial, n):
        """The first n of one random permutation of the training part per (data set, seed): nested
        subsets, the same for every method."""
        perm, _ = self._draws(trial)
        if n > len(perm):
            raise ValueError(f"params.n = {n} exceeds the {len(perm)} training points of {trial.dataset!r}")
        return np.sort(perm[:n])

    def evaluate(self, trial):
        sp, p = trial.split, trial.params
        n, m = trial.coords["n"], trial.coords.get("m")
        idx = self._subset(trial, n)
        X, y = sp.X_train[idx], sp.y_train[idx]
        approach = trial.method_cfg.get("approach", "nystrom")
        alpha = p["lam"] * n
        landmarks = None
        if m is not None:  # the same m landmarks for every method of this (seed, n, m)
            landmarks = trial.shared(("landmarks", n, m), lambda: np.sort(
                np.random.default_rng(self._draws(trial)[1]).choice(n, m, replace=False)))
        gamma = trial.kernel.gamma

        if approach == "sklearn":
            def cell():
                from sklearn.kernel_approximation import Nystroem
                from sklearn.linear_model import Ridge

                t0 = time.perf_counter()
                ny = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit(X[landmarks])
                ridge = Ridge(alpha=alpha).fit(ny.transform(X), y)
                t1 = time.perf_counter()
                pred = ridge.predict(ny.transform(sp.X_test))
                return {"fit_time": t1 - t0, "predict_time": time.perf_counter() - t1, "pred": pred}
            est_params = {"approach": "sklearn", "alpha": alpha, "gamma": gamma}
        else:
            est = self.make_estimator(trial.kernel, trial.method_cfg, trial.coords, p, None)
            if landmarks is not None:
                est.set_params(landmarks=landmarks)

            def cell():
                t0 = time.perf_counter()
                est.fit(X, y)
                t1 = time.perf_counter()
                pred = est.predict(sp.X_test)
                return {"fit_time": t1 - t0, "predict_time": time.perf_counter() - t1, "pred": pred,
                        "solver": getattr(est, "solver_", "exact"), "n_iter": getattr(est, "n_iter_", None)}
            est_params = {"approach": approach, **self.estimator_params(est)}
        try:
            out = profiling.isolated(cell, timeout=p["cell_timeout"])
        except profiling.MeasureError as exc:
            if trial.log:
                trial.log.warning("%s seed=%s method=%s n=%s m=%s not measured: %s", trial.dataset, trial.seed,
                                  trial.method, n, m, exc)
            return [{"params": {**est_params, "failed": str(exc)},
                     "metrics": {k: float("nan") for k in self.metrics}}]
        pred = out.pop("pred")
        rmse = float(np.sqrt(np.mean((pred - sp.y_test) ** 2)))
        peak = out.pop("peak_bytes")
        extra = {k: out[k] for k in ("solver", "n_iter") if out.get(k) is not None}
        return [{"params": {**est_params, **extra, "peak_source": out["peak_source"]},
                 "metrics": {"test_rmse": rmse, "fit_time": out["fit_time"], "predict_time": out["predict_time"],
                             "peak_mem_mb": float("nan") if peak is None else peak / 2**20}}]

    # -- report ------------------------------------------------------------------------------------
    def tested_rows(self, df):
        """The paired tests pair methods within each m (over n and seeds): exact KRR has no m."""
        return df[df["m"].notna()] if "m" in df else df

    def report_tables(self, df, study_cfg):
        out = []
        order = [m for m in study_cfg.get("methods", {}) if m in set(df["method"])]
        for metric in ("fit_time", "peak_mem_mb", "test_rmse", "predict_time"):
            t = size_table(df, metric, order)
            if t is not None:
                out.append((f"{self.metrics[metric][0]} by size (mean over seeds)", t,
                            "Rows: landmarks m and training size n; exact KRR's row has no m. An empty cell: the "
                            "method was not run there (scikit-learn above params.max_memory_mb, exact KRR above "
                            "params.exact_max_n) or failed (see the job log)."))
        ex = exponent_table(df, order)
        if ex is not None:
            out.append(("Fitted exponents a of time ~ n^a and memory ~ n^a", ex,
                        "Least squares on log-log axes over the n values of each (method, m); theory: n^1 for "
                        "the Nystrom fits' time and a streamed solver's memory is O(m^2) (exponent ~0), "
                        "exact KRR n^3 in time and n^2 in memory."))
        ratio = ratio_table(df, order)
        if ratio is not None:
            out.append(("Against scikit-learn at the largest n both ran", ratio,
                        "speed-up = scikit-learn fit + predict time / ours; memory = our peak / scikit-learn's; "
                        "RMSE ratio = ours / scikit-learn's (same landmarks, same alpha)."))
        return out

    def figures(self, df, info, out_dir):
        from pathlib import Path

        listing = []
        order = [m for m in info.get("methods", []) if m in set(df["method"])]
        for metric, caption in (("fit_time", "Fit time"), ("peak_mem_mb", "Peak memory added"),
                                ("test_rmse", "Test RMSE")):
            rows = df[df[metric].notna()] if metric in df else df.iloc[:0]
            if not len(rows):
                continue
            name = f"{metric}_vs_n.png"
            loglog_figure(rows, metric, self.metrics[metric][0], Path(out_dir) / name, order,
                          exponents=metric != "test_rmse")
            listing.append({"file": name, "caption": f"{caption} against n on log-log axes: one panel per (data set, "
                            "m), one line per method (mean over seeds)"
                            + ("; the legend gives the fitted exponent a of n^a." if metric != "test_rmse" else ".")
                            + " Exact KRR (no m) is drawn in every panel of its data set."})
        return listing


def _cell_means(df, metric):
    keys = ["dataset", "m", "n", "method"]
    d = df[df[metric].notna()].copy()
    d["m"] = d["m"].fillna(-1)  # exact KRR: no m
    return d.groupby(keys, as_index=False)[metric].mean()


def size_table(df, metric, order):
    """Mean ``metric`` per (data set, m, n), one column per method."""
    if metric not in df or not df[metric].notna().any():
        return None
    import pandas as pd

    from ..report import fmt_num

    c = _cell_means(df, metric)
    wide = c.pivot_table(index=["dataset", "m", "n"], columns="method", values=metric)
    wide = wide[[m for m in order if m in wide.columns]].reset_index()
    wide["m"] = wide["m"].map(lambda v: "-" if v < 0 else str(int(v)))
    wide["n"] = wide["n"].map(lambda v: f"{int(v):,}")
    for col in wide.columns[3:]:
        wide[col] = wide[col].map(lambda v: "" if pd.isna(v) else fmt_num(v, 3))
    return wide


def fit_exponent(ns, values):
    """Slope of log(values) against log(ns) (least squares), or NaN with fewer than two sizes."""
    ns, values = np.asarray(ns, dtype=float), np.asarray(values, dtype=float)
    ok = (ns > 0) & (values > 0) & np.isfinite(values)
    if ok.sum() < 2 or np.ptp(np.log(ns[ok])) == 0:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(values[ok]), 1)[0])


def exponent_table(df, order):
    import pandas as pd

    rows = []
    for metric in ("fit_time", "peak_mem_mb"):
        if metric not in df:
            continue
        c = _cell_means(df, metric)
        for (ds, m, method), g in c.groupby(["dataset", "m", "method"]):
            if g["n"].nunique() >= 2:
                rows.append({"dataset": ds, "m": m, "method": method, "metric": metric,
                             "a": fit_exponent(g["n"], g[metric])})
    if not rows:
        return None
    t = pd.DataFrame(rows).pivot_table(index=["dataset", "m", "method"], columns="metric", values="a").reset_index()
    t["method"] = pd.Categorical(t["method"], [m for m in order if m in set(t["method"])] or None)
    t = t.sort_values(["dataset", "m", "method"]).rename(columns={"fit_time": "a (fit time)",
                                                                   "peak_mem_mb": "a (peak memory)"})
    t["method"] = t["method"].astype(str)
    t["m"] = t["m"].map(lambda v: "-" if v < 0 else str(int(v)))
    for col in ("a (fit time)", "a (peak memory)"):
        if col in t:
            t[col] = t[col].map(lambda v: "" if pd.isna(v) else f"{v:.2f}".replace("-0.00", "0.00"))
    return t


def ratio_table(df, order):
    """Each method against scikit-learn (method label with approach sklearn) at the largest n where both ran."""
    import json

    import pandas as pd

    if "params" not in df:
        return None
    approach = df["params"].map(lambda s: json.loads(s).get("approach") if isinstance(s, str) else None)
    sk = df[approach == "sklearn"]
    if not len(sk):
        return None
    rows = []
    for (ds, m), g in df[df["m"].notna()].groupby(["dataset", "m"]):
        skg = sk[(sk["dataset"] == ds) & (sk["m"] == m) & sk["fit_time"].notna()]
        if not len(skg):
            continue
        n = skg["n"].max()
        cell = g[g["n"] == n]
        ref = skg[skg["n"] == n]
        ref_t = (ref["fit_time"] + ref["predict_time"]).mean()
        for method in [x for x in order if x in set(cell["method"]) and x not in set(skg["method"])]:
            r = cell[cell["method"] == method]
            rows.append({"dataset": ds, "m": int(m), "n": f"{int(n):,}", "method": method,
                         "speed-up": f"{ref_t / (r['fit_time'] + r['predict_time']).mean():.2f}",
                         "memory": f"{r['peak_mem_mb'].mean() / ref['peak_mem_mb'].mean():.3f}",
                         "RMSE ratio": f"{r['test_rmse'].mean() / ref['test_rmse'].mean():.4f}"})
    return pd.DataFrame(rows) if rows else None


def loglog_figure(df, metric, label, out_png, order, exponents=True):
    """``metric`` against n, log-log: one panel per (data set, m), one line per method; exact KRR in every
    panel of its data set; the legend gives the fitted exponent."""
    from ..atomic import replace_into
    from ..report import _panels, _plt

    plt = _plt()
    c = _cell_means(df, metric)
    panels = sorted({(ds, m) for ds, m in zip(c["dataset"], c["m"], strict=True) if m >= 0}) or \
        sorted({(ds, m) for ds, m in zip(c["dataset"], c["m"], strict=True)})
    fig, axes = _panels(plt, len(panels), 3.4, 3.0)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    methods = [m for m in order if m in set(c["method"])] + sorted(set(c["method"]) - set(order))
    for ax, (ds, m) in zip(axes.flat, panels, strict=False):
        for i, method in enumerate(methods):
            g = c[(c["dataset"] == ds) & (c["method"] == method) & ((c["m"] == m) | (c["m"] < 0))]
            if not len(g):
                continue
            g = g.sort_values("n")
            name = method
            if exponents:
                a = fit_exponent(g["n"], g[metric])
                if np.isfinite(a):
                    name += f" (n^{a:.2f})"
            ax.plot(g["n"], g[metric], marker="o", ms=3, lw=1.2, color=colors[i % len(colors)], label=name,
                    ls="--" if (g["m"] < 0).all() else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{ds}, m = {int(m)}" if m >= 0 else ds, fontsize=9)
        ax.set_xlabel("n (training points)")
        ax.set_ylabel(label, fontsize=7)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle(f"{label} against n", fontsize=10)
    fig.tight_layout()
    replace_into(out_png, lambda tmp: fig.savefig(tmp, dpi=150, format="png"))
    plt.close(fig)
