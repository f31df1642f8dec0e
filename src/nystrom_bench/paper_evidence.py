"""The paper's own evidence under a claim's rule: a printed table read as a result table, the same rule on it.

A verdict on our results means something only if the rule asks what the paper showed.  A claim that rests on
a table of its paper names it::

    paper_table: table1                       # or a list of tables: [table1, table2]
    paper_table: {tables: [table2], datasets: [satimage, usps-full, mnist, webspam]}

(the dict form where the table names the claim's data sets otherwise than our registry does).  :func:`frame`
turns the printed numbers into the rows a study of the table's ``kind`` writes -- one row per printed cell
(data set x method x coordinate), ``seed`` 0, so that each cell is one block holding the paper's mean over its
runs -- and :func:`nystrom_bench.claims.evaluate` runs the claim's own rule (test, margin, minimum effect,
``every:``, ``chain:``) on them too, giving that verdict beside ours: where the paper's
own table does not pass the rule, the rule asks more than the paper showed (a margin tighter than its own
gaps, every data set where its table has exceptions), or the paper claims more than its table shows.  Either
way a "not reproduced" on our results then says less about our results than it seems to, and the reader sees
it.

A table declares how its cells read as results (``as_results``: the study ``kind`` whose metrics and directions
apply, and what the printed numbers are); three layouts are read:

- ``rows``, nested data set -> ``levels`` -> one value per entry of the list ``over`` names (Chen et al., NIPS
  2016: kernel -> sampler -> values per m), times ``factor`` (the printed scale), the value being ``metric``;
- ``regression``/``classification``, data set -> method -> ``[mean, sd, scale, seconds]`` / ``[percent, seconds]``
  (Ding et al., TNNLS 2020), the two results named by ``regression``/``classification``, under ``coords``;
- ``data`` with ``columns``, data set -> printed column -> numbers named by ``values`` (``null``: not a result;
  Lan, Zhang et al., AIJ 2017), the columns mapped to method labels by ``method_ids``; a cell the paper leaves
  empty ('-': the method could not run) is absent.
"""

from __future__ import annotations

import pandas as pd

from . import papers

__all__ = ["frame", "spec", "kind"]

#: the regression/classification layout: a printed cell's numbers -> its two results
_SECTIONS = {"regression": lambda v: (v[0] * v[2], v[3]),      # [mean, sd, scale, seconds]: mean x scale, seconds
             "classification": lambda v: (v[0] / 100, v[1])}   # [percent, seconds]: a share, seconds


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
    """The printed cells of ``table_id`` of paper ``key`` as a result table (``study`` = the table's id, ``seed`` 0)."""
    t = papers.table(key, table_id)
    how = t.get("as_results")
    if not how or "kind" not in how:
        raise papers.PaperDataError(f"paper {key!r}, {table_id}: declares no study kind (as_results: {{kind: ...}}), "
                                    "so it is no table of results this module reads")
    coords = dict(how.get("coords") or {})
    rows = []
    if "rows" in t and how.get("over"):
        levels, over, factor = list(how["levels"]), how["over"], float(how.get("factor", 1.0))

        def walk(node, path):
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, [*path, k])
                return
            ds, *lv = path
            rows.extend({"dataset": ds, **dict(zip(levels, lv, strict=True)), over: x, how["metric"]: v * factor}
                        for x, v in zip(t[over], node, strict=True) if v is not None)  # null: a cell left empty

        walk(t["rows"], [])
    elif "regression" in t or "classification" in t:
        for section, read in _SECTIONS.items():
            names = how.get(section)
            for ds, cells in (t.get(section) or {}).items():
                rows += [{"dataset": ds, "method": m, **dict(zip(names, read(v), strict=True))}
                         for m, v in cells.items() if m != "n" and v is not None and None not in v]
    elif "data" in t and "columns" in t:
        ids, names = how["method_ids"], how["values"]
        rows = [{"dataset": ds, "method": ids[col], **{n: x for n, x in zip(names, v, strict=True) if n}}
                for ds, cells in t["data"].items() for col, v in cells.items() if v is not None]
    else:
        raise papers.PaperDataError(f"paper {key!r}, {table_id}: a layout this module does not read "
                                    "(rows with over, regression/classification or data/columns)")
    return pd.DataFrame(rows).assign(**coords, study=table_id, seed=0)


def kind(key, tables):
    """The study kind the tables ``tables`` of paper ``key`` read as (one for all of them)."""
    kinds = set()
    for t in tables:
        how = papers.table(key, t).get("as_results") or {}
        if "kind" not in how:
            raise papers.PaperDataError(f"paper {key!r}, {t}: declares no study kind (as_results: {{kind: ...}}), "
                                        "so it is no table of results this module reads")
        kinds.add(how["kind"])
    if len(kinds) != 1:
        raise papers.PaperDataError(f"paper {key!r}: tables {', '.join(tables)} read as results of kinds "
                                    f"{sorted(kinds)}: name tables of one kind")
    return kinds.pop()
