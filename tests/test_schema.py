"""The workflow schema (config/schema.yaml) holds every study kind's params, in step with the kinds.

Snakemake's ``validate`` then reports a bad ``params:`` key or value before any job, as the
Python checks (:func:`nystrom_bench.config.check`) do.
"""

import copy
from pathlib import Path

import pytest
import yaml

from nystrom_bench import studies
from nystrom_bench.config import workflow_schema

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "config" / "schema.yaml"


def _validate(cfg):
    from snakemake.utils import validate

    validate(cfg, str(SCHEMA))


def test_schema_file_is_generated_from_the_study_kinds():
    on_disk = yaml.safe_load(SCHEMA.read_text())
    assert workflow_schema(on_disk) == on_disk, (
        "config/schema.yaml is out of step with the study kinds' params_schema: run "
        "`python -m nystrom_bench.config schema` and commit the file")


def test_default_config_is_valid_and_validation_adds_no_params():
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    before = {s: copy.deepcopy(b.get("params")) for s, b in cfg["studies"].items()}
    _validate(cfg)
    assert {s: b.get("params") for s, b in cfg["studies"].items()} == before


@pytest.mark.parametrize("kind", studies.available())
def test_every_study_kind_declares_its_params(kind):
    schema = studies.get(kind).params_schema
    assert schema is not None, f"study kind {kind!r}: declare params_schema (its params: keys as JSON schemas)"
    assert all("default" in spec for spec in schema.values()), f"{kind}: every param needs a default"


@pytest.mark.parametrize("kind", studies.available())
@pytest.mark.parametrize("named_by", ["name", "kind"])
def test_an_unknown_param_is_reported_by_snakemake_validate(kind, named_by):
    block = {"datasets": ["diabetes"], "seeds": [0], "kernels": {"gaussian": {}}, "methods": {"a": {}},
             "params": {"no_such_param": 1}}
    name = kind if named_by == "name" else "my_block"
    if named_by == "kind":
        block["kind"] = kind
    with pytest.raises(Exception, match="no_such_param"):
        _validate({"studies": {name: block}})


@pytest.mark.parametrize("kind", studies.available())
def test_a_param_of_the_wrong_type_is_reported(kind):
    key = next(iter(studies.get(kind).params_schema))
    block = {"kind": kind, "datasets": ["diabetes"], "seeds": [0], "kernels": {"gaussian": {}},
             "methods": {"a": {}}, "params": {key: {"not": "a valid value"}}}
    with pytest.raises(Exception, match="ValidationError"):
        _validate({"studies": {"b": block}})
