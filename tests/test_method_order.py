"""Reordering the methods of a study block gives identical rows, for every study kind.

Work shared between methods (the exact kernel, a subset permutation, landmarks of a (data set,
seed)) must depend on what it is keyed by, never on which method asks first.  Each kind runs one
data set and one seed of its tiny workflow block (tests/test_workflow.py) with the methods in the
config's order and reversed; every row must match except measured times and memory.
"""

import json
import math

import pytest
from test_workflow import TINY

from nystrom_bench import data, studies

MEASURED = ("time", "seconds", "memory", "mib", "peak")


def _blocks():
    seen = {}
    for name, block in TINY["studies"].items():
        seen.setdefault(block.get("kind", name), (name, block))
    return sorted(seen.items())


def _comparable(row):
    metrics = {k: v for k, v in row["metrics"].items() if not any(w in k for w in MEASURED)}
    params = {k: v for k, v in row["params"].items() if not any(w in k for w in MEASURED)}
    key = (row["dataset"], row["method"], row["kernel"], row["seed"], json.dumps(row["coords"], sort_keys=True))
    return key, json.dumps(params, sort_keys=True, default=str), metrics


def _run(kind, name, block, methods):
    ds = block["datasets"][0]
    X, y = data.obtain(ds)
    cfg = {**block, "kind": kind, "datasets": [ds], "seeds": [block["seeds"][0]], "methods": methods}
    seed = int(cfg["seeds"][0])
    splits = {seed: data.make_split(ds, seed, len(X), y)}
    study = studies.get(kind)
    return study.run(name, cfg, ds, X, y, splits, None)


@pytest.mark.slow
@pytest.mark.parametrize("kind,named", _blocks(), ids=[k for k, _ in _blocks()])
def test_reversed_methods_give_identical_rows(kind, named):
    name, block = named
    forward = _run(kind, name, block, dict(block["methods"]))
    backward = _run(kind, name, block, dict(reversed(list(block["methods"].items()))))
    a = dict((k, (p, m)) for k, p, m in map(_comparable, forward))
    b = dict((k, (p, m)) for k, p, m in map(_comparable, backward))
    assert len(a) == len(forward) and a.keys() == b.keys()
    for key in a:
        (pa, ma), (pb, mb) = a[key], b[key]
        assert pa == pb, key
        assert ma.keys() == mb.keys(), key
        for metric in ma:
            va, vb = ma[metric], mb[metric]
            same = va == vb or (isinstance(va, float) and math.isnan(va) and math.isnan(vb))
            assert same, f"{kind} {key} {metric}: {va!r} in config order, {vb!r} with the methods reversed"
