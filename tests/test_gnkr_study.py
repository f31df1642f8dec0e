import numpy as np
import pandas as pd

from nystrom_bench import data, studies
from nystrom_bench.config import check

CFG = {"seeds": [0], "kernels": {"G": {"kernel": "gaussian"}, "E": {"kernel": "epanechnikov"}},
       "methods": {"US": {"sampler": "uniform"}, "CS": {"sampler": "column_norm"}}, "scaling": "none",
       "params": {"n_landmarks": [40], "sigma_grid": [0.1, 1.0], "lambda_grid": [1e-9, 1e-5],
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
    rows = st.run("gnkr", CFG, "gnkr_f2", X, y, splits)
    assert {r["method"] for r in rows} == {"US-40", "CS-40"} and {r["kernel"] for r in rows} == {"G", "E"}
    for r in rows:
        m = r["metrics"]
        assert m["test_rmse_best"] <= m["test_rmse_val"] + 1e-12  # selecting on the test set is optimistic
        assert m["test_rmse_best"] == min(m["rmse_at_sigma_0.1"], m["rmse_at_sigma_1"])
        assert m["test_rmse_best"] < (0.25 if (r["kernel"], r["method"]) == ("G", "US-40") else 0.5)
    df = pd.DataFrame([{"dataset": r["dataset"], "method": r["method"], "kernel": r["kernel"], "seed": r["seed"],
                        **r["metrics"]} for r in rows])
    tables = st.report_tables(df, CFG)
    titles = [t for t, _, _ in tables]
    assert titles[0].startswith("Tables 1 and 3") and any("each sigma" in t for t in titles)
    per_m = next(tab for t, tab, _ in tables if t.startswith("Column-norm vs uniform"))
    assert list(per_m["m"]) == [40] and list(per_m["sampler"]) == ["CS"] and per_m["pairs"].iloc[0] == 2


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
        per_sigma = [v for k, v in b["metrics"].items() if k.startswith("rmse_at_sigma_")]
        assert len(per_sigma) == 4 and b["metrics"]["test_rmse_dense"] == min(per_sigma)
        assert b["metrics"]["test_rmse_dense"] <= b["metrics"]["test_rmse_best"]


def test_gnkr_standardized_target_is_scale_free():
    st = studies.get("gnkr")
    X, y, splits = _half_split("gnkr_f2", 600)
    cfg = {**CFG, "kernels": {"G": {"kernel": "gaussian"}}, "methods": {"US": {"sampler": "uniform"}},
           "params": {**CFG["params"], "standardize_target": True}}
    a = st.run("gnkr", cfg, "gnkr_f2", X, y, splits)[0]["metrics"]
    b = st.run("gnkr", cfg, "gnkr_f2", X, 1000.0 * y + 7.0, splits)[0]["metrics"]
    np.testing.assert_allclose(a["test_rmse_best"], b["test_rmse_best"], rtol=1e-6)


def test_gnkr_paper_values_and_rmse_curve(tmp_path):
    from nystrom_bench.studies.gnkr import paper_value

    assert paper_value("gnkr_f1", "G", "US", 1000) == 0.02908
    assert paper_value("CASP", "E", "CS", 1000) == 4.118e-3  # Table 3 is printed x 1e-3
    assert paper_value("CASP", "E", "CS", 300) is None and paper_value("diabetes", "G", "US", 1000) is None
    rng = np.random.default_rng(0)
    df = pd.DataFrame([{"dataset": ds, "method": f"{s}-{m}", "kernel": k, "seed": seed,
                        "test_rmse_best": rng.uniform(0.02, 0.04), "test_rmse_val": 0.05}
                       for ds in ("gnkr_f1", "winequality-white") for s in ("US", "CS") for m in (300, 1000)
                       for k in ("G", "E") for seed in range(3)])
    table = studies.get("gnkr").report_tables(df, {**CFG, "params": {}})[0][1]
    wine = table[(table["data set"] == "winequality-white") & (table["algorithm"] == "G-GNKR-US")]
    assert list(wine["paper"]) == ["-", "0.01394"]  # m = 300 is not in Table 3, m = 1000 is
    figs = studies.get("gnkr").report_figures(df, {"title": "t"}, tmp_path)
    assert figs[0][0].stat().st_size > 1000 and "landmarks" in figs[0][1]


def test_gnkr_config_reference_uses_result_labels():
    block = {**CFG, "datasets": ["gnkr_f1"], "reference": "US-40"}
    assert "gnkr" in check({"studies": {"gnkr": block}})
