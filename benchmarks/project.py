"""Project the default ``make reproduce`` wall time onto another machine kind from per-job costs.

    .venv/bin/python benchmarks/project.py RUN_DIR [--target slowest] [--cores 2]   (make project)
    .venv/bin/python benchmarks/project.py calibrate [--only gnkr,scale]            (the split per kind)
    .venv/bin/python benchmarks/project.py validate RUN_DIR    (a run of 67f70e1 against issue 39, README)
    .venv/bin/python benchmarks/project.py watch FILE PID [15]  (the rates while process PID runs)
    .venv/bin/python benchmarks/project.py RUN_DIR --rates FILE --anchor ANCHOR_DIR --anchor-rates FILE2
    .venv/bin/python benchmarks/project.py pair WORK [--commit HEAD]  (run, anchor, run; anchored: make project-pair)

Input: a finished run's ``RUN_DIR/results/benchmarks/**/*.tsv`` (Snakemake's ``benchmark:`` files:
wall seconds ``s`` and ``cpu_time`` of every job), its Snakemake logs ``RUN_DIR/.snakemake/log/*.log``
(each job's inputs, outputs, threads and start order: the DAG) and its ``config/config.yaml`` (the
study kind of each run job), plus this machine's per-core rates measured now (:func:`core_rates`).

Model (issue 39, item 5). A job's time on this machine, quiet, is ``q`` (:func:`quiet_seconds`: a run
job's CPU seconds, corrected for Snakemake's sampling (:func:`sampled_cpu`); for the other steps,
whose waits for the disk are no CPU time, and for jobs whose CPU time misses forked children, the wall
seconds over the contention of the computing jobs beside them). It splits into three parts by its
rule kind (:data:`SPLIT`, measured by ``calibrate``; kinds not calibrated count as rest): the part that scales with BLAS (GEMM GFLOP/s per core), the part that scales with
numpy's float64 ``exp`` (the part that grows when numpy's AVX-512 loops are switched off) and the
rest (interpreter, pandas, MLflow, I/O: scales with the machine's scalar speed). On a machine M::

    t_M = q * (f_gemm * G_here / G_M + f_exp * E_here / E_M + (1 - f_gemm - f_exp) * P_here / P_M)

and the projected wall time is a greedy list schedule of the projected jobs on ``--cores`` cores in
the run's DAG order (Snakemake's: a ready job starts when its threads are free); the critical path and
``sum / cores`` are printed as bounds. Snakemake's own CPU time (3.8 minutes on the slowest kind,
issue 39) is not added: it slows the jobs beside it, so it is inside the measured job times that the
slowest kind's ``py`` is set against (:data:`SLOWEST_REST`).

``calibrate`` runs a part (one seed) of a representative job of each study kind in a fresh
process three times: natively, with OpenBLAS on its Nehalem kernels (GEMM about 4x slower, numpy's
exp unchanged) and with numpy's AVX-512 loops off (``benchmarks/run.py``'s ``AVX2_ENV`` without its
OpenBLAS setting: exp about 3x slower, BLAS unchanged), measuring the rates of each environment in
the same process. Two differences, two unknowns: ``a_gemm = (t_blas - t_native) / (G_native / G_blas
- 1)`` and ``a_exp = (t_exp - t_native) / (E_native / E_exp - 1)``, as fractions of ``t_native``.

Timings on a shared machine are noisy: every time here is process CPU time (children included),
not wall time, and the rates are CPU-time rates of one core, so that the load of other processes
changes them less; even so, single rate measurements on the loaded 2-core machine varied by +-20%,
so the projection is printed with the rates measured now and with :data:`REFERENCE`'s.

Why an anchor. The rates above are the best of short runs, and one VM of this project's kind ran every
job 1.34x slower than another while its rates read it as fast (2026-11-27): a projection from rates
alone moves by +-35% between VMs. ``--anchor`` takes a run of 67f70e1's default config made on the
same machine beside the run projected (issue 39 measured that commit on the slowest kind), scales the
projection of the run jobs (per study kind where jobs of that kind were measured there) and of the other
steps so that the anchor's projection equals those measured figures (:func:`anchor_scale`), and applies
the same factors to the run: what the rates miss of the
machine's speed cancels, and the rates matter only for how the jobs' mix of GEMM, exp and the rest
changed since 67f70e1. ``watch`` samples the rates every 15 s during a run (CPU time, so waits for a
core do not count; about 1% of a core), in the statistic the run's jobs saw: with watch files for
both runs, each run is projected at its own rates, which also cancels a drift between the two.

``validate`` projects a run of 67f70e1's default config onto the kinds with measured runs of that
config (:data:`MEASURED`: issue 39's slowest kind, the README's AVX-512 EPYC native and emulated) and
prints the ratios between runs of one machine, where the kinds' unmeasured ``py`` cancels.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------- rates
def _cpu_best(fn, repeat=5):
    """Best process-CPU seconds of ``fn`` over ``repeat`` calls (after one warm-up call)."""
    fn()
    best = math.inf
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return max(best, 1e-9)


def _py_work(n=200_000):
    """A fixed piece of interpreter work (dict, list, int and float operations)."""
    d, acc = {}, 0.0
    for i in range(n):
        d[i & 1023] = d.get(i & 1023, 0) + i
        acc += (i % 7) * 0.5
    return acc + len(d)


def _probes():
    """The rate probes, name -> (function, its work in G flops, G values or M steps): ``gemm`` float64
    8192 x 92 times 92 x 1024 (the kernel blocks' shape), ``exp`` numpy float64 exp in place on a 4 MiB
    block (what AVX-512 vectorises and AVX2-only machines run scalar), ``py`` 50k interpreter loop steps."""
    import numpy as np

    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(8192, 92)), rng.normal(size=(1024, 92))
    out = np.empty((8192, 1024))
    E = -rng.random(2**19) * 50
    buf = np.empty_like(E)
    return {"gemm": (lambda: np.dot(A, B.T, out=out), 2.0 * 8192 * 1024 * 92 / 1e9),
            "exp": (lambda: np.exp(E, out=buf), E.size / 1e9),
            "py": (lambda: _py_work(50_000), 0.05)}


def core_rates(repeat=15):
    """Per-core rates of this machine in CPU time, one BLAS thread, best of ``repeat`` short runs (on a
    shared machine the best is the closest to a quiet core) of each of :func:`_probes`: ``gemm`` float64
    GFLOP/s, ``exp`` G values/s, ``py`` M interpreter loop steps/s."""
    from threadpoolctl import threadpool_limits

    probes = _probes()
    with threadpool_limits(1):
        gemm = probes["gemm"][1] / _cpu_best(probes["gemm"][0], repeat)
    exp = probes["exp"][1] / _cpu_best(probes["exp"][0], 2 * repeat)
    py = probes["py"][1] / _cpu_best(probes["py"][0], 4 * repeat)  # short runs: more chances of a quiet core
    return {"gemm": gemm, "exp": exp, "py": py}


def _proc_stat():
    """The machine's CPU jiffies from ``/proc/stat`` (user, nice, system, idle, iowait, irq, softirq, steal)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:9]
        return dict(zip(("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"),
                        map(int, fields), strict=False))
    except OSError:
        return {}


def watch(out, pid, interval=15.0):
    """Sample this machine's per-core rates every ``interval`` seconds while process ``pid`` lives (a run),
    appending one JSON line per sample to ``out``: each of :func:`_probes` three times in CPU
    time (``*_cpu``, G or M per CPU-second) and in wall time, the machine's ``/proc/stat`` jiffies
    (steal: time the hypervisor gave to others) and the load average. Costs about 1% of a core.

    The rates a run's jobs ran at, not a quiet moment's: :func:`core_rates` takes the best of many
    short runs and reads a machine as fast while its jobs run 1.3x slower (issue 39, item 5)."""
    from threadpoolctl import threadpool_limits

    probes = _probes()
    with threadpool_limits(1), open(out, "a") as f:
        for fn, _ in probes.values():
            fn()
        while _alive(pid):
            rec = {"t": time.time(), "stat": _proc_stat(), "load": os.getloadavg()[0]}
            for name, (fn, work) in probes.items():
                cpu, wall = [], []
                for _ in range(3):
                    c0, w0 = time.thread_time(), time.perf_counter()
                    fn()
                    cpu.append(work / max(time.thread_time() - c0, 1e-9))
                    wall.append(work / max(time.perf_counter() - w0, 1e-9))
                rec[name + "_cpu"], rec[name + "_wall"] = cpu, wall
            f.write(json.dumps(rec) + "\n")
            f.flush()
            time.sleep(interval)


def _alive(pid):
    """Whether process ``pid`` runs (an exited child not yet waited for does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def watched_rates(path):
    """The rates a watched run ran at (:func:`watch`'s file): the median over its samples of each probe's
    CPU-time rate, and the steal share of the machine's jiffies between the first and last sample."""
    import numpy as np

    recs = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    if not recs:
        raise ValueError(f"{path} holds no samples: the watcher failed, or the run ended before its first one")
    rates = {k: float(np.median([v for r in recs for v in r[k + "_cpu"]])) for k in ("gemm", "exp", "py")}
    a, b = recs[0].get("stat", {}), recs[-1].get("stat", {})
    total = sum(b.get(k, 0) - a.get(k, 0) for k in b)
    rates["steal"] = (b.get("steal", 0) - a.get("steal", 0)) / total if total > 0 else 0.0
    rates["samples"] = len(recs)
    return rates


@dataclass(frozen=True)
class Machine:
    """Per-core rates of a machine kind: ``gemm`` float64 GFLOP/s of one BLAS thread, ``exp`` numpy
    float64 exp G values/s, ``py`` M interpreter steps/s (:func:`core_rates`'s units), and where
    each figure comes from."""

    name: str
    gemm: float
    exp: float
    py: float
    basis: str

    @property
    def rates(self):
        """``{"gemm", "exp", "py"}``, as :func:`core_rates` gives them."""
        return {"gemm": self.gemm, "exp": self.exp, "py": self.py}


#: This machine's rates (2-core Intel Xeon with AVX-512, the one this project's sessions run on), median
#: of the best-of-15 measurements of 2026-11-26 while the calibration ran (the machine shared: the rates
#: of single measurements varied by +-20%): the reference the ``py`` of the other kinds is set against.
REFERENCE = {"gemm": 36.0, "exp": 0.95, "py": 5.5}
#: the same with an AVX2-only CPU emulated (run.py ``AVX2_ENV``): OpenBLAS's Haswell kernels, numpy's
#: scalar exp (measured beside REFERENCE: 28.8-29.8 GFLOP/s, 0.188-0.191 G/s)
REFERENCE_AVX2 = {"gemm": 29.5, "exp": 0.19, "py": 5.5}

#: Issue 39's analysis steps on the slowest kind at 67f70e1 (aggregate 192 s, figures 132, report 85,
#: stats 61, obtain 35, split 16), all rest, against the same steps of 67f70e1's default run on this
#: machine (``/work/base``, quiet estimate 331.8 s by :func:`quiet_seconds`): the slowest kind's
#: interpreter, pandas, MLflow and disk are 521 / 331.8 = 1.57x slower than this machine's.
SLOWEST_REST = 521.0 / 331.8

#: The machine kinds projected onto, per core (see :class:`Machine`). ``slowest``: the 2-core AMD EPYC
#: with AVX2 + FMA, no AVX-512 (issues 29, 39). Its GEMM: issue 39 says "about half the AVX-512 EPYC's"
#: (110 GFLOP/s on 2 threads below: 27.5 a core); issue 29 measured the bare 10^5 x 10^3 x 90 float64
#: GEMM at 0.61 s (29.5 GFLOP/s: one core's rate, if its 2 BLAS threads shared one core, else 14.8 a
#: core, which would contradict issue 39's "half"); taken: 28. Its numpy float64 exp is scalar at
#: 0.15 G/s (issue 29); its ``py`` from :data:`SLOWEST_REST`. ``epyc512``: the 2-core AMD EPYC with
#: AVX-512 of the README's Performance section (2026-11-24): GEMM 110 GFLOP/s on 2 threads; numpy's
#: float64 exp there not measured: its float32 exp (3.1 G/s) over this machine's float32 / float64
#: ratio (1.7); ``py`` assumed the slowest kind's (not measured). ``epyc512_avx2``: the same machine
#: with AVX2 emulated (run.py ``AVX2_ENV``): GEMM assumed unchanged (Zen 4 runs AVX-512 as two 256-bit
#: halves, so OpenBLAS's Haswell kernels keep about its rate: not measured), numpy's exp scalar at
#: issue 29's 0.15 G/s (the README: "this EPYC's being the slow one of issue 29").
TARGETS = {
    "slowest": Machine("2-core AMD EPYC, AVX2 + FMA only (issues 29, 39)", gemm=28.0, exp=0.15,
                       py=REFERENCE["py"] / SLOWEST_REST,
                       basis="GEMM half the AVX-512 EPYC's (issue 39; issue 29's 0.61 s), scalar exp 0.15 G/s "
                             "(issue 29); py: issue 39's analysis steps"),
    "epyc512": Machine("2-core AMD EPYC with AVX-512 (README Performance)", gemm=55.0, exp=3.1 / 1.7,
                       py=REFERENCE["py"] / SLOWEST_REST,
                       basis="GEMM 110 GFLOP/s on 2 threads, exp from its float32 exp (README); py assumed the slowest's"),
    "epyc512_avx2": Machine("the same EPYC with AVX2 emulated (AVX2_ENV)", gemm=55.0, exp=0.15,
                            py=REFERENCE["py"] / SLOWEST_REST,
                            basis="GEMM assumed unchanged on Haswell kernels, scalar exp 0.15 G/s; py assumed the slowest's"),
}


# ----------------------------------------------------------------------------------------- split
#: Fractions (f_gemm, f_exp) of a job's quiet CPU time on an AVX-512 machine, by rule kind ("run:<study
#: kind>" for run jobs), from ``project.py calibrate``; kinds not listed are taken as all rest.
SPLIT: dict[str, tuple[float, float]] = {
    "run:gnkr": (0.744, 0.053),  # gnkr/gnkr_f1 seed 0: 54.0 / 128.1 / 66.9 CPU-s (native / BLAS / exp)
    "run:krr": (0.826, 0.022),  # krr/gnkr_f1 seeds 0-1: 3.50 / 8.89 / 3.81 CPU-s
    "run:gen_nystrom": (0.408, 0.066),  # gen_nystrom_labels/segment seed 0: 46.2 / 95.7 / 58.7 CPU-s
    "run:consistency": (0.369, 0.007),  # consistency_mcm/mcm_grid_40 seed 0: 26.9 / 51.2 / 28.3 CPU-s
    "run:scale": (0.134, 0.0),  # scale/scalable, cells at n = 5000 (2 threads): 62.2 / 86.9 / 60.6 CPU-s
    "run:samplers": (0.008, 0.010),  # samplers/pima seed 0: 2.72 / 2.79 / 2.78 CPU-s
    "run:integration": (0.401, 0.010),  # integration/satimage seed 0: 7.91 / 13.54 / 8.57 CPU-s
    "run:selection": (0.0, 0.0),  # selection/concrete seed 0: 3.18 / 3.02 / 2.14 CPU-s (noise: all rest)
    # krc/vehicle seeds 0-1 took 0.44 CPU-s: too short to split (0.5 s of numba's first use in the exp
    # environment), so krc counts as rest
}
SPLIT_BASIS = "project.py calibrate, 2026-11-26, 2-core Xeon (AVX-512) shared with other work"


def split_of(kind, split=None):
    """(f_gemm, f_exp, f_rest) of a rule kind; unknown kinds are all rest."""
    fg, fe = (split if split is not None else SPLIT).get(kind, (0.0, 0.0))
    return fg, fe, 1.0 - fg - fe


def fractions(t_native, t_blas, t_exp, r_native, r_blas, r_exp):
    """(f_gemm, f_exp) of a job from its CPU seconds natively, with slower BLAS kernels and with numpy's
    AVX-512 loops off, and the rates measured in each environment: a part that takes ``a`` seconds at
    rate r adds ``a (r / r' - 1)`` when the rate drops to r'. Clipped to [0, 1] together."""
    kg = r_native["gemm"] / r_blas["gemm"] - 1.0
    ke = r_native["exp"] / r_exp["exp"] - 1.0
    if kg <= 0.2 or ke <= 0.2:
        raise ValueError(f"the environments barely change the rates (GEMM x{kg + 1:.2f}, exp x{ke + 1:.2f}): "
                         "calibrate on an AVX-512 machine, where OPENBLAS_CORETYPE=Nehalem and "
                         "NPY_DISABLE_CPU_FEATURES slow GEMM and exp down")
    fg = max(0.0, (t_blas - t_native) / kg / t_native)
    fe = max(0.0, (t_exp - t_native) / ke / t_native)
    if fg + fe > 1.0:
        fg, fe = fg / (fg + fe), fe / (fg + fe)
    return fg, fe


def job_factor(split, here, target):
    """Time on ``target`` over time here of a job with fractions ``split = (f_gemm, f_exp, f_rest)``."""
    fg, fe, fr = split
    return fg * here["gemm"] / target["gemm"] + fe * here["exp"] / target["exp"] + fr * here["py"] / target["py"]


# ------------------------------------------------------------------------------------------ runs
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?rule (\w+):$")
_FIELD = re.compile(r"^\s+(\w+): (.*)$")


def parse_log(text):
    """Jobs started in one Snakemake log: list of dicts with rule, start (datetime), benchmark,
    inputs, outputs (lists of paths) and threads (1 unless the log says otherwise), in start order."""
    jobs, stamp, cur = [], None, None
    for line in text.splitlines():
        m = _STAMP.match(line)
        if m:
            stamp, cur = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y"), None
            continue
        m = _RULE.match(line)
        if m:
            cur = {"rule": m.group(1), "start": stamp, "benchmark": None, "inputs": [], "outputs": [], "threads": 1}
            jobs.append(cur)
            continue
        m = _FIELD.match(line)
        if cur is not None and m:
            key, val = m.groups()
            if key in ("input", "output"):
                cur[key + "s"] = [p.strip() for p in val.split(",") if p.strip()]
            elif key == "benchmark":
                cur["benchmark"] = val.strip()
            elif key == "threads":
                cur["threads"] = int(val)
        elif not line.startswith(" "):
            cur = None
    return jobs


def dag(logged):
    """{benchmark key: set of keys it waits for} of the logged jobs (later logs win for a key)."""
    by_key, producer = {}, {}
    for job in logged:
        if job["benchmark"]:
            key = _key(job["benchmark"])
            by_key[key] = job
            for out in job["outputs"]:
                producer[out] = key
    return {k: {producer[i] for i in j["inputs"] if i in producer and producer[i] != k} for k, j in by_key.items()}


def _key(benchmark_path):
    p = Path(benchmark_path)
    parts = p.parts[p.parts.index("benchmarks") + 1:] if "benchmarks" in p.parts else p.parts
    return str(Path(*parts).with_suffix(""))


def read_run(run_dir):
    """The jobs of a finished run as a DataFrame (key, rule, s, cpu, threads, order, deps)."""
    import pandas as pd

    run_dir = Path(run_dir)
    root = run_dir / "results" / "benchmarks"
    tsvs = sorted(root.glob("**/*.tsv"))
    if not tsvs:
        raise ValueError(f"no benchmark files under {root}: give the directory of a finished `make reproduce` run")
    logged = []
    for log in sorted((run_dir / ".snakemake" / "log").glob("*.snakemake.log")):
        logged += parse_log(log.read_text())
    deps = dag(logged)
    info = {}
    for i, job in enumerate(logged):
        if job["benchmark"]:
            info[_key(job["benchmark"])] = {"order": i, "threads": job["threads"], "start": job["start"]}
    rows = []
    for t in tsvs:
        b = pd.read_csv(t, sep="\t")
        key = str(t.relative_to(root).with_suffix(""))
        meta = info.get(key, {})
        rows.append({"key": key, "rule": key.split("/")[0], "s": float(b["s"].iloc[0]),
                     "cpu": float(b["cpu_time"].iloc[0]), "threads": meta.get("threads", 1),
                     "order": meta.get("order", _STAGE.get(key.split("/")[0], 9) * 10_000),
                     "start": meta.get("start"), "deps": sorted(deps.get(key, ()))})
    df = pd.DataFrame(rows).sort_values("order", kind="stable").reset_index(drop=True)
    df["kind"] = [rule_kind(k, study_kinds(run_dir)) for k in df["key"]]
    return df


#: stage order of the rules, for runs without a Snakemake log
_STAGE = {"obtain": 0, "split": 1, "run": 2, "aggregate": 3, "analysis": 3, "track_runs": 3, "claims": 4, "stats": 4,
          "figures": 5, "report": 6}


def study_kinds(run_dir):
    """{study block name: study kind} of the run's config (a block's ``kind:``, else its name)."""
    import yaml

    cfg = Path(run_dir) / "config" / "config.yaml"
    if not cfg.exists():
        return {}
    studies = (yaml.safe_load(cfg.read_text()) or {}).get("studies", {}) or {}
    return {name: (block or {}).get("kind", name) for name, block in studies.items()}


def rule_kind(key, kinds):
    """"run:<study kind>" for a run job (``run/<study>/<job>``), else the rule's name."""
    parts = key.split("/")
    if parts[0] == "run" and len(parts) > 1:
        return f"run:{kinds.get(parts[1], parts[1])}"
    return parts[0]


#: rule kinds whose work runs in forked children that Snakemake's ``cpu_time`` misses (it samples the
#: process tree every few seconds): the scale study times each cell in a forked child
FORKING = {"run:scale"}


def by_wall(kinds):
    """Which jobs' quiet time is estimated from their wall time: the forking kinds, and every step but the
    run jobs (MLflow's SQLite store, PDFs, data files: their waits for the disk are no CPU time)."""
    return [k in FORKING or not k.startswith("run:") for k in kinds]


def sampled_cpu(s, cpu):
    """CPU seconds of whole jobs from Snakemake's ``cpu_time``, which is the process tree's CPU time at
    its last sample: Snakemake's benchmark thread samples at 0, 0.5, ..., 15 s, then every 30 s
    (``snakemake.benchmark``: BENCHMARK_INTERVAL_SHORT, BENCHMARK_INTERVAL), and not when the job ends,
    so a 164 s job's ``cpu_time`` covers its first 135 s. Scaled by ``s / last sample time`` (the
    job's CPU share taken as constant)."""
    import numpy as np

    s, cpu = np.asarray(s, float), np.asarray(cpu, float)
    last = np.where(s < 15.0, np.floor(s / 0.5) * 0.5, 15.0 + 30.0 * np.floor((s - 15.0) / 30.0))
    return np.where(last > 0, cpu * s / np.maximum(last, 0.5), cpu)


def quiet_seconds(s, cpu, wall_based, start=None):
    """Each job's seconds on this machine were it alone on its cores, and the run's contention.

    A one-thread job on a loaded machine gets a share of a core: its wall time ``s`` grows, its CPU
    time ``cpu`` much less, so ``cpu`` is the estimate of a computing job. Where ``wall_based``
    (:func:`by_wall`: Snakemake's ``cpu_time`` misses forked children, or the job waits for the disk),
    the estimate is the wall time over the contention: the median ``s / cpu`` of the computing jobs
    (at least a CPU-second) that ran at the same time (``start``: start seconds; without them, or
    without such a job, of the whole run), at least 1; and at least the job's own CPU seconds.
    Never more than ``s``."""
    import numpy as np

    s, cpu, wall_based = np.asarray(s, float), np.asarray(cpu, float), np.asarray(wall_based, bool)
    ok = ~wall_based & (cpu >= 1.0)
    ratio = s / np.maximum(cpu, 1e-9)
    contention = max(1.0, float(np.median(ratio[ok]))) if ok.any() else 1.0
    c = np.full(len(s), contention)
    if start is not None:
        st = np.asarray(start, float)
        for j in np.flatnonzero(wall_based & ~np.isnan(st)):
            near = ok & (st <= st[j] + s[j]) & (st + s >= st[j])
            if near.any():
                c[j] = max(1.0, float(np.median(ratio[near])))
    q = np.where(wall_based, np.maximum(cpu, s / c), cpu)
    return np.minimum(q, s), contention


# ------------------------------------------------------------------------------------- schedule
def list_schedule(durations, deps, threads=None, cores=2, order=None):
    """Greedy list scheduling: whenever cores are free, the ready jobs start in ``order`` (default:
    the given order), each when its ``threads`` (capped at ``cores``) fit. ``deps[i]``: indices job i
    waits for. Returns (makespan, start times)."""
    n = len(durations)
    threads = [min(t, cores) for t in (threads or [1] * n)]
    order = list(range(n)) if order is None else list(order)
    rank = {j: r for r, j in enumerate(order)}
    waiting = [len(set(d)) for d in deps]
    children = [[] for _ in range(n)]
    for j, d in enumerate(deps):
        for p in set(d):
            children[p].append(j)
    ready = sorted((j for j in range(n) if not waiting[j]), key=rank.get)
    running, free, now, start = [], cores, 0.0, [None] * n
    done = 0
    while done < n:
        started = True
        while started:
            started = False
            for j in ready:
                if threads[j] <= free:
                    ready.remove(j)
                    start[j], free = now, free - threads[j]
                    heapq.heappush(running, (now + durations[j], rank[j], j))
                    started = True
                    break
        if not running:
            raise ValueError("the job graph has a cycle or a dependency outside the jobs")
        now, _, j = heapq.heappop(running)
        finished = [j]
        while running and running[0][0] <= now:
            finished.append(heapq.heappop(running)[2])
        for j in finished:
            free += threads[j]
            done += 1
            for c in children[j]:
                waiting[c] -= 1
                if not waiting[c]:
                    ready.append(c)
        ready.sort(key=rank.get)
    return now, start


def critical_path(durations, deps):
    """Length of the longest dependency chain (``deps[i]``: indices job i waits for)."""
    finish = [None] * len(durations)
    for root in range(len(durations)):
        stack = [root]
        while stack:  # depth first, without recursion: a job's finish once its dependencies' are known
            j = stack[-1]
            if finish[j] is not None:
                stack.pop()
                continue
            todo = [p for p in deps[j] if finish[p] is None]
            if todo:
                if len(stack) > len(durations):
                    raise ValueError("the job graph has a cycle")
                stack += todo
                continue
            finish[j] = durations[j] + max((finish[p] for p in deps[j]), default=0.0)
            stack.pop()
    return max(finish, default=0.0)


# ------------------------------------------------------------------------------------ projection
def project(df, here, target, cores=2, split=None, scale=None):
    """Projected job seconds (column ``t``) and a dict of the schedule's figures; ``scale``: factors
    ``{"run": c, "rest": c, "kind": {study kind: c}}`` applied to the run jobs (those of the kinds named,
    their own) and to the other steps (:func:`anchor_scale`)."""
    import numpy as np

    t0 = df["start"].dropna().min() if df["start"].notna().any() else None
    start = [(x - t0).total_seconds() if t0 is not None and x is not None and x == x else float("nan")
             for x in df["start"]]
    q, contention = quiet_seconds(df["s"], sampled_cpu(df["s"], df["cpu"]), by_wall(df["kind"]), start)
    df = df.assign(q=q)
    df["factor"] = [job_factor(split_of(k, split), here, target) for k in df["kind"]]
    if scale:
        kinds = scale.get("kind", {})
        df["factor"] *= [kinds.get(k.split(":", 1)[1], scale["run"]) if r == "run" else scale["rest"]
                         for k, r in zip(df["kind"], df["rule"], strict=True)]
    df["t"] = df["q"] * df["factor"]
    index = {k: i for i, k in enumerate(df["key"])}
    deps = [[index[d] for d in ds if d in index] for ds in df["deps"]]
    threads = [int(t) for t in df["threads"]]
    wall, _ = list_schedule(df["t"].tolist(), deps, threads, cores)
    busy = float((df["t"] * np.minimum(df["threads"], cores)).sum())
    return df, {"contention": contention, "schedule_s": wall, "wall_s": wall,
                "critical_path_s": critical_path(df["t"].tolist(), deps),
                "busy_over_cores_s": busy / cores, "jobs_s": float(df["t"].sum())}


def by_rule(df, col="t"):
    """Sums of ``col`` by rule, and of the run jobs by study."""
    return df.groupby("rule")[col].sum().sort_values(ascending=False)


# ----------------------------------------------------------------------------------- calibration
#: a representative job of each study kind, and a part of it small enough to run three times
REPRESENTATIVE = {
    "gnkr": ("gnkr", "gnkr_f1", [0]),
    "krr": ("krr", "gnkr_f1", [0, 1]),
    "krc": ("krc", "vehicle", [0, 1]),
    "consistency": ("consistency_mcm", "mcm_grid_40", [0]),
    "selection": ("selection", "concrete", [0]),
    "integration": ("integration", "satimage", [0]),
    "gen_nystrom": ("gen_nystrom_labels", "segment", [0]),
    "scale": ("scale", "scalable", [0]),
    "samplers": ("samplers", "pima", [0]),
}


def _child(study, dataset, seeds, work, threads):
    """In this process: rates, then the job part; prints one JSON line."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gnkr_job import job_inputs
    from threadpoolctl import threadpool_limits

    from nystrom_bench.jobs import run_study_job

    rates = core_rates()
    cfg, data, split = job_inputs(study, dataset, ROOT / "config" / "config.yaml", work, seeds)
    if study == "scale":  # the cells at n = 5000 (n <= 20,000: 218 CPU-s natively): the same kinds of work
        cfg = {**cfg, "params": {**cfg["params"], "n": [n for n in cfg["params"]["n"] if n <= 5000]}}
    out = Path(work) / f"{study}_{dataset}_{os.getpid()}.csv"
    c0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with threadpool_limits(limits=threads):
        run_study_job(study, cfg, [str(data)], [str(split)], str(out), None, f"{study}/{dataset}", "calibrate")
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime for a, b in zip(c0, c1, strict=True))
    print("RESULT " + json.dumps({"rates": rates, "cpu": cpu, "wall": wall}), flush=True)


def environments():
    """name -> environment overrides: native; OpenBLAS on its Nehalem (SSE) kernels, about 4x slower GEMM
    here, numpy untouched; numpy's AVX-512 loops off (``AVX2_ENV`` but OpenBLAS's), BLAS untouched."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from run import AVX2_ENV

    exp = {k: v for k, v in AVX2_ENV.items() if k != "OPENBLAS_CORETYPE"}
    return {"native": {}, "blas": {"OPENBLAS_CORETYPE": "Nehalem"}, "exp": exp}


def calibrate(kinds, work, rounds=1):
    """Run each kind's representative job part in the three environments, interleaved; print the
    fractions and the SPLIT table."""
    import yaml

    blocks = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["studies"]
    envs = environments()
    table = {}
    for kind in kinds:
        study, dataset, seeds = REPRESENTATIVE[kind]
        threads = int(blocks[study].get("threads", 1))
        res = {e: [] for e in envs}
        for _ in range(rounds):
            for e, extra in envs.items():
                cmd = [sys.executable, __file__, "_child", study, dataset, ",".join(map(str, seeds)), str(work),
                       str(threads)]
                p = subprocess.run(cmd, env={**os.environ, **extra}, capture_output=True, text=True, check=False)
                line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
                if p.returncode or not line:
                    raise RuntimeError(f"calibration job {study}/{dataset} failed in {e}: {p.stderr[-2000:]}")
                res[e].append(json.loads(line[0][7:]))
                r = res[e][-1]
                print(f"{kind:<12} {e:<7} cpu {r['cpu']:7.2f} s wall {r['wall']:7.2f} s rates "
                      + " ".join(f"{k} {v:.3g}" for k, v in r["rates"].items()), flush=True)
        best = {e: min(v, key=lambda r: r["cpu"]) for e, v in res.items()}
        fg, fe = fractions(best["native"]["cpu"], best["blas"]["cpu"], best["exp"]["cpu"],
                           *(_best_rates(res[e]) for e in envs))
        table[f"run:{kind}"] = (round(fg, 3), round(fe, 3))
        print(f"{kind:<12} f_gemm {fg:.3f} f_exp {fe:.3f} f_rest {1 - fg - fe:.3f}", flush=True)
    print("SPLIT =", json.dumps(table))
    return table


def _best_rates(results):
    return {k: max(r["rates"][k] for r in results) for k in results[0]["rates"]}


# ------------------------------------------------------------------------------------------- CLI
def report(run_dir, target_name="slowest", cores=2, here=None, rates_file=None, anchor=None, anchor_rates=None):
    """Print the projection of the run in ``run_dir`` onto ``target_name`` (``"here"``: this machine,
    quiet) with this machine's rates measured now (or ``here``), with :data:`REFERENCE`'s and, given
    ``rates_file`` (:func:`watch`'s samples during the run), with the rates the run ran at (medians under
    load: lower than the best-of rates the targets are set in, so that projection reads high unless
    anchored); returns (jobs, figures) of the first. Given ``anchor`` (a run of 67f70e1's default config on this machine,
    the same day; ``anchor_rates``: its watch file), also the projection anchored on it
    (:func:`anchor_scale`)."""
    jobs = read_run(run_dir)
    rates = {"measured now": here or core_rates(), "reference": REFERENCE}
    if rates_file:  # medians under load, set against targets in the best-of statistic: read them anchored
        rates["watched during the run (not comparable to the targets' best-of rates without --anchor)"] = \
            _rates_only(watched_rates(rates_file))
    out, walls = None, []
    for label, here_rates in rates.items():
        if target_name == "here":
            target = Machine("this machine, quiet", basis="its own rates", **here_rates)
        else:
            target = TARGETS[target_name]
        df, fig = project(jobs, here_rates, target.rates, cores)
        if out is None:
            out = df, fig
            print(f"run: {run_dir} ({len(df)} jobs; measured sums: wall {df['s'].sum():.0f} s, CPU "
                  f"{df['cpu'].sum():.0f} s; quiet estimate {df['q'].sum():.0f} s at contention "
                  f"{fig['contention']:.2f})")
            if fig["contention"] > 2:
                print(f"WARNING: this run's computing jobs took {fig['contention']:.1f}x their CPU time in wall time "
                      "(other load): under such load their CPU time grows too (the same gnkr job: 123-138 CPU-s "
                      "at contention <= 1.8, 178-210 at 5.5), so this projection is high; project a quieter run")
            print(f"target: {target.name}: gemm {target.gemm:.3g}, exp {target.exp:.3g}, py {target.py:.3g} "
                  f"({target.basis})")
            print(f"split by rule kind, f_gemm/f_exp ({SPLIT_BASIS}): "
                  + ", ".join(f"{k} {g:.2f}/{e:.2f}" for k, (g, e) in SPLIT.items()))
            print("projected job seconds by rule: " + ", ".join(f"{r} {v:.0f}" for r, v in by_rule(df).items()))
            runs = df[df["rule"] == "run"].sort_values("t", ascending=False).head(8)
            print("largest run jobs: " + ", ".join(f"{k[4:]} {v:.0f}" for k, v in zip(runs["key"], runs["t"],
                                                                                        strict=True)))
        print(f"with this machine's rates {label} (per core: " + ", ".join(f"{k} {v:.3g}" for k, v in here_rates.items())
              + f"): jobs sum {fig['jobs_s']:.0f} s (run jobs {df.loc[df['rule'] == 'run', 't'].sum():.0f}); "
              f"{cores}-core list schedule {fig['schedule_s'] / 60:.1f} minutes (bounds: critical path "
              f"{fig['critical_path_s'] / 60:.1f}, busy / cores {fig['busy_over_cores_s'] / 60:.1f})")
        walls.append(f"{fig['wall_s'] / 60:.1f} minutes with this machine's rates {label}")
    print(f"PROJECTED WALL TIME on {target_name}: " + ", ".join(walls))
    if anchor:
        anchored(jobs, read_run(anchor), target_name, cores, rates_file, anchor_rates)
    return out


def _rates_only(r):
    return {k: r[k] for k in ("gemm", "exp", "py")}


def anchored(jobs, anchor_jobs, target_name="slowest", cores=2, rates_file=None, anchor_rates=None):
    """Print and return the projection of ``jobs`` scaled by :func:`anchor_scale` of ``anchor_jobs``
    (each with its watched rates where both files are given, else with :data:`REFERENCE`'s for both)."""
    both = bool(rates_file and anchor_rates)
    here = _rates_only(watched_rates(rates_file)) if both else REFERENCE
    here_anchor = _rates_only(watched_rates(anchor_rates)) if both else REFERENCE
    scale = anchor_scale(anchor_jobs, here_anchor, target_name, cores)
    tg = TARGETS[target_name]
    df, fig = project(jobs, here, tg.rates, cores, scale=scale)
    rest = df.loc[df["rule"] != "run", "t"].sum()
    print(f"ANCHORED on a run of {MEASURED[target_name]['commit']} beside it (rates: "
          f"{'each run watched' if both else 'reference for both'}; factors: "
          + ", ".join(f"{k} jobs x{v:.3f}" for k, v in scale["kind"].items())
          + f", other run jobs x{scale['run']:.3f}, other steps x{scale['rest']:.3f}) -> run jobs "
          f"{df.loc[df['rule'] == 'run', 't'].sum():.0f} s, other steps {rest:.0f} s; {cores}-core list schedule "
          f"{fig['wall_s'] / 60:.1f} minutes, {fig['wall_s'] * scale['wall'] / 60:.1f} with the anchor's schedule "
          f"and Snakemake overhead (x{scale['wall']:.3f})")
    print("  anchored job seconds by rule: " + ", ".join(f"{r} {v:.0f}" for r, v in by_rule(df).items())
          + f"; all jobs {fig['jobs_s']:.0f}")
    return df, {**fig, "scale": scale}


#: Measured figures to validate against (default config, Snakemake wall minutes, run jobs' summed
#: seconds): issue 39 (slowest kind, 67f70e1, nothing else running) and the README's runs of the
#: AVX-512 EPYC (833b37e native, 8808f11 AVX2 emulated): the same default config as 67f70e1.
MEASURED = {
    "slowest": {"commit": "67f70e1", "wall_min": 23.7, "run_s": 2014.0, "jobs_s": 2546.0,
                "rules": {"aggregate": 192, "figures": 132, "report": 85, "stats": 61, "obtain": 35, "split": 16},
                "jobs": {"run/gnkr/*": 744, "run/scale/scalable": 218, "run/gen_nystrom_labels/segment": 173,
                         "run/gen_nystrom/segment": 122, "run/gnkr_real/diamonds": 84}},
    "epyc512": {"commit": "833b37e", "wall_min": 10.8, "run_s": 948.0},
    "epyc512_avx2": {"commit": "8808f11", "wall_min": 11.7, "run_s": 1019.0},
}


def anchor_scale(anchor, here, target_name="slowest", cores=2):
    """Corrections that make a run of the measured commit (``anchor``: its jobs, :func:`read_run`; a run
    of 67f70e1's default config on the machine and day of the run projected, with ``here`` its rates)
    project onto ``target_name``'s measured figures (:data:`MEASURED`), as ``{"kind": {study kind: c},
    "run": c, "rest": c, "wall": c}``:

    - ``kind``: for each study kind with jobs measured on the target (``MEASURED[...]["jobs"]``), their
      measured seconds over their projected ones, applied to every run job of that kind (the model's
      split of the gnkr jobs into BLAS, exp and rest projects them 1.5x too slow, scale's within 3%: one
      factor for all would misplace both);
    - ``run``: the rest of the measured run jobs' seconds over the projection of the run jobs of the
      other kinds (so the anchor's run jobs project to exactly the measured sum);
    - ``rest``: the measured analysis steps' seconds over their projection, applied to every step but the
      run jobs (the anchor's aggregate, stats, figures and report stand for today's ``analysis``);
    - ``wall``: the measured wall time over the corrected ``cores``-core schedule.

    Applied to a run beside the anchor, they cancel what the rates miss of the machine's speed (a VM that
    ran every job 1.34x slower while its rates read it as fast)."""
    import fnmatch

    m = MEASURED[target_name]
    if "rules" not in m or "jobs" not in m:
        raise ValueError(f"no measured run of {m['commit']} on {target_name} to anchor on: anchor on 'slowest'")
    tg = TARGETS[target_name]
    df, _ = project(anchor, here, tg.rates)
    run = df[df["rule"] == "run"]
    measured, projected = {}, {}
    for pattern, seconds in m["jobs"].items():
        hit = run[[fnmatch.fnmatch(k, pattern) for k in run["key"]]]
        if hit.empty:
            raise ValueError(f"the anchor run has no run job {pattern}: give a run of {m['commit']}'s default config")
        (kind,) = hit["kind"].unique()  # MEASURED's patterns each name jobs of one study kind
        measured[kind] = measured.get(kind, 0.0) + seconds
        projected[kind] = projected.get(kind, 0.0) + hit["t"].sum()
    kinds = {k.split(":", 1)[1]: measured[k] / projected[k] for k in measured}
    mine = run["kind"].str.split(":", n=1).str[1].isin(list(kinds))
    rest_of_run = m["run_s"] - sum(kinds[k.split(":", 1)[1]] * t for k, t in run[mine].groupby("kind")["t"].sum().items())
    steps = df[df["rule"].isin(list(m["rules"]))]
    missing = sorted(set(m["rules"]) - set(steps["rule"]))
    if missing or (~mine).sum() == 0 or rest_of_run <= 0:
        raise ValueError(f"the anchor run lacks {', '.join(missing) or 'run jobs of other kinds'} (an interrupted "
                         f"run?): give a finished run of {m['commit']}'s default config")
    scale = {"kind": kinds, "run": rest_of_run / run.loc[~mine, "t"].sum(),
             "rest": sum(m["rules"].values()) / steps["t"].sum()}
    _, fig = project(anchor, here, tg.rates, cores, scale=scale)
    scale["wall"] = m["wall_min"] * 60.0 / fig["wall_s"]
    return scale


def validate(run_dir, here=None):
    """Project a run of 67f70e1's default config (on this machine) onto each measured kind; print
    projected against measured, with the relative error."""
    import fnmatch

    jobs = read_run(run_dir)
    rates = {"measured now": here or core_rates(), "reference": REFERENCE}
    for label, here_rates in rates.items():
        print(f"-- this machine's rates {label}: " + ", ".join(f"{k} {v:.3g}" for k, v in here_rates.items()))
        for name, m in MEASURED.items():
            tg = TARGETS[name]
            df, fig = project(jobs, here_rates, tg.rates)
            pairs = [("wall min", fig["wall_s"] / 60, m["wall_min"]),
                     ("run jobs s", df.loc[df["rule"] == "run", "t"].sum(), m["run_s"])]
            if "jobs_s" in m:
                pairs.append(("all jobs s", fig["jobs_s"], m["jobs_s"]))
            for rule, v in m.get("rules", {}).items():
                pairs.append((rule, df.loc[df["rule"] == rule, "t"].sum(), v))
            for pat, v in m.get("jobs", {}).items():
                pairs.append((pat, df.loc[[fnmatch.fnmatch(k, pat) for k in df["key"]], "t"].sum(), v))
            print(f"{name} ({m['commit']}): " + "; ".join(f"{k} {p:.1f} vs {v:g} ({p / v - 1:+.0%})" for k, p, v in pairs))
    # ratios between runs of one machine (or one config), where the unmeasured ``py`` cancels
    run = {}
    for name, rates in (("here", REFERENCE), ("here_avx2", REFERENCE_AVX2)):
        run[name] = project(jobs, REFERENCE, rates)[0].query("rule == 'run'")["t"].sum()
    for name, tg in TARGETS.items():
        run[name] = project(jobs, REFERENCE, tg.rates)[0].query(
            "rule == 'run'")["t"].sum()
    for a, b, measured, what in (
            ("here_avx2", "here", 1936 / 1681, "this Xeon AVX2 emulated / native, README (a45859c)"),
            ("epyc512_avx2", "epyc512", 1019 / 948, "AVX-512 EPYC emulated / native, README (8808f11, 833b37e)"),
            ("slowest", "epyc512_avx2", 2014 / 1019, "slowest / AVX-512 EPYC emulated, issue 39")):
        ratio = run[a] / run[b]
        print(f"run jobs {a} / {b}: projected {ratio:.3f} vs measured {measured:.3f} ({ratio / measured - 1:+.0%}): {what}")


def run_watched(work, name, commit, cores=2, args=("--configfile", "config/config.yaml")):
    """A fresh clone of this repository at ``commit`` in ``work/name/main`` (``work/name/shared`` links
    to this checkout's ``../shared``; its ``.venv`` to this one's, with the clone's ``src`` first on
    ``PYTHONPATH``), its default config run by Snakemake on ``cores`` cores while :func:`watch` samples
    the rates into ``work/name/rates.jsonl`` (``args``: Snakemake's other arguments). Returns the run
    directory."""
    home = Path(work) / name
    if home.exists():
        raise ValueError(f"{home} exists: give an empty work directory (nothing there is overwritten)")
    home.mkdir(parents=True)
    run = home / "main"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(run)], check=True)
    subprocess.run(["git", "-C", str(run), "checkout", "-q", commit], check=True)
    (home / "shared").symlink_to((ROOT.parent / "shared").resolve())
    (run / ".venv").symlink_to(ROOT / ".venv")
    os.utime(run / "pyproject.toml", (os.stat(ROOT / "pyproject.toml").st_atime,
                                       os.stat(ROOT / "pyproject.toml").st_mtime))
    env = {**os.environ, "PYTHONPATH": str(run / "src")}
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "compileall", "-q", "-j", "0", "src",
                    "workflow/scripts"], cwd=run, env=env, check=True, stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    snake = watcher = None
    try:
        with open(home / "snakemake.log", "w") as log:
            snake = subprocess.Popen([str(ROOT / ".venv" / "bin" / "snakemake"), "--cores", str(cores), *args],
                                     cwd=run, env=env, stdout=log, stderr=subprocess.STDOUT)
            watcher = subprocess.Popen([sys.executable, __file__, "watch", str(home / "rates.jsonl"),
                                        str(snake.pid)])
            code = snake.wait()
            wall = time.perf_counter() - t0
    finally:  # interrupted or failed: neither goes on running on the cores
        for p in (snake, watcher):
            if p is not None and p.poll() is None:
                p.terminate()  # the watcher notices the run's end only at its next sample (each is flushed)
                p.wait()
    if watcher.returncode not in (0, -15):
        raise RuntimeError(f"the rate watcher of {commit}'s run failed (exit {watcher.returncode})")
    (home / "wall_s").write_text(f"{wall:.1f}\n")
    if code:
        raise RuntimeError(f"the run of {commit} failed (exit {code}): see {home / 'snakemake.log'}")
    print(f"{name} ({commit}): {wall:.0f} s wall", flush=True)
    return run


def pair(work, commit="HEAD", anchor_commit=MEASURED["slowest"]["commit"], cores=2, target_name="slowest"):
    """Run ``commit`` and the anchor commit back to back on this machine (:func:`run_watched` on ``cores``
    cores: the run, the anchor, the run again, so that a drift shows), then print each run's projection
    onto the 2-core target anchored on the anchor (:func:`anchored`). About 40 minutes on this project's 2-core machines."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", commit], capture_output=True,
                            text=True, check=True).stdout.strip()
    print(f"three runs in {Path(work).resolve()} (about 1.5 GB; remove it after)", flush=True)
    runs = {"run1": run_watched(work, "run1", commit, cores), "anchor": run_watched(work, "anchor", anchor_commit, cores),
            "run2": run_watched(work, "run2", commit, cores)}
    anchor_jobs = read_run(runs["anchor"])
    for name in ("run1", "run2"):  # both ways: neither followed the VM's drift better in two pairs (2026-11-27)
        print(f"-- {name} ({commit})")
        jobs = read_run(runs[name])
        anchored(jobs, anchor_jobs, target_name, 2)
        anchored(jobs, anchor_jobs, target_name, 2, runs[name].parent / "rates.jsonl",
                 runs["anchor"].parent / "rates.jsonl")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_child"]:
        study, dataset, seeds, work, threads = argv[1:6]
        return _child(study, dataset, [int(s) for s in seeds.split(",")], work, int(threads))
    if argv[:1] == ["watch"]:
        return watch(argv[1], int(argv[2]), float(argv[3]) if len(argv) > 3 else 15.0)
    if argv[:1] == ["validate"]:
        return validate(argv[1])
    if argv[:1] == ["pair"]:
        ap = argparse.ArgumentParser(prog="project.py pair", description=pair.__doc__.split(".")[0])
        ap.add_argument("work", help="an empty directory for the three runs (about 1.5 GB)")
        ap.add_argument("--commit", default="HEAD")
        ap.add_argument("--cores", type=int, default=2)
        a = ap.parse_args(argv[1:])
        return pair(a.work, a.commit, cores=a.cores)
    if argv[:1] == ["calibrate"]:
        ap = argparse.ArgumentParser(prog="project.py calibrate")
        ap.add_argument("--only", default=",".join(REPRESENTATIVE))
        ap.add_argument("--work", default="/tmp/nystrom_project_work")
        ap.add_argument("--rounds", type=int, default=1)
        a = ap.parse_args(argv[1:])
        return calibrate(a.only.split(","), a.work, a.rounds)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", help="directory of a finished `make reproduce` run (its results/benchmarks)")
    ap.add_argument("--target", default="slowest", choices=sorted(TARGETS) + ["here"])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--rates", help="the run's rate samples (project.py watch FILE PID during the run)")
    ap.add_argument("--anchor", help="a run of 67f70e1's default config on this machine, beside the run")
    ap.add_argument("--anchor-rates", help="the anchor run's rate samples")
    a = ap.parse_args(argv)
    if a.anchor and (a.target != "slowest" or a.cores != 2):
        ap.error("--anchor projects onto the 2-core slowest kind, where issue 39 measured the anchor's commit: "
                 "leave --target and --cores at their defaults")
    if (a.anchor_rates or a.rates) and not a.anchor or bool(a.rates) != bool(a.anchor_rates):
        ap.error("watched rates are read against an anchor: give --anchor with both --rates and --anchor-rates "
                 "(or neither of the two)")
    return report(a.run_dir, a.target, a.cores, rates_file=a.rates, anchor=a.anchor, anchor_rates=a.anchor_rates)


if __name__ == "__main__":
    main()
