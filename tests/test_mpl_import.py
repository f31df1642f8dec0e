"""jobs.matplotlib_docstrings_left_as_they_are: an analysis job imports pyplot without matplotlib's property tables
in docstrings, with the same classes, signatures and pixels, and ``kwdoc`` back afterwards."""

import json
import subprocess
import sys

_PROBE = """
import hashlib, inspect, json, sys
import matplotlib
matplotlib.use("Agg")
if sys.argv[1] == "patched":
    from nystrom_bench import jobs
    plt = jobs.job_pyplot()
else:
    from nystrom_bench import report
    plt = report.pyplot()
import matplotlib.artist
from matplotlib.lines import Line2D
from matplotlib.text import Text
fig, ax = plt.subplots(figsize=(2.5, 2), dpi=80)
ax.plot([1, 2, 3], [1e-3, 1e-1, 1e-2], marker="o", label="a")
ax.set_yscale("log")
ax.set_title("t")
ax.legend()
fig.tight_layout()
fig.canvas.draw()
print(json.dumps({
    "pixels": hashlib.sha256(bytes(fig.canvas.buffer_rgba())).hexdigest(),
    "signature": list(inspect.signature(Line2D.set).parameters),
    "text_signature": list(inspect.signature(Text.set).parameters),
    "table": "markevery" in (Line2D.set.__doc__ or ""),
    "plot_table": "markevery" in (plt.plot.__doc__ or ""),
    "kwdoc_back": matplotlib.artist.kwdoc.__module__ == "matplotlib.artist"
                  and "markevery" in matplotlib.artist.kwdoc(Line2D),
    "first_line": (Line2D.set.__doc__ or "").strip().splitlines()[0]}))
"""


def _probe(mode):
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_pyplot_imported_without_property_tables_draws_the_same():
    """The same pixels, ``set`` signatures and first docstring lines; ``kwdoc`` is matplotlib's again after the
    import; only the property tables are missing (the work skipped)."""
    plain, patched = _probe("plain"), _probe("patched")
    assert plain["table"] and plain["plot_table"]
    assert not patched["table"] and not patched["plot_table"]  # the tables were not written
    for key in ("pixels", "signature", "text_signature", "kwdoc_back", "first_line"):
        assert patched[key] == plain[key], key
    assert patched["kwdoc_back"] and "markevery" in patched["signature"]


def test_nothing_changes_where_pyplot_is_imported_already():
    import matplotlib.artist
    import matplotlib.pyplot  # noqa: F401

    from nystrom_bench import jobs

    kwdoc = matplotlib.artist.kwdoc
    with jobs.matplotlib_docstrings_left_as_they_are():
        assert matplotlib.artist.kwdoc is kwdoc
    assert matplotlib.artist.kwdoc is kwdoc


def test_the_installed_matplotlib_is_the_release_the_patch_was_verified_with():
    """Where matplotlib moves to another release the analysis job imports pyplot as it is (slower, never wrong);
    this test says so, so that whoever upgrades re-checks where matplotlib calls ``artist.kwdoc`` and moves the pin."""
    import matplotlib

    from nystrom_bench import jobs

    assert matplotlib.__version__.startswith(jobs.MATPLOTLIB_DOCSTRINGS_VERIFIED), (
        f"matplotlib {matplotlib.__version__} is not {jobs.MATPLOTLIB_DOCSTRINGS_VERIFIED}x: check that "
        "matplotlib.artist.kwdoc still only writes docstrings (Artist.__init_subclass__, _docstring's kwdoc fields), "
        "then move jobs.MATPLOTLIB_DOCSTRINGS_VERIFIED")
