"""The GNKR family: generalized Nystrom kernel regression over a (sigma, lambda) grid (the gnkr study).

A block's ``sampler`` picks the method: ``uniform`` (US) or ``column_norm`` (CS) landmarks.  A trial's
estimator (:class:`_GNKRPath`) runs :meth:`~nystrom_bench.learners.GNKR.fit_path`'s path
(:func:`nystrom_bench.learners._gnkr_path.fit_path`, without the estimator: a gnkr job imports no
scikit-learn) three times, in this order, with the trial's random stream continued across them: on the whole training part over
``params.sigma_grid`` x ``params.lambda_grid``; on the fit part of the validation split (:func:`validation`)
over the same grid; on the whole training part again over ``params.extra_sigmas`` (uniform landmarks:
those of the first fit).  Column-norm probabilities depend on the kernel and the points, not on m or
the sampler's draws: they are computed once per (data set, seed, kernel) and fit set.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...learners import _gnkr_path
from ...methods import Method, family, register

family("gnkr", key="sampler")


def m_values(params):
    """``params.n_components`` (an int or a list of them) as a list of ints."""
    m = params["n_components"]
    return [int(v) for v in (m if isinstance(m, list) else [m])]


def grids(params):
    """``(sigmas, lambdas, extra sigmas)`` of the study's params (extra widths not in the grid)."""
    sigmas = [float(v) for v in params["sigma_grid"]]
    extra = [float(v) for v in params["extra_sigmas"] if float(v) not in sigmas]
    return sigmas, [float(v) for v in params["lambda_grid"]], extra


def validation(trial):
    """(fit part, validation part) indices of the training part: one split per (data set, seed)."""
    def split():
        perm = trial.stream("validation").permutation(len(trial.split.y_train))
        n_val = int(round(float(trial.params["validation_fraction"]) * len(perm)))
        return perm[n_val:], perm[:n_val]

    return trial.shared("validation", split)


class _GNKRPath:
    """The three GNKR paths of one trial: ``full_`` (training part), ``part_`` (fit part of the
    validation split; ``val_``: the validation indices) and ``extra_`` (extra widths, or None)."""

    def __init__(self, trial, sampler):
        self.trial, self.sampler = trial, sampler

    def fit(self, X, y):
        t = self.trial
        sigmas, lams, extra = grids(t.params)
        sub, self.val_ = validation(t)
        norms = t.shared(("norms", t.kernel_label), lambda: ({}, {}))  # (whole training part, fit part)

        def path(X, y, widths, probabilities, landmarks=None):
            # GNKR(kernel, n_components=m, sampler, random_state=t.rng).fit_path(X, y, widths, lams, ...) without
            # the estimator (no scikit-learn import in the job): its validation on the split's float64 arrays,
            # then the same function, the same bits
            m = int(t.coords["m"])
            if landmarks is None and self.sampler == "uniform" and m > X.shape[0]:
                warnings.warn(f"GNKR: n_components > n_samples ({m} > {X.shape[0]}); n_components was set to "
                              f"n_samples = {X.shape[0]}: every training point is a landmark", UserWarning,
                              stacklevel=2)
            return _gnkr_path.fit_path(X, y, _gnkr_path._positive_1d(widths, "sigmas", "gnkr"),
                                       _gnkr_path._positive_1d(lams, "alphas", "gnkr"), t.kernel.name,
                                       self.sampler, m, t.rng, landmarks, probabilities)

        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        self.full_ = path(X, y, sigmas, norms[0])
        self.part_ = path(X[sub], y[sub], sigmas, norms[1])
        self.extra_ = None
        if extra:  # same uniform landmarks; column-norm ones drawn per sigma as always
            self.extra_ = path(X, y, extra, norms[0],
                               landmarks=self.full_.path_indices_[0] if self.sampler == "uniform" else None)
        return self


class GNKRPath(Method):
    family = "gnkr"
    options = {}

    def landmark_counts(self, params):
        return m_values(params)

    def estimator(self, trial):
        return _GNKRPath(trial, self.name)

    def record(self, est, trial):
        return {"sampler": self.name, "kernel": trial.kernel.name, "n_components": trial.coords["m"]}


@register
class Uniform(GNKRPath):
    """US: ``min(m, n)`` distinct uniform landmarks, drawn once and shared by every sigma."""

    name = "uniform"


@register
class ColumnNorm(GNKRPath):
    """CS: m independent draws per sigma with ``p_i ~ ||K[:, i]||^2``."""

    name = "column_norm"
