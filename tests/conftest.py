import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def X(rng):
    return rng.normal(size=(60, 4))


@pytest.fixture
def config_error():
    """``config_error(name, block, patch, match)``: a study block with ``patch`` applied (its own label
    as the study name; a patched method list becomes the reference ``x``) fails the config check with a
    message matching ``match``."""
    from nystrom_bench.config import ConfigError, check

    def run(name, block, patch, match):
        block = {**block, **patch}
        block.pop("kind", None)
        if patch.get("methods"):
            block["reference"] = "x"
        with pytest.raises(ConfigError, match=match):
            check({"studies": {name: block}})

    return run


@pytest.fixture(scope="session")
def _mlflow_template(tmp_path_factory):
    """An empty MLflow SQLite store with its tables made, once per test process: creating a store runs
    MLflow's schema migrations (about 3 s here, 6 s under load), opening a copy takes 0.1 s."""
    from mlflow.tracking import MlflowClient

    path = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def mlflow_uri(tmp_path, _mlflow_template):
    """``sqlite:///<tmp_path>/mlflow.db``: a fresh, empty MLflow store of this test alone (a copy of
    the migrated template, the same as one MLflow would create there)."""
    import shutil

    path = tmp_path / "mlflow.db"
    shutil.copyfile(_mlflow_template, path)
    return f"sqlite:///{path}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A subprocess's ``timeout=`` in a test is a hang guard (>= 3x a quiet run on the slowest machine kind,
    issue 39 item 7): its failure says so, instead of subprocess's bare ``TimeoutExpired``."""
    import subprocess

    try:
        return (yield)
    except subprocess.TimeoutExpired as exc:
        cmd = exc.cmd if isinstance(exc.cmd, str) else " ".join(map(str, exc.cmd))
        raise AssertionError(f"hang guard: {cmd[:300]!r} did not finish within {exc.timeout:.3g} s and was killed: "
                             f"a hang, not slowness (each limit is >= 3x a quiet run on the slowest machine "
                             f"kind; raise it in {item.nodeid.split('::')[0]} if a slower machine needs more)"
                             ) from exc
