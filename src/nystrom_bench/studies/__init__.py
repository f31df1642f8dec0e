"""Studies: one module per study kind on a shared base that owns the experiment loop.

A study kind is a :class:`Study` subclass decorated with ``@register``.  The base
class runs the loop of one workflow job -- seeds -> splits -> kernels -> methods ->
coords -- with common random numbers, fit/predict timing and row building.  A kind
supplies only what is its own:

- what it is: ``name``, ``title``, ``description``, ``tasks``, ``metrics``,
  ``primary_metric``, ``reference_method``;
- its grid axes: ``coords`` and :meth:`Study.coord_grid` (e.g. ``m`` landmarks), and
  ``block_cols``, the columns a paired test pairs on (``(dataset, kernel, seed)``; a
  multiple-kernel study pairs on ``(dataset, seed)``);
- its config: ``param_defaults`` (the keys ``params:`` may hold), ``method_keys``,
  ``kernel_keys`` (which kernel-spec keys it honours), :meth:`Study.check_params`,
  :meth:`Study.check_method`, :meth:`Study.skip`, :meth:`Study.landmark_counts`,
  :meth:`Study.check_data` (sizes against each data set's training part);
- the learning problem: :meth:`Study.make_estimator`, :meth:`Study.targets`,
  :meth:`Study.score` -- or a whole :meth:`Study.evaluate` where one trial yields
  several numbers from one fit path (GNKR);
- optional report hooks: :meth:`Study.report_tables` (a paper's layout),
  :meth:`Study.tested_rows` (the rows the generic tests use),
  :meth:`Study.paper_curve` (the paper's numbers drawn beside ours),
  :meth:`Study.figures` (figures of its own), ``summary_coords`` (the coords the
  generic tables and per-scope tests break down by) and ``figure_coords``.

A config block may set ``split:`` -- overrides of the data sets' registered split
protocol (:func:`nystrom_bench.data.split_spec`), e.g. ``{test_fraction: 0.5}``; the
job then draws its splits itself and every row records them in ``params.split``, so
``data.load(dataset, seed=seed, split=params.split)`` returns the row's training part.

Adding a study = one module here + a config block + its test.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import data, kernels, seeding

__all__ = ["Study", "Trial", "register", "get", "available", "RESOURCE_KEYS", "check_sampler", "method_options"]

_REGISTRY = {}

#: keys of a method block that set job resources (with ``split_jobs: method``), not estimator options
RESOURCE_KEYS = ("threads", "mem_mb", "runtime")


def register(cls):
    """Class decorator: add a :class:`Study` subclass under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _discover():
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


def available():
    """Names of all study kinds."""
    _discover()
    return sorted(_REGISTRY)


def get(name):
    """An instance of the study kind ``name``."""
    _discover()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown study kind {name!r}; choose one of {', '.join(sorted(_REGISTRY))}") from None


def check_sampler(name):
    """ValueError naming the choices unless ``name`` is a registered landmark sampler."""
    from .. import sampling

    if name not in sampling.available():
        raise ValueError(f"unknown sampler {name!r}; choose one of {', '.join(sampling.available())}")


def method_options(method_cfg):
    """A method block without its resource keys: what the estimator gets."""
    return {k: v for k, v in (method_cfg or {}).items() if k not in RESOURCE_KEYS}


@dataclass
class Trial:
    """Everything one evaluation needs: one (seed, kernel, method, coords) of one data set."""

    study: str
    dataset: str
    seed: int
    split: Any  #: :class:`nystrom_bench.data.Split`, scaled (and prepared by the study)
    y_fit: Any  #: training targets as the learner sees them (:meth:`Study.targets`)
    state: Any  #: what :meth:`Study.score` needs besides the predictions
    kernel_label: str
    kernel: kernels.Kernel  #: resolved on the training part (data-driven widths)
    method: str
    method_cfg: dict
    coords: dict
    params: dict  #: the study's ``params:`` with defaults filled in
    rng: np.random.Generator  #: common random numbers: same stream for every method (see rng_names)
    cache: dict = field(default_factory=dict)  #: backs :meth:`shared` (one dict per (data set, seed)); studies use shared(), not this
    log: Any = None

    def shared(self, key, make):
        """``make()`` once per (data set, seed) and ``key``: work several methods reuse.

        ``make`` must depend only on what ``key`` and the (data set, seed) name -- never on this
        trial's method or its ``rng`` -- so that the methods' order cannot change a row (draw
        randomness from :meth:`stream`).
        """
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def stream(self, *names):
        """A fresh random stream of this (study, data set, seed) and ``names``, the same for every
        method that asks (``names=()``: the stream a trial's ``rng`` starts as by default)."""
        return seeding.rng(self.seed, self.study, self.dataset, *names)


class Study:
    """Base class of a study kind (see module docstring)."""

    name = "study"
    title = "Study"
    description = ""
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
    #: ``params:`` keys with their defaults (None: any key, no defaults)
    param_defaults = None
    #: keys a method block may hold (None: anything the estimator validates); resource keys always
    method_keys = None
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
    default_scaling = "standardize"

    # -- config checks (run before any job) ---------------------------------------------------
    @property
    def known_params(self):
        return None if self.param_defaults is None else tuple(self.param_defaults)

    def resolve_params(self, params):
        """The study's ``params:`` with defaults filled in."""
        return {**(self.param_defaults or {}), **(params or {})}

    def skip(self, dataset_info, method_name, method_cfg):
        """Why this dataset x method pairing is invalid (a string), or None if it is fine."""
        if dataset_info["task"] not in self.tasks:
            return f"study kind {self.name!r} needs a {'/'.join(self.tasks)} data set, " \
                   f"{dataset_info['name']!r} is {dataset_info['task']}"
        return None

    def check_params(self, params):
        """Raise ValueError naming the problem if the study's ``params:`` block is invalid."""
        if self.known_params is not None:
            unknown = sorted(set(params) - set(self.known_params))
            if unknown:
                raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))} for study kind "
                                 f"{self.name!r}; allowed: {', '.join(self.known_params)}")

    def check_kernel(self, label, spec):
        """A normalised kernel spec, or ValueError: unknown kernel, bad value, or a key not honoured."""
        where = f"kernels.{label}"
        spec = kernels.check_spec(spec, where=where)
        if self.kernel_names is not None and spec["kernel"] not in self.kernel_names:
            raise ValueError(f"{where}: study kind {self.name!r} supports the kernels "
                             f"{', '.join(self.kernel_names)}, not {spec['kernel']!r}")
        if self.kernel_keys is not None:
            ignored = sorted(set(spec) - {"kernel", *self.kernel_keys})
            if ignored:
                allowed = ", ".join(self.kernel_keys) or "none besides 'kernel'"
                raise ValueError(f"{where}: key(s) {', '.join(map(repr, ignored))} are not used by study kind "
                                 f"{self.name!r} (it honours: {allowed}){self.kernel_keys_note}; remove them")
        return spec

    def check_method_keys(self, method_cfg):
        """The method block's estimator options; ValueError for a key outside ``method_keys``."""
        opts = method_options(method_cfg)
        if self.method_keys is not None:
            unknown = sorted(set(opts) - set(self.method_keys))
            if unknown:
                raise ValueError(f"unknown key(s) {unknown}; allowed: {sorted({*self.method_keys, *RESOURCE_KEYS})}")
        return opts

    def check_method(self, method_name, method_cfg, study_cfg):
        """Raise ValueError naming the problem if a method block is invalid.

        Default: keys against ``method_keys``, then the estimator's own parameter
        validation on a placeholder kernel (widths set to 1).
        """
        opts = self.check_method_keys(method_cfg)
        params = self.resolve_params(study_cfg.get("params"))
        for kspec in study_cfg["kernels"].values():
            kern = kernels.from_spec(_placeholder_widths(kspec))
            for coords in self.coord_grid(params, method_name, opts) or [{}]:
                est = self.make_estimator(kern, opts, coords, params, None)
                if est is not None and hasattr(est, "_validate_params"):
                    est._validate_params()

    def check_data(self, params, dataset, n_train):
        """Why ``params`` cannot run on ``dataset`` with ``n_train`` training points (None if unknown), or None."""
        return None

    def landmark_counts(self, params, method_name, method_cfg):
        """The landmark counts this method uses (checked against each data set's training size)."""
        return []

    # -- the experiment loop ---------------------------------------------------------------------
    def coord_grid(self, params, method_name, method_cfg):
        """The coord values one method is evaluated at: a list of dicts (default: ``[{}]``)."""
        return [{}]

    def rng_names(self, method_name, coords):
        """Names that make a trial's random stream; ``()`` (default): every method and coord of a
        (data set, seed) gets the same stream -- common random numbers for the paired tests."""
        return ()

    def prepare(self, split, params):
        """Change a scaled split before the loop uses it (e.g. standardise targets); default: as is."""
        return split

    def targets(self, split):
        """Training targets for the learner and the state :meth:`score` needs."""
        return split.y_train, None

    def make_estimator(self, kernel, method_cfg, coords, params, rng):  # pragma: no cover - abstract
        """The estimator of one trial (scikit-learn API)."""
        raise NotImplementedError(f"study kind {self.name!r} must define make_estimator or evaluate")

    def score(self, raw_prediction, state, split):  # pragma: no cover - abstract
        """Metrics from the learner's predictions on the test part."""
        raise NotImplementedError

    def estimator_params(self, est):
        """What a result row records of a fitted estimator (default: ``get_params`` minus arrays/RNGs and the
        deprecated names left at their default ``"deprecated"``)."""
        return {k: v for k, v in est.get_params().items()
                if k not in ("landmarks", "random_state") and not (isinstance(v, str) and v == "deprecated")}

    def evaluate(self, trial):
        """One trial -> a list of ``{"params", "metrics"}`` (optionally ``"coords"`` to add to the trial's).

        Default: :meth:`make_estimator`, fit on the training part and predict the test
        part, each timed here, then :meth:`score`.
        """
        est = self.make_estimator(trial.kernel, trial.method_cfg, trial.coords, trial.params, trial.rng)
        sp = trial.split
        t0 = time.perf_counter()
        est.fit(sp.X_train, trial.y_fit)
        t1 = time.perf_counter()
        raw = est.predict(sp.X_test)
        t2 = time.perf_counter()
        metrics = self.score(raw, trial.state, sp)
        return [{"params": self.estimator_params(est), "metrics": {**metrics, "fit_time": t1 - t0,
                                                                   "predict_time": t2 - t1}}]

    def run(self, study, cfg, dataset, X, y, splits, log=None, source_n_train=None):
        """Run every seed x kernel x method x coord of ``cfg`` on one data set; return result rows.

        ``cfg`` is a job's config slice (:func:`nystrom_bench.jobs.job_config`) or a whole block; ``splits``
        maps each seed to the indices of :func:`nystrom_bench.data.make_split`.  With
        ``cfg["split"]`` (overrides of the registered protocol) the splits are drawn here
        instead (``source_n_train``: the source's own training rows, for ``source`` splits).
        """
        params = self.resolve_params(cfg.get("params"))
        scaling = cfg.get("scaling", self.default_scaling)
        overrides = cfg.get("split")
        rows = []
        for seed in cfg["seeds"]:
            seed = int(seed)
            idx = (data.make_split(dataset, seed, len(X), y, source_n_train=source_n_train, overrides=overrides)
                   if overrides else splits[seed])
            split = data.apply_split(dataset, seed, X, y, idx, scaling)
            split = self.prepare(split, params)
            y_fit, state = self.targets(split)
            cache = {}
            for klabel, kspec in cfg["kernels"].items():
                kern = kernels.from_spec(kspec, split.X_train, where=f"kernels.{klabel}")
                for mlabel, mcfg in cfg["methods"].items():
                    opts = method_options(mcfg)
                    for coords in self.coord_grid(params, mlabel, opts):
                        trial = Trial(study, dataset, seed, split, y_fit, state, klabel, kern, mlabel, opts,
                                      dict(coords), params, seeding.rng(seed, study, dataset,
                                                                        *self.rng_names(mlabel, coords)),
                                      cache, log)
                        for res in self.evaluate(trial):
                            rows.append(self._row(trial, res, split, overrides))
        return rows

    def _row(self, trial, res, split, split_overrides=None):
        coords = {**trial.coords, **res.get("coords", {})}
        unknown = set(coords) - set(self.coords)
        if unknown:
            raise ValueError(f"study kind {self.name!r} produced coords {sorted(unknown)} it does not declare")
        row = {
            "dataset": trial.dataset, "method": trial.method, "kernel": trial.kernel_label, "seed": trial.seed,
            "coords": {c: coords[c] for c in self.coords if c in coords},
            "params": {**res.get("params", {}), "n_train": len(split.y_train), "n_test": len(split.y_test),
                       "n_features": split.X_train.shape[1],
                       **({"split": dict(split_overrides)} if split_overrides else {})},
            "metrics": res["metrics"],
        }
        if trial.log:
            shown = ", ".join(f"{k}={v:.5g}" for k, v in res["metrics"].items() if isinstance(v, (int, float)))
            where = " ".join(f"{k}={v}" for k, v in row["coords"].items())
            trial.log.info("%s seed=%s kernel=%s method=%s %s: %s", trial.dataset, trial.seed, trial.kernel_label,
                           trial.method, where, shown)
        return row

    # -- report hooks ----------------------------------------------------------------------------
    def tested_rows(self, df):
        """The result rows the generic paired and Friedman tests use (default: all of them); a study
        drops rows that have no counterpart in any block (e.g. an exact machine outside the grid)."""
        return df

    def report_tables(self, df, study_cfg):
        """Extra ``(title, DataFrame, note)`` tables for the study's PDF (e.g. a paper's layout)."""
        return []

    def figures(self, df, info, out_dir):
        """Figures of the study's own into ``out_dir``: ``[{"file", "caption"}]`` (after the generic ones)."""
        return []

    def paper_curve(self, dataset, method, kernel, metric, coord):
        """The paper's ``[(coord value, metric value), ...]`` for this line of a metric-vs-coord
        figure (drawn dashed beside ours), or None."""
        return None


def _placeholder_widths(spec):
    """A kernel spec with data-driven widths replaced by 1 (for checks without data)."""
    out = {k: v for k, v in spec.items() if k != "scale"}
    for key in ("gamma", "sigma", "b"):
        if isinstance(out.get(key), str):
            out[key] = 1.0
    return out
