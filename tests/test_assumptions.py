"""Rows measured outside their method's assumptions (issue 34, item 5): flagged in the result files,
shown apart in tables and figures, left out of means and tests, logged apart in MLflow."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import approx, data, kernels, report, results, stats, studies, tracking

CONS = {"kind": "consistency", "seeds": [0], "scaling": "standardize", "kernels": {"gaussian": {"kernel": "gaussian"}},
        "split": {"test_fraction": 0.5}}


def _run(block, dataset, study="consistency"):
    X, y = data.obtain(dataset)
    kind = studies.get(block["kind"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # MCM's own H4 and c_ree warnings
        rows = kind.run(study, block, dataset, X, y, {}, None)
    return results.frame(study, rows, kind.coords)


# -- the flag ---------------------------------------------------------------------------------------
def test_mcm_on_random_data_that_are_no_grid_is_flagged():
    X = np.random.default_rng(0).normal(size=(120, 3))
    with pytest.warns(UserWarning, match="H4"):
        op = approx.build("mcm", X, kernels.make("gaussian", gamma=0.5), levels=3)
    reason = op.assumption()
    assert reason.startswith("MCM off its grid: H4 misfit") and f"> {approx.MCM_MISFIT_WARN}" in reason
    # through a study: the method's record carries it, the result file has it in its own column
    df = _run({**CONS, "methods": {"mcm": {"approximation": "mcm", "levels": 3}, "uniform": {"sampler": "uniform"}},
               "params": {"log2_gammas": [-6, 0], "criteria": ["c_ree"]}}, "bupa")
    assert "assumption" in df and "assumption" not in json.loads(df["params"].iloc[0])
    mcm, others = df[df["method"] == "mcm"], df[df["method"] != "mcm"]
    assert mcm["assumption"].str.startswith("MCM off its grid: H4 misfit 0.6").all()
    # bupa at 2^-6: U_m + mu l I is indefinite too (min eigenvalue -6.7 < -mu l = -0.86)
    assert "indefinite operator: min eigenvalue" in mcm.set_index("log2_gamma").loc[-6, "assumption"]
    assert (others["assumption"] == "").all()
    assert results.outside_assumptions(df).tolist() == (df["method"] == "mcm").tolist()


def test_mcm_on_its_data_sets_own_grid_is_not_flagged_where_u_plus_mu_l_is_positive_definite():
    """consistency_mcm: each grid data set's own grid (H4 exactly); wide kernels make U_m + mu l I
    indefinite even there (min eigenvalue -17 at 2^0 on 10 x 10), and only those rows are flagged."""
    block = {**CONS, "datasets": ["mcm_grid_10"], "scaling": "none", "split": {"test_fraction": 0},
             "methods": {"mcm": {"approximation": "mcm"}}, "params": {"log2_gammas": [0, 4, 6, 8], "criteria": ["c_ipe"]}}
    df = _run(block, "mcm_grid_10", "consistency_mcm").set_index("log2_gamma")
    assert (df.loc[[4, 6, 8], "assumption"] == "").all()
    assert df.loc[0, "assumption"].startswith("indefinite operator: min eigenvalue -17 <= -mu l = -0.5")
    assert "H4" not in df.loc[0, "assumption"]


def test_selection_on_mcm_is_flagged_over_its_whole_grid():
    methods = {"accurate": {"approximation": "exact"}, "mcm": {"approximation": "mcm", "levels": 3}}
    df = _run({**CONS, "kind": "selection", "methods": methods, "params": {"log2_gammas": [-6, -2, 0]}}, "bupa",
              "selection")
    mcm = df[df["method"] == "mcm"]["assumption"]
    assert mcm.str.contains("MCM off its grid").all()
    assert mcm.str.contains("indefinite operator: at 1 of 3 widths").all()
    assert (df[df["method"] == "accurate"]["assumption"] == "").all()


# -- the helpers every consumer uses ------------------------------------------------------------------
def _toy(n_sets=4, flagged_sets=3):
    """Three methods on n_sets data sets x 3 seeds; mcm is outside its assumptions (gap 1e4) on the first
    flagged_sets data sets."""
    rng = np.random.default_rng(0)
    rows = []
    for d in range(n_sets):
        for seed in range(3):
            for method, level in (("exact", 1.0), ("uniform", 1.2), ("mcm", 1.1)):
                out = method == "mcm" and d < flagged_sets
                rows.append({"study": "toy", "dataset": f"set{d}", "method": method, "kernel": "g", "seed": seed,
                             "gap": 1e4 if out else level + 0.01 * rng.normal(),
                             "assumption": "MCM off its grid: H4 misfit 0.62 > 0.3" if out else "",
                             "params": json.dumps({"n_train": 80, "n_test": 20, "n_features": 4})})
    return pd.DataFrame(rows)


def test_within_assumptions_splits_and_counts(tmp_path):
    df = _toy()
    kept, n_out, reasons = results.within_assumptions(df)
    assert n_out == 9 and len(kept) == len(df) - 9 and reasons == {"MCM off its grid": 9}
    assert not results.outside_assumptions(kept).any()
    s = results.assumption_summary(df).iloc[0]
    assert (s["method"], s["rows_out"], s["rows"], s["datasets_out"], s["datasets"]) == ("mcm", 9, 12, 3, 4)
    assert results.assumption_label("MCM off its grid: H4 misfit 0.6; indefinite operator: min -3") == \
        "MCM off its grid; indefinite operator"
    # a file read back: empty cells are "", a table without the column (older files) has nothing outside
    df.to_csv(tmp_path / "r.csv", index=False)
    back = results.read_results(tmp_path / "r.csv")
    assert back["assumption"].tolist() == df["assumption"].tolist()
    assert not results.outside_assumptions(df.drop(columns="assumption")).any()
    assert results.within_assumptions(pd.read_csv(tmp_path / "r.csv"))[1] == 9  # NaN cells: within


def test_means_table_leaves_flagged_rows_out_and_counts_them():
    t = report.mean_sd_table(_toy(), "gap", order=["exact", "uniform", "mcm"])
    assert list(t.columns) == ["dataset", "exact", "uniform", "mcm", "mcm (outside assumptions)"]
    rows = t.set_index("dataset")
    assert rows.loc["set0", "mcm"] == "n/a" and rows.loc["set3", "mcm"].startswith("1.09")  # 1e4 not averaged in
    assert rows.loc["set0", "mcm (outside assumptions)"] == "10000 +- 0"
    assert rows.loc["set3", "mcm (outside assumptions)"] == "n/a"
    assert "mcm 9 of 12 results on 3 of 4 data sets (MCM off its grid)" in t.attrs["footnote"]
    # every row outside: no plain column at all
    t = report.mean_sd_table(_toy(flagged_sets=4), "gap", order=["exact", "uniform", "mcm"])
    assert list(t.columns) == ["dataset", "exact", "uniform", "mcm (outside assumptions)"]
    assert report.mean_sd_table(_toy(flagged_sets=0), "gap").attrs["footnote"] == ""


def test_tested_rows_drop_flagged_rows_so_no_test_or_cd_ranks_them(tmp_path):
    df = _toy(n_sets=5, flagged_sets=5)
    for kind in ("consistency", "selection", "integration", None):  # integration overrides tested_rows
        tested = studies.section(kind).tested_rows(df.assign(integration="gsa"))
        assert "mcm" not in set(tested["method"]) and len(tested) == 30
    df.to_csv(tmp_path / "r.csv", index=False)
    info = {"metrics": {"gap": ["gap", True]}, "reference": "exact", "coords": [], "methods": ["exact", "uniform", "mcm"],
            "block_cols": ["dataset", "kernel", "seed"]}
    p = {k: tmp_path / f"{k}.csv" for k in ("paired", "friedman", "wtl", "cd")}
    stats.run_study_stats(tmp_path / "r.csv", info, p["paired"], p["friedman"],
                          tested_rows=studies.section("consistency").tested_rows, out_wtl=p["wtl"], out_cd=p["cd"])
    assert set(pd.read_csv(p["paired"])["method"]) == {"uniform"}
    assert "mcm" not in {*pd.read_csv(p["wtl"])["method"], *pd.read_csv(p["wtl"])["versus"]}


def test_sections_show_flagged_rows_as_their_own_marked_row():
    from nystrom_bench.studies.consistency import section as consistency
    from nystrom_bench.studies.selection import section as selection

    rows = []
    for ds in ("a", "b"):
        for method in ("original", "uniform", "mcm"):
            for g in (-2, 0, 2):
                exact = 1.0 + g / 10
                approx_ = {"original": exact, "uniform": exact * 1.01, "mcm": exact * 3e4}[method]
                rows.append({"dataset": ds, "method": method, "kernel": "g", "seed": 0, "criterion": "c_ipe",
                             "log2_gamma": g, "criterion_approx": approx_, "criterion_exact": exact,
                             "relative_gap": abs(approx_ - exact) / exact, "seconds": 0.01,
                             "assumption": "MCM off its grid: H4 misfit 0.7 > 0.3" if method == "mcm" and ds == "a"
                             else ""})
    df = pd.DataFrame(rows)
    methods = {"original": {"approximation": "exact"}, "uniform": {}, "mcm": {"approximation": "mcm"}}
    t = consistency.method_summary(df, methods)
    assert t["method"].tolist() == ["original", "uniform", "mcm", "mcm (outside assumptions: 1 of 2 data sets)"]
    assert float(t.iloc[2]["mean gap"]) == pytest.approx(3e4 - 1, rel=1e-3)  # data set b only
    # selection: the paper's layout marks the cell, the Wilcoxon test leaves the method out
    sel = pd.DataFrame([{"dataset": ds, "method": m, "kernel": "g", "seed": s, "criterion": "c_ree",
                         "test_mse": {"accurate": 1.0, "mcm": 2.0}[m] + 0.1 * s, "selection_seconds": 0.1,
                         "assumption": "MCM off its grid: H4 misfit 0.7 > 0.3" if m == "mcm" else ""}
                        for ds in ("x", "y", "z") for m in ("accurate", "mcm") for s in range(2)])
    layout = selection.paper_layout(sel, "c_ree", ["accurate", "mcm"])
    assert layout["mcm error"].str.startswith("outside: 2.05").all()
    w = selection.wilcoxon_over_datasets(sel, "accurate")
    assert w["method"].tolist() == ["mcm (outside assumptions: 3 of 3 data sets)"]
    assert w.iloc[0]["Wilcoxon p"] == "not tested"


def test_figures_draw_the_flagged_line_apart_without_flattening_the_others(monkeypatch, tmp_path):
    plt = report.pyplot()
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    df = _toy(n_sets=1, flagged_sets=1)
    df = pd.concat([df.assign(log2_gamma=g, gap=df["gap"] * (1 + g / 10)) for g in (-2, 0, 2)], ignore_index=True)
    info = {"metrics": {"gap": ["gap", True]}, "coords": ["log2_gamma"], "methods": ["exact", "uniform", "mcm"]}
    report.coord_figure(df, info, "gap", "log2_gamma", tmp_path / "f.png")
    ax = figs[0].axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert lines["mcm (outside assumptions)"].get_linestyle() == "--" and lines["exact"].get_linestyle() == "-"
    assert ax.get_ylim()[1] < 10  # the others' range (about 1 to 1.5), not the flagged 1e4
    report.metric_figure(df[df["log2_gamma"] == 0], info, "gap", tmp_path / "b.png")
    ax = figs[1].axes[0]
    assert "mcm (outside assumptions)" in [t.get_text() for t in ax.get_xticklabels()] and ax.get_ylim()[1] < 10


# -- MLflow ---------------------------------------------------------------------------------------------
def test_tracking_logs_flagged_rows_under_their_own_key_and_tags_the_run(tmp_path, mlflow_uri):
    from mlflow.tracking import MlflowClient

    uri = mlflow_uri
    coords = ("criterion", "log2_gamma")
    rows = [{"dataset": "bupa", "method": m, "kernel": "gaussian", "seed": 0,
             "coords": {"criterion": "c_ipe", "log2_gamma": g}, "params": {"gamma": 2.0**g},
             "metrics": {"relative_gap": 5e4 if m == "mcm" and g < 2 else 0.1 * (g + 3)}}
            for m in ("uniform", "mcm") for g in (-2, 0, 2)]
    for r in rows:
        if r["method"] == "mcm" and r["coords"]["log2_gamma"] < 2:
            r["params"]["assumption"] = "indefinite operator: min eigenvalue -17 <= -mu l = -0.5"
    table = results.frame("cons", rows, coords)
    table.to_csv(tmp_path / "r.csv", index=False)
    from_file = tracking.rows_from_frame(results.read_results(tmp_path / "r.csv"), coords)
    uniform_id, mcm_id = tracking.log_job("cons", "cons/bupa", from_file, tracking_uri=uri, coords=coords)
    client = MlflowClient(tracking_uri=uri)

    def history(rid, key):
        return [(m.step, m.value) for m in sorted(client.get_metric_history(rid, key), key=lambda m: m.step)]

    key = "criterion:c_ipe/relative_gap"
    # steps are the coord's value where its values are integers (log2_gamma -2, 0, 2)
    assert history(mcm_id, key) == [(2, pytest.approx(0.5))]  # the chart of relative_gap: no 5e4
    assert history(mcm_id, key + "_outside_assumptions") == [(-2, 5e4), (0, 5e4)]
    assert len(history(uniform_id, key)) == 3 and not history(uniform_id, key + "_outside_assumptions")
    tags = client.get_run(mcm_id).data.tags
    assert tags["assumption"] == "2 of 3 results: indefinite operator"
    assert "assumption" not in client.get_run(uniform_id).data.tags
    # reading back gives the result table, flags included
    back = tracking.results_from_mlflow("cons", uri)
    keys = [*results.ID_COLS, *coords]
    want = results.read_results(tmp_path / "r.csv").sort_values(keys).reset_index(drop=True)
    assert list(back.columns) == list(want.columns)
    pd.testing.assert_frame_equal(back.drop(columns="params"), want.drop(columns="params"), check_dtype=False)


def test_study_pdf_counts_the_flagged_rows_and_tests_without_them(tmp_path):
    from pypdf import PdfReader

    df = _toy(n_sets=5, flagged_sets=4)
    df.to_csv(tmp_path / "results.csv", index=False)
    info = {"kind": "toy", "study": "toy", "title": "Toy study", "description": "Which approximation?",
            "metrics": {"gap": ["Relative gap", True]}, "tested_metrics": ["gap"], "primary_metric": "gap",
            "reference": "exact", "coords": [], "summary_coords": None, "block_cols": ["dataset", "kernel", "seed"],
            "methods": ["exact", "uniform", "mcm"], "config_hash": "0",
            "config": {"methods": {"exact": {}, "uniform": {}, "mcm": {}}, "kernels": {"g": {"kernel": "gaussian"}}}}
    p = {k: tmp_path / f"{k}.csv" for k in ("stats", "friedman", "wtl", "cd")}
    stats.run_study_stats(tmp_path / "results.csv", info, p["stats"], p["friedman"],
                          tested_rows=studies.section("toy").tested_rows, out_wtl=p["wtl"], out_cd=p["cd"])
    assert set(pd.read_csv(p["stats"])["n_pairs"]) == {15, 3}  # uniform on every block, mcm on set4's only
    report.study_figures(tmp_path / "results.csv", info, tmp_path / "figures", cd_csv=p["cd"])
    report.study_pdf(tmp_path / "results.csv", p["stats"], p["friedman"], tmp_path / "figures", info,
                     tmp_path / "toy.pdf", wtl_csv=p["wtl"], cd_csv=p["cd"])
    text = " ".join(" ".join(pg.extract_text().split()) for pg in PdfReader(tmp_path / "toy.pdf").pages)
    assert "mcm (outside assumptions)" in text
    assert "mcm 12 of 15 results on 4 of 5 data sets (MCM off its grid)" in text
