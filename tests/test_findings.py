"""Findings: rankings, the landmark budget rule, Markdown and the README snapshot, on synthetic results."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from nystrom_bench import findings

INFO = {"metrics": {"acc": ["Accuracy", False]}, "coords": ["ratio"], "block_cols": ["dataset", "kernel", "seed"]}


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


def test_rank_methods_matches_scipy():
    df = _frame({0.1: 0.0})
    r = findings.rank_methods(df, "acc", False, ["uniform", "kmeans"], blocks=["dataset", "kernel", "seed", "ratio"])
    wide = df.pivot_table(index=["dataset", "seed"], columns="method", values="acc")
    assert r["best"] == "kmeans" and r["order"] == ["kmeans", "uniform"]
    assert r["p"] == pytest.approx(sps.wilcoxon(wide["kmeans"] - wide["uniform"]).pvalue)
    assert r["wins"] == 20 and r["n_pairs"] == 20


def test_smallest_budget_picks_the_first_ratio_within_tolerance():
    df = _frame({0.01: -0.05, 0.03: -0.005, 0.1: 0.0})
    r = findings.smallest_budget(df, INFO, "acc", "ratio")
    assert r["value"] == pytest.approx(0.03) and r["largest"] == pytest.approx(0.1)
    assert "0.01 n: worse" in r["evidence"] and "0.03 n: within 1%" in r["evidence"]
    assert findings.smallest_budget(_frame({0.1: 0.0}), INFO, "acc", "ratio") is None


def test_markdown_and_readme_snapshot(tmp_path):
    ledger = pd.DataFrame([{"paper": "P (2020)", "claim_id": "c", "claim": "A beats B", "where": "Table 1",
                            "paper_value": "yes", "ours": "-3% vs B", "test": "Wilcoxon", "p_value": 0.01,
                            "effect": "-3%", "verdict": "reproduced", "evidence": "e", "study": "s", "question": ""}])
    found = {"counts": {"reproduced": 1}, "answers": [{"id": "q", "question": "Which?", "lines": ["s: A first."]}],
             "guide": [{"task": "t", "n": "any", "budget": "b", "use": "A", "evidence": "e", "call": "KRR()"}]}
    md = findings.markdown(found, ledger, "run of today")
    assert md.startswith("# Findings") and "| P (2020) | 1 | 1 |" in md and "`KRR()`" in md
    assert md.index(findings.SNAPSHOT_CUT) < md.index("## All claims")
    (tmp_path / "F.md").write_text(md)
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{findings.SNAPSHOT_START}\nold\n{findings.SNAPSHOT_END}\nrest\n")
    findings.snapshot_readme(tmp_path / "F.md", readme)
    text = readme.read_text()
    assert "old" not in text and "### Answers" in text and "## All claims" not in text and text.endswith("rest\n")
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        findings.snapshot_readme(tmp_path / "F.md", readme)


@pytest.mark.parametrize("cg_speedup,use,call", [
    (0.5, "solver/precision: cg", 'KRR(n_components=m, solver="cg")'),  # clearly faster: named
    (0.0, "the default solver='auto'", "KRR(n_components=m)"),          # a tie: the default, not a coin toss
])
def test_guide_names_a_solver_only_where_it_is_significantly_faster(cg_speedup, use, call):
    rng = np.random.default_rng(1)
    rows = []
    for ds in ("d1", "d2"):
        for s in range(8):
            for n in (1000, 4000):
                for method in ("direct", "direct_f32", "cg", "cg_f32"):
                    t = n / 1000 * (1 - cg_speedup * method.startswith("cg")) * (1 + 0.05 * rng.standard_normal())
                    rows.append({"dataset": ds, "kernel": "g", "seed": s, "n": n, "m": 100, "method": method,
                                 "fit_time": t})
    info = {"metrics": {"fit_time": ["Fit time (s)", True]}, "coords": ["n", "m"],
            "block_cols": ["dataset", "kernel", "seed"]}
    row = next(r for r in findings._guide({"scale": pd.DataFrame(rows)}, {"scale": info}) if r["budget"] == "time")
    assert row["use"].startswith(use) and row["call"] == call
