"""Result rows and result files: identity, coordinates, params, metrics.

A result row is one evaluation:

- its **identity** -- ``study, dataset, method, kernel, seed`` (:data:`ID_COLS`);
- its **coords** -- the values of the study's grid axes (e.g. ``m`` landmarks, a
  width ``gamma``, a training size ``n``): rows that differ only in a coord are
  different results;
- its **params** -- everything needed to recompute it (hyper-parameters, sizes);
- its **metrics** -- the measured numbers;
- its **assumption** flag -- empty where the method's assumptions hold, else a short reason
  people can read (e.g. ``MCM off its grid: H4 misfit 0.68 > 0.3``): the row was measured
  outside what the method assumes.  A method's ``record`` carries it as the param
  ``assumption``; :func:`frame` moves it into its own column.

Identity + coords is unique in a study's result file, in the aggregated table and in
MLflow (the run key).  A result file is a tidy CSV: the identity columns, one column
per coord, one per metric, the ``assumption`` column and the params as one JSON column.

Rows outside their method's assumptions are kept in the result files and shown, but never
averaged in with the others: every consumer (means, rankings, paired tests, claims, figures)
splits them off with :func:`within_assumptions` (or :func:`outside_assumptions`).
"""

from __future__ import annotations

import json
import math
import numbers

__all__ = ["ID_COLS", "ASSUMPTION", "key_cols", "format_coord", "frame", "read_results", "aggregate",
           "outside_assumptions", "within_assumptions", "assumption_label", "assumption_summary"]

ID_COLS = ["study", "dataset", "method", "kernel", "seed"]

#: the result column (and the param a method's ``record`` sets) that flags a row measured outside
#: its method's assumptions: empty where they hold, else the reason
ASSUMPTION = "assumption"


def key_cols(coords=()):
    """The columns that identify a result: :data:`ID_COLS` plus the coords."""
    return [*ID_COLS, *coords]


def format_coord(value):
    """A coord value as text: integral numbers as integers, other floats in full precision."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    v = float(value)
    if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def frame(study, rows, coords=()):
    """Result dicts -> tidy DataFrame: identity, coords, metrics, ``assumption``, params as JSON.

    Each row is ``{"dataset", "method", "kernel", "seed", "coords": {...}, "params":
    {...}, "metrics": {...}}`` and optionally ``"assumption"``; a row lacking a coord gets an
    empty cell for it.  The assumption flag is the row's ``assumption`` or else its param
    ``assumption`` (where a method's ``record`` puts it), moved out of the params; ``""`` if neither.
    """
    import pandas as pd  # lazy: obtain/split jobs never need pandas

    records = []
    for r in rows:
        extra = set(r.get("coords", {})) - set(coords)
        if extra:
            raise ValueError(f"result row has coords {sorted(extra)} the study does not declare ({list(coords)})")
        rec = {"study": study, **{k: r[k] for k in ID_COLS[1:]}}
        rec.update({c: r.get("coords", {}).get(c) for c in coords})
        rec.update(r["metrics"])
        if ASSUMPTION in r["metrics"]:
            raise ValueError(f"a metric may not be named {ASSUMPTION!r} (the assumption flag's column)")
        params = dict(r.get("params", {}))
        flag = params.pop(ASSUMPTION, "")
        rec[ASSUMPTION] = str(r.get(ASSUMPTION) or flag or "")
        rec["params"] = json.dumps(params, sort_keys=True, default=str)
        records.append(rec)
    df = pd.DataFrame.from_records(records, columns=None if records else key_cols(coords) + [ASSUMPTION, "params"])
    return df


def read_results(path):
    """Read a tidy result file back (an ``assumption`` column with its empty cells as ``""``)."""
    import pandas as pd

    df = pd.read_csv(path)
    if ASSUMPTION in df:
        df[ASSUMPTION] = ["" if pd.isna(v) else str(v) for v in df[ASSUMPTION]]
    return df


def aggregate(inputs, output, coords=()):
    """Concatenate a study's result files into one table, written atomically.

    Two rows with the same identity and coords are an error naming them.
    """
    import pandas as pd

    from .atomic import write_csv

    frames = [read_results(p) for p in inputs]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=key_cols(coords))
    keys = [c for c in key_cols(coords) if c in df]
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        raise ValueError(f"duplicate results for {df.loc[dup, keys].head().to_dict('records')}: "
                         "two result files hold the same identity and coords")
    write_csv(df.sort_values(keys, na_position="first").reset_index(drop=True), output)
    return df


# -- rows outside their method's assumptions ------------------------------------------------------
def _flags(df):
    """The ``assumption`` cells as stripped strings (``""`` where empty, NaN or the column is absent)."""
    import pandas as pd

    if ASSUMPTION not in df:
        return pd.Series("", index=df.index, dtype=object)
    return df[ASSUMPTION].map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else str(v).strip())


def outside_assumptions(df):
    """Boolean Series (``df``'s index): True for rows measured outside their method's assumptions, i.e.
    with a non-empty ``assumption`` cell.  All False for a table without the column (older files)."""
    return _flags(df) != ""


def assumption_label(reason):
    """The kinds of a reason, without its numbers: the text before each ``:`` of its ``"; "``-separated
    parts (``"MCM off its grid: H4 misfit 0.68 > 0.3; indefinite operator: ..."`` ->
    ``"MCM off its grid; indefinite operator"``)."""
    return "; ".join(dict.fromkeys(part.split(":", 1)[0].strip() for part in str(reason).split(";") if part.strip()))


def within_assumptions(df):
    """Split off the rows measured outside their method's assumptions: the one place every consumer
    (means, rankings, paired tests, claims, figures) does it.

    Returns ``(kept, n_left_out, reasons)``: ``kept`` the rows whose assumptions hold (``df``'s
    columns and index labels); ``n_left_out`` how many rows were left out; ``reasons`` a dict
    ``{label: number of rows}`` (the labels of :func:`assumption_label`, most frequent first; a row
    with two reasons counts under both), empty when nothing was left out.  For the per-method counts a report prints, see
    :func:`assumption_summary`.
    """
    out = outside_assumptions(df)
    labels = _flags(df)[out].map(lambda r: assumption_label(r).split("; ")).explode()
    return df[~out], int(out.sum()), {k: int(v) for k, v in labels.value_counts().items()}


def assumption_summary(df, by="method"):
    """Per ``by`` value with rows outside their assumptions, how many and where: a DataFrame with columns
    ``by``, ``rows_out``, ``rows``, ``datasets_out`` (data sets with at least one such row),
    ``datasets`` and ``reasons`` (the labels, ``"; "``-joined); empty (those columns) when every row's
    assumptions hold."""
    import pandas as pd

    cols = [by, "rows_out", "rows", "datasets_out", "datasets", "reasons"]
    out = outside_assumptions(df)
    if not out.any():
        return pd.DataFrame(columns=cols)
    flags = _flags(df)
    rows = []
    for key, g in df.groupby(by, sort=False):
        o = out.loc[g.index]
        if not o.any():
            continue
        labels = dict.fromkeys(lab for r in flags.loc[g.index][o] for lab in assumption_label(r).split("; "))
        rows.append({by: key, "rows_out": int(o.sum()), "rows": len(g),
                     "datasets_out": int(g.loc[o, "dataset"].nunique()) if "dataset" in g else 0,
                     "datasets": int(g["dataset"].nunique()) if "dataset" in g else 0,
                     "reasons": "; ".join(labels)})
    return pd.DataFrame(rows, columns=cols)
