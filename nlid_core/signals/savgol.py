"""Savitzky–Golay differentiation in a Legendre basis, with the default window chosen from the signal."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.polynomial import legendre
from numpy.typing import ArrayLike
from scipy.ndimage import correlate1d
from scipy.optimize import brentq

from .._checks import check_positive as _check_positive
from ..errors import ModelSpecError
from ._args import FloatArray, _as_signal, _check_dt, _check_order, _linear_trend, _odd_ceil, _odd_floor
from .bandwidth import _BANDWIDTH_ENERGY, _analyse, _Band

__all__ = [
    "SAVGOL_POLYORDER",
    "SAVGOL_CUTOFF_RATIO",
    "MIN_CUTOFF_RATIO",
    "savgol_derivative",
    "savgol_cutoff_hz",
    "default_savgol_window",
]

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
_HALF_POWER = 1.0 / math.sqrt(2.0)


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
        from scipy import signal as sp_signal  # noqa: PLC0415 (0.4 s to import: only when filtering)

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


