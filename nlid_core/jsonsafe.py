"""Values as strict JSON: one definition of "a number JSON can hold" for every report, result and table.

JSON has no NaN or infinity: a non-finite number becomes ``null`` (None), numpy scalars become plain Python
numbers, tuples become lists and mapping keys strings. Imports nothing of the package.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["finite_or_none", "json_safe"]


def finite_or_none(value: Any) -> float | None:
    """``float(value)`` when it is a finite real number (not a bool), else None."""
    if value is None or isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def json_safe(obj: Any) -> Any:
    """A copy of ``obj`` that ``json.dumps(..., allow_nan=False)`` accepts: non-finite floats to None, numpy scalars
    to Python numbers, tuples to lists, mapping keys to strings (recursively); anything else unchanged."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and getattr(obj, "ndim", None) == 0:
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
