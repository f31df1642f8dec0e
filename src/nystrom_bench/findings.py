"""What the benchmark found: the answers to the questions it exists for, and a practitioner's guide.

Everything here is computed from the result tables and the claims ledger of one run; no
sentence carries a typed number or verdict.  :func:`findings` gathers

- ``counts``: verdicts of the claims ledger;
- ``answers``: one short answer per question (which sampler; which approximation; GSA, LLA
  or NCR; approximate vs cross-validated kernel selection; how fast the approximation
  becomes consistent), each citing its study, the test and the effect size;
- ``guide``: a decision table (task, n, landmark budget) -> what to use, each row backed by
  a study result and the library call that does it.

:func:`markdown` renders them as ``reports/FINDINGS.md``; :mod:`nystrom_bench.report` puts the
same on the first pages of ``reports/summary.pdf``.  A question whose studies did not run
says so instead of answering.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from . import stats
from .report import fmt_p

__all__ = ["rank_methods", "findings", "markdown", "QUESTIONS"]


def rank_methods(df, metric, lower, among, column="method", blocks=("dataset", "kernel", "seed"), where=None):
    """Rank the values ``among`` of ``column`` on ``metric`` over complete paired blocks.

    Returns ``None`` (fewer than two contenders with results) or a dict: ``order`` (best
    first), ``ranks`` (mean rank, 1 = best), ``friedman_p`` (NaN with two contenders),
    ``n_blocks``, ``best``, ``runner_up``, ``p`` (Wilcoxon of best vs runner-up, two-sided),
    ``effect`` (median relative difference best vs runner-up) and ``wins``/``n_pairs``.
    """
    if df is None or metric not in df:
        return None
    sub = df[df[column].astype(str).isin([str(a) for a in among]) & df[metric].notna()]
    for col, val in (where or {}).items():
        sub = sub[sub[col].astype(str).isin([str(v) for v in (val if isinstance(val, list) else [val])])]
    blocks = [b for b in [*blocks, *(["method"] if column != "method" else [])] if b in sub and b != column]
    blocks = list(dict.fromkeys(blocks))
    present = [a for a in among if (sub[column].astype(str) == str(a)).any()]
    if len(present) < 2:
        return None
    sub = sub.assign(**{column: sub[column].astype(str)})
    wide = stats.pivot_pairs(sub, metric, column, blocks)
    if len(wide) < 2:
        return None
    ranks = (wide if lower else -wide).rank(axis=1).mean().sort_values()
    fried = stats.friedman(sub, metric, column, blocks, lower) if len(present) >= 3 else None
    best, runner = ranks.index[0], ranks.index[1]
    pair = stats.paired_tests(sub[sub[column].isin([best, runner])], metric, runner, column, blocks, lower)
    row = pair.iloc[0]
    base = wide[runner]
    effect = float(((wide[best] - base) / base.abs()).median()) if (base != 0).all() else float("nan")
    return {"order": list(ranks.index), "ranks": ranks.to_dict(), "friedman_p": fried["p"] if fried else float("nan"),
            "n_blocks": len(wide), "n_datasets": wide.reset_index()["dataset"].nunique() if "dataset" in blocks else 0,
            "best": best, "runner_up": runner, "p": float(row["wilcoxon_p"]), "effect": effect,
            "wins": int(row["wins"]), "n_pairs": int(row["n_pairs"])}


def _blocks(info, column):
    """A study's paired blocks (its block columns and coords) without the compared column."""
    return [*info.get("block_cols", ["dataset", "kernel", "seed"]), *[c for c in info.get("coords", []) if c != column]]


def _rank_sentence(study, label, r, lower):
    if r is None:
        return None
    ranks = ", ".join(f"{m} {r['ranks'][m]:.1f}" for m in r["order"])
    fried = f"; Friedman p = {fmt_p(r['friedman_p'])}" if math.isfinite(r["friedman_p"]) else ""
    eff = "" if not math.isfinite(r["effect"]) else f"median {r['effect'] * 100:+.1f}% {label.lower()}, "
    sig = "significant" if r["p"] < 0.05 else "not significant"
    return (f"{study} ({r['n_datasets']} data sets, {r['n_blocks']} paired blocks), {label.lower()}: mean ranks "
            f"{ranks}{fried}. {r['best']} vs {r['runner_up']}: {eff}better in {r['wins']} of {r['n_pairs']} pairs, "
            f"Wilcoxon p = {fmt_p(r['p'])} ({sig}).")


#: the questions the benchmark exists for; each lists the (study, metric, column, contenders[, where])
#: rankings that answer it and the claims (paper key, claim id) that bear on it
QUESTIONS = [
    {"id": "sampler", "question": "Which landmark sampler?",
     "rankings": [("krc", "test_accuracy", "method", ["nystrom_uniform", "nystrom_kmeans", "nystrom_rls"], None),
                  ("integration", "test_accuracy", "method", ["uniform", "leverage", "kmeans", "gaussian"],
                   {"integration": "lla"}),
                  ("integration_krr", "test_mse", "method", ["uniform", "leverage", "kmeans", "gaussian"],
                   {"integration": "lla"}),
                  ("consistency", "relative_gap", "method",
                   ["uniform", "colnorm", "leverage", "adapt_deshp", "adapt_kumar", "adapt_ms"], None)]},
    {"id": "approximation", "question": "Which approximation?",
     "rankings": [("consistency", "relative_gap", "method", ["optapp", "uniform", "modified", "mcm"], None),
                  ("gen_nystrom", "error", "method", ["nystrom", "gen_nystrom", "csi", "breg"], None)]},
    {"id": "mode", "question": "GSA, LLA or NCR?",
     "rankings": [("integration", "rel_error", "integration", ["gsa", "lla"], None),
                  ("integration", "test_accuracy", "integration", ["gsa", "lla"], None),
                  ("integration_krr", "test_mse", "integration", ["gsa", "lla", "ncr"], None),
                  ("krr", "test_mse", "method", ["nystrom_gsa", "nystrom_lla"], None)]},
    {"id": "selection", "question": "Approximate or cross-validated kernel selection?",
     "rankings": [("selection", "test_accuracy", "method", ["accurate", "mcm", "nystrom", "nystrom_adapt_ms", "cv5"],
                   None),
                  ("selection", "test_mse", "method", ["accurate", "mcm", "nystrom", "nystrom_adapt_ms", "cv5"], None),
                  ("selection", "selection_seconds", "method",
                   ["accurate", "mcm", "nystrom", "nystrom_adapt_ms", "cv5"], None)]},
    {"id": "consistency", "question": "How fast does the approximate criterion become consistent?",
     "claims_only": True, "rankings": []},
]


#: the question a claim bears on when it does not say (``answers:``), by its study block
_QUESTION_OF_STUDY = {"krc": "sampler", "integration": "mode", "integration_krr": "mode", "krr": "mode",
                      "gen_nystrom": "approximation", "gen_nystrom_labels": "approximation",
                      "consistency": "approximation", "consistency_mcm": "approximation",
                      "consistency_order": "consistency", "selection": "selection", "gnkr": "approximation",
                      "gnkr_real": "approximation", "scale": "scale"}


def _claims_for(ledger, qid):
    """Ledger rows that bear on a question: the claim's ``answers`` (the ledger's ``question``
    column), else the question of its study block."""
    if ledger is None or not len(ledger):
        return pd.DataFrame()
    asked = ledger.get("question", pd.Series("", index=ledger.index)).fillna("").astype(str)
    qs = [a.split(",") if a else [_QUESTION_OF_STUDY.get(s, "")] for a, s in zip(asked, ledger["study"], strict=True)]
    return ledger[[qid in [q.strip() for q in q_list] for q_list in qs]]


def _answers(tables, infos, ledger):
    out = []
    for q in QUESTIONS:
        lines = []
        for study, metric, column, among, where in q["rankings"]:
            df, info = tables.get(study), infos.get(study) or {}
            if df is None or metric not in (info.get("metrics") or {}):
                continue
            label, lower = info["metrics"][metric]
            blocks = _blocks(info, column)
            line = _rank_sentence(study, label, rank_methods(df, metric, bool(lower), among, column, blocks, where),
                                  bool(lower))
            if line:
                lines.append(line)
        related = _claims_for(ledger, q["id"])
        for _, c in related[related["verdict"] != "not run"].iterrows() if len(related) else []:
            ours = "" if pd.isna(c["ours"]) or not str(c["ours"]) else f"; ours: {c['ours']}"
            why = f" ({c['evidence']})" if c["verdict"] == "not testable" else ""
            lines.append(f"Claim ({c['paper']}, {c['where']}): {c['claim']} -> {c['verdict']}{ours}{why}.")
        out.append({"id": q["id"], "question": q["question"],
                    "lines": lines or ["Not answered by this run: none of its studies ran."]})
    return out


def _guide(tables, infos):
    """The decision table: each recommendation is the winner of a ranking in this run's results."""
    def winner(study, metric, column, among, where=None):
        info = infos.get(study) or {}
        if study not in tables or metric not in (info.get("metrics") or {}):
            return None
        return rank_methods(tables[study], metric, bool(info["metrics"][metric][1]), among, column,
                            _blocks(info, column), where)

    rows = []

    def clear(r, default):
        """The ranking's winner where it beats the runner-up significantly and by >= 1%, else ``default``."""
        if r is None:
            return default
        ok = r["p"] < 0.05 and (not math.isfinite(r["effect"]) or abs(r["effect"]) >= 0.01)
        return r["best"] if ok else default

    def said(r):
        return (f"{r['best']} vs {r['runner_up']}: median {r['effect'] * 100:+.1f}%, p = {fmt_p(r['p'])}"
                if r else "not run")

    exact = winner("krr", "test_mse", "method", ["exact", "nystrom_lla"])
    if exact:
        use_exact = clear(exact, "nystrom_lla") == "exact"
        rows.append({"task": "regression", "n": "up to ~10^4", "budget": "n^2 memory",
                     "use": "exact KRR" if use_exact else "Nystrom LLA, 100 uniform landmarks (as accurate as exact)",
                     "evidence": f"krr test MSE, {said(exact)}",
                     "call": 'KRR(approximation="exact", gamma="median", alpha=0.1)' if use_exact else
                             'KRR(n_components=100, mode="lla", gamma="median", alpha=0.1)'})
    reg_mode = winner("integration_krr", "test_mse", "integration", ["gsa", "lla", "ncr"])
    mode = clear(reg_mode, "lla")
    reg_sampler = winner("integration_krr", "test_mse", "method", ["uniform", "leverage", "kmeans", "gaussian"],
                         {"integration": mode})
    sampler = clear(reg_sampler, "uniform")
    if reg_mode:
        rows.append({"task": "regression", "n": "10^4 and more", "budget": "m landmarks, O(n m) memory",
                     "use": f"Nystrom, {sampler} landmarks, mode {mode.upper()}",
                     "evidence": f"integration_krr test MSE: mode {said(reg_mode)}; sampler {said(reg_sampler)}",
                     "call": f'KRR(n_components=m, sampler="{_sampler_name(sampler)}", mode="{mode}", '
                             'gamma="median")'})
    solver = winner("scale", "fit_time", "method", ["direct", "direct_f32", "cg", "cg_f32"])
    if solver:
        # the fastest only where it beats the float64 direct solve (what solver='auto' runs at these sizes)
        # significantly; else the default, not a coin toss between tied solvers
        vs_direct = (winner("scale", "fit_time", "method", [solver["best"], "direct"])
                     if solver["best"] != "direct" else None)
        fastest = clear(vs_direct, None) if vs_direct and vs_direct["best"] == solver["best"] else None
        rows.append({"task": "regression", "n": "10^5 and more", "budget": "time",
                     "use": f"solver/precision: {fastest}" if fastest else
                            "the default solver='auto' (no solver or precision was significantly faster)",
                     "evidence": f"scale fit time, ranks {', '.join(solver['order'])}; {said(solver)}; test RMSE "
                                 "in reports/scale.pdf",
                     "call": _solver_call(fastest) if fastest else "KRR(n_components=m)"})
    clf = winner("krc", "test_accuracy", "method", ["nystrom_uniform", "nystrom_kmeans", "nystrom_rls"])
    clf_mode = winner("integration", "test_accuracy", "integration", ["gsa", "lla"])
    if clf:
        cmode = clear(clf_mode, "lla")
        csampler = clear(clf, "nystrom_uniform").replace("nystrom_", "")
        rows.append({"task": "classification", "n": "any", "budget": "m = 100 landmarks",
                     "use": f"Nystrom, {csampler} landmarks, mode {cmode.upper()}",
                     "evidence": f"krc test accuracy: {said(clf)}; integration: mode {said(clf_mode)}",
                     "call": f'KRRClassifier(n_components=100, sampler="{_sampler_name(csampler)}", '
                             f'mode="{cmode}", gamma="median")'})
    for study, metric, task, where in (("integration", "test_accuracy", "classification", {"integration": "lla"}),
                                       ("integration_krr", "test_mse", "regression", {"integration": "lla"})):
        r = smallest_budget(tables.get(study), infos.get(study) or {}, metric, "ratio", where)
        if r:
            rows.append({"task": f"landmark count ({task})", "n": "any", "budget": "m = ratio x n",
                         "use": f"m = {r['value']:g} n" + (" (the largest tested)" if r["value"] == r["largest"]
                                                            else f": within 1% of {r['largest']:g} n or better"),
                         "evidence": f"{study} {metric}, LLA: {r['evidence']}",
                         "call": f"n_components={float(r['value'])!r}"})  # a fraction of n (1.0, not 1)
    among = ["accurate", "mcm", "nystrom", "cv5"]
    for metric in ("test_accuracy", "test_mse"):
        sel = winner("selection", metric, "method", among)
        times = winner("selection", "selection_seconds", "method", among)
        if not (sel and times):
            continue
        # the fastest selector that is not significantly worse than the most accurate one
        info = infos["selection"]
        blocks = _blocks(info, "method")
        fine = [sel["best"]]
        for m in sel["order"][1:]:
            r = rank_methods(tables["selection"], metric, bool(info["metrics"][metric][1]), [sel["best"], m],
                             "method", blocks)
            if r and not (r["p"] < 0.05 and r["best"] == sel["best"]):
                fine.append(m)
        fastest = next(m for m in times["order"] if m in fine)
        rows.append({"task": f"kernel width ({'classification' if metric == 'test_accuracy' else 'regression'})",
                     "n": "any", "budget": "a grid of widths",
                     "use": f"select with {fastest}" + (f" (as accurate as {sel['best']}, faster)"
                                                        if fastest != sel["best"] else ""),
                     "evidence": f"selection {metric}: ranks {', '.join(sel['order'])}; not significantly worse "
                                 f"than {sel['best']}: {', '.join(fine)}; time ranks {', '.join(times['order'])}",
                     "call": ('selection.criterion_path(X, y, gammas, "nystrom", "ree")' if fastest == "nystrom" else
                              "selection.cv_path(X, y, gammas, ...)" if fastest == "cv5" else
                              f'selection.criterion_path(X, y, gammas, "{"exact" if fastest == "accurate" else fastest}",'
                              ' "ree")')})
    return rows


def smallest_budget(df, info, metric, coord, where=None, tolerance=0.01):
    """The smallest value of ``coord`` (e.g. the landmark ratio) whose ``metric`` is not significantly
    worse (Wilcoxon, 5%) than at the largest value, or worse by less than ``tolerance`` (median, relative).
    Returns ``{"value", "largest", "evidence"}`` or None."""
    if df is None or metric not in df or coord not in df or metric not in (info.get("metrics") or {}):
        return None
    lower = bool(info["metrics"][metric][1])
    sub = df[df[coord].notna()]
    values = sorted(sub[coord].unique())
    if len(values) < 2:
        return None
    largest = values[-1]
    parts = []
    for v in values[:-1]:
        r = rank_methods(sub, metric, lower, [v, largest], coord, _blocks(info, coord), where)
        if r is None:
            continue
        largest_wins = str(r["best"]) == str(largest)
        change = -r["effect"] if largest_wins else r["effect"]  # v against the largest value (approximately)
        worse = largest_wins and r["p"] < 0.05 and (not math.isfinite(change) or abs(change) > tolerance)
        verdict = "worse" if worse else "within 1%" if r["p"] < 0.05 else "no significant loss"
        parts.append(f"{v:g} n: {verdict} (median {change * 100:+.1f}% "
                     f"against {largest:g} n, p = {fmt_p(r['p'])})")
        if not worse:
            return {"value": float(v), "largest": float(largest), "evidence": "; ".join(parts)}
    return {"value": float(largest), "largest": float(largest), "evidence": "; ".join(parts) or "one value"}


_SAMPLERS = {"uniform": "uniform", "kmeans": "kmeans", "rls": "ridge_leverage", "leverage": "leverage",
             "gaussian": "gaussian_sketch"}


def _sampler_name(method):
    """The library's sampler name for a study method label (nystrom_kmeans -> kmeans)."""
    return _SAMPLERS.get(method.replace("nystrom_", ""), method)


def _solver_call(method):
    solver = "cg" if method.startswith("cg") else "direct"
    dtype = ', dtype="float32"' if method.endswith("f32") else ""
    return f'KRR(n_components=m, solver="{solver}"{dtype})'


def findings(tables, infos, ledger):
    """``{"counts", "answers", "guide"}`` of one run (see the module docstring)."""
    from .claims import verdict_counts

    return {"counts": verdict_counts(ledger) if ledger is not None and len(ledger) else {},
            "answers": _answers(tables, infos, ledger), "guide": _guide(tables, infos)}


def _md_cell(v):
    return str(v).replace("|", "/").replace("\n", " ")


def markdown(found, ledger, provenance_line=""):
    """The findings as Markdown (``reports/FINDINGS.md``): verdicts per paper, headline claims, answers,
    the practitioner's guide, then every claim (the README's snapshot stops before that last part)."""
    def table(df, cols):
        rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        rows += ["| " + " | ".join(_md_cell(r[c]) for c in cols) + " |" for _, r in df.iterrows()]
        return rows

    out = ["# Findings", ""]
    if provenance_line:
        out += [f"_{provenance_line}_", ""]
    counts = ", ".join(f"{n} {v}" for v, n in found["counts"].items())
    out += [f"**{len(ledger)} claims of the five papers and of this project: {counts}.** Each verdict comes "
            "from the paired test (or count, or tolerance) its claim declares in "
            "`src/nystrom_bench/papers/<paper>.yaml`.", ""]
    if len(ledger):
        bp = by_paper(ledger)
        out += table(bp, list(bp.columns)) + ["", "Headline claims tested in this run:", ""]
        out += table(headline(ledger).fillna(""), ["paper", "claim", "where", "paper_value", "ours", "verdict"])
    out += ["", ANSWERS_HEADING, ""]
    for a in found["answers"]:
        out += [f"**{a['question']}**", ""] + [f"- {line}" for line in a["lines"] if not line.startswith("Claim (")]
        out += [""]
    out += ["## Practitioner's guide", ""]
    guide = pd.DataFrame(found["guide"])
    if len(guide):
        out += table(guide.assign(call=guide["call"].map(lambda c: f"`{c}`")),
                     ["task", "n", "budget", "use", "evidence", "call"])
    out += ["", SNAPSHOT_CUT, "", "## All claims", ""]
    if len(ledger):
        out += table(ledger.fillna(""), ["paper", "claim", "where", "paper_value", "ours", "verdict", "test"])
    return "\n".join(out) + "\n"


def findings_note(findings_md):
    """Markdown for the findings run in MLflow: ``FINDINGS.md`` up to its answers (the verdicts per paper
    and the headline claims), then where the rest is."""
    head = Path(findings_md).read_text(encoding="utf-8").split(ANSWERS_HEADING)[0].rstrip()
    return (f"{head}\n\nThe answers, the practitioner's guide and every claim with its test: `summary.pdf` and "
            "`FINDINGS.md` (this run's artifacts), `claims.csv` (the ledger). Each study's experiment holds its "
            "runs and, at the top, its report run.\n")


def study_note(info, claims, pdf_name):
    """Markdown for a study's report run in MLflow (:func:`nystrom_bench.tracking.log_report`): its
    title, its claims with their computed verdicts (answer first), then what it asks and where the
    rest is."""
    from .claims import verdict_counts

    out = [f"### {info.get('title') or info.get('study', '')}", ""]
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


_VERDICT_SHORT = {"reproduced": "REPRODUCED", "partly reproduced": "PARTLY", "not reproduced": "NOT REPRODUCED",
                  "not testable": "not testable", "not run": "not run"}


def by_paper(ledger):
    """Verdict counts per paper (rows in ledger order), with a total row."""
    from .papers import VERDICTS

    rows = []
    for paper, sub in ledger.groupby("paper", sort=False):
        counts = sub["verdict"].value_counts()
        rows.append({"paper": paper, "claims": len(sub), **{v: int(counts.get(v, 0)) for v in VERDICTS}})
    out = pd.DataFrame(rows)
    total = {"paper": "all", "claims": len(ledger), **{v: int(out[v].sum()) for v in VERDICTS}}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def headline(ledger, per_paper=3):
    """Up to ``per_paper`` tested claims of each paper for page one: paired tests and counts over data
    sets before single numbers, in the paper file's order."""
    tested = ledger[~ledger["verdict"].isin(["not run", "not testable"])]
    kind = tested["test"].fillna("").str.startswith("mean over").astype(int)  # matches_value last
    order = tested.assign(_k=kind, _i=range(len(tested))).sort_values(["_k", "_i"])
    return order.groupby("paper", sort=False).head(per_paper).sort_values("_i").drop(columns=["_k", "_i"])


def _short(text, n):
    text = str(text)
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def summary_pdf(ledger_csv, result_csvs, infos, title, out_pdf, findings_md=None, config_name=""):
    """``reports/summary.pdf``: the findings page (ledger, answers), the practitioner's guide, then
    one short section per study; ``findings_md``: the same findings as Markdown.

    ``result_csvs`` and ``infos`` are keyed by study block (``infos[s]`` as the workflow's report
    params: title, description, metrics, coords, block_cols, primary_metric, reference).
    """
    from . import provenance
    from .atomic import replace_into
    from .report import PDF, mean_sd_table

    ledger = pd.read_csv(ledger_csv) if ledger_csv else pd.DataFrame()
    tables = {s: pd.read_csv(p) for s, p in result_csvs.items()}
    found = findings(tables, infos, ledger)
    prov = provenance.summary()
    line = (f"Run of {prov['date']}, config {config_name or 'config/config.yaml'}, git commit {prov['git_commit']}, "
            f"{prov['hardware']}")
    doc = PDF(f"{title}: findings")
    doc.title(f"{title}: what the benchmark found")
    doc.para(line, size=7.5)
    counts = ", ".join(f"{n} {v}" for v, n in found["counts"].items())
    doc.para(f"{len(ledger)} claims of the five papers and of this project, verdicts computed from this run's "
             f"results by the paired test each claim calls for: {counts}.", style="B")
    if len(ledger):
        doc.table(by_paper(ledger), size=7, col_widths=(52, 16, 22, 18, 26, 24, 18))
        doc.para("Headline claims (tested in this run; the full ledger is at the end):", size=8, style="B")
        head = headline(ledger)
        shown = pd.DataFrame({"paper": head["paper"].map(lambda p: _short(p, 24)),
                              "claim": head["claim"].map(lambda c: _short(c, 84)),
                              "ours": head["ours"].fillna("").map(lambda v: _short(v, 28)),
                              "verdict": head["verdict"].map(_VERDICT_SHORT)})
        doc.table(shown, size=5.8, col_widths=(26, 100, 36, 24))
    doc.heading("Answers")
    for a in found["answers"]:
        doc.para(f"{a['question']} " + (a["lines"][0] if a["lines"] else ""), size=7.2)
    doc.pdf.add_page()
    doc.heading("Practitioner's guide")
    doc.para("Each row is the winner of a paired comparison in this run (evidence column), or the cheap default "
             "where no contender is significantly better by 1% or more; the library call does it. Widths: the "
             "median heuristic (gamma='median') throughout.", size=8)
    if found["guide"]:
        doc.table(pd.DataFrame(found["guide"])[["task", "n", "budget", "use", "evidence", "call"]], size=6,
                  col_widths=(18, 16, 20, 30, 52, 44))
    doc.heading("Answers in full")
    for a in found["answers"]:
        doc.para(a["question"], size=8.5, style="B")
        for ln in a["lines"]:
            doc.para(ln, size=7)
    doc.heading("The studies")
    for i, (study, info) in enumerate(infos.items(), 1):
        if study not in tables:
            continue
        df = tables[study]
        doc.para(f"{i}. {info.get('title', study)} (reports/{study}.pdf)", size=9, style="B")
        own = ledger[ledger["study"] == study] if len(ledger) else ledger
        if len(own):
            doc.para("Claims: " + "; ".join(f"{_short(c, 70)} -> {v}" for c, v in zip(own["claim"], own["verdict"],
                                                                                         strict=True)), size=7.5)
        metric = info.get("primary_metric")
        if metric and metric in df:
            label = info["metrics"][metric][0]
            doc.para(f"{label}, mean +- sd over seeds:", size=7.5)
            coords = [c for c in info.get("coords", []) if c in (info.get("summary_coords") or [])]
            doc.table(mean_sd_table(df, metric, order=info.get("methods"), coords=coords), size=6)
    if len(ledger):
        doc.pdf.add_page()
        doc.heading("Appendix: the claims ledger")
        doc.para("Every claim, the paper's value, ours, the test and the evidence (results/claims.csv).", size=8)
        full = ledger[["paper", "claim", "where", "paper_value", "ours", "verdict", "evidence"]].fillna("")
        doc.table(full.assign(evidence=full["evidence"].map(lambda e: _short(e, 260))), size=5.2,
                  col_widths=(18, 40, 16, 20, 22, 14, 56))
    doc.save(out_pdf)
    if findings_md:
        text = markdown(found, ledger, line)
        replace_into(findings_md, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return found


SNAPSHOT_START, SNAPSHOT_END = "<!-- findings:start -->", "<!-- findings:end -->"
#: where the README's snapshot of FINDINGS.md stops (the full ledger stays in reports/FINDINGS.md)
SNAPSHOT_CUT = "<!-- snapshot ends here -->"
#: the heading that ends FINDINGS.md's verdicts and headline claims (what the MLflow findings run shows)
ANSWERS_HEADING = "## Answers"


def snapshot_readme(findings_md, readme="README.md"):
    """Put the findings of ``findings_md`` into ``readme`` between the snapshot markers (headings
    one level down, up to the full ledger), replacing the last snapshot; the README then shows the run it
    came from and points to the full ledger."""
    text = Path(findings_md).read_text(encoding="utf-8").split(SNAPSHOT_CUT)[0]
    body = "\n".join(("#" + ln if ln.startswith("#") else ln) for ln in text.splitlines()[1:]).strip()
    doc = Path(readme).read_text(encoding="utf-8")
    if SNAPSHOT_START not in doc or SNAPSHOT_END not in doc:
        raise ValueError(f"{readme} has no findings snapshot markers ({SNAPSHOT_START} ... {SNAPSHOT_END})")
    head, rest = doc.split(SNAPSHOT_START, 1)
    _old, tail = rest.split(SNAPSHOT_END, 1)
    more = "\n\nEvery claim with its test and evidence: `reports/FINDINGS.md` and `results/claims.csv` after a run."
    Path(readme).write_text(f"{head}{SNAPSHOT_START}\n{body}{more}\n{SNAPSHOT_END}{tail}", encoding="utf-8")
