"""Kernel ridge classification, exact vs Nystrom: the study (its methods are the ``krr`` family)."""

from . import study

__all__ = ["study"]
