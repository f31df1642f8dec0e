"""Approximate kernel selection (Ding et al., TNNLS 2020, Tables I-II): the study, its method family
(``selection``, built on the consistency kind's approximations) and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
