import pandas as pd

from nystrom_bench import report

INFO = {"metrics": {"mse": ["Test MSE", True]}, "reference": "exact"}


def test_mean_sd_table():
    df = pd.DataFrame({"dataset": ["a"] * 4, "kernel": ["g"] * 4, "seed": [0, 1, 0, 1],
                       "method": ["exact", "exact", "ny", "ny"], "mse": [1.0, 3.0, 2.0, 2.0]})
    t = report.mean_sd_table(df, "mse")
    assert list(t.columns) == ["dataset", "exact", "ny"]
    assert t.iloc[0]["exact"] == "2 +- 1.414" and t.iloc[0]["ny"] == "2 +- 0"


def test_describe_tests_states_direction_and_significance():
    paired = pd.DataFrame([{"metric": "mse", "method": "ny", "reference": "exact", "n_pairs": 10, "wins": 1,
                            "losses": 9, "median_diff": 0.3, "wilcoxon_p": 0.004, "wilcoxon_p_holm": 0.008}])
    (line,) = report.describe_tests(paired, INFO, "mse")
    assert "worse in 9 of 10" in line and "significant at 5% (Holm)" in line and "not significant" not in line
