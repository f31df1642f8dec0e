"""What the benchmark found: the answers to the questions it exists for, and a practitioner's guide.

One computation per answer.  :func:`study_answers` turns one study's results into *answer records*
(below), one per (question, study, metric); the workflow's report step writes them to
``results/<study>/answers.json`` (:data:`ANSWERS_FILE`) and every reader renders those records and
never ranks again: the study PDF's page one (:func:`answer_lines`), ``reports/summary.pdf`` and
``reports/FINDINGS.md`` (:func:`summary_pdf`, :func:`markdown`), ``results/answers.csv`` (the HTML
report's table, :func:`answers_table`), the README's snapshot and the MLflow notes
(:func:`study_note`, :func:`findings_note`).  No sentence carries a typed number or verdict.

Questions find their contenders by *role*, never by a config label
------------------------------------------------------------------
A question (:data:`QUESTIONS`) names a **role**: one or more method-block keys (``sampler``;
``approximation`` or ``approach``; ``mode``; ``solver`` and ``dtype``).  Within a study, the
contenders are the methods whose blocks set the role and agree on every other key both blocks set
(resource keys and the question's ``free`` keys aside; a key only one block sets, such as ``levels``
of MCM or ``cg_tol`` of CG, separates nothing).  Each largest such set with two role values or more
is one ranking: in ``krc`` the three ``{approximation: nystrom, sampler: X, n_components: 100,
mode: lla}`` blocks answer "Which landmark sampler?", whatever they are called, and a fourth sampler
added to ``config/paper.yaml`` is ranked with them.  ``exclude`` drops contenders with these role
values (the exact method is the yardstick of "Which approximation?", not a contender), ``needs``
keeps only rankings with one of these values, ``unless`` drops rankings with one of them; an
``exclusive`` question takes the rankings that hold its ``needs`` values, which no other question then
ranks.  :data:`QUESTIONS` are the generic questions, asked of every study; a study kind adds its own
(``Study.questions``, carried in the study's info as ``questions``; :func:`all_questions` places each
``before`` the question it names).  A study's
*coords* take roles through its report section (``Section.coord_roles``, e.g. the integration
study's coord ``integration`` is the ``mode``, its ``ratio`` the landmark ``budget``): the values of
such a coord are the contenders (paired within each method and the other coords).

The metrics of a ranking: the study's primary metric, then its other tested metrics; timings (a
metric whose name ends in ``time`` or ``seconds``) only where the question asks about time.

An answer record (a JSON object; :func:`rank_record` builds it)
----------------------------------------------------------------
``question``, ``asks`` (the question's text), ``study``, ``role``, ``column`` (the result column
holding the contenders: ``method`` or a coord), ``metric``, ``label``, ``lower_is_better``,
``timing``, ``headline`` (true for the record the summary shows: a study's first metric, and its
timing where the question asks about time);
``contenders``: ``[{"name", "value", "mean_rank", "wtl"}]`` best first -- ``name`` the config label
(or coord value), ``value`` its role value (``kmeans``), ``mean_rank`` (1 = best) and ``wtl`` its
significant wins/ties/losses against the other contenders;
``ranks``: how the mean ranks were taken -- ``"per data set"``: within each cell (seed x grid point,
and method where the column is a coord) the contenders are ranked, the ranks averaged per group
(``groups``: the study's blocks without the seed), the groups' rankings ranked and averaged over
``n_groups`` groups of ``n_datasets`` data sets (Demsar's way, as the critical-difference
diagrams); ``n_cells`` complete cells;
``friedman``: ``{"statistic", "p"}`` over the groups (three contenders or more) or null; ``cd`` and
``nemenyi`` (``{a: {b: p}}``) for a critical-difference diagram, or null;
``pairs``: every pair of contenders, ``{"a", "b", "n_pairs", "better", "worse", "effect" ("ratio" or
"difference"), "estimate", "ci" [low, high], "p", "p_holm", "outcome" (win/tie/loss of a)}`` --
:func:`nystrom_bench.stats.pairwise_tests`: the Wilcoxon signed-rank test over the paired cells
pooled over every data set (Holm over the contenders' pairs), the Hodges-Lehmann median ratio (or
difference) with its 95% interval;
``best``, ``runner_up``, ``pair`` (the pair best vs runner-up, oriented that way), ``significant``
(the best beats the runner-up at Holm 5%) and ``winner`` (the best where it is significant and better
by :data:`MIN_EFFECT` or more -- for a timing, faster by :data:`MIN_SPEEDUP` or more, so machine load
cannot flip it -- else null).

A budget record (``kind: "budget"``; :func:`budget_record`) answers "How many landmarks?" for a coord
of role ``budget``: ``value`` (the smallest coord value not worse than the largest by more than 1%),
``largest`` and ``steps`` (each value's comparison with the largest).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .methods import RESOURCE_KEYS
from .report import fmt_num, fmt_p

__all__ = ["QUESTIONS", "all_questions", "ANSWERS_FILE", "contender_groups", "study_answers", "rank_record", "budget_record",
           "smallest_budget", "answer_text", "answer_lines", "question_summary", "answers_table", "write_answers",
           "read_answers", "answer_figure", "findings", "markdown", "summary_pdf", "study_note", "findings_note", "snapshot_readme",
           "is_timing"]

#: where the workflow's report step writes a study's answer records
ANSWERS_FILE = "results/{study}/answers.json"
#: a winner beats the runner-up by this much (relative) besides significance ...
MIN_EFFECT = 0.01
#: ... and a timing by this much (10% faster), so that the machine's load cannot flip it
MIN_SPEEDUP = 0.10
ALPHA = 0.05

#: the generic questions the benchmark exists for, asked of every study (module docstring: roles, free, exclude,
#: needs, unless, exclusive, time); ``claims``: the ledger's claims that answer it by their rule (and the coord
#: their slope runs over), where no ranking does; ``guide``: the practitioner's guide row of a question of a
#: kind's own (``{"task", "budget"}``: the fastest contender not significantly worse than the best).  The
#: values named here (``exact``, ``uniform``) are the library's approximation and sampler names.
QUESTIONS = [
    {"id": "sampler", "question": "Which landmark sampler?", "role": ["sampler"]},
    {"id": "approximation", "question": "Which approximation?", "role": ["approximation", "approach"],
     "free": ["sampler"], "exclude": ["exact"]},
    {"id": "exact", "question": "Exact or Nystrom?", "role": ["approximation", "approach"], "free": ["sampler", "mode"],
     "needs": ["exact"]},
    {"id": "mode", "question": "GSA, LLA or NCR?", "role": ["mode"]},
    {"id": "solver", "question": "Which solver and precision?", "role": ["solver", "dtype"], "time": True},
    {"id": "budget", "question": "How many landmarks?", "role": ["budget"]},
    {"id": "nonuniform", "question": "When do non-uniform landmarks beat uniform?", "role": ["sampler"],
     "kind": "property", "reference": "uniform"},
]


def all_questions(extra=()):
    """The generic :data:`QUESTIONS` and the questions of ``extra`` (the study kinds' own, ``Study.questions``,
    or the ``questions`` of studies' infos), each placed before the question its ``before`` names (else at the
    end); a question of the same id or text is listed once.  The values an ``exclusive`` question
    ``needs`` join every other question's ``unless``."""
    out = [dict(q) for q in QUESTIONS]
    for q in extra:
        if any(o["id"] == q["id"] or o["question"] == q["question"] for o in out):
            continue
        at = next((i for i, o in enumerate(out) if o["id"] == q.get("before")), len(out))
        out.insert(at, dict(q))
    taken = [v for q in out if q.get("exclusive") for v in q.get("needs", [])]
    return [q if q.get("exclusive") or not taken else {**q, "unless": [*q.get("unless", []), *taken]} for q in out]


def _asked(infos):
    """The questions of a run: the generic ones and those of its studies' kinds (``infos``: their infos)."""
    return all_questions([q for info in (infos or {}).values() for q in (info or {}).get("questions") or ()])


def is_timing(metric):
    """A timing metric: its name ends in ``time`` or ``seconds`` (``fit_time``, ``selection_seconds``)."""
    return str(metric).endswith(("time", "seconds"))


# -- contenders by role ---------------------------------------------------------------------------
def _settings(block):
    return {k: v for k, v in (block or {}).items() if k not in RESOURCE_KEYS}


def _role_value(block, role):
    vals = [str(block[k]) for k in role if k in block]
    return "/".join(vals) if vals else None


def contender_groups(methods, question):
    """The rankings a question asks of a study's methods: a list of ``[(label, role value), ...]``,
    each in config order (module docstring).  ``methods``: the block's ``{label: settings}``."""
    role, free = list(question.get("role", [])), set(question.get("free", []))
    exclude, needs, unless = (set(question.get(k, [])) for k in ("exclude", "needs", "unless"))
    cands = []
    for label, block in methods.items():
        s = _settings(block)
        v = _role_value(s, role)
        if v is not None and v not in exclude:
            cands.append((label, v, {k: x for k, x in s.items() if k not in role and k not in free}))

    def agree(a, b):
        return all(a[2][k] == b[2][k] for k in a[2].keys() & b[2].keys())

    groups = []
    for seed in cands:
        g = [seed]
        for c in cands:
            if c is not seed and all(agree(c, m) for m in g):
                g.append(c)
        key = frozenset(c[0] for c in g)
        if key not in [frozenset(x[0] for x in h) for h in groups]:
            groups.append(g)
    keys = [frozenset(c[0] for c in g) for g in groups]
    out = []
    for g, k in zip(groups, keys, strict=True):
        if any(k < other for other in keys):
            continue
        values = {c[1] for c in g}
        if len(values) < 2 or (needs and not values & needs) or values & unless:
            continue
        order = [c for c in cands if c[0] in k]
        out.append([(c[0], c[1]) for c in order])
    return out


# -- one ranking ----------------------------------------------------------------------------------
def _varying(df, coords, column):
    return [c for c in coords if c != column and c in df and df[c].notna().any() and df[c].nunique() > 1]


def _jsonable(v):
    if isinstance(v, float | np.floating):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _key(v):
    """A coord or method value as text (0.1 and '0.1' agree; 1.0 -> '1')."""
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _keys(values):
    """``values.map(_key)`` (a Series), each distinct value converted once: a study's table holds a few distinct
    methods or coord values in thousands of rows (the samplers study's ranking mapped 0.5 million cells)."""
    if (not len(values) or isinstance(values.dtype, pd.CategoricalDtype)
            or (values.dtype == object and values.isna().any())):  # map's own answer there (dtype, None kept)
        return values.map(_key)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    text = [_key(u) for u in uniques]
    return pd.Series([text[c] for c in codes], index=values.index, name=values.name)


def rank_record(df, metric, lower, column, contenders, block_cols=("dataset", "kernel", "seed"), coords=()):
    """Rank ``contenders`` (``[(name, role value)]``, values of ``column``) on ``metric``: the fields
    ``contenders``, ``ranks``, ``groups``, ``n_groups``, ``n_datasets``, ``n_cells``, ``friedman``, ``cd``,
    ``nemenyi``, ``pairs``, ``best``, ``runner_up``, ``pair``, ``significant`` and ``winner`` of an answer
    record (module docstring), or None where fewer than two contenders share a complete cell."""
    from scipy import stats as sps

    if df is None or metric not in df or column not in df:
        return None
    values = {str(n): v for n, v in contenders}
    sub = df[df[metric].notna()]
    sub = sub.assign(**{column: _keys(sub[column])})
    sub = sub[sub[column].isin(values)]
    blocks = [b for b in dict.fromkeys([*block_cols, *(["method"] if column != "method" else [])])
              if b in sub and b != column]
    cells = [*blocks, *_varying(sub, coords, column)]
    present = [n for n in values if (sub[column] == n).any()]
    if len(present) < 2:
        return None
    wide = stats.pivot_pairs(sub, metric, column, cells)
    present = [n for n in present if n in wide.columns]
    if len(present) < 2 or not len(wide):
        return None
    wide = wide[present]
    groups = [b for b in blocks if b != "seed"]
    ranks = pd.DataFrame(sps.rankdata(wide.to_numpy() if lower else -wide.to_numpy(), axis=1), index=wide.index,
                         columns=present)
    per_group = ranks.groupby(level=groups).mean() if groups else ranks.mean().to_frame().T
    mean_ranks = pd.DataFrame(sps.rankdata(per_group.to_numpy(), axis=1), columns=present).mean()
    fried, cd, nemenyi = None, None, None
    sub = sub[sub[column].isin(present)]
    if len(present) >= 3 and len(per_group) >= 2:
        res = stats.critical_difference(sub, metric, column, blocks, _varying(sub, coords, column), lower,
                                        methods=present)
        if res is not None:
            mean_ranks = res["mean_ranks"]  # the same ranks, from the function the CD diagrams use
            fried = {"statistic": float(res["friedman_stat"]), "p": float(res["friedman_p"])}
            if res["friedman_p"] < ALPHA:
                cd = float(res["cd"])
                nemenyi = {a: {b: float(res["nemenyi"].loc[a, b]) for b in present if b != a} for a in present}
    order = sorted(present, key=lambda n: (float(mean_ranks[n]), present.index(n)))
    wtl = stats.pairwise_tests(sub, metric, column, cells, lower, methods=order)
    pairs = [{"a": r["method"], "b": r["versus"], "n_pairs": int(r["n_pairs"]), "better": int(r["better"]),
              "worse": int(r["worse"]), "effect": r["effect"], "estimate": _jsonable(r["estimate"]),
              "ci": [_jsonable(r["ci_low"]), _jsonable(r["ci_high"])], "p": _jsonable(r["wilcoxon_p"]),
              "p_holm": _jsonable(r["p_holm"]), "outcome": r["outcome"]} for _, r in wtl.iterrows()]
    score = {n: [0, 0, 0] for n in order}
    for p in pairs:
        i = {"win": 0, "tie": 1, "loss": 2}.get(p["outcome"])
        if i is not None:
            score[p["a"]][i] += 1
            score[p["b"]][2 - i] += 1
    best, runner = order[0], order[1]
    pair = _oriented(pairs, best, runner)
    significant = pair is not None and pair["outcome"] == "win"
    return {
        "contenders": [{"name": n, "value": values[n], "mean_rank": float(mean_ranks[n]),
                        "wtl": "/".join(map(str, score[n]))} for n in order],
        "ranks": "per data set", "groups": groups, "n_groups": int(len(per_group)),
        "n_datasets": int(wide.index.get_level_values("dataset").nunique()) if "dataset" in cells else 1,
        "n_cells": int(len(wide)), "cells": cells, "friedman": fried, "cd": cd, "nemenyi": nemenyi,
        "pairs": pairs, "best": best, "runner_up": runner, "pair": pair, "significant": bool(significant),
        "winner": best if significant and _big_enough(pair, lower, is_timing(metric)) else None,
    }


def _oriented(pairs, a, b):
    """The pair record of ``a`` vs ``b`` (from either orientation), as ``a`` vs ``b``."""
    for p in pairs:
        if (p["a"], p["b"]) == (a, b):
            return dict(p)
        if (p["a"], p["b"]) == (b, a):
            ratio = p["effect"] == "ratio"

            def inv(v, ratio=ratio):
                return None if v is None else ((1.0 / v if v else None) if ratio else -v)
            lo, hi = p["ci"]
            return {**p, "a": a, "b": b, "better": p["worse"], "worse": p["better"], "estimate": inv(p["estimate"]),
                    "ci": [inv(hi), inv(lo)],
                    "outcome": {"win": "loss", "loss": "win"}.get(p["outcome"], p["outcome"])}
    return None


def _big_enough(pair, lower, timing):
    """The effect of a significant pair is worth naming: ``MIN_SPEEDUP`` for a timing, ``MIN_EFFECT``
    otherwise (relative; a difference effect counts as big enough)."""
    est = pair.get("estimate")
    if est is None:
        return False
    if pair["effect"] != "ratio":
        return True
    change = est - 1.0
    if timing:
        return (change <= -MIN_SPEEDUP) if lower else (change >= MIN_SPEEDUP)
    return abs(change) >= MIN_EFFECT


def smallest_budget(df, info, metric, coord, tolerance=MIN_EFFECT, block_cols=None):
    """The smallest value of ``coord`` (e.g. the landmark ratio) whose ``metric`` is not worse than at
    the largest value by more than ``tolerance`` (relative, Hodges-Lehmann) where the difference is
    significant (Wilcoxon, 5%), paired over the study's blocks, its methods and other coords.
    Returns ``{"value", "largest", "steps": [...], "evidence"}`` or None."""
    if df is None or metric not in df or coord not in df or metric not in (info.get("metrics") or {}):
        return None
    lower = bool(info["metrics"][metric][1])
    sub = df[df[coord].notna() & df[metric].notna()]
    values = sorted(sub[coord].unique())
    if len(values) < 2:
        return None
    largest = values[-1]
    blocks = [b for b in dict.fromkeys([*(block_cols or info.get("block_cols", ["dataset", "kernel", "seed"])),
                                        "method"]) if b in sub]
    cells = [*blocks, *_varying(sub, info.get("coords", []), coord)]
    steps, parts = [], []
    for v in values[:-1]:
        pair = sub[sub[coord].isin([v, largest])]
        wide = stats.pivot_pairs(pair.assign(**{coord: _keys(pair[coord])}), metric, coord, cells)
        a, b = _key(v), _key(largest)
        if a not in wide or b not in wide or not len(wide):
            continue
        c = stats.compare_pair(wide[a].to_numpy(), wide[b].to_numpy(), lower)
        est = c["estimate"]
        change = (est - 1.0) if c["effect"] == "ratio" else est  # v against the largest value
        loss = -change if not lower else change  # > 0: v is worse
        significant = c["p"] < ALPHA
        worse = significant and (c["effect"] != "ratio" or loss > tolerance) and loss > 0
        verdict = ("worse" if worse else f"within {tolerance:.0%}" if significant and loss > 0
                   else "no significant loss")
        steps.append({"value": float(v), "verdict": verdict, "effect": c["effect"], "estimate": _jsonable(est),
                      "ci": [_jsonable(c["ci_low"]), _jsonable(c["ci_high"])], "p": _jsonable(c["p"]),
                      "n_pairs": int(c["n_pairs"])})
        parts.append(f"{v:g} n: {verdict} ({_effect_text(c['effect'], est, c['ci_low'], c['ci_high'])} against "
                     f"{largest:g} n, p = {fmt_p(c['p'])})")
        if not worse:
            return {"value": float(v), "largest": float(largest), "steps": steps, "evidence": "; ".join(parts)}
    return {"value": float(largest), "largest": float(largest), "steps": steps,
            "evidence": "; ".join(parts) or "one value"}


def budget_record(df, info, metric, coord):
    """A budget answer record (module docstring) or None."""
    r = smallest_budget(df, info, metric, coord)
    return None if r is None else {"kind": "budget", "column": coord, **r}


# -- a study's answers ----------------------------------------------------------------------------
def _metrics_for(info, question):
    """The metrics a question's rankings use in a study: its primary metric, its other tested metrics,
    timings only where the question asks about time."""
    metrics = info.get("metrics") or {}
    tested = list(info.get("tested_metrics") or metrics)
    first = [m for m in [info.get("primary_metric")] if m in metrics]
    out = [m for m in dict.fromkeys([*first, *tested]) if m in metrics and not is_timing(m)]
    if question.get("time"):
        out += [m for m in tested if m in metrics and is_timing(m) and m not in out]
    return out


def study_answers(df, info, coord_roles=None, questions=None):
    """Every answer record of one study (module docstring): ``df`` its result rows (as tested: the
    report section's ``tested_rows``), ``info`` the workflow's report params (``study``, ``metrics``,
    ``primary_metric``, ``tested_metrics``, ``coords``, ``block_cols``, ``config`` with the method
    blocks and ``questions``, its kind's own), ``coord_roles`` the report section's ``{coord: role}``;
    ``questions`` (default: :func:`all_questions` of the kind's) replaces the questions asked."""
    questions = all_questions(info.get("questions") or ()) if questions is None else questions
    methods = ((info.get("config") or {}).get("methods")) or {m: {} for m in info.get("methods", [])}
    coord_roles = coord_roles or {}
    block_cols = info.get("block_cols", ["dataset", "kernel", "seed"])
    coords = list(info.get("coords", []))
    out = []
    for q in questions:
        if q.get("kind") == "property":
            out += property_records(df, info, q, methods)
            continue
        rankings = [("method", g) for g in contender_groups(methods, q)]
        for coord, role in coord_roles.items():
            if role in q.get("role", []) and coord in df and role != "budget":
                vals = [_key(v) for v in dict.fromkeys(df[coord].dropna())]
                if len(vals) >= 2:
                    rankings.append((coord, [(v, v) for v in vals]))
        for column, group in rankings:
            first_seen = set()
            for metric in _metrics_for(info, q):
                label, lower = info["metrics"][metric]
                # a contender whose metric is zero in every row is the metric's yardstick (a gap to itself,
                # e.g. the exact criterion's relative gap), not a contender
                ranked = [(n, v) for n, v in group if not _yardstick(df, column, n, metric)]
                values = {v for _, v in ranked}
                if len(values) < 2 or (q.get("needs") and not values & set(q["needs"])):
                    continue
                r = rank_record(df, metric, bool(lower), column, ranked, block_cols, coords)
                if r is None:
                    continue
                timing = is_timing(metric)
                headline = timing or not first_seen
                first_seen.add(metric)
                out.append({"question": q["id"], "asks": q["question"], "study": info.get("study", ""),
                            "role": "/".join(q.get("role", [])), "column": column, "metric": metric,
                            "label": label, "lower_is_better": bool(lower), "timing": timing,
                            "headline": bool(headline), **r})
        if "budget" in q.get("role", []):
            for coord, role in coord_roles.items():
                if role != "budget" or coord not in df:
                    continue
                # the headline budget: on the study's task metric (accuracy, MSE) where it has one
                metrics = _metrics_for(info, q)
                metrics = [m for m in metrics if _task(m)] + [m for m in metrics if not _task(m)]
                made = False
                for metric in metrics:
                    label, lower = info["metrics"][metric]
                    r = budget_record(df, {**info, "coords": coords}, metric, coord)
                    if r is not None:
                        out.append({"question": q["id"], "asks": q["question"], "study": info.get("study", ""),
                                    "role": "budget", "metric": metric, "label": label,
                                    "lower_is_better": bool(lower), "timing": False, "headline": not made, **r})
                        made = True
    return out


def _yardstick(df, column, name, metric):
    if metric not in df or column not in df:
        return False
    v = df.loc[_keys(df[column]) == str(name), metric].dropna()
    return bool(len(v)) and bool((v == 0).all())


# -- "When do non-uniform landmarks beat uniform?": the gain over uniform against data-set properties ------
#: the prefix of the result columns (or params) that hold a data set's properties (e.g. ``prop_coherence``)
PROPERTY_PREFIX = "prop_"
#: errors are floored here before a log-ratio (relative errors in [0, 1]: below it is round-off)
ERROR_FLOOR = 1e-10
#: the standard error factor of Fisher's z for Spearman's rho: 1.06 / sqrt(n - 3) (Fieller, Hartley & Pearson,
#: Biometrika 44, 1957)
SPEARMAN_SE = 1.06


def property_columns(df):
    """``df`` with its data-set property columns (``prop_*``): as they are, or read from the ``params`` JSON
    column where a study records them there; ``(frame, [column names])``."""
    if df is None or not len(df):
        return df, []
    cols = [c for c in df.columns if str(c).startswith(PROPERTY_PREFIX)]
    if not cols and "params" in df:
        parsed = [json.loads(p) if isinstance(p, str) else (p if isinstance(p, dict) else {}) for p in df["params"]]
        keys = sorted({k for p in parsed for k in p if str(k).startswith(PROPERTY_PREFIX)})
        if keys:
            df = df.assign(**{k: [_number(p.get(k)) for p in parsed] for k in keys})
            cols = keys
    return df, cols


def _number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def spearman(x, y, confidence=0.95):
    """Spearman's rank correlation of ``x`` and ``y`` with SciPy's two-sided p-value and a ``confidence``
    interval by Fisher's z with standard error ``1.06 / sqrt(n - 3)`` (Fieller, Hartley & Pearson, Biometrika
    1957): ``{"rho", "p", "ci": [low, high], "n"}`` (NaN where fewer than 4 finite pairs or a constant side)."""
    from scipy import stats as sps

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    nan = {"rho": float("nan"), "p": float("nan"), "ci": [float("nan"), float("nan")], "n": int(n)}
    if n < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    res = sps.spearmanr(x, y)
    rho, p = float(res.statistic), float(res.pvalue)
    z, half = np.arctanh(np.clip(rho, -0.999999, 0.999999)), sps.norm.ppf(0.5 + confidence / 2) * SPEARMAN_SE / np.sqrt(n - 3)
    return {"rho": rho, "p": p, "ci": [float(np.tanh(z - half)), float(np.tanh(z + half))], "n": int(n)}


def _gain_side(g):
    """The paired test of one side of a split: Wilcoxon's signed-rank test of the units' log-ratios against 0,
    with the Hodges-Lehmann median ratio and its 95% interval (:func:`nystrom_bench.stats.compare_pair` on
    ``exp(g)`` against 1)."""
    g = np.asarray(g, dtype=np.float64)
    if not len(g):
        return {"n": 0, "estimate": None, "ci": [None, None], "p": None}
    c = stats.compare_pair(np.exp(g), np.ones(len(g)), True, effect="ratio")
    return {"n": int(len(g)), "estimate": _jsonable(c["estimate"]), "ci": [_jsonable(c["ci_low"]), _jsonable(c["ci_high"])],
            "p": _jsonable(c["p"]), "better": int(c["better"]), "worse": int(c["worse"])}


def unit_gains(df, metric, column, reference, contenders, units, cells, by=None):
    """Per unit (a data set, and a kernel where it varies) and contender: the median over the unit's paired
    cells (seed, coords) of ``log(metric / metric of the reference)``, errors floored at :data:`ERROR_FLOOR`;
    ``{contender: Series indexed by unit}`` (negative = lower than the reference).  ``by`` (a coord): the
    medians per value of that coord over every unit's cells instead (``{contender: Series indexed by it}``)."""
    sub = df[df[metric].notna()]
    sub = sub.assign(**{column: _keys(sub[column])})
    out = {}
    for name in contenders:  # each pair on its own complete cells (a contender skipped somewhere costs only its own)
        wide = stats.pivot_pairs(sub[sub[column].isin([reference, name])], metric, column, cells)
        if reference not in wide or name not in wide or not len(wide):
            continue
        lr = (np.log(np.maximum(wide[name].astype(float), ERROR_FLOOR))
              - np.log(np.maximum(wide[reference].astype(float), ERROR_FLOOR))).dropna()
        if len(lr):
            out[name] = lr.groupby(level=by if by else units).median()
    return out


def property_records(df, info, question, methods=None):
    """The answer records of a ``kind: "property"`` question (:data:`QUESTIONS`: "When do non-uniform landmarks
    beat uniform?") for one study, or ``[]`` where it does not apply: the study's rows carry data-set
    properties (:func:`property_columns`) and its methods differ in the question's role (``sampler``) with
    the question's ``reference`` value (``uniform``) among them.

    On the study's primary metric: the unit is a data set (with its kernel, where the study has several: each
    is its own kernel matrix with its own properties); per unit and non-reference contender the *gain* is the
    median log-ratio against the reference over the paired seeds and coords (:func:`unit_gains`; negative =
    lower error than uniform).  Per contender: the median gain over units with Wilcoxon's test against 0
    (:func:`_gain_side`); per contender and property: Spearman's rho between gain and property across units
    with its p-value and Fisher-z 95% interval (:func:`spearman`), and the units split at the property's
    median with the paired test on each side.  Holm's correction runs over every (contender, property)
    correlation; ``predictor`` names the (contender, property) with the smallest Holm p where it is below 5%
    (ties: larger |rho|), else None.
    """
    methods = methods if methods is not None else ((info.get("config") or {}).get("methods") or {})
    metric = info.get("primary_metric")
    if df is None or not len(df) or metric not in df or metric not in (info.get("metrics") or {}):
        return []
    df, props = property_columns(df)
    if not props:
        return []
    label, lower = info["metrics"][metric]
    block_cols = [b for b in info.get("block_cols", ["dataset", "kernel", "seed"]) if b in df]
    units = [b for b in block_cols if b != "seed" and (b == "dataset" or df[b].nunique() > 1)]
    coords = list(info.get("coords", []))
    cells = [*block_cols, *_varying(df, coords, "method")]
    out = []
    for group in contender_groups(methods, {"role": question["role"]}):
        values = dict(group)
        refs = [n for n, v in group if v == question["reference"]]
        if not refs:
            continue
        ref = refs[0]
        others = [n for n, _ in group if n != ref]
        gains = unit_gains(df, metric, "method", ref, others, units, cells)
        if not gains:
            continue
        budget = next((c for c in coords if c in cells), None)  # the gains per landmark budget (e.g. m)
        by_coord = unit_gains(df, metric, "method", ref, others, units, cells, by=budget) if budget else {}
        unit_props = df.groupby(units)[props].median()
        samplers, tests = [], []
        for name, g in gains.items():
            pv = unit_props.reindex(g.index)
            entry = {"name": name, "value": values[name], "n_units": int(len(g)),
                     "median_gain": _jsonable(float(np.exp(np.median(g)))), "overall": _gain_side(g.to_numpy()),
                     "by": budget, "by_value": {_key(k): _jsonable(float(np.exp(v)))
                                                for k, v in (by_coord.get(name, pd.Series(dtype=float))).items()},
                     "properties": {}}
            for prop in props:
                x = pv[prop].to_numpy(dtype=float)
                corr = spearman(x, g.to_numpy())
                ok = np.isfinite(x)
                med = float(np.median(x[ok])) if ok.any() else float("nan")
                low, high = g.to_numpy()[ok & (x <= med)], g.to_numpy()[ok & (x > med)]
                entry["properties"][prop] = {**{k: _jsonable(v) for k, v in corr.items() if k != "ci"},
                                             "ci": [_jsonable(v) for v in corr["ci"]],
                                             "median": _jsonable(med), "low": _gain_side(low), "high": _gain_side(high)}
                tests.append((name, prop, corr["p"]))
            samplers.append(entry)
        finite = [(n, pr, p) for n, pr, p in tests if p is not None and math.isfinite(p)]
        adjusted = dict(zip([(n, pr) for n, pr, _ in finite], stats.holm([p for *_, p in finite]), strict=True)) \
            if finite else {}
        for e in samplers:
            for prop, d in e["properties"].items():
                d["p_holm"] = _jsonable(adjusted.get((e["name"], prop)))
        samplers.sort(key=lambda e: (math.log(e["median_gain"]) if e["median_gain"] else 0.0) * (1 if lower else -1))
        best = None
        for e in samplers:
            for prop, d in e["properties"].items():
                if d["p_holm"] is not None and d["p_holm"] < ALPHA:
                    key = (d["p_holm"], -abs(d["rho"]))
                    if best is None or key < best[0]:
                        best = (key, {"sampler": e["name"], "value": e["value"], "property": prop,
                                      "property_name": prop[len(PROPERTY_PREFIX):], "rho": d["rho"], "ci": d["ci"],
                                      "p": d["p"], "p_holm": d["p_holm"], "low": d["low"], "high": d["high"],
                                      "median": d["median"]})
        out.append({"question": question["id"], "asks": question["question"], "study": info.get("study", ""),
                    "kind": "property", "role": "/".join(question["role"]), "column": "method", "metric": metric,
                    "label": label, "lower_is_better": bool(lower), "timing": False, "headline": True,
                    "reference": ref, "units": units, "n_units": int(max(len(g) for g in gains.values())),
                    "n_datasets": int(df["dataset"].nunique()), "properties": props, "samplers": samplers,
                    "n_tests": len(finite), "predictor": None if best is None else best[1]})
    return out


def write_answers(records, path):
    """``records`` as JSON into ``path`` (atomically)."""
    from .atomic import replace_into

    text = json.dumps(records, indent=1, default=_jsonable)
    replace_into(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_answers(paths):
    """The answer records of several ``answers.json`` files, in order (a missing file: none)."""
    out = []
    for p in paths:
        if p and Path(p).exists():
            out += json.loads(Path(p).read_text(encoding="utf-8"))
    return out


# -- rendering a record ---------------------------------------------------------------------------
def _pct(ratio):
    """A ratio as a relative change for people: 1.0041 -> '+0.41%', 0.8 -> '-20%', 2.31 -> 'x2.3'."""
    if ratio is None or not math.isfinite(ratio):
        return "n/a"
    if ratio >= 2:
        return f"x{fmt_num(ratio, 2)}"
    c = (ratio - 1.0) * 100
    # below 0.005% a change is rounding, not a difference anyone measures
    return "0%" if abs(c) < 0.005 else f"{'+' if c > 0 else '-'}{fmt_num(abs(c), 2)}%"


def _signed(v):
    if v is None or not math.isfinite(v):
        return "n/a"
    return ("+" if v > 0 else "") + fmt_num(v, 2)


def _effect_text(effect, est, lo=None, hi=None):
    """'+0.41% [+0.10%, +0.80%]' (a ratio as a change) or '-0.012 [-0.02, -0.004]' (a difference)."""
    f = _pct if effect == "ratio" else _signed
    ci = "" if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) else f" [{f(lo)}, {f(hi)}]"
    return f"{f(est)}{ci}"


def _show(c):
    """A contender for people: its label, with its role value where the label does not say it."""
    name, value = str(c["name"]), str(c["value"])
    return name if value == name or value in name else f"{name} ({value})"


def _ranking_text(r, top=None):
    """'kmeans 1.6, uniform 2.0, ridge_leverage 2.4' (the first ``top`` and how many more)."""
    shown = r["contenders"][:top] if top else r["contenders"]
    more = len(r["contenders"]) - len(shown)
    return ", ".join(f"{_show(c)} {c['mean_rank']:.1f}" for c in shown) + (f" (+{more} more)" if more else "")


def _over(r):
    """How a record's mean ranks were taken, in words."""
    # the kernel is named only where it splits a data set into more groups (several widths per data set)
    several = r["n_groups"] > r.get("n_datasets", r["n_groups"])
    per = " and ".join("data set" if g == "dataset" else g for g in r["groups"]
                       if g != "kernel" or several) or "data set"
    if r["n_groups"] <= 1:
        return "ranked within each seed and grid point of its one data set, averaged"
    return (f"ranked within each seed and grid point, averaged per {per}, then over the {r['n_groups']} "
            + (f"{per}s" if per == "data set" else f"({per}) groups of {r['n_datasets']} data set"
               + ("s" if r["n_datasets"] != 1 else "")))


def _verdict(r):
    p = r.get("pair") or {}
    if r.get("winner"):
        return f"{_show(r['contenders'][0])} wins"
    if r.get("significant"):
        return ("significantly faster, but by less than 10%: no winner named" if r.get("timing") else
                "significant, but by less than 1%: no winner named")
    if p.get("outcome") == "loss":
        return "the runner-up is better in the pooled runs: no winner named"
    return "no significant difference"


def _ranking(r):
    """A ranking record (contenders with mean ranks), not a budget or property record."""
    return r.get("kind") not in ("budget", "property")


def _unit_words(r):
    units = [u for u in r.get("units", ["dataset"]) if u != "dataset"]
    return "data set" + "".join(f" and {u}" for u in units)


def _gains_text(r, top=None):
    """'rpcholesky -12%, kmeans -9.5% (+11 more)': each contender's median change against the reference over
    the units (a data set, and its kernel), best first."""
    shown = r["samplers"][:top] if top else r["samplers"]
    more = len(r["samplers"]) - len(shown)
    return ", ".join(f"{_show(e)} {_pct(e['median_gain'])}" for e in shown) + (f" (+{more} more)" if more else "")


def _side_text(side, p_values=True):
    if not side or not side.get("n"):
        return "no units"
    ci = side.get("ci") or [None, None]
    return (f"{_effect_text('ratio', side['estimate'], *ci)} over {side['n']}"
            + (f", p = {fmt_p(side['p'])}" if p_values else ""))


def _predictor_text(r, p_values=True):
    """Which property predicts the gain (or that none does), with its evidence."""
    best = r.get("predictor")
    if best is None:
        strongest = None
        for e in r["samplers"]:
            for prop, d in e["properties"].items():
                if d.get("rho") is not None and (strongest is None or abs(d["rho"]) > abs(strongest[2]["rho"])):
                    strongest = (e, prop, d)
        text = (f"no property predicts the gain at 5% (Holm over {r.get('n_tests', 0)} sampler x property "
                "correlations)")
        if strongest:
            e, prop, d = strongest
            text += (f"; strongest: {_show(e)} with {prop[len(PROPERTY_PREFIX):]}, Spearman rho = "
                     f"{fmt_num(d['rho'], 2)} [{fmt_num(d['ci'][0], 2)}, {fmt_num(d['ci'][1], 2)}]"
                     + (f", Holm p = {fmt_p(d['p_holm'])}" if p_values else ""))
        return text
    name = best["property_name"]
    grows = (best["rho"] < 0) == bool(r["lower_is_better"])  # the log-ratio falls (lower is better) as it grows
    return (f"{name} predicts the gain of {best['sampler']} (the gain is larger where {name} is "
            f"{'higher' if grows else 'lower'}): Spearman rho = {fmt_num(best['rho'], 2)} "
            f"[{fmt_num(best['ci'][0], 2)}, {fmt_num(best['ci'][1], 2)}] across {r['n_units']} units"
            + (f", Holm p = {fmt_p(best['p_holm'])} ({r.get('n_tests', 0)} tests)" if p_values else "")
            + f"; {name} <= {fmt_num(best['median'], 3)}: {_side_text(best['low'], p_values)}, above: "
            + _side_text(best["high"], p_values))


def property_text(r, p_values=True):
    """One paragraph for a property record: each sampler's gain over the reference, then the property that
    predicts it (or that none does)."""
    lead = r["samplers"][0] if r["samplers"] else None
    direction = "lower" if r["lower_is_better"] else "higher"
    text = (f"{r['study']}, {r['label']} ({direction} is better): median change against {r['reference']} per "
            f"{_unit_words(r)} ({r['n_units']} units of {r['n_datasets']} data sets; the median log-ratio over the "
            f"paired seeds and grid points of each unit) {_gains_text(r)}")
    if lead and p_values:
        o = lead["overall"]
        text += (f". {_show(lead)} against {r['reference']} over the units: {_side_text(o)}, better in "
                 f"{o.get('better', 0)}, worse in {o.get('worse', 0)}")
    if lead and lead.get("by_value"):
        text += f"; {_show(lead)} per {lead['by']} (median over every paired run): " + ", ".join(
            f"{k}: {_pct(v)}" for k, v in lead["by_value"].items())
    return text + ". " + _predictor_text(r, p_values)[:1].upper() + _predictor_text(r, p_values)[1:] + "."


def property_summary(r):
    """The one-line answer of a property record."""
    lead = r["samplers"][0] if r["samplers"] else None
    head = (f"{r['study']}: {_show(lead)} gains most over {r['reference']} ({_pct(lead['median_gain'])}, median over "
            f"{r['n_units']} units)" if lead else f"{r['study']}: no contender")
    best = r.get("predictor")
    tail = (f"{best['property_name']} predicts the gain of {best['sampler']} (Spearman rho = {fmt_num(best['rho'], 2)}, "
            f"Holm 5%)" if best else "no data-set property predicts the gain (Holm 5%)")
    return f"{head}; {tail}."


def answer_text(r, p_values=True):
    """One sentence for an answer record: ranking, test, effect, n (``p_values``: with them)."""
    if r.get("kind") == "budget":
        what = (f"the largest tested: every smaller {r['column']} is worse by more than {MIN_EFFECT:.0%}"
                if r["value"] == r["largest"] else
                f"the smallest {r['column']} whose {r['label']} is not worse than at {r['largest']:g} by more than "
                f"{MIN_EFFECT:.0%}")
        return (f"{r['study']}, {r['label']} ({'lower' if r['lower_is_better'] else 'higher'} is better): "
                f"{r['column']} = {r['value']:g}, {what}" + (f" ({r['evidence']})." if p_values else "."))
    if r.get("kind") == "property":
        return property_text(r, p_values)
    p = r.get("pair") or {}
    direction = "lower" if r["lower_is_better"] else "higher"
    fried = r.get("friedman")
    text = (f"{r['study']}, {r['label']} ({direction} is better): mean rank (1 = best; {_over(r)}) "
            f"{_ranking_text(r)}")
    if fried and p_values:
        text += f"; Friedman p = {fmt_p(fried['p'])}"
    best, runner = _show(r["contenders"][0]), _show(r["contenders"][1])
    text += (f". {best} vs {runner}: {_effect_text(p.get('effect'), p.get('estimate'), *p.get('ci', [None, None]))}"
             f" (Hodges-Lehmann median {'change' if p.get('effect') == 'ratio' else 'difference'}, 95% CI, "
             f"{p.get('n_pairs', 0)} paired runs pooled; better in {p.get('better', 0)}, worse in {p.get('worse', 0)})")
    if p_values:
        text += f", Holm p = {fmt_p(p.get('p_holm'))}"
    return text + f": {_verdict(r)}."


def question_summary(question, records, claims=None):
    """The one-line answer to a question over every study's headline record: which contender ranks
    first where, and where it wins; for a claims-only question, the verdicts of its claims."""
    recs = [r for r in records if r["question"] == question and r.get("headline")]
    if not recs:
        if claims is not None and len(claims):
            from .claims import verdict_counts

            return (f"{len(claims)} claim(s) answer it: "
                    + ", ".join(f"{n} {v}" for v, n in verdict_counts(claims).items()) + ".")
        return "Not answered by this run: none of its studies ran."
    if recs[0].get("kind") == "property":
        return " ".join(property_summary(r) for r in recs)
    parts = {}
    for r in recs:
        if r.get("kind") == "budget":
            parts.setdefault(f"{r['column']} = {r['value']:g}", []).append(f"{r['study']} ({r['label']})")
            continue
        key = f"{r['contenders'][0]['value']}" + (" (time)" if r.get("timing") else "")
        parts.setdefault(key, []).append(f"{r['study']}{'*' if r.get('winner') else ''}")
    if recs[0].get("kind") == "budget":
        return "Smallest budget within 1% of the largest: " + "; ".join(
            f"{k} in {', '.join(v)}" for k, v in parts.items()) + "."
    return ("Ranked first (* = a significant win over the runner-up): "
            + "; ".join(f"{k} in {', '.join(v)}" for k, v in parts.items()) + ".")


def answer_lines(records, p_values=True):
    """The answers of one study for its PDF's page one: ``[{"question", "lines"}]`` in question order (the
    records' order: :func:`study_answers` makes them question by question)."""
    asks = {r["question"]: r["asks"] for r in records}
    return [{"question": text, "lines": [answer_text(r, p_values) for r in records if r["question"] == qid]}
            for qid, text in asks.items()]


#: the answers table's ranking and effect columns: what each number is (mean or median, per data set or pooled)
RANK_COL = "mean rank over data sets (1 = best)"
PAIR_COL = "best vs runner-up: median change [95% CI], pooled runs"
#: the same columns' headers for a property record ("When do non-uniform landmarks beat uniform?")
PROPERTY_COLS = {RANK_COL: "median change vs the reference per data set (best first)",
                 PAIR_COL: "which data-set property predicts the gain", "paired runs": "units (data set x kernel)"}


def answers_table(records, p_values=True):
    """The records as one table (``results/answers.csv``, the HTML report's and the summary's table)."""
    rows = []
    for r in records:
        if r.get("kind") == "property":
            best = r.get("predictor")
            rows.append({"question": r["asks"], "study": r["study"], "metric": r["label"],
                         "better": "lower" if r["lower_is_better"] else "higher",
                         RANK_COL: "gain over " + r["reference"] + ": " + _gains_text(r, 3),
                         PAIR_COL: _predictor_text(r, p_values=False),
                         "answer": (f"{best['property_name']} predicts the gain of {best['sampler']}" if best else
                                    "no property predicts the gain"),
                         "data sets": r["n_datasets"], "paired runs": r["n_units"],
                         **({"Holm p": fmt_p(best["p_holm"]) if best else "", "Friedman p": ""} if p_values else {}),
                         "headline": r.get("headline", False)})
            continue
        if r.get("kind") == "budget":
            rows.append({"question": r["asks"], "study": r["study"], "metric": r["label"],
                         "better": "lower" if r["lower_is_better"] else "higher",
                         RANK_COL: f"{r['column']} = {r['value']:g} (largest {r['largest']:g})",
                         PAIR_COL: "", "answer": ("the largest tested: the smaller are worse" if r["value"] == r["largest"]
                                    else "within 1% of the largest"),
                         "data sets": "", "paired runs": "", **({"Holm p": "", "Friedman p": ""} if p_values else {}),
                         "headline": r.get("headline", False)})
            continue
        p = r.get("pair") or {}
        row = {"question": r["asks"], "study": r["study"], "metric": r["label"],
               "better": "lower" if r["lower_is_better"] else "higher",
               RANK_COL: _ranking_text(r),
               PAIR_COL: (f"{_show(r['contenders'][0])} vs {_show(r['contenders'][1])}: "
                                     f"{_effect_text(p.get('effect'), p.get('estimate'), *p.get('ci', [None, None]))}"),
               "answer": _verdict(r), "data sets": r["n_datasets"], "paired runs": p.get("n_pairs", 0)}
        if p_values:
            row["Holm p"] = fmt_p(p.get("p_holm"))
            row["Friedman p"] = fmt_p((r.get("friedman") or {}).get("p"))
        row["headline"] = r.get("headline", False)
        rows.append(row)
    return pd.DataFrame(rows)


# -- claims under their question ------------------------------------------------------------------
def claim_questions(ledger, records, claims=None, questions=None):
    """``{ledger index: [question ids]}``: the claim's ``answers:`` (the ledger's ``question``
    column), else the question whose ``claims`` rule (and slope coord) it follows, else the question of a
    record of its study over the coord its slope runs along (a coord with a role), else the question of
    a ranking of its study that holds every value it compares (its ``column`` and ``a``/``b``).
    ``questions``: the run's (:func:`all_questions`; default: the generic ones)."""
    questions = QUESTIONS if questions is None else questions
    if ledger is None or not len(ledger):
        return {}
    if claims is None:
        from . import papers

        claims = papers.all_claims()
    by_id = {(c.get("paper"), c.get("id")): c for c in claims}
    out = {}
    for i, row in ledger.iterrows():
        asked = str(row.get("question", "") or "")
        asked = "" if asked == "nan" else asked
        if asked:
            out[i] = [q.strip() for q in asked.split(",") if q.strip()]
            continue
        c = by_id.get((row.get("paper"), row.get("claim_id"))) or {}
        slope = (c.get("transform") or {}).get("slope")
        rule = [q["id"] for q in questions if q.get("claims") and q["claims"].get("rule") == c.get("rule")
                and q["claims"].get("slope", slope) == slope]
        if rule:
            out[i] = rule
            continue
        over = [r["question"] for r in records if slope and r["study"] == row.get("study") and r.get("column") == slope]
        if over:  # a slope over a coord with a role (the landmark ratio: the budget)
            out[i] = over[:1]
            continue
        column = c.get("column", "method")
        named = {_key(v) for v in [c.get("a"), *(c.get("b") if isinstance(c.get("b"), list) else [c.get("b")]),
                                   *(c.get("chain") or [])]  # a chain's values are its contenders
                 if v is not None}
        found = []
        for r in records:
            if r["study"] != row.get("study") or not _ranking(r) or r.get("column") != column:
                continue
            if named and named <= {str(x["name"]) for x in r["contenders"]} and r["question"] not in found:
                found.append(r["question"])
        out[i] = found[:1]
    return out


def _claim_line(c):
    ours = "" if pd.isna(c.get("ours")) or not str(c.get("ours")) else f"; ours: {c['ours']}"
    why = f" ({c['evidence']})" if c.get("verdict") == "not testable" else ""
    return f"Claim ({c['paper']}, {c['where']}): {c['claim']} -> {c['verdict']}{ours}{why}."


def _answers(records, ledger, questions=None):
    """Per question (``questions``: the run's, :func:`all_questions`): its summary line, its records and the
    claims that bear on it."""
    questions = QUESTIONS if questions is None else questions
    asked = claim_questions(ledger, records, questions=questions) if ledger is not None and len(ledger) else {}
    out = []
    for q in questions:
        recs = [r for r in records if r["question"] == q["id"]]
        idx = [i for i, qs in asked.items() if q["id"] in qs]
        claims = ledger.loc[idx] if idx else pd.DataFrame()
        claims = claims[claims["verdict"] != "not run"] if len(claims) else claims
        lines = [answer_text(r) for r in recs if r.get("headline")]
        claim_lines = [_claim_line(c) for _, c in claims.iterrows()] if len(claims) else []
        out.append({"id": q["id"], "question": q["question"], "summary": question_summary(q["id"], records, claims),
                    "records": recs, "lines": lines or claim_lines or ["Not answered by this run."],
                    "claims": claim_lines})
    return out


# -- the practitioner's guide ---------------------------------------------------------------------
def _task(metric):
    m = str(metric)
    return "classification" if "accuracy" in m else "regression" if "mse" in m or "rmse" in m else None


def _first(records, question, task=None, timing=False, study=None, metric=None):
    """The first ranking record of ``question`` on a ``task`` metric (any record), else a headline one."""
    for r in records:
        if (r["question"] == question and (r.get("headline") or task or metric) and _ranking(r)
                and bool(r.get("timing")) == timing and (task is None or _task(r["metric"]) == task)
                and (study is None or r["study"] == study) and (metric is None or r["metric"] == metric)):
            return r
    return None


def _by_value(r, value):
    return next((c for c in r["contenders"] if c["value"] == value), None)


def _said(r, a=None, b=None):
    """'a vs b: +0.41% [+0.10%, +0.80%], significant' from a record (default: best vs runner-up)."""
    if r is None:
        return "not run"
    a, b = a or r["best"], b or r["runner_up"]
    p = _oriented(r["pairs"], a, b) or {}
    sig = "significant" if p.get("outcome") in ("win", "loss") else "not significant"
    return (f"{a} vs {b}: {_effect_text(p.get('effect'), p.get('estimate'), *p.get('ci', [None, None]))}, "
            f"{sig} (Holm 5%)")


def _block(infos, r, name):
    return ((infos.get(r["study"]) or {}).get("config") or {}).get("methods", {}).get(name) or {}


def _guide(records, infos, questions=()):
    """The decision table: each recommendation is the winner of an answer record of this run (a
    contender named only where it wins: significant and big enough), else the library's default;
    then a row per question of ``questions`` that declares a ``guide``."""
    rows = []
    exact = _first(records, "exact", "regression")
    ref = _by_value(exact, "exact") if exact else None
    if ref:
        approx = next(c for c in exact["contenders"] if c["value"] != "exact")
        pair = _oriented(exact["pairs"], ref["name"], approx["name"]) or {}
        use_exact = pair.get("outcome") == "win" and _big_enough(pair, exact["lower_is_better"], False)
        blk = _block(infos, exact, approx["name"])
        rows.append({"task": "regression", "n": "up to ~10^4", "budget": "n^2 memory",
                     "use": "exact KRR" if use_exact else f"Nystrom ({_show(approx)}; as accurate as exact)",
                     "evidence": f"{exact['study']} {exact['label']}: {_said(exact, ref['name'], approx['name'])}",
                     "call": 'KRR(approximation="exact", gamma="median")' if use_exact else _krr_call(blk)})
    # mode and sampler from one study that ranks both on a regression metric, where there is one
    modes = [r for r in records if r["question"] == "mode" and _task(r["metric"]) == "regression"]
    reg_mode = next((r for r in modes if _first(records, "sampler", study=r["study"], metric=r["metric"])),
                    modes[0] if modes else None)
    if reg_mode:
        mode = reg_mode["contenders"][0]["value"] if reg_mode.get("winner") else "lla"
        reg_sampler = _first(records, "sampler", study=reg_mode["study"], metric=reg_mode["metric"])
        sampler = reg_sampler["contenders"][0]["value"] if reg_sampler and reg_sampler.get("winner") else "uniform"
        rows.append({"task": "regression", "n": "10^4 and more", "budget": "m landmarks, O(n m) memory",
                     "use": f"Nystrom, {sampler} landmarks, mode {mode.upper()}",
                     "evidence": f"{reg_mode['study']} {reg_mode['label']}: mode {_said(reg_mode)}; sampler "
                                 f"{_said(reg_sampler)}",
                     "call": f'KRR(n_components=m, sampler="{sampler}", mode="{mode}", gamma="median")'})
    solver = _first(records, "solver", timing=True)
    if solver:
        # the fastest only where it beats the float64 direct solve (what solver='auto' runs at these sizes)
        # significantly and by 10% or more; else the default, not a coin toss between tied solvers
        direct = next((c for c in solver["contenders"] if c["value"] == "direct"), None)
        best = solver["contenders"][0]
        pair = _oriented(solver["pairs"], best["name"], direct["name"]) if direct and best is not direct else None
        fastest = best if pair and pair["outcome"] == "win" and _big_enough(pair, True, True) else None
        rows.append({"task": "regression", "n": "10^5 and more", "budget": "time",
                     "use": f"solver/precision: {_show(fastest)}" if fastest else
                            "the default solver='auto' (no solver or precision was significantly faster by 10%)",
                     "evidence": f"{solver['study']} {solver['label']}, ranks {_ranking_text(solver)}; "
                                 + (_said(solver, best["name"], direct["name"]) if pair else "no direct solve")
                                 + f"; test RMSE in reports/{solver['study']}.pdf",
                     "call": _solver_call(_block(infos, solver, fastest["name"])) if fastest else
                             "KRR(n_components=m)"})
    clf = _first(records, "sampler", "classification")
    clf_mode = _first(records, "mode", "classification")
    if clf:
        cmode = clf_mode["contenders"][0]["value"] if clf_mode and clf_mode.get("winner") else "lla"
        csampler = clf["contenders"][0]["value"] if clf.get("winner") else "uniform"
        rows.append({"task": "classification", "n": "any", "budget": "m = 100 landmarks",
                     "use": f"Nystrom, {csampler} landmarks, mode {cmode.upper()}",
                     "evidence": f"{clf['study']} {clf['label']}: {_said(clf)}; "
                                 f"{clf_mode['study'] if clf_mode else 'mode'}: mode {_said(clf_mode)}",
                     "call": f'KRRClassifier(n_components=100, sampler="{csampler}", mode="{cmode}", '
                             'gamma="median")'})
    for r in [r for r in records if r.get("kind") == "property" and r.get("samplers") and r.get("n_units", 0) >= 4]:
        rows.append({"task": "landmark sampler (approximation error)", "n": "any", "budget": "m landmarks",
                     **_property_row(r)})
    for r in [r for r in records if r.get("kind") == "budget" and r.get("headline")]:
        task = _task(r["metric"]) or "any task"
        rows.append({"task": f"landmark count ({task})", "n": "any", "budget": f"m = {r['column']} x n",
                     "use": f"m = {r['value']:g} n" + (" (the largest tested)" if r["value"] == r["largest"]
                                                       else f": within 1% of {r['largest']:g} n or better"),
                     "evidence": f"{r['study']} {r['label']} against {r['largest']:g} n: " + "; ".join(
                         f"{s['value']:g} n: {s['verdict']} ({_effect_text(s['effect'], s['estimate'], *s['ci'])})"
                         for s in r["steps"][-2:]),
                     "call": f"n_components={float(r['value'])!r}"})  # a fraction of n (1.0, not 1)
    for q in [q for q in questions if q.get("guide")]:
        rows += _fastest_fine_rows(records, infos, q)
    return rows


def _fastest_fine_rows(records, infos, question):
    """The guide rows of a ``guide`` question (:data:`QUESTIONS`), per task: the fastest contender not
    significantly worse than the most accurate one; its call is the study's ``calls`` entry of it (a kind's
    :meth:`~nystrom_bench.studies.Study.method_calls`)."""
    rows, guide = [], question["guide"]
    for task in ("classification", "regression"):
        sel = _first(records, question["id"], task)
        times = _first(records, question["id"], timing=True, study=sel["study"]) if sel else None
        if not (sel and times):
            continue
        # the fastest selector that is not significantly worse than the most accurate one, named only where it
        # is faster than that one by 10% or more (significantly)
        best = sel["best"]
        fine = [c["name"] for c in sel["contenders"]
                if c["name"] == best or (_oriented(sel["pairs"], best, c["name"]) or {}).get("outcome") != "win"]
        fastest = next(c["name"] for c in times["contenders"] if c["name"] in fine)
        speed = _oriented(times["pairs"], fastest, best) if fastest != best else None
        if speed is not None and not (speed["outcome"] == "win" and _big_enough(speed, True, True)):
            fastest = best
        rows.append({"task": f"{guide['task']} ({task})", "n": "any", "budget": guide["budget"],
                     "use": f"{guide.get('use', 'use')} {fastest}" + (f" (as accurate as {best}, faster by 10% or more)"
                                                        if fastest != best else ""),
                     "evidence": f"{sel['study']} {sel['label']}: ranks {_ranking_text(sel, 3)}; not significantly "
                                 f"worse than {best}: {', '.join(fine)}; time ranks {_ranking_text(times, 3)}",
                     "call": ((infos.get(sel["study"]) or {}).get("calls") or {}).get(fastest, "")})
    return rows


def _property_row(r):
    """``use``, ``evidence`` and ``call`` of the guide's row of a "When do non-uniform landmarks beat uniform?"
    record: the sampler that gains over all units (else the reference, uniform), and -- where a data property
    predicts another sampler's gain and that sampler gains more on its side of the split than the overall
    choice does everywhere -- that sampler on that side."""
    lower, ref = r["lower_is_better"], r.get("reference", "uniform")
    best = r["samplers"][0]
    overall = best["overall"]
    gains = (overall.get("p") is not None and overall["p"] < ALPHA and overall.get("estimate") is not None
             and (overall["estimate"] < 1) == bool(lower))
    default = best["value"] if gains else ref
    pred = r.get("predictor")
    evidence = [f"{r['study']} {r['label']}, {r['n_units']} data set x width units",
                f"{best['value']} vs {ref} over all units: "
                f"{_effect_text('ratio', overall.get('estimate'), *overall.get('ci', [None, None]))}, "
                f"p = {fmt_p(overall.get('p'))}"]
    use = f"{default} landmarks" + ("" if gains else " (no sampler gains significantly over all units)")
    call = f'KRR(n_components=m, sampler="{default}")'
    if pred:
        name = pred["property_name"]
        # gain = log(error / uniform's error): rho > 0 means the sampler gains more where the property is low
        good_low = (pred["rho"] > 0) == bool(lower)
        side, other = (pred["low"], pred["high"]) if good_low else (pred["high"], pred["low"])
        op = "<=" if good_low else ">"
        where = f"{name} {op} {fmt_num(pred['median'])}"
        evidence.append(f"{pred['value']} vs {ref} against {name}: Spearman rho {_signed(pred['rho'])} "
                        f"[{_signed(pred['ci'][0])}, {_signed(pred['ci'][1])}], Holm p = {fmt_p(pred['p_holm'])}; "
                        f"where {where}: {_effect_text('ratio', side.get('estimate'), *side.get('ci', [None, None]))} "
                        f"({side.get('n', 0)} units), elsewhere "
                        f"{_effect_text('ratio', other.get('estimate'), *other.get('ci', [None, None]))}")
        est, base = side.get("estimate"), overall.get("estimate") if gains else 1.0
        if pred["value"] != default and est is not None and base is not None and (est < base) == bool(lower):
            use = f"{pred['value']} landmarks where {where} (spectrum.properties); else {use}"
            call = (f'KRR(n_components=m, sampler="{pred["value"]}") if spectrum.properties(X, kernel, alpha)'
                    f'["{name}"] {op} {fmt_num(pred["median"])} else {call}')
    else:
        evidence.append("no data property predicts the gain at Holm 5%")
    return {"use": use, "evidence": "; ".join(evidence), "call": call}


def _krr_call(block):
    """The estimator call of a Nystrom KRR method block (its sampler, mode and landmark count)."""
    opts = [f"n_components={block.get('n_components', 'm')}"]
    opts += [f'{k}="{block[k]}"' for k in ("sampler", "mode") if k in block]
    return f'KRR({", ".join(opts)}, gamma="median")'


def _solver_call(block):
    dtype = f', dtype="{block["dtype"]}"' if block.get("dtype") else ""
    return f'KRR(n_components=m, solver="{block.get("solver", "auto")}"{dtype})'


def findings(records, ledger, infos=None):
    """``{"counts", "answers", "guide"}`` of one run from its answer records and claims ledger."""
    from .claims import verdict_counts

    questions = _asked(infos)
    return {"counts": verdict_counts(ledger) if ledger is not None and len(ledger) else {},
            "answers": _answers(records, ledger, questions), "guide": _guide(records, infos or {}, questions)}


def _md_cell(v):
    """A Markdown table cell: '|' escaped (|C(K) - C(K~)| stays readable), no line breaks."""
    return str(v).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(df, cols):
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    return rows + ["| " + " | ".join(_md_cell(r[c]) for c in cols) + " |" for _, r in df.iterrows()]


def _own_table_sentence(ledger):
    """The calibration of the rules, a sentence after the verdict counts (the ledger's ``paper_own``): "Of the 19
    claims that rest on a table of their paper, 16 pass their rule on the paper's own numbers (...)"; empty where
    no claim names a table."""
    own = ledger["paper_own"].fillna("").astype(str) if "paper_own" in ledger else pd.Series(dtype=str)
    own = own[own != ""]
    if not len(own):
        return ""
    rest = "; ".join(f"{n} {v}" for v, n in own[own != "reproduced"].value_counts().items())
    return (f" Of the {len(own)} claims that rest on a table of their paper, {int((own == 'reproduced').sum())} pass "
            f"their rule on the paper's own numbers" + (f" ({rest}: the paper column says which)" if rest else "")
            + ".")


def markdown(found, ledger, provenance_line=""):
    """The findings as Markdown (``reports/FINDINGS.md``): verdicts per paper, headline claims, answers,
    the practitioner's guide, then every claim (the README's snapshot stops before that last part).
    Every question gets its one-line answer; claims that answer a question are listed under it."""
    out = ["# Findings", ""]
    if provenance_line:
        out += [f"_{provenance_line}_", ""]
    counts = ", ".join(f"{n} {v}" for v, n in found["counts"].items())
    out += [f"**{len(ledger)} claims of the five papers and of this project: {counts}.** Each verdict comes "
            "from the paired test (or count, or tolerance) its claim declares in "
            "`src/nystrom_bench/papers/<paper>.yaml`." + _own_table_sentence(ledger), ""]
    if len(ledger):
        bp = by_paper(ledger)
        out += _md_table(bp, list(bp.columns)) + ["", "Headline claims tested in this run:", ""]
        out += _md_table(headline(ledger).astype(object).fillna(""), ["paper", "claim", "where", "paper_value", "ours", "verdict"])
    out += ["", ANSWERS_HEADING, "", ANSWERS_NOTE, ""]
    for a in found["answers"]:
        out += [f"**{a['question']}** {a['summary']}", ""]
        heads = [r for r in a["records"] if r.get("headline")]
        table = answers_table(heads)
        if len(table):
            cols = ["study", "metric", "better", RANK_COL, PAIR_COL, "answer",
                    "data sets", "paired runs", "Holm p"]
            if all(r.get("kind") == "property" for r in heads):  # headers that say what these numbers are
                table = table.rename(columns=PROPERTY_COLS)
                cols = [PROPERTY_COLS.get(c, c) for c in cols]
            out += _md_table(table, cols) + [""]
        claim_lines = a["claims"] if not len(table) else []
        out += [f"- {line}" for line in claim_lines] + ([""] if claim_lines else [])
        if len(table) and a["claims"]:
            out += [f"Claims that bear on it: {len(a['claims'])} (all claims: below).", ""]
    out += ["## Practitioner's guide", ""]
    guide = pd.DataFrame(found["guide"])
    if len(guide):
        out += _md_table(guide.assign(call=guide["call"].map(lambda c: f"`{c}`")),
                         ["task", "n", "budget", "use", "evidence", "call"])
    out += ["", SNAPSHOT_CUT, "", "## All claims", ""]
    if len(ledger):
        out += _md_table(ledger.astype(object).fillna(""), ["paper", "claim", "where", "paper_value", "ours", "verdict", "test"])
    return "\n".join(out) + "\n"


#: how to read the answers (FINDINGS.md and the summary PDF)
ANSWERS_NOTE = ("Each row ranks, within one study, the contenders the question is about (the config's methods "
                "that differ in that role, e.g. only in `sampler`), on the study's main metric. Mean rank: ranked "
                "within each seed and grid point, averaged per data set, then over the data sets (1 = best). Best vs "
                "runner-up: the Hodges-Lehmann median change (ratio) or difference with its 95% interval, over the "
                "paired runs of every data set pooled; Holm p over the contenders' pairs. A contender wins where "
                "it is significantly better by 1% or more (a time: faster by 10% or more).")


def findings_note(findings_md):
    """Markdown for the findings run in MLflow: ``FINDINGS.md`` up to its answers (the verdicts per paper
    and the headline claims), then where the rest is (each study's report run carries its own answers,
    :func:`study_note`)."""
    head = Path(findings_md).read_text(encoding="utf-8").split(ANSWERS_HEADING)[0].rstrip()
    return (f"{head}\n\nThe answers, the practitioner's guide and every claim with its test: `summary.pdf` and "
            "`FINDINGS.md` (this run's artifacts), `claims.csv` (the ledger). Each study's experiment holds its "
            "runs and, at the top, its report run with the study's answers.\n")


def study_note(info, claims, pdf_name, answers=None):
    """Markdown for a study's report run in MLflow (:func:`nystrom_bench.tracking.log_report`): its
    title, its answers (the records of ``answers``, default :data:`ANSWERS_FILE` of the study), its
    claims with their computed verdicts, then what it asks and where the rest is."""
    from .claims import verdict_counts

    if answers is None:
        path = Path(ANSWERS_FILE.format(study=info.get("study", "")))
        answers = read_answers([path]) if path.exists() else []
    out = [f"### {info.get('title') or info.get('study', '')}", ""]
    for a in answer_lines(answers):
        out += [f"**{a['question']}**", ""] + [f"- {_md_cell(ln)}" for ln in a["lines"]] + [""]
    if claims is not None and len(claims):
        counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(claims).items())
        out += [f"**Claims tested here: {counts}** (each verdict from the test its paper file declares).", ""]
        for _, r in claims.fillna("").iterrows():
            ours = f" Ours: {_md_cell(r['ours'])}." if r["ours"] != "" else ""
            out.append(f"- **{r['verdict']}**: {_md_cell(r['claim'])} ({r['paper']}, {r['where']}; paper: "
                       f"{_md_cell(r['paper_value'])}).{ours}")
        out.append("")
    else:
        out += ["No paper claim is tested by this study; its report gives the comparisons.", ""]
    if info.get("description"):
        out += [_md_cell(info["description"]), ""]
    out += [f"Artifacts: `{pdf_name}` (the study's report: answer, tables, paired tests, figures), "
            "`figures/`, `claims.csv`. The configuration runs beside this one hold every result; compare "
            "them in the chart view or group them by method."]
    return "\n".join(out) + "\n"


_VERDICT_SHORT = {"reproduced": "REPRODUCED", "better than the paper": "BETTER", "partly reproduced": "PARTLY",
                  "not reproduced": "NOT REPRODUCED", "not testable": "not testable", "not run": "not run"}


def by_paper(ledger):
    """Verdict counts per paper (rows in ledger order), with a total row; a column per verdict of
    :data:`nystrom_bench.papers.VERDICTS`."""
    from .papers import VERDICTS

    rows = []
    for paper, sub in ledger.groupby("paper", sort=False):
        counts = sub["verdict"].value_counts()
        rows.append({"paper": paper, "claims": len(sub), **{v: int(counts.get(v, 0)) for v in VERDICTS}})
    out = pd.DataFrame(rows)
    total = {"paper": "all", "claims": len(ledger), **{v: int(out[v].sum()) for v in VERDICTS}}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def headline(ledger, per_paper=3):
    """Up to ``per_paper`` tested claims of each paper: paired tests and counts over data sets before
    single numbers, in the paper file's order."""
    tested = ledger[~ledger["verdict"].isin(["not run", "not testable"])]
    kind = tested["test"].fillna("").astype(str).str.startswith("mean over").astype(int)  # matches_value last
    order = tested.assign(_k=kind, _i=range(len(tested))).sort_values(["_k", "_i"])
    return order.groupby("paper", sort=False).head(per_paper).sort_values("_i").drop(columns=["_k", "_i"])


def _short(text, n):
    text = str(text)
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def answer_figure(records, out_png, question=None):
    """The critical-difference diagram of an answer record, drawn from the record itself: the first headline
    ranking of three contenders or more with a Friedman test (``question``: of that question, the one with
    the most data sets).  Returns ``(out_png, caption)`` or None."""
    from .report import cd_figure

    recs = [r for r in records if r.get("headline") and not r.get("timing") and _ranking(r)
            and len(r["contenders"]) >= 3 and r.get("friedman") and (question is None or r["question"] == question)]
    if not recs:
        return None
    r = max(recs, key=lambda r: (r["n_datasets"], r["n_groups"])) if question else recs[0]
    names = [c["name"] for c in r["contenders"]]
    ranks = pd.Series({c["name"]: c["mean_rank"] for c in r["contenders"]})
    pvals = pd.DataFrame(1.0, index=names, columns=names)
    for a, row in (r.get("nemenyi") or {}).items():
        for b, p in row.items():
            pvals.loc[a, b] = p
    cd_figure(ranks, pvals, out_png, title=f"{r['asks']} {r['study']}, {r['label']}: mean rank "
                                           f"over {r['n_datasets']} data sets (1 = best)", cd=r.get("cd"))
    sig = r["friedman"]["p"] < ALPHA
    caption = (f"{r['asks']} Critical-difference diagram of {r['study']}'s {r['label']}: each contender at "
               f"its mean rank ({_over(r)}; 1 = best, left). "
               + ("A bar joins contenders the Nemenyi test cannot tell apart; two further apart than the critical "
                  "difference (CD) differ." if sig else
                  "Friedman's test over the data sets finds no difference at 5%, so every contender is joined.")
               + " The same ranking as the answer's.")
    return out_png, caption


def _answers_pdf_table(records):
    t = answers_table([r for r in records if r.get("headline")], p_values=False)
    if not len(t):
        return t
    recs = [r for r in records if r.get("headline")]
    if all(r.get("kind") == "property" for r in recs):  # headers that say what these numbers are
        return pd.DataFrame({
            "study": t["study"], "metric (better)": [f"{_short(m, 26)} ({b})" for m, b in zip(t["metric"], t["better"],
                                                                                                strict=True)],
            "change vs uniform per data set": t[RANK_COL].map(lambda s: _short(s, 150)),
            "which property predicts the gain": t[PAIR_COL].map(lambda s: _short(s, 150)),
            "answer": t["answer"].map(lambda s: _short(s, 60)),
            "sets/units": [f"{d}/{n}" for d, n in zip(t["data sets"], t["paired runs"], strict=True)]})
    return pd.DataFrame({
        "study": t["study"],
        "metric (better)": [f"{_short(m, 26)} ({b})" for m, b in zip(t["metric"], t["better"], strict=True)],
        "mean rank per data set (1 = best)": [
            _ranking_text(r, 3) if _ranking(r) else _short(t[RANK_COL].iloc[i], 150) for i, r in enumerate(recs)],
        "best vs runner-up [95% CI]": t[PAIR_COL].map(lambda s: _short(s, 90)),
        "answer": t["answer"].map(lambda s: _short(s, 60)),
        "sets/runs": [f"{d}/{n}" if d != "" else "" for d, n in zip(t["data sets"], t["paired runs"], strict=True)]})


def summary_pdf(ledger_csv, answers_jsons, result_csvs, infos, title, out_pdf, findings_md=None, config_name="",
                answers_csv=None):
    """``reports/summary.pdf``: pages 1-2 the answers (each question's one-line answer and its rankings,
    the sampler question's critical-difference diagram, the practitioner's guide), then the appendix
    (verdicts per paper and headline claims, the answers in full with their tests, one short section per
    study, the claims ledger).  ``findings_md``: the same as Markdown; ``answers_csv``: every record
    as one table.  Nothing is ranked here: the answers are the records of ``answers_jsons``.

    ``result_csvs`` and ``infos`` are keyed by study block (``infos[s]`` as the workflow's report
    params: title, description, metrics, coords, block_cols, primary_metric, reference, config).
    """
    import tempfile

    from . import provenance
    from .atomic import write_csv
    from .report import P_PER_PAGE, PDF, count_p, mean_sd_table

    ledger = pd.read_csv(ledger_csv) if ledger_csv else pd.DataFrame()
    records = read_answers(answers_jsons)
    found = findings(records, ledger, infos)
    prov = provenance.summary()
    line = (f"Run of {prov['date']}, config {config_name or 'config/config.yaml'}, git commit {prov['git_commit']}, "
            f"{prov['hardware']}")
    doc = PDF(f"{title}: findings")
    doc.title(f"{title}: what the benchmark found")
    doc.para(line, size=7)
    counts = ", ".join(f"{n} {v}" for v, n in found["counts"].items())
    doc.para(f"{len(ledger)} claims of the five papers and of this project, verdicts computed from this run's "
             f"results by the test each claim calls for: {counts} (per paper: appendix A)."
             + _own_table_sentence(ledger), size=8, style="B")
    doc.heading("Answers", keep=20)
    doc.para(ANSWERS_NOTE.replace("`", "'") + " Tests and p-values: appendix B.", size=6.8)
    widths = (19, 33, 55, 44, 24, 11)
    for a in found["answers"]:
        doc.para(f"{a['question']} {a['summary']}", size=7.5, style="B")
        table = _answers_pdf_table(a["records"])
        if len(table):
            doc.table(table, size=5.6, col_widths=widths)
    with tempfile.TemporaryDirectory() as tmp:
        cd = answer_figure(records, Path(tmp) / "cd_sampler.png", "sampler")
        if doc.pdf.page == 1:
            doc.new_page()
        if cd:
            doc.image(cd[0], caption=cd[1], max_height=38)
        doc.heading("Practitioner's guide", keep=20)
        doc.para("Each row is the winner of an answer above (evidence column: the effect with its 95% interval), "
                 "or the library's default where no contender wins; the library call does it. Widths: the median "
                 "heuristic (gamma='median') throughout.", size=7)
        if found["guide"]:
            doc.table(pd.DataFrame(found["guide"])[["task", "n", "budget", "use", "evidence", "call"]], size=5.6,
                      col_widths=(18, 14, 18, 30, 62, 44))
        # -- appendix
        doc.new_page()
        doc.heading("Appendix A. Verdicts per paper and headline claims")
        if len(ledger):
            verdict_cols = len(by_paper(ledger).columns) - 2
            doc.table(by_paper(ledger), size=6.5, col_widths=(52, 14, *([(190 - 66) / verdict_cols] * verdict_cols)))
            doc.para("Headline claims (tested in this run; every claim: appendix D):", size=8, style="B")
            head = headline(ledger)
            doc.table(pd.DataFrame({"paper": head["paper"].map(lambda p: _short(p, 24)),
                                    "claim": head["claim"].map(lambda c: _short(c, 84)),
                                    "ours": head["ours"].fillna("").map(lambda v: _short(v, 28)),
                                    "verdict": head["verdict"].map(lambda v: _VERDICT_SHORT.get(v, v))}),
                      size=5.8, col_widths=(26, 100, 36, 24))
        doc.new_page()
        doc.heading("Appendix B. The answers in full")
        doc.para("Every ranking of every study (the headline rows above are the first of each study), with its "
                 "tests; then the claims that bear on the question. The same records: results/<study>/answers.json, "
                 "results/answers.csv.", size=7.5)
        used = {}

        def para(text, size=7, style=""):
            n = count_p(text)
            if used.get(doc.pdf.page, 0) + n > P_PER_PAGE:
                doc.new_page()
            used[doc.pdf.page] = used.get(doc.pdf.page, 0) + n
            doc.para(text, size=size, style=style)

        for a in found["answers"]:
            para(a["question"], size=8.5, style="B")
            for r in a["records"]:
                para(answer_text(r))
            for ln in a["claims"]:
                para(ln, size=6.8)
        doc.heading("Appendix C. The studies")
        for i, (study, info) in enumerate(infos.items(), 1):
            if study not in result_csvs:
                continue
            df = pd.read_csv(result_csvs[study])
            doc.para(f"{i}. {info.get('title', study)} (reports/{study}.pdf)", size=9, style="B")
            metric = info.get("primary_metric")
            if metric and metric in df:
                label = info["metrics"][metric][0]
                doc.para(f"{label}, mean +- sd over seeds:", size=7.5)
                coords = [c for c in info.get("coords", []) if c in (info.get("summary_coords") or [])]
                doc.table(mean_sd_table(df, metric, order=info.get("methods"), coords=coords), size=6)
        if len(ledger):
            doc.new_page()
            doc.heading("Appendix D. The claims ledger")
            doc.para("Every claim, the paper's value, ours and the verdict; the test and evidence of each: "
                     "results/claims.csv and each study's report (appendix D there).", size=8)
            full = ledger[["paper", "claim", "where", "paper_value", "ours", "verdict"]].fillna("")
            doc.table(full.assign(ours=full["ours"].map(lambda v: _short(v, 120))), size=5.4,
                      col_widths=(22, 60, 20, 30, 38, 20))
        doc.save(out_pdf)
    if findings_md:
        from .atomic import replace_into

        text = markdown(found, ledger, line)
        replace_into(findings_md, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    if answers_csv:
        write_csv(answers_table(records).drop(columns="headline", errors="ignore"), answers_csv)
    return found


SNAPSHOT_START, SNAPSHOT_END = "<!-- findings:start -->", "<!-- findings:end -->"
#: where the README's snapshot of FINDINGS.md stops (the full ledger stays in reports/FINDINGS.md)
SNAPSHOT_CUT = "<!-- snapshot ends here -->"
#: the heading that opens FINDINGS.md's answers
ANSWERS_HEADING = "## Answers"


def snapshot_readme(findings_md, readme="README.md"):
    """Put the findings of ``findings_md`` into ``readme`` between the snapshot markers (headings
    one level down, up to the full ledger), replacing the last snapshot; the README then shows the run it
    came from and points to the full ledger.  A question without an answer is an error (the snapshot
    never shows an empty answer)."""
    text = Path(findings_md).read_text(encoding="utf-8").split(SNAPSHOT_CUT)[0]
    empty = empty_answers(text)
    if empty:
        raise ValueError(f"{findings_md}: no answer under {', '.join(empty)}; re-run `make reproduce`")
    body = "\n".join(("#" + ln if ln.startswith("#") else ln) for ln in text.splitlines()[1:]).strip()
    doc = Path(readme).read_text(encoding="utf-8")
    if SNAPSHOT_START not in doc or SNAPSHOT_END not in doc:
        raise ValueError(f"{readme} has no findings snapshot markers ({SNAPSHOT_START} ... {SNAPSHOT_END})")
    head, rest = doc.split(SNAPSHOT_START, 1)
    _old, tail = rest.split(SNAPSHOT_END, 1)
    more = "\n\nEvery claim with its test and evidence: `reports/FINDINGS.md` and `results/claims.csv` after a run."
    Path(readme).write_text(f"{head}{SNAPSHOT_START}\n{body}{more}\n{SNAPSHOT_END}{tail}", encoding="utf-8")


def empty_answers(markdown_text, questions=None):
    """The questions of a FINDINGS.md text whose answer is empty (a bold question with nothing after it
    before the next question or heading, or missing).  ``questions``: those the text must answer (default:
    the generic :data:`QUESTIONS` and every bold question that opens a paragraph of its answers)."""
    section = markdown_text.split(ANSWERS_HEADING, 1)[1] if ANSWERS_HEADING in markdown_text else ""
    section = section.split("\n## ", 1)[0]
    if questions is None:
        shown = [{"question": m} for m in re.findall(r"^\*\*([^*\n]+\?)\*\*", section, flags=re.M)]
        questions = all_questions([{"id": q["question"], **q} for q in shown])
    empty = []
    for q in questions:
        mark = f"**{q['question']}**"
        if mark not in section:
            empty.append(q["question"])
            continue
        after = section.split(mark, 1)[1]
        nxt = min([after.find(f"**{o['question']}**") for o in questions if f"**{o['question']}**" in after]
                  or [len(after)])
        if not after[:nxt].strip():
            empty.append(q["question"])
    return empty
