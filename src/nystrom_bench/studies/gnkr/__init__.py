"""Generalized Nystrom kernel regression (Chen et al., NIPS 2016): the study, its method family (``gnkr``)
and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
