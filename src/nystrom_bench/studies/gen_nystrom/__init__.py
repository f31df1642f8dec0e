"""Generalized Nystrom kernels for semi-supervised learning (Lan, Zhang et al., AIJ 2017): the study,
its method family (``semi_supervised``) and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
