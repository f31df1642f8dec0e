"""Kernel ridge regression, exact vs Nystrom: the study and its method family (``krr``)."""

from . import methods, study

__all__ = ["methods", "study"]
