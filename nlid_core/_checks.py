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


def too_deep(data: Any, max_depth: int) -> str | None:
    """The path (``a.b[2].c``) of the first value of nested dicts and lists deeper than ``max_depth``,
    else None. Iterative: a hostile document deeper than the interpreter's stack is walked safely."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > max_depth:
            return path or "(top)"
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
    return None
