"""Findings: answers found by role, one computation per answer (records rendered by every reader), the
landmark budget rule, the guide, Markdown and the README snapshot, on synthetic results and both configs."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as sps

from nystrom_bench import findings, stats, studies

ROOT = Path(__file__).resolve().parents[1]
INFO = {"metrics": {"acc": ["Accuracy", False]}, "coords": ["ratio"], "block_cols": ["dataset", "kernel", "seed"]}
#: every question: the generic ones and the study kinds' own
QUESTIONS = studies.questions()
Q = {q["id"]: q for q in QUESTIONS}


def _frame(effect_of_ratio, seeds=10):
    rng = np.random.default_rng(0)
    rows = []
    for ds in ("d1", "d2"):
        for s in range(seeds):
            base = 0.8 + 0.05 * rng.standard_normal()
            for ratio, eff in effect_of_ratio.items():
                for method in ("uniform", "kmeans"):
                    rows.append({"dataset": ds, "kernel": "g", "seed": s, "ratio": ratio, "method": method,
                                 "acc": base + eff + (0.01 if method == "kmeans" else 0) + 1e-4 * rng.standard_normal()})
    return pd.DataFrame(rows)


def test_rank_record_matches_scipy_and_names_a_winner():
    df = _frame({0.1: 0.0})
    r = findings.rank_record(df, "acc", False, "method", [("uniform", "uniform"), ("kmeans", "kmeans")],
                             coords=["ratio"])
    wide = df.pivot_table(index=["dataset", "seed"], columns="method", values="acc")
    assert r["best"] == "kmeans" and [c["name"] for c in r["contenders"]] == ["kmeans", "uniform"]
    assert r["contenders"][0]["mean_rank"] == 1.0 and r["n_datasets"] == 2 and r["n_cells"] == 20
    ratio = np.log(stats.round_significant(wide["kmeans"].to_numpy())) - np.log(
        stats.round_significant(wide["uniform"].to_numpy()))
    assert r["pair"]["p"] == pytest.approx(sps.wilcoxon(ratio).pvalue)
    assert r["pair"]["better"] == 20 and r["pair"]["n_pairs"] == 20 and r["pair"]["estimate"] > 1.01
    assert r["significant"] and r["winner"] == "kmeans"


def test_rank_record_ranks_as_the_critical_difference_diagram():
    """Three contenders or more: the mean ranks are those of stats.critical_difference (the CD diagrams'),
    ranked per data set and averaged over the data sets."""
    rng = np.random.default_rng(3)
    rows = [{"dataset": f"d{d}", "kernel": "g", "seed": s, "m": m, "method": meth,
             "err": 1 + 0.1 * k + 0.3 * rng.standard_normal()}
            for d in range(5) for s in range(3) for m in (1, 2) for k, meth in enumerate(["a", "b", "c", "x"])]
    df = pd.DataFrame(rows)
    r = findings.rank_record(df, "err", True, "method", [(m, m) for m in "abc"], coords=["m"])
    cd = stats.critical_difference(df[df["method"] != "x"], "err", "method", ("dataset", "kernel", "seed"), ["m"],
                                   True)
    assert {c["name"]: c["mean_rank"] for c in r["contenders"]} == pytest.approx(cd["mean_ranks"].to_dict())
    assert r["friedman"]["p"] == pytest.approx(cd["friedman_p"]) and r["n_groups"] == 5
    assert "x" not in [c["name"] for c in r["contenders"]]


def test_a_metric_zero_everywhere_for_a_contender_makes_it_the_yardstick():
    """The exact criterion's gap to itself is 0 in every row: it is the metric's yardstick, not ranked (else it
    would win every 'Exact or Nystrom?' ranking on a gap)."""
    rng = np.random.default_rng(4)
    rows = [{"dataset": f"d{d}", "kernel": "g", "seed": s, "method": m,
             "gap": 0.0 if m == "orig" else 0.1 + 0.05 * (m == "ny") + 0.01 * rng.random()}
            for d in range(4) for s in range(3) for m in ("orig", "opt", "ny")]
    info = _info("c", {"orig": {"approximation": "exact"}, "opt": {"approximation": "optimal"},
                       "ny": {"approximation": "nystrom", "sampler": "uniform"}}, {"gap": ["Relative gap", True]})
    recs = findings.study_answers(pd.DataFrame(rows), info)
    assert {r["question"] for r in recs} == {"approximation"}  # no 'exact' ranking: only the yardstick is exact
    assert [c["name"] for c in recs[0]["contenders"]] == ["opt", "ny"]


@pytest.mark.parametrize("speedup,winner", [(0.3, "fast"), (0.05, None)])
def test_a_timing_winner_must_be_faster_by_ten_percent(speedup, winner):
    rng = np.random.default_rng(2)
    rows = [{"dataset": f"d{d}", "kernel": "g", "seed": s, "method": m,
             "fit_time": (1 - speedup * (m == "fast")) * (1 + 0.002 * rng.standard_normal())}
            for d in range(3) for s in range(10) for m in ("fast", "slow")]
    r = findings.rank_record(pd.DataFrame(rows), "fit_time", True, "method", [("fast", "f"), ("slow", "s")])
    assert r["best"] == "fast" and r["significant"] and r["winner"] == winner


def test_smallest_budget_picks_the_first_ratio_within_tolerance():
    df = _frame({0.01: -0.05, 0.03: -0.005, 0.1: 0.0})
    r = findings.smallest_budget(df, INFO, "acc", "ratio")
    assert r["value"] == pytest.approx(0.03) and r["largest"] == pytest.approx(0.1)
    assert "0.01 n: worse" in r["evidence"] and "0.03 n: within 1%" in r["evidence"]
    assert findings.smallest_budget(_frame({0.1: 0.0}), INFO, "acc", "ratio") is None


# -- contenders by role, in the project's two configs -------------------------------------------
def _blocks(name):
    from nystrom_bench import config

    return config.check(yaml.safe_load((ROOT / "config" / name).read_text()))


def _differ_only_in(a, b, key):
    a, b = findings._settings(a), findings._settings(b)
    return key in a and key in b and a[key] != b[key] and {k: v for k, v in a.items() if k != key} == {
        k: v for k, v in b.items() if k != key}


@pytest.mark.parametrize("cfg", ["config.yaml", "paper.yaml"])
def test_every_pair_of_methods_differing_in_a_role_is_ranked(cfg):
    """Two methods of a block that differ only in sampler (or mode, solver, ...) are ranked together by that
    question, whatever their labels: config/paper.yaml's nystrom_adapt_kumar is among krc's samplers."""
    blocks = _blocks(cfg)
    seen = 0
    keys = {k for q in QUESTIONS for k in q.get("role", [])}
    for study, block in blocks.items():
        methods = block["methods"]
        for key in keys:
            groups = [g for q in QUESTIONS if key in q.get("role", [])
                      for g in findings.contender_groups(methods, q)]
            for a in methods:
                for b in methods:
                    if a < b and _differ_only_in(methods[a], methods[b], key):
                        assert any({a, b} <= {n for n, _ in g} for g in groups), (study, key, a, b)
                        seen += 1
    assert seen >= 20
    samplers = findings.contender_groups(blocks["krc"]["methods"], Q["sampler"])
    names = {n for n, _ in samplers[0]}
    assert {lab for lab, m in blocks["krc"]["methods"].items() if m.get("sampler")} == names
    if cfg == "paper.yaml":
        assert "nystrom_adapt_kumar" in names
        krr = findings.contender_groups(blocks["krr"]["methods"], Q["sampler"])
        assert [dict(g) for g in krr] == [{"nystrom_lla": "uniform", "nystrom_colnorm": "column_norm",
                                          "nystrom_rls": "ridge_leverage", "nystrom_kmeans": "kmeans"}]
    # the exact method is the yardstick of "Which approximation?", and cross-validation is its own question
    for block in blocks.values():
        for g in findings.contender_groups(block["methods"], Q["approximation"]):
            assert not {"exact", "cv"} & {v for _, v in g}


def test_renaming_every_label_finds_the_same_contenders():
    blocks = _blocks("config.yaml")
    for study, block in blocks.items():
        renamed = {f"zz_{lab}_renamed": m for lab, m in block["methods"].items()}
        for q in QUESTIONS:
            before = findings.contender_groups(block["methods"], q)
            after = findings.contender_groups(renamed, q)
            assert [[(f"zz_{n}_renamed", v) for n, v in g] for g in before] == after, (study, q["id"])


# -- a small run: answers of several studies, the guide, every reader ---------------------------
def _info(study, methods, metrics, coords=(), primary=None):
    return {"study": study, "kind": study, "title": study.title(), "description": "?", "metrics": metrics,
            "tested_metrics": list(metrics), "primary_metric": primary or next(iter(metrics)), "coords": list(coords),
            "block_cols": ["dataset", "kernel", "seed"], "methods": list(methods), "summary_coords": None,
            "config": {"methods": methods, "kernels": {"g": {"kernel": "gaussian"}}}}


def _run(labels=None):
    """Result tables and infos of a regression study (exact vs two Nystrom modes), a classification study
    (three samplers and exact) and a timing study (four solvers), with ``labels`` renaming the methods."""
    rng = np.random.default_rng(5)
    L = labels or {}

    def lab(x):
        return L.get(x, x)

    reg = {lab("exact"): {"approximation": "exact"},
           lab("ny_gsa"): {"approximation": "nystrom", "sampler": "uniform", "n_components": 100, "mode": "gsa"},
           lab("ny_lla"): {"approximation": "nystrom", "sampler": "uniform", "n_components": 100, "mode": "lla"}}
    clf = {lab("exact"): {"approximation": "exact"},
           **{lab(f"ny_{s}"): {"approximation": "nystrom", "sampler": s, "n_components": 100, "mode": "lla"}
              for s in ("uniform", "kmeans", "ridge_leverage")}}
    sol = {lab("d64"): {"solver": "direct"}, lab("d32"): {"solver": "direct", "dtype": "float32"},
           lab("cg64"): {"solver": "cg", "cg_tol": 1e-4}, lab("cg32"): {"solver": "cg", "cg_tol": 1e-4, "dtype": "float32"}}
    shift = {"exact": 0.0, "ny_gsa": 0.3, "ny_lla": 0.02, "ny_uniform": 0.0, "ny_kmeans": 0.03,
             "ny_ridge_leverage": 0.01, "d64": 1.0, "d32": 0.6, "cg64": 1.0, "cg32": 0.98}
    tables = {}
    for study, methods, metric, lower in (("reg", reg, "test_mse", True), ("clf", clf, "test_accuracy", False),
                                          ("sol", sol, "fit_time", True)):
        rows = []
        inv = {v: k for k, v in L.items()}
        for d in range(5):
            for s in range(4):
                base = rng.uniform(0.5, 1.0)
                for m in methods:
                    eff = shift[inv.get(m, m)]
                    v = base * (1 + eff) if lower else base * (1 + eff) / 2
                    rows.append({"dataset": f"set{d}", "kernel": "g", "seed": s, "method": m,
                                 metric: v * (1 + 0.003 * rng.standard_normal())})
        tables[study] = pd.DataFrame(rows)
    infos = {"reg": _info("reg", reg, {"test_mse": ["Test MSE", True]}),
             "clf": _info("clf", clf, {"test_accuracy": ["Test accuracy", False]}),
             "sol": _info("sol", sol, {"fit_time": ["Fit time (s)", True]})}
    records = [r for s in tables for r in findings.study_answers(tables[s], infos[s])]
    return tables, infos, records


def test_study_answers_by_role_and_the_guide_they_give():
    tables, infos, records = _run()
    asked = {(r["study"], r["question"]) for r in records}
    assert asked == {("reg", "exact"), ("reg", "mode"), ("clf", "exact"), ("clf", "sampler"), ("sol", "solver")}
    mode = next(r for r in records if r["question"] == "mode")
    assert mode["best"] == "ny_lla" and mode["winner"] == "ny_lla" and mode["contenders"][0]["value"] == "lla"
    assert json.loads(json.dumps(records, default=findings._jsonable))  # JSON as written
    guide = {r["task"] + " " + r["n"]: r for r in findings.findings(records, pd.DataFrame(), infos)["guide"]}
    assert guide["regression up to ~10^4"]["use"] == "exact KRR"  # exact beats LLA by 2%
    assert guide["regression 10^5 and more"]["use"] == "solver/precision: d32 (direct/float32)"
    assert guide["regression 10^5 and more"]["call"] == 'KRR(n_components=m, solver="direct", dtype="float32")'
    assert guide["classification any"]["use"].startswith("Nystrom, kmeans landmarks")


def test_renaming_labels_keeps_every_guide_row_and_answer():
    labels = {"exact": "the_exact_one", "ny_lla": "lla_renamed", "ny_gsa": "X", "ny_kmeans": "km2",
              "d64": "solver_a", "d32": "solver_b", "cg64": "solver_c", "cg32": "solver_d"}
    _, infos, records = _run()
    _, infos2, records2 = _run(labels)
    g1 = findings.findings(records, pd.DataFrame(), infos)["guide"]
    g2 = findings.findings(records2, pd.DataFrame(), infos2)["guide"]
    assert [(r["task"], r["n"], r["call"]) for r in g1] == [(r["task"], r["n"], r["call"]) for r in g2]
    assert len(records) == len(records2) and len(g1) >= 3


def _ledger(study_ids):
    from nystrom_bench import papers

    rows = []
    for c in papers.all_claims():
        if c["id"] in study_ids:
            rows.append({"paper": c["paper"], "claim_id": c["id"], "claim": c["claim"], "where": c["where"],
                         "paper_value": "x", "ours": "b = -0.4", "test": "t", "p_value": np.nan,
                         "effect": "", "verdict": "reproduced", "evidence": "e",
                         "study": c["study"] if isinstance(c["study"], str) else c["study"][0], "question": ""})
    from nystrom_bench.claims import COLUMNS

    return pd.DataFrame(rows, columns=COLUMNS)


def test_every_question_has_an_answer_in_markdown(tmp_path):
    """No empty answer: a question answered by claims only lists them (they were dropped once), one that
    nothing answers says so; the README snapshot refuses an empty answer."""
    from nystrom_bench import papers

    slope = [c["id"] for c in papers.all_claims() if c.get("rule") == "slope_below"][:2]
    _, infos, records = _run()
    # two blocks of kinds with questions of their own, neither with results: their questions are asked
    own = {k: {"questions": list(studies.get(k).questions)} for k in ("consistency", "selection")}
    ledger = _ledger(slope)
    assert "Approximate or cross-validated" not in findings.markdown(findings.findings(records, ledger, infos),
                                                                      ledger, "run of today")
    found = findings.findings(records, ledger, {**infos, **own})
    md = findings.markdown(found, ledger, "run of today")
    assert findings.empty_answers(md) == []
    assert md.index(Q["mode"]["question"]) < md.index(Q["selection"]["question"]) < md.index(Q["solver"]["question"])
    consistency = md.split(f"**{Q['consistency']['question']}**", 1)[1].split("**", 1)[0]
    assert "2 claim(s) answer it: 2 reproduced." in consistency
    section = md.split(findings.ANSWERS_HEADING, 1)[1]
    assert section.count("- Claim (") == 2
    assert "Not answered by this run" in md.split(f"**{Q['selection']['question']}**", 1)[1].split("\n")[0]
    (tmp_path / "F.md").write_text(md)
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{findings.SNAPSHOT_START}\nold\n{findings.SNAPSHOT_END}\nrest\n")
    findings.snapshot_readme(tmp_path / "F.md", readme)
    text = readme.read_text()
    assert "old" not in text and "### Answers" in text and "## All claims" not in text and text.endswith("rest\n")
    assert "2 claim(s) answer it" in text and "| reg | Test MSE |" in text
    others = "".join(f"**{q['question']}** an answer.\n\n" for q in QUESTIONS if q["id"] != "consistency")
    empty = f"# Findings\n\n{findings.ANSWERS_HEADING}\n\n{others}**{Q['consistency']['question']}**\n\n## Guide\n"
    assert findings.empty_answers(empty) == [Q["consistency"]["question"]]
    (tmp_path / "E.md").write_text(empty)
    with pytest.raises(ValueError, match="no answer under How fast"):
        findings.snapshot_readme(tmp_path / "E.md", readme)
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        findings.snapshot_readme(tmp_path / "F.md", readme)


def test_markdown_escapes_pipes_and_the_pdf_keeps_them(tmp_path):
    ledger = pd.DataFrame([{"paper": "P (2020)", "claim_id": "c", "claim": "|C(K) - C(K~)| shrinks",
                            "where": "Table 1", "paper_value": "yes", "ours": "-3% vs B", "test": "Wilcoxon",
                            "p_value": 0.01, "effect": "-3%", "verdict": "reproduced", "evidence": "e", "study": "s",
                            "question": ""}])
    found = {"counts": {"reproduced": 1}, "answers": [], "guide": []}
    md = findings.markdown(found, ledger, "run")
    assert "\\|C(K) - C(K~)\\| shrinks" in md and "/C(K)" not in md
    row = next(ln for ln in md.splitlines() if "shrinks" in ln)
    assert len(row.replace("\\|", "").split("|")) == 8  # the escaped pipes split no cell
    from pypdf import PdfReader

    from nystrom_bench.report import PDF

    doc = PDF("t")
    doc.table(ledger[["claim", "verdict"]])
    doc.save(tmp_path / "t.pdf")
    assert "|C(K) - C(K~)| shrinks" in PdfReader(tmp_path / "t.pdf").pages[0].extract_text()


def test_every_reader_renders_the_same_record(tmp_path):
    """One computation per answer: the study PDF's page one, the summary PDF's pages 1-2, FINDINGS.md,
    results/answers.csv and the MLflow note show the ranking the record holds."""
    from pypdf import PdfReader

    tables, infos, records = _run()
    paths = []
    for s in tables:
        tables[s].to_csv(tmp_path / f"{s}.csv", index=False)
        findings.write_answers([r for r in records if r["study"] == s], tmp_path / f"{s}.json")
        paths.append(tmp_path / f"{s}.json")
    ledger = _ledger([])
    ledger.to_csv(tmp_path / "claims.csv", index=False)
    found = findings.summary_pdf(tmp_path / "claims.csv", paths, {s: tmp_path / f"{s}.csv" for s in tables}, infos,
                                 "toy", tmp_path / "summary.pdf", findings_md=tmp_path / "F.md",
                                 answers_csv=tmp_path / "answers.csv")
    sampler = next(r for r in records if r["question"] == "sampler")
    ranking = findings._ranking_text(sampler)
    pages = [p.extract_text() for p in PdfReader(tmp_path / "summary.pdf").pages]
    first_two = " ".join(pages[:2]).replace("\n", " ")
    assert "Which landmark sampler?" in first_two and "Practitioner's guide" in first_two
    assert ranking.split(",")[0] in first_two and "Appendix" not in first_two
    from nystrom_bench.report import P_PER_PAGE

    assert max(p.count("p = ") for p in pages) <= P_PER_PAGE and "p = " not in first_two  # the tests: appendix B
    assert ranking in (tmp_path / "F.md").read_text()
    csv = pd.read_csv(tmp_path / "answers.csv")
    assert ranking in set(csv[findings.RANK_COL])
    note = findings.study_note(infos["clf"], None, "clf.pdf", answers=[r for r in records if r["study"] == "clf"])
    assert ranking in note and found["answers"][0]["records"]
    lines = findings.answer_lines([r for r in records if r["study"] == "clf"])
    assert [a["question"] for a in lines] == [Q["sampler"]["question"], Q["exact"]["question"]]
    assert findings.answer_text(sampler) in lines[0]["lines"]


def test_the_ranking_words_count_data_sets_as_data_sets_when_kernels_split_them():
    """The samplers study ranks over 38 (data set, kernel width) groups of 20 data sets: never "38 data sets"."""
    from nystrom_bench import findings as fnd

    split = fnd._over({"groups": ["dataset", "kernel"], "n_groups": 38, "n_datasets": 20})
    assert "38 data sets" not in split and "38 (data set and kernel) groups of 20 data sets" in split
    one_kernel = fnd._over({"groups": ["dataset", "kernel"], "n_groups": 5, "n_datasets": 5})
    assert one_kernel.endswith("then over the 5 data sets")


def test_headline_of_a_ledger_with_no_tested_claim(tmp_path):
    """Every claim not testable (a small run: too few blocks to decide), read back from CSV where the empty test
    column is all NaN: no headline claim, no error (the cluster test's tiny run hit it)."""
    from nystrom_bench import claims

    ledger = pd.DataFrame([{c: "" for c in claims.COLUMNS} | {"paper": "P", "claim_id": f"c{i}", "verdict":
                                                              "not testable", "p_value": float("nan")}
                           for i in range(3)])
    path = tmp_path / "claims.csv"
    ledger.to_csv(path, index=False)
    back = pd.read_csv(path)
    assert back["test"].dtype == float  # the case: an all-empty column reads back as NaN floats
    assert findings.headline(back).empty
