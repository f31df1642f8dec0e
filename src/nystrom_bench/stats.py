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
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["holm", "paired_tests", "friedman", "pivot_pairs", "study_tests", "run_study_stats", "NoPairsError",
           "ALL"]

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


def pivot_pairs(df, metric, method_col="method", block_cols=("dataset", "seed"), complete=True):
    """Wide table: one row per block, one column per method (``complete``: only blocks every method has).

    Rows whose ``metric`` is missing are ignored; two results in one block and method
    are an error (they would be averaged silently).
    """
    df = df[df[metric].notna()]
    _check_unique(df, method_col, block_cols, metric)
    wide = df.pivot_table(index=list(block_cols), columns=method_col, values=metric, aggfunc="first",
                          dropna=False)
    wide = wide.dropna(axis=0, how="all")
    return wide.dropna(axis=0, how="any") if complete else wide


def _no_pairs_reason(df, method, reference, method_col, block_cols, metric):
    a, b = df[df[method_col] == method], df[df[method_col] == reference]
    if len(b) == 0:
        present = ", ".join(map(str, sorted(df[method_col].unique(), key=str)))
        return (f"reference method {reference!r} has no results for {metric!r} (methods with results: {present}); "
                "set 'reference:' to one of them")
    differ = [c for c in block_cols if not set(a[c].astype(str)) & set(b[c].astype(str))]
    if differ:
        c = differ[0]
        return (f"{method!r} and the reference {reference!r} share no block: their {c!r} values differ "
                f"({method}: {', '.join(sorted(set(a[c].astype(str))))}; {reference}: "
                f"{', '.join(sorted(set(b[c].astype(str))))}); a study whose methods differ in {c!r} must "
                f"block on the other columns (Study.block_cols without {c!r})")
    return (f"{method!r} and the reference {reference!r} share no complete block over {list(block_cols)}; "
            "run them on the same data sets, kernels and seeds")


def paired_tests(df, metric, reference, method_col="method", block_cols=("dataset", "seed"),
                 lower_is_better=True):
    """Compare each method against ``reference`` on ``metric``, paired over ``block_cols``.

    Each method is paired with the reference on the blocks both have.

    Returns
    -------
    DataFrame with one row per other method: ``n_pairs``, ``median_diff`` (method
    minus reference), ``wins``/``losses`` (method better/worse than the reference),
    ``wilcoxon_stat``, ``wilcoxon_p``, ``ttest_p`` and Holm-adjusted ``wilcoxon_p_holm``.

    Raises
    ------
    NoPairsError
        If the reference has no result, or a method shares no block with it.
    """
    df = df[df[metric].notna()]
    wide = pivot_pairs(df, metric, method_col, block_cols, complete=False)
    if reference not in wide.columns:
        raise NoPairsError(_no_pairs_reason(df, None, reference, method_col, block_cols, metric))
    rows = []
    for method in [c for c in wide.columns if c != reference]:
        d = (wide[method] - wide[reference]).dropna().to_numpy()
        if len(d) == 0:
            raise NoPairsError(_no_pairs_reason(df, method, reference, method_col, block_cols, metric))
        better = d < 0 if lower_is_better else d > 0
        worse = d > 0 if lower_is_better else d < 0
        row = {
            "metric": metric, "method": method, "reference": reference, "n_pairs": len(d),
            "median_diff": float(np.median(d)),
            "wins": int(better.sum()), "losses": int(worse.sum()),
            "wilcoxon_stat": np.nan, "wilcoxon_p": np.nan, "ttest_p": np.nan,
        }
        if len(d) >= 2 and np.any(d != 0):
            w = sps.wilcoxon(d, zero_method="wilcox")
            row["wilcoxon_stat"], row["wilcoxon_p"] = float(w.statistic), float(w.pvalue)
            if np.std(d) > 0:
                row["ttest_p"] = float(sps.ttest_1samp(d, 0.0).pvalue)
        else:
            row["wilcoxon_p"] = 1.0  # identical results (or one pair): no evidence of a difference
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
                 "wilcoxon_stat", "wilcoxon_p", "ttest_p", "wilcoxon_p_holm"])
    fried_df = pd.DataFrame(fried, columns=["metric", "scope", "statistic", "p", "n_blocks", "mean_ranks"])
    return paired_df, fried_df


def run_study_stats(results_csv, info, out_paired, out_friedman):
    """Workflow stage: :func:`study_tests` on a study's result file, written atomically.

    ``info`` holds ``metrics`` (``{name: [label, lower_is_better]}``), ``tested_metrics``
    (optional subset), ``reference``, ``coords`` and ``block_cols``, and optionally the study
    ``kind`` (whose :meth:`~nystrom_bench.studies.Study.tested_rows` picks the rows tested).
    """
    from .atomic import write_csv
    from .results import read_results

    df = read_results(results_csv)
    if info.get("kind"):
        from . import studies

        df = studies.get(info["kind"]).tested_rows(df)
    tested = info.get("tested_metrics") or list(info["metrics"])
    metrics = {m: bool(info["metrics"][m][1]) for m in tested}
    paired, fried = study_tests(df, metrics, info.get("reference"), info.get("coords", ()),
                                info.get("block_cols", ("dataset", "kernel", "seed")),
                                scope_coords=info.get("summary_coords"))
    write_csv(paired, out_paired)
    write_csv(fried, out_friedman)
    return paired
