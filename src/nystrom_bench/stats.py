"""Paired statistical tests between methods, as tidy tables.

Results are paired on the blocks they share (by default ``(dataset, kernel,
seed)``): method A and method B on the same split form one pair.
:func:`paired_tests` compares every method with a reference by the Wilcoxon
signed-rank test and the paired t-test, with Holm's correction over the
comparisons; :func:`friedman` tests whether any of three or more methods
differs.  :func:`study_tests` runs both for every metric of a study, once over
all results and once per value of the study's coordinates (grid axes such as
the number of landmarks ``m``); :func:`run_study_stats` is the workflow stage.

A comparison without a single pair is an error (:class:`NoPairsError`) that says
why -- e.g. a multiple-kernel method whose rows carry another kernel label than
the reference's never shares a ``(dataset, kernel, seed)`` block with it -- never
a silently empty table.

What a reader sees comes from two more analyses over every pair of methods
(:func:`study_comparisons`, written by the workflow as ``wtl.csv`` and ``cd.csv``):

- :func:`pairwise_tests` -- a win/tie/loss matrix: every pair of methods by the
  Wilcoxon signed-rank test on the paired results, Holm's correction over all pairs,
  and an effect size with a 95% confidence interval (:func:`hodges_lehmann`: the
  Hodges-Lehmann estimate and the distribution-free interval that inverts the same
  signed-rank test).  For a metric that is positive everywhere the pairs are log
  ratios and the effect a ratio (row / column): a study pools data sets whose errors
  differ by orders of magnitude, and on differences the data sets with the largest
  numbers would own every rank.
- :func:`critical_difference` -- Demsar's (JMLR 2006) comparison over data sets: the
  methods ranked within each data set, Friedman's test over the data sets, then the
  Nemenyi test between every pair (and Holm's step-down against the reference, the
  z-test of Demsar's section 3.2.2), for a critical-difference diagram.

Post-hoc tests: scikit-posthocs (:func:`scikit_posthocs.posthoc_nemenyi_friedman`, whose
operations :func:`nemenyi_friedman` repeats so that a job drawing no diagram need not import it,
and its ``critical_difference_diagram`` in :mod:`nystrom_bench.report`) rather than
autorank.  Both are maintained and both follow Demsar; autorank is a one-call
pipeline that picks the test itself (normality checks, then repeated-measures ANOVA
+ Tukey or Friedman + Nemenyi) from the data, its CD diagram drawn only for the
non-parametric branch, and it offers neither a Holm comparison with a reference nor
a diagram of a significance matrix we computed; scikit-posthocs gives the single
tests as functions over a block x method matrix -- the one we already build -- and
draws a CD diagram from any p-value matrix.  Friedman's test is SciPy's own; Wilcoxon's
is SciPy's too (:func:`wilcoxon`), except that the exact permutation null of a small tied
sample is counted by subset sums instead of SciPy's 2**n statistic calls -- the same p and
statistic bit for bit, which the tests check against :func:`scipy.stats.wilcoxon`.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["holm", "compare_pair", "wilcoxon", "PERMUTATION_MAX_PAIRS", "paired_tests", "friedman", "pivot_pairs", "round_significant", "SIGNIFICANT_DIGITS", "study_tests",
           "run_study_stats", "NoPairsError",
           "ALL", "hodges_lehmann", "pairwise_tests", "critical_difference", "cd_table", "read_cd", "study_comparisons",
           "MIN_CD_DATASETS", "nemenyi_friedman"]

#: the scope label of a test over every coordinate value at once
ALL = "all"


class NoPairsError(ValueError):
    """A paired comparison that has no pair at all; the message says why and how to fix it."""


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adj[i] = min(1.0, running)
    return adj


def _check_unique(df, method_col, block_cols, metric):
    dup = df.duplicated([*block_cols, method_col], keep=False)
    if dup.any():
        first = df.loc[dup, [*block_cols, method_col]].iloc[0].to_dict()
        raise ValueError(
            f"paired test on {metric!r}: several results share the block {first}; the blocks "
            f"{list(block_cols)} do not identify a result (add the study's coords to the blocks)")


#: results equal to this many significant digits are ties in every test and ranking
SIGNIFICANT_DIGITS = 9


def round_significant(values, digits=SIGNIFICANT_DIGITS):
    """``values`` rounded to ``digits`` significant digits (0, NaN and inf unchanged).

    Two methods that compute the same number in different orders (LLA and NCR at full rank, a float32
    path refined to a tolerance) differ in the last bits, and on another CPU in other bits: a signed-rank
    test counts those differences as wins and losses and can call rounding noise significant (seen:
    LLA vs NCR on integration_krr, 112 of 144 pairs equal to 1e-9, p = 0.045 on one CPU and 0.67 on
    another).  Rounding first makes them ties, which every test here then drops or shares.
    """
    v = np.asarray(values, dtype=np.float64)
    out = v.copy()
    ok = np.isfinite(v) & (v != 0)
    exp10 = np.floor(np.log10(np.abs(v[ok])))
    scale = 10.0 ** (exp10 - (digits - 1))
    out[ok] = np.round(v[ok] / scale) * scale
    return out


def pivot_pairs(df, metric, method_col="method", block_cols=("dataset", "seed"), complete=True):
    """Wide table: one row per block, one column per method (``complete``: only blocks every method has).

    Rows whose ``metric`` is missing are ignored; two results in one block and method
    are an error (they would be averaged silently).  Values are rounded to
    ``SIGNIFICANT_DIGITS`` (:func:`round_significant`): differences in the last bits are ties.
    """
    df = df[df[metric].notna()]
    _check_unique(df, method_col, block_cols, metric)
    wide = _pivot(df, metric, method_col, list(block_cols))
    if wide is None:  # a missing block value: pandas' pivot table (its groups keep NaN keys)
        wide = df.pivot_table(index=list(block_cols), columns=method_col, values=metric, aggfunc="first",
                              dropna=False)
        wide = wide.dropna(axis=0, how="all")
    wide = pd.DataFrame(round_significant(wide.to_numpy(dtype=np.float64)), index=wide.index, columns=wide.columns)
    return wide.dropna(axis=0, how="any") if complete else wide


def _pivot(df, metric, method_col, keys):
    """``df.pivot_table(index=keys, columns=method_col, values=metric, aggfunc="first", dropna=False)`` less
    its empty rows, for unique ``(keys, method)`` rows without a missing key: each column factorized in sorted
    order, the blocks in the order of their codes (pandas' sorted groups), one value per cell; the same frame
    (index levels, names and dtypes) at a fraction of the time.  None where a key is missing."""
    cols = [*keys, method_col]
    if not len(df) or any(df[c].isna().any() for c in cols):
        return None
    factored = [pd.factorize(df[c], sort=True) for c in cols]
    codes = [np.asarray(f[0], dtype=np.int64) for f in factored]
    levels = [f[1] for f in factored]
    row, inverse = np.unique(np.ravel_multi_index(codes[:-1], [len(u) for u in levels[:-1]]), return_inverse=True)
    values = np.full((len(row), len(levels[-1])), np.nan)
    values[inverse, codes[-1]] = df[metric].to_numpy(dtype=np.float64)
    if len(keys) == 1:
        index = pd.Index(levels[0].take(row), name=keys[0])
    else:
        index = pd.MultiIndex(levels=levels[:-1], codes=list(np.unravel_index(row, [len(u) for u in levels[:-1]])),
                              names=keys)
    return pd.DataFrame(values, index=index, columns=pd.Index(levels[-1], name=method_col))


def _columns(wide):
    """``{method: its column of a wide table as a float64 array}`` (a pair's rows are picked from these)."""
    return {c: wide[c].to_numpy(dtype=np.float64) for c in wide.columns}


def _both(x, y):
    """The rows where both ``x`` and ``y`` have a value, in order (as ``wide[[a, b]].dropna()``)."""
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def _no_pairs_reason(df, method, reference, method_col, block_cols, metric):
    a, b = df[df[method_col] == method], df[df[method_col] == reference]
    if len(b) == 0:
        present = ", ".join(map(str, sorted(df[method_col].unique(), key=str)))
        return (f"reference method {reference!r} has no results for {metric!r} (methods with results: {present}); "
                "set 'reference:' to one of them")
    def values(rows, c):
        return {str(v) for v in rows[c].tolist()}  # NaN included, as 'nan'

    differ = [c for c in block_cols if not values(a, c) & values(b, c)]
    if differ:
        c = differ[0]
        return (f"{method!r} and the reference {reference!r} share no block: their {c!r} values differ "
                f"({method}: {', '.join(sorted(values(a, c)))}; {reference}: "
                f"{', '.join(sorted(values(b, c)))}); a study whose methods differ in {c!r} must "
                f"block on the other columns (Study.block_cols without {c!r})")
    return (f"{method!r} and the reference {reference!r} share no complete block over {list(block_cols)}; "
            "run them on the same data sets, kernels and seeds")


def compare_pair(a, b, lower_is_better=True, effect="auto", confidence=0.95):
    """The paired comparison of ``a`` against ``b`` (one value each per block): the one test every
    verdict, table and ranking of this project runs.

    The unit is a block (a data set x seed, and a coordinate where the comparison is per coordinate).
    ``effect="ratio"`` (``"auto"`` picks it when every value is positive) tests the log-ratio
    ``log(a / b)`` per block, so that no data set dominates by its units (an MSE of 4,000 and one of 20
    count alike); ``"difference"`` tests ``a - b`` (for metrics that can be zero or negative, and are
    already on one scale everywhere: slopes, R^2, distances in log2 gamma).  Values are rounded to
    :data:`SIGNIFICANT_DIGITS` first, so that rounding noise is a tie.

    Returns a dict: ``n_pairs``; ``d``, the per-block effect tested (the log-ratios or differences of the
    rounded values, pairs with a NaN dropped; read-only); ``better``/``worse`` (blocks where ``a`` beats / loses to ``b``);
    ``effect`` (``"ratio"`` or ``"difference"``); ``estimate`` with ``ci_low``/``ci_high`` -- the
    Hodges-Lehmann estimate of the median log-ratio (back-transformed: a ratio ``a / b``) or of the
    median difference, and the ``confidence`` interval that inverts the same signed-rank test
    (:func:`hodges_lehmann`; NaN with fewer than six pairs at 95%); ``p`` -- SciPy's two-sided Wilcoxon
    signed-rank test (zeros dropped, ``zero_method="wilcox"``; 1.0 when every pair is tied or there is
    one pair) and its ``statistic``.
    """
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    # a study's stats, its answers and its claims test many pairs more than once (the paired tests against the
    # reference are pairs of the win/tie/loss matrix too): the same arrays and options give the result again
    key = (a.tobytes(), b.tobytes(), a.shape, b.shape, bool(lower_is_better), effect, float(confidence))
    got = _PAIR_MEMO.get(key)
    if got is None:
        got = _compare_pair(a, b, lower_is_better, effect, confidence)
        if len(_PAIR_MEMO) >= _PAIR_MEMO_SIZE:
            _PAIR_MEMO.clear()
        _PAIR_MEMO[key] = got
    return dict(got)


#: :func:`compare_pair`'s results by their inputs (cleared when full)
_PAIR_MEMO = {}
_PAIR_MEMO_SIZE = 1024


def _compare_pair(a, b, lower_is_better, effect, confidence):
    """:func:`compare_pair` itself (float64 arrays in)."""
    a = round_significant(a)
    b = round_significant(b)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if effect == "auto":
        effect = "ratio" if len(a) and np.all(a > 0) and np.all(b > 0) else "difference"
    if effect == "ratio":
        if len(a) and not (np.all(a > 0) and np.all(b > 0)):
            raise ValueError("a ratio effect needs positive values; use effect='difference'")
        d = np.log(a) - np.log(b)
    elif effect == "difference":
        d = a - b
    else:
        raise ValueError(f"effect must be 'auto', 'ratio' or 'difference', not {effect!r}")
    d.flags.writeable = False  # shared by every copy the memo hands out
    out = {"n_pairs": len(d), "d": d, "better": int(((d < 0) if lower_is_better else (d > 0)).sum()),
           "worse": int(((d > 0) if lower_is_better else (d < 0)).sum()), "effect": effect,
           "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "statistic": np.nan}
    if len(d) == 0:
        return out
    est, lo, hi = hodges_lehmann(d, confidence)
    if effect == "ratio":
        est, lo, hi = np.exp(est), np.exp(lo), np.exp(hi)
    nonzero = d[d != 0]
    out["p"] = 1.0
    if len(nonzero) >= 2:
        out["p"], out["statistic"] = wilcoxon(nonzero)
    out.update(estimate=float(est), ci_low=float(lo), ci_high=float(hi))
    return out


#: SciPy's ``wilcoxon(method="auto")`` runs an exact permutation test on this many tied pairs or fewer
#: (``scipy.stats.wilcoxon``, SciPy 1.15 and later; before, the normal approximation)
PERMUTATION_MAX_PAIRS = 13


@functools.lru_cache(maxsize=1)
def _scipy_permutes_ties():
    """Whether the installed SciPy's ``wilcoxon(method="auto")`` tests small tied samples by permutation (1.15+)."""
    import scipy

    major, minor = (int(x) for x in scipy.__version__.split(".")[:2])
    return (major, minor) >= (1, 15)


def wilcoxon(d):
    """SciPy's two-sided Wilcoxon signed-rank test of the differences ``d`` (no zeros, two or more):
    ``(p, statistic)``, the numbers of ``scipy.stats.wilcoxon(d, zero_method="wilcox")``.

    With ties among ``|d|`` and at most :data:`PERMUTATION_MAX_PAIRS` differences, SciPy (1.15 and later,
    ``method="auto"``) computes an exact permutation test: its statistic ``T+`` (the sum of the average
    ranks of ``|d|`` over the positive differences) under all ``2**n`` sign flips of ``d``, one Python
    evaluation each (``scipy.stats.permutation_test``), and ``p = min(P(T+ <= t), P(T+ >= t)) * 2`` clipped
    to 1.  Here the same null distribution is counted exactly: twice the average ranks are integers, so
    the number of sign flips that give each value of ``2 T+`` is a subset-sum count (one array pass per
    difference), and each tail is that count over ``2**n`` -- the fractions SciPy forms, to the bit (the
    tests compare both on many tied samples).  Every other sample goes to SciPy.  Wilcoxon, Biometrics
    Bulletin 1945; the permutation form: Pratt & Gibbons, Concepts of Nonparametric Theory (1981), 4.
    """
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n <= PERMUTATION_MAX_PAIRS and _scipy_permutes_ties():
        a = np.abs(d)
        order = np.argsort(a, kind="stable")
        sa = a[order]
        if (sa[1:] == sa[:-1]).any():  # ties: SciPy's permutation test
            return _wilcoxon_permutation(d, sa, order)
    from scipy import stats as sps

    w = sps.wilcoxon(d, zero_method="wilcox")
    return float(w.pvalue), float(w.statistic)


def _wilcoxon_permutation(d, sorted_abs, order):
    """:func:`wilcoxon`'s exact permutation test (``sorted_abs = |d|[order]``, ascending, tied)."""
    n = len(d)
    first = np.r_[True, sorted_abs[1:] != sorted_abs[:-1]]
    starts = np.flatnonzero(first)
    counts = np.diff(np.r_[starts, n])
    twice = np.repeat(2 * (starts + 1) + counts - 1, counts)  # twice the average rank, in sorted order
    ranks2 = np.empty(n, dtype=np.int64)
    ranks2[order] = twice
    t_plus2 = int(ranks2[d > 0].sum())
    t_minus2 = int(ranks2[d < 0].sum())
    ways = np.zeros(int(ranks2.sum()) + 1, dtype=np.int64)  # sign flips per value of 2 T+
    ways[0] = 1
    for r in ranks2:
        ways[r:] = ways[r:] + ways[:-r]  # the new array first: each difference flips once
    total = 2 ** n
    less = float(ways[: t_plus2 + 1].sum()) / total
    greater = float(ways[t_plus2:].sum()) / total
    p = min(max(min(less, greater) * 2, 0.0), 1.0)
    return p, min(t_plus2, t_minus2) / 2


def paired_tests(df, metric, reference, method_col="method", block_cols=("dataset", "seed"),
                 lower_is_better=True, effect="auto", confidence=0.95):
    """Compare each method against ``reference`` on ``metric``, paired over ``block_cols``.

    Each method is paired with the reference on the blocks both have, by :func:`compare_pair`:
    on log-ratios where the metric is positive in every row (``effect="auto"``), else on differences.

    Returns
    -------
    DataFrame with one row per other method: ``n_pairs``, ``median_diff`` (the median of method
    minus reference, in the metric's units), ``wins``/``losses`` (method better/worse than the
    reference), ``effect`` (``ratio`` or ``difference``), ``estimate``/``ci_low``/``ci_high`` (the
    Hodges-Lehmann ratio method / reference, or difference, with its ``confidence`` interval),
    ``wilcoxon_stat``, ``wilcoxon_p`` (on the log-ratios or differences), ``ttest_p`` (paired t-test
    on the same) and Holm-adjusted ``wilcoxon_p_holm``.

    Raises
    ------
    NoPairsError
        If the reference has no result, or a method shares no block with it.
    """
    df = df[df[metric].notna()]
    if effect == "auto":
        effect = "ratio" if _positive(df, metric) else "difference"
    wide = pivot_pairs(df, metric, method_col, block_cols, complete=False)
    if reference not in wide.columns:
        raise NoPairsError(_no_pairs_reason(df, None, reference, method_col, block_cols, metric))
    rows = []
    col = _columns(wide)
    for method in [c for c in wide.columns if c != reference]:
        a, b = _both(col[method], col[reference])
        if len(a) == 0:
            raise NoPairsError(_no_pairs_reason(df, method, reference, method_col, block_cols, metric))
        c = compare_pair(a, b, lower_is_better, effect, confidence)
        d = np.log(a) - np.log(b) if effect == "ratio" else a - b
        row = {
            "metric": metric, "method": method, "reference": reference, "n_pairs": c["n_pairs"],
            "median_diff": float(np.median(a - b)), "wins": c["better"], "losses": c["worse"],
            "effect": effect, "estimate": c["estimate"], "ci_low": c["ci_low"], "ci_high": c["ci_high"],
            "wilcoxon_stat": c["statistic"], "wilcoxon_p": c["p"], "ttest_p": np.nan,
        }
        if np.count_nonzero(d) >= 2 and np.std(d) > 0:
            row["ttest_p"] = float(sps.ttest_1samp(d, 0.0).pvalue)
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["wilcoxon_p_holm"] = holm(out["wilcoxon_p"])
    return out


def friedman(df, metric, method_col="method", block_cols=("dataset", "seed"), lower_is_better=True):
    """Friedman test over all methods plus their mean ranks (1 = best). Needs >= 3 methods.

    Only blocks where every method has a result count; returns None with fewer than
    three methods or two blocks.
    """
    wide = pivot_pairs(df, metric, method_col, block_cols)
    if wide.shape[1] < 3 or len(wide) < 2:
        return None
    vals = wide.to_numpy() if lower_is_better else -wide.to_numpy()
    ranks = pd.DataFrame(sps.rankdata(vals, axis=1), columns=wide.columns).mean()
    res = sps.friedmanchisquare(*[wide[c].to_numpy() for c in wide.columns])
    return {"metric": metric, "statistic": float(res.statistic), "p": float(res.pvalue),
            "n_blocks": len(wide), "mean_ranks": ranks.sort_values().to_dict()}


def _scope_label(coords, values):
    from .results import format_coord

    return ", ".join(f"{c}={format_coord(v)}" for c, v in zip(coords, values, strict=True))


def scopes(df, coords, by=None):
    """``[(label, rows, extra block coords)]``: all rows, then one group per combination of the
    coords that vary in ``df`` (coords that are empty in every row are ignored).

    ``by`` (a subset of ``coords``) limits the groups to those coords; the other varying
    coords then stay part of each group's blocks (e.g. one scope per criterion, paired over
    data set, seed *and* width)."""
    varying = [c for c in coords if c in df and df[c].notna().any() and df[c].nunique() > 1]
    split = varying if by is None else [c for c in varying if c in by]
    rest = [c for c in varying if c not in split]
    out = [(ALL, df, varying)]
    if split:
        for values, sub in df.groupby(split, sort=True):
            values = values if isinstance(values, tuple) else (values,)
            out.append((_scope_label(split, values), sub, rest))
    return out


def study_tests(df, metrics, reference=None, coords=(), block_cols=("dataset", "kernel", "seed"),
                method_col="method", scope_coords=None):
    """Paired tests against ``reference`` and Friedman tests for every metric, overall and per coord value.

    Parameters
    ----------
    df : DataFrame
        Result rows: ``method_col``, ``block_cols``, ``coords`` and one column per metric.
    metrics : dict
        ``{metric: lower_is_better}``.
    reference : str or None
        No paired tests without one (Friedman tests still run).
    coords : sequence of str
        The study's grid axes. Over all rows ("all") a block is ``block_cols`` plus the
        coords; per coord value it is ``block_cols`` (plus the coords not in ``scope_coords``).
    scope_coords : sequence of str, optional
        The coords that get scopes of their own (None: all of them; see :func:`scopes`).

    Returns
    -------
    (paired, friedman) : two DataFrames with a ``scope`` column ("all" or e.g. "m=300").
        Holm's correction runs within each (metric, scope).
    """
    paired, fried = [], []
    for metric, lower in metrics.items():
        if metric not in df or df[metric].notna().sum() == 0:
            continue
        rows = df[df[metric].notna()]
        for label, sub, extra_blocks in scopes(rows, coords, scope_coords):
            blocks = (*block_cols, *extra_blocks)
            if reference is not None:
                t = paired_tests(sub, metric, reference, method_col, blocks, lower)
                if len(t):
                    t.insert(1, "scope", label)
                    paired.append(t)
            f = friedman(sub, metric, method_col, blocks, lower)
            if f:
                fried.append({"metric": metric, "scope": label,
                              **{k: v for k, v in f.items() if k not in ("metric", "mean_ranks")},
                              "mean_ranks": json.dumps(f["mean_ranks"])})
    paired_df = pd.concat(paired, ignore_index=True) if paired else pd.DataFrame(
        columns=["metric", "scope", "method", "reference", "n_pairs", "median_diff", "wins", "losses",
                 "effect", "estimate", "ci_low", "ci_high", "wilcoxon_stat", "wilcoxon_p", "ttest_p", "wilcoxon_p_holm"])
    fried_df = pd.DataFrame(fried, columns=["metric", "scope", "statistic", "p", "n_blocks", "mean_ranks"])
    return paired_df, fried_df


#: a study needs this many data sets for a critical-difference analysis (Demsar's blocks)
MIN_CD_DATASETS = 4

_WTL_COLUMNS = ["metric", "method", "versus", "n_pairs", "better", "worse", "effect", "estimate", "ci_low",
                "ci_high", "wilcoxon_p", "p_holm", "outcome"]
_CD_COLUMNS = ["metric", "method", "mean_rank", "n_blocks", "n_datasets", "friedman_stat", "friedman_p", "cd",
               "reference", "p_vs_reference_holm", "nemenyi_p"]


def _signed_rank_cdf(n):
    """``P(T+ <= t)``, t = 0 .. n(n+1)/2, of the signed-rank statistic of ``n`` untied pairs under H0 (a copy of
    the cached :func:`_signed_rank_cdf_cached`: a study's tests ask for the same ``n`` many times)."""
    return _signed_rank_cdf_cached(int(n)).copy()


@functools.lru_cache(maxsize=64)
def _signed_rank_cdf_cached(n):
    """:func:`_signed_rank_cdf`, computed once per ``n`` (read-only)."""
    f = np.zeros(n * (n + 1) // 2 + 1)
    f[0] = 1.0
    top = 0
    for i in range(1, n + 1):  # rank i joins with sign + or - (probability 1/2 each)
        shifted = f[: top + 1].copy()
        f[: top + 1] *= 0.5
        f[i: i + top + 1] += 0.5 * shifted
        top += i
    out = np.cumsum(f)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8)
def _upper_mask(n):
    """The ``n x n`` boolean mask of ``i <= j`` (read-only, cached per ``n``)."""
    mask = np.triu(np.ones((n, n), dtype=bool))
    mask.flags.writeable = False
    return mask


def hodges_lehmann(d, confidence=0.95):
    """Hodges-Lehmann estimate of the centre of paired differences ``d`` and its confidence interval.

    The estimate is the median of the Walsh averages ``(d_i + d_j) / 2, i <= j``; the interval
    ``[W_(c+1), W_(M-c)]`` of the sorted ``M`` Walsh averages, with ``c`` the largest ``t`` with
    ``P(T+ <= t) <= (1 - confidence) / 2`` under the signed-rank null (exact up to 400 pairs, the
    normal approximation beyond).  It is the set of shifts the two-sided Wilcoxon signed-rank test
    does not reject (Hollander & Wolfe, Nonparametric Statistical Methods, section 3.2).  Fewer than
    six pairs give no 95% interval: the bounds are then NaN.  The order statistics are selected, not
    sorted, and for many pairs only from a band of the averages (:func:`_walsh_order_statistics`): the same
    floats either way.

    Returns ``(estimate, low, high)``.
    """
    d = np.asarray(d, dtype=float)
    n = len(d)
    if n == 0:
        return np.nan, np.nan, np.nan
    m = n * (n + 1) // 2
    tail = (1.0 - confidence) / 2.0
    if n <= 400:
        cdf = _signed_rank_cdf_cached(n)
        c = int(np.searchsorted(cdf, tail, side="right")) - 1  # largest t with P(T <= t) <= tail
    else:
        mean, sd = n * (n + 1) / 4.0, np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        c = int(np.floor(mean + sps.norm.ppf(tail) * sd))
    # order statistics by selection, not a full sort: the median's one or two middle values and the interval's
    # W_(c+1), W_(M-c) (the same values a sort puts there; np.median averages the middle two as before)
    kth = sorted({(m - 1) // 2, m // 2} | ({c, m - 1 - c} if c >= 0 else set()))
    if np.isfinite(d).all():  # (a NaN: np.median's NaN, below)
        got = _walsh_order_statistics(d, kth)
        est = float(np.median(np.array([got[(m - 1) // 2], got[m // 2]][: 2 - m % 2])))
    else:
        walsh = np.partition(((d[:, None] + d[None, :]) / 2.0)[_upper_mask(n)], kth)
        got, est = walsh, float(np.median(walsh))
    if c < 0:
        return est, np.nan, np.nan
    return est, float(got[c]), float(got[m - 1 - c])


#: below this many Walsh averages :func:`_walsh_order_statistics` forms them all (their band would save little)
WALSH_ALL = 40_000


def _walsh_order_statistics(d, kth):
    """``{k: the k-th smallest Walsh average (d_i + d_j) / 2, i <= j}`` for the sorted ranks ``kth`` (0-based).

    Up to :data:`WALSH_ALL` averages: all of them, partitioned.  Beyond, only a band: with ``a = sort(d)`` the
    averages form an upper triangle sorted along its rows and columns (rounding is monotone), so the number
    below any value is one boundary per row, found by ``searchsorted`` and corrected to the exact rounded
    averages; a value below the smallest wanted rank and one above the largest (quantiles of the averages of
    an evenly spaced subsample, with a margin) bound the band, whose averages alone are formed and
    partitioned (the idea of Monahan, ACM TOMS 1984, Algorithm 616: select in the sorted Walsh matrix rather
    than form it).  Where the bounds miss or the band is large (many ties), all averages are formed.  Either
    way the values are the same floats, computed by the same ``(d_i + d_j) / 2.0``.
    """
    n = len(d)
    m = n * (n + 1) // 2
    if m > WALSH_ALL:
        got = _walsh_band(np.sort(d), kth, m)
        if got is not None:
            return got
    walsh = ((d[:, None] + d[None, :]) / 2.0)[_upper_mask(n)]  # row by row of the upper triangle (i <= j)
    walsh = np.partition(walsh, kth)
    return {k: walsh[k] for k in kth}


def _walsh_band(a, kth, m, sample=100, margin=0.01):
    """:func:`_walsh_order_statistics` by a band of the sorted Walsh matrix of ``a`` (sorted), or None."""
    n = len(a)
    pick = a[np.unique(np.linspace(0, n - 1, sample).round().astype(np.int64))]
    near = ((pick[:, None] + pick[None, :]) / 2.0)[_upper_mask(len(pick))]
    last = len(near) - 1
    at = [max(int((kth[0] / (m - 1) - margin) * last), 0), min(int(np.ceil((kth[-1] / (m - 1) + margin) * last)), last)]
    near = np.partition(near, at)
    low, high = near[at[0]], near[at[1]]
    rows = np.arange(n)
    start = _walsh_row_ends(a, rows, low, strict=True)  # per row, the first column whose average is >= low
    stop = _walsh_row_ends(a, rows, high, strict=False)  # ... > high
    if start is None or stop is None:
        return None
    below = int((start - rows).sum())
    lengths = stop - start
    size = int(lengths.sum())
    if below > kth[0] or below + size < kth[-1] + 1 or size > m // 3:
        return None
    i = np.repeat(rows, lengths)
    j = np.arange(size) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(start, lengths)
    band = np.partition((a[i] + a[j]) / 2.0, [k - below for k in kth])
    return {k: band[k - below] for k in kth}


def _walsh_row_ends(a, rows, x, strict):
    """Per row ``i`` of the sorted Walsh matrix of ``a``, the first column ``j >= i`` whose average is ``>= x``
    (``strict``) or ``> x``; None where the threshold overflows."""
    n = len(a)
    t = 2.0 * x - a
    if not np.isfinite(t).all():
        return None
    end = np.clip(np.searchsorted(a, t, side="left" if strict else "right"), rows, n)
    inside = np.less if strict else np.less_equal  # an average inside: below the boundary
    while True:  # the rounded averages decide: step over runs of equal values until every boundary holds
        ahead = end < n
        fwd = np.flatnonzero(ahead)[inside((a[rows[ahead]] + a[end[ahead]]) / 2.0, x)]
        back_ok = end > rows
        back = np.flatnonzero(back_ok)[~inside((a[rows[back_ok]] + a[end[back_ok] - 1]) / 2.0, x)]
        if not len(fwd) and not len(back):
            return end
        end[fwd] = np.searchsorted(a, a[end[fwd]], side="right")
        end[back] = np.maximum(np.searchsorted(a, a[end[back] - 1], side="left"), rows[back])


def _positive(df, metric):
    v = df[metric].dropna()
    return bool(len(v)) and bool((v > 0).all())


def pairwise_tests(df, metric, method_col="method", block_cols=("dataset", "seed"), lower_is_better=True,
                   methods=None, effect="auto", alpha=0.05, confidence=0.95):
    """Every pair of methods on ``metric``, paired over ``block_cols``: the win/tie/loss table.

    For each pair (``method``, ``versus``), ``method`` listed first in ``methods`` (default: the
    order of appearance): the Wilcoxon signed-rank test (two-sided, SciPy's) over the blocks both
    have, Holm's correction over all pairs, and the Hodges-Lehmann effect with its
    ``confidence`` interval (:func:`hodges_lehmann`).  ``effect``: ``"ratio"`` (test and effect on
    log ratios; the effect is ``method / versus``), ``"difference"`` (``method - versus``), or
    ``"auto"`` (ratio if every value of the metric is positive).

    Returns a DataFrame (columns :data:`_WTL_COLUMNS`): ``better``/``worse`` count the pairs where
    ``method`` beats / loses to ``versus``; ``outcome`` is ``win``, ``loss`` (Holm-adjusted
    p < ``alpha``, by the sign of the effect) or ``tie``, and ``no pairs`` where the two never share
    a block (a reference-free matrix holds pairs nobody asked about; :func:`paired_tests` is the
    one that raises).
    """
    df = df[df[metric].notna()]
    if effect == "auto":
        effect = "ratio" if _positive(df, metric) else "difference"
    wide = pivot_pairs(df, metric, method_col, block_cols, complete=False)
    order = [m for m in (methods or []) if m in wide.columns]
    order += [m for m in dict.fromkeys(df[method_col]) if m not in order]
    rows = []
    col = _columns(wide)
    for a_i, a in enumerate(order):
        for b in order[a_i + 1:]:
            c = compare_pair(*_both(col[a], col[b]), lower_is_better, effect, confidence)
            rows.append({"metric": metric, "method": a, "versus": b, "n_pairs": c["n_pairs"], "effect": effect,
                         "better": c["better"], "worse": c["worse"], "estimate": c["estimate"],
                         "ci_low": c["ci_low"], "ci_high": c["ci_high"],
                         "wilcoxon_p": c["p"] if c["n_pairs"] else np.nan})
    out = pd.DataFrame(rows, columns=[c for c in _WTL_COLUMNS if c not in ("p_holm", "outcome")])
    tested = out["wilcoxon_p"].notna()
    out["p_holm"] = np.nan
    if tested.any():
        out.loc[tested, "p_holm"] = holm(out.loc[tested, "wilcoxon_p"])
    centre = 1.0 if effect == "ratio" else 0.0

    def outcome(r):
        if r["n_pairs"] == 0:
            return "no pairs"
        if not r["p_holm"] < alpha:
            return "tie"
        a_better = (r["estimate"] < centre) if lower_is_better else (r["estimate"] > centre)
        if r["estimate"] == centre:  # significant, centre exactly at no effect: go by the counts
            a_better = r["better"] > r["worse"]
        return "win" if a_better else "loss"

    out["outcome"] = out.apply(outcome, axis=1) if len(out) else pd.Series(dtype=str)
    return out[_WTL_COLUMNS]


def critical_difference(df, metric, method_col="method", block_cols=("dataset", "kernel", "seed"), coords=(),
                        lower_is_better=True, reference=None, alpha=0.05, methods=None):
    """Demsar's (2006) comparison of several methods over data sets, for a critical-difference diagram.

    A block of the Friedman test is a data set (with its kernel where ``block_cols`` has one):
    ``block_cols`` without ``seed``.  Within it, the methods are ranked (1 = best) in every cell
    of seed x coords where all of them have a result, and each method's ranks are averaged: that is
    the data set's ranking.  Then SciPy's Friedman test over the data sets, the Nemenyi test for
    every pair (scikit-posthocs), the Nemenyi critical difference ``q_alpha sqrt(k (k+1) / 6N)``,
    and -- given a ``reference`` -- Holm's step-down over the z-tests of each method against it.

    Returns None with fewer than three methods or two complete blocks, else a dict: ``mean_ranks``
    (Series, 1 = best, sorted), ``n_blocks``, ``n_datasets``, ``friedman_stat``, ``friedman_p``,
    ``cd``, ``nemenyi`` (DataFrame of p-values; all 1 when Friedman's p >= ``alpha``: no post-hoc
    test after a non-significant omnibus test), ``p_vs_reference_holm`` (dict) and ``reference``.
    """
    df = df[df[metric].notna()]
    varying = [c for c in coords if c in df and df[c].notna().any() and df[c].nunique() > 1]
    cell = [*block_cols, *varying]
    group = [c for c in block_cols if c != "seed"]
    wide = pivot_pairs(df, metric, method_col, cell)  # complete cells only
    if wide.shape[1] < 3 or len(wide) < 2:
        return None
    order = [m for m in (methods or []) if m in wide.columns] + [m for m in wide.columns
                                                                 if m not in (methods or [])]
    wide = wide[order]
    vals = wide.to_numpy() if lower_is_better else -wide.to_numpy()
    ranks = pd.DataFrame(sps.rankdata(vals, axis=1), index=wide.index, columns=wide.columns)
    per_block = ranks.groupby(level=group).mean()  # each data set's ranking: its mean rank per method
    if len(per_block) < 2:
        return None
    n, k = per_block.shape
    res = sps.friedmanchisquare(*[per_block[c].to_numpy() for c in per_block.columns])
    block_ranks = pd.DataFrame(sps.rankdata(per_block.to_numpy(), axis=1), columns=per_block.columns)
    mean_ranks = block_ranks.mean().sort_values()
    nemenyi = pd.DataFrame(nemenyi_friedman(per_block.to_numpy()), index=per_block.columns, columns=per_block.columns)
    if not res.pvalue < alpha:
        nemenyi.loc[:, :] = 1.0
    q = sps.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2.0)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    vs_ref = {}
    if reference is not None and reference in mean_ranks:
        others = [m for m in mean_ranks.index if m != reference]
        z = [(mean_ranks[m] - mean_ranks[reference]) / se for m in others]
        p = holm([2 * sps.norm.sf(abs(v)) for v in z])
        vs_ref = dict(zip(others, map(float, p), strict=True))
    n_datasets = per_block.index.get_level_values("dataset").nunique() if "dataset" in group else n
    return {"metric": metric, "mean_ranks": mean_ranks, "n_blocks": int(n), "n_datasets": int(n_datasets),
            "friedman_stat": float(res.statistic), "friedman_p": float(res.pvalue), "cd": float(q * se),
            "nemenyi": nemenyi, "p_vs_reference_holm": vs_ref, "reference": reference}


def nemenyi_friedman(values):
    """The Nemenyi test of every pair of columns of a complete block x method matrix ``values`` (Demsar, JMLR
    2006, section 3.2.2): the methods ranked within each block (ties averaged), the difference of two mean
    ranks over ``sqrt(k (k + 1) / 6N)``, and its p-value from the studentized range with infinite degrees of
    freedom (SciPy's).  Returns the ``k x k`` array of p-values (1 on the diagonal).

    The same computation as scikit-posthocs' ``posthoc_nemenyi_friedman`` on a complete matrix, operation for
    operation (the tests check the numbers are equal), without importing scikit-posthocs (with statsmodels and
    seaborn) into a job that draws no critical-difference diagram.  A matrix with a missing value goes to
    scikit-posthocs, which drops the incomplete blocks.
    """
    values = np.asarray(values)
    if np.isnan(values).any():
        import scikit_posthocs as skp

        return skp.posthoc_nemenyi_friedman(values).to_numpy()
    n, k = values.shape
    ranks = sps.rankdata(values, axis=1, method="average")
    mean_ranks = ranks.mean(axis=0)
    vs = np.zeros((k, k))
    upper = np.triu_indices(k, 1)
    lower = np.tril_indices(k, -1)
    differences = np.abs(mean_ranks[upper[0]] - mean_ranks[upper[1]])
    q_values = differences / np.sqrt(k * (k + 1.0) / (6.0 * n))
    vs[upper] = sps.studentized_range.sf(q_values * np.sqrt(2.0), k, np.inf)
    vs[lower] = vs.T[lower]
    np.fill_diagonal(vs, 1)
    return vs


def cd_table(result):
    """A :func:`critical_difference` result as rows (columns :data:`_CD_COLUMNS`), one per method."""
    rows = []
    for m, r in result["mean_ranks"].items():
        rows.append({"metric": result["metric"], "method": m, "mean_rank": float(r), "n_blocks": result["n_blocks"],
                     "n_datasets": result["n_datasets"], "friedman_stat": result["friedman_stat"],
                     "friedman_p": result["friedman_p"], "cd": result["cd"], "reference": result["reference"],
                     "p_vs_reference_holm": result["p_vs_reference_holm"].get(m, np.nan),
                     "nemenyi_p": json.dumps({o: round(float(v), 6) for o, v in result["nemenyi"][m].items()
                                              if o != m})})
    return pd.DataFrame(rows, columns=_CD_COLUMNS)


def read_cd(table, metric):
    """``(mean_ranks Series, Nemenyi p DataFrame, first row)`` of ``metric`` from a ``cd.csv`` table, or None."""
    sub = table[table["metric"] == metric] if len(table) and "metric" in table else table.iloc[:0]
    if not len(sub):
        return None
    ranks = sub.set_index("method")["mean_rank"].astype(float)
    p = pd.DataFrame(1.0, index=ranks.index, columns=ranks.index)
    for m, js in zip(sub["method"], sub["nemenyi_p"], strict=True):
        for o, v in json.loads(js).items():
            p.loc[m, o] = v
    return ranks, p, sub.iloc[0]


def study_comparisons(df, metrics, coords=(), block_cols=("dataset", "kernel", "seed"), reference=None,
                      methods=None, method_col="method", min_datasets=MIN_CD_DATASETS):
    """The win/tie/loss table (:func:`pairwise_tests`) and -- with ``min_datasets`` data sets or
    more -- the critical-difference table (:func:`cd_table`) of every metric, over all results
    (the coords that vary are part of the blocks, as in the "all" scope of :func:`study_tests`).

    ``metrics``: ``{metric: lower_is_better}``.  Returns ``(wtl, cd)`` DataFrames.
    """
    wtl, cds = [], []
    for metric, lower in metrics.items():
        if metric not in df or df[metric].notna().sum() == 0:
            continue
        rows = df[df[metric].notna()]
        varying = [c for c in coords if c in rows and rows[c].notna().any() and rows[c].nunique() > 1]
        blocks = (*block_cols, *varying)
        if rows[method_col].nunique() >= 2:
            wtl.append(pairwise_tests(rows, metric, method_col, blocks, lower, methods=methods))
        if rows["dataset"].nunique() >= min_datasets:
            res = critical_difference(rows, metric, method_col, block_cols, coords, lower, reference,
                                      methods=methods)
            if res is not None and res["n_datasets"] >= min_datasets:
                cds.append(cd_table(res))
    wtl_df = pd.concat(wtl, ignore_index=True) if wtl else pd.DataFrame(columns=_WTL_COLUMNS)
    cd_df = pd.concat(cds, ignore_index=True) if cds else pd.DataFrame(columns=_CD_COLUMNS)
    return wtl_df, cd_df


def run_study_stats(results_csv, info, out_paired, out_friedman, tested_rows=None, out_wtl=None, out_cd=None):
    """Workflow stage: :func:`study_tests` (and, given ``out_wtl``/``out_cd``, :func:`study_comparisons`)
    on a study's result file, written atomically.

    ``info`` holds ``metrics`` (``{name: [label, lower_is_better]}``), ``tested_metrics``
    (optional subset), ``reference``, ``coords``, ``block_cols`` and ``methods`` (the config's
    order).  ``tested_rows``: a callable ``DataFrame -> DataFrame`` that picks the rows tested (the
    kind's report section, :meth:`nystrom_bench.sections.Section.tested_rows`; this module imports
    neither a study nor a section, the workflow script passes it in).
    """
    from .atomic import write_csv
    from .results import read_results

    df = read_results(results_csv)
    if tested_rows is not None:
        df = tested_rows(df)
    tested = info.get("tested_metrics") or list(info["metrics"])
    metrics = {m: bool(info["metrics"][m][1]) for m in tested}
    block_cols = info.get("block_cols", ("dataset", "kernel", "seed"))
    paired, fried = study_tests(df, metrics, info.get("reference"), info.get("coords", ()), block_cols,
                                scope_coords=info.get("summary_coords"))
    write_csv(paired, out_paired)
    write_csv(fried, out_friedman)
    if out_wtl is not None or out_cd is not None:
        wtl, cd = study_comparisons(df, metrics, info.get("coords", ()), block_cols, info.get("reference"),
                                    methods=info.get("methods"))
        if out_wtl is not None:
            write_csv(wtl, out_wtl)
        if out_cd is not None:
            write_csv(cd, out_cd)
    return paired
