"""Small argument validators shared by the modules (messages name the argument)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import ModelSpecError, NlidError


def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``lo..hi`` (``hi`` None: no upper limit); bools are rejected."""
    integer = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not integer or value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ModelSpecError(f"`{name}` must be an integer {rng}, got {value!r}")
    return int(value)


def check_positive(name: str, value: Any, unit: str, error: type[NlidError] = ModelSpecError) -> float:
    """``value`` as a positive finite float (``unit`` is named in the message; ``error`` is raised)."""
    try:
        val = float(value)
    except (TypeError, ValueError):
        raise error(f"`{name}` must be a positive number ({unit}), got {value!r}") from None
    if not (math.isfinite(val) and val > 0):
        raise error(f"`{name}` must be a positive finite number ({unit}), got {value!r}")
    return val
