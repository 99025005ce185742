"""The registry of terms: every library term, found by name, in the canonical order.

Nothing outside :mod:`nlid_core.terms` knows a term by name: term lists for the CLI, the dashboard,
the structure check and the nonlinearity evidence come from the queries here. Adding a term is one
module in :mod:`nlid_core.terms.library` plus its line in ``_LIBRARY``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ..errors import ModelSpecError
from .base import TermDef
from .library import bouc_wen, c1, c2, f0, fc, k1, k2, k3, kg, lugre, m0, m1, stribeck

__all__ = ["REGISTRY", "DEFAULT_TERMS", "get_term", "term_names", "proposable_terms", "baseline_terms",
           "connection_terms", "linear_connection_terms",
           "evidence_terms", "parse_terms"]

_LIBRARY: tuple[TermDef, ...] = (
    m0.TERM, m1.TERM, c1.TERM, c2.TERM, fc.TERM, k1.TERM, k2.TERM, k3.TERM, kg.TERM, f0.TERM,
    lugre.TERM, bouc_wen.TERM, stribeck.TERM,
)

#: Every library term by name, in canonical order.
REGISTRY: Mapping[str, TermDef] = MappingProxyType({t.name: t for t in _LIBRARY})

#: The seed model: (m0 + m1·x²)·ẍ + c1·ẋ + c2·|ẋ|·ẋ + k1·x + k3·x³ = f.
DEFAULT_TERMS: tuple[str, ...] = ("m0", "m1", "c1", "c2", "k1", "k3")


def get_term(name: str) -> TermDef:
    """The library term called ``name``.

    Raises
    ------
    ModelSpecError
        Unknown name; the message lists the valid ones.
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ModelSpecError(f"unknown term `{name}`; valid terms are {', '.join(REGISTRY)}") from None


def term_names() -> tuple[str, ...]:
    """All library term names, canonical order."""
    return tuple(REGISTRY)


def proposable_terms() -> tuple[str, ...]:
    """Terms the structure check may propose adding."""
    return tuple(n for n, t in REGISTRY.items() if t.proposable)


def connection_terms() -> tuple[str, ...]:
    """The default law of a multi-DOF connection or mount axis: the seed model's forces without its inertia
    (``c1·v + c2·|v|·v + k1·x + k3·x³`` of the relative motion)."""
    return tuple(n for n in DEFAULT_TERMS if not REGISTRY[n].inertial)


def linear_connection_terms() -> tuple[str, ...]:
    """A linear spring-damper connection: the linear baseline's forces without its inertia (``c1``, ``k1``)."""
    return tuple(n for n in baseline_terms() if not REGISTRY[n].inertial)


def baseline_terms() -> tuple[str, ...]:
    """The linear baseline model of the nonlinearity evidence (mass, viscous damping, stiffness)."""
    return tuple(n for n, t in REGISTRY.items() if t.baseline)


def evidence_terms() -> tuple[str, ...]:
    """Nonlinear terms the nonlinearity evidence tries one at a time against the baseline."""
    return tuple(n for n, t in REGISTRY.items() if t.evidence)


def parse_terms(terms: str | Iterable[str], *, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Validate term names (``"m0,c1,k1"`` or a sequence) into canonical order.

    Parameters
    ----------
    terms : str or iterable of str
        Library term names.
    extra : iterable of str
        Further valid names (custom terms), kept after the library terms in the given order.

    Raises
    ------
    ModelSpecError
        Unknown or duplicated names, or an empty list.
    """
    names = [s.strip() for s in terms.split(",")] if isinstance(terms, str) else [str(s).strip() for s in terms]
    names = [n for n in names if n]
    extra = tuple(extra)
    if not names:
        raise ModelSpecError("`terms` is empty; choose from " + ", ".join(REGISTRY))
    unknown = [n for n in names if n not in REGISTRY and n not in extra]
    if unknown:
        raise ModelSpecError(f"unknown term(s) {', '.join(unknown)} in `terms`; valid terms are {', '.join(REGISTRY)}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ModelSpecError(f"term(s) {', '.join(dup)} listed twice in `terms`")
    return tuple(n for n in REGISTRY if n in names) + tuple(n for n in extra if n in names)
