"""The integration study kind (Li et al., geometric view): rows, tuning, recomputation, checks, report pieces."""

import json

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import data, integration, kernels, results, seeding, studies
from nystrom_bench.learners import KRR, NuSVM
from nystrom_bench.studies.integration import section as mod

METHODS = {"exact": {"approximation": "exact"}, "uniform": {"sampler": "uniform"}, "kmeans": {"sampler": "kmeans"}}
PARAMS = {"ratios": [0.05, 0.2], "gamma_scales": [0.5, 1.0], "nus": [0.1, 0.3], "alphas": [0.01, 0.1]}


def _block(**kw):
    return {"kind": "integration", "datasets": ["wine"], "seeds": [0], "scaling": "standardize",
            "kernels": {"gaussian": {"kernel": "gaussian"}}, "methods": METHODS, "params": PARAMS,
            "reference": "uniform", **kw}


def _run(block, dataset, study="integration"):
    X, y = data.obtain(dataset)
    splits = {s: data.make_split(dataset, s, len(X), y) for s in block["seeds"]}
    kind = studies.get("integration")
    return kind.run(study, block, dataset, X, y, splits, None)


def test_classification_rows_share_one_fit_and_recompute_from_the_public_api():
    rows = _run(_block(), "wine")
    assert len(rows) == 1 + 2 * 2 * 2  # exact + samplers x ratios x (gsa, lla)
    exact = [r for r in rows if r["method"] == "exact"][0]
    p = exact["params"]
    assert exact["coords"] == {"integration": "exact"} and p["learner"] == "NuSVM"
    assert p["candidates"] == 4 and p["nu"] in PARAMS["nus"] and p["gamma_scale"] in PARAMS["gamma_scales"]
    assert set(exact["metrics"]) == {"test_accuracy", "fit_time", "predict_time"}
    by = {(r["method"], r["coords"].get("ratio"), r["coords"]["integration"]): r for r in rows}
    for m in ("uniform", "kmeans"):
        for ratio in PARAMS["ratios"]:
            gsa, lla = by[(m, ratio, "gsa")], by[(m, ratio, "lla")]
            assert gsa["params"] == lla["params"] and gsa["params"]["n_components"] == round(ratio * p["n_train"])
            assert gsa["metrics"]["fit_time"] == lla["metrics"]["fit_time"]  # one training for both
            assert 0 < gsa["metrics"]["rel_error"] and 0 < lla["metrics"]["rel_error"] < 1.5
    # a row from the public API: the split, the tuned values, the trial's stream
    sp = data.load("wine", seed=0)
    ex = NuSVM(gamma=p["gamma"], nu=p["nu"], approximation="exact").fit(sp.X_train, sp.y_train)
    assert ex.score(sp.X_test, sp.y_test) == pytest.approx(exact["metrics"]["test_accuracy"])
    row = by[("kmeans", 0.2, "lla")]
    model = NuSVM(gamma=p["gamma"], nu=p["nu"], sampler="kmeans", n_components=row["params"]["n_components"],
                  random_state=seeding.rng(0, "integration", "wine")).fit(sp.X_train, sp.y_train)
    assert integration.approximation_error(ex, model, mode="lla") == pytest.approx(row["metrics"]["rel_error"],
                                                                                   rel=1e-9)
    assert model.score(sp.X_test, sp.y_test, mode="gsa") == pytest.approx(
        by[("kmeans", 0.2, "gsa")]["metrics"]["test_accuracy"])


@pytest.mark.parametrize("dataset", ["wine", "diabetes"])
def test_tuning_picks_the_best_validation_score_of_the_grid(dataset):
    """Brute force with the estimators: NuSVM accuracy (wine) or KRR R^2 of standardised targets (diabetes)."""
    from sklearn.model_selection import train_test_split

    rows = _run(_block(datasets=[dataset], methods={"exact": {"approximation": "exact"}}), dataset)
    p = rows[0]["params"]
    sp = data.load(dataset, seed=0)
    classify = dataset == "wine"
    y = sp.y_train if classify else (sp.y_train - sp.y_train.mean()) / sp.y_train.std()
    rng = seeding.rng(0, "integration", dataset, "validation")
    fit, val = train_test_split(np.arange(len(y)), test_size=0.2, random_state=int(rng.integers(2**31 - 1)),
                                stratify=y if classify else None)
    base = 1.0 / kernels.median_sq_dist(sp.X_train[fit])

    def model(s, h):
        return (NuSVM(gamma=s * base, nu=h, approximation="exact") if classify
                else KRR(fit_intercept=False, gamma=s * base, alpha=h, approximation="exact"))

    grid = PARAMS["nus"] if classify else PARAMS["alphas"]
    scores = {(s, h): model(s, h).fit(sp.X_train[fit], y[fit]).score(sp.X_train[val], y[val])
              for s in PARAMS["gamma_scales"] for h in grid}
    hyper = "nu" if classify else "alpha"
    assert p["validation_score"] == pytest.approx(max(scores.values()), rel=1e-9)
    assert scores[(p["gamma_scale"], p[hyper])] == pytest.approx(max(scores.values()), rel=1e-9)
    assert p["gamma"] == pytest.approx(p["gamma_scale"] * base) and p["candidates"] == len(scores)


def test_infeasible_nus_are_not_candidates():
    X, y = data.obtain("wine")
    keep = (y != 2) | (np.arange(len(y)) % 6 == 0)  # class 2 rare: nu = 0.5 infeasible for its pairs
    kind = studies.get("integration")
    block = _block(methods={"exact": {"approximation": "exact"}}, params={**PARAMS, "nus": [0.1, 0.9]})
    split = {0: data.make_split("wine", 0, int(keep.sum()), y[keep])}
    rows = kind.run("integration", block, "wine", X[keep], y[keep], split, None)
    assert rows[0]["params"]["nu"] == 0.1 and rows[0]["params"]["candidates"] == 2
    with pytest.raises(ValueError, match="every nu in params.nus is infeasible"):
        kind.run("integration", {**block, "params": {**PARAMS, "nus": [0.9]}}, "wine", X[keep], y[keep], split, None)


def test_regression_rows_gsa_lla_ncr_and_ncr_equals_lla():
    block = _block(datasets=["diabetes"], methods={"exact": {"approximation": "exact"},
                                                   "uniform": {"sampler": "uniform"}}, params={**PARAMS, "ratios": [0.1]})
    rows = _run(block, "diabetes")
    assert len(rows) == 1 + 3
    by = {r["coords"]["integration"]: r for r in rows}
    assert by["exact"]["params"]["learner"] == "KRR" and by["exact"]["params"]["alpha"] in PARAMS["alphas"]
    assert by["ncr"]["metrics"]["rel_error"] == pytest.approx(by["lla"]["metrics"]["rel_error"], rel=1e-6)
    assert by["ncr"]["metrics"]["test_mse"] == pytest.approx(by["lla"]["metrics"]["test_mse"], rel=1e-6)
    assert by["gsa"]["params"]["n_components"] == by["lla"]["params"]["n_components"] == round(0.1 * 309)
    # test MSE is in units of the training targets' variance
    sp = data.load("diabetes", seed=0)
    mean, sd = sp.y_train.mean(), sp.y_train.std()
    p = by["exact"]["params"]
    ex = KRR(fit_intercept=False, gamma=p["gamma"], alpha=p["alpha"], approximation="exact").fit(sp.X_train, (sp.y_train - mean) / sd)
    want = np.mean((ex.predict(sp.X_test) - (sp.y_test - mean) / sd) ** 2)
    assert by["exact"]["metrics"]["test_mse"] == pytest.approx(want)
    lla = KRR(fit_intercept=False, gamma=p["gamma"], alpha=p["alpha"], n_components=31, mode="lla",
              random_state=seeding.rng(0, "integration", "diabetes")).fit(sp.X_train, (sp.y_train - mean) / sd)
    assert integration.approximation_error(ex, lla) == pytest.approx(by["lla"]["metrics"]["rel_error"], rel=1e-9)


def test_the_exact_machine_is_fitted_once_whichever_method_runs_first(monkeypatch):
    fits = []
    real = NuSVM.fit
    monkeypatch.setattr(NuSVM, "fit", lambda self, X, y, **kw: (fits.append(self.approximation), real(self, X, y, **kw))[1])
    monkeypatch.setattr(studies.Study, "warm_up", lambda self, *args: None)  # count the real trials' fits
    methods = {"uniform": {"sampler": "uniform"}, "exact": {"approximation": "exact"}}
    rows = _run(_block(methods=methods, params={**PARAMS, "ratios": [0.1]}), "wine")
    assert fits.count("exact") == 1 and len(fits) == 2  # the exact machine and one nu-SVM for GSA and LLA
    exact = [r for r in rows if r["method"] == "exact"][0]
    assert exact["metrics"]["fit_time"] > 0 and all(
        r["params"]["n_support_exact"] == exact["params"]["n_support_exact"] for r in rows)


def test_one_study_instance_gives_each_data_set_the_integrations_of_its_task():
    """The grid follows the data set's task (a nu-SVM has no NCR) as one job's instance runs a mixed block."""
    kind = studies.get("integration")
    block = _block(datasets=["wine", "diabetes"], methods={"uniform": {"sampler": "uniform"}},
                   params={**PARAMS, "ratios": [0.1]})
    modes = {}
    for ds in ("diabetes", "wine", "diabetes"):
        X, y = data.obtain(ds)
        rows = kind.run("integration", block, ds, X, y, {0: data.make_split(ds, 0, len(X), y)}, None)
        modes.setdefault(ds, []).append([r["coords"]["integration"] for r in rows])
    assert modes == {"wine": [["gsa", "lla"]], "diabetes": [["gsa", "lla", "ncr"]] * 2}


@pytest.mark.parametrize("patch, match", [
    ({"params": {"ratios": [0, 0.1]}}, "parameter 'ratios': 0 is less than or equal to the minimum of 0"),
    ({"params": {"ratios": []}}, "parameter 'ratios': .* should be non-empty"),
    ({"params": {"nus": [1.5]}}, "parameter 'nus': 1.5 is greater than the maximum of 1"),
    ({"params": {"gamma_scales": [1, 1]}}, "non-unique"),
    ({"params": {"validation_fraction": 0.9}}, "'validation_fraction': 0.9 is greater than the maximum of 0.5"),
    ({"params": {"max_iter": 0}}, "'max_iter': 0 is not valid"),
    ({"params": {"folds": 3}}, "unknown parameter"),
    ({"methods": {"x": {"sampler": "nope"}}}, "unknown sampler 'nope'"),
    ({"methods": {"x": {"sampler": "adaptive_ms"}}}, "needs targets"),
    ({"methods": {"x": {"approximation": "mcm"}}}, "approximation must be one of exact, nystrom"),
    ({"methods": {"x": {"n_landmarks": 10}}}, "unknown key"),
    ({"kernels": {"g": {"kernel": "gaussian", "gamma": 0.5}}}, "gamma is tuned"),
    ({"kernels": {"l": {"kernel": "laplacian"}}}, "supports the kernels gaussian"),
])
def test_config_errors_name_the_fix(patch, match, config_error):
    config_error("integration", _block(), patch, match)


def _frame():
    """A synthetic result frame: GSA better on error everywhere but one cell, LLA better in accuracy."""
    rows = []
    for ds in ("a", "b"):
        for seed in (0, 1):
            rows.append({"dataset": ds, "method": "exact", "kernel": "g", "seed": seed,
                         "coords": {"integration": "exact"},
                         "params": {"gamma": 0.5, "sigma_equivalent": 1.0, "nu": 0.2, "validation_score": 0.9,
                                    "validation_metric": "accuracy", "learner": "NuSVM", "n_train": 100},
                         "metrics": {"test_accuracy": 0.9, "fit_time": 1.0, "predict_time": 0.1}})
            for m in ("uniform", "kmeans"):
                for ratio in (0.1, 0.2):
                    for mode in ("gsa", "lla"):
                        err = (0.2 if mode == "gsa" else 0.3) / ratio
                        if ds == "b" and m == "kmeans" and ratio == 0.2 and mode == "gsa":
                            err = 10.0
                        rows.append({"dataset": ds, "method": m, "kernel": "g", "seed": seed,
                                     "coords": {"ratio": ratio, "integration": mode},
                                     "params": {"n_components": 10},
                                     "metrics": {"rel_error": err, "test_accuracy": 0.8 if mode == "gsa" else 0.85,
                                                 "fit_time": 0.1, "predict_time": 0.01 if mode == "lla" else 0.05}})
    return pd.read_csv(_csv(results.frame("s", rows, studies.get("integration").coords)))


def _csv(df):
    import io

    buf = io.StringIO()
    df.to_csv(buf, index=False)
    buf.seek(0)
    return buf


def test_gsa_vs_lla_table_counts_cells_and_tests_them():
    df = _frame()
    t = mod.gsa_vs_lla(df, "rel_error").set_index("data set")
    assert t.loc["a", "cells"] == 4 and t.loc["a", "GSA better"] == 4 and t.loc["a", "LLA better"] == 0
    assert t.loc["b", "GSA better"] == 3 and t.loc["b", "LLA better"] == 1
    assert t.loc["all data sets", "cells"] == 8 and t.loc["all data sets", "GSA better"] == 7
    acc = mod.gsa_vs_lla(df, "test_accuracy", lower_is_better=False).set_index("data set")
    assert acc.loc["all data sets", "LLA better"] == 8
    # the p-values are SciPy's Wilcoxon over the cells (through stats.paired_tests), Holm over the data sets
    from scipy import stats as sps

    cells = df[df["integration"].isin(["gsa", "lla"])].groupby(["dataset", "method", "ratio", "integration"])[
        "rel_error"].mean().unstack("integration")
    d = (cells["gsa"] - cells["lla"]).to_numpy()
    assert t.loc["all data sets", "Wilcoxon p"] == f"{sps.wilcoxon(d).pvalue:.2g}"
    holm = "per data set, Holm 5%"
    assert t.loc["all data sets", holm] == "-" and t.loc["a", holm] in ("GSA better", "LLA better", "no difference")
    assert t.loc["a", "Wilcoxon p"] == "-"  # one p-value a table


def test_tested_rows_drop_the_exact_machine_and_tables_render():
    df = _frame()
    section = studies.section("integration")
    assert set(section.tested_rows(df)["integration"]) == {"gsa", "lla"}
    tables = section.tables(df, {})
    titles = [t[0] for t in tables]
    assert any(t.startswith("GSA vs LLA on relative rkhs error") for t in titles)
    assert "claims ledger" in tables[0][2] and not any(n and "Paper vs ours" in n for _, _, n in tables)
    tuned = mod.tuned_table(df, paper=False)
    assert list(tuned["nu"]) == ["0.2", "0.2"] and "paper: n train / cols" not in tuned
    times = mod.time_table(df)
    assert set(times.columns) >= {"predict GSA", "predict LLA", "exact train / predict"}


def test_paper_table_ii_has_the_four_data_sets_and_they_are_registered():
    table_ii = mod.paper_table_ii()
    assert set(table_ii) == {"usps", "gisette", "phishing", "dna"}
    for name in table_ii:
        info = data.info(name)
        assert info["task"] in ("binary", "multiclass")
    assert json.loads(json.dumps(table_ii))["dna"]["train"] == 2000
