"""Signal bandwidth, white-noise floor and the noise-optimal cut-off, from a capped Welch spectrum."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import fft as sp_fft
from scipy.special import gammainccinv

from ..errors import ModelSpecError
from ._args import FloatArray, _as_signal, _check_dt, _check_order

__all__ = ["signal_bandwidth_hz", "optimal_cutoff_hz"]

#: Bandwidth estimate: segment length (samples) and most segments averaged.
_PSD_SEGMENT = 4096
_PSD_MAX_SEGMENTS = 64
#: Power fraction defining the bandwidth used for default settings.
_BANDWIDTH_ENERGY = 0.999
#: Chance that white noise alone puts one PSD bin above the signal threshold.
_PSD_FALSE_ALARM = 0.01
#: Zoom into the low band when the bandwidth is below this many PSD bins.
_PSD_ZOOM_BINS = 16
#: Nyquist frequency after the zoom's decimation, in bandwidths.
_PSD_ZOOM_SPAN = 16.0
#: Fewest samples kept after the zoom's decimation.
_PSD_ZOOM_MIN_SAMPLES = 256
#: Detrended segments smaller than this fraction of the signal are rounding noise.
_ROUNDOFF = 1e-12


class _Spectrum(NamedTuple):
    """Welch estimate of one signal at one sampling rate."""

    freq: FloatArray  # (m,) Hz
    signal: FloatArray  # (m,) |X_k|^2 standing significantly above the white floor, floor removed (else 0)
    noise_std: float  # white-noise standard deviation per sample, signal unit
    to_var: float  # |X_k|^2 -> variance of the signal in that bin


class _Band(NamedTuple):
    """Significant content and noise of a signal, as used for default settings.

    ``var`` and ``noise_std`` are in units of ``scale`` (a power of two near
    the signal's largest magnitude), so that squares neither underflow for a
    signal of 1e-200 nor overflow for one of 1e200; only their ratios matter.
    """

    bandwidth: float  # Hz, energy bandwidth
    freq: FloatArray  # (m,) Hz, ascending, bins with significant content
    var: FloatArray  # (m,) signal variance in those bins, (signal unit / scale)^2
    noise_std: float  # white-noise standard deviation per sample, signal unit / scale
    scale: float  # signal unit


def _unit_scale(y: FloatArray) -> float:
    """Power of two nearest above ``max|y|`` (1 for an all-zero signal): dividing by it is exact."""
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if not (peak > 0 and math.isfinite(peak)):
        return 1.0
    return math.ldexp(1.0, math.frexp(peak)[1])


def _welch_capped(y: FloatArray, dt: float) -> _Spectrum:
    """Welch spectrum from at most ``_PSD_MAX_SEGMENTS`` segments of ``_PSD_SEGMENT`` samples.

    Segments are spread evenly over the record (50 % overlap when there are
    few), linearly detrended and Hann-windowed. The white floor is the median
    of the top quarter of the band (corrected to a mean with Wilson-Hilferty).
    A bin counts as signal only where it exceeds the level that pure noise
    (an average of k_eff exponential variables; overlap halves the
    independent count) passes in fewer than ``_PSD_FALSE_ALARM`` of records
    anywhere in the band.
    """
    n = y.size
    seg = min(n, _PSD_SEGMENT)
    n_avail = max(1, 2 * (n - seg) // seg + 1)
    k = min(n_avail, _PSD_MAX_SEGMENTS)
    starts = np.linspace(0, n - seg, k).round().astype(np.intp)
    segs = y[starts[:, None] + np.arange(seg)]
    i = np.arange(seg, dtype=np.float64) - 0.5 * (seg - 1)
    segs = segs - segs.mean(axis=1, keepdims=True)
    segs = segs - np.outer(segs @ i / float(i @ i), i)
    freq = sp_fft.rfftfreq(seg, dt)
    taper = np.hanning(seg)
    taper_power = float(taper @ taper)
    # a sinusoid of variance s2 puts seg * sum(taper^2) * s2 / 2 into the one-sided psd
    to_var = 2.0 / (seg * taper_power)
    if float(np.max(np.abs(segs))) <= _ROUNDOFF * float(np.max(np.abs(y))):
        # a straight line (up to rounding): no power at all
        zero = np.zeros(freq.size)
        return _Spectrum(freq, zero, 0.0, to_var)
    psd = np.mean(np.abs(sp_fft.rfft(segs * taper, axis=1)) ** 2, axis=0)
    top = psd[(3 * psd.size) // 4 :]
    floor = float(np.median(top)) / (1.0 - 1.0 / (9.0 * k)) ** 3 if top.size else 0.0
    k_eff = max(1, (k + 1) // 2)
    level = float(gammainccinv(k_eff, _PSD_FALSE_ALARM / psd.size)) / k_eff
    signal = np.where(psd > level * floor, psd - floor, 0.0)
    signal[0] = 0.0
    # white noise of variance s2 gives E|X_k|^2 = s2 * sum(taper^2)
    noise_std = math.sqrt(floor / taper_power)
    return _Spectrum(freq, signal, noise_std, to_var)


def _energy_quantile(freq: FloatArray, power: FloatArray, energy: float, nyquist: float) -> float:
    total = float(power.sum())
    if total <= 0.0:
        return nyquist
    cum = np.cumsum(power) / total
    j = min(int(np.searchsorted(cum, energy)), freq.size - 1)
    df = float(freq[1] - freq[0])
    prev = float(cum[j - 1]) if j > 0 else 0.0
    frac = (energy - prev) / max(float(cum[j]) - prev, 1e-300)
    return float(min(freq[j] - 0.5 * df + min(max(frac, 0.0), 1.0) * df, nyquist))


def _analyse(arr: FloatArray, dt: float, energy: float = 0.999) -> _Band:
    """Bandwidth, significant content and noise of a checked signal.

    When the band is only a few bins of the full-rate spectrum wide, the
    signal is decimated by block averaging (the averaging's response is
    compensated) to a Nyquist frequency of ``_PSD_ZOOM_SPAN`` bandwidths
    and analysed again; content further up is ignored. (Keeping the
    full-rate bins would not do: there the taper's leakage from a strong,
    unresolved low-frequency line stands far above the noise and would pass
    for content.)
    """
    scale = _unit_scale(arr)
    arr = arr / scale
    full = _welch_capped(arr, dt)
    freq, var = full.freq, full.signal * full.to_var
    f_bw = _energy_quantile(freq, var, energy, 0.5 / dt)
    q = 1
    for _ in range(4):
        df = float(freq[1] - freq[0])
        if f_bw >= _PSD_ZOOM_BINS * df:
            break
        q_new = min(int(0.5 / dt / (_PSD_ZOOM_SPAN * max(f_bw, df))), arr.size // _PSD_ZOOM_MIN_SAMPLES)
        if q_new <= q:
            break
        q = q_new
        n_blocks = arr.size // q
        zoom = _welch_capped(arr[: n_blocks * q].reshape(n_blocks, q).mean(axis=1), q * dt)
        # a q-sample block mean attenuates by |sin(pi f q dt) / (q sin(pi f dt))|
        x = np.pi * zoom.freq * dt
        with np.errstate(invalid="ignore", divide="ignore"):
            h = np.where(x > 0, np.sin(q * x) / (q * np.sin(x)), 1.0)
        zoom_var = zoom.signal * zoom.to_var / np.maximum(h**2, 1e-3)
        freq, var = zoom.freq, zoom_var
        f_bw = _energy_quantile(freq, var, energy, 0.5 / (q * dt))
    keep = var > 0
    return _Band(float(f_bw), freq[keep], var[keep], full.noise_std, scale)


def _optimal_cutoff(band: _Band, dt: float, order: int) -> float:
    """Cut-off (Hz) minimising removed signal plus passed noise of the ``order``-th derivative.

    Only significant bins count as signal: a chance cluster of noise bins
    near Nyquist, weighted by omega^(2 order), could otherwise pull the
    cut-off up. 0 when no content stands above the noise.
    """
    if band.freq.size == 0:
        return 0.0
    omega = 2.0 * math.pi * band.freq * dt
    power = band.var * omega ** (2 * order)
    removed = float(power.sum()) - np.cumsum(power)  # content above each candidate
    # white noise of variance s2 passed by an ideal differentiator up to omega_c (rad/sample)
    passed = band.noise_std**2 * omega ** (2 * order + 1) / ((2 * order + 1) * math.pi)
    return float(band.freq[int(np.argmin(removed + passed))])


def signal_bandwidth_hz(y: ArrayLike, dt: float, *, energy: float = 0.999) -> float:
    """Frequency below which a given fraction of the signal's power lies.

    The power spectrum is a Welch average of linearly detrended,
    Hann-windowed segments of 4096 samples (at most 64 of them, spread over
    the record). A white noise floor, estimated from the top quarter of the
    band, is removed first (only bins standing clearly above it count), so
    that measurement noise does not stretch the band to the Nyquist
    frequency. When the band is narrow compared with the frequency
    resolution, the signal is decimated by block averaging (with the
    averaging's response compensated) and the estimate repeated.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit).
    dt : float, s
        Sampling interval.
    energy : float
        Fraction of the (noise-free) power, in (0, 1).

    Returns
    -------
    float, Hz
        Bandwidth, at most the Nyquist frequency (which is also returned when
        no power stands above the noise floor, e.g. a straight line).
    """
    arr = _as_signal(y)
    dt = _check_dt(dt)
    try:
        frac = float(energy)
    except (TypeError, ValueError):
        frac = math.nan
    if not 0.0 < frac < 1.0:
        raise ModelSpecError(f"`energy` must be a fraction between 0 and 1 (exclusive), got {energy!r}")
    return _analyse(arr, dt, frac).bandwidth


def optimal_cutoff_hz(y: ArrayLike, dt: float, *, order: int = 1) -> float:
    """Noise-optimal cut-off for differentiating a noisy signal.

    For an ideal low-pass differentiator with cut-off ``f_c`` the expected
    squared error of the ``order``-th derivative is the signal power it
    removes above ``f_c`` plus the white noise power it passes below, both
    weighted by ``omega^(2 order)``. This returns the ``f_c`` minimising that
    sum on the Welch spectrum of :func:`signal_bandwidth_hz`, i.e. roughly
    where the signal sinks into the noise floor. It exceeds the energy
    bandwidth when weak content (harmonics of a nonlinear response, say)
    still stands above the noise, and lies far above it for clean data.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.

    Returns
    -------
    float, Hz
        Cut-off frequency, on the bins of the Welch spectrum; 0 when nothing
        stands above the noise floor (e.g. white noise).
    """
    order = _check_order(order)
    arr = _as_signal(y)
    dt = _check_dt(dt)
    return _optimal_cutoff(_analyse(arr, dt), dt, order)


def _default_cutoff(arr: FloatArray, dt: float, order: int, ratio: float) -> tuple[float, float]:
    """Default cut-off (Hz): the larger of ``ratio`` bandwidths and the noise-optimal one; and the noise std."""
    band = _analyse(arr, dt, _BANDWIDTH_ENERGY)
    f_cut = max(ratio * band.bandwidth, _optimal_cutoff(band, dt, order))
    return min(f_cut, 0.5 / dt), band.noise_std * band.scale


