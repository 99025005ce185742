"""Swept sines: :func:`linear_chirp` (equal time per hertz) and :func:`log_chirp` (equal time per octave)."""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_positive
from .grid import _band, _check_taper, _grid, _taper_window
from .signal import Excitation

def linear_chirp(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float,
    duration_s: float,
    fs_hz: float,
    taper_s: float = 0.0,
    force_unit: str = "N",
) -> Excitation:
    """Linear sweep ``A·sin(2π(f0·t + (f1 − f0)·t²/(2T)))`` with an optional cosine fade-in/out.

    The phase law is that of :func:`nlid_core.examples.chirp_force`: the instantaneous frequency
    rises linearly from ``f0_hz`` at t = 0 to ``f1_hz`` at t = ``duration_s``, so equal time is
    spent per hertz (most of it above resonance when the band is wide).

    Parameters
    ----------
    f0_hz : float, Hz
        Start frequency (>= 0).
    f1_hz : float, Hz
        End frequency (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float, N
        Peak amplitude ``A`` (> 0).
    duration_s : float, s
        Sweep duration ``T``; ``n = round(duration_s · fs_hz)`` samples at ``t = i / fs_hz``.
    fs_hz : float, Hz
        Sampling rate.
    taper_s : float, s
        Length of the raised-cosine fade-in at the start and fade-out at the end (0: none; at most
        ``duration_s / 2``). With a taper the first and last samples are 0.

    force_unit : str
        Unit of the force and of the amplitude (default ``"N"``; e.g. ``"V"`` for a record in volts): used
        in the description and kept on the result, never converted.

    Returns
    -------
    Excitation
        ``kind="linear_chirp"``; ``settings`` holds the arguments and ``band_hz = (f0_hz, f1_hz)``.

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs, duration, n, t = _grid(fs_hz, duration_s)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=True)
    amp = check_positive("amplitude_n", amplitude_n, force_unit)
    taper = _check_taper("taper_s", taper_s, duration)
    phase = 2.0 * np.pi * (f0 * t + 0.5 * (f1 - f0) / duration * t * t)
    force = amp * np.sin(phase) * _taper_window(n, round(taper * fs))
    settings = {"f0_hz": f0, "f1_hz": f1, "amplitude_n": amp, "duration_s": duration, "fs_hz": fs,
                "taper_s": taper, "band_hz": (f0, f1)}
    return Excitation(t_s=t, force=force, fs_hz=fs, kind="linear_chirp", settings=settings,
                      force_unit=str(force_unit),
                      description=f"linear chirp {amp:g} {force_unit}, {f0:g}->{f1:g} Hz over {duration:g} s")


def log_chirp(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float,
    duration_s: float,
    fs_hz: float,
    taper_s: float = 0.0,
    force_unit: str = "N",
) -> Excitation:
    """Exponential sweep: instantaneous frequency ``f0·r^(t/T)`` with ``r = f1/f0``.

    The phase is ``2π·f0·T/ln r·(r^(t/T) − 1)``, so the sweep spends equal time per octave
    (``T / log2 r``): a wide band is covered with as much time below resonance (stiffness
    regime) as above it (inertia regime).

    Parameters
    ----------
    f0_hz : float, Hz
        Start frequency (> 0).
    f1_hz : float, Hz
        End frequency (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float, N
        Peak amplitude (> 0).
    duration_s : float, s
        Sweep duration ``T``; ``n = round(duration_s · fs_hz)`` samples at ``t = i / fs_hz``.
    fs_hz : float, Hz
        Sampling rate.
    taper_s : float, s
        Length of the raised-cosine fade-in and fade-out (0: none; at most ``duration_s / 2``).

    force_unit : str
        Unit of the force and of the amplitude (default ``"N"``; e.g. ``"V"`` for a record in volts): used
        in the description and kept on the result, never converted.

    Returns
    -------
    Excitation
        ``kind="log_chirp"``; ``settings`` holds the arguments, ``band_hz``, ``octaves`` and
        ``s_per_octave`` (s).

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs, duration, n, t = _grid(fs_hz, duration_s)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=False)
    amp = check_positive("amplitude_n", amplitude_n, force_unit)
    taper = _check_taper("taper_s", taper_s, duration)
    log_r = math.log(f1 / f0)
    phase = 2.0 * np.pi * f0 * duration / log_r * np.expm1(log_r * t / duration)
    force = amp * np.sin(phase) * _taper_window(n, round(taper * fs))
    octaves = math.log2(f1 / f0)
    settings = {"f0_hz": f0, "f1_hz": f1, "amplitude_n": amp, "duration_s": duration, "fs_hz": fs,
                "taper_s": taper, "band_hz": (f0, f1), "octaves": octaves, "s_per_octave": duration / octaves}
    return Excitation(t_s=t, force=force, fs_hz=fs, kind="log_chirp", settings=settings,
                      force_unit=str(force_unit),
                      description=f"log chirp {amp:g} {force_unit}, {f0:g}->{f1:g} Hz over {duration:g} s "
                                  f"({duration / octaves:.3g} s per octave)")
