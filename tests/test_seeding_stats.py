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
    with pytest.raises(ValueError, match="reference method 'zzz'"):
        stats.paired_tests(df, "mse", "zzz")


def test_friedman(rng):
    f = stats.friedman(_frame(rng, 0.5), "mse")
    assert f["p"] < 1e-3
    assert max(f["mean_ranks"], key=f["mean_ranks"].get) == "worse"
