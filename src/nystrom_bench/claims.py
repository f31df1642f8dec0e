"""The claims ledger: every testable claim of the papers, with a verdict computed from the results.

Claims are data (:mod:`nystrom_bench.papers`, one YAML file per paper): the claim in a
sentence, where the paper makes it, the paper's value, the study block that tests it and a
*rule*.  This module turns a claim and its study's result table into one ledger row
(``paper, claim_id, claim, where, paper_value, ours, test, p_value, effect, verdict,
evidence, study``); :func:`ledger` does it for every claim, :func:`write_ledger` writes the ledger
over every block in one call (the workflow instead evaluates each block's own claims in its
``analysis`` job, :func:`nystrom_bench.jobs.analyze_study`, and its ``claims`` rule gathers them into
``results/claims.csv``, :func:`nystrom_bench.jobs.gather_claims`: the same rows).  Verdicts are
computed, never typed:

``reproduced`` / ``partly reproduced`` / ``not reproduced``
    from the rule's paired test or comparison (below);
``not testable``
    the claim says why (``not_testable:``), or its data sets are not in the results
    (e.g. a paper data set that only ``config/paper.yaml`` downloads), or its rivals share no
    paired block;
``not run``
    the claim's study block is not in this configuration.

A claim in ``papers/<key>.yaml`` (one list item under ``claims:``)::

    - id: adapt_ms_smaller_gap            # unique within the file
      claim: "One sentence: what the paper claims."
      where: "Fig. 1"                      # where the paper states or shows it
      paper_value: "what the paper reports, as text"
      study: consistency                   # the block that tests it (or a list: the first that ran)
      rule: better                         # see below
      metric: relative_gap                 # a metric of that study (metric_b: a second one, same rows)
      column: method                       # whose values a and b are (default method)
      a: adapt_ms
      b: [uniform, colnorm]
      filter: {criterion: c_ree}           # optional: rows kept, column -> value or list
      datasets: [boston]                   # optional: these data sets only (absent: not testable)
      stand_ins: {usps: digits}            # optional: an offline stand-in where the paper's set is absent
      transform: {slope: l, mean_over: [log2_gamma]}   # optional (below)
      paper_number: 0.029                  # matches_value
      tolerance: 0.2                       # matches_value / no_worse / equivalent
      p: 0.5                               # slope_below: the threshold on the slope
      effect: difference                   # optional: the paired effect (default: ratio where the metric is
                                           # positive in every row, else difference)
      every: m                             # better / no_worse: the paper claims it at every value of this
                                           # coord (or block column, e.g. dataset)
      chain: [grid_10, grid_20, grid_40]   # better, instead of a and b: each value better than the one before
      paper_table: table1                  # optional: the paper's table it rests on; the ledger gives the
                                           # rule's verdict on its printed numbers too (paper_evidence)
      answers: [sampler]                   # optional: the findings question(s) it bears on
      not_testable: "reason"               # instead of a rule, where the evidence cannot be had
      note: "the paper's definition, how its number was read, caveats"

Rules (``rule:``), each on the rows left after ``filter``/``datasets`` and an optional
``transform``; ``column`` (default ``method``) names the column whose values ``a`` and ``b``
are -- a method, a coord such as ``integration`` or ``m``, the ``kernel`` -- and a result
pairs with its rival on the study's blocks (``dataset, kernel, seed``) plus every coord
other than ``column``.  ``metric_b`` compares two metrics of the same rows instead (``a``
and ``b`` then default to the metrics' names).  Every paired rule runs one comparison per
rival, :func:`nystrom_bench.stats.compare_pair`: Wilcoxon's signed-rank test on the
log-ratio ``log(a / b)`` per block (scale-free: a data set with an MSE of 4,000 weighs as
much as one with 20), or on the difference where the metric is not positive everywhere,
with the Hodges-Lehmann median ratio and its 95% interval; Holm over the rivals.  Each
rule's exact definition is its function's docstring (docs/guide/verdicts.md, "How a verdict is computed"):

``better`` (:func:`_better`)
    every rival beaten significantly: reproduced; some rival significantly better, or none
    beaten: not reproduced; else partly.  A time claim needs an effect of at least
    ``min_effect`` (default 10%) either way.  ``every: coord`` (a claim "at every m"): also
    ahead of every rival at every value of the coord on the Hodges-Lehmann estimate of that
    value's blocks with a one-sided sign test; behind at one (a sign test beyond the minimum
    effect, Holm over the values and rivals): not reproduced; neither at one: partly.  ``chain:
    [v1, v2, ...]`` instead of ``a`` and ``b`` (a claim "the more samples, the closer"): each value
    against the one before it, the steps taking the rivals' place.
``no_worse`` (:func:`_no_worse`)
    the equivalence margin ``tolerance`` (default 2%, 10% for a time) holds against every
    rival (the worse-side bound of the interval inside it): reproduced; against none, or
    significantly worse beyond it: not reproduced; else partly.  A non-significant test alone
    never counts.  ``every: dataset`` (a claim "on every data set"): also within the margin of
    every rival on each value's blocks alone; worse beyond it at one (a sign test beyond the
    margin, Holm over the values and rivals): not reproduced; neither at one: partly.  For this rule and ``better``,
    the evidence also names the
    subgroups (a data set, kernel or coord value) where ``a`` is worse all the same, Holm-adjusted
    over those checked (:func:`_subgroups`); the verdict stands.
``best_on_most`` (:func:`_best_on_most`)
    ``a`` has the best mean on ``k`` of ``N`` data sets; ``share`` is the paper's word --
    ``all``, ``most`` or its own ``k/n``.  Reproduced when ours meets it; partly when short of
    it but a significant majority holds (``k > N/2``, one-sided binomial test against chance);
    else not reproduced.
``matches_value`` (:func:`_matches_value`)
    the mean of the metric against the paper's ``paper_number``: reproduced within
    ``tolerance`` (relative, default 0.2); better than the paper beyond it: ``better than the
    paper``; partly within twice that; else not.
``equivalent`` (:func:`_equivalent`)
    ``a`` and each of ``b`` agree within ``tolerance`` (relative, default 1e-6) in every
    pair -- for identities a paper proves; partly within 100 times that.
``slope_below`` (:func:`_slope_below`)
    ``transform: {slope: coord}``: the slope ``b`` of log(metric) on log(coord) per curve
    and pooled over curves (one intercept each); reproduced when ``b < p`` on the claim's
    ``share`` of curves (default ``all``) and the pooled slope's 95% interval lies below
    ``p``; partly when the pooled interval does and a significant majority of curves does;
    else not.  This is the papers' p-order approximate consistency: eps(l) / l^p -> 0 holds
    for a gap of order l^b exactly when b < p.

Transforms: ``{slope: coord, mean_over: [coords]}`` (the metric becomes the per-seed
log-log slope over ``coord``, after averaging over ``mean_over``; lower is better) and
``{argmin_distance: {over: coord, exact: method}}`` (the distance between the arg-min over
``coord`` of each method's curve and the ``exact`` method's; lower is better) and ``{param: key}``
(the metric read out of each row's ``params``: a scalar ``params[key]`` becomes the metric ``key``;
a table -- ``fields: [lambda, alignment, error]`` naming its columns -- gives one row per ``pick``,
``{criterion: {argmax: alignment}, best: min}``, the compared ``column: params`` holding the pick's
name and the metric the ``value`` field (default the claim's metric) at the picked table row, or
that statistic of it; ``lower:`` overrides the direction).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .report import fmt_num as _fmt
from .report import fmt_p as _fmt_p
from .results import format_coord

__all__ = ["COLUMNS", "RULES", "evaluate", "ledger", "write_ledger", "verdict_counts", "is_time", "parse_share",
           "pooled_slope", "TIME_MIN_EFFECT", "NO_WORSE_MARGIN"]

#: the ledger's columns, in order
COLUMNS = ["paper", "claim_id", "claim", "where", "paper_value", "ours", "test", "p_value", "effect", "verdict",
           "evidence", "study", "question", "paper_own"]
ALPHA = 0.05
log = logging.getLogger(__name__)


class _NotTestable(Exception):
    """The claim cannot be tested on these results; the message says why."""


# -- helpers ----------------------------------------------------------------------------------
def _as_list(v):
    return list(v) if isinstance(v, list | tuple) else [v]


def _key(v):
    """A column value or a YAML value in one comparable form (1000, 1000.0 and '1000' agree)."""
    return format_coord(v) if not isinstance(v, str) else v


def _level_key(v):
    """A coord value as :func:`_key` writes it, an empty one as ``(empty)``."""
    return "(empty)" if v is None or (isinstance(v, float) and np.isnan(v)) else _key(v)


def _is_number(k):
    try:
        float(k)
    except (TypeError, ValueError):
        return False
    return True


def _pct(x):
    """A relative change for people: -12%, +0.4%, or 'x23' where the change exceeds +100%."""
    if x > 1:
        return f"x{1 + x:.2g}" if 1 + x < 100 else f"x{1 + x:.0f}"
    return f"{x * 100:+.0f}%" if abs(x) >= 0.01 else f"{x * 100:+.1f}%"


def _outside_words(df):
    """"" or a sentence: how many of the claim's rows lie outside their method's assumptions, and why.

    A claim keeps such rows (the paper ran its method there too, and the verdict must answer for
    it); its evidence says so, while rankings, means and the study tables leave them out
    (:func:`nystrom_bench.results.within_assumptions`)."""
    from .results import assumption_summary

    summary = assumption_summary(df)
    if not len(summary):
        return ""
    parts = [f"{int(r['rows_out'])} of {int(r['rows'])} rows of {r['method']} ({r['reasons']}; "
             f"{int(r['datasets_out'])} of {int(r['datasets'])} data sets)" for _, r in summary.iterrows()]
    return "Outside the method's assumptions: " + "; ".join(parts) + "."


class _Setup:
    """A claim's rows, compared column, blocks and direction, after filter and transform."""

    def __init__(self, claim, df, info):
        self.claim = claim
        self.metric = claim.get("metric")
        self.column = claim.get("column", "method")
        self.a = claim.get("a")
        self.b = [x for x in _as_list(claim.get("b", []))]
        self.chain = [x for x in _as_list(claim.get("chain", []))]
        if self.chain and (self.a is not None or self.b or len(self.chain) < 2 or claim.get("rule") != "better"
                           or len(set(map(str, self.chain))) < len(self.chain) or claim.get("every")):
            raise ValueError(f"claim {claim['id']!r}: chain: lists two values or more, each once, in the order the "
                             "claim says each improves on the one before, for rule better, without a, b or every:")
        metrics = (info or {}).get("metrics", {})
        if self.metric not in metrics and self.metric not in df:
            raise ValueError(f"claim {claim['id']!r}: metric {self.metric!r} is not a metric of study "
                             f"{claim['study']!r} (it has {', '.join(metrics) or 'none'})")
        self.lower = bool(metrics.get(self.metric, ("", True))[1])
        self.labels = {m: str(v[0]) for m, v in metrics.items()}
        self.df = self._select(df)
        self.outside = _outside_words(self.df)
        # coords empty in every row (e.g. l where a block has no train_sizes) pair nothing and would make
        # pandas' groupby drop every row
        coords = [c for c in (info or {}).get("coords", []) if c in self.df and self.df[c].notna().any()]
        self.blocks = [c for c in [*(info or {}).get("block_cols", ["dataset", "kernel", "seed"]), *coords]
                       if c in self.df]
        if claim.get("metric_b"):
            self._two_metrics(claim["metric_b"])
        if self.column not in self.df:
            raise ValueError(f"claim {claim['id']!r}: column {self.column!r} is not in the results of "
                             f"{claim['study']!r}")
        # a result pairs with its rival on everything but the compared column: the study's blocks, its
        # coords and, when the column is not the method, the method too
        if self.column != "method" and "method" in self.df and "method" not in self.blocks:
            self.blocks.append("method")
        self.blocks = [c for c in self.blocks if c != self.column]
        self.df = self.df.assign(**{self.column: self.df[self.column].map(_key)})
        self.a = None if self.a is None else _key(self.a)
        self.b = [_key(x) for x in self.b]
        self.chain = [_key(x) for x in self.chain]
        self._transform(claim.get("transform"))

    def _select(self, df):
        claim = self.claim
        wanted = claim.get("datasets")
        self.stand_in = ""
        if wanted:
            present = sorted(set(wanted) & set(df["dataset"]))
            stand_ins = claim.get("stand_ins") or {}
            if not present and stand_ins:
                # the paper's data sets are absent (a download): a declared offline stand-in answers instead
                present = sorted({stand_ins[w] for w in wanted if w in stand_ins} & set(df["dataset"]))
                if present:
                    self.stand_in = (f"Tested on the stand-in {', '.join(present)} for the paper's "
                                     f"{', '.join(w for w in wanted if w in stand_ins)} (config/paper.yaml runs the "
                                     "paper's own).")
            if not present:
                raise _NotTestable(f"its data sets ({', '.join(wanted)}) are not in this run's results "
                                   f"(they are in config/paper.yaml)")
            df = df[df["dataset"].isin(present)]
        for col, val in (claim.get("filter") or {}).items():
            if col not in df:
                raise ValueError(f"claim {claim['id']!r}: filter column {col!r} is not in the results")
            keep = {_key(v) for v in _as_list(val)}
            df = df[df[col].map(_key).isin(keep)]
        df = df[df[self.metric].notna()] if self.metric in df else df
        if not len(df):
            raise _NotTestable("no result rows match its filter")
        return df

    def _two_metrics(self, metric_b):
        """Rows of two metrics of the same results as one long table: column = which metric."""
        a, b = self.metric, metric_b
        keep = [c for c in self.blocks + ["method"] if c in self.df]
        long = pd.concat([self.df[keep].assign(__metric=a, __value=self.df[a]),
                          self.df[keep].assign(__metric=b, __value=self.df[b])], ignore_index=True)
        self.blocks = [*self.blocks, "method"] if self.column == "method" else self.blocks
        self.df = long.rename(columns={"__value": "value", "__metric": "metric"})
        self.labels["value"] = " / ".join(self.labels.get(m, m) for m in (a, b))
        self.metric, self.column = "value", "metric"
        self.a = self.a or a
        self.b = self.b or [b]

    def _transform(self, spec):
        if not spec:
            return
        if "slope" in spec:
            x = spec["slope"]
            mean_over = [c for c in _as_list(spec.get("mean_over", [])) if c in self.df]
            keys = [c for c in self.blocks if c not in (x, *mean_over)] + [self.column]
            g = self.df.groupby([*keys, x], as_index=False)[self.metric].mean()
            rows = []
            for key, sub in g.groupby(keys):
                sub = sub[sub[self.metric] > 0]
                if sub[x].nunique() >= 2:
                    b = np.polyfit(np.log(sub[x].astype(float)), np.log(sub[self.metric].astype(float)), 1)[0]
                    rows.append({**dict(zip(keys, key, strict=True)), "slope": float(b)})
            if not rows:
                raise _NotTestable(f"fewer than two values of {x!r} with a positive {self.metric!r}")
            self.labels["slope"] = f"log-log slope of {self.label} over {x}"
            self.df, self.metric, self.lower = pd.DataFrame(rows), "slope", True
            self.blocks = [c for c in keys if c != self.column]
            self.slope_of = (x, mean_over)
        elif "argmin_distance" in spec:
            over, exact = spec["argmin_distance"]["over"], _key(spec["argmin_distance"]["exact"])
            keys = [c for c in self.blocks if c != over]
            idx = self.df.groupby([*keys, self.column])[self.metric].idxmin()
            best = self.df.loc[idx, [*keys, self.column, over]]
            ref = best[best[self.column] == exact].drop(columns=self.column).rename(columns={over: "__ref"})
            if not len(ref):
                raise _NotTestable(f"the exact method {exact!r} has no rows")
            merged = best[best[self.column] != exact].merge(ref, on=keys)
            merged["argmin_distance"] = (merged[over].astype(float) - merged["__ref"].astype(float)).abs()
            self.labels["argmin_distance"] = f"distance of the arg-min of {self.label} from {exact}'s, in {over}"
            self.df, self.metric, self.lower = merged.drop(columns=[over, "__ref"]), "argmin_distance", True
            self.blocks = keys
        elif "param" in spec:
            self._from_params(spec)
        else:
            raise ValueError(f"claim {self.claim['id']!r}: unknown transform {sorted(spec)}; "
                             "use slope, argmin_distance or param")

    #: a pick of a table in ``params``: the row at the arg-max/arg-min of a field, or a statistic of the value
    _PICK_STATS = {"min": np.min, "max": np.max, "median": np.median, "mean": np.mean}

    def _from_params(self, spec):
        """``transform: {param: key, ...}``: the metric read out of each row's ``params`` (JSON).

        A scalar ``params[key]`` becomes the metric ``key`` (``lower:`` its direction, default the
        claim metric's).  A table -- a list of rows, ``fields`` naming their columns -- turns every
        result row into one row per ``pick`` (``{name: {argmax: field} | {argmin: field} | min | max |
        median | mean}``): the compared ``column`` (``params``, which then pairs the picks of one row
        with each other) holds the pick's name, the metric is the ``value`` field at the picked table
        row (or that statistic of it).  Rows without the key are dropped.
        """
        import json

        cid, key = self.claim["id"], spec["param"]
        if "params" not in self.df:
            raise ValueError(f"claim {cid!r}: transform param needs the results' params column")
        params = self.df["params"].map(lambda p: json.loads(p) if isinstance(p, str) else (p or {}))
        values = params.map(lambda p: p.get(key))
        keep = values.map(lambda v: v is not None and not (isinstance(v, list) and not v))
        if not keep.any():
            raise _NotTestable(f"no result row records {key!r} in its params")
        df, values = self.df[keep], values[keep]
        if "fields" not in spec:
            metric = str(key)
            self.df = df.assign(**{metric: values.astype(float)})
            self.lower = bool(spec.get("lower", self.lower))
            self.labels[metric] = f"{metric.replace('_', ' ')} (params)"
            self.metric = metric
            return
        fields = list(spec["fields"])
        value = spec.get("value", self.metric)
        picks = spec.get("pick") or {}
        if value not in fields or not picks:
            raise ValueError(f"claim {cid!r}: transform param needs value (one of fields {fields}) and pick")
        rows = []
        for (_, row), table in zip(df.iterrows(), values, strict=True):
            t = pd.DataFrame([list(r) for r in table], columns=fields).astype(float)
            for name, how in picks.items():
                if isinstance(how, dict) and len(how) == 1 and next(iter(how)) in ("argmax", "argmin"):
                    (op, field), = how.items()
                    i = t[field].idxmax() if op == "argmax" else t[field].idxmin()  # the first of ties
                    v = t.loc[i, value]
                elif how in self._PICK_STATS:
                    v = self._PICK_STATS[how](t[value])
                else:
                    raise ValueError(f"claim {cid!r}: pick {name!r}: use {{argmax: field}}, {{argmin: field}}, "
                                     f"or one of {', '.join(self._PICK_STATS)}")
                rows.append({**row.to_dict(), self.column: _key(name), value: float(v)})
        out = pd.DataFrame(rows).drop(columns=["params"] if self.column != "params" else [])
        if out.duplicated([*self.blocks, self.column]).any():
            raise ValueError(f"claim {cid!r}: transform param: several rows per block and pick; filter the "
                             f"rows to one value of {self.column!r}")
        self.labels[value] = f"{self.labels.get(value, value)} at each pick of params.{key}"
        self.df, self.metric = out, value
        self.lower = bool(spec.get("lower", self.lower))

    def test_line(self, what, n_rivals):
        blocks = ", ".join(self.blocks)
        holm = f", Holm over {n_rivals} {'steps' if self.chain else 'rivals'}" if n_rivals > 1 else ""
        return f"{what}, paired over ({blocks}){holm}"

    def steps(self):
        """``[(a, rival)]``: what the rule compares -- ``a`` against each of ``b``, or each value of ``chain``
        against the one before it."""
        if self.chain:
            return [(hi, lo) for lo, hi in zip(self.chain[:-1], self.chain[1:], strict=True)]
        return [(self.a, r) for r in self.b]

    def _pair_frame(self, rival, a=None):
        """``a``'s (default the claim's) and ``rival``'s values on the blocks both have: a frame with those two
        columns, indexed by the blocks."""
        # asked once per rival by the rule and once per coord by level_pairs (the subgroup check): pivoted once
        a = self.a if a is None else a
        state = (self.metric, self.column, tuple(self.blocks))
        memo = self.__dict__.setdefault("_pair_memo", {})
        got = memo.get((a, rival))
        if got is None or got[0] is not self.df or got[1] != state:
            got = memo[(a, rival)] = (self.df, state, self._pivot_pair(rival, a))
        return got[2]

    def _pivot_pair(self, rival, a):
        from . import stats  # here: the ledger job (gathering only) needs no scipy.stats

        sub = self.df[self.df[self.column].isin([a, rival])]
        for name in (a, rival):
            if not (sub[self.column] == name).any():
                raise _NotTestable(f"{self.column} = {name!r} has no rows in this run's results (values: "
                                   f"{', '.join(sorted(map(str, self.df[self.column].unique())))})")
        wide = stats.pivot_pairs(sub, self.metric, self.column, self.blocks, complete=False)
        if rival not in wide or a not in wide or not len(wide[[a, rival]].dropna()):
            raise _NotTestable(f"{a!r} and {rival!r} share no paired block over ({', '.join(self.blocks)})")
        return wide[[a, rival]].dropna()

    def _compare(self, pair, rival, confidence):
        from . import stats

        subject = pair.columns[0]
        a, b = pair[subject].to_numpy(float), pair[rival].to_numpy(float)
        out = stats.compare_pair(a, b, self.lower, self.effect, confidence)  # its "d": every: and subgroups test it
        return {**out, "subject": subject, "reference": rival, "reference_median": float(np.median(np.abs(b)))}

    def pairs(self, rival, confidence=0.95, a=None):
        """:func:`stats.compare_pair` of ``a`` (default the claim's) against ``rival`` over the blocks both have,
        with both names (``subject``, ``reference``)."""
        return self._compare(self._pair_frame(rival, a), rival, confidence)

    def level_pairs(self, rival, coord, confidence=0.95):
        """``[(value, comparison or None)]``: :func:`pairs` on the blocks of each value of the coord ``coord``
        alone, for every value where ``a`` or ``rival`` has rows (None where the two share no block there), in
        the coord's order (numbers by value; an empty coord is the value ``(empty)``)."""
        pair = self._pair_frame(rival)
        if coord not in (pair.index.names or []):
            raise ValueError(f"claim {self.claim['id']!r}: every: {coord!r} is not a coord the claim pairs over "
                             f"(it pairs over {', '.join(self.blocks)})")
        values = pair.index.get_level_values(coord)
        rows = self.df[self.df[self.column].isin([self.a, rival])][coord]
        keys = {_level_key(v) for v in rows.unique()} | {_level_key(v) for v in values.unique()}
        order = sorted(keys, key=lambda k: (0, float(k), k) if _is_number(k) else (1, 0.0, k))
        at = np.array([_level_key(v) for v in values], dtype=object)
        return [(k, self._compare(pair[at == k], rival, confidence) if (at == k).any() else None) for k in order]

    @property
    def effect(self):
        """``ratio`` where the metric is positive in every row of the claim, else ``difference``; a claim's
        ``effect:`` fixes it (the paper's own table then runs the test our results need: a table of means may be
        positive everywhere where our blocks hold a zero)."""
        pinned = self.claim.get("effect")
        if pinned is not None:
            if pinned not in ("ratio", "difference"):
                raise ValueError(f"claim {self.claim['id']!r}: effect: {pinned!r} is not 'ratio' or 'difference'")
            return pinned
        got = self.__dict__.get("_effect_of")
        if got is None or got[0] is not self.df or got[1] != self.metric:
            v = self.df[self.metric].dropna()
            got = self._effect_of = (self.df, self.metric, "ratio" if len(v) and bool((v > 0).all()) else "difference")
        return got[2]

    @property
    def label(self):
        """The metric as people read it ("test MSE"), from the study's metric labels."""
        return self.labels.get(self.metric, self.metric.replace("_", " "))

    @property
    def direction(self):
        return "lower is better" if self.lower else "higher is better"


# -- what every rule shares: the paired comparison, its effect and its words -------------------
#: the minimum effect of a time claim: a method is faster (or slower) only by 10% or more, so that
#: machine load -- which moves run times by a few percent -- never flips a verdict
TIME_MIN_EFFECT = 0.10
#: the default equivalence margin of a "no worse" claim (relative; a time claim's is TIME_MIN_EFFECT)
NO_WORSE_MARGIN = 0.02


def is_time(metric):
    """Whether ``metric`` is a time (``fit_time``, ``seconds``, ``selection_seconds``...)."""
    return "time" in metric or "second" in metric


def _min_effect(s):
    return float(s.claim.get("min_effect", TIME_MIN_EFFECT if is_time(s.claim.get("metric", "")) else 0.0))


def _change(c, v):
    """``v`` (a ratio or a difference) as people read it: a relative change for a ratio."""
    if not np.isfinite(v):
        return "n/a"
    return _pct(v - 1) if c["effect"] == "ratio" else f"{v:+.3g}"


def _effect_text(c):
    """The effect of one comparison with its interval: "+18% [+5%, +30%]"."""
    ci = f" [{_change(c, c['ci_low'])}, {_change(c, c['ci_high'])}]" if np.isfinite(c["ci_low"]) else ""
    return _change(c, c["estimate"]) + ci


def _side(c, lower, min_effect=0.0):
    """``+1`` where ``a`` is better than its rival by at least ``min_effect``, ``-1`` where it is worse
    by at least that, 0 within it, on the Hodges-Lehmann estimate.

    For a ratio effect "by at least m" means the better value is at most ``1 - m`` times the worse
    one, whichever is which (a time 10% below its rival's; an accuracy whose rival's is 10% below):
    ``a / b <= 1 - m`` or ``a / b >= 1 / (1 - m)``.  ``min_effect`` applies to ratio effects only (times
    are positive); a difference effect counts any non-zero estimate, and an estimate exactly at no
    effect goes by the counts of better and worse blocks."""
    est = c["estimate"]
    if not np.isfinite(est):
        return 0
    if c["effect"] == "ratio":
        good, bad = (est <= 1 - min_effect, est >= 1 / (1 - min_effect)) if lower else \
                    (est >= 1 / (1 - min_effect), est <= 1 - min_effect)
        good, bad = good and est != 1, bad and est != 1
    else:
        good, bad = (est < 0, est > 0) if lower else (est > 0, est < 0)
    if not (good or bad) and est in (0, 1) and c["better"] != c["worse"] and min_effect == 0:
        # the centre of the differences at exactly no effect: go by the counts
        return 1 if c["better"] > c["worse"] else -1
    return 1 if good else -1 if bad else 0


def _pair_words(s, c, p):
    unit = "median ratio" if c["effect"] == "ratio" else "median difference"
    return (f"{c['subject']} vs {c['reference']}: {unit} {_effect_text(c)} (Hodges-Lehmann, 95% CI), better in "
            f"{c['better']} and worse in {c['worse']} of {c['n_pairs']} blocks, Holm p = {_fmt_p(p)}")


def _ours(s, cs):
    """'Test MSE, median change per block +18% [+5%, +30%] vs accurate (lower is better)': the
    Hodges-Lehmann median of the paired blocks' ratios (a change) or differences, with its 95% interval."""
    what = "median change per block" if cs and cs[0]["effect"] == "ratio" else "median difference per block"
    name = (lambda c: f"{c['subject']} ") if s.chain else (lambda c: "")
    return f"{s.label}, {what} " + "; ".join(f"{name(c)}{_effect_text(c)} vs {c['reference']}" for c in cs) + \
        f" ({s.direction})"


def _test_words(s, what, k, confidence=None):
    unit = "log-ratio" if s.effect == "ratio" else "difference"
    conf = f", {confidence:.4g}% intervals" if confidence else ""
    return s.test_line(f"{what}: Wilcoxon signed-rank (two-sided) on the {unit} per block{conf}", k)


# -- rules ------------------------------------------------------------------------------------
def _better(s):
    """``a`` is better than each rival ``b``.

    Per rival, the paired comparison (:func:`stats.compare_pair`: Wilcoxon signed-rank on the
    log-ratio per block, or on the difference for a metric that is not positive everywhere), Holm
    over the rivals.  A rival is *beaten* when its Holm p < 0.05 and the Hodges-Lehmann estimate
    points the claimed way by at least the minimum effect (``min_effect``; 10% for a time, else 0);
    it *beats a* when significant the other way by as much.  Reproduced: every rival beaten.  Not
    reproduced: some rival beats ``a``, or none is beaten.  Partly: some but not all beaten, none
    beating ``a``.

    ``every: coord`` -- the paper claims it at every value of a coord ("faster at every regularisation"):
    the pooled comparison above, and per value of the coord the Hodges-Lehmann estimate on that value's
    blocks alone (:meth:`_Setup.level_pairs`), against each rival.  ``a`` is *ahead* at a value when
    that estimate points the claimed way by at least the minimum effect and ``a`` is better in so many of
    the value's blocks that a one-sided sign test gives p < 0.05 (all 5 of 5, 7 of 8, ...); *behind* when
    the estimate points the other way by as much and ``a`` is behind by the minimum effect in so many blocks
    that a one-sided sign test, Holm-adjusted over every value and rival, gives p < 0.05; else *not shown* (a
    one-sided test, as the claim says which way: a two-sided Wilcoxon test on 5 seeds cannot reach p < 0.05,
    its smallest p being 0.0625).  Reproduced: every rival beaten and
    ``a`` ahead of every rival at every value.  Not reproduced: as above, or ``a`` behind some rival at
    some value.  Partly: otherwise (:func:`_every_level`).  A pooled test alone would hide a reversal: a method 3x
    faster at four values
    and 4x slower at the fifth passes it on some runs and fails it on others.

    ``chain: [v1, v2, ..., vk]`` instead of ``a`` and ``b`` -- the paper claims a trend at every step ("the more
    samples, the closer"): the steps ``v2`` against ``v1``, ..., ``vk`` against ``v(k-1)`` take the rivals' place,
    with the same test, Holm over the steps and the same verdict: better at every step, reproduced; worse at one
    step, not reproduced (the largest against each smaller alone would hide a step that goes the wrong way).  A
    chain takes no ``every:``, and its evidence names no subgroups (:func:`_subgroups` compares ``a`` with ``b``).
    """
    from . import stats  # here: the ledger job (gathering only) needs no scipy.stats

    if not s.b and not s.chain:
        raise ValueError(f"claim {s.claim['id']!r}: rule needs rivals 'b' (or a chain)")
    cs = [s.pairs(r, a=a) for a, r in s.steps()]
    _can_decide(cs, ALPHA / len(cs), "the signed-rank test cannot reach p < {level:.3g} (its smallest p on {n} pairs "
                "is {p:.3g})", lambda n: 2 * 0.5**n)
    adj = stats.holm([c["p"] for c in cs])
    min_eff = _min_effect(s)
    beaten = lost = 0
    for c, p in zip(cs, adj, strict=True):
        side = _side(c, s.lower, min_eff) if p < ALPHA else 0
        beaten += side > 0
        lost += side < 0
    k = len(cs)
    verdict = ("reproduced" if beaten == k else "not reproduced" if lost or not beaten else "partly reproduced")
    bits = [f"better at {beaten} of {k} steps" if s.chain else f"beats {beaten} of {k} rivals"]
    if lost:
        bits.append(f"worse at {lost}" if s.chain else f"{lost} significantly better than {s.a}")
    if min_eff:
        bits.append(f"an effect counts from {min_eff:.0%}")
    test = _test_words(s, "better at each step of the chain" if s.chain else "better", k)
    ours = _ours(s, cs)
    levels = ""

    def threshold(c):  # behind by the minimum effect: a / b beyond 1 / (1 - m) (1 - m where higher is better)
        if c["effect"] != "ratio":
            return 0.0
        return _ratio_threshold(c, 1 / (1 - min_eff) if s.lower else 1 - min_eff)

    coord = s.claim.get("every")
    if coord:
        def judge(c):  # ahead: the estimate the claimed way by the minimum effect, and a sign test agrees
            return _side(c, s.lower, min_eff) > 0 and _sign_p(c["better"], c["better"] + c["worse"]) < ALPHA

        behind, even, levels, short = _every_level(s, coord, judge, threshold,
                                                   lambda c: _side(c, s.lower, min_eff) < 0)
        ours += f"; at every {coord}: {short}"
        verdict = _every_verdict(verdict, behind, even)
        test += (f"; and at every {coord}: the Hodges-Lehmann estimate on each value's blocks alone"
                 + (f" (by at least {min_eff:.0%})" if min_eff else "") + " and a one-sided sign test on them")
    flag, where = ("", "") if s.chain else _subgroups(s, lambda c: _side(c, s.lower, min_eff) < 0, threshold, verdict)
    return {"ours": ours + flag, "effect": "; ".join(_effect_text(c) for c in cs), "p_value": float(max(adj)),
            "verdict": verdict, "test": test,
            "evidence": f"{_first_upper(', '.join(bits))}. " + levels + "; ".join(
                _pair_words(s, c, p) for c, p in zip(cs, adj, strict=True)) + "." + where}


def _can_decide(cs, level, why, smallest, **words):
    """Not testable where no comparison of ``cs`` has the blocks to decide: ``smallest(n)``, the most extreme
    probability the test can give on ``n`` paired blocks (``better``: the two-sided signed-rank test's smallest p,
    ``2 / 2^n``; ``no_worse``: the tail an interval needs, ``1 / 2^n``), is above ``level`` (the Holm-adjusted level
    of the first step, or the interval's tail) even for the comparison with the most blocks.  "Not reproduced" would
    then report a test that could not have come out otherwise: four data sets cannot show a paired effect at 5%."""
    n = max(c["n_pairs"] for c in cs)
    if smallest(n) > level:
        raise _NotTestable("too few paired blocks to decide: " + why.format(level=level, n=n, p=smallest(n), **words))


def _first_upper(text):
    """``text`` with its first character upper-case and the rest as it is (``str.capitalize`` lower-cases method
    names: "1 significantly better than us" for US)."""
    return text[:1].upper() + text[1:]


def _sign_p(k, n):
    """One-sided sign test: p of ``k`` or more of ``n`` untied blocks going one way, each way having
    probability 1/2 (the exact binomial test :func:`_share_verdict` runs)."""
    from scipy import stats as sps

    return float(sps.binomtest(k, n, 0.5, alternative="greater").pvalue) if n else 1.0


def _every_level(s, coord, judge, threshold, worse, good="ahead", bad="behind", confidence=0.95):
    """``(bad, not_shown, words, short)`` of a rule's ``every: coord`` (:func:`_better`, :func:`_no_worse`).

    Per value of the coord and rival, on that value's blocks alone (:meth:`_Setup.level_pairs` at ``confidence``):

    - *bad* (``_better``: *behind*; ``_no_worse``: *worse*) where the estimate lies beyond the rule's threshold on
      the wrong side (``worse(comparison)``: behind by the minimum effect; beyond the margin) and ``a`` is beyond
      that threshold (``threshold(comparison)``, in the units of the per-block log-ratio or difference) in so many of
      the value's blocks that a one-sided sign test, **Holm-adjusted over every value and rival**, gives p < 0.05:
      a reversal found by looking at 20 values needs more than one of them at 5%, and a value just inside the
      margin is not called worse because its estimate happens to lie beyond it;
    - else *good* where ``judge(comparison)`` says so (``_better``: *ahead*, the estimate the claimed way by the
      minimum effect and a one-sided sign test at 5% on the value's blocks; ``_no_worse``: *within the margin*,
      its interval inside it -- each value at the pooled level, an intersection-union test needs no correction);
    - else *not shown* (too few blocks, a tie, noise, or no block the two share there).

    A value counts once: bad if bad against some rival, good if good against every rival.  Returns the numbers of
    values bad and not shown, the evidence sentence (per rival, every value by side, the bad ones with their
    estimate) and the short form the ledger's ``ours`` ends with ("ahead at 4 of 5 values; behind at m = 150
    (x3.6)")."""

    levels = [(rival, value, c) for rival in s.b for value, c in s.level_pairs(rival, coord, confidence)]
    tested = [(r, v, c) for r, v, c in levels if c is not None]
    ps = dict(zip([(r, v) for r, v, _ in tested], _holm_beyond(s, [c for *_, c in tested], threshold), strict=True))
    rank = {good: 0, "not shown": 1, bad: 2}
    status, per_rival, bad_words = {}, [], {}
    for rival in s.b:
        sides = {good: [], "not shown": [], bad: []}
        for r, value, c in levels:
            if r != rival:
                continue
            if c is None:
                side, shown = "not shown", f"{value} (no paired block)"
            elif worse(c) and ps[(r, value)] < ALPHA:
                side = bad
                unit = "median ratio" if c["effect"] == "ratio" else "median difference"
                k = _beyond_count(c, threshold(c), s.lower)
                shown = (f"{value} ({unit} {_change(c, c['estimate'])}, worse in {k} of {c['n_pairs']} blocks, "
                         f"p = {_fmt_p(ps[(r, value)])})")
                bad_words.setdefault(value, []).append(
                    _change(c, c["estimate"]) + ("" if len(s.b) == 1 else f" vs {rival}"))
            else:
                side, shown = (good if judge(c) else "not shown"), value
            sides[side].append(shown)
            status[value] = max(status.get(value, good), side, key=rank.get)
        words = [f"{what} at {_values(coord, v, len(v))}" for what, v in sides.items() if v]
        per_rival.append((f"vs {rival} " if len(s.b) > 1 else "") + "; ".join(words))
    by = {what: [v for v, st in status.items() if st == what] for what in rank}
    short = f"{good}{' of every rival' if len(s.b) > 1 else ''} at {len(by[good])} of {len(status)} values"
    if by[bad]:
        short += f"; {bad} at " + _values(coord, [f"{v} ({'; '.join(bad_words[v])})" for v in by[bad]], 3)
    if by["not shown"]:
        short += "; not shown at " + _values(coord, by["not shown"], 3)
    holm = f" ({bad}: one-sided sign tests beyond {_threshold_words(s)}, Holm over {len(tested)} values x rivals)"
    return (len(by[bad]), len(by["not shown"]), f"At every {coord}{holm}: {s.a} " + "; ".join(per_rival) + ". ",
            short)


def _beyond(c, t, lower):
    """Blocks of the comparison ``c`` beyond the threshold ``t`` on the wrong side, and on the other side
    (``c["d"]``: the per-block log-ratio or difference; ties at ``t`` dropped)."""
    d = c["d"]
    return (d > t, d < t) if lower else (d < t, d > t)


def _beyond_count(c, t, lower):
    return int(_beyond(c, t, lower)[0].sum())


def _beyond_p(c, t, lower):
    """One-sided sign test: ``a`` beyond ``t`` on the wrong side in more blocks than chance."""
    bad, other = _beyond(c, t, lower)
    return _sign_p(int(bad.sum()), int(bad.sum() + other.sum()))


def _holm_beyond(s, comparisons, threshold):
    """Holm-adjusted :func:`_beyond_p` of each comparison: ``a`` beyond the rule's threshold on the wrong side in
    more blocks than chance (shared by :func:`_every_level` and :func:`_subgroups`)."""
    from . import stats

    return stats.holm([_beyond_p(c, threshold(c), s.lower) for c in comparisons]) if comparisons else []


def _threshold_words(s):
    """What a rule's bad side lies beyond, in words: ``better``'s minimum effect, ``no_worse``'s margin."""
    return "the minimum effect" if s.claim.get("rule") == "better" else "the margin"


def _ratio_threshold(c, bound):
    """``bound`` (a ratio a / b, or a difference) in the units of ``c["d"]``."""
    return float(np.log(bound)) if c["effect"] == "ratio" else float(bound)


def _subgroups(s, worse, threshold, verdict):
    """Where a pooled verdict does not hold: ``(ours suffix, evidence sentence)``, both empty where it holds.

    The pooled test answers the claim as the paper words it; a reader still wants to know where ``a`` loses.  Per
    block column and coord the claim pairs over (the data set, kernel, m ...: not the seed, not the coord of its
    ``every:``) with two values or more, per value and rival: the comparison on that value's blocks alone, a
    *subgroup*.  ``a`` is worse in a subgroup where ``worse(comparison)`` holds (the rule's own reading: behind by
    the minimum effect for ``better``, beyond the margin for ``no_worse``) and ``a`` is beyond that threshold
    (``threshold(comparison)``, as in :func:`_every_level`) in so many of its blocks that a one-sided sign test,
    Holm-adjusted over every subgroup checked, gives p < 0.05 -- so that searching 60 subgroups does not find a
    loss by chance, and a subgroup just inside the margin is not named because its estimate drifts past it.  The
    verdict is unchanged; the evidence names each such subgroup, and ``ours`` the first three
    after a positive verdict ("; but worse at dataset = diabetes (+86%)")."""

    tests = []
    for coord in [b for b in s.blocks if b not in ("seed", s.claim.get("every"))]:
        for rival in s.b:
            levels = [(v, c) for v, c in s.level_pairs(rival, coord) if c is not None]
            tests += [(coord, v, rival, c) for v, c in levels if len(levels) >= 2]
    if not tests:
        return "", ""
    ps = _holm_beyond(s, [c for *_, c in tests], threshold)
    hits = [(t, p) for t, p in zip(tests, ps, strict=True) if p < ALPHA and worse(t[3])]
    if not hits:
        return "", ""
    vs = (lambda r: "") if len(s.b) == 1 else (lambda r: f" vs {r}")
    words = [f"{coord} = {v} ({_change(c, c['estimate'])}{vs(r)}, worse in {_beyond_count(c, threshold(c), s.lower)} "
             f"of {c['n_pairs']} blocks, p = {_fmt_p(p)})" for (coord, v, r, c), p in hits]
    where = (f" Subgroups where {s.a} is worse (one-sided sign tests beyond {_threshold_words(s)} on each "
             f"subgroup's blocks, Holm over the {len(tests)} subgroups checked; the verdict is the pooled test's): "
             + "; ".join(words) + ".")
    if verdict not in ("reproduced", "partly reproduced", "better than the paper"):
        return "", where
    short = [f"{coord} = {v} ({_change(c, c['estimate'])}{vs(r)})" for (coord, v, r, c), _ in hits[:3]]
    more = f" (+{len(hits) - 3} more)" if len(hits) > 3 else ""
    return "; but worse at " + ", ".join(short) + more, where


def _values(coord, values, most):
    """``coord = v1, v2`` naming at most ``most`` values (then ``(+k more)``)."""
    more = f" (+{len(values) - most} more)" if len(values) > most else ""
    return f"{coord} = {', '.join(values[:most])}{more}"


def _every_verdict(verdict, bad, not_shown):
    """The verdict of a rule with ``every: coord``: not reproduced where some value is bad; partly where the pooled
    verdict is reproduced but some value is not shown; else the pooled verdict."""
    if bad:
        return "not reproduced"
    return "partly reproduced" if not_shown and verdict == "reproduced" else verdict


def _no_worse(s):
    """``a`` is no worse than each rival ``b``, within the equivalence margin ``tolerance``.

    ``tolerance`` (relative; default 2%, 10% for a time) is written in the claim: for a ratio
    effect, ``a`` is *within* the margin of a rival when the worse-side bound of the Hodges-Lehmann
    interval of ``a / b`` is inside it (at most ``1 + tolerance`` where lower is better, at least
    ``1 - tolerance`` where higher is better); for a difference effect (a metric that is zero or
    negative somewhere) the margin is ``tolerance`` times the rival's median absolute value over the
    blocks, in the metric's units.  The interval's level is ``1 - 0.05 / k`` for ``k`` rivals (Bonferroni): a
    one-sided non-inferiority test at 2.5% / k per rival, 2.5% over all of them.  ``a`` is *worse* than a rival when
    the Wilcoxon test
    is significant (Holm) and the estimate lies beyond the margin.  Reproduced: within the margin
    of every rival.  Not reproduced: worse than some rival, or within the margin of none.  Partly:
    within the margin of some, not shown for the rest.  A non-significant test alone never counts:
    absence of evidence is not evidence of no difference.

    ``every: coord`` -- the paper claims it at every value of a coord or block column ("comparable on every
    data set of the table"): the pooled test above, and per value and rival the same interval on that value's
    blocks alone.  ``a`` is *within the margin* at a value where that interval's worse-side bound is inside it
    (the margin of a difference: ``tolerance`` times the rival's median there); *worse* where the estimate lies
    beyond the margin and ``a`` is beyond the margin in so many of the value's blocks that a one-sided sign
    test, Holm-adjusted over every value and rival, gives p < 0.05 (a value just inside the margin whose
    estimate drifts past it is not worse); else *not shown* (too few blocks for the interval, or noise).
    Reproduced: within the margin of
    every rival pooled and at every value.  Not reproduced: as above, or worse than some rival at some value.
    Partly: otherwise (:func:`_every_level`).  No multiplicity correction is needed for "within at every value"
    (an intersection-union test: each value at the pooled level).
    """
    from . import stats  # here: the ledger job (gathering only) needs no scipy.stats

    if not s.b:
        raise ValueError(f"claim {s.claim['id']!r}: rule needs rivals 'b'")
    k = len(s.b)
    tol = float(s.claim.get("tolerance", TIME_MIN_EFFECT if is_time(s.claim.get("metric", "")) else NO_WORSE_MARGIN))
    conf = 1 - ALPHA / k
    cs = [s.pairs(r, conf) for r in s.b]
    _can_decide(cs, (1 - conf) / 2, "no {conf:.4g}% interval can be formed on {n} pairs (it needs the chance of all "
                "of them one way, {p:.3g}, at most {level:.3g})", lambda n: 0.5**n, conf=100 * conf)
    adj = stats.holm([c["p"] for c in cs])
    within = worse = 0
    for c, p in zip(cs, adj, strict=True):
        ok, beyond = _margin(c, s.lower, tol)
        c["within"] = ok
        within += ok
        worse += bool(p < ALPHA and beyond and _side(c, s.lower) < 0)
    verdict = ("reproduced" if within == k else "not reproduced" if worse or not within else "partly reproduced")
    margin = f"{tol:.0%}" if s.effect == "ratio" else (
        f"{tol:.0%} of the rival's median, {_fmt(tol * max(c['reference_median'] for c in cs))}")
    bits = f"within the margin ({margin}) of {within} of {k} rival(s)" + (
        f"; worse beyond it than {worse}" if worse else "")
    test = _test_words(s, f"no worse than, margin {margin}", k, 100 * conf)
    ours, levels = _ours(s, cs), ""

    def threshold(c):  # the margin, on the wrong side
        if c["effect"] == "ratio":
            return _ratio_threshold(c, 1 + tol if s.lower else 1 - tol)
        return tol * c["reference_median"] * (1 if s.lower else -1)

    coord = s.claim.get("every")
    if coord:
        bad, unshown, levels, short = _every_level(
            s, coord, lambda c: _margin(c, s.lower, tol)[0], threshold,
            lambda c: _margin(c, s.lower, tol)[1] and _side(c, s.lower) < 0, "within the margin", "worse", conf)
        ours += f"; at every {coord}: {short}"
        verdict = _every_verdict(verdict, bad, unshown)
        test += (f"; and at every {coord}: the same interval on each value's blocks alone, worse there where the "
                 "estimate lies beyond the margin and a one-sided sign test on them agrees")
    flag, where = _subgroups(s, lambda c: _margin(c, s.lower, tol)[1] and _side(c, s.lower) < 0, threshold, verdict)
    return {"ours": ours + flag, "effect": "; ".join(_effect_text(c) for c in cs), "p_value": float(min(adj)),
            "verdict": verdict, "test": test,
            "evidence": f"{s.a} is {bits}. " + levels
                        + "; ".join(_pair_words(s, c, p) for c, p in zip(cs, adj, strict=True)) + "." + where}


def _margin(c, lower, tol):
    """``(within, beyond)`` of :func:`_no_worse` for one comparison: the worse-side bound of its interval inside
    the margin, and its estimate beyond it.  A ratio's margin is ``1 + tol`` (``1 - tol`` where higher is better);
    a difference's is ``tol`` times the rival's median absolute value, in the metric's units."""
    bound = c["ci_high"] if lower else c["ci_low"]
    if c["effect"] == "ratio":
        ok = np.isfinite(bound) and (bound <= 1 + tol if lower else bound >= 1 - tol)
        beyond = (c["estimate"] > 1 + tol) if lower else (c["estimate"] < 1 - tol)
    else:  # the margin in the metric's units: tolerance times the rival's median size
        m = tol * c["reference_median"]
        ok = np.isfinite(bound) and (bound <= m if lower else bound >= -m)
        beyond = (c["estimate"] > m) if lower else (c["estimate"] < -m)
    return bool(ok), bool(beyond)


#: the paper's words for a share of data sets (or curves) and the fraction each means
SHARES = {"all": 1.0, "every": 1.0, "most": 0.5}


def parse_share(value, claim_id="?"):
    """``(fraction, strict, words)`` of a claim's ``share:`` -- ``all``, ``most`` (more than half) or
    ``"k/n"`` (the paper's own count, e.g. ``15/16``): ours meets it when ``k_ours / n_ours >= fraction``
    (``> fraction`` where ``strict``)."""
    if value is None:
        raise ValueError(f"claim {claim_id!r}: the rule needs 'share:' -- the paper's words: all, most or k/n "
                         "(e.g. 15/16)")
    text = str(value).strip().lower()
    if text in SHARES:
        return SHARES[text], text == "most", text
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"claim {claim_id!r}: share {value!r} is not all, most or k/n") from None
    if not 0 <= k <= n or n == 0:
        raise ValueError(f"claim {claim_id!r}: share {value!r} needs 0 <= k <= n, n > 0")
    return k / n, False, f"{k} of {n}"


def _share_verdict(k, n, share, chance):
    """Reproduced when ``k`` of ``n`` meets the paper's share; partly when short of it but a
    significant majority holds (``k > n / 2`` and the one-sided binomial test of ``k`` against
    ``chance`` has p < 0.05); else not reproduced.  Returns ``(verdict, binomial p)``.  ``chance`` is one
    probability, or one per unit (a data set where fewer methods ran: the Poisson-binomial tail)."""
    from scipy import stats as sps

    frac, strict, _ = share
    if np.ndim(chance):
        p = _poisson_binomial_sf(k, chance) if n else float("nan")
    else:
        p = float(sps.binomtest(k, n, chance, alternative="greater").pvalue) if n else float("nan")
    meets = (k / n > frac) if strict else (k / n >= frac)
    if n and meets and k > 0:
        return "reproduced", p
    if n and k > n / 2 and p < ALPHA:
        return "partly reproduced", p
    return "not reproduced", p


def _best_on_most(s):
    """Per data set where ``a`` and at least one rival ran, ``a`` has the best mean of the contenders ``{a} + b``
    that ran there (over seeds and coords; means equal to 9 significant digits tie, and a tie for the best counts
    for ``a``): ``k of N`` data sets, judged against the paper's ``share`` (``all``, ``most`` or its own ``k/n``)
    by :func:`_share_verdict`, chance being one over the number of contenders that ran on each data set.  A rival
    that could not run on a data set (a cell the paper leaves empty, '-'; a method a block skips) is left out
    there, as the papers count: a method is best among those with a result."""
    from . import stats  # here: the ledger job (gathering only) needs no scipy.stats

    share = parse_share(s.claim.get("share"), s.claim["id"])
    contenders = [s.a, *s.b]
    sub = s.df[s.df[s.column].isin(contenders)]
    means = sub.groupby(["dataset", s.column])[s.metric].mean().unstack(s.column).reindex(columns=contenders)
    ran = means[means[s.a].notna()]
    # a contender without a result on any data set where a ran is no '-' cell but a label the run lacks
    absent = [c for c in contenders if not ran[c].notna().any()]
    if absent:
        raise _NotTestable(f"{s.column} = {', '.join(map(repr, absent))} has no result on a data set where {s.a!r} "
                           f"has one (values: {', '.join(sorted(map(str, s.df[s.column].unique())))})")
    means = ran[ran[list(s.b)].notna().any(axis=1)]
    if not len(means):
        raise _NotTestable(f"no data set has results for {s.a} and one of {', '.join(s.b)}")
    # means equal to 9 significant digits tie; a tie for the best counts as best for a
    means = pd.DataFrame(stats.round_significant(means.to_numpy(float)), index=means.index, columns=means.columns)
    top = means.min(axis=1) if s.lower else means.max(axis=1)
    a_best = means[s.a] == top
    best = (means.idxmin(axis=1) if s.lower else means.idxmax(axis=1)).where(~a_best, s.a)
    wins = sorted(best.index[a_best])
    k, n = len(wins), len(means)
    present = means.notna().sum(axis=1)  # contenders with a result, per data set: its chance is one over them
    verdict, p = _share_verdict(k, n, share, (1 / present).to_numpy())
    others = ", ".join(f"{ds}: {best[ds]}" for ds in means.index if best[ds] != s.a)
    missing = "; ".join(f"{ds}: {', '.join(c for c in contenders if pd.isna(means.at[ds, c]))}"
                        for ds in means.index[present < len(contenders)])
    return {"ours": f"best {s.label} on {k} of {n} data sets (mean per data set; {s.direction}); the paper: "
                    f"{share[2]}",
            "effect": f"{k}/{n}", "p_value": p, "verdict": verdict,
            "test": f"best mean among the contenders that ran on each data set (up to {len(contenders)}) against the "
                    f"paper's share ({share[2]}); for a majority short of it, a one-sided test against chance (one "
                    "over the contenders that ran on each data set: a binomial, or Poisson-binomial where some did "
                    "not run)",
            "evidence": f"{s.a} best on {', '.join(wins) or 'none'}" + (f"; elsewhere best: {others}" if others else "")
                        + (f"; without a result, left out there: {missing}" if missing else "") + "."}


def _poisson_binomial_sf(k, chances):
    """P(K >= k) for K the number of successes of independent trials with these chances (exact, by convolution):
    the one-sided test of ``k`` wins where each unit has its own chance."""
    dist = np.array([1.0])
    for c in chances:
        dist = np.convolve(dist, [1.0 - c, c])
    return float(min(1.0, dist[k:].sum()))


def _matches_value(s):
    """The mean of the metric against the paper's ``paper_number``: reproduced within ``tolerance``
    (relative, default 0.2), partly within twice that; better than the paper beyond the tolerance
    (lower where lower is better) is its own outcome, ``better than the paper``; else not reproduced."""
    from scipy import stats as sps

    paper = s.claim.get("paper_number")
    if paper is None or not float(paper):
        raise ValueError(f"claim {s.claim['id']!r}: rule matches_value needs a non-zero 'paper_number'")
    vals = s.df[s.metric].to_numpy(float)
    ours = float(np.mean(vals))
    ratio = ours / float(paper)
    tol = float(s.claim.get("tolerance", 0.2))
    dev = abs(ratio - 1)
    better = (ratio < 1) if s.lower else (ratio > 1)
    verdict = ("reproduced" if dev <= tol else "better than the paper" if better else
               "partly reproduced" if dev <= 2 * tol else "not reproduced")
    p = float(sps.wilcoxon(vals - float(paper)).pvalue) if len(vals) >= 2 and np.any(vals != paper) else float("nan")
    side = "higher" if ratio > 1 else "lower"
    return {"ours": f"{s.label} {_fmt(ours)}, {ratio:.2f}x the paper's {_fmt(float(paper))} (mean of {len(vals)}; "
                    f"{s.direction})",
            "effect": f"ratio {ratio:.2f}", "p_value": p,
            "verdict": verdict, "test": f"mean over {len(vals)} results against the paper's number "
                                        f"(tolerance {tol:.0%}); Wilcoxon signed-rank of ours - paper",
            "evidence": f"ours {_fmt(ours)} vs the paper's {_fmt(float(paper))}: {side} by {abs(ratio - 1):.0%}; "
                        f"{len(vals)} results ({s.df['dataset'].nunique()} data set(s))."}


def pooled_slope(groups, confidence=0.95):
    """The common slope of log(y) on log(x) over several groups, each with its own intercept (a
    fixed-effects regression: x and y centred within each group, then one least-squares slope), with
    its ``confidence`` interval (t with n - groups - 1 degrees of freedom).  ``groups``: a list of
    ``(log x, log y)`` arrays.  Returns ``(slope, low, high)``."""
    from scipy import stats as sps

    xs = [np.asarray(x, float) - np.mean(x) for x, _ in groups]
    ys = [np.asarray(y, float) - np.mean(y) for _, y in groups]
    x, y = np.concatenate(xs), np.concatenate(ys)
    sxx = float(x @ x)
    if sxx == 0:
        return np.nan, np.nan, np.nan
    b = float(x @ y) / sxx
    dof = len(x) - len(groups) - 1
    if dof <= 0:
        return b, np.nan, np.nan
    resid = y - b * x
    se = np.sqrt(float(resid @ resid) / dof / sxx)
    half = float(sps.t.ppf(0.5 + confidence / 2, dof)) * se
    return b, b - half, b + half


def _slope_below(s):
    """The papers' p-order approximate consistency: a gap of order ``l^b`` with ``b < p``.

    Per group (data set, method and the other coords), the slope ``b`` of log(metric) on log(coord)
    over every seed's points (after averaging over ``mean_over``).  Reproduced when the share of
    groups whose slope lies below ``p`` meets the claim's ``share`` (default ``all``) and the pooled
    slope's 95% interval (:func:`pooled_slope`, one intercept per group) lies below ``p``.  Partly:
    the pooled interval lies below ``p`` and a significant majority of groups (``k > n / 2``, one-sided
    binomial test against 1/2) falls short of the share.  Else not reproduced.
    """
    from scipy import stats as sps

    spec = s.claim.get("transform") or {}
    if "slope" not in spec:
        raise ValueError(f"claim {s.claim['id']!r}: rule slope_below needs transform: {{slope: <coord>}}")
    p_order = float(s.claim.get("p", 0.5))
    share = parse_share(s.claim.get("share", "all"), s.claim["id"])
    x, mean_over = s.slope_of
    raw = s.raw
    keys = [c for c in ["dataset", *[c for c in s.blocks if c not in ("dataset", "seed")], s.column] if c in raw]
    keys = list(dict.fromkeys(keys))
    g = raw.groupby([*keys, "seed", x], as_index=False)[s.metric_raw].mean()
    groups, data, below = [], [], 0
    for key, sub in g.groupby(keys):
        sub = sub[sub[s.metric_raw] > 0]
        if sub[x].nunique() < 2 or len(sub) < 3:
            continue
        lx, ly = np.log(sub[x].astype(float).to_numpy()), np.log(sub[s.metric_raw].astype(float).to_numpy())
        fit = sps.linregress(lx, ly)
        data.append((lx, ly))
        below += fit.slope < p_order
        label = "/".join(map(str, key if isinstance(key, tuple) else (key,)))
        groups.append(f"{label}: b = {fit.slope:.2f}")
    if not groups:
        raise _NotTestable(f"too few points for a slope over {x!r}")
    n = len(groups)
    b, lo, hi = pooled_slope(data)
    pooled_ok = np.isfinite(hi) and hi < p_order
    verdict, p = _share_verdict(below, n, share, 0.5)
    if not pooled_ok:
        verdict = "not reproduced"
    return {"ours": f"slope {b:.2f} [{lo:.2f}, {hi:.2f}] (pooled, 95% CI); below {p_order:g} in {below} of {n} "
                    f"curves",
            "effect": f"pooled slope {b:.2f}",
            "p_value": p, "verdict": verdict,
            "test": f"log-log slope of {s.metric_raw} on {x}: per curve over every seed, and pooled with one "
                    f"intercept per curve (95% CI); holds iff b < {p_order:g} on the paper's share ({share[2]}) "
                    "of curves and for the pooled slope",
            "evidence": f"{below} of {n} curves have b < {p_order:g}; pooled b = {b:.3f} [{lo:.3f}, {hi:.3f}]. "
                        + "; ".join(groups) + "."}


def _equivalent(s):
    """``a`` and each of ``b`` agree within ``tolerance`` in every pair: an identity a paper proves.

    The relative difference ``|a - b| / |b|`` (against the rival ``b``) of values rounded to 9
    significant digits (:func:`stats.round_significant`; a tolerance below ~5e-9 is therefore not
    resolved): reproduced when the largest is within ``tolerance`` (default 1e-6), partly within
    100 times that, else not reproduced."""
    from . import stats  # here: the ledger job (gathering only) needs no scipy.stats

    tol = float(s.claim.get("tolerance", 1e-6))
    worst, parts = 0.0, []
    for rival in s.b:
        sub = s.df[s.df[s.column].isin([s.a, rival])]
        wide = stats.pivot_pairs(sub, s.metric, s.column, s.blocks)
        if s.a not in wide or rival not in wide or not len(wide):
            raise _NotTestable(f"{s.a!r} and {rival!r} share no paired block")
        rel = ((wide[s.a] - wide[rival]).abs() / wide[rival].abs().clip(lower=1e-300)).to_numpy()
        worst = max(worst, float(rel.max()))
        parts.append(f"{s.a} vs {rival}: largest relative difference {rel.max():.1e} over {len(rel)} pairs, "
                     f"median {np.median(rel):.1e}")
    verdict = "reproduced" if worst <= tol else "partly reproduced" if worst <= 100 * tol else "not reproduced"
    return {"ours": f"{s.label}: largest relative difference {worst:.1e} in any block", "effect": f"{worst:.1e}",
            "p_value": float("nan"),
            "verdict": verdict, "test": s.test_line(f"agreement within {tol:g} (relative) in every pair", 1),
            "evidence": "; ".join(parts) + "."}


RULES = {"better": _better, "equivalent": _equivalent, "no_worse": _no_worse, "best_on_most": _best_on_most,
         "matches_value": _matches_value, "slope_below": _slope_below}


# -- the ledger -------------------------------------------------------------------------------
def _base(claim):
    return {"paper": claim.get("paper", ""), "claim_id": claim["id"], "claim": claim["claim"],
            "where": claim["where"], "paper_value": str(claim.get("paper_value", "")), "study": claim["study"],
            "ours": "", "test": "", "p_value": float("nan"), "effect": "", "verdict": "", "evidence": "",
            "question": ",".join(_as_list(claim.get("answers", []))),
            "paper_own": ""}  # the rule's verdict on the paper's own table (paper_table), where it names one


def evaluate(claim, df, info=None):
    """One ledger row (a dict with :data:`COLUMNS`) for ``claim`` on its study's result table ``df``.

    ``df`` is None when the study did not run (verdict ``not run``); ``info`` gives the study's
    ``metrics`` (``{name: [label, lower_is_better]}``), ``coords`` and ``block_cols``.  A claim that names the
    paper's table it rests on (``paper_table``) also gets the same rule's verdict on that table's printed numbers
    (:mod:`nystrom_bench.paper_evidence`): in ``paper_value`` ("its own Table 1 under this rule: reproduced") and,
    with the effect, at the end of the evidence -- where ``info`` is at hand (not for a block that did not run).
    """
    row = _evaluate(claim, df, info)
    # the rule on the paper's own table needs the study's metrics and coords: not where the block did not run
    if claim.get("paper_table") and not claim.get("not_testable") and (info or {}).get("metrics"):
        try:
            own = paper_check(claim, info)
        except (ValueError, KeyError, TypeError) as exc:  # a side check: it never takes the verdict on our results
            log.warning("claim %s: its paper table could not be read under its rule: %s", claim["id"], exc)
            row["evidence"] = f"{row['evidence']} The paper's own table could not be read under this rule: {exc}."
            return row
        row["paper_value"] = f"{row['paper_value']} (its own {own['where']} under this rule: {own['verdict']})"
        row["paper_own"] = own["verdict"]
        what = own["ours"] or own["evidence"]
        row["evidence"] = (f"{row['evidence']} The paper's own {own['where']} under this rule (its printed means, one "
                           f"block per cell): {own['verdict']}; {what}.")
    return row


def paper_check(claim, info):
    """The claim's rule on its paper's own table(s) (``paper_table``, :mod:`nystrom_bench.paper_evidence`): a ledger
    row whose ``where`` names the tables ("Table I, Table II"), or None where the claim names no table.  ``info``:
    the claim's study's metrics (with their directions), coords and block columns
    (:func:`nystrom_bench.jobs.analysis_info`), whose kind must be the tables' kind."""
    from . import paper_evidence, papers

    got = paper_evidence.spec(claim)
    if got is None:
        return None
    tables, datasets = got
    key = claim["paper_key"]
    kind = paper_evidence.kind(key, tables)
    if (info or {}).get("kind") != kind:
        raise ValueError(f"claim {claim['id']!r}: paper_table {', '.join(tables)} read as results of kind {kind!r}, "
                         f"its study {claim.get('study')!r} is of kind {(info or {}).get('kind')!r}; name the tables "
                         "of its own kind")
    own = {k: v for k, v in claim.items() if k not in ("paper_table", "note", "stand_ins", "not_testable")}
    own["study"] = ", ".join(tables)
    if datasets is not None:
        own["datasets"] = list(datasets)
    row = _evaluate(own, pd.concat([paper_evidence.frame(key, t) for t in tables], ignore_index=True), info)
    return {**row, "where": ", ".join(papers.table(key, t)["where"].split(" (")[0] for t in tables)}


def _evaluate(claim, df, info):
    row = _base(claim)
    if claim.get("not_testable"):
        return {**row, "verdict": "not testable", "evidence": str(claim["not_testable"])}
    if df is None:
        return {**row, "verdict": "not run", "evidence": f"study block {claim['study']!r} is not in this configuration"}
    rule = claim.get("rule")
    if rule not in RULES:
        raise ValueError(f"claim {claim['id']!r}: unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    if claim.get("every") and rule not in ("better", "no_worse"):
        raise ValueError(f"claim {claim['id']!r}: every: applies to rules better and no_worse only, not {rule!r}; "
                         "remove it or use one of those rules")
    try:
        setup = _Setup(claim, df, info)
        if rule == "slope_below":
            setup.raw = setup._select(df)
            setup.metric_raw = claim["metric"]
        out = RULES[rule](setup)
    except _NotTestable as exc:
        return {**row, "verdict": "not testable", "evidence": str(exc)}
    if setup.stand_in:
        out["evidence"] = f"{setup.stand_in} {out['evidence']}"
    if setup.outside:
        out["evidence"] = f"{out['evidence']} {setup.outside}"
    if is_time(claim.get("metric", "")):
        from .provenance import hardware

        out["evidence"] = (f"{out['evidence']} Timed on {(info or {}).get('hardware') or hardware()} (a time "
                           "verdict holds for the machine it was measured on).")
    if claim.get("note"):
        out["evidence"] = f"{out['evidence']} Note: {claim['note']}"
    return {**row, **out}


def ledger(claims, tables, infos):
    """The claims ledger as a DataFrame (:data:`COLUMNS`).

    ``tables``: ``{study block: result DataFrame}`` for the blocks that ran; ``infos``:
    ``{study block: analysis info}``.  A claim's ``study`` may be a list of blocks (e.g. the default
    config's and paper.yaml's names for one experiment): the first that ran is used.  A claim whose
    blocks are all absent gets ``not run``.
    """
    rows = []
    for c in claims:
        # a claim may name several blocks (the default config's and paper.yaml's): the first that ran
        blocks = _as_list(c["study"])
        c = {**c, "study": next((b for b in blocks if b in tables), blocks[0])}
        try:
            rows.append(evaluate(c, tables.get(c["study"]), infos.get(c["study"])))
        except (ValueError, KeyError) as exc:  # a malformed claim must not take the ledger down
            log.warning("claim %s could not be evaluated: %s", c.get("id"), exc)
            rows.append({**_base(c), "verdict": "not testable",
                         "evidence": f"the claim could not be evaluated: {exc} (fix its entry in the paper file)"})
    return pd.DataFrame(rows, columns=COLUMNS)


def write_ledger(result_csvs, infos, out_csv, per_study=None, claims=None):
    """The ledger over every paper's claims into ``out_csv`` (atomically), from every block's results at once.

    The workflow gets the same rows per block (:func:`nystrom_bench.jobs.analyze_study`, then
    :func:`nystrom_bench.jobs.gather_claims`); this is the one-call form, for a notebook or a test.

    ``result_csvs``: ``{study block: results.csv path}``; ``per_study``: optional
    ``{study block: path}`` to write each block's own claims too (its report's page one).
    """
    from . import papers
    from .atomic import write_csv
    from .results import read_results

    claims = papers.all_claims() if claims is None else claims
    tables = {s: read_results(p) for s, p in result_csvs.items()}
    out = ledger(claims, tables, infos)
    write_csv(out, out_csv)
    for study, path in (per_study or {}).items():
        write_csv(out[out["study"] == study].reset_index(drop=True), path)
    return out


def verdict_counts(df):
    """``{verdict: count}`` in the order of :data:`nystrom_bench.papers.VERDICTS`."""
    from .papers import VERDICTS

    counts = df["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS if counts.get(v, 0)}
