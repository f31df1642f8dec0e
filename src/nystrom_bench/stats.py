"""Paired statistical tests between methods, as tidy tables.

Results are paired on the blocks they share (e.g. ``(dataset, seed)``): method A
and method B on the same split form one pair.  :func:`paired_tests` compares
every method with a reference by the Wilcoxon signed-rank test and the paired
t-test, with Holm's correction over the comparisons; :func:`friedman` tests
whether any of three or more methods differs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["holm", "paired_tests", "friedman", "pivot_pairs"]


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


def pivot_pairs(df, metric, method_col="method", block_cols=("dataset", "seed")):
    """Wide table: one row per block, one column per method; only complete blocks."""
    wide = df.pivot_table(index=list(block_cols), columns=method_col, values=metric, aggfunc="mean")
    return wide.dropna(axis=0, how="any")


def paired_tests(df, metric, reference, method_col="method", block_cols=("dataset", "seed"),
                 lower_is_better=True):
    """Compare each method against ``reference`` on ``metric``, paired over ``block_cols``.

    Returns
    -------
    DataFrame with one row per other method: ``n_pairs``, ``median_diff`` (method
    minus reference), ``wins``/``losses`` (method better/worse than the reference),
    ``wilcoxon_stat``, ``wilcoxon_p``, ``ttest_p`` and Holm-adjusted ``wilcoxon_p_holm``.
    """
    wide = pivot_pairs(df, metric, method_col, block_cols)
    if reference not in wide.columns:
        raise ValueError(f"reference method {reference!r} has no complete results for {metric!r}")
    rows = []
    for method in [c for c in wide.columns if c != reference]:
        d = (wide[method] - wide[reference]).to_numpy()
        better = d < 0 if lower_is_better else d > 0
        worse = d > 0 if lower_is_better else d < 0
        row = {
            "metric": metric, "method": method, "reference": reference, "n_pairs": len(d),
            "median_diff": float(np.median(d)) if len(d) else np.nan,
            "wins": int(better.sum()), "losses": int(worse.sum()),
            "wilcoxon_stat": np.nan, "wilcoxon_p": np.nan, "ttest_p": np.nan,
        }
        if len(d) >= 2 and np.any(d != 0):
            w = sps.wilcoxon(d, zero_method="wilcox")
            row["wilcoxon_stat"], row["wilcoxon_p"] = float(w.statistic), float(w.pvalue)
            if np.std(d) > 0:
                row["ttest_p"] = float(sps.ttest_1samp(d, 0.0).pvalue)
        elif len(d) >= 1:
            row["wilcoxon_p"] = 1.0  # identical results: no evidence of a difference
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        ok = out["wilcoxon_p"].notna()
        out["wilcoxon_p_holm"] = np.nan
        out.loc[ok, "wilcoxon_p_holm"] = holm(out.loc[ok, "wilcoxon_p"])
    return out


def friedman(df, metric, method_col="method", block_cols=("dataset", "seed"), lower_is_better=True):
    """Friedman test over all methods plus their mean ranks (1 = best). Needs >= 3 methods."""
    wide = pivot_pairs(df, metric, method_col, block_cols)
    if wide.shape[1] < 3 or len(wide) < 2:
        return None
    vals = wide.to_numpy() if lower_is_better else -wide.to_numpy()
    ranks = pd.DataFrame(sps.rankdata(vals, axis=1), columns=wide.columns).mean()
    res = sps.friedmanchisquare(*[wide[c].to_numpy() for c in wide.columns])
    return {"metric": metric, "statistic": float(res.statistic), "p": float(res.pvalue),
            "n_blocks": len(wide), "mean_ranks": ranks.sort_values().to_dict()}
