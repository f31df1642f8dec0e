"""Methods: the ways of solving a study's problem, one small class each (benchopt's solver is the model).

A study block's ``methods:`` maps labels to option blocks.  Each study kind draws its methods from
one *family* (:func:`family`): a family names the block key that picks the method (``approach``
for the scale study, ``approximation`` for the criterion studies, none where every block is the
same method with different options) and its default.  A method is a :class:`Method` subclass
decorated with ``@register`` that declares:

- ``family`` and ``name`` (the value of the family's key that picks it);
- ``options``: the block keys it takes, each a JSON schema (``default`` included) -- the config is
  checked against them before any job runs; ``options = None`` leaves the checking to the
  estimator's own parameter validation (:meth:`Method.check`);
- :meth:`Method.estimator`: the object one trial fits and predicts with (scikit-learn's API; the
  study's loop fits, predicts, times and scores it);
- optionally :meth:`Method.skip` (why a pairing cannot run, before any job), :meth:`Method.fit_key`
  (trials with equal keys share one fit), :meth:`Method.record` (what a result row records) and
  :meth:`Method.landmark_counts` (checked against each data set's training size).

Adding a method = one class in its study kind's ``studies/<kind>/methods.py`` (which declares the
family) + its test; a method of the user's may register anywhere, before or after that module loads.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Method", "family", "register", "build", "names", "RESOURCE_KEYS", "options_of", "check_sampler", "families", "undeclared"]

#: keys of a method block that set job resources (with ``split_jobs: method``), not method options
RESOURCE_KEYS = ("threads", "mem_mb", "runtime")

_FAMILIES = {}
#: family -> {name: class} of methods registered before their family was declared
_PENDING = {}


def family(name, key=None, default=None, not_implemented=None):
    """Declare a method family: ``key`` is the block key that picks the method (None: one method
    only, ``default``), ``default`` the method of a block without it; ``not_implemented`` names
    methods a paper has that have no implementation here (a block asking for one is told so)."""
    _FAMILIES[name] = {"key": key, "default": default, "methods": _PENDING.pop(name, {}),
                       "not_implemented": not_implemented or {}}


def register(cls):
    """Class decorator: add a :class:`Method` subclass to its family under ``cls.name``.

    A family is declared by its study kind's package (``studies/<kind>/methods.py``); a method
    registered before that package is imported (e.g. one of the user's, registered before any study
    is loaded) waits for its family's :func:`family` call.  :func:`undeclared` names the families
    nobody declared (the study registry checks it once every kind is loaded)."""
    if cls.family in _FAMILIES:
        _FAMILIES[cls.family]["methods"][cls.name] = cls
    else:
        _PENDING.setdefault(cls.family, {})[cls.name] = cls
    return cls


def families():
    """The names of the declared method families."""
    return sorted(_FAMILIES)


def undeclared():
    """``{family: [method classes]}`` of methods registered to a family no :func:`family` call declared."""
    return {fam: sorted(c.__name__ for c in classes.values()) for fam, classes in _PENDING.items()}


def _family(family_name):
    try:
        return _FAMILIES[family_name]
    except KeyError:
        raise ValueError(f"unknown method family {family_name!r}: a study kind's package declares it with "
                         f"family(); load the study kinds first (nystrom_bench.studies.available())") from None


def names(family_name):
    """The method names of a family (declared by a loaded study kind)."""
    return sorted(_family(family_name)["methods"])


def options_of(block):
    """A method block without its resource keys."""
    return {k: v for k, v in (block or {}).items() if k not in RESOURCE_KEYS}


def check_sampler(name):
    """ValueError naming the choices unless ``name`` is a registered landmark sampler."""
    from . import sampling

    if name not in sampling.available():
        raise ValueError(f"unknown sampler {name!r}; choose one of {', '.join(sampling.available())}")


def build(family_name, label, block):
    """The :class:`Method` a config block describes (``label``: its name in the config), options
    checked against the method's schema; ValueError naming the problem and the choices."""
    fam = _family(family_name)
    opts = options_of(block)
    name = opts.pop(fam["key"], fam["default"]) if fam["key"] else fam["default"]
    missing = {str(k).lower() for k in fam["not_implemented"]}
    if isinstance(name, str) and name.lower() in missing:
        raise ValueError(f"{fam['key']} {name!r} is not implemented yet (the report lists it as such); "
                         f"choose one of {', '.join(sorted(fam['methods']))}")
    try:
        cls = fam["methods"][name]
    except (KeyError, TypeError):
        raise ValueError(f"{fam['key']} must be one of {', '.join(sorted(fam['methods']))}, got {name!r}") from None
    return cls(label, opts)


class Method:
    """Base class of a method (see module docstring)."""

    family = None
    name = None
    #: option -> JSON schema (with ``default``); None: any option, the estimator validates
    options = {}

    def __init__(self, label, options):
        self.label = label
        declared = self.options or {}
        unknown = sorted(set(options) - set(declared)) if self.options is not None else []
        if unknown:
            allowed = sorted({*declared, *RESOURCE_KEYS, *filter(None, [_FAMILIES[self.family]["key"]])})
            raise ValueError(f"unknown key(s) {unknown}; allowed: {allowed}")
        _validate(options, declared)
        #: the block's options with the defaults filled in
        self.opts = {**{k: s["default"] for k, s in declared.items() if "default" in s}, **options}

    def __repr__(self):
        return f"{type(self).__name__}({self.label!r}, {self.opts!r})"

    # -- config time ------------------------------------------------------------------------------
    def check(self, params, block):
        """Raise ValueError naming a problem the schema cannot see (``params``: the study's, resolved)."""

    def skip(self, dataset_info, params):
        """Why this method cannot run on a data set (a string, reported before any job), or None."""
        return None

    def landmark_counts(self, params):
        """The landmark counts this method uses (checked against each data set's training size)."""
        return []

    # -- run time ---------------------------------------------------------------------------------
    def estimator(self, trial):  # pragma: no cover - abstract
        """The (unfitted) object of one trial: ``fit(X, y)``, and ``predict(X)`` where the study predicts."""
        raise NotImplementedError

    def fit_key(self, trial):
        """Trials of this method with equal keys share one fit (None: every trial fits its own)."""
        return None

    def record(self, est, trial):
        """What a result row records of the fitted estimator: its ``get_params()`` without arrays,
        random states and deprecated names left at ``"deprecated"``."""
        if not hasattr(est, "get_params"):
            return {}
        return {k: v for k, v in est.get_params().items()
                if k not in ("landmarks", "random_state") and not isinstance(v, (np.ndarray, np.random.Generator))
                and not (isinstance(v, str) and v == "deprecated")}


def _validate(values, schemas, where="option"):
    """ValueError for a value outside its JSON schema (the message names the key)."""
    if not values:
        return
    import jsonschema

    for key, value in values.items():
        if key in schemas:
            try:
                jsonschema.validate(value, {k: v for k, v in schemas[key].items() if k != "default"})
            except jsonschema.ValidationError as exc:
                raise ValueError(f"{where} {key!r}: {exc.message}") from None
