"""Approximate consistency of kernel selection criteria (Ding et al., AAAI 2019; TNNLS 2020): the
study, its method family (``criterion``: the approximations K~) and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
