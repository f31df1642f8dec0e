"""The semi-supervised family (the gen_nystrom study, Lan, Zhang et al., AIJ 2017): one class per ``approach``.

Every estimator is transductive: ``fit(X, y)`` sees every sample, ``y = -1`` on the unlabelled
ones, and ``predict(X)`` classifies the unlabelled samples of that fit (``X``: those rows).

- the *factor* methods (``nystrom``, ``csi``, ``spectral``, ``cluster``, ``breg``, ``gen_nystrom``,
  ``gen_nystrom_mkl``) learn a factor G of a kernel (``K~ = G G^T``) on every sample and train a
  linear SVM (scikit-learn's LIBLINEAR, the study's ``C``) on G's labelled rows, G scaled to unit
  mean diagonal first (:func:`unit_mean_diagonal`); :class:`_LinearOnFactor` is that step;
- ``svm`` (LibSVM) and the MKL baselines (``abmkl``, ``cabmkl``, ``simplemkl``, ``glmkl``) fit on the
  labelled samples only (:class:`_OnLabelled`).

The single-kernel methods use the block's Gaussian kernel (``exp(-||x - y||^2 / b0)``), the
multiple-kernel ones the study's ``width_scales`` times its width.  Every low-rank method has the
rank of the Nystrom methods, the study's ``landmark_fraction`` of n.  The paper's baselines without
an implementation here are :data:`NOT_IMPLEMENTED`; a block asking for one gets an error saying so
(:func:`nystrom_bench.methods.build`).
"""

from __future__ import annotations

import functools

import numpy as np

from ... import learners, sampling, sharedwork
from ...methods import Method, check_sampler, family, register

#: the paper's baselines without an implementation here: its column name -> (table, what it is)
NOT_IMPLEMENTED = {
    "NCNM": (1, "null-category noise model sparse GP (Lawrence & Jordan)"),
    "SKM": (2, "support kernel machine (Bach et al.): SMO on a smoothed dual of the l1-MKL problem that SimpleMKL and "
               "GLMKL solve here"),
}

family("semi_supervised", key="approach", not_implemented=NOT_IMPLEMENTED)

_SAMPLER = {"sampler": {"type": "string", "default": "kmeans"}}


def unit_mean_diagonal(G):
    """G scaled so that the kernel ``G G^T`` has mean diagonal 1 over the samples.

    The SVM's C = 1 means something only relative to the kernel's scale, and the learned kernels'
    scales differ by orders of magnitude: the generalized Nystrom kernel is ``beta`` times a Nystrom
    kernel at large lambda, with beta of eq. (8) ~10^4 on german, which made C = 1 a nearly hard
    margin there (measured: 37.7-41.7% error over lambda >= 10 against 29.9-37.9% normalised, three
    repeats).  Every method's kernel is therefore put on the Gaussian kernel's scale (unit diagonal)
    before its SVM; the Gaussian-based ones are unchanged up to the Nystrom residual."""
    scale = np.sqrt(np.mean(np.sum(G**2, axis=1)))
    return G / scale if scale > 0 else G


def _jsonable(v):
    return v.item() if isinstance(v, np.generic) else v


def _kernel_params(trial):
    return {"kernel": "gaussian", "gamma": float(trial.kernel.params()["gamma"])}


class _LinearOnFactor:
    """``fit(X, y)``: ``learn(X, y) -> (learner, G)`` on every sample, then a linear SVM on the labelled rows of
    G (unit mean diagonal); ``predict(X)``: its classes of the unlabelled rows (``X``: those rows)."""

    def __init__(self, learn, C, seed):
        self.learn, self.C, self.seed = learn, C, seed

    def fit(self, X, y):
        self.lab_, self.unl_ = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
        self.y_lab_ = y[self.lab_]
        self.learner_, G = self.learn(X, y)
        self.svc_, self.G_unl_ = self._train(G)
        #: seconds of shared work this fit reused instead of computing (:func:`shared_spectrum`, the landmarks of
        #: :class:`SharedKMeans`): charged to its row
        self.shared_seconds_ = (float(getattr(self.learner_, "shared_seconds_", 0.0))
                                + float(getattr(getattr(self, "sampler", None), "shared_seconds", 0.0)))
        return self

    def _train(self, G):
        from sklearn.svm import LinearSVC

        G = unit_mean_diagonal(G)
        # liblinear's dual coordinate descent shuffles with its random_state: seeded, or a row would change
        # from run to run (it did: segment's cluster kernel, seed 3)
        return LinearSVC(C=self.C, max_iter=20000, random_state=self.seed).fit(G[self.lab_], self.y_lab_), G[self.unl_]

    def classify(self, G):
        """The classes of the unlabelled rows by a linear SVM trained on another factor ``G`` of the same samples."""
        svc, G_unl = self._train(G)
        return svc.predict(G_unl)

    def predict(self, X):
        if len(X) != len(self.unl_):
            raise ValueError(f"a transductive estimator predicts the {len(self.unl_)} unlabelled samples of its fit, "
                             f"got {len(X)} rows")
        return self.svc_.predict(self.G_unl_)


class _OnLabelled:
    """``fit(X, y)`` fits ``model`` on the labelled samples only (``y != -1``); ``predict`` is the model's."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        lab = np.flatnonzero(y != -1)
        self.model.fit(X[lab], y[lab])
        return self

    def predict(self, X):
        return self.model.predict(X)


class _KernelSVC:
    """scikit-learn's SVC (LibSVM) on the precomputed kernel ``kern``."""

    def __init__(self, kern, C):
        self.kern, self.C = kern, C

    def fit(self, X, y):
        from sklearn.svm import SVC

        self.X_, self.svc_ = X, SVC(C=self.C, kernel="precomputed").fit(self.kern(X), y)
        return self

    def predict(self, X):
        return self.svc_.predict(self.kern(X, self.X_))


class _SemiSupervised(Method):
    family = "semi_supervised"

    def record(self, est, trial):
        return {"approach": self.name, **self.fitted(est, trial)}

    def fitted(self, est, trial):
        """What a row records of the fitted estimator besides the approach."""
        return {}


# -- the factor methods ------------------------------------------------------------------------------
class _Factor(_SemiSupervised):
    #: fitted attributes of the learner a row records
    reported = ()

    def estimator(self, trial):
        seed = int(trial.stream("linear_svc", trial.coords["n_labels"]).integers(2**31 - 1))
        return _LinearOnFactor(lambda X, y: self.learn(trial, X, y), trial.params["C"], seed)

    def learn(self, trial, X, y):
        """``(learner, G)``: the fitted learner (or what ``fitted`` reads) and the factor G of every sample."""
        est = self.make(trial).fit(X, y)
        return est, est.transform(X)

    def make(self, trial):  # pragma: no cover - abstract
        """The unfitted semi-supervised kernel learner."""
        raise NotImplementedError

    def fitted(self, est, trial):
        return {k: _jsonable(getattr(est.learner_, k)) for k in self.reported}


class SharedKMeans:
    """The ``kmeans`` sampler (:func:`nystrom_bench.sampling.kmeans`, k-means centres as landmarks: Zhang & Kwok,
    ICML 2008) with its centres computed once per data, count and random stream and reused by the job's later
    draws (:data:`nystrom_bench.sharedwork.MEMO`), bit for bit: the study's methods of one (data set, seed) draw
    from one stream (common random numbers) on every row (test_fraction 0), so ``nystrom``, ``breg`` and
    ``gen_nystrom`` -- and every ``n_labels`` -- ask for the same centres.  The key is the data's bits, c, the
    options and the stream's state before the draw; a draw that reused the centres leaves the stream where the
    draw that computed them left it (what k-means drew from it), so what the fit draws next is unchanged.
    ``shared_seconds``: the measured seconds of that one computation where this draw reused it (0 where it
    computed them on the fit's own clock) -- the row charges them."""

    __name__ = "kmeans"

    def __init__(self):
        self.shared_seconds = 0.0

    def __call__(self, X, kernel, c, rng, **options):
        def make():
            return sampling.kmeans(X, kernel, c, rng, **options), rng.bit_generator.state

        key = ("kmeans", int(c), sorted(options.items()), repr(rng.bit_generator.state))
        (centres, after), seconds, hit = sharedwork.MEMO.get(X, key, make)
        if hit:
            rng.bit_generator.state = after
        self.shared_seconds = seconds if hit else 0.0
        return centres


class _Sampled(_Factor):
    """A factor method that draws landmarks: ``sampler`` must give them without every label; ``kmeans`` is
    drawn through :class:`SharedKMeans` (centres shared by the (data set, seed)'s methods and coords)."""

    options = _SAMPLER

    def estimator(self, trial):
        est = super().estimator(trial)
        est.sampler = self.opts["sampler"]
        if est.sampler == "kmeans":
            sharedwork.MEMO.enter(trial.study, trial.dataset)
            est.sampler = SharedKMeans()
        est.learn = lambda X, y: self.learn(trial, X, y, est.sampler)
        return est

    def learn(self, trial, X, y, sampler):
        """``(learner, G)`` with the landmarks drawn by ``sampler`` (the block's, or :class:`SharedKMeans`)."""
        est = self.make(trial, sampler).fit(X, y)
        return est, est.transform(X)

    def make(self, trial, sampler):  # pragma: no cover - abstract
        """The unfitted learner drawing its landmarks with ``sampler``."""
        raise NotImplementedError

    def check(self, params, block):
        sampler = self.opts["sampler"]
        check_sampler(sampler)
        if sampling.needs_y(sampler) or sampler == "gaussian_sketch":
            raise ValueError(f"sampler {sampler!r} cannot give landmarks here (it needs every label or gives a "
                             "sketch); choose e.g. kmeans or uniform")


@register
class Nystrom(_Sampled):
    """Standard Nystrom features (landmarks by ``sampler``, the study's ``landmark_fraction`` of n) + linear SVM."""

    name = "nystrom"

    def learn(self, trial, X, y, sampler):
        from ... import approx

        c = max(1, round(trial.params["landmark_fraction"] * len(X)))
        return c, approx.landmark_operator(X, trial.kernel, c, sampler=sampler, seed=trial.rng).factor()

    def fitted(self, est, trial):
        return {"n_components": est.learner_}


@register
class CSI(_Factor):
    """Cholesky with side information (Bach & Jordan): :class:`~nystrom_bench.learners.CSI`."""

    name = "csi"
    reported = ("n_components_",)

    def make(self, trial):
        return learners.CSI(**_kernel_params(trial), n_components=trial.params["landmark_fraction"])


@functools.cache
def shared_spectrum(base):
    """The learner class ``learners.<base>`` (SpectralGraphKernel or ClusterKernel) whose label-free
    eigendecomposition (``_spectrum``) is computed once per data set and settings and reused by the
    job's later fits (:data:`nystrom_bench.sharedwork.MEMO`; every seed of the study uses all rows, only
    the labelled set changes), bit for bit.  A fit that reused it records the seconds of its one
    computation as ``shared_seconds_`` (0 where it computed it on its own clock): the row charges them."""
    cls = getattr(learners, base)

    def _spectrum(self, X, k):
        kern = getattr(self, "kernel_", None)
        key = (base, k, getattr(self, "n_neighbors", None),
               None if kern is None else (repr(kern), str(getattr(kern, "dtype", ""))))
        value, seconds, hit = sharedwork.MEMO.get(X, key, lambda: cls._spectrum(self, X, k))
        self.shared_seconds_ = seconds if hit else 0.0
        return value

    return type(f"Shared{base}", (cls,), {"_spectrum": _spectrum, "__module__": __name__,
                                          "__doc__": f"{base} with its eigendecomposition shared: see shared_spectrum."})


@register
class Spectral(_Factor):
    """Spectral graph kernel (Zhu et al.): :class:`~nystrom_bench.learners.SpectralGraphKernel` (its Laplacian's
    eigendecomposition shared across the job's fits, :func:`shared_spectrum`)."""

    name = "spectral"
    reported = ("n_components_", "alignment_")

    def make(self, trial):
        sharedwork.MEMO.enter(trial.study, trial.dataset)
        return shared_spectrum("SpectralGraphKernel")(n_components=trial.params["landmark_fraction"])


@register
class Cluster(_Factor):
    """Cluster kernel (Chapelle et al.): :class:`~nystrom_bench.learners.ClusterKernel` (its normalised kernel's
    eigendecomposition shared across the job's fits, :func:`shared_spectrum`)."""

    name = "cluster"
    reported = ("n_components_", "cut_")

    def make(self, trial):
        sharedwork.MEMO.enter(trial.study, trial.dataset)
        return shared_spectrum("ClusterKernel")(**_kernel_params(trial), n_components=trial.params["landmark_fraction"])


@register
class Breg(_Sampled):
    """LogDet low-rank kernel learning (Kulis et al.): :class:`~nystrom_bench.learners.LogDetKernelLearning`."""

    name = "breg"
    reported = ("n_sweeps_", "n_constraints_", "violation_")

    def make(self, trial, sampler):
        return learners.LogDetKernelLearning(**_kernel_params(trial), n_components=trial.params["landmark_fraction"],
                                             sampler=sampler, random_state=trial.rng)


@register
class GenNystrom(_Sampled):
    """Ours, single kernel: :class:`~nystrom_bench.learners.GeneralizedNystrom`; with the study's ``lambda_curve``
    a row also records the paper's Fig. 1 (``lambda_path``: [lambda, alignment, error (%)] at every lambda of the
    grid), computed after the timed fit and prediction."""

    name = "gen_nystrom"
    #: ``beta``: the prior's scale by eq. (8) (the paper's choice) or optimised with S (its Appendix A, Table A1)
    options = {**_SAMPLER, "beta": {"enum": ["heuristic", "iterative"], "default": "heuristic"}}

    def make(self, trial, sampler):
        p = trial.params
        return learners.GeneralizedNystrom(**_kernel_params(trial), n_components=p["landmark_fraction"],
                                           sampler=sampler, lambda_grid=tuple(p["lambda_grid"]),
                                           beta=self.opts["beta"], random_state=trial.rng)

    def fitted(self, est, trial):
        gn = est.learner_
        out = {"n_components": gn.n_components_, "lam": gn.lam_, "beta": gn.beta_, "n_iter": gn.n_iter_}
        if trial.params["lambda_curve"]:
            X, y_unl = trial.split.X_train, trial.split.y_train[est.unl_]
            out["lambda_path"] = [[lam, gn.alignment_[lam], 100 * float(np.mean(est.classify(gn.transform(X, lam=lam))
                                                                               != y_unl))] for lam in gn.alignment_]
        return out


@register
class GenNystromMKL(_Sampled):
    """Ours, multiple kernels: :class:`~nystrom_bench.learners.GeneralizedNystromMKL`, ``mkl_tau`` times the
    single-kernel rank spread over the kernels."""

    name = "gen_nystrom_mkl"

    def make(self, trial, sampler):
        p = trial.params
        frac = p["landmark_fraction"] * p["mkl_tau"] / len(p["width_scales"])
        return learners.GeneralizedNystromMKL(width_scales=tuple(p["width_scales"]), n_components=min(1.0, frac),
                                              sampler=sampler, lambda_grid=tuple(p["lambda_grid"]),
                                              random_state=trial.rng)

    def fitted(self, est, trial):
        mk = est.learner_
        return {"n_components": mk.n_components_, "lam": mk.lam_, "weights": [float(w) for w in mk.weights_]}


# -- the methods that see the labelled samples only --------------------------------------------------------
@register
class SVM(_SemiSupervised):
    """LibSVM: a kernel SVM (the study's ``C``) on the labelled samples only."""

    name = "svm"

    def estimator(self, trial):
        return _OnLabelled(_KernelSVC(trial.kernel, trial.params["C"]))


class _MKL(_SemiSupervised):
    """A multiple-kernel SVM on the labelled samples (kernels: the study's ``width_scales`` times the width)."""

    def estimator(self, trial):
        return _OnLabelled(self.make(width_scales=tuple(trial.params["width_scales"]), C=trial.params["C"]))

    def fitted(self, est, trial):
        return {"weights": [float(w) for w in est.model.weights_]}


@register
class ABMKL(_MKL):
    """Alignment-based MKL: :class:`~nystrom_bench.learners.AlignmentMKL`, uncentred."""

    name = "abmkl"

    def make(self, **kw):
        return learners.AlignmentMKL(centered=False, **kw)


@register
class CABMKL(_MKL):
    """Centred-alignment MKL (Cortes et al.): :class:`~nystrom_bench.learners.AlignmentMKL`, centred."""

    name = "cabmkl"

    def make(self, **kw):
        return learners.AlignmentMKL(centered=True, **kw)


@register
class SimpleMKL(_MKL):
    """SimpleMKL (Rakotomamonjy et al.): :class:`~nystrom_bench.learners.SimpleMKL`."""

    name = "simplemkl"

    def make(self, **kw):
        return learners.SimpleMKL(**kw)


@register
class GLMKL(_MKL):
    """Group-lasso MKL (Xu et al.): :class:`~nystrom_bench.learners.GroupLassoMKL`."""

    name = "glmkl"

    def make(self, **kw):
        return learners.GroupLassoMKL(**kw)
