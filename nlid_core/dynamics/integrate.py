r"""Simulation of an assembled :class:`~nlid_core.dynamics.model.Model` with exact sensitivities.

:func:`integrate` runs the explicit RK4 (:mod:`.rk4`) or the implicit SDIRK4 (:mod:`.sdirk`) on the
sample grid and returns a :class:`Trajectory`. ``method="auto"`` takes RK4 with enough substeps
for the fastest linearised rate at the start (|λ|·h <= 0.25, at most ``MAX_SUBSTEPS``), and
switches to SDIRK4 when the model turns out stiff along the way (RK4 reports |λ|·h above its
stability bound, or would need more than ``MAX_SUBSTEPS`` substeps) or RK4 diverges.

Inputs between samples come from per-interval cubics (:func:`input_coefficients`): zero-order
hold, first-order hold, or the not-a-knot cubic spline through the samples (the spline of
``scipy.interpolate.CubicSpline``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelSpecError
from . import evaluate
from .model import Model, Plan
from .rk4 import integrate_rk4
from .sdirk import integrate_sdirk

__all__ = ["INPUT_HOLDS", "METHODS", "MAX_SUBSTEPS", "PlanRun", "Trajectory", "auto_substeps", "input_coefficients",
           "integrate", "plan_rate", "run_plan", "status_text"]

FloatArray = NDArray[np.float64]

INPUT_HOLDS: tuple[str, ...] = ("zoh", "foh", "cubic")
METHODS: tuple[str, ...] = ("auto", "rk4", "sdirk")
SUBSTEP_TARGET = 0.25
MAX_SUBSTEPS = 64
#: Above this many RK4 substeps per sample ``auto`` takes SDIRK4: an implicit step costs about as much
#: as 16 explicit stages here, and it adapts to where the model is stiff.
RK4_EFFICIENT_SUBSTEPS = 16


@dataclass(frozen=True, kw_only=True)
class Trajectory:
    """A simulated run.

    Attributes
    ----------
    t : (n,) ndarray, s
    states : (n, N) ndarray
        Every state (``state_names``) at the samples; NaN after a failure.
    accelerations : (n, n_dof) ndarray
    state_names, acceleration_names : tuple of str
    sens : mapping of str to (n, Q) ndarray, or None
        ∂(output)/∂(θ, chosen initial states) per requested output.
    sens_names : tuple of str
        Column names of the sensitivity matrices.
    success : bool
    status : str
        ``ok``, ``diverged``, ``nonpositive_mass``, ``newton_failed``.
    message : str
    fail_time : float or None, s
    method : str
    steps : int
        Substeps per sample (RK4) or accepted steps (SDIRK4).
    elapsed_s : float
    """

    t: FloatArray
    states: FloatArray
    accelerations: FloatArray
    state_names: tuple[str, ...]
    acceleration_names: tuple[str, ...]
    sens: dict[str, FloatArray] | None
    sens_names: tuple[str, ...]
    success: bool
    status: str
    message: str
    fail_time: float | None
    method: str
    steps: int
    elapsed_s: float

    def output(self, name: str) -> FloatArray:
        """A state or acceleration by name.

        Raises
        ------
        ModelSpecError
            Unknown name.
        """
        if name in self.state_names:
            return self.states[:, self.state_names.index(name)]
        if name in self.acceleration_names:
            return self.accelerations[:, self.acceleration_names.index(name)]
        raise ModelSpecError(f"unknown output `{name}`; choose from {', '.join(self.state_names + self.acceleration_names)}")


def input_coefficients(t: FloatArray, u: FloatArray, input_hold: str) -> FloatArray:
    """Per-interval cubic ``u(t_i + τ) = c0 + c1·τ + c2·τ² + c3·τ³`` of every input channel.

    Parameters
    ----------
    t : (n,) ndarray, s
    u : (n, n_in) ndarray
    input_hold : {"zoh", "foh", "cubic"}

    Returns
    -------
    (n - 1, n_in, 4) ndarray
    """
    from .._kernels import spline_slopes

    if input_hold not in INPUT_HOLDS:
        raise ModelSpecError(f"unknown `input_hold` {input_hold!r}; choose from {', '.join(INPUT_HOLDS)}")
    n, m = u.shape
    coef = np.zeros((n - 1, m, 4))
    h = np.diff(t)
    for c in range(m):
        y = u[:, c]
        coef[:, c, 0] = y[:-1]
        if input_hold == "zoh":
            continue
        slope = np.diff(y) / h
        if input_hold == "foh" or n < 4:
            coef[:, c, 1] = slope
            continue
        s = spline_slopes(np.ascontiguousarray(t), np.ascontiguousarray(y))
        coef[:, c, 1] = s[:-1]
        coef[:, c, 2] = (3.0 * slope - 2.0 * s[:-1] - s[1:]) / h
        coef[:, c, 3] = (s[:-1] + s[1:] - 2.0 * slope) / (h * h)
    return coef


def status_text(code: int, t: FloatArray, idx: int) -> tuple[str, str, float | None]:
    """(status name, message, failure time) of a run that stopped with ``code`` at sample ``idx``."""
    if code == evaluate.OK:
        return "ok", "simulation completed", None
    tf = float(t[min(idx, t.size - 1)])
    if code == evaluate.NONPOSITIVE_MASS:
        return "nonpositive_mass", f"the effective mass became non-positive at t = {tf:.6g} s; the parameters are unphysical", tf
    if code == evaluate.GIMBAL_LOCK:
        return "gimbal_lock", (f"the pitch angle reached ±90° (gimbal lock, |cos θ| < 1e-6) at t = {tf:.6g} s; the Euler"
                               " angles cannot describe that attitude"), tf
    if code == evaluate.NEWTON_FAILED:
        return "newton_failed", f"the implicit integrator could not take a step at t = {tf:.6g} s (the model is singular or too stiff there)", tf
    return "diverged", (f"simulation diverged at t = {tf:.6g} s (a state became non-finite or exceeded its limit); the"
                        " parameters or the initial state make the model unstable for this input"), tf


def plan_rate(p: Plan, y0: FloatArray, theta: FloatArray, u0: FloatArray) -> float:
    """Spectral radius of ∂ẏ/∂y at one state (0 when the model cannot be evaluated there)."""
    nst, npar, n = p.n_states, theta.size, p.n_dof
    ydot = np.zeros(nst)
    jy = np.zeros((nst, nst))
    jp = np.zeros((nst, npar))
    code = evaluate.rhs_call(y0, u0, theta, p.args(), True, ydot, jy, jp, np.zeros(n), np.zeros((n, nst)),
                             np.zeros((n, npar)))
    return float(evaluate.spectral_radius(jy)) if code == evaluate.OK else 0.0


def auto_substeps(p: Plan, t: FloatArray, y0: FloatArray, theta: FloatArray, u0: FloatArray) -> int:
    """RK4 substeps making |λ|·h <= SUBSTEP_TARGET for the linearisation at the start (at most MAX_SUBSTEPS)."""
    rate = plan_rate(p, y0, theta, u0)
    dt = float((t[-1] - t[0]) / (t.size - 1))
    return int(min(MAX_SUBSTEPS, max(1, math.ceil(rate * dt / SUBSTEP_TARGET)))) if math.isfinite(rate) else 1


@dataclass(frozen=True)
class PlanRun:
    """What :func:`run_plan` returns: states, accelerations and sensitivities at the samples, and how it went."""

    states: FloatArray
    accelerations: FloatArray
    sens: FloatArray
    code: int
    index: int
    method: str
    steps: int
    substeps: int


def run_plan(p: Plan, t: FloatArray, coef: FloatArray, theta: FloatArray, y: FloatArray, s0: FloatArray,
             want: bool, out_idx: NDArray[np.int64], lim: FloatArray, *, method: str = "auto",
             substeps: int | None = None, rtol: float = 1e-8, atol: ArrayLike | None = None) -> PlanRun:
    """Integrate a compiled plan: RK4 or SDIRK4 with the automatic stiff switch (see the module notes).

    ``s0`` holds the initial sensitivities (columns: the parameters, then any initial states); ``out_idx`` indexes
    ``[y, q̈]``; ``lim`` bounds every state. ``substeps`` is the RK4 substep count (``auto`` still takes SDIRK4 above
    ``RK4_EFFICIENT_SUBSTEPS``); ``substeps`` of the result is 0 when SDIRK4 ran.

    The arrays go to the kernels as they are (this runs once per sample inside a control loop): float64,
    C-contiguous and writeable, as callers build them. A read-only or strided one is another type to numba, and
    each type compiles the whole kernel tree again (tens of seconds for a rigid body).
    """
    nst = p.n_states
    args = p.args()
    used = method
    code, idx, steps = evaluate.OK, t.size, 0
    nsub = 0
    yo = qdd = sens = np.zeros(0)
    if method in ("auto", "rk4"):
        nsub = substeps if substeps is not None else auto_substeps(p, t, y, theta, coef[0, :, 0])
        if nsub < 1:
            raise ModelSpecError(f"`substeps` must be >= 1, got {nsub}")
        if method == "auto" and nsub > RK4_EFFICIENT_SUBSTEPS:
            method = "sdirk"
    if method in ("auto", "rk4"):
        check = 1 if nst <= 2 else 8
        yo, qdd, sens, code, idx, hrho = integrate_rk4(
            t, coef, int(nsub), y, theta, s0, bool(want), out_idx, lim, check if method == "auto" else 0, *args)
        steps = int(nsub)
        used = f"rk4 ({nsub} substeps)"
        stiff = code == evaluate.STIFF or (code == evaluate.DIVERGED and hrho > 0.5)
        if method == "auto" and stiff:
            need = math.ceil(hrho * nsub / SUBSTEP_TARGET) if code == evaluate.STIFF else MAX_SUBSTEPS + 1
            if need <= RK4_EFFICIENT_SUBSTEPS and substeps is None:
                yo, qdd, sens, code, idx, hrho = integrate_rk4(
                    t, coef, int(need), y, theta, s0, bool(want), out_idx, lim, check, *args)
                steps = nsub = int(need)
                used = f"rk4 ({need} substeps)"
                stiff = code == evaluate.STIFF
            if stiff or code == evaluate.STIFF:
                used = "sdirk"
        if code == evaluate.STIFF and used != "sdirk":
            code = evaluate.DIVERGED
    if method == "sdirk" or used == "sdirk":
        if atol is None:
            scale = np.where(np.isfinite(lim), lim * 1e-9, 1e-6)
            at = np.maximum(rtol * scale, 1e-15)
        else:
            at = np.broadcast_to(np.asarray(atol, dtype=np.float64), (nst,)).copy()
        yo, qdd, sens, code, idx, steps = integrate_sdirk(
            t, coef, y, theta, s0, bool(want), out_idx, lim, float(rtol), at, *args)
        used = f"sdirk4 (rtol {rtol:g}, {steps} steps)"
        nsub = 0
    return PlanRun(states=yo, accelerations=qdd, sens=sens, code=int(code), index=int(idx), method=used,
                   steps=int(steps), substeps=int(nsub))


def integrate(
    model: Model,
    t: ArrayLike,
    u: ArrayLike,
    theta: ArrayLike,
    y0: ArrayLike,
    *,
    input_hold: str = "cubic",
    method: str = "auto",
    substeps: int | None = None,
    rtol: float = 1e-8,
    atol: ArrayLike | None = None,
    sensitivities: bool = False,
    outputs: Sequence[str] = (),
    initial: Sequence[str] = (),
    limits: ArrayLike | None = None,
    coef: FloatArray | None = None,
) -> Trajectory:
    """Simulate ``model`` driven by ``u`` from the full initial state ``y0``.

    Parameters
    ----------
    model : Model
    t : (n,) array_like, s
        Sample times, increasing.
    u : (n,) or (n, n_dof) array_like
        Force on each DOF at the samples.
    theta : (P,) array_like
        Every parameter, in model order.
    y0 : (N,) array_like
        Initial state ``(q, q̇, z)``.
    input_hold : {"cubic", "foh", "zoh"}
        Input reconstruction between samples.
    method : {"auto", "rk4", "sdirk"}
        Integrator (see the module notes).
    substeps : int or None
        RK4 substeps per sample interval (None: chosen from the fastest rate at the start).
    rtol : float
        SDIRK4 relative tolerance.
    atol : (N,) array_like or None
        SDIRK4 absolute tolerance per state (default ``rtol`` times 1e-3 of each state's limit
        scale, at least 1e-15).
    sensitivities : bool
        Return ∂(outputs)/∂(θ, initial states listed in ``initial``).
    outputs : sequence of str
        State or acceleration names whose sensitivities are returned.
    initial : sequence of str
        State names whose initial values get sensitivity columns (after the parameters).
    limits : (N,) array_like or None
        |state| beyond which the run counts as diverged (default: 1e6·(1 + |y0|) for positions,
        unlimited otherwise).
    coef : ndarray or None
        :func:`input_coefficients` computed beforehand (repeated runs on one record).

    Returns
    -------
    Trajectory
    """
    model.require_simulable()
    if method not in METHODS:
        raise ModelSpecError(f"unknown `method` {method!r}; choose from {', '.join(METHODS)}")
    t_arr = np.ascontiguousarray(t, dtype=np.float64)
    u_arr = np.asarray(u, dtype=np.float64)
    if u_arr.ndim == 1:
        u_arr = u_arr[:, None]
    if t_arr.ndim != 1 or t_arr.size < 2 or u_arr.shape != (t_arr.size, model.n_dof):
        raise ModelSpecError(f"`t` must be 1-D (n >= 2) and `u` (n, {model.n_dof}); got {t_arr.shape} and {u_arr.shape}")
    th = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
    if th.size != model.n_params or not np.all(np.isfinite(th)):
        raise ModelSpecError(f"`theta` needs {model.n_params} finite values ({', '.join(model.param_names)}); got {th.size}")
    y = np.ascontiguousarray(y0, dtype=np.float64).reshape(-1)
    if y.size != model.n_states or not np.all(np.isfinite(y)):
        raise ModelSpecError(f"`y0` needs {model.n_states} finite values ({', '.join(model.state_names)})")
    names = model.state_names + model.acceleration_names
    bad = [o for o in (*outputs, *initial) if o not in names]
    if bad:
        raise ModelSpecError(f"unknown state or output(s) {bad}; choose from {', '.join(names)}")
    out_idx = np.array([names.index(o) for o in outputs], dtype=np.int64)
    nst, npar = model.n_states, model.n_params
    s0 = np.zeros((nst, npar + len(initial)))
    for k, name in enumerate(initial):
        s0[model.state_names.index(name), npar + k] = 1.0
    if limits is None:
        lim = np.full(nst, np.inf)
        lim[: model.n_dof] = 1e6 * (1.0 + np.abs(y[: model.n_dof]))
    else:
        lim = np.ascontiguousarray(limits, dtype=np.float64)
    if coef is None:
        coef = input_coefficients(t_arr, u_arr, input_hold)
    start = time.perf_counter()
    run = run_plan(model.plan, t_arr, coef, th, y, s0, bool(sensitivities), out_idx, lim, method=method,
                   substeps=substeps, rtol=rtol, atol=atol)
    yo, qdd, sens, code, idx, used, steps = (run.states, run.accelerations, run.sens, run.code, run.index, run.method,
                                             run.steps)
    elapsed = time.perf_counter() - start
    status, message, fail_time = status_text(int(code), t_arr, int(idx))
    sens_map = {o: sens[:, k, :] for k, o in enumerate(outputs)} if sensitivities else None
    return Trajectory(
        t=t_arr, states=yo, accelerations=qdd, state_names=model.state_names,
        acceleration_names=model.acceleration_names, sens=sens_map,
        sens_names=(*model.param_names, *(f"{n}(0)" for n in initial)), success=status == "ok", status=status,
        message=message, fail_time=fail_time, method=used, steps=int(steps), elapsed_s=elapsed,
    )
