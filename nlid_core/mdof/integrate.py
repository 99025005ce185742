r"""Simulation of a multi-DOF model (:mod:`.kernel`) by fixed-step RK4 with exact discrete sensitivities.

Each sample interval gets ``nsub`` classical RK4 steps; the inputs between samples are the
per-interval cubics of :func:`nlid_core.dynamics.integrate.input_coefficients`. The sensitivities
:math:`S = \partial y/\partial(\theta, y_{0,f})` go through the same stages,
:math:`K_S = J_y S_{\text{stage}} + J_\theta`, as in :mod:`nlid_core.dynamics.rk4` (whose sample
recording is reused), so they are the exact derivatives of the discrete map that is simulated. The
stage product skips the :math:`\partial\dot q/\partial y = [0\ I]` block and the rows of held DOFs,
and runs along the contiguous columns. The stage evaluation at the start of an interval is the one
made to record the sample.

Without ``nsub`` the number of substeps makes :math:`|\lambda|_{\max} h \le 0.25` for the
linearisation at the start (at most ``MAX_SUBSTEPS``); along the run, every few samples, a step with
:math:`h\,\rho(J_y)` above the RK4 stability bound stops the run as ``stiff``. The cost is linear in
the record length.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dynamics.evaluate import input_at, spectral_radius
from ..dynamics.integrate import (INPUT_HOLDS, MAX_SUBSTEPS, SUBSTEP_TARGET, auto_substeps, input_coefficients,
                                  run_plan, status_text)
from ..dynamics.rk4 import STABILITY_LIMIT, _record
from ..errors import ModelSpecError
from ..status import DIVERGED, GIMBAL_LOCK, NAMES, NONPOSITIVE_MASS, OK, STIFF
from .kernel import evaluate, held_mask, make_work, rhs
from .layout import Layout
from .lumped import LumpedPlan

__all__ = ["MdofRun", "STATUS_NAMES", "simulate"]

FloatArray = NDArray[np.float64]

#: Status names of :attr:`MdofRun.status` by kernel code.
STATUS_NAMES = NAMES
#: Samples between two stability checks of the step.
CHECK_EVERY = 8
_C = (0.0, 0.5, 0.5, 1.0)
_W = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)


@dataclass(frozen=True, kw_only=True)
class MdofRun:
    """A simulated multi-DOF run.

    Attributes
    ----------
    t : (ns,) ndarray, s
    q, qd, qdd : (ns, n) ndarray
        Positions, velocities, accelerations (NaN after a failure).
    sens : (ns, n_out, P + n_init) ndarray or None
        ∂(output)/∂(θ, initial states): output ``c`` is ``outputs[c]``, an index into the
        concatenation ``[q, q̇, q̈]`` (0..3n−1); the columns are the P parameters, then the
        initial states listed in ``init_states``.
    outputs : tuple of int
        Indices into ``[q, q̇, q̈]`` of the sensitivity rows.
    init_states : tuple of int
        Indices into ``y = (q, q̇)`` of the initial-state columns: the free positions, then the free
        velocities (empty without ``init_sens``).
    success : bool
    status : str
        ``ok``, ``diverged``, ``stiff``, ``nonpositive_mass`` or ``gimbal_lock``.
    message : str
    fail_time : float or None, s
    nsub : int
        RK4 substeps per sample interval.
    nfev : int
        Right-hand-side evaluations.
    elapsed_s : float, s
    """

    t: FloatArray
    q: FloatArray
    qd: FloatArray
    qdd: FloatArray
    sens: FloatArray | None
    outputs: tuple[int, ...]
    init_states: tuple[int, ...]
    success: bool
    status: str
    message: str
    fail_time: float | None
    nsub: int
    nfev: int
    elapsed_s: float


@njit(cache=True)
def _within(y, limits):  # type: ignore[no-untyped-def]
    for k in range(y.size):
        if not (np.isfinite(y[k]) and abs(y[k]) <= limits[k]):
            return False
    return True


@njit(cache=True)
def _sens_stage(jy, jp, s, held, ks):  # type: ignore[no-untyped-def]
    """``ks = J_y s + J_θ`` (parameter columns first) using the structure ``∂q̇/∂y = [0 I]`` and zero rows of
    held DOFs; row-oriented so the inner loop runs over the contiguous columns."""
    nst, nq = s.shape
    npar = jp.shape[1]
    n = nst // 2
    for r in range(n):
        ks[r, :] = s[n + r, :]
        row = n + r
        ks[row, :] = 0.0
        if held[r]:
            continue
        for k in range(npar):
            ks[row, k] = jp[row, k]
        for m in range(nst):
            a = jy[row, m]
            if a != 0.0:
                for k in range(nq):
                    ks[row, k] += a * s[m, k]


@njit(cache=True, error_model="numpy")
def _rk4_step(i, tau0, h, y, s, theta, held, lay, reg, want, coef, fresh, bufs, work):  # type: ignore[no-untyped-def]
    """One RK4 step of ``y`` (and ``s``) from local time ``tau0`` of interval ``i``; a status.

    ``bufs`` = (ydot, jy, jp, u, yt, st, ks, y_next, s_next); with ``fresh`` the first stage uses
    the ydot/jy/jp already evaluated at (y, tau0).
    """
    ydot, jy, jp, u, yt, st, ks, y_next, s_next = bufs
    nst = y.size
    y_next[:] = y
    if want:
        s_next[:, :] = s
    for stage in range(4):
        c = _C[stage]
        if stage > 0:
            for k in range(nst):
                yt[k] = y[k] + c * h * ydot[k]
            if want:
                for k in range(nst):
                    for m in range(s.shape[1]):
                        st[k, m] = s[k, m] + c * h * ks[k, m]
        if stage > 0 or not fresh:
            input_at(coef, i, tau0 + c * h, u)
            status = rhs(yt if stage > 0 else y, u, theta, held, lay, reg, want, ydot, jy, jp, work)
            if status != OK:
                return status
        wh = _W[stage] * h
        for k in range(nst):
            y_next[k] += wh * ydot[k]
        if want:
            _sens_stage(jy, jp, st if stage > 0 else s, held, ks)
            for k in range(nst):
                for m in range(s.shape[1]):
                    s_next[k, m] += wh * ks[k, m]
    y[:] = y_next
    if want:
        s[:, :] = s_next
    return OK


@njit(cache=True, error_model="numpy", nogil=True)
def _integrate(t, coef, nsub, y0, theta, held, s0, want, out_idx, limits, lay, reg):  # type: ignore[no-untyped-def]
    """RK4 over the sample grid; returns (y (ns, 2n), q̈ (ns, n), sens, status, index, largest h·ρ)."""
    n = lay[0]
    ns = t.size
    nst = y0.size
    npar = theta.size
    nq = s0.shape[1]
    yout = np.full((ns, nst), np.nan)
    qdd = np.full((ns, n), np.nan)
    sens = np.full((ns, out_idx.size, nq), np.nan) if want else np.zeros((1, 1, 1))
    work = make_work(n, npar, lay[15].shape[0])
    ydot, jy, jp, u = np.zeros(nst), np.zeros((nst, nst)), np.zeros((nst, npar)), np.zeros(coef.shape[1])
    bufs = (ydot, jy, jp, u, np.zeros(nst), np.zeros((nst, nq)), np.zeros((nst, nq)), np.zeros(nst),
            np.zeros((nst, nq)))
    y = y0.copy()
    s = s0.copy()
    hrho = 0.0
    for i in range(ns):
        check = i % CHECK_EVERY == 0 and i < ns - 1
        if i < ns - 1:
            input_at(coef, i, 0.0, u)
        else:
            input_at(coef, i - 1, t[i] - t[i - 1], u)
        status = rhs(y, u, theta, held, lay, reg, want or check, ydot, jy, jp, work)
        if status != OK:
            return yout, qdd, sens, status, i, hrho
        if not _within(y, limits):
            return yout, qdd, sens, DIVERGED, i, hrho
        _record(i, y, ydot, jy, jp, s, n, out_idx, want, yout, qdd, sens)
        if i == ns - 1:
            break
        h = (t[i + 1] - t[i]) / nsub
        if check:
            r = h * spectral_radius(jy)
            hrho = max(hrho, r)
            if r > STABILITY_LIMIT:
                return yout, qdd, sens, STIFF, i, hrho
        for sub in range(nsub):
            status = _rk4_step(i, sub * h, h, y, s, theta, held, lay, reg, want, coef, sub == 0, bufs, work)
            if status == OK and not _within(y, limits):
                status = DIVERGED
            if status != OK:
                return yout, qdd, sens, status, i + 1, hrho
    return yout, qdd, sens, OK, ns, hrho


def _message(code: int, tf: float, nsub: int, need: int, hrho: float) -> str:
    if code == OK:
        return f"simulation completed with {nsub} RK4 substep(s) per sample"
    if code == NONPOSITIVE_MASS:
        return (f"the mass matrix of the free DOFs is not positive definite at t = {tf:.6g} s; the inertia"
                " parameters are unphysical")
    if code == GIMBAL_LOCK:
        return (f"the pitch angle reached ±90° (gimbal lock, |cos θ| < 1e-6) at t = {tf:.6g} s; the Euler angles"
                " cannot describe that attitude")
    capped = f" (the start needed {need}, capped at {MAX_SUBSTEPS})" if need > nsub else ""
    if code == STIFF:
        return (f"RK4 with {nsub} substep(s){capped} became unstable at t = {tf:.6g} s: h·ρ(∂ẏ/∂y) = {hrho:.3g}"
                f" exceeds {STABILITY_LIMIT}; give more substeps (`nsub`) or check the parameters")
    return (f"the simulation diverged at t = {tf:.6g} s with {nsub} substep(s){capped}: a state became non-finite"
            " or a position exceeded 1e6·(1 + |q0|); the parameters or the initial state make the model unstable")


def _substeps(layout: Layout, t: FloatArray, u0: FloatArray, theta: FloatArray, y0: FloatArray,
              held: NDArray[np.bool_]) -> int:
    """Substeps making |λ|·h <= SUBSTEP_TARGET for the linearisation at the start (uncapped)."""
    _, jy, _, status = evaluate(layout, y0, u0, theta, held)
    rate = float(spectral_radius(jy)) if status == OK else 0.0
    dt = float(np.max(np.diff(t)))
    return max(1, math.ceil(rate * dt / SUBSTEP_TARGET)) if math.isfinite(rate) else 1


def simulate(
    layout: Layout,
    t: ArrayLike,
    u: ArrayLike | None,
    theta: ArrayLike,
    y0: ArrayLike,
    *,
    held: ArrayLike | None = None,
    sens: bool = True,
    init_sens: bool = True,
    outputs: Sequence[int] | None = None,
    nsub: int | None = None,
    hold: str = "cubic",
    factor: int = 1,
) -> MdofRun:
    """Simulate a multi-DOF model from ``y0`` driven by ``u``, with exact sensitivities.

    Parameters
    ----------
    layout : Layout
    t : (ns,) array_like, s
        Sample times, increasing, ns >= 2.
    u : (ns, n_in) array_like or None
        Inputs at the samples (None only without input channels).
    theta : (P,) array_like
        Parameters.
    y0 : (2n,) array_like
        Initial state ``(q, q̇)``.
    held : (n,) array_like of bool or None
        Locked DOFs (q̈ = 0; they keep their initial velocity, normally zero).
    sens : bool
        Compute the sensitivities.
    init_sens : bool
        Add sensitivity columns for the free initial positions and velocities.
    outputs : sequence of int or None
        Indices into ``[q, q̇, q̈]`` whose sensitivities are returned (default: the positions).
    nsub : int or None
        RK4 substeps per sample interval (None: chosen from the linearisation at the start).
    hold : {"cubic", "foh", "zoh"}
        Input reconstruction between samples: the not-a-knot cubic by default, as in single-DOF simulations (a
        first-order hold biases every estimate fitted with it by the input's curvature, ~h²·f''/8).
    factor : int
        Multiplies the automatic substeps (a reference run far more accurate than the fits that use it).

    Returns
    -------
    MdofRun
        A failure (divergence, stiffness, gimbal lock, non-positive-definite mass) is a result with
        ``success=False``.

    Raises
    ------
    ModelSpecError
        Wrong sizes, non-finite values, bad indices or options.
    """
    n, npar = layout.n_dof, layout.n_params
    t_arr = np.ascontiguousarray(t, dtype=np.float64).reshape(-1)
    if t_arr.size < 2 or not np.all(np.isfinite(t_arr)) or not np.all(np.diff(t_arr) > 0):
        raise ModelSpecError(f"`t` must be finite and strictly increasing with >= 2 samples; got {t_arr.size} values")
    u_arr = np.zeros((t_arr.size, 0)) if u is None else np.asarray(u, dtype=np.float64)
    if u_arr.ndim == 1 and layout.n_inputs == 1:
        u_arr = u_arr[:, None]
    if u_arr.shape != (t_arr.size, layout.n_inputs) or not np.all(np.isfinite(u_arr)):
        raise ModelSpecError(f"`u` must be finite with shape ({t_arr.size}, {layout.n_inputs}); got {u_arr.shape}")
    if hold not in INPUT_HOLDS:
        raise ModelSpecError(f"unknown `hold` {hold!r}; choose from {', '.join(INPUT_HOLDS)}")
    th = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
    if th.size != npar or not np.all(np.isfinite(th)):
        raise ModelSpecError(f"`theta` needs {npar} finite values; got {th.size}")
    y = np.ascontiguousarray(y0, dtype=np.float64).reshape(-1)
    if y.size != 2 * n or not np.all(np.isfinite(y)):
        raise ModelSpecError(f"`y0` needs {2 * n} finite values (q then q̇); got {y.size}")
    mask = held_mask(layout, held)
    out = tuple(range(n)) if outputs is None else tuple(int(k) for k in outputs)
    if any(not 0 <= k < 3 * n for k in out):
        raise ModelSpecError(f"`outputs` must be indices into [q, q̇, q̈] (0..{3 * n - 1}); got {list(out)}")
    if nsub is not None and (not isinstance(nsub, (int, np.integer)) or nsub < 1):
        raise ModelSpecError(f"`nsub` must be an integer >= 1; got {nsub!r}")
    free = np.flatnonzero(~mask)
    init = tuple(int(k) for k in np.concatenate([free, n + free])) if init_sens else ()
    s0 = np.zeros((2 * n, npar + len(init)))
    for c, k in enumerate(init):
        s0[k, npar + c] = 1.0
    coef = input_coefficients(t_arr, np.ascontiguousarray(u_arr), hold)
    if layout.lumped is not None:
        return _simulate_lumped(layout.lumped, t_arr, coef, th, y, mask, bool(sens), out, init, nsub, factor)
    start = time.perf_counter()
    need = _substeps(layout, t_arr, u_arr[0], th, y, mask) if nsub is None else int(nsub)
    steps = min(need, MAX_SUBSTEPS) * max(int(factor), 1) if nsub is None else int(nsub)
    limits = np.concatenate([1e6 * (1.0 + np.abs(y[:n])), np.full(n, np.inf)])
    yo, qdd, sens_arr, code, idx, hrho = _integrate(
        t_arr, coef, steps, y, th, mask, s0, bool(sens), np.array(out, dtype=np.int64), limits,
        layout.kernel_args(), layout.programs.registers.copy())
    elapsed = time.perf_counter() - start
    code = int(code)
    tf = float(t_arr[min(int(idx), t_arr.size - 1)])
    done = min(int(idx), t_arr.size)
    return MdofRun(
        t=t_arr, q=yo[:, :n], qd=yo[:, n:], qdd=qdd, sens=sens_arr if sens else None, outputs=out,
        init_states=init, success=code == OK, status=STATUS_NAMES.get(code, "diverged"),
        message=_message(code, tf, steps, need, float(hrho)), fail_time=None if code == OK else tf, nsub=steps,
        nfev=done + max(done - 1, 0) * (4 * steps - 1), elapsed_s=elapsed,
    )


def _simulate_lumped(lp: LumpedPlan, t: FloatArray, coef: FloatArray, theta: FloatArray, y0: FloatArray,
                     held: NDArray[np.bool_], want: bool, out: tuple[int, ...], init: tuple[int, ...],
                     nsub: int | None, factor: int) -> MdofRun:
    """A lumped model on the general layer (:mod:`.lumped`): RK4 or SDIRK4 with the automatic stiff switch."""
    n, nst = lp.plan.n_dof, lp.n_states
    plan = replace(lp.plan, dof_in=lp.dof_in(held))
    th = lp.theta(theta)
    y = np.concatenate([y0, np.zeros(nst - 2 * n)])
    s0 = np.zeros((nst, th.size + len(init)))
    for c, k in enumerate(init):
        s0[k, th.size + c] = 1.0
    out_idx = np.array([k if k < 2 * n else nst + k - 2 * n for k in out], dtype=np.int64)
    lim = np.full(nst, np.inf)
    lim[:n] = 1e6 * (1.0 + np.abs(y[:n]))
    start = time.perf_counter()
    steps = nsub
    if steps is None and factor > 1:
        steps = auto_substeps(plan, t, y, th, coef[0, :, 0]) * int(factor)
    run = run_plan(plan, t, coef, th, y, s0, want, out_idx, lim, substeps=steps)
    elapsed = time.perf_counter() - start
    code = run.code
    done = min(run.index, t.size)
    tf = float(t[min(run.index, t.size - 1)])
    if code == OK:
        message = f"simulation completed ({run.method})"
    else:
        message = status_text(code, t, run.index)[1]
    status = STATUS_NAMES.get(code, "diverged")
    sens_arr = lp.fold(run.sens) if want else None
    return MdofRun(
        t=t, q=run.states[:, :n], qd=run.states[:, n:2 * n], qdd=run.accelerations, sens=sens_arr, outputs=out,
        init_states=init, success=code == OK, status=status, message=message, fail_time=None if code == OK else tf,
        nsub=run.substeps, nfev=done * 4 * max(run.substeps, 1), elapsed_s=elapsed,
    )
