r"""The mass-spring-belt stick-slip oscillator, on the model layer.

A mass ``m`` tied to a wall by a spring ``k`` rests on a belt moving at constant speed
``v_belt``; friction acts on the relative velocity :math:`w = \dot x - v_b`:

.. math::

    m\,\ddot x + k\,x + F(w) = 0 .

With :math:`y = x - v_b t` (so :math:`\dot y = w`, :math:`\ddot y = \ddot x`) this is a one-DOF
term model driven by a ramp, :math:`m\,\ddot y + k\,y + F(\dot y) = -k\,v_b\,t`, simulated by
:func:`nlid_core.dynamics.integrate.integrate` (implicit SDIRK4, rtol 1e-10 with internal states,
1e-8 for the stiff smoothed static models; the period and amplitude are converged to about 1e-6
at these tolerances). The run starts with the mass moving with the belt at ``x = 0`` and the
bristles unloaded. Friction models (:data:`STICK_SLIP_MODELS`): ``lugre`` (``m0,k1,lugre``),
``stribeck`` (``m0,c1,k1,stribeck``: the same steady curve Fc, Fs, vs, σ2 without bristle
dynamics, smoothed at ``w = 0`` over ``v_eps``) and ``coulomb`` (``m0,c1,k1,fc``: Fc and σ2); or
any :class:`~nlid_core.models.TermModel` holding ``m0`` and ``k1``.

Measurement. After the first quarter of the run (transient) the upward crossings of the mean of
``x`` delimit cycles; the period is the mean duration of the last ``n_cycles`` cycles and the
amplitude the mean peak-to-peak of ``x`` over them (``force_amplitude_n = k·amplitude_m`` is the
peak-to-peak spring force). It is a limit cycle when at least two cycles are seen and the
per-cycle peak-to-peak values and durations agree within 1 %; it sticks when, in addition, the
relative velocity stays below 10 % of ``v_belt`` for part of each cycle (``stick_fraction``).
Otherwise the oscillation decays towards steady sliding at ``steady_x_m = F_ss(v_belt)/k`` (the
model's friction at relative velocity ``−v_belt`` with its internal states at their steady
value; given in every case, an unstable equilibrium when there is a limit cycle).

Why a static model misses (default configuration: m = 1 kg, k = 500 N/m, v_b = 1 mm/s, the
default LuGre truth of :mod:`nlid_core.friction.experiments`). In LuGre the "stuck" mass is held
by the bristles: while the spring force rises at about ``k·v_b`` the bristles creep (the relative
velocity stays at 1–10 % of ``v_b``, growing towards breakaway), so (i) the spring loads more
slowly than the belt moves, (ii) breakaway happens below Fs (the spring force peaks at about
1.475 N for Fs = 1.5 N under this force rate: the bristle creep turns into sliding before the
force reaches the static level), and (iii) during the slip the friction lags the velocity (the bristles relax over
``Fs/(σ0·|w|)``). The static Stribeck model sticks rigidly and breaks away at Fs exactly, so
its cycle is longer and larger: +4.6 % in period and +7.8 % in amplitude here; Coulomb +
viscous (no velocity weakening) has no stick-slip at all. LuGre with σ0 within ±10 %, σ1 within
±25 %, vs within ±5 % and σ2 within ±2 % stays within 0.9 % of the truth's period and 1.1 % of
its amplitude (all 16 corners). Errors in Fs and Fc are amplified, because the cycle scales
with the friction drop ``Fs − Fc``: +2 % in Fs alone changes the period by +5.4 % and the
amplitude by +6.0 %, +2 % in Fc by −3.7 % and −4.1 %; reproducing the cycle within 2 % needs
Fs and Fc within about 0.2 % (opposite errors add).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dynamics.integrate import integrate
from ..errors import ModelSpecError, SimulationError
from ..models import ModelSettings, TermModel
from ..terms.models import STICK_SLIP

__all__ = ["STICK_SLIP_MODELS", "DEFAULT_SPRING", "DEFAULT_BELT_SPEED", "StickSlipResult", "stick_slip"]

FloatArray = NDArray[np.float64]

#: Friction models by name: the term models of the oscillator (mass and spring included).
STICK_SLIP_MODELS: Mapping[str, str] = STICK_SLIP
#: Default spring stiffness (N/m) and belt speed (m/s): see the module notes.
DEFAULT_SPRING = 500.0
DEFAULT_BELT_SPEED = 1e-3
#: Relative agreement of successive cycles that makes a limit cycle.
CYCLE_TOLERANCE = 1e-2
#: |w| below this fraction of the belt speed counts as sticking.
STICK_THRESHOLD = 0.1
MAX_SAMPLES = 2_000_000


@dataclass(frozen=True, kw_only=True)
class StickSlipResult:
    """A simulated stick-slip run and its limit cycle.

    Attributes
    ----------
    model : str
        The term model simulated.
    t : (n,) ndarray, s
    x : (n,) ndarray, m
        Mass displacement (from the spring's rest position, lab frame).
    v_rel : (n,) ndarray, m/s
        Velocity relative to the belt, ``ẋ − v_belt``.
    z : (n,) ndarray or None, m
        Bristle deflection (LuGre models), else None.
    mass, k, v_belt : float
        kg, N/m, m/s.
    limit_cycle : bool
        A sustained periodic oscillation was found.
    sticks : bool
        A limit cycle with sticking phases.
    period_s : float or None, s
        Mean period of the measured cycles (None without a limit cycle).
    amplitude_m : float or None, m
        Mean peak-to-peak of ``x`` over the measured cycles.
    force_amplitude_n : float or None, N
        ``k·amplitude_m``: peak-to-peak spring force.
    breakaway_force_n : float or None, N
        Mean of the per-cycle maximum spring force ``k·x``.
    stick_fraction : float
        Fraction of the measured cycles' time with ``|v_rel| < 0.1·v_belt``.
    cycles : int
        Cycles the period and amplitude are averaged over.
    cycles_seen : int
        Complete cycles after the transient.
    steady_x_m : float, m
        The steady-sliding equilibrium ``F_ss(v_belt)/k`` (mass at rest, belt sliding under it):
        where the oscillation settles without a limit cycle; unstable with one.
    success : bool
        The simulation ran (a run without stick-slip is a success).
    message : str
    method : str
        Integrator used.
    """

    model: str
    t: FloatArray
    x: FloatArray
    v_rel: FloatArray
    z: FloatArray | None
    mass: float
    k: float
    v_belt: float
    limit_cycle: bool
    sticks: bool
    period_s: float | None
    amplitude_m: float | None
    force_amplitude_n: float | None
    breakaway_force_n: float | None
    stick_fraction: float
    cycles: int
    cycles_seen: int
    steady_x_m: float
    success: bool
    message: str
    method: str

    def relative_errors(self, reference: StickSlipResult) -> tuple[float, float]:
        """``(period, amplitude)`` relative to ``reference``'s; ``inf`` when either has no limit cycle."""
        if (self.period_s is None or self.amplitude_m is None or reference.period_s is None
                or reference.amplitude_m is None):
            return math.inf, math.inf
        return self.period_s / reference.period_s - 1.0, self.amplitude_m / reference.amplitude_m - 1.0


def _model_and_values(model: str | TermModel, params: Mapping[str, float], mass: float, k: float, v_belt: float,
                      v_eps: float | None) -> tuple[TermModel, dict[str, float]]:
    if isinstance(model, TermModel):
        tm = model
        if "m0" not in tm.terms or "k1" not in tm.terms:
            raise ModelSpecError(f"`model` {tm} must contain the terms m0 (mass) and k1 (spring)")
        unknown = sorted(set(params) - set(tm.param_names) - {"m0", "k1"})
        if unknown:
            raise ModelSpecError(f"`params` names {unknown} that {tm} does not have ({', '.join(tm.param_names)})")
        values = {n: float(v) for n, v in params.items()}
    elif isinstance(model, str) and model in STICK_SLIP_MODELS:
        need = {"lugre": ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs"), "stribeck": ("Fc", "Fs", "vs", "sigma2"),
                "coulomb": ("Fc", "sigma2")}[model]
        missing = [n for n in need if n not in params]
        if missing:
            raise ModelSpecError(f"`params` lacks {missing} for the `{model}` stick-slip model")
        p = {n: float(params[n]) for n in need}
        if model == "lugre":
            values = p
        elif model == "stribeck":
            values = {"c1": p["sigma2"], "Fc": p["Fc"], "Fs": p["Fs"], "vs": p["vs"]}
        else:
            values = {"c1": p["sigma2"], "fc": p["Fc"]}
        scale = min(float(params.get("vs", v_belt)), v_belt)
        eps = scale / 200.0 if v_eps is None else float(v_eps)
        if not (math.isfinite(eps) and eps > 0):
            raise ModelSpecError(f"`v_eps` must be positive, got {v_eps}")
        tm = TermModel(STICK_SLIP_MODELS[model], ModelSettings(v_eps=eps))
    else:
        raise ModelSpecError(f"`model` must be a TermModel or one of {', '.join(STICK_SLIP_MODELS)}; got {model!r}")
    bad = {n: v for n, v in values.items() if not math.isfinite(v)}
    if bad:
        raise ModelSpecError(f"`params` must be finite; got {bad}")
    values["m0"] = mass
    values["k1"] = k
    return tm, values


def _estimated_period(params: Mapping[str, float], mass: float, k: float, v_belt: float) -> float:
    """Rough cycle time for the default duration: loading through twice the friction drop, plus a swing."""
    fc = float(params.get("Fc", params.get("fc", 1.0)))
    drop = max(float(params.get("Fs", fc)) - fc, 0.05 * fc)
    return 2.0 * drop / (k * v_belt) + 2.0 * math.pi * math.sqrt(mass / k)


def stick_slip(
    model: str | TermModel,
    params: Mapping[str, float],
    *,
    mass: float = 1.0,
    k: float = DEFAULT_SPRING,
    v_belt: float = DEFAULT_BELT_SPEED,
    duration_s: float | None = None,
    fs_hz: float = 2000.0,
    n_cycles: int = 5,
    v_eps: float | None = None,
    rtol: float | None = None,
) -> StickSlipResult:
    """Simulate the mass-spring-belt oscillator and measure its limit cycle.

    Parameters
    ----------
    model : {"lugre", "stribeck", "coulomb"} or TermModel
        Friction model (see :data:`STICK_SLIP_MODELS`), or a term model with ``m0`` and ``k1``.
    params : mapping
        For a named model the LuGre-named friction parameters (``sigma0 sigma1 sigma2 Fc Fs vs``;
        the static models use the steady-curve ones, σ2 as ``c1``; extra names are ignored). For a
        TermModel its parameter values by name (``m0`` and ``k1`` come from ``mass`` and ``k``;
        others not given keep their defaults).
    mass : float, kg
    k : float, N/m
        Spring stiffness.
    v_belt : float, m/s
        Belt speed (> 0).
    duration_s : float or None, s
        Simulated time; None: ``n_cycles + 5`` rough cycle estimates (loading through twice the
        friction drop at ``k·v_belt`` plus one free swing), at most 600 s.
    fs_hz : float, Hz
        Output sampling rate.
    n_cycles : int
        Cycles averaged (the last ones).
    v_eps : float or None, m/s
        Smoothing of the named static models at ``w = 0``; None: ``min(vs, v_belt)/200``.
    rtol : float or None
        SDIRK4 tolerance; None: 1e-10 with internal states, else 1e-8.

    Returns
    -------
    StickSlipResult

    Raises
    ------
    ModelSpecError
        Invalid model, parameters or settings.
    SimulationError
        The integration failed.
    """
    for name, val in (("mass", mass), ("k", k), ("v_belt", v_belt), ("fs_hz", fs_hz)):
        if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
            raise ModelSpecError(f"`{name}` must be a positive finite number, got {val!r}")
    if int(n_cycles) < 1:
        raise ModelSpecError(f"`n_cycles` must be >= 1, got {n_cycles}")
    tm, values = _model_and_values(model, params, float(mass), float(k), float(v_belt), v_eps)
    if duration_s is None:
        duration_s = min(600.0, (int(n_cycles) + 5) * _estimated_period(params, float(mass), float(k), float(v_belt)))
    if not (math.isfinite(duration_s) and duration_s > 0):
        raise ModelSpecError(f"`duration_s` must be positive, got {duration_s}")
    n = int(round(duration_s * fs_hz)) + 1
    if n > MAX_SAMPLES or n < 10:
        raise ModelSpecError(f"`duration_s`·`fs_hz` gives {n} samples; keep it between 10 and {MAX_SAMPLES}")
    t = np.arange(n, dtype=np.float64) / fs_hz
    theta = tm.default_parameters(values).values
    y0 = tm.initial_state([0.0, 0.0], theta)  # moving with the belt (w = 0), bristles unloaded
    tol = (1e-10 if tm.n_states > 2 else 1e-8) if rtol is None else float(rtol)
    tr = integrate(tm, t, -k * v_belt * t, theta, y0, method="sdirk", rtol=tol)
    if not tr.success:
        raise SimulationError(f"the stick-slip simulation failed: {tr.message}")
    x = tr.output("x") + v_belt * t
    w = tr.output("v")
    z = tr.output(tm.internal_state_names[0]) if tm.internal_state_names else None
    # steady sliding: m·ÿ = −k·y − F(ẏ) at y = 0, ẏ = −v_belt, internal states steady, no input
    y_ss = tm.initial_state([0.0, -float(v_belt)], theta)
    ydot, _, _, m_eff, _ = tm.linearise(y_ss, theta, np.zeros(1))
    steady_x = float(m_eff[0] * ydot[1]) / float(k)
    common = {"model": ",".join(tm.terms), "t": t, "x": x, "v_rel": w, "z": z, "mass": float(mass), "k": float(k),
              "v_belt": float(v_belt), "method": tr.method, "success": True, "steady_x_m": steady_x}
    return StickSlipResult(**common, **_measure(t, x, w, float(k), float(v_belt), int(n_cycles)))  # type: ignore[arg-type]


def _measure(t: FloatArray, x: FloatArray, w: FloatArray, k: float, v_belt: float, n_cycles: int) -> dict[str, object]:
    """Limit-cycle measures (see the module notes)."""
    window = t >= 0.25 * t[-1]
    mean = float(np.mean(x[window]))
    s = x - mean
    up = np.nonzero(window[:-1] & (s[:-1] < 0) & (s[1:] >= 0))[0]
    cross = t[up] - s[up] * (t[up + 1] - t[up]) / (s[up + 1] - s[up])
    seen = max(cross.size - 1, 0)
    none: dict[str, object] = {"period_s": None, "amplitude_m": None, "force_amplitude_n": None,
                               "breakaway_force_n": None, "cycles_seen": seen, "limit_cycle": False, "sticks": False}
    if seen < 2:
        return {**none, "stick_fraction": float(np.mean(np.abs(w[window]) < STICK_THRESHOLD * v_belt)), "cycles": 0,
                "message": (f"no stick-slip: {seen} oscillation cycle(s) after the transient; the mass slides "
                            f"steadily about x = {mean:.6g} m (spring force {k * mean:.6g} N)")}
    use = cross[-(min(n_cycles, seen) + 1):]
    periods = np.diff(use)
    pp, peaks = [], []
    for a, b in zip(use[:-1], use[1:], strict=True):
        sel = (t >= a) & (t < b)
        pp.append(float(np.max(x[sel]) - np.min(x[sel])))
        peaks.append(float(np.max(x[sel])))
    pp_arr = np.array(pp)
    span = (use[0] <= t) & (t < use[-1])
    stick = float(np.mean(np.abs(w[span]) < STICK_THRESHOLD * v_belt))
    period, amp = float(np.mean(periods)), float(np.mean(pp_arr))
    spread = max(float(np.ptp(pp_arr)) / amp if amp > 0 else math.inf, float(np.ptp(periods)) / period)
    limit = bool(amp > 0 and spread < CYCLE_TOLERANCE)
    if not limit:
        return {**none, "stick_fraction": stick, "cycles": 0, "message": (
            f"no stick-slip limit cycle: successive cycles differ by {100 * spread:.3g} % (decaying or irregular "
            f"oscillation about x = {mean:.6g} m, spring force {k * mean:.6g} N); a longer duration_s tells a decaying "
            "oscillation from slowly settling cycles")}
    sticks = stick > 0.0
    kind = "stick-slip" if sticks else "oscillation without sticking"
    return {"period_s": period, "amplitude_m": amp, "force_amplitude_n": k * amp,
            "breakaway_force_n": k * float(np.mean(peaks)), "cycles_seen": seen, "limit_cycle": True,
            "sticks": sticks, "stick_fraction": stick, "cycles": int(periods.size),
            "message": (f"{kind}: period {period:.6g} s, peak-to-peak {amp * 1e3:.6g} mm ({k * amp:.6g} N), "
                        f"sticking {100 * stick:.3g} % of the cycle, {periods.size} of {seen} cycles measured")}
