"""Win/tie/loss tables, Hodges-Lehmann intervals and Demsar's critical-difference analysis, against
SciPy's own functions and textbook values; and the layering rule (stats/report import no study)."""

import ast
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from nystrom_bench import report, stats

SRC = Path(__file__).resolve().parents[1] / "src" / "nystrom_bench"


def test_signed_rank_null_matches_scipy_exact_and_enumeration(rng):
    for n in (1, 5, 9, 14):
        cdf = stats._signed_rank_cdf(n)
        # enumeration of all 2^n sign patterns
        sums = [sum(r for r, s in zip(range(1, n + 1), signs, strict=True) if s)
                for signs in itertools.product((0, 1), repeat=n)]
        counts = np.bincount(sums, minlength=n * (n + 1) // 2 + 1) / 2 ** n
        np.testing.assert_allclose(cdf, np.cumsum(counts))
    d = rng.normal(size=12) + 0.4
    r_plus = int(((d > 0) * sps.rankdata(np.abs(d))).sum())
    exact = sps.wilcoxon(d, alternative="less", method="exact").pvalue
    assert stats._signed_rank_cdf(12)[r_plus] == pytest.approx(exact)


def test_wilcoxon_is_scipys_to_the_bit():
    """Small tied samples are counted (SciPy 1.15+ permutes them, 2**n Python calls), the rest go to SciPy: the
    same p-value and statistic either way, bit for bit, with ties, scaled values and the n <= 13 edge (SciPy's
    permutations of n = 12 took 1.5 CPU-s: n = 9 and 13 bracket it)."""
    rng = np.random.default_rng(5)
    for n in (2, 3, 4, 6, 9, 13, 14, 30, 60):
        for k in range(4 if n > 9 else 8):
            d = rng.integers(-5, 6, size=n).astype(float) * (0.1, 1.0, 3.7, 1e-7)[k % 4]
            d[d == 0] = 0.5 if k % 2 else -2.0  # no zeros (compare_pair drops them): ties
            if k == 3:
                d = rng.normal(size=n)  # untied: SciPy's exact or normal test
            w = sps.wilcoxon(d, zero_method="wilcox")
            assert stats.wilcoxon(d) == (float(w.pvalue), float(w.statistic)), d


def test_wilcoxon_permutation_p_is_the_enumeration_of_every_sign_flip():
    """The textbook permutation test: all 2**n sign flips of the tied differences, T+ the sum of the average ranks
    of |d| over the positive ones, p = 2 min(P(T+ <= t), P(T+ >= t)) at most 1."""
    d = np.array([1.0, -1.0, 2.0, 2.0, 2.0, -3.5, 4.0, 4.0, 6.0])
    ranks = sps.rankdata(np.abs(d))
    t = ranks[d > 0].sum()
    null = [sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product((0, 1), repeat=len(d))]
    null = np.array(null)
    want = min(1.0, 2 * min(np.mean(null <= t), np.mean(null >= t)))
    p, stat = stats.wilcoxon(d)
    assert p == pytest.approx(want, rel=1e-15) and stat == min(t, ranks[d < 0].sum())


def test_hodges_lehmann_estimate_and_interval():
    d = np.arange(1.0, 11.0)
    est, lo, hi = stats.hodges_lehmann(d)
    walsh = sorted((a + b) / 2 for i, a in enumerate(d) for b in d[i:])
    assert est == pytest.approx(np.median(walsh))
    # n = 10, two-sided 5%: critical value 8 (P(T <= 8) = 0.0244), so the interval is [W_(9), W_(47)]
    assert (lo, hi) == (walsh[8], walsh[46])
    # the interval is the set of shifts the Wilcoxon test does not reject at 5%
    rng = np.random.default_rng(3)
    x = rng.normal(1.0, 1.0, size=15)
    est, lo, hi = stats.hodges_lehmann(x)
    assert lo < est < hi
    for shift, rejected in ((lo - 1e-6, True), (lo + 1e-6, False), (hi - 1e-6, False), (hi + 1e-6, True)):
        p = sps.wilcoxon(x - shift, method="exact").pvalue
        assert (p < 0.05) == rejected, (shift, p)
    assert np.isnan(stats.hodges_lehmann([1.0, 2.0, 3.0])[1])  # too few pairs for a 95% interval


@pytest.mark.parametrize("n", [1, 2, 6, 7, 40, 401, 700])
def test_hodges_lehmann_is_the_sorted_walsh_averages(n):
    """Selection instead of a sort, the Walsh averages from a cached mask and the cached null distribution give
    the textbook values bit for bit: the median of the sorted Walsh averages and W_(c+1), W_(M-c), with ties
    and zeros, for the exact (n <= 400) and the normal (n > 400) critical value."""
    rng = np.random.default_rng(n)
    for d in (rng.normal(0.3, 1.0, n), np.round(rng.normal(0.3, 1.0, n), 1), np.where(rng.random(n) < 0.5, 0.0, 1.0)):
        i, j = np.triu_indices(n)
        walsh = np.sort((d[i] + d[j]) / 2.0)
        m = len(walsh)
        if n <= 400:
            c = int(np.searchsorted(stats._signed_rank_cdf(n), 0.025, side="right")) - 1
        else:
            c = int(np.floor(n * (n + 1) / 4.0 + sps.norm.ppf(0.025) * np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)))
        want = (float(np.median(walsh)), *((float(walsh[c]), float(walsh[m - 1 - c])) if c >= 0 else (np.nan, np.nan)))
        got = stats.hodges_lehmann(d)
        np.testing.assert_array_equal(got, want)
    # the cached null distribution is not the caller's to change: each call gets its own copy
    stats._signed_rank_cdf(9)[:] = 0.0
    assert stats._signed_rank_cdf(9)[-1] == 1.0


def test_walsh_band_selects_what_the_full_sort_puts_there():
    """Large samples select in a band of the sorted Walsh matrix: the same floats as sorting all M averages (with
    ties, a large offset, heavy tails), and each row's boundary is the count of averages below a value, exactly
    (the value itself an average: strict and not)."""
    rng = np.random.default_rng(11)
    for d in (rng.normal(0.3, 1.0, 650), np.round(rng.normal(size=500), 2), rng.standard_cauchy(420) * 1e-6,
              np.round(rng.normal(size=450), 2) * 1e3 + 1e9):
        a = np.sort(d)
        n = len(a)
        i, j = np.triu_indices(n)
        walsh = np.sort((a[i] + a[j]) / 2.0)
        m = len(walsh)
        c = int(np.floor(m / 2.0 + sps.norm.ppf(0.025) * np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)))  # a 95% bound
        kth = sorted({(m - 1) // 2, m // 2, c, m - 1 - c})
        got = stats._walsh_band(a, kth, m)
        assert got is not None  # no fallback on these
        assert [got[k] for k in kth] == [walsh[k] for k in kth]
        rows = np.arange(n)
        for x in (walsh[m // 3], walsh[m // 2] + 1e-300, np.nextafter(walsh[2 * m // 3], -np.inf)):
            full = (a[:, None] + a[None, :]) / 2.0
            upper = np.triu(np.ones((n, n), dtype=bool))
            for strict in (True, False):
                inside = (full < x) if strict else (full <= x)
                np.testing.assert_array_equal(stats._walsh_row_ends(a, rows, x, strict) - rows,
                                              (inside & upper).sum(axis=1))


def test_pivot_is_pandas_pivot_table():
    """pivot_pairs' own pivot gives pandas' pivot table less its empty rows: values, index levels (names, dtypes,
    sorted order), columns; one block column or several, string and integer keys, blocks a method lacks; a
    missing key goes to pandas."""
    rng = np.random.default_rng(4)
    rows = [{"dataset": f"d{d}", "kernel": k, "seed": s, "m": m, "method": meth, "err": rng.random()}
            for d in (3, 1, 2) for k in ("g", "l") for s in (7, 2) for m in (100, 30) for meth in ("zz", "a", "m")
            if rng.random() < 0.8]
    df = pd.DataFrame(rows)
    for keys in (["dataset"], ["dataset", "seed"], ["dataset", "kernel", "seed", "m"], ["m", "dataset"]):
        sub = df.drop_duplicates([*keys, "method"])
        got = stats._pivot(sub, "err", "method", keys)
        want = sub.pivot_table(index=keys, columns="method", values="err", aggfunc="first",
                               dropna=False).dropna(axis=0, how="all")
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        if len(keys) > 1:
            assert all(a.equals(b) and a.dtype == b.dtype for a, b in zip(got.index.levels, want.index.levels,
                                                                          strict=True))
    missing = df.astype({"kernel": object})
    missing.loc[0, "kernel"] = np.nan
    assert stats._pivot(missing, "err", "method", ["dataset", "kernel", "seed", "m"]) is None
    assert len(stats.pivot_pairs(missing, "err", block_cols=("dataset", "kernel", "seed", "m"), complete=False))


def test_nemenyi_friedman_equals_scikit_posthocs():
    """Our Nemenyi p-values are scikit-posthocs' bit for bit (complete matrices, with ties; and one with a
    missing value, which goes to scikit-posthocs itself)."""
    import scikit_posthocs as skp

    rng = np.random.default_rng(11)
    for n, k in ((2, 3), (5, 4), (12, 7), (40, 14)):
        values = np.round(rng.normal(size=(n, k)), 1)
        np.testing.assert_array_equal(stats.nemenyi_friedman(values), skp.posthoc_nemenyi_friedman(values).to_numpy())
    values[0, 0] = np.nan
    np.testing.assert_array_equal(stats.nemenyi_friedman(values), skp.posthoc_nemenyi_friedman(values).to_numpy())


def test_compare_pair_memo_gives_the_computed_result():
    """A pair tested again (same arrays and options) gets the result computed for it, as a fresh dict; other
    options or other values are tested anew."""
    rng = np.random.default_rng(5)
    a, b = rng.lognormal(size=30), rng.lognormal(size=30)
    stats._PAIR_MEMO.clear()
    first = stats.compare_pair(a, b)
    first["p"] = -1.0  # the caller's copy
    again = stats.compare_pair(list(a), b.copy())
    assert _same(again, stats._compare_pair(a, b, True, "auto", 0.95))
    assert again["p"] != -1.0
    np.testing.assert_array_equal(again["d"], np.log(stats.round_significant(a)) - np.log(stats.round_significant(b)))
    with pytest.raises(ValueError):  # the memo's array is shared: read-only
        again["d"][0] = 0.0
    assert stats.compare_pair(a, b, lower_is_better=False)["better"] == again["worse"]
    assert stats.compare_pair(a, b, effect="difference")["effect"] == "difference"
    b2 = b.copy()
    b2[0] *= 2
    assert _same(stats.compare_pair(a, b2), stats._compare_pair(a, b2, True, "auto", 0.95))


def _same(c, d):
    """Two compare_pair results equal, their per-block arrays included."""
    return c.keys() == d.keys() and all(
        np.array_equal(c[k], d[k]) if k == "d" else c[k] == d[k] or (c[k] != c[k] and d[k] != d[k]) for k in c)


def _frame(rng, n_sets=6, seeds=3):
    """Four methods on ``n_sets`` data sets: good < mid < bad by a constant factor, twin = good."""
    rows = []
    for ds in range(n_sets):
        scale = 10.0 ** ds  # data sets on very different scales: ratios, not differences
        for seed in range(seeds):
            base = scale * rng.uniform(1, 2)
            for method, factor in (("good", 1.0), ("mid", 1.3), ("bad", 2.0), ("twin", 1.0)):
                rows.append({"dataset": f"d{ds}", "kernel": "g", "seed": seed, "method": method,
                             "err": base * factor * (1 + 0.01 * rng.normal())})
    return pd.DataFrame(rows)


def test_pairwise_tests_match_scipy_and_holm(rng):
    df = _frame(rng)
    methods = ["good", "mid", "bad", "twin"]
    t = stats.pairwise_tests(df, "err", block_cols=("dataset", "kernel", "seed"), methods=methods)
    assert len(t) == 6 and (t["effect"] == "ratio").all()
    wide = stats.pivot_pairs(df, "err", block_cols=("dataset", "kernel", "seed"))
    r = t.set_index(["method", "versus"])
    d = np.log(wide["good"]) - np.log(wide["mid"])
    assert r.loc[("good", "mid"), "wilcoxon_p"] == pytest.approx(sps.wilcoxon(d).pvalue)
    np.testing.assert_allclose(t["p_holm"], stats.holm(t["wilcoxon_p"]))
    assert r.loc[("good", "mid"), "estimate"] == pytest.approx(1 / 1.3, rel=0.02)
    assert r.loc[("good", "mid"), "ci_low"] < r.loc[("good", "mid"), "estimate"] < r.loc[("good", "mid"), "ci_high"]
    assert r.loc[("good", "mid"), "outcome"] == "win" and r.loc[("mid", "bad"), "outcome"] == "win"
    assert r.loc[("good", "twin"), "outcome"] == "tie" and r.loc[("bad", "twin"), "outcome"] == "loss"
    assert r.loc[("good", "bad"), "better"] == 18 and r.loc[("good", "bad"), "worse"] == 0
    # higher is better flips the outcome; a metric with zeros is compared by differences
    flipped = stats.pairwise_tests(df, "err", block_cols=("dataset", "kernel", "seed"), lower_is_better=False,
                                   methods=methods).set_index(["method", "versus"])
    assert flipped.loc[("good", "mid"), "outcome"] == "loss"
    diff = stats.pairwise_tests(df.assign(err=df["err"] - df["err"].min()), "err",
                                block_cols=("dataset", "kernel", "seed"), methods=methods)
    assert (diff["effect"] == "difference").all()


def test_pairwise_without_shared_blocks_says_so(rng):
    df = _frame(rng, n_sets=2)
    bad = df["method"] == "bad"
    df.loc[bad, "dataset"] = "elsewhere_" + df.loc[bad, "dataset"]
    t = stats.pairwise_tests(df, "err", block_cols=("dataset", "kernel", "seed"))
    assert set(t.loc[(t["method"] == "bad") | (t["versus"] == "bad"), "outcome"]) == {"no pairs"}


def test_critical_difference_matches_scipy_friedman_and_demsar(rng):
    df = _frame(rng, n_sets=8, seeds=2)
    res = stats.critical_difference(df, "err", block_cols=("dataset", "kernel", "seed"), reference="bad",
                                    methods=["good", "mid", "bad", "twin"])
    # one block per data set: each data set's ranking is its mean rank over seeds
    ranks = df.assign(r=df.groupby(["dataset", "seed"])["err"].rank()).groupby(["dataset", "method"])["r"].mean()
    per_set = ranks.unstack("method")
    f = sps.friedmanchisquare(*[per_set[c] for c in per_set.columns])
    assert res["n_blocks"] == 8 and res["n_datasets"] == 8
    assert res["friedman_stat"] == pytest.approx(f.statistic) and res["friedman_p"] == pytest.approx(f.pvalue)
    assert list(res["mean_ranks"].index[-2:]) == ["mid", "bad"]
    # Demsar (2006), Table 5: q_0.05 = 2.569 for four methods; CD = q sqrt(k (k + 1) / 6N)
    assert res["cd"] == pytest.approx(2.569 * np.sqrt(4 * 5 / (6 * 8)), rel=1e-3)
    # Nemenyi p from the studentized range (SciPy), as scikit-posthocs computes it
    q = abs(res["mean_ranks"]["bad"] - res["mean_ranks"]["good"]) / np.sqrt(4 * 5 / (6 * 8))
    assert res["nemenyi"].loc["bad", "good"] == pytest.approx(sps.studentized_range.sf(q * np.sqrt(2), 4, np.inf))
    assert res["p_vs_reference_holm"]["good"] < 0.05 and "bad" not in res["p_vs_reference_holm"]
    table = stats.cd_table(res)
    back_ranks, back_p, _ = stats.read_cd(table, "err")
    assert back_ranks.to_dict() == pytest.approx(res["mean_ranks"].to_dict())
    assert back_p.loc["bad", "good"] == pytest.approx(res["nemenyi"].loc["bad", "good"], abs=1e-6)


def test_study_comparisons_need_four_data_sets(rng):
    wtl, cd = stats.study_comparisons(_frame(rng, n_sets=3), {"err": True})
    assert len(wtl) == 6 and cd.empty
    wtl, cd = stats.study_comparisons(_frame(rng, n_sets=4), {"err": True})
    assert len(cd) == 4 and json.loads(cd["nemenyi_p"].iloc[0])


def test_wtl_matrix_is_antisymmetric(rng):
    wtl = stats.pairwise_tests(_frame(rng), "err", block_cols=("dataset", "kernel", "seed"),
                               methods=["good", "mid", "bad", "twin"])
    text, outcome = report.wtl_matrix(wtl, "err", ["good", "mid", "bad", "twin"])
    assert list(text.index) == ["good", "mid", "bad", "twin"]
    assert outcome.loc["good", "mid"] == "win" and outcome.loc["mid", "good"] == "loss"
    assert float(text.loc["good", "bad"]) == pytest.approx(1 / float(text.loc["bad", "good"]), rel=0.01)
    assert text.loc["good", "W/T/L"] == "2/1/0" and text.loc["bad", "W/T/L"] == "0/0/3"


def _imports_of(path):
    """Every module a file imports, at module level or inside a function, as absolute dotted names."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("nystrom_bench." if node.level else "") + (node.module or "")
            names += [base] + [f"{base}.{a.name}".replace("..", ".") for a in node.names]
    return names


@pytest.mark.parametrize("module", ["report.py", "stats.py"])
def test_services_never_import_a_study(module):
    """DESIGN.md's layers: stats and report sit below the studies, inside functions too."""
    bad = [n for n in _imports_of(SRC / module) if "studies" in n.split(".")]
    assert not bad, f"{module} imports {bad}; pass the study's hooks in from the workflow script instead"


def test_differences_in_the_last_bits_are_ties_not_wins():
    # two methods computing the same numbers in another order: rounding noise must not be "significant"
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 2.0, size=40)
    noise = base * (1 + rng.choice([-1, 1], size=40) * rng.uniform(1e-15, 1e-12, size=40))
    noise[:30] = base[:30] * (1 - 1e-13)  # 30 of 40 "better" by rounding only
    df = pd.DataFrame({"method": ["a"] * 40 + ["b"] * 40, "dataset": "d", "seed": list(range(40)) * 2,
                       "m": np.concatenate([base, noise])})
    res = stats.paired_tests(df, "m", reference="a").iloc[0]
    assert res["wins"] == res["losses"] == 0 and res["wilcoxon_p"] == 1.0
    wtl = stats.pairwise_tests(df, "m")
    assert wtl["better"].iloc[0] == wtl["worse"].iloc[0] == 0 and wtl["wilcoxon_p"].iloc[0] == 1.0
    # a real difference of 1e-6 is still seen
    df.loc[df.method == "b", "m"] = base * (1 - 1e-6)
    assert stats.paired_tests(df, "m", reference="a").iloc[0]["wins"] == 40


def test_round_significant():
    v = stats.round_significant([1.23456789012, -0.000123456789012, 0.0, np.nan, np.inf, 0.99999999999])
    np.testing.assert_allclose(v[:3], [1.23456789, -0.000123456789, 0.0], rtol=1e-15)
    assert np.isnan(v[3]) and np.isinf(v[4]) and v[5] == 1.0
