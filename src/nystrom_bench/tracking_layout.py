"""How result rows become MLflow configuration runs and come back: pure functions, no MLflow import.

:mod:`nystrom_bench.tracking` writes what :func:`plan` returns and reads runs back with :func:`records`.

Layout of a configuration run (``nystrom_bench.level = config``), one per (study, data set, method,
kernel, seed) (without the seed where the study kind folds its seeds: "Folded seeds" below), named
``boston · adapt_ms · gaussian · seed 0`` (:func:`run_name`), identity tag ``run_key``
(``study/dataset/method/kernel/seed<seed>``, :func:`run_key`):

- **params**: the identity plus the method's resolved configuration, flat, with the library's names
  (nested settings dotted: ``split.test_fraction``); values JSON (strings as they are);
- the **curve coord** (tag ``nystrom_bench.curve``) is one numeric coord of the study; each metric over
  it is a metric history, step = the index of the coord's value in the job's sorted grid, and the
  coord's values are a history of their own under its name (e.g. ``log2_gamma``), so the chart view can
  draw ``relative_gap`` against step or, with "X axis: metric", against ``log2_gamma``;
- the study's **other coords** go into the metric key as ``name:value/`` prefixes, e.g.
  ``criterion:c_ree/relative_gap`` (the chart view groups keys into sections by that prefix);
- **headline metrics**: a metric without coords is a single value (``test_mse``, ``fit_time``); over a
  curve of two or more points, ``mean/<key>`` is the mean over the curve (the runs table shows it; a
  history's own column shows its last point, the largest coord);
- params that change along the curve (e.g. ``gamma`` with ``log2_gamma``, GNKR's selected
  ``best_lambda`` per m) are histories ``<prefix>param.<name>`` when numeric; other such params (lists
  per point) are only in the job's result table (tag ``nystrom_bench.dropped_params``);
- results outside their method's assumptions (a non-empty ``assumption`` column) log their metrics
  under ``<key>_outside_assumptions``, a chart of its own, so that MCM's gaps of 1e4 off its grid do not
  flatten every other curve; the run is tagged ``assumption`` (the reason, or how many of its results
  and why) and ``nystrom_bench.assumptions`` keeps each point's reason for the way back;
- non-finite metrics: NaN is not logged (the table's empty cell); +-inf is not logged either and is
  kept in the tag ``nystrom_bench.nonfinite`` so that :func:`records` restores it.

The curve coord is the first of the study kind's ``curve_coords`` (``Study.curve_coords``: ``curve``
of :func:`plan`) that every result of the run has (numeric), else the numeric coord with most values; a run without one logs single values.  Per study
kind (default config):

- ``krr``, ``krc`` (no coords): a run = one fit; single-valued metrics.
- ``gnkr`` (coord ``m``; sigma, lambda are selected inside a result): test RMSE etc. over m, the
  selected sigma/lambda per m as ``param.best_sigma`` ... histories.
- ``consistency``: the gap over ``log2_gamma`` (Ding et al.'s Fig. 1), one history per criterion
  (``criterion:c_ree/relative_gap``): a criterion is a second curve of the same computation, and runs
  per criterion would double the runs.  With ``train_sizes`` the curve is over the training size ``l``
  (the order of consistency in l), each width a prefix (``criterion:c_ree/log2_gamma:-3/...``).
- ``selection`` (coord criterion, categorical): no curve; ``criterion:c_ree/test_mse`` etc.
- ``integration``: curves over the landmark ``ratio``, one per integration step
  (``integration:gsa/test_accuracy``); the exact machine (no ratio) logs single values.
- ``gen_nystrom``: curves over the number of labels.
- ``samplers`` (``tracking_fold = ("seed",)``, see "Folded seeds"): one run per data set x method x
  kernel, curves over m, one key section per seed (``seed:0/trace_error``).
- ``scale`` (coords n, m): time, memory and error over ``n``, one curve per landmark count
  (``m:1500/fit_time``), so one chart holds every solver at one m; with m in the run identity a
  solver's curves would be split over two runs.

Folded seeds: a study kind whose ``tracking_fold`` is ``("seed",)`` logs one run per (data set, method,
kernel), named ``boston · uniform · median`` with ``run_key`` ``study/dataset/method/kernel``, because
most of a run's cost on a SQLite store (about 100 ms) is per run, not per entry
(:mod:`nystrom_bench.tracking`, "Cost": the default samplers study in 0.35-0.38x the time).  The seed is then a key prefix
like the other non-curve coords, first: ``seed:0/trace_error`` (a chart section per seed); the param
``seed`` lists the seeds (``[0, 1, 2, 3, 4]``); a param with one value per seed that differs between
seeds (a data property of the seed's training part) is a param ``seed:0/prop_decay``; the headline
``mean/<key>`` is the mean over the seeds and the curve (the other coords' prefixes kept:
``mean/criterion:c_ree/gap``), one column in the runs table per metric.  What the user loses: a seed is
no run, so the UI's "Group by" cannot aggregate over seeds (its min/max/spread; ``mean/`` is the mean
only) and a seed cannot be filtered or selected as a row; the per-seed values are in the ``seed:<k>/``
sections, every row in the job's result table.
:func:`records` gives the rows back with their seeds (tag ``nystrom_bench.folded``).
"""

from __future__ import annotations

import json
import logging
import math
import numbers
import re

from .results import ASSUMPTION, ID_COLS, assumption_label, format_coord

__all__ = ["runs_link", "FOLDABLE", "LAYOUT", "LEVEL_TAG", "OUTSIDE_SUFFIX", "ASSUMPTION_TAG", "VIEW_ID", "VIEW_TAG", "VIEW_NAME",
           "run_key", "run_name", "plan", "describe", "view", "view_envelope", "batches", "rows_from_frame", "records"]

LEVEL_TAG = "nystrom_bench.level"
#: the layout written here; a job logged in another layout is logged again
LAYOUT = "3"
CURVE_TAG, COORDS_TAG, STEPS_TAG = "nystrom_bench.curve", "nystrom_bench.coords", "nystrom_bench.steps"
VARYING_TAG, DROPPED_TAG, NONFINITE_TAG = ("nystrom_bench.varying_params", "nystrom_bench.dropped_params",
                                           "nystrom_bench.nonfinite")
LAYOUT_TAG = "nystrom_bench.layout"
#: the identity columns a run folds into its metric keys (JSON list; absent: none)
FOLD_TAG = "nystrom_bench.folded"
#: identity columns a study kind may fold (``Study.tracking_fold``): the seeds
FOLDABLE = ("seed",)
PARAM_LEAF, MEAN = "param.", "mean/"
#: the experiment's saved view (MLflow 3.17's "Saved views" of the runs page, an experiment tag
#: ``mlflow.sharedViewState.<id>`` holding ``{name, createdAt, updatedAt, state}``; the link
#: ``...?viewStateShareKey=<id>`` opens it): :func:`view`
VIEW_ID = "nystrom-bench"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_ID}"


def runs_link(base_url, experiment_id, view=None):
    """The link that opens an experiment's runs table: the Runs tab with ``workflowType=machine_learning``
    (without it MLflow 3.17 opens its GenAI overview) and, with ``view``, that saved view
    (``viewStateShareKey``, e.g. :data:`VIEW_ID`: the study's headline columns, charts over its coord)."""
    return (f"{base_url.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
            + (f"&viewStateShareKey={view}" if view else ""))
VIEW_NAME = "nystrom-bench: headline metrics"
#: at most this many metric and param columns in the view
VIEW_METRICS, VIEW_PARAMS = 6, 4
#: the metric-key suffix of results outside their method's assumptions; the run's tags
OUTSIDE_SUFFIX = "_outside_assumptions"
ASSUMPTION_TAG, ASSUMPTIONS_TAG = ASSUMPTION, "nystrom_bench.assumptions"
MAX_PARAM = 6000
MAX_NOTE = 8000  # MLflow's longest run tag value (a run's description is one)
MAX_PARAMS, MAX_ENTITIES = 100, 1000  # MLflow's log_batch limits
_SAFE = re.compile(r"^[\w.\- ]+$")
_NAME = re.compile(r"^[A-Za-z_][\w\-]*$")
log = logging.getLogger("nystrom_bench.tracking")


def _coord_suffix(coords):
    return "".join(f"/{name}={format_coord(v)}" for name, v in (coords or {}).items())


def run_key(study, dataset, method, kernel, seed=None, coords=None):
    """The deterministic identity of a configuration run: ``study/dataset/method/kernel/seed<seed>``;
    ``study/dataset/method/kernel`` for a run that folds its seeds (``seed=None``).

    With ``coords``, ``/name=value`` follows for each (values through :func:`format_coord`): the
    identity of one result row.
    """
    return f"{study}/{dataset}/{method}/{kernel}" + ("" if seed is None else f"/seed{seed}") + _coord_suffix(coords)


def run_name(dataset, method, kernel, seed=None):
    """The name a configuration run shows in the UI: ``boston · adapt_ms · gaussian · seed 0``
    (``boston · adapt_ms · gaussian`` for a run that folds its seeds, ``seed=None``)."""
    return f"{dataset} · {method} · {kernel}" + ("" if seed is None else f" · seed {seed}")


def _check_fold(fold):
    fold = tuple(fold or ())
    bad = [c for c in fold if c not in FOLDABLE]
    if bad:
        raise ValueError(f"tracking_fold {bad}: a configuration run can fold only {list(FOLDABLE)} into its metric "
                         "keys; remove the others from the study kind's tracking_fold")
    return tuple(c for c in FOLDABLE if c in fold)


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def _flatten(params, prefix=""):
    """Nested settings as dotted names (``split.test_fraction``); a dict whose keys are no plain names
    (e.g. ``{"0.5": rmse}``) stays one value."""
    out = {}
    for k, v in params.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v and all(isinstance(key, str) and _NAME.match(key) for key in v):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def _unflatten(params):
    out = {}
    for k, v in params.items():
        node, *path = k.split(".")
        target = out
        for part in [node, *path][:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):  # a dotted name that was no nesting
                target = None
                break
        if target is None:
            out[k] = v
        else:
            target[[node, *path][-1]] = v
    return out


#: the first character (after JSON's white space) of any text ``json.loads`` reads: others are no JSON
_JSON_START = frozenset('{["-0123456789tfnNI')
_JSON_SPACE = " \t\n\r"


def _param_text(v):
    """A param value as MLflow stores it: strings as they are (JSON-quoted if they would read back as
    something else), everything else as JSON.  The plain types' JSON is written here as ``json.dumps``
    writes it (``float.__repr__``, ``NaN``/``Infinity``, ``int.__repr__``, ``true``, ``null``), and a string
    whose first character starts no JSON value is not parsed: the same text, without the encoder's and
    the parser's cost (the samplers study's 128,000 values, issue 39)."""
    t = type(v)
    if t is float:
        text = float.__repr__(v) if math.isfinite(v) else ("NaN" if v != v else ("Infinity" if v > 0 else "-Infinity"))
        return text[:MAX_PARAM]
    if t is int:
        return int.__repr__(v)[:MAX_PARAM]
    if t is bool:
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, str):
        head = v.lstrip(_JSON_SPACE)[:1]
        if head not in _JSON_START:
            return v[:MAX_PARAM]
        try:
            json.loads(v)
        except ValueError:
            return v[:MAX_PARAM]
        return json.dumps(v)[:MAX_PARAM]
    return json.dumps(v, default=str)[:MAX_PARAM]


def _param_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def _coord_value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _key_part(name, value):
    text = format_coord(value)
    if not _SAFE.match(str(name)) or not _SAFE.match(text):
        raise ValueError(f"coord {name}={text!r} cannot be part of an MLflow metric key (letters, digits, "
                         "'_', '-', '.', ' ' only)")
    return f"{name}:{text}"


def _choose_curve(rows, coords, curve=()):
    """The run's curve coord: see the module docstring."""
    present = [c for c in coords
               if all(_is_number((r.get("coords") or {}).get(c)) and not _missing(r["coords"][c]) for r in rows)]
    for c in curve:
        if c in present:
            return c
    if not present:
        return None
    return max(present, key=lambda c: (len({float(r["coords"][c]) for r in rows}), -coords.index(c)))


def _assumption_tag(reasons, n_rows):
    """The run's ``assumption`` tag: its one reason where every result has it, else how many results are
    outside their assumptions and why (the reasons' labels)."""
    distinct = list(dict.fromkeys(reasons))
    if len(distinct) == 1 and len(reasons) == n_rows:
        return distinct[0][:MAX_PARAM]
    labels = dict.fromkeys(lab for r in distinct for lab in assumption_label(r).split("; "))
    return f"{len(reasons)} of {n_rows} results: {'; '.join(labels)}"[:MAX_PARAM]


def plan(study, results, coords, fold=(), curve=()):
    """Group result rows into configuration runs.

    Returns ``[{"key", "name", "dataset", "params", "metrics", "tags", "curve"}]`` in the order the
    identities first appear: ``params`` and ``tags`` as ``{name: text}``, ``metrics`` as
    ``[(key, value, step)]`` (finite values only).  ``fold`` (the study kind's ``tracking_fold``, a
    subset of :data:`FOLDABLE`) names identity columns that are no part of a run's identity but key
    prefixes (``seed:0/``; module docstring, "Folded seeds").  ``curve``: the study kind's ``curve_coords``, the
    coords a run's curve prefers (module docstring).  A ValueError names a coord that shadows
    the identity or a metric, or cannot be part of a metric key, or a column that cannot be folded.
    """
    fold = _check_fold(fold)
    groups = {}
    for res in results:
        rc = res.get("coords") or {}
        clash = set(rc) & set(ID_COLS)
        if clash:
            raise ValueError(f"coords may not be named {sorted(clash)}: {res}")
        ident = (res["dataset"], res["method"], res["kernel"], None if "seed" in fold else res["seed"])
        groups.setdefault(ident, []).append(res)
    coords = list(coords or [])
    for res in results:
        coords += [c for c in (res.get("coords") or {}) if c not in coords]
    clash = {k for res in results for k in res.get("metrics", {})} & set(coords)
    if clash:
        raise ValueError(f"coords {sorted(clash)} are also metric names; rename one")
    # the job's grid of each coord: a step is a value's index in it (the same for every run of the job)
    grids = {}
    for c in coords:
        vals = {float(v) for res in results for v in [(res.get("coords") or {}).get(c)] if _is_number(v)
                and not _missing(v)}
        grids[c] = _grid_steps(vals)
    return [_plan_run(study, ident, rows, coords, grids, fold, curve) for ident, rows in groups.items()]


def _grid_steps(values):
    """``{value: step}`` of a coord's grid: the value itself where every value is an integer (``m``, ``n``,
    ``log2_gamma`` on an integer grid: the chart's "Step" axis is then the coord), else its index in the
    sorted grid (MLflow's steps are integers)."""
    values = sorted(values)
    if all(v.is_integer() and abs(v) < 2**62 for v in values):
        return {v: int(v) for v in values}
    return {v: i for i, v in enumerate(values)}


def _plan_run(study, ident, rows, coords, grids, fold=(), prefer=()):
    dataset, method, kernel, seed = ident
    curve = _choose_curve(rows, coords, prefer)
    flat = [_flatten(r.get("params", {})) for r in rows]
    # a folded column's prefix per row (``seed:0/``), before the study's coords in every key
    folds = ["".join(_key_part(c, r[c]) + "/" for c in fold) for r in rows]
    common, varying, per_fold = {}, {}, {}
    for name in dict.fromkeys(k for f in flat for k in f):
        texts = {_param_text(f[name]) if name in f else None for f in flat}
        if len(texts) == 1 and None not in texts:
            common[name] = texts.pop()
            continue
        by_fold = {}
        for f, fp in zip(flat, folds, strict=True):
            by_fold.setdefault(fp, set()).add(_param_text(f[name]) if name in f else None)
        if fold and all(len(t) == 1 and None not in t for t in by_fold.values()):  # one value per seed
            per_fold.update({fp + name: t.pop() for fp, t in by_fold.items()})
        else:
            varying[name] = [f.get(name) for f in flat]
    numeric = {n: ("int" if all(isinstance(v, numbers.Integral) for v in vs if v is not None) else "float")
               for n, vs in varying.items()
               if all(v is None or _is_number(v) for v in vs) and any(v is not None for v in vs)}
    dropped = sorted(set(varying) - set(numeric))
    params = {"study": study, "dataset": dataset, "method": method, "kernel": kernel, "seed": str(seed)}
    for c in fold:  # the folded values, in the order they appear: seed = [0, 1, 2]
        params[c] = json.dumps(list(dict.fromkeys(r[c] for r in rows)), default=str)
    for name, text in common.items():
        params[PARAM_LEAF + name if name in params else name] = text
    params.update(per_fold)

    metrics, nonfinite, seen, curve_points, outside, by_key = [], {}, set(), {}, {}, {}
    for res, f, fp in zip(rows, flat, folds, strict=True):
        rc = res.get("coords") or {}
        step = grids[curve][float(rc[curve])] if curve else 0
        if curve:
            curve_points[step] = float(rc[curve])
        rest = "".join(_key_part(c, rc[c]) + "/" for c in coords if c != curve and c in rc and not _missing(rc[c]))
        prefix = fp + rest
        if (prefix, step) in seen:
            log.warning("%s: two results at %s step %d (the same identity and coords); both logged",
                        run_key(study, *ident), prefix or "(no prefix)", step)
        seen.add((prefix, step))
        reason = str(res.get(ASSUMPTION) or "").strip()
        suffix = OUTSIDE_SUFFIX if reason else ""
        if reason:
            outside[f"{prefix}@{step}"] = reason
        values = {k + suffix: v for k, v in res.get("metrics", {}).items()}
        values.update({PARAM_LEAF + n: f[n] for n in numeric if f.get(n) is not None})
        for k, v in values.items():
            if v is None:
                continue
            v = float(v)
            if math.isfinite(v):
                metrics.append((prefix + k, v, step))
                if not k.startswith(PARAM_LEAF):  # the headline: the mean over the curve and the folded seeds
                    by_key.setdefault(rest + k, []).append(v)
            elif not math.isnan(v):
                nonfinite[f"{prefix}{k}@{step}"] = repr(v)
    if curve:
        metrics += [(curve, v, s) for s, v in sorted(curve_points.items())]
    if len(curve_points) >= 2 or len(set(folds)) >= 2:
        metrics += [(MEAN + k, sum(vs) / len(vs), 0) for k, vs in by_key.items()]
    tags = {LEVEL_TAG: "config", "run_key": run_key(study, *ident), COORDS_TAG: json.dumps(coords),
            CURVE_TAG: curve or "", STEPS_TAG: str(len(curve_points)), LAYOUT_TAG: LAYOUT}
    if fold:
        tags[FOLD_TAG] = json.dumps(list(fold))
    if numeric:
        tags[VARYING_TAG] = json.dumps(numeric)
    if dropped:
        tags[DROPPED_TAG] = json.dumps(dropped)
    if nonfinite:
        tags[NONFINITE_TAG] = json.dumps(nonfinite)
    if outside:
        text = json.dumps(outside)
        if len(text) > MAX_NOTE:  # MLflow's longest tag value: the reasons' labels, without their numbers
            text = json.dumps({k: assumption_label(v) for k, v in outside.items()})
        tags[ASSUMPTIONS_TAG] = text
        tags[ASSUMPTION_TAG] = _assumption_tag(list(outside.values()), len(rows))
    return {"key": tags["run_key"], "name": run_name(*ident), "dataset": dataset, "params": params,
            "metrics": metrics, "tags": tags, "curve": curve}


_JOB_RUNS = ("Each workflow job also logs a run of its own, '<data set> (job)' (no parent runs: the tag job_key "
             "ties a job's runs together), whose artifact is the job's result table (every result row); "
             "the run '<study> · report' holds the study's PDF, figures and claims.")


def describe(plans_or_curves, metrics=None):
    """How to read a study's runs (appended to the experiment description): the grain, the curve and
    the key prefixes, and ``metrics`` (``{name: (label, lower_is_better)}``) explained."""
    curves = sorted({p["curve"] for p in plans_or_curves if p.get("curve")})
    keyed = sorted({k.split(":", 1)[0] for p in plans_or_curves for k, _, _ in p["metrics"] if ":" in k
                    and not k.startswith(MEAN)})
    folded = any(FOLD_TAG in p.get("tags", {}) for p in plans_or_curves)
    if folded:
        lines = ["How to read the runs: one run per data set x method x kernel, named 'data set · method · kernel', "
                 "its seeds folded into the metric keys ('seed:0/<metric>', a chart section per seed; the UI's "
                 "Group by cannot pool seeds). " + _JOB_RUNS + " mean/<metric> is the mean over the seeds"
                 + (" and the curve." if curves else ".")]
    else:
        lines = ["How to read the runs: one run per data set x method x kernel x seed, named "
                 "'data set · method · kernel · seed'. " + _JOB_RUNS]
    if curves:
        lines.append(f"Curves over {', '.join(curves)} are metric histories: open a run's Model metrics, or "
                     f"the Chart view (its X axis: the metric {' / '.join(curves)} in the view "
                     f"'{VIEW_NAME}'); the step is the {' / '.join(curves)} value itself where the grid holds "
                     "integers only, else the value's index in the sorted grid."
                     + ("" if folded else " mean/<metric> is the mean over the curve."))
    if keyed:
        lines.append(f"Metric keys start with the other coords ({', '.join(keyed)}), e.g. 'criterion:c_ree/...'; "
                     "the Chart view groups them into sections by that prefix.")
    if any(ASSUMPTION_TAG in p.get("tags", {}) for p in plans_or_curves):
        lines.append(f"Results outside their method's assumptions (tag '{ASSUMPTION_TAG}' says why) log their metrics "
                     f"as '<metric>{OUTSIDE_SUFFIX}', a chart of their own: they do not flatten the other curves.")
    if metrics:
        lines.append("Metrics: " + "; ".join(f"{k} = {label} ({'lower' if low else 'higher'} is better)"
                                             for k, (label, low) in metrics.items()) + ".")
    return "\n\n".join(lines)


def _column(kind, key):
    """A runs-table column as MLflow's UI names it (``makeCanonicalSortKey``): ``metrics.`mean/gap```."""
    return f"{kind}.`{key}`"


def _headline_keys(plans, metrics):
    """The metric keys of the runs table's headline columns: for each of ``metrics`` (in order; default:
    every metric), the run's ``mean/`` keys of it, else its single-valued keys, the other coords'
    prefixes kept (``mean/criterion:c_ree/relative_gap``, ``criterion:c_ree/test_mse``)."""
    keys = list(dict.fromkeys(k for p in plans for k, _, _ in p["metrics"]))
    names = list(metrics or dict.fromkeys(k.rsplit("/", 1)[-1] for k in keys if not k.startswith(MEAN)
                                           and not k.rsplit("/", 1)[-1].startswith(PARAM_LEAF)))
    out = []
    for name in names:
        means = [k for k in keys if k.startswith(MEAN) and k.rsplit("/", 1)[-1] == name]
        single = [k for k in keys if k.rsplit("/", 1)[-1] == name and not k.startswith(MEAN)]
        out += means or single
    return out


def _setting_params(plans):
    """The params that tell a job's methods apart: those with two values (or one and none) among the runs of
    one data set, kernel and seed, and one value over the seeds of a method -- method settings, not data
    properties (``n_train``), outcomes selected per seed (a chosen lambda) or identity."""
    ident = {"study", "dataset", "method", "kernel", "seed"}
    across, per_method = {}, {}
    for p in plans:
        q = p["params"]
        across.setdefault((q.get("dataset"), q.get("kernel"), q.get("seed")), []).append(q)
        per_method.setdefault((q.get("dataset"), q.get("kernel"), q.get("method")), []).append(q)
    names = list(dict.fromkeys(k for p in plans for k in p["params"] if k not in ident and "/" not in k))
    return [n for n in names if any(len({g.get(n) for g in runs}) > 1 for runs in across.values())
            and all(len({g.get(n) for g in runs}) == 1 for runs in per_method.values())]


def view(plans, metrics=None):
    """The state of the study's saved view in MLflow's runs page (:data:`VIEW_TAG`): the headline metrics
    (:data:`VIEW_METRICS` ``mean/<metric>`` or single-valued columns, ``metrics``' order) and the params
    that tell the methods apart (:data:`VIEW_PARAMS`) as the table's columns, and the line charts' X axis the
    runs' curve coord (the metric logged under the coord's name) instead of the step.  Only keys of MLflow's
    own UI state (``ExperimentPageUIState``: ``selectedColumns``, ``globalLineChartConfig``,
    ``hideEmptyCharts``)."""
    columns = [_column("metrics", k) for k in _headline_keys(plans, metrics)[:VIEW_METRICS]]
    columns += [_column("params", k) for k in _setting_params(plans)[:VIEW_PARAMS]]
    curves = [p["curve"] for p in plans if p.get("curve")]
    curve = max(dict.fromkeys(curves), key=curves.count) if curves else ""
    return {"selectedColumns": columns, "hideEmptyCharts": True,
            "globalLineChartConfig": {"xAxisKey": "metric" if curve else "step", "lineSmoothness": 0,
                                      "selectedXAxisMetricKey": curve}}


def view_envelope(state, now_ms, created_ms=None):
    """The value of :data:`VIEW_TAG`: MLflow's saved-view envelope ``{name, createdAt, updatedAt, state}``
    with the state as JSON text (how MLflow 3.17's UI writes and reads a saved view)."""
    return json.dumps({"name": VIEW_NAME, "createdAt": int(created_ms or now_ms), "updatedAt": int(now_ms),
                       "state": json.dumps(state, sort_keys=True)})


def batches(params, metrics):
    """``[(params, metrics)]`` within MLflow's log_batch limits (100 params, 1,000 entries a call): one
    call for a run of at most that size."""
    params, metrics = list(params), list(metrics)
    out = []
    while params or metrics or not out:
        p, params = params[:MAX_PARAMS], params[MAX_PARAMS:]
        m, metrics = metrics[: MAX_ENTITIES - len(p)], metrics[MAX_ENTITIES - len(p):]
        out.append((p, m))
    return out


def rows_from_frame(df, coords=()):
    """Result rows (dicts, as :func:`nystrom_bench.tracking.log_job` takes them) from a tidy result table."""
    rows = []
    metric_cols = [c for c in df.columns if c not in (*ID_COLS, *coords, ASSUMPTION, "params")]
    for rec in df.to_dict("records"):
        rc = {c: rec[c] for c in coords if c in rec and not _missing(rec[c])}
        rc = {c: (int(v) if _is_number(v) and float(v).is_integer() and not isinstance(v, int) else v)
              for c, v in rc.items()}
        seed = rec["seed"]
        rows.append({"dataset": rec["dataset"], "method": rec["method"], "kernel": rec["kernel"],
                     "seed": int(seed) if _is_number(seed) else seed, "coords": rc,
                     "params": json.loads(rec["params"]) if isinstance(rec.get("params"), str) else {},
                     "metrics": {m: rec[m] for m in metric_cols if not _missing(rec[m])}})
        flag = rec.get(ASSUMPTION)
        if not _missing(flag) and str(flag).strip():
            rows[-1][ASSUMPTION] = str(flag).strip()
    return rows


def records(study, params, tags, history):
    """The result rows of one configuration run, as records of the tidy table (the inverse of
    :func:`plan`): ``params``/``tags`` the run's, ``history`` ``{metric key: [(value, step)]}`` (the
    ``mean/`` keys left out).  Also returns the run's coords (tag ``nystrom_bench.coords``)."""
    history = {k: list(v) for k, v in history.items()}
    for where, text in json.loads(tags.get(NONFINITE_TAG, "{}")).items():
        key, _, step = where.rpartition("@")
        history.setdefault(key, []).append((float(text), int(step)))
    curve = tags.get(CURVE_TAG) or None
    curve_at = {s: v for v, s in history.pop(curve, [])} if curve else {}
    varying = json.loads(tags.get(VARYING_TAG, "{}"))
    outside = json.loads(tags.get(ASSUMPTIONS_TAG, "{}"))
    fold = json.loads(tags.get(FOLD_TAG, "[]"))
    base = {"study": study, "dataset": params["dataset"], "method": params["method"], "kernel": params["kernel"],
            "seed": _coord_value(params["seed"])}
    base.update(dict.fromkeys(fold))  # from each key's prefix (seed:0/)
    common, per_fold = {}, {}
    for k, v in params.items():
        if k in base:
            continue
        parts = k.split("/", len(fold)) if fold else []
        if len(parts) == len(fold) + 1 and all(p.startswith(c + ":") for p, c in zip(parts, fold, strict=False)):
            per_fold.setdefault(tuple(parts[:-1]), {})[parts[-1]] = _param_value(v)  # seed:0/prop_decay
            continue
        leaf = k[len(PARAM_LEAF):] if k.startswith(PARAM_LEAF) else None
        common[leaf if leaf in base else k] = _param_value(v)
    rows = {}
    for key, points in history.items():
        *prefix, leaf = key.split("/")
        for value, step in points:
            row = rows.setdefault((tuple(prefix), step), {"metrics": {}, "params": {}})
            if leaf.startswith(PARAM_LEAF):
                name = leaf[len(PARAM_LEAF):]
                row["params"][name] = int(value) if varying.get(name) == "int" else value
            else:
                row["metrics"][leaf.removesuffix(OUTSIDE_SUFFIX)] = value
    out = []
    for (prefix, step), row in rows.items():
        rec = dict(base)
        if curve:
            v = curve_at[step]
            rec[curve] = int(v) if float(v).is_integer() else v
        for part in prefix:
            name, _, text = part.partition(":")
            rec[name] = _coord_value(text)
        rec.update(row["metrics"])
        rec[ASSUMPTION] = outside.get("".join(p + "/" for p in prefix) + f"@{step}", "")
        rec["params"] = json.dumps(_unflatten({**common, **per_fold.get(prefix[:len(fold)], {}), **row["params"]}),
                                   sort_keys=True, default=str)
        out.append(rec)
    return out, json.loads(tags.get(COORDS_TAG, "[]"))
