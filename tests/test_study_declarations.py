"""What a study kind declares in its package (studies/<kind>/) and the generic layers read (issue 38): its
MLflow curve coords (tracking_layout), its own findings questions (findings), its methods' library calls (the
practitioner's guide), its method family (methods, which waits for a family declared late)."""

import numpy as np
import pandas as pd
import pytest

from nystrom_bench import findings, methods, studies, tracking_layout


def _rows(coords_of):
    return [{"dataset": "d", "method": "a", "kernel": "g", "seed": 0, "coords": c, "params": {},
             "metrics": {"gap": float(i)}} for i, c in enumerate(coords_of)]


def test_a_run_draws_its_curve_over_the_kinds_first_curve_coord():
    # log2_gamma has more values than l: without a preference the curve runs over it, with one over l
    rows = _rows([{"log2_gamma": g, "l": n} for g in (-2, -1, 0, 1) for n in (50, 100)])
    coords = ("log2_gamma", "l")
    assert tracking_layout.plan("s", rows, coords)[0]["curve"] == "log2_gamma"
    assert tracking_layout.plan("s", rows, coords, curve=("l", "log2_gamma"))[0]["curve"] == "l"
    # a preferred coord that a run lacks is passed over
    assert tracking_layout.plan("s", _rows([{"log2_gamma": g} for g in (0, 1)]), coords,
                                curve=("l", "log2_gamma"))[0]["curve"] == "log2_gamma"


@pytest.mark.parametrize("kind", studies.available())
def test_a_kinds_declarations_name_its_own_coords_and_questions(kind):
    study = studies.get(kind)
    assert study.family in methods.families()
    assert set(study.curve_coords) <= set(study.coords), f"{kind}: curve_coords must be among its coords"
    generic = {q["id"] for q in findings.QUESTIONS}
    for q in study.questions:
        assert {"id", "question", "role"} <= set(q) and q["id"] not in generic, (kind, q)
        assert q.get("before") in (None, *generic), (kind, q)
    info_keys = {"questions", "calls"} & set(_info(kind))
    assert ("questions" in info_keys) == bool(study.questions)


def _info(kind, methods_block=None):
    from nystrom_bench.jobs import analysis_info

    return analysis_info(studies.get(kind), {"methods": methods_block or {"a": {}}})


def test_the_kinds_questions_join_the_generic_ones_in_place():
    ids = [q["id"] for q in studies.questions()]
    generic = [q["id"] for q in findings.QUESTIONS]
    assert [i for i in ids if i in generic] == generic  # the generic ones keep their order
    assert ids.index("selection") == ids.index("solver") - 1 and ids[-1] == "consistency"
    # an exclusive question takes its values from every other question's rankings
    asked = {q["id"]: q for q in studies.questions()}
    assert "cv" in asked["approximation"]["unless"] and "cv" in asked["exact"]["unless"]
    assert "unless" not in {q["id"]: q for q in findings.all_questions()}["approximation"]
    # a study is asked the generic questions and its kind's own only
    assert [q["id"] for q in findings.all_questions(_info("krr").get("questions", ()))] == generic
    assert "selection" in [q["id"] for q in findings.all_questions(_info("selection")["questions"])]


def test_a_guide_question_gives_the_fastest_selector_not_worse_than_the_best_with_its_call():
    block = {"accurate": {"approximation": "exact"}, "nystrom": {"approximation": "nystrom", "sampler": "uniform"},
             "cv3": {"approximation": "cv", "folds": 3}}
    info = {**_info("selection", block), "study": "sel", "config": {"methods": block},
            "metrics": {"test_mse": ["Test MSE", True], "selection_seconds": ["Selection time (s)", True]},
            "tested_metrics": ["test_mse", "selection_seconds"], "primary_metric": "test_mse"}
    assert info["calls"] == {"accurate": 'selection.criterion_path(X, y, gammas, "exact", "ree")',
                             "nystrom": 'selection.criterion_path(X, y, gammas, "nystrom", "ree")',
                             "cv3": "selection.cv_path(X, y, gammas, cv=3)"}
    rng = np.random.default_rng(0)
    rows = []
    for d in range(4):
        for s in range(6):
            base = rng.uniform(1, 2)
            for m, (err, sec) in {"accurate": (1.0, 5.0), "nystrom": (1.0 + 1e-4, 1.0), "cv3": (1.3, 20.0)}.items():
                rows.append({"dataset": f"d{d}", "kernel": "g", "seed": s, "criterion": "c_ree", "method": m,
                             "test_mse": base * err * (1 + 1e-3 * rng.standard_normal()),
                             "selection_seconds": sec * (1 + 0.01 * rng.standard_normal())})
    records = findings.study_answers(pd.DataFrame(rows), {**info, "coords": ["criterion"]})
    assert {r["question"] for r in records} == {"selection"}  # "Which approximation?" leaves cv's ranking alone
    guide = findings.findings(records, pd.DataFrame(), {"sel": info})["guide"]
    row = next(g for g in guide if g["task"] == "kernel width (regression)")
    assert row["use"].startswith("select with nystrom") and row["call"] == info["calls"]["nystrom"]
    assert row["budget"] == "a grid of widths"


def test_a_method_registered_before_its_family_waits_for_it(monkeypatch):
    studies.available()
    monkeypatch.setattr(methods, "_FAMILIES", dict(methods._FAMILIES))
    monkeypatch.setattr(methods, "_PENDING", {})

    @methods.register
    class Early(methods.Method):
        family, name = "late_family", "early"

    assert methods.undeclared() == {"late_family": ["Early"]}
    with pytest.raises(ValueError, match=r"unknown method family 'late_family'.*load the study kinds"):
        methods.names("late_family")
    with pytest.raises(ValueError, match=r"undeclared family: 'late_family': Early; use one of .*krr"):
        studies.available()
    methods.family("late_family", key="approach", default="early")
    assert methods.names("late_family") == ["early"] and not methods.undeclared()
    assert isinstance(methods.build("late_family", "x", {}), Early)


def test_a_kind_without_a_family_says_so(monkeypatch):
    study = studies.get("krr")
    monkeypatch.setattr(type(study), "family", None)
    with pytest.raises(ValueError, match=r"study kind 'krr' declares no method family: set KRRStudy.family"):
        study.method("a", {})


def test_a_trial_names_its_method_and_label_and_warns_on_the_old_name():
    study = studies.get("krr")
    method = study.method("lla", {"approximation": "nystrom", "mode": "lla"})
    trial = studies.Trial("krr", "d", 0, None, None, None, "g", None, method, {}, {}, {})
    assert trial.method is method and trial.label == "lla" and trial.method_cfg == method.opts
    with pytest.warns(FutureWarning, match=r"trial.solver is deprecated: the Method is trial.method"):
        assert trial.solver is method


def test_reading_the_study_kinds_imports_no_learner_stack():
    """The analysis, MLflow and report jobs read the kinds (metrics, coords, titles); importing them must not
    import scikit-learn, scipy.stats, matplotlib or MLflow (about 2 s per job on the slowest machine, issue 39):
    the learners are imported where a method builds its estimator."""
    import subprocess
    import sys

    code = ("import sys; from nystrom_bench import studies; studies.available(); "
            "print(sorted(m for m in ('sklearn', 'scipy.stats', 'matplotlib', 'mlflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_kind_is_got_with_its_own_package_and_every_method_of_its_family():
    """``studies.get(kind)`` imports that kind's package (and what it imports), not every kind's (issue 39: a run
    job's start-up); the kind's method family must then hold every method it holds after all kinds are imported.
    One process, the kinds in turn: a family whose methods another package registers shows up as methods the full
    discovery adds."""
    import json
    import subprocess
    import sys

    code = """if True:
        import json, sys
        from nystrom_bench import methods, studies
        kinds = [p.name for p in __import__('pkgutil').iter_modules(studies.__path__)]
        seen = {}
        for kind in kinds:
            before = {m for m in sys.modules if m.startswith('nystrom_bench.studies.') and m.count('.') == 2}
            study = studies.get(kind)
            after = {m for m in sys.modules if m.startswith('nystrom_bench.studies.') and m.count('.') == 2}
            seen[kind] = [study.family, sorted(methods.names(study.family)), sorted(after - before)]
        studies.available()
        print(json.dumps({k: [f, got, sorted(methods.names(f)), new] for k, (f, got, new) in seen.items()}))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(seen) == set(studies.available())
    for kind, (family, got, every, new) in seen.items():
        assert got == every, (kind, family)
        assert f"nystrom_bench.studies.{kind}" in new or kind == "krr", (kind, new)  # krc imports krr before it
        assert len(new) <= 2, (kind, new)  # its own package, and at most the one it builds on
