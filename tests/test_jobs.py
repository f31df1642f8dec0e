"""Job glue: a job over several data sets, one result file, one MLflow job run with its children."""

import json

import pandas as pd
import pytest

from nystrom_bench import data, jobs, studies, tracking
from nystrom_bench.learners import KRR


@pytest.fixture
def prepared(tmp_path):
    paths = {}
    for ds in ("diabetes", "friedman1"):
        npz, split = tmp_path / f"{ds}.npz", tmp_path / f"{ds}.split.npz"
        jobs.obtain_dataset(ds, npz, tmp_path / "cache", tmp_path / "lock.yaml")
        jobs.save_splits(ds, [0, 1], npz, split)
        paths[ds] = (npz, split)
    return paths


def test_a_job_can_hold_several_data_sets(prepared, tmp_path, mlflow_uri):
    kind = studies.get("krr")
    block = {"datasets": ["diabetes", "friedman1"], "seeds": [0, 1], "kernels": {"g": {"kernel": "gaussian",
             "gamma": "median"}}, "params": {"alpha": 0.1},
             "methods": {"exact": {"approximation": "exact"}, "ny": {"n_components": 20, "mode": "lla"}}}
    job = {"id": "both", "datasets": ["diabetes", "friedman1"], "methods": ["exact", "ny"]}
    cfg = jobs.job_config(kind, block, job)
    uri = mlflow_uri
    df = jobs.run_study_job("krr", cfg, [prepared[d][0] for d in job["datasets"]],
                            [prepared[d][1] for d in job["datasets"]], tmp_path / "out.csv", uri, "krr/both", "h")
    assert len(df) == 2 * 2 * 2 and set(df["dataset"]) == {"diabetes", "friedman1"}
    assert list(pd.read_csv(tmp_path / "out.csv").columns[:5]) == ["study", "dataset", "method", "kernel", "seed"]
    assert len(tracking.active_runs("krr", uri)) == 8
    assert len(tracking.active_runs("krr", uri, level="job")) == 1
    # a result row is recomputed from the public API with the same numbers
    row = df[(df["dataset"] == "diabetes") & (df["method"] == "exact") & (df["seed"] == 1)].iloc[0]
    split = data.load("diabetes", seed=1)
    gamma = json.loads(row["params"])["gamma"]
    y_mean = split.y_train.mean()
    pred = KRR(fit_intercept=False, kernel="gaussian", gamma=gamma, alpha=0.1, approximation="exact").fit(
        split.X_train, split.y_train - y_mean).predict(split.X_test) + y_mean
    assert abs(float(((pred - split.y_test) ** 2).mean()) - row["test_mse"]) < 1e-9 * row["test_mse"]


def test_a_damaged_workflow_file_is_named(prepared, tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(prepared["diabetes"][0].read_bytes()[:100])
    with pytest.raises(data.DataError, match=r"bad.npz is corrupt or truncated .*delete it and run again"):
        jobs.load_splits(bad)
