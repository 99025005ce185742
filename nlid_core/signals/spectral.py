"""FFT differentiation with a raised-cosine low-pass and polynomial end matching."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import fft as sp_fft

from .._checks import check_positive as _check_positive
from ._args import FloatArray, _as_signal, _check_dt, _check_order, _odd_ceil, _reject_window
from .bandwidth import _default_cutoff, _unit_scale, _welch_capped
from .savgol import SAVGOL_POLYORDER, _legendre_derivatives, _sg_projector, _sg_window_bounds, _sg_window_for_cutoff

__all__ = ["SPECTRAL_CUTOFF_RATIO", "spectral_derivative"]

#: Lowest default cut-off of the spectral differentiator, as a multiple of the
#: signal bandwidth. Its passband is flat, so it can sit closer to the band.
SPECTRAL_CUTOFF_RATIO = 2.0
#: Width of the spectral differentiator's raised-cosine roll-off, as a
#: fraction of the cut-off (flat to ``f_cut``, zero from ``1.25 f_cut``).
SPECTRAL_TAPER = 0.25
#: Threshold (noise standard deviations) of the Lepski window choice at the ends.
_LEPSKI_K = 4.0
#: Derivative orders matched at both ends before the spectral differentiator's
#: odd extension (adding the 4th cuts the end error on clean data severalfold
#: at no cost in noise).
_SPECTRAL_END_ORDERS: tuple[int, ...] = (0, 2, 4)


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


