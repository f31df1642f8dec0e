"""``exp`` of non-positive arguments, in place, fast on every x86 CPU: the element-wise half of a
Gaussian or Laplacian kernel block.

``exp_nonpos(a)`` sets ``a <- exp(min(a, 0))`` (the clamp removes the round-off of the norms trick;
NaN stays NaN). Two implementations, chosen once per process, at the first call:

- ``"numba"``: one compiled, vectorised pass (:mod:`nystrom_bench._fastexp_numba`: fdlibm's
  algorithm in float64, Cephes' ``expf`` in float32). Measured accuracy over ``[-746, 0]``:
  float64 within 1 ulp of the exact value (at most 2 ulp from numpy's ``exp``, which has its own
  < 1 ulp error), float32 within 1 ulp of the correctly rounded value (numpy's float32 ``exp``:
  2 ulp); results agree bit for bit on every CPU with FMA, whatever its vector width.
- ``"numpy"``: ``np.minimum`` then ``np.exp``.

``"auto"`` (the default) takes numba for float32 everywhere, and for float64 where numpy's float64
``exp`` is not vectorised, i.e. where numpy has no AVX-512 code path in use (numpy vectorises its
float64 ``exp`` with AVX-512 only: on an AVX2 CPU it runs at ~0.3 * 10^9 values/s a core against
~1 * 10^9 for the numba loop; with AVX-512 numpy's is the faster one and is kept, so those
results are unchanged). Measured rates and kernel-block ratios: docs/guide/performance.md.

Fallback, never silently wrong: if numba is not installed, fails to compile, or its result on a
fixed set of arguments (0, tiny, the subnormal range, underflow, NaN, -inf, and 4,000 points across
``[-746, 0]``) is more than 2 ulp from numpy's ``exp`` (float32: from the float64 result rounded),
the numpy path is used (with a ``RuntimeWarning`` in the last two cases). ``NYSTROM_BENCH_EXP``
= ``auto`` | ``numba`` | ``numpy`` (or :func:`set_choice`) overrides the choice (``numba`` still
falls back when it fails). :func:`backend` tells which path a dtype takes.

The Gaussian kernel blocks (:mod:`nystrom_bench.kernels.distance`) also call the module's fused loops
directly (:func:`compiled`): the clamp + exp of a GEMM tile written into its block, and thin blocks
straight from the differences. The same self-check covers the tile loops (they inline the same
element function, so they agree bit for bit with ``exp_nonpos``) and a small thin block against
numpy's formula.
"""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np

__all__ = ["exp_nonpos", "backend", "compiled", "set_choice", "numpy_exp_vectorised", "ulp_distance", "CHOICES"]

CHOICES = ("auto", "numba", "numpy")
ENV = "NYSTROM_BENCH_EXP"
#: largest distance in ulps from numpy's exp that the compiled loops may show at the self-check
SELF_CHECK_ULPS = 2

_lock = threading.Lock()
_state: dict = {}  # "loops": {dtype: fn} or None once loaded, "module": the numba module or None; "choice"


def numpy_exp_vectorised():
    """Whether numpy's float64 ``exp`` runs its AVX-512 code here (numpy >= 2.4 groups it under
    the ``X86_V4`` dispatch target, older numpy under ``AVX512F``; ``NPY_DISABLE_CPU_FEATURES``
    switches either off)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # pragma: no cover - numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    key = "X86_V4" if "X86_V4" in feats else "AVX512F"
    return bool(feats.get(key, False))


def ulp_distance(a, ref):
    """``|a - ref|`` in units of the spacing of ``ref`` at ``ref`` (its ulp; subnormals included).
    Equal values (also NaN vs NaN, inf vs inf) are 0 apart."""
    a, ref = np.asarray(a), np.asarray(ref)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - ref) / np.spacing(np.abs(ref).astype(ref.dtype))
    same = (a == ref) | (np.isnan(a) & np.isnan(ref))
    return np.where(same, 0.0, d)


def _check_args(dtype):
    low = -746.0 if dtype == np.float64 else -104.0
    edge = [0.0, -0.0, -1e-300, -1e-30, -2.0**-60, -1e-8, -0.5, -np.log(2) / 2, -1.0, -np.log(2),
            -20.0, -87.3, -88.8, -100.0, -103.9, -700.0, -708.39, -708.4, -709.0, -740.0,
            -745.1, -745.2, low, low - 1.0, -1e300, -np.inf, np.nan, 1e-12, 3.0, np.inf]
    grid = np.linspace(low, 0.0, 4000)
    with np.errstate(over="ignore"):
        return np.concatenate([np.asarray(edge), grid]).astype(dtype)


def _self_check(fn, dtype):
    """Largest ulp distance of ``fn`` from the reference on :func:`_check_args` (inf if NaN where
    the reference has none, or the other way round)."""
    x = _check_args(dtype)
    got = x.copy()
    fn(got)
    with np.errstate(invalid="ignore"):
        ref = np.exp(np.minimum(x.astype(np.float64), 0.0)).astype(dtype)
    if not np.array_equal(np.isnan(got), np.isnan(ref)):
        return np.inf
    return float(np.max(ulp_distance(got, ref)))


def _load():
    """``{dtype: loop}`` of the self-checked numba loops, or None (numba missing or failing)."""
    import importlib

    try:
        nb = importlib.import_module("nystrom_bench._fastexp_numba")
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - a broken numba/llvmlite install must not break kernels
        warnings.warn(f"numba exp failed to compile ({type(exc).__name__}: {exc}); using numpy's exp",
                      RuntimeWarning, stacklevel=3)
        return None
    loops = {np.dtype(np.float64): nb.exp_nonpos_f64, np.dtype(np.float32): nb.exp_nonpos_f32}
    tiles = {np.dtype(np.float64): nb.exp_tile_f64, np.dtype(np.float32): nb.exp_tile_f32}
    for dt, fn in loops.items():
        tile = tiles[dt]

        def tiled(a, tile=tile):  # the tile loop from a 1-row tile into itself
            row = a.reshape(1, -1)
            tile(row, row, 0, 0)

        err = max(_self_check(fn, dt), _self_check(tiled, dt))
        if not err <= SELF_CHECK_ULPS:
            warnings.warn(f"numba {dt} exp is {err} ulp from numpy's at its self-check (allowed "
                          f"{SELF_CHECK_ULPS}); using numpy's exp", RuntimeWarning, stacklevel=3)
            return None
    err = _thin_check(nb)
    if not err <= 1e-13:
        warnings.warn(f"numba thin Gaussian block is {err:.2g} (relative) from numpy's formula at its "
                      "self-check (allowed 1e-13); using numpy's exp", RuntimeWarning, stacklevel=3)
        return None
    _state["module"] = nb
    return loops


def _thin_check(nb):
    """Largest relative error of the compiled thin Gaussian blocks (both output precisions, the float32 one
    against the float64 result rounded) against ``exp(-g ||x - y||^2)`` on a fixed small case."""
    rng = np.random.default_rng(0)
    X, Y, g = rng.normal(size=(40, 7)), rng.normal(size=(3, 7)), 0.3
    ref = np.exp(-g * ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))
    out = np.empty((40, 3))
    nb.gauss_thin_f64(X, Y, g, out)
    out32 = np.empty((40, 3), dtype=np.float32)
    nb.gauss_thin_f32(X, Y, g, out32)
    return max(float(np.max(np.abs(out / ref - 1))),
               float(np.max(np.abs(out32 / ref.astype(np.float32) - 1))))


def _choice():
    choice = _state.get("choice")
    if choice is None:
        choice = os.environ.get(ENV, "auto").strip().lower() or "auto"
        if choice not in CHOICES:
            raise ValueError(f"{ENV}={choice!r}: choose one of {', '.join(CHOICES)}")
        _state["choice"] = choice
    return choice


def _loops():
    if "loops" not in _state:
        with _lock:
            if "loops" not in _state:
                _state["loops"] = _load()
    return _state["loops"]


def backend(dtype=np.float64):
    """``"numba"`` or ``"numpy"``: the path :func:`exp_nonpos` takes for ``dtype`` in this process.

    Found once per (choice, dtype) and kept in the module state (the kernel blocks ask on every call: the
    CPU-feature lookup cost ~3 microseconds a time, ~130,000 times in the samplers job); :func:`set_choice`
    changes the choice, so the next call finds the path for it."""
    choice = _choice()
    known = _state.setdefault("backend", {})
    found = known.get((choice, dtype))
    if found is None:
        found = known[(choice, dtype)] = _backend(np.dtype(dtype), choice)
    return found


def _backend(dt, choice):
    if choice == "numpy" or dt not in (np.float64, np.float32):
        return "numpy"
    if choice == "auto" and dt == np.float64 and numpy_exp_vectorised():
        return "numpy"
    return "numba" if _loops() is not None else "numpy"


def compiled(dtype=None):
    """The self-checked compiled module (:mod:`nystrom_bench._fastexp_numba`) where this process may use
    it, else None: for ``dtype`` given, where :func:`exp_nonpos` takes the numba path for it; for
    ``dtype=None``, wherever the loops loaded and the choice is not ``numpy`` (the thin Gaussian blocks,
    whose cost is the pass over X, not the exp)."""
    if dtype is not None:
        return _state.get("module") if backend(dtype) == "numba" else None
    if _choice() == "numpy" or _loops() is None:
        return None
    return _state.get("module")


def exp_nonpos(a):
    """``a <- exp(min(a, 0))`` in place (float64 or float32 array of any shape); returns ``a``."""
    if backend(a.dtype) == "numpy":
        np.minimum(a, 0.0, out=a)
        return np.exp(a, out=a)
    fn = _state["loops"][a.dtype]
    if a.flags.c_contiguous:
        fn(a.reshape(-1))
    else:  # same values whatever the layout: through a contiguous copy
        tmp = np.ascontiguousarray(a)
        fn(tmp.reshape(-1))
        a[...] = tmp
    return a


def set_choice(choice):
    """Set the choice (``auto``, ``numba`` or ``numpy``) for this process, as ``NYSTROM_BENCH_EXP``
    does; returns the previous one (benchmarks and tests compare the paths side by side)."""
    choice = str(choice).strip().lower()
    if choice not in CHOICES:
        raise ValueError(f"exp choice {choice!r}: choose one of {', '.join(CHOICES)}")
    old = _choice()
    _state["choice"] = choice
    return old
