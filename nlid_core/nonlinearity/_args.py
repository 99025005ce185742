"""Argument checks and unit strings shared by the nonlinearity-evidence modules."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._checks import check_int as _check_int
from ..errors import DataValidationError, ModelSpecError
from ..record import CHANNEL_LABELS, CHANNELS, Record
from ..signals import derive_missing
from .thresholds import DEFAULT_NPERSEG, SINGLE_SEGMENT_TAPER

FloatArray = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]


def _check_record(rec: Any, name: str = "rec") -> Record:
    if not isinstance(rec, Record):
        raise DataValidationError(f"`{name}` must be a Record, got {type(rec).__name__}")
    return rec




def _check_channel(rec: Record, name: str, value: Any) -> str:
    valid = CHANNELS[1:]
    if not isinstance(value, str) or value not in valid:
        raise ModelSpecError(f"`{name}` must be one of {', '.join(valid)}, got {value!r}")
    if getattr(rec, value) is None:
        raise DataValidationError(
            f"`{name}`: record `{rec.name}` has no `{value}` ({CHANNEL_LABELS[value]}) channel;"
            " measure it or derive it (signals.derive_missing)"
        )
    return value


def _check_nperseg(nperseg: Any, n: int) -> int:
    if nperseg is None:
        return min(n, max(DEFAULT_NPERSEG, n // 8))
    seg = _check_int("nperseg", nperseg, 8)
    if seg > n:
        raise DataValidationError(f"`nperseg` = {seg} exceeds the record length ({n} samples)")
    return seg


def _spectral_window(nperseg: int, n: int) -> str | tuple[str, float]:
    """Hann, or a Tukey window (10 % cosine tapers) when one segment spans the whole record."""
    return ("tukey", SINGLE_SEGMENT_TAPER) if nperseg >= n else "hann"


def _power_unit(unit: str) -> str:
    u = unit.strip() or "1"
    return f"{u}^2" if all(ch.isalnum() or ch == "_" for ch in u) else f"({u})^2"


def _ratio_unit(num: str, den: str) -> str:
    den_s = den if all(ch.isalnum() or ch == "_" for ch in den) else f"({den})"
    return f"{num}/{den_s}"



def _with_va(rec: Record) -> Record:
    return rec if rec.v is not None and rec.a is not None else derive_missing(rec)


def _unwrapped_deg(z: ComplexArray) -> FloatArray:
    """Phase of the lines ``z`` in degrees, unwrapped robustly.

    ``np.unwrap`` over thousands of noisy lines steps by 360° wherever two neighbours differ by more
    than 180° by noise alone, and the steps accumulate (a broadband record's phase drifts to
    thousands of degrees). Here the reference is the unwrapped phase of the unit phasors smoothed over
    about 1/200 of the lines (plain ``np.unwrap`` for up to 400 lines), and each line takes the branch
    of its own phase nearest to that reference, so noise moves single lines, never the curve.
    """
    z = np.asarray(z, dtype=np.complex128)
    ang = np.angle(z)
    if z.size == 0:
        return np.asarray(ang, dtype=np.float64)
    width = z.size // 200
    if width < 2:
        return np.asarray(np.degrees(np.unwrap(ang)), dtype=np.float64)
    mag = np.abs(z)
    unit = np.where(mag > 0, z / np.where(mag > 0, mag, 1.0), 0.0)
    kernel = np.ones(width) / width
    smooth = np.convolve(unit, kernel, mode="same")
    ref = np.unwrap(np.angle(smooth))
    branch = np.round((ref - ang) / (2.0 * np.pi))
    return np.asarray(np.degrees(ang + 2.0 * np.pi * branch), dtype=np.float64)
