"""Stepped tests: dwells at single frequencies (:func:`stepped_sine`) and one excitation at several
levels (:func:`stepped_amplitude`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._checks import check_positive
from ..errors import ModelSpecError
from .grid import MIN_SAMPLES, FloatArray, _as_frequencies, _as_levels, _check_nonnegative, _check_taper, _taper_window
from .signal import Excitation

def stepped_sine(
    frequencies_hz: Sequence[float] | ArrayLike,
    *,
    amplitude_n: float,
    dwell_s: float,
    fs_hz: float,
    ramp_s: float | None = None,
    force_unit: str = "N",
) -> Excitation:
    """Consecutive constant-frequency sines, phase-continuous from one frequency to the next.

    Segment ``j`` lasts ``dwell = round(dwell_s · fs_hz) / fs_hz`` and has the frequency
    ``frequencies_hz[j]``; the phase is integrated through the steps, so the force is continuous
    (only its slope changes at a step). The whole signal fades in and out over ``ramp_s`` with a
    raised cosine, so it starts and ends at zero force. Each dwell should be long enough for the
    response transient after a step to decay before the part that is analysed.

    Parameters
    ----------
    frequencies_hz : sequence of float, Hz
        Frequency of each dwell, in playing order (each > 0 and at most ``fs_hz / 5``; repeats and
        descending orders are allowed).
    amplitude_n : float, N
        Peak amplitude (> 0).
    dwell_s : float, s
        Duration of each segment (at least one cycle of the lowest frequency).
    fs_hz : float, Hz
        Sampling rate.
    ramp_s : float or None, s
        Fade-in at the start and fade-out at the end (0: none; at most ``dwell_s / 2``); default
        ``dwell_s / 10``.

    force_unit : str
        Unit of the force and of the amplitude (default ``"N"``; e.g. ``"V"`` for a record in volts): used
        in the description and kept on the result, never converted.

    Returns
    -------
    Excitation
        ``kind="stepped_sine"``; ``settings`` holds the arguments (``dwell_s`` and ``ramp_s`` as
        realised), ``band_hz`` (lowest, highest frequency) and ``segment_starts_s`` (s).

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs = check_positive("fs_hz", fs_hz, "Hz")
    amp = check_positive("amplitude_n", amplitude_n, force_unit)
    dwell_req = check_positive("dwell_s", dwell_s, "s")
    freqs = _as_frequencies(frequencies_hz, fs)
    n_dwell = round(dwell_req * fs)
    dwell = n_dwell / fs
    if n_dwell < 1 or dwell * float(freqs.min()) < 1.0:
        raise ModelSpecError(
            f"`dwell_s` = {dwell_req:g} s must hold at least one cycle of the lowest frequency "
            f"({float(freqs.min()):g} Hz)"
        )
    n = n_dwell * freqs.size
    if n < MIN_SAMPLES:
        raise ModelSpecError(
            f"`dwell_s` · `fs_hz` · len(`frequencies_hz`) must give at least {MIN_SAMPLES} samples; got {n}"
        )
    ramp = dwell / 10.0 if ramp_s is None else _check_taper("ramp_s", ramp_s, dwell)
    n_ramp = round(ramp * fs)
    t = np.arange(n, dtype=np.float64) / fs
    seg = np.arange(n) // n_dwell
    start_phase = 2.0 * np.pi * dwell * np.concatenate(([0.0], np.cumsum(freqs)[:-1]))
    phase = start_phase[seg] + 2.0 * np.pi * freqs[seg] * (t - seg * dwell)
    force = amp * np.sin(phase) * _taper_window(n, n_ramp)
    f_list = tuple(float(f) for f in freqs)
    settings: dict[str, Any] = {
        "frequencies_hz": f_list, "amplitude_n": amp, "dwell_s": dwell, "fs_hz": fs, "ramp_s": n_ramp / fs,
        "band_hz": (min(f_list), max(f_list)),
        "segment_starts_s": tuple(float(j * dwell) for j in range(freqs.size)),
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="stepped_sine", settings=settings,
        force_unit=str(force_unit),
        description=(f"stepped sine {amp:g} {force_unit}, {len(f_list)} steps {min(f_list):g}-{max(f_list):g} Hz, "
                     f"{dwell:g} s each"),
    )


def stepped_amplitude(
    base: Excitation,
    levels: Sequence[float] | ArrayLike,
    *,
    pause_s: float | None = None,
) -> Excitation:
    """The same excitation repeated at several amplitude multipliers, with zero-force pauses.

    The result is ``levels[0]·base, pause, levels[1]·base, pause, …, levels[-1]·base`` at the base's
    sampling rate. A linear system's response scales with the level; a nonlinear one changes shape
    (resonance shift, harmonics), which is what the test is for. The pause lets the response ring
    down between levels; use a base that starts and ends at zero force (a taper or ramp) so that
    the transitions are smooth.

    Parameters
    ----------
    base : Excitation
        The excitation to repeat.
    levels : sequence of float
        Amplitude multipliers (dimensionless, each > 0, at least one), in playing order.
    pause_s : float or None, s
        Zero-force pause between consecutive levels (>= 0; none after the last); default a tenth of
        the base's duration.

    Returns
    -------
    Excitation
        ``kind="stepped_amplitude"``; ``settings`` holds ``levels``, ``pause_s`` (as realised),
        ``base_kind``, ``base_settings``, ``band_hz`` (the base's), ``level_slices`` (``(start,
        stop)`` sample indices of each level) and ``level_bounds_s`` (``(start, end)`` times, s).

    Raises
    ------
    ModelSpecError
        ``base`` is not an Excitation, or a level or the pause is out of range.
    """
    if not isinstance(base, Excitation):
        raise ModelSpecError(f"`base` must be an Excitation, got {type(base).__name__}")
    lv = _as_levels(levels)
    fs = base.fs_hz
    pause = base.duration_s / 10.0 if pause_s is None else _check_nonnegative("pause_s", pause_s, "s")
    n_pause = round(pause * fs)
    n_base = base.n_samples
    pieces: list[FloatArray] = []
    slices: list[tuple[int, int]] = []
    start = 0
    for i, level in enumerate(lv):
        if i:
            pieces.append(np.zeros(n_pause))
            start += n_pause
        pieces.append(level * base.force)
        slices.append((start, start + n_base))
        start += n_base
    force = np.concatenate(pieces)
    t = np.arange(force.size, dtype=np.float64) / fs
    level_list = tuple(float(v) for v in lv)
    settings: dict[str, Any] = {
        "levels": level_list, "pause_s": n_pause / fs, "base_kind": base.kind,
        "base_settings": dict(base.settings), "band_hz": base.band_hz,
        "level_slices": tuple(slices),
        "level_bounds_s": tuple((a / fs, b / fs) for a, b in slices),
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="stepped_amplitude", settings=settings, force_unit=base.force_unit,
        description=(f"{base.description or base.kind} at levels "
                     f"{', '.join(f'{v:g}' for v in level_list)} with {n_pause / fs:g} s pauses"),
    )
