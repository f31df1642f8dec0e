"""The layering of DESIGN.md, enforced: no module in src/ imports one above it, not even inside a function;
and the generic layers never name a study kind or one of its labels (they read the kinds' declarations).

From the ground up (DESIGN.md, "Layers"): the small utilities; kernels, data, results (and lowrank,
the dense factors samplers and approximations share); sampling,
criteria, solvers; sharedwork (the run jobs' memo of deterministic work); approx; learners; selection; the services stats, report, tracking (which never
import a study), claims, findings; studies; config, jobs.  A module may import a lower layer or
a module of its own package (``learners.krr`` -> ``learners._base``).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "nystrom_bench"

LAYERS = [
    {"atomic", "seeding", "provenance", "profiling", "_names", "_cli", "fastexp", "_fastexp_numba", "papers",
     "_tracking_records",  # the records the MLflow-free tracking clients hand tracking (Metric, Param, Obj, Page)
     "pdftable"},  # pdftable: fpdf2 tables drawn fast (report and findings use it)
    {"kernels", "data", "results", "lowrank"},
    {"sampling", "criteria", "solvers", "integration"},
    {"sharedwork"},  # a run job's memo of deterministic work (its shared leverage sampler uses sampling, lowrank)
    {"approx"},
    {"learners", "spectrum"},
    {"selection"},
    {"methods"},
    {"tracking_layout", "_tracking_rest", "tracking_bulk", "tracking_sqlite"},  # tracking's pure layout, REST client,
    # SQLite bulk writer, SQLite client without MLflow
    {"stats", "tracking"},
    {"report"},
    {"paper_evidence"},  # a paper's printed table read as a study's results (claims runs a claim's rule on it)
    {"claims"},
    {"findings"},
    {"html_report"},  # the Snakemake HTML report's figures and captions (reads findings' answer records)
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


# -- the generic layers never name a study kind or its labels (issue 38) ------------------------------------
#: the generic layers: the services, the study layer's bases and what plans and runs the studies; the kinds'
#: own code is in studies/<kind>/ (``advise`` is a mini-study of its own on the library, no reader of the kinds)
GENERIC = {"methods", "sections", "studies", "tracking_layout", "tracking_bulk", "tracking_sqlite", "stats", "tracking", "report", "claims", "paper_evidence", "findings", "html_report",
           "results", "config", "jobs", "cli"}
#: words that are a kind's label and also a generic word of these layers, each with what it means there
SAME_WORD = {
    "n": "a count (rows, pairs, units)",
    "m": "the library's landmark count in a call the guide prints (KRR(n_components=m))",
    "ratio": "an effect kind of the paired tests (stats: ratio or difference)",
    "samplers": "the key under which a findings property record lists its sampler entries (answers.json)",
}


def _library_words():
    """Names the library itself defines (samplers, approximations, kernels, KRR's option values): a config may
    use them as method labels, and the generic layers may name them as the library's."""
    from sklearn.utils._param_validation import StrOptions

    from nystrom_bench import approx, kernels, learners, sampling

    words = {*sampling.available(), *approx.available(), *kernels.available()}
    for constraints in learners.KRR._parameter_constraints.values():
        words |= {o for c in constraints if isinstance(c, StrOptions) for o in c.options}
    return words


def _kind_words():
    """``{word: why it belongs to a kind}``: kind names, method families, coords, own questions, report-section
    coord roles, and the config blocks and method labels of config/config.yaml and config/paper.yaml."""
    import yaml

    from nystrom_bench import studies

    words = {}
    for kind in studies.available():
        study = studies.get(kind)
        for word, why in [(kind, "a study kind"), (study.family, f"{kind}'s method family"),
                          *[(c, f"a coord of {kind}") for c in (*study.coords, *study.curve_coords)],
                          *[(q["id"], f"a question of {kind}") for q in study.questions],
                          *[(c, f"a coord role of {kind}") for c in studies.section(kind).coord_roles]]:
            words.setdefault(str(word), why)
    for cfg in ("config.yaml", "paper.yaml"):
        blocks = yaml.safe_load((ROOT.parents[1] / "config" / cfg).read_text())["studies"]
        for block, spec in blocks.items():
            words.setdefault(block, f"a block of config/{cfg}")
            for label in spec.get("methods", {}):
                words.setdefault(label, f"a method label of config/{cfg}")
    library = _library_words()
    return {w: why for w, why in words.items() if w not in library and w not in SAME_WORD}


def _code_strings(tree):
    """The string constants of a module's code (docstrings left out: they may give a kind as an example)."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(n.value, n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def _naming(path, words, root=ROOT):
    return [f"{path.relative_to(root)}:{line} names {value!r} ({words[value]})"
            for value, line in _code_strings(ast.parse(path.read_text())) if value in words]


def test_no_generic_module_names_a_study_kind_or_its_labels():
    words = _kind_words()
    assert {"gnkr", "consistency", "log2_gamma", "criterion", "nystrom_gsa"} <= set(words)  # the list is not empty
    generic = [p for p, parts, _ in _modules() if parts and parts[0] in GENERIC and not (
        parts[0] == "studies" and len(parts) > 1)]
    assert len(generic) >= len(GENERIC) - 1
    bad = [line for p in generic for line in _naming(p, words)]
    assert not bad, ("declare these in the kind's package (studies/<kind>/: Study.questions, curve_coords, "
                     "method_calls, its section's coord_roles) and read the declaration:\n" + "\n".join(bad))


def test_the_label_check_sees_a_kind_named_in_code(tmp_path):
    words = _kind_words()
    bad = tmp_path / "findings.py"
    bad.write_text('"""Mentions gnkr in a docstring only."""\nCURVES = ("log2_gamma", "n")\nQ = {"id": "selection"}\n')
    assert sorted(ln.split(" (")[0] for ln in _naming(bad, words, tmp_path)) == [
        "findings.py:2 names 'log2_gamma'", "findings.py:3 names 'selection'"]
