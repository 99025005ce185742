"""Differentiation, bandwidth estimation and zero-phase filtering of records.

Identification of a single-DOF system needs displacement ``x``, velocity
``v`` and acceleration ``a`` at the same instants, but a test usually
measures only one or two of them. This module derives the missing channels
and provides the low-pass filtering used before identification.

Differentiators
---------------
Every differentiator has the signature ``d(y, dt, *, order=1, window=None)``
and returns the ``order``-th derivative (1 or 2) of the uniformly sampled
1-D signal ``y`` at every sample. They are registered by name in
:data:`DIFFERENTIATORS` and dispatched by :func:`differentiate`:

``"savgol"``
    Savitzky–Golay local polynomial fit (:func:`savgol_derivative`), the
    default: the best general choice for measured (noisy) data.
``"spectral"``
    FFT differentiation with a low-pass cut-off (:func:`spectral_derivative`):
    exact below the cut-off, best for smooth, stationary, well-sampled data.
``"gradient"``
    Central finite differences (:func:`gradient_derivative`): no smoothing at
    all, so it amplifies noise strongly; only for clean simulated data.

Defaults are chosen from the signal itself. :func:`signal_bandwidth_hz`
estimates the band holding the signal's power; the smoothing is never
stronger than a cut-off at :data:`SAVGOL_CUTOFF_RATIO` (Savitzky–Golay,
:func:`default_savgol_window`) or :data:`SPECTRAL_CUTOFF_RATIO` (spectral)
times that band. Within that limit the setting minimising the expected
error of the derivative (signal removed plus white noise passed, see
:func:`optimal_cutoff_hz`) is taken, so that clean data and weak harmonics
standing above the noise are not smoothed away.

Notes
-----
The Savitzky–Golay coefficients are computed here in a Legendre basis on a
window scaled to [-1, 1] instead of with :func:`scipy.signal.savgol_coeffs`,
which solves an unscaled Vandermonde system and loses all accuracy for wide
windows (with SciPy 1.17 a 401-sample, 6th-order second-derivative filter is
off by orders of magnitude; scipy/scipy#20825 and #25133).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.polynomial import legendre
from numpy.typing import ArrayLike, NDArray
from scipy import fft as sp_fft
from scipy import signal as sp_signal
from scipy.ndimage import correlate1d
from scipy.optimize import brentq
from scipy.special import gammainccinv

from ._checks import check_int as _check_int
from ._checks import check_positive as _check_positive
from .errors import DataValidationError, ModelSpecError
from .record import MAX_ABS_VALUE, MAX_DT, MIN_DT, Record

__all__ = [
    "DIFFERENTIATORS",
    "SAVGOL_POLYORDER",
    "SAVGOL_CUTOFF_RATIO",
    "MIN_CUTOFF_RATIO",
    "SPECTRAL_CUTOFF_RATIO",
    "Differentiator",
    "savgol_derivative",
    "spectral_derivative",
    "gradient_derivative",
    "differentiate",
    "signal_bandwidth_hz",
    "optimal_cutoff_hz",
    "savgol_cutoff_hz",
    "default_savgol_window",
    "lowpass",
    "derive_missing",
    "filter_record",
]

FloatArray = NDArray[np.float64]


class Differentiator(Protocol):
    """Call signature shared by every differentiator."""

    def __call__(self, y: ArrayLike, dt: float, *, order: int = 1, window: int | None = None) -> FloatArray: ...


#: Savitzky–Golay polynomial order per derivative order. The classic 3 and 4
#: give filters whose relative passband error grows as f^4; 5 and 6 (the next
#: distinct filters: orders 3/4 give the same first-derivative filter, as
#: 4/5 and 6/7 do for the second) make it grow as f^6. At the same -3 dB
#: cut-off the bias in the signal band is then about 6 times smaller and the
#: interior noise slightly lower; only the samples within half a window of
#: each end (a polynomial evaluated off-centre) get some 25 % noisier.
SAVGOL_POLYORDER: Mapping[int, int] = MappingProxyType({1: 5, 2: 6})
#: Lowest default Savitzky–Golay -3 dB cut-off, as a multiple of the signal
#: bandwidth: the default window is the longest with at least this cut-off,
#: or a shorter one where that lowers the expected error. At 3 the derivative
#: at the bandwidth frequency is attenuated by about 0.1 % (polynomial orders
#: 5/6); lower values smooth more (1.5 already costs about 4 % at the band
#: edge), higher values pass more noise.
SAVGOL_CUTOFF_RATIO = 3.0
#: Smallest accepted ``cutoff_ratio`` of :func:`default_savgol_window`.
MIN_CUTOFF_RATIO = 1.5
#: Lowest default cut-off of the spectral differentiator, as a multiple of the
#: signal bandwidth. Its passband is flat, so it can sit closer to the band.
SPECTRAL_CUTOFF_RATIO = 2.0
#: Width of the spectral differentiator's raised-cosine roll-off, as a
#: fraction of the cut-off (flat to ``f_cut``, zero from ``1.25 f_cut``).
SPECTRAL_TAPER = 0.25
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
#: Above this (odd) window the SG cut-off is taken from its asymptotic scaling.
_SG_EXACT_MAX = 255
#: Window whose response, tabulated against omega * window on
#: ``_SG_TABLE_POINTS`` points up to ``_SG_TABLE_U``, stands for wider ones in
#: the default-window search (beyond ``_SG_TABLE_U`` the response is ~0).
_SG_TABLE_W = 63
_SG_TABLE_U = 150.0
_SG_TABLE_POINTS = 1024
#: Windows tried (geometrically spaced) by the default-window search.
_SG_MSE_CANDIDATES = 32
#: Up to this window the SG filter is applied by direct correlation, beyond
#: by overlap-add FFT convolution (faster for long kernels).
_SG_DIRECT_MAX = 31
_MIN_SAMPLES = 8
#: Detrended segments smaller than this fraction of the signal are rounding noise.
_ROUNDOFF = 1e-12
#: Threshold (noise standard deviations) of the Lepski window choice at the ends.
_LEPSKI_K = 4.0
#: Derivative orders matched at both ends before the spectral differentiator's
#: odd extension (adding the 4th cuts the end error on clean data severalfold
#: at no cost in noise).
_SPECTRAL_END_ORDERS: tuple[int, ...] = (0, 2, 4)
_HALF_POWER = 1.0 / math.sqrt(2.0)
_FILTER_CHANNELS: tuple[str, ...] = ("f", "x", "v", "a")


# ---------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------
def _as_signal(y: ArrayLike, name: str = "y", min_len: int = _MIN_SAMPLES) -> FloatArray:
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"`{name}` is not numeric: {exc}") from None
    if arr.ndim != 1:
        raise DataValidationError(f"`{name}` must be a 1-D array, got shape {arr.shape}")
    if arr.size < min_len:
        raise DataValidationError(f"`{name}` has {arr.size} samples; at least {min_len} are needed")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataValidationError(f"`{name}` has a non-finite value ({arr[i]}) at index {i}")
    return arr


def _check_dt(dt: float) -> float:
    val = _check_positive("dt", dt, "time step in seconds", DataValidationError)
    if not MIN_DT * (1 - 1e-6) <= val <= MAX_DT * (1 + 1e-6):
        raise DataValidationError(
            f"`dt` must lie between {MIN_DT:g} s and {MAX_DT:g} s (the sampling intervals a record accepts),"
            f" got {val:.3g} s"
        )
    return val


def _check_order(order: int) -> int:
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order not in (1, 2):
        raise ModelSpecError(f"`order` must be 1 (first derivative) or 2 (second derivative), got {order!r}")
    return int(order)




def _reject_window(method: str, window: Any, hint: str = "") -> None:
    if window is not None:
        raise ModelSpecError(f"`window` is not used by the {method} differentiator{hint}, got {window!r}")


def _odd_floor(w: float) -> int:
    k = int(math.floor(w))
    return k if k % 2 == 1 else k - 1


def _odd_ceil(w: float) -> int:
    k = int(math.ceil(w))
    return k if k % 2 == 1 else k + 1


def _linear_trend(y: FloatArray) -> tuple[float, float]:
    """Least-squares line ``intercept + slope * i`` through ``y`` (i = sample index)."""
    n = y.size
    i_mean = 0.5 * (n - 1)
    y_mean = float(y.mean())
    # sum (i - i_mean)^2 = n (n^2 - 1) / 12
    sxx = n * (n * n - 1) / 12.0
    slope = float(np.dot(np.arange(n, dtype=np.float64) - i_mean, y - y_mean) / sxx)
    return y_mean - slope * i_mean, slope


# ---------------------------------------------------------------------------
# Spectrum, bandwidth and noise-optimal cut-off
# ---------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------
# Savitzky–Golay
# ---------------------------------------------------------------------------
def _sg_window_bounds(n: int, polyorder: int) -> tuple[int, int]:
    lo = _odd_ceil(polyorder + 2)
    hi = max(_odd_floor(n // 4), lo)
    return lo, hi


def _legendre_derivatives(u: FloatArray, polyorder: int, deriv: int) -> FloatArray:
    """``(len(u), polyorder + 1)``: d^deriv/du^deriv of P_j at ``u``."""
    coef = legendre.legder(np.eye(polyorder + 1), m=deriv, axis=0)
    return np.asarray(legendre.legval(u, coef), dtype=np.float64).T


def _sg_projector(window: int, polyorder: int) -> FloatArray:
    """``(polyorder + 1, window)``: least-squares Legendre coefficients of a window."""
    m = window // 2
    u = np.arange(-m, m + 1, dtype=np.float64) / m
    return np.asarray(np.linalg.pinv(legendre.legvander(u, polyorder)), dtype=np.float64)


def _sg_center_coeffs(window: int, polyorder: int, deriv: int) -> FloatArray:
    """Correlation coefficients c_k, k = -m..m, of the centred SG derivative for unit step."""
    m = window // 2
    proj = _sg_projector(window, polyorder)
    row = _legendre_derivatives(np.zeros(1), polyorder, deriv)[0]
    return np.asarray(row @ proj, dtype=np.float64) / float(m) ** deriv


def _sg_relative_response(coeffs: FloatArray, deriv: int, omega: FloatArray) -> FloatArray:
    """SG response divided by the ideal (i omega)^deriv, at ``omega`` (rad/sample)."""
    m = coeffs.size // 2
    k = np.arange(-m, m + 1, dtype=np.float64)
    if deriv == 1:
        # antisymmetric: sum c_k exp(i omega k) = i sum c_k sin(omega k)
        return np.asarray(np.sin(np.outer(omega, k)) @ coeffs / omega, dtype=np.float64)
    # symmetric with sum c_k = 0: sum c_k cos(omega k) = -2 sum c_k sin^2(omega k / 2)
    return np.asarray(2.0 * (np.sin(0.5 * np.outer(omega, k)) ** 2 @ coeffs) / omega**2, dtype=np.float64)


def _sg_cutoff_exact(window: int, polyorder: int, deriv: int) -> float:
    """-3 dB cut-off (rad/sample) of the SG derivative relative to the ideal one; pi if none."""
    coeffs = _sg_center_coeffs(window, polyorder, deriv)
    # Every cut-off lies above pi / window (the continuous limit is ~8-13 / window).
    grid = np.geomspace(min(math.pi / window, 0.5), math.pi, 48)
    rel = _sg_relative_response(coeffs, deriv, grid) - _HALF_POWER
    below = np.flatnonzero(rel < 0)
    if below.size == 0:
        return math.pi
    i = int(below[0])
    if i == 0:  # pragma: no cover - cut-offs are far above pi / window
        return float(grid[0])

    def f(om: float) -> float:
        return float(_sg_relative_response(coeffs, deriv, np.array([om]))[0] - _HALF_POWER)

    return float(brentq(f, float(grid[i - 1]), float(grid[i]), xtol=1e-12))


def _sg_cutoff_rad(window: int, polyorder: int, deriv: int) -> float:
    if window <= _SG_EXACT_MAX:
        return _sg_cutoff_exact(window, polyorder, deriv)
    # Continuous limit: cut-off * window = kappa + c / window^2 + O(window^-4);
    # kappa and c from two exact evaluations (relative error < 1e-6 here).
    w1, w2 = _SG_EXACT_MAX // 2 | 1, _SG_EXACT_MAX
    y1 = _sg_cutoff_exact(w1, polyorder, deriv) * w1
    y2 = _sg_cutoff_exact(w2, polyorder, deriv) * w2
    c = (y1 - y2) / (1.0 / w1**2 - 1.0 / w2**2)
    kappa = y2 - c / w2**2
    return (kappa + c / window**2) / window


def _sg_window_for_cutoff(omega_t: float, polyorder: int, deriv: int, lo: int, hi: int) -> int:
    """Largest odd window in [lo, hi] whose cut-off (rad/sample) is at least ``omega_t``."""
    if omega_t >= _sg_cutoff_rad(lo, polyorder, deriv):
        return lo
    kappa = _sg_cutoff_exact(_SG_EXACT_MAX, polyorder, deriv) * _SG_EXACT_MAX
    # cut-off * window decreases towards its limit, so this guess is at or just below the answer
    w = min(max(_odd_floor(kappa / omega_t), lo), hi)
    if _sg_cutoff_rad(w, polyorder, deriv) >= omega_t:
        while w + 2 <= hi and _sg_cutoff_rad(w + 2, polyorder, deriv) >= omega_t:
            w += 2
    else:
        while w - 2 >= lo and _sg_cutoff_rad(w, polyorder, deriv) < omega_t:
            w -= 2
    return w


def _sg_mse_window(band: _Band, dt: float, polyorder: int, deriv: int, lo: int, w_max: int) -> int:
    """Odd window in [lo, w_max] minimising the expected squared derivative error.

    The error of a window is the signal's derivative power lost to the
    filter's roll-off, ``sum var(f) omega^(2 deriv) (1 - R(f))^2`` over the
    significant bins of ``band``, plus the white noise it passes,
    ``noise_std^2 sum c_k^2``. ``R`` is exact up to
    ``_SG_TABLE_W // 2`` samples and beyond taken from the response of a
    ``_SG_TABLE_W``-sample filter tabulated against ``omega * window`` (the
    shape converges as the window grows; ~1 % off in frequency at worst).
    """
    if w_max <= lo:
        return lo
    omega = 2.0 * math.pi * band.freq * dt
    power = band.var * omega ** (2 * deriv)
    noise = band.noise_std**2
    c_ref = _sg_center_coeffs(_SG_TABLE_W, polyorder, deriv)
    u_tab = np.linspace(0.0, _SG_TABLE_U, _SG_TABLE_POINTS)[1:]
    r_tab = _sg_relative_response(c_ref, deriv, u_tab / _SG_TABLE_W)
    g_ref = _SG_EXACT_MAX
    c_gain = _sg_center_coeffs(g_ref, polyorder, deriv)
    gain_ref = float(c_gain @ c_gain)
    grid = np.geomspace(lo, w_max, _SG_MSE_CANDIDATES)
    candidates = sorted({min(max(_odd_floor(v), lo), w_max) for v in grid} | {lo, w_max})
    best_w, best_err = lo, math.inf
    for w in candidates:
        if w <= g_ref:
            c = _sg_center_coeffs(w, polyorder, deriv)
            gain = float(c @ c)
        else:  # noise gain scales as window^-(2 deriv + 1) (< 0.1 % off beyond 255)
            gain = gain_ref * (g_ref / w) ** (2 * deriv + 1)
        if w <= _SG_TABLE_W // 2 and omega.size:
            rel = _sg_relative_response(c, deriv, omega)
        else:
            rel = np.interp(omega * w, np.r_[0.0, u_tab], np.r_[1.0, r_tab], right=0.0)
        err = float(power @ (1.0 - rel) ** 2) + noise * gain
        if err < best_err:
            best_w, best_err = w, err
    return best_w


def _check_savgol_window(window: Any, polyorder: int, n: int | None) -> int:
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
        raise ModelSpecError(f"`window` must be an odd number of samples, got {window!r}")
    w = int(window)
    if w % 2 == 0 or w <= polyorder:
        raise ModelSpecError(
            f"`window` must be an odd number of samples larger than the polynomial order {polyorder}, got {w}"
        )
    if n is not None and w > n:
        raise ModelSpecError(f"`window` ({w} samples) is longer than the signal ({n} samples)")
    return w


def savgol_cutoff_hz(window: int, dt: float, *, order: int = 1) -> float:
    """-3 dB cut-off of the Savitzky–Golay differentiator.

    The response of the filter divided by that of the ideal differentiator
    ``(i omega)^order`` starts at 1 and falls with frequency; the cut-off is
    where it reaches 1/sqrt(2). It is computed from the filter coefficients
    (the response ``scipy.signal.freqz`` gives) up to 255 samples, and
    beyond from its asymptotic form ``(kappa + c / window^2) / window``
    fitted to two exact values (relative error below 1e-6).

    Parameters
    ----------
    window : int, samples
        Odd window length, larger than the polynomial order
        (:data:`SAVGOL_POLYORDER`).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.

    Returns
    -------
    float, Hz
        Cut-off frequency; the Nyquist frequency if the response stays
        above -3 dB.
    """
    order = _check_order(order)
    dt = _check_dt(dt)
    p = SAVGOL_POLYORDER[order]
    w = _check_savgol_window(window, p, None)
    return _sg_cutoff_rad(w, p, order) / (2.0 * math.pi * dt)


def default_savgol_window(
    y: ArrayLike, dt: float, order: int = 1, *, cutoff_ratio: float = SAVGOL_CUTOFF_RATIO
) -> int:
    """Savitzky–Golay window matched to the signal's bandwidth.

    The longest window considered is the largest odd one whose -3 dB
    cut-off (see :func:`savgol_cutoff_hz`) is at least ``cutoff_ratio``
    times :func:`signal_bandwidth_hz`: with the default ratio 3 it
    attenuates the derivative at the band-edge frequency by about 0.1 %
    while suppressing noise above three times the band. Among the windows
    from ``polyorder + 2`` up to that one (and at most ``n // 4``, all
    rounded inward to odd numbers; the lower bound wins if they cross) the
    one with the least expected squared error is returned: the derivative
    power its roll-off removes from the significant part of the Welch
    spectrum plus the white noise power it passes. Noisy data thus get the
    bandwidth rule; clean data, and weak content standing above the noise
    beyond the band (harmonics of a nonlinear response), get shorter
    windows, down to the shortest for noise-free data.

    Parameters
    ----------
    y : (n,) array_like
        Signal to be differentiated.
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2 (selects the polynomial order).
    cutoff_ratio : float
        Lowest cut-off over bandwidth, at least 1.5 (below that the filter
        visibly attenuates the signal band itself).

    Returns
    -------
    int, samples
        Odd window length.

    Notes
    -----
    Runs in a few milliseconds even for 10^6 samples: the spectrum is a
    capped Welch average, and the search evaluates about 30 windows on it,
    wide ones through a tabulated response shape.
    """
    order = _check_order(order)
    p = SAVGOL_POLYORDER[order]
    arr = _as_signal(y, min_len=_odd_ceil(p + 2))
    dt = _check_dt(dt)
    ratio = _check_positive("cutoff_ratio", cutoff_ratio, "cut-off / bandwidth")
    if ratio < MIN_CUTOFF_RATIO:
        raise ModelSpecError(
            f"`cutoff_ratio` must be at least {MIN_CUTOFF_RATIO} (the filter would attenuate the signal band),"
            f" got {cutoff_ratio!r}"
        )
    lo, hi = _sg_window_bounds(arr.size, p)
    band = _analyse(arr, dt, _BANDWIDTH_ENERGY)
    omega_t = 2.0 * math.pi * ratio * band.bandwidth * dt
    w_max = lo if omega_t >= math.pi else _sg_window_for_cutoff(omega_t, p, order, lo, hi)
    return _sg_mse_window(band, dt, p, order, lo, w_max)


def _sg_apply(y: FloatArray, dt: float, window: int, polyorder: int, deriv: int) -> FloatArray:
    n = y.size
    m = window // 2
    # The derivative filters reproduce straight lines exactly: remove one first
    # so that offsets and drifts do not cost precision.
    intercept, slope = _linear_trend(y)
    r = y - (intercept + slope * np.arange(n, dtype=np.float64))
    proj = _sg_projector(window, polyorder)
    step = float(m) * dt  # half-window (s); dividing by it once per order never under- or overflows
    coeffs = _legendre_derivatives(np.zeros(1), polyorder, deriv)[0] @ proj
    out = np.empty(n)
    if window <= _SG_DIRECT_MAX:
        out[:] = correlate1d(r, coeffs, mode="nearest")
    else:
        out[m : n - m] = sp_signal.oaconvolve(r, coeffs[::-1], mode="valid")
    # Ends: evaluate the polynomial fitted to the first/last window at the end samples
    # (scipy's mode="interp").
    offsets = np.arange(1, m + 1, dtype=np.float64) / m
    out[:m] = _legendre_derivatives(offsets[::-1] * -1.0, polyorder, deriv) @ (proj @ r[:window])
    out[n - m :] = _legendre_derivatives(offsets, polyorder, deriv) @ (proj @ r[n - window :])
    for _ in range(deriv):
        out /= step
    if deriv == 1:
        out += slope / dt
    return out


def savgol_derivative(y: ArrayLike, dt: float, *, order: int = 1, window: int | None = None) -> FloatArray:
    """Savitzky–Golay derivative.

    Fits a polynomial of order :data:`SAVGOL_POLYORDER` (5 for the first,
    6 for the second derivative) by least squares to the ``window`` samples
    centred on each sample and differentiates it analytically. Within the
    first and last ``window // 2`` samples the polynomial of the end window
    is evaluated off-centre (scipy's ``mode="interp"``), which is noisier.

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal (any unit u).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.
    window : int or None, samples
        Odd window length; :func:`default_savgol_window` when None.

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.
    """
    order = _check_order(order)
    p = SAVGOL_POLYORDER[order]
    arr = _as_signal(y, min_len=_odd_ceil(p + 2))
    dt = _check_dt(dt)
    w = default_savgol_window(arr, dt, order) if window is None else _check_savgol_window(window, p, arr.size)
    return _sg_apply(arr, dt, w, p, order)


# ---------------------------------------------------------------------------
# Spectral
# ---------------------------------------------------------------------------
def _end_window_derivatives(
    y: FloatArray, dt: float, f_cut: float, noise_std: float, at_start: bool
) -> FloatArray:
    """Derivatives of orders ``_SPECTRAL_END_ORDERS`` (per sample^k) at one end sample.

    They come from a least-squares polynomial fit (Savitzky–Golay order for
    second derivatives) over the end window, chosen by Lepski's rule among
    the windows of second-derivative filters with cut-offs of 2, 1.5 and 1
    times ``f_cut``: the longest window is kept whose curvature agrees with
    that of every shorter one within ``_LEPSKI_K`` standard deviations of the
    shorter one's noise (white noise of ``noise_std`` per sample). Clean data
    keep the short, accurate window; noisy data move to longer, quieter ones.
    """
    p = SAVGOL_POLYORDER[2]
    lo, hi = _sg_window_bounds(y.size, p)
    windows = sorted(
        {_sg_window_for_cutoff(min(2.0 * math.pi * k * f_cut * dt, math.pi), p, 2, lo, hi) for k in (2.0, 1.5, 1.0)}
    )
    u = np.array([-1.0 if at_start else 1.0])
    basis = np.array([_legendre_derivatives(u, p, k)[0] for k in _SPECTRAL_END_ORDERS])
    scale = np.array([float(k) for k in _SPECTRAL_END_ORDERS])
    i_curv = _SPECTRAL_END_ORDERS.index(2)
    estimates: list[FloatArray] = []
    noise: list[float] = []
    for w in windows:
        m = w // 2
        proj = _sg_projector(w, p)
        seg = y[:w] if at_start else y[y.size - w :]
        est = (basis @ (proj @ seg)) / float(m) ** scale
        if any(abs(est[i_curv] - e[i_curv]) > _LEPSKI_K * sd for e, sd in zip(estimates, noise, strict=True)):
            break
        estimates.append(est)
        noise.append(noise_std * float(np.linalg.norm(basis[i_curv] @ proj)) / m**2)
    return estimates[-1]


def _end_polynomial(start: FloatArray, end: FloatArray, orders: tuple[int, ...], length: float) -> FloatArray:
    """Polynomial with prescribed derivatives at both ends of ``[0, length]`` samples.

    Returns the monomial coefficients, in ``s = i / length``, of the polynomial
    of degree ``2 len(orders) - 1`` whose ``orders[j]``-th derivative (per
    sample^k) equals ``start[j]`` at ``i = 0`` and ``end[j]`` at ``i = length``.
    """
    powers = np.arange(2 * len(orders))
    rows = []
    rhs = []
    for s_end, values in ((0.0, start), (1.0, end)):
        for k, value in zip(orders, values, strict=True):
            # d^k/ds^k s^j = j!/(j-k)! s^(j-k)
            falling = np.array([math.perm(int(j), k) for j in powers], dtype=np.float64)
            shifted = np.clip(powers - k, 0, None)
            rows.append(falling * np.where(powers >= k, s_end**shifted, 0.0))
            rhs.append(value * length**k)
    return np.asarray(np.linalg.solve(np.array(rows), np.array(rhs)), dtype=np.float64)


def spectral_derivative(
    y: ArrayLike,
    dt: float,
    *,
    order: int = 1,
    window: int | None = None,
    f_cut_hz: float | None = None,
) -> FloatArray:
    """FFT derivative with a low-pass cut-off.

    A quintic matching the signal's value and its second and fourth
    derivatives at both ends (from local polynomial fits whose length adapts
    to the noise level) is subtracted and differentiated analytically. The
    remainder and its even derivatives up to the fourth vanish at the ends,
    so its point-symmetric (odd) extension is periodic and smooth up to the
    fifth derivative; it is differentiated by multiplying its spectrum by
    ``(i omega)^order``, flat up to ``f_cut_hz`` and rolled off with a raised
    cosine to zero at ``1.25 f_cut_hz``. (An even, mirror extension would not
    do: its derivative is odd, so the first derivative would be forced to
    zero at both ends.)

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal (any unit u).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.
    window : None
        Not used by this method; must be None.
    f_cut_hz : float or None, Hz
        Cut-off; by default the larger of :data:`SPECTRAL_CUTOFF_RATIO` times
        :func:`signal_bandwidth_hz` and :func:`optimal_cutoff_hz`. At or above
        the Nyquist frequency nothing is removed.

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.

    Notes
    -----
    Exact for band-limited content below the cut-off and robust to noise
    above it, but a transient (a shock, a switch-on) rings over the whole
    record; prefer ``"savgol"`` for such data.
    """
    order = _check_order(order)
    _reject_window("spectral", window, " (set `f_cut_hz` instead)")
    p_end = SAVGOL_POLYORDER[2]
    arr = _as_signal(y, min_len=_odd_ceil(p_end + 2))
    dt = _check_dt(dt)
    nyquist = 0.5 / dt
    if f_cut_hz is None:
        f_cut, noise_std = _default_cutoff(arr, dt, order, SPECTRAL_CUTOFF_RATIO)
    else:
        f_cut = _check_positive("f_cut_hz", f_cut_hz, "cut-off frequency in Hz")
        scale = _unit_scale(arr)
        noise_std = _welch_capped(arr / scale, dt).noise_std * scale
    n = arr.size
    orders = _SPECTRAL_END_ORDERS
    coef = _end_polynomial(
        _end_window_derivatives(arr, dt, min(f_cut, nyquist), noise_std, True),
        _end_window_derivatives(arr, dt, min(f_cut, nyquist), noise_std, False),
        orders,
        float(n - 1),
    )
    s = np.linspace(0.0, 1.0, n)
    poly = np.polynomial.polynomial
    end_fit = poly.polyval(s, coef)
    end_fit_d = poly.polyval(s, poly.polyder(coef, order)) / ((n - 1) * dt) ** order
    r = arr - end_fit
    ext = np.concatenate([r, -r[-2:0:-1]])
    n_ext = ext.size
    spec = sp_fft.rfft(ext)
    freq = sp_fft.rfftfreq(n_ext, dt)
    gain = (2j * math.pi * freq) ** order
    if f_cut < nyquist:
        f_stop = (1.0 + SPECTRAL_TAPER) * f_cut
        ramp = np.clip((freq - f_cut) / (f_stop - f_cut), 0.0, 1.0)
        gain = gain * (0.5 * (1.0 + np.cos(math.pi * ramp)))
    if order % 2 == 1 and n_ext % 2 == 0:
        gain[-1] = 0.0  # the Nyquist bin of an odd derivative is undefined
    deriv = sp_fft.irfft(spec * gain, n=n_ext)[:n]
    return np.asarray(deriv + end_fit_d, dtype=np.float64)


# ---------------------------------------------------------------------------
# Finite differences
# ---------------------------------------------------------------------------
def gradient_derivative(y: ArrayLike, dt: float, *, order: int = 1, window: int | None = None) -> FloatArray:
    """Central finite-difference derivative (``numpy.gradient``, ``order`` times).

    Second-order accurate, one-sided at the ends. There is no smoothing: the
    white-noise gain of the first derivative is ``1 / (sqrt(2) dt)`` and of
    the second ``~0.6 / dt^2``, so use it only for clean (simulated) data.

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal (any unit u).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.
    window : None
        Not used by this method; must be None.

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.
    """
    order = _check_order(order)
    _reject_window("gradient", window)
    out = _as_signal(y, min_len=3)
    dt = _check_dt(dt)
    for _ in range(order):
        out = np.gradient(out, dt, edge_order=2)
    return np.asarray(out, dtype=np.float64)


#: Differentiators by name.
DIFFERENTIATORS: Mapping[str, Differentiator] = MappingProxyType(
    {
        "savgol": savgol_derivative,
        "spectral": spectral_derivative,
        "gradient": gradient_derivative,
    }
)


def _resolve_method(method: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    if callable(method):
        return getattr(method, "__name__", repr(method)), method
    if isinstance(method, str) and method in DIFFERENTIATORS:
        return method, DIFFERENTIATORS[method]
    raise ModelSpecError(
        f"unknown differentiation `method` {method!r}; valid names are {', '.join(sorted(DIFFERENTIATORS))}"
        " (or pass a callable)"
    )


def differentiate(
    y: ArrayLike,
    dt: float,
    *,
    method: str | Callable[..., Any] = "savgol",
    order: int = 1,
    window: int | None = None,
    **options: Any,
) -> FloatArray:
    """Derivative of a uniformly sampled signal by a named or given method.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit u).
    dt : float, s
        Sampling interval.
    method : str or callable
        A name in :data:`DIFFERENTIATORS` (``"savgol"``, ``"spectral"``,
        ``"gradient"``) or a callable with the same signature.
    order : int
        Derivative order, 1 or 2.
    window : int or None, samples
        Savitzky–Golay window (None: chosen from the signal).
    **options
        Extra keyword arguments of the method (``f_cut_hz`` for
        ``"spectral"``).

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.

    Raises
    ------
    ModelSpecError
        Unknown method name, unsupported option, or a callable returning
        the wrong shape.
    """
    name, fn = _resolve_method(method)
    order = _check_order(order)
    try:
        inspect.signature(fn).bind(y, dt, order=order, window=window, **options)
    except TypeError as exc:
        raise ModelSpecError(f"differentiation `method` {name!r} does not accept these options: {exc}") from None
    except ValueError:  # pragma: no cover - builtins without a signature
        pass
    out = np.asarray(fn(y, dt, order=order, window=window, **options), dtype=np.float64)
    n = np.shape(y)[0] if np.ndim(y) >= 1 else 0
    if out.shape != (n,):
        raise ModelSpecError(f"differentiation `method` {name!r} returned shape {out.shape}, expected ({n},)")
    return out


# ---------------------------------------------------------------------------
# Filtering
# ---------------------------------------------------------------------------
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
    sos = sp_signal.butter(order, fc, btype="low", output="sos", fs=1.0 / dt)
    n_sections = sos.shape[0]
    padlen = min(3 * (2 * n_sections + 1), arr.size - 1)
    return np.asarray(sp_signal.sosfiltfilt(sos, arr, padlen=padlen), dtype=np.float64)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------
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
        Channels among ``f``, ``x``, ``v``, ``a`` to filter; those the
        record lacks are skipped.
    order : int
        Butterworth order of one pass.

    Returns
    -------
    Record
        A copy with the filtered channels and a ``warnings`` note (``rec``
        itself if none of the channels is present).
    """
    names = (channels,) if isinstance(channels, str) else tuple(channels)
    unknown = [c for c in names if c not in _FILTER_CHANNELS]
    if unknown:
        raise ModelSpecError(
            f"`channels` names {', '.join(repr(c) for c in unknown)}, which cannot be filtered;"
            f" valid channels are {', '.join(_FILTER_CHANNELS)}"
        )
    present = [c for c in _FILTER_CHANNELS if c in names and getattr(rec, c) is not None]
    if not present:
        return rec
    dt = rec.dt
    new = {c: lowpass(getattr(rec, c), dt, f_cut_hz, order=order) for c in present}
    note = (
        f"low-pass filtered {', '.join(present)} at {float(f_cut_hz):.6g} Hz"
        f" (zero-phase Butterworth, order {int(order)}, forward and backward)"
    )
    return rec.replace(**new, warnings=tuple(rec.warnings) + (note,))
