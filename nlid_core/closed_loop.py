r"""A single-DOF model simulated inside a discrete position controller: a drive axis as it runs on the test rig.

A positioning axis under position control is driven by its controller, not by a recorded force: the force
depends on the position error. The benchmark of such an axis (EMPS: Janot, Gautier and Brunot, 2019 Workshop
on Nonlinear System Identification Benchmarks) validates a model by simulating it inside the same loop, driven
by the recorded reference. :class:`PositionLoop` is that loop, sampled at the record's rate ``Ts``:

* the position ``q(k)`` is read at each sample and filtered, ``qf(k) = (1 − w)·q(k) + w·q(k−1)`` (``w = 0.5``:
  EMPS's two-tap FIR filter), and differentiated, ``q̇f(k) = (qf(k) − qf(k−1)) / Ts``;
* the controller output is ``u(k) = kv·(kp·e(k) + ki·Σ e·Ts − q̇f(k))`` with ``e = r − q`` (a PD position loop
  around a velocity loop; ``ki`` adds an integral of the position error), saturated at ``±limit``;
* the output reaches the plant ``delay`` samples later and is held over each sample interval: the force on the
  model over ``[t_k, t_(k+1))`` is ``gain·u(k − delay)`` plus any recorded additive force (pulses). Before
  the first output exists the held command is ``command0`` (the record's first measured command, or 0).

Between samples the model is integrated by the one integrator family (:func:`nlid_core.dynamics.integrate.
run_plan`: RK4 with the substeps the model's fastest rate asks for, SDIRK4 when stiff), internal states
(LuGre's bristles) carried across the samples. The force the model receives is the *applied* force, which
is what the benchmark compares with the measured ``gtau·vir``: with the published reference parameters and
``delay = 1`` the force error on the estimation record is 5.849 % (published 5.848 %).

The controller's clock is the record's mean spacing unless ``period`` sets it. The benchmark's own script takes
its period from a single time-stamp difference, ``t(10) − t(9)`` = 0.999983961 ms on the estimation record,
whose mean spacing is 1 ms exactly; its simulated time therefore falls behind the record by 0.4 ms (0.4 sample)
over the 24.84 s, and it is compared with the record sample by sample. That lag is most of its published
position error: with ``period=0.000999983961121758`` this loop gives position 0.01375 % and force 5.84 %
(published 0.013752 % and 5.848 %; Coulomb friction smoothed over 1e-5 m/s); on the record's own clock the
position error is 0.0016 %.

:func:`relative_error` is the benchmark's metric, ``100·‖y − ŷ‖/‖y‖`` over the samples from ``start`` on
(50 in the benchmark).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ModelSpecError
from .models import TermModel
from .params import ParameterSet
from .progress import ProgressFn
from .record import Record

if TYPE_CHECKING:
    from .estimate.options import FitOptions
    from .estimate.results import FitResult, ParameterEstimate

__all__ = ["ClosedLoopRun", "LoopCheck", "PositionLoop", "check_in_loop", "fit_closed_loop", "identify_in_loop",
           "parse_loop", "relative_error", "simulate_closed_loop"]

FloatArray = NDArray[np.float64]

#: The settings of :class:`PositionLoop` a spec string may give, with their meaning (for messages and help).
LOOP_KEYS: Mapping[str, str] = {
    "kp": "position gain (1/s)",
    "kv": "velocity gain (controller units per m/s)",
    "ki": "integral gain on the position error (1/s^2, default 0: PD)",
    "gain": "force per controller unit (the drive gain, e.g. N/V)",
    "limit": "saturation of the controller output (controller units, default none)",
    "delay": "samples between computing an output and applying it (default 1)",
    "filter": "weight w of the previous position in the derivative's filter (default 0.5)",
    "period": "the controller's sample time in s (default the record's mean spacing)",
}


@dataclass(frozen=True, kw_only=True)
class PositionLoop:
    """The discrete position controller of the module notes."""

    kp: float
    kv: float
    gain: float
    ki: float = 0.0
    limit: float = math.inf
    delay: int = 1
    filter: float = 0.5
    period: float | None = None

    def __post_init__(self) -> None:
        for name in ("kp", "kv", "gain", "ki"):
            value = getattr(self, name)
            if not math.isfinite(value) or (name != "ki" and value <= 0) or value < 0:
                raise ModelSpecError(f"closed loop: `{name}` ({LOOP_KEYS[name]}) must be a finite positive number"
                                     f"{' or 0' if name == 'ki' else ''}, got {value!r}")
        if not self.limit > 0:
            raise ModelSpecError(f"closed loop: `limit` must be positive, got {self.limit!r}")
        if not (isinstance(self.delay, int) and 0 <= self.delay <= 100):
            raise ModelSpecError(f"closed loop: `delay` must be a whole number of samples in 0..100, got {self.delay!r}")
        if not 0.0 <= self.filter < 1.0:
            raise ModelSpecError(f"closed loop: `filter` must lie in [0, 1), got {self.filter!r}")
        if self.period is not None and not (math.isfinite(self.period) and self.period > 0):
            raise ModelSpecError(f"closed loop: `period` ({LOOP_KEYS['period']}) must be a positive number of"
                                 f" seconds, got {self.period!r}")


def parse_loop(spec: str) -> PositionLoop:
    """``"kp=160.18,kv=243.45,gain=35.15,limit=10,delay=1"`` -> :class:`PositionLoop`.

    Raises
    ------
    ModelSpecError
        An unknown key (listing the known ones), a value that is not a number, a missing gain.
    """
    values: dict[str, float] = {}
    for fragment in str(spec).split(","):
        if not fragment.strip():
            continue
        key, eq, text = fragment.partition("=")
        key = key.strip()
        if not eq or key not in LOOP_KEYS:
            raise ModelSpecError(f"closed loop: `{fragment.strip()}` is not KEY=VALUE with a key among"
                                 f" {', '.join(LOOP_KEYS)}")
        try:
            values[key] = float(text)
        except ValueError:
            raise ModelSpecError(f"closed loop: `{key}` needs a number, got `{text.strip()}`") from None
    missing = [k for k in ("kp", "kv", "gain") if k not in values]
    if missing:
        raise ModelSpecError(f"closed loop: give {', '.join(missing)} ({'; '.join(LOOP_KEYS[k] for k in missing)})")
    delay = values.pop("delay", 1.0)
    if delay != int(delay):
        raise ModelSpecError(f"closed loop: `delay` is a whole number of samples, got {delay:g}")
    return PositionLoop(**values, delay=int(delay))


@dataclass(frozen=True, kw_only=True)
class ClosedLoopRun:
    """A closed-loop simulation at the record's samples.

    Attributes
    ----------
    t, reference : (n,) ndarray
    x, v, a : (n,) ndarray
        The model's displacement, velocity and acceleration (NaN after a failure).
    states : mapping of str to (n,) ndarray
        Internal states by name.
    command : (n,) ndarray
        The controller output ``u(k)`` after saturation (controller units).
    force : (n,) ndarray
        The force applied to the model over ``[t_k, t_(k+1))``: ``gain·u(k − delay)`` plus the pulses.
    saturated : float
        Fraction of samples at which the output was saturated.
    success : bool
    message : str
    method : str
        The integrator of the last interval.
    """

    t: FloatArray
    reference: FloatArray
    x: FloatArray
    v: FloatArray
    a: FloatArray
    states: Mapping[str, FloatArray]
    command: FloatArray
    force: FloatArray
    saturated: float
    success: bool
    message: str
    method: str


def relative_error(measured: ArrayLike, simulated: ArrayLike, start: int = 50) -> float:
    """The benchmark's relative error ``100·‖y − ŷ‖/‖y‖`` (per cent) over the samples from ``start`` on."""
    y = np.asarray(measured, dtype=np.float64)[start:]
    yh = np.asarray(simulated, dtype=np.float64)[start:]
    den = float(np.linalg.norm(y))
    return 100.0 * float(np.linalg.norm(y - yh)) / den if den > 0 else math.nan


def simulate_closed_loop(model: TermModel, params: ParameterSet | ArrayLike, t: ArrayLike, reference: ArrayLike,
                         loop: PositionLoop, *, x0: tuple[float, float] | None = None,
                         pulses: ArrayLike | None = None, command0: float = 0.0,
                         progress: ProgressFn | None = None) -> ClosedLoopRun:
    """Simulate ``model`` inside ``loop`` driven by ``reference`` (see the module notes).

    Parameters
    ----------
    model : TermModel
        A simulable single-DOF model (its force in the units of ``loop.gain``, its displacement in those of
        ``reference``).
    params : ParameterSet or (P,) array_like
        Every parameter.
    t : (n,) array_like
        Uniform sample times. The controller's period is their spacing unless ``loop.period`` sets it (within
        1 % of it); then the run's ``k``-th sample is at ``t[0] + k·period``, the reference and the pulses
        interpolated there.
    reference : (n,) array_like
        The position reference at the samples.
    loop : PositionLoop
    x0 : (x, v) or None
        Initial state (default: at the reference's first value, at rest); internal states start steady.
    pulses : (n,) array_like or None
        An additive force on the model, held over each interval (the validation record's pulses).
    command0 : float
        The command held before the controller's first output reaches the model (``delay`` > 0).
    progress : callable or None
        ``progress("closed-loop", fraction, message)`` about a hundred times over the record.

    Raises
    ------
    ModelSpecError
        A model without inertia, arrays of different lengths or non-finite values, non-uniform times.
    """
    from .dynamics.integrate import auto_substeps, run_plan
    from .status import OK

    model.require_simulable()
    theta = np.ascontiguousarray(params.values if isinstance(params, ParameterSet) else params, dtype=np.float64)
    tt = np.ascontiguousarray(t, dtype=np.float64)
    ref = np.ascontiguousarray(reference, dtype=np.float64)
    n = tt.size
    extra = np.zeros(n) if pulses is None else np.ascontiguousarray(pulses, dtype=np.float64)
    if n < 3 or ref.shape != (n,) or extra.shape != (n,):
        raise ModelSpecError(f"closed loop: `t`, the reference and the pulses need one value per sample (n >= 3);"
                             f" got {tt.shape}, {ref.shape}, {extra.shape}")
    if not (np.all(np.isfinite(tt)) and np.all(np.isfinite(ref)) and np.all(np.isfinite(extra))):
        raise ModelSpecError("closed loop: the times, the reference and the pulses must be finite")
    ts = float((tt[-1] - tt[0]) / (n - 1))
    if not ts > 0 or np.max(np.abs(np.diff(tt) - ts)) > 1e-3 * ts:
        raise ModelSpecError("closed loop: the controller needs uniform sample times")
    if loop.period is not None and loop.period != ts:
        if abs(loop.period / ts - 1.0) > 0.01:
            raise ModelSpecError(f"closed loop: the controller's period {loop.period:.9g} s is more than 1 % away from"
                                 f" the record's sample time {ts:.9g} s; the run is compared with the record sample by"
                                 " sample")
        # the controller's own clock: its k-th output at t0 + k·period, the inputs read there
        tc = tt[0] + loop.period * np.arange(n)
        ref, extra = np.interp(tc, tt, ref), np.interp(tc, tt, extra)
        tt, ts = tc, float(loop.period)
    start = (float(ref[0]), 0.0) if x0 is None else (float(x0[0]), float(x0[1]))
    y = np.ascontiguousarray(model.initial_state(start, theta), dtype=np.float64)
    nst = model.n_states
    s0 = np.zeros((nst, model.n_params))
    none = np.zeros(0, dtype=np.int64)
    lim = np.full(nst, np.inf)
    lim[0] = 1e3 * (float(np.max(np.abs(ref))) + abs(start[0])) + 1.0
    coef = np.zeros((1, 1, 4))
    # one substep count for the run: the fastest rate at full force
    f_max = loop.gain * (loop.limit if math.isfinite(loop.limit) else 1.0) + float(np.max(np.abs(extra)))
    nsub = auto_substeps(model.plan, tt[:2].copy(), y, theta, np.array([f_max]))
    xs, vs, acc = (np.full(n, np.nan) for _ in range(3))
    states = np.full((n, nst), np.nan)
    command, force = np.full(n, np.nan), np.full(n, np.nan)
    q_prev, qf_prev, integral, n_sat = start[0], start[0], 0.0, 0
    success, message, method = True, "closed-loop simulation completed", ""
    every = max(n // 100, 1)
    for k in range(n):
        if progress is not None and k % every == 0:
            progress("closed-loop", k / n, f"sample {k:,} of {n:,}")
        q = float(y[0])
        xs[k], vs[k] = q, float(y[1])
        states[k] = y
        qf = (1.0 - loop.filter) * q + loop.filter * q_prev
        err = float(ref[k]) - q
        integral += err * ts
        u = loop.kv * (loop.kp * err + loop.ki * integral - (qf - qf_prev) / ts)
        if abs(u) > loop.limit:
            u = math.copysign(loop.limit, u)
            n_sat += 1
        command[k] = u
        q_prev, qf_prev = q, qf
        held = command[k - loop.delay] if k >= loop.delay else command0
        force[k] = loop.gain * held + float(extra[k])
        if k == n - 1:
            break
        coef[0, 0, 0] = force[k]
        run = run_plan(model.plan, tt[k:k + 2], coef, theta, y, s0, False, none, lim, method="auto", substeps=nsub)
        acc[k] = float(run.accelerations[0, 0])
        method = run.method
        if run.code != OK or not np.all(np.isfinite(run.states[-1])):
            success = False
            message = (f"the model diverged inside the loop at t = {tt[k + 1]:.6g} s (the controller cannot hold it:"
                       " check the parameters and the loop gains)")
            break
        y = np.ascontiguousarray(run.states[-1])
    if success:  # the acceleration at the last sample, from the force held there
        coef[0, 0, 0] = force[n - 1]
        last = run_plan(model.plan, np.array([tt[-1], tt[-1] + ts]), coef, theta, y, s0, False, none, lim,
                        method="auto", substeps=nsub)
        acc[n - 1] = float(last.accelerations[0, 0])
    names = model.state_names
    return ClosedLoopRun(t=tt, reference=ref, x=xs, v=vs, a=acc,
                         states={nm: states[:, i] for i, nm in enumerate(names) if nm not in ("x", "v")},
                         command=command, force=force, saturated=n_sat / n, success=success, message=message,
                         method=method)


@dataclass(frozen=True, kw_only=True)
class LoopCheck:
    """A model simulated inside the loop against a record: the run and the benchmark's relative errors.

    Attributes
    ----------
    record : str
    loop : PositionLoop
    run : ClosedLoopRun
    measured : mapping of str to (n,) ndarray
        The record's ``x`` (when measured) and ``f``: what the run's position and applied force are compared with.
    errors : mapping of str to float
        :func:`relative_error` per channel of ``measured`` (per cent), from sample ``start``.
    units : mapping of str to str
        ``t``, ``x`` and ``f`` as the record gives them.
    start : int
    """

    record: str
    loop: PositionLoop
    run: ClosedLoopRun
    measured: Mapping[str, FloatArray]
    errors: Mapping[str, float]
    units: Mapping[str, str]
    start: int

    def simulated(self, channel: str) -> FloatArray:
        """The run's position (``x``) or applied force (``f``)."""
        return self.run.x if channel == "x" else self.run.force

    def summary(self) -> str:
        """One line: the loop, the relative errors and how often the output saturated."""
        loop = self.loop
        names = {"x": "position", "f": "force"}
        errors = ", ".join(f"{names[c]} {e:.4g} %" for c, e in self.errors.items())
        clock = "" if loop.period is None else f", period {loop.period:.9g} s"
        return (f"closed loop (kp {loop.kp:g}, kv {loop.kv:g}, gain {loop.gain:g}, limit {loop.limit:g}, delay"
                f" {loop.delay}{clock}): relative errors from sample {self.start} against the record (the EMPS benchmark's"
                f" metric, applied force against measured force): {errors}; output saturated at"
                f" {100 * self.run.saturated:.1f} % of the samples")


def check_in_loop(model: TermModel, params: ParameterSet | ArrayLike, record: Record, reference: ArrayLike,
                  loop: PositionLoop, *, pulses: ArrayLike | None = None, start: int = 50,
                  progress: ProgressFn | None = None) -> LoopCheck:
    """Simulate ``model`` inside ``loop`` as the record's axis ran: driven by ``reference``, from the record's first
    position at rest, the record's first force held until the controller's first output arrives; compare the
    position and the applied force with the record's (see :class:`LoopCheck`).

    ``pulses`` is an additive force on the model (the validation record's pulses), in the record's force unit.
    """
    x0 = (float(record.x[0]), 0.0) if record.x is not None else None
    run = simulate_closed_loop(model, params, record.t, reference, loop, x0=x0, pulses=pulses,
                               command0=float(record.f[0]) / loop.gain, progress=progress)
    measured = {c: np.asarray(v, dtype=np.float64) for c, v in (("x", record.x), ("f", record.f)) if v is not None}
    errors = {c: relative_error(v, run.x if c == "x" else run.force, start) for c, v in measured.items()}
    return LoopCheck(record=record.name, loop=loop, run=run, measured=measured, errors=errors,
                     units={c: record.unit(c) for c in ("t", "x", "f")}, start=start)


def fit_closed_loop(model: TermModel, params: ParameterSet, record: Record, reference: ArrayLike, loop: PositionLoop,
                    *, channels: Sequence[str] = ("x", "f"), start: int = 50, max_nfev: int = 40,
                    confidence: float = 0.95, progress: ProgressFn | None = None) -> FitResult:
    """Output error inside the loop: the free parameters that make the closed-loop simulation driven by
    ``reference`` reproduce the record's displacement and applied force (``channels``) from sample ``start`` on.

    Each channel's residual is divided by the norm of its measurement, so the cost is the sum of the squared
    relative errors of the benchmark's metric. The Jacobian is by finite differences (each column one
    closed-loop simulation); the intervals come from the one uncertainty path, Newey–West when the residual is
    not white, the channels of a sample summed. The initial state is the first measured displacement, at rest.

    Raises
    ------
    ModelSpecError
        A channel the record lacks, nothing free, or a loop the model cannot be simulated in at the start.
    """
    from scipy.optimize import least_squares

    from .estimate import FitOptions
    from .estimate.assemble import _flags_and_estimates, _metrics
    from .estimate.results import FitResult, RecordFit
    from .identifiability import newey_west_note, uncertainty_from_jacobian, weak_directions_text

    t0 = time.perf_counter()
    measured = {c: record.channel(c) for c in channels if c in ("x", "f") and record.channel(c) is not None}
    if set(measured) != set(channels) or not channels:
        raise ModelSpecError(f"closed-loop output error fits x and/or f, measured in the record; got {list(channels)}")
    free = params.free_mask
    if not free.any():
        raise ModelSpecError("every parameter is fixed: nothing to estimate")
    ref = np.asarray(reference, dtype=np.float64)
    x0 = (float(record.x[0]), 0.0)
    command0 = float(record.f[0]) / loop.gain
    sl = slice(start, None)
    weights = {c: 1.0 / max(float(np.linalg.norm(v[sl])), 1e-300) for c, v in measured.items()}
    scale = np.where(params.values[free] != 0, np.abs(params.values[free]), 1.0)
    count = [0]

    def theta_of(z: FloatArray) -> FloatArray:
        th = params.values.copy()
        th[free] = z * scale
        return th

    def run_at(z: FloatArray) -> ClosedLoopRun:
        return simulate_closed_loop(model, theta_of(z), record.t, ref, loop, x0=x0, command0=command0)

    def predicted(run: ClosedLoopRun, c: str) -> FloatArray:
        return run.x if c == "x" else run.force

    def residual_of(run: ClosedLoopRun) -> FloatArray:
        r = np.concatenate([weights[c] * (predicted(run, c) - measured[c])[sl] for c in measured])
        return r if run.success and np.all(np.isfinite(r)) else np.full(r.size, 1e3 / math.sqrt(r.size))

    def residual(z: FloatArray) -> FloatArray:
        run = run_at(z)
        count[0] += 1
        r = residual_of(run)
        if not run.success:
            return r
        if progress is not None:
            progress("closed-loop", min(1.0, count[0] / (max_nfev * (int(free.sum()) + 1))),
                     f"simulation {count[0]}, cost {0.5 * float(r @ r):.6g}")
        return r

    z0 = np.ones(int(free.sum())) * np.sign(params.values[free])
    z0[params.values[free] == 0] = 0.0
    lb, ub = params.lower[free] / scale, params.upper[free] / scale
    first = run_at(z0)
    if not first.success:
        raise ModelSpecError(f"the start values cannot be simulated in the loop: {first.message}")
    sol = least_squares(residual, np.clip(z0, lb, ub), jac="2-point", bounds=(lb, ub), x_scale="jac",
                        max_nfev=max_nfev, diff_step=np.full(z0.size, 1e-5), ftol=1e-8, xtol=1e-8)
    theta = theta_of(sol.x)
    fitted = params.with_values(theta, clip=True)
    final = run_at(sol.x)
    r = residual_of(final)
    m = r.size // len(measured)
    jac = np.asarray(sol.jac, dtype=np.float64) / scale[None, :]
    unc = uncertainty_from_jacobian(jac, r, list(params.free_names), confidence=confidence,
                                    groups=np.repeat(np.arange(len(measured)), m),
                                    serial_blocks=[tuple((k * m, (k + 1) * m) for k in range(len(measured)))],
                                    serial_auto=True)
    active = {n: bool(a != 0) for n, a in zip(params.free_names, sol.active_mask, strict=True)}
    estimates, pairs = _flags_and_estimates(model, fitted, unc, active, confidence)
    metrics = tuple(_metrics(record.name, c, record.unit(c), measured[c][sl], predicted(final, c)[sl]) for c in measured)
    rfit = RecordFit(name=record.name, t=record.t, measured=dict(measured),
                     predicted={"x": final.x, "f": final.force}, fitted_channels=tuple(measured), x0=x0,
                     x0_stderr=(math.nan, math.nan), x0_mode="first sample, at rest",
                     simulation_ok=final.success, simulation_message=final.message)
    ok = bool(sol.status > 0) and final.success
    errors = ", ".join(f"{c} {relative_error(measured[c], predicted(final, c), start):.4g} %" for c in measured)
    warns = [f"closed loop: relative errors from sample {start} (the EMPS benchmark's metric): {errors}"]
    if unc.serial:
        warns.append(newey_west_note(unc))
    return FitResult(
        success=ok, message=(f"closed-loop output error converged ({sol.message.rstrip('.')})" if ok
                             else f"closed-loop output error did not converge: {sol.message}"),
        method="closed-loop", model=model, parameters=fitted, estimates=estimates, uncertainty=unc,
        weak_directions=weak_directions_text(unc), correlated_pairs=pairs, metrics=metrics, records=(rfit,),
        cost=float(sol.cost), nfev=count[0], timing={"closed_loop_s": time.perf_counter() - t0},
        stages={"closed-loop": fitted.as_dict()}, warnings=tuple(warns),
        options=FitOptions(method="output-error", confidence=confidence),
    )


def identify_in_loop(record: Record, model: TermModel, params: ParameterSet, reference: ArrayLike, loop: PositionLoop,
                     options: FitOptions, *, progress: ProgressFn | None = None) -> FitResult:
    """What ``identify --closed-loop`` and the Identify page's loop fit run: the equation-error estimate of
    ``record`` as the start (of a force held over each sample, as the loop holds it; unless ``options.method`` is
    output error: then ``params`` as given, fixed values and bounds kept either way), then :func:`fit_closed_loop`
    driven by ``reference``. When the two disagree beyond their intervals the fit's warnings say on which
    parameters, with both values."""
    import dataclasses

    from .estimate import identify
    from .estimate.minima import differing

    start, ee = params, None
    if options.method != "output-error":
        if progress is not None:
            progress("equation-error", 0.0, "the equation-error estimate, the start inside the loop")
        # the loop holds its output over each sample: the equation error of a held force
        ee = identify([record], model, params=params,
                      options=dataclasses.replace(options, method="equation-error", input_hold="zoh"))
        start = params.with_values(ee.parameters.values, clip=True)
    fit = fit_closed_loop(model, start, record, reference, loop, confidence=options.confidence, progress=progress)
    apart = differing(fit, ee) if ee is not None and ee.success and fit.success else []
    if not apart:
        return fit
    assert ee is not None
    pct = round(100 * options.confidence)

    def said(e: ParameterEstimate) -> str:
        return f"{e.value:.5g} [{e.ci[0]:.5g}, {e.ci[1]:.5g}]"

    both = "; ".join(f"{n} {said(fit.estimate(n))} in the loop, {said(ee.estimate(n))} by equation error" for n in apart)
    note = (f"the loop fit and its equation-error start disagree beyond their {pct} % intervals: {both}. The two"
            " criteria weigh the record differently (the loop the simulated motion's force, equation error the"
            " measured motion's), so a difference larger than both intervals is a model error the intervals do not"
            " include: read the parameters to within that difference")
    return dataclasses.replace(fit, warnings=(*fit.warnings, note))
