"""Study layer v3 (issue 26), enforced: one loop that no study kind overrides, small study modules,
methods that are looked up in one registry, report sections that never import a study."""

import ast
from pathlib import Path

import pytest

from nystrom_bench import methods, sections, studies

SRC = Path(__file__).resolve().parents[1] / "src" / "nystrom_bench"
KIND_MODULES = sorted((SRC / "studies").glob("*/study.py"))


@pytest.mark.parametrize("path", KIND_MODULES, ids=lambda p: p.parent.name)
def test_a_study_module_is_small_and_leaves_the_loop_alone(path):
    assert KIND_MODULES, "no studies/<kind>/study.py found"
    assert len(path.read_text().splitlines()) <= 150, f"{path}: a study kind's module is at most 150 lines"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            defined = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
            assert not defined & {"run", "_evaluate", "_isolated", "_row", "evaluate"}, (
                f"{path.name}: {node.name} overrides the loop; declare coords, data and scoring instead")


@pytest.mark.parametrize("kind", studies.available())
def test_every_kind_draws_its_methods_from_a_registered_family(kind):
    study = studies.get(kind)
    assert methods.names(study.family), f"{kind}: family {study.family!r} has no methods"
    assert not any(hasattr(study, hook) for hook in ("report_tables", "figures", "paper_curve", "tested_rows")), (
        f"{kind}: report hooks belong to its section (studies/<kind>/section.py)")
    assert isinstance(studies.section(kind), sections.Section)


def test_unknown_method_names_the_choices():
    studies.available()  # the kinds' packages declare the families
    with pytest.raises(ValueError, match=r"approach must be one of .*sklearn"):
        methods.build("scale", "x", {"approach": "falkon"})
