"""Name lookups with a suggestion: ``unknown(kind, name, choices)`` -> one message naming the choices and,
where a choice is close (:func:`difflib.get_close_matches`), "did you mean ...?".  Bottom layer: no imports
from the package."""

from __future__ import annotations

import difflib

__all__ = ["suggest", "unknown"]


#: "did you mean" only for a name at least this close (:func:`difflib.get_close_matches`' ratio): 'nystroem' ->
#: 'nystrom' (0.93), 'gauss' -> 'gaussian' (0.77), 'optimum' -> 'optimal' (0.71); not 'generalized_nystrom' ->
#: 'modified_nystrom' (0.63: only the shared '_nystrom')
SUGGEST_CUTOFF = 0.7


def suggest(name, choices, cutoff=SUGGEST_CUTOFF):
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` to ``name`` (as given, else lower-cased)
    at similarity ``cutoff`` or more, or ``""``."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, [str(c) for c in choices], n=1, cutoff=cutoff)
    if not close:
        close = difflib.get_close_matches(name.lower(), [str(c) for c in choices], n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown(kind, name, choices, extra=""):
    """The message for an unknown ``kind`` ``name``: ``"unknown sampler 'kmean' (did you mean 'kmeans'?);
    choose one of ..."``."""
    choices = sorted(str(c) for c in choices)
    return f"unknown {kind} {name!r}{suggest(name, choices)}; choose one of {', '.join(choices)}{extra}"
