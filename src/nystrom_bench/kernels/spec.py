"""Kernels by name (:func:`make`) and kernel specs, the dict form of configs and estimators:
:func:`check_spec` without data, :func:`from_spec` on X (data-driven widths)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from .base import Kernel
from .distance import Epanechnikov, Gaussian, Laplacian
from .dot_product import Linear, Polynomial
from .heuristics import HEURISTICS, _heuristic_sq_dist, resolve_width

__all__ = ["make", "available", "spec_keys", "check_spec", "from_spec", "WIDTH_KEYS"]

_REGISTRY = {cls.name: cls for cls in (Gaussian, Laplacian, Polynomial, Linear, Epanechnikov)}
_REGISTRY["rbf"] = Gaussian


def available():
    """Names accepted by :func:`make`."""
    return sorted(_REGISTRY)


def make(name, dtype=None, **params):
    """Build a kernel by name: ``make("gaussian", gamma=0.5)``.

    Parameters
    ----------
    name : str or Kernel
        One of :func:`available`; a :class:`Kernel` instance is returned unchanged (in ``dtype``
        if given).
    dtype : {"float64", "float32"} or None
        Precision of the kernel blocks (None: float64, or the instance's own).
    **params
        The kernel's hyper-parameters (see each class).
    """
    if isinstance(name, Kernel):
        return name if dtype is None else name.astype(dtype)
    if dtype is not None:
        return make(name, **params).astype(dtype)
    try:
        cls = _REGISTRY[str(name).lower()]
    except KeyError:
        from .._names import unknown

        raise ValueError(unknown("kernel", name, available())) from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"kernel {name!r}: bad parameters {params}: {exc}") from None


#: the hyper-parameters each kernel takes in a spec (``rbf`` is an alias of ``gaussian``)
_SPEC_PARAMS = {
    "gaussian": ("gamma", "sigma", "b"),
    "rbf": ("gamma", "sigma", "b"),
    "laplacian": ("gamma",),
    "polynomial": ("gamma", "degree", "coef0"),
    "linear": (),
    "epanechnikov": ("sigma",),
}
#: keys that set a kernel width: a positive number or one of HEURISTICS
WIDTH_KEYS = ("gamma", "sigma", "b")


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _kernel_name(spec, where):
    name = spec.get("kernel")
    if name is None:
        raise ValueError(f"{where}: no 'kernel' given; choose one of {', '.join(available())}")
    key = name.lower() if isinstance(name, str) else name
    if not isinstance(key, str) or key not in _SPEC_PARAMS:
        from .._names import unknown

        raise ValueError(f"{where}: {unknown('kernel', name, available())}")
    return key


def spec_keys(name):
    """The keys (besides ``"kernel"``) that kernel ``name`` accepts in a spec.

    Parameters
    ----------
    name : str
        One of :func:`available` (case-insensitive).

    Returns
    -------
    tuple of str
        The kernel's hyper-parameters (gaussian/rbf: ``gamma, sigma, b``; laplacian:
        ``gamma``; polynomial: ``gamma, degree, coef0``; linear: none; epanechnikov:
        ``sigma``), followed by ``"scale"`` (the factor of a ``"median"``/``"mean"``
        width) for every kernel that has a width.
    """
    params = _SPEC_PARAMS[_kernel_name({"kernel": name}, "spec_keys")]
    return params + (("scale",) if any(k in WIDTH_KEYS for k in params) else ())


def check_spec(spec, where="kernel"):
    """Validate a kernel spec without data and return a normalised copy.

    Parameters
    ----------
    spec : Mapping
        ``{"kernel": name, **params}``: ``name`` one of :func:`available`
        (case-insensitive), params among :func:`spec_keys` of it:

        - widths ``gamma``, ``sigma``, ``b`` (at most one of them): a positive finite
          number, or ``"median"``/``"mean"`` -- resolved on data by :func:`from_spec`;
        - ``degree``: a positive integer; ``coef0``: a finite number;
        - ``scale``: a positive finite number, only together with a heuristic width.
    where : str, default="kernel"
        Where the spec comes from; every error message starts with it
        (e.g. ``"studies.krr.kernels.g"`` or ``"KRR"``).

    Returns
    -------
    dict
        A new dict ``{"kernel": name, **params}`` with ``name`` lower-cased (``"rbf"``
        stays ``"rbf"``: it is an alias of ``"gaussian"`` that :func:`make` accepts),
        widths, ``coef0`` and ``scale`` as float, ``degree`` as int, heuristics as
        given; keys in the order given.

    Raises
    ------
    ValueError
        One message, starting with ``where``, naming the offending key and the fix.
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: a kernel spec must be a mapping like {{'kernel': 'gaussian', 'gamma': 0.5}}, "
                         f"got {spec!r}")
    name = _kernel_name(spec, where)
    allowed = _SPEC_PARAMS[name]
    keys = spec_keys(name)
    out = {"kernel": name}
    for key, value in spec.items():
        if key == "kernel":
            continue
        if key not in keys:
            takes = f"it takes: {', '.join(allowed)}" if allowed else "it takes no parameters"
            raise ValueError(f"{where}: {key!r} is not a parameter of the {name} kernel; {takes}")
        if key in WIDTH_KEYS:
            if isinstance(value, str):
                if value not in HEURISTICS:
                    raise ValueError(f"{where}: {key} = {value!r} is not a width heuristic; give a positive number "
                                     f"or one of {', '.join(map(repr, HEURISTICS))}")
            elif not _is_number(value) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: {key} must be a positive finite number or one of "
                                 f"{', '.join(map(repr, HEURISTICS))}, got {value!r}")
            else:
                value = float(value)
        elif key == "degree":
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)) or value < 1:
                raise ValueError(f"{where}: degree must be a positive integer, got {value!r}")
            value = int(value)
        elif key == "coef0":
            if not _is_number(value) or not np.isfinite(value):
                raise ValueError(f"{where}: coef0 must be a finite number, got {value!r}")
            value = float(value)
        else:  # scale
            if not _is_number(value) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: scale must be a positive finite number, got {value!r}")
            value = float(value)
        out[key] = value
    widths = [k for k in WIDTH_KEYS if k in out]
    if len(widths) > 1:
        raise ValueError(f"{where}: give at most one of {', '.join(k for k in WIDTH_KEYS if k in allowed)} for the "
                         f"{name} kernel, got {' and '.join(widths)}")
    if "scale" in out and not (widths and isinstance(out[widths[0]], str)):
        got = f"{widths[0]} = {out[widths[0]]!r}" if widths else "no width"
        raise ValueError(f"{where}: scale only applies to a heuristic width ({' or '.join(map(repr, HEURISTICS))}), "
                         f"got {got}; drop scale or set the width to 'median'/'mean'")
    return out


def from_spec(spec, X=None, where="kernel"):
    """Build the :class:`Kernel` of a spec, resolving heuristic widths on X.

    Parameters
    ----------
    spec : dict
        A kernel spec, validated by :func:`check_spec`.
    X : array-like of shape (n_samples, n_features), default=None
        The data a ``"median"``/``"mean"`` width is computed from (``d`` = median or mean
        pairwise squared distance, ``s`` = ``scale``, default 1): ``gamma = s / d``,
        ``sigma = sqrt(s / (1 / d))`` (i.e. ``sqrt(s d)``), ``b = d / s``.  Needed only
        for heuristic widths.
    where : str, default="kernel"
        Prefix of every error message.

    Returns
    -------
    Kernel
    """
    spec = check_spec(spec, where)
    name = spec.pop("kernel")
    scale = spec.pop("scale", 1.0)
    for key, value in spec.items():
        if not isinstance(value, str):
            continue
        if X is None:
            raise ValueError(f"{where}: {key} = {value!r} is computed from the data: pass X (or give {key} as a "
                             f"number)")
        try:
            if key == "gamma":
                spec[key] = resolve_width(value, X, scale)
            elif key == "sigma":  # as the KRR study always did: sigma = sqrt(scale / (1 / d))
                spec[key] = float(np.sqrt(scale / resolve_width(value, X)))
            else:  # b
                spec[key] = _heuristic_sq_dist(value, X) / scale
        except ValueError as exc:
            raise ValueError(f"{where}: {key} = {value!r}: {exc}") from None
    try:
        return make(name, **spec)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
