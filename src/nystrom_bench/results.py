"""Result rows and result files: identity, coordinates, params, metrics.

A result row is one evaluation:

- its **identity** -- ``study, dataset, method, kernel, seed`` (:data:`ID_COLS`);
- its **coords** -- the values of the study's grid axes (e.g. ``m`` landmarks, a
  width ``gamma``, a training size ``n``): rows that differ only in a coord are
  different results;
- its **params** -- everything needed to recompute it (hyper-parameters, sizes);
- its **metrics** -- the measured numbers.

Identity + coords is unique in a study's result file, in the aggregated table and in
MLflow (the run key).  A result file is a tidy CSV: the identity columns, one column
per coord, one per metric, and the params as one JSON column.
"""

from __future__ import annotations

import json
import math
import numbers

__all__ = ["ID_COLS", "key_cols", "format_coord", "frame", "read_results", "aggregate"]

ID_COLS = ["study", "dataset", "method", "kernel", "seed"]


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
    """Result dicts -> tidy DataFrame: identity, coords, metrics, params as JSON.

    Each row is ``{"dataset", "method", "kernel", "seed", "coords": {...}, "params":
    {...}, "metrics": {...}}``; a row lacking a coord gets an empty cell for it.
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
        rec["params"] = json.dumps(r.get("params", {}), sort_keys=True, default=str)
        records.append(rec)
    df = pd.DataFrame.from_records(records, columns=None if records else key_cols(coords) + ["params"])
    return df


def read_results(path):
    """Read a tidy result file back."""
    import pandas as pd

    return pd.read_csv(path)


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
