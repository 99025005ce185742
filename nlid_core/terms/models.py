"""The models the package builds itself, by their terms: defined once, next to the registry.

Everything outside ``terms/`` names these instead of spelling term lists (``tests/test_term_names.py`` refuses a
tuple, list or comma string of term names anywhere else).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .registry import baseline_terms

__all__ = ["BOUC_WEN_BENCHMARK", "LINEAR", "LUGRE_AXIS", "LUGRE_LOOP", "STICK_SLIP"]

#: The linear baseline: mass, viscous damping, stiffness (the registry's ``baseline`` terms).
LINEAR = ",".join(baseline_terms())
#: A drive axis: a mass with LuGre friction.
LUGRE_AXIS = "m0,lugre"
#: The same axis in a PI position loop: the proportional gain acts as viscous damping, the integral gain as a spring.
LUGRE_LOOP = "m0,c1,k1,lugre"
#: The stick-slip oscillator (mass on a spring, dragged by a belt) with each friction law.
STICK_SLIP: Mapping[str, str] = MappingProxyType({
    "lugre": "m0,k1,lugre",
    "stribeck": "m0,c1,k1,stribeck",
    "coulomb": "m0,c1,k1,fc",
})
#: The Bouc-Wen hysteresis benchmark's structure (Noël & Schoukens).
BOUC_WEN_BENCHMARK = "m0,c1,k1,bouc_wen"
