"""What the pendulum figures share: the checks of their arguments (runs, labels, vectors, fields of a result
read by name so that the figures need no multibody import), axis labels and colours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import DataValidationError
from .common import FloatArray, _label

__all__ = ["MAX_PANELS"]


_T = _label("t", "s")


_X = _label("x_B", "m")


_Y = _label("y_B", "m")


_GREY = "#9a9a9a"


_DARK = "#333333"


#: Most columns of the side-by-side animation.
MAX_PANELS = 4


class _Run(Protocol):
    """What the figures read of a :class:`~nlid_core.multibody.pendulum.PendulumRun`."""

    @property
    def t(self) -> Any: ...
    @property
    def x_b(self) -> Any: ...
    @property
    def y_b(self) -> Any: ...


class _Bounds(Protocol):
    """What the figures read of an :class:`~nlid_core.multibody.interval.IntervalBounds`."""

    @property
    def t(self) -> Any: ...
    @property
    def x_min(self) -> Any: ...
    @property
    def x_max(self) -> Any: ...
    @property
    def y_min(self) -> Any: ...
    @property
    def y_max(self) -> Any: ...


# --------------------------------------------------------------------------- argument helpers
def _vector(name: str, value: Any, n: int | None = None) -> FloatArray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"`{name}` must be a numeric 1-D array, got {type(value).__name__}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise DataValidationError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise DataValidationError(f"`{name}` has {arr.size} samples, but its time axis has {n}")
    return arr


def _field(name: str, obj: Any, attr: str) -> Any:
    if not hasattr(obj, attr):
        raise DataValidationError(f"`{name}` has no field `{attr}` (got a {type(obj).__name__})")
    return getattr(obj, attr)


def _runs(name: str, runs: Any) -> list[Any]:
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise DataValidationError(f"`{name}` must be a sequence of runs, got {type(runs).__name__}")
    out = list(runs)
    if not out:
        raise DataValidationError(f"`{name}` is empty: give at least one run")
    return out


def _labels(labels: Sequence[str] | None, n: int, default: Sequence[str]) -> list[str]:
    if labels is None:
        return list(default)
    if isinstance(labels, str) or len(labels) != n:
        raise DataValidationError(f"`labels` must give one label per item ({n}), got {labels!r}")
    return [str(s) for s in labels]


def _run_label(run: Any, k: int) -> str:
    model = getattr(run, "model", None)
    return {"ancf": "flexible (ANCF)", "rigid": "rigid"}.get(str(model), f"run {k + 1}")


def _tip(name: str, run: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    t = _vector(f"{name}.t", _field(name, run, "t"))
    return t, _vector(f"{name}.x_b", _field(name, run, "x_b"), t.size), _vector(f"{name}.y_b", _field(name, run, "y_b"),
                                                                                 t.size)


def _nodes(name: str, run: Any, n: int) -> FloatArray:
    raw = _field(name, run, "nodes")
    if raw is None:
        raise DataValidationError(f"`{name}` has no node positions (`nodes` is None): simulate with nodes=True")
    arr = np.asarray(raw, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[0] != n or arr.shape[2] != 2 or arr.shape[1] < 2:
        raise DataValidationError(f"`{name}.nodes` must have shape ({n}, n_nodes >= 2, 2), got {arr.shape}")
    return arr


def _rgba(color: str, alpha: float) -> str:
    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"
