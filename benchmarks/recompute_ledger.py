"""Recompute the claims ledger's verdicts from a finished run's result files -- an outside check.

This script does NOT import ``nystrom_bench``: it reads ``results/<block>/results.csv``, the
config and the claim files (``src/nystrom_bench/papers/*.yaml``) with pandas, NumPy, SciPy and
PyYAML only, and re-implements each verdict rule from its written definition (the docstrings of
``nystrom_bench/claims.py`` and ``nystrom_bench/stats.py`` and README, "How a verdict is
computed").  It then compares its verdicts with the project's ledger (``results/claims.csv``).
Issue 34's done-when: on a fresh default run the verdicts agree on at least 90% of shared claims.

Usage::

    python benchmarks/recompute_ledger.py RUN_DIR [--config config/config.yaml] [--json out.json]
                                          [--ledger results/claims.csv] [--papers DIR]

``RUN_DIR`` holds ``results/<block>/results.csv``, ``results/claims.csv`` and the config;
relative ``--config``/``--ledger`` paths are read in ``RUN_DIR`` first.  ``--papers`` defaults to
the claim files of the checkout this script lives in.

A claim is *shared* when it has a rule (not ``not_testable:``), its study block ran and the
project's ledger has a row for it; every other claim is listed as skipped, with the reason.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats as sps

ALPHA = 0.05
TIME_MIN_EFFECT = 0.10     # claims.py: a time claim's minimum effect, and its no_worse margin
NO_WORSE_MARGIN = 0.02     # claims.py: the default equivalence margin of no_worse
DIGITS = 9                 # stats.py: values are rounded to 9 significant digits before any test
NA = "<na>"                # an empty coord in a block key: it pairs with an empty coord

#: each study kind's metrics -> lower is better, and its coords, read off the study modules
#: (block_cols is ("dataset", "kernel", "seed") for every kind: studies/__init__.py Study.block_cols)
KINDS = {
    # studies/krr/study.py KRRStudy.metrics; coords ()
    "krr": ({"test_mse": True, "fit_time": True, "predict_time": True}, ()),
    # studies/krc/study.py metrics; coords ()
    "krc": ({"test_accuracy": False, "fit_time": True, "predict_time": True}, ()),
    # studies/gnkr/study.py metrics; coords ("m",)
    "gnkr": ({"test_rmse_best": True, "test_rmse_val": True, "test_rmse_dense": True, "fit_time": True,
              "sampling_time": True}, ("m",)),
    # studies/consistency/study.py metrics; coords ("criterion", "log2_gamma", "l")
    "consistency": ({"relative_gap": True, "criterion_approx": True, "criterion_exact": True, "seconds": True},
                    ("criterion", "log2_gamma", "l")),
    # studies/gen_nystrom/study.py metrics; coords ("n_labels",)
    "gen_nystrom": ({"error": True, "seconds": True}, ("n_labels",)),
    # studies/integration/study.py metrics = METRICS; coords ("ratio", "integration")
    "integration": ({"rel_error": True, "rel_error_decision": True, "test_accuracy": False, "test_mse": True,
                     "fit_time": True, "predict_time": True}, ("ratio", "integration")),
    # studies/scale/study.py metrics; coords ("n", "m")
    "scale": ({"test_rmse": True, "fit_time": True, "predict_time": True, "peak_mem_mb": True}, ("n", "m")),
    # studies/samplers/study.py SamplersStudy.metrics; coords ("m",) (the rpc_smile and rpc_spiral blocks are
    # samplers studies too)
    "samplers": ({"trace_error": True, "frobenius_error": True, "spectral_error": True, "test_error": True,
                  "sampling_seconds": True, "kernel_entries": True}, ("m",)),
    # studies/selection/study.py metrics; coords ("criterion",)
    "selection": ({"test_mse": True, "test_accuracy": False, "selection_seconds": True, "log2_gamma_selected": True,
                   "fit_time": True}, ("criterion",)),
}
BLOCK_COLS = ["dataset", "kernel", "seed"]


class NotTestable(Exception):
    """The claim has no evidence in these results (verdict ``not testable``)."""


class Skip(Exception):
    """This script does not recompute the claim (it is listed as not shared)."""


# -- statistics, from stats.py's definitions ---------------------------------------------------
def round_sig(v, digits=DIGITS):
    """Values rounded to ``digits`` significant digits; 0, NaN and inf unchanged."""
    v = np.array(v, dtype=float, copy=True)
    ok = np.isfinite(v) & (v != 0)
    if ok.any():
        scale = 10.0 ** (np.floor(np.log10(np.abs(v[ok]))) - (digits - 1))
        v[ok] = np.round(v[ok] / scale) * scale
    return v


def holm(ps):
    """Holm's step-down adjusted p-values, in the given order."""
    ps = np.asarray(ps, float)
    k = len(ps)
    out = np.empty(k)
    running = 0.0
    for rank, i in enumerate(np.argsort(ps, kind="stable")):
        running = max(running, min(1.0, (k - rank) * ps[i]))
        out[i] = running
    return out


def signed_rank_null(n):
    """P(T+ = t), t = 0 .. n(n+1)/2: the exact null distribution of Wilcoxon's T+ for n untied pairs
    (the number of sign patterns with sum of positive ranks t, over 2^n)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):  # rank r joins with sign - (t unchanged) or + (t + r), probability 1/2 each
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[:-r]
        counts = 0.5 * (counts + shifted)
    return counts


def hl(d, confidence=0.95):
    """Hodges-Lehmann centre of ``d`` (the median of the Walsh averages (d_i + d_j)/2, i <= j) and the
    interval [W_(c+1), W_(M-c)], c the largest t with P(T+ <= t) <= (1-confidence)/2 (exact for n <= 400,
    normal beyond); NaN bounds when no such t exists."""
    d = np.asarray(d, float)
    n = len(d)
    if not n:
        return np.nan, np.nan, np.nan
    w = np.add.outer(d, d)[np.triu_indices(n)] / 2.0
    w.sort()
    est = float(np.median(w))
    tail = (1 - confidence) / 2
    if n <= 400:
        cdf = np.cumsum(signed_rank_null(n))
        below = np.nonzero(cdf <= tail * (1 + 1e-12))[0]
        c = int(below[-1]) if len(below) else -1
    else:
        c = int(math.floor(n * (n + 1) / 4 + sps.norm.ppf(tail) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    if c < 0:
        return est, np.nan, np.nan
    return est, float(w[c]), float(w[len(w) - 1 - c])


def compare(a, b, lower, effect, confidence=0.95):
    """The paired comparison of a against b: rounded values, log-ratio (effect 'ratio') or difference,
    counts of better/worse blocks, Hodges-Lehmann estimate and interval (back-transformed for a ratio),
    SciPy's two-sided Wilcoxon on the non-zero differences (1.0 with fewer than two)."""
    a, b = round_sig(a), round_sig(b)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    d = np.log(a) - np.log(b) if effect == "ratio" else a - b
    better = int((d < 0).sum() if lower else (d > 0).sum())
    worse = int((d > 0).sum() if lower else (d < 0).sum())
    est, lo, hi = hl(d, confidence)
    if effect == "ratio":
        est, lo, hi = np.exp(est), np.exp(lo), np.exp(hi)
    nz = d[d != 0]
    p = float(sps.wilcoxon(nz).pvalue) if len(nz) >= 2 else 1.0
    return {"n": len(d), "better": better, "worse": worse, "effect": effect, "est": float(est), "lo": float(lo),
            "hi": float(hi), "p": p, "d": d}


def side(c, lower, min_effect=0.0):
    """+1: a better than its rival by at least min_effect (HL estimate); -1 worse by as much; 0 else.
    Ratio: better iff a/b <= 1-m (lower) or >= 1/(1-m) (higher), never at exactly 1; a difference counts
    any non-zero estimate; an estimate exactly at no effect (and m = 0) goes by the better/worse counts."""
    est = c["est"]
    if not np.isfinite(est):
        return 0
    if c["effect"] == "ratio":
        lo_ok, hi_ok = est <= 1 - min_effect, est >= 1 / (1 - min_effect)
        good, bad = (lo_ok, hi_ok) if lower else (hi_ok, lo_ok)
        good, bad = good and est != 1, bad and est != 1
    else:
        good, bad = (est < 0, est > 0) if lower else (est > 0, est < 0)
    if not (good or bad) and est in (0.0, 1.0) and min_effect == 0 and c["better"] != c["worse"]:
        return 1 if c["better"] > c["worse"] else -1
    return 1 if good else -1 if bad else 0


# -- a claim's rows ----------------------------------------------------------------------------
def key(v):
    """One comparable text for a column or YAML value: 1000, 1000.0 and '1000' agree."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return str(v)
    f = float(v)
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def as_list(v):
    return list(v) if isinstance(v, list | tuple) else [v]


def is_time(metric):
    return "time" in metric or "second" in metric


class Claim:
    """A claim's rows after datasets/filter and transform, its compared column, blocks and direction."""

    def __init__(self, claim, df, kind):
        self.c = claim
        metrics, coords = KINDS[kind]
        self.metric = claim.get("metric")
        if self.metric not in metrics and self.metric not in df:
            raise ValueError(f"metric {self.metric!r} is not a metric of kind {kind!r}")
        self.lower = metrics.get(self.metric, True)
        self.column = claim.get("column", "method")
        self.a = claim.get("a")
        self.b = as_list(claim.get("b", []))
        self.note = ""
        self.df = self.select(df)
        self.raw = self.df.copy()
        nonempty = [c for c in coords if c in self.df and self.df[c].notna().any()]
        self.blocks = [c for c in [*BLOCK_COLS, *nonempty] if c in self.df]
        if claim.get("metric_b"):
            self.two_metrics(claim["metric_b"])
        if self.column not in self.df:
            raise ValueError(f"column {self.column!r} is not in the results")
        if self.column != "method" and "method" in self.df and "method" not in self.blocks:
            self.blocks.append("method")
        self.blocks = [c for c in self.blocks if c != self.column]
        self.df = self.df.assign(**{self.column: self.df[self.column].map(key)})
        self.a = None if self.a is None else key(self.a)
        self.b = [key(x) for x in self.b]
        self.chain = [key(x) for x in as_list(claim.get("chain", []))]  # better: each value against the one before
        self.transform(claim.get("transform"))
        vals = self.df[self.metric].dropna()
        self.effect = claim.get("effect") or ("ratio" if len(vals) and bool((vals > 0).all()) else "difference")

    def select(self, df):
        wanted = self.c.get("datasets")
        if wanted:
            present = set(wanted) & set(df["dataset"])
            if not present and self.c.get("stand_ins"):
                present = {v for k, v in self.c["stand_ins"].items() if k in wanted} & set(df["dataset"])
                if present:
                    self.note = f"stand-in {sorted(present)}; "
            if not present:
                raise NotTestable(f"its data sets ({', '.join(wanted)}) are not in the results")
            df = df[df["dataset"].isin(present)]
        for col, val in (self.c.get("filter") or {}).items():
            if col not in df:
                raise ValueError(f"filter column {col!r} is not in the results")
            df = df[df[col].map(key).isin({key(v) for v in as_list(val)})]
        if self.metric in df:
            df = df[df[self.metric].notna()]
        if not len(df):
            raise NotTestable("no result rows match its filter")
        return df

    def two_metrics(self, metric_b):
        """metric_b: one long table of both metrics, the compared column 'metric'."""
        ma = self.metric
        keep = list(dict.fromkeys([c for c in [*self.blocks, "method"] if c in self.df]))
        parts = [self.df[keep].assign(metric=m, value=self.df[m].to_numpy()) for m in (ma, metric_b)]
        self.df = pd.concat(parts, ignore_index=True)
        if self.column == "method":
            self.blocks = [*self.blocks, "method"]
        self.metric, self.column = "value", "metric"
        self.a = self.a or ma
        self.b = self.b or [metric_b]

    def transform(self, spec):
        if not spec:
            return
        if "slope" in spec:
            x = spec["slope"]
            mean_over = [c for c in as_list(spec.get("mean_over", [])) if c in self.df]
            keys = [c for c in self.blocks if c not in (x, *mean_over)] + [self.column]
            g = filled(self.df, keys).groupby([*keys, x], as_index=False)[self.metric].mean()
            rows = []
            for k, sub in g.groupby(keys):
                sub = sub[sub[self.metric] > 0]
                if sub[x].nunique() >= 2:
                    slope = np.polyfit(np.log(sub[x].astype(float)), np.log(sub[self.metric].astype(float)), 1)[0]
                    rows.append({**dict(zip(keys, k, strict=True)), "slope": float(slope)})
            if not rows:
                raise NotTestable(f"fewer than two values of {x!r} with a positive metric")
            self.df, self.metric, self.lower = pd.DataFrame(rows), "slope", True
            self.blocks = [c for c in keys if c != self.column]
            self.slope_x = x
        elif "argmin_distance" in spec:
            over, exact = spec["argmin_distance"]["over"], key(spec["argmin_distance"]["exact"])
            keys = [c for c in self.blocks if c != over]
            df = filled(self.df, keys).reset_index(drop=True)
            best = df.loc[df.groupby([*keys, self.column])[self.metric].idxmin(), [*keys, self.column, over]]
            ref = best[best[self.column] == exact].drop(columns=self.column).rename(columns={over: "ref"})
            if not len(ref):
                raise NotTestable(f"the exact method {exact!r} has no rows")
            m = best[best[self.column] != exact].merge(ref, on=keys)
            m["argmin_distance"] = (m[over].astype(float) - m["ref"].astype(float)).abs()
            self.df, self.metric, self.lower = m.drop(columns=[over, "ref"]), "argmin_distance", True
            self.blocks = keys
        elif "param" in spec:
            self.from_params(spec)
        else:
            raise ValueError(f"unknown transform {sorted(spec)}")

    def from_params(self, spec):
        """The metric read out of params (JSON): a scalar params[key], or a table with one row per pick."""
        k = spec["param"]
        params = self.df["params"].map(lambda p: json.loads(p) if isinstance(p, str) else {})
        values = params.map(lambda p: p.get(k))
        keep = values.map(lambda v: v is not None and not (isinstance(v, list) and not v))
        if not keep.any():
            raise NotTestable(f"no result row records {k!r} in its params")
        df, values = self.df[keep], values[keep]
        if "fields" not in spec:
            self.df = df.assign(**{str(k): values.astype(float)})
            self.metric = str(k)
            self.lower = bool(spec.get("lower", self.lower))
            return
        fields, value, picks = list(spec["fields"]), spec.get("value", self.metric), spec["pick"]
        stats_ = {"min": np.min, "max": np.max, "median": np.median, "mean": np.mean}
        rows = []
        for (_, row), table in zip(df.iterrows(), values, strict=True):
            t = pd.DataFrame([list(r) for r in table], columns=fields).astype(float)
            for name, how in picks.items():
                if isinstance(how, dict):
                    (op, field), = how.items()
                    pos = int(np.argmax(t[field].to_numpy()) if op == "argmax" else np.argmin(t[field].to_numpy()))
                    v = t[value].iloc[pos]
                else:
                    v = stats_[how](t[value].to_numpy())
                rows.append({**row.to_dict(), self.column: key(name), value: float(v)})
        self.df = pd.DataFrame(rows)
        self.metric = value
        self.lower = bool(spec.get("lower", self.lower))

    def paired(self, rival, a=None):
        """Wide table of a (default the claim's) and rival (rounded) over the blocks both have."""
        a = self.a if a is None else a
        sub = self.df[self.df[self.column].isin([a, rival]) & self.df[self.metric].notna()]
        sub = filled(sub, self.blocks)
        if sub.duplicated([*self.blocks, self.column]).any():
            raise ValueError(f"several rows per block {self.blocks} and {self.column}")
        wide = sub.pivot_table(index=self.blocks, columns=self.column, values=self.metric, aggfunc="first")
        if a not in wide or rival not in wide:
            raise NotTestable(f"{a!r} and {rival!r} share no paired block")
        wide = wide[[a, rival]].dropna()
        if not len(wide):
            raise NotTestable(f"{a!r} and {rival!r} share no paired block")
        return pd.DataFrame(round_sig(wide.to_numpy(float)), index=wide.index, columns=[a, rival])

    def compare(self, rival, confidence=0.95, a=None):
        a = self.a if a is None else a
        if not (self.df[self.column] == a).any():
            raise NotTestable(f"{self.column} = {a!r} has no rows")
        w = self.paired(rival, a)
        return {**compare(w[a].to_numpy(), w[rival].to_numpy(), self.lower, self.effect, confidence),
                "rival": rival, "rival_median": float(np.median(np.abs(w[rival].to_numpy(float))))}


def filled(df, cols):
    """``df`` with empty key cells as one marker, so that an empty coord pairs with an empty coord."""
    cols = [c for c in cols if c in df and df[c].isna().any()]
    return df.assign(**{c: df[c].astype(object).where(df[c].notna(), NA) for c in cols}) if cols else df


def words(c):
    f = (lambda v: f"{(v - 1) * 100:+.1f}%") if c["effect"] == "ratio" else (lambda v: f"{v:+.3g}")
    ci = f" [{f(c['lo'])}, {f(c['hi'])}]" if np.isfinite(c["lo"]) else ""
    return (f"vs {c['rival']}: {c['effect']} {f(c['est'])}{ci}, better {c['better']} / worse {c['worse']} "
            f"of {c['n']}, Holm p = {c['p_holm']:.3g}")


# -- rules, from claims.py's docstrings ----------------------------------------------------------
def rule_better(s):
    if not s.b and not s.chain:
        raise ValueError("rule needs rivals 'b'")
    # chain: [v1, ..., vk]: v2 against v1, ..., vk against v(k-1), in the rivals' place
    steps = [(hi, lo) for lo, hi in zip(s.chain[:-1], s.chain[1:], strict=True)] or [(s.a, r) for r in s.b]
    cs = [s.compare(r, a=a) for a, r in steps]
    # no power: even the comparison with the most pairs, all one way, has an exact two-sided p above Holm's first
    # level -- nothing can be shown, so not testable (rather than 'not reproduced')
    n = max(c["n"] for c in cs)
    if 2 * signed_rank_null(n)[0] > ALPHA / len(cs):
        raise NotTestable(f"too few paired blocks to decide ({n})")
    m = float(s.c.get("min_effect", TIME_MIN_EFFECT if is_time(s.c.get("metric", "")) else 0.0))
    beaten = lost = 0
    for c, p in zip(cs, holm([c["p"] for c in cs]), strict=True):
        c["p_holm"] = p
        sd = side(c, s.lower, m) if p < ALPHA else 0
        beaten += sd > 0
        lost += sd < 0
    k = len(cs)
    v = "reproduced" if beaten == k else "not reproduced" if lost or not beaten else "partly reproduced"
    every = ""
    if s.c.get("every"):  # "at every value of the coord": ahead -- the HL estimate on the value's blocks the claimed
        # way by the minimum effect and a one-sided sign test at 5%; behind -- the estimate the other way by as much
        # and more blocks beyond 1 / (1 - m) (1 - m where higher is better; 0 for a difference) than chance, Holm
        # over every value and rival
        def ahead(c):
            return side(c, s.lower, m) > 0 and sign_p(c["better"], c["better"] + c["worse"]) < ALPHA

        t = 0.0 if s.effect != "ratio" else math.log(1 / (1 - m) if s.lower else 1 - m)
        v, every = at_every(s, ahead, lambda c: side(c, s.lower, m) < 0, lambda c: t, v, 0.95, ("ahead", "behind"))
    return v, every + f"beats {beaten} of {k}, {lost} better than a (min effect {m:.0%}); " + \
        "; ".join(map(words, cs)), max(c["p_holm"] for c in cs)



def rule_no_worse(s):
    if not s.b:
        raise ValueError("rule needs rivals 'b'")
    k = len(s.b)
    tol = float(s.c.get("tolerance", TIME_MIN_EFFECT if is_time(s.c.get("metric", "")) else NO_WORSE_MARGIN))
    cs = [s.compare(r, 1 - ALPHA / k) for r in s.b]
    if not any(np.isfinite(c["hi"]) for c in cs):  # too few pairs for any interval at its level: nothing to decide
        raise NotTestable(f"too few paired blocks to decide ({max(c['n'] for c in cs)})")
    within = worse = 0
    for c, p in zip(cs, holm([c["p"] for c in cs]), strict=True):
        c["p_holm"] = p
        bound = c["hi"] if s.lower else c["lo"]
        centre = 1.0 if c["effect"] == "ratio" else 0.0
        # a difference effect's margin: the tolerance times the rival's median absolute value (claims._no_worse)
        m = tol if c["effect"] == "ratio" else tol * c["rival_median"]
        ok = bool(np.isfinite(bound) and (bound <= centre + m if s.lower else bound >= centre - m))
        beyond = c["est"] > centre + m if s.lower else c["est"] < centre - m
        within += ok
        worse += bool(p < ALPHA and beyond and side(c, s.lower) < 0)
    v = "reproduced" if within == k else "not reproduced" if worse or not within else "partly reproduced"
    every = ""
    if s.c.get("every"):  # per value of the coord: within (the same interval on its blocks alone); worse (the
        # estimate beyond the margin, and more blocks beyond the margin than chance, Holm over values x rivals)
        def margin(c):
            return tol if c["effect"] == "ratio" else tol * c["rival_median"]

        def within(c):
            centre, bound = (1.0 if c["effect"] == "ratio" else 0.0), (c["hi"] if s.lower else c["lo"])
            return bool(np.isfinite(bound) and (bound <= centre + margin(c) if s.lower else bound >= centre - margin(c)))

        def beyond(c):
            centre = 1.0 if c["effect"] == "ratio" else 0.0
            est_out = c["est"] > centre + margin(c) if s.lower else c["est"] < centre - margin(c)
            return est_out and side(c, s.lower) < 0

        def t(c):  # the margin in the units of the per-block log-ratio or difference
            if c["effect"] == "ratio":
                return math.log(1 + tol if s.lower else 1 - tol)
            return margin(c) if s.lower else -margin(c)

        v, every = at_every(s, within, beyond, t, v, 1 - ALPHA / k, ("within", "worse"))
    return v, every + (f"within the {tol:g} margin of {within} of {k}, worse than {worse} "
                       f"({100 * (1 - ALPHA / k):.4g}% intervals); " + "; ".join(map(words, cs))), \
        min(c["p_holm"] for c in cs)


def sign_p(k, n):
    """One-sided sign test: P(k or more of n untied blocks one way), each way with probability 1/2."""
    return sps.binomtest(k, n, 0.5, alternative="greater").pvalue


def at_every(s, good, bad, threshold, v, confidence, names):
    """``every: coord``: per value of the coord and rival, the comparison on that value's blocks alone (not shown
    where the two share no block).  Bad where ``bad(c)`` and a one-sided sign test -- blocks beyond ``threshold(c)``
    on the wrong side against those on the other (ties dropped) -- gives p < 0.05 after Holm over every value and
    rival; else good where ``good(c)``; else not shown.  A value counts by its worst rival.  Any bad value: not
    reproduced; a value not shown turns a pooled 'reproduced' into 'partly'.  Returns the verdict and the counts."""
    coord = s.c["every"]
    if coord not in s.blocks:
        raise ValueError(f"every: {coord!r} is not a coord the claim pairs over")
    found = []  # (value, comparison or None)
    for r in s.b:
        w = s.paired(r)
        at = w.index.get_level_values(coord)
        rows = filled(s.df[s.df[s.column].isin([s.a, r])], [coord])[coord]
        for value in set(rows) | set(at):
            sub = w[at == value]
            found.append((value, {**compare(sub[s.a].to_numpy(), sub[r].to_numpy(), s.lower, s.effect, confidence),
                                  "rival_median": float(np.median(np.abs(sub[r].to_numpy(float))))}
                          if len(sub) else None))
    ps = []
    for _, c in found:
        if c is not None:
            t = threshold(c)
            out, other = (c["d"] > t, c["d"] < t) if s.lower else (c["d"] < t, c["d"] > t)
            ps.append(sign_p(int(out.sum()), int(out.sum() + other.sum())) if (out | other).any() else 1.0)
    adj = iter(holm(ps)) if ps else iter(())
    status = {}
    for value, c in found:
        st = 1
        if c is not None:
            p = next(adj)
            st = 2 if bad(c) and p < ALPHA else 0 if good(c) else 1
        status[value] = max(status.get(value, 0), st)
    got = list(status.values())
    if 2 in got:
        v = "not reproduced"
    elif 1 in got and v == "reproduced":
        v = "partly reproduced"
    return v, f"at every {coord}: {names[0]} {got.count(0)}, not shown {got.count(1)}, {names[1]} {got.count(2)}; "


def parse_share(v):
    if v is None:
        raise ValueError("the rule needs 'share:'")
    t = str(v).strip().lower()
    if t in ("all", "every"):
        return 1.0, False
    if t == "most":
        return 0.5, True
    k, n = (int(x) for x in t.split("/"))
    return k / n, False


def share_verdict(k, n, share, chance):
    frac, strict = share
    if np.ndim(chance):  # a chance per unit: P(K >= k) of the Poisson binomial, by enumerating the win patterns' sums
        p = poisson_binomial_sf(k, chance) if n else float("nan")
    else:
        p = float(sps.binomtest(k, n, chance, alternative="greater").pvalue) if n else float("nan")
    meets = n and (k / n > frac if strict else k / n >= frac)
    if meets and k > 0:
        return "reproduced", p
    if n and k > n / 2 and p < ALPHA:
        return "partly reproduced", p
    return "not reproduced", p


def poisson_binomial_sf(k, chances):
    """P(K >= k), K the number of successes of independent trials with these chances: a recursion over trials of
    P(j successes so far), written out (claims.py convolves)."""
    probs = [1.0]
    for c in chances:
        probs = [(probs[j] if j < len(probs) else 0.0) * (1 - c) + (probs[j - 1] * c if j else 0.0)
                 for j in range(len(probs) + 1)]
    return float(min(1.0, sum(probs[k:])))


def rule_best_on_most(s):
    # per data set where a and at least one rival ran: a best among the contenders that ran there (a rival without
    # a result left out, as the papers count); chance one over the contenders that ran, per data set
    share = parse_share(s.c.get("share"))
    cont = [s.a, *s.b]
    sub = s.df[s.df[s.column].isin(cont)]
    means = sub.groupby(["dataset", s.column])[s.metric].mean().unstack(s.column).reindex(columns=cont)
    means = means[means[s.a].notna()]
    if means.isna().all().any():  # a contender with no result anywhere a ran: a label the run lacks, no '-' cell
        raise NotTestable(f"{list(means.columns[means.isna().all()])} have no result where {s.a!r} has one")
    means = means[means[list(s.b)].notna().any(axis=1)]
    if not len(means):
        raise NotTestable(f"no data set has results for {s.a} and a rival")
    r = pd.DataFrame(round_sig(means.to_numpy(float)), index=means.index, columns=cont)
    top = r.min(axis=1) if s.lower else r.max(axis=1)
    wins = list(r.index[r[s.a] == top])
    k, n = len(wins), len(r)
    ran = r.notna().sum(axis=1).to_numpy()
    v, p = share_verdict(k, n, share, 1 / ran if (ran < len(cont)).any() else 1 / len(cont))
    return v, f"{s.a} best mean on {k} of {n} data sets ({', '.join(wins) or 'none'}); binomial p = {p:.3g}", p


def rule_matches_value(s):
    paper = s.c.get("paper_number")
    if paper is None or not float(paper):
        raise ValueError("matches_value needs a non-zero paper_number")
    vals = s.df[s.metric].to_numpy(float)
    ours = float(np.mean(vals))
    ratio, tol = ours / float(paper), float(s.c.get("tolerance", 0.2))
    dev = abs(ratio - 1)
    better = ratio < 1 if s.lower else ratio > 1
    v = ("reproduced" if dev <= tol else "better than the paper" if better else
         "partly reproduced" if dev <= 2 * tol else "not reproduced")
    p = float(sps.wilcoxon(vals - float(paper)).pvalue) if len(vals) >= 2 and np.any(vals != paper) else np.nan
    return v, f"mean {ours:.4g} over {len(vals)} rows = {ratio:.3f} x the paper's {paper} (tolerance {tol:g})", p


def rule_equivalent(s):
    tol = float(s.c.get("tolerance", 1e-6))
    worst, parts = 0.0, []
    for rival in s.b:
        w = s.paired(rival)
        rel = ((w[s.a] - w[rival]).abs() / w[rival].abs().clip(lower=1e-300)).to_numpy()
        worst = max(worst, float(rel.max()))
        parts.append(f"vs {rival}: max relative difference {rel.max():.2e} over {len(rel)} pairs")
    v = "reproduced" if worst <= tol else "partly reproduced" if worst <= 100 * tol else "not reproduced"
    return v, "; ".join(parts), np.nan


def rule_slope_below(s):
    spec = s.c.get("transform") or {}
    if "slope" not in spec:
        raise ValueError("slope_below needs transform: {slope: coord}")
    p_order = float(s.c.get("p", 0.5))
    share = parse_share(s.c.get("share", "all"))
    x, metric = spec["slope"], s.c["metric"]
    raw = s.raw
    keys = [c for c in ["dataset", *[c for c in s.blocks if c not in ("dataset", "seed")], s.column] if c in raw]
    keys = list(dict.fromkeys(keys))
    g = filled(raw, keys).groupby([*keys, "seed", x], as_index=False)[metric].mean()
    data, below, curves = [], 0, []
    for k, sub in g.groupby(keys):
        sub = sub[sub[metric] > 0]
        if sub[x].nunique() < 2 or len(sub) < 3:
            continue
        lx, ly = np.log(sub[x].to_numpy(float)), np.log(sub[metric].to_numpy(float))
        b = sps.linregress(lx, ly).slope
        below += b < p_order
        data.append((lx - lx.mean(), ly - ly.mean()))
        curves.append(f"{'/'.join(map(str, k))}: {b:.2f}")
    if not data:
        raise NotTestable(f"too few points for a slope over {x!r}")
    # pooled: one slope, an intercept per curve (centred within each), t interval with n - groups - 1 dof
    X, Y = np.concatenate([d[0] for d in data]), np.concatenate([d[1] for d in data])
    sxx = float(X @ X)
    b = float(X @ Y) / sxx if sxx else np.nan
    dof = len(X) - len(data) - 1
    hi = np.nan
    if sxx and dof > 0:
        r = Y - b * X
        hi = b + float(sps.t.ppf(0.975, dof)) * math.sqrt(float(r @ r) / dof / sxx)
    n = len(data)
    v, p = share_verdict(below, n, share, 0.5)
    if not (np.isfinite(hi) and hi < p_order):
        v = "not reproduced"
    return v, f"{below} of {n} curves below {p_order:g}; pooled slope {b:.3f}, upper 95% {hi:.3f}", p


RULES = {"better": rule_better, "no_worse": rule_no_worse, "best_on_most": rule_best_on_most,
         "matches_value": rule_matches_value, "equivalent": rule_equivalent, "slope_below": rule_slope_below}


def recompute(claim, df, kind):
    """(verdict, evidence) of one claim on its block's rows."""
    rule = claim.get("rule")
    if rule not in RULES:
        raise Skip(f"rule {rule!r} is not implemented here")
    if kind not in KINDS:
        raise Skip(f"study kind {kind!r} has no metric table in this script")
    try:
        s = Claim(claim, df, kind)
        verdict, evidence, p = RULES[rule](s)
        return verdict, s.note + evidence, p
    except NotTestable as exc:
        return "not testable", str(exc), np.nan
    except (ValueError, KeyError) as exc:
        return "not testable", f"could not be evaluated: {exc}", np.nan


# -- the run -----------------------------------------------------------------------------------
def resolve(path, run_dir):
    p = Path(path)
    return p if p.is_absolute() or not (run_dir / p).exists() else run_dir / p


def load_claims(papers_dir):
    out = []
    for f in sorted(Path(papers_dir).glob("*.yaml")):
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        out += [{**c, "paper": doc.get("name", f.stem)} for c in doc.get("claims", [])]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--ledger", default="results/claims.csv", help="the project's ledger (default in RUN_DIR)")
    ap.add_argument("--papers", default=str(Path(__file__).resolve().parents[1] / "src/nystrom_bench/papers"))
    ap.add_argument("--json", type=Path, help="write every claim's outcome here")
    args = ap.parse_args(argv)
    run = args.run_dir
    config = yaml.safe_load(resolve(args.config, run).read_text())
    blocks = config.get("studies", config)
    results = run / "results"
    ledger_path = resolve(args.ledger, run)
    project = pd.read_csv(ledger_path).set_index("claim_id") if ledger_path.exists() else None
    if project is None:
        print(f"no project ledger at {ledger_path}: ours only", file=sys.stderr)

    rows, skipped = [], []
    for c in load_claims(args.papers):
        cid = c["id"]
        if c.get("not_testable"):
            skipped.append((cid, "not_testable in its claim file (nothing to recompute)"))
            continue
        names = as_list(c["study"])
        ran = [b for b in names if b in blocks and (results / b / "results.csv").exists()]
        if not ran:
            skipped.append((cid, f"study {names} has no results.csv (not run / not finished)"))
            continue
        block = ran[0]
        kind = (blocks[block] or {}).get("kind", block)
        try:
            df = pd.read_csv(results / block / "results.csv")
            verdict, evidence, our_p = recompute({**c, "study": block}, df, kind)
        except Skip as exc:
            skipped.append((cid, str(exc)))
            continue
        theirs = project.loc[[cid]].iloc[0] if project is not None and cid in project.index else None
        if theirs is None:
            skipped.append((cid, f"ours {verdict!r}, but the project's ledger has no row"))
            continue
        if str(theirs["verdict"]) in ("not run", "not testable") and \
                str(theirs.get("evidence", "")).startswith(("study block", "the claim could not be evaluated")):
            # the project did not compute it (block absent when its ledger was written, or a malformed claim)
            skipped.append((cid, f"ours {verdict!r}; the project's ledger: {theirs['verdict']} "
                                 f"({theirs.get('evidence', '')})"))
            continue
        their_p = float(theirs.get("p_value")) if pd.notna(theirs.get("p_value")) else np.nan
        rows.append({"claim_id": cid, "study": block, "rule": c["rule"], "ours": verdict,
                     "project": str(theirs["verdict"]), "agree": verdict == str(theirs["verdict"]),
                     "our_evidence": evidence, "project_evidence": str(theirs.get("evidence", "")),
                     "project_effect": str(theirs.get("effect", "")), "our_p": our_p, "project_p": their_p,
                     "p_agree": bool(np.isnan(our_p) and np.isnan(their_p)
                                     or np.isclose(our_p, their_p, rtol=1e-6, atol=1e-12))})

    w = max([len(r["claim_id"]) for r in rows] + [8])
    print(f"{'claim':<{w}}  {'rule':<13} {'ours':<22} {'project':<22}")
    for r in rows:
        print(f"{r['claim_id']:<{w}}  {r['rule']:<13} {r['ours']:<22} {r['project']:<22} {'' if r['agree'] else '<-- differs'}")
    k, n = sum(r["agree"] for r in rows), len(rows)
    print(f"\nAgreement: {k} of {n} shared claims ({100 * k / n if n else float('nan'):.0f}%)")
    pd_ = [r for r in rows if not r["p_agree"]]
    print(f"p-values (the ledger's p_value column) agree to 1e-6 on {n - len(pd_)} of {n}"
          + "".join(f"\n  {r['claim_id']}: ours {r['our_p']:.6g}, project {r['project_p']:.6g}" for r in pd_))
    dis = [r for r in rows if not r["agree"]]
    if dis:
        print("\nDisagreements:")
        for r in dis:
            print(f"- {r['claim_id']} ({r['study']}, {r['rule']}): ours {r['ours']!r}, project {r['project']!r}\n"
                  f"    ours:    {r['our_evidence']}\n    project: {r['project_evidence']}")
    print(f"\nSkipped (not shared): {len(skipped)}")
    for cid, why in skipped:
        print(f"- {cid}: {why}")
    if args.json:
        args.json.write_text(json.dumps({"agree": k, "shared": n, "claims": rows,
                                         "skipped": [{"claim_id": a, "why": b} for a, b in skipped]},
                                        indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
