"""Zero-phase Butterworth low-pass filtering of signals and records."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import check_int as _check_int
from ..channels import parse_channel
from ..errors import DataValidationError, ModelSpecError
from ..record import Record
from ._args import FloatArray, _as_signal, _check_dt

__all__ = ["lowpass", "filter_record"]

_FILTER_CHANNELS: tuple[str, ...] = ("f", "x", "v", "a")


def lowpass(y: ArrayLike, dt: float, f_cut_hz: float, *, order: int = 4) -> FloatArray:
    """Zero-phase Butterworth low-pass filter.

    The filter (second-order sections) is run forward and backward
    (``scipy.signal.sosfiltfilt``), so there is no phase lag and the
    magnitude response is squared: ``f_cut_hz`` is the -3 dB point of one
    pass and the -6 dB point of the result.

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal (any unit).
    dt : float, s
        Sampling interval.
    f_cut_hz : float, Hz
        Cut-off, strictly between 0 and the Nyquist frequency ``0.5 / dt``.
    order : int
        Butterworth order of one pass (the result rolls off at twice it).

    Returns
    -------
    (n,) ndarray
        Filtered signal, same unit.

    Notes
    -----
    The signal is extended at both ends by point reflection about its first
    and last samples (scipy's ``padtype="odd"``), so noise on those two
    samples leaks into the filtered output over about one cut-off period at
    each end.
    """
    arr = _as_signal(y)
    dt = _check_dt(dt)
    order = _check_int("order", order, 1)
    nyquist = 0.5 / dt
    try:
        fc = float(f_cut_hz)
    except (TypeError, ValueError):
        fc = math.nan
    if not (math.isfinite(fc) and 0.0 < fc < nyquist):
        raise ModelSpecError(
            f"`f_cut_hz` must lie strictly between 0 and the Nyquist frequency {nyquist:.6g} Hz"
            f" (dt = {dt:.6g} s), got {f_cut_hz!r}"
        )
    from scipy import signal as sp_signal  # noqa: PLC0415 (0.4 s to import: only when filtering)

    sos = sp_signal.butter(order, fc, btype="low", output="sos", fs=1.0 / dt)
    n_sections = sos.shape[0]
    padlen = min(3 * (2 * n_sections + 1), arr.size - 1)
    return np.asarray(sp_signal.sosfiltfilt(sos, arr, padlen=padlen), dtype=np.float64)


def filter_record(
    rec: Record,
    f_cut_hz: float,
    *,
    channels: Iterable[str] = _FILTER_CHANNELS,
    order: int = 4,
) -> Record:
    """Zero-phase low-pass filter some channels of a record (see :func:`lowpass`).

    Parameters
    ----------
    rec : Record
        Record to filter.
    f_cut_hz : float, Hz
        Cut-off, strictly between 0 and the Nyquist frequency.
    channels : iterable of str
        Channels to filter: a letter ``f``, ``x``, ``v``, ``a`` selects that
        quantity at every DOF, a name with a DOF number (``x2``) one
        channel; those the record lacks are skipped.
    order : int
        Butterworth order of one pass.

    Returns
    -------
    Record
        A copy with the filtered channels and a ``warnings`` note (``rec``
        itself if none of the channels is present).
    """
    names = (channels,) if isinstance(channels, str) else tuple(channels)
    selected: list[str] = []
    for c in names:
        try:
            key = parse_channel(c)
        except DataValidationError:
            key = None
        if key is None or key.quantity == "t":
            raise ModelSpecError(
                f"`channels` names {c!r}, which cannot be filtered; valid channels are"
                f" {', '.join(_FILTER_CHANNELS)} (every DOF) or one of them with a DOF number (x2)"
            )
        selected.append(c)
    present = [c for c in rec.channels if c != "t" and any(_selects(s, c) for s in selected)]
    if not present:
        return rec
    dt = rec.dt
    new = {c: lowpass(rec.channel(c), dt, f_cut_hz, order=order) for c in present}
    note = (
        f"low-pass filtered {', '.join(present)} at {float(f_cut_hz):.6g} Hz"
        f" (zero-phase Butterworth, order {int(order)}, forward and backward)"
    )
    return rec.with_channels(new, warnings=tuple(rec.warnings) + (note,))


def _selects(selector: str, channel: str) -> bool:
    """Whether ``selector`` (a letter: that quantity at every DOF; or a channel name) selects ``channel``."""
    if selector in _FILTER_CHANNELS:
        return parse_channel(channel).quantity == selector
    return parse_channel(selector) == parse_channel(channel)
