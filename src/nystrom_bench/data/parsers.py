"""File parsers: svmlight/LIBSVM, CSV, KEEL (with or without its @-header), MATLAB (.mat with X and y).

Each returns ``(X, y)`` as float64 arrays (class labels as given; encoding to
integers happens in :func:`nystrom_bench.data.obtain`), and raises
:class:`~nystrom_bench.data.DataError` naming the file, the line and the fix for a
malformed file.
"""

from __future__ import annotations

import numpy as np

from .errors import DataError

__all__ = ["parse_svmlight", "parse_csv", "parse_keel", "parse_mat"]


def _error(msg):
    return DataError(msg)


def parse_svmlight(path, n_features=None):
    """LIBSVM / svmlight text: ``label idx:value ...`` (1-based indices), dense output.

    Parsed by scikit-learn's compiled reader (YearPredictionMSD's 46 million entries
    take seconds, not minutes and gigabytes of Python objects); a file it rejects is
    re-read line by line so the error names the offending line.
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=False, dtype=np.float64)
    except (ValueError, UnicodeDecodeError):
        return _parse_svmlight_lines(path, n_features)  # raises a DataError naming the line
    if X.shape[0] == 0:
        raise _error(f"{path}: no data rows")
    return X.toarray(), np.asarray(y, dtype=np.float64)


def _parse_svmlight_lines(path, n_features=None):
    """Pure-Python reader: slow, but it can say which line is malformed."""
    labels, rows = [], []
    max_idx = 0
    with open(path, encoding="utf-8", errors="strict") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                labels.append(float(parts[0]))
                entries = []
                for item in parts[1:]:
                    idx, _, val = item.partition(":")
                    if not _:
                        raise ValueError(f"'{item}' is not index:value")
                    i = int(idx)
                    if i < 1:
                        raise ValueError(f"feature index {i} < 1")
                    entries.append((i, float(val)))
                    max_idx = max(max_idx, i)
            except ValueError as exc:
                raise _error(f"{path}: malformed svmlight line {lineno}: {exc}; the file may be corrupt "
                             "or not in svmlight format") from None
            rows.append(entries)
    if not rows:
        raise _error(f"{path}: no data rows")
    d = int(n_features or max_idx)
    if max_idx > d:
        raise _error(f"{path}: feature index {max_idx} exceeds the expected {d} features")
    X = np.zeros((len(rows), d))
    for r, entries in enumerate(rows):
        for i, v in entries:
            X[r, i - 1] = v
    return X, np.asarray(labels)


def parse_csv(path, target=-1, delimiter=None, skip_header=None):
    """Delimited text; ``target`` is the label column (index or header name); header auto-detected."""
    import pandas as pd

    try:
        # a known delimiter can use pandas' C parser; sniffing one needs the Python engine
        df = pd.read_csv(path, sep=delimiter, engine="c" if delimiter else "python",
                         header="infer" if skip_header is None else
                         (0 if skip_header else None))
    except Exception as exc:  # noqa: BLE001 - pandas raises many kinds
        raise _error(f"{path}: cannot parse as CSV: {exc}") from None
    col = df.columns[target] if isinstance(target, int) else target
    if col not in df.columns:
        raise _error(f"{path}: no column {target!r}; columns are {list(df.columns)}")
    y = df.pop(col).to_numpy()
    try:
        X = df.to_numpy(dtype=np.float64)
    except ValueError as exc:
        raise _error(f"{path}: non-numeric feature values ({exc})") from None
    return X, y


def parse_keel(path):
    """KEEL ``.dat``: optional ``@attribute``/``@data`` header, comma-separated rows, the
    output last; non-numeric input columns one-hot encoded. Returns ``(X, y_labels)``."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("@") or line.startswith("%"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if rows and len(fields) != len(rows[0]):
                raise _error(f"{path}: line {lineno} has {len(fields)} fields, expected {len(rows[0])}")
            rows.append(fields)
    if not rows:
        raise _error(f"{path}: no data rows")
    cols = list(zip(*rows, strict=True))
    blocks = []
    for j, col in enumerate(cols[:-1]):
        try:
            blocks.append(np.array(col, dtype=np.float64)[:, None])
        except ValueError:
            cats = sorted(set(col))
            if len(cats) > 100:
                raise _error(f"{path}: column {j} is neither numeric nor nominal") from None
            codes = np.searchsorted(np.array(cats), np.array(col))
            blocks.append(np.eye(len(cats))[codes])
    return np.hstack(blocks), np.array(cols[-1])


def parse_mat(path, x_key="X", y_key="y"):
    """A MATLAB file (v4-v7.2, what ``scipy.io.loadmat`` reads) holding the inputs ``X`` (dense or sparse,
    rows are samples) and the labels ``y`` -- Chapelle, Schoelkopf & Zien's SSL benchmark layout."""
    import scipy.io
    import scipy.sparse

    try:
        m = scipy.io.loadmat(str(path))
    except NotImplementedError:
        raise _error(f"{path}: a MATLAB v7.3 (HDF5) file, which scipy cannot read; re-save it with "
                     "save(..., '-v7') or convert it to svmlight") from None
    except Exception as exc:  # scipy raises MatReadError, ValueError, IndexError, ... on a damaged header
        raise _error(f"{path}: not a readable MATLAB file ({type(exc).__name__}: {exc}); delete it and run again "
                     "to download it anew") from None
    missing = [k for k in (x_key, y_key) if k not in m]
    if missing:
        found = sorted(k for k in m if not k.startswith("__"))
        raise _error(f"{path}: no variable {' or '.join(map(repr, missing))} in the file (it holds {found}); "
                     "the registry's x_key / y_key name them")
    X = m[x_key]
    X = X.toarray() if scipy.sparse.issparse(X) else np.asarray(X)
    y = np.asarray(m[y_key]).ravel()
    if X.ndim != 2 or len(X) != len(y):
        raise _error(f"{path}: {x_key} has shape {X.shape} but {y_key} has {len(y)} entries")
    return X.astype(np.float64), y.astype(np.float64)
