"""Power spectra of a record: Welch PSD, the excitation band and the spectrogram.

A linear system driven by a force has no response outside the force's band; :func:`spectrum`
shows where the power of each channel lies, :func:`excitation_band` where the force's lies, and
:func:`spectrogram` the time–frequency picture in which harmonics of a sweep appear as lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import signal as sp_signal

from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..record import CHANNELS, Record
from ._args import FloatArray, _check_channel, _check_nperseg, _check_record, _power_unit, _spectral_window
from .thresholds import (
    _MAX_SPECTROGRAM_COLUMNS,
    _MIN_WINDOW_SAMPLES,
    _SPECTROGRAM_BAND_MULTIPLE,
    _SPECTROGRAM_RANGE_DB,
    BAND_POWER_FRACTIONS,
    DEFAULT_WINDOW_S,
    SINGLE_SEGMENT_TAPER,
)

__all__ = ["Spectrum", "Spectrogram", "welch_psd", "spectrum", "power_band", "excitation_band", "spectrogram"]


@dataclass(frozen=True, kw_only=True)
class Spectrum:
    """Welch power spectral densities of some channels of one record.

    Attributes
    ----------
    freq_hz : (m,) ndarray
        Frequencies (Hz), 0 to the Nyquist frequency.
    psd : mapping
        Channel name -> one-sided PSD, (m,) ndarray in ``unit²/Hz``.
    units : mapping
        Channel name -> unit of the channel itself (the PSD is in that unit squared per Hz).
    record : str
        Name of the record.
    nperseg : int
        Welch segment length (samples).
    band_hz : (float, float)
        Excitation band of the record (see :func:`excitation_band`); NaNs when unknown.
    """

    freq_hz: FloatArray
    psd: Mapping[str, FloatArray]
    units: Mapping[str, str]
    record: str = ""
    nperseg: int = 0
    band_hz: tuple[float, float] = (math.nan, math.nan)

    def psd_unit(self, channel: str) -> str:
        """Unit of the PSD of ``channel``, e.g. ``N^2/Hz``."""
        return f"{_power_unit(self.units[channel])}/Hz"

    def psd_db(self, channel: str) -> FloatArray:
        """PSD of ``channel`` in dB re 1 unit²/Hz (zeros floored 300 dB below the maximum)."""
        p = np.asarray(self.psd[channel], dtype=np.float64)
        top = float(np.max(p)) if p.size else 0.0
        floor = top * 1e-30 if top > 0 else 1e-300
        return 10.0 * np.log10(np.maximum(p, floor))

    def peak_hz(self, channel: str = "f") -> float | None:
        """Frequency (Hz) of the largest PSD bin of ``channel`` above 0 Hz.

        Parameters
        ----------
        channel : str
            Channel whose peak is wanted (the force by default: the strongest excitation frequency).

        Returns
        -------
        float or None
            None when the spectrum lacks ``channel`` or has no bin above 0 Hz.
        """
        if channel not in self.psd or self.freq_hz.size < 2:
            return None
        p = np.asarray(self.psd[channel], dtype=np.float64)
        return float(self.freq_hz[1:][np.argmax(p[1:])])

    def tonal_hz(self, channel: str = "f", share: float = 0.5) -> float | None:
        """The peak frequency of ``channel`` when the record is tonal there: the peak and its two neighbours
        on each side hold at least ``share`` of the power (a sine; not a multisine, noise or a sweep, whose
        strongest line has no harmonics worth marking). None otherwise."""
        peak = self.peak_hz(channel)
        if peak is None:
            return None
        p = np.asarray(self.psd[channel], dtype=np.float64)
        total = float(np.sum(p[1:]))
        k = int(np.argmax(p[1:])) + 1
        return peak if total > 0 and float(np.sum(p[max(k - 2, 1):k + 3])) >= share * total else None



class Spectrogram(NamedTuple):
    """Short-time power spectrum (unpacks as ``times, freqs, power_db``)."""

    times_s: FloatArray
    """Centre time of each column (s)."""
    freq_hz: FloatArray
    """Frequencies of the rows (Hz)."""
    power_db: FloatArray
    """(freqs, times) PSD in dB re 1 unit²/Hz."""


def welch_psd(y: ArrayLike, fs: float, *, nperseg: int | None = None) -> tuple[FloatArray, FloatArray]:
    """One-sided Welch PSD of a uniformly sampled signal (Hann window, 50 % overlap, mean removed).

    A single segment spanning the whole signal uses a Tukey window (``SINGLE_SEGMENT_TAPER``) instead,
    so that every part of a sweep counts equally.

    Parameters
    ----------
    y : (n,) array_like
        Signal (at least 8 samples, finite).
    fs : float
        Sampling rate (Hz).
    nperseg : int or None
        Segment length; default ``min(n, max(DEFAULT_NPERSEG, n // 8))``.

    Returns
    -------
    freq_hz, psd : (m,) ndarray
        Frequencies (Hz) and PSD (unit²/Hz).
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8:
        raise DataValidationError(f"`y` must be a 1-D signal of at least 8 samples, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        i = int(np.argmax(~np.isfinite(arr)))
        raise DataValidationError(f"`y` has a non-finite value at index {i}")
    rate = _check_positive("fs", fs, "Hz")
    seg = _check_nperseg(nperseg, arr.size)
    freq, psd = sp_signal.welch(
        arr, fs=rate, window=_spectral_window(seg, arr.size), nperseg=seg, noverlap=seg // 2, detrend="constant"
    )
    return np.asarray(freq, dtype=np.float64), np.asarray(psd, dtype=np.float64)


def spectrum(rec: Record, *, channels: Sequence[str] = ("f", "x"), nperseg: int | None = None) -> Spectrum:
    """Welch power spectral density of some channels of a record.

    Parameters
    ----------
    rec : Record
    channels : sequence of str
        Channels wanted (``f``, ``x``, ``v``, ``a``); those the record lacks are skipped.
    nperseg : int or None
        Welch segment length (samples, Hann window, 50 % overlap; a Tukey window when one segment
        spans the record); default ``min(n, max(DEFAULT_NPERSEG, n // 8))``.

    Returns
    -------
    Spectrum

    Raises
    ------
    ModelSpecError
        An unknown channel name.
    DataValidationError
        None of ``channels`` is in the record, or ``nperseg`` exceeds the record.
    """
    rec = _check_record(rec)
    if isinstance(channels, str):
        channels = (channels,)
    wanted = tuple(channels)
    bad = [c for c in wanted if c not in CHANNELS[1:]]
    if bad or not wanted:
        raise ModelSpecError(f"`channels` must name some of {', '.join(CHANNELS[1:])}, got {list(wanted)}")
    present = [c for c in dict.fromkeys(wanted) if getattr(rec, c) is not None]
    if not present:
        raise DataValidationError(f"`channels`: record `{rec.name}` has none of {list(wanted)}")
    seg = _check_nperseg(nperseg, rec.n)
    psd: dict[str, FloatArray] = {}
    freq = np.zeros(0)
    for c in present:
        freq, psd[c] = welch_psd(rec.channel(c), rec.fs, nperseg=seg)
    return Spectrum(
        freq_hz=freq, psd=psd, units={c: rec.unit(c) for c in present}, record=rec.name, nperseg=seg,
        band_hz=_band_or_nan(rec),
    )


def _periodogram(y: FloatArray, fs: float) -> tuple[FloatArray, FloatArray]:
    """Periodogram of a whole signal with short tapers: every part of a sweep counts equally."""
    freq, psd = sp_signal.periodogram(y, fs=fs, window=("tukey", SINGLE_SEGMENT_TAPER), detrend="constant")
    return np.asarray(freq, dtype=np.float64), np.asarray(psd, dtype=np.float64)


def _force_periodogram(rec: Record) -> tuple[FloatArray, FloatArray]:
    return _periodogram(rec.f, rec.fs)


def _band_from_psd(
    freq: FloatArray, psd: FloatArray, lo: float, hi: float, what: str = "`f`: the force"
) -> tuple[float, float]:
    p = np.where(freq > 0, psd, 0.0)
    cum = np.cumsum(p)
    total = float(cum[-1])
    if total <= 0:
        raise DataValidationError(f"{what} has no power above 0 Hz (it is constant)")
    cum /= total
    f_lo = float(np.interp(lo, cum, freq))
    f_hi = float(np.interp(hi, cum, freq))
    return f_lo, max(f_hi, f_lo)


def _check_fractions(fractions: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in fractions)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`fractions` must be two numbers, got {fractions!r}") from None
    if not 0 <= lo < hi <= 1:
        raise ModelSpecError(f"`fractions` must satisfy 0 <= lower < upper <= 1, got {fractions!r}")
    return lo, hi


def power_band(
    y: ArrayLike, fs: float, *, fractions: tuple[float, float] = BAND_POWER_FRACTIONS
) -> tuple[float, float]:
    """Frequency band holding most of a signal's power (cumulative tapered periodogram).

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal.
    fs : float
        Sampling rate (Hz).
    fractions : (float, float)
        Cumulative power fractions of the lower and upper edge (default 1 % and 99 %).

    Returns
    -------
    (f_lo, f_hi) : (float, float)
        Band edges (Hz).
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8 or not np.isfinite(arr).all():
        raise DataValidationError(f"`y` must be a finite 1-D signal of at least 8 samples, got shape {arr.shape}")
    rate = _check_positive("fs", fs, "Hz")
    lo, hi = _check_fractions(fractions)
    return _band_from_psd(*_periodogram(arr, rate), lo, hi, what="`y`")


def _band_or_nan(rec: Record) -> tuple[float, float]:
    try:
        return _band_from_psd(*_force_periodogram(rec), *BAND_POWER_FRACTIONS)
    except DataValidationError:
        return (math.nan, math.nan)


def excitation_band(rec: Record, *, fractions: tuple[float, float] = BAND_POWER_FRACTIONS) -> tuple[float, float]:
    """Frequency band holding most of the force power.

    The band is read from the cumulative periodogram of the whole force (Tukey window with
    ``SINGLE_SEGMENT_TAPER``), so every part of a sweep counts equally.

    Parameters
    ----------
    rec : Record
    fractions : (float, float)
        Cumulative power fractions of the lower and upper edge (default 1 % and 99 %).

    Returns
    -------
    (f_lo, f_hi) : (float, float)
        Band edges (Hz).

    Raises
    ------
    DataValidationError
        The force is constant (no power above 0 Hz).
    """
    rec = _check_record(rec)
    lo, hi = _check_fractions(fractions)
    return _band_from_psd(*_force_periodogram(rec), lo, hi)



def spectrogram(
    rec: Record, channel: str = "x", *, window_s: float | None = None, max_freq_hz: float | None = None
) -> Spectrogram:
    """Short-time power spectrum of one channel (for a time–frequency plot).

    Parameters
    ----------
    rec : Record
    channel : str
        Channel (``f``, ``x``, ``v``, ``a``).
    window_s : float or None
        Hann window length (s); default ``DEFAULT_WINDOW_S`` (at most a quarter of the record).
        Windows overlap by 75 %; for long records the overlap shrinks (down to none) to keep the
        number of columns near 400.
    max_freq_hz : float or None
        Highest frequency returned; default 8 times the upper edge of the excitation band (at most
        the Nyquist frequency).

    Returns
    -------
    Spectrogram
        ``(times_s, freq_hz, power_db)`` with ``power_db`` of shape (freqs, times) in dB re
        1 unit²/Hz, floored 120 dB below its maximum.
    """
    rec = _check_record(rec)
    y = rec.channel(_check_channel(rec, "channel", channel))
    if window_s is None:
        win_s = max(min(DEFAULT_WINDOW_S, rec.duration / 4), _MIN_WINDOW_SAMPLES / rec.fs)
    else:
        win_s = _check_positive("window_s", window_s, "s")
    seg = int(round(win_s * rec.fs))
    if seg < _MIN_WINDOW_SAMPLES or seg > rec.n:
        raise DataValidationError(
            f"`window_s` = {win_s:.6g} s gives {seg} samples per window; it must hold"
            f" {_MIN_WINDOW_SAMPLES}..{rec.n} samples of record `{rec.name}`"
        )
    hop = min(seg, max(1, seg // 4, int(math.ceil((rec.n - seg) / _MAX_SPECTROGRAM_COLUMNS))))
    freq, times, sxx = sp_signal.spectrogram(
        y, fs=rec.fs, window="hann", nperseg=seg, noverlap=seg - hop, detrend="constant", scaling="density"
    )
    if max_freq_hz is None:
        try:
            f_top = _SPECTROGRAM_BAND_MULTIPLE * _band_from_psd(*_force_periodogram(rec), *BAND_POWER_FRACTIONS)[1]
        except DataValidationError:
            f_top = rec.fs / 2
    else:
        f_top = _check_positive("max_freq_hz", max_freq_hz, "Hz")
    keep = freq <= max(f_top, float(freq[min(1, freq.size - 1)]))
    sxx = np.asarray(sxx, dtype=np.float64)[keep]
    top = float(np.max(sxx)) if sxx.size else 0.0
    floor = top * 10 ** (-_SPECTROGRAM_RANGE_DB / 10) if top > 0 else 1e-300
    power_db = 10.0 * np.log10(np.maximum(sxx, floor))
    return Spectrogram(
        np.asarray(times, dtype=np.float64) + float(rec.t[0]), np.asarray(freq[keep], dtype=np.float64), power_db
    )
