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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import ModelSpecError, SimulationError
from ..terms.models import LUGRE_AXIS
from .simlab import (
    DEFAULT_MASS, DEFAULT_TRUTH, LUGRE_PARAMETERS, PRESLIDING_KINDS, FrictionExperiment, Plateau, _bristle_ratio, _grid, _noise, _positive, _record,
    _solve, _truth, steady_friction
)
from .staged_tests import presliding_chirp, presliding_natural_frequency_hz, servo_staircase, staircase_levels

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

RAIL_KINDS: tuple[str, ...] = ("sine", "chirp")


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
    tr = _solve(LUGRE_AXIS, truth, t_fine, u)
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
