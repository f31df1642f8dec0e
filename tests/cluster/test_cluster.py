"""The cluster path, end to end: a slice of the tiny config through ``profiles/slurm`` on a real
single-node SLURM, logging to an MLflow server on PostgreSQL (``make test-cluster``).

1. A clean run: exit 0, the reports exist, per study the server's active configuration runs equal the
   result rows grouped at the MLflow grain (unique run keys, the table rebuilt from the runs equals
   results.csv), PostgreSQL holds them and one report run per study (PDF, figures, claims); per DAG level
   latency and the logging cost are measured.
2. Faults: a copy of that run with its run results deleted; one run job is cancelled with scancel
   while it runs and the worker (the run script's process) of the other is killed with SIGKILL: both
   jobs fail, neither leaves an output.
3. The re-run with the tracking server stopped while the track_runs jobs start logging and started
   again: the jobs retry, the results equal the clean run's, no run is lost or duplicated.

Every workflow run has a hang guard, no speed limit: a hard timeout of 3x a quiet clean run on the
slowest machine kind (HANG_GUARD_S; the process group is killed and the test fails saying so).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
import yaml

from nystrom_bench import tracking
from nystrom_bench.results import read_results

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ("krr", "gnkr_tiny")
#: a slice of tests/test_workflow.py's tiny config: plain runs (krr) and curves (gnkr_tiny)
SLICE_DATASETS = {"krr": ["diabetes"], "gnkr_tiny": ["boston"]}
#: what the test's one node needs beyond the profile: no SLURM account, 2 cores for a group job,
#: status checks every few seconds (the profile's 20 s suit a real queue)
CLUSTER_ARGS = ["--slurm-no-account", "--cores", str(min(os.cpu_count() or 1, 2)),
                "--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "1"]
TIMING_COLS = re.compile(r"time|seconds|mem")
#: the hang guard of every workflow run here: >= 3x the clean run on the slowest machine kind (2-core AVX2-only
#: EPYC, quiet: 189.5 s; the faulty run and the re-run do less), so a loaded machine (a parallel `make test`)
#: is no failure; the old 240 s limit failed 4 of 4 runs there
HANG_GUARD_S = 600


def _slice():
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_workflow import TINY
    finally:
        sys.path.pop(0)
    studies = {}
    for s in STUDIES:
        studies[s] = {**TINY["studies"][s], "datasets": SLICE_DATASETS[s]}
    return {"mlflow": {"tracking_uri": "sqlite:///mlflow.db"}, "studies": studies}


def _tree(dst):
    dst.mkdir(parents=True)
    for f in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / f, dst)
    for d in ("workflow", "config", "profiles"):
        shutil.copytree(ROOT / d, dst / d)
    (dst / "slice.yaml").write_text(yaml.safe_dump(_slice()))


class Run:
    """``snakemake --profile profiles/slurm`` in ``workdir`` as a process group, with a hard timeout."""

    def __init__(self, cluster, workdir, *targets, timeout=HANG_GUARD_S):
        self.workdir, self.timeout = workdir, timeout
        env = {**os.environ, **cluster.env(), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        self.log = workdir / f"snakemake-{time.strftime('%H%M%S')}-{os.getpid()}.log"
        self.cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", "--configfile",
                    "slice.yaml", *CLUSTER_ARGS, *targets]
        self.fh = open(self.log, "w")
        self.start = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, cwd=workdir, env=env, stdout=self.fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait(self):
        try:
            rc = self.proc.wait(max(1, self.timeout - (time.monotonic() - self.start)))
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"hang guard: snakemake did not finish within {self.timeout} s (3x a quiet run on "
                                 f"the slowest machine kind; killed). A hang, or a far slower machine: "
                                 f"raise HANG_GUARD_S in tests/cluster/test_cluster.py\n{self.tail()}") from None
        finally:
            self.fh.close()
        self.wall = time.monotonic() - self.start
        return rc

    def kill(self):
        for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(grace)
                return
            except subprocess.TimeoutExpired:
                continue

    def tail(self, n=6000):
        return self.log.read_text(errors="replace")[-n:]

    def check(self):
        rc = self.wait()
        assert rc == 0, f"snakemake exited with {rc}:\n{self.tail()}"
        return self


def _squeue():
    """{comment: (job id, state)} of this cluster's jobs (the plugin names a job's rule and wildcards in
    its comment)."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%T|%k"], capture_output=True, text=True,
                         timeout=10).stdout
    jobs = {}
    for line in out.splitlines():
        jid, state, comment = line.split("|", 2)
        jobs[comment.strip()] = (jid, state)
    return jobs


def _worker_pids(slurm_job_id, script="run.py"):
    """Processes of a SLURM job running a workflow script (Snakemake's ``.snakemake/scripts/tmp*.run.py``)."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            env = (p / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if (any(c.endswith(script.encode()) and b"/.snakemake/scripts/" in c for c in cmd)
                and f"SLURM_JOB_ID={slurm_job_id}".encode() in env):
            pids.append(int(p.name))
    return pids


def _mlflow_equals_results(cluster, workdir, study):
    """Per study: active configuration runs = result rows grouped by (data set, method, kernel, seed),
    unique run keys, one job run per job, the table rebuilt from the runs = results.csv, and the
    PostgreSQL store holds exactly these runs."""
    uri = cluster.tracking_uri
    res = read_results(workdir / f"results/{study}/results.csv")  # the assumption column's empty cells as ""
    runs = tracking.active_runs(study, uri)
    expected = {tracking.run_key(study, d, m, k, s)
                for d, m, k, s in res[["dataset", "method", "kernel", "seed"]].drop_duplicates().itertuples(index=False)}
    assert runs["tags.run_key"].is_unique, "duplicate configuration runs"
    assert set(runs["tags.run_key"]) == expected, "runs lost or extra"
    jobs = tracking.active_runs(study, uri, level="job")
    assert sorted(jobs["tags.job_key"]) == sorted(f"{study}/{d}" for d in SLICE_DATASETS[study])
    back = tracking.results_from_mlflow(study, uri)
    assert len(back) == len(res)
    key = ["dataset", "method", "kernel", "seed", *[c for c in back.columns if c in ("m",)]]
    a = res.sort_values(key).reset_index(drop=True)
    b = back[a.columns].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a.drop(columns="params"), b.drop(columns="params"), check_dtype=False,
                                  rtol=1e-12)
    rows = cluster.sql("select r.lifecycle_stage, count(*) from runs r join experiments e "
                       f"on r.experiment_id = e.experiment_id where e.name = '{study}' group by 1")
    active = {stage: int(n) for stage, n in rows}.get("active", 0)
    reports = tracking.active_runs(study, uri, level="report")
    assert len(reports) == 1 and (workdir / f"reports/{study}.pdf").exists()  # its PDF, figures and claims
    assert active == len(runs) + len(jobs) + len(reports), f"PostgreSQL holds {rows}"
    return len(runs) + len(jobs)


def _comparable(df):
    return (df[[c for c in df.columns if not TIMING_COLS.search(c)]]
            .sort_values([c for c in ("dataset", "method", "kernel", "seed", "m") if c in df.columns])
            .reset_index(drop=True))


def _job_seconds(workdir):
    """Summed wall time of every job (Snakemake's benchmark files), by rule."""
    out = {}
    for tsv in (workdir / "results/benchmarks").rglob("*.tsv"):
        rule = tsv.relative_to(workdir / "results/benchmarks").parts[0]
        out[rule] = out.get(rule, 0.0) + float(pd.read_csv(tsv, sep="\t")["s"].iloc[-1])
    return out


LEVELS = {"obtain": "data", "split": "data", "run": "run"}


def _level_latency(run, workdir):
    """Per DAG level (data, run, analysis): from its first submission to Snakemake seeing its last job
    finish, and that minus the longest job's work (the scheduler's share)."""
    stamp, first, last = None, {}, {}
    text = run.log.read_text(errors="replace").splitlines()
    for line in text:
        m = re.match(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", line.strip())
        if m:
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
            continue
        m = re.match(r"^(?:localrule|rule) (\w+):$", line.strip()) or re.match(r"^Finished jobid: \d+ \(Rule: (\w+)\)", line.strip())
        if m and stamp is not None:
            level = LEVELS.get(m.group(1), "analysis" if m.group(1) != "all" else None)
            if level is None:
                continue
            if line.strip().startswith("Finished"):
                last[level] = stamp
            else:
                first.setdefault(level, stamp)
    work = {}
    for tsv in (workdir / "results/benchmarks").rglob("*.tsv"):
        rule = tsv.relative_to(workdir / "results/benchmarks").parts[0]
        level = LEVELS.get(rule, "analysis")
        s = float(pd.read_csv(tsv, sep="\t")["s"].iloc[-1])
        if level == "analysis":
            work[level] = work.get(level, 0.0) + s  # one group job: its steps, 2 cores
        else:
            work[level] = max(work.get(level, 0.0), s)
    out = {}
    for level in ("data", "run", "analysis"):
        if level in first and level in last:
            span = last[level] - first[level]
            out[level] = {"seconds": round(span, 1), "work": round(work.get(level, 0.0), 1)}
    return out


def _slurm_jobs(run):
    """Wall time of each SLURM job of a workflow run (squeue keeps finished jobs MinJobAge = 300 s)."""
    uuid = re.search(r"SLURM run ID: (\S+)", run.log.read_text(errors="replace")).group(1)
    out = subprocess.run(["squeue", "-h", "-t", "all", "--name", uuid, "-o", "%i|%S|%e|%k"], capture_output=True,
                         text=True, timeout=10).stdout
    jobs = {}
    for line in out.splitlines():
        jid, start, end, comment = line.split("|", 3)
        t0, t1 = (datetime.strptime(t, "%Y-%m-%dT%H:%M:%S").timestamp() for t in (start, end))
        jobs[jid] = {"seconds": t1 - t0, "comment": comment}
    return jobs


def _server_requests(cluster, start, end=None):
    """The MLflow server's API requests logged between two offsets of its log (uvicorn's access log)."""
    text = cluster.logs["mlflow"].read_bytes()[start:end].decode(errors="replace")
    return re.findall(r'"(GET|POST|PUT|DELETE|PATCH) (/api/[^ ?]+)', text)


@pytest.fixture(scope="module")
def clean(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("cluster") / "clean"
    _tree(workdir)
    offset = cluster.logs["mlflow"].stat().st_size
    run = Run(cluster, workdir).check()
    requests = _server_requests(cluster, offset)
    return {"workdir": workdir, "run": run, "requests": requests, "slurm": _slurm_jobs(run)}


def test_clean_run_reports_and_runs_on_the_server(cluster, clean):
    workdir = clean["workdir"]
    for study in STUDIES:
        assert (workdir / f"reports/{study}.pdf").stat().st_size > 1000
    assert (workdir / "reports/summary.pdf").stat().st_size > 1000
    log = clean["run"].log.read_text(errors="replace")
    assert "SLURM run ID" in log and "has been submitted with SLURM jobid" in log
    assert "Group job data" in log and "Group job analysis" in log  # the profile's groups
    n = {s: _mlflow_equals_results(cluster, workdir, s) for s in STUDIES}
    assert all(v > 0 for v in n.values())


def test_logging_to_the_server_is_cheap(cluster, clean):
    """Batched logging over HTTP: a few requests per MLflow run (counted exactly), its time reported against a 5%
    target and guarded at 3x that."""
    workdir = clean["workdir"]
    seconds = _job_seconds(workdir)
    job_time = sum(seconds.values())
    tracking_s = 0.0
    for study in STUDIES:
        text = (workdir / f"results/logs/track_runs/{study}.log").read_text()
        tracking_s += float(re.findall(r"tracking_seconds=([\d.]+)", text)[-1])
    config_runs = sum(len(tracking.active_runs(s, cluster.tracking_uri)) for s in STUDIES)
    # a report run per study and the findings run (summary PDF, FINDINGS.md, ledger)
    report_runs = sum(len(tracking.active_runs(s, cluster.tracking_uri, level="report"))
                      for s in (*STUDIES, tracking.FINDINGS_EXPERIMENT))
    report_files = 3 + sum(1 + 1 + len(list((workdir / f"results/{s}/figures").glob("*.png"))) for s in STUDIES)
    n_jobs = sum(len(v) for v in SLICE_DATASETS.values())
    reqs = clean["requests"]
    per_endpoint = pd.Series([p.split("/artifacts/")[0] for _, p in reqs]).value_counts().to_dict()
    slurm_s = sum(j["seconds"] for j in clean["slurm"].values())
    levels = _level_latency(clean["run"], workdir)
    report = {"wall_s": round(clean["run"].wall, 1), "job_s": round(job_time, 1), "slurm_job_s": round(slurm_s, 1),
              "slurm_jobs": len(clean["slurm"]),
              "job_s_by_rule": {k: round(v, 1) for k, v in sorted(seconds.items())},
              "tracking_s": round(tracking_s, 2), "tracking_share_of_slurm_job_time": round(tracking_s / slurm_s, 4),
              "tracking_share_of_snakemake_job_time": round(tracking_s / job_time, 4),
              "requests": len(reqs), "config_runs": config_runs, "run_jobs": n_jobs,
              "requests_per_run_job": round(len(reqs) / n_jobs, 1), "endpoints": per_endpoint, "levels": levels}
    (workdir / "cluster-timings.json").write_text(json.dumps(report, indent=1))
    print("\ncluster timings:", json.dumps(report, indent=1))
    # a configuration run is 4 requests (create, log-batch, log-inputs, update: MlflowClient with
    # MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT, tracking._quiet_links), whatever its rows or curve points;
    # the rest is per study (experiment, prune, link, its report run) and per job (job run,
    # artifact, digest); a report run: create, update, its files, a digest tag and the searches around it
    assert report_runs == len(STUDIES) + 1, report
    for endpoint in ("log-batch", "log-inputs"):
        assert per_endpoint.get(f"/api/2.0/mlflow/runs/{endpoint}") == config_runs + n_jobs, report
    for endpoint in ("create", "update"):
        assert per_endpoint.get(f"/api/2.0/mlflow/runs/{endpoint}") == config_runs + n_jobs + report_runs, report
    # MlflowClient reads a run's artifact location once before its first upload: job and report runs
    assert per_endpoint.get("/api/2.0/mlflow/runs/get", 0) <= n_jobs + report_runs, report
    assert len(reqs) <= 4 * (config_runs + n_jobs) + 12 * len(STUDIES) + 4 * n_jobs + 8 * report_runs + report_files, \
        report
    # the cost on the cluster against the SLURM jobs' wall time (what a run holds nodes for): the target is 5%
    # (cluster-timings.json reports it; quiet runs of this test measured 3.9-4.6%, and 5.0-5.5% beside other
    # work on the same 2 cores), so the assertion is a guard at 3x the target, not a timing test: unbatched
    # logging (a request per metric and curve point) would exceed it several times over; the request counts
    # above are what pin the batching down
    assert tracking_s <= 3 * 0.05 * slurm_s, ("MLflow logging took more than 15% of the SLURM jobs' time (3x its 5% "
                                              f"target): has the batching regressed? {report}")


@pytest.fixture(scope="module")
def faulty(cluster, clean):
    """The clean run copied, its run results deleted; while it re-runs, one run job is cancelled with
    scancel and the worker of another gets SIGKILL."""
    workdir = clean["workdir"].parent / "faults"
    shutil.copytree(clean["workdir"], workdir, symlinks=True)
    for f in (workdir / "results").glob("*/runs/*.csv"):
        f.unlink()
    run = Run(cluster, workdir)
    cancel, kill = "rule_run_wildcards_krr_diabetes", "rule_run_wildcards_gnkr_tiny_boston"
    cancelled = killed = None
    deadline = time.monotonic() + 0.75 * HANG_GUARD_S  # a hang guard: the faults are injected when the jobs run
    while (cancelled is None or killed is None) and run.proc.poll() is None and time.monotonic() < deadline:
        jobs = _squeue()
        if cancelled is None and jobs.get(cancel, (None, ""))[1] == "RUNNING":
            subprocess.run(["scancel", jobs[cancel][0]], check=True, timeout=30)
            cancelled = jobs[cancel][0]
        if killed is None and kill in jobs:
            pids = _worker_pids(jobs[kill][0])
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            killed = (jobs[kill][0], pids) if pids else None
        time.sleep(0.05)
    rc = run.wait()
    return {"workdir": workdir, "run": run, "rc": rc, "cancelled": cancelled, "killed": killed}


def test_cancelled_and_killed_jobs_leave_no_half_written_output(faulty):
    workdir, run = faulty["workdir"], faulty["run"]
    assert faulty["cancelled"] and faulty["killed"], f"the faults were not injected:\n{run.tail()}"
    assert faulty["rc"] != 0, "the workflow should fail: two of its jobs did"
    assert re.search(r"SLURM status is: 'CANCELLED", run.tail(20000)), run.tail()
    for f in ("krr/runs/diabetes.csv", "gnkr_tiny/runs/boston.csv"):  # removed, never half-written
        assert not (workdir / "results" / f).exists(), f
    assert re.search(r"SLURM status is: 'FAILED", run.tail(20000)), run.tail()  # the killed worker's job


@pytest.fixture(scope="module")
def rerun(cluster, clean, faulty):
    """The faulty run re-run, the tracking server stopped while its track_runs jobs start logging and
    started again a few seconds later."""
    workdir = faulty["workdir"]
    for f in (workdir / "results/logs/track_runs").glob("*.log"):
        f.unlink()
    cluster.stop_server()
    stopped = time.time()
    # up to the results and their MLflow runs (the track_runs step's; the reports were checked above); the
    # run files named too: Snakemake re-creates a missing intermediate file only when it is asked for
    targets = [f"results/{s}/{f}.csv" for s in STUDIES for f in ["results", *(f"runs/{d}" for d in SLICE_DATASETS[s])]]
    targets += [f"results/{s}/runs_logged.json" for s in STUDIES]
    run = Run(cluster, workdir, *targets)
    logs = [workdir / f"results/logs/track_runs/{s}.log" for s in STUDIES]
    while (not any(f.exists() for f in logs) and run.proc.poll() is None
           and time.monotonic() - run.start < 0.75 * HANG_GUARD_S):  # a hang guard: the track_runs jobs start
        time.sleep(0.2)
    time.sleep(3)  # the track_runs jobs are retrying against a closed port
    restarted = time.time()
    cluster.start_server()
    rc = run.wait()
    assert rc == 0, f"the re-run failed:\n{run.tail()}"
    return {"workdir": workdir, "run": run, "stopped": stopped, "restarted": restarted}


def test_rerun_after_faults_and_server_restart_equals_clean_run(cluster, clean, rerun):
    workdir = rerun["workdir"]
    retried = [s for s in STUDIES if re.search(r"Retrying|retrying in|Connection refused",
                                                (workdir / f"results/logs/track_runs/{s}.log").read_text())]
    assert retried, "no track_runs job met the stopped server"
    for study in STUDIES:
        a = read_results(clean["workdir"] / f"results/{study}/results.csv")
        b = read_results(workdir / f"results/{study}/results.csv")
        pd.testing.assert_frame_equal(_comparable(a), _comparable(b))
        _mlflow_equals_results(cluster, workdir, study)
    assert not list((workdir / "results").rglob(".*.tmp")), "temporaries of killed writers left behind"
