"""The consistency and selection study kinds: rows, the paper's settings, checks, report pieces."""

import numpy as np
import pandas as pd
import pytest
from scipy import linalg

from nystrom_bench import data, results, selection, sharedwork, studies
from nystrom_bench.config import ConfigError, check
from nystrom_bench.studies.consistency import section as cons_mod
from nystrom_bench.studies.selection import section as sel_mod

METHODS = {"original": {"approximation": "exact"}, "optapp": {"approximation": "optimal"},
           "uniform": {"sampler": "uniform"}, "adapt_kumar": {"sampler": "adaptive_kumar"},
           "modified": {"approximation": "modified_nystrom", "sampler": "uniform_adaptive2"},
           "mcm": {"approximation": "mcm"}}


def _block(**kw):
    return {"kind": "consistency", "datasets": ["bupa"], "seeds": [0], "scaling": "standardize",
            "kernels": {"gaussian": {"kernel": "gaussian"}}, "methods": METHODS,
            "params": {"log2_gammas": [-4, -1]}, "split": {"test_fraction": 0.5}, **kw}


def _run(block, dataset="bupa", study="consistency"):
    X, y = data.obtain(dataset)
    kind = studies.get(block["kind"])
    return kind, kind.run(study, block, dataset, X, y, {}, None)


def test_rows_follow_the_papers_settings_and_original_equals_a_dense_criterion():
    kind, rows = _run(_block())
    assert len(rows) == len(METHODS) * 2 * 2
    sp = data.load("bupa", seed=0, split={"test_fraction": 0.5})
    assert rows[0]["params"]["n_train"] == len(sp.y_train) == 173  # the 50/50 split of 345 rows
    y = np.where(sp.y_train == sp.y_train.max(), 1.0, -1.0)
    by = {(r["method"], r["coords"]["log2_gamma"], r["coords"]["criterion"]): r for r in rows}
    for lg in (-4, -1):
        K = np.exp(-(2.0**lg) * ((sp.X_train[:, None] - sp.X_train[None]) ** 2).sum(-1))
        mu, n = 0.005, len(y)
        A = K + mu * n * np.eye(n)
        u = linalg.solve(A, y)
        Ai = linalg.inv(A)
        ree = mu * y @ u
        ipe = mu**2 * n * u @ u + (0.01 * y.std()) ** 2 / n * np.trace(K @ K @ Ai @ Ai)
        assert by[("original", lg, "c_ree")]["metrics"]["criterion_approx"] == pytest.approx(ree, rel=1e-9)
        assert by[("original", lg, "c_ipe")]["metrics"]["criterion_approx"] == pytest.approx(ipe, rel=1e-9)
        for m in METHODS:
            r = by[(m, lg, "c_ree")]
            assert r["metrics"]["criterion_exact"] == pytest.approx(ree, rel=1e-9)
            gap = abs(r["metrics"]["criterion_approx"] - ree) / ree
            assert r["metrics"]["relative_gap"] == pytest.approx(gap, rel=1e-9, abs=1e-15)
    u = by[("uniform", -1, "c_ree")]["params"]
    assert u["n_components"] == round(0.2 * 173) and u["rank"] == 20 and u["mu"] == 0.005
    assert by[("adapt_kumar", -1, "c_ree")]["params"]["sampler_options"] == {"s": round(0.1 * round(0.2 * 173))}
    assert by[("mcm", -1, "c_ree")]["params"]["levels"] == 3
    assert by[("original", -4, "c_ree")]["metrics"]["relative_gap"] == 0.0
    # the two criteria of one (method, width) come from one K~ (same landmarks, same settings)
    assert by[("uniform", -1, "c_ipe")]["params"] == by[("uniform", -1, "c_ree")]["params"]



def test_one_k_tilde_per_method_and_width_and_the_exact_criteria_once(monkeypatch):
    """The criteria (a coord) of one (method, width) share one K~; Original's K is the shared reference."""
    calls, real = [], selection.criterion_values

    def spy(X, y, gamma, approximation="exact", *args, **kw):
        calls.append((approximation, gamma))
        return real(X, y, gamma, approximation, *args, **kw)

    monkeypatch.setattr(selection, "criterion_values", spy)
    monkeypatch.setattr(studies.Study, "warm_up", lambda self, *args: None)  # count the real trials' calls
    sharedwork.MEMO.clear()  # as in a fresh job: nothing shared from an earlier test's run on the same data
    block = _block()
    kind, rows = _run(block)
    # one call per (method, width): Original's is the reference every method reads, computed once
    assert sorted(calls) == sorted((m.get("approximation", "nystrom"), 2.0**g) for m in METHODS.values()
                                   for g in (-4, -1))
    table = studies.section("consistency").tables(results.frame("consistency", rows, kind.coords), block)
    assert len(table) == 1 and len(table[0][1]) == len(METHODS) * 2

def test_every_method_row_is_its_own_k_tilde_criterion():
    """Each method's C(K~) at one width equals a dense computation on that method's K~ (OptApp, MCM here;
    the Nystrom family through selection's dense brute-force test)."""
    kind, rows = _run(_block(params={"log2_gammas": [-2]}))
    sp = data.load("bupa", seed=0, split={"test_fraction": 0.5})
    y = np.where(sp.y_train == sp.y_train.max(), 1.0, -1.0)
    from nystrom_bench import approx, kernels

    kern = kernels.make("gaussian", gamma=0.25)
    for m, op in (("optapp", approx.build("optimal", sp.X_train, kern, rank=20)),
                  ("mcm", approx.build("mcm", sp.X_train, kern, levels=3))):
        Kt = op.dense()
        ree = 0.005 * y @ linalg.solve(Kt + 0.005 * len(y) * np.eye(len(y)), y)
        r = next(r for r in rows if r["method"] == m and r["coords"]["criterion"] == "c_ree")
        assert r["metrics"]["criterion_approx"] == pytest.approx(ree, rel=1e-8)


def test_train_sizes_make_l_a_coord_and_the_slope_table_measures_the_order():
    block = _block(datasets=["twonorm"], methods={"original": METHODS["original"], "uniform": METHODS["uniform"]},
                   params={"log2_gammas": [-4], "train_sizes": [60, 120]}, split=None)
    kind, rows = _run(block, "twonorm")
    assert sorted({r["coords"]["l"] for r in rows}) == [60, 120]
    assert {r["params"]["n_train"] for r in rows} == {60, 120}
    assert all(r["params"]["split"] == {"n_train": r["coords"]["l"]} for r in rows)
    # a gap that falls exactly like l^-1/2 has slope -0.5 with a tight interval
    recs = [{"dataset": "d", "criterion": "c_ree", "method": "m", "seed": s, "l": l,
             "relative_gap": 3.0 * l**-0.5 * (1 + 0.01 * s), "log2_gamma": 0}
            for s in range(3) for l in (250, 500, 1000, 2000)]  # noqa: E741
    t = cons_mod.slope_table(pd.DataFrame(recs), ["m"])
    assert t["slope b"].iloc[0] == "-0.50"


def test_curve_stats_argmin_and_spearman():
    df = pd.DataFrame({"dataset": "d", "kernel": "g", "seed": 0, "criterion": "c_ree", "method": "a",
                       "log2_gamma": [0, 1, 2, 3], "criterion_approx": [4.0, 3.0, 2.5, 2.6],
                       "criterion_exact": [5.0, 4.0, 3.0, 2.0]})
    c = cons_mod.curve_stats(df).iloc[0]
    assert c["argmin_equal"] == 0.0 and c["spearman"] == pytest.approx(0.8)


@pytest.mark.parametrize("patch, match", [
    ({"methods": {"x": {"approximation": "svd"}}}, "approximation must be one of exact, mcm, .*got 'svd'"),
    ({"methods": {"x": {"sampler": "nope"}}}, "unknown sampler 'nope'"),
    ({"methods": {"x": {"rank": 0}}}, "option 'rank': 0 is less than the minimum of 1"),
    ({"methods": {"x": {"approximation": "exact", "rank": 5}}}, r"unknown key\(s\) \['rank'\]"),
    ({"methods": {"x": {"n_landmarks": 10}}}, r"^studies.consistency.methods.x: the key 'n_landmarks' was renamed "
                                              r"'n_components'; rename the key$"),
    ({"methods": {"x": {"n_components": 10 ** 4}}}, "10000 landmarks, but 'bupa' has only"),
    ({"params": {"log2_gammas": []}}, "log2_gammas"),
    ({"params": {"criteria": ["loo"]}}, "parameter 'criteria': 'loo' is not one of"),
    ({"params": {"train_sizes": [100, 400]}}, "has only 345 rows"),
    ({"kernels": {"g": {"kernel": "gaussian", "gamma": 0.5}}}, "log2_gamma"),
    ({"split": {"n_train": 400}}, "does not fit"),
])
def test_config_errors_name_the_fix(patch, match, config_error):
    config_error("consistency", _block(), patch, match)


def test_selection_study_rows_cv_shared_and_paper_tables():
    methods = {"accurate": {"approximation": "exact"}, "nystrom": {"sampler": "uniform"},
               "cv3": {"approximation": "cv", "folds": 3}}
    block = {**_block(kind="selection"), "methods": methods, "params": {"log2_gammas": [-4, -2, 0]}}
    kind, rows = _run(block, study="selection")
    assert len(rows) == 3 * 2
    cv = [r for r in rows if r["method"] == "cv3"]
    assert cv[0]["metrics"]["log2_gamma_selected"] == cv[1]["metrics"]["log2_gamma_selected"]
    # the accurate choice is the arg-min of the exact criterion over the grid
    sp = data.load("bupa", seed=0, split={"test_fraction": 0.5})
    y = np.where(sp.y_train == sp.y_train.max(), 1.0, -1.0)
    res = selection.criterion_path(sp.X_train, y, [2.0**-4, 0.25, 1.0], "exact", "c_ree")
    acc = next(r for r in rows if r["method"] == "accurate" and r["coords"]["criterion"] == "c_ree")
    assert acc["params"]["gamma"] == res.best_gamma
    df = results.frame("selection", rows, kind.coords)
    tables = studies.section("selection").tables(df, block)
    assert "Table I (C_ree)" in tables[1][0] or "Table I (C_ree)" in tables[0][0]
    paper = sel_mod.PAPER_TABLES[("c_ree", "housing")]
    assert paper["Accurate"][:2] == pytest.approx((27.9, 4.8)) and paper["n"] == 506
    assert sel_mod.PAPER_TABLES[("c_ipe", "pima")]["Nystrom"][0] == pytest.approx(0.7604)
    assert len(sel_mod.PAPER_TABLES) == 40
    with pytest.raises(ConfigError, match="folds"):
        check({"studies": {"selection": {**{k: v for k, v in block.items() if k != "kind"},
                                         "reference": "accurate",
                                         "methods": {"accurate": {"approximation": "exact"},
                                                     "cv": {"approximation": "cv", "folds": 1}}}}})


def test_mcm_takes_a_grid_data_sets_own_grid_where_h4_holds():
    """Ding et al. (TNNLS 2020) run MCM on their 2-D grids "to strictly satisfy H4" (footnote 5): the default
    ``grid: data`` lays the points on the data set's own (10, 10) grid, not the 3-level (5, 5, 4) one."""
    block = {"kind": "consistency", "datasets": ["mcm_grid_10"], "seeds": [0], "scaling": "none",
             "kernels": {"gaussian": {"kernel": "gaussian"}}, "split": {"test_fraction": 0},
             "methods": {"own": {"approximation": "mcm"}, "three": {"approximation": "mcm", "grid": "levels"},
                         "named": {"approximation": "mcm", "grid": [10, 10]}},
             "params": {"log2_gammas": [8], "criteria": ["c_ree"]}}
    kind, rows = _run(block, dataset="mcm_grid_10", study="consistency_mcm")
    by = {r["method"]: r for r in rows}
    assert by["own"]["params"]["grid"] == [10, 10] and "levels" not in by["own"]["params"]
    assert by["three"]["params"]["levels"] == 3 and "grid" not in by["three"]["params"]
    assert {k: v for k, v in by["named"]["metrics"].items() if k != "seconds"} == \
        {k: v for k, v in by["own"]["metrics"].items() if k != "seconds"}
    # a narrow kernel on the grid H4 describes: U_m is K up to the wrap-around terms (exp(-256 * 0.01 k^2))
    assert by["own"]["metrics"]["relative_gap"] < 0.01 < by["three"]["metrics"]["relative_gap"]
    X, y = data.obtain("mcm_grid_10")
    from nystrom_bench import approx, kernels

    with pytest.warns(UserWarning, match="H4"):
        three = approx.build("mcm", X, kernels.make("gaussian", gamma=256.0), levels=3)
    assert three.grid == (5, 5, 4) and three.grid_misfit_ > 0.3  # 0.38
    assert approx.build("mcm", X, kernels.make("gaussian", gamma=256.0), grid=(10, 10)).grid_misfit_ < 1e-12


def test_mcm_grid_that_does_not_fit_the_training_part_is_named():
    block = {**_block(), "methods": {"mcm": {"approximation": "mcm", "grid": [10, 10]}},
             "params": {"log2_gammas": [0], "criteria": ["c_ree"]}}
    with pytest.raises(ValueError, match=r"grid \[10, 10\] has 100 cells but the training part has 173"):
        _run(block)


def test_grid_of_a_registry_entry_must_cover_its_rows():
    from nystrom_bench.data.catalog import _validate_entry
    from nystrom_bench.data.errors import DataError

    entry = {"task": "regression", "source": "synthetic:mcm_grid", "shape": [100, 2], "split": {"test_fraction": 0}}
    _validate_entry("ok", {**entry, "grid": [10, 10]})
    for bad in ([10, 9], [], "10x10", [10, 10.0]):
        with pytest.raises(DataError, match="grid: must list positive integers"):
            _validate_entry("bad", {**entry, "grid": bad})
