"""Kernel ridge regression at scale (n up to 10^6): the study, its method family (``scale``) and its
report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
