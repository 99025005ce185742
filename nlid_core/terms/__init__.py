"""Model terms: definitions, the registry, terms typed by users, and their compiled programs.

See :mod:`nlid_core.terms.base` for what a term declares and :mod:`nlid_core.terms.registry` for the
library. Importing this package does not import sympy; parsing or compiling a term does.
"""

from __future__ import annotations

from .base import ParamSpec, StateSpec, TermDef
from .custom import custom_term, parse_custom
from .registry import (
    DEFAULT_TERMS,
    REGISTRY,
    baseline_terms,
    evidence_terms,
    get_term,
    parse_terms,
    proposable_terms,
    term_names,
)
from .units import Dim, format_unit

__all__ = [
    "ParamSpec", "StateSpec", "TermDef", "Dim", "format_unit", "REGISTRY", "DEFAULT_TERMS", "get_term",
    "term_names", "proposable_terms", "baseline_terms", "evidence_terms", "parse_terms", "custom_term",
    "parse_custom",
]
