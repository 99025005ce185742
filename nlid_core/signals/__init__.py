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

Modules
-------
:mod:`~nlid_core.signals.differentiate` (contract, registry, central
differences), :mod:`~nlid_core.signals.savgol`,
:mod:`~nlid_core.signals.spectral`, :mod:`~nlid_core.signals.bandwidth`
(bandwidth and noise-optimal cut-off), :mod:`~nlid_core.signals.filters`
(low-pass filtering) and :mod:`~nlid_core.signals.derive` (missing channels
of a record). Every public name is importable from ``nlid_core.signals``.
"""

from __future__ import annotations

from .bandwidth import optimal_cutoff_hz, signal_bandwidth_hz
from .derive import derive_missing
from .differentiate import DIFFERENTIATORS, Differentiator, differentiate, gradient_derivative
from .filters import filter_record, lowpass
from .savgol import (
    MIN_CUTOFF_RATIO,
    SAVGOL_CUTOFF_RATIO,
    SAVGOL_POLYORDER,
    default_savgol_window,
    savgol_cutoff_hz,
    savgol_derivative,
)
from .spectral import SPECTRAL_CUTOFF_RATIO, spectral_derivative

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
