"""Running Nystrom kernel machines, SPA/GSA/LLA (Li et al., geometric view): the study, its method family
(``integration``) and its report section."""

from . import methods, section, study

__all__ = ["methods", "section", "study"]
