"""nystrom_bench.advise: the LLA regularisation path against KRR and a dense textbook ridge, the
mini-study's answers on data whose right answer is known, the promised metric on rows it never saw,
and the command (every bad input: one line, exit code 2, nothing written).

Budgets are small (a few seconds of study each); nothing here asserts a time.  The study's clock is the
process's CPU time here (``advise._clock``): a budget of wall seconds gave other answers while other work
shared the cores (a CI run beside a workflow run kept the default for the unequal clusters)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import linalg

from nystrom_bench import kernels
from nystrom_bench.advise import (
    MIN_FOLDS,
    AdviseError,
    advise,
    advise_command,
    infer_task,
    lla_path,
    read_data,
)
from nystrom_bench.learners import KRR


@pytest.fixture(scope="module", autouse=True)
def cpu_clock():
    """The study's budget in CPU seconds of this process: fewer other answers on a loaded machine.  The budgets
    below (6 s for the unequal clusters, 10 s for the smooth target: about their CPU time here) were checked with
    this clock run at twice and three times the speed too, as on a machine that much slower: every test passed (the
    unequal clusters' p = 0.002).  Load still moves the CPU time of a fold (a make test beside the workflow fixture
    got 5 folds in 6 s), so the studies whose budget was too short to confirm are asked again (:func:`_confirmed`)."""
    import time

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("nystrom_bench.advise._clock", time.process_time)
        yield


def _confirmed(X, y, budget, seed=0, tries=3):
    """``advise(X, y, budget=budget, seed=seed)``, asked again with twice the budget (at most ``tries`` times in all)
    while the budget was too small to confirm: fewer than MIN_FOLDS confirmation folds, or the default kept because
    the best model could not be confirmed in the time left.  A machine slower than this one, or one shared with other work, takes more CPU
    seconds per fold even on the CPU clock (a ``make test`` beside the workflow fixture confirmed the unequal
    clusters in 5 folds within 6 s, not 10: "raise the budget").  Both answers are "keep the default", so a wrong
    recommendation is never asked again; each retry warns, so that a study grown slower shows."""
    import warnings

    for _ in range(tries):
        a = advise(X, y, budget=budget, seed=seed)
        short = a.evidence["folds"] < MIN_FOLDS or a.keep_default and any(
            "could not be confirmed within the budget" in n for n in a.notes)
        if not short:
            return a
        warnings.warn(f"advise's {budget:g}-second study was too short to confirm ({a.evidence['folds']} folds): "
                      "asked again with twice the budget", stacklevel=2)
        budget *= 2
    return a


def _smooth(n, seed=0):
    """A smooth, nearly noise-free target on [-2, 2]^3 (noise sd 0.01)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.5 * X[:, 2] ** 2 + 0.01 * rng.normal(size=n)
    return X, y


def _unequal_clusters(seed=0):
    """1,400 points in one Gaussian blob and 25 tiny clusters of 4 points far away (radius 8), each tiny
    cluster with its own target level: a uniform draw of 200 landmarks misses about half the tiny
    clusters, where a Gaussian model at the blob's median width then predicts the mean."""
    rng = np.random.default_rng(seed)
    big = rng.normal(size=(1400, 2))
    centres = rng.uniform(-1, 1, size=(25, 2))
    centres = 8 * centres / np.linalg.norm(centres, axis=1, keepdims=True)
    tiny = np.repeat(centres, 4, axis=0) + 0.05 * rng.normal(size=(100, 2))
    X = np.vstack([big, tiny])
    y = np.concatenate([np.sin(big[:, 0]), np.repeat(rng.uniform(-3, 3, 25), 4)]) + 0.05 * rng.normal(size=1500)
    p = rng.permutation(1500)
    return X[p], y[p]


# ---------------------------------------------------------------------------------------------------------
# the regularisation path
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("two_targets", [False, True])
def test_lla_path_is_krr_lla_and_the_textbook_ridge(two_targets):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    Y = np.column_stack([y, X[:, 2]]) if two_targets else y
    Xn = rng.normal(size=(40, 3))
    idx = rng.choice(150, 25, replace=False)
    kern = kernels.make("gaussian", gamma=0.4)
    alphas = [1.0, 1e-2, 1e-4]
    path = lla_path(X, Y, kern, idx, alphas, Xn)
    assert path.shape == (3, 40, 2 if two_targets else 1)
    # dense textbook: features F = K(X, Z) W^{-1/2}, centred ridge with an intercept
    W = kern(X[idx], X[idx])
    lam, U = linalg.eigh(W)
    Wih = U @ np.diag(1 / np.sqrt(lam)) @ U.T
    F, Fn = kern(X, X[idx]) @ Wih, kern(Xn, X[idx]) @ Wih
    Yc = Y.reshape(150, -1)
    for a, P in zip(alphas, path, strict=True):
        Fm, ym = F.mean(axis=0), Yc.mean(axis=0)
        w = np.linalg.solve((F - Fm).T @ (F - Fm) + a * np.eye(25), (F - Fm).T @ (Yc - ym))
        textbook = (Fn - Fm) @ w + ym
        np.testing.assert_allclose(P, textbook, rtol=1e-6, atol=1e-8)
        krr = KRR(gamma=0.4, alpha=a, landmarks=idx).fit(X, Y).predict(Xn)
        np.testing.assert_allclose(P, krr.reshape(40, -1), rtol=1e-6, atol=1e-8)


def test_infer_task():
    assert infer_task(np.array(["a", "b"] * 30)) == "classification"
    assert infer_task(np.array([0, 1, 2] * 40)) == "classification"
    assert infer_task(np.linspace(0, 1, 120)) == "regression"
    assert infer_task(np.arange(120)) == "regression"  # 120 distinct integers: a count, not labels


# ---------------------------------------------------------------------------------------------------------
# answers whose right answer is known
# ---------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smooth_advice():
    X, y = _smooth(880)
    return _confirmed(X[:800], y[:800], budget=10), X[800:], y[800:]


def test_smooth_clean_target_gets_more_landmarks_and_a_smaller_alpha(smooth_advice):
    a, _, _ = smooth_advice
    assert not a.keep_default, a.summary()
    assert a.evidence["p"] < 0.05 and a.evidence["estimate"] < 1
    assert a.params["alpha"] < 1.0
    assert a.params.get("approximation") == "exact" or a.params["n_components"] > 200, a.summary()


def test_refitted_model_reaches_its_promise_on_rows_it_never_saw(smooth_advice):
    a, X_new, y_new = smooth_advice
    assert len(y_new) == a.holdout_rows  # the interval is for a held-out set of this size
    X, y = _smooth(880)
    model = a.make_estimator().fit(X[:800], y[:800])
    mse = float(np.mean((model.predict(X_new) - y_new) ** 2))
    lo, hi = a.interval
    assert lo <= mse <= hi, (mse, a.interval)
    default = KRR(random_state=0).fit(X[:800], y[:800])
    assert mse < float(np.mean((default.predict(X_new) - y_new) ** 2))


def test_unequal_clusters_get_a_non_uniform_sampler():
    X, y = _unequal_clusters()
    a = _confirmed(X, y, budget=6)
    assert not a.keep_default, a.summary()
    assert a.params["sampler"] != "uniform", a.summary()
    assert a.evidence["estimate"] < 1 and a.evidence["p"] < 0.05


def test_pure_noise_keeps_the_default_said_as_such():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(300, 4)), rng.normal(size=300)
    a = advise(X, y, budget=4, seed=0)
    assert a.keep_default and a.call == "KRR()" and a.params == {}
    assert a.verdict.startswith("Keep the default")
    assert a.evidence["folds"] >= 2 and np.isfinite(a.metric)


def test_bad_arguments_to_the_function():
    X, y = _smooth(100)
    with pytest.raises(AdviseError, match="budget"):
        advise(X, y, budget=0)
    with pytest.raises(AdviseError, match="too few rows"):
        advise(X[:20], y[:20])
    with pytest.raises(AdviseError, match="constant"):
        advise(X, np.ones(100))
    with pytest.raises(AdviseError, match="missing or infinite"):
        advise(np.where(X > 1.9, np.nan, X), y)
    with pytest.raises(AdviseError, match="task"):
        advise(X, y, task="ranking")


# ---------------------------------------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------------------------------------

def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    label = np.where(X[:, 0] * X[:, 1] > 0, "same", "opposite")
    return pd.DataFrame({"a": X[:, 0], "b": 100 * X[:, 1], "c": X[:, 2], "label": label, "y": X[:, 0] + X[:, 1]})


def test_command_answers_with_json_and_report(tmp_path):
    csv = tmp_path / "d.csv"
    _frame().drop(columns="y").to_csv(csv, index=False)
    out, rep = tmp_path / "advice.json", tmp_path / "advice.html"
    r = CliRunner().invoke(advise_command, [str(csv), "--target", "label", "--budget", "4", "--json", str(out),
                                            "--report", str(rep), "-q"])
    assert r.exit_code == 0, r.output
    got = json.loads(out.read_text())
    assert got["task"] == "classification" and got["estimator"] == "KRRClassifier"
    for key in ("params", "metric", "interval", "evidence", "call", "keep_default", "fit_seconds", "fit_how"):
        assert key in got
    assert got["metric_name"] == "error rate" and 0 <= got["metric"] <= 1
    html = rep.read_text()
    assert html.count("<img") >= 2 and got["call"].split("(")[0] in html


def test_command_reads_parquet(tmp_path):
    pq = tmp_path / "d.parquet"
    _frame().drop(columns="label").to_parquet(pq)
    r = CliRunner().invoke(advise_command, [str(pq), "--target", "y", "--budget", "3", "-q"])
    assert r.exit_code == 0, r.output
    assert "mse" in r.output


def _bad(tmp_path, frame, args, match):
    csv = tmp_path / "bad.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "advice.json"
    r = CliRunner().invoke(advise_command, [str(csv), "--budget", "3", "--json", str(out), "-q", *args])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and match in lines[0], r.stderr
    assert r.stdout == "" and not out.exists() and not list(tmp_path.glob(".advice.json*"))
    return lines[0]


def test_bad_input_missing_target_column(tmp_path):
    line = _bad(tmp_path, _frame(), ["--target", "price"], "'price' is not in")
    assert "a, b, c, label, y" in line


def test_bad_input_non_numeric_columns_named(tmp_path):
    line = _bad(tmp_path, _frame(), ["--target", "y"], "non-numeric feature columns: label")
    assert "--encode" in line


def test_encode_flag_one_hot_encodes(tmp_path):
    csv = tmp_path / "d.csv"
    _frame().to_csv(csv, index=False)
    X, y, info = read_data(csv, "y", encode=True)
    assert X.shape == (200, 5) and "one-hot" in info["notes"][0]


def test_bad_input_missing_values_counted_and_imputed(tmp_path):
    f = _frame()
    f.loc[:4, "a"] = np.nan
    f.loc[7, "y"] = np.nan
    line = _bad(tmp_path, f.drop(columns="label"), ["--target", "y"], "missing values in 2 column(s)")
    assert "'y' (1)" in line and "a (5)" in line and "--impute" in line
    X, y, info = read_data(tmp_path / "bad.csv", "y", impute=True)
    assert X.shape == (199, 3) and np.isfinite(X).all() and len(info["notes"]) == 2


def test_bad_input_too_few_rows(tmp_path):
    _bad(tmp_path, _frame(30).drop(columns="label"), ["--target", "y"], "too few rows: 30")


def test_bad_input_constant_target(tmp_path):
    f = _frame().drop(columns="label")
    f["y"] = 4.0
    _bad(tmp_path, f, ["--target", "y"], "constant")


def test_bad_input_files_and_paths(tmp_path):
    r = CliRunner().invoke(advise_command, [str(tmp_path / "nope.csv"), "--target", "y"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "neither a file" in r.stderr
    (tmp_path / "d.xlsx").write_text("x")
    r = CliRunner().invoke(advise_command, [str(tmp_path / "d.xlsx"), "--target", "y"])
    assert r.exit_code == 2 and "unknown file type" in r.stderr
    _bad(tmp_path, _frame().drop(columns="label"), ["--target", "y", "--report", str(tmp_path / "no" / "r.html")],
         "does not exist")
    _bad(tmp_path, _frame().drop(columns="label"), ["--target", "y", "--budget", "-1"], "--budget must be")


@pytest.mark.slow
def test_mlflow_logs_the_mini_study(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    csv = tmp_path / "d.csv"
    _frame().drop(columns="label").to_csv(csv, index=False)
    r = CliRunner().invoke(advise_command, [str(csv), "--target", "y", "--budget", "3", "--mlflow", "-q"])
    assert r.exit_code == 0, r.output
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("advise")
    runs = client.search_runs([exp.experiment_id])
    parents = [x for x in runs if "mlflow.parentRunId" not in x.data.tags]
    assert len(parents) == 1 and len(runs) > 3
    assert parents[0].data.params["call"] in r.output


@pytest.mark.slow
def test_5000_by_10_csv_is_not_worse_than_the_default_on_unseen_rows(tmp_path):
    rng = np.random.default_rng(7)
    n = 6000
    X = rng.normal(size=(n, 10)) * np.array([1, 1, 1, 10, 10, 0.1, 1, 1, 1, 1])
    y = np.sin(X[:, 0]) + 0.1 * X[:, 3] + np.abs(X[:, 1]) + 0.3 * rng.normal(size=n)
    cols = [f"x{i}" for i in range(10)]
    frame = pd.DataFrame(X, columns=cols).assign(y=y)
    csv = tmp_path / "big.csv"
    frame.iloc[:5000].to_csv(csv, index=False)
    out = tmp_path / "a.json"
    r = CliRunner().invoke(advise_command, [str(csv), "--target", "y", "--budget", "60", "--json", str(out), "-q"])
    assert r.exit_code == 0, r.output
    from nystrom_bench.advise import Advice

    got = json.loads(out.read_text())
    a = Advice(**{k: got[k] for k in ("task", "estimator", "params", "standardize", "call", "keep_default", "verdict",
                                      "metric_name", "metric", "interval", "holdout_rows", "default_metric",
                                      "evidence", "fit_seconds", "fit_how", "memory_bytes", "memory_how", "n_rows",
                                      "n_features", "budget", "seconds", "seed", "notes")})
    test = frame.iloc[5000:]
    model = a.make_estimator().fit(X[:5000], y[:5000])
    mse = float(np.mean((model.predict(test[cols].to_numpy()) - test["y"].to_numpy()) ** 2))
    default = KRR(random_state=0).fit(X[:5000], y[:5000])
    base = float(np.mean((default.predict(test[cols].to_numpy()) - test["y"].to_numpy()) ** 2))
    assert mse <= 1.02 * base, (a.call, mse, base)
