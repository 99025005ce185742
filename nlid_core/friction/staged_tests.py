"""The two tests of a staged friction identification, simulated from a LuGre truth: the servo velocity
staircase (steady friction at each plateau) and the pre-sliding chirp (bristle stiffness and damping)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..terms.models import LUGRE_AXIS, LUGRE_LOOP
from .simlab import (
    DEFAULT_MASS, DEFAULT_TRUTH, PRESLIDING_KINDS, FrictionExperiment, Plateau, _bristle_ratio, _grid,
    _max_weakening_slope, _noise, _positive, _record, _solve, _truth
)

FloatArray = NDArray[np.float64]

__all__ = ["staircase_levels", "servo_staircase", "presliding_natural_frequency_hz", "presliding_chirp"]


# ---------------------------------------------------------------------------------------------- staircase
def staircase_levels(params: Mapping[str, float], n_levels: int = 12) -> FloatArray:
    """Default velocity levels (m/s, positive, ascending) of :func:`servo_staircase`.

    Log-spaced from ``0.1·vs`` to ``max(50·vs, min(Fc/σ2, 1 m/s))``: through the Stribeck region
    and up to where the viscous part σ2·v is comparable with Fc (capped at 1 m/s of stroke speed).
    """
    if int(n_levels) < 2:
        raise ModelSpecError(f"`n_levels` must be >= 2, got {n_levels}")
    vs = float(params["vs"])
    visc = float(params["Fc"]) / float(params["sigma2"]) if params["sigma2"] > 0 else math.inf
    v_max = max(50.0 * vs, min(visc, 1.0))
    return np.geomspace(0.1 * vs, v_max, int(n_levels))


def _smooth_steps(t: FloatArray, times: FloatArray, values: FloatArray, ramp_s: float) -> tuple[FloatArray, FloatArray]:
    """Piecewise-constant ``values`` switched at ``times`` with raised-cosine ramps of ``ramp_s``;
    returns the signal and its exact integral from 0."""
    v = np.zeros_like(t)
    integral = np.zeros_like(t)
    prev = 0.0
    for t0, val in zip(times, values, strict=True):
        d = float(val) - prev
        s = np.clip((t - t0) / ramp_s, 0.0, 1.0)
        v += d * 0.5 * (1.0 - np.cos(np.pi * s))
        # integral of 0.5(1 − cos(πs)) dt over the ramp, then linear
        tau = np.clip(t - t0, 0.0, None)
        in_ramp = 0.5 * (tau - ramp_s / np.pi * np.sin(np.pi * np.minimum(tau, ramp_s) / ramp_s))
        after = 0.5 * ramp_s + (tau - ramp_s)
        integral += d * np.where(tau <= ramp_s, in_ramp, after)
        prev = float(val)
    return v, integral


def servo_staircase(
    params: Mapping[str, float] = DEFAULT_TRUTH,
    *,
    mass: float = DEFAULT_MASS,
    levels: Sequence[float] | None = None,
    dwell_s: float = 1.0,
    ramp_s: float = 0.05,
    rest_s: float = 0.2,
    min_travel: float = 20.0,
    fs_hz: float = 2000.0,
    kp: float | None = None,
    ki: float | None = None,
    noise: Mapping[str, float] | None = None,
    seed: int = 11,
    oversample: int = 4,
    name: str = "friction-staircase",
) -> FrictionExperiment:
    r"""An axis under PI velocity control tracking a velocity staircase in both directions.

    The drive force is :math:`f = k_p (v_{ref} - \dot x) + k_i \int_0^t (v_{ref} - \dot x)\,dt`.
    With :math:`x_{ref} = \int_0^t v_{ref}` and ``x(0) = 0`` the integral is ``x_ref − x``, so the
    closed loop is the term model ``m0 + c1 + k1 + lugre`` (``c1 = kp``, ``k1 = ki``) driven by
    :math:`k_p v_{ref} + k_i x_{ref}`; the recorded drive force is computed from the simulated
    state by the formula above.

    The reference rests at zero for ``rest_s``, then holds each level ``v`` for
    ``max(dwell_s, min_travel·(Fs/σ0)/v)``, first ``+v`` then ``−v`` (so the stroke returns),
    levels ascending; changes are raised-cosine ramps of ``ramp_s`` at the start of each dwell.
    The bristles settle over a travel of a few ``Fs/σ0`` and the loop's hunting at the slowest
    levels decays with travel, hence the minimum travel. Plateaus whose level lies in the
    velocity-weakening region may hunt (stick-slip under the loop) with some parameters, as on
    a real axis.

    Parameters
    ----------
    params : mapping
        True LuGre parameters ``sigma0 sigma1 sigma2 Fc Fs vs`` (SI).
    mass : float, kg
        Moving mass.
    levels : sequence of float or None, m/s
        Positive speed levels; None: :func:`staircase_levels` (12 levels, 0.1·vs upwards).
    dwell_s : float, s
        Shortest time at each level (both signs each).
    ramp_s : float, s
        Transition time between levels (< ``dwell_s``).
    rest_s : float, s
        Initial rest.
    min_travel : float
        Least travel per plateau, in pre-sliding lengths ``Fs/σ0`` (20: the default truth's
        slowest level, 0.1·vs, settles to about 1e-5 of its velocity within the second half).
    fs_hz : float, Hz
        Sampling rate of the record.
    kp : float or None, N·s/m
        Proportional gain; None: ``m·2π·20 Hz + 2·max(−dF_ss/dv)`` (a 20 Hz loop that also
        dominates the steepest velocity-weakening slope of the steady curve).
    ki : float or None, N/m
        Integral gain; None: ``kp²/(2m)`` (damping ratio ≈ 0.7 of the mass under the loop).
    noise : mapping or None
        Standard deviations per channel: ``x`` (m), ``v`` (m/s), ``f`` (N). None: encoder
        1e-6 m, velocity 1e-5 m/s, drive force 1 % of Fc.
    seed : int
        Noise seed.
    oversample : int
        Simulation grid refinement (see the module notes).
    name : str
        Record name.

    Returns
    -------
    FrictionExperiment
        Record channels ``t, f, x, v``; ``plateaus`` lists the commanded levels.

    Raises
    ------
    ModelSpecError
        Invalid parameters or settings.
    SimulationError
        The simulation failed.
    """
    truth = _truth(params, mass)
    dwell = _positive("dwell_s", dwell_s)
    ramp = _positive("ramp_s", ramp_s)
    fs = _positive("fs_hz", fs_hz)
    if ramp >= dwell:
        raise ModelSpecError(f"`ramp_s` ({ramp:g}) must be shorter than `dwell_s` ({dwell:g})")
    if not (math.isfinite(rest_s) and rest_s >= 0):
        raise ModelSpecError(f"`rest_s` must be >= 0, got {rest_s}")
    lv = staircase_levels(truth) if levels is None else np.asarray(levels, dtype=np.float64).reshape(-1)
    if lv.size == 0 or not np.all(np.isfinite(lv)) or np.any(lv <= 0):
        raise ModelSpecError(f"`levels` must be positive speeds (m/s), got {levels!r}")
    if kp is None:
        kp = truth["m0"] * 2 * math.pi * 20.0 + 2.0 * _max_weakening_slope(truth)
    if ki is None:
        ki = kp * kp / (2.0 * truth["m0"])
    kp = _positive("kp", kp)
    ki = _positive("ki", ki)
    nz = _noise({"x": 1e-6, "v": 1e-5, "f": 0.01 * truth["Fc"]} if noise is None else noise, ("x", "v", "f"))

    if not (math.isfinite(min_travel) and min_travel >= 0):
        raise ModelSpecError(f"`min_travel` must be >= 0, got {min_travel}")
    signed = np.ravel(np.column_stack([lv, -lv]))
    dwells = np.maximum(dwell, min_travel * truth["Fs"] / truth["sigma0"] / np.abs(signed))
    starts = rest_s + np.concatenate([[0.0], np.cumsum(dwells)[:-1]])
    duration = rest_s + float(np.sum(dwells))
    t, t_fine = _grid(duration, fs, oversample)
    v_ref, x_ref = _smooth_steps(t_fine, starts, signed, ramp)
    u = kp * v_ref + ki * x_ref
    values = {**truth, "c1": kp, "k1": ki}
    tr = _solve(LUGRE_LOOP, values, t_fine, u)
    q = int(oversample)
    x, v, z = tr.output("x")[::q], tr.output("v")[::q], tr.output("z")[::q]
    f = kp * (v_ref[::q] - v) + ki * (x_ref[::q] - x)
    plateaus = tuple(Plateau(t_start_s=float(s + ramp), t_end_s=float(s + d), v_ref_m_s=float(val))
                     for s, d, val in zip(starts, dwells, signed, strict=True))
    design = {"kind": "servo_staircase", "levels_m_s": [float(a) for a in lv], "dwell_s": dwell, "ramp_s": ramp,
              "rest_s": float(rest_s), "min_travel": float(min_travel), "fs_hz": fs, "kp": kp, "ki": ki, "oversample": q,
              "v_ref": "levels +v then -v, ascending"}
    meta = {"true_parameters": dict(truth), "excitation": (
        f"PI velocity loop (kp {kp:.4g} N·s/m, ki {ki:.4g} N/m) on a velocity staircase of {lv.size} levels "
        f"{lv[0]:.3g}..{lv[-1]:.3g} m/s, both directions, at least {dwell:g} s each"),
        "controller": {"kp": kp, "ki": ki}, "design": design}
    rec, clean = _record(name, t, {"x": x, "v": v, "f": f}, nz, seed, meta)
    return FrictionExperiment(name=name, record=rec, clean=clean, truth=MappingProxyType(truth), z=z,
                              design=MappingProxyType(design), plateaus=plateaus,
                              max_bristle_ratio=_bristle_ratio(z, truth), success=True,
                              message=f"staircase of {signed.size} plateaus simulated ({tr.method})")


# ---------------------------------------------------------------------------------------------- pre-sliding
def presliding_natural_frequency_hz(params: Mapping[str, float], mass: float) -> float:
    """√(σ0/m)/2π: the natural frequency of the mass on the bristles (Hz)."""
    return math.sqrt(float(params["sigma0"]) / float(mass)) / (2 * math.pi)


def presliding_chirp(
    params: Mapping[str, float] = DEFAULT_TRUTH,
    *,
    mass: float = DEFAULT_MASS,
    kind: str = "chirp",
    amplitude_fraction: float = 0.7,
    f0_hz: float = 1.0,
    f1_hz: float | None = None,
    duration_s: float = 5.0,
    fs_hz: float | None = None,
    noise: Mapping[str, float] | None = None,
    seed: int = 12,
    oversample: int = 4,
    name: str = "friction-presliding",
) -> FrictionExperiment:
    r"""Open-loop force below breakaway, from rest: pre-sliding (bristle) motion.

    ``kind``:

    * ``"chirp"`` — :math:`A \sin(2\pi(f_0 t + (f_1 - f_0) t^2 / 2T))`, through the pre-sliding
      resonance √(σ0/m)/2π so that σ1 (its damping) is visible;
    * ``"sine"`` — :math:`A \sin(2\pi f_0 t)`;
    * ``"ramp"`` — a slow triangle 0 → A → 0 over the duration (``amplitude_fraction >= 1`` ramps
      through breakaway).

    with ``A = amplitude_fraction·Fs``. Below breakaway the displacement is of the order of
    ``A/σ0`` (micrometres for the seed's ranges) and returns with the force.

    Parameters
    ----------
    params : mapping
        True LuGre parameters (SI).
    mass : float, kg
    kind : {"chirp", "sine", "ramp"}
    amplitude_fraction : float
        Force amplitude as a fraction of Fs.
    f0_hz : float, Hz
        Chirp start frequency, or the sine's frequency.
    f1_hz : float or None, Hz
        Chirp end frequency; None: twice the pre-sliding natural frequency.
    duration_s : float, s
    fs_hz : float or None, Hz
        Sampling rate; None: at least 2 kHz and 10 times the highest excited frequency.
    noise : mapping or None
        ``x`` (m) and ``f`` (N); None: displacement 1e-8 m (laser/interferometer), force 5 mN.
    seed : int
    oversample : int
    name : str

    Returns
    -------
    FrictionExperiment
        Record channels ``t, f, x`` (x in metres).

    Raises
    ------
    ModelSpecError
        Invalid parameters or settings.
    SimulationError
        The simulation failed.
    """
    truth = _truth(params, mass)
    if kind not in PRESLIDING_KINDS:
        raise ModelSpecError(f"unknown `kind` {kind!r}; choose from {', '.join(PRESLIDING_KINDS)}")
    frac = _positive("amplitude_fraction", amplitude_fraction)
    dur = _positive("duration_s", duration_s)
    f0 = _positive("f0_hz", f0_hz)
    fn = presliding_natural_frequency_hz(truth, truth["m0"])
    f1 = _positive("f1_hz", 2.0 * fn if f1_hz is None else f1_hz)
    top = max(f0, f1) if kind == "chirp" else f0 if kind == "sine" else 1.0 / dur
    fs = _positive("fs_hz", max(2000.0, 10.0 * top) if fs_hz is None else fs_hz)
    if fs < 5.0 * top:
        raise ModelSpecError(f"`fs_hz` = {fs:g} is below 5 times the highest excited frequency {top:g} Hz")
    nz = _noise({"x": 1e-8, "f": 5e-3} if noise is None else noise, ("x", "f"))
    amp = frac * truth["Fs"]
    t, t_fine = _grid(dur, fs, oversample)
    if kind == "chirp":
        u = amp * np.sin(2 * np.pi * (f0 * t_fine + 0.5 * (f1 - f0) / dur * t_fine**2))
        text = f"force chirp {amp:.3g} N ({frac:g}·Fs), {f0:g}->{f1:.4g} Hz over {dur:g} s"
    elif kind == "sine":
        u = amp * np.sin(2 * np.pi * f0 * t_fine)
        text = f"force sine {amp:.3g} N ({frac:g}·Fs) at {f0:g} Hz for {dur:g} s"
    else:
        u = amp * (1.0 - np.abs(2.0 * t_fine / dur - 1.0))
        text = f"force triangle ramp 0 -> {amp:.3g} N ({frac:g}·Fs) -> 0 over {dur:g} s"
    tr = _solve(LUGRE_AXIS, truth, t_fine, u)
    q = int(oversample)
    x, z = tr.output("x")[::q], tr.output("z")[::q]
    f = u[::q]
    design = {"kind": f"presliding_{kind}", "amplitude_n": amp, "amplitude_fraction": frac, "f0_hz": f0,
              "f1_hz": f1 if kind == "chirp" else None, "duration_s": dur, "fs_hz": fs, "oversample": q,
              "natural_frequency_hz": fn}
    meta = {"true_parameters": dict(truth), "excitation": text, "design": design}
    rec, clean = _record(name, t, {"x": x, "f": f}, nz, seed, meta)
    ratio = _bristle_ratio(z, truth)
    msg = (f"pre-sliding {kind}: max |x| = {np.max(np.abs(x)) * 1e6:.3g} µm, max σ0|z|/Fs = {ratio:.2f}"
           + (" (the bristle force reached the static level: the axis slid)" if ratio > 0.98 else ""))
    return FrictionExperiment(name=name, record=rec, clean=clean, truth=MappingProxyType(truth), z=z,
                              design=MappingProxyType(design), max_bristle_ratio=ratio, success=True, message=msg)
