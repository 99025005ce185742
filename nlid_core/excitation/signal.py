"""The result type of every generator, :class:`Excitation`, and the crest factor of a signal."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._checks import check_positive
from ..errors import ModelSpecError
from .grid import FloatArray

#: Power fractions bounding :attr:`Excitation.band_hz` when the settings hold no design band.
_BAND_FRACTIONS = (0.005, 0.995)
#: Tolerated deviation of a time step from ``1 / fs_hz`` (relative).
_UNIFORM_RTOL = 1e-3


def crest_factor(y: ArrayLike) -> float:
    """Crest factor ``max|y| / rms(y)`` of a signal.

    A sine has √2 ≈ 1.414, a Schroeder multisine ≈ 1.6–1.9, Gaussian noise ≈ 3–4.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit; the ratio is dimensionless). Must be 1-D, non-empty and finite.

    Returns
    -------
    float
        The crest factor (dimensionless); NaN when ``y`` is identically zero.

    Raises
    ------
    ModelSpecError
        ``y`` is not a non-empty, finite 1-D array.
    """
    arr = _as_signal("y", y)
    rms = float(np.sqrt(np.mean(arr * arr)))
    if rms == 0.0:
        return math.nan
    return float(np.max(np.abs(arr))) / rms


@dataclass(frozen=True, kw_only=True)
class Excitation:
    """A sampled force signal designed for an identification test.

    Attributes
    ----------
    t_s : (n,) ndarray, s
        Sample times, uniform with step ``1 / fs_hz`` (within 1e-3 relative).
    force : (n,) ndarray, N
        Force at the samples.
    fs_hz : float, Hz
        Sampling rate.
    kind : str
        Generator name (a key of ``EXCITATIONS``), or ``"custom"``.
    settings : mapping
        Design values: the generator's arguments (with durations as realised on the sample grid)
        and derived values such as ``band_hz`` (Hz) or the level boundaries of a stepped amplitude.
        Freezing is shallow: the mapping is a private copy but not locked.
    description : str
        One line for reports.
    force_unit : str
        Unit of ``force`` (``"N"`` unless the design is in a record's units, e.g. ``"V"``); the
        properties below (``rms``, ``peak``, the spectrum) are in this unit.

    Raises
    ------
    ModelSpecError
        The arrays differ in length, have fewer than 2 samples, are not finite, or the time step does
        not match ``fs_hz``.
    """

    t_s: FloatArray
    force: FloatArray
    fs_hz: float
    kind: str = "custom"
    settings: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    force_unit: str = "N"

    def __post_init__(self) -> None:
        fs = check_positive("fs_hz", self.fs_hz, "Hz")
        t = _as_signal("t_s", self.t_s)
        f = _as_signal("force", self.force)
        if t.size != f.size:
            raise ModelSpecError(f"`t_s` and `force` must have one length; got {t.size} and {f.size}")
        if t.size < 2:
            raise ModelSpecError(f"`t_s` must hold at least 2 samples, got {t.size}")
        steps = np.diff(t)
        if not np.all(np.abs(steps * fs - 1.0) <= _UNIFORM_RTOL):
            raise ModelSpecError(
                f"`t_s` must be uniform with step 1/fs_hz = {1.0 / fs:.6g} s; steps range "
                f"{float(steps.min()):.6g}..{float(steps.max()):.6g} s"
            )
        object.__setattr__(self, "fs_hz", fs)
        object.__setattr__(self, "t_s", t)
        object.__setattr__(self, "force", f)
        object.__setattr__(self, "kind", str(self.kind))
        object.__setattr__(self, "settings", dict(self.settings))

    @property
    def n_samples(self) -> int:
        """Number of samples."""
        return int(self.force.size)

    @property
    def duration_s(self) -> float:
        """Duration played at ``fs_hz``: ``n / fs_hz`` (s)."""
        return self.n_samples / self.fs_hz

    @property
    def rms(self) -> float:
        """Root mean square of the force (in ``force_unit``)."""
        return float(np.sqrt(np.mean(self.force * self.force)))

    @property
    def peak(self) -> float:
        """Largest absolute force (in ``force_unit``)."""
        return float(np.max(np.abs(self.force)))

    @property
    def crest_factor(self) -> float:
        """``peak / rms`` (dimensionless; NaN for a zero force)."""
        return crest_factor(self.force)

    @property
    def band_hz(self) -> tuple[float, float]:
        """Excited band ``(f_lo, f_hi)`` in Hz.

        The design band from ``settings["band_hz"]`` when a generator recorded it; otherwise the band
        holding 0.5 %..99.5 % of the force power above 0 Hz (periodogram of the whole signal).
        """
        band = self.settings.get("band_hz")
        if band is not None:
            lo, hi = band
            return float(lo), float(hi)
        freq, amp = self.spectrum()
        power = amp[1:] ** 2
        total = float(power.sum())
        if total == 0.0:
            return 0.0, 0.0
        cum = np.cumsum(power) / total
        lo_i = int(np.searchsorted(cum, _BAND_FRACTIONS[0]))
        hi_i = min(int(np.searchsorted(cum, _BAND_FRACTIONS[1])), power.size - 1)
        return float(freq[1 + lo_i]), float(freq[1 + hi_i])

    def spectrum(self) -> tuple[FloatArray, FloatArray]:
        """Single-sided amplitude spectrum of the force (rfft, no window).

        Returns
        -------
        freq_hz : (n // 2 + 1,) ndarray, Hz
            Frequencies ``k · fs_hz / n``.
        amplitude : (n // 2 + 1,) ndarray, N
            ``|X_k| · 2 / n`` (DC and the Nyquist bin not doubled): a sine of amplitude A on a bin
            shows A at that bin.
        """
        n = self.n_samples
        amp = np.abs(np.fft.rfft(self.force)) / n
        stop = amp.size - 1 if n % 2 == 0 else amp.size
        amp[1:stop] *= 2.0
        freq = np.fft.rfftfreq(n, 1.0 / self.fs_hz)
        return freq.astype(np.float64), amp.astype(np.float64)

    def to_frame(self) -> pd.DataFrame:
        """The signal as a DataFrame with columns ``t`` (s) and ``f`` (``force_unit``), e.g. for CSV export."""
        return pd.DataFrame({"t": self.t_s.copy(), "f": self.force.copy()})


def _as_signal(name: str, value: ArrayLike) -> FloatArray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a 1-D array of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ModelSpecError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelSpecError(f"`{name}` has non-finite values at index {int(np.flatnonzero(~np.isfinite(arr))[0])}")
    return arr
