"""The pure pieces of benchmarks/project.py (issue 39, item 5): the split of a job's time, the load
correction, the Snakemake log's DAG and the 2-core list schedule against Graham's bounds."""

import importlib.util
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

_SPEC = importlib.util.spec_from_file_location("nystrom_bench_project",
                                               Path(__file__).resolve().parents[1] / "benchmarks" / "project.py")
project = sys.modules["nystrom_bench_project"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(project)


def test_fractions_recover_a_known_split():
    """A job of 3 s GEMM, 1 s exp and 2 s rest; the environments slow GEMM 4x and exp 3x."""
    native, blas, exp = {"gemm": 40.0, "exp": 0.6}, {"gemm": 10.0, "exp": 0.6}, {"gemm": 40.0, "exp": 0.2}
    t_native, t_blas, t_exp = 6.0, 3.0 * 4 + 1 + 2, 3 + 1.0 * 3 + 2
    fg, fe = project.fractions(t_native, t_blas, t_exp, native, blas, exp)
    assert fg == pytest.approx(0.5) and fe == pytest.approx(1 / 6)


def test_fractions_clip_noise_and_refuse_unchanged_rates():
    native, blas, exp = {"gemm": 40.0, "exp": 0.6}, {"gemm": 10.0, "exp": 0.6}, {"gemm": 40.0, "exp": 0.2}
    # a run faster in the slow environment (noise) is no negative fraction
    assert project.fractions(6.0, 5.0, 6.5, native, blas, exp)[0] == 0.0
    fg, fe = project.fractions(1.0, 10.0, 10.0, native, blas, exp)  # more than the whole job: scaled to 1
    assert fg + fe == pytest.approx(1.0)
    with pytest.raises(ValueError, match="AVX-512"):
        project.fractions(6.0, 6.0, 6.0, native, native, exp)


def test_job_factor():
    here = {"gemm": 40.0, "exp": 0.6, "py": 5.0}
    assert project.job_factor((0.2, 0.3, 0.5), here, here) == pytest.approx(1.0)
    slow = {"gemm": 20.0, "exp": 0.15, "py": 2.5}
    assert project.job_factor((1.0, 0.0, 0.0), here, slow) == pytest.approx(2.0)
    assert project.job_factor((0.0, 1.0, 0.0), here, slow) == pytest.approx(4.0)
    assert project.job_factor((0.5, 0.25, 0.25), here, slow) == pytest.approx(0.5 * 2 + 0.25 * 4 + 0.25 * 2)
    assert project.split_of("no such kind", {}) == (0.0, 0.0, 1.0)


def test_quiet_seconds():
    s = np.array([10.0, 20.0, 30.0, 40.0])
    cpu = np.array([5.0, 10.0, 15.0, 2.0])  # three jobs at half a core; the last forks its work
    q, contention = project.quiet_seconds(s, cpu, [False, False, False, True])
    assert contention == pytest.approx(2.0)
    np.testing.assert_allclose(q, [5.0, 10.0, 15.0, 20.0])
    q, contention = project.quiet_seconds([1.0, 2.0], [1.2, 2.5], [False, False])  # cpu > wall: 2 threads
    assert contention == 1.0 and list(q) == [1.0, 2.0]
    assert project.by_wall(["run:gnkr", "run:scale", "aggregate"]) == [False, True, True]
    # with start times: the contention of the computing jobs that ran at the same time, else the run's;
    # never less than the job's CPU time
    q, _ = project.quiet_seconds([10.0, 30.0, 12.0, 9.0, 8.0], [5.0, 10.0, 2.0, 1.0, 6.0],
                                 [False, False, True, True, True], start=[0.0, 100.0, 1.0, 200.0, 101.0])
    np.testing.assert_allclose(q, [5.0, 10.0, 6.0, 9.0 / 2.5, 6.0])


def test_sampled_cpu():
    """Snakemake samples the CPU time at 0, 0.5, ..., 15 s, then every 30 s, and not at the end."""
    np.testing.assert_allclose(project.sampled_cpu([10.0, 44.0, 45.0, 164.0], [9.0, 15.0, 45.0, 135.0]),
                               [9.0, 44.0, 45.0, 164.0])


LOG = """\
Select jobs to execute...
[Thu Nov 26 14:48:41 2026]
localrule obtain:
    output: resources/data/a.npz
    log: results/logs/obtain/a.log
    jobid: 3
    benchmark: results/benchmarks/obtain/a.tsv
    wildcards: dataset=a
[Thu Nov 26 14:48:42 2026]
Finished jobid: 3 (Rule: obtain)
[Thu Nov 26 14:48:43 2026]
localrule run:
    input: resources/data/a.npz, results/splits/a.npz
    output: results/s/runs/a.csv
    jobid: 2
    benchmark: results/benchmarks/run/s/a.tsv
    threads: 2
[Thu Nov 26 14:48:50 2026]
rule aggregate:
    input: results/s/runs/a.csv
    output: results/s/results.csv
    benchmark: results/benchmarks/aggregate/s.tsv
"""


def test_parse_log_and_dag():
    jobs = project.parse_log(LOG)
    assert [j["rule"] for j in jobs] == ["obtain", "run", "aggregate"]
    assert [j["threads"] for j in jobs] == [1, 2, 1]
    assert jobs[1]["inputs"] == ["resources/data/a.npz", "results/splits/a.npz"]
    assert jobs[1]["start"].second == 43
    assert project.dag(jobs) == {"obtain/a": set(), "run/s/a": {"obtain/a"}, "aggregate/s": {"run/s/a"}}
    assert project.rule_kind("run/gnkr_real/diamonds", {"gnkr_real": "gnkr"}) == "run:gnkr"
    assert project.rule_kind("aggregate/gnkr_real", {"gnkr_real": "gnkr"}) == "aggregate"


def test_read_run_and_identity_projection(tmp_path):
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    (tmp_path / ".snakemake" / "log" / "x.snakemake.log").write_text(LOG)
    for key, s, cpu in (("obtain/a", 2.0, 1.0), ("run/s/a", 10.0, 8.0), ("aggregate/s", 4.0, 3.0)):
        f = tmp_path / "results" / "benchmarks" / f"{key}.tsv"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{s}\t0:00:01\t1.0\t{cpu}\n")
    df = project.read_run(tmp_path)
    assert list(df["key"]) == ["obtain/a", "run/s/a", "aggregate/s"]
    rates = {"gemm": 1.0, "exp": 1.0, "py": 1.0}
    out, fig = project.project(df, rates, rates, cores=2)
    # the run job's CPU seconds; the others' wall seconds over the contention 10 / 8
    assert fig["contention"] == pytest.approx(1.25)
    assert fig["jobs_s"] == pytest.approx(2 / 1.25 + 8 + 4 / 1.25)
    assert fig["schedule_s"] == pytest.approx(fig["jobs_s"])  # a chain
    assert fig["critical_path_s"] == pytest.approx(fig["jobs_s"])
    assert fig["busy_over_cores_s"] == pytest.approx((2 / 1.25 + 8 * 2 + 4 / 1.25) / 2)
    with pytest.raises(ValueError, match="no benchmark files"):
        project.read_run(tmp_path / "empty")


def test_list_schedule_small_cases():
    assert project.list_schedule([3, 3, 2, 2], [[], [], [], []])[0] == 5  # two by two
    assert project.list_schedule([1, 2, 3], [[], [0], [1]])[0] == 6  # a chain
    # a 2-thread job waits for both cores; the 1-thread job after it in the order goes first
    t, start = project.list_schedule([1, 4, 1], [[], [], []], threads=[1, 2, 1])
    assert (t, start) == (5, [0, 1, 0])
    assert project.list_schedule([5], [[]], threads=[4], cores=2)[0] == 5  # threads capped at the cores
    with pytest.raises(ValueError, match="cycle"):
        project.list_schedule([1, 1], [[1], [0]])


def test_list_schedule_within_grahams_bounds():
    """Graham (Bell System Tech. J., 1966): a list schedule of one-core jobs on m cores takes at least
    max(critical path, sum / m) and at most sum / m + (1 - 1/m) * critical path; with as many cores
    as jobs it is the critical path."""
    rng = np.random.default_rng(0)
    for n, m in itertools.product((5, 20, 60), (1, 2, 3)):
        d = rng.exponential(size=n) + 0.01
        deps = [sorted(set(rng.choice(j, size=min(j, rng.integers(0, 3)), replace=False).tolist())) for j in range(n)]
        cp = project.critical_path(d, deps)
        t, start = project.list_schedule(d, deps, cores=m)
        assert max(cp, d.sum() / m) - 1e-9 <= t <= d.sum() / m + (1 - 1 / m) * cp + 1e-9
        assert all(start[j] >= start[p] + d[p] - 1e-9 for j in range(n) for p in deps[j])
        assert project.list_schedule(d, deps, cores=n)[0] == pytest.approx(cp)
    # the critical path by hand
    assert project.critical_path([1, 5, 2, 1], [[], [0], [0], [1, 2]]) == 7


def _jobs(speed=1.0, anchor=True):
    """A run with a job of each pattern issue 39 measured (the anchor's; else one job less), another job of a
    measured kind, one of another kind and each measured analysis step; every job ``speed`` times slower (a
    slower VM)."""
    import pandas as pd

    measured = project.MEASURED["slowest"]
    runs = [(p.replace("*", "f1"), 0.4 * v) for p, v in measured["jobs"].items()]
    runs += [("run/gnkr_real/boston", 30.0), ("run/samplers/all", 50.0)]
    if not anchor:
        runs = [r for r in runs if r[0] != "run/gnkr_real/diamonds"]
    rows = [("obtain/a", 10.0), ("split/a", 5.0), *runs] + [(f"{r}/gnkr", 20.0) for r in
                                                             ("aggregate", "stats", "figures", "report")]
    kinds = {"gnkr_real": "gnkr", "gen_nystrom_labels": "gen_nystrom"}
    deps = {"split/a": ["obtain/a"], **{k: ["split/a"] for k, _ in runs},
            "aggregate/gnkr": [k for k, _ in runs], "stats/gnkr": ["aggregate/gnkr"],
            "figures/gnkr": ["stats/gnkr"], "report/gnkr": ["figures/gnkr"]}
    return pd.DataFrame([{"key": k, "rule": k.split("/")[0], "s": c * speed, "cpu": c * speed, "threads": 1,
                          "order": i, "start": None, "deps": deps.get(k, []),
                          "kind": project.rule_kind(k, kinds)} for i, (k, c) in enumerate(rows)])


def test_anchor_scale_reproduces_the_measured_run_and_cancels_the_machine_speed():
    measured = project.MEASURED["slowest"]
    anchor = _jobs()
    scale = project.anchor_scale(anchor, project.REFERENCE)
    assert set(scale["kind"]) == {"gnkr", "scale", "gen_nystrom"}
    t = project.TARGETS["slowest"]
    df, fig = project.project(anchor, project.REFERENCE, {"gemm": t.gemm, "exp": t.exp, "py": t.py}, scale=scale)
    assert df.loc[df["rule"] == "run", "t"].sum() == pytest.approx(measured["run_s"])
    assert df.loc[df["rule"] != "run", "t"].sum() == pytest.approx(sum(measured["rules"].values()))
    # the measured kinds' jobs together project to their measured seconds; another job of a measured kind
    # (gnkr_real/boston) takes its kind's factor, a job of another kind (samplers) the remaining one
    by_key = df.set_index("key")["t"]
    gnkr = [k for k in by_key.index if k.startswith(("run/gnkr/", "run/gnkr_real/diamonds"))]
    assert by_key[gnkr].sum() == pytest.approx(measured["jobs"]["run/gnkr/*"] + measured["jobs"]["run/gnkr_real/diamonds"])
    ratio = by_key / df.set_index("key")["q"]
    assert ratio["run/gnkr_real/boston"] == pytest.approx(ratio["run/gnkr/f1"])
    assert ratio["run/samplers/all"] != pytest.approx(ratio["run/gnkr/f1"])
    # the same runs on a VM 1.34x slower in every job, read as fast by its rates: the anchored projection
    # of a changed run (its gnkr job halved) is the same on both
    changed = _jobs().assign(s=lambda d: np.where(d["key"] == "run/gnkr/f1", d["s"] / 2, d["s"]))
    changed["cpu"] = changed["s"]
    slow_changed = changed.assign(s=changed["s"] * 1.34, cpu=changed["cpu"] * 1.34)
    a = project.anchored(changed, anchor)[1]
    b = project.anchored(slow_changed, _jobs(1.34))[1]
    assert b["wall_s"] == pytest.approx(a["wall_s"]) and b["jobs_s"] == pytest.approx(a["jobs_s"])
    assert a["jobs_s"] < measured["jobs_s"]
    with pytest.raises(ValueError, match="no run job run/gnkr_real/diamonds"):
        project.anchor_scale(_jobs(anchor=False), project.REFERENCE)
    with pytest.raises(ValueError, match="lacks stats"):
        project.anchor_scale(anchor[anchor["rule"] != "stats"], project.REFERENCE)
    with pytest.raises(ValueError, match="anchor on 'slowest'"):
        project.anchor_scale(anchor, project.REFERENCE, "epyc512")


def test_the_command_line_refuses_an_anchor_with_other_targets_and_rates_without_one(tmp_path, capsys):
    for argv in (["run", "--anchor", "a", "--cores", "4"], ["run", "--anchor", "a", "--target", "here"],
                 ["run", "--rates", "r.jsonl"], ["run", "--anchor", "a", "--rates", "r.jsonl"]):
        with pytest.raises(SystemExit):
            project.main(argv)
        assert "anchor" in capsys.readouterr().err


def test_watched_rates(tmp_path):
    f = tmp_path / "rates.jsonl"
    recs = [{"t": i, "stat": {"user": 100 * i, "idle": 50 * i, "steal": 10 * i}, "load": 2.0,
             "gemm_cpu": [40.0, 30.0 + i, 20.0], "exp_cpu": [1.0, 1.0, 1.0], "py_cpu": [5.0, 4.0, 6.0]}
            for i in range(3)]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = project.watched_rates(f)
    assert r["gemm"] == 31.0 and r["exp"] == 1.0 and r["py"] == 5.0  # medians of all nine runs
    assert r["steal"] == pytest.approx(20 / 320) and r["samples"] == 3
    f.write_text("")
    with pytest.raises(ValueError, match="no samples"):
        project.watched_rates(f)


def test_watch_samples_until_the_process_ends(tmp_path):
    """An exited child is a zombie until waited for: the watcher stops all the same (on a hang, the test
    fails at its 60 s guard instead of hanging the suite)."""
    import threading

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    watcher = threading.Thread(target=project.watch, args=(tmp_path / "w.jsonl", child.pid, 0.05), daemon=True)
    watcher.start()
    watcher.join(60)
    child.wait()
    assert not watcher.is_alive(), "watch went on after its process ended (hang guard: 60 s)"
    r = project.watched_rates(tmp_path / "w.jsonl")
    assert r["samples"] >= 1 and all(r[k] > 0 for k in ("gemm", "exp", "py"))
