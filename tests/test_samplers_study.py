"""The samplers study (issue 35): its metrics against dense textbook computations, a skipped sampler, its grid,
the question "When do non-uniform landmarks beat uniform?" on constructed results, and a tiny workflow run."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from nystrom_bench import data, findings, kernels, sampling, seeding, spectrum, studies
from nystrom_bench.studies.samplers.methods import spectral_norm

ROOT = Path(__file__).resolve().parents[1]
STUDY = "samplers"
PARAMS = {"m": [5, 10], "alpha": 0.1, "max_train": 60, "max_test": 50, "exact_points": 40}


def _run(dataset, samplers, params=PARAMS, seeds=(0,), kernel=None):
    st = studies.get("samplers")
    kernel = kernel or {"kernel": "gaussian", "gamma": "median"}
    cfg = {"datasets": [dataset], "seeds": list(seeds), "kernels": {"g": kernel},
           "methods": {s: {"sampler": s} for s in samplers}, "params": params}
    X, y = data.obtain(dataset)
    splits = {s: data.make_split(dataset, s, len(X), y) for s in seeds}
    return st, st.run(STUDY, cfg, dataset, X, y, splits), (X, y, splits)


def _prepared(st, dataset, seed, X, y, splits, params=PARAMS):
    p = st.resolve_params(params)
    return st.prepare(data.apply_split(dataset, seed, X, y, splits[seed], "standardize"), p)


def _dense_nystrom(K, kern, X, landmarks):
    """K~ = C W^+ C^T by the textbook formulas (np.linalg.pinv), for indices or points."""
    L = np.asarray(landmarks)
    Z = X[L] if L.ndim == 1 else L
    C, W = kern(X, Z), kern(Z, Z)
    return C @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ C.T, Z, W


@pytest.mark.parametrize("dataset", ["diabetes", "wine"])
def test_metrics_equal_dense_textbook_computations(dataset):
    samplers = ["uniform", "kmeans", "rpcholesky", "adaptive_ms"]
    st, rows, (X, y, splits) = _run(dataset, samplers)
    sp = _prepared(st, dataset, 0, X, y, splits)
    n = len(sp.y_train)
    assert n == PARAMS["max_train"] and len(sp.y_test) <= PARAMS["max_test"]
    kern = kernels.from_spec({"kernel": "gaussian", "gamma": "median"}, sp.X_train)
    K = kern(sp.X_train)
    S = spectrum.subsample(n, PARAMS["exact_points"], seeding.rng(0, STUDY, dataset, "exact_rows"))
    assert len(S) == PARAMS["exact_points"]
    regression = sp.info["task"] == "regression"
    assert len(rows) == len(samplers) * len(PARAMS["m"])
    for row in rows:
        sampler, m, met = row["method"], row["coords"]["m"], row["metrics"]
        y_s = (sp.y_train - sp.y_train.mean()) if regression else sp.y_train
        L = sampling.sample(sampler, sp.X_train, kern, m, seed=seeding.rng(0, STUDY, dataset),
                            **({"y": y_s} if sampling.needs_y(sampler) else {}))
        Kt, Z, W = _dense_nystrom(K, kern, sp.X_train, L)
        assert met["trace_error"] == pytest.approx((np.trace(K) - np.trace(Kt)) / np.trace(K), rel=1e-6, abs=1e-10)
        R = (K - Kt)[np.ix_(S, S)]
        KS = K[np.ix_(S, S)]
        assert met["frobenius_error"] == pytest.approx(np.linalg.norm(R) / np.linalg.norm(KS), rel=1e-6, abs=1e-10)
        assert met["spectral_error"] == pytest.approx(np.linalg.norm(R, 2) / np.linalg.norm(KS, 2), rel=1e-5,
                                                      abs=1e-9)
        # LLA KRR: ridge regression on the features phi(x) = k(x, Z) W^{-1/2}, predictions phi(x_test) w
        s, U = np.linalg.eigh(W)
        keep = s > 1e-10 * s.max()
        T = U[:, keep] / np.sqrt(s[keep])
        Phi, Phi_t = kern(sp.X_train, Z) @ T, kern(sp.X_test, Z) @ T
        if regression:
            mu = sp.y_train.mean()
            w = np.linalg.solve(Phi.T @ Phi + 0.1 * np.eye(Phi.shape[1]), Phi.T @ (sp.y_train - mu))
            want = np.mean((Phi_t @ w + mu - sp.y_test) ** 2) / np.var(sp.y_test)
            assert met["test_error"] == pytest.approx(want, rel=1e-5)
        else:
            classes = np.unique(sp.y_train)
            Y = np.where(sp.y_train[:, None] == classes[None, :], 1.0, -1.0)
            w = np.linalg.solve(Phi.T @ Phi + 0.1 * np.eye(Phi.shape[1]), Phi.T @ Y)
            want = np.mean(classes[np.argmax(Phi_t @ w, axis=1)] != sp.y_test)
            assert met["test_error"] == pytest.approx(want, abs=1e-12)
        # the approximation's kernel entries: the sampler's, plus C (and W for points) where no factor came back
        # (K(Z) for W counts m^2 + m: kernels.counting evaluates a square matrix's diagonal again)
        entries = {"uniform": n * m, "adaptive_ms": None, "rpcholesky": (m + 1) * n, "kmeans": n * m + m * m + m}
        if entries[sampler] is not None:
            assert met["kernel_entries"] == entries[sampler]
        else:  # the adaptive sampler evaluates its columns; building C evaluates n x m more
            assert met["kernel_entries"] > n * m
        assert met["sampling_seconds"] >= 0 and np.isfinite(met["sampling_seconds"])
        # the properties: once per data set, seed and kernel, from spectrum.properties at lam = alpha
        seed = int(seeding.rng(0, STUDY, dataset, "properties").integers(2**31 - 1))
        props = spectrum.properties(sp.X_train, kern, lam=0.1, max_points=PARAMS["exact_points"], seed=seed)
        for k, v in props.items():
            assert row["params"][f"prop_{k}"] == pytest.approx(v, rel=1e-9)
        assert row["params"]["sampler"] == sampler and row["params"]["exact_points"] == PARAMS["exact_points"]


def test_factor_is_reused_and_trace_error_identity():
    """RPCholesky's factor is used as is (no second kernel evaluation), and its trace error is the residual
    diagonal's share, as Chen et al.'s Algorithm 1 tracks it."""
    st, rows, (X, y, splits) = _run("diabetes", ["rpcholesky", "greedy_cholesky"], seeds=(1,))
    sp = _prepared(st, "diabetes", 1, X, y, splits)
    n = len(sp.y_train)
    for row in rows:
        m = row["coords"]["m"]
        assert row["metrics"]["kernel_entries"] == (m + 1) * n
        assert row["params"]["rank"] == m and row["params"]["landmark_kind"] == "indices"


def test_a_sampler_that_cannot_run_is_skipped_with_its_reason():
    @sampling.register("test_tiny_only")
    def tiny_only(X, kernel, c, rng):
        return np.arange(c)

    tiny_only.max_n = 10
    try:
        _, rows, _ = _run("diabetes", ["uniform", "test_tiny_only"])
    finally:
        sampling._REGISTRY.pop("test_tiny_only")
    skipped = [r for r in rows if r["method"] == "test_tiny_only"]
    assert len(skipped) == len(PARAMS["m"])
    for r in skipped:
        assert all(np.isnan(v) for v in r["metrics"].values())
        assert "at most 10 points" in r["params"]["skipped"] and "60" in r["params"]["skipped"]
    assert all(np.isfinite(r["metrics"]["trace_error"]) for r in rows if r["method"] == "uniform")


def test_grid_keeps_m_up_to_half_the_training_points_and_checks_refuse_what_cannot_run():
    st = studies.get("samplers")
    p = st.resolve_params({"m": [25, 50, 100], "max_train": 400})
    assert [c["m"] for c in st.coord_grid(p, None, {"n_train": 125})] == [25, 50]
    assert [c["m"] for c in st.coord_grid(p, None, {"n_train": 400})] == [25, 50, 100]
    assert st.check_data({"m": [100], "max_train": 400}, "wine", 125) is not None
    assert st.check_data({"m": [25, 100], "max_train": 400}, "wine", 125) is None
    with pytest.raises(ValueError, match="at most half"):
        st.check_params({"m": [300], "max_train": 400})


def test_spectral_norm_matches_eigvalsh():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(300, 300))
    A = A + A.T
    assert spectral_norm(A) == pytest.approx(np.abs(np.linalg.eigvalsh(A)).max(), rel=1e-8)
    B = A[:10, :10]
    assert spectral_norm(B) == pytest.approx(np.abs(np.linalg.eigvalsh(B)).max(), rel=1e-12)


def test_default_config_block_runs_every_registered_sampler_on_20_data_sets():
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["studies"]["samplers"]
    assert {b["sampler"] for b in cfg["methods"].values()} == set(sampling.available())
    assert len(cfg["datasets"]) >= 20 and len(cfg["seeds"]) >= 5 and len(cfg["kernels"]) == 2
    assert {"unequal_clusters", "outliers", "fast_decay", "slow_decay"} <= set(cfg["datasets"])


# -- the question, on constructed results --------------------------------------------------------------------
INFO = {"study": "s", "metrics": {"err": ("Error", True)}, "primary_metric": "err", "coords": ["m"],
        "block_cols": ["dataset", "kernel", "seed"],
        "config": {"methods": {"uniform": {"sampler": "uniform"}, "rpc": {"sampler": "rpcholesky"},
                               "km": {"sampler": "kmeans"}}}}


def _constructed(effect, n_sets=12, seed=0, props_in_params=True):
    """Results where the error of ``rpc`` is uniform's times exp(effect(coherence, unit)) and ``km``'s is
    uniform's up to noise; properties ``prop_coherence`` (1..n_sets) and ``prop_noise`` (random)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_sets):
        coh, other = 1.0 + d, rng.random()
        for k in ("a", "b"):
            for s in range(5):
                for m in (10, 20):
                    base = rng.uniform(0.1, 0.5)
                    props = {"prop_coherence": coh, "prop_noise": other}
                    for meth, eff in (("uniform", 0.0), ("rpc", effect(coh, rng)), ("km", 0.0)):
                        row = {"study": "s", "dataset": f"d{d}", "method": meth, "kernel": k, "seed": s, "m": m,
                               "err": base * np.exp(eff + rng.normal(0, 0.01))}
                        if props_in_params:
                            row["params"] = json.dumps(props)
                        else:
                            row.update(props)
                        rows.append(row)
    return pd.DataFrame(rows)


def _property_record(df, info=INFO):
    recs = [r for r in findings.study_answers(df, info) if r["question"] == "nonuniform"]
    assert len(recs) <= 1
    return recs[0] if recs else None


@pytest.mark.parametrize("in_params", [True, False])
def test_question_names_the_property_that_drives_the_gain(in_params):
    r = _property_record(_constructed(lambda coh, rng: -0.05 * coh, props_in_params=in_params))
    assert r["kind"] == "property" and r["reference"] == "uniform" and r["n_units"] == 24
    assert r["samplers"][0]["name"] == "rpc" and r["samplers"][0]["median_gain"] < 0.8
    best = r["predictor"]
    assert best["sampler"] == "rpc" and best["property"] == "prop_coherence"
    assert best["rho"] < -0.9 and best["ci"][0] <= best["rho"] <= best["ci"][1] and best["p_holm"] < 0.05
    assert best["high"]["estimate"] < best["low"]["estimate"] < 1  # a larger gain above the median
    assert r["n_tests"] == 4  # 2 samplers x 2 properties, Holm over all
    noise = r["samplers"][0]["properties"]["prop_noise"]
    assert noise["p_holm"] >= noise["p"]
    assert set(r["samplers"][0]["by_value"]) == {"10", "20"}
    text = findings.answer_text(r)
    assert "coherence predicts the gain of rpc" in text.lower() and "Holm p" in text
    assert "coherence" in findings.question_summary("nonuniform", [r])
    table = findings.answers_table([r])
    assert table.iloc[0]["answer"] == "coherence predicts the gain of rpc"


def test_question_says_no_property_predicts_a_gain_that_is_noise():
    r = _property_record(_constructed(lambda coh, rng: rng.normal(0, 0.3), seed=1))
    assert r["predictor"] is None
    assert "no property predicts the gain" in findings.answer_text(r).lower()
    assert "no data-set property predicts the gain" in findings.question_summary("nonuniform", [r])


def test_question_applies_only_with_properties_and_uniform_among_the_samplers():
    df = _constructed(lambda coh, rng: -0.05 * coh)
    assert _property_record(df.drop(columns="params")) is None  # no prop_* anywhere
    info = {**INFO, "config": {"methods": {"rpc": {"sampler": "rpcholesky"}, "km": {"sampler": "kmeans"}}}}
    assert _property_record(df[df["method"] != "uniform"], info) is None


def test_property_records_render_everywhere_the_answers_go(tmp_path):
    df = _constructed(lambda coh, rng: -0.05 * coh)
    records = findings.study_answers(df, INFO)
    found = findings.findings(records, pd.DataFrame(), {"s": INFO})
    md = findings.markdown(found, pd.DataFrame())
    assert "**When do non-uniform landmarks beat uniform?**" in md and "which data-set property predicts" in md
    assert not findings.empty_answers(md)
    assert findings.answer_figure(records, tmp_path / "cd.png", "sampler") is not None  # the ranking, not this
    lines = findings.answer_lines(records)
    assert any(a["question"] == "When do non-uniform landmarks beat uniform?" for a in lines)
    from pypdf import PdfReader

    findings.write_answers(records, tmp_path / "answers.json")
    findings.summary_pdf(None, [tmp_path / "answers.json"], {}, {}, "T", tmp_path / "summary.pdf")
    page = PdfReader(tmp_path / "summary.pdf").pages[0].extract_text()
    assert "which property predicts the gain" in page and "coherence predicts the gain of" in page


def _guide_row(df):
    guide = findings.findings(findings.study_answers(df, INFO), pd.DataFrame(), {"s": INFO})["guide"]
    rows = [g for g in guide if g["task"] == "landmark sampler (approximation error)"]
    assert len(rows) == 1
    return rows[0]


def test_guide_row_names_the_sampler_and_the_side_of_the_property_where_it_gains():
    # rpc gains everywhere, more where coherence is high: rpc landmarks, the property in the evidence
    row = _guide_row(_constructed(lambda coh, rng: -0.05 * coh))
    assert row["use"] == "rpcholesky landmarks" and row["call"] == 'KRR(n_components=m, sampler="rpcholesky")'
    assert "against coherence: Spearman rho -" in row["evidence"] and "Holm p" in row["evidence"]
    # km gains 26% everywhere, rpc 39% where coherence is high and loses 5% elsewhere: rpc on its side, km else
    df = _constructed(lambda coh, rng: -0.5 if coh > 6.5 else 0.05)
    df.loc[df["method"] == "km", "err"] *= np.exp(-0.3)
    row = _guide_row(df)
    assert row["use"].startswith("rpcholesky landmarks where coherence > ") and row["use"].endswith("else kmeans landmarks")
    assert row["call"].startswith('KRR(n_components=m, sampler="rpcholesky") if spectrum.properties(X, kernel, alpha)'
                                  '["coherence"] > ')
    assert row["call"].endswith('else KRR(n_components=m, sampler="kmeans")')
    # a gain that is noise: no property, and uniform
    row = _guide_row(_constructed(lambda coh, rng: rng.normal(0, 0.3), seed=1))
    assert "no data property predicts" in row["evidence"]
    assert row["call"] == 'KRR(n_components=m, sampler="uniform")'


# -- the workflow ------------------------------------------------------------------------------------------
TINY = {"mlflow": {"tracking_uri": "sqlite:///mlflow.db"}, "studies": {"samplers": {
    "datasets": ["wine", "diabetes", "ionosphere", "housevotes"], "seeds": [0, 1],  # 4 sets: the CD diagrams
    "kernels": {"median": {"kernel": "gaussian", "gamma": "median"},
                "median_over_4": {"kernel": "gaussian", "gamma": "median", "scale": 16}},
    "reference": "uniform",
    "methods": {"uniform": {"sampler": "uniform"}, "rpcholesky": {"sampler": "rpcholesky"},
                "kmeans": {"sampler": "kmeans"}},
    "params": {"m": [5, 10], "max_train": 60, "max_test": 50, "exact_points": 40}}}}


@pytest.mark.slow
def test_tiny_samplers_block_through_the_workflow(tmp_path):
    wd = tmp_path
    shutil.copy(ROOT / "Snakefile", wd)
    shutil.copy(ROOT / "environment.yml", wd)
    shutil.copytree(ROOT / "workflow", wd / "workflow")
    shutil.copytree(ROOT / "config", wd / "config")
    (wd / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(wd)}
    res = subprocess.run([sys.executable, "-m", "snakemake", "reports/samplers.pdf", "--cores", "2", "--configfile",
                          "tiny.yaml"], cwd=wd, capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    df = pd.read_csv(wd / "results/samplers/results.csv")
    assert len(df) == 4 * 2 * 3 * 2 * 2  # data sets x seeds x samplers x m x kernels
    assert df[["trace_error", "frobenius_error", "spectral_error", "test_error"]].notna().all().all()
    assert (df["trace_error"] >= -1e-12).all() and (df["trace_error"] <= 1).all()
    assert all(f"prop_{p}" in json.loads(df["params"].iloc[0]) for p in spectrum.PROPERTIES)
    answers = json.loads((wd / "results/samplers/answers.json").read_text())
    prop = [r for r in answers if r["question"] == "nonuniform"]
    assert len(prop) == 1 and prop[0]["n_units"] == 8 and len(prop[0]["samplers"]) == 2
    figures = {p.name for p in (wd / "results/samplers/figures").glob("*.png")}
    assert {"cd_trace_error.png", "cd_frobenius_error.png", "cd_test_error.png"} <= figures
    assert {"pareto_trace_error_sampling_seconds.png", "pareto_trace_error_kernel_entries.png",
            "trace_error_vs_m_median.png", "test_error_vs_m_median_over_4.png"} <= figures
    assert "trace_error_vs_m.png" not in figures  # no generic linear curves
    from pypdf import PdfReader

    text = "".join(p.extract_text() for p in PdfReader(wd / "reports/samplers.pdf").pages)
    assert "When do non-uniform landmarks beat uniform?" in text and "Spearman" in text


def test_a_draw_the_sampler_refuses_is_skipped_with_its_reason():
    """A k-DPP of m points does not exist where K has numerical rank below m (a 1-D set, a wide kernel):
    the row says so instead of carrying a number."""
    _, rows, _ = _run("gnkr_f4", ["uniform", "kdpp"], params={**PARAMS, "m": [25]},
                      kernel={"kernel": "gaussian", "gamma": "median", "scale": 0.01})
    kdpp = [r for r in rows if r["method"] == "kdpp"]
    assert kdpp and "numerical rank" in kdpp[0]["params"]["skipped"]
    assert all(np.isnan(v) for v in kdpp[0]["metrics"].values())


def test_reversed_methods_give_identical_rows():
    """The shared work (exact block, properties) and each sampler's stream never depend on which method runs
    first: every row but the measured seconds is the same with the methods reversed."""
    samplers = ["uniform", "rpcholesky", "kmeans", "adaptive_ms"]
    _, a, _ = _run("wine", samplers)
    _, b, _ = _run("wine", samplers[::-1])

    def key(r):
        return (r["method"], r["coords"]["m"])

    def strip(r):
        return ({k: v for k, v in r["metrics"].items() if k != "sampling_seconds"}, r["params"])

    assert {key(r): strip(r) for r in a} == {key(r): strip(r) for r in b}


def test_the_shared_exact_block_gives_spectrum_subsample_errors():
    from nystrom_bench.studies.samplers.methods import block_errors, exact_block

    X = np.random.default_rng(3).normal(size=(200, 4))
    kern = kernels.make("gaussian", gamma=0.3)
    F = spectrum.nystrom_factor(X, kern, np.arange(0, 200, 7))
    idx = spectrum.subsample(200, 120, 0)
    got, want = block_errors(exact_block(X, kern, idx), F), spectrum.subsample_errors(X, kern, F, idx)
    assert got == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize("kind", ["indices", "points"])
@pytest.mark.parametrize("targets", [1, 3])
def test_shared_lla_fit_has_krr_bits(kind, targets):
    """The row's KRR fitted on the operator of its factor (SharedLLA: C not evaluated again) predicts what
    learners.KRR(mode="lla", fit_intercept=False) on the same landmarks predicts, bit for bit, and is the
    textbook LLA solution (V^T V + alpha I) w = V^T y with V = C W^+^(1/2)."""
    from nystrom_bench import approx, learners
    from nystrom_bench.studies.samplers.methods import SharedLLA

    rng = np.random.default_rng(3)
    X, Xt = rng.normal(size=(120, 4)), rng.normal(size=(40, 4))
    y = rng.normal(size=120) if targets == 1 else rng.normal(size=(120, targets))
    kern = kernels.make("gaussian", gamma=0.3)
    L = np.sort(rng.choice(120, 15, replace=False)) if kind == "indices" else rng.normal(size=(15, 4))
    op = approx.build("nystrom", X, kernels.counting(kern), landmarks=L)
    assert SharedLLA.applies(op, kern, X)
    shared = SharedLLA.fit(op, kern, 0.1, y).predict(Xt)
    krr = learners.KRR(kernel="gaussian", gamma=0.3, alpha=0.1, approximation="nystrom", mode="lla", landmarks=L,
                       fit_intercept=False).fit(X, y).predict(Xt)
    assert shared.shape == krr.shape and shared.tobytes() == krr.tobytes()
    Z = X[L] if kind == "indices" else L
    w, U = np.linalg.eigh(kern(Z, Z))
    T = U[:, w > 1e-10 * w[-1]] / np.sqrt(w[w > 1e-10 * w[-1]])
    V = kern(X, Z) @ T
    coef = np.linalg.solve(V.T @ V + 0.1 * np.eye(V.shape[1]), V.T @ y)
    np.testing.assert_allclose(shared, kern(Xt, Z) @ T @ coef, rtol=1e-7, atol=1e-9)


def test_shared_lla_declines_what_krr_fits_itself():
    from nystrom_bench import approx
    from nystrom_bench.studies.samplers.methods import SharedLLA

    X = np.random.default_rng(0).normal(size=(60, 3))
    kern = kernels.make("gaussian", gamma=0.5)
    assert not SharedLLA.applies(None, kern, X)
    streamed = approx.build("nystrom", X, kern, landmarks=np.arange(5), store_C=False)  # no C held
    assert not SharedLLA.applies(streamed, kern, X)
    sketch = approx.build("nystrom", X, kern, landmarks=sampling.Sketch(np.ones((60, 2))))
    assert not SharedLLA.applies(sketch, kern, X)
    big = approx.build("nystrom", X, kern, landmarks=np.arange(5))
    assert not SharedLLA.applies(big, kern, np.vstack([X, X]))  # not the operator's X
