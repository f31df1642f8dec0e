import os
import sys


def _threads_per_worker():
    """The cores over the pytest-xdist workers (1 under `make test` on 2 cores)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))))


#: BLAS and OpenMP threads per test process.  Two workers with two OpenBLAS threads each oversubscribe 2 cores, and
#: idle OpenBLAS threads spin: the same tests took 2.5-3x the CPU seconds (issue 39).  Set before numpy loads, so
#: OpenBLAS starts no more threads (a BLAS loaded earlier is limited at run time); the subprocesses the tests start
#: inherit it.  A variable set outside pytest wins (``OPENBLAS_NUM_THREADS=2 pytest`` tests with two); one this file
#: set in xdist's controller process (_NB_TEST_THREADS, inherited by the workers) is set again for the worker.
THREADS = _threads_per_worker()
_PRESET = "OPENBLAS_NUM_THREADS" in os.environ and "_NB_TEST_THREADS" not in os.environ
if not _PRESET:
    os.environ["_NB_TEST_THREADS"] = str(THREADS)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(THREADS)
    if "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(THREADS, user_api="blas")

import numpy as np  # noqa: E402 - after the thread counts
import pytest  # noqa: E402


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
    """An empty MLflow SQLite store with its tables made, once per pytest session: creating a store runs
    MLflow's schema migrations (about 3 s here, 6 s under load), opening a copy takes 0.1 s.  Under
    pytest-xdist the first worker to ask makes it in the session's shared temporary directory, under a file
    lock, and the others copy it (as test_workflow's ``workdir``); it is made aside and moved in when whole."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-of-<user>/pytest-<n>/: the same for every worker of this session
    path = root / "mlflow-template.db"
    with FileLock(str(root / "mlflow-template.lock")):
        if not path.exists():
            from mlflow.tracking import MlflowClient

            made = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
            MlflowClient(tracking_uri=f"sqlite:///{made}").search_experiments()
            os.replace(made, path)
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
