"""Grids of settings for excitation designs and identifiability studies.

A stepped sine dwells on ``steps`` frequencies spread evenly over a band; a stepped-amplitude test
repeats a signal at ``steps`` evenly spaced fractions of its amplitude; a regularisation path
sweeps the weight λ over decades; a design search tries a few chirp amplitudes and bands around a
starting design. The dashboard and scripts build these grids here rather than inline.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ._checks import check_int as _check_int
from .errors import ModelSpecError

__all__ = ["step_frequencies", "step_levels", "log_grid", "design_search_grid"]

FloatArray = NDArray[np.float64]

#: Candidate amplitudes of a design search, as fractions of the starting amplitude.
SEARCH_AMPLITUDE_FRACTIONS: tuple[float, ...] = (1 / 3, 1 / 1.5, 1.0)
#: Amplitudes (N) searched when the starting amplitude is 0.
SEARCH_DEFAULT_AMPLITUDES: tuple[float, ...] = (10.0, 20.0, 30.0)
#: Upper band edges of a design search, as multiples of the starting upper edge; the widest is
#: tried only while it stays below ``SEARCH_MAX_FS_FRACTION`` of the sampling rate.
SEARCH_BAND_MULTIPLES: tuple[float, ...] = (0.5, 1.0, 1.5)
SEARCH_MAX_FS_FRACTION = 0.2


def _finite(name: str, value: object) -> float:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ModelSpecError(f"`{name}` must be finite, got {value!r}")
    return out


def step_frequencies(f0_hz: float, f1_hz: float, steps: int) -> list[float]:
    """``steps`` frequencies evenly spaced from ``f0_hz`` to ``f1_hz`` (both included).

    Parameters
    ----------
    f0_hz : float, Hz
        First frequency.
    f1_hz : float, Hz
        Last frequency.
    steps : int
        Number of frequencies (at least 2).

    Returns
    -------
    list of float
    """
    lo = _finite("f0_hz", f0_hz)
    hi = _finite("f1_hz", f1_hz)
    n = _check_int("steps", steps, 2)
    return [lo + (hi - lo) * k / (n - 1) for k in range(n)]


def step_levels(steps: int) -> list[float]:
    """Amplitude fractions ``1/steps, 2/steps, ..., 1`` of a stepped-amplitude test.

    Parameters
    ----------
    steps : int
        Number of levels (at least 1).

    Returns
    -------
    list of float
    """
    n = _check_int("steps", steps, 1)
    return [(k + 1) / n for k in range(n)]


def log_grid(lo_exp: float, hi_exp: float, n: int = 13) -> FloatArray:
    """``n`` values from ``10**lo_exp`` to ``10**hi_exp``, evenly spaced in the logarithm.

    Parameters
    ----------
    lo_exp : float
        Decade exponent of the smallest value.
    hi_exp : float
        Decade exponent of the largest value (at least ``lo_exp``).
    n : int
        Number of values (at least 2).

    Returns
    -------
    (n,) ndarray
    """
    lo = _finite("lo_exp", lo_exp)
    hi = _finite("hi_exp", hi_exp)
    if hi < lo:
        raise ModelSpecError(f"`hi_exp` must be at least `lo_exp` = {lo:g}, got {hi:g}")
    return np.logspace(lo, hi, _check_int("n", n, 2))


def design_search_grid(
    amplitude_n: float, f0_hz: float, f1_hz: float, fs_hz: float
) -> tuple[tuple[float, ...], tuple[tuple[float, float], ...]]:
    """Chirp amplitudes and bands to try around a starting design.

    Parameters
    ----------
    amplitude_n : float, N
        Starting amplitude; the grid holds fractions ``SEARCH_AMPLITUDE_FRACTIONS`` of it
        (``SEARCH_DEFAULT_AMPLITUDES`` when it is 0).
    f0_hz : float, Hz
        Lower band edge, kept for every band.
    f1_hz : float, Hz
        Upper band edge; the bands end at ``SEARCH_BAND_MULTIPLES`` of it, the widest only while it
        stays below ``SEARCH_MAX_FS_FRACTION`` of ``fs_hz``.
    fs_hz : float, Hz
        Sampling rate.

    Returns
    -------
    amplitudes : tuple of float
    bands : tuple of (float, float)
    """
    amp = _finite("amplitude_n", amplitude_n)
    lo = _finite("f0_hz", f0_hz)
    hi = _finite("f1_hz", f1_hz)
    fs = _finite("fs_hz", fs_hz)
    if amp < 0:
        raise ModelSpecError(f"`amplitude_n` must be at least 0, got {amp:g}")
    amplitudes = tuple(amp * r for r in SEARCH_AMPLITUDE_FRACTIONS) if amp > 0 else SEARCH_DEFAULT_AMPLITUDES
    widest = max(SEARCH_BAND_MULTIPLES)
    multiples = [m for m in SEARCH_BAND_MULTIPLES if m < widest or m * hi < SEARCH_MAX_FS_FRACTION * fs]
    return amplitudes, tuple((lo, m * hi) for m in multiples)
