"""Job-level glue between the Snakemake workflow and the library.

The scripts in ``workflow/scripts`` are thin adapters that call these functions
with ``snakemake.input/params/output``.  Every output is written atomically
(:mod:`nystrom_bench.atomic`), so a killed job never leaves a half-written file
that a later run would mistake for a result.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["plan", "job_config", "job_resources", "job_log", "obtain_dataset", "save_splits", "load_splits",
           "run_study_job", "aggregate_study", "track_study_runs", "analyze_study", "study_claims", "claim_key",
           "gather_claims", "analysis_info", "claims_ledger", "scipy_docstrings_left_as_they_are",
           "matplotlib_docstrings_left_as_they_are", "job_pyplot"]

#: the id of a block's one run job with ``split_jobs: block`` (its result file ``results/<study>/runs/all.csv``)
BLOCK_JOB = "all"

#: a job's resources when neither its methods nor its block set them
DEFAULT_RESOURCES = {"threads": 1, "mem_mb": 2000, "runtime": 60}


# -- job planning: functions of a (checked) config block -------------------------------------------
def plan(block):
    """``{job id: {"id", "datasets", "methods"}}``: the workflow's run jobs of a config block.

    One job per data set (``split_jobs: dataset``, the default), per data set and method
    (``split_jobs: method``; each method block may then set its own ``threads``/``mem_mb``/
    ``runtime``) or one job for the whole block (``split_jobs: block``, job id :data:`BLOCK_JOB`:
    for blocks of many small data sets, whose jobs would be mostly Python start-up -- about 2.3 s of
    imports each here, 3.5 on the slowest machine kind (issue 39); adding a data set then re-runs the
    block).  The rows are the same either way: every stream comes from (study, data set, seed).
    """
    how = block.get("split_jobs", "dataset")
    if how == "block":
        return {BLOCK_JOB: {"id": BLOCK_JOB, "datasets": list(block["datasets"]), "methods": list(block["methods"])}}
    by_method = how == "method"
    out = []
    for ds in block["datasets"]:
        if by_method:
            out += [{"id": f"{ds}+{m}", "datasets": [ds], "methods": [m]} for m in block["methods"]]
        else:
            out.append({"id": ds, "datasets": [ds], "methods": list(block["methods"])})
    return {j["id"]: j for j in out}


def job_config(kind, block, job):
    """The slice of the config block a job depends on, and nothing else (no title, no resources).

    Canonical (:func:`nystrom_bench.provenance.canonical`): the same block with its keys in another
    order is the same job.  ``kind`` is the block's :class:`~nystrom_bench.studies.Study` object
    (:func:`nystrom_bench.studies.get`; ``study`` names a block, as in :mod:`nystrom_bench.studies`).
    """
    from .methods import options_of as method_options
    from .provenance import canonical

    return canonical({
        "kind": block.get("kind", kind.name),
        "datasets": list(job["datasets"]),
        "seeds": [int(s) for s in block["seeds"]],
        "scaling": block.get("scaling", kind.default_scaling),
        "kernels": block["kernels"],
        "methods": {m: method_options(block["methods"][m]) for m in job["methods"]},
        "params": block.get("params") or {},
        **({"split": dict(block["split"])} if block.get("split") else {}),
    })


def job_resources(block, job):
    """``{threads, mem_mb, runtime}`` of a job: the largest its methods ask, else the block's."""
    from .methods import RESOURCE_KEYS

    out = {}
    for key in RESOURCE_KEYS:
        asked = [block["methods"][m][key] for m in job["methods"] if key in (block["methods"][m] or {})]
        out[key] = max(asked) if asked else block.get(key, DEFAULT_RESOURCES[key])
    return out


@contextmanager
def job_log(path):
    """Send logging and stderr of the job to its log file; log a failure's traceback there."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "w", buffering=1)  # noqa: SIM115 - closed below
    old_stderr = sys.stderr
    sys.stderr = fh
    logging.basicConfig(stream=fh, level=logging.INFO, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("nystrom_bench.job")
    t0 = time.perf_counter()
    try:
        yield log
        log.info("job_seconds=%.3f", time.perf_counter() - t0)
    except Exception as exc:
        log.error("job failed: %s: %s", type(exc).__name__, exc)
        traceback.print_exc(file=fh)
        raise
    finally:
        sys.stderr = old_stderr
        fh.close()


def obtain_dataset(dataset, out_npz, cache_dir=None, lock=None, log=None):
    """Workflow stage 1: obtain ``dataset`` from its source and store X, y, n_train as .npz.

    Downloads go to ``cache_dir``, by default the data cache that ``data.load`` and the command line
    share (:func:`nystrom_bench.data.default_cache_dir`), so a set fetched ahead is not downloaded again.
    """
    from . import data

    if log and data.info(dataset)["source"] == "url":
        log.info("data cache: %s", data.default_cache_dir(cache_dir))
    X, y, meta = data.obtain(dataset, cache_dir=cache_dir, lock=lock, return_meta=True)
    n_train = -1 if meta["n_train"] is None else meta["n_train"]
    data.save_npz_atomic(out_npz, X=X, y=y, n_train=n_train)
    if log:
        log.info("obtained %s: X %s, y %s, source training part %s", dataset, X.shape, y.shape, n_train)


def _source_n_train(arrays):
    """The source's own training rows recorded by :func:`obtain_dataset` (None: no source split)."""
    return int(arrays["n_train"]) if "n_train" in arrays and int(arrays["n_train"]) >= 0 else None


def save_splits(dataset, seeds, data_path, out_path):
    """Compute the splits of ``dataset`` for every seed and store them in one .npz."""
    from . import data

    arrays = data.load_npz(data_path)
    X, y = arrays["X"], arrays["y"]
    n_train = _source_n_train(arrays)
    out = {}
    for seed in seeds:
        sp = data.make_split(dataset, seed, len(X), y, source_n_train=n_train)
        for key, val in sp.items():
            out[f"seed{seed}_{key}"] = val
    data.save_npz_atomic(out_path, **out)


def load_splits(path):
    """Inverse of :func:`save_splits`: ``{seed: {"train", "test", "train_noise"}}``."""
    from . import data

    splits = {}
    for key, val in data.load_npz(path).items():
        seed, _, part = key.partition("_")
        splits.setdefault(int(seed[4:]), {})[part] = val
    return splits


def _dataset_info(name, arrays):
    """What MLflow records of a data set: a digest of its arrays, its source and shape."""
    import hashlib
    import json

    from . import data

    h = hashlib.sha256()
    for key in ("X", "y"):
        h.update(np.ascontiguousarray(arrays[key]).tobytes())
    e = data.info(name)
    files = e.get("files") or {}
    urls = [u for part in files.values() for u in (part if isinstance(part, list) else [part])]
    return {"digest": h.hexdigest()[:16], "source": urls[0] if urls else e["source"],
            "source_type": "http" if urls else "code",
            "schema": json.dumps({"n_samples": int(len(arrays["X"])), "n_features": int(arrays["X"].shape[1]),
                                  "task": e["task"]})}


def _tracking_tags(config_hash):
    from . import provenance

    return {"git_commit": provenance.git_commit(), "config_hash": config_hash,
            **{f"version.{k}": v for k, v in provenance.versions().items()}}


def _job_params(job_cfg):
    return {"kind": job_cfg["kind"], "datasets": job_cfg["datasets"], "seeds": job_cfg["seeds"],
            "methods": sorted(job_cfg["methods"]), "kernels": job_cfg["kernels"],
            "params": job_cfg["params"], "scaling": job_cfg["scaling"], "split": job_cfg.get("split")}


def run_study_job(study, job_cfg, data_paths, split_paths, out_csv, tracking_uri, job_key, config_hash, log=None):
    """One workflow job: run the study kind of ``job_cfg`` on its data sets and record the results.

    ``job_cfg`` is the job's config slice (:func:`job_config`);
    ``data_paths``/``split_paths`` hold one file per data set of the job, in its order.
    Writes the tidy result file ``out_csv`` (the workflow's source of truth).  With a
    ``tracking_uri``, also logs the job to MLflow (:func:`nystrom_bench.tracking.log_job`: a job
    run with the result file, a run per data set x method x kernel x seed, or x kernel where the kind
    folds its seeds: ``tracking_fold``), tagged with the git
    commit, config hash and package versions; the workflow passes None and logs every job of a
    study in its ``track_runs`` job (:func:`track_study_runs`, one MLflow start-up per study).  Returns the result DataFrame.
    """
    from . import atomic, data, results, studies, tracking

    kind = studies.get(job_cfg["kind"])
    t0 = time.perf_counter()
    rows, inputs, warmed = [], {}, set()  # warmed: one warm-up per kind of data in the job (Study.run)
    for dataset, data_path, split_path in zip(job_cfg["datasets"], data_paths, split_paths, strict=True):
        arrays = data.load_npz(data_path)
        inputs[dataset] = _dataset_info(dataset, arrays)
        splits = load_splits(split_path)
        missing = [s for s in job_cfg["seeds"] if int(s) not in splits]
        if missing:
            raise data.DataError(f"split file {split_path} lacks seeds {missing}; delete it and run again")
        rows += kind.run(study, job_cfg, dataset, arrays["X"], arrays["y"], splits, log=log,
                         source_n_train=_source_n_train(arrays), warmed=warmed)
    df = results.frame(study, rows, kind.coords)
    atomic.write_csv(df, out_csv)
    t1 = time.perf_counter()
    if tracking_uri is not None:
        title = job_cfg.get("title") or kind.title
        tracking.log_job(study, job_key, rows, result_file=out_csv, tracking_uri=tracking_uri,
                         tags=_tracking_tags(config_hash), job_params=_job_params(job_cfg),
                         description=f"{title}\n\n{kind.description}".strip(), datasets=inputs,
                         coords=kind.coords, metrics_info=kind.metrics, fold=kind.tracking_fold,
                         curve=kind.curve_coords)
    t2 = time.perf_counter()
    if log:
        log.info("compute_seconds=%.3f tracking_seconds=%.3f results=%d", t1 - t0, t2 - t1, len(rows))
    return df


def track_study_runs(study, inputs, job_keys, tracking_uri, block, log=None, data_dir="resources/data"):
    """Workflow stage ``track_runs``: log a study's result files to MLflow and drop the runs of jobs no
    longer in the study.

    Every job of the study's config ``block`` (``job_keys[i]`` made ``inputs[i]``) is logged with
    :func:`nystrom_bench.tracking.log_job` -- a job whose result file is logged already is skipped --
    with its data sets (``<data_dir>/<name>.npz``) as dataset inputs, and the link to the study's runs
    table is printed.  Its own job beside the analysis (:func:`analyze_study`): MLflow's import and
    store are most of the cost, and nothing the analysis writes reads them.  The log records
    ``tracking_seconds`` (all MLflow work).  Returns ``{job key: [run ids logged]}`` (empty for a job
    logged already).
    """
    from . import data, provenance, results, studies, tracking

    t0 = time.perf_counter()
    pruned = tracking.prune(study, set(job_keys), tracking_uri=tracking_uri)
    kind = studies.get(block.get("kind", study))  # its own package only
    coords = list(kind.coords)
    jobs = plan(block)
    title = block.get("title") or kind.title
    description = f"{title}\n\n{kind.description}".strip()
    infos, logged = {}, {}
    common_tags = _tracking_tags(None)  # git commit and versions: once per process, not per job
    for job_key, path in zip(job_keys, inputs, strict=True):
        job_cfg = job_config(kind, block, jobs[job_key.split("/", 1)[1]])
        for ds in job_cfg["datasets"]:
            npz = Path(data_dir) / f"{ds}.npz"
            if ds not in infos and npz.exists():
                infos[ds] = _dataset_info(ds, data.load_npz(npz))
        rows = tracking.rows_from_frame(results.read_results(path), coords)
        logged[job_key] = list(tracking.log_job(
            study, job_key, rows, result_file=path, tracking_uri=tracking_uri,
            tags={**common_tags, "config_hash": provenance.config_hash(job_cfg)}, job_params=_job_params(job_cfg),
            description=description, datasets={d: infos[d] for d in job_cfg["datasets"] if d in infos},
            coords=coords, metrics_info=kind.metrics, fold=kind.tracking_fold, curve=kind.curve_coords) or [])
    link = tracking.ui_link(study, tracking_uri)
    print(f"MLflow runs of {study}: {link}", flush=True)
    if log:
        log.info("MLflow runs table: %s", link)
        log.info("%d MLflow configuration runs; deleted %d stale MLflow runs; tracking_seconds=%.3f",
                 sum(map(len, logged.values())), pruned, time.perf_counter() - t0)
    return logged


def aggregate_study(study, inputs, output, coords, job_keys, tracking_uri, log=None, block=None,
                    data_dir="resources/data"):
    """Gather a study's result files into ``output``; with its config ``block``, also log them to MLflow
    (:func:`track_study_runs`).  The workflow runs the two as separate jobs (``analysis`` and
    ``track_runs``); this is both in one call, for a notebook.  Returns the table.
    """
    from . import results

    df = results.aggregate(inputs, output, coords)
    if log:
        log.info("aggregated %d results", len(df))
    if block is not None:
        track_study_runs(study, inputs, job_keys, tracking_uri, block, log=log, data_dir=data_dir)
    return df


def _claim_blocks(claim):
    return list(claim["study"]) if isinstance(claim["study"], list | tuple) else [claim["study"]]


def study_claims(claims, study, blocks):
    """The claims whose verdict the block ``study`` gives in a configuration of the blocks ``blocks``.

    A claim names one study block or a list of them, and the first of those in the configuration gives
    its verdict (:func:`nystrom_bench.claims.ledger`): every verdict is computed from ONE block's
    results, so each block's claims are evaluated in its own analysis job.  A claim none of whose
    blocks is configured belongs to no block (``not run`` in the ledger).
    """
    blocks = set(blocks)
    return [c for c in claims if next((b for b in _claim_blocks(c) if b in blocks), None) == study]


def claim_key(claim):
    """``"<paper file>/<claim id>"``: a claim's name across the paper files (ids are unique within one)."""
    return f"{claim.get('paper_key', '')}/{claim['id']}"


class _DocLeftAsIs(dict):
    """A stand-in for SciPy's numpydoc parser (``scipy._lib._docscrape.FunctionDoc``) while scipy.stats is
    imported (:func:`scipy_docstrings_left_as_they_are`): the function's docstring as it is, each section an empty
    list to append to, which SciPy's decorators do and then write the whole back as the docstring."""

    def __init__(self, func, *args, **kwargs):
        import inspect

        super().__init__()
        self.doc = inspect.getdoc(func) or ""

    def __missing__(self, section):
        return self.setdefault(section, [])

    def __str__(self):  # SciPy drops the first line (the signature) of what this gives
        return "\n" + self.doc


#: the SciPy release whose import-time docstring decorators :func:`scipy_docstrings_left_as_they_are` was verified
#: with (tests/test_stats_import.py): any other SciPy imports scipy.stats as it is
SCIPY_DOCSTRINGS_VERIFIED = "1.17."


@contextmanager
def scipy_docstrings_left_as_they_are():
    """While the block runs, importing scipy.stats leaves its functions' docstrings as they are.

    SciPy 1.17 parses the numpydoc docstring of every function decorated with its array-API note, axis/nan-policy
    or deprecation wrappers as it imports them (``FunctionDoc``, ~600 docstrings for scipy.stats) to add a note
    or a parameter to it: about half of scipy.stats' import, ~0.5 CPU-s of every analysis job, for text no job
    reads.  Here those decorators get :class:`_DocLeftAsIs` instead (their functions, signatures and capability
    tables are SciPy's; only their ``__doc__`` lacks the added notes).  Nothing is changed where scipy.stats
    is imported already, where SciPy is not the release it was verified with (:data:`SCIPY_DOCSTRINGS_VERIFIED`)
    or has no ``scipy._lib._docscrape.FunctionDoc``; the parser is put back after the block.  For the
    workflow's own job processes (the analysis and summary jobs): the library never applies it, so a user's
    scipy.stats keeps its notes.
    """
    try:
        if "scipy.stats" in sys.modules:
            raise ImportError("imported already")
        import scipy

        if not scipy.__version__.startswith(SCIPY_DOCSTRINGS_VERIFIED):
            raise ImportError(f"SciPy {scipy.__version__}: not verified")  # its decorators may read more of a doc
        from scipy._lib import _docscrape

        parser = _docscrape.FunctionDoc
    except (ImportError, AttributeError):
        yield
        return

    def holders():
        return [m for name, m in list(sys.modules.items()) if name.startswith("scipy") and m is not None]

    patched = [m for m in holders() if getattr(m, "FunctionDoc", None) is parser]
    for m in patched:
        m.FunctionDoc = _DocLeftAsIs
    try:
        yield
    finally:
        for m in holders():
            if getattr(m, "FunctionDoc", None) is _DocLeftAsIs:
                m.FunctionDoc = parser


#: the matplotlib release whose import-time property tables :func:`matplotlib_docstrings_left_as_they_are` was
#: verified with (tests/test_mpl_import.py): any other matplotlib is imported as it is
MATPLOTLIB_DOCSTRINGS_VERIFIED = "3.11."


def _no_property_table(artist):
    """The stand-in for ``matplotlib.artist.kwdoc`` while pyplot is imported: no table."""
    return ""


@contextmanager
def matplotlib_docstrings_left_as_they_are():
    """While the block runs, importing matplotlib's plotting modules leaves out the property tables of docstrings.

    As matplotlib 3.11 defines each Artist subclass (about a hundred, on importing pyplot) it writes a table of
    every settable property into the docstring of the class's ``set`` (``matplotlib.artist.kwdoc``, which reads
    each setter's docstring), and it fills the ``%(Line2D:kwdoc)s``-style fields of the plotting functions'
    docstrings with the same tables: ~0.2 CPU-s of every import of pyplot (0.55 -> 0.35), for text no job reads.  Here
    ``kwdoc`` gives an empty table while the block runs: the classes, their ``set`` signatures (matplotlib builds
    those apart from the text), defaults and pixels are matplotlib's (tests/test_mpl_import.py).  Nothing is
    changed where pyplot is imported already or where matplotlib is not the release it was verified with
    (:data:`MATPLOTLIB_DOCSTRINGS_VERIFIED`); ``kwdoc`` is put back after the block (the tables matplotlib
    filled in and cached during it stay empty in this process: docstrings only).  For the workflow's own job
    processes (:func:`job_pyplot`): the library never applies it, so a user's matplotlib keeps its tables.
    """
    try:
        if "matplotlib.pyplot" in sys.modules:
            raise ImportError("imported already")
        import matplotlib

        if not matplotlib.__version__.startswith(MATPLOTLIB_DOCSTRINGS_VERIFIED):
            raise ImportError(f"matplotlib {matplotlib.__version__}: not verified")  # its tables may be read elsewhere
        from matplotlib import artist

        kwdoc = artist.kwdoc
    except (ImportError, AttributeError):
        yield
        return
    artist.kwdoc = _no_property_table
    try:
        yield
    finally:
        if artist.kwdoc is _no_property_table:
            artist.kwdoc = kwdoc


def job_pyplot():
    """matplotlib's pyplot on the Agg backend for a workflow job that draws (:func:`nystrom_bench.report.pyplot`),
    imported without the docstrings' property tables (:func:`matplotlib_docstrings_left_as_they_are`, issue 39)."""
    from . import report

    with matplotlib_docstrings_left_as_they_are():
        return report.pyplot()


def analyze_study(study, inputs, out, info, coords, logs, claim_keys=(), section=None, analysis=None):
    """Workflow stage ``analysis``: a study's analysis in one process, each step into its own log.

    1. aggregate: the result files ``inputs`` into ``out["results"]``
       (:func:`nystrom_bench.results.aggregate`);
    2. stats: paired and Friedman tests, win/tie/loss and critical differences into ``out["paired"]``,
       ``out["friedman"]``, ``out["wtl"]``, ``out["cd"]`` (:func:`nystrom_bench.stats.run_study_stats`);
    3. figures: the directory ``out["figures"]`` (:func:`nystrom_bench.report.study_figures`);
    4. claims: the study's own claims (those of :data:`nystrom_bench.papers` whose :func:`claim_key`
       is in ``claim_keys``, :func:`study_claims`) with their verdicts into ``out["claims"]``
       (:func:`nystrom_bench.claims.ledger` on this study's table: the same rows the full ledger holds);
    5. report: the answer records ``out["answers"]`` (:func:`nystrom_bench.findings.study_answers`) and
       the PDF ``out["pdf"]`` (:func:`nystrom_bench.report.study_pdf`).

    ``info`` is the study's report info (the workflow's ``study_report_params``: the analysis info of
    :func:`analysis_info` plus title, description, config) and ``analysis`` the analysis info alone (the
    workflow's ``analysis_params``; default ``info``), which steps 2-4 get; ``logs`` maps the steps ``aggregate``,
    ``stats``, ``figures``, ``claims``, ``report`` to log files (:func:`job_log`; each ends with its
    ``job_seconds``); ``section`` the kind's report section (default
    ``nystrom_bench.studies.section(info["kind"])``).  One Python start-up instead of five: the steps read
    the files the previous ones wrote, as separate jobs did.  Plotting is imported by steps 3 and 5
    only, MLflow never (:func:`track_study_runs` is its own job).
    """
    from . import results

    analysis = info if analysis is None else analysis
    with job_log(logs["aggregate"]) as log:
        df = results.aggregate(inputs, out["results"], coords)
        log.info("aggregated %d results", len(df))
    with job_log(logs["stats"]) as log:
        from . import studies

        with scipy_docstrings_left_as_they_are():  # ~0.5 CPU-s of SciPy's import (issue 39)
            from .stats import run_study_stats

        section = section or studies.section(info["kind"])
        paired = run_study_stats(out["results"], analysis, out["paired"], out["friedman"],
                                 tested_rows=section.tested_rows, out_wtl=out["wtl"], out_cd=out["cd"])
        log.info("paired tests:\n%s", paired.to_string())
    with job_log(logs["figures"]) as log:
        from . import report

        job_pyplot()  # ~0.2 CPU-s of pyplot's import less (issue 39)
        paths = report.study_figures(out["results"], analysis, out["figures"],
                                     figure_coords=analysis.get("figure_coords"),
                                     paper_curve=section.paper_curve, extra_figures=section.figures,
                                     cd_csv=out["cd"])
        log.info("figures: %s", paths)
    with job_log(logs["claims"]) as log:
        from . import claims, papers
        from .atomic import write_csv

        keys = set(claim_keys)
        own = [c for c in papers.all_claims() if claim_key(c) in keys]
        if len(own) != len(keys):
            missing = sorted(keys - {claim_key(c) for c in own})
            raise ValueError(f"claims {missing} are in no paper file (src/nystrom_bench/papers/*.yaml); the "
                             "workflow lists them from those files: run it again")
        ledger = claims.ledger(own, {study: results.read_results(out["results"])}, {study: analysis})
        write_csv(ledger, out["claims"])
        log.info("%d claims: %s", len(ledger), claims.verdict_counts(ledger))
    with job_log(logs["report"]) as log:
        import tempfile

        from . import findings

        records = findings.study_answers(section.tested_rows(results.read_results(out["results"])), info,
                                         coord_roles=section.coord_roles)
        findings.write_answers(records, out["answers"])
        log.info("answers: %d records", len(records))
        with tempfile.TemporaryDirectory() as tmp:
            key = findings.answer_figure(records, Path(tmp) / "answer_cd.png")
            report.study_pdf(out["results"], out["paired"], out["friedman"], out["figures"], info, out["pdf"],
                             report_tables=section.tables, claims_csv=out["claims"], wtl_csv=out["wtl"],
                             cd_csv=out["cd"], answers=findings.answer_lines(records), key_figure=key)
    return df


def gather_claims(study_csvs, out_csv, claims=None):
    """Workflow stage ``claims``: the ledger over every paper's claims from the blocks' own claims files.

    ``study_csvs``: ``{study block: its claims.csv}`` (written by :func:`analyze_study`), for every block
    of the configuration.  Each claim's row is taken as its block wrote it (the text, unchanged); a claim
    none of whose blocks is configured gets its ``not run`` (or ``not testable``) row here.  Rows in the
    paper files' order, as :func:`nystrom_bench.claims.write_ledger` writes them.  Returns the ledger
    (strings, as in the file).
    """
    import io

    import pandas as pd

    from . import papers
    from .atomic import write_csv
    from .claims import COLUMNS, ledger

    claims = papers.all_claims() if claims is None else claims

    def text_frame(src):
        return pd.read_csv(src, dtype=str, keep_default_na=False)

    blocks = list(study_csvs)
    own = {s: text_frame(p) for s, p in study_csvs.items()}
    absent = [c for c in claims if not any(b in own for b in _claim_blocks(c))]
    rest = ledger(absent, {}, {})
    buf = io.StringIO()
    rest.to_csv(buf, index=False)
    buf.seek(0)
    rest = text_frame(buf) if absent else pd.DataFrame(columns=COLUMNS)
    taken = {s: 0 for s in own}
    taken[None] = 0
    frames = {**own, None: rest}
    rows = []
    for c in claims:
        study = next((b for b in _claim_blocks(c) if b in blocks), None)
        frame, i = frames[study], taken[study]
        if i >= len(frame) or frame.iloc[i]["claim_id"] != c["id"]:
            raise ValueError(f"{study_csvs.get(study, 'the ledger')} does not hold claim {c['id']!r} in the paper "
                             "files' order: it is older than src/nystrom_bench/papers/*.yaml; run its analysis again")
        rows.append(frame.iloc[i])
        taken[study] = i + 1
    for study, frame in frames.items():
        if taken[study] != len(frame):
            raise ValueError(f"{study_csvs.get(study, 'the claims of no configured block')} holds "
                             f"{len(frame) - taken[study]} claims that its block does not give in this "
                             "configuration: run its analysis again")
    out = pd.DataFrame(rows, columns=COLUMNS).reset_index(drop=True)
    write_csv(out, out_csv)
    return out


def analysis_info(kind, block):
    """What the analysis stages (stats, figures, claims, answers) need of a study block: its metrics with
    their direction, coords, blocks, reference, methods and the kind's own findings questions -- nothing a
    title change touches."""
    return {
        "kind": kind.name,
        "metrics": {m: list(v) for m, v in kind.metrics.items()},
        "tested_metrics": list(kind.tested_metrics or kind.metrics),
        "primary_metric": kind.primary_metric,
        "reference": block.get("reference", kind.reference_method),
        "coords": list(kind.coords),
        "summary_coords": None if kind.summary_coords is None else list(kind.summary_coords),
        "figure_coords": None if kind.figure_coords is None else list(kind.figure_coords),
        "block_cols": list(kind.block_cols),
        "methods": list(block["methods"]),
        # the kind's own findings questions and its methods' library calls, where it has them
        **({"questions": [dict(q) for q in kind.questions]} if kind.questions else {}),
        **({"calls": calls} if (calls := kind.method_calls(block)) else {}),
    }


def claims_ledger(config_path="config/config.yaml", results_dir="results", out_csv=None):
    """The claims ledger of a finished run, outside the workflow (e.g. in a notebook).

    Reads the config, each study block's ``<results_dir>/<block>/results.csv`` (a block whose
    file is missing counts as not run) and returns the ledger DataFrame (and writes it to
    ``out_csv`` if given).
    """
    import yaml

    from . import claims, papers, studies
    from .config import check
    from .results import read_results

    blocks = check(yaml.safe_load(Path(config_path).read_text()))
    infos = {s: analysis_info(studies.get(b.get("kind", s)), b) for s, b in blocks.items()}
    tables = {s: read_results(Path(results_dir) / s / "results.csv") for s in blocks
              if (Path(results_dir) / s / "results.csv").exists()}
    out = claims.ledger(papers.all_claims(), tables, infos)
    if out_csv:
        from .atomic import write_csv

        write_csv(out, out_csv)
    return out
