"""A real single-node SLURM cluster and an MLflow tracking server on PostgreSQL, for tests/cluster.

munge, slurmctld, slurmd, PostgreSQL and ``mlflow server`` run in the foreground as children of
this process, each on 127.0.0.1 only, on ports checked free first; every start waits for the
daemon's readiness check under a hard timeout (a daemon that does not come up fails with its log,
it never hangs), and every daemon is stopped by its process id (SIGTERM, then SIGKILL).

The Debian packages (slurm-wlm, munge, postgresql) are installed from ``debian-packages.txt`` when
missing (root and apt-get needed; :func:`unavailable` says why not).  ``/etc/slurm/slurm.conf`` is
written (and removed again at the end): the executor plugin's job step clears every ``SLURM_*``
variable, ``SLURM_CONF`` included, so a nested ``srun`` reads only the default location.  Nothing
is touched where a slurm.conf not written here exists already.

Manual use (a cluster to try the profile against; Ctrl-C stops it)::

    .venv/bin/python tests/cluster/daemons.py
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = HERE / "debian-packages.txt"
SLURM_CONF = Path("/etc/slurm/slurm.conf")
MARK = "# written by nystrom-bench tests/cluster/daemons.py; removed when its cluster stops"
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
#: what the test needs on PATH (Debian: slurm-wlm, munge, postgresql)
COMMANDS = ("slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel", "scontrol", "munged", "munge",
            "unmunge")
#: the light MLflow server: no job-execution workers (12 processes, 2.7 GiB -> 2 processes, 0.5 GiB)
LIGHT_SERVER_ENV = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def _postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def missing_commands():
    missing = [c for c in COMMANDS if shutil.which(c) is None and not Path("/usr/sbin", c).exists()]
    if _postgres_bin() is None:
        missing.append("postgres")
    return missing


def unavailable():
    """Why a cluster cannot be started here (a reason to skip), or None."""
    if sys.platform != "linux":
        return "the cluster test needs Linux (SLURM, munge, PostgreSQL from Debian packages)"
    if os.geteuid() != 0:
        return "the cluster test starts SLURM's daemons and writes /etc/slurm/slurm.conf: it needs root"
    if SLURM_CONF.exists() and MARK not in SLURM_CONF.read_text(errors="replace"):
        return f"{SLURM_CONF} exists (a real SLURM installation): the test leaves it alone"
    if missing_commands() and shutil.which("apt-get") is None:
        return f"{', '.join(missing_commands())} missing and no apt-get to install them"
    return None


def install(timeout=600):
    """Install the Debian packages of ``debian-packages.txt`` if a command is missing.  Returns None,
    or why it failed (apt-get's output tail)."""
    if not missing_commands():
        return None
    pkgs = [ln.split("#")[0].strip() for ln in PACKAGES.read_text().splitlines()]
    pkgs = [p for p in pkgs if p]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *pkgs]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if res.returncode != 0:  # a fresh machine's package lists may be empty
        subprocess.run(["apt-get", "update"], capture_output=True, text=True, env=env, timeout=timeout)
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if res.returncode != 0 or missing_commands():
        return f"`{' '.join(cmd)}` failed:\n{(res.stdout + res.stderr)[-2000:]}"
    return None


def free_port():
    """A TCP port nothing listens on at 127.0.0.1 (bound and released; checked again before use)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class DaemonError(RuntimeError):
    pass


class Cluster:
    """munge + slurmctld + slurmd + PostgreSQL + ``mlflow server`` under ``root`` (a fresh directory).

    ``start()`` brings everything up (or raises :class:`DaemonError` with the failing daemon's log);
    ``stop()`` stops every daemon it started by pid, in reverse order, and removes slurm.conf.  The
    MLflow server can be stopped and started again on the same port and store (``stop_server``,
    ``start_server``).
    """

    def __init__(self, root, python=sys.executable, timeout=180):  # hang guard; a loaded machine is slow
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # PostgreSQL runs as its own user and must reach its data directory
        self.python = python
        self.timeout = timeout
        self.procs = {}  # name -> Popen, in start order
        self.logs = {}
        self.wrote_conf = False
        self.node = socket.gethostname().split(".")[0]
        self.ports = {}
        self.db = "mlflow"

    # -- processes ------------------------------------------------------------------------------
    def _spawn(self, name, argv, user=None, env=None):
        log = self.root / f"{name}.log"
        self.logs[name] = log
        kwargs = {}
        if user is not None:
            pw = pwd.getpwnam(user)
            kwargs.update(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
        fh = open(log, "ab")
        try:
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=env, cwd=self.root, **kwargs)
        finally:
            fh.close()
        self.procs[name] = proc
        return proc

    def _tail(self, name, n=3000):
        log = self.logs.get(name)
        text = log.read_text(errors="replace") if log and log.exists() else ""
        return text[-n:]

    def _wait(self, name, ready, timeout=None, what="come up"):
        """Poll ``ready()`` until true; the daemon exiting or the deadline passing is an error."""
        deadline = time.monotonic() + (timeout or self.timeout)
        proc = self.procs.get(name)
        last = None
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise DaemonError(f"{name} exited with {proc.returncode} before it came up:\n{self._tail(name)}")
            try:
                if ready():
                    return
            except Exception as exc:  # noqa: BLE001 - not ready yet; reported on timeout
                last = exc
            time.sleep(0.25)
        raise DaemonError(f"hang guard: {name} did not {what} within {timeout or self.timeout} s (last check: "
                          f"{last!r}; the limit catches hangs, not slowness: raise Cluster(timeout=...) on a "
                          f"far slower machine):\n{self._tail(name)}")

    def stop_one(self, name, timeout=20):
        """SIGTERM the daemon's pid, SIGKILL it after ``timeout``; then its leftover children (its
        process group, whose id is that pid)."""
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        try:  # e.g. the MLflow server's worker, a postgres backend
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def cancel_jobs(self, timeout=30):
        """Cancel every job of this cluster (it is ours: slurm.conf was written here) and wait until
        none runs, so no job process outlives the daemons."""
        if "slurmctld" not in self.procs:
            return
        subprocess.run(["scancel", "--full", "--user", pwd.getpwuid(os.geteuid()).pw_name],
                       capture_output=True, timeout=30)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = subprocess.run(["squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING,SUSPENDED", "-o", "%i"],
                                 capture_output=True, text=True, timeout=10)
            if res.returncode != 0 or not res.stdout.strip():
                return
            time.sleep(0.5)

    def stop(self):
        for name in reversed(list(self.procs)):
            try:
                self.stop_one(name)
            except Exception as exc:  # noqa: BLE001 - stop the others regardless
                print(f"stopping {name}: {exc}", file=sys.stderr)
        if self.wrote_conf and SLURM_CONF.exists() and MARK in SLURM_CONF.read_text(errors="replace"):
            SLURM_CONF.unlink()
            self.wrote_conf = False

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _port(self, name):
        for _ in range(20):
            port = free_port()
            if port not in self.ports.values() and port_is_free(port):
                self.ports[name] = port
                return port
        raise DaemonError(f"no free port for {name}")

    # -- daemons --------------------------------------------------------------------------------
    def start(self):
        reason = unavailable()
        if reason:
            raise DaemonError(reason)
        self.start_munge()
        self.start_slurm()
        self.start_postgres()
        self.start_server()

    def _munge_works(self):
        enc = subprocess.run(["munge", "-n"], capture_output=True, timeout=10)
        if enc.returncode != 0:
            return False
        dec = subprocess.run(["unmunge"], input=enc.stdout, capture_output=True, timeout=10)
        return dec.returncode == 0

    def start_munge(self):
        """munged as the munge user on its default socket (srun inside a job looks there)."""
        if MUNGE_SOCKET.exists() and self._munge_works():
            return  # a munge daemon runs already (a real installation): used, not stopped
        key = Path("/etc/munge/munge.key")
        for d in (MUNGE_SOCKET.parent, Path("/var/lib/munge"), Path("/var/log/munge")):
            d.mkdir(parents=True, exist_ok=True)
            shutil.chown(d, "munge", "munge")
        os.chmod(MUNGE_SOCKET.parent, 0o755)
        if not key.exists():
            subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, timeout=30)
            shutil.chown(key, "munge", "munge")
            os.chmod(key, 0o600)
        self._spawn("munged", ["munged", "--foreground", "--force", f"--log-file={self.root / 'munged.file.log'}"],
                    user="munge")
        self._wait("munged", self._munge_works)

    def _slurm_conf(self):
        cpus, mem = os.cpu_count() or 1, None
        out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30).stdout
        for field in out.split():
            key, _, value = field.partition("=")
            if key == "CPUs":
                cpus = int(value)
            elif key == "RealMemory":
                mem = int(value)
        mem = int((mem or 4096) * 0.95)
        state = self.root / "slurm"
        (state / "spool").mkdir(parents=True, exist_ok=True)
        (state / "state").mkdir(parents=True, exist_ok=True)
        return "\n".join([
            MARK,
            "ClusterName=nystrombench",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={self._port('slurmctld')}",
            f"SlurmdPort={self._port('slurmd')}",
            "CommunicationParameters=NoCtldInAddrAny,NoInAddrAny",  # bind 127.0.0.1, not every address
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            # squeue answers for finished jobs this long; the plugin's squeue status check needs it
            "MinJobAge=300",
            "ReturnToService=2",
            "MpiDefault=none",
            f"StateSaveLocation={state / 'state'}",
            f"SlurmdSpoolDir={state / 'spool'}",
            f"SlurmctldPidFile={state / 'slurmctld.pid'}",
            f"SlurmdPidFile={state / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.root / 'slurmctld.file.log'}",
            f"SlurmdLogFile={self.root / 'slurmd.file.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN",
            "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ])

    def _node_state(self):
        res = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=10)
        return res.stdout.strip()

    def start_slurm(self):
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SLURM_CONF.write_text(self._slurm_conf())
        self.wrote_conf = True
        self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i"])
        ping = lambda: "UP" in subprocess.run(["scontrol", "ping"], capture_output=True, text=True,  # noqa: E731
                                               timeout=10).stdout
        self._wait("slurmctld", ping)
        self._spawn("slurmd", ["slurmd", "-D"])
        self._wait("slurmd", lambda: self._node_state() in ("idle", "mixed", "allocated"),
                   what="register its node as idle")

    def start_postgres(self):
        bin_dir = _postgres_bin()
        data = self.root / "pgdata"
        sock = self.root / "pgsock"
        if not data.exists():
            for d in (data, sock):
                d.mkdir(mode=0o700)
                shutil.chown(d, "postgres", "postgres")
            pw = pwd.getpwnam("postgres")
            res = subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                  "-E", "UTF8", "--no-sync"], capture_output=True, text=True, timeout=120,
                                 user=pw.pw_uid, group=pw.pw_gid, extra_groups=[], cwd=self.root)
            if res.returncode != 0:
                raise DaemonError(f"initdb failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
        port = self._port("postgres")
        self._spawn("postgres", [str(bin_dir / "postgres"), "-D", str(data), "-c", "listen_addresses=127.0.0.1",
                                 "-c", f"port={port}", "-c", f"unix_socket_directories={sock}"], user="postgres")
        psql = [str(bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-tA", "-c"]
        self._wait("postgres", lambda: subprocess.run([*psql, "select 1"], capture_output=True,
                                                       timeout=10).returncode == 0)
        exists = subprocess.run([*psql, f"select 1 from pg_database where datname = '{self.db}'"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
        if exists != "1":
            subprocess.run([*psql, f"create database {self.db}"], check=True, capture_output=True, timeout=60)
        self.psql = psql

    def sql(self, query, db=None):
        """Rows of a query against the MLflow store (PostgreSQL), as lists of strings."""
        args = [*self.psql[:-1], "-d", db or self.db, "-F", "\t", "-c", query]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    @property
    def store_uri(self):
        return f"postgresql://postgres@127.0.0.1:{self.ports['postgres']}/{self.db}"

    @property
    def tracking_uri(self):
        return f"http://127.0.0.1:{self.ports['mlflow']}"

    def server_health(self):
        with urllib.request.urlopen(self.tracking_uri + "/health", timeout=5) as r:
            return r.status == 200

    def start_server(self, timeout=None):
        """``mlflow server`` on PostgreSQL, light settings (one worker, no job execution); the same
        port again after :meth:`stop_server`."""
        port = self.ports.get("mlflow") or self._port("mlflow")
        deadline = time.monotonic() + 30
        while not port_is_free(port):  # a restart: the old socket may linger a moment
            if time.monotonic() > deadline:
                raise DaemonError(f"port {port} of the MLflow server is taken")
            time.sleep(0.2)
        mlflow = str(Path(self.python).parent / "mlflow")
        env = {**os.environ, **LIGHT_SERVER_ENV}
        env.pop("MLFLOW_TRACKING_URI", None)
        self._spawn("mlflow", [mlflow, "server", "--backend-store-uri", self.store_uri,
                               "--artifacts-destination", (self.root / "mlartifacts").as_uri(),
                               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"], env=env)
        self._wait("mlflow", self.server_health, timeout=timeout or max(self.timeout, 240))

    def stop_server(self):
        self.stop_one("mlflow")

    def env(self):
        """The environment a workflow run needs: the tracking server's URI."""
        return {"MLFLOW_TRACKING_URI": self.tracking_uri}


if __name__ == "__main__":
    why = unavailable() or install()
    if why:
        sys.exit(why)
    with Cluster(tempfile.mkdtemp(prefix="nystrom-bench-cluster-")) as c:
        print(f"SLURM up (node {c.node}); MLflow server {c.tracking_uri} on {c.store_uri}; logs in {c.root}")
        print(f"export MLFLOW_TRACKING_URI={c.tracking_uri}   # then: snakemake --profile profiles/slurm ...")
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
