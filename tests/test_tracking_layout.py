"""The MLflow layout without MLflow: result rows -> configuration runs (``plan``) -> result rows
(``records``) is the identity on the result table, and the batches keep MLflow's limits."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import results
from nystrom_bench import tracking_layout as layout

COORDS = ("criterion", "log2_gamma", "l")


def _rows():
    rows = []
    for method in ("uniform", "mcm"):
        for seed in (0, 1):
            for g in (-3, -1, 1):
                for crit in ("c_ree", "c_ipe"):
                    rows.append({"dataset": "bupa", "method": method, "kernel": "gaussian", "seed": seed,
                                 "coords": {"criterion": crit, "log2_gamma": g},
                                 "params": {"gamma": 2.0 ** g, "n_landmarks": 20 + (g == 1),
                                            "split": {"test_fraction": 0.5}, "path": [g], "rank": None},
                                 "metrics": {"relative_gap": abs(g) / 10 + (crit == "c_ipe") + seed,
                                             "seconds": 0.01 * (g + 4)}})
    rows[0]["metrics"]["relative_gap"] = float("inf")
    rows[1]["metrics"]["seconds"] = float("nan")
    for r in rows:
        if r["method"] == "mcm" and r["coords"]["log2_gamma"] == 1:
            r["params"]["assumption"] = "MCM off its grid: H4 misfit 0.68 > 0.3"
    return rows


def _histories(plan):
    """What MLflow hands back for a run: ``{key: [(value, step)]}`` of its metrics, without ``mean/``."""
    hist = {}
    for key, value, step in plan["metrics"]:
        if not key.startswith(layout.MEAN):
            hist.setdefault(key, []).append((value, step))
    return hist


@pytest.mark.parametrize("fold", [(), ("seed",)])
def test_plan_then_records_gives_the_result_table_back(fold):
    rows = _rows()
    for r in rows:  # a data property of the seed's training part: one value per seed
        r["params"]["prop_decay"] = 0.25 + r["seed"]
    table = results.frame("cons", rows, COORDS)
    plans = layout.plan("cons", layout.rows_from_frame(table, COORDS), COORDS, fold)
    if fold:
        assert [p["key"] for p in plans] == [f"cons/bupa/{m}/gaussian" for m in ("uniform", "mcm")]
    else:
        assert [p["key"] for p in plans] == [f"cons/bupa/{m}/gaussian/seed{s}" for m in ("uniform", "mcm")
                                             for s in (0, 1)]
    recs = [rec for p in plans for rec in layout.records("cons", p["params"], p["tags"], _histories(p))[0]]
    back = pd.DataFrame.from_records(recs)
    keys = [*results.ID_COLS, *COORDS[:2]]
    want = table.drop(columns="l").sort_values(keys).reset_index(drop=True)
    back = back[want.columns].sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(back.drop(columns="params"), want.drop(columns="params"), check_dtype=False)
    first = back.set_index(["method", "seed", "criterion", "log2_gamma"]).sort_index()
    assert first.loc[("uniform", 0, "c_ree", -3), "relative_gap"] == np.inf  # from the tag of non-finite values
    assert math.isnan(first.loc[("uniform", 0, "c_ipe", -3), "seconds"])  # NaN: not logged
    assert first.loc[("mcm", 1, "c_ipe", 1), "assumption"].startswith("MCM off its grid")
    for got, exp in zip(back["params"], want["params"], strict=True):
        exp = json.loads(exp)
        del exp["path"]  # varies along the curve and is no number: only in the job's result table
        assert json.loads(got) == exp


def test_a_run_plan_holds_the_layout_of_the_docstring():
    rows = layout.rows_from_frame(results.frame("cons", _rows(), COORDS), COORDS)
    plan = layout.plan("cons", rows, COORDS)[2]  # mcm, seed 0
    assert plan["name"] == "bupa · mcm · gaussian · seed 0" and plan["curve"] == "log2_gamma"
    assert plan["params"]["split.test_fraction"] == "0.5" and plan["params"]["rank"] == "null"
    assert "gamma" not in plan["params"] and "n_landmarks" not in plan["params"]
    metrics = {(k, s): v for k, v, s in plan["metrics"]}
    # an integer grid: the step is the coord's value (the chart's Step axis shows log2 gamma)
    assert metrics[("log2_gamma", 1)] == 1 and metrics[("criterion:c_ree/param.gamma", -3)] == 0.125
    assert metrics[("criterion:c_ree/relative_gap_outside_assumptions", 1)] == pytest.approx(0.1)
    assert ("criterion:c_ree/relative_gap", 1) not in metrics
    assert metrics[("mean/criterion:c_ree/relative_gap", 0)] == pytest.approx(0.2)  # log2 gamma -3, -1
    tags = plan["tags"]
    assert json.loads(tags[layout.VARYING_TAG]) == {"gamma": "float", "n_landmarks": "int"}
    assert json.loads(tags[layout.DROPPED_TAG]) == ["path"]
    assert tags[layout.ASSUMPTION_TAG] == "2 of 6 results: MCM off its grid"


def test_a_folded_run_holds_every_seed_under_its_prefix():
    """``tracking_fold = ("seed",)``: one run per data set x method x kernel, the seeds as the first key
    prefix, the per-seed params as ``seed:<k>/`` params, ``mean/`` over the seeds and the curve."""
    rows = layout.rows_from_frame(results.frame("cons", _rows(), COORDS), COORDS)
    for r in rows:
        r["params"]["prop_decay"] = 0.25 + r["seed"]
    plans = layout.plan("cons", rows, COORDS, fold=["seed"])
    plan = plans[1]  # mcm, seeds 0 and 1
    assert plan["name"] == "bupa · mcm · gaussian" and plan["key"] == "cons/bupa/mcm/gaussian"
    assert plan["params"]["seed"] == "[0, 1]" and plan["curve"] == "log2_gamma"
    assert plan["params"]["seed:0/prop_decay"] == "0.25" and plan["params"]["seed:1/prop_decay"] == "1.25"
    assert "prop_decay" not in plan["params"] and plan["params"]["split.test_fraction"] == "0.5"
    metrics = {(k, s): v for k, v, s in plan["metrics"]}
    assert metrics[("seed:1/criterion:c_ipe/relative_gap", -3)] == pytest.approx(0.3 + 1 + 1)
    assert metrics[("seed:0/criterion:c_ree/param.gamma", -1)] == 0.5
    # steps 0, 1 of seeds 0 and 1 (step 2 is outside the assumptions: a key of its own)
    assert metrics[("mean/criterion:c_ree/relative_gap", 0)] == pytest.approx((0.3 + 0.1 + 1.3 + 1.1) / 4)
    assert not any(k.startswith("mean/seed:") for k, _ in metrics)
    assert json.loads(plan["tags"][layout.FOLD_TAG]) == ["seed"]
    assert plan["tags"][layout.ASSUMPTION_TAG] == "4 of 12 results: MCM off its grid"
    assert "one run per data set x method x kernel, named 'data set · method · kernel'" in layout.describe(plans)
    assert all(layout.FOLD_TAG not in p["tags"] for p in layout.plan("cons", rows, COORDS))
    # only the seeds can be folded
    with pytest.raises(ValueError, match=r"tracking_fold \['kernel'\]"):
        layout.plan("cons", rows, COORDS, fold=("kernel",))


def test_steps_are_the_coords_values_on_an_integer_grid_else_the_index_and_both_read_back():
    rows = []
    for ratio in (0.5, 0.05, 0.1):
        for m in (25, 100):
            rows.append({"dataset": "usps", "method": "gsa", "kernel": "gaussian", "seed": 0,
                         "coords": {"ratio": ratio, "m": m}, "params": {}, "metrics": {"err": ratio + m}})
    for curve, steps in ((("ratio",), {0.05: 0, 0.1: 1, 0.5: 2}), (("m",), {25: 25, 100: 100})):
        [p] = layout.plan("integ", rows, ("ratio", "m"), curve=curve)
        assert {s: v for k, v, s in p["metrics"] if k == curve[0]} == {s: v for v, s in steps.items()}
        back, _ = layout.records("integ", p["params"], p["tags"], _histories(p))
        assert sorted((r["ratio"], r["m"], r["err"]) for r in back) == sorted(
            (r["coords"]["ratio"], r["coords"]["m"], r["metrics"]["err"]) for r in rows)


def test_descriptions_name_no_parent_runs():
    rows = layout.rows_from_frame(results.frame("cons", _rows(), COORDS), COORDS)
    for fold in ((), ("seed",)):
        text = layout.describe(layout.plan("cons", rows, COORDS, fold))
        assert "grouped under" not in text and "no parent runs" in text and "'<data set> (job)'" in text
        assert f"in the view '{layout.VIEW_NAME}'" in text


def test_the_saved_view_shows_the_headline_metrics_the_method_settings_and_charts_over_the_coord():
    rows = layout.rows_from_frame(results.frame("cons", _rows(), COORDS), COORDS)
    for r in rows:  # a method setting (differs between the methods of a data set and seed), a data property,
        r["params"]["sampler"] = r["method"]  # an outcome selected per seed
        r["params"]["n_train"] = 100
        r["params"]["best_lambda"] = r["seed"] + (r["method"] == "mcm")
    plans = layout.plan("cons", rows, COORDS)
    state = layout.view(plans, {"relative_gap": ("Relative gap", True), "seconds": ("Time", True)})
    cols = state["selectedColumns"]  # the metrics in the order named, each criterion's mean column
    assert set(cols[:2]) == {"metrics.`mean/criterion:c_ree/relative_gap`", "metrics.`mean/criterion:c_ipe/relative_gap`"}
    assert set(cols[2:4]) == {"metrics.`mean/criterion:c_ree/seconds`", "metrics.`mean/criterion:c_ipe/seconds`"}
    assert cols[4:] == ["params.`sampler`"]  # not n_train, not best_lambda, not the identity
    assert state["globalLineChartConfig"] == {"xAxisKey": "metric", "lineSmoothness": 0,
                                              "selectedXAxisMetricKey": "log2_gamma"}
    # no metrics named: every metric, in the order logged; single values where there is no curve
    flat = [{**r, "coords": {}} for r in rows if r["coords"]["log2_gamma"] == -3 and r["coords"]["criterion"] == "c_ree"]
    state = layout.view(layout.plan("cons", flat, ()))
    assert set(state["selectedColumns"][:2]) == {"metrics.`relative_gap`", "metrics.`seconds`"}
    assert state["globalLineChartConfig"]["xAxisKey"] == "step"
    # single values under the other coords' prefixes (a study without a curve, e.g. selection per criterion)
    flat = [{**r, "coords": {"criterion": r["coords"]["criterion"]}} for r in rows if r["coords"]["log2_gamma"] == -3]
    state = layout.view(layout.plan("cons", flat, ("criterion",)), {"relative_gap": ("Relative gap", True)})
    assert set(state["selectedColumns"]) == {"metrics.`criterion:c_ree/relative_gap`",
                                             "metrics.`criterion:c_ipe/relative_gap`", "params.`sampler`"}
    env = json.loads(layout.view_envelope(state, 2000.0, created_ms=1000))
    assert env == {"name": layout.VIEW_NAME, "createdAt": 1000, "updatedAt": 2000,
                   "state": json.dumps(state, sort_keys=True)}
    assert json.loads(env["state"]) == state


def test_batches_keep_mlflows_limits_and_lose_nothing():
    params, metrics = list(range(250)), [f"m{i}" for i in range(2500)]
    out = layout.batches(params, metrics)
    assert all(len(p) <= 100 and len(p) + len(m) <= 1000 for p, m in out)
    assert [x for p, _ in out for x in p] == params and [x for _, m in out for x in m] == metrics
    assert layout.batches(list(range(15)), list(range(30))) == [(list(range(15)), list(range(30)))]
    assert layout.batches([], []) == [([], [])]


def test_param_text_is_json_dumps_and_loads_as_before():
    """_param_text writes the plain types' JSON itself and skips parsing strings that start no JSON value:
    the same text as json.dumps / json.loads give (the rule it replaced), tricky values included."""
    import json
    import random

    import numpy as np

    from nystrom_bench.tracking_layout import MAX_PARAM, _param_text

    def rule(v):
        if isinstance(v, str):
            try:
                json.loads(v)
            except ValueError:
                return v[:MAX_PARAM]
            return json.dumps(v)[:MAX_PARAM]
        return json.dumps(v, default=str)[:MAX_PARAM]

    values = [0.0, -0.0, 1.5, 1e300, -1e-300, float("nan"), float("inf"), -float("inf"), 0, -5, 10**30, True, False,
              None, "", " ", "abc", "1", " 1", "-", "-1", "NaN", "Infinity", "-Infinity", "true", "nul", "null", "[1,2]",
              "[", "{}", '"x"', "\t[]", "\n", "x" * 7000, "1" * 7000, [1, 2], {"a": 1}, (1, 2), np.float64(1.5),
              np.int64(3), np.str_("1"), np.str_("a"), "\u00a01", "0x10", "01", "1e5", ".5", "+1", "Inf"]
    rng = random.Random(0)
    chars = ' \t\n"[]{}-0123456789tfnNIaex.,:'
    values += [rng.random() * 10.0 ** rng.randint(-300, 300) for _ in range(500)]
    values += ["".join(rng.choice(chars) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    assert [_param_text(v) for v in values] == [rule(v) for v in values]
