"""The scale study kind and the measurement it runs on: forked cells, peak memory, grids, exponents, checks."""

import time

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import data, profiling, results, studies
from nystrom_bench.learners import KRR
from nystrom_bench.studies.scale import section as mod

METHODS = {"direct": {"solver": "direct"}, "cg_f32": {"solver": "cg", "dtype": "float32", "cg_tol": 1e-8},
           "sklearn": {"approach": "sklearn"}, "exact": {"approach": "exact"}}
PARAMS = {"n": [300, 600], "m": [30, 60], "exact_max_n": 300}


def _block(**kw):
    return {"kind": "scale", "datasets": ["scalable"], "seeds": [0], "scaling": "standardize",
            "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "median"}}, "methods": METHODS,
            "params": PARAMS, "reference": "direct", **kw}


@pytest.fixture(scope="module")
def rows():
    X, y = data.obtain("scalable")
    splits = {0: data.make_split("scalable", 0, len(X), y)}
    return studies.get("scale").run("scale", _block(), "scalable", X, y, splits, None)


def test_profiling_measures_what_the_child_allocates():
    big = np.ones(2**24)  # 128 MiB in the parent: not counted in the child's peak
    out = profiling.isolated(lambda: {"s": float(np.ones(2**23).sum())})  # 64 MiB in the child
    assert out["s"] == 2**23 and big.sum() == 2**24
    if out["peak_source"] == "rss":
        assert 60 * 2**20 < out["peak_bytes"] < 100 * 2**20, out
    here = profiling.isolated(lambda: {"s": float(np.ones(2**23).sum())}, fork=False)
    assert here["peak_source"] == "tracemalloc" and 63 * 2**20 < here["peak_bytes"] < 70 * 2**20


@pytest.mark.parametrize("fork", [True, False])
def test_profiling_reports_failures(fork):
    if fork and not profiling._can_fork():
        pytest.skip("no fork or /proc here")
    with pytest.raises(profiling.MeasureError, match="ZeroDivisionError"):
        profiling.isolated(lambda: {"x": 1 / 0}, fork=fork)
    if fork:
        with pytest.raises(profiling.MeasureError, match="time limit of 0.2 s"):
            profiling.isolated(lambda: time.sleep(5) or {}, timeout=0.2)


def test_rows_cover_the_grid_and_share_landmarks(rows):
    by = {(r["method"], r["coords"]["n"], r["coords"].get("m")): r for r in rows}
    # exact only up to exact_max_n and without m; the others at every (n, m)
    assert set(by) == {(m, n, c) for m in ("direct", "cg_f32", "sklearn") for n in (300, 600) for c in (30, 60)} | \
        {("exact", 300, None)}
    for r in rows:
        met = r["metrics"]
        assert met["fit_time"] > 0 and met["peak_mem_mb"] > 0 and 0.1 < met["test_rmse"] < 1.5
        assert r["params"]["n_train"] == 100_000 and r["params"]["peak_source"] in ("rss", "tracemalloc")
    for n in (300, 600):
        for c in (30, 60):
            # the same landmarks and alpha = lam n: one predictor, three implementations
            ref = by[("direct", n, c)]["metrics"]["test_rmse"]
            assert by[("cg_f32", n, c)]["metrics"]["test_rmse"] == pytest.approx(ref, rel=1e-4)
            assert by[("sklearn", n, c)]["metrics"]["test_rmse"] == pytest.approx(ref, rel=1e-3)
    assert by[("direct", 600, 30)]["params"]["alpha"] == pytest.approx(1e-6 * 600)
    assert by[("cg_f32", 300, 30)]["params"]["solver"] == "cg" and by[("cg_f32", 300, 30)]["params"]["n_iter"] >= 1


def test_a_row_recomputes_from_the_public_api(rows):
    r = next(r for r in rows if r["method"] == "direct" and r["coords"] == {"n": 600, "m": 60})
    sp = data.load("scalable", seed=0)
    perm = np.random.default_rng  # noqa: F841 - the subset is drawn from the job's stream, as below
    from nystrom_bench import seeding

    rng = seeding.rng(0, "scale", "scalable")
    idx = np.sort(rng.permutation(len(sp.y_train))[:600])
    landmarks = np.sort(np.random.default_rng(int(rng.integers(2**31))).choice(600, 60, replace=False))
    p = r["params"]
    model = KRR(kernel="gaussian", gamma=p["gamma"], alpha=p["alpha"], mode="lla", solver="direct",
                landmarks=landmarks).fit(sp.X_train[idx], sp.y_train[idx])
    rmse = float(np.sqrt(np.mean((model.predict(sp.X_test) - sp.y_test) ** 2)))
    assert rmse == pytest.approx(r["metrics"]["test_rmse"], rel=1e-10)


def test_grid_skips_what_does_not_fit():
    kind = studies.get("scale")
    p = kind.resolve_params({"n": [10_000, 1_000_000], "m": [1000, 20_000], "exact_max_n": 20_000,
                             "max_memory_mb": 8000})
    def grid(label, block):
        return kind.coord_grid(p, kind.method(label, block), {"task": "regression"})

    assert grid("exact", {"approach": "exact"}) == [{"n": 10_000}]
    # scikit-learn: 3 n x m float64 = 24 n m bytes; 1e6 x 1000 = 22.4 GiB > 8000 MiB
    assert grid("sk", {"approach": "sklearn"}) == [{"n": 10_000, "m": 1000}]
    assert {"n": 1_000_000, "m": 20_000} in grid("cg", {"solver": "cg"})
    assert {"n": 10_000, "m": 20_000} not in grid("cg", {"solver": "cg"})  # m > n


def test_exponent_and_report_tables():
    assert mod.fit_exponent([1e3, 1e4, 1e5], [2.0, 20.0, 200.0]) == pytest.approx(1.0)
    assert mod.fit_exponent([1e3, 1e4], [1.0, 100.0]) == pytest.approx(2.0)
    assert np.isnan(mod.fit_exponent([1e3], [1.0]))
    rows = []
    for n in (1000, 10_000):
        for method, t, mem, approach in (("direct", 1e-4 * n, 10.0, "nystrom"), ("sk", 5e-4 * n, 1e-3 * n, "sklearn")):
            rows.append({"dataset": "d", "method": method, "kernel": "g", "seed": 0, "coords": {"n": n, "m": 100},
                         "params": {"approach": approach},
                         "metrics": {"fit_time": t, "predict_time": 0.0, "peak_mem_mb": mem, "test_rmse": 0.5}})
        rows.append({"dataset": "d", "method": "exact", "kernel": "g", "seed": 0, "coords": {"n": n},
                     "params": {"approach": "exact"},
                     "metrics": {"fit_time": 1e-9 * n**3, "predict_time": 0.0, "peak_mem_mb": 1e-5 * n**2,
                                 "test_rmse": 0.4}})
    df = results.frame("scale", rows, ("n", "m"))
    tables = {t: (tab, note) for t, tab, note in studies.section("scale").tables(
        df, {"methods": {"direct": {}, "sk": {}, "exact": {}}})}
    ex = tables["Fitted exponents a of time ~ n^a and memory ~ n^a"][0].set_index("method")
    assert ex.loc["direct", "a (fit time)"] == "1.00" and ex.loc["exact", "a (fit time)"] == "3.00"
    assert ex.loc["exact", "a (peak memory)"] == "2.00" and ex.loc["direct", "a (peak memory)"] == "0.00"
    ratio = tables["Against scikit-learn at the largest n both ran"][0]
    assert ratio.to_dict("records") == [{"dataset": "d", "m": 100, "n": "10,000", "method": "direct",
                                         "speed-up": "5.00", "memory": "1.000", "RMSE ratio": "1.0000"}]
    size = tables["Fit time (s) by size (mean over seeds)"][0]
    assert list(size.columns) == ["dataset", "m", "n", "direct", "sk", "exact"]
    assert size.iloc[0]["m"] == "-" and size.iloc[0]["direct"] == ""  # exact's row has no m
    assert isinstance(size, pd.DataFrame)
    assert len(studies.section("scale").tested_rows(df)) == 4  # exact (no m) is not paired


@pytest.mark.parametrize("patch,match", [
    ({"params": {**PARAMS, "n": [0, 100]}}, "params: parameter 'n': 0 is less than the minimum of 1"),
    ({"params": {**PARAMS, "lam": -1}}, "parameter 'lam': -1 is less than or equal to the minimum of 0"),
    ({"params": {**PARAMS, "budget": 3}}, "unknown parameter"),
    ({"methods": {"x": {"approach": "falkon"}}}, "approach must be one of exact, nystrom, sklearn, got 'falkon'"),
    ({"methods": {"x": {"approach": "sklearn", "dtype": "float32"}}}, r"unknown key\(s\) \['dtype'\]"),
    ({"methods": {"x": {"solver": "lsqr"}}}, "solver"),
    ({"methods": {"x": {"dtype": "float16"}}}, "dtype"),
    ({"methods": {"x": {"sampler": "kmeans"}}}, "unknown key"),
    ({"kernels": {"l": {"kernel": "laplacian"}}}, "supports the kernels gaussian"),
    ({"params": {**PARAMS, "n": [300, 100_001]}}, "n = 100001 exceeds the 100000 training points of 'scalable'"),
])
def test_config_errors_name_the_fix(patch, match, config_error):
    config_error("scale", _block(), patch, match)


def test_default_and_paper_blocks_are_valid():
    import yaml

    from nystrom_bench.config import check as check_config

    for path in ("config/config.yaml", "config/paper.yaml"):
        cfg = yaml.safe_load(open(path))
        if "scale" in cfg["studies"]:
            check_config({"studies": {"scale": cfg["studies"]["scale"]}})


def test_scale_option_defaults_are_krrs():
    """The scale kind's literal option defaults (kept literal so that importing the kind does not import
    scikit-learn) are KRR's own."""
    from nystrom_bench.learners import KRR
    from nystrom_bench.studies.scale.methods import KRR_DEFAULTS

    params = KRR().get_params()
    assert KRR_DEFAULTS == {k: params[k] for k in KRR_DEFAULTS}
