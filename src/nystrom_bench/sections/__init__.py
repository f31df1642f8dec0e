"""Report sections: how one study kind's results are analysed and drawn beyond the generic report.

The generic report (:mod:`nystrom_bench.report`) and tests (:mod:`nystrom_bench.stats`) serve every
study kind.  A kind whose paper has its own layout -- a paper's table, its numbers beside ours, a
figure of its own -- adds a :class:`Section` subclass decorated with ``@register`` in a module
named after the kind.  The workflow scripts look the section up by the kind's name
(:func:`get`); neither the report nor a section imports a study.

A section may override:

- :meth:`Section.tested_rows`: the result rows the generic paired and Friedman tests use;
- :meth:`Section.tables`: extra ``(title, DataFrame, note)`` tables for the study's PDF;
- :meth:`Section.figures`: figures of its own (after the generic ones);
- :meth:`Section.paper_curve`: the paper's numbers drawn dashed beside ours in the generic
  metric-vs-coord figures.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["Section", "register", "get"]

_REGISTRY = {}


def register(cls):
    """Class decorator: add a :class:`Section` subclass under ``cls.kind`` (a study kind's name)."""
    _REGISTRY[cls.kind] = cls
    return cls


def get(kind):
    """The report section of the study kind ``kind`` (the generic :class:`Section` if it has none)."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return _REGISTRY.get(kind, Section)()


class Section:
    """A study kind's part of the report (see module docstring); the base adds nothing."""

    kind = None

    def tested_rows(self, df):
        """The result rows the generic paired and Friedman tests use (default: all of them); a section
        drops rows that have no counterpart in any block (e.g. an exact machine outside the grid)."""
        return df

    def tables(self, df, block):
        """Extra ``(title, DataFrame, note)`` tables for the study's PDF (``block``: its config block)."""
        return []

    def figures(self, df, info, out_dir):
        """Figures of its own into ``out_dir``: ``[{"file", "caption"}]`` (``info``: the analysis info)."""
        return []

    def paper_curve(self, dataset, method, kernel, metric, coord):
        """The paper's ``[(coord value, metric value), ...]`` for one line of a metric-vs-coord figure, or None."""
        return None
