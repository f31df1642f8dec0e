"""The Python examples of the README and of the docs pages that grew out of it (docs/guide,
docs/developer) run as written (the public API of DESIGN.md), and the "Extending" study works end to
end through the config check and the experiment loop."""

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = README.parent / "docs"
#: the README and the docs pages that were its sections, in the README's old order (their examples run
#: in one namespace, as they did in one file)
PAGES = [README, DOCS / "getting_started.md", DOCS / "guide" / "library.md",
         DOCS / "guide" / "choosing_parameters.md", DOCS / "guide" / "mlflow.md",
         DOCS / "guide" / "configuration.md", DOCS / "developer" / "extending.md"]


def _text():
    return "\n".join(p.read_text() for p in PAGES)


def _blocks(lang):
    return [textwrap.dedent(b) for b in re.findall(rf"```{lang}\n(.*?)```", _text(), flags=re.S)]


#: the README's large-n example (KRR with CG in float32 on n = 50,000, m = 1,000: 45 s on this 2-core Xeon,
#: 90 s on the slowest machine kind) shrunk 10x in n and m for `make test`: the same code path (CG, float32,
#: streamed kernel blocks, predict); the slow test runs it as written
SHRINK = {"60_000": "6_000", "50_000": "5_000", "n_components=1000": "n_components=100"}


@pytest.fixture(autouse=True)
def _registries_as_they_were():
    """The examples register a sampler, a method and a study: the other tests' registries stay as they were."""
    from nystrom_bench import methods, sampling, studies

    studies.available()  # the kinds' families declared, so that only the examples' additions are undone
    samplers, kinds = dict(sampling._REGISTRY), dict(studies._REGISTRY)
    families = {name: dict(fam["methods"]) for name, fam in methods._FAMILIES.items()}
    yield
    sampling._REGISTRY.clear()
    sampling._REGISTRY.update(samplers)
    studies._REGISTRY.clear()
    studies._REGISTRY.update(kinds)
    for name, fam in methods._FAMILIES.items():
        fam["methods"].clear()
        fam["methods"].update(families.get(name, {}))


def _run_blocks(shrink):
    blocks = _blocks("python")
    assert len(blocks) >= 3
    if shrink:
        big = [i for i, b in enumerate(blocks) if all(k in b for k in SHRINK)]
        assert len(big) == 1, "the README's large-n example changed: update SHRINK in tests/test_readme.py"
        for old, new in SHRINK.items():
            blocks[big[0]] = blocks[big[0]].replace(old, new)
    namespace = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["model"].predict(namespace["split"].X_test).shape == namespace["split"].y_test.shape
    return namespace


def test_readme_python_blocks_run():
    ns = _run_blocks(shrink=True)
    assert ns["big"].solver_ == "cg" and ns["Xs"].shape[0] == 6_000 and ns["rmse"] < 0.5


@pytest.mark.slow  # the large-n example as written: 45 s here, 90 s on the slowest machine kind
def test_readme_python_blocks_run_as_written():
    ns = _run_blocks(shrink=False)
    assert ns["big"].solver_ == "cg" and ns["Xs"].shape[0] == 60_000 and ns["rmse"] < 0.3


def _example(marker):
    """The README's Python example that contains ``marker``, and its length in lines."""
    block = next(b for b in _blocks("python") if marker in b)
    return block, len(block.strip().splitlines())


def test_readme_extending_examples_are_small():
    assert _example("class SklearnNystroem(Method)")[1] <= 30  # issue 26: a new method in at most 30 lines
    assert _example("class LandmarkCurve(Study)")[1] <= 50  # and a new study in at most 50


def test_readme_extending_method_and_study_run():
    from nystrom_bench import data, methods, studies
    from nystrom_bench.config import check

    for marker in ("class SklearnNystroem(Method)", "class LandmarkCurve(Study)"):
        exec(compile(_example(marker)[0], str(README), "exec"), {})  # noqa: S102 - registers the examples
    config = yaml.safe_load(next(b for b in _blocks("yaml") if "landmark_curve" in b))
    block = check(config)["landmark_curve"]  # loads the kinds, whose krr package declares the family
    assert "sklearn" in methods.names("krr")
    block = dict(block, seeds=[0], params={"m": [10, 20]})
    st = studies.get("landmark_curve")
    X, y = data.obtain("diabetes")
    rows = st.run("landmark_curve", block, "diabetes", X, y, {0: data.make_split("diabetes", 0, len(X), y)})
    assert sorted((r["method"], r["coords"]["m"]) for r in rows) == [
        ("rls", 10), ("rls", 20), ("sk", 10), ("sk", 20), ("uniform", 10), ("uniform", 20)]
    assert all(r["metrics"]["test_mse"] > 0 for r in rows)
    sk = [r for r in rows if r["method"] == "sk"]
    assert [r["params"]["n_components"] for r in sk] == [10, 20] and sk[0]["params"]["approach"] == "sklearn"
    # the method's option schema is checked with the config, before any job
    bad = yaml.safe_load(next(b for b in _blocks("yaml") if "landmark_curve" in b))
    bad["studies"]["landmark_curve"]["methods"]["sk"]["n_components"] = 0
    from nystrom_bench.config import ConfigError

    with pytest.raises(ConfigError, match=r"methods.sk: option 'n_components': 0 is less than the minimum of 1"):
        check(bad)


def test_extending_sampler_example_runs_and_picks_the_farthest_points():
    """The Extending page's sampler, registered by its example, is usable by name; on points of a line it
    takes, after its random start, the farthest point, then the farthest from both (a textbook check)."""
    from nystrom_bench import kernels, learners, sampling

    exec(compile(_example("def farthest_point(")[0], str(README), "exec"), {})  # noqa: S102 - registers it
    X = np.array([[0.0], [1.0], [2.0], [3.0], [10.0]])
    kern = kernels.make("gaussian", gamma=0.01)  # monotone in the distance on this scale
    idx = sampling.sample("farthest_point", X, kern, c=3, seed=0)
    start = int(sampling.sample("farthest_point", X, kern, c=1, seed=0)[0])
    assert len(set(idx)) == 3 and start in idx
    d2 = 2 - 2 * kern(X, X)  # the feature-space distances, densely (5 points)
    second = int(np.argmax(d2[:, start]))
    third = int(np.argmax(np.minimum(d2[:, start], d2[:, second])))
    assert sorted(idx) == sorted({start, second, third})
    X2, y2 = np.random.default_rng(0).normal(size=(80, 3)), np.random.default_rng(1).normal(size=80)
    model = learners.KRR(sampler="farthest_point", n_components=10, gamma=0.5, random_state=0).fit(X2, y2)
    assert model.predict(X2).shape == (80,)


def test_extending_data_set_example_is_a_valid_entry_that_loads(monkeypatch):
    """The Extending page's datasets.yaml entry passes the registry's checks and its source gives the rows,
    features and classes it declares."""
    from nystrom_bench.data import catalog, sources

    (name, entry), = yaml.safe_load(next(b for b in _blocks("yaml") if "digits38:" in b)).items()
    catalog._validate_entry(name, entry)
    assert name not in catalog.available()
    real = sources.info
    monkeypatch.setattr(sources, "info", lambda n: entry if n == name else real(n))
    X, y = sources.obtain(name)
    assert X.shape == (357, 64) and sorted(set(y.tolist())) == [0, 1]


def _slug(heading):
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_readme_links_point_at_real_files_and_docs_name_real_reports():
    """The README's relative links name files of the repository (its docs pages); the docs pages'
    ``reports/<name>.pdf`` name a study block of the default config (or the summary), i.e. a PDF that
    `make reproduce` writes. (Links between docs pages and their anchors: `make docs`, warnings as errors.)"""
    text = README.read_text()
    links = [a.split("#")[0] for a in re.findall(r"\]\(([^)#][^)]*)\)", text) if "://" not in a]
    assert links and not [a for a in links if not (README.parent / a).exists()]
    config = yaml.safe_load((README.parent / "config" / "config.yaml").read_text())
    pages = "\n".join(p.read_text() for p in DOCS.rglob("*.md") if "_build" not in p.parts)
    pdfs = set(re.findall(r"reports/([\w-]+)\.pdf", pages)) - {"<study>"}
    assert pdfs and not pdfs - set(config["studies"]) - {"summary"}


def test_choosing_parameters_cites_guide_rows_and_questions_that_exist():
    """The table under "Choosing parameters" links evidence, never copies it: each guide row and answer it
    names by its label must be one that nystrom_bench.findings writes."""
    import inspect

    from nystrom_bench import findings

    text = (DOCS / "guide" / "choosing_parameters.md").read_text()
    section = text.split("# Choosing parameters", 1)[1].split("The defaults, measured.", 1)[0]
    from nystrom_bench import studies

    # the guide's rows: its own, and one per question of a kind's that declares a guide row
    source = inspect.getsource(findings._guide) + "".join(
        f'"{q["guide"]["task"]} (' for q in studies.questions() if q.get("guide"))
    rows = re.findall(r"guide rows? \*([^*]+)\*", section) + re.findall(r"\(\*([^*]+)\*; \*([^*]+)\*\)", section)
    labels = [p.strip() for r in rows for p in (r if isinstance(r, tuple) else (r,))]
    assert len(labels) >= 5
    for label in labels:
        for part in label.split(", "):  # "regression, 10^4 and more": the task and n columns
            part = re.sub(r"^(landmark count|kernel width) \((\w+)\)$", r"\1", part)
            assert f'"{part}' in source or f"{part} (" in source or f'"{part}"' in source, part
    questions = {q["question"] for q in studies.questions()}
    asked = re.findall(r"answer \*([^*]+)\*", section)
    assert asked and set(asked) <= questions
