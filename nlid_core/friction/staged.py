r"""Staged LuGre identification (seed 004): steady curve, then pre-sliding, then an optional joint polish.

Fitting all LuGre parameters at once couples σ0 and σ1 badly; practitioners identify in stages,
and so does :func:`identify_friction`:

1. **Steady state** (velocity-staircase records ``t, f, x, v``): plateaus are found and judged
   (:mod:`.plateaus`), and LuGre's steady curve ``sign(v)·g(v) + σ2·v`` gives ``Fc Fs vs sigma2``
   (:mod:`.steady`). Static models are fitted to the same points for comparison.
2. **Pre-sliding** (records ``t, f, x`` below breakaway): ``sigma0 sigma1`` (and ``m0`` when the mass
   is not given) by output error on the displacement with the stage-1 values fixed. The record is
   shifted to start at zero and simulated from rest (bristles unloaded). Start values come from a
   linear spring-damper fit, since at small amplitude ``ż ≈ v`` and LuGre reduces to
   ``m·ẍ + (σ1 + σ2)·ẋ + σ0·x = f``. The stage-2 covariance is conditional on stage 1; the reported
   one adds stage 1's uncertainty through the sensitivity of the stage-2 estimate to the fixed
   values, :math:`C_2 = C_{2|1} + G C_1 G^T`, :math:`G = -(J_2^T J_2)^{-1} J_2^T J_1`.
3. **Joint polish** (optional): every free parameter at once, minimising the sum of both stages'
   normalised residuals — the plateau points (the staircase's sufficient statistics: open-loop
   simulation of a closed-loop staircase from its force is unstable in the Stribeck region) and the
   pre-sliding displacement. The report says what it moved and which uncertainties it reduced.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import DataValidationError
from ..estimate import ProgressFn
from ..models import TermModel
from ..params import FloatArray, ParameterSet
from ..record import Record
from . import joint
from .joint import JointData
from .plateaus import Plateau, PlateauDetection, find_plateaus
from .results import (LUGRE_MODEL, PARAMS, STAGE1, STAGE2, FrictionOptions, FrictionResult, PreslidingFit, Stage,
                      SteadyReplay)
from .stage_tools import (
    _curve_jacobian, _failed, _joint_cost, _linear_start, _presliding_fits, _scan_start, _verdict, curve_weights,
    shifted
)
from .steady import CURVES, CurveFit, curve_force, fit_curve
from .uncertainty import condition_number, estimates, inverse_information, log_det, noise_covariance, noise_level

__all__ = ["FrictionOptions", "Stage", "PreslidingFit", "FrictionResult", "SteadyReplay", "identify_friction",
           "replay_steady", "parameter_set", "shifted", "curve_weights", "LUGRE_MODEL", "STAGE1", "STAGE2", "PARAMS"]

# ---------------------------------------------------------------------------------------------- stage 2


# ---------------------------------------------------------------------------------------------- pipeline


def identify_friction(
    steady: Sequence[Record] | Record,
    presliding: Sequence[Record] | Record = (),
    options: FrictionOptions | None = None,
    *,
    progress: ProgressFn | None = None,
) -> FrictionResult:
    """Identify LuGre friction in stages from velocity-staircase and pre-sliding records.

    Parameters
    ----------
    steady : Record or sequence of Record
        Velocity-staircase records with ``t, f, x, v`` (f the drive force, N; v measured, m/s).
    presliding : Record or sequence of Record
        Records ``t, f, x`` below breakaway (force chirp, sine or slow ramp), starting at rest.
    options : FrictionOptions or None
    progress : callable or None
        ``progress(stage, fraction, message)``, stage one of "steady", "presliding", "polish".

    Returns
    -------
    FrictionResult
        ``success=False`` with a message when a stage fails (the stages that ran are kept).

    Raises
    ------
    DataValidationError
        A record lacks a channel the stage needs.
    ModelSpecError
        Bad options.
    """
    opts = options or FrictionOptions()
    steady_recs = (steady,) if isinstance(steady, Record) else tuple(steady)
    pre_recs = (presliding,) if isinstance(presliding, Record) else tuple(presliding)
    if not steady_recs:
        raise DataValidationError("stage 1 needs at least one velocity-staircase record (`--steady`)")
    for r in pre_recs:
        if r.n_dof != 1:
            raise DataValidationError(f"pre-sliding record `{r.name}` has {r.n_dof} DOFs; map one axis to `t, f, x`")
    run = _Run(model=TermModel(LUGRE_MODEL), opts=opts, fixed={k: float(v) for k, v in opts.fixed.items()})
    s1 = _steady_stage(run, steady_recs, progress)
    if not s1.curve.success:
        return _failed(run.model, run.stages, s1.detections, s1.curves, run.warnings, run.timing, opts,
                       "stage 1 failed: " + (s1.curve.message if s1.points else
                                                "; ".join(d.message for d in s1.detections)))
    values = {**{p.name: p.value for p in run.model.default_parameters()}, **s1.curve.value_dict(), **run.fixed}
    if not pre_recs:
        run.warnings.append("no pre-sliding record: sigma0 and sigma1 are not estimated (held at their start values)")
        return _failed(run.model, run.stages, s1.detections, s1.curves, run.warnings, run.timing, opts,
                       "stage 2 needs a pre-sliding record (`--presliding`): sigma0, sigma1 not estimated",
                       values=values)
    s2 = _presliding_stage(run, s1, pre_recs, values, progress)
    if isinstance(s2, str):
        return _failed(run.model, run.stages, s1.detections, s1.curves, run.warnings, run.timing, opts, s2,
                       values=values)
    final = _staged_covariance(run, s1, s2, values)
    pre_fits = _presliding_fits(run.model, s2.srecs, s2.shifts, s2.offsets,
                                np.array([values[n] for n in run.model.param_names]))
    if opts.polish:
        polished = _polish(run, s1, s2, steady_recs, pre_recs, values, final, progress)
        if polished is not None:
            final, offsets = polished
            pre_fits = _presliding_fits(run.model, s2.srecs, s2.shifts, offsets,
                                        np.array([values[n] for n in run.model.param_names]))
    table, corr = estimates(run.model, values, final.names, final.cov, run.fixed, final.dof, opts.confidence)
    verdict, evidence = _verdict(pre_fits, s1.curves, values)
    return FrictionResult(
        success=True, message="LuGre identified in stages" + (
            " and polished jointly" if len(run.stages) > 2 and run.stages[-1].success else ""),
        model=run.model, estimates=table, stages=tuple(run.stages), plateaus=s1.detections, curves=s1.curves,
        presliding=tuple(pre_fits), verdict=verdict, evidence=evidence, correlation=corr,
        correlation_names=tuple(final.names), condition_number=final.cond, warnings=tuple(run.warnings),
        timing=run.timing, confidence=opts.confidence,
    )


@dataclasses.dataclass
class _Run:
    """What the stages of one identification share: the model, options, given values, and what they report."""

    model: TermModel
    opts: FrictionOptions
    fixed: dict[str, float]
    stages: list[Stage] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    timing: dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class _Steady:
    """Stage 1's outcome: the plateaus, the LuGre curve (and the static curves) with what it held."""

    detections: tuple[PlateauDetection, ...]
    points: list[Plateau]
    curve: CurveFit
    curves: dict[str, CurveFit]
    curve_fixed: dict[str, float]
    cov_names: list[str]
    cov1: FloatArray


@dataclasses.dataclass(frozen=True)
class _Presliding:
    """Stage 2's outcome: its records (shifted to start at zero), free parameters, Jacobians and covariances."""

    shifts: list[tuple[Record, float]]
    srecs: list[Record]
    s2_free: list[str]
    data: JointData
    offsets: FloatArray
    blocks: list[tuple[int, int]]
    ja: FloatArray
    jb: FloatArray
    n_rows: int
    cov_a: FloatArray
    gain: FloatArray
    noise_x: list[float]
    noise_f: list[float]


@dataclasses.dataclass(frozen=True)
class _Final:
    """The reported covariance over ``names`` with its degrees of freedom and condition number."""

    names: list[str]
    cov: FloatArray
    dof: int
    cond: float


def _with_velocity(record: Record, warnings: list[str]) -> Record:
    """``record`` with a velocity: the measured one, else the derivative of the displacement (Savitzky–Golay, the
    project's default differentiator), said in ``warnings``."""
    if record.v is not None or record.x is None or record.n_dof != 1:
        return record  # a measured velocity, or a record the plateau finder refuses in words
    from ..signals import derive_missing

    derived = derive_missing(record, method="savgol")
    warnings.append(f"`{record.name}` has no measured velocity: it is derived from the displacement (Savitzky–Golay);"
                    " its noise and lag widen the plateaus' scatter, and plateaus shorter than its window are lost")
    return derived


def _steady_stage(run: _Run, steady_recs: Sequence[Record], progress: ProgressFn | None) -> _Steady:
    """Stage 1: plateaus, then the steady curve (LuGre's Stribeck law and the static curves) through them."""
    opts = run.opts
    if progress is not None:
        progress("steady", 0.0, "finding plateaus")
    t0 = time.perf_counter()
    steady_recs = tuple(_with_velocity(r, run.warnings) for r in steady_recs)
    detections = tuple(find_plateaus(r, mass=run.fixed.get("m0"), block_s=opts.block_s,
                                     min_duration_s=opts.min_duration_s, settle_fraction=opts.settle_fraction,
                                     rel_tol=opts.rel_tol, max_scatter=opts.max_scatter) for r in steady_recs)
    points: list[Plateau] = [p for d in detections for p in d.accepted]
    curve_fixed = {k: v for k, v in run.fixed.items() if k in STAGE1}
    lugre_curve = fit_curve("stribeck", points, fixed=curve_fixed, confidence=opts.confidence)
    curves: dict[str, CurveFit] = {"stribeck": lugre_curve}
    for name in CURVES:
        if name != "stribeck":
            cf = {k: v for k, v in curve_fixed.items() if k in CURVES[name].params}
            curves[name] = fit_curve(name, points, fixed=cf, confidence=opts.confidence)
    run.timing["stage1_s"] = time.perf_counter() - t0
    n_neg = sum(p.velocity < 0 for p in points)
    if points and (n_neg == 0 or n_neg == len(points)):
        run.warnings.append("the accepted plateaus cover one direction only: the curve is assumed symmetric")
    s1_se = {n: float(s) for n, s in zip(lugre_curve.names, lugre_curve.stderr, strict=True)}
    run.stages.append(Stage(
        name="steady-state curve", records=tuple(r.name for r in steady_recs),
        estimated=tuple(n for n in STAGE1 if n not in curve_fixed),
        fixed={k: (v, "given") for k, v in curve_fixed.items()},
        why=("on a settled constant-velocity plateau the acceleration and the bristle rate vanish, so the drive "
             "force equals the steady friction sign(v)·g(v) + σ2·v, which depends on Fc, Fs, vs, σ2 only"),
        values=lugre_curve.value_dict(), stderr=s1_se, success=lugre_curve.success,
        message=(f"{len(points)} accepted plateaus of {sum(len(d.plateaus) for d in detections)}; "
                 + lugre_curve.message),
        nfev=lugre_curve.nfev, time_s=run.timing["stage1_s"],
        notes=tuple(f"{d.record}: {p.t_start_s:.2f}-{p.t_stop_s:.2f} s rejected: {p.reason}"
                    for d in detections for p in d.rejected),
    ))
    cov_names = [n for n in STAGE1 if n not in curve_fixed]
    cov1 = np.zeros((0, 0))
    if lugre_curve.success:
        idx1 = [lugre_curve.names.index(n) for n in cov_names]
        cov1 = lugre_curve.covariance[np.ix_(idx1, idx1)]
    return _Steady(detections=detections, points=points, curve=lugre_curve, curves=curves, curve_fixed=curve_fixed,
                   cov_names=cov_names, cov1=cov1)


def _presliding_solve(run: _Run, data: JointData, ps: ParameterSet, s2_free: list[str], k_start: float,
                      progress: ProgressFn | None) -> tuple[joint.JointSolution, int]:
    """The pre-sliding fit, tried again from σ0 three times smaller and larger when it fails (the attempt with the
    lowest cost is kept); the solution and the evaluations used."""
    opts = run.opts
    sol = joint.solve(data, ps.as_dict(), s2_free, max_nfev=opts.max_nfev, progress=progress, stage="presliding")
    nfev2 = sol.nfev
    if not sol.success:
        for mult in (0.3, 3.0):
            sol2 = joint.solve(data, {**ps.as_dict(), "sigma0": k_start * mult}, s2_free, max_nfev=opts.max_nfev,
                               progress=progress, stage="presliding")
            nfev2 += sol2.nfev
            if sol2.success and (not sol.success or sol2.cost < sol.cost):
                sol = sol2
            if sol.converged:
                break
    return sol, nfev2


def _presliding_stage(run: _Run, s1: _Steady, pre_recs: Sequence[Record], values: dict[str, float],
                      progress: ProgressFn | None) -> _Presliding | str:
    """Stage 2: σ0, σ1 (and m0) from the pre-sliding records with stage 1 held; ``values`` updated. The
    covariance carries stage 1's uncertainty over; a failure is its message."""
    model, opts = run.model, run.opts
    s2_free = [n for n in ("m0", *STAGE2) if n not in run.fixed]
    t0 = time.perf_counter()
    shifts = [shifted(r) for r in pre_recs]
    srecs = [s[0] for s in shifts]
    k_start, c_start, m_start = _linear_start(srecs, run.fixed.get("m0"), values["sigma2"])
    start = {"sigma0": k_start, "sigma1": c_start, "m0": m_start}
    for n in s2_free:
        values[n] = start[n]
    ps = model.default_parameters().with_values(values, clip=True)
    ps = ps.fix(*[n for n in model.param_names if n not in s2_free]).free(*s2_free)
    data = JointData(model=model, records=tuple(srecs), sigma=tuple(noise_level(r.x) for r in srecs))
    if "sigma0" in s2_free or "sigma1" in s2_free:
        # the spring-damper fit sees the bristles' yield and creep as compliance, so it underestimates σ0,
        # by a factor of up to tens when creep dominates: scan before the full fit
        best = _scan_start(data, ps.as_dict(), s2_free)
        k_start = best["sigma0"]
        ps = ps.with_values(best)
    sol, nfev2 = _presliding_solve(run, data, ps, s2_free, k_start, progress)
    run.timing["stage2_s"] = time.perf_counter() - t0
    if sol.success and not sol.converged:
        run.warnings.append(f"stage 2 stopped at its evaluation limit ({opts.max_nfev}): the pre-sliding estimate may "
                            "not be fully converged")
    if not sol.success:
        return f"stage 2 (pre-sliding) failed: {sol.message}"
    values.update({n: float(sol.values[n]) for n in s2_free})
    # noise re-estimated per record; the residual and Jacobian rows rescale with it
    sigma = joint.noise_levels(data, sol.residual, len(s2_free) + len(srecs))
    row_scale = np.concatenate([np.full(r.n, s_old / s_new) for r, s_old, s_new
                                in zip(srecs, data.sigma, sigma, strict=True)])
    data = dataclasses.replace(data, sigma=sigma)
    j2all = sol.jacobian * row_scale[:, None]
    a_cols = [sol.names.index(n) for n in s2_free] + list(range(model.n_params, model.n_params + len(srecs)))
    ja = j2all[:, a_cols]
    jb = j2all[:, [sol.names.index(n) for n in s1.cov_names]]
    blocks, row = [], 0
    for r in srecs:
        blocks.append((row, row + r.n))
        row += r.n
    cov_hac, _ = joint.sandwich_covariance(ja, sol.residual * row_scale, blocks)
    info_inv = inverse_information(ja)
    noise_x = [noise_level(r.x) for r in srecs]
    noise_f = [noise_level(r.f) for r in srecs]
    cov_a_cond, bias, how = noise_covariance(data, values, sol.offsets, s2_free, ja, info_inv, blocks, noise_x,
                                             noise_f, cov_hac, opts)
    for i, n in enumerate(s2_free):
        values[n] -= float(bias[i])
    offsets = sol.offsets - bias[len(s2_free):]
    gain = -info_inv @ (ja.T @ jb)
    cov_a_full = cov_a_cond + gain @ s1.cov1 @ gain.T
    npar = len(s2_free)
    cov_a = cov_a_full[:npar, :npar]
    gain = gain[:npar]
    se_cond = np.sqrt(np.maximum(np.diag(cov_a_cond)[:npar], 0.0))
    se_a = np.sqrt(np.maximum(np.diag(cov_a), 0.0))
    notes = tuple(
        f"{n}: ±{sc:.3g} with stage 1 held exact, ±{sa:.3g} with stage 1's uncertainty carried over"
        for n, sc, sa in zip(s2_free, se_cond, se_a, strict=True)
    ) + (how,) + tuple(
        f"{r.name}: displacement offset {o:.4g} m, noise {s:.3g} m" for r, o, s in
              zip(pre_recs, [sh[1] - off for sh, off in zip(shifts, offsets, strict=True)], sigma, strict=True))
    run.stages.append(Stage(
        name="pre-sliding", records=tuple(r.name for r in pre_recs), estimated=tuple(s2_free),
        fixed={**{n: (values[n], "stage 1") for n in STAGE1 if n not in s1.curve_fixed},
               **{k: (v, "given") for k, v in run.fixed.items() if k not in s2_free}},
        why=("below breakaway the bristles deflect elastically (micrometres), so the displacement is set by the "
             "bristle stiffness σ0 and damping σ1 (and the mass), with the stage-1 curve only bounding the "
             "deflection; the steady-state data cannot see σ0, σ1 at all"),
        values={n: values[n] for n in s2_free}, stderr=dict(zip(s2_free, se_a.tolist(), strict=True)),
        success=True, message=sol.message, nfev=nfev2, time_s=run.timing["stage2_s"], notes=notes,
    ))
    return _Presliding(shifts=shifts, srecs=srecs, s2_free=s2_free, data=data, offsets=offsets, blocks=blocks,
                       ja=ja, jb=jb, n_rows=j2all.shape[0], cov_a=cov_a, gain=gain, noise_x=noise_x, noise_f=noise_f)


def _staged_covariance(run: _Run, s1: _Steady, s2: _Presliding, values: Mapping[str, float]) -> _Final:
    """The covariance of every estimated parameter after the two stages (stage 1's carried into stage 2)."""
    names = [*s1.cov_names, *s2.s2_free]
    cov = np.zeros((len(names), len(names)))
    k1 = len(s1.cov_names)
    cov[:k1, :k1] = s1.cov1
    cov[k1:, k1:] = s2.cov_a
    cov[k1:, :k1] = s2.gain @ s1.cov1
    cov[:k1, k1:] = (s2.gain @ s1.cov1).T
    npar = len(s2.s2_free)
    dof = s2.n_rows - npar - len(s2.srecs)
    cond = condition_number(np.vstack([_curve_jacobian(s1.points, values, s1.cov_names, s1.curve, model_names=names),
                                       np.hstack([s2.jb, s2.ja[:, :npar]])]) if k1 else s2.ja[:, :npar])
    return _Final(names=names, cov=cov, dof=dof, cond=cond)


def _polish(run: _Run, s1: _Steady, s2: _Presliding, steady_recs: Sequence[Record], pre_recs: Sequence[Record],
            values: dict[str, float], final: _Final, progress: ProgressFn | None) -> tuple[_Final, FloatArray] | None:
    """Stage 3: every free parameter at once over the plateau points and the pre-sliding records, kept when it
    sharpens the estimate as a whole (``values`` updated then); the covariance and offsets to report, or None
    when the polish failed."""
    model, opts = run.model, run.opts
    names, cov, offsets = final.names, final.cov, s2.offsets
    t0 = time.perf_counter()
    pdata = dataclasses.replace(s2.data, points=tuple(s1.points), weights=curve_weights(s1.points, values, s1.curve))
    pol = joint.solve(pdata, values, names, offsets=offsets, max_nfev=opts.max_nfev, progress=progress,
                      stage="polish")
    run.timing["stage3_s"] = time.perf_counter() - t0
    if not pol.success:
        run.warnings.append("the joint polish failed to improve the staged estimate; the staged values are kept")
        return None
    jp = pol.jacobian[:, [pol.names.index(n) for n in names]
                      + list(range(model.n_params, model.n_params + len(s2.srecs)))]
    pblocks = [(b0 + len(s1.points), b1 + len(s1.points)) for b0, b1 in s2.blocks]
    cov_hac_p = joint.sandwich_covariance(jp, pol.residual, pblocks)[0]
    cov_p_full, bias_p, how_p = noise_covariance(pdata, pol.values, pol.offsets, names, jp, inverse_information(jp),
                                                  s2.blocks, s2.noise_x, s2.noise_f, cov_hac_p, opts)
    cov_p = cov_p_full[:len(names), :len(names)]
    new_values = {n: float(pol.values[n]) - float(bias_p[i]) for i, n in enumerate(names)}
    msg3 = f"joint polish: cost {_joint_cost(pdata, values, offsets):.6g} → {pol.cost:.6g} ({pol.message})"
    se_before = np.sqrt(np.maximum(np.diag(cov), 0.0))
    se_after = np.sqrt(np.maximum(np.diag(cov_p), 0.0))
    moved = _polish_notes(names, values, new_values, se_before, se_after) + [how_p]
    # keep the polish only when it sharpens the estimate as a whole (log generalised variance of the
    # relative uncertainties); otherwise the staged values stand and the stage says why
    rel = np.array([abs(values[n]) or 1.0 for n in names])
    worse = log_det(cov_p / np.outer(rel, rel)) > log_det(cov / np.outer(rel, rel))
    out = (final, offsets)
    if worse:
        grown = [n for i, n in enumerate(names) if se_after[i] > se_before[i]]
        moved.append("polish not kept: the joint fit is less certain than the staged one (the uncertainty "
                     f"of {', '.join(grown)} grows), so the pre-sliding record adds noise, not information, "
                     "on those; the staged values are reported")
        run.warnings.append("the joint polish was less certain than the staged estimate and was not kept")
    else:
        values.update(new_values)
        out = (_Final(names=names, cov=cov_p, dof=jp.shape[0] - jp.shape[1], cond=condition_number(jp[:, :len(names)])),
               pol.offsets - bias_p[len(names):])
    run.stages.append(Stage(
        name="joint polish", records=(*(r.name for r in steady_recs), *(r.name for r in pre_recs)),
        estimated=tuple(names), fixed={k: (v, "given") for k, v in run.fixed.items()},
        why=("every free parameter at once over the plateau points and the pre-sliding displacement, from "
             "the staged values: corrects what each stage assumed about the other"),
        values=new_values, stderr={n: float(s) for n, s in zip(names, se_after, strict=True)},
        success=not worse, message=msg3, nfev=pol.nfev, time_s=run.timing["stage3_s"], notes=tuple(moved),
    ))
    return out


def _polish_notes(names: Sequence[str], before: Mapping[str, float], after: Mapping[str, float],
                  se_before: FloatArray, se_after: FloatArray) -> list[str]:
    """How far the polish moved each parameter, in staged standard errors, and what it did to its uncertainty."""
    moved = []
    for i, n in enumerate(names):
        shift = (after[n] - before[n]) / se_before[i] if se_before[i] > 0 else 0.0
        gain = se_after[i] / se_before[i] if se_before[i] > 0 else 1.0
        if abs(shift) < 0.1 and gain > 0.9:
            moved.append(f"{n}: not moved (shift {shift:+.2f} σ, uncertainty ×{gain:.2f}): the joint data "
                         "hold no further information on it")
        else:
            moved.append(f"{n}: moved {shift:+.2f} staged σ, uncertainty ×{gain:.2f}")
    return moved


def parameter_set(result: FrictionResult) -> ParameterSet:
    """The identified values as a ParameterSet of ``m0,lugre`` (for simulation)."""
    return result.model.default_parameters().with_values(result.values, clip=True)


def replay_steady(result: FrictionResult, record: Record) -> SteadyReplay:
    """Compare the identified LuGre (and its static curve) with the friction measured on ``record``.

    Raises
    ------
    DataValidationError
        The record has no measured velocity.
    """
    from ..signals.savgol import savgol_derivative

    if record.v is None or "v" in record.derived:
        raise DataValidationError(f"record `{record.name}` has no measured velocity `v`")
    vals = result.values
    theta = np.array([vals[n] for n in result.model.param_names])
    v = np.asarray(record.v)
    a = savgol_derivative(v, record.dt)
    measured = record.f - vals["m0"] * a
    lugre = result.model.state_force(theta, record.t, record.x, v) + result.model.force(
        theta, record.x, v, np.zeros_like(v))
    static = curve_force("stribeck", vals, v)
    scale = float(np.sqrt(np.mean(measured**2))) or 1.0
    return SteadyReplay(
        record=record.name, t=record.t, v=v, measured=measured, lugre=lugre, static=static,
        nrmse_lugre=float(np.sqrt(np.mean((lugre - measured) ** 2))) / scale,
        nrmse_static=float(np.sqrt(np.mean((static - measured) ** 2))) / scale,
    )
