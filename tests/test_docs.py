"""The documentation site (docs/, `make docs`): every public class and function of the library is in
the API reference, the generated pages (findings, one per paper) say what they should, the README is a
front page, and (slow) the whole site builds with warnings as errors, the examples gallery included."""

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nystrom_bench

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS))
import _gen  # noqa: E402  (docs/_gen.py: the pages written before each build)


def _public(module):
    """A module's public classes and functions: its ``__all__``, else what it defines without a leading
    underscore; constants are left to the module's docstring."""
    names = list(module.__all__) if hasattr(module, "__all__") else [
        n for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", "").startswith(module.__name__)]
    return {n for n in names if inspect.isclass(getattr(module, n)) or inspect.isroutine(getattr(module, n))}


def _documented():
    """``{module: {name, ...}}`` of the autosummary entries of docs/api/*.rst (under their currentmodule)."""
    found = {}
    for page in sorted((DOCS / "api").glob("*.rst")):
        module, in_summary = None, False
        for line in page.read_text().splitlines():
            if m := re.match(r"\.\. currentmodule:: (\S+)", line):
                module = m.group(1)
            elif line.startswith(".. autosummary::"):
                in_summary = True
            elif in_summary and re.match(r"   [A-Za-z_]\w*$", line):
                found.setdefault(module, set()).add(line.strip())
            elif in_summary and line and not line.startswith("   "):
                in_summary = False
    return found


def _library_modules():
    return sorted(m.name for m in pkgutil.iter_modules(nystrom_bench.__path__) if not m.name.startswith("_"))


def test_every_public_module_class_and_function_is_in_the_api_reference():
    documented = _documented()
    missing_modules = [m for m in _library_modules() if f"nystrom_bench.{m}" not in documented]
    assert not missing_modules, f"modules without an API page: {missing_modules}; add them to docs/api/*.rst"
    missing = {mod: sorted(_public(importlib.import_module(mod)) - names) for mod, names in documented.items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"public names missing from docs/api/*.rst (add them to the autosummary): {missing}"
    unknown = {mod: sorted(n for n in names if not hasattr(importlib.import_module(mod), n))
               for mod, names in documented.items()}
    assert not {k: v for k, v in unknown.items() if v}, unknown


def test_every_registered_sampler_has_its_page():
    from nystrom_bench import sampling

    assert set(sampling.available()) <= _documented()["nystrom_bench.sampling"]


def test_paper_pages_name_the_paper_list_every_claim_and_show_the_ledger_verdicts():
    from nystrom_bench import papers

    for key in papers.available():
        doc = papers.load(key)
        path = ROOT / "src" / "nystrom_bench" / "papers" / f"{key}.yaml"
        claims = doc["claims"]
        page = _gen.paper_page(path, {})
        assert page.startswith(f"# Reproducing {doc['name']}\n") and "(after a run)" in page
        assert all(f"(`{c['id']}`)" in page for c in claims)
        first = claims[0]
        ledger = {(doc["name"], first["id"]): {"verdict": "not testable", "ours": "a | b"}}
        page = _gen.paper_page(path, ledger)
        row = next(ln for ln in page.splitlines() if f"(`{first['id']}`)" in ln)
        assert row.endswith("| a \\| b | not testable |")
        assert "1 not testable" in page and f"**`{first['id']}`** (not testable)" in page


def test_findings_page_comes_from_the_run_else_from_the_readme_snapshot(tmp_path):
    from nystrom_bench import findings

    (tmp_path / "README.md").write_text(
        f"intro\n{findings.SNAPSHOT_START}\n_Run of x_\n\n### Answers\n\nan answer\n{findings.SNAPSHOT_END}\n")
    source, body = _gen._findings_text(tmp_path)
    assert "README" in source and "## Answers" in body and "### Answers" not in body
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "FINDINGS.md").write_text("# Findings\n\n## Answers\n\nthe run's answer\n")
    source, body = _gen._findings_text(tmp_path)
    assert "FINDINGS.md" in source and "the run's answer" in body and "# Findings" not in body


def test_readme_is_a_front_page_with_working_install_lines_and_the_snapshot():
    from nystrom_bench import findings

    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert text.count(findings.SNAPSHOT_START) == 1 and text.count(findings.SNAPSHOT_END) == 1
    assert "pip install .  " in text and 'pip install ".[workflow]"' in text
    assert "make reproduce" in text and "make test" in text and "nystrom-bench --help" in text
    assert "pip install nystrom-bench" not in text  # not on the package index


def test_docs_extra_is_declared_and_make_docs_treats_warnings_as_errors():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"sphinx", "numpydoc", "sphinx-gallery", "myst-parser", "pydata-sphinx-theme"} <= {
        re.split(r"[<>=\[]", d)[0] for d in extras["docs"]}
    rule = (ROOT / "Makefile").read_text().split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "sphinx -W" in rule and ".installed-docs" in rule


@pytest.mark.slow  # the whole site with the executed gallery: ~3-5 min on 2 cores
def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx_gallery", reason="the docs extra is not installed (make docs installs it)")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
                         capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert out.returncode == 0, out.stderr[-5000:]
    html = tmp_path / "html"
    for page in ("index", "findings", "getting_started", "api/index", "auto_examples/index"):
        assert (html / f"{page}.html").is_file(), page
    assert len(list((html / "auto_examples").glob("plot_*.html"))) >= 6
    assert len(list((html / "papers").glob("*.html"))) == len(list((ROOT / "src/nystrom_bench/papers").glob("*.yaml"))) + 1
