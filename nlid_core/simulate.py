r"""Simulation of term models from a sampled force.

Two simulators share one result type:

* :func:`simulate` — the compiled fixed-step RK4 (``nsub`` substeps per
  sample interval) with exact forward sensitivities; used for fitting.
* :func:`simulate_reference` — :func:`scipy.integrate.solve_ivp` (DOP853 by
  default, tight tolerances) with the same input reconstruction; the
  independent check of the first.

Input reconstruction between samples (``input_hold``):

* ``"zoh"`` — zero-order hold, ``f(t) = f_k`` on ``[t_k, t_{k+1})``;
* ``"foh"`` — first-order hold (linear interpolation);
* ``"cubic"`` — not-a-knot cubic spline through the samples (default).

Linear interpolation of a sampled sine lowers its effective amplitude by
about (ωh)²/12 and so biases every parameter by that fraction; the cubic
spline's error is O((ωh)⁴) instead.

Any :class:`~nlid_core.models.TermModel` simulates, with internal states (LuGre, Bouc-Wen) and
typed terms: memoryless models of library terms run on the fast loop of :mod:`nlid_core._kernels` with
the terms' programs unrolled into source (:mod:`nlid_core.terms.fast_kernel`, tested to agree with the
general path), every other model on the general layer (:func:`nlid_core.dynamics.integrate.integrate`:
RK4, or SDIRK4 when stiff).

Divergence (non-finite state, |x| beyond ``x_limit``, or a non-positive
effective mass) is a *result*: ``success=False`` with a message saying where,
never an exception or a silent NaN.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

from . import _kernels
from .errors import ModelSpecError
from .models import TermModel
from .params import ParameterSet

__all__ = [
    "INPUT_HOLDS",
    "OUTPUT_CHANNELS",
    "SimulationResult",
    "simulate",
    "simulate_reference",
    "auto_substeps",
    "fine_input",
    "input_function",
    "warm_up",
]

FloatArray = NDArray[np.float64]

INPUT_HOLDS: tuple[str, ...] = ("zoh", "foh", "cubic")
OUTPUT_CHANNELS: tuple[str, ...] = ("x", "v", "a")
#: Target |λ|·h per substep for the automatic substep choice (RK4 relative
#: error per step ~ (λh)^5 / 120, about 8e-6 at 0.25). Estimators check the
#: integration error against the residual afterwards and refine.
SUBSTEP_TARGET = 0.25
MAX_SUBSTEPS = 64


@dataclass(frozen=True, kw_only=True)
class SimulationResult:
    """Outcome of one simulation.

    Attributes
    ----------
    t : (n,) ndarray, s
    x, v, a : (n,) ndarray
        Displacement, velocity, acceleration (NaN after a divergence).
    success : bool
    message : str
    status : str
        ``"ok"``, ``"diverged"`` or ``"nonpositive_mass"``.
    fail_time : float or None, s
        Time at which the run stopped, when it failed.
    sens : mapping or None
        Channel -> (n, p + 2) sensitivities w.r.t. (θ..., x0, v0); (n, p)
        when the initial-state columns were not asked for.
    sens_names : tuple of str
        Column names of the sensitivity matrices.
    method : str
    input_hold : str
    substeps : int
    nfev : int
        Right-hand-side evaluations.
    elapsed_s : float
    states : mapping of str to (n,) ndarray
        Internal states of the model's terms by name (empty for stateless models).
    """

    t: FloatArray
    x: FloatArray
    v: FloatArray
    a: FloatArray
    success: bool
    message: str
    status: str
    fail_time: float | None
    sens: Mapping[str, FloatArray] | None
    sens_names: tuple[str, ...]
    method: str
    input_hold: str
    substeps: int
    nfev: int
    elapsed_s: float
    states: Mapping[str, FloatArray] = field(default_factory=dict)

    def output(self, channel: str) -> FloatArray:
        if channel not in OUTPUT_CHANNELS:
            raise ModelSpecError(f"unknown output channel `{channel}`; choose from {OUTPUT_CHANNELS}")
        return getattr(self, channel)  # type: ignore[no-any-return]


def _theta(model: TermModel, params: ParameterSet | ArrayLike) -> FloatArray:
    if isinstance(params, ParameterSet):
        if params.names != model.param_names:
            raise ModelSpecError(f"parameters {params.names} do not match the model's {model.param_names}")
        return params.values
    theta = np.asarray(params, dtype=np.float64).reshape(-1)
    if theta.size != model.n_params:
        raise ModelSpecError(f"`params` has {theta.size} values; the model {model} needs {model.n_params}")
    if not np.all(np.isfinite(theta)):
        raise ModelSpecError("`params` contains non-finite values")
    return theta


def _check_hold(input_hold: str) -> None:
    if input_hold not in INPUT_HOLDS:
        raise ModelSpecError(f"unknown `input_hold` {input_hold!r}; choose from {', '.join(INPUT_HOLDS)}")


def fine_input(t: FloatArray, f: FloatArray, nsub: int, input_hold: str) -> FloatArray:
    """Force at every half substep: ``(n - 1) * 2 * nsub + 1`` values.

    ``cubic`` is the not-a-knot cubic spline through the samples (the same
    spline as ``scipy.interpolate.CubicSpline``), evaluated by a compiled loop.
    """
    _check_hold(input_hold)
    m = 2 * nsub
    t = np.ascontiguousarray(t, dtype=np.float64)
    f = np.ascontiguousarray(f, dtype=np.float64)
    if input_hold == "cubic" and t.size >= 4:
        return _kernels.spline_fine(t, f, m)  # type: ignore[no-any-return]
    frac = np.arange(m) / m
    if input_hold == "zoh":
        fine = np.repeat(f[:-1], m)
    else:  # foh (and cubic through fewer than 4 points, which is the line through them)
        dt = np.diff(t)
        tf = (t[:-1, None] + dt[:, None] * frac[None, :]).reshape(-1)
        fine = np.interp(tf, t, f)
    out = np.empty(fine.size + 1)
    out[:-1] = fine
    out[-1] = f[-1]
    return out


def input_function(t: FloatArray, f: FloatArray, input_hold: str):  # type: ignore[no-untyped-def]
    """Continuous-time input ``f(τ)`` for the reference integrator."""
    _check_hold(input_hold)
    if input_hold == "cubic":
        spline = CubicSpline(t, f, bc_type="not-a-knot")
        return lambda tau: float(spline(tau))
    if input_hold == "foh":
        return lambda tau: float(np.interp(tau, t, f))

    def zoh(tau: float) -> float:
        k = int(np.searchsorted(t, tau, side="right")) - 1
        return float(f[min(max(k, 0), t.size - 1)])

    return zoh


def auto_substeps(
    model: TermModel,
    theta: FloatArray,
    dt: float,
    x_range: float,
    v_range: float,
    target: float = SUBSTEP_TARGET,
) -> int:
    """Substeps per sample so that the fastest linearised rate times h stays below ``target``.

    The rate is the largest eigenvalue magnitude of the state Jacobian (for stateless library
    models the bound ``|∂a/∂ẋ| + sqrt(|∂a/∂x|)``) over ``|x| <= x_range``, ``|ẋ| <= v_range``, internal
    states at their steady values.
    """
    terms = model.fast_terms
    theta = np.asarray(theta, dtype=np.float64)
    if terms is not None:
        rate = _kernels.max_rate(float(x_range), float(v_range), 21, np.array(theta), terms)
    else:
        rate = _general_rate(model, theta, float(x_range), float(v_range))
    if not math.isfinite(rate) or rate <= 0:
        return 1
    return int(min(MAX_SUBSTEPS, max(1, math.ceil(rate * dt / target))))


def _general_rate(model: TermModel, theta: FloatArray, x_range: float, v_range: float) -> float:
    from .dynamics.integrate import plan_rate

    rate = 0.0
    for xi in np.linspace(-x_range, x_range, 7):
        for vj in np.linspace(-v_range, v_range, 7):
            y0 = model.initial_state([xi, vj], theta)
            rate = max(rate, plan_rate(model.plan, y0, theta, np.zeros(1)))
    return rate


def _status_message(status: int, t: FloatArray, idx: int, x_limit: float) -> tuple[str, str, float | None]:
    if status == _kernels.OK:
        return "ok", "simulation completed", None
    tf = float(t[min(idx, t.size - 1)])
    if status == _kernels.NONPOSITIVE_MASS:
        return (
            "nonpositive_mass",
            f"the effective mass (the sum of the inertia terms) became non-positive at t = {tf:.6g} s; the"
            " parameters are unphysical",
            tf,
        )
    return (
        "diverged",
        f"simulation diverged at t = {tf:.6g} s (state non-finite or |x| > {x_limit:.3g}); the parameters or the"
        " initial state make the model unstable for this input",
        tf,
    )


def simulate(
    model: TermModel,
    t: ArrayLike,
    f: ArrayLike,
    params: ParameterSet | ArrayLike,
    x0: Sequence[float] = (0.0, 0.0),
    *,
    input_hold: str = "cubic",
    substeps: int | None = None,
    sensitivities: bool = False,
    outputs: Sequence[str] = OUTPUT_CHANNELS,
    x_limit: float | None = None,
    fine: FloatArray | None = None,
    initial_state_sensitivities: bool = True,
    method: str = "auto",
) -> SimulationResult:
    """Simulate the model (compiled RK4, or SDIRK4 when the model is stiff).

    Parameters
    ----------
    model : TermModel
        Must contain ``m0``.
    t : (n,) array_like, s
        Sample times (uniform or nearly so; each interval gets ``substeps`` steps).
    f : (n,) array_like, N
        Force at the samples.
    params : ParameterSet or (p,) array_like
        Coefficients in model order.
    x0 : (2,) sequence
        Initial displacement (m) and velocity (m/s).
    input_hold : {"cubic", "foh", "zoh"}
        Input reconstruction between samples.
    substeps : int or None
        RK4 steps per sample interval; None chooses from the model's fastest
        linearised rate over |x| <= 1 and |ẋ| <= 1 in the record's units (see
        :func:`auto_substeps`; the estimators pass the data's own ranges).
    sensitivities : bool
        Also return ∂(outputs)/∂(θ, x0, v0).
    outputs : sequence of {"x", "v", "a"}
        Channels whose sensitivities are returned.
    x_limit : float or None
        |x| beyond which the run counts as diverged (default 1e6·(1 + |x0|)).
    fine : ndarray or None
        ``fine_input(t, f, substeps, input_hold)`` computed beforehand, for
        repeated simulations of one record (requires ``substeps``).
    initial_state_sensitivities : bool
        Include the columns for (x0, v0) in the sensitivities.
    method : {"auto", "rk4", "sdirk"}
        Integrator; ``auto`` takes SDIRK4 when RK4 would be unstable (see
        :func:`nlid_core.dynamics.integrate.integrate`). Internal states start at their steady
        value for ``v0`` (zero at rest).

    Returns
    -------
    SimulationResult
    """
    model.require_simulable()
    if method not in ("auto", "rk4", "sdirk"):
        raise ModelSpecError(f"unknown `method` {method!r}; choose from auto, rk4, sdirk")
    _check_hold(input_hold)
    t_arr = np.ascontiguousarray(t, dtype=np.float64)
    f_arr = np.ascontiguousarray(f, dtype=np.float64)
    if t_arr.ndim != 1 or f_arr.shape != t_arr.shape or t_arr.size < 2:
        raise ModelSpecError(f"`t` and `f` must be 1-D of one length >= 2, got {t_arr.shape} and {f_arr.shape}")
    theta = _theta(model, params)
    x0v = np.asarray(x0, dtype=np.float64).reshape(-1)
    if x0v.size != 2 or not np.all(np.isfinite(x0v)):
        raise ModelSpecError(f"`x0` must be two finite numbers (x0, v0), got {x0!r}")
    bad = [o for o in outputs if o not in OUTPUT_CHANNELS]
    if bad:
        raise ModelSpecError(f"unknown output channel(s) {bad}; choose from {OUTPUT_CHANNELS}")
    dt = float((t_arr[-1] - t_arr[0]) / (t_arr.size - 1))
    if substeps is None and model.fast_terms is not None:
        substeps = auto_substeps(model, theta, dt, 1.0, 1.0)
    if substeps is not None and int(substeps) < 1:
        raise ModelSpecError(f"`substeps` must be >= 1, got {substeps}")
    nsub = int(substeps or 1)
    limit = float(x_limit) if x_limit is not None else 1e6 * (1.0 + abs(x0v[0]))
    out_ch = np.array([OUTPUT_CHANNELS.index(o) for o in outputs], dtype=np.int64)
    start = time.perf_counter()
    terms = model.fast_terms
    use_fast = terms is not None and (not sensitivities or bool(model.linear_mask.all())) and method in ("auto", "rk4")
    if not use_fast:
        return _simulate_general(model, t_arr, f_arr, theta, x0v, input_hold=input_hold, substeps=substeps,
                                 sensitivities=sensitivities, outputs=outputs, limit=limit, method=method,
                                 initial_state_sensitivities=initial_state_sensitivities, start=start)
    if fine is None:
        fine = fine_input(t_arr, f_arr, nsub, input_hold)
    elif fine.shape != ((t_arr.size - 1) * 2 * nsub + 1,):
        raise ModelSpecError(f"`fine` has shape {fine.shape}; it does not match `t` and `substeps` = {nsub}")
    assert terms is not None
    # writable arrays whatever the caller's (records loaded from files hold read-only ones): one compiled
    # specialisation of the kernel, not two
    y, sens, status, idx = _kernels.simulate_rk4(
        t_arr if t_arr.flags.writeable else t_arr.copy(), fine if fine.flags.writeable else fine.copy(), nsub,
        x0v[0], x0v[1], np.array(theta), terms, bool(sensitivities), bool(initial_state_sensitivities), out_ch,
        limit,
    )
    elapsed = time.perf_counter() - start
    status_name, message, fail_time = _status_message(int(status), t_arr, int(idx), limit)
    sens_map = {o: sens[:, k, :] for k, o in enumerate(outputs)} if sensitivities else None
    return SimulationResult(
        t=t_arr,
        x=y[:, 0],
        v=y[:, 1],
        a=y[:, 2],
        success=status_name == "ok",
        message=message,
        status=status_name,
        fail_time=fail_time,
        sens=sens_map,
        sens_names=(*model.param_names, "x0", "v0") if initial_state_sensitivities else model.param_names,
        method=f"rk4 ({nsub} substeps)",
        input_hold=input_hold,
        substeps=nsub,
        nfev=4 * nsub * (t_arr.size - 1),
        elapsed_s=elapsed,
    )


def _simulate_general(model: TermModel, t: FloatArray, f: FloatArray, theta: FloatArray, x0: FloatArray, *,
                      input_hold: str, substeps: int | None, sensitivities: bool, outputs: Sequence[str],
                      limit: float, method: str, initial_state_sensitivities: bool, start: float) -> SimulationResult:
    """Any model on the general layer; the result in the single-DOF form."""
    from .dynamics.integrate import integrate

    y0 = model.initial_state(x0, theta)
    lim = np.full(model.n_states, np.inf)
    lim[0] = limit
    tr = integrate(model, t, f, theta, y0, input_hold=input_hold, method=method,
                   substeps=substeps if method != "sdirk" else None, sensitivities=sensitivities,
                   outputs=tuple(outputs), initial=("x", "v") if initial_state_sensitivities else (), limits=lim)
    status = tr.status
    msg = tr.message.replace("the effective mass", "the effective mass (inertia terms)")
    return SimulationResult(
        t=t, x=tr.output("x"), v=tr.output("v"), a=tr.output("a"), success=tr.success, message=msg,
        status=status, fail_time=tr.fail_time, sens=tr.sens,
        sens_names=(*model.param_names, "x0", "v0") if initial_state_sensitivities else model.param_names,
        method=tr.method, input_hold=input_hold, substeps=tr.steps if tr.method.startswith("rk4") else 0,
        nfev=0, elapsed_s=time.perf_counter() - start,
        states={n: tr.output(n) for n in model.internal_state_names},
    )


def simulate_reference(
    model: TermModel,
    t: ArrayLike,
    f: ArrayLike,
    params: ParameterSet | ArrayLike,
    x0: Sequence[float] = (0.0, 0.0),
    *,
    input_hold: str = "cubic",
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> SimulationResult:
    """Simulate with :func:`scipy.integrate.solve_ivp` (independent reference).

    The integrator is scipy's; the model is evaluated by the terms' compiled programs (checked
    against their symbolic expressions and finite differences by the term contract test), with
    the exact Jacobian passed to implicit methods (Radau, BDF, LSODA). The input is reconstructed
    as in :func:`simulate`; the integrator never steps across a sample, so it sees every one.

    Parameters
    ----------
    model : TermModel
    t, f : (n,) array_like
        Sample times (s) and force (N).
    params : ParameterSet or (p,) array_like
    x0 : (2,) sequence
        Initial displacement and velocity (internal states start at their steady value).
    input_hold : {"cubic", "foh", "zoh"}
    method : str
        ``solve_ivp`` method (DOP853, Radau, ...).
    rtol, atol : float
        ``solve_ivp`` tolerances.

    Returns
    -------
    SimulationResult
        Without sensitivities.
    """
    from .dynamics import evaluate

    model.require_simulable()
    t_arr = np.asarray(t, dtype=np.float64)
    f_arr = np.asarray(f, dtype=np.float64)
    theta = _theta(model, params)
    finput = input_function(t_arr, f_arr, input_hold)
    plan = model.plan
    nst, npar = model.n_states, model.n_params
    args = plan.args()
    work = (np.zeros(1), np.zeros((1, nst)), np.zeros((1, npar)))
    jy = np.zeros((nst, nst))
    jp = np.zeros((nst, npar))

    def call(tau: float, y: FloatArray, want: bool) -> FloatArray:
        ydot = np.zeros(nst)
        evaluate.rhs_call(y, np.array([finput(tau)]), theta, args, want, ydot, jy, jp, *work)
        return ydot

    def rhs(tau: float, y: FloatArray) -> FloatArray:
        return call(tau, y, False)

    def jac(tau: float, y: FloatArray) -> FloatArray:
        call(tau, y, True)
        return jy.copy()

    y0 = model.initial_state(np.asarray(x0, dtype=np.float64), theta)
    start = time.perf_counter()
    dt = float(np.min(np.diff(t_arr)))
    extra = {"jac": jac} if method in ("Radau", "BDF", "LSODA") else {}
    sol = solve_ivp(  # type: ignore[call-overload]
        rhs, (float(t_arr[0]), float(t_arr[-1])), y0, method=method,
        t_eval=t_arr, rtol=rtol, atol=atol, max_step=dt, **extra,
    )
    elapsed = time.perf_counter() - start
    n = t_arr.size
    ys = np.full((n, nst), np.nan)
    m = sol.y.shape[1] if sol.y.size else 0
    ys[:m] = sol.y.T
    a = np.full(n, np.nan)
    for k in range(m):
        a[k] = call(float(t_arr[k]), ys[k], False)[1]
    ok = bool(sol.success) and m == n
    return SimulationResult(
        t=t_arr, x=ys[:, 0], v=ys[:, 1], a=a, success=ok,
        message="simulation completed" if ok else f"solve_ivp failed: {sol.message}",
        status="ok" if ok else "diverged",
        fail_time=None if ok else float(t_arr[max(m - 1, 0)]),
        sens=None, sens_names=(), method=f"solve_ivp {method} rtol={rtol:g}", input_hold=input_hold,
        substeps=0, nfev=int(sol.nfev), elapsed_s=elapsed,
        states={name: ys[:, 2 + k] for k, name in enumerate(model.internal_state_names)},
    )


def warm_up() -> float:
    """Compile (or load from cache) the kernels; return the seconds it took."""
    start = time.perf_counter()
    from .terms.registry import baseline_terms

    model = TermModel(baseline_terms())  # mass, viscous damping, linear stiffness
    t = np.linspace(0.0, 1.0, 32)
    simulate(model, t, np.sin(t), [1.0, 0.1, 10.0], sensitivities=True, substeps=1)
    simulate(model, t, np.sin(t), [1.0, 0.1, 10.0], sensitivities=False, substeps=1)
    auto_substeps(model, np.array([1.0, 0.1, 10.0]), 0.01, 1.0, 1.0)
    t_ro = t.copy()
    t_ro.flags.writeable = False  # records loaded from files may hold read-only arrays: a separate specialisation
    simulate(model, t_ro, np.sin(t), [1.0, 0.1, 10.0], sensitivities=True, substeps=1)
    fine_input(t_ro, np.sin(t), 1, "cubic")
    simulate(model, t, np.sin(t), [1.0, 0.1, 10.0], sensitivities=True, substeps=1, initial_state_sensitivities=False)
    return time.perf_counter() - start
