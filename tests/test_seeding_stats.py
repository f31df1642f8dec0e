import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from nystrom_bench import seeding, stats


def test_seed_sequence_is_deterministic_and_name_sensitive():
    a = seeding.rng(0, "krr", "diabetes").random(3)
    np.testing.assert_array_equal(a, seeding.rng(0, "krr", "diabetes").random(3))
    assert not np.array_equal(a, seeding.rng(0, "krr", "friedman1").random(3))
    assert not np.array_equal(a, seeding.rng(1, "krr", "diabetes").random(3))
    assert not np.array_equal(a, seeding.rng(0, "gnkr", "diabetes").random(3))
    with pytest.raises(ValueError, match="non-negative"):
        seeding.seed_sequence(-1, "x")


def test_holm_matches_definition():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    # sorted: 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08 -> max-accumulated 0.09, 0.2*1 -> 0.2
    np.testing.assert_allclose(stats.holm(p), [0.04, 0.09, 0.09, 0.2])


def _frame(rng, shift):
    rows = []
    for ds in ("a", "b"):
        for seed in range(10):
            base = rng.normal()
            rows.append({"dataset": ds, "seed": seed, "method": "ref", "mse": base})
            rows.append({"dataset": ds, "seed": seed, "method": "worse", "mse": base + shift + 0.01 * rng.normal()})
            rows.append({"dataset": ds, "seed": seed, "method": "same", "mse": base + 0.01 * rng.normal()})
    return pd.DataFrame(rows)


def test_paired_tests_match_scipy(rng):
    df = _frame(rng, 0.5)
    t = stats.paired_tests(df, "mse", "ref").set_index("method")
    wide = stats.pivot_pairs(df, "mse")
    d = (wide["worse"] - wide["ref"]).to_numpy()
    assert t.loc["worse", "wilcoxon_p"] == pytest.approx(sps.wilcoxon(d).pvalue)
    assert t.loc["worse", "ttest_p"] == pytest.approx(sps.ttest_1samp(d, 0).pvalue)
    assert t.loc["worse", "losses"] == 20 and t.loc["worse", "wins"] == 0
    assert t.loc["worse", "wilcoxon_p_holm"] < 0.001
    assert t.loc["same", "wilcoxon_p_holm"] > 0.01
    with pytest.raises(ValueError, match="reference method .zzz. has no results"):
        stats.paired_tests(df, "mse", "zzz")


def test_friedman(rng):
    f = stats.friedman(_frame(rng, 0.5), "mse")
    assert f["p"] < 1e-3
    assert max(f["mean_ranks"], key=f["mean_ranks"].get) == "worse"


def _coord_frame(rng):
    """Two methods x two m values x 6 seeds: rows differ only in the coord m."""
    rows = []
    for m in (10, 20):
        for seed in range(6):
            base = rng.normal()
            rows.append({"dataset": "a", "kernel": "g", "seed": seed, "m": m, "method": "ref", "mse": base})
            rows.append({"dataset": "a", "kernel": "g", "seed": seed, "m": m, "method": "ny",
                         "mse": base + (0.5 if m == 10 else -0.5) + 0.01 * rng.normal()})
    return pd.DataFrame(rows)


def test_study_tests_per_coord_value_and_overall(rng):
    df = _coord_frame(rng)
    paired, fried = stats.study_tests(df, {"mse": True}, "ref", coords=("m",))
    t = paired.set_index("scope")
    assert list(paired["scope"]) == ["all", "m=10", "m=20"]
    assert t.loc["all", "n_pairs"] == 12 and t.loc["m=10", "n_pairs"] == 6
    assert t.loc["m=10", "losses"] == 6 and t.loc["m=20", "wins"] == 6  # opposite effects per m
    assert fried.empty  # two methods: no Friedman test
    # without the coord in the blocks, rows of two m values would be averaged silently: an error
    with pytest.raises(ValueError, match=r"several results share the block .*add the study.s coords"):
        stats.paired_tests(df, "mse", "ref", block_cols=("dataset", "kernel", "seed"))


def test_multiple_kernel_method_pairs_on_dataset_and_seed(rng):
    df = _frame(rng, 0.5).assign(kernel="g")
    df.loc[df["method"] == "worse", "kernel"] = "multi"  # a multiple-kernel method carries its own label
    with pytest.raises(stats.NoPairsError, match=r"'worse' and the reference 'ref' share no block: their 'kernel' "
                                                 r"values differ .*Study.block_cols without 'kernel'"):
        stats.study_tests(df, {"mse": True}, "ref", block_cols=("dataset", "kernel", "seed"))
    paired, _ = stats.study_tests(df, {"mse": True}, "ref", block_cols=("dataset", "seed"))
    assert paired.set_index("method").loc["worse", "n_pairs"] == 20


def test_missing_reference_is_an_error_naming_the_methods(rng):
    with pytest.raises(stats.NoPairsError, match=r"reference method 'zzz' has no results .*ref, same, worse"):
        stats.study_tests(_frame(rng, 0.1).assign(kernel="g"), {"mse": True}, "zzz")
