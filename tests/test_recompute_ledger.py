"""benchmarks/recompute_ledger.py, the outside check of the claims ledger: it reads the results with pandas and
SciPy alone, so its table of each study kind's metrics and coords is a copy; here it is held to the study modules
(a kind it lacks leaves that kind's claims unchecked, as the samplers kind's nine were until session 16)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from nystrom_bench import studies

_SPEC = importlib.util.spec_from_file_location(
    "nystrom_bench_recompute_ledger", Path(__file__).resolve().parents[1] / "benchmarks" / "recompute_ledger.py")
recompute_ledger = sys.modules["nystrom_bench_recompute_ledger"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(recompute_ledger)


def test_every_study_kind_has_a_metric_table():
    assert set(recompute_ledger.KINDS) == set(studies.available())


@pytest.mark.parametrize("kind", studies.available())
def test_metric_directions_and_coords_match_the_study_module(kind):
    study = studies.get(kind)
    metrics, coords = recompute_ledger.KINDS[kind]
    assert metrics == {name: bool(lower) for name, (_, lower) in study.metrics.items()}
    assert tuple(coords) == tuple(study.coords)
    assert tuple(study.block_cols) == tuple(recompute_ledger.BLOCK_COLS)
