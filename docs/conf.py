"""Sphinx configuration of the nystrom-bench documentation (``make docs``).

Sphinx with numpydoc, autosummary, sphinx-gallery and MyST: the library's docstrings are numpydoc,
the gallery is executed at every build, and the guide pages are Markdown.  Before the build,
``docs/_gen.py`` writes the pages that come from data: the findings (the run's
``reports/FINDINGS.md``, else the README's snapshot) and one page per paper (its YAML file and,
after a run, the claims ledger).
"""

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(DOCS))

import _gen  # noqa: E402

import nystrom_bench  # noqa: E402

_gen.write_all(ROOT, DOCS)

project = "nystrom-bench"
author = "the nystrom-bench authors"
copyright = "2026, the nystrom-bench authors"  # noqa: A001
release = version = nystrom_bench.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "examples/README.rst", "_generated"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4
suppress_warnings = ["myst.header"]  # pages moved from the README start one heading level down

templates_path = ["_templates"]
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "min_reported_time": 1,
    "show_memory": False,
    "doc_module": ("nystrom_bench",),
    "reference_url": {"nystrom_bench": None},
    "backreferences_dir": "api/generated/backreferences",
}

_SHAPE = re.compile(r"shape \(([^)]*)\)")


def _escape_shape_names(app, what, name, obj, options, lines):
    """``of shape (n_samples, n_components_)``: a fitted attribute's trailing underscore inside a
    shape would be a reStructuredText reference; escape it (before numpydoc reads the docstring)."""
    for i, line in enumerate(lines):
        lines[i] = _SHAPE.sub(lambda m: "shape (" + re.sub(r"(\w)_(?=\W|$)", r"\1\\_", m.group(1)) + ")", line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shape_names, priority=400)


html_theme = "pydata_sphinx_theme"
html_title = "nystrom-bench"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# pages without sub-pages get the width of the left sidebar for their tables
html_sidebars = {"index": [], "findings": [], "getting_started": [], "papers/*": []}
html_show_sourcelink = False
