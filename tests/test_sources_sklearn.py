"""scikit-learn's bundled data sets read from its files without importing scikit-learn (issue 39: an obtain
job's start-up): the arrays must be the loaders' own bits, dtypes and shapes."""

import subprocess
import sys

import numpy as np
import pytest

from nystrom_bench.data import sources


@pytest.mark.parametrize("loader", sorted(sources._SKLEARN_READERS))
def test_direct_read_is_the_loaders_bits(loader):
    direct = sources._from_sklearn(loader)
    via_sklearn = sources._from_sklearn(loader, direct=False)
    for a, b in zip(direct, via_sklearn, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_scale_matches_sklearn_on_columns_needing_the_second_centring():
    from sklearn.preprocessing import scale

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50), np.full(50, 3.0), 1e9 + rng.normal(size=50)])
    with pytest.warns(UserWarning):
        expected = scale(X.copy(), copy=False)
    assert sources._sklearn_scale(X.copy()).tobytes() == expected.tobytes()


def test_obtain_of_a_bundled_set_imports_no_sklearn():
    code = ("import sys; from nystrom_bench import data; data.obtain('wine'); data.obtain('diabetes'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_loader_goes_through_sklearn():
    X, y = sources._from_sklearn("load_iris")
    assert X.shape == (150, 4) and X.dtype == np.float64 and len(y) == 150


def test_checking_a_bundled_set_imports_no_sklearn():
    """The config check (every Snakemake start-up) asks check_available of each data set: a bundled set that obtain
    reads from its files needs no scikit-learn import (about 1.5 CPU-s a start-up)."""
    code = ("import sys; from nystrom_bench import data; data.check_available('wine'); "
            "data.check_available('diabetes'); print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("loader", ["load_iris", "load_no_such_set"])
def test_check_available_asks_sklearn_for_other_loaders(monkeypatch, loader):
    from nystrom_bench.data.errors import DataError

    monkeypatch.setattr(sources, "info", lambda name: {"source": f"sklearn:{loader}"})
    if loader == "load_iris":
        sources.check_available("x")
    else:
        with pytest.raises(DataError, match=r"data set 'x': scikit-learn has no loader 'load_no_such_set'"):
            sources.check_available("x")
