"""The selection study's report section: Ding et al. (TNNLS 2020) Tables I and II in the paper's layout,
the paper's numbers beside ours where our data set is the paper's (or an embedded copy of it), and
the paper's Wilcoxon signed-rank test over data sets of each method against Accurate.

A selection made outside its method's assumptions (MCM off its grid, or ``U_m + mu l I`` indefinite at
a width of the grid: :func:`nystrom_bench.results.outside_assumptions`) is shown marked ``outside:`` in
the paper's layout, apart from the method's other results, and is left out of the Wilcoxon tests (a
row of its own says where)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import papers
from ...report import assumption_note, outside_label
from ...results import assumption_summary, outside_assumptions
from ...sections import Section, register

#: the paper's column heads, in the order of its tables
_PAPER_METHODS = {"accurate": "Accurate", "mcm": "MCM", "nystrom": "Nystrom"}
_PAPER_KEY = "ding_tnnls2020"
_PAPER_TABLE = {"c_ree": "table1", "c_ipe": "table2"}

#: our data set -> the paper's row (an embedded copy of the same data, or the download itself)
PAPER_DATASET = {
    "boston": "housing", "housing": "housing", "balance": "balance", "allbp": "allbp", "veh": "veh",
    "pha": "pha", "ann1": "ann1", "DNA-n": "DNA-n", "mg": "mg", "space_ga": "space-ga", "abalone": "abalone",
    "ionosphere": "ionosphere", "ionosphere-libsvm": "ionosphere", "colic": "colic", "housevotes": "vote",
    "wisconsin": "breast-cancer", "breast-cancer": "breast-cancer", "australian": "australian",
    "australian-libsvm": "australian", "pima": "pima", "diabetes-libsvm": "diabetes", "german": "german",
    "german_keel": "german", "a1a": "a1a", "a2a": "a2a",
}


def paper_tables():
    """Ding et al. (TNNLS 2020) Tables I-II from the paper data file (:mod:`nystrom_bench.papers`), as
    ``{(criterion, paper data set): {"n": int, paper method: (mean, sd or None, seconds, is_accuracy)}}``
    with the MSE in its own units, the accuracy as a fraction and the time in seconds."""
    out = {}
    for crit, tid in _PAPER_TABLE.items():
        t = papers.table(_PAPER_KEY, tid)
        for name, cells in t["regression"].items():
            row = {"n": int(cells["n"])}
            for m, head in _PAPER_METHODS.items():
                mean, sd, scale, secs = cells[m]
                row[head] = (mean * scale, sd * scale, secs, False)
            out[(crit, name)] = row
        for name, cells in t["classification"].items():
            row = {"n": int(cells["n"])}
            for m, head in _PAPER_METHODS.items():
                pct, secs = cells[m]
                row[head] = (pct / 100, None, secs, True)
            out[(crit, name)] = row
    return out


PAPER_TABLES = paper_tables()


@register
class SelectionSection(Section):
    kind = "selection"

    def tables(self, df, block):
        out = []
        apart = assumption_note(df, "selections", mark="outside:")
        for crit in sorted(df["criterion"].unique()):
            label = "Table I (C_ree)" if crit == "c_ree" else "Table II (C_ipe)"
            out.append((f"Ding et al. (TNNLS 2020) {label} layout: ours (mean +- sd over seeds) and the paper's "
                        "numbers in brackets where our data set is the paper's; time = the whole grid search (s)",
                        paper_layout(df[df["criterion"] == crit], crit, list(block["methods"])),
                        "MSE in the targets' own units; accuracy in %. The paper ran R on other hardware, so compare "
                        "its times with ours only as ratios between methods."
                        + (f" {apart}" if apart else "")))
        out.append(("Wilcoxon signed-rank tests over data sets (the paper's test): each method against 'accurate' "
                    "on the per-data-set mean error (MSE, or 1 - accuracy) relative to accurate's",
                    wilcoxon_over_datasets(df, block.get("reference", "accurate")),
                    assumption_note(df, "selections") or None))
        return out


def _fmt(v, sd=None, acc=False):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "n/a"
    if acc:
        return f"{100 * v:.2f}%"
    return f"{v:.3g}" + ("" if sd is None else f"+-{sd:.2g}")


def _apart(dm, text):
    """A cell: ``text(rows)`` over the rows within their method's assumptions, and -- marked ``outside:`` --
    over the others, never the two averaged together."""
    out = outside_assumptions(dm)
    parts = [text(dm[~out])] if (~out).any() else []
    return "; ".join(parts + ([f"outside: {text(dm[out])}"] if out.any() else []))


def paper_layout(df, crit, order):
    """One row per data set: ours (error, time) per method, the paper's in brackets where known; the mean
    over selections outside the method's assumptions marked ``outside:`` beside (or instead of) the mean
    over its others."""
    rows = []
    for ds, d in df.groupby("dataset", sort=False):
        acc = d["test_accuracy"].notna().any() if "test_accuracy" in d else False
        metric = "test_accuracy" if acc else "test_mse"
        paper = PAPER_TABLES.get((crit, PAPER_DATASET.get(ds, "")))
        row = {"data set": ds + (f" (paper: {PAPER_DATASET[ds]})" if paper else "")}
        for m in [m for m in order if m in set(d["method"])]:
            dm = d[d["method"] == m]
            ours = _apart(dm, lambda r, metric=metric, acc=acc: _fmt(r[metric].mean(), None if acc else r[metric].std(),
                                                                   acc))
            pm = paper.get(_PAPER_METHODS.get(m)) if paper else None
            row[f"{m} error"] = ours + (f" [{_fmt(pm[0], pm[1], pm[3])}]" if pm else "")
            row[f"{m} time"] = (_apart(dm, lambda r: f"{r['selection_seconds'].mean():.2g}")
                                + (f" [{pm[2]:.2g}]" if pm else ""))
        rows.append(row)
    return pd.DataFrame(rows)


def wilcoxon_over_datasets(df, reference):
    """Per criterion and method: Wilcoxon signed-rank over data sets of (error - reference's) / reference's
    (the paper's test), through :func:`nystrom_bench.stats.paired_tests`; data sets where the two
    errors are equal carry no rank (as in the signed-rank test's usual form).

    Selections outside their method's assumptions are left out of the test; a row of their own after
    the method's, ``"mcm (outside assumptions: 8 of 10 data sets)"``, gives their relative differences,
    untested."""
    from ... import stats  # scipy.stats: imported where a test runs, not with the kind

    apart = assumption_summary(df).set_index("method")
    outside = outside_assumptions(df)
    err = df["test_mse"].copy() if "test_mse" in df else pd.Series(np.nan, index=df.index)
    if "test_accuracy" in df:
        err = err.fillna(1.0 - df["test_accuracy"])
    df = df.assign(error=err)

    def per_dataset(rows):
        return rows.groupby(["criterion", "dataset", "method"])["error"].mean().unstack("method")

    d, d_out = per_dataset(df[~outside]), per_dataset(df[outside])
    rows = []
    for crit, sub in d.groupby(level="criterion"):
        if reference not in sub:
            continue
        sub = sub.droplevel("criterion")
        ref = sub[reference].where(sub[reference] > 0)
        out = d_out.xs(crit, level="criterion") if crit in d_out.index.get_level_values("criterion") else None
        flagged = [] if out is None else [m for m in out.columns if m in apart.index and out[m].notna().any()]
        for m in [c for c in sub.columns if c != reference] + [c for c in flagged if c not in sub.columns]:
            if m in sub.columns and (m not in flagged or sub[m].notna().any()):
                rel = ((sub[m] - sub[reference]) / ref).dropna()
                nz = rel[rel != 0]
                p = float("nan")
                if len(nz) >= 2:
                    # the relative difference as a paired sample against a reference of 0
                    long = pd.DataFrame({"dataset": [*nz.index, *nz.index],
                                         "method": [m] * len(nz) + [reference] * len(nz),
                                         "rel": [*nz.to_numpy(float), *np.zeros(len(nz))]})
                    p = float(stats.paired_tests(long, "rel", reference, block_cols=("dataset",))["wilcoxon_p"].iloc[0])
                rows.append({"criterion": _CRIT.get(crit, crit), "method": m, "vs": reference, "data sets": len(rel),
                             "better / worse": f"{int((rel < 0).sum())} / {int((rel > 0).sum())}",
                             "median rel. diff": f"{rel.median():+.3g}" if len(rel) else "n/a",
                             "Wilcoxon p": "n/a" if p != p else f"{p:.2g}",
                             "at 95%": "n/a" if p != p else ("differ" if p < 0.05 else "no difference")})
            if m in flagged:
                rel = ((out[m] - sub[reference].reindex(out.index)) / ref.reindex(out.index)).dropna()
                rows.append({"criterion": _CRIT.get(crit, crit), "method": outside_label(m, apart.loc[m]),
                             "vs": reference, "data sets": len(rel),
                             "better / worse": f"{int((rel < 0).sum())} / {int((rel > 0).sum())}",
                             "median rel. diff": f"{rel.median():+.3g}" if len(rel) else "n/a",
                             "Wilcoxon p": "not tested", "at 95%": "outside assumptions"})
    return pd.DataFrame(rows)


_CRIT = {"c_ree": "C_ree", "c_ipe": "C_ipe"}
