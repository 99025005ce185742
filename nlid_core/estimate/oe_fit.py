"""Output error: initial states and the trust-region fit from given start values."""

from __future__ import annotations

import dataclasses
import math
import time
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult, least_squares

from ..errors import DataValidationError, ModelSpecError
from ..identifiability import (Uncertainty, column_norms, newey_west_note, uncertainty_from_jacobian,
                               weak_directions_text)
from ..metrics import nrmse, rms
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ._threads import with_single_blas_thread
from .assemble import _failed, _flags_and_estimates, _metrics, _prior_rows
from .oe_problem import MAX_REFINEMENTS, SHIFT_TOL, GaussNewtonEnd, _gauss_newton, _OEProblem
from .options import FitOptions, FloatArray, ProgressFn
from .prepare import _check_records, _check_scales, _exponent, _params_for, _with_derivatives
from .results import FitResult, RecordFit

__all__ = ["PoorStart", "starts_at_rest", "output_error"]


_AT_REST: dict[int, tuple[weakref.ref[Record], bool]] = {}


def starts_at_rest(rec: Record) -> bool:
    """True when the record is statistically consistent with starting at rest (remembered per record:
    records are immutable).

    A cubic polynomial is fitted to the first ``k`` displacement samples (a
    tenth of a period of the signal's bandwidth, 12 to 500 samples); the record starts at rest when both its value and
    its slope at the first sample are within three standard errors of zero
    (plus 1e-6 of the displacement range, for noise-free data).
    """
    known = _AT_REST.get(id(rec))
    if known is not None and known[0]() is rec:
        return known[1]
    answer = _starts_at_rest(rec)
    if len(_AT_REST) > 256:
        _AT_REST.clear()
    _AT_REST[id(rec)] = (weakref.ref(rec), answer)
    return answer


def _starts_at_rest(rec: Record) -> bool:
    from ..signals import signal_bandwidth_hz

    f_bw = signal_bandwidth_hz(rec.x, rec.dt)
    k = int(min(max(0.1 * rec.fs / max(f_bw, 1e-12), 12), 500, rec.n))
    tau = (rec.t[:k] - rec.t[0]) / (rec.t[k - 1] - rec.t[0])
    A = np.vander(tau, 4, increasing=True)
    peak = float(np.max(np.abs(rec.x)))
    if peak == 0:
        return True
    xs = np.ldexp(rec.x[:k], -_exponent(peak))  # exact rescaling: the squares below never underflow
    coef, *_ = np.linalg.lstsq(A, xs, rcond=None)
    resid = xs - A @ coef
    s2 = float(resid @ resid) / max(k - 4, 1)
    cov = s2 * np.linalg.inv(A.T @ A)
    tiny = 1e-6 * float(np.max(np.abs(np.ldexp(rec.x, -_exponent(peak)))))
    return bool(abs(coef[0]) <= 3 * math.sqrt(cov[0, 0]) + tiny and abs(coef[1]) <= 3 * math.sqrt(cov[1, 1]) + tiny)


def _initial_states(
    recs: Sequence[Record], opts: FitOptions, x0: Sequence[tuple[float, float]] | None
) -> tuple[list[tuple[float, float]], list[bool], list[str]]:
    """Start values, estimate flags and a description of each record's initial state."""
    if x0 is not None and len(x0) != len(recs):
        raise ModelSpecError(f"`x0` has {len(x0)} entries for {len(recs)} records")
    states, est, modes = [], [], []
    for k, r in enumerate(recs):
        if x0 is not None:
            data = (float(x0[k][0]), float(x0[k][1]))
        else:
            v = r.v if r.v is not None else _with_derivatives(r, opts.differentiator).v
            data = (float(r.x[0]), float(v[0]))  # type: ignore[index]
        mode = opts.initial_state
        if mode == "auto":
            mode = "rest" if starts_at_rest(r) else "estimate"
            label = "at rest (detected)" if mode == "rest" else "estimated"
        else:
            label = {"estimate": "estimated", "rest": "at rest", "data": "first sample"}[mode]
        states.append((0.0, 0.0) if mode == "rest" else data)
        est.append(mode == "estimate")
        modes.append(label)
    return states, est, modes


class PoorStart(Exception):
    """Raised by :func:`output_error` asked for a start that simulates well, when the start does not:
    ``nrmse`` is the worst displacement NRMSE over the records (None when a record could not be simulated
    within the fit's limits), ``seconds`` the time spent."""

    def __init__(self, nrmse: float | None, seconds: float) -> None:
        super().__init__(f"the start simulates with NRMSE {nrmse}")
        self.nrmse = nrmse
        self.seconds = seconds


@with_single_blas_thread
def output_error(
    records: Sequence[Record] | Record,
    model: TermModel,
    params: ParameterSet,
    options: FitOptions | None = None,
    *,
    x0: Sequence[tuple[float, float]] | None = None,
    progress: ProgressFn | None = None,
    diagnostics: bool = True,
    start_nrmse_limit: float | None = None,
) -> FitResult:
    """Output-error fit from the start values in ``params``.

    Parameters
    ----------
    records : Record or sequence of Record
        Fitted jointly with one parameter set.
    model : TermModel
        Must contain ``m0``.
    params : ParameterSet
        Start values, bounds, fixed/free, units.
    options : FitOptions or None
    x0 : sequence of (x0, v0) or None
        Initial states (start values when estimated); default from the data.
    progress : callable or None
        ``progress(stage, fraction, message)``.
    diagnostics : bool
        False returns the parameters only (no uncertainty, metrics or record
        fits, no integration refinement): for a start of another fit.
    start_nrmse_limit : float or None
        Raise :class:`PoorStart` unless the start simulates every record's
        displacement within this NRMSE (the two-stage fit's check of its
        start, made on the fit's own first simulation).

    Returns
    -------
    FitResult
        ``success=False`` with a message when the start diverges or the
        solver fails; never raises for a diverging simulation.
    """
    opts = options or FitOptions(method="output-error")
    recs = _check_records(records)
    model.require_simulable()
    params = _params_for(model, recs, params)
    _check_outputs(recs, opts)
    _check_scales(model, params, recs, simulate=True)
    start = time.perf_counter()
    x0s, est_x0, x0_modes = _initial_states(recs, opts, x0)
    if not params.free_mask.any() and not any(est_x0):
        raise ModelSpecError("every parameter is fixed and the initial state too: nothing to estimate")
    prob = _OEProblem(recs, model, params, x0s, est_x0, opts, progress)
    prob.substeps = prob.choose_substeps(params.values)
    scaling = _first_scaling(prob, recs, params, x0s)
    z0 = prob.pack(params.values, x0s)
    sims = prob.simulate_all(z0)
    if start_nrmse_limit is not None:
        simulated = len(sims) == len(recs) and all(s.success for s in sims)
        worst = max(nrmse(r.x, s.x) for r, s in zip(recs, sims, strict=True)) if simulated else math.inf
        if not worst <= start_nrmse_limit:
            raise PoorStart(worst if math.isfinite(worst) else None, time.perf_counter() - start)
    if len(sims) < len(recs) or not all(s.success for s in sims):
        bad = sims[-1]
        return _failed(model, params, recs, opts, f"the start values cannot be simulated: {bad.message}", start)
    z0 = _floor_scaling(prob, params, x0s, z0, scaling)
    _set_prior(prob, opts, params, scaling[0], z0)
    theta_free0 = scaling[0]
    lb = np.concatenate([(params.lower[params.free_mask] - theta_free0) / prob.s_theta, np.full(prob.n_x0, -np.inf)])
    ub = np.concatenate([(params.upper[params.free_mask] - theta_free0) / prob.s_theta, np.full(prob.n_x0, np.inf)])
    solved = _solve(prob, np.clip(z0, lb, ub), lb, ub, opts, diagnostics)
    if isinstance(solved, str):
        return _failed(model, params, recs, opts, solved, start)
    sol, warns = solved
    z_hat = sol.x
    theta_hat, x0_hat = prob.unpack(z_hat)
    r_hat = prob.residual(z_hat)
    if not np.all(np.isfinite(r_hat)):
        return _failed(model, params, recs, opts, "output error ended at parameters that do not simulate", start)
    if not diagnostics:  # a start for another fit: parameters only
        return dataclasses.replace(
            _failed(model, params.with_values(theta_hat, clip=True), recs, opts, "", start),
            success=bool(sol.status > 0), message=str(sol.message), cost=float(sol.cost), nfev=prob.nfev,
        )
    unc = _uncertainty(prob, z_hat, r_hat, opts, warns)
    fitted = params.with_values(theta_hat, clip=True)
    active = {n: bool(a != 0) for n, a in zip(params.free_names, sol.active_mask[: prob.pf], strict=True)}
    estimates, pairs = _flags_and_estimates(model, fitted, unc, active, opts.confidence)
    elapsed = time.perf_counter() - start
    rfits, metrics = _record_fits(prob, recs, opts, z_hat, x0_hat, x0_modes, unc)
    warns += [f"{r.name}: {w}" for r in recs for w in r.warnings]
    ok = bool(sol.status > 0)
    msg = f"output error converged ({sol.message.rstrip('.')})" if ok else f"output error did not converge: {sol.message}"
    return FitResult(
        success=ok,
        message=msg,
        method="output-error",
        model=model,
        parameters=fitted,
        estimates=estimates,
        uncertainty=unc,
        weak_directions=weak_directions_text(unc),
        correlated_pairs=pairs,
        metrics=tuple(metrics),
        records=tuple(rfits),
        cost=float(sol.cost),
        nfev=prob.nfev,
        timing={"output_error_s": elapsed},
        stages={"output-error": fitted.as_dict()},
        warnings=tuple(warns),
        options=opts,
    )


def _check_outputs(recs: Sequence[Record], opts: FitOptions) -> None:
    """Every fitted channel is measured in every record (a derived one is refused)."""
    for r in recs:
        for c in opts.outputs:
            if getattr(r, c) is None:
                raise DataValidationError(f"record `{r.name}` has no `{c}` channel to fit; output channels: {opts.outputs}")
            if c in r.derived:
                raise DataValidationError(
                    f"record `{r.name}`: channel `{c}` was derived, not measured; output error fits measured channels"
                    " only (choose outputs among " + ", ".join(r.measured) + ")"
                )


_Scaling = tuple[FloatArray, FloatArray, FloatArray, FloatArray]


def _first_scaling(prob: _OEProblem, recs: Sequence[Record], params: ParameterSet,
                   x0s: Sequence[tuple[float, float]]) -> _Scaling:
    """Scale the unknowns: 10 % of |start| for parameters (their Jacobian column where the start is 0), 10 % of
    the displacement rms (and rms·2π·fs/50 for velocity) for initial states. Returns the free parameters'
    start values, their scales and the initial states' scales and offsets."""
    theta_free0 = params.values[params.free_mask].astype(np.float64)
    s_theta = 0.1 * np.abs(theta_free0)
    xs = max(rms(np.concatenate([r.x for r in recs])), 1e-300)
    s_x0 = np.zeros(prob.n_x0)
    off_x0 = np.zeros(prob.n_x0)
    for k, pos in prob.x0_pos.items():
        s_x0[pos] = 0.1 * xs
        s_x0[pos + 1] = 0.1 * xs * 2 * math.pi * recs[k].fs / 50
        off_x0[pos : pos + 2] = x0s[k]
    prob.set_scaling(np.where(s_theta > 0, s_theta, 1.0), s_x0, theta_free0, off_x0)
    return theta_free0, s_theta, s_x0, off_x0


def _floor_scaling(prob: _OEProblem, params: ParameterSet, x0s: Sequence[tuple[float, float]], z0: FloatArray,
                   scaling: _Scaling) -> FloatArray:
    """Floor each parameter's scale at the change that moves the residual by its current norm, so a parameter
    starting at (or next to) zero can still move; returns the start in the final scaling."""
    theta_free0, s_theta, s_x0, off_x0 = scaling
    jac0 = prob.jacobian(z0)
    cn_phys = column_norms(jac0[:, : prob.pf]) / prob.s_theta
    r0 = prob.residual(z0)
    r0_norm = rms(r0) * math.sqrt(r0.size)
    floor = np.where(cn_phys > 0, r0_norm / np.where(cn_phys > 0, cn_phys, 1.0), 0.0)
    s_new = np.maximum(s_theta, floor)
    s_new = np.where(s_new > 0, s_new, 1.0)
    if not np.array_equal(s_new, prob.s_theta):
        prob.set_scaling(s_new, s_x0, theta_free0, off_x0)  # same point z = 0: its simulation is kept
        z0 = prob.pack(params.values, x0s)
    return z0


def _set_prior(prob: _OEProblem, opts: FitOptions, params: ParameterSet, theta_free0: FloatArray, z0: FloatArray
               ) -> None:
    """The Tikhonov prior's rows, acting on the scaled unknowns (``z0``: the start)."""
    if opts.prior is None or not opts.prior.lam > 0:
        return
    jac0 = prob.jacobian(z0)
    cn = column_norms(jac0[:, : prob.pf])
    jp, _ = _prior_rows(opts.prior, params, cn, theta_free0)
    prob.prior_jp = jp  # rows act on z directly: cn are the scaled columns' norms
    t0 = np.array([float(opts.prior.values.get(n, 0.0)) for n in params.free_names])
    prob.prior_c = jp @ ((t0 - theta_free0) / prob.s_theta)


def _solve(prob: _OEProblem, z0: FloatArray, lb: FloatArray, ub: FloatArray, opts: FitOptions, diagnostics: bool
           ) -> tuple[GaussNewtonEnd | OptimizeResult, list[str]] | str:
    """Gauss–Newton, then the trust region where it does not converge, and the integration refinement; the
    solution and the warnings, or why the solver failed.

    A start on (or within a tenth of a scale of) a bound makes the reflective trust region crawl. The first
    solve therefore lets such parameters go one scale unit past their bound; if the solution uses that room,
    it is solved again from the clipped point with the true bounds. Gauss–Newton goes first (the start is
    usually close, so the problem is nearly linear there): it converges in two or three simulations where it
    behaves, and hands its best point to the trust region otherwise.
    """
    lb_run = np.where(lb > -0.1, np.minimum(lb, -1.0), lb)
    ub_run = np.where(ub < 0.1, np.maximum(ub, 1.0), ub)
    warns: list[str] = []
    sol: GaussNewtonEnd | OptimizeResult | None = None
    for attempt in range(MAX_REFINEMENTS + 2):
        gn = _gauss_newton(prob, z0, lb_run, ub_run, opts.tol, max_steps=min(6, opts.max_nfev))
        if gn.converged:
            sol = gn
        else:
            try:
                sol = least_squares(
                    prob.residual, gn.x, jac=prob.jacobian, bounds=(lb_run, ub_run), method="trf", x_scale=1.0,
                    ftol=opts.tol, xtol=opts.tol, gtol=opts.tol, max_nfev=opts.max_nfev,
                )
            except ValueError as exc:
                return f"output error failed: {exc}"
        if np.any(sol.x < lb) or np.any(sol.x > ub):
            lb_run, ub_run = lb, ub
            z0 = np.clip(sol.x, lb, ub)
            continue
        if attempt <= MAX_REFINEMENTS and diagnostics and prob.refine(sol.x):
            warns.append(f"refined the integration ({max(prob.substeps)} RK4 substeps per sample): its error at the"
                         f" estimate moved an estimate by more than {SHIFT_TOL:g} of its standard error")
            z0 = sol.x
            continue
        break
    assert sol is not None
    return sol, warns


def _uncertainty(prob: _OEProblem, z_hat: FloatArray, r_hat: FloatArray, opts: FitOptions, warns: list[str]
                 ) -> Uncertainty:
    """Intervals at the estimate, widened by what the integration error does to each estimate."""
    jac_z = prob.jacobian(z_hat)
    scales = np.concatenate([prob.s_theta, prob.s_x0])
    jac_phys = jac_z / scales  # ∂r/∂(θ, x0) = ∂r/∂z / s
    n_prior = prob.prior_jp.shape[0]
    groups = np.concatenate([prob.groups, np.zeros(n_prior, dtype=np.int64)])
    unc = uncertainty_from_jacobian(
        jac_phys, r_hat, prob.names(), groups=groups, confidence=opts.confidence, extra_rows=n_prior,
        serial_blocks=prob.serial_blocks() if opts.covariance == "auto" else None, serial_auto=True,
    )
    if unc.serial:
        warns.append(newey_west_note(unc))
    check = prob.check_at(z_hat) if opts.substeps is None else None
    if check is not None:  # what the integration error does to an estimate is added to its interval
        half = unc.ci_halfwidth.copy()
        half[: prob.pf] += np.abs(check.shift) * prob.s_theta
        unc = dataclasses.replace(unc, ci_halfwidth=half)
        if check.ratio > SHIFT_TOL:
            warns.append(f"the integration error (step doubling) still moves {check.worst} by {check.ratio:.2g} of its"
                         " standard error; that shift is added to the intervals")
    return unc


def _record_fits(prob: _OEProblem, recs: Sequence[Record], opts: FitOptions, z_hat: FloatArray,
                 x0_hat: Sequence[tuple[float, float]], x0_modes: Sequence[str], unc: Uncertainty
                 ) -> tuple[list[RecordFit], list[Any]]:
    """Each record's fit and metrics from the final simulations on every sample."""
    rfits, metrics = [], []
    final_sims = prob.simulate_all(z_hat)
    names = prob.names()
    for k, r in enumerate(recs):
        sim = final_sims[k]
        if k in prob.x0_pos:
            se_x = (float(unc.stderr[names.index(f"x0[{k}]")]), float(unc.stderr[names.index(f"v0[{k}]")]))
        else:
            se_x = (0.0, 0.0)
        rfits.append(
            RecordFit(
                name=r.name, t=r.t,
                measured={c: np.asarray(getattr(r, c)) for c in ("f", "x", "v", "a") if getattr(r, c) is not None},
                predicted={"x": sim.x, "v": sim.v, "a": sim.a}, fitted_channels=opts.outputs, x0=x0_hat[k],
                x0_stderr=se_x, x0_mode=x0_modes[k], simulation_ok=sim.success, simulation_message=sim.message,
            )
        )
        for c in opts.outputs:
            metrics.append(_metrics(r.name, c, r.unit(c), r.channel(c), sim.output(c), u=r.f, fs=r.fs))
    return rfits, metrics

