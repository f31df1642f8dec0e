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

from .bregman import LogDetKernelLearning
from .cluster_kernel import ClusterKernel
from .csi import CSI
from .gen_nystrom import GeneralizedNystrom, GeneralizedNystromMKL
from .gnkr import GNKR, gnkr_path
from .krr import KRR, KRRClassifier
from .lssvm import LSSVM
from .mkl import AlignmentMKL, GroupLassoMKL, SimpleMKL
from .nusvm import NuSVM, max_feasible_nu
from .nystrom_features import NystromFeatures
from .spectral_kernel import SpectralGraphKernel

__all__ = ["NystromFeatures", "KRR", "KRRClassifier", "GNKR", "gnkr_path", "LSSVM", "NuSVM", "max_feasible_nu", "GeneralizedNystrom", "GeneralizedNystromMKL", "AlignmentMKL",
           "ClusterKernel", "SpectralGraphKernel", "CSI", "LogDetKernelLearning", "SimpleMKL",
           "GroupLassoMKL"]
