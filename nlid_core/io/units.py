"""Physical quantities of the channels and unit conversion to SI (the letter of a channel name decides its quantity)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ..channels import parse_channel
from ..errors import DataValidationError
from ..record import CHANNEL_LABELS, SI_UNITS

__all__ = ["CHANNEL_QUANTITY", "UNIT_FACTORS", "unit_factor"]

#: Physical quantity measured by each channel letter (``x2`` is a length like ``x``).
CHANNEL_QUANTITY: Mapping[str, str] = {
    "t": "time",
    "f": "force",
    "x": "length",
    "v": "velocity",
    "a": "acceleration",
}

_LBF = 4.4482216152605  # N per pound-force (exact by definition)
_INCH = 0.0254  # m per inch (exact by definition)
_G0 = 9.80665  # m/s^2 per standard gravity (exact by definition)

#: Known unit names per quantity and their factor to the SI unit.
UNIT_FACTORS: Mapping[str, Mapping[str, float]] = {
    "time": {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6},
    "force": {"N": 1.0, "kN": 1e3, "mN": 1e-3, "lbf": _LBF},
    "length": {"m": 1.0, "mm": 1e-3, "um": 1e-6, "µm": 1e-6, "μm": 1e-6, "cm": 1e-2, "in": _INCH},
    "velocity": {"m/s": 1.0, "mm/s": 1e-3, "um/s": 1e-6, "µm/s": 1e-6, "cm/s": 1e-2, "in/s": _INCH},
    "acceleration": {
        "m/s^2": 1.0,
        "m/s2": 1.0,
        "m/s²": 1.0,
        "mm/s^2": 1e-3,
        "mm/s2": 1e-3,
        "mm/s²": 1e-3,
        "in/s^2": _INCH,
        "g": _G0,
    },
}

_HEADER_UNIT = re.compile(r"^(?P<name>.*?)\s*[\[(]\s*(?P<unit>[^\[\]()]+?)\s*[\])]\s*$")

#: Non-SI units recognised in column headers besides those of UNIT_FACTORS.
_SIGNAL_UNITS = ("V", "mV")


def unit_factor(channel: str, unit: str) -> float | None:
    """Factor converting values of ``channel`` given in ``unit`` to SI.

    Parameters
    ----------
    channel : str
        A channel name: ``t``, or ``f, x, v, a`` with an optional DOF
        number (``x2``); the letter gives the quantity.
    unit : str
        A unit name of the channel's quantity (``"mm"`` for ``x``), or a plain
        positive number.

    Returns
    -------
    float or None
        The factor (``1e-3`` for ``"mm"``); None when the unit is not known
        for this quantity and the values are to be kept as they are, labelled
        with ``unit`` (``"V"``).

    Raises
    ------
    DataValidationError
        Unknown channel, a unit of a different quantity, a number that is not
        positive and finite, an empty unit, or a known unit with wrong
        capitalisation (``"KN"``).
    """
    letter = parse_channel(channel).quantity
    u = str(unit).strip()
    if not u:
        raise DataValidationError(f"empty unit for `{channel}`")
    quantity = CHANNEL_QUANTITY[letter]
    table = UNIT_FACTORS[quantity]
    if u in table:
        return table[u]
    try:
        number = float(u)
    except ValueError:
        number = None
    if number is not None:
        if not (math.isfinite(number) and number > 0):
            raise DataValidationError(f"unit factor for `{channel}` must be a positive number, got `{u}`")
        return number
    for other, other_table in UNIT_FACTORS.items():
        if other != quantity and u in other_table:
            raise DataValidationError(
                f"unit `{u}` given for `{channel}` ({CHANNEL_LABELS[letter]}) is a {other} unit;"
                f" {quantity} units are {', '.join(table)} (or a number, the factor to {SI_UNITS[letter]})"
            )
    near = sorted(name for name in table if name.lower() == u.lower())
    if near:
        raise DataValidationError(
            f"unit `{u}` for `{channel}` is not recognised; did you mean {' or '.join(f'`{n}`' for n in near)}?"
            " (units are case-sensitive; give a number for a custom factor to SI)"
        )
    for other, other_table in UNIT_FACTORS.items():
        near = sorted(name for name in other_table if name.lower() == u.lower())
        if near:
            raise DataValidationError(
                f"unit `{u}` given for `{channel}` ({CHANNEL_LABELS[letter]}) looks like the {other} unit"
                f" `{near[0]}`; {quantity} units are {', '.join(table)} (units are case-sensitive)"
            )
    return None


def _header_unit(column: str) -> tuple[str, str | None]:
    """Split ``"x [mm]"`` into name and unit; brackets not holding a unit stay in the name."""
    m = _HEADER_UNIT.match(column)
    if m and m.group("name"):
        unit = m.group("unit")
        if unit in _SIGNAL_UNITS or any(unit in table for table in UNIT_FACTORS.values()):
            return m.group("name"), unit
    return column, None
