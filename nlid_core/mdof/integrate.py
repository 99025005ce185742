r"""Simulation of a multi-DOF model with exact sensitivities, on the general layer.

A model's plan (:mod:`.plan`) runs on :func:`nlid_core.dynamics.integrate.run_plan`, the integrator family of every
model: RK4 with exact discrete sensitivities and, when the model is stiff, SDIRK4 (the automatic switch); the inputs
between samples are the per-interval cubics of :func:`nlid_core.dynamics.integrate.input_coefficients`. The
sensitivities to the gravity weights of lumped DOFs are folded into the mass columns (:meth:`.plan.ModelPlan.fold`).
Without ``nsub`` the number of RK4 substeps makes :math:`|\lambda|_{\max} h \le 0.25` for the linearisation at the
start; ``factor`` multiplies it for reference runs. The cost is linear in the record length.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics.integrate import INPUT_HOLDS, auto_substeps, input_coefficients, run_plan, status_text
from ..errors import ModelSpecError
from ..status import NAMES, OK
from .evaluate import held_mask
from .layout import Layout
from .plan import ModelPlan

__all__ = ["MdofRun", "STATUS_NAMES", "simulate"]

FloatArray = NDArray[np.float64]

#: Status names of :attr:`MdofRun.status` by kernel code.
STATUS_NAMES = NAMES


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
        A failure (divergence: a non-finite state, a position beyond 1e6·(1 + |q0|) or a velocity beyond
        1e6·(1 + |q̇0|) in SI units; stiffness, gimbal lock, non-positive-definite mass) is a result with
        ``success=False``.

    Raises
    ------
    ModelSpecError
        Wrong sizes, non-finite values, bad indices or options.
    """
    n, npar = layout.n_dof, layout.n_params
    # writeable: a record's read-only time vector is another type to the kernels, compiled again in full
    t_arr = np.require(np.asarray(t, dtype=np.float64).reshape(-1), requirements=("C", "W"))
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
    coef = input_coefficients(t_arr, np.ascontiguousarray(u_arr), hold)
    return _run(layout.plan, t_arr, coef, th, y, mask, bool(sens), out, init, nsub, factor)


def _run(lp: ModelPlan, t: FloatArray, coef: FloatArray, theta: FloatArray, y0: FloatArray,
         held: NDArray[np.bool_], want: bool, out: tuple[int, ...], init: tuple[int, ...],
         nsub: int | None, factor: int) -> MdofRun:
    """The model's plan on the general layer: RK4 or SDIRK4 with the automatic stiff switch."""
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
    # SDIRK4's absolute tolerances follow the position limits alone (run_plan's default for these limits)
    atol = np.maximum(1e-8 * np.where(np.isfinite(lim), lim * 1e-9, 1e-6), 1e-15)
    # a velocity of 1e6 m/s or rad/s is a runaway: stopping there spares the implicit retry of a diverging model
    # its smallest steps (a platform spinning up: 11 s -> 2 s to report the divergence)
    lim[n:2 * n] = 1e6 * (1.0 + np.abs(y[n:2 * n]))
    start = time.perf_counter()
    steps = nsub
    if steps is None and factor > 1:
        steps = auto_substeps(plan, t, y, th, coef[0, :, 0]) * int(factor)
    run = run_plan(plan, t, coef, th, y, s0, want, out_idx, lim, substeps=steps, atol=atol)
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
