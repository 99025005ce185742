"""Deriving missing velocity and acceleration channels of a record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DataValidationError
from ..record import MAX_ABS_VALUE, Record
from ._args import FloatArray, _as_signal, _reject_window
from .bandwidth import _default_cutoff
from .differentiate import _resolve_method, differentiate, gradient_derivative
from .savgol import default_savgol_window, savgol_cutoff_hz, savgol_derivative
from .spectral import SPECTRAL_CUTOFF_RATIO, spectral_derivative

__all__ = ["derive_missing"]


def _derive_one(
    name: str, fn: Callable[..., Any], src: FloatArray, dt: float, order: int, window: int | None
) -> tuple[FloatArray, str]:
    """Differentiate ``src`` and describe the settings used."""
    nth = "" if order == 1 else "2nd derivative, "
    if fn is savgol_derivative:
        w = default_savgol_window(src, dt, order) if window is None else window
        out = savgol_derivative(src, dt, order=order, window=w)
        fc = savgol_cutoff_hz(w, dt, order=order)
        return out, f"savgol ({nth}window {w} samples, -3 dB at {fc:.3g} Hz)"
    if fn is spectral_derivative:
        _reject_window("spectral", window, " (set `f_cut_hz` instead)")
        arr = _as_signal(src)
        fc = _default_cutoff(arr, dt, order, SPECTRAL_CUTOFF_RATIO)[0]
        out = spectral_derivative(arr, dt, order=order, f_cut_hz=fc)
        return out, f"spectral ({nth}cut-off {fc:.3g} Hz)"
    if fn is gradient_derivative:
        out = gradient_derivative(src, dt, order=order, window=window)
        return out, f"gradient ({nth}central differences, unsmoothed)"
    out = differentiate(src, dt, method=fn, order=order, window=window)
    settings = f"window {window} samples" if window is not None else "default settings"
    return out, f"{name} ({nth}{settings})"


def derive_missing(
    rec: Record, *, method: str | Callable[..., Any] = "savgol", window: int | None = None
) -> Record:
    """Derive velocity and acceleration where the record lacks them.

    Velocity is the first derivative of ``x``. Acceleration is the first
    derivative of ``v`` when ``v`` was measured, and otherwise the second
    derivative of ``x`` directly (never the derivative of a derived
    velocity, which would smooth twice). Measured channels are untouched.

    Parameters
    ----------
    rec : Record
        Record with at least ``t``, ``f`` and ``x``.
    method : str or callable
        Differentiator, see :func:`differentiate`.
    window : int or None, samples
        Savitzky–Golay window for every derivative (None: chosen from each
        source signal).

    Returns
    -------
    Record
        ``rec`` itself if nothing is missing; otherwise a copy with the new
        channels listed in ``derived``, one ``warnings`` note per channel
        saying how it was obtained, and units derived from those of ``x``
        (and ``v``).
    """
    need_v = rec.v is None
    need_a = rec.a is None
    if not (need_v or need_a):
        return rec
    name, fn = _resolve_method(method)
    dt = rec.dt
    changes: dict[str, Any] = {}
    added: list[str] = []
    notes: list[str] = []
    units = dict(rec.units)
    ux, ut, uv = rec.unit("x"), rec.unit("t"), rec.unit("v")
    if need_v:
        v, how = _derive_one(name, fn, rec.x, dt, 1, window)
        changes["v"] = v
        added.append("v")
        notes.append(f"v derived from x by {how}")
        units["v"] = f"{ux}/{ut}"
    if need_a:
        v_measured = rec.v is not None and "v" not in rec.derived
        if v_measured:
            a, how = _derive_one(name, fn, rec.channel("v"), dt, 1, window)
            notes.append(f"a derived from v by {how}")
            units["a"] = f"{uv}^2" if uv.endswith(f"/{ut}") else f"{uv}/{ut}"
        else:
            a, how = _derive_one(name, fn, rec.x, dt, 2, window)
            notes.append(f"a derived from x by {how}")
            units["a"] = f"{ux}/{ut}^2"
        changes["a"] = a
        added.append("a")
    for c in added:
        peak = float(np.max(np.abs(changes[c])))
        if not peak <= MAX_ABS_VALUE:
            label = "velocity" if c == "v" else "acceleration"
            raise DataValidationError(
                f"the {label} `{c}` derived from the record `{rec.name}` reaches {peak:.3g} {units[c]}, beyond the"
                f" limit {MAX_ABS_VALUE:g} of any channel (displacement up to {float(np.max(np.abs(rec.x))):.3g}"
                f" {ux} sampled every {dt:.3g} {ut}): check the displacement and time units"
            )
    return rec.replace(
        **changes,
        units=units,
        derived=tuple(rec.derived) + tuple(added),
        warnings=tuple(rec.warnings) + tuple(notes),
    )

