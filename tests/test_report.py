import pandas as pd

from nystrom_bench import report

INFO = {"metrics": {"mse": ["Test MSE", True]}, "reference": "exact"}


def test_mean_sd_table():
    df = pd.DataFrame({"dataset": ["a"] * 4, "kernel": ["g"] * 4, "seed": [0, 1, 0, 1],
                       "method": ["exact", "exact", "ny", "ny"], "mse": [1.0, 3.0, 2.0, 2.0]})
    t = report.mean_sd_table(df, "mse")
    assert list(t.columns) == ["dataset", "exact", "ny"]
    assert t.iloc[0]["exact"] == "2.0 +- 1.4" and t.iloc[0]["ny"] == "2 +- 0"


def test_numbers_are_formatted_for_people():
    assert report.fmt_mean_sd(34.13, 2.287) == "34.1 +- 2.3"
    assert report.fmt_mean_sd(0.004077, 0.000608) == "0.00408 +- 0.00061"
    assert report.fmt_mean_sd(150.0, 12.0) == "150 +- 12"
    assert report._fmt_p(2.3e-10) == "2e-10" and report._fmt_p(0.041) == "0.041"
    assert report.fmt_num(2.08333333333333) == "2.08" and report.fmt_num(1234567.0) == "1.23e6"
    assert report._fmt_ranks('{"b": 2.4375, "a": 1.5625}') == "a 1.56, b 2.44"


def _study(tmp_path, n_sets=5):
    """A toy study on disk: results, the stats stage's tables, figures; returns (paths, info)."""
    import json

    import numpy as np

    from nystrom_bench import stats

    rng = np.random.default_rng(0)
    rows = []
    for d in range(n_sets):
        for seed in range(3):
            for m in (10, 20):
                base = rng.uniform(1, 2)
                for method, shift in (("exact", 0.0), ("ny_a", 0.3), ("ny_b", 0.02)):
                    rows.append({"study": "toy", "dataset": f"set{d}", "method": method, "kernel": "g", "seed": seed,
                                 "m": m, "params": json.dumps({"n_train": 80, "n_test": 20, "n_features": 4}),
                                 "mse": base + shift + 0.01 * rng.normal()})
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    info = {"kind": "toy", "study": "toy", "title": "Toy study", "description": "Does Nystrom lose accuracy?",
            "metrics": {"mse": ["Test MSE", True]}, "tested_metrics": ["mse"], "primary_metric": "mse",
            "reference": "exact", "coords": ["m"], "summary_coords": None, "block_cols": ["dataset", "kernel", "seed"],
            "methods": ["exact", "ny_a", "ny_b"], "config_hash": "0",
            "config": {"methods": {"exact": {}, "ny_a": {}, "ny_b": {}}, "kernels": {"g": {"kernel": "gaussian"}}}}
    p = {k: tmp_path / f"{k}.csv" for k in ("stats", "friedman", "wtl", "cd")}
    stats.run_study_stats(tmp_path / "results.csv", info, p["stats"], p["friedman"], out_wtl=p["wtl"], out_cd=p["cd"])
    report.study_figures(tmp_path / "results.csv", info, tmp_path / "figures", cd_csv=p["cd"],
                         paper_curve=lambda *a: None, extra_figures=lambda df, info, out: [])
    return p, info


def _pages(pdf):
    from pypdf import PdfReader

    return [p.extract_text() for p in PdfReader(pdf).pages]


def test_study_pdf_opens_with_question_claims_and_answer(tmp_path):
    p, info = _study(tmp_path)
    assert (tmp_path / "figures" / "cd_mse.png").exists()
    claims = pd.DataFrame([{"paper": "Somebody et al. (X 2020)", "claim_id": "s1", "claim": "Nystrom is as accurate",
                            "where": "Table 1", "paper_value": "0.5", "ours": "0.52", "test": "Wilcoxon",
                            "p_value": 0.3, "effect": 1.01, "verdict": "partly reproduced", "evidence": "ratio 1.01"},
                           {"paper": "Somebody et al. (X 2020)", "claim_id": "s2", "claim": "On usps, ...",
                            "verdict": "not testable", "evidence": "usps is not in this run's results"}])
    claims.to_csv(tmp_path / "claims.csv", index=False)
    paper = [("Table 1 as in the paper", pd.DataFrame({"x": [1]}), None)]
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "toy.pdf", report_tables=lambda df, cfg: paper,
                     claims_csv=tmp_path / "claims.csv", wtl_csv=p["wtl"], cd_csv=p["cd"])
    pages = _pages(tmp_path / "toy.pdf")
    first = pages[0]
    for text in ("Question", "Does Nystrom lose accuracy?", "Set-up", "Claims tested", "Nystrom is as accurate",
                 "partly reproduced", "Not testable in this run (1", "Answer", "mean rank over 5 data sets", "Critical-difference diagram"):
        assert text in first, text
    body = "".join(pages)
    assert "Table 1 as in the paper" in body and "Which method wins" in body and "W/T/L" in body
    assert "Appendix A" in body and "git commit" in body and "Every pair of methods" in body
    assert "usps is not in this run's results" in body  # appendix D: each claim's evidence
    assert "Wilcoxon signed-rank p =" not in body  # no per-pair sentences
    # no ledger: page one says so; a missing or empty claims file is the same
    (tmp_path / "empty.csv").write_text("")
    for claims_csv in (None, tmp_path / "missing.csv", tmp_path / "empty.csv"):
        report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                         tmp_path / "toy2.pdf", claims_csv=claims_csv, wtl_csv=p["wtl"], cd_csv=p["cd"])
        assert "tests no paper claim" in _pages(tmp_path / "toy2.pdf")[0]


def test_cd_needs_four_data_sets(tmp_path):
    p, info = _study(tmp_path, n_sets=3)
    assert pd.read_csv(p["cd"]).empty
    assert not (tmp_path / "figures" / "cd_mse.png").exists()
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "toy.pdf", wtl_csv=p["wtl"], cd_csv=p["cd"])
    first = _pages(tmp_path / "toy.pdf")[0]
    assert "Answer" in first and "mean rank over" not in first and "Test MSE against m" in first
