"""The criterion family: kernel selection criteria on an approximation K~ (the consistency study).

A block's ``approximation`` (default ``nystrom``) picks how K~ is built -- ``exact`` (K itself,
"Original"), ``optimal`` (best rank k, "OptApp"), ``nystrom`` and ``modified_nystrom`` (with a
landmark ``sampler``), ``mcm`` -- and :meth:`Criterion.build` fills in the papers' defaults
(Ding et al., AAAI 2019 and TNNLS 2020): rank ``k``, ``c = landmark_fraction * l`` landmarks, the
adaptive samplers' round size ``s = adaptive_fraction * c``, MCM's 3 levels -- or, on a data set
whose registry entry declares the grid its rows lie on (``grid:``), that grid.

One trial's estimator computes every criterion of the study at the trial's width on one K~
(:func:`nystrom_bench.selection.criterion_values`): its ``fit`` keeps ``values_`` =
``{criterion: (value, seconds)}`` and ``exact_``, the same on K -- shared by every method of a
(data set, seed) through ``trial.shared(("exact", gamma))``, which the ``exact`` method itself
reuses.  The deterministic approximations (``exact``, ``optimal``, ``mcm``) are computed once per
data set (the bits of X and y) and settings and reused for every seed where the training part is the
same (:func:`deterministic_values`; consistency_mcm's whole grids): their rows are equal for every such
seed, and their ``seconds`` are the one computation's, charged to each row.  :meth:`Criterion.fit_key`
is the width, so the criteria (a coord) of one (method, width) come from one K~ and share its landmarks.

:meth:`Criterion.assumption` says why a K~ is outside its approximation's assumptions (``""``
where they hold; only MCM has any): the row records it as the param ``assumption``, which the
result file keeps in its own column (:data:`nystrom_bench.results.ASSUMPTION`) so that reports,
tests and MLflow show such rows apart instead of averaging them in.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import approx, kernels, papers, selection, sharedwork
from ...methods import Method, check_sampler, family, register

family("criterion", key="approximation", default="nystrom")

#: the papers' settings (TNNLS 2020 Sec. VII): MCM's levels
_TNNLS = papers.table("ding_tnnls2020", "settings")

_COUNT = {"type": "integer", "minimum": 1}
_RANK = {**_COUNT, "description": "k of OptApp and the Nystrom family (default: params.k)"}
_NYSTROM = {
    "sampler": {"type": "string", "default": "uniform", "description": "landmark sampler (nystrom_bench.sampling)"},
    "rank": _RANK,
    "n_components": {"anyOf": [_COUNT, {"type": "number", "exclusiveMinimum": 0, "maximum": 1}],
                     "description": "landmarks c: a count, or a fraction of l (default: params.landmark_fraction)"},
    "s": {**_COUNT, "description": "the adaptive samplers' round size (default: params.adaptive_fraction * c)"},
}


def settings(params, y):
    """The criteria's settings of a trial (``y``: the training targets)."""
    return {"mu": params["mu"], "noise_sd": params["noise_fraction"] * float(np.std(y)),
            "spectrum": params["spectrum"]}


def deterministic_values(X, y, gamma, approximation, criteria, common, opts):
    """``{criterion: (value, seconds)}`` of a deterministic approximation (``exact``, ``optimal``, ``mcm``: no
    landmark randomness), computed once per data set and settings and reused by the job's later seeds
    (:data:`nystrom_bench.sharedwork.MEMO`, keyed by the bits of X and y, the width, the approximation, the
    criteria and their settings and the build options): the same bits for every seed, and every row that
    reused them is charged the seconds of their one computation (the ``seconds`` they carry)."""
    key = ("criterion_values", approximation, float(gamma), tuple(criteria), sorted(common.items()),
           sorted(opts.items()))
    value, _, _ = sharedwork.MEMO.get((X, y), key, lambda: _reduced_values(X, y, gamma, approximation, criteria,
                                                                           common, opts))
    return dict(value)


def _reduced_values(X, y, gamma, approximation, criteria, common, opts):
    """``selection.criterion_values`` with the work that depends on the data only shared
    (:func:`approx.shared_work` from :data:`~nystrom_bench.sharedwork.MEMO`): K's tridiagonal reduction -- the
    exact eigenvalues (C_ipe), the optimal rank-k eigenpairs and the ``leverage`` sampler's draws of one width
    take one -- and MCM's grid spacing (one for every width); the values are bit for bit those of their own.
    A reuse is charged in seconds where it is read: the optimal and MCM builds (every criterion), the exact
    C_ipe (only it reads K's eigenvalues)."""
    source = sharedwork.SharedOperatorWork()
    with approx.shared_work(source):
        out = selection.criterion_values(X, y, gamma, approximation, tuple(criteria), **common, **opts)
    if source.shared_seconds:
        readers = ("c_ipe",) if approximation == "exact" else tuple(out)
        out = {name: (value, seconds + (source.shared_seconds if name in readers else 0.0))
               for name, (value, seconds) in out.items()}
    return out


def exact_values(trial, X, y, gamma, common):
    """Every criterion of width ``gamma`` on K: once per data set and width (:func:`deterministic_values`)."""
    return trial.shared(("exact", gamma), lambda: deterministic_values(
        X, y, gamma, "exact", trial.params["criteria"], common, {}))


class Criterion(Method):
    """Base of the criterion family: an approximation and its build options."""

    family = "criterion"

    def build(self, params, n, info):
        """``selection.criterion_values`` options for ``n`` training points of the data set ``info`` (its
        registry entry), the papers' defaults filled in."""
        return {}

    def values(self, trial, X, y, gamma, common, opts):
        """``{criterion: (value, seconds)}`` of width ``gamma`` on this method's K~.  The ``leverage`` sampler
        shares K's tridiagonal reduction between the seeds of one training part
        (:class:`~nystrom_bench.sharedwork.SharedLeverage`, the same landmarks bit for bit); a draw that reused
        it is charged the reduction's measured seconds in every criterion's seconds."""
        shared = sharedwork.SharedLeverage() if opts.get("sampler") == "leverage" else None
        out = selection.criterion_values(X, y, gamma, self.name, tuple(trial.params["criteria"]), seed=trial.rng,
                                         **common, **{**opts, **({"sampler": shared} if shared else {})})
        if shared is not None and shared.shared_seconds:
            out = {name: (value, seconds + shared.shared_seconds) for name, (value, seconds) in out.items()}
        return out

    def estimator(self, trial):
        return _Values(self, trial)

    def fit_key(self, trial):
        return trial.coords["log2_gamma"]

    def record(self, est, trial):
        return dict(est.record_)

    #: whether :meth:`assumption` reads the operators themselves (``operators=``): only MCM's
    assumption_reads_operators = False

    def assumption(self, X, gammas, mu, opts, operators=None):
        """Why this method's K~ of the training points ``X`` at the widths ``gammas`` is outside its
        assumptions (``mu``: the criteria's regularisation; ``opts``: :meth:`build`'s), or ``""``
        where they hold -- every approximation but MCM's.  ``operators``: the K~ of every width, where the
        caller built them already (:func:`nystrom_bench.selection.criterion_paths`)."""
        return ""


class _Values:
    """fit(X, y): the trial's criteria on this method's K~ (``values_``) and on K (``exact_``)."""

    def __init__(self, method, trial):
        self.method, self.trial = method, trial

    def fit(self, X, y):
        sharedwork.MEMO.enter(self.trial.study, self.trial.dataset)
        gamma = float(2.0 ** self.trial.coords["log2_gamma"])
        common = settings(self.trial.params, y)
        opts = self.method.build(self.trial.params, len(X), self.trial.split.info)
        self.exact_ = exact_values(self.trial, X, y, gamma, common)
        self.values_ = self.method.values(self.trial, X, y, gamma, common, opts)
        self.record_ = {"gamma": gamma, "approximation": self.method.name, **opts, **common}
        reason = _assumption(self.method, X, gamma, common["mu"], opts)
        if reason:
            self.record_["assumption"] = reason
        return self


def _assumption(method, X, gamma, mu, opts):
    """``method.assumption`` at one width (untimed: no row's seconds), once per data set and settings where it
    rebuilds the operator (MCM: deterministic), its grid spacing shared (:func:`approx.shared_work`)."""
    if not method.assumption_reads_operators:
        return method.assumption(X, [gamma], mu, opts)
    key = ("assumption", method.name, float(gamma), float(mu), sorted(opts.items()))

    def make():
        with approx.shared_work(sharedwork.SharedOperatorWork()):
            return method.assumption(X, [gamma], mu, opts)

    return sharedwork.MEMO.get(X, key, make)[0]


@register
class Exact(Criterion):
    name = "exact"

    def values(self, trial, X, y, gamma, common, opts):
        return exact_values(trial, X, y, gamma, common)


@register
class Optimal(Criterion):
    name = "optimal"
    options = {"rank": _RANK}

    def values(self, trial, X, y, gamma, common, opts):
        return deterministic_values(X, y, gamma, self.name, trial.params["criteria"], common, opts)

    def build(self, params, n, info):
        return {"rank": int(self.opts.get("rank", params["k"]))}


@register
class Nystrom(Criterion):
    name = "nystrom"
    options = _NYSTROM

    def __init__(self, label, options):
        if "n_landmarks" in options:  # the estimators' name for it, and what the rows record
            raise ValueError("the key 'n_landmarks' was renamed 'n_components'; rename the key")
        super().__init__(label, options)

    def check(self, params, block):
        check_sampler(self.opts["sampler"])

    def landmark_counts(self, params):
        m = self.opts.get("n_components")
        return [int(m)] if isinstance(m, int) else []

    def build(self, params, n, info):
        sampler = self.opts["sampler"]
        c = selection.landmark_count(self.opts.get("n_components", params["landmark_fraction"]), n)
        opts = {"rank": int(self.opts.get("rank", params["k"])), "sampler": sampler, "n_components": c}
        if sampler.startswith("adaptive"):
            opts["sampler_options"] = {"s": int(self.opts.get("s", max(1, round(params["adaptive_fraction"] * c))))}
        return opts


@register
class ModifiedNystrom(Nystrom):
    name = "modified_nystrom"


@register
class MCM(Criterion):
    """MCM's grid: ``grid: data`` (the default) lays the training points on the grid their data set
    declares (``datasets.yaml`` ``grid:``, when the training part is that whole grid in its row-major
    order), else on the most balanced ``levels``-level grid of l (:func:`~nystrom_bench.approx.balanced_grid`);
    ``grid: levels`` always takes the latter, a list names the grid.

    Ding et al. (TNNLS 2020) adopt "a three-level circulant matrix" and run MCM on their 2-D synthetic
    grids only, "to strictly satisfy H4" (Sec. VII, footnote 5).  The two do not go together: 100 points of
    a 10 x 10 grid on a 3-level grid (5, 5, 4) are ~0.7 (relative misfit) from H4's ``||x_i - x_j|| = h
    ||i - j||``, so U_m approximates another matrix than K; on the data's own 2-level grid the misfit is 0.
    We take the data's grid where it has one, which is what footnote 5 asks for.
    """

    name = "mcm"
    options = {"levels": {**_COUNT, "default": _TNNLS["mcm_levels"]},
               "grid": {"anyOf": [{"enum": ["data", "levels"]}, {"type": "array", "items": _COUNT, "minItems": 1}],
                        "default": "data",
                        "description": "data: the data set's own grid where it declares one (else levels); "
                                       "levels: the balanced levels-level grid; or the grid m itself"}}

    def build(self, params, n, info):
        grid, levels = self.opts["grid"], int(self.opts["levels"])
        if grid == "data":
            own = (info or {}).get("grid")
            grid = own if own is not None and math.prod(own) == n else "levels"
        if grid == "levels":
            return {"levels": levels}
        if math.prod(grid) != n:
            raise ValueError(f"mcm: grid {list(grid)} has {math.prod(grid)} cells but the training part has {n} "
                             "points; use grid: data or grid: levels")
        return {"grid": [int(g) for g in grid]}

    def values(self, trial, X, y, gamma, common, opts):
        return deterministic_values(X, y, gamma, self.name, trial.params["criteria"], common, opts)

    assumption_reads_operators = True

    def assumption(self, X, gammas, mu, opts, operators=None):
        """MCM's assumptions at the widths ``gammas`` (:meth:`nystrom_bench.approx.MCMOperator.assumption`,
        with the criteria's shift ``mu l``): H4 -- the grid misfit above ``MCM_MISFIT_WARN`` (the same
        for every width) -- and ``U_m + mu l I`` positive definite at every width.  With several widths
        (a selection's grid) the reason counts the widths where ``U_m + mu l I`` is indefinite and names
        the lowest eigenvalue; it is one U_m per width, the one the criteria used (MCM is
        deterministic), rebuilt here at O(l log l) each -- or ``operators``, the criteria's own U_m of every width
        (a selection's :func:`~nystrom_bench.selection.criterion_paths`)."""
        h4, bad, lowest = "", 0, math.inf
        shift = float(mu) * len(X)
        for i, gamma in enumerate(gammas):
            if operators is not None:
                op = operators[i]
            else:
                with warnings.catch_warnings():  # the criteria's own build warned already
                    warnings.simplefilter("ignore")
                    op = approx.build("mcm", X, kernels.make("gaussian", gamma=float(gamma)),
                                      levels=opts.get("levels", 3), grid=opts.get("grid"))
            h4 = op.assumption() or h4
            if op.assumption(shift) != op.assumption():
                bad += 1
                lowest = min(lowest, float(op.v.min()))
        reasons = [h4] if h4 else []
        if bad:
            where = f"at {bad} of {len(gammas)} widths, " if len(gammas) > 1 else ""
            reasons.append(f"{approx.ASSUMPTION_INDEFINITE}: {where}min eigenvalue {lowest:.2g} <= -mu l = {-shift:.2g}")
        return "; ".join(reasons)
