r"""Harmonic distortion of the response under swept or stepped sines.

:func:`harmonic_distortion` follows the phase :math:`\varphi(t)` of the force's fundamental
(unwrapped phase of its analytic signal, smoothed by a quadratic per window) and fits, window by
window (Hann-weighted least squares, 50 % overlap), the response as a sum of harmonics of that phase
whose amplitudes may change linearly within the window,
:math:`y \approx c_0 + c_1\tau + \sum_k (a_k + a'_k\tau)\cos k\varphi + (b_k + b'_k\tau)\sin k\varphi`.
Because the harmonics follow the instantaneous phase, a sweep does not smear them and a window of a
few cycles is enough. A free vibration (the start transient, the ringing after a resonance) is not
locked to the force; it is found as a line in the fit residual, and windows where a harmonic crosses
it are marked, because there the fit cannot tell the two apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sp_fft
from scipy import signal as sp_signal

from .._checks import check_int as _check_int
from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..record import Record
from ._args import FloatArray, _check_channel, _check_record
from .thresholds import (
    _BATCH_ELEMENTS,
    _MAX_WINDOWS,
    _MIN_WINDOW_SAMPLES,
    DEFAULT_WINDOW_S,
    HARMONIC_DB,
    MAX_HARMONICS,
    MIN_WINDOW_CYCLES,
    NYQUIST_FRACTION,
    PHASE_DEV_FACTOR,
    PHASE_DEV_MAX,
    RINGING_MARGIN_DB,
    RINGING_NEIGHBOURS,
    RINGING_PROMINENCE_DB,
    SUSTAIN_WINDOWS,
    TONAL_MIN_FRACTION,
)

__all__ = ["HarmonicAnalysis", "harmonic_distortion"]


@dataclass(frozen=True, kw_only=True)
class HarmonicAnalysis:
    """Harmonic levels of a response along a swept- or stepped-sine record.

    Attributes
    ----------
    time_s : (w,) ndarray
        Centre time of each window (s).
    f0_hz : (w,) ndarray
        Instantaneous fundamental (force) frequency at the window centre (Hz).
    harmonics : tuple of int
        Harmonic orders 2..n (columns of ``levels_db``).
    levels_db : (w, n - 1) ndarray
        Amplitude of harmonic k of the response relative to its fundamental, ``20 log10(A_k/A_1)``
        (dB); NaN where the window is not tonal, holds fewer than ``MIN_WINDOW_CYCLES`` cycles or the
        harmonic lies above ``NYQUIST_FRACTION`` of the sampling rate.
    force_levels_db : (w, n - 1) ndarray
        The same for the force (distortion of the exciter).
    floor_db : (w,) ndarray
        Level (dB re the fundamental) that white residual noise alone gives a harmonic: levels near
        it are noise, not harmonics.
    amplitude : (w,) ndarray
        Amplitude of the response's fundamental (channel unit).
    tonal_fraction : (w,) ndarray
        Fraction of the force variance in its fundamental (1 for a pure sine).
    valid : (w,) bool ndarray
        Tonal windows with at least ``MIN_WINDOW_CYCLES`` cycles whose force phase follows a smooth
        sweep (see ``PHASE_DEV_MAX``).
    window_s : float
        Window length (s); windows overlap by 50 %.
    sweep_rate_hz_s : float
        Median rate of change of the fundamental (Hz/s; 0 for a stepped or fixed sine).
    ringing_hz : (w,) ndarray
        Frequency of a free vibration seen in the residual of each window's fit (NaN where no line
        stands out, see ``RINGING_PROMINENCE_DB``).
    coincident : (w, n - 1) bool ndarray
        Where harmonic k of the window's fundamental lies within the fit's resolution of a free
        vibration seen in that window or its neighbours: the level there may be the free vibration
        rather than a harmonic.
    channel : str
        Response channel analysed (``x`` by default).
    unit : str
        Unit of the response channel.
    record : str
    """

    time_s: FloatArray
    f0_hz: FloatArray
    harmonics: tuple[int, ...]
    levels_db: FloatArray
    force_levels_db: FloatArray
    floor_db: FloatArray
    amplitude: FloatArray
    tonal_fraction: FloatArray
    valid: NDArray[np.bool_]
    window_s: float
    sweep_rate_hz_s: float
    ringing_hz: FloatArray
    coincident: NDArray[np.bool_]
    channel: str = "x"
    unit: str = "m"
    record: str = ""

    @property
    def n_valid(self) -> int:
        """Number of windows with harmonic levels."""
        return int(np.count_nonzero(self.valid))

    def level(self, k: int, *, force: bool = False) -> FloatArray:
        """Levels (dB) of harmonic ``k`` per window.

        Parameters
        ----------
        k : int
            Harmonic order, 2..n.
        force : bool
            The force's harmonic instead of the response's.

        Returns
        -------
        (w,) ndarray
        """
        if k not in self.harmonics:
            raise ModelSpecError(f"harmonic `k` = {k} was not analysed; harmonics are {self.harmonics}")
        col = self.harmonics.index(k)
        return (self.force_levels_db if force else self.levels_db)[:, col]

    def sustained_peak(
        self, k: int, *, force: bool = False, windows: int = SUSTAIN_WINDOWS, skip_coincident: bool = True
    ) -> tuple[float, float, float]:
        """Highest level of harmonic ``k`` held over ``windows`` consecutive windows.

        Parameters
        ----------
        k : int
            Harmonic order, 2..n.
        force : bool
            The force's harmonic instead of the response's.
        windows : int
            Consecutive windows the level must be held over (the minimum over the run is taken);
            1 gives the plain maximum.
        skip_coincident : bool
            Leave out the response's windows where the harmonic crosses a free vibration
            (``coincident``).

        Returns
        -------
        (level_db, time_s, f0_hz)
            NaNs when no run of ``windows`` consecutive windows has a level.
        """
        lev = self.level(k, force=force)
        if skip_coincident and not force:
            lev = np.where(self.coincident[:, self.harmonics.index(k)], np.nan, lev)
        w = max(1, int(windows))
        if lev.size < w:
            return math.nan, math.nan, math.nan
        runs = np.lib.stride_tricks.sliding_window_view(lev, w)
        held = np.where(np.isnan(runs).any(axis=1), -np.inf, np.min(np.where(np.isnan(runs), 0.0, runs), axis=1))
        if not np.isfinite(held).any():
            return math.nan, math.nan, math.nan
        i = int(np.argmax(held))
        j = i + int(np.argmin(runs[i]))
        return float(held[i]), float(self.time_s[j]), float(self.f0_hz[j])


def _force_phase(f: FloatArray) -> FloatArray:
    """Unwrapped phase (rad) of the analytic signal of the (mean-free) force."""
    return np.asarray(np.unwrap(np.angle(sp_signal.hilbert(f - f.mean()))), dtype=np.float64)


def _window_starts(n: int, seg: int) -> NDArray[np.intp]:
    hop = max(1, seg // 2)
    return np.arange(0, n - seg + 1, hop, dtype=np.intp)


def _phase_fits(phase: FloatArray, starts: NDArray[np.intp], seg: int) -> tuple[FloatArray, FloatArray]:
    """Quadratic fit ``p0 + p1 τ + p2 τ²`` (τ in [-1, 1]) of the phase in every window.

    Returns the coefficients (w, 3) and the rms deviation of the phase from the fit (w,) in rad.
    """
    tau = np.linspace(-1.0, 1.0, seg)
    vander = np.column_stack([np.ones(seg), tau, tau * tau])
    pinv = np.linalg.pinv(vander)  # (3, seg)
    out = np.empty((starts.size, 3))
    dev = np.empty(starts.size)
    step = max(1, _BATCH_ELEMENTS // seg)
    for i in range(0, starts.size, step):
        ph = phase[starts[i : i + step, None] + np.arange(seg)]
        c = ph @ pinv.T
        out[i : i + step] = c
        dev[i : i + step] = np.sqrt(np.mean((ph - c @ vander.T) ** 2, axis=1))
    return out, dev


def _sweep_rate(phase: FloatArray, fs: float, seg: int) -> tuple[float, float]:
    """Median |rate of change| (Hz/s) and median of the fundamental frequency (Hz) over windows of ``seg``."""
    starts = _window_starts(phase.size, seg)
    if starts.size == 0:
        return 0.0, 0.0
    coef, _ = _phase_fits(phase, starts, seg)
    half_s = 0.5 * (seg - 1) / fs
    freq = coef[:, 1] / (2 * math.pi * half_s)
    chirp = 2 * coef[:, 2] / (2 * math.pi * half_s * half_s)  # d f / dt inside each window
    return float(np.median(np.abs(chirp))), float(np.median(np.abs(freq)))


def _default_window_s(phase: FloatArray, rec: Record) -> float:
    seg0 = max(_MIN_WINDOW_SAMPLES, min(rec.n // 4, int(round(DEFAULT_WINDOW_S * rec.fs))))
    rate, f_typ = _sweep_rate(phase, rec.fs, seg0)
    win = DEFAULT_WINDOW_S
    if rate > 0:
        # frequency spread rate·T equals the resolution 1/T
        win = min(win, 1.0 / math.sqrt(rate))
    if f_typ > 0:
        win = max(win, 2 * MIN_WINDOW_CYCLES / f_typ)
    win = min(win, rec.duration / 4)
    win = max(win, 2.0 * rec.duration / _MAX_WINDOWS, _MIN_WINDOW_SAMPLES / rec.fs)
    return win


class _Fits(NamedTuple):
    amplitude: FloatArray  # (s, w, n_h): harmonics 1..n_h at the window centre
    residual: FloatArray  # (s, w): weighted residual rms
    line_hz: FloatArray  # (w,): strongest line in the first signal's residual
    line_amplitude: FloatArray  # (w,): its amplitude
    line_prominence_db: FloatArray  # (w,): its height over the median of the residual spectrum


def _harmonic_fits(ys: FloatArray, coef: FloatArray, starts: NDArray[np.intp], seg: int, n_h: int, fs: float) -> _Fits:
    """Weighted least-squares harmonic amplitudes per window.

    ``ys`` is (s, n) (signals fitted together). Each harmonic k has an amplitude linear in time,
    columns ``cos kφ, sin kφ, τ cos kφ, τ sin kφ`` (a sweep through a resonance changes amplitude and
    phase within a window), besides a constant and a trend; the samples are weighted by a Hann
    window, which keeps components that are not harmonics (a free vibration at the natural
    frequency, noise) from leaking into the harmonic estimates. The residual of the first signal is
    searched for its strongest line (a free vibration shows up there).
    """
    tau = np.linspace(-1.0, 1.0, seg)
    weight = np.hanning(seg + 2)[1:-1]
    p = 2 + 4 * n_h
    k = np.arange(1, n_h + 1)
    n_sig = ys.shape[0]
    amps = np.empty((n_sig, starts.size, n_h))
    resid = np.empty((n_sig, starts.size))
    line_hz = np.full(starts.size, np.nan)
    line_amp = np.zeros(starts.size)
    line_prom = np.zeros(starts.size)
    nfft = int(sp_fft.next_fast_len(4 * seg, real=True))
    freq = sp_fft.rfftfreq(nfft, 1.0 / fs)
    above_dc = freq > 2.0 * fs / seg  # outside the main lobe at 0 Hz
    step = max(1, _BATCH_ELEMENTS // (seg * p))
    wsum = float(weight.sum())
    for i in range(0, starts.size, step):
        st = starts[i : i + step]
        c = coef[i : i + step]
        phi = c[:, 0:1] + c[:, 1:2] * tau + c[:, 2:3] * tau * tau  # (b, seg)
        kphi = phi[:, :, None] * k  # (b, seg, n_h)
        cos, sin = np.cos(kphi), np.sin(kphi)
        a = np.empty((st.size, seg, p))
        a[:, :, 0] = 1.0
        a[:, :, 1] = tau
        a[:, :, 2::4] = cos
        a[:, :, 3::4] = sin
        a[:, :, 4::4] = tau[:, None] * cos
        a[:, :, 5::4] = tau[:, None] * sin
        aw = a * weight[:, None]
        gram = np.matmul(aw.transpose(0, 2, 1), a)
        scale = np.sqrt(np.einsum("bpp->bp", gram))
        scale = np.where(scale > 0, scale, 1.0)
        gram_s = gram / scale[:, :, None] / scale[:, None, :]
        ginv = np.linalg.pinv(gram_s, rcond=1e-10, hermitian=True) / scale[:, :, None] / scale[:, None, :]
        idx = st[:, None] + np.arange(seg)
        for j in range(n_sig):
            yw = ys[j][idx]  # (b, seg)
            rhs = np.matmul(aw.transpose(0, 2, 1), yw[:, :, None])  # (b, p, 1)
            sol = np.matmul(ginv, rhs)
            r = yw - np.matmul(a, sol)[:, :, 0]
            sol = sol[:, :, 0]
            amps[j, i : i + step] = np.hypot(sol[:, 2::4], sol[:, 3::4])
            resid[j, i : i + step] = np.sqrt((r * r) @ weight / wsum)
            if j == 0 and np.any(above_dc):
                spec = np.abs(sp_fft.rfft(r * weight, nfft, axis=1))[:, above_dc] * (2.0 / wsum)
                top = np.argmax(spec, axis=1)
                peak = spec[np.arange(st.size), top]
                med = np.median(spec, axis=1)
                line_hz[i : i + step] = freq[above_dc][top]
                line_amp[i : i + step] = peak
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = peak / np.where(med > 0, med, 1.0)
                    line_prom[i : i + step] = np.where(med > 0, 20.0 * np.log10(ratio), 0.0)
    return _Fits(amps, resid, line_hz, line_amp, line_prom)


def _window_samples(rec: Record, phase: FloatArray, window_s: float | None) -> int:
    """Samples per analysis window: ``window_s`` (default from the sweep rate, see :func:`harmonic_distortion`)."""
    win = _default_window_s(phase, rec) if window_s is None else _check_positive("window_s", window_s, "s")
    seg = int(round(win * rec.fs))
    if seg < _MIN_WINDOW_SAMPLES or seg > rec.n:
        raise DataValidationError(
            f"`window_s` = {win:.6g} s gives {seg} samples per window; it must hold"
            f" {_MIN_WINDOW_SAMPLES}..{rec.n} samples of record `{rec.name}`"
        )
    return seg


def _coincident(ring: FloatArray, f_low: FloatArray, f_high: FloatArray, n_h: int, lobe: float) -> np.ndarray:
    """(window, harmonic 2..n) where a free vibration seen in this or a neighbouring window lies within the band
    the harmonic sweeps through in the window (widened by the fit's main lobe ``lobe``, Hz)."""
    orders = np.arange(2, n_h + 1)
    lo_band = f_low[:, None] * orders - lobe
    hi_band = f_high[:, None] * orders + lobe
    coincident = np.zeros(lo_band.shape, dtype=bool)
    for shift in range(-RINGING_NEIGHBOURS, RINGING_NEIGHBOURS + 1):
        other = np.full(ring.shape, np.nan)
        if shift >= 0:
            other[: ring.size - shift] = ring[shift:]
        else:
            other[-shift:] = ring[:shift]
        coincident |= (other[:, None] >= lo_band) & (other[:, None] <= hi_band)
    return coincident


def harmonic_distortion(
    rec: Record, *, n_harmonics: int = 5, window_s: float | None = None, channel: str = "x"
) -> HarmonicAnalysis:
    r"""Harmonic levels of the response along a swept- or stepped-sine record.

    The fundamental's phase :math:`\varphi(t)` is the unwrapped phase of the force's analytic
    signal, smoothed by a quadratic in each window; its slope at the window centre is the
    instantaneous fundamental frequency (for a tone the peak of the force spectrum in the window).
    In each window (50 % overlap) the response and the force are fitted by Hann-weighted least
    squares with a constant, a linear trend and :math:`\cos k\varphi`, :math:`\sin k\varphi`
    for k = 1..n, each with an amplitude linear in time (a sweep through a resonance changes the
    amplitude within a window); levels are the amplitudes at the window centre. Windows where a
    harmonic crosses a free vibration seen in the residual are marked ``coincident``.

    Parameters
    ----------
    rec : Record
        A record driven by a (swept, stepped or fixed) sine. Windows where the force is not
        dominated by one tone (broadband excitation) get NaN levels.
    n_harmonics : int
        Highest harmonic order n (2..20); levels are reported for 2..n.
    window_s : float or None
        Window length (s). Default ``DEFAULT_WINDOW_S``, shortened for fast sweeps to
        ``1/sqrt(sweep rate)`` (where the frequency swept within a window equals its resolution),
        but at least ``2 · MIN_WINDOW_CYCLES`` cycles of the median fundamental and at most a
        quarter of the record.
    channel : str
        Response channel (``x``, ``v`` or ``a``).

    Returns
    -------
    HarmonicAnalysis
    """
    rec = _check_record(rec)
    n_h = _check_int("n_harmonics", n_harmonics, 2, MAX_HARMONICS)
    if channel not in ("x", "v", "a"):
        raise ModelSpecError(f"`channel` must be x, v or a, got {channel!r}")
    y = rec.channel(_check_channel(rec, "channel", channel))
    f = rec.f
    if float(np.ptp(f)) == 0:
        raise DataValidationError(f"`rec`: the force of record `{rec.name}` is constant; there is no fundamental")
    phase = _force_phase(f)
    seg = _window_samples(rec, phase, window_s)
    starts = _window_starts(rec.n, seg)
    coef, phase_dev = _phase_fits(phase, starts, seg)
    half_s = 0.5 * (seg - 1) / rec.fs
    two_pi = 2 * math.pi
    f_centre = coef[:, 1] / (two_pi * half_s)
    # highest instantaneous frequency in the window (ends of the quadratic phase)
    f_edges = np.maximum(np.abs(coef[:, 1] + 2 * coef[:, 2]), np.abs(coef[:, 1] - 2 * coef[:, 2])) / (two_pi * half_s)
    cycles = np.abs(2 * coef[:, 1]) / two_pi
    fits = _harmonic_fits(np.vstack([y, f]), coef, starts, seg, n_h, rec.fs)
    ay, af = fits.amplitude
    resid = fits.residual
    f_var = _window_var(f - f.mean(), starts, seg)
    with np.errstate(divide="ignore", invalid="ignore"):
        tonal = np.where(f_var > 0, 0.5 * af[:, 0] ** 2 / f_var, 0.0)
    tonal = np.clip(tonal, 0.0, 1.0)
    dev_limit = max(PHASE_DEV_MAX, PHASE_DEV_FACTOR * float(np.median(phase_dev))) if phase_dev.size else PHASE_DEV_MAX
    valid = (tonal >= TONAL_MIN_FRACTION) & (cycles >= MIN_WINDOW_CYCLES) & (ay[:, 0] > 0) & (phase_dev <= dev_limit)
    harmonics = tuple(range(2, n_h + 1))
    below_nyquist = f_edges[:, None] * np.arange(2, n_h + 1) < NYQUIST_FRACTION * rec.fs
    ok = valid[:, None] & below_nyquist
    with np.errstate(divide="ignore", invalid="ignore"):
        lev = 20.0 * np.log10(ay[:, 1:] / ay[:, :1])
        flev = 20.0 * np.log10(af[:, 1:] / af[:, :1])
        floor = 20.0 * np.log10(resid[0] * _noise_amplitude_factor(seg) / ay[:, 0])
    lev = np.where(ok, np.maximum(lev, -300.0), np.nan)
    flev = np.where(ok, np.maximum(flev, -300.0), np.nan)
    floor = np.where(valid, np.maximum(floor, -300.0), np.nan)
    times = rec.t[starts] + half_s
    chirp = 2 * coef[:, 2] / (two_pi * half_s * half_s)  # d f0 / dt within each window
    rate = float(np.median(chirp[valid])) if valid.any() else 0.0
    # free vibrations: prominent lines in the residual, not negligible against the fundamental
    is_line = (
        (fits.line_prominence_db >= RINGING_PROMINENCE_DB)
        & (fits.line_amplitude >= 10 ** ((HARMONIC_DB - RINGING_MARGIN_DB) / 20) * ay[:, 0])
        & valid
    )
    ring = np.where(is_line, fits.line_hz, np.nan)
    f_low = np.minimum(np.abs(coef[:, 1] + 2 * coef[:, 2]), np.abs(coef[:, 1] - 2 * coef[:, 2])) / (two_pi * half_s)
    lobe = 2.0 / (seg / rec.fs)  # half-width of the Hann-weighted fit's main lobe (Hz)
    coincident = _coincident(ring, f_low, f_edges, n_h, lobe) & ok
    return HarmonicAnalysis(
        time_s=np.asarray(times, dtype=np.float64),
        f0_hz=np.abs(f_centre),
        harmonics=harmonics,
        levels_db=lev,
        force_levels_db=flev,
        floor_db=floor,
        amplitude=ay[:, 0].copy(),
        tonal_fraction=tonal,
        valid=valid,
        window_s=seg / rec.fs,
        sweep_rate_hz_s=rate,
        ringing_hz=ring,
        coincident=coincident,
        channel=channel,
        unit=rec.unit(channel),
        record=rec.name,
    )


def _noise_amplitude_factor(seg: int) -> float:
    """rms amplitude a harmonic estimate gets from white noise of unit rms (Hann-weighted fit)."""
    w = np.hanning(seg + 2)[1:-1]
    # var(a_k) = var(b_k) ≈ σ² Σw² / (Σw/2)²; E[A²] = 2 var
    return math.sqrt(2.0 * float(w @ w) / (0.5 * float(w.sum())) ** 2)


def _window_var(y: FloatArray, starts: NDArray[np.intp], seg: int) -> FloatArray:
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(y * y)])
    s1 = c1[starts + seg] - c1[starts]
    s2 = c2[starts + seg] - c2[starts]
    return np.asarray(np.maximum(s2 / seg - (s1 / seg) ** 2, 0.0), dtype=np.float64)
