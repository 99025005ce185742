"""Periodic multisines with Schroeder (low crest factor) or random phases."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import check_int, check_positive
from ..errors import ModelSpecError
from .grid import MIN_SAMPLES, _band, _one_amplitude
from .signal import Excitation, crest_factor

#: Phase laws of :func:`schroeder_multisine`.
PHASE_LAWS: tuple[str, ...] = ("schroeder", "random")


def schroeder_multisine(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float | None = None,
    rms_n: float | None = None,
    duration_s: float,
    fs_hz: float,
    periods: int = 1,
    odd_only: bool = False,
    phases: str = "schroeder",
    rng: int | np.random.Generator | None = None,
    force_unit: str = "N",
) -> Excitation:
    """Periodic multisine with equal-amplitude lines in ``[f0_hz, f1_hz]`` and Schroeder phases.

    One period has ``N = round(duration_s · fs_hz / periods)`` samples, so its lines lie on the
    grid ``k · df`` with ``df = fs_hz / N``. Every grid line ``k ≥ 1`` with ``f0_hz ≤ k·df ≤ f1_hz``
    (only odd ``k`` when ``odd_only``) gets the amplitude ``rms·√(2/K)`` (K lines) and the phase
    ``φ_j = −π·j·(j − 1)/K`` of its index ``j = 1..K`` among the excited lines (Schroeder): the
    signal sweeps the band once per period like a chirp, with a crest factor of about 1.6–1.7 when
    the band starts near ``df`` (about 1.9 for a band-pass, e.g. lines 10..109), against about 3
    for ``phases="random"``, which draws the phases uniformly from ``[0, 2π)``. One period is
    synthesised by an inverse FFT and repeated ``periods`` times, so the signal is exactly periodic
    with all of its power on the excited lines. The response needs time to reach steady state:
    discard the first period(s) before averaging.

    Parameters
    ----------
    f0_hz : float, Hz
        Lower band edge (>= 0).
    f1_hz : float, Hz
        Upper band edge (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float or None, N
        The **rms** force (> 0), not the peak (the peak is ``crest_factor · rms``). Give this or
        ``rms_n``, not both.
    rms_n : float or None, N
        Same as ``amplitude_n`` under an explicit name.
    duration_s : float, s
        Total duration (``periods`` periods), rounded to whole samples per period.
    fs_hz : float, Hz
        Sampling rate.
    periods : int
        Number of identical periods (>= 1).
    odd_only : bool
        Excite only odd lines (odd multiples of ``df``); the even lines then show even-order
        nonlinear distortion in the response.
    phases : {"schroeder", "random"}
        Phase law.
    rng : int, numpy.random.Generator or None
        Seed or generator for ``phases="random"`` (None: fresh entropy); unused for Schroeder phases.

    force_unit : str
        Unit of the force and of the amplitude (default ``"N"``; e.g. ``"V"`` for a record in volts): used
        in the description and kept on the result, never converted.

    Returns
    -------
    Excitation
        ``kind="schroeder_multisine"``; ``settings`` holds the arguments (``rms_n``, the realised
        ``duration_s``, ``rng`` when it is an int seed) and ``band_hz`` (first and last line, Hz),
        ``n_lines``, ``df_hz`` (Hz), ``period_s`` (s), ``period_samples``, ``crest_factor``.

    Raises
    ------
    ModelSpecError
        A setting is out of range or no grid line falls in the band (the message names it).
    """
    fs = check_positive("fs_hz", fs_hz, "Hz")
    check_positive("duration_s", duration_s, "s")
    n_periods = check_int("periods", periods, 1)
    rms = _one_amplitude(amplitude_n, rms_n, force_unit)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=True)
    if not isinstance(odd_only, (bool, np.bool_)):
        raise ModelSpecError(f"`odd_only` must be True or False, got {odd_only!r}")
    if phases not in PHASE_LAWS:
        raise ModelSpecError(f"`phases` must be one of {', '.join(PHASE_LAWS)}; got {phases!r}")
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer, np.random.Generator))):
        raise ModelSpecError(f"`rng` must be an int seed, a numpy Generator or None; got {rng!r}")
    n_period = round(float(duration_s) * fs / n_periods)
    n = n_period * n_periods
    if n < MIN_SAMPLES:
        raise ModelSpecError(
            f"`duration_s` · `fs_hz` must give at least {MIN_SAMPLES} samples; got {n} "
            f"({n_periods} period(s) of {n_period})"
        )
    df = fs / n_period
    k = np.arange(max(1, math.ceil(f0 / df - 1e-9)), math.floor(f1 / df + 1e-9) + 1)
    if odd_only:
        k = k[k % 2 == 1]
    n_lines = int(k.size)
    if n_lines == 0:
        raise ModelSpecError(
            f"no line of the period's frequency grid (df = fs_hz·periods/(duration_s·fs_hz) = {df:.6g} Hz"
            f"{', odd lines only' if odd_only else ''}) lies in [`f0_hz`, `f1_hz`] = [{f0:g}, {f1:g}] Hz; "
            "widen the band or lengthen `duration_s` per period"
        )
    if phases == "schroeder":
        j = np.arange(1, n_lines + 1, dtype=np.float64)
        phi = -np.pi * j * (j - 1.0) / n_lines
    else:
        phi = np.random.default_rng(rng).uniform(0.0, 2.0 * np.pi, n_lines)
    line_amp = rms * math.sqrt(2.0 / n_lines)
    spec = np.zeros(n_period // 2 + 1, dtype=np.complex128)
    spec[k] = 0.5 * n_period * line_amp * np.exp(1j * phi)
    one = np.fft.irfft(spec, n_period)
    force = np.tile(one, n_periods)
    t = np.arange(n, dtype=np.float64) / fs
    band = (float(k[0] * df), float(k[-1] * df))
    cf = crest_factor(force)
    settings: dict[str, Any] = {
        "f0_hz": f0, "f1_hz": f1, "rms_n": rms, "duration_s": n / fs, "fs_hz": fs, "periods": n_periods,
        "odd_only": bool(odd_only), "phases": phases,
        "rng": int(rng) if isinstance(rng, (int, np.integer)) else None,
        "band_hz": band, "n_lines": n_lines, "df_hz": df, "period_s": n_period / fs,
        "period_samples": n_period, "crest_factor": cf,
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="schroeder_multisine", settings=settings, force_unit=str(force_unit),
        description=(f"{phases} multisine {rms:g} {force_unit} rms, {n_lines} {'odd ' if odd_only else ''}lines "
                     f"{band[0]:g}-{band[1]:g} Hz, {n_periods} x {n_period / fs:g} s, crest factor {cf:.2f}"),
    )
