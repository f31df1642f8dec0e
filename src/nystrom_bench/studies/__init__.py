"""Studies: one module per study kind on a shared base that owns the experiment loop.

A study kind is a :class:`Study` subclass decorated with ``@register``; its methods come from
one family of :mod:`nystrom_bench.methods`.  The base class runs the loop of one workflow job --
variants -> seeds -> splits -> kernels -> methods -> coords -- with common random numbers; for
every trial it builds the method's estimator, fits it (shared between trials with equal
:meth:`~nystrom_bench.methods.Method.fit_key`), predicts, times both (in a forked child that
also measures memory where ``isolated``), scores and builds the row.  Before the first timed cell it
runs :meth:`Study.warm_up` once per job (untimed, results thrown away): every method on a small slice
of the first split, so that what a process pays once -- imports, numba's compiled loops, BLAS's
start-up, first-call caches -- stays out of seed 0's timings.  No study overrides the loop.
A kind declares only what is its own:

- what it is: ``name``, ``title``, ``description``, ``tasks``, ``metrics``, ``primary_metric``,
  ``reference_method``, ``family`` (where its methods come from), ``questions`` (the findings questions
  of its own) and ``curve_coords`` (what an MLflow run's curves run over);
- its grid: ``coords`` and :meth:`Study.coord_grid` (e.g. ``m`` landmarks), :meth:`Study.variants`
  (split overrides that are coords, e.g. training sizes), ``block_cols`` (what a paired test
  pairs on) and ``rng_names`` (which trials share a random stream);
- its config: ``params_schema`` (each ``params:`` key as a JSON schema with its default; the
  workflow's schema and :mod:`nystrom_bench.config` check it), ``kernel_keys`` / ``kernel_names``,
  :meth:`Study.landmark_counts`, and :meth:`Study.check_params` / :meth:`Study.check_data` for what
  a schema cannot say (:mod:`nystrom_bench.config` runs the checks, before any job);
- the learning problem: :meth:`Study.prepare`, :meth:`Study.targets`, :meth:`Study.fit_data`,
  :meth:`Study.test_data`, :meth:`Study.predict_options`, :meth:`Study.score` and
  :meth:`Study.record` (what a row keeps besides the method's parameters).

How a study's results are analysed and drawn is not the study's business: its report section
(``studies/<kind>/section.py``, a :class:`nystrom_bench.sections.Section`) plugs into the report.

A config block may set ``split:`` -- overrides of the data sets' registered split protocol
(:func:`nystrom_bench.data.split_spec`), e.g. ``{test_fraction: 0.5}``; the job then draws its
splits itself and every row records them in ``params.split``, so ``data.load(dataset, seed=seed,
split=params.split)`` returns the row's training part.

Names, here and in :mod:`nystrom_bench.jobs` and :mod:`nystrom_bench.config`: ``study`` is a config block's
name (its results folder and MLflow experiment, ``Trial.study``); ``kind`` is the :class:`Study` object
that runs it, ``studies.get(block["kind"])`` (the config key ``kind:`` names it; default: the block's name).

Adding a study = one package ``studies/<kind>/`` (its study, and where it needs them its method family
and report section) + a config block + its test.
"""

from __future__ import annotations

import dataclasses
import importlib
import numbers
import pkgutil
import random
import time
import warnings

import numpy as np

from .. import data, kernels, methods, profiling, sections, seeding

__all__ = ["Study", "Trial", "register", "get", "available", "section", "questions"]

_REGISTRY = {}

def register(cls):
    """Class decorator: add a :class:`Study` subclass under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _discover():
    """Import every kind's package (``studies/<kind>/``: its study, methods and report section)."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    orphans = methods.undeclared()
    if orphans:
        raise ValueError("methods registered to an undeclared family: "
                         + "; ".join(f"{fam!r}: {', '.join(cls)}" for fam, cls in orphans.items())
                         + f"; use one of {', '.join(methods.families())} or declare it with methods.family()")


def available():
    """Names of all study kinds."""
    _discover()
    return sorted(_REGISTRY)


def get(name):
    """An instance of the study kind ``name``.

    Imports that kind's own package ``studies/<name>/`` first: a job runs one kind, and every other kind's
    study, methods and report section are start-up it does not need (~0.5 CPU-s of each run job, issue 39).
    Every kind's package where ``name`` is not registered by its own, or where a method there is registered to
    a family no imported package declares (the full discovery then explains it)."""
    if name not in _REGISTRY or methods.undeclared():
        _import_own(name)
    if name not in _REGISTRY or methods.undeclared():
        _discover()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown study kind {name!r}; choose one of {', '.join(sorted(_REGISTRY))}") from None


def questions():
    """Every findings question: the generic ones and each kind's own (:func:`nystrom_bench.findings.all_questions`)."""
    from .. import findings

    return findings.all_questions([q for name in available() for q in _REGISTRY[name].questions])


def _import_own(name):
    """Import the package ``studies/<name>/`` if there is one."""
    if not (isinstance(name, str) and name.isidentifier()):
        return
    try:
        importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise


def section(name):
    """The report section of the study kind ``name`` (the generic :class:`~nystrom_bench.sections.Section`
    if it has none of its own).  Imports that kind's package only (an analysis job draws one kind: the others'
    studies and methods are start-up it does not need); every kind's where ``name`` has no package."""
    try:
        importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        _discover()
    return sections.registered().get(name, sections.Section)()


class Trial:
    """Everything one evaluation needs: one (seed, kernel, method, coords) of one data set.

    Set by the loop: ``study`` (the block's name), ``dataset``, ``seed``, ``split`` (scaled and
    prepared), ``y_fit`` and ``state`` (:meth:`Study.targets`), ``kernel_label`` and ``kernel``
    (resolved on the training part), ``method`` (the block's :class:`~nystrom_bench.methods.Method`),
    ``label`` (the block's label: the result row's ``method``), ``method_cfg`` (its options, defaults filled in),
    ``coords``, ``params`` (the study's, defaults filled in), ``rng`` (common random numbers: the
    same stream for every method, see :attr:`Study.rng_names`) and ``log``.  After the fit:
    ``estimator``, ``fit_time``, ``predict_time``.
    """

    def __init__(self, study, dataset, seed, split, y_fit, state, kernel_label, kernel, method, coords, params, memo,
                 log=None):
        self.study, self.dataset, self.seed, self.split = study, dataset, seed, split
        self.y_fit, self.state = y_fit, state
        self.kernel_label, self.kernel = kernel_label, kernel
        self.method, self.label, self.method_cfg = method, method.label, dict(method.opts)
        self.coords, self.params, self.log = dict(coords), params, log
        self._memo = memo
        self.rng = None
        self.estimator = self.fit_time = self.predict_time = None

    @property
    def solver(self):
        """Deprecated: ``trial.method`` (the :class:`~nystrom_bench.methods.Method`; ``trial.label`` is its label)."""
        warnings.warn("trial.solver is deprecated: the Method is trial.method, its label trial.label", FutureWarning,
                      stacklevel=2)
        return self.method

    def shared(self, key, make):
        """``make()`` once per (data set, seed) and ``key``: work several methods reuse.

        ``make`` must depend only on what ``key`` and the (data set, seed) name -- never on this
        trial's method or its ``rng`` -- so that the methods' order cannot change a row (draw
        randomness from :meth:`stream`).
        """
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def stream(self, *names):
        """A fresh random stream of this (study, data set, seed) and ``names``, the same for every
        method that asks (``names=()``: the stream a trial's ``rng`` starts as by default)."""
        return seeding.rng(self.seed, self.study, self.dataset, *names)

    def fitted(self, key, make, X, y):
        """``(make().fit(X, y), seconds)`` once per (data set, seed) and ``key``: a fit several trials share
        (a method's :meth:`~nystrom_bench.methods.Method.fit_key`, or a reference machine a score needs)."""
        def fit():
            est = make()
            t0 = time.perf_counter()
            est.fit(X, y)
            return est, time.perf_counter() - t0

        return self.shared(("fitted", key), fit)


class Study:
    """Base class of a study kind (see module docstring)."""

    name = "study"
    title = "Study"
    description = ""
    #: the :mod:`nystrom_bench.methods` family the blocks' methods come from (a kind's package declares it,
    #: or names another kind's, e.g. ``"krr"``)
    family = None
    #: tasks of data sets this study can run on
    tasks = ("regression", "binary", "multiclass")
    #: metric -> (label, lower_is_better)
    metrics = {}
    #: the metrics the paired tests, Friedman tests and figures cover (None: all of ``metrics``)
    tested_metrics = None
    #: metric tested between methods and shown first
    primary_metric = None
    #: method every other method is compared with (config may override with `reference:`)
    reference_method = None
    #: the study's grid axes: a result row is identified by identity + these
    coords = ()
    #: the columns a paired test pairs results on (within one coord value)
    block_cols = ("dataset", "kernel", "seed")
    #: ``params:`` key -> JSON schema with its ``default`` (None: any key, no defaults)
    params_schema = None
    #: ``params:`` keys renamed: old name -> current name.  A config that still uses an old name stops before
    #: any job with one message naming the current one (:meth:`check_params`; the workflow's schema lets the
    #: old name through to that check, :func:`nystrom_bench.config.workflow_schema`)
    renamed_params = {}
    #: kernel-spec keys besides ``kernel`` this study honours (None: every key the kernel takes)
    kernel_keys = None
    #: kernels this study can use (None: any)
    kernel_names = None
    #: why kernel keys outside ``kernel_keys`` are not used (shown in the error)
    kernel_keys_note = ""
    #: coords the generic mean +- sd tables and per-scope tests break down by (None: all of
    #: ``coords``); the others are averaged over in the tables and part of the test blocks
    summary_coords = None
    #: coords that get the generic metric-vs-coord figures (None: every coord that varies)
    figure_coords = None
    #: the coords an MLflow run draws its metric curves over, in order of preference: the first that every
    #: result of the run has (numeric); none of them: the numeric coord with most values
    #: (:mod:`nystrom_bench.tracking_layout`)
    curve_coords = ()
    #: the findings questions this kind asks besides the generic ones (:data:`nystrom_bench.findings.QUESTIONS`),
    #: in the same form; ``before``: the id of the question it is listed before (default: after all)
    questions = ()
    #: identity columns folded into the MLflow metric keys instead of a run each (``("seed",)``: one run per
    #: data set x method x kernel; :mod:`nystrom_bench.tracking_layout`, "Folded seeds")
    tracking_fold = ()
    default_scaling = "standardize"
    #: whether the study predicts (False: :meth:`score` reads the fitted estimator)
    predicts = True
    #: run each fit + predict in a forked child that measures the memory it adds (``peak_mem_mb``);
    #: ``params.cell_timeout`` seconds stop it
    isolated = False

    # -- config checks (run before any job) ---------------------------------------------------
    @property
    def param_defaults(self):
        if self.params_schema is None:
            return None
        return {k: s["default"] for k, s in self.params_schema.items() if "default" in s}

    @property
    def known_params(self):
        return None if self.params_schema is None else tuple(self.params_schema)

    def resolve_params(self, params):
        """The study's ``params:`` with defaults filled in."""
        return {**(self.param_defaults or {}), **(params or {})}

    def check_params(self, params):
        """Raise ValueError naming the problem if the study's ``params:`` block is invalid: unknown keys,
        values outside ``params_schema``, renamed keys (a kind adds what a schema cannot say)."""
        renamed = [k for k in params if k in self.renamed_params]
        if renamed:
            raise ValueError("; ".join(f"the parameter {k!r} was renamed {self.renamed_params[k]!r}; rename the key"
                                       for k in renamed))
        if self.known_params is not None:
            unknown = sorted(set(params) - set(self.known_params))
            if unknown:
                raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))} for study kind "
                                 f"{self.name!r}; allowed: {', '.join(self.known_params)}")
            methods._validate(params, self.params_schema, where="parameter")

    def method(self, label, block):
        """The :class:`~nystrom_bench.methods.Method` of a config block (ValueError if it is invalid)."""
        if self.family is None:
            raise ValueError(f"study kind {self.name!r} declares no method family: set {type(self).__name__}.family "
                             f"to one of {', '.join(methods.families())}")
        return methods.build(self.family, label, block)

    def check_data(self, params, dataset, n_train):
        """Why ``params`` cannot run on ``dataset`` with ``n_train`` training points (None if unknown), or None."""
        return None

    def landmark_counts(self, params):
        """Landmark counts every method of the study uses (e.g. a coord ``m`` of the grid), checked against
        each data set's training size with the methods' own
        (:meth:`~nystrom_bench.methods.Method.landmark_counts`)."""
        return []

    # -- the grid ----------------------------------------------------------------------------------
    def variants(self, cfg, params):
        """``[(split overrides or None, coords)]``: runs of the whole loop that differ in the split
        (e.g. training sizes as a coord); default: the block's ``split:`` once."""
        return [(cfg.get("split"), {})]

    def coord_grid(self, params, method, dataset):
        """The coord values one method (a :class:`~nystrom_bench.methods.Method`) is evaluated at on one
        data set (``dataset``: its registry info, e.g. ``dataset["task"]``)."""
        return [{}]

    def rng_names(self, method_name, coords):
        """Names that make a trial's random stream; ``()`` (default): every method and coord of a
        (data set, seed) gets the same stream -- common random numbers for the paired tests."""
        return ()

    # -- the learning problem ------------------------------------------------------------------------
    def prepare(self, split, params):
        """Change a scaled split before the loop uses it (e.g. standardise targets); default: as is."""
        return split

    def targets(self, split):
        """Training targets for the learner and the state :meth:`score` needs."""
        return split.y_train, None

    def fit_data(self, trial):
        """``(X, y)`` the trial's estimator is fitted on (default: the training part and the targets)."""
        return trial.split.X_train, trial.y_fit

    def test_data(self, trial):
        """``X`` the trial's estimator predicts (default: the test part)."""
        return trial.split.X_test

    def predict_options(self, trial):
        """Keyword arguments of the trial's ``predict`` (e.g. an integration mode)."""
        return {}

    def score(self, prediction, trial):  # pragma: no cover - abstract
        """Metrics of one trial (``trial.estimator`` is fitted, ``trial.fit_time`` measured); ``fit_time``
        and ``predict_time`` are added where ``metrics`` declares them and the score does not set them."""
        raise NotImplementedError

    def record(self, trial):
        """What a row records besides the method's :meth:`~nystrom_bench.methods.Method.record`."""
        return {}

    # -- the findings ----------------------------------------------------------------------------------
    def method_calls(self, block):
        """``{method label: the library call a practitioner writes for it}`` for the practitioner's guide rows
        of the kind's ``guide`` questions (:mod:`nystrom_bench.findings`); default: none."""
        return {}

    # -- the warm-up -----------------------------------------------------------------------------------
    #: ``(fewest, most)`` training rows of the warm-up's slice: the fewest, or twice the largest landmark
    #: count of the job's methods (:meth:`~nystrom_bench.methods.Method.landmark_counts`) up to the most
    warm_up_rows = (64, 512)

    def warm_up_split(self, split, params, job_methods):
        """The small copy of the job's first (prepared) split the warm-up runs on: the first rows of the
        training part -- for classes, the first of each class in turn, so every class is there -- and of
        the test part.  Copies: nothing a method does to them reaches the real split."""
        fewest, most = self.warm_up_rows
        counts = [int(m) for method in job_methods.values() for m in method.landmark_counts(params)
                  if isinstance(m, numbers.Integral)]
        n = min(len(split.y_train), max(fewest, min(most, 2 * max(counts, default=0))))
        idx = np.arange(len(split.y_train))
        if split.info.get("task") != "regression":  # round robin over the classes, in row order
            _, inverse = np.unique(split.y_train, return_inverse=True)
            rank = np.empty(len(idx), dtype=int)
            for c in np.unique(inverse):
                rank[inverse == c] = np.arange(np.sum(inverse == c))
            idx = np.argsort(rank, kind="stable")
        idx = np.sort(idx[:n])
        n_test = min(len(split.y_test), fewest)
        return dataclasses.replace(split, X_train=split.X_train[idx].copy(), y_train=split.y_train[idx].copy(),
                                   X_test=split.X_test[:n_test].copy(), y_test=split.y_test[:n_test].copy(),
                                   info=dict(split.info))

    def warm_up_coords(self, params, method, info, n):
        """The coords the warm-up runs ``method`` (a :class:`~nystrom_bench.methods.Method`) at on ``n`` training rows: one per distinct combination of
        the grid's non-numeric values (e.g. each criterion, each integration mode: each its own code path),
        at the first numeric values; integer coords above ``n // 2`` (counts such as ``m``, ``n`` or
        ``n_labels``) are lowered to it."""
        cells = {}
        for coords in self.coord_grid(params, method, info):
            key = tuple((k, v) for k, v in coords.items() if not isinstance(v, numbers.Number))
            cells.setdefault(key, coords)
        return [{k: min(v, n // 2) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
                 for k, v in coords.items()} for coords in cells.values()]

    def warm_up(self, study, cfg, dataset, seed, split, params, job_methods, extra=None):
        """Run every kernel x method of the job once, untimed, before the first timed cell; return what
        it did: ``{"rows", "cells", "failed": ["label: error", ...]}``.

        What the first cell of a process pays once -- imports (lazy ones inside methods too), numba's
        compiled loops (:mod:`nystrom_bench.fastexp`), BLAS's start-up, scipy's and scikit-learn's
        first-call set-up -- otherwise lands in seed 0's timings.  Default: each method at
        :meth:`warm_up_coords` on :meth:`warm_up_split`, with its own memo (nothing shared with the
        real trials) and in this process also for an ``isolated`` study (its forked cells inherit what
        was loaded here).  Random streams are fresh generators from the names
        (:func:`nystrom_bench.seeding.rng`), so the real trials draw what they drew without it.  A cell
        that fails on the small slice is listed in ``failed`` and skipped; a kind may override this
        (e.g. ``return None`` where nothing is worth warming).
        """
        small = self.warm_up_split(split, params, job_methods)
        n = len(small.y_train)
        y_fit, state = self.targets(small)
        memo, cells, failed = {}, 0, []
        for klabel, kspec in cfg["kernels"].items():
            try:
                kern = kernels.from_spec(kspec, small.X_train, where=f"kernels.{klabel}")
            except Exception as exc:  # noqa: BLE001 - the warm-up never fails a job
                failed.append(f"kernel {klabel}: {type(exc).__name__}: {exc}")
                continue
            for label, method in job_methods.items():
                for coords in self.warm_up_coords(params, method, small.info, n):
                    trial = Trial(study, dataset, seed, small, y_fit, state, klabel, kern, method,
                                  {**(extra or {}), **coords}, params, memo)
                    cells += 1
                    try:
                        self._evaluate(trial, None, isolated=False)
                    except Exception as exc:  # noqa: BLE001 - the warm-up never fails a job
                        failed.append(f"{label}: {type(exc).__name__}: {str(exc)[:160]}")
        return {"rows": n, "cells": cells, "failed": failed}

    def _warm_up(self, log, *args):
        """:meth:`warm_up`, timed and logged in one line; it never fails the job and leaves numpy's and
        Python's global random state as it found them.

        Its warnings are silenced, not logged: they are about a slice (e.g. ``n_components`` clipped to its
        rows), and what the data deserve the real fits warn themselves (a warning ignored here is not
        marked as given, so Python's once-per-place filter still shows it then).  A warning a process gives
        once by its own flag -- numba's exp falling back (:mod:`nystrom_bench.fastexp`) -- is given before
        the silenced part, so it still reaches the job's log."""
        t0 = time.perf_counter()
        np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002 - kept as they were
        try:
            from .. import fastexp

            fastexp.compiled()  # its one-time self-check, outside the silenced part (it warns when it falls back)
        except Exception:  # noqa: BLE001, S110 - the warm-up never fails a job; the real kernels raise it again
            pass
        try:
            from .. import sharedwork

            # the warm-up's slice could equal a small data set: a memo of its own, so that no timed row is
            # charged the warm-up's cold seconds for work it reuses (nystrom_bench.sharedwork)
            with warnings.catch_warnings(), np.errstate(all="ignore"), sharedwork.MEMO.apart():
                warnings.simplefilter("ignore")
                done = self.warm_up(*args)
        except Exception as exc:  # noqa: BLE001 - the warm-up never fails a job
            done = {"failed": [f"{type(exc).__name__}: {exc}"]}
        finally:
            np.random.set_state(np_state)  # noqa: NPY002
            random.setstate(py_state)
        if log and done is not None:
            failed = list(dict.fromkeys(done.get("failed") or []))
            log.info("warm-up (untimed, results discarded): %s cells on %s training rows in %.3f s%s",
                     done.get("cells", "?"), done.get("rows", "?"), time.perf_counter() - t0,
                     f"; {len(failed)} failed on the slice: " + "; ".join(failed) if failed else "")
        return done

    # -- the loop ------------------------------------------------------------------------------------
    def run(self, study, cfg, dataset, X, y, splits, log=None, source_n_train=None, warmed=None):
        """Run every variant x seed x kernel x method x coord of ``cfg`` on one data set; return result rows.

        ``cfg`` is a job's config slice (:func:`nystrom_bench.jobs.job_config`) or a whole block; ``splits``
        maps each seed to the indices of :func:`nystrom_bench.data.make_split`.  With split overrides
        (``cfg["split"]`` or :meth:`variants`) the splits are drawn here instead (``source_n_train``:
        the source's own training rows, for ``source`` splits).  ``warmed``: a set the caller keeps for
        the whole job (:func:`nystrom_bench.jobs.run_study_job`) -- a job of several data sets warms up
        once per kind of data (task, dense or sparse), as the first-call costs are the process's, not
        the data set's; None: warm up here.
        """
        params = self.resolve_params(cfg.get("params"))
        job_methods = {label: self.method(label, block) for label, block in cfg["methods"].items()}
        rows, warm = [], True
        for overrides, extra in self.variants(cfg, params):
            for seed in map(int, cfg["seeds"]):
                idx = (data.make_split(dataset, seed, len(X), y, source_n_train=source_n_train, overrides=overrides)
                       if overrides else splits[seed])
                split = self.prepare(data.apply_split(dataset, seed, X, y, idx, cfg.get("scaling", self.default_scaling)),
                                     params)
                y_fit, state = self.targets(split)
                if warm:  # once per job (per kind of data in a job of several data sets), before the first timed cell
                    key = (split.info.get("task"), "sparse" if kernels.blas.issparse(split.X_train) else "dense")
                    if warmed is None or key not in warmed:
                        self._warm_up(log, study, cfg, dataset, seed, split, params, job_methods, extra)
                    elif log:
                        log.info("warm-up: none for %s, this process warmed up on %s and %s data already",
                                 dataset, *key)
                    if warmed is not None:
                        warmed.add(key)
                    warm = False
                memo = {}
                for klabel, kspec in cfg["kernels"].items():
                    kern = kernels.from_spec(kspec, split.X_train, where=f"kernels.{klabel}")
                    for method in job_methods.values():
                        for coords in self.coord_grid(params, method, split.info):
                            trial = Trial(study, dataset, seed, split, y_fit, state, klabel, kern, method,
                                          {**extra, **coords}, params, memo, log)
                            rows += self._evaluate(trial, overrides)
        return rows

    def _evaluate(self, trial, overrides, isolated=None):
        method = trial.method
        trial.rng = seeding.rng(trial.seed, trial.study, trial.dataset, *self.rng_names(trial.label, trial.coords))
        X, y = self.fit_data(trial)
        extra = {}
        if self.isolated if isolated is None else isolated:  # the warm-up: in this process
            pred, recorded, extra = self._isolated(trial, X, y)
            if pred is None:  # not measured: the row says why
                return [self._row(trial, {"params": recorded, "metrics": dict.fromkeys(self.metrics, float("nan"))},
                                  overrides)]
        else:
            key = method.fit_key(trial)
            if key is None:
                trial.estimator = method.estimator(trial)
                t0 = time.perf_counter()
                trial.estimator.fit(X, y)
                trial.fit_time = time.perf_counter() - t0
            else:
                trial.estimator, trial.fit_time = trial.fitted((trial.kernel_label, trial.label, key),
                                                               lambda: method.estimator(trial), X, y)
            pred = None
            if self.predicts:
                t0 = time.perf_counter()
                pred = trial.estimator.predict(self.test_data(trial), **self.predict_options(trial))
                trial.predict_time = time.perf_counter() - t0
            recorded = method.record(trial.estimator, trial)
        metrics = self.score(pred, trial)
        for name, value in (("fit_time", trial.fit_time), ("predict_time", trial.predict_time), *extra.items()):
            if name in self.metrics and name not in metrics:
                metrics[name] = value
        return [self._row(trial, {"params": {**recorded, **self.record(trial)}, "metrics": metrics}, overrides)]

    def _isolated(self, trial, X, y):
        """Fit and predict in a forked child (:func:`nystrom_bench.profiling.isolated`): ``(prediction,
        recorded params, {"peak_mem_mb"})``, or ``(None, params that say why, {})`` for a cell that
        failed or ran past ``params.cell_timeout``."""
        method = trial.method

        def cell():
            est = method.estimator(trial)
            t0 = time.perf_counter()
            est.fit(X, y)
            t1 = time.perf_counter()
            pred = est.predict(self.test_data(trial), **self.predict_options(trial))
            return {"fit_time": t1 - t0, "predict_time": time.perf_counter() - t1, "pred": pred,
                    "params": method.record(est, trial)}

        try:
            out = profiling.isolated(cell, timeout=trial.params.get("cell_timeout"))
        except profiling.MeasureError as exc:
            if trial.log:
                trial.log.warning("%s seed=%s method=%s %s not measured: %s", trial.dataset, trial.seed, trial.label,
                                  " ".join(f"{k}={v}" for k, v in trial.coords.items()), exc)
            return None, {**method.record(method.estimator(trial), trial), "failed": str(exc)}, {}
        trial.fit_time, trial.predict_time = out["fit_time"], out["predict_time"]
        peak = out["peak_bytes"]
        return (out["pred"], {**out["params"], "peak_source": out["peak_source"]},
                {"peak_mem_mb": float("nan") if peak is None else peak / 2**20})

    def _row(self, trial, res, split_overrides=None):
        split = trial.split
        unknown = set(trial.coords) - set(self.coords)
        if unknown:
            raise ValueError(f"study kind {self.name!r} produced coords {sorted(unknown)} it does not declare")
        row = {
            "dataset": trial.dataset, "method": trial.label, "kernel": trial.kernel_label, "seed": trial.seed,
            "coords": {c: trial.coords[c] for c in self.coords if c in trial.coords},
            "params": {**res.get("params", {}), "n_train": len(split.y_train), "n_test": len(split.y_test),
                       "n_features": split.X_train.shape[1],
                       **({"split": dict(split_overrides)} if split_overrides else {})},
            "metrics": res["metrics"],
        }
        if trial.log:
            shown = ", ".join(f"{k}={v:.5g}" for k, v in res["metrics"].items() if isinstance(v, (int, float)))
            where = " ".join(f"{k}={v}" for k, v in row["coords"].items())
            trial.log.info("%s seed=%s kernel=%s method=%s %s: %s", trial.dataset, trial.seed, trial.kernel_label,
                           trial.label, where, shown)
        return row
