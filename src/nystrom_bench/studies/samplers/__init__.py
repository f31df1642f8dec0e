"""Landmark samplers compared on kernel-matrix error, spectrum and learning: the study, its method
family (``samplers``) and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
