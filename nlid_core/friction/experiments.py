r"""Simulated friction experiments with a known answer (LuGre truth).

Each generator simulates an axis of mass ``m`` with LuGre friction (the ``lugre`` term,
:mod:`nlid_core.terms.library.lugre`),

.. math::

    m\,\ddot x + \sigma_0 z + \sigma_1 \dot z + \sigma_2 \dot x = f, \qquad
    \dot z = \dot x - \sigma_0 \frac{|\dot x|}{g(\dot x)} z, \qquad
    g(v) = F_c + (F_s - F_c)\,e^{-(v/v_s)^2},

from rest with the bristles unloaded (``z = 0``, its steady value at rest), adds sensor noise and
returns a :class:`FrictionExperiment` holding the noisy record, the noise-free one, the hidden
bristle deflection and the truth:

* :func:`servo_staircase` — PI velocity loop tracking a velocity staircase in both directions,
  recorded ``t, f, x, v`` (``f`` the drive command): the steady friction curve (Fc, Fs, vs, σ2).
* :func:`presliding_chirp` — open-loop force below breakaway (chirp, sine or slow triangle ramp),
  recorded ``t, f, x``: micrometre pre-sliding motion (σ0, σ1).
* :func:`force_driven_rail` — open-loop force crossing breakaway, so the mass sticks and slips,
  recorded ``t, f, x, v``.
* ``stick-slip`` in :data:`FRICTION_EXAMPLES` — the mass-spring-belt oscillator of
  :mod:`nlid_core.friction.stickslip`.

Accuracy: the model is integrated by the implicit SDIRK4 of the model layer
(:func:`nlid_core.dynamics.integrate.integrate`) with relative tolerance ``1e-10`` and absolute
tolerances ``1e-10`` times the pre-sliding scales (``Fs/σ0`` for x and z, ``Fs/σ0·√(σ0/m)`` for
v), on a grid ``oversample`` (default 4) times finer than the record, the force being a
continuous function of time sampled on that grid (cubic-spline reconstruction between fine
samples); the records are the fine solution at every ``oversample``-th point. The noise-free
records agree with :func:`scipy.integrate.solve_ivp` (DOP853, rtol 1e-13, the force as a
continuous function) to about 3e-7 of their range (1e-11 m on a 36 µm pre-sliding record,
three decades below the displacement noise; checked by the tests). In the closed loop the controller is part of the simulated
dynamics (see :func:`servo_staircase`); measurement noise is added to the recorded channels
afterwards (the simulated controller acts on the true velocity).

Noise is Gaussian, independent per channel, drawn in the order x, v, f from
``numpy.random.default_rng(seed)``; a channel not named in ``noise`` is recorded clean.

The default truth (:data:`DEFAULT_TRUTH`) is the classic LuGre parameter set of Canudas de Wit et
al. (1995) with σ1 rounded to 300 N·s/m: m = 1 kg, σ0 = 1e5 N/m, σ1 = 300 N·s/m,
σ2 = 0.4 N·s/m, Fc = 1 N, Fs = 1.5 N, vs = 1 mm/s; it lies in the ranges of seed 004. The
pre-sliding mode ``m·ẍ + σ1·ẋ + σ0·x`` then has its natural frequency at √(σ0/m)/2π ≈ 50 Hz
with damping ratio σ1/(2√(σ0·m)) ≈ 0.47 (well damped, so a chirp through it stays below
breakaway), and the Stribeck drop Fs − Fc = 0.5 N over vs = 1 mm/s makes both stick-slip and
the velocity-weakening slope (up to (Fs − Fc)·√(2/e)/vs ≈ 430 N·s/m) that the velocity loop
must dominate.

References
----------
C. Canudas de Wit, H. Olsson, K. J. Åström, P. Lischinsky, "A new model for control of systems
with friction", IEEE Trans. Automatic Control 40(3), 1995, doi:10.1109/9.376053.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics.integrate import Trajectory, integrate
from ..errors import ModelSpecError, SimulationError
from ..models import TermModel
from ..record import Record, from_arrays
from ..terms.models import LUGRE_AXIS, LUGRE_LOOP
from ..terms.registry import get_term

__all__ = [
    "DEFAULT_TRUTH",
    "DEFAULT_MASS",
    "LUGRE_PARAMETERS",
    "FRICTION_EXAMPLES",
    "FrictionExample",
    "FrictionExperiment",
    "Plateau",
    "PRESLIDING_KINDS",
    "RAIL_KINDS",
    "servo_staircase",
    "presliding_chirp",
    "force_driven_rail",
    "stick_slip_experiment",
    "friction_example",
    "staircase_levels",
    "steady_friction",
    "presliding_natural_frequency_hz",
]

FloatArray = NDArray[np.float64]

#: LuGre parameter names, in the ``lugre`` term's order.
LUGRE_PARAMETERS: tuple[str, ...] = get_term("lugre").param_names

#: Default true LuGre parameters (SI; see the module notes for the choice).
DEFAULT_TRUTH: Mapping[str, float] = MappingProxyType(
    {"sigma0": 1e5, "sigma1": 300.0, "sigma2": 0.4, "Fc": 1.0, "Fs": 1.5, "vs": 1e-3})
#: Default moving mass (kg).
DEFAULT_MASS = 1.0

PRESLIDING_KINDS: tuple[str, ...] = ("chirp", "sine", "ramp")
RAIL_KINDS: tuple[str, ...] = ("sine", "chirp")

_RTOL = 1e-10
#: Closed-loop terms: mass, the PI's proportional gain as viscous damping, its integral gain as a
#: spring (see :func:`servo_staircase`), LuGre friction.
_LOOP_TERMS = LUGRE_LOOP
_AXIS_TERMS = LUGRE_AXIS


@dataclass(frozen=True, kw_only=True)
class Plateau:
    """One commanded velocity level of a staircase.

    Attributes
    ----------
    t_start_s, t_end_s : float, s
        The level is commanded (after the transition ramp) from ``t_start_s`` to ``t_end_s``.
    v_ref_m_s : float, m/s
        Commanded velocity (signed).
    """

    t_start_s: float
    t_end_s: float
    v_ref_m_s: float


@dataclass(frozen=True, kw_only=True)
class FrictionExperiment:
    """A simulated friction experiment and its hidden truth.

    Attributes
    ----------
    name : str
        Experiment label (the record's name).
    record : Record
        What a test rig would record (noise added): channels as documented by the generator.
    clean : Record
        The same channels without noise.
    truth : mapping of str to float
        True plant parameters: ``m0`` (kg) and the LuGre parameters (SI), as ``TermModel("m0,lugre")``
        names them.
    z : (n,) ndarray, m
        True bristle deflection (not measurable).
    design : mapping
        Settings of the experiment (excitation, gains, levels, sampling, ...).
    plateaus : tuple of Plateau
        Commanded velocity levels (staircase only; empty otherwise).
    max_bristle_ratio : float
        ``max |σ0·z| / Fs``: below about 1 the axis never left pre-sliding.
    success : bool
    message : str
    """

    name: str
    record: Record
    clean: Record
    truth: Mapping[str, float]
    z: FloatArray
    design: Mapping[str, Any]
    plateaus: tuple[Plateau, ...] = ()
    max_bristle_ratio: float = 0.0
    success: bool = True
    message: str = ""


# ---------------------------------------------------------------------------------------------- helpers
def _truth(params: Mapping[str, float], mass: float) -> dict[str, float]:
    """Validated LuGre parameters plus the mass as ``m0``."""
    if not isinstance(params, Mapping):
        raise ModelSpecError(f"`params` must be a mapping of the LuGre parameters {LUGRE_PARAMETERS}, got {params!r}")
    unknown = sorted(set(params) - set(LUGRE_PARAMETERS))
    missing = [n for n in LUGRE_PARAMETERS if n not in params]
    if unknown or missing:
        raise ModelSpecError(f"`params` must give exactly {', '.join(LUGRE_PARAMETERS)}; unknown {unknown}, missing {missing}")
    out = {n: float(params[n]) for n in LUGRE_PARAMETERS}
    bad = {n: v for n, v in out.items() if not (math.isfinite(v) and (v > 0 or (n in ("sigma1", "sigma2") and v >= 0)))}
    if bad:
        raise ModelSpecError(f"`params` must be finite and positive (sigma1, sigma2 may be 0); got {bad}")
    if not (math.isfinite(mass) and mass > 0):
        raise ModelSpecError(f"`mass` must be positive and finite, got {mass}")
    return {"m0": float(mass), **out}


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ModelSpecError(f"`{name}` must be a positive finite number, got {value!r}")
    return float(value)


def _noise(noise: Mapping[str, float] | None, channels: Sequence[str]) -> dict[str, float]:
    if noise is None:
        return {}
    bad = {c: v for c, v in noise.items() if c not in channels or not (math.isfinite(float(v)) and float(v) >= 0)}
    if bad:
        raise ModelSpecError(f"`noise` takes channels {', '.join(channels)} with standard deviations >= 0; got {bad}")
    return {c: float(v) for c, v in noise.items()}


def _grid(duration_s: float, fs_hz: float, oversample: int) -> tuple[FloatArray, FloatArray]:
    """Record grid and the ``oversample`` times finer simulation grid (same end points)."""
    if int(oversample) < 1:
        raise ModelSpecError(f"`oversample` must be >= 1, got {oversample}")
    n = int(round(duration_s * fs_hz)) + 1
    if n < 3:
        raise ModelSpecError(f"`duration_s`·`fs_hz` gives {n} samples; need at least 3")
    t = np.arange(n, dtype=np.float64) / fs_hz
    t_fine = np.arange((n - 1) * int(oversample) + 1, dtype=np.float64) / (fs_hz * int(oversample))
    return t, t_fine


def _solve(terms: str, values: Mapping[str, float], t_fine: FloatArray, u_fine: FloatArray, *,
           x0: float = 0.0, v0: float = 0.0, rtol: float = _RTOL) -> Trajectory:
    """SDIRK4 at tight tolerance from (x0, v0) with the bristles at their steady value; raises on failure."""
    model = TermModel(terms)
    theta = model.default_parameters(dict(values)).values
    y0 = model.initial_state([x0, v0], theta)
    zs = values["Fs"] / values["sigma0"]
    wn = math.sqrt(values["sigma0"] / values["m0"])
    scale = np.full(model.n_states, zs)
    scale[1] = zs * wn
    tr = integrate(model, t_fine, u_fine, theta, y0, method="sdirk", rtol=rtol, atol=rtol * scale)
    if not tr.success:
        raise SimulationError(f"the simulated experiment failed: {tr.message}")
    return tr


def _record(name: str, t: FloatArray, clean: Mapping[str, FloatArray], noise: Mapping[str, float], seed: int,
            meta: Mapping[str, Any]) -> tuple[Record, Record]:
    rng = np.random.default_rng(seed)
    noisy: dict[str, FloatArray] = {}
    for c in ("x", "v", "f"):
        if c not in clean:
            continue
        sd = float(noise.get(c, 0.0))
        noisy[c] = clean[c] + sd * rng.standard_normal(t.size) if sd > 0 else clean[c].copy()
    full_meta = {**meta, "noise": dict(noise), "seed": int(seed)}
    rec = from_arrays(t, noisy["f"], noisy["x"], noisy.get("v"), name=name, source=f"example:{name}", meta=full_meta)
    ref = from_arrays(t, clean["f"], clean["x"], clean.get("v"), name=f"{name} (noise-free)",
                      source=f"example:{name}", meta=full_meta)
    return rec, ref


def _bristle_ratio(z: FloatArray, truth: Mapping[str, float]) -> float:
    return float(np.max(np.abs(z)) * truth["sigma0"] / truth["Fs"])


def steady_friction(params: Mapping[str, float], v: FloatArray | float) -> FloatArray:
    """The LuGre steady friction curve ``F_ss(v) = sign(v)·g(v) + σ2·v`` (N).

    Parameters
    ----------
    params : mapping
        LuGre parameters (``Fc``, ``Fs``, ``vs``, ``sigma2`` are used).
    v : float or ndarray, m/s
        Sliding velocity.
    """
    vv = np.asarray(v, dtype=np.float64)
    g = params["Fc"] + (params["Fs"] - params["Fc"]) * np.exp(-((vv / params["vs"]) ** 2))
    return np.asarray(np.sign(vv) * g + params["sigma2"] * vv, dtype=np.float64)


def _max_weakening_slope(params: Mapping[str, float]) -> float:
    """Largest velocity-weakening slope of the steady curve, ``max(−dF_ss/dv, 0)`` (N·s/m)."""
    drop = max(params["Fs"] - params["Fc"], 0.0)
    return max(drop * math.sqrt(2.0 / math.e) / params["vs"] - params["sigma2"], 0.0)


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
    tr = _solve(_LOOP_TERMS, values, t_fine, u)
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
    tr = _solve(_AXIS_TERMS, truth, t_fine, u)
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


# ---------------------------------------------------------------------------------------------- rail
def force_driven_rail(
    params: Mapping[str, float] = DEFAULT_TRUTH,
    *,
    mass: float = DEFAULT_MASS,
    kind: str = "sine",
    amplitude_fraction: float = 1.3,
    f0_hz: float = 0.5,
    f1_hz: float = 2.0,
    duration_s: float = 8.0,
    fs_hz: float = 2000.0,
    noise: Mapping[str, float] | None = None,
    seed: int = 13,
    oversample: int = 4,
    name: str = "friction-rail",
) -> FrictionExperiment:
    r"""A mass on a rail driven by a slow force crossing breakaway: it sticks near the force
    reversals and slips in between.

    ``kind="sine"``: :math:`A \sin(2\pi f_0 t)`; ``kind="chirp"``: linear chirp ``f0 → f1``;
    ``A = amplitude_fraction·Fs``.

    Parameters
    ----------
    params : mapping
        True LuGre parameters (SI).
    mass : float, kg
    kind : {"sine", "chirp"}
    amplitude_fraction : float
        Force amplitude as a fraction of Fs (above 1 to slide).
    f0_hz, f1_hz : float, Hz
    duration_s, fs_hz : float
    noise : mapping or None
        ``x`` (m), ``v`` (m/s), ``f`` (N); None: 1e-6 m, 1e-4 m/s, 1 % of Fc.
    seed, oversample : int
    name : str

    Returns
    -------
    FrictionExperiment
        Record channels ``t, f, x, v``.

    Raises
    ------
    ModelSpecError
        Invalid parameters or settings.
    SimulationError
        The simulation failed.
    """
    truth = _truth(params, mass)
    if kind not in RAIL_KINDS:
        raise ModelSpecError(f"unknown `kind` {kind!r}; choose from {', '.join(RAIL_KINDS)}")
    frac = _positive("amplitude_fraction", amplitude_fraction)
    f0, f1 = _positive("f0_hz", f0_hz), _positive("f1_hz", f1_hz)
    dur, fs = _positive("duration_s", duration_s), _positive("fs_hz", fs_hz)
    nz = _noise({"x": 1e-6, "v": 1e-4, "f": 0.01 * truth["Fc"]} if noise is None else noise, ("x", "v", "f"))
    amp = frac * truth["Fs"]
    t, t_fine = _grid(dur, fs, oversample)
    if kind == "sine":
        u = amp * np.sin(2 * np.pi * f0 * t_fine)
        text = f"force sine {amp:.3g} N ({frac:g}·Fs) at {f0:g} Hz for {dur:g} s"
    else:
        u = amp * np.sin(2 * np.pi * (f0 * t_fine + 0.5 * (f1 - f0) / dur * t_fine**2))
        text = f"force chirp {amp:.3g} N ({frac:g}·Fs), {f0:g}->{f1:g} Hz over {dur:g} s"
    tr = _solve(_AXIS_TERMS, truth, t_fine, u)
    q = int(oversample)
    x, v, z = tr.output("x")[::q], tr.output("v")[::q], tr.output("z")[::q]
    design = {"kind": f"rail_{kind}", "amplitude_n": amp, "amplitude_fraction": frac, "f0_hz": f0,
              "f1_hz": f1 if kind == "chirp" else None, "duration_s": dur, "fs_hz": fs, "oversample": q}
    meta = {"true_parameters": dict(truth), "excitation": text, "design": design}
    rec, clean = _record(name, t, {"x": x, "v": v, "f": u[::q]}, nz, seed, meta)
    return FrictionExperiment(name=name, record=rec, clean=clean, truth=MappingProxyType(truth), z=z,
                              design=MappingProxyType(design), max_bristle_ratio=_bristle_ratio(z, truth),
                              success=True, message=f"force-driven rail ({kind}) simulated ({tr.method})")


# ---------------------------------------------------------------------------------------------- stick-slip
def stick_slip_experiment(
    params: Mapping[str, float] = DEFAULT_TRUTH,
    *,
    mass: float = DEFAULT_MASS,
    k: float | None = None,
    v_belt: float | None = None,
    duration_s: float | None = None,
    fs_hz: float = 2000.0,
    noise: Mapping[str, float] | None = None,
    seed: int = 14,
    name: str = "stick-slip",
) -> FrictionExperiment:
    """The mass-spring-belt oscillator of :func:`nlid_core.friction.stickslip.stick_slip` as a record.

    Channels ``t, f, x, v``: ``x`` and ``v`` the mass's displacement and velocity (lab frame),
    ``f = −k·x`` the spring force on the mass; friction acts on the velocity relative to the
    belt, ``v − v_belt`` (``v_belt`` and ``k`` are in the meta). The limit cycle's period and
    amplitude are in ``design``.

    Parameters
    ----------
    params : mapping
        True LuGre parameters (SI).
    mass : float, kg
    k : float or None, N/m
        Spring stiffness; None: :data:`~nlid_core.friction.stickslip.DEFAULT_SPRING`.
    v_belt : float or None, m/s
        Belt speed; None: :data:`~nlid_core.friction.stickslip.DEFAULT_BELT_SPEED`.
    duration_s : float or None, s
        None: as :func:`~nlid_core.friction.stickslip.stick_slip` chooses.
    fs_hz : float, Hz
    noise : mapping or None
        ``x`` (m), ``v`` (m/s), ``f`` (N); None: 1e-6 m, 1e-5 m/s, 1 % of Fc.
    seed : int
    name : str

    Returns
    -------
    FrictionExperiment

    Raises
    ------
    ModelSpecError
        Invalid parameters or settings.
    SimulationError
        The simulation failed.
    """
    from .stickslip import DEFAULT_BELT_SPEED, DEFAULT_SPRING, stick_slip

    truth = _truth(params, mass)
    kk = DEFAULT_SPRING if k is None else _positive("k", k)
    vb = DEFAULT_BELT_SPEED if v_belt is None else _positive("v_belt", v_belt)
    nz = _noise({"x": 1e-6, "v": 1e-5, "f": 0.01 * truth["Fc"]} if noise is None else noise, ("x", "v", "f"))
    res = stick_slip("lugre", {n: truth[n] for n in LUGRE_PARAMETERS}, mass=truth["m0"], k=kk, v_belt=vb,
                     duration_s=duration_s, fs_hz=fs_hz)
    if res.z is None:  # pragma: no cover - the LuGre model always has a bristle state
        raise SimulationError("the LuGre stick-slip run returned no bristle state")
    v_abs = res.v_rel + vb
    design = {"kind": "stick_slip", "k": kk, "v_belt": vb, "duration_s": float(res.t[-1]), "fs_hz": float(fs_hz),
              "period_s": res.period_s, "amplitude_m": res.amplitude_m, "cycles": res.cycles, "sticks": res.sticks}
    meta = {"true_parameters": dict(truth), "excitation": (
        f"mass-spring-belt oscillator: k {kk:g} N/m, belt {vb:g} m/s; friction acts on v - v_belt, f = -k·x"),
        "design": design}
    rec, clean = _record(name, res.t, {"x": res.x, "v": v_abs, "f": -kk * res.x}, nz, seed, meta)
    return FrictionExperiment(name=name, record=rec, clean=clean, truth=MappingProxyType(truth), z=res.z,
                              design=MappingProxyType(design), max_bristle_ratio=_bristle_ratio(res.z, truth),
                              success=res.success, message=res.message)


# ---------------------------------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class FrictionExample:
    """One entry of :data:`FRICTION_EXAMPLES`.

    Attributes
    ----------
    description : str
        One line for lists.
    generator : callable
        ``generator(params, *, mass, seed, **settings) -> FrictionExperiment``.
    settings : mapping
        Keyword arguments of the generator that differ from its defaults.
    channels : str
        The record's channels.
    """

    description: str
    generator: Callable[..., FrictionExperiment]
    settings: Mapping[str, Any] = field(default_factory=dict)
    channels: str = "t, f, x, v"


FRICTION_EXAMPLES: Mapping[str, FrictionExample] = MappingProxyType({
    "friction-staircase": FrictionExample(
        description="PI velocity loop on a +/- velocity staircase: steady friction curve (Fc, Fs, vs, sigma2)",
        generator=servo_staircase),
    "friction-presliding": FrictionExample(
        description="force chirp at 0.7·Fs through the pre-sliding resonance, from rest: micrometre motion "
                    "(sigma0, sigma1)",
        generator=presliding_chirp, channels="t, f, x"),
    "friction-presliding-ramp": FrictionExample(
        description="slow force triangle to 0.9·Fs and back: pre-sliding hysteresis",
        generator=presliding_chirp, settings={"kind": "ramp", "amplitude_fraction": 0.9, "duration_s": 4.0},
        channels="t, f, x"),
    "friction-rail": FrictionExample(
        description="mass on a rail under a 0.5 Hz force sine of 1.3·Fs: sticks at reversals, slips between",
        generator=force_driven_rail),
    "stick-slip": FrictionExample(
        description="mass-spring-belt stick-slip oscillator (k 500 N/m, belt 1 mm/s)",
        generator=stick_slip_experiment),
})


def friction_example(name: str, *, overrides: Mapping[str, Any] | None = None,
                     seed: int | None = None) -> FrictionExperiment:
    """Generate the friction example ``name`` (a key of :data:`FRICTION_EXAMPLES`).

    Parameters
    ----------
    name : str
    overrides : mapping or None
        LuGre parameter values (``sigma0`` ... ``vs``) and ``mass`` change the truth (the rest stay
        at :data:`DEFAULT_TRUTH`); other keys are keyword arguments of the generator (``dwell_s``,
        ``kind``, ``noise``, ...).
    seed : int or None
        Noise seed (None: the generator's default).

    Returns
    -------
    FrictionExperiment

    Raises
    ------
    ModelSpecError
        Unknown example or override.
    """
    if name not in FRICTION_EXAMPLES:
        raise ModelSpecError(f"unknown friction example `{name}`; examples are {', '.join(FRICTION_EXAMPLES)}")
    ex = FRICTION_EXAMPLES[name]
    over = dict(overrides or {})
    truth = dict(DEFAULT_TRUTH)
    for n in LUGRE_PARAMETERS:
        if n in over:
            truth[n] = float(over.pop(n))
    kwargs: dict[str, Any] = {"mass": float(over.pop("mass", DEFAULT_MASS)), **ex.settings}
    accepted = set(inspect.signature(ex.generator).parameters) - {"params", "mass"}
    bad = sorted(set(over) - accepted)
    if bad:
        raise ModelSpecError(f"unknown `overrides` {bad} for `{name}`; accepted: "
                             f"{', '.join(LUGRE_PARAMETERS)}, mass, {', '.join(sorted(accepted))}")
    kwargs.update(over)
    if seed is not None:
        kwargs["seed"] = int(seed)
    kwargs.setdefault("name", name)
    return ex.generator(truth, **kwargs)
