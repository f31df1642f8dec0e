"""Name lookups with a suggestion: ``unknown(kind, name, choices)`` -> one message naming the choices and,
where a choice is close (:func:`difflib.get_close_matches`), "did you mean ...?".  Bottom layer: no imports
from the package."""

from __future__ import annotations

import difflib

__all__ = ["suggest", "unknown"]


def suggest(name, choices):
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` to ``name``, or ``""``."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, [str(c) for c in choices], n=1, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(name.lower(), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown(kind, name, choices, extra=""):
    """The message for an unknown ``kind`` ``name``: ``"unknown sampler 'kmean' (did you mean 'kmeans'?);
    choose one of ..."``."""
    choices = sorted(str(c) for c in choices)
    return f"unknown {kind} {name!r}{suggest(name, choices)}; choose one of {', '.join(choices)}{extra}"
