"""Deriving missing velocity and acceleration channels of a record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..channels import ChannelKey, channel_name
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
    """Derive velocity and acceleration where the record lacks them, at every DOF.

    Velocity is the first derivative of ``x``. Acceleration is the first
    derivative of ``v`` when ``v`` was measured, and otherwise the second
    derivative of ``x`` directly (never the derivative of a derived
    velocity, which would smooth twice). Measured channels are untouched.
    With several DOFs the same is done for each: ``v2`` from ``x2``, ``a2``
    from a measured ``v2`` or else from ``x2``.

    Parameters
    ----------
    rec : Record
        Record with at least ``t``, ``f`` and ``x`` (the displacement of
        every DOF).
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
        (and ``v``) of the same DOF.

    Raises
    ------
    DataValidationError
        A derived channel beyond the magnitude limit of any channel
        (usually a wrong displacement or time unit).
    """
    n_dof = rec.n_dof
    todo = [dof for dof in range(1, n_dof + 1)
            if not (rec.has(_name("v", dof, n_dof)) and rec.has(_name("a", dof, n_dof)))]
    if not todo:
        return rec
    name, fn = _resolve_method(method)
    dt = rec.dt
    changes: dict[str, FloatArray] = {}
    notes: list[str] = []
    units = dict(rec.units)
    ut = rec.unit("t")
    for dof in todo:
        xc, vc, ac = (_name(q, dof, n_dof) for q in ("x", "v", "a"))
        ux, uv = rec.unit(xc), rec.unit(vc)
        if not rec.has(vc):
            changes[vc], how = _derive_one(name, fn, rec.channel(xc), dt, 1, window)
            notes.append(f"{vc} derived from {xc} by {how}")
            units[vc] = f"{ux}/{ut}"
        if not rec.has(ac):
            if rec.has(vc) and not rec.is_derived(vc):
                changes[ac], how = _derive_one(name, fn, rec.channel(vc), dt, 1, window)
                notes.append(f"{ac} derived from {vc} by {how}")
                units[ac] = f"{uv}^2" if uv.endswith(f"/{ut}") else f"{uv}/{ut}"
            else:
                changes[ac], how = _derive_one(name, fn, rec.channel(xc), dt, 2, window)
                notes.append(f"{ac} derived from {xc} by {how}")
                units[ac] = f"{ux}/{ut}^2"
    for c, values in changes.items():
        peak = float(np.max(np.abs(values)))
        if not peak <= MAX_ABS_VALUE:
            label = "velocity" if c.startswith("v") else "acceleration"
            xc = "x" + c[1:]
            raise DataValidationError(
                f"the {label} `{c}` derived from the record `{rec.name}` reaches {peak:.3g} {units[c]}, beyond the"
                f" limit {MAX_ABS_VALUE:g} of any channel (displacement up to"
                f" {float(np.max(np.abs(rec.channel(xc)))):.3g} {rec.unit(xc)} sampled every {dt:.3g} {ut}):"
                " check the displacement and time units"
            )
    return rec.with_channels(
        changes,
        units=units,
        derived=tuple(rec.derived) + tuple(changes),
        warnings=tuple(rec.warnings) + tuple(notes),
    )


def _name(quantity: str, dof: int, n_dof: int) -> str:
    return channel_name(ChannelKey(quantity, dof), n_dof)
