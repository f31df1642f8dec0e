"""provenance.canonical: params whose repr (what Snakemake compares) ignores the config's key order."""

import pickle

import pytest

from nystrom_bench.provenance import KeyList, canonical, config_hash


def test_repr_ignores_key_order_at_any_depth_but_keeps_iteration_order():
    a = {"methods": {"exact": {"approximation": "exact"}, "nys": {"sampler": "uniform", "n_landmarks": 10}},
         "seeds": [2, 0, 1], "names": KeyList(["b", "a"])}
    b = {"names": KeyList(["a", "b"]), "seeds": [2, 0, 1],
         "methods": {"nys": {"n_landmarks": 10, "sampler": "uniform"}, "exact": {"approximation": "exact"}}}
    assert repr(canonical(a)) == repr(canonical(b))
    assert config_hash(a) == config_hash(b)
    assert list(canonical(a)["methods"]) == ["exact", "nys"]  # the job still runs in the config's order
    assert canonical(a) == a


def test_plain_lists_keep_their_order_in_the_repr():
    # a grid's order can change results (e.g. a random stream continued over widths)
    assert repr(canonical({"grid": [1, 2]})) != repr(canonical({"grid": [2, 1]}))
    assert repr(canonical(KeyList(["x", "y"]))) == repr(canonical(KeyList(["y", "x"])))


def test_config_hash_unchanged_for_plain_blocks():
    import hashlib
    import json

    block = {"b": [1, 2.5, "x"], "a": {"z": None, "y": (1, 2)}}
    old = hashlib.sha256(json.dumps(block, sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert config_hash(block) == old  # MLflow tags of earlier runs stay comparable


def test_pickles_for_snakemake_scripts_and_rejects_other_types():
    c = canonical({"a": 1})
    assert pickle.loads(pickle.dumps(c)) == {"a": 1}
    with pytest.raises(TypeError, match="dict or a KeyList"):
        canonical([1, 2])
