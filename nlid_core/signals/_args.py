"""Argument checks and small helpers shared by the differentiators and filters."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..record import MAX_DT, MIN_DT

FloatArray = NDArray[np.float64]
_MIN_SAMPLES = 8


def _as_signal(y: ArrayLike, name: str = "y", min_len: int = _MIN_SAMPLES) -> FloatArray:
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"`{name}` is not numeric: {exc}") from None
    if arr.ndim != 1:
        raise DataValidationError(f"`{name}` must be a 1-D array, got shape {arr.shape}")
    if arr.size < min_len:
        raise DataValidationError(f"`{name}` has {arr.size} samples; at least {min_len} are needed")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataValidationError(f"`{name}` has a non-finite value ({arr[i]}) at index {i}")
    return arr


def _check_dt(dt: float) -> float:
    val = _check_positive("dt", dt, "time step in seconds", DataValidationError)
    if not MIN_DT * (1 - 1e-6) <= val <= MAX_DT * (1 + 1e-6):
        raise DataValidationError(
            f"`dt` must lie between {MIN_DT:g} s and {MAX_DT:g} s (the sampling intervals a record accepts),"
            f" got {val:.3g} s"
        )
    return val


def _check_order(order: int) -> int:
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order not in (1, 2):
        raise ModelSpecError(f"`order` must be 1 (first derivative) or 2 (second derivative), got {order!r}")
    return int(order)


def _reject_window(method: str, window: Any, hint: str = "") -> None:
    if window is not None:
        raise ModelSpecError(f"`window` is not used by the {method} differentiator{hint}, got {window!r}")


def _odd_floor(w: float) -> int:
    k = int(math.floor(w))
    return k if k % 2 == 1 else k - 1


def _odd_ceil(w: float) -> int:
    k = int(math.ceil(w))
    return k if k % 2 == 1 else k + 1


def _linear_trend(y: FloatArray) -> tuple[float, float]:
    """Least-squares line ``intercept + slope * i`` through ``y`` (i = sample index)."""
    n = y.size
    i_mean = 0.5 * (n - 1)
    y_mean = float(y.mean())
    # sum (i - i_mean)^2 = n (n^2 - 1) / 12
    sxx = n * (n * n - 1) / 12.0
    slope = float(np.dot(np.arange(n, dtype=np.float64) - i_mean, y - y_mean) / sxx)
    return y_mean - slope * i_mean, slope


