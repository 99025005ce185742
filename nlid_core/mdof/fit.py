r"""Output-error identification of a multi-DOF model on several records and channels, with exact sensitivities.

Unknowns: the free model parameters θ_f and, per dynamic record, the initial positions and velocities of the DOFs
the rig did not hold. Residuals: for a dynamic record r and measured output c,
``(ŷ_rc(t_k) − y_rc(t_k)) / σ_rc`` with ŷ simulated from the record's inputs (:mod:`.integrate`); for a static record,
``(q*_c(u_k) − y_c(k)) / σ_c`` with q* the static equilibrium under the k-th load case (:mod:`.kernel`). Their
Jacobian is exact: the simulator's forward sensitivities, and for equilibria the implicit-function derivative
``∂q*/∂θ = −(∂Q/∂q)⁻¹ ∂Q/∂θ`` (solved, not inverted).

Weights: σ_rc is the output's noise from the model file when given, else 0.1 % of the channel's range for a first
pass; after it, σ_rc is set to the residual's rms of each record and channel and the fit is refined (one
reweighting pass): channels measured with different noise count by their own noise.

The minimiser (:mod:`.solver`) is Levenberg–Marquardt on the normal equations (Marquardt's diagonal scaling,
Nielsen's damping update, bounds by projection), accumulated record by record, so memory does not grow with
records × samples × unknowns. Parameters are scaled by their start magnitudes. The covariance of θ_f is
``s²·S⁻¹`` with S the Schur complement of the initial-state block in JᵀJ (the initial states are nuisance
unknowns) and s² the reduced χ² (≈ 1 after reweighting), computed by an eigen-decomposition with a rank
threshold; 95 % intervals are ± the Student-t quantile times the standard error, plus the shift the integration
error causes (:mod:`nlid_core.accuracy`: the substeps are doubled until it is below a quarter of a standard
error). The condition number is that of the column-equilibrated S (its square root, i.e. the Jacobian's), so it
measures how collinear the parameters' effects are, not their units; the weakest direction is S's eigenvector
of the smallest eigenvalue, stated in words.

References: D. W. Marquardt, J. SIAM 11 (1963) 431–441; H. B. Nielsen, "Damping parameter in Marquardt's
method", IMM-REP-1999-05, DTU.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from ..accuracy import (
    MAX_REFINEMENTS, RICHARDSON, SHIFT_TOL, IntegrationCheck, integration_shift, refinement_factor
)
from ..errors import DataValidationError, ModelSpecError
from ..estimate._threads import single_blas_thread
from ..params import ParameterSet
from ..progress import ProgressFn
from .data import MdofRecord
from .normal import RANK_TOL, Block, State, combinations, normal_equations, schur
from .normal import undetermined as undetermined_parameters
from .results import ChannelFit, MdofFit, failed_fit, summarise, weakest_direction_text
from .solver import Problem, levenberg_marquardt
from .spec import MdofModel

__all__ = ["ChannelFit", "MdofFit", "fit_records", "noise_level", "weakest_direction_text"]

FloatArray = NDArray[np.float64]

#: Reduced χ² (first-pass weights) at the end of a direct fit above which it is tried again over growing horizons.
FAR_END = 3.0
#: A dynamic channel whose residual rms is above this many times its noise floor (the model file's noise, else the
#: spectral floor of the channel: :func:`noise_level`) is not reproduced by the model: the fit says so.
MISFIT_RATIO = 5.0
#: Shortest leading part of a record fitted on its own (samples).
MIN_HORIZON = 400
#: Records fitted side by side at most (threads; the compiled simulator releases the GIL).
MAX_THREADS = 4


# ---------------------------------------------------------------------------------------------------- problem
def _initial_guess(model: MdofModel, rec: MdofRecord, held: NDArray[np.bool_]) -> FloatArray:
    """Initial state from the record's first samples (positions measured, velocities by a line fit); 0 elsewhere."""
    n = model.n_dof
    y0 = np.zeros(2 * n)
    k = min(rec.n, 5)
    tt = rec.t[:k] - rec.t[0]
    for j, dof in enumerate(rec.output_names):
        i = model.dof_names.index(dof)
        col = rec.y[:, j]
        if held[i]:
            y0[i] = float(np.mean(col))
        else:
            slope, icpt = np.polyfit(tt, col[:k], 1) if k >= 2 else (0.0, col[0])
            y0[i] = float(icpt)
            y0[n + i] = float(slope)
    return y0


def _simulate_block(model: MdofModel, rec: MdofRecord, theta: FloatArray, y0: FloatArray, held: NDArray[np.bool_],
                    sigma: FloatArray, want: bool, nsub: int | None = None) -> tuple[Block | None, str]:
    from .integrate import simulate

    out_idx = [model.dof_names.index(d) for d in rec.output_names]
    u = _inputs(model, rec)
    res = simulate(model.layout, rec.t, u, theta, y0, held=held, sens=want, init_sens=want, outputs=out_idx,
                   nsub=nsub)
    if not res.success:
        return None, f"record `{rec.name}`: {res.message}"
    pred = res.q[:, out_idx]
    r = ((pred - rec.y) / sigma).ravel()
    if not want:
        return Block(r=r, jp=np.zeros((r.size, 0)), ji=np.zeros((r.size, 0)), nsub=res.nsub), ""
    if res.sens is None:
        return None, f"record `{rec.name}`: the simulator returned no sensitivities"
    s = np.asarray(res.sens, dtype=np.float64) / sigma[None, :, None]
    npar = theta.size
    return Block(r=r, jp=s[:, :, :npar].reshape(r.size, npar), ji=s[:, :, npar:].reshape(r.size, -1),
                  nsub=res.nsub), ""


def _static_block(model: MdofModel, rec: MdofRecord, theta: FloatArray, sigma: FloatArray, want: bool
                  ) -> tuple[Block | None, str]:
    from .equilibrium import static_equilibrium, static_sensitivity

    out_idx = [model.dof_names.index(d) for d in rec.output_names]
    u = _inputs(model, rec)
    held = model.held_mask(rec.held)
    rs, js = [], []
    q_prev = None
    for k in range(rec.n):
        q0 = q_prev if q_prev is not None else _held_start(model, rec, held)
        q, ok, message = static_equilibrium(model.layout, u[k], theta, q0=q0, held=held)
        if not ok:
            return None, f"record `{rec.name}`, load case {k + 1}: no static equilibrium ({message})"
        q_prev = q
        rs.append((q[out_idx] - rec.y[k]) / sigma)
        if want:
            js.append(static_sensitivity(model.layout, q, u[k], theta, held=held)[out_idx] / sigma[:, None])
    r = np.concatenate(rs)
    jp = np.concatenate(js) if want else np.zeros((r.size, 0))
    return Block(r=r, jp=jp, ji=np.zeros((r.size, 0))), ""


def _held_start(model: MdofModel, rec: MdofRecord, held: NDArray[np.bool_]) -> FloatArray:
    q = np.zeros(model.n_dof)
    for j, dof in enumerate(rec.output_names):
        i = model.dof_names.index(dof)
        if held[i]:
            q[i] = float(np.mean(rec.y[:, j]))
    return q


def _inputs(model: MdofModel, rec: MdofRecord) -> FloatArray:
    return np.ascontiguousarray(np.column_stack([rec.input(n) for n in model.used_inputs])
                                if model.used_inputs else np.zeros((rec.n, 0)))


def noise_level(y: FloatArray) -> float:
    """White-noise standard deviation of a sampled signal from its spectrum's top 30 % (0.7 to 1 times Nyquist).

    For white noise of variance σ² the one-sided density is 2σ²/fs, flat; a response that rolls off above its
    excitation band leaves that floor alone at the top of the spectrum. The median over those bins (robust to a
    stray line) is converted with the χ² median-to-mean factor of the Welch estimate's degrees of freedom.
    """
    from scipy import signal as sp_signal

    y = np.asarray(y, dtype=np.float64)
    if y.size < 256:
        return math.nan
    nper = min(1024, y.size // 4)
    f, pxx = sp_signal.welch(y - y.mean(), fs=1.0, nperseg=nper)
    top = pxx[f >= 0.35]
    if top.size == 0:
        return math.nan
    n_avg = max(1, 2 * (y.size // nper) - 1)
    dof = 2 * n_avg
    median_to_mean = (1 - 2 / (9 * dof)) ** 3  # Wilson–Hilferty median of χ²_k / k
    return float(math.sqrt(max(float(np.median(top)) / median_to_mean / 2.0, 0.0)))


def _first_sigma(model: MdofModel, rec: MdofRecord) -> FloatArray:
    """First-pass noise per output: the model file's, else the spectral noise floor (dynamic records), else 0.1 % of
    the channel's range."""
    noise = {o.dof: o.noise for o in model.outputs}
    out = np.empty(len(rec.output_names))
    for j, dof in enumerate(rec.output_names):
        given = noise.get(dof)
        span = float(np.ptp(rec.y[:, j]))
        floor = max(1e-6 * span, 1e-12)
        guess = math.nan if rec.static else noise_level(rec.y[:, j])
        if not (math.isfinite(guess) and guess > floor):
            guess = max(1e-3 * span, floor)
        out[j] = given if given else guess
    return out


def _scales(params: ParameterSet, names: Sequence[str]) -> FloatArray:
    """Scale of each free parameter: its start magnitude, else a unit-based guess."""
    vals = {p.name: p for p in params}
    jdiag = [abs(vals[n].value) for n in ("Jxx", "Jyy", "Jzz") if n in vals]
    out = []
    for n in names:
        v = abs(vals[n].value)
        if v > 0:
            out.append(v)
        elif vals[n].unit == "m":
            out.append(0.01)
        elif vals[n].unit == "kg·m^2":
            out.append(0.05 * max(jdiag) if jdiag and max(jdiag) > 0 else 0.1)
        else:
            out.append(1.0)
    return np.array(out)


def _truncated(rec: MdofRecord, n: int) -> MdofRecord:
    return replace(rec, t=rec.t[:n], u=rec.u[:n], y=rec.y[:n]) if not rec.static and n < rec.n else rec


def fit_records(model: MdofModel, records: Sequence[MdofRecord], params: ParameterSet, free: Sequence[str], *,
                max_iterations: int = 60, reweight: bool = True, sigmas: Mapping[tuple[str, str], float] | None = None,
                screen: bool = True, screen_tol: float = 1e-10, combine: bool = False,
                horizons: Sequence[float] = (0.125, 0.25, 0.5), progress: ProgressFn | None = None,
                stage: str = "fit") -> MdofFit:
    """Fit the ``free`` parameters (and every dynamic record's initial state) to the records.

    When the direct fit ends far from the noise (its reduced χ² with the first-pass weights above ``FAR_END``: over a
    long record a few per cent in a natural frequency puts the simulated response out of phase, and output error
    then has local minima), the fit is made again on the leading ``horizons`` fractions of every dynamic record in
    turn (at least ``MIN_HORIZON`` samples), each starting from the last, then on the whole records (continuation in
    the horizon); the better of the two is kept and refined with the reweighting.

    Parameters
    ----------
    model : MdofModel
    records : sequence of MdofRecord
        Dynamic and static records; each measures some of the model's DOFs.
    params : ParameterSet
        Start values of every parameter (the fixed ones stay there).
    free : sequence of str
        Names of the parameters to estimate.
    max_iterations : int
    reweight : bool
        Refine once with each record-and-channel weighted by its residual rms.
    sigmas : mapping or None
        Noise standard deviation per (record, output) instead of the first-pass guess.
    screen : bool
        First hold the parameters these records cannot determine at the start (a direction of the
        column-equilibrated information matrix below ``screen_tol`` of the largest, i.e. a Jacobian condition
        number above ``screen_tol**-0.5``); the result lists them in ``undetermined``.
    screen_tol : float
    horizons : sequence of float
        Leading fractions of the dynamic records fitted first when the start is far off (empty: never).
    combine : bool
        Instead of holding the parameters of a blind direction, keep them free but step only in the directions the
        records see (an orthonormal basis in relative parameter changes): parameters seen only in combination
        move together (listed in ``combined``). Used by the stages before the last.
    progress : callable or None
        ``progress(stage, fraction, message)``.
    stage : str
        Label of the progress reports.

    Raises
    ------
    ModelSpecError
        Unknown free parameter names, or no records.
    DataValidationError
        A record whose inputs or outputs do not match the model.
    """
    if not records:
        raise ModelSpecError("no records to fit")
    t_total = time.perf_counter()
    longest = max((r.n for r in records if not r.static), default=0)
    fractions = [h for h in horizons if 0 < h < 1 and h * longest >= MIN_HORIZON]
    if not fractions or not free:
        return _with_misfit(model, records, _fit_once(
            model, records, params, free, max_iterations=max_iterations, reweight=reweight, sigmas=sigmas,
            screen=screen, screen_tol=screen_tol, combine=combine, inits=None, progress=progress, stage=stage))
    sig0 = dict(sigmas or {})
    if not sig0:
        for r in records:
            sig0.update({(r.name, d): float(v) for d, v in zip(r.output_names, _first_sigma(model, r), strict=True)})
    opts = {"max_iterations": max_iterations, "reweight": False, "sigmas": sig0, "screen_tol": screen_tol,
            "combine": combine, "progress": progress}
    best = _fit_once(model, records, params, free, screen=screen, inits=None, stage=stage, verify=False,
                     **opts)  # type: ignore[arg-type]
    if not best.success or best.s2 > FAR_END:
        current, inits = params, None
        for h in fractions:
            part = [_truncated(r, max(int(h * r.n), MIN_HORIZON)) for r in records]
            short = _fit_once(model, part, current, free, screen=False, inits=inits, verify=False,
                              stage=f"{stage} (first {100 * h:.3g} % of each record)", **opts)  # type: ignore[arg-type]
            if short.success:
                current, inits = short.parameters, dict(short.initial_states)
        cont = _fit_once(model, records, current, free, screen=screen, inits=inits, stage=stage, verify=False,
                         **opts)  # type: ignore[arg-type]
        if cont.success and (not best.success or cont.cost < best.cost):
            best = replace(cont, message=cont.message + "; reached by fitting growing leading parts of the records first"
                           " (the direct fit stopped in a worse minimum)")
    if not best.success:
        return best
    final = _fit_once(model, records, best.parameters, free, max_iterations=max_iterations, reweight=reweight,
                      sigmas=sigmas, screen=screen, screen_tol=screen_tol, combine=combine,
                      inits=dict(best.initial_states), progress=progress, stage=stage)
    if "growing leading parts" in best.message:
        final = replace(final, message=final.message + "; reached by fitting growing leading parts of the records first")
    total = final.iterations + best.iterations
    message = final.message + (f" (a last pass after a first one of {best.iterations}: {total} in all)"
                               if best.iterations else "")
    return _with_misfit(model, records, replace(final, iterations=total, nfev=final.nfev + best.nfev, message=message,
                                                elapsed_s=time.perf_counter() - t_total))


def _with_misfit(model: MdofModel, records: Sequence[MdofRecord], fit: MdofFit) -> MdofFit:
    """The fit with a line per dynamic channel whose residual is above ``MISFIT_RATIO`` times its noise floor."""
    if not fit.success:
        return fit
    floors = {r.name: dict(zip(r.output_names, _first_sigma(model, r), strict=True)) for r in records if not r.static}
    lines = []
    for c in fit.channels:
        floor = floors.get(c.record, {}).get(c.output)
        if floor and math.isfinite(c.rmse) and c.rmse > MISFIT_RATIO * floor:
            lines.append(f"record `{c.record}`, {c.output}: residual rms {c.rmse:.3g}, {c.rmse / floor:.0f}× its noise"
                         f" floor {floor:.3g}")
    if not lines:
        return fit
    return replace(fit, misfit=tuple(lines), message=fit.message + "; the model does not reproduce "
                   + "; ".join(lines) + " (a local minimum, a missing term or an input the model does not see): the"
                   " intervals, computed as if the residual were noise, are not to be trusted")


def _fit_once(model: MdofModel, records: Sequence[MdofRecord], params: ParameterSet, free: Sequence[str], *,
              max_iterations: int, reweight: bool, sigmas: Mapping[tuple[str, str], float] | None, screen: bool,
              screen_tol: float, combine: bool, inits: Mapping[str, FloatArray] | None, progress: ProgressFn | None,
              stage: str, verify: bool = True) -> MdofFit:
    """One fit from ``params`` (see :func:`fit_records`); ``inits`` are starting initial states by record name;
    ``verify`` ends it with the integration-error check (a pass that another one refines skips it)."""
    t_start = time.perf_counter()
    p, starts = _problem(model, records, params, free, sigmas, inits)
    free = list(free)
    lm = {"max_iterations": max_iterations, "progress": progress, "stage": stage}
    workers = min(len(records), os.cpu_count() or 1, MAX_THREADS)
    p.pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        with single_blas_thread():
            undetermined: list[str] = []
            together: list[str] = []
            x0 = np.array([params[f].value for f in free]) / p.scale
            blocks0: list[Block] | None = None
            if screen and free:
                blocks0, msg0 = p.evaluate(x0, starts, True)
                if blocks0 is None:
                    return failed_fit(model, params, free, records, f"the start does not simulate: {msg0}", t_start,
                                      p.nfev)
                s0 = schur(normal_equations(blocks0, p.free_idx, p.scale, p.init_sizes)[0], p.free_idx.size)
                if combine:
                    p.basis, undetermined, together = combinations(s0, free, screen_tol)
                else:
                    undetermined = undetermined_parameters(s0, free, screen_tol)
                if undetermined:
                    keep = [k for k, f in enumerate(free) if f not in undetermined]
                    free, x0 = [free[k] for k in keep], x0[keep]
                    p.keep(keep)
            state, message, iters = levenberg_marquardt(p, x0, starts, "first pass", blocks0, **lm)  # type: ignore[arg-type]
            if state is None:
                return failed_fit(model, params, free, records, message, t_start, p.nfev)
            if reweight:
                new_sig = [_rms_sigma(b, s, r) for b, s, r in zip(state.blocks, p.sig, records, strict=True)]
                # the same simulations under the new weights: rescale instead of simulating again
                rescaled = [_reweighted(b, s_old / s_new, r.n) for b, s_old, s_new, r
                            in zip(state.blocks, p.sig, new_sig, records, strict=True)]
                p.sig = new_sig
                state2, message2, iters2 = levenberg_marquardt(p, state.x, state.inits, "reweighted", rescaled,
                                                               **lm)  # type: ignore[arg-type]
                if state2 is not None:
                    state, message, iters = state2, message2, iters + iters2
            check = None
            if verify:
                state, message, iters, check = _refine_integration(p, state, message, iters, free, lm)
    finally:
        if p.pool is not None:
            p.pool.shutdown()
    message += _screen_text(undetermined, together) + _integration_text(check, state, records)
    fit = summarise(model, params, free, p.free_idx, p.scale, records, state, p.sig, p.init_sizes, message, iters,
                    p.nfev, t_start, bias=None if check is None else np.abs(check.shift), undetermined=undetermined)
    if p.basis is not None and p.basis.shape[1]:
        # the problem this fit solved: the directions its records see (its own condition number)
        seen = schur(p.normal(state.blocks)[0], p.basis.shape[1])
        d = np.sqrt(np.maximum(np.diag(seen), 1e-300))
        w = np.linalg.eigvalsh(seen / np.outer(d, d))
        fit = replace(fit, condition=math.sqrt(float(w[-1] / w[0])) if w[0] > 0 else math.inf,
                      message=fit.message + f"; condition number {fit.condition:.3g} over every parameter, and as given"
                      f" over the {p.basis.shape[1]} directions estimated")
    return replace(fit, undetermined=tuple(undetermined), combined=tuple(together))


def _problem(model: MdofModel, records: Sequence[MdofRecord], params: ParameterSet, free: Sequence[str],
             sigmas: Mapping[tuple[str, str], float] | None, inits: Mapping[str, FloatArray] | None
             ) -> tuple[Problem, list[FloatArray]]:
    """The problem of one fit, checked against the model, and the records' starting initial states."""
    names = model.param_names
    unknown = [f for f in free if f not in names]
    if unknown:
        raise ModelSpecError(f"free parameters {unknown} are not parameters of the model")
    for rec in records:
        if set(rec.output_names) - set(model.dof_names):
            raise DataValidationError(f"record `{rec.name}` measures {rec.output_names}, not DOFs of the model")
    scale = _scales(params, list(free))
    helds = [model.held_mask(r.held) for r in records]
    p = Problem(model=model, records=records, helds=helds,
                init_sizes=[0 if r.static else 2 * int((~h).sum()) for r, h in zip(records, helds, strict=True)],
                sig=[np.array([sigmas[(r.name, d)] for d in r.output_names]) if sigmas else _first_sigma(model, r)
                     for r in records],
                theta0=np.array([params[n].value for n in names], dtype=np.float64),
                free_idx=np.array([names.index(f) for f in free], dtype=np.int64), scale=scale,
                lower=np.array([params[f].lower for f in free]) / scale,
                upper=np.array([params[f].upper for f in free]) / scale,
                simulate=_simulate_block, static=_static_block)
    starts = [np.zeros(0) if r.static else (np.array(inits[r.name], dtype=np.float64) if inits and r.name in inits
                                            else _initial_guess(model, r, h)) for r, h in zip(records, helds, strict=True)]
    return p, starts


def _refine_integration(p: Problem, state: State, message: str, iters: int, free: list[str],
                        lm: Mapping[str, object]) -> tuple[State, str, int, IntegrationCheck | None]:
    """Step-doubling check at the estimate; while the integration error moves an estimate by more than
    ``SHIFT_TOL`` of its standard error, refit with finer substeps (at most ``MAX_REFINEMENTS`` times)."""
    check = None
    for attempt in range(MAX_REFINEMENTS + 1):
        check = _integration_check(p, state, free)
        if check is None or check.ratio <= SHIFT_TOL or attempt == MAX_REFINEMENTS:
            break
        factor = refinement_factor(check.ratio)
        for k, b in enumerate(state.blocks):
            if not p.records[k].static and b.nsub > 0:
                p.nsubs[k] = factor * b.nsub
        state3, message3, iters3 = levenberg_marquardt(p, state.x, state.inits, "finer integration",
                                                       **lm)  # type: ignore[arg-type]
        if state3 is None:
            break
        state, message, iters = state3, message3, iters + iters3
    return state, message, iters, check


def _screen_text(undetermined: Sequence[str], together: Sequence[str]) -> str:
    text = ""
    if undetermined:
        text += f"; held at their start values, because these records do not determine them: {', '.join(undetermined)}"
    if together:
        text += (f"; these records see {', '.join(together)} only in combination: they were moved together, by the"
                 " same relative amounts where the data cannot tell them apart")
    return text


def _integration_text(check: IntegrationCheck | None, state: State, records: Sequence[MdofRecord]) -> str:
    steps = sorted({b.nsub for b, r in zip(state.blocks, records, strict=True) if not r.static})
    if check is None or not steps:
        return ""
    how = "/".join(map(str, (s for s in steps if s))) + " RK4 substep(s) per sample" if any(steps) else ""
    if 0 in steps:
        how += (" and " if how else "") + "SDIRK4 with error control (a stiff model)"
    return f"; integration: {how}" + (
        f", whose error (step doubling) moves {check.worst} by {check.ratio:.2g} of its standard error at most (added"
        " to the intervals)" if any(steps) else "")


def _integration_check(p: Problem, state: State, free: list[str]) -> IntegrationCheck | None:
    """Step-doubling check of the estimate (:mod:`nlid_core.accuracy`); None without dynamic records or when the
    finer run fails."""
    if not any(not r.static for r in p.records) or not free:
        return None
    theta = p.theta_of(state.x)
    errs = []
    for k, (rec, b) in enumerate(zip(p.records, state.blocks, strict=True)):
        if rec.static or b.nsub == 0:  # a static record, or SDIRK4 under its own error control (rtol 1e-8)
            errs.append(Block(r=np.zeros_like(b.r), jp=b.jp, ji=b.ji))
            continue
        fine, _ = _simulate_block(p.model, rec, theta, state.inits[k], p.helds[k], p.sig[k], False, 2 * b.nsub)
        if fine is None:
            return None
        errs.append(Block(r=RICHARDSON * (b.r - fine.r), jp=b.jp, ji=b.ji))
    a, g_err = normal_equations(errs, p.free_idx, p.scale, p.init_sizes)
    n_res = max(sum(b.r.size for b in state.blocks) - a.shape[0], 1)
    return integration_shift(a, g_err, 2 * state.cost / n_res, free, RANK_TOL)


def _reweighted(block: Block, factor: FloatArray, n: int) -> Block:
    """A block's residuals and Jacobian with each output's weight multiplied by ``factor``."""
    f = np.tile(factor, n)
    return Block(r=block.r * f, jp=block.jp * f[:, None], ji=block.ji * f[:, None], nsub=block.nsub)


def _rms_sigma(block: Block, sigma: FloatArray, rec: MdofRecord) -> FloatArray:
    r = block.r.reshape(rec.n, -1) * sigma[None, :]
    rms = np.sqrt(np.mean(r * r, axis=0))
    floor = 1e-6 * np.maximum(np.ptp(rec.y, axis=0), 1e-12)
    out: FloatArray = np.maximum(rms, floor)
    return out


