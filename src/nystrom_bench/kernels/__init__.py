"""Kernel functions, evaluated block-wise under a memory budget.

Every kernel is a small object with

- ``kern(X, Y=None)`` -- the kernel matrix ``K[i, j] = k(X[i], Y[j])`` (n x m),
  filled block by block so that temporaries stay in cache;
- ``kern.diag(X)`` -- ``k(x_i, x_i)`` without forming any matrix;
- ``kern.mmv(X, Y, v)`` -- ``K(X, Y) @ v`` without ever holding ``K(X, Y)``;
- ``kern.column_sq_norms(X)`` -- ``||K[:, j]||^2`` for all j, O(n) memory;
- ``kern.gram_mv(X, Z, V)`` -- ``C^T (C V)`` with ``C = K(X, Z)``, one fused pass, C never held
  (``fused=True``: the Gaussian's row-fused pass, each row used while in cache).

Precision: ``kern.astype("float32")`` (or ``make(..., dtype="float32")``) evaluates the blocks in
float32 -- the GEMM and the exp, both about twice as fast as in float64 (the exp of a block is
:func:`nystrom_bench.fastexp.exp_nonpos`: a compiled vectorised loop where numpy's own exp is
scalar, i.e. float64 without AVX-512, and for float32) -- while the products with a
block (``mmv``, ``gram_mv``, ``t_mv``; :func:`matmul` for a held float32 C) run in float64 on the
block cast in cache, and every sum over blocks is float64.  ``gram``'s ``C^T C`` is the exception:
its O(n m^2) SYRK runs in float32 (summed over chunks in float64) -- the solvers that use it refine
the result against the exact products.  The Gaussian kernel shifts both
point sets by the mean of Y before its float32 GEMM, so ``|x|^2`` stays small and the distance
``|x|^2 + |y|^2 - 2 x.y`` keeps its digits for data far from the origin.

Distance-based kernels use the norms trick ``||x-y||^2 = ||x||^2 + ||y||^2 - 2 x.y``
(one GEMM per block) followed by in-place element-wise operations.

Examples
--------
>>> import numpy as np
>>> from nystrom_bench import kernels
>>> X = np.random.default_rng(0).normal(size=(5, 3))
>>> kern = kernels.make("gaussian", gamma=0.5)
>>> K = kern(X)
>>> K.shape, bool(np.allclose(np.diag(K), kern.diag(X)))
((5, 5), True)

A kernel *spec* is the dict form used in configs and by the estimators:
``{"kernel": "gaussian", "gamma": "median"}``.  :func:`check_spec` validates one
without data, :func:`from_spec` builds the kernel (resolving ``"median"``/``"mean"``
widths on X); :func:`spec_keys` lists the keys a kernel accepts.

>>> kernels.from_spec({"kernel": "gaussian", "sigma": 2.0})
Gaussian(gamma=0.125)
"""

from __future__ import annotations

from .base import DEFAULT_BLOCK_BYTES, Kernel, _blas_threads, counting  # noqa: F401 - benchmarks read _blas_threads
from .blas import (
                   DTYPES,
                   as_2d,
                   as_float64,
                   check_dtype,
                   crossprod,
                   dot_t,
                   issparse,
                   matmul,
                   matmul_t,
                   n_rows,
                   row_sq_norms,
)
from .distance import Epanechnikov, Gaussian, Laplacian
from .dot_product import Linear, Polynomial
from .heuristics import HEURISTICS, mean_sq_dist, median_sq_dist, resolve_width
from .pairwise import Pairwise
from .spec import WIDTH_KEYS, available, check_spec, from_spec, make, spec_keys

__all__ = [
    "Kernel",
    "counting",
    "Gaussian",
    "Laplacian",
    "Polynomial",
    "Linear",
    "Epanechnikov",
    "make",
    "available",
    "median_sq_dist",
    "mean_sq_dist",
    "resolve_width",
    "as_2d",
    "check_dtype",
    "matmul",
    "matmul_t",
    "crossprod",
    "as_float64",
    "spec_keys",
    "check_spec",
    "from_spec",
    "Pairwise",
    "issparse",
    "n_rows",
    "row_sq_norms",
    "dot_t",
    "DTYPES",
    "DEFAULT_BLOCK_BYTES",
    "HEURISTICS",
    "WIDTH_KEYS",
]
