"""The gen_nystrom study kind (Lan, Zhang et al., AIJ 2017): protocol, rows, paper tables, checks.

The study (protocol), its methods (:mod:`nystrom_bench.methods.semi_supervised`) and its report section
(:mod:`nystrom_bench.studies.gen_nystrom.section`: the paper's tables and Fig. 1)."""

import json

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import data, methods, results, seeding, sharedwork, studies
from nystrom_bench.studies.gen_nystrom import methods as meth
from nystrom_bench.studies.gen_nystrom import section as sec
from nystrom_bench.studies.gen_nystrom import study as mod

METHODS = {m: {"approach": m} for m in ("svm", "nystrom", "csi", "spectral", "cluster", "breg", "gen_nystrom", "abmkl",
                                         "cabmkl", "simplemkl", "glmkl", "gen_nystrom_mkl")}


def _block(**kw):
    return {"kind": "gen_nystrom", "datasets": ["digits27"], "seeds": [0, 1], "scaling": "standardize",
            "split": {"test_fraction": 0}, "kernels": {"gaussian": {"kernel": "gaussian", "gamma": "mean"}},
            "methods": METHODS, "reference": "nystrom",
            "params": {"n_labels": [20], "lambda_grid": [0.01, 1.0, 100.0], "width_scales": [0.5, 1.0, 2.0]}, **kw}


def test_labelled_indices_are_spread_evenly_over_the_classes():
    y = np.repeat([0, 1, 2], [50, 30, 3])
    idx = mod.labelled_indices(y, 20, np.random.default_rng(0))
    assert len(idx) == len(set(idx.tolist())) == 3 + 7 + 7 and np.bincount(y[idx]).tolist() == [7, 7, 3]
    idx = mod.labelled_indices(np.repeat([0, 1], 50), 11, np.random.default_rng(1))
    assert np.bincount(np.repeat([0, 1], 50)[idx]).tolist() == [6, 5]


def test_rows_every_method_and_the_protocol():
    X, y = data.obtain("digits27")
    kind = studies.get("gen_nystrom")
    rows = kind.run("gen_nystrom", _block(), "digits27", X, y, {}, None)
    assert len(rows) == 2 * len(METHODS)
    by = {(r["method"], r["seed"]): r for r in rows}
    for r in rows:
        assert r["coords"] == {"n_labels": 20} and 0 <= r["metrics"]["error"] <= 100
        assert r["params"]["n_labelled"] == 20 and r["params"]["n_unlabelled"] == len(y) - 20
    # the single-kernel methods beat chance by far on an easy pair
    assert by[("gen_nystrom", 0)]["metrics"]["error"] < 10 and by[("nystrom", 0)]["metrics"]["error"] < 10
    gn = by[("gen_nystrom", 0)]["params"]
    assert gn["lam"] in (0.01, 1.0, 100.0) and [p[0] for p in gn["lambda_path"]] == [0.01, 1.0, 100.0]
    assert max(gn["lambda_path"], key=lambda p: p[1])[0] == gn["lam"]  # the criterion's arg-max is used
    assert len(by[("gen_nystrom_mkl", 0)]["params"]["weights"]) == 3
    # the low-rank baselines have the Nystrom rank (10% of n) and beat chance on this easy pair
    for m in ("csi", "spectral", "cluster"):
        assert by[(m, 0)]["params"]["n_components_"] == round(0.1 * len(y)) and by[(m, 0)]["metrics"]["error"] < 25
    assert by[("breg", 0)]["params"]["n_constraints_"] == 20 * 19 // 2 and by[("breg", 0)]["metrics"]["error"] < 25
    for m in ("simplemkl", "glmkl"):
        assert sum(by[(m, 0)]["params"]["weights"]) == pytest.approx(1.0) and by[(m, 0)]["metrics"]["error"] < 25
    # a row from the public API: the labelled set of the (seed, n_labels) stream, the method's stream
    from sklearn.svm import LinearSVC

    from nystrom_bench.learners import GeneralizedNystrom

    sp = data.load("digits27", seed=0, split={"test_fraction": 0})
    lab = mod.labelled_indices(sp.y_train, 20, seeding.rng(0, "gen_nystrom", "digits27", "labels", 20))
    y_part = np.full(len(sp.y_train), -1)
    y_part[lab] = sp.y_train[lab]
    model = GeneralizedNystrom(gamma=1 / __import__("nystrom_bench").kernels.mean_sq_dist(sp.X_train),
                               lambda_grid=(0.01, 1.0, 100.0),
                               random_state=seeding.rng(0, "gen_nystrom", "digits27")).fit(sp.X_train, y_part)
    G = meth.unit_mean_diagonal(model.transform(sp.X_train))
    unl = np.setdiff1d(np.arange(len(y_part)), lab)
    err = 100 * np.mean(LinearSVC(C=1.0, max_iter=20000).fit(G[lab], sp.y_train[lab]).predict(G[unl])
                        != sp.y_train[unl])
    assert err == pytest.approx(by[("gen_nystrom", 0)]["metrics"]["error"])


def test_iterative_beta_is_a_method_option():
    """Appendix A's two choices of beta as two methods of one block: the same landmarks and labelled set (the
    method's stream), eq. (8)'s beta for ``gen_nystrom`` and S's least-squares beta for the iterative one, each
    row's beta recorded."""
    X, y = data.obtain("digits27")
    block = _block(methods={"gen_nystrom": {"approach": "gen_nystrom"},
                            "gen_nystrom_iterative": {"approach": "gen_nystrom", "beta": "iterative"}}, seeds=[0])
    rows = studies.get("gen_nystrom").run("gen_nystrom", block, "digits27", X, y, {}, None)
    by = {r["method"]: r for r in rows}
    heur, it = by["gen_nystrom"]["params"], by["gen_nystrom_iterative"]["params"]
    assert heur["beta"] > 0 and it["beta"] > 0 and heur["beta"] != it["beta"]
    assert it["lam"] in (0.01, 1.0, 100.0) and 0 <= by["gen_nystrom_iterative"]["metrics"]["error"] < 10


def test_paper_tables_come_from_the_paper_data_file():
    t1, t2 = sec.paper_table(1), sec.paper_table(2)
    assert len(t1) == 16 and len(t2) == 17
    assert t1["german"]["Ours single kernel"] == (36.84, 3.37, 0.4)
    assert t2["satimage"]["ABMKL"] == (13.6, 0.71, 7.8) and "NCNM" not in t1["mnist"]
    assert sec.paper_columns(1)[-1] == "Ours single kernel" and "SKM" in sec.paper_columns(2)
    assert sec.paper_dataset("german_keel") == "german" and sec.paper_dataset("digits49") is None
    # every approach's column is a column of its table
    assert all(col in sec.paper_columns(table) for table, col in sec.APPROACHES.values())
    assert all(col in sec.paper_columns(table) for col, (table, _) in meth.NOT_IMPLEMENTED.items())
    # the section's approaches are the family's methods; the paper's other columns are the ones not implemented
    assert sorted(sec.APPROACHES) == methods.names("semi_supervised")
    assert {c for t in (1, 2) for c in sec.not_implemented(t)} == set(meth.NOT_IMPLEMENTED)
    assert studies.section("gen_nystrom").kind == "gen_nystrom"


def _frame():
    rows = []
    rng = np.random.default_rng(0)
    for seed in range(6):
        for m, base in (("svm", 20.0), ("nystrom", 15.0), ("gen_nystrom", 10.0), ("cabmkl", 12.0)):
            rows.append({"dataset": "segment", "method": m, "kernel": "g", "seed": seed, "coords": {"n_labels": 100},
                         "params": {"approach": m, "n_labelled": 100, "n_unlabelled": 2210},
                         "metrics": {"error": base + rng.normal(0, 0.3), "seconds": 1.0}})
    import io

    buf = io.StringIO()
    results.frame("s", rows, ("n_labels",)).to_csv(buf, index=False)
    buf.seek(0)
    return pd.read_csv(buf)


def test_paper_layout_marks_the_best_and_lists_missing_baselines():
    df = _frame()
    methods = {m: {"approach": m} for m in ("svm", "nystrom", "gen_nystrom", "cabmkl")}
    t1 = sec.paper_layout(df, methods, 1).iloc[0]
    assert t1["Ours single kernel"].split(" [")[0].endswith("*") and not t1["LibSVM"].split(" [")[0].endswith("*")
    assert t1["CSI"] == "not run [paper: 9.39+-1.14]" and t1["NCNM"] == "not implemented [paper: 5.45+-0.49]"
    assert "[paper: 9.59+-1.20]" in t1["Ours single kernel"]
    t2 = sec.paper_layout(df, methods, 2).iloc[0]
    assert t2["CABMKL"].split(" [")[0].endswith("*") and t2["SimpleMKL"].startswith("not run")
    assert t2["SKM"].startswith("not implemented")
    assert "2310 rows" in t1["data set"]


@pytest.mark.parametrize("patch, match", [
    ({"methods": {"x": {"approach": "ncnm"}}}, "'ncnm' is not implemented yet"),
    ({"methods": {"x": {"approach": "svm2"}}}, "approach must be one of"),
    ({"methods": {"x": {"approach": "SKM"}}}, "'SKM' is not implemented yet"),
    ({"methods": {"x": {"approach": "nystrom", "sampler": "gaussian_sketch"}}}, "cannot give landmarks"),
    ({"methods": {"x": {"approach": "svm", "sampler": "uniform"}}}, r"unknown key\(s\) \['sampler'\]"),
    ({"methods": {"x": {"approach": "gen_nystrom", "beta": "optimal"}}}, "beta"),
    ({"methods": {"x": {"approach": "nystrom", "beta": "iterative"}}}, r"unknown key\(s\) \['beta'\]"),
    ({"params": {"n_labels": [1]}}, "parameter 'n_labels'"),
    ({"params": {"n_labels": [400]}}, "has only 356 rows"),
    ({"params": {"lambda_grid": []}}, "lambda_grid"),
])
def test_config_errors_name_the_fix(patch, match, config_error):
    config_error("gen_nystrom", _block(), patch, match)


def test_transductive_estimators_predict_the_unlabelled_samples_of_their_fit():
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.full(40, -1)
    y[:10] = np.arange(10) % 2
    est = meth._LinearOnFactor(lambda X, y: (None, X), 1.0, 0).fit(X, y)
    assert est.predict(X[10:]).shape == (30,)
    with pytest.raises(ValueError, match="30 unlabelled samples of its fit"):
        est.predict(X)


def test_seconds_are_the_fit_and_the_prediction(monkeypatch):
    # the lambda path (the paper's Fig. 1) is recorded after the timed part
    X, y = data.obtain("digits27")
    block = _block(seeds=[0], methods={"gen_nystrom": {"approach": "gen_nystrom"}})
    kind = studies.get("gen_nystrom")
    seen = {}
    score = kind.score

    def spy(prediction, trial):
        seen["times"] = (trial.fit_time, trial.predict_time)
        return score(prediction, trial)

    monkeypatch.setattr(kind, "score", spy)  # the registered kind is shared: given back after the test
    sharedwork.MEMO.clear()  # nothing reused from an earlier test's fits (a reuse is charged: test_sharedwork)
    (row,) = kind.run("gen_nystrom", block, "digits27", X, y, {}, None)
    assert row["metrics"]["seconds"] == sum(seen["times"]) and len(row["params"]["lambda_path"]) == 3
    assert set(row["metrics"]) == {"error", "seconds"}


def test_params_are_json():
    assert json.loads(json.dumps(meth.NOT_IMPLEMENTED))["NCNM"][0] == 1


def test_best_marks_use_the_paired_t_test():
    from scipy import stats as sps

    df = _frame()
    seg = df[df["method"].isin(["gen_nystrom", "cabmkl"])]
    assert sec._best_marks(seg) == {"gen_nystrom"}  # 2 points apart, sd 0.3: significant
    near = df[df["method"] == "gen_nystrom"].assign(method="twin")
    near["error"] = near["error"].to_numpy() + np.array([0.5, -0.4, 0.3, -0.2, 0.1, 0.05])
    both = pd.concat([df[df["method"] == "gen_nystrom"], near])
    p = sps.ttest_rel(near["error"].to_numpy(), df[df["method"] == "gen_nystrom"]["error"].to_numpy()).pvalue
    assert p >= 0.05 and sec._best_marks(both) == {"gen_nystrom", "twin"}
    const = near.assign(error=df[df["method"] == "gen_nystrom"]["error"].to_numpy() + 1.0)
    assert sec._best_marks(pd.concat([df[df["method"] == "gen_nystrom"], const])) == {"gen_nystrom"}
    same = near.assign(error=df[df["method"] == "gen_nystrom"]["error"].to_numpy())
    assert sec._best_marks(pd.concat([df[df["method"] == "gen_nystrom"], same])) == {"gen_nystrom", "twin"}


def test_unit_mean_diagonal():
    G = np.random.default_rng(0).normal(size=(30, 4)) * 50
    assert np.mean(np.sum(meth.unit_mean_diagonal(G) ** 2, axis=1)) == pytest.approx(1.0)
    assert not meth.unit_mean_diagonal(np.zeros((3, 2))).any()


def test_rows_do_not_depend_on_numpy_global_random_state(monkeypatch):
    # every random choice is seeded from (study, data set, seed): liblinear's shuffling included
    # (an unseeded LinearSVC changed one segment row between two runs)
    import sklearn.svm

    seen = []

    class Recording(sklearn.svm.LinearSVC):
        def fit(self, X, y, sample_weight=None):
            seen.append(self.random_state)
            return super().fit(X, y, sample_weight)

    monkeypatch.setattr(sklearn.svm, "LinearSVC", Recording)
    X, y = data.obtain("wine")
    block = _block(datasets=["wine"], seeds=[0], methods={m: {"approach": m} for m in ("nystrom", "cluster")})
    kind = studies.get("gen_nystrom")
    runs = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)  # noqa: NPY002 - the legacy global state the rows must not depend on
        runs.append([r["metrics"]["error"] for r in kind.run("gen_nystrom", block, "wine", X, y, {}, None)])
    assert runs[0] == runs[1]
    assert seen and all(isinstance(s, int) for s in seen), seen
    assert len(set(seen)) == 1  # one stream per (data set, seed, n_labels), the same for every method
