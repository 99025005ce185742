"""The linear baseline of the nonlinearity evidence, read from the term registry.

The evidence compares a record against the registry's linear baseline
(:func:`~nlid_core.terms.registry.baseline_terms`: a mass, a viscous damper and a linear spring)
and reads coefficients of it by their physical role. Roles are found by the unit of each
parameter, so nothing here knows a term by name:

=============  ===============================  =====================
role           unit (force · length⁻¹ · timeⁿ)   n
=============  ===============================  =====================
``mass``       N·s²/m (an inertia term)          2
``damping``    N·s/m                             1
``stiffness``  N/m                               0
=============  ===============================  =====================

The cubic stiffness whose sign names a hardening or softening spring is the evidence term whose
parameter has the unit N/m³.
"""

from __future__ import annotations

from ..errors import ModelSpecError
from ..terms.registry import baseline_terms, evidence_terms, get_term
from ..terms.units import Dim

__all__ = ["ROLES", "baseline_parameter", "mass_term", "cubic_stiffness", "evidence_stiffness_terms"]

#: Time exponent of each role's unit, force·length⁻¹·timeⁿ.
ROLES = {"mass": 2, "damping": 1, "stiffness": 0}


def baseline_parameter(role: str) -> str:
    """Name of the baseline parameter that plays ``role`` (``"mass"``, ``"damping"`` or ``"stiffness"``).

    Raises
    ------
    ModelSpecError
        An unknown role, or a registry whose baseline has no parameter of that unit.
    """
    if role not in ROLES:
        raise ModelSpecError(f"`role` must be one of {', '.join(ROLES)}, got {role!r}")
    unit = Dim.of(f=1, x=-1, t=ROLES[role])
    for name in baseline_terms():
        term = get_term(name)
        for p in term.params:
            if p.unit == unit and (role != "mass" or term.inertial):
                return p.name
    raise ModelSpecError(f"the linear baseline {', '.join(baseline_terms())} has no {role} parameter")


def mass_term() -> str:
    """Name of the baseline's inertia term (the term whose parameter is the mass)."""
    mass = baseline_parameter("mass")
    return next(n for n in baseline_terms() if mass in get_term(n).param_names)


def cubic_stiffness() -> str | None:
    """Name of the evidence term whose one parameter is a cubic stiffness (unit N/m³), or None."""
    unit = Dim.of(f=1, x=-3)
    for name in evidence_terms():
        params = get_term(name).params
        if len(params) == 1 and params[0].unit == unit:
            return name
    return None


def evidence_stiffness_terms() -> tuple[str, ...]:
    """Evidence terms that are nonlinear springs: one parameter whose unit has no time in it
    (force per power of displacement), e.g. the quadratic and cubic stiffness."""
    out = []
    for name in evidence_terms():
        params = get_term(name).params
        unit = params[0].unit if len(params) == 1 else None
        if unit is not None and unit.t == 0 and unit.f == 1 and unit.x < -1:
            out.append(name)
    return tuple(out)
