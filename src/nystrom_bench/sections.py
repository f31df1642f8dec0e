"""Report sections: how one study kind's results are analysed and drawn beyond the generic report.

The generic report (:mod:`nystrom_bench.report`) and tests (:mod:`nystrom_bench.stats`) serve every
study kind.  A kind whose paper has its own layout -- a paper's table, its numbers beside ours, a
figure of its own -- adds a :class:`Section` subclass decorated with ``@register`` in its package,
``studies/<kind>/section.py``.  The workflow looks the section up by the kind's name
(:func:`nystrom_bench.studies.section`); the report never imports a study.

A section may override:

- :meth:`Section.tested_rows`: the result rows the generic paired and Friedman tests use (rows
  outside their method's assumptions, :func:`nystrom_bench.results.within_assumptions`, are left
  out before any override sees them, so no paired test, Friedman test or CD diagram ranks them);
- :meth:`Section.tables`: extra ``(title, DataFrame, note)`` tables for the study's PDF;
- :meth:`Section.figures`: figures of its own (after the generic ones);
- :meth:`Section.paper_curve`: the paper's numbers drawn dashed beside ours in the generic
  metric-vs-coord figures.
"""

from __future__ import annotations

import functools

from .results import within_assumptions

__all__ = ["Section", "register", "registered"]

_REGISTRY = {}


def register(cls):
    """Class decorator: add a :class:`Section` subclass under ``cls.kind`` (a study kind's name)."""
    _REGISTRY[cls.kind] = cls
    return cls


def registered():
    """``{kind: Section subclass}`` of the sections registered so far (each kind's package registers its
    own when it is imported: :func:`nystrom_bench.studies.section` loads them all first)."""
    return dict(_REGISTRY)


class Section:
    """A study kind's part of the report (see module docstring); the base adds nothing."""

    kind = None
    #: roles of the kind's coords for the findings' questions (e.g. ``{"integration": "mode", "ratio":
    #: "budget"}``): a coord with a role is ranked like a method key of that role
    coord_roles = {}

    def __init_subclass__(cls, **kw):
        """A subclass's own :meth:`tested_rows` gets the rows within their assumptions only, as the base's."""
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("tested_rows")
        if own is not None and not getattr(own, "_within_assumptions", False):
            @functools.wraps(own)
            def tested_rows(self, df):
                return own(self, within_assumptions(df)[0])

            tested_rows._within_assumptions = True
            cls.tested_rows = tested_rows

    def tested_rows(self, df):
        """The result rows the generic paired and Friedman tests use: every row measured within its
        method's assumptions (:func:`nystrom_bench.results.within_assumptions`; the others are shown
        apart in the report, never ranked).  A section may drop more rows -- those with no counterpart
        in any block (e.g. an exact machine outside the grid) -- by overriding this; its override
        receives the rows within their assumptions already."""
        return within_assumptions(df)[0]

    def tables(self, df, block):
        """Extra ``(title, DataFrame, note)`` tables for the study's PDF (``block``: its config block)."""
        return []

    def figures(self, df, info, out_dir):
        """Figures of its own into ``out_dir``: ``[{"file", "caption"}]`` (``info``: the analysis info)."""
        return []

    def paper_curve(self, dataset, method, kernel, metric, coord):
        """The paper's ``[(coord value, metric value), ...]`` for one line of a metric-vs-coord figure, or None."""
        return None
