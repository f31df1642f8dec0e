"""The claims ledger's ``transform: {param: ...}``: a metric read out of each result row's params (JSON)."""

import json

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import claims

INFO = {"metrics": {"error": ["Error (%)", True], "seconds": ["Time (s)", True]}, "coords": ["n_labels"],
        "block_cols": ["dataset", "kernel", "seed"]}
PATH = {"param": "lambda_path", "fields": ["lambda", "alignment", "error"],
        "pick": {"criterion": {"argmax": "alignment"}, "best": "min", "median": "median"}}


def _claim(**kw):
    return {"id": "c", "claim": "a claim", "where": "Fig. 1", "study": "toy", "paper": "P", **kw}


def _paths(gap, n_seeds=10, datasets=("d1", "d2"), seed=0):
    """Rows of two methods; 'gn' records a lambda path whose criterion's pick is ``gap`` above the best error."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for ds in datasets:
        for s in range(n_seeds):
            errs = 10 + rng.uniform(0, 5, size=6)
            best = int(np.argmin(errs))
            pick = (best + 1) % 6
            errs[pick] = errs[best] * (1 + gap) if gap else errs[best]
            align = np.full(6, 0.1)
            align[pick] = 0.9
            path = [[10.0 ** k, float(a), float(e)] for k, a, e in zip(range(-3, 3), align, errs, strict=True)]
            for method, p in (("gn", {"lambda_path": path, "lam": 10.0 ** (pick - 3)}), ("svm", {"C": 1.0})):
                rows.append({"study": "toy", "dataset": ds, "method": method, "kernel": "g", "seed": s,
                             "n_labels": 100, "error": float(errs[pick]), "seconds": 1.0,
                             "params": json.dumps(p)})
            truth.append((errs[pick], errs.min(), np.median(errs)))
    return pd.DataFrame(rows), np.array(truth)


def test_table_picks_become_the_compared_column():
    df, truth = _paths(gap=0.3)
    row = claims.evaluate(_claim(rule="no_worse", metric="error", filter={"method": "gn"}, transform=PATH,
                                 column="params", a="criterion", b=["best"], tolerance=0.1), df, INFO)
    assert row["verdict"] == "not reproduced"
    # the Hodges-Lehmann ratio of criterion / best is the constructed 1.3
    assert "+30%" in row["ours"] and "params.lambda_path" in row["ours"]
    near, _ = _paths(gap=0.0)
    row = claims.evaluate(_claim(rule="no_worse", metric="error", filter={"method": "gn"}, transform=PATH,
                                 column="params", a="criterion", b=["best"], tolerance=0.1), near, INFO)
    assert row["verdict"] == "reproduced"


def test_table_picks_against_a_plain_computation():
    df, truth = _paths(gap=0.05)
    s = claims._Setup(_claim(rule="better", metric="error", filter={"method": "gn"}, transform=PATH,
                             column="params", a="criterion", b=["median"]), df, INFO)
    wide = s.df.pivot_table(index=["dataset", "seed"], columns="params", values="error")
    np.testing.assert_allclose(wide["criterion"].to_numpy(), truth[:, 0])
    np.testing.assert_allclose(wide["best"].to_numpy(), truth[:, 1])
    np.testing.assert_allclose(wide["median"].to_numpy(), truth[:, 2])
    assert s.lower and "method" in s.blocks and set(s.df["params"]) == {"criterion", "best", "median"}


def test_scalar_param_is_the_metric():
    df, _ = _paths(gap=0.0)
    s = claims._Setup(_claim(rule="better", metric="error", filter={"method": "gn"},
                             transform={"param": "lam", "lower": False}, column="dataset", a="d1", b=["d2"]),
                      df, INFO)
    assert s.metric == "lam" and not s.lower
    np.testing.assert_allclose(s.df["lam"].to_numpy(),
                               [json.loads(p)["lam"] for p in df.loc[df["method"] == "gn", "params"]])


def test_rows_without_the_param_are_not_testable_and_bad_specs_say_so():
    df, _ = _paths(gap=0.0)
    row = claims.evaluate(_claim(rule="no_worse", metric="error", filter={"method": "svm"}, transform=PATH,
                                 column="params", a="criterion", b=["best"]), df, INFO)
    assert row["verdict"] == "not testable" and "lambda_path" in row["evidence"]
    with pytest.raises(ValueError, match="pick"):
        claims._Setup(_claim(rule="no_worse", metric="error", filter={"method": "gn"},
                             transform={**PATH, "pick": {"x": "mode"}}, column="params", a="x", b=["best"]), df,
                      INFO)
    # picks written into the method column: both methods' rows would give one 'best' per block twice
    both = df.assign(params=df.loc[df["method"] == "gn", "params"].repeat(2).to_numpy())
    with pytest.raises(ValueError, match="several rows"):
        claims._Setup(_claim(rule="no_worse", metric="error", transform=PATH, a="criterion", b=["best"]), both,
                      INFO)
    # with column: params, method is a block and each method's picks pair among themselves
    s = claims._Setup(_claim(rule="no_worse", metric="error", transform=PATH, column="params", a="criterion",
                             b=["best"]), both, INFO)
    assert len(s.df) == 3 * len(both)
