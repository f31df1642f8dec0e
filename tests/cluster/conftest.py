"""The cluster fixture: a real single-node SLURM and an MLflow server on PostgreSQL (daemons.py).

Run by ``make test-cluster`` only (the ``cluster`` marker is deselected by default).  Skipped with the
reason where SLURM cannot be started here (not root, no apt-get, a real slurm.conf, the ``cluster``
extra missing); a daemon that does not come up is a failure.  Every daemon is stopped by its pid when
the session ends, the tests failing or not (and on SIGTERM)."""

import atexit
import importlib.util
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemons  # noqa: E402


def _sigterm(signum, frame):  # a CI runner's SIGTERM: stop the daemons through the fixture's finally
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def cluster():
    reason = daemons.unavailable()
    if reason:
        pytest.skip(reason)
    for module, extra in (("snakemake_executor_plugin_slurm", "snakemake-executor-plugin-slurm"),
                          ("psycopg2", "psycopg2-binary")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{extra} is not installed: pip install -e '.[cluster]' (make test-cluster does)")
    failed = daemons.install()
    if failed:
        pytest.skip(f"SLURM/munge/PostgreSQL cannot be installed here: {failed}")
    root = Path(tempfile.mkdtemp(prefix="nystrom-bench-cluster-"))
    c = daemons.Cluster(root)
    atexit.register(c.stop)
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        c.start()  # DaemonError (a failure, not a skip) if one does not come up in time
        yield c
    finally:
        try:
            c.cancel_jobs()
        finally:
            c.stop()
            signal.signal(signal.SIGTERM, previous)
            shutil.rmtree(root, ignore_errors=True)
