import pandas as pd

from nystrom_bench import report

INFO = {"metrics": {"mse": ["Test MSE", True]}, "reference": "exact"}


def test_mean_sd_table():
    df = pd.DataFrame({"dataset": ["a"] * 4, "kernel": ["g"] * 4, "seed": [0, 1, 0, 1],
                       "method": ["exact", "exact", "ny", "ny"], "mse": [1.0, 3.0, 2.0, 2.0]})
    t = report.mean_sd_table(df, "mse")
    assert list(t.columns) == ["dataset", "exact", "ny"]
    assert t.iloc[0]["exact"] == "2.0 +- 1.4" and t.iloc[0]["ny"] == "2 +- 0"


def test_numbers_are_formatted_for_people():
    assert report.fmt_mean_sd(34.13, 2.287) == "34.1 +- 2.3"
    assert report.fmt_mean_sd(0.004077, 0.000608) == "0.00408 +- 0.00061"
    assert report.fmt_mean_sd(150.0, 12.0) == "150 +- 12"
    assert report._fmt_p(2.3e-10) == "2e-10" and report._fmt_p(0.041) == "0.041"
    assert report.fmt_num(2.08333333333333) == "2.08" and report.fmt_num(1234567.0) == "1.23e6"
    assert report._fmt_ranks('{"b": 2.4375, "a": 1.5625}') == "a 1.56, b 2.44"


def test_describe_tests_states_direction_and_significance():
    paired = pd.DataFrame([{"metric": "mse", "method": "ny", "reference": "exact", "n_pairs": 10, "wins": 1,
                            "losses": 9, "median_diff": 0.3, "wilcoxon_p": 0.004, "wilcoxon_p_holm": 0.008}])
    (line,) = report.describe_tests(paired, INFO, "mse")
    assert "worse in 9 of 10" in line and "significant at 5% (Holm)" in line and "not significant" not in line
