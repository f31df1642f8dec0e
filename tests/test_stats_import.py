"""jobs.scipy_docstrings_left_as_they_are: the analysis job imports scipy.stats without SciPy's docstring
parsing, and with the same functions, answers and parser afterwards."""

import json
import subprocess
import sys

_PROBE = """
import json, sys
import numpy as np
from nystrom_bench import jobs
if sys.argv[1] == "patched":
    with jobs.scipy_docstrings_left_as_they_are():
        import scipy.stats as sps
else:
    import scipy.stats as sps
from scipy._lib import _docscrape, _array_api
rng = np.random.default_rng(0)
x, y = rng.normal(size=30), rng.normal(size=30)
w = sps.wilcoxon(x, y)
print(json.dumps({
    "wilcoxon": [float(w.statistic), float(w.pvalue)], "friedman": float(sps.friedmanchisquare(x, y, x + y).pvalue),
    "q": float(sps.studentized_range.ppf(0.95, 5, np.inf)), "rank": sps.rankdata([3, 1, 2, 2]).tolist(),
    "parser": [_docscrape.FunctionDoc.__module__, _docscrape.FunctionDoc.__name__,
               _array_api.FunctionDoc is _docscrape.FunctionDoc],
    "doc": sps.wilcoxon.__doc__.splitlines()[0], "note": "Array API" in sps.rankdata.__doc__,
    "parameters": list(__import__("inspect").signature(sps.wilcoxon).parameters)}))
"""


def _probe(mode):
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_scipy_stats_imported_without_docstring_parsing_answers_the_same():
    """The same test results, signatures and first docstring lines; SciPy's parser is back after the import;
    only the notes SciPy adds to its docstrings at import are missing (the work skipped)."""
    plain, patched = _probe("plain"), _probe("patched")
    assert plain["note"] and not patched["note"]  # the parsing was skipped
    for key in ("wilcoxon", "friedman", "q", "rank", "parser", "doc", "parameters"):
        assert patched[key] == plain[key], key
    assert patched["parser"] == ["scipy._lib._docscrape", "FunctionDoc", True]
    assert "nan_policy" in patched["parameters"]


def test_nothing_changes_where_scipy_stats_is_imported_already():
    import scipy.stats  # noqa: F401
    from scipy._lib import _docscrape

    from nystrom_bench import jobs

    parser = _docscrape.FunctionDoc
    with jobs.scipy_docstrings_left_as_they_are():
        assert _docscrape.FunctionDoc is parser
    assert _docscrape.FunctionDoc is parser


def test_the_installed_scipy_is_the_release_the_patch_was_verified_with():
    """Where SciPy moves to another release the analysis job imports scipy.stats as it is (slower, never wrong);
    this test says so, so that whoever upgrades re-checks the decorators and moves the pin."""
    import scipy

    from nystrom_bench import jobs

    assert scipy.__version__.startswith(jobs.SCIPY_DOCSTRINGS_VERIFIED), (
        f"SciPy {scipy.__version__} is not {jobs.SCIPY_DOCSTRINGS_VERIFIED}x: check that scipy.stats' import-time "
        "docstring decorators still only index, append to and print a FunctionDoc, then move "
        "jobs.SCIPY_DOCSTRINGS_VERIFIED")
