"""The claims ledger: every testable claim of the papers, with a verdict computed from the results.

Claims are data (:mod:`nystrom_bench.papers`, one YAML file per paper): the claim in a
sentence, where the paper makes it, the paper's value, the study block that tests it and a
*rule*.  This module turns a claim and its study's result table into one ledger row
(``paper, claim_id, claim, where, paper_value, ours, test, p_value, effect, verdict,
evidence, study``); :func:`ledger` does it for every claim and :func:`write_ledger` is the
workflow stage that writes ``results/claims.csv``.  Verdicts are computed, never typed:

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
      transform: {slope: l, mean_over: [log2_gamma]}   # optional (below)
      paper_number: 0.029                  # matches_value
      tolerance: 0.2                       # matches_value / no_worse / equivalent
      p: 0.5                               # slope_below: the threshold on the slope
      answers: [sampler]                   # optional: the findings question(s) it bears on
      not_testable: "reason"               # instead of a rule, where the evidence cannot be had
      note: "the paper's definition, how its number was read, caveats"

Rules (``rule:``), each on the rows left after ``filter``/``datasets`` and an optional
``transform``; ``column`` (default ``method``) names the column whose values ``a`` and ``b``
are -- a method, a coord such as ``integration`` or ``m``, the ``kernel`` -- and a result
pairs with its rival on the study's blocks (``dataset, kernel, seed``) plus every coord
other than ``column``.  ``metric_b`` compares two metrics of the same rows instead (``a``
and ``b`` then default to the metrics' names).

``better``
    ``a`` beats each of ``b`` in Wilcoxon signed-rank tests (two-sided, Holm over the
    rivals): reproduced when every rival is beaten at 5%, partly when some are or when
    every median difference points the claimed way, else not reproduced.
``no_worse``
    ``a`` is not significantly worse than any of ``b``: reproduced; significantly worse
    but by at most ``tolerance`` (relative median, default 1%): partly; else not.
``best_on_most``
    per data set, ``a`` has the best mean of ``{a} + b``: ``k of N`` data sets;
    reproduced when k > N/2, partly when 0 < k <= N/2, else not; p: a one-sided binomial
    test of k against chance (1 / the number of contenders).
``matches_value``
    the mean of the metric against the paper's ``paper_number``: reproduced within
    ``tolerance`` (relative, default 0.2), partly within twice that, else not.
``equivalent``
    ``a`` and each of ``b`` agree within ``tolerance`` (relative, default 1e-6) in every
    pair -- for identities a paper proves (e.g. two predictors that are the same solution);
    partly within 100 times that.
``slope_below``
    ``transform: {slope: coord}`` fits log(metric) = a + b log(coord) per data set (and
    method and other coords) over every seed's points; reproduced when the 95% CI of b
    lies below ``p`` in every group, partly when every estimate does, else not.  This is
    the papers' p-order approximate consistency: eps(l) / l^p -> 0 holds for a gap of
    order l^b exactly when b < p.

Transforms: ``{slope: coord, mean_over: [coords]}`` (the metric becomes the per-seed
log-log slope over ``coord``, after averaging over ``mean_over``; lower is better) and
``{argmin_distance: {over: coord, exact: method}}`` (the distance between the arg-min over
``coord`` of each method's curve and the ``exact`` method's; lower is better).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from . import stats
from .report import fmt_num as _fmt
from .report import fmt_p as _fmt_p
from .results import format_coord

__all__ = ["COLUMNS", "RULES", "evaluate", "ledger", "write_ledger", "verdict_counts"]

#: the ledger's columns, in order
COLUMNS = ["paper", "claim_id", "claim", "where", "paper_value", "ours", "test", "p_value", "effect", "verdict",
           "evidence", "study", "question"]
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


def _pct(x):
    """A relative change for people: -12%, +0.4%, or 'x23' where the change exceeds +100%."""
    if x > 1:
        return f"x{1 + x:.2g}" if 1 + x < 100 else f"x{1 + x:.0f}"
    return f"{x * 100:+.0f}%" if abs(x) >= 0.01 else f"{x * 100:+.1f}%"


class _Setup:
    """A claim's rows, compared column, blocks and direction, after filter and transform."""

    def __init__(self, claim, df, info):
        self.claim = claim
        self.metric = claim.get("metric")
        self.column = claim.get("column", "method")
        self.a = claim.get("a")
        self.b = [x for x in _as_list(claim.get("b", []))]
        metrics = (info or {}).get("metrics", {})
        if self.metric not in metrics and self.metric not in df:
            raise ValueError(f"claim {claim['id']!r}: metric {self.metric!r} is not a metric of study "
                             f"{claim['study']!r} (it has {', '.join(metrics) or 'none'})")
        self.lower = bool(metrics.get(self.metric, ("", True))[1])
        self.df = self._select(df)
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
        self._transform(claim.get("transform"))

    def _select(self, df):
        claim = self.claim
        wanted = claim.get("datasets")
        if wanted:
            present = sorted(set(wanted) & set(df["dataset"]))
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
            self.df, self.metric, self.lower = merged.drop(columns=[over, "__ref"]), "argmin_distance", True
            self.blocks = keys
        else:
            raise ValueError(f"claim {self.claim['id']!r}: unknown transform {sorted(spec)}; "
                             "use slope or argmin_distance")

    def test_line(self, what, n_rivals):
        blocks = ", ".join(self.blocks)
        holm = f", Holm over {n_rivals} rivals" if n_rivals > 1 else ""
        return f"{what}, paired over ({blocks}){holm}"

    def pairs(self, rival):
        """Paired test of ``a`` against ``rival`` (one row of :func:`stats.paired_tests`) and the
        relative (or, where the rival's values are not all positive, absolute) median difference."""
        sub = self.df[self.df[self.column].isin([self.a, rival])]
        if not (sub[self.column] == self.a).any():
            raise _NotTestable(f"{self.column} = {self.a!r} has no rows (values: "
                               f"{', '.join(sorted(self.df[self.column].unique()))})")
        try:
            t = stats.paired_tests(sub, self.metric, rival, self.column, self.blocks, self.lower)
        except stats.NoPairsError as exc:
            raise _NotTestable(str(exc)) from None
        row = t[t["method"] == self.a].iloc[0].to_dict()
        wide = stats.pivot_pairs(sub, self.metric, self.column, self.blocks)
        base = wide[rival].to_numpy(float)
        diff = wide[self.a].to_numpy(float) - base
        relative = bool(len(base) and np.all(base > 0))
        row["effect"] = float(np.median(diff / base)) if relative else float(np.median(diff))
        row["relative"] = relative
        return row

    def right_way(self, diff):
        return diff < 0 if self.lower else diff > 0


# -- rules ------------------------------------------------------------------------------------
def _paired_rule(s, no_worse):
    if not s.b:
        raise ValueError(f"claim {s.claim['id']!r}: rule needs rivals 'b'")
    rows = [s.pairs(r) for r in s.b]
    adj = stats.holm([r["wilcoxon_p"] for r in rows])
    parts, effects = [], []
    n_sig_right = n_sig_wrong = n_dir_right = 0
    small_loss = True
    tol = float(s.claim.get("tolerance", 0.01))
    for r, p in zip(rows, adj, strict=True):
        right = s.right_way(r["median_diff"]) or (r["wins"] > r["losses"] and r["median_diff"] == 0)
        sig = p < ALPHA and r["median_diff"] != 0
        n_sig_right += sig and right
        n_sig_wrong += sig and not right
        n_dir_right += right
        if sig and not right and not (r["relative"] and abs(r["effect"]) <= tol):
            small_loss = False
        eff = _pct(r["effect"]) if r["relative"] else _fmt(r["effect"])
        effects.append(f"{eff} vs {r['reference']}")
        parts.append(f"{s.a} vs {r['reference']}: median {'change' if r['relative'] else 'difference'} {eff}, "
                     f"better in {int(r['wins'])} and worse in {int(r['losses'])} of {int(r['n_pairs'])} pairs, "
                     f"Holm p = {_fmt_p(p)}")
    k = len(rows)
    if no_worse:
        verdict = ("reproduced" if n_sig_wrong == 0 else "partly reproduced" if small_loss else "not reproduced")
        p_value = float(min(adj))
    else:
        verdict = ("reproduced" if n_sig_right == k else
                   "partly reproduced" if n_sig_right > 0 or (n_dir_right == k and n_sig_wrong == 0)
                   else "not reproduced")
        p_value = float(max(adj))
    what = "Wilcoxon signed-rank (two-sided)" + (", not worse" if no_worse else "")
    ours = "; ".join(effects)
    return {"ours": ours, "effect": ours, "p_value": p_value, "verdict": verdict,
            "test": s.test_line(what, k), "evidence": "; ".join(parts) + "."}


def _better(s):
    return _paired_rule(s, no_worse=False)


def _no_worse(s):
    return _paired_rule(s, no_worse=True)


def _best_on_most(s):
    from scipy import stats as sps

    contenders = [s.a, *s.b]
    sub = s.df[s.df[s.column].isin(contenders)]
    means = sub.groupby(["dataset", s.column])[s.metric].mean().unstack(s.column)
    means = means.dropna(axis=0, how="any") if set(contenders) <= set(means.columns) else means.iloc[:0]
    if not len(means):
        raise _NotTestable(f"no data set has results for all of {', '.join(contenders)}")
    best = means.idxmin(axis=1) if s.lower else means.idxmax(axis=1)
    wins = sorted(best.index[best == s.a])
    k, n = len(wins), len(means)
    p = float(sps.binomtest(k, n, 1 / len(contenders), alternative="greater").pvalue)
    verdict = "reproduced" if k > n / 2 else "partly reproduced" if k > 0 else "not reproduced"
    others = ", ".join(f"{ds}: {best[ds]}" for ds in means.index if best[ds] != s.a)
    return {"ours": f"{k} of {n} data sets", "effect": f"{k}/{n}", "p_value": p, "verdict": verdict,
            "test": f"best mean of {len(contenders)} per data set; one-sided binomial test against chance",
            "evidence": f"{s.a} best on {', '.join(wins) or 'none'}" + (f"; elsewhere best: {others}" if others else "")
                        + "."}


def _matches_value(s):
    from scipy import stats as sps

    paper = s.claim.get("paper_number")
    if paper is None:
        raise ValueError(f"claim {s.claim['id']!r}: rule matches_value needs 'paper_number'")
    vals = s.df[s.metric].to_numpy(float)
    ours = float(np.mean(vals))
    ratio = ours / float(paper)
    tol = float(s.claim.get("tolerance", 0.2))
    dev = abs(ratio - 1)
    verdict = "reproduced" if dev <= tol else "partly reproduced" if dev <= 2 * tol else "not reproduced"
    p = float(sps.wilcoxon(vals - float(paper)).pvalue) if len(vals) >= 2 and np.any(vals != paper) else float("nan")
    side = "higher" if ratio > 1 else "lower"
    return {"ours": f"{_fmt(ours)} ({ratio:.2f}x the paper)", "effect": f"ratio {ratio:.2f}", "p_value": p,
            "verdict": verdict, "test": f"mean over {len(vals)} results against the paper's number "
                                        f"(tolerance {tol:.0%}); Wilcoxon signed-rank of ours - paper",
            "evidence": f"ours {_fmt(ours)} vs the paper's {_fmt(float(paper))}: {side} by {abs(ratio - 1):.0%}; "
                        f"{len(vals)} results ({s.df['dataset'].nunique()} data set(s))."}


def _slope_below(s):
    from scipy import stats as sps

    spec = s.claim.get("transform") or {}
    if "slope" not in spec:
        raise ValueError(f"claim {s.claim['id']!r}: rule slope_below needs transform: {{slope: <coord>}}")
    p_order = float(s.claim.get("p", 0.5))
    # per-seed slopes are in s.df; the CI comes from the pooled regression over every seed's points
    x, mean_over = s.slope_of
    raw = s.raw
    keys = [c for c in ["dataset", *[c for c in s.blocks if c not in ("dataset", "seed")], s.column] if c in raw]
    keys = list(dict.fromkeys(keys))
    g = raw.groupby([*keys, "seed", x], as_index=False)[s.metric_raw].mean()
    groups, all_ci, all_est = [], True, True
    worst = -np.inf
    for key, sub in g.groupby(keys):
        sub = sub[sub[s.metric_raw] > 0]
        if sub[x].nunique() < 2 or len(sub) < 3:
            continue
        fit = sps.linregress(np.log(sub[x].astype(float)), np.log(sub[s.metric_raw].astype(float)))
        half = sps.t.ppf(0.975, len(sub) - 2) * fit.stderr
        hi = fit.slope + half
        all_ci &= hi < p_order
        all_est &= fit.slope < p_order
        worst = max(worst, hi)
        label = "/".join(map(str, key if isinstance(key, tuple) else (key,)))
        groups.append(f"{label}: b = {fit.slope:.2f} [{fit.slope - half:.2f}, {hi:.2f}]")
    if not groups:
        raise _NotTestable(f"too few points for a slope over {x!r}")
    verdict = "reproduced" if all_ci else "partly reproduced" if all_est else "not reproduced"
    return {"ours": f"slope b <= {worst:.2f} (95% upper bound, worst group); threshold {p_order:g}",
            "effect": f"max upper bound of b {worst:.2f}",
            "p_value": float("nan"), "verdict": verdict,
            "test": f"log-log regression of {s.metric_raw} on {x} per group over every seed, 95% CI; "
                    f"holds iff the slope b < {p_order:g}",
            "evidence": "; ".join(groups) + "."}


def _equivalent(s):
    """``a`` and each of ``b`` agree within ``tolerance`` (relative, every pair): an identity a paper proves."""
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
    return {"ours": f"max relative difference {worst:.1e}", "effect": f"{worst:.1e}", "p_value": float("nan"),
            "verdict": verdict, "test": s.test_line(f"agreement within {tol:g} (relative) in every pair", 1),
            "evidence": "; ".join(parts) + "."}


RULES = {"better": _better, "equivalent": _equivalent, "no_worse": _no_worse, "best_on_most": _best_on_most,
         "matches_value": _matches_value, "slope_below": _slope_below}


# -- the ledger -------------------------------------------------------------------------------
def _base(claim):
    return {"paper": claim.get("paper", ""), "claim_id": claim["id"], "claim": claim["claim"],
            "where": claim["where"], "paper_value": str(claim.get("paper_value", "")), "study": claim["study"],
            "ours": "", "test": "", "p_value": float("nan"), "effect": "", "verdict": "", "evidence": "",
            "question": ",".join(_as_list(claim.get("answers", [])))}


def evaluate(claim, df, info=None):
    """One ledger row (a dict with :data:`COLUMNS`) for ``claim`` on its study's result table ``df``.

    ``df`` is None when the study did not run (verdict ``not run``); ``info`` gives the study's
    ``metrics`` (``{name: [label, lower_is_better]}``), ``coords`` and ``block_cols``.
    """
    row = _base(claim)
    if claim.get("not_testable"):
        return {**row, "verdict": "not testable", "evidence": str(claim["not_testable"])}
    if df is None:
        return {**row, "verdict": "not run", "evidence": f"study block {claim['study']!r} is not in this configuration"}
    rule = claim.get("rule")
    if rule not in RULES:
        raise ValueError(f"claim {claim['id']!r}: unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    try:
        setup = _Setup(claim, df, info)
        if rule == "slope_below":
            setup.raw = setup._select(df)
            setup.metric_raw = claim["metric"]
        out = RULES[rule](setup)
    except _NotTestable as exc:
        return {**row, "verdict": "not testable", "evidence": str(exc)}
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
    """Workflow stage: the ledger over every paper's claims into ``out_csv`` (atomically).

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
