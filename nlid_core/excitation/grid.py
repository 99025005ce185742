"""The sample grid, design limits and argument checks shared by every excitation generator.

Samples lie on ``t = i / fs_hz`` for ``i = 0 .. n - 1`` with ``n = round(duration_s · fs_hz)``.
A design needs at least ``MIN_SAMPLES`` samples and its band below the Nyquist frequency divided
by ``NYQUIST_MARGIN`` (at least 10 samples per cycle at the top of the band). Every check raises a
:class:`~nlid_core.errors.ModelSpecError` naming the argument.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._checks import check_positive
from ..errors import ModelSpecError

FloatArray = NDArray[np.float64]

#: Fewest samples an excitation may have.
MIN_SAMPLES = 100
#: The highest excited frequency must not exceed ``fs_hz / 2 / NYQUIST_MARGIN`` (Nyquist / 2.5,
#: i.e. at least 10 samples per cycle).
NYQUIST_MARGIN = 2.5


def _check_nonnegative(name: str, value: Any, unit: str) -> float:
    try:
        val = float(value)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a number >= 0 ({unit}), got {value!r}") from None
    if not (math.isfinite(val) and val >= 0):
        raise ModelSpecError(f"`{name}` must be a finite number >= 0 ({unit}), got {value!r}")
    return val


def _grid(fs_hz: Any, duration_s: Any) -> tuple[float, float, int, FloatArray]:
    """(fs, duration, n, t) with ``n = round(duration·fs)`` >= MIN_SAMPLES samples at ``i / fs``."""
    fs = check_positive("fs_hz", fs_hz, "Hz")
    duration = check_positive("duration_s", duration_s, "s")
    n = round(duration * fs)
    if n < MIN_SAMPLES:
        raise ModelSpecError(f"`duration_s` · `fs_hz` must give at least {MIN_SAMPLES} samples; got {n}")
    return fs, duration, n, np.arange(n, dtype=np.float64) / fs


def _max_frequency(fs: float) -> float:
    return fs / 2.0 / NYQUIST_MARGIN


def _band(f0_hz: Any, f1_hz: Any, fs: float, *, allow_zero: bool) -> tuple[float, float]:
    f0 = _check_nonnegative("f0_hz", f0_hz, "Hz") if allow_zero else check_positive("f0_hz", f0_hz, "Hz")
    f1 = check_positive("f1_hz", f1_hz, "Hz")
    if not f1 > f0:
        raise ModelSpecError(f"`f1_hz` ({f1:g} Hz) must be above `f0_hz` ({f0:g} Hz)")
    f_max = _max_frequency(fs)
    if f1 > f_max * (1 + 1e-12):
        raise ModelSpecError(
            f"`f1_hz` = {f1:g} Hz is above fs_hz/{2 * NYQUIST_MARGIN:g} = {f_max:g} Hz (Nyquist/{NYQUIST_MARGIN:g}); "
            "raise `fs_hz` or lower `f1_hz`"
        )
    return f0, f1


def _check_taper(name: str, value: Any, span_s: float) -> float:
    taper = _check_nonnegative(name, value, "s")
    if taper > span_s / 2.0:
        raise ModelSpecError(f"`{name}` = {taper:g} s must be at most half of {span_s:g} s")
    return taper


def _taper_window(n: int, n_ramp: int) -> FloatArray:
    """Ones with a raised-cosine rise over the first ``n_ramp`` samples and fall over the last."""
    w = np.ones(n)
    if n_ramp > 0:
        rise = 0.5 * (1.0 - np.cos(np.pi * np.arange(n_ramp) / n_ramp))
        w[:n_ramp] = rise
        w[n - n_ramp:] = np.minimum(w[n - n_ramp:], rise[::-1])
    return w


def _one_amplitude(amplitude_n: Any, rms_n: Any, unit: str = "N") -> float:
    if (amplitude_n is None) == (rms_n is None):
        raise ModelSpecError(f"give the rms force as exactly one of `amplitude_n` or `rms_n` ({unit})")
    if rms_n is not None:
        return check_positive("rms_n", rms_n, unit)
    return check_positive("amplitude_n", amplitude_n, unit)


def _as_frequencies(values: Any, fs: float) -> FloatArray:
    try:
        freqs = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelSpecError("`frequencies_hz` must be a sequence of numbers (Hz)") from None
    freqs = np.atleast_1d(freqs)
    if freqs.ndim != 1 or freqs.size == 0:
        raise ModelSpecError(f"`frequencies_hz` must be a non-empty 1-D sequence, got shape {freqs.shape}")
    f_max = _max_frequency(fs)
    for i, f in enumerate(freqs):
        if not (math.isfinite(f) and f > 0):
            raise ModelSpecError(f"`frequencies_hz`[{i}] must be a positive finite number (Hz), got {f!r}")
        if f > f_max * (1 + 1e-12):
            raise ModelSpecError(
                f"`frequencies_hz`[{i}] = {f:g} Hz is above fs_hz/{2 * NYQUIST_MARGIN:g} = {f_max:g} Hz; "
                "raise `fs_hz`"
            )
    return freqs


def _as_levels(values: Any) -> FloatArray:
    try:
        levels = np.atleast_1d(np.array(values, dtype=np.float64))
    except (TypeError, ValueError):
        raise ModelSpecError("`levels` must be a sequence of numbers") from None
    if levels.ndim != 1 or levels.size == 0:
        raise ModelSpecError(f"`levels` must be a non-empty 1-D sequence, got shape {levels.shape}")
    for i, v in enumerate(levels):
        if not (math.isfinite(v) and v > 0):
            raise ModelSpecError(f"`levels`[{i}] must be a positive finite multiplier, got {v!r}")
    return levels
