"""Learners: scikit-learn-compatible estimators on top of kernel operators, one module per family.

- :mod:`.nystrom_features` -- ``NystromFeatures``: a drop-in for scikit-learn's ``Nystroem`` with any sampler;
- :mod:`.krr` -- ``KRR``: kernel ridge regression, exact or Nystrom (gsa, lla, ncr); ``KRRClassifier`` on it;
- :mod:`.gnkr` -- ``GNKR``, ``gnkr_path``: generalized Nystrom kernel regression (Chen et al., NIPS 2016);
- :mod:`.lssvm` -- ``LSSVM``: least-squares SVM with bias (Suykens), exact or Nystrom;
- :mod:`.nusvm` -- ``NuSVM``: nu-SVM, exact or Nystrom with GSA / LLA prediction (Li et al.);
- :mod:`.gen_nystrom` -- ``GeneralizedNystrom``, ``GeneralizedNystromMKL``: the learned low-rank kernel of Lan, Zhang et al. (AIJ 2017);
- :mod:`.mkl` -- ``AlignmentMKL`` (ABMKL / CABMKL), ``SimpleMKL``, ``GroupLassoMKL`` (GLMKL): SVMs on learned combinations of Gaussian kernels;
- :mod:`.cluster_kernel` -- ``ClusterKernel``: Chapelle et al.'s cluster kernel (transductive);
- :mod:`.csi` -- ``CSI``: Bach & Jordan's Cholesky with side information (semi-supervised, exact gains);
- :mod:`.bregman` -- ``LogDetKernelLearning``: Kulis et al.'s low-rank LogDet kernel learning;
- :mod:`.spectral_kernel` -- ``SpectralGraphKernel``: Zhu et al.'s order-constrained spectral graph kernel (transductive);
- :mod:`._base` -- what they share (kernel and landmark parameters, landmark choice).
"""

import importlib

#: public name -> its module: imported on first use (PEP 562), so that importing the study kinds -- the
#: analysis, MLflow and report jobs do, to read a kind's metrics and coords -- does not import
#: scikit-learn (about 1.5 s of the ~2.3 s a run job spends importing, here; issue 39)
_EXPORTS = {
    "NystromFeatures": "nystrom_features", "KRR": "krr", "KRRClassifier": "krr", "GNKR": "gnkr",
    "gnkr_path": "gnkr", "LSSVM": "lssvm", "NuSVM": "nusvm", "max_feasible_nu": "nusvm",
    "GeneralizedNystrom": "gen_nystrom", "GeneralizedNystromMKL": "gen_nystrom", "AlignmentMKL": "mkl",
    "ClusterKernel": "cluster_kernel", "SpectralGraphKernel": "spectral_kernel", "CSI": "csi",
    "LogDetKernelLearning": "bregman", "SimpleMKL": "mkl", "GroupLassoMKL": "mkl",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
