"""``kernels.blas.issparse``: its dense fast path (``type(X) is np.ndarray``) answers as scipy does."""

import numpy as np
import pytest
from scipy import sparse

from nystrom_bench.kernels import blas


class _Sub(np.ndarray):
    """An ndarray subclass: not ``type(X) is np.ndarray``, so it takes scipy's check."""


@pytest.mark.parametrize("make", [
    lambda a: a, lambda a: np.asfortranarray(a), lambda a: a[:, ::2], lambda a: a.view(_Sub),
    lambda a: a.tolist(), lambda a: sparse.csr_matrix(a), lambda a: sparse.csc_array(a), lambda a: sparse.coo_matrix(a),
])
def test_issparse_matches_scipy(make):
    X = make(np.arange(12.0).reshape(3, 4))
    assert blas.issparse(X) is sparse.issparse(X)
