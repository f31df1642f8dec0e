"""The source papers as data: one YAML file per paper, read by one loader.

Each file ``<key>.yaml`` beside this module holds what one paper reports, with where
each number comes from, and the claims this project tests:

- ``key``, ``name`` (authors and venue, as reports cite it), ``title``;
- ``tables``: ``{table id: {"where": "Table 1", "caption", ..., data}}`` -- the paper's
  numbers as printed (each table says how its data is laid out; a study module reads
  its paper's tables through :func:`table`, never from a literal in code);
- ``claims``: a list of testable claims, each ``{"id", "claim", "where", "paper_value",
  "study", "rule", ...}``; :mod:`nystrom_bench.claims` computes their verdicts from the
  result files.

``nystrom_bench.yaml`` holds the claims of this project itself (under its own name).
The loader checks the structure once and caches the result; a malformed file is a
:class:`PaperDataError` naming the file and the key.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["available", "files", "load", "table", "all_claims", "PaperDataError", "VERDICTS"]

_DIR = Path(__file__).parent

#: the verdicts a claim can get, best first
VERDICTS = ("reproduced", "better than the paper", "partly reproduced", "not reproduced", "not testable", "not run")


class PaperDataError(ValueError):
    """A paper data file that is missing, malformed or lacks a key."""


def available():
    """The keys of every paper data file (file stems), sorted."""
    return sorted(p.stem for p in _DIR.glob("*.yaml"))


def files():
    """The paper data files (absolute paths as strings), sorted: the workflow's inputs of the ledger."""
    return [str(p) for p in sorted(_DIR.glob("*.yaml"))]


def _check(key, doc):
    where = f"{_DIR / (key + '.yaml')}"
    if not isinstance(doc, dict):
        raise PaperDataError(f"{where}: expected a mapping at the top level")
    for field in ("key", "name", "title"):
        if not doc.get(field):
            raise PaperDataError(f"{where}: missing {field!r}")
    if doc["key"] != key:
        raise PaperDataError(f"{where}: 'key' is {doc['key']!r}; it must equal the file name {key!r}")
    tables = doc.setdefault("tables", {}) or {}
    if not isinstance(tables, dict):
        raise PaperDataError(f"{where}: 'tables' must be a mapping of table id -> table")
    for tid, t in tables.items():
        if not isinstance(t, dict) or not t.get("where"):
            raise PaperDataError(f"{where}: table {tid!r} needs a 'where' (the table or figure it comes from)")
    claims = doc.setdefault("claims", []) or []
    seen = set()
    for i, c in enumerate(claims):
        for field in ("id", "claim", "where", "study"):
            if not isinstance(c, dict) or not c.get(field):
                raise PaperDataError(f"{where}: claim #{i + 1} lacks {field!r}")
        if c["id"] in seen:
            raise PaperDataError(f"{where}: claim id {c['id']!r} appears twice")
        seen.add(c["id"])
        if not c.get("rule") and not c.get("not_testable"):
            raise PaperDataError(f"{where}: claim {c['id']!r} needs a 'rule' or a 'not_testable' reason")
    doc["tables"], doc["claims"] = tables, claims
    return doc


@functools.cache
def _load(key):
    import yaml

    path = _DIR / f"{key}.yaml"
    if not path.exists():
        raise PaperDataError(f"no paper data file {key!r}; choose one of {', '.join(available())}")
    try:
        # libyaml's safe loader where PyYAML has it: the same documents, ~12x faster (every analysis job reads
        # all the paper files for its claims)
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise PaperDataError(f"{path}: not valid YAML: {exc}") from None
    return _check(key, doc)


def load(key):
    """The paper data of ``key`` (a dict; treat it as read-only: it is cached)."""
    return _load(key)


def table(key, table_id):
    """One table of a paper, e.g. ``table("chen_nips2016", "table1")``."""
    doc = load(key)
    try:
        return doc["tables"][table_id]
    except KeyError:
        raise PaperDataError(f"paper {key!r} has no table {table_id!r}; it has "
                             f"{', '.join(doc['tables']) or 'none'}") from None


def all_claims():
    """Every claim of every paper file, in file order, each with ``paper`` (the paper's name) and
    ``paper_key`` added."""
    out = []
    for key in available():
        doc = load(key)
        out += [{**c, "paper": doc["name"], "paper_key": key} for c in doc["claims"]]
    return out
