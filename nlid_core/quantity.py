"""Magnitudes as engineers read them: a value with an SI prefix of the record's own unit.

An RMSE of a record in volts reads ``5.28 mV`` rather than ``0.005277 V``, a displacement error in
metres ``12.4 µm``. A prefix is put only on a plain SI unit (or a quotient that starts with one,
``m/s`` -> ``mm/s``); units that carry a prefix already (``mm``, ``kN``, ``kg``), counts and
unknown units keep the value as it is.
"""

from __future__ import annotations

import math

__all__ = ["prefixed", "quantity", "PREFIXABLE"]

#: Unit symbols that take an SI prefix (as a whole unit, or as the numerator of a quotient).
PREFIXABLE: frozenset[str] = frozenset({"m", "V", "N", "A", "Pa", "rad", "W", "J", "Nm", "N·m", "N m", "s"})

_PREFIXES: tuple[tuple[int, str], ...] = ((3, "k"), (0, ""), (-3, "m"), (-6, "µ"), (-9, "n"), (-12, "p"))


def _numerator(unit: str) -> str:
    return unit.split("/", 1)[0].strip()


def prefixed(value: float, unit: str) -> tuple[float, str]:
    """``value`` in ``unit`` scaled to the prefix that puts its magnitude in [1, 1000) where one fits.

    Parameters
    ----------
    value : float
    unit : str
        The record's unit, e.g. ``"V"``, ``"m"``, ``"m/s"``.

    Returns
    -------
    (float, str)
        The scaled value and its unit (``(5.28, "mV")``); the inputs unchanged for a zero, non-finite
        value or a unit that takes no prefix.
    """
    unit = str(unit or "")
    if not (math.isfinite(value) and value != 0) or _numerator(unit) not in PREFIXABLE:
        return value, unit
    exp = math.floor(math.log10(abs(value)))
    for p, sym in _PREFIXES:
        if exp >= p:
            break
    if p == 0:
        return value, unit
    return value / 10.0 ** p, sym + unit


def quantity(value: float, unit: str, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits and a readable prefix: ``"5.28 mV"``, ``"-12.4 µm"``."""
    v, u = prefixed(value, unit)
    if not math.isfinite(v):
        return f"{v} {u}".strip()
    return f"{v:.{digits}g} {u}".strip()
