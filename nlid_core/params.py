"""Named parameter records and ordered parameter sets.

A :class:`Parameter` carries a value, bounds, a fixed/free switch and a
unit. A :class:`ParameterSet` keeps them in model order and packs the free
ones into the vector an estimator works on.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .errors import ModelSpecError

__all__ = ["Parameter", "ParameterSet"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Parameter:
    """One model coefficient.

    Attributes
    ----------
    name : str
        Public term name (``m0``, ``k3``, ...).
    value : float
        Current (initial or estimated) value, in ``unit``.
    lower, upper : float
        Bounds (may be infinite); ``lower <= value <= upper``.
    vary : bool
        Free (estimated) when True, held at ``value`` when False.
    unit : str
        Unit string, e.g. ``N/m^3``.
    description : str
        One line for tables.
    """

    name: str
    value: float
    lower: float = -math.inf
    upper: float = math.inf
    vary: bool = True
    unit: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        for attr in ("value", "lower", "upper"):
            val = getattr(self, attr)
            if not isinstance(val, (int, float, np.floating, np.integer)):
                raise ModelSpecError(f"parameter `{self.name}`: `{attr}` must be a number, got {val!r}")
            object.__setattr__(self, attr, float(val))
        if math.isnan(self.value) or math.isnan(self.lower) or math.isnan(self.upper):
            raise ModelSpecError(f"parameter `{self.name}`: value and bounds must not be NaN")
        if not math.isfinite(self.value):
            raise ModelSpecError(f"parameter `{self.name}`: value must be finite, got {self.value}")
        if self.lower > self.upper:
            raise ModelSpecError(f"parameter `{self.name}`: lower bound {self.lower:g} exceeds upper {self.upper:g}")
        if not self.lower <= self.value <= self.upper:
            raise ModelSpecError(
                f"parameter `{self.name}`: value {self.value:g} lies outside its bounds"
                f" [{self.lower:g}, {self.upper:g}]"
            )


class ParameterSet:
    """Ordered, immutable collection of :class:`Parameter`.

    Every "modifying" method returns a new set.
    """

    __slots__ = ("_params",)

    def __init__(self, params: Iterable[Parameter]) -> None:
        plist = tuple(params)
        names = [p.name for p in plist]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ModelSpecError(f"duplicate parameter names {sorted(dup)}")
        self._params = plist

    # -- container protocol -------------------------------------------------
    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __getitem__(self, name: str) -> Parameter:
        for p in self._params:
            if p.name == name:
                return p
        raise KeyError(f"no parameter `{name}`; parameters are {', '.join(self.names)}")

    def __contains__(self, name: object) -> bool:
        return any(p.name == name for p in self._params)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParameterSet) and self._params == other._params

    def __hash__(self) -> int:
        return hash(self._params)

    def __repr__(self) -> str:
        inner = ", ".join(f"{p.name}={p.value:.6g}{'' if p.vary else ' (fixed)'}" for p in self._params)
        return f"ParameterSet({inner})"

    # -- views ----------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._params)

    @property
    def values(self) -> FloatArray:
        """All values, model order."""
        return np.array([p.value for p in self._params], dtype=np.float64)

    @property
    def free_mask(self) -> NDArray[np.bool_]:
        return np.array([p.vary for p in self._params], dtype=bool)

    @property
    def free_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._params if p.vary)

    @property
    def lower(self) -> FloatArray:
        return np.array([p.lower for p in self._params], dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        return np.array([p.upper for p in self._params], dtype=np.float64)

    def as_dict(self) -> dict[str, float]:
        return {p.name: p.value for p in self._params}

    # -- new sets -------------------------------------------------------------
    def with_values(self, values: Mapping[str, float] | Iterable[float], *, clip: bool = False) -> ParameterSet:
        """New set with values replaced (by name, or all in order).

        With ``clip`` the values are clipped into their bounds first.
        """
        if isinstance(values, Mapping):
            unknown = set(values) - set(self.names)
            if unknown:
                raise ModelSpecError(f"unknown parameter(s) {sorted(unknown)}; parameters are {self.names}")
            vals = [float(values.get(p.name, p.value)) for p in self._params]
        else:
            vals = [float(v) for v in values]
            if len(vals) != len(self._params):
                raise ModelSpecError(f"expected {len(self._params)} values, got {len(vals)}")
        if clip:
            vals = [min(max(v, p.lower), p.upper) for v, p in zip(vals, self._params, strict=True)]
        return ParameterSet(dataclasses.replace(p, value=v) for p, v in zip(self._params, vals, strict=True))

    def with_free(self, free_values: Iterable[float]) -> ParameterSet:
        """New set with the free values replaced (in order), fixed ones kept."""
        vals = self.values
        fv = np.asarray(list(free_values), dtype=np.float64)
        if fv.size != int(self.free_mask.sum()):
            raise ModelSpecError(f"expected {int(self.free_mask.sum())} free values, got {fv.size}")
        vals[self.free_mask] = fv
        return self.with_values(vals)

    def update(self, name: str, **changes: object) -> ParameterSet:
        """New set with fields of parameter ``name`` changed (value, lower, upper, vary, ...)."""
        self[name]  # raises a clear KeyError for unknown names
        return ParameterSet(dataclasses.replace(p, **changes) if p.name == name else p for p in self._params)  # type: ignore[arg-type]

    def fix(self, *names: str) -> ParameterSet:
        out = self
        for n in names:
            out = out.update(n, vary=False)
        return out

    def free(self, *names: str) -> ParameterSet:
        out = self
        for n in names:
            out = out.update(n, vary=True)
        return out

    def to_records(self) -> list[dict[str, object]]:
        """Plain dicts (for JSON and tables)."""
        return [dataclasses.asdict(p) for p in self._params]
