"""The layering of DESIGN.md, enforced: no module in src/ imports one above it, not even inside a function.

From the ground up (DESIGN.md, "Layers"): the small utilities; kernels, data, results (and lowrank,
the dense factors samplers and approximations share); sampling,
criteria, solvers; approx; learners; selection; the services stats, report, tracking (which never
import a study), claims, findings; studies; config, jobs.  A module may import a lower layer or
a module of its own package (``learners.krr`` -> ``learners._base``).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "nystrom_bench"

LAYERS = [
    {"atomic", "seeding", "provenance", "profiling", "_names", "_cli", "fastexp", "_fastexp_numba", "papers"},
    {"kernels", "data", "results", "lowrank"},
    {"sampling", "criteria", "solvers", "integration"},
    {"approx"},
    {"learners", "spectrum"},
    {"selection"},
    {"methods"},
    {"tracking_layout", "_tracking_rest"},  # tracking's pure layout and its REST client
    {"stats", "tracking"},
    {"report"},
    {"claims"},
    {"findings"},
    {"sections"},
    {"studies"},
    {"config"},
    {"jobs"},
    {"advise"},  # `nystrom-bench advise`: a paired mini-study on the user's data (uses learners, stats, data)
    {"cli"},  # the `nystrom-bench` command line: its subcommands are imported by name on first use
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("").parts
        yield path, [p for p in rel if p != "__init__"], path.name == "__init__.py"


def _imported(path, parts, is_pkg):
    """Top-level nystrom_bench modules ``path`` imports (anywhere in it), with line numbers."""
    package = parts if is_pkg else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
                names = [target] if node.module else [base + [a.name] for a in node.names]
            elif node.module and node.module.split(".")[0] == "nystrom_bench":
                target = node.module.split(".")[1:]
                names = [target] if target else [[a.name] for a in node.names]
            else:
                continue
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "nystrom_bench"]
        else:
            continue
        for target in names:
            if target:
                yield target[0], node.lineno


def test_every_module_has_a_layer():
    tops = {parts[0] for _, parts, _ in _modules() if parts}
    assert tops <= set(LAYER), f"place these modules in LAYERS (and DESIGN.md): {sorted(tops - set(LAYER))}"


@pytest.mark.parametrize("path,parts,is_pkg", [m for m in _modules() if m[1]], ids=lambda v: None)
def test_imports_point_down(path, parts, is_pkg):
    me = parts[0]
    bad = [f"{path.relative_to(ROOT)}:{line} imports {top!r} (layer {LAYER[top]}) from layer {LAYER[me]}"
           for top, line in _imported(path, parts, is_pkg) if top != me and LAYER.get(top, -1) >= LAYER[me]]
    assert not bad, "\n".join(bad)


def test_the_walker_sees_imports_inside_functions(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text("def f():\n    from .. import studies\n    import nystrom_bench.jobs\n")
    found = {t for t, _ in _imported(src, ["report", "mod"], False)}
    assert found == {"studies", "jobs"}
