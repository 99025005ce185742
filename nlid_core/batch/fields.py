"""Reading the values of a batch spec's tables: each reader checks one key's type and range and says where
a bad value is (``[table] key``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ModelSpecError

__all__ = ["MAX_STRING", "MAX_LABEL"]


#: Longest string value.
MAX_STRING = 1_000


#: Longest variant label.
MAX_LABEL = 40


_LABEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def _where(table: str, key: str) -> str:
    return f"{table} `{key}`" if table else f"`{key}`"


def _string(value: Any, table: str, key: str, *, limit: int = MAX_STRING) -> str:
    if not isinstance(value, str):
        raise ModelSpecError(f"{_where(table, key)} must be a string; got {type(value).__name__}")
    if len(value) > limit:
        raise ModelSpecError(f"{_where(table, key)} must be at most {limit} characters; got {len(value)}")
    return value


def _strings(value: Any, table: str, key: str, *, limit: int = 256) -> tuple[str, ...]:
    """A list of strings, or one string of comma-separated names."""
    if isinstance(value, str):
        items = [s.strip() for s in _string(value, table, key).split(",") if s.strip()]
    elif isinstance(value, list):
        if len(value) > limit:
            raise ModelSpecError(f"{_where(table, key)} lists {len(value)} entries; at most {limit}")
        items = [_string(v, table, key).strip() for v in value]
    else:
        raise ModelSpecError(f"{_where(table, key)} must be a list of strings; got {type(value).__name__}")
    return tuple(items)


def _number(value: Any, table: str, key: str, *, positive: bool = False, nonnegative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ModelSpecError(f"{_where(table, key)} must be a finite number; got {value!r:.80}")
    v = float(value)
    if positive and not v > 0:
        raise ModelSpecError(f"{_where(table, key)} must be positive; got {v:g}")
    if nonnegative and not v >= 0:
        raise ModelSpecError(f"{_where(table, key)} must be >= 0; got {v:g}")
    return v


def _integer(value: Any, table: str, key: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ModelSpecError(f"{_where(table, key)} must be a whole number from {lo} to {hi}; got {value!r:.80}")
    return int(value)


def _boolean(value: Any, table: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise ModelSpecError(f"{_where(table, key)} must be true or false; got {value!r:.80}")
    return value


def _table(value: Any, table: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ModelSpecError(f"{table} must be a table; got {type(value).__name__}")
    return value


def _unknown(data: Mapping[str, Any], allowed: set[str], table: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        shown = ", ".join(f"`{k[:40]}`" for k in extra[:5])
        raise ModelSpecError(f"{table or 'the spec'}: unknown key(s) {shown}; valid keys are "
                             f"{', '.join(sorted(allowed))}")


def _values(value: Any, table: str, key: str) -> dict[str, float]:
    tab = _table(value, _where(table, key))
    if len(tab) > 256:
        raise ModelSpecError(f"{_where(table, key)} holds {len(tab)} entries; at most 256")
    return {_string(k, table, key, limit=64): _number(v, table, f"{key}.{k}") for k, v in tab.items()}


def _bounds(value: Any, table: str) -> dict[str, tuple[float, float]]:
    tab = _table(value, _where(table, "bounds"))
    out: dict[str, tuple[float, float]] = {}
    for name, pair in tab.items():
        where = _where(table, f"bounds.{name}")
        if not isinstance(pair, list) or len(pair) != 2 or any(
                isinstance(b, bool) or not isinstance(b, (int, float)) or math.isnan(float(b)) for b in pair):
            raise ModelSpecError(f"{where} must be [lower, upper] (numbers; -inf / inf for none); got {pair!r:.80}")
        lo, hi = float(pair[0]), float(pair[1])
        if lo > hi:
            raise ModelSpecError(f"{where}: the lower bound {lo:g} exceeds the upper bound {hi:g}")
        out[_string(name, table, "bounds", limit=64)] = (lo, hi)
    return out


def _label(value: Any, table: str) -> str:
    text = _string(value, table, "label", limit=MAX_LABEL)
    if not _LABEL_RE.fullmatch(text):
        raise ModelSpecError(f"{_where(table, 'label')} must be 1-{MAX_LABEL} characters of letters, digits and "
                             f"_ . + -, starting with a letter or digit; got {text!r}")
    return text
