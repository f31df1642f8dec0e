"""The paper's own evidence under a claim's rule: a printed table read as a result table, the same rule on it.

A verdict on our results means something only if the rule asks what the paper showed.  A claim that rests on
a table of its paper names it::

    paper_table: table1                       # or a list of tables: [table1, table2]
    paper_table: {tables: [table2], datasets: [satimage, usps-full, mnist, webspam]}

(the dict form where the table names the claim's data sets otherwise than our registry does).  :func:`frame`
turns the printed numbers into the rows a study of the table's ``kind`` writes -- one row per printed cell
(data set x method x coordinate), ``seed`` 0, so that each cell is one block holding the paper's mean over its
runs -- and :func:`check` evaluates the claim's own rule (test, margin, minimum effect, ``every:``, ``chain:``)
on them.  The ledger gives that verdict beside ours (:func:`nystrom_bench.claims.evaluate`): where the paper's
own table does not pass the rule, the rule asks more than the paper showed (a margin tighter than its own
gaps, every data set where its table has exceptions), or the paper claims more than its table shows.  Either
way a "not reproduced" on our results then says less about our results than it seems to, and the reader sees
it.

Three layouts are read, each declared in the table's data (``kind``: the study kind whose metrics and
directions apply; ``layout`` describes the printed cells):

- ``rows``/``m`` (Chen et al., NIPS 2016): data set -> kernel -> sampler -> one value per ``m``, times
  ``scale``; the value is the table's ``metric``;
- ``regression``/``classification`` (Ding et al., TNNLS 2020): data set -> method -> ``[MSE mean, sd, scale,
  seconds]`` or ``[MCA %, seconds]``, under the table's ``criterion``;
- ``data``/``columns`` (Lan, Zhang et al., AIJ 2017): data set -> printed column -> ``[error %, sd,
  seconds]``, the columns named by ``method_ids``; a cell the paper leaves empty is absent.
"""

from __future__ import annotations

import pandas as pd

from . import papers

__all__ = ["frame", "check", "spec"]


def spec(claim):
    """``(tables, datasets)`` of a claim's ``paper_table`` (``datasets`` None: the claim's own filter), or None."""
    got = claim.get("paper_table")
    if not got:
        return None
    if isinstance(got, dict):
        tables, datasets = got.get("tables"), got.get("datasets")
    else:
        tables, datasets = got, None
    tables = [tables] if isinstance(tables, str) else list(tables or [])
    if not tables:
        raise ValueError(f"claim {claim.get('id')!r}: paper_table names no table; write paper_table: table1, a list, "
                         "or {tables: [...], datasets: [...]}")
    return tables, datasets


def frame(key, table_id):
    """The printed cells of ``table_id`` of paper ``key`` as a result table (``study`` = the table's id)."""
    t = papers.table(key, table_id)
    if "rows" in t and "m" in t:
        rows = [{"dataset": ds, "kernel": kernel, "method": sampler, "m": m, t["metric"]: v * t.get("scale", 1.0)}
                for ds, kernels in t["rows"].items() for kernel, samplers in kernels.items()
                for sampler, values in samplers.items() for m, v in zip(t["m"], values, strict=True)]
    elif "regression" in t or "classification" in t:
        rows = [{"dataset": ds, "method": m, "criterion": t["criterion"], "test_mse": v[0] * v[2],
                 "selection_seconds": v[3]}
                for ds, cells in (t.get("regression") or {}).items() for m, v in cells.items() if m != "n"]
        rows += [{"dataset": ds, "method": m, "criterion": t["criterion"], "test_accuracy": v[0] / 100,
                  "selection_seconds": v[1]}
                 for ds, cells in (t.get("classification") or {}).items() for m, v in cells.items() if m != "n"]
    elif "data" in t and "columns" in t:
        ids = t["method_ids"]
        rows = [{"dataset": ds, "method": ids[col], "error": v[0], "seconds": v[2]}
                for ds, cells in t["data"].items() for col, v in cells.items()]
    else:
        raise papers.PaperDataError(f"paper {key!r}, {table_id}: a layout this module does not read "
                                    "(rows/m, regression/classification or data/columns)")
    return pd.DataFrame(rows).assign(study=table_id, seed=0)


def check(claim, info=None):
    """The claim's rule on its paper's own table(s): a ledger row (:func:`nystrom_bench.claims.evaluate`) or None
    where the claim names no table.  The row's ``where`` names the tables ("Table 1, Table 3").  ``info``: the
    claim's study's metrics, coords and block columns (:func:`nystrom_bench.jobs.analysis_info`) where that study is
    of the tables' kind (an analysis job has them at hand); else the kind's own, from :mod:`nystrom_bench.studies`."""
    from . import claims

    got = spec(claim)
    if got is None:
        return None
    tables, datasets = got
    key = claim["paper_key"]
    for t in tables:
        if "kind" not in papers.table(key, t):
            raise papers.PaperDataError(f"paper {key!r}, {t}: declares no study kind ('kind:'), so it is no table of "
                                        "results this module reads (layouts rows/m, regression/classification or "
                                        "data/columns)")
    kinds = {papers.table(key, t)["kind"] for t in tables}
    if len(kinds) != 1:
        raise ValueError(f"claim {claim['id']!r}: paper_table mixes tables of kinds {sorted(kinds)}")
    kind = kinds.pop()
    if not info or info.get("kind") != kind:
        from . import studies

        k = studies.get(kind)
        info = {"kind": kind, "metrics": {m: list(v) for m, v in k.metrics.items()}, "coords": list(k.coords),
                "block_cols": list(k.block_cols)}
    info = {key_: info[key_] for key_ in ("kind", "metrics", "coords", "block_cols") if key_ in info}
    df = pd.concat([frame(key, t) for t in tables], ignore_index=True)
    own = {k: v for k, v in claim.items() if k not in ("paper_table", "note", "stand_ins", "not_testable")}
    own["study"] = ", ".join(tables)
    if datasets is not None:
        own["datasets"] = list(datasets)
    row = claims.evaluate(own, df, info)
    return {**row, "where": ", ".join(papers.table(key, t)["where"].split(" (")[0] for t in tables)}
