import numpy as np
import pandas as pd

from nystrom_bench import data, studies
from nystrom_bench.config import check

CFG = {"seeds": [0], "kernels": {"G": {"kernel": "gaussian"}, "E": {"kernel": "epanechnikov"}},
       "methods": {"US": {"sampler": "uniform"}, "CS": {"sampler": "column_norm"}}, "scaling": "none",
       "params": {"n_landmarks": [40], "sigma_grid": [0.1, 1.0], "lambda_grid": [1e-9, 1e-5],
                  "validation_fraction": 0.25}}


def test_gnkr_study_rows_protocols_and_tables():
    st = studies.get("gnkr")
    X, y = data.obtain("gnkr_f2")
    X, y = X[:800], y[:800]
    splits = {0: {"train": np.arange(400), "test": np.arange(400, 800),
                  "train_noise": np.random.default_rng(0).normal(size=400)}}
    rows = st.run("gnkr", CFG, "gnkr_f2", X, y, splits)
    assert {r["method"] for r in rows} == {"US-40", "CS-40"} and {r["kernel"] for r in rows} == {"G", "E"}
    for r in rows:
        m = r["metrics"]
        assert m["test_rmse_best"] <= m["test_rmse_val"] + 1e-12  # selecting on the test set is optimistic
        assert m["test_rmse_best"] == min(m["rmse_at_sigma_0.1"], m["rmse_at_sigma_1"])
        assert m["test_rmse_best"] < (0.25 if (r["kernel"], r["method"]) == ("G", "US-40") else 0.5)
    df = pd.DataFrame([{"dataset": r["dataset"], "method": r["method"], "kernel": r["kernel"], "seed": r["seed"],
                        **r["metrics"]} for r in rows])
    titles = [t for t, _, _ in st.report_tables(df, CFG)]
    assert titles[0].startswith("Table 1") and any("each sigma" in t for t in titles)


def test_gnkr_config_reference_uses_result_labels():
    block = {**CFG, "datasets": ["gnkr_f1"], "reference": "US-40"}
    assert "gnkr" in check({"studies": {"gnkr": block}})
