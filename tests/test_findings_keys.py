"""findings._keys: ``Series.map(_key)`` with each distinct value converted once -- the same values, dtype, index
and name on every kind of column a results table has."""

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import findings


@pytest.mark.parametrize("values", [
    pd.Series(["uniform", "kmeans", "uniform", None]),
    pd.Series([1.0, 0.1, np.nan, 2.5, 1.0, 1e20]),
    pd.Series([1, 2, 1], name="m"),
    pd.Series(["0.1", 0.1, 1.0, "1", None], dtype=object),
    pd.Series(["x", "y"], index=[5, 7], name="method"),
    pd.Series(["a", "b", "a"], dtype="category"),
    pd.Series([True, False, True]),
    pd.Series([], dtype=float),
    pd.Series(np.float32([0.5, 2.0])),
])
def test_keys_equal_map_key(values):
    want = values.map(findings._key)
    got = findings._keys(values)
    pd.testing.assert_series_equal(got, want)
    assert list(got) == [findings._key(v) for v in values]
