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
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import DataValidationError
from ..estimate import FitOptions, ParameterEstimate, ProgressFn, identify
from ..models import TermModel
from ..params import FloatArray, ParameterSet
from ..record import Record
from ..simulate import simulate
from ..terms.models import LINEAR
from . import joint
from .joint import JointData
from .plateaus import Plateau, PlateauDetection, find_plateaus
from .results import (LUGRE_MODEL, PARAMS, STAGE1, STAGE2, FrictionOptions, FrictionResult, PreslidingFit, Stage,
                      SteadyReplay)
from .steady import CURVES, CurveFit, curve_force, fit_curve
from .uncertainty import condition_number, estimates, inverse_information, log_det, noise_covariance, noise_level

__all__ = ["FrictionOptions", "Stage", "PreslidingFit", "FrictionResult", "SteadyReplay", "identify_friction",
           "replay_steady", "parameter_set", "shifted", "curve_weights", "LUGRE_MODEL", "STAGE1", "STAGE2", "PARAMS"]

# ---------------------------------------------------------------------------------------------- stage 2


def shifted(rec: Record) -> tuple[Record, float]:
    """The pre-sliding record shifted so that it starts at zero displacement: the offset is the mean of the
    leading samples taken before the force reaches 0.5 % of its peak (at least 1, at most 1 % of the record)."""
    fa = np.abs(rec.f)
    above = np.flatnonzero(fa > 0.005 * float(np.max(fa)))
    k = int(min(max(above[0] if above.size else 1, 1), max(rec.n // 100, 1)))
    off = float(np.mean(rec.x[:k]))
    from ..record import from_arrays

    out = from_arrays(rec.t, rec.f, rec.x - off, None, None, name=rec.name, units=rec.units, source=rec.source)
    return out, off


def _linear_start(recs: Sequence[Record], mass: float | None, sigma2: float) -> tuple[float, float, float]:
    """(σ0, σ1, m) start values from a spring-damper fit of the small-amplitude response."""
    lin = TermModel(LINEAR)
    ps = lin.default_parameters()
    if mass is not None:
        ps = ps.with_values({"m0": mass}).fix("m0")
    res = identify(recs, lin, params=ps, options=FitOptions(initial_state="rest", max_nfev=60))
    vals = res.values
    k = float(vals.get("k1", math.nan))
    c = float(vals.get("c1", math.nan))
    m = float(vals.get("m0", mass or math.nan))
    if not (math.isfinite(k) and k > 0):
        # static compliance from the data: peak force over peak displacement
        k = max(float(np.max(np.abs(np.concatenate([r.f for r in recs])))) /
                max(float(np.max(np.abs(np.concatenate([r.x for r in recs])))), 1e-300), 1.0)
    if not math.isfinite(m) or m <= 0:
        m = mass or 1.0
    if not (math.isfinite(c) and c > sigma2):
        c = sigma2 + 2 * 0.5 * math.sqrt(k * m)
    return k, c - sigma2, m


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
    timing: dict[str, float] = {}
    warnings: list[str] = []
    model = TermModel(LUGRE_MODEL)
    fixed = {k: float(v) for k, v in opts.fixed.items()}
    mass = fixed.get("m0")
    stages: list[Stage] = []

    # ---------------------------------------------------------------- stage 1: plateaus and the steady curve
    if progress is not None:
        progress("steady", 0.0, "finding plateaus")
    t0 = time.perf_counter()
    detections = tuple(find_plateaus(r, mass=mass, block_s=opts.block_s, min_duration_s=opts.min_duration_s,
                                     settle_fraction=opts.settle_fraction, rel_tol=opts.rel_tol,
                                     max_scatter=opts.max_scatter) for r in steady_recs)
    points: list[Plateau] = [p for d in detections for p in d.accepted]
    curve_fixed = {k: v for k, v in fixed.items() if k in STAGE1}
    lugre_curve = fit_curve("stribeck", points, fixed=curve_fixed, confidence=opts.confidence)
    curves: dict[str, CurveFit] = {"stribeck": lugre_curve}
    for name in CURVES:
        if name != "stribeck":
            cf = {k: v for k, v in curve_fixed.items() if k in CURVES[name].params}
            curves[name] = fit_curve(name, points, fixed=cf, confidence=opts.confidence)
    timing["stage1_s"] = time.perf_counter() - t0
    n_neg = sum(p.velocity < 0 for p in points)
    if points and (n_neg == 0 or n_neg == len(points)):
        warnings.append("the accepted plateaus cover one direction only: the curve is assumed symmetric")
    s1_values = lugre_curve.value_dict()
    s1_se = {n: float(s) for n, s in zip(lugre_curve.names, lugre_curve.stderr, strict=True)}
    stages.append(Stage(
        name="steady-state curve", records=tuple(r.name for r in steady_recs),
        estimated=tuple(n for n in STAGE1 if n not in curve_fixed),
        fixed={k: (v, "given") for k, v in curve_fixed.items()},
        why=("on a settled constant-velocity plateau the acceleration and the bristle rate vanish, so the drive "
             "force equals the steady friction sign(v)·g(v) + σ2·v, which depends on Fc, Fs, vs, σ2 only"),
        values=s1_values, stderr=s1_se, success=lugre_curve.success,
        message=(f"{len(points)} accepted plateaus of {sum(len(d.plateaus) for d in detections)}; "
                 + lugre_curve.message),
        nfev=lugre_curve.nfev, time_s=timing["stage1_s"],
        notes=tuple(f"{d.record}: {p.t_start_s:.2f}-{p.t_stop_s:.2f} s rejected: {p.reason}"
                    for d in detections for p in d.rejected),
    ))
    if not lugre_curve.success:
        return _failed(model, stages, detections, curves, warnings, timing, opts,
                       "stage 1 failed: " + (lugre_curve.message if points else
                                                "; ".join(d.message for d in detections)))

    # ---------------------------------------------------------------- stage 2: pre-sliding
    values = {**{p.name: p.value for p in model.default_parameters()}, **s1_values, **fixed}
    cov_names = [n for n in STAGE1 if n not in curve_fixed]
    idx1 = [lugre_curve.names.index(n) for n in cov_names]
    cov1 = lugre_curve.covariance[np.ix_(idx1, idx1)]
    s2_free = [n for n in ("m0", *STAGE2) if n not in fixed]
    if not pre_recs:
        warnings.append("no pre-sliding record: sigma0 and sigma1 are not estimated (held at their start values)")
        return _failed(model, stages, detections, curves, warnings, timing, opts,
                       "stage 2 needs a pre-sliding record (`--presliding`): sigma0, sigma1 not estimated",
                       values=values)
    t0 = time.perf_counter()
    shifts = [shifted(r) for r in pre_recs]
    srecs = [s[0] for s in shifts]
    k_start, c_start, m_start = _linear_start(srecs, mass, values["sigma2"])
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
    sol = joint.solve(data, ps.as_dict(), s2_free, max_nfev=opts.max_nfev, progress=progress, stage="presliding")
    nfev2 = sol.nfev
    if not sol.success:
        # from σ0 three times smaller and larger; the attempt with the lowest cost is kept
        for mult in (0.3, 3.0):
            sol2 = joint.solve(data, {**ps.as_dict(), "sigma0": k_start * mult}, s2_free, max_nfev=opts.max_nfev,
                               progress=progress, stage="presliding")
            nfev2 += sol2.nfev
            if sol2.success and (not sol.success or sol2.cost < sol.cost):
                sol = sol2
            if sol.converged:
                break
    timing["stage2_s"] = time.perf_counter() - t0
    if sol.success and not sol.converged:
        warnings.append(f"stage 2 stopped at its evaluation limit ({opts.max_nfev}): the pre-sliding estimate may "
                        "not be fully converged")
    if not sol.success:
        return _failed(model, stages, detections, curves, warnings, timing, opts,
                       f"stage 2 (pre-sliding) failed: {sol.message}", values=values)
    values.update({n: float(sol.values[n]) for n in s2_free})
    offsets = sol.offsets
    # noise re-estimated per record; the residual and Jacobian rows rescale with it
    sigma = joint.noise_levels(data, sol.residual, len(s2_free) + len(srecs))
    row_scale = np.concatenate([np.full(r.n, s_old / s_new) for r, s_old, s_new
                                in zip(srecs, data.sigma, sigma, strict=True)])
    data = dataclasses.replace(data, sigma=sigma)
    J2all = sol.jacobian * row_scale[:, None]
    n2 = J2all.shape[0]
    a_cols = [sol.names.index(n) for n in s2_free] + list(range(model.n_params, model.n_params + len(srecs)))
    Ja = J2all[:, a_cols]
    Jb = J2all[:, [sol.names.index(n) for n in cov_names]]
    blocks, row = [], 0
    for r in srecs:
        blocks.append((row, row + r.n))
        row += r.n
    cov_hac, lag2 = joint.sandwich_covariance(Ja, sol.residual * row_scale, blocks)
    cov_a_cond = cov_hac
    info_inv = inverse_information(Ja)
    noise_x = [noise_level(r.x) for r in srecs]
    noise_f = [noise_level(r.f) for r in srecs]
    cov_noise, bias, how = noise_covariance(data, values, offsets, s2_free, Ja, info_inv, blocks, noise_x, noise_f,
                                             cov_a_cond, opts)
    cov_a_cond = cov_noise
    for i, n in enumerate(s2_free):
        values[n] -= float(bias[i])
    offsets = offsets - bias[len(s2_free):]

    G = -info_inv @ (Ja.T @ Jb)
    cov_a_full = cov_a_cond + G @ cov1 @ G.T
    npar = len(s2_free)
    cov_a = cov_a_full[:npar, :npar]
    G = G[:npar]
    se_cond = np.sqrt(np.maximum(np.diag(cov_a_cond)[:npar], 0.0))
    se_a = np.sqrt(np.maximum(np.diag(cov_a), 0.0))
    theta = np.array([values[n] for n in model.param_names])
    notes = tuple(
        f"{n}: ±{sc:.3g} with stage 1 held exact, ±{sa:.3g} with stage 1's uncertainty carried over"
        for n, sc, sa in zip(s2_free, se_cond, se_a, strict=True)
    ) + (how,) + tuple(
        f"{r.name}: displacement offset {o:.4g} m, noise {s:.3g} m" for r, o, s in
              zip(pre_recs, [sh[1] - off for sh, off in zip(shifts, offsets, strict=True)], sigma, strict=True))
    pre_fits = _presliding_fits(model, srecs, shifts, offsets, theta)
    stages.append(Stage(
        name="pre-sliding", records=tuple(r.name for r in pre_recs), estimated=tuple(s2_free),
        fixed={**{n: (values[n], "stage 1") for n in STAGE1 if n not in curve_fixed},
               **{k: (v, "given") for k, v in fixed.items() if k not in s2_free}},
        why=("below breakaway the bristles deflect elastically (micrometres), so the displacement is set by the "
             "bristle stiffness σ0 and damping σ1 (and the mass), with the stage-1 curve only bounding the "
             "deflection; the steady-state data cannot see σ0, σ1 at all"),
        values={n: values[n] for n in s2_free}, stderr=dict(zip(s2_free, se_a.tolist(), strict=True)),
        success=True, message=sol.message, nfev=nfev2, time_s=timing["stage2_s"], notes=notes,
    ))

    # ---------------------------------------------------------------- final covariance (staged) or stage 3
    names = [*cov_names, *s2_free]
    cov = np.zeros((len(names), len(names)))
    k1 = len(cov_names)
    cov[:k1, :k1] = cov1
    cov[k1:, k1:] = cov_a
    cov[k1:, :k1] = G @ cov1
    cov[:k1, k1:] = (G @ cov1).T
    dof = n2 - len(s2_free) - len(srecs)
    cond = condition_number(np.vstack([_curve_jacobian(points, values, cov_names, lugre_curve, model_names=names),
                                 np.hstack([Jb, Ja[:, :npar]])]) if k1 else Ja[:, :npar])
    if opts.polish:
        t0 = time.perf_counter()
        pdata = dataclasses.replace(data, points=tuple(points), weights=curve_weights(points, values, lugre_curve))
        pol = joint.solve(pdata, values, names, offsets=offsets, max_nfev=opts.max_nfev, progress=progress,
                          stage="polish")
        timing["stage3_s"] = time.perf_counter() - t0
        if pol.success:
            Jp = pol.jacobian[:, [pol.names.index(n) for n in names]
                              + list(range(model.n_params, model.n_params + len(srecs)))]
            dof_p = Jp.shape[0] - Jp.shape[1]
            pblocks = [(b0 + len(points), b1 + len(points)) for b0, b1 in blocks]
            cov_hac_p = joint.sandwich_covariance(Jp, pol.residual, pblocks)[0]
            cov_p_full, bias_p, how_p = noise_covariance(pdata, pol.values, pol.offsets, names, Jp,
                                                          inverse_information(Jp), blocks, noise_x, noise_f,
                                                          cov_hac_p, opts)
            cov_p = cov_p_full[:len(names), :len(names)]
            new_values = {n: float(pol.values[n]) - float(bias_p[i]) for i, n in enumerate(names)}
            pol_offsets = pol.offsets - bias_p[len(names):]
            nfev3, cond_p = pol.nfev, condition_number(Jp[:, :len(names)])
            msg3 = f"joint polish: cost {_joint_cost(pdata, values, offsets):.6g} → {pol.cost:.6g} ({pol.message})"
            before = {n: values[n] for n in names}
            se_before = np.sqrt(np.maximum(np.diag(cov), 0.0))
            se_after = np.sqrt(np.maximum(np.diag(cov_p), 0.0))
            moved = []
            for i, n in enumerate(names):
                shift = (new_values[n] - before[n]) / se_before[i] if se_before[i] > 0 else 0.0
                gain = se_after[i] / se_before[i] if se_before[i] > 0 else 1.0
                if abs(shift) < 0.1 and gain > 0.9:
                    moved.append(f"{n}: not moved (shift {shift:+.2f} σ, uncertainty ×{gain:.2f}): the joint data "
                                 "hold no further information on it")
                else:
                    moved.append(f"{n}: moved {shift:+.2f} staged σ, uncertainty ×{gain:.2f}")
            moved.append(how_p)
            # keep the polish only when it sharpens the estimate as a whole (log generalised variance of the
            # relative uncertainties); otherwise the staged values stand and the stage says why
            rel = np.array([abs(values[n]) or 1.0 for n in names])
            worse = log_det(cov_p / np.outer(rel, rel)) > log_det(cov / np.outer(rel, rel))
            if worse:
                grown = [n for i, n in enumerate(names) if se_after[i] > se_before[i]]
                moved.append("polish not kept: the joint fit is less certain than the staged one (the uncertainty "
                             f"of {', '.join(grown)} grows), so the pre-sliding record adds noise, not information, "
                             "on those; the staged values are reported")
                warnings.append("the joint polish was less certain than the staged estimate and was not kept")
            else:
                values.update(new_values)
                offsets = pol_offsets
                cov = cov_p
                cond = cond_p
                dof = dof_p
            stages.append(Stage(
                name="joint polish", records=(*(r.name for r in steady_recs), *(r.name for r in pre_recs)),
                estimated=tuple(names), fixed={k: (v, "given") for k, v in fixed.items()},
                why=("every free parameter at once over the plateau points and the pre-sliding displacement, from "
                     "the staged values: corrects what each stage assumed about the other"),
                values=new_values, stderr={n: float(s) for n, s in zip(names, se_after, strict=True)},
                success=not worse, message=msg3, nfev=nfev3, time_s=timing["stage3_s"], notes=tuple(moved),
            ))
            theta = np.array([values[n] for n in model.param_names])
            pre_fits = _presliding_fits(model, srecs, shifts, offsets, theta)
        else:
            warnings.append("the joint polish failed to improve the staged estimate; the staged values are kept")
    table, corr = estimates(model, values, names, cov, fixed, dof, opts.confidence)
    verdict, evidence = _verdict(pre_fits, curves, values)
    return FrictionResult(
        success=True, message="LuGre identified in stages" + (
            " and polished jointly" if len(stages) > 2 and stages[-1].success else ""),
        model=model, estimates=table, stages=tuple(stages), plateaus=detections, curves=curves,
        presliding=tuple(pre_fits), verdict=verdict, evidence=evidence, correlation=corr,
        correlation_names=tuple(names), condition_number=cond, warnings=tuple(warnings), timing=timing,
        confidence=opts.confidence,
    )


def _presliding_fits(model: TermModel, srecs: Sequence[Record], moved: Sequence[tuple[Record, float]],
                     offsets: FloatArray, theta: FloatArray) -> list[PreslidingFit]:
    """The model on each pre-sliding record, the data shifted by their estimated offsets."""
    out = []
    for r, (_, off), o in zip(srecs, moved, offsets, strict=True):
        sim = simulate(model, r.t, r.f, theta, (0.0, 0.0), method="sdirk")
        x = r.x - o
        err = float(np.sqrt(np.mean((sim.x - x) ** 2)))
        scale = float(np.sqrt(np.mean(x**2))) or 1.0
        out.append(PreslidingFit(record=r.name, t=r.t, f=r.f, x=x, x_sim=sim.x, x_offset=off + float(o),
                                 max_force=float(np.max(np.abs(r.f))), nrmse=err / scale))
    return out


def _joint_cost(data: JointData, values: Mapping[str, float], offsets: FloatArray) -> float:
    r, _ = joint.evaluate(data, values, offsets, jacobian=False)
    return 0.5 * float(r @ r)


def _curve_jacobian(points: Sequence[Plateau], values: Mapping[str, float], cov_names: Sequence[str],
                    curve: CurveFit, *, model_names: Sequence[str]) -> FloatArray:
    """Normalised plateau residual's Jacobian w.r.t. ``model_names`` (zero for the stage-2 parameters)."""
    v = np.array([p.velocity for p in points])
    w = curve_weights(points, values, curve)
    J = np.zeros((v.size, len(model_names)))
    for i, n in enumerate(model_names):
        if n not in cov_names:
            continue
        h = 1e-6 * max(abs(values[n]), 1e-12)
        vp, vm = dict(values), dict(values)
        vp[n] += h
        vm[n] -= h
        J[:, i] = w * (curve_force("stribeck", vp, v) - curve_force("stribeck", vm, v)) / (2 * h)
    return J


def curve_weights(points: Sequence[Plateau], values: Mapping[str, float], curve: CurveFit) -> FloatArray:
    """1/(effective standard error) of each plateau point, scaled so that stage 1's χ²/dof is one."""
    v = np.array([p.velocity for p in points])
    sv = np.array([p.velocity_se for p in points])
    sf = np.array([p.force_se for p in points])
    h = np.maximum(np.abs(v) * 1e-6, 1e-300)
    slope = (curve_force("stribeck", values, v + h) - curve_force("stribeck", values, v - h)) / (2 * h)
    s = np.sqrt(sf**2 + (slope * sv) ** 2)
    s2 = curve.chi2 / curve.dof if curve.dof > 0 else 1.0
    return np.asarray(1.0 / (np.maximum(s, 1e-300) * math.sqrt(max(s2, 1e-300))))


def _scan_start(data: JointData, values: Mapping[str, float], free: Sequence[str]) -> dict[str, float]:
    """Start values of σ0 and σ1 from a coarse scan by simulation (offsets removed by their means).

    σ0 runs over ``k·(0.5, 1, 2, 4, 8, 16, 32, 64)`` (``k`` the spring-damper stiffness) with σ1 set for a
    bristle damping ratio of 0.5; then, at the best σ0, the damping ratio over (0.1, 0.25, 0.5, 1, 2).
    The spring-damper start itself is a candidate too. Fixed parameters are not scanned.
    """
    m = float(values["m0"])
    s2 = float(values["sigma2"])

    def cost(trial: Mapping[str, float]) -> float:
        r, _ = joint.evaluate(data, trial, np.zeros(len(data.records)), jacobian=False)
        if not np.all(np.isfinite(r)):
            return math.inf
        total, row = 0.0, 0
        for rec in data.records:
            part = r[row:row + rec.n]
            row += rec.n
            total += float(np.sum((part - part.mean()) ** 2))
        return total

    def damped(sigma0: float, zeta: float) -> float:
        return max(2.0 * zeta * math.sqrt(sigma0 * m) - s2, 1e-6 * math.sqrt(sigma0 * m))

    best = dict(values)
    best_cost = cost(best)
    k_lin = float(values["sigma0"])
    if "sigma0" in free:
        for mult in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0):
            trial = dict(values, sigma0=k_lin * mult)
            if "sigma1" in free:
                trial["sigma1"] = damped(trial["sigma0"], 0.5)
            c = cost(trial)
            if c < best_cost:
                best, best_cost = trial, c
    if "sigma1" in free:
        base = dict(best)
        for zeta in (0.1, 0.25, 0.5, 1.0, 2.0):
            trial = dict(base, sigma1=damped(base["sigma0"], zeta))
            c = cost(trial)
            if c < best_cost:
                best, best_cost = trial, c
    return {n: float(best[n]) for n in ("sigma0", "sigma1") if n in free}


def _verdict(pre: Sequence[PreslidingFit], curves: Mapping[str, CurveFit], values: Mapping[str, float]
             ) -> tuple[str, dict[str, object]]:
    """Static or dynamic? Pre-sliding motion below breakaway is what no static model produces."""
    fs = float(values["Fs"])
    evidence: dict[str, object] = {}
    parts = []
    aic = {k: c.aic for k, c in curves.items() if c.success}
    if aic:
        best = min(aic, key=lambda k: aic[k])
        evidence["best_static_curve"] = best
        evidence["aic"] = aic
        if "coulomb-viscous" in aic and "stribeck" in aic and aic["stribeck"] + 10 < aic["coulomb-viscous"]:
            parts.append(f"the steady curve has a Stribeck dip (friction falls from Fs = {fs:.4g} N to "
                         f"Fc = {values['Fc']:.4g} N as speed rises): Coulomb + viscous does not fit it "
                         f"(AIC {aic['coulomb-viscous']:.1f} vs {aic['stribeck']:.1f})")
    dynamic = False
    for p in pre:
        noise = float(np.sqrt(np.mean((p.x - p.x_sim) ** 2)))
        ptp = float(np.ptp(p.x))
        evidence[f"{p.record}"] = {"displacement_ptp_m": ptp, "max_force_n": p.max_force, "residual_rms_m": noise,
                                   "lugre_nrmse": p.nrmse, "static_nrmse": 1.0}
        if p.max_force < fs and ptp > 10 * noise:
            dynamic = True
            parts.append(
                f"in {p.record}, the axis moves {1e6 * ptp:.3g} µm peak to peak while the force stays below "
                f"breakaway ({p.max_force:.3g} N < Fs = {fs:.3g} N); a static model sticks there (0 µm, "
                f"error 100 % of the motion), LuGre's bristles reproduce it to {100 * p.nrmse:.2g} %")
        elif p.max_force >= fs:
            parts.append(f"{p.record} reaches the breakaway force ({p.max_force:.3g} N ≥ Fs = {fs:.3g} N): "
                         "it includes gross sliding, not only pre-sliding")
    head = ("Dynamic model needed: pre-sliding displacement that a static friction model cannot produce."
            if dynamic else
            "No pre-sliding motion above the noise: a static friction model (the fitted curve) may suffice.")
    evidence["dynamic_needed"] = dynamic
    return head + (" Evidence: " + "; ".join(parts) + "." if parts else ""), evidence


def _failed(model: TermModel, stages: Sequence[Stage], detections: tuple[PlateauDetection, ...],
            curves: Mapping[str, CurveFit], warnings: Sequence[str], timing: Mapping[str, float],
            opts: FrictionOptions, message: str, values: Mapping[str, float] | None = None) -> FrictionResult:
    vals = dict(values or {p.name: p.value for p in model.default_parameters()})
    defaults = {p.name: p for p in model.default_parameters()}
    est = tuple(ParameterEstimate(name=n, value=float(vals.get(n, defaults[n].value)), stderr=math.nan,
                                  ci=(math.nan, math.nan), unit=defaults[n].unit, vary=False, lower=defaults[n].lower,
                                  upper=defaults[n].upper, flags=("not_estimated",), notes=())
                for n in model.param_names)
    return FrictionResult(success=False, message=message, model=model, estimates=est, stages=tuple(stages),
                          plateaus=detections, curves=curves, presliding=(), verdict="", evidence={},
                          correlation=np.zeros((0, 0)), correlation_names=(), condition_number=math.nan,
                          warnings=tuple(warnings), timing=dict(timing), confidence=opts.confidence)


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
