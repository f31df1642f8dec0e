"""Splits and preprocessing: deterministic train/test(/validation) indices from
``(dataset, seed)`` (:mod:`nystrom_bench.seeding`), scaling fitted on the training part,
and :class:`Split`, the scaled arrays of one split.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..seeding import rng as seeded_rng
from .catalog import info
from .errors import DataError
from .sources import obtain

__all__ = ["make_split", "split_spec", "PROTOCOL_KEYS", "train_size", "preprocess", "SCALINGS", "Split", "apply_split", "load"]

SCALINGS = ("none", "standardize", "unit_norm", "standardize+unit_norm")


# -- sizes ----------------------------------------------------------------------------------------
#: keys that choose a split protocol: an override naming any of them replaces the registry's protocol
PROTOCOL_KEYS = ("test_fraction", "n_train", "n_test", "source")
#: every key a split override may name: a protocol key or one added to the protocol
SPLIT_KEYS = PROTOCOL_KEYS + ("validation_fraction", "n_labeled")


def split_spec(name, overrides=None):
    """The split protocol of ``name``: the registry's ``split:`` updated by ``overrides``.

    An override that names a protocol key (:data:`PROTOCOL_KEYS`) replaces the registry's
    protocol as a whole (``{"n_train": 500}`` on a ``test_fraction`` data set means 500
    training points and the rest for testing); other keys (``validation_fraction``,
    ``n_labeled``) are added to it.
    """
    base = dict(info(name)["split"])
    if overrides is not None and not isinstance(overrides, dict):
        raise DataError(f"data set {name!r}: split must be a dict of protocol keys like {{'test_fraction': 0.3}}, "
                        f"got {overrides!r}")
    overrides = dict(overrides or {})
    for key in overrides:
        if key not in SPLIT_KEYS:
            from .._names import suggest

            raise DataError(f"data set {name!r}: unknown split key {key!r}{suggest(key, SPLIT_KEYS)}; the keys are "
                            f"{', '.join(SPLIT_KEYS)}")
    if set(overrides) & set(PROTOCOL_KEYS):
        base = {k: v for k, v in base.items() if k not in PROTOCOL_KEYS}
    return {**base, **overrides}


def _holdout_sizes(name, spec, n):
    """``(n_train, n_test)`` of a random holdout (``test_fraction``, or ``n_train`` with an optional
    ``n_test``, default: the rest).  ``test_fraction: 0`` keeps every row, in order, for training."""
    if "test_fraction" in spec:
        n_test = int(round(float(spec["test_fraction"]) * n))
        n_train = n - n_test
    else:
        n_train = int(spec["n_train"])
        n_test = int(spec["n_test"]) if spec.get("n_test") is not None else n - n_train
    if n_train < 1 or n_test < 0 or n_train + n_test > n:
        raise DataError(f"data set {name!r}: split {spec} does not fit {n} samples")
    return n_train, n_test


def _validation_size(spec, n_train):
    """How many of ``n_train`` points ``validation_fraction`` moves to the validation part."""
    if not spec.get("validation_fraction"):
        return 0
    return int(round(float(spec["validation_fraction"]) * n_train))


def train_size(name, overrides=None):
    """Number of training points the split of ``name`` gives, from the registry alone.

    The same protocol as :func:`make_split` (the registry's ``split:`` updated by
    ``overrides``), without loading the data: ``test_fraction`` f gives
    ``n - round(f n)`` (n = ``shape[0]``), ``n_train``/``n_test`` gives ``n_train``,
    and ``validation_fraction`` vf then removes ``round(vf * n_train)``.  For
    ``source: true`` the size of the source's own training file is known only from a
    top-level ``n_train:`` key of the entry; without one the answer is ``None``.
    Raises :class:`DataError` where :func:`make_split` would (a split that does not fit).
    """
    e = info(name)
    spec = split_spec(name, overrides)
    if spec.get("source"):
        if e.get("n_train") is None:
            return None
        n_train = int(e["n_train"])
    else:
        n_train, _ = _holdout_sizes(name, spec, int(e["shape"][0]))
    return n_train - _validation_size(spec, n_train)


# -- splits ---------------------------------------------------------------------------------------
def make_split(name, seed, n, y=None, source_n_train=None, overrides=None):
    """Train/test indices of data set ``name`` for ``seed`` (deterministic), plus training noise.

    Protocols (the registry's ``split:``, updated by ``overrides`` as :func:`split_spec`
    says): random holdout ``test_fraction`` (0: every row, in order, is training data and
    the test part is empty); fixed sizes ``n_train`` (and ``n_test``, default the rest); ``source: true`` -- the
    source's own test set (the first ``source_n_train`` rows are its training file);
    plus ``validation_fraction`` (train/validation/test) and ``n_labeled``
    (semi-supervised: that many labelled training points spread evenly over the
    classes, the rest unlabelled).

    Returns a dict with sorted int indices ``train``, ``test`` (and ``validation``,
    ``labeled`` when asked) and ``train_noise`` (added to the training targets: seed
    001's N(0, sd^2) noise, zeros otherwise).  Classification splits are stratified.
    :func:`train_size` gives ``len(result["train"])`` without the data.
    """
    e = info(name)
    rng = seeded_rng(seed, "split", name)
    spec = split_spec(name, overrides)
    stratify = e["task"] != "regression" and y is not None
    if spec.get("source"):
        if source_n_train is None:
            raise DataError(f"data set {name!r}: split 'source' needs the source's own train/test files")
        train, test = np.arange(source_n_train), np.arange(source_n_train, n)
    else:
        n_train, n_test = _holdout_sizes(name, spec, n)
        train, test = _draw_split(np.arange(n), n_train, n_test, y if stratify else None, rng)
    out = {"train": np.sort(train), "test": np.sort(test)}
    if spec.get("validation_fraction"):
        n_val = _validation_size(spec, len(train))
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
def preprocess(X_train, X_test, scaling="standardize"):
    """Scale features, fitted on the training part only.

    ``standardize``: zero mean, unit variance per feature (constant features left at 0);
    ``unit_norm``: each row divided by its Euclidean norm; ``standardize+unit_norm``: both (Chen et al. (NIPS 2016)).
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


def load(name, seed=0, scaling="standardize", cache_dir=None, split=None):
    """Load data set ``name`` and its split for ``seed``: a :class:`Split`.

    ``split``: overrides of the registry's split protocol (:func:`split_spec`), e.g.
    ``{"test_fraction": 0.5}`` or ``{"n_train": 1000}``, as a study block's ``split:``
    and a result row's ``params.split`` record them.
    """
    X, y, meta = obtain(name, cache_dir=cache_dir, return_meta=True)
    sp = make_split(name, seed, len(X), y, meta["n_train"], overrides=split)
    return apply_split(name, seed, X, y, sp, scaling)
