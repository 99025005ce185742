"""Two-tone test: levels of the harmonics and intermodulation products of two excitation tones.

A linear system answers a two-tone force only at f1 and f2; a nonlinear one adds harmonics and
intermodulation products (2·f1 − f2, f1 + f2, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import check_int as _check_int
from .._checks import check_positive as _check_positive
from ..record import Record
from ._args import _check_record

__all__ = ["IntermodulationLine", "two_tone_products"]


@dataclass(frozen=True, kw_only=True)
class IntermodulationLine:
    """One combination frequency p·f1 + q·f2 of a two-tone test and its level.

    Attributes
    ----------
    p, q : int
    freq_hz : float
    level_db : float
        Amplitude of x at that frequency relative to the larger of the two tones (dB).
    """

    p: int
    q: int
    freq_hz: float
    level_db: float


def two_tone_products(rec: Record, f1_hz: float, f2_hz: float, *, order: int = 3) -> tuple[IntermodulationLine, ...]:
    """Levels of the sum and difference frequencies p·f1 + q·f2 (|p| + |q| <= order) in x.

    A linear system answers a two-tone force only at f1 and f2; a nonlinear one
    adds harmonics and intermodulation products (2·f1 − f2, f1 + f2, ...).

    Parameters
    ----------
    rec : Record
        Steady-state record under a two-tone force.
    f1_hz, f2_hz : float, Hz
        The two excitation frequencies.
    order : int
        Highest |p| + |q| considered (2 to 7).
    """
    rec = _check_record(rec)
    f1 = _check_positive("f1_hz", f1_hz, "Hz")
    f2 = _check_positive("f2_hz", f2_hz, "Hz")
    order = _check_int("order", order, 2, 7)
    x = rec.x - np.mean(rec.x)
    n = x.size
    win = np.hanning(n)
    spec = np.abs(np.fft.rfft(x * win)) * 2 / win.sum()
    freq = np.fft.rfftfreq(n, rec.dt)

    def amp(f: float) -> float:
        k = int(round(f / (freq[1] - freq[0])))
        lo, hi = max(k - 2, 0), min(k + 3, spec.size)
        return float(spec[lo:hi].max()) if lo < hi else 0.0

    ref = max(amp(f1), amp(f2), 1e-300)
    out: list[IntermodulationLine] = []
    nyq = 0.5 * rec.fs
    for p in range(-order, order + 1):
        for q in range(-order, order + 1):
            if (p, q) in ((1, 0), (0, 1)) or abs(p) + abs(q) > order or abs(p) + abs(q) < 2:
                continue
            f = p * f1 + q * f2
            if f <= 0 or f >= nyq:
                continue
            if any(line.freq_hz == f for line in out):
                continue
            out.append(IntermodulationLine(p=p, q=q, freq_hz=f, level_db=20 * math.log10(max(amp(f), 1e-300) / ref)))
    return tuple(sorted(out, key=lambda line: line.freq_hz))
