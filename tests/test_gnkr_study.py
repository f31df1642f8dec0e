import json

import numpy as np
import pandas as pd

from nystrom_bench import data, results, studies
from nystrom_bench.config import check

CFG = {"seeds": [0], "kernels": {"G": {"kernel": "gaussian"}, "E": {"kernel": "epanechnikov"}},
       "methods": {"US": {"sampler": "uniform"}, "CS": {"sampler": "column_norm"}}, "scaling": "none",
       "params": {"n_components": [40], "sigma_grid": [0.1, 1.0], "lambda_grid": [1e-9, 1e-5],
                  "validation_fraction": 0.25}}


def _half_split(name, n, noise_seed=None):
    """The first n points of a synthetic set, half train / half test (N(0,1) noise unless noise_seed is None)."""
    X, y = data.obtain(name)
    h = n // 2
    noise = np.zeros(h) if noise_seed is None else np.random.default_rng(noise_seed).normal(size=h)
    return X[:n], y[:n], {0: {"train": np.arange(h), "test": np.arange(h, n), "train_noise": noise}}


def test_gnkr_study_rows_protocols_and_tables():
    st = studies.get("gnkr")
    X, y, splits = _half_split("gnkr_f2", 800, noise_seed=0)
    cfg = {**CFG, "params": {**CFG["params"], "n_components": [20, 40]}}
    rows = st.run("gnkr", cfg, "gnkr_f2", X, y, splits)
    assert {r["method"] for r in rows} == {"US", "CS"} and {r["kernel"] for r in rows} == {"G", "E"}
    assert sorted({r["coords"]["m"] for r in rows}) == [20, 40] and len(rows) == 2 * 2 * 2
    for r in rows:
        m, by_sigma = r["metrics"], r["params"]["rmse_by_sigma"]
        assert m["test_rmse_best"] <= m["test_rmse_val"] + 1e-12  # selecting on the test set is optimistic
        assert m["test_rmse_best"] == min(by_sigma.values()) and len(by_sigma) == 2
        if r["coords"]["m"] == 40:
            assert m["test_rmse_best"] < (0.25 if (r["kernel"], r["method"]) == ("G", "US") else 0.5)
    df = results.frame("gnkr", rows, st.coords)
    assert list(df.columns[:6]) == ["study", "dataset", "method", "kernel", "seed", "m"]
    tables = studies.section("gnkr").tables(df, cfg)
    titles = [t for t, _, _ in tables]
    assert titles[0].startswith("Tables 1 and 3") and any("each sigma" in t for t in titles)
    per_sigma = next(tab for t, tab, _ in tables if "each sigma" in t)
    assert list(per_sigma.columns) == ["data set", "kernel", "0.1", "1", "paper", "sigma nearest the paper",
                                       "best sigma (stated grid)"]
    assert set(per_sigma["paper"]) == {"-"}  # m = 40 is not in Table 1
    for _, r in per_sigma.iterrows():  # the stated grid's best width is the column with the smallest RMSE
        assert r["best sigma (stated grid)"] == min(("0.1", "1"), key=lambda c, r=r: float(r[c]))
    assert any("kernel (test-selected RMSE" in t for t in titles)


def test_gnkr_extra_sigmas_only_add_the_dense_metric():
    st = studies.get("gnkr")
    X, y, splits = _half_split("gnkr_f1", 600, noise_seed=1)
    base = st.run("gnkr", CFG, "gnkr_f1", X, y, splits)
    cfg = {**CFG, "params": {**CFG["params"], "extra_sigmas": [0.3, 1.0, 3.0]}}  # 1.0 is already in the grid
    dense = st.run("gnkr", cfg, "gnkr_f1", X, y, splits)
    for a, b in zip(base, dense, strict=True):
        assert a["metrics"]["test_rmse_dense"] == a["metrics"]["test_rmse_best"]  # no extras: the same
        for k in ("test_rmse_best", "test_rmse_val"):  # the paper-grid results do not move
            np.testing.assert_allclose(b["metrics"][k], a["metrics"][k], rtol=1e-10)
        per_sigma = b["params"]["rmse_by_sigma"]
        assert len(per_sigma) == 4 and b["metrics"]["test_rmse_dense"] == min(per_sigma.values())
        assert b["metrics"]["test_rmse_dense"] <= b["metrics"]["test_rmse_best"]


def test_gnkr_standardized_target_is_scale_free():
    st = studies.get("gnkr")
    X, y, splits = _half_split("gnkr_f2", 600)
    cfg = {**CFG, "kernels": {"G": {"kernel": "gaussian"}}, "methods": {"US": {"sampler": "uniform"}},
           "params": {**CFG["params"], "standardize_target": True}}
    a = st.run("gnkr", cfg, "gnkr_f2", X, y, splits)[0]["metrics"]
    b = st.run("gnkr", cfg, "gnkr_f2", X, 1000.0 * y + 7.0, splits)[0]["metrics"]
    np.testing.assert_allclose(a["test_rmse_best"], b["test_rmse_best"], rtol=1e-6)


def test_gnkr_paper_values_and_curves():
    from nystrom_bench.studies.gnkr.section import paper_value

    assert paper_value("gnkr_f1", "G", "US", 1000) == 0.02908
    assert paper_value("CASP", "E", "CS", 1000) == 4.118e-3  # Table 3 is printed x 1e-3
    assert paper_value("CASP", "E", "CS", 300) is None and paper_value("diabetes", "G", "US", 1000) is None
    st = studies.section("gnkr")
    curve = st.paper_curve("gnkr_f1", "US", "G", "test_rmse_best", "m")
    assert curve[0] == (300, 0.03412) and len(curve) == 8
    assert st.paper_curve("CASP", "US", "G", "test_rmse_best", "m") is None  # Table 3: not on our scale
    rng = np.random.default_rng(0)
    df = pd.DataFrame([{"dataset": ds, "method": s, "m": m, "kernel": k, "seed": seed,
                        "test_rmse_best": rng.uniform(0.02, 0.04), "test_rmse_val": 0.05, "test_rmse_dense": 0.03,
                        "params": json.dumps({"rmse_by_sigma": {"1.0": 0.03}})}
                       for ds in ("gnkr_f1", "winequality-white") for s in ("US", "CS") for m in (300, 1000)
                       for k in ("G", "E") for seed in range(3)])
    tables = st.tables(df, {**CFG, "params": {}})
    table = tables[0][1]
    per_sigma = next(tab for t, tab, _ in tables if "each sigma" in t).set_index(["data set", "kernel"])
    assert per_sigma.loc[("f1", "G"), "paper"] == "0.0291"  # Table 1, G-GNKR-US at m = 1000, beside ours
    assert per_sigma.loc[("f1", "G"), "sigma nearest the paper"] == "1"
    wine = table[(table["data set"] == "winequality-white") & (table["algorithm"] == "G-GNKR-US")]
    assert list(wine["paper"]) == ["-", "0.01394"]  # m = 300 is not in Table 3, m = 1000 is


def test_gnkr_config_reference_is_a_method_label():
    block = {**CFG, "datasets": ["gnkr_f1"], "reference": "US"}
    assert "gnkr" in check({"studies": {"gnkr": block}})
