"""The README's Python examples run as written (the public API of DESIGN.md), and its
"Extending" study works end to end through the config check and the experiment loop."""

import re
import textwrap
from pathlib import Path

import yaml

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang):
    return [textwrap.dedent(b) for b in re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)]


def test_readme_python_blocks_run():
    blocks = _blocks("python")
    assert len(blocks) >= 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["model"].predict(namespace["split"].X_test).shape == namespace["split"].y_test.shape


def test_readme_extending_study_runs():
    from nystrom_bench import data, studies
    from nystrom_bench.config import check

    example = next(b for b in _blocks("python") if "@register" in b)
    exec(compile(example, str(README), "exec"), {})  # noqa: S102 - registers the example study kind
    config = yaml.safe_load(next(b for b in _blocks("yaml") if "landmark_curve" in b))
    block = check(config)["landmark_curve"]
    block = dict(block, seeds=[0], params={"m": [10, 20]})
    st = studies.get("landmark_curve")
    X, y = data.obtain("diabetes")
    rows = st.run("landmark_curve", block, "diabetes", X, y, {0: data.make_split("diabetes", 0, len(X), y)})
    assert sorted((r["method"], r["coords"]["m"]) for r in rows) == [("rls", 10), ("rls", 20), ("uniform", 10),
                                                                      ("uniform", 20)]
    assert all(r["metrics"]["test_mse"] > 0 for r in rows)
