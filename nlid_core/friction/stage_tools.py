"""The pieces the staged LuGre identification (:mod:`.staged`) is built from: records shifted to start at
zero, the spring-damper start and the σ0 scan, the pre-sliding fits, the joint cost, the steady curve's
Jacobian and weights in the joint fit, the verdict (LuGre against static friction) and a failed result."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..estimate import FitOptions, ParameterEstimate, identify
from ..models import TermModel
from ..params import FloatArray
from ..record import Record
from ..simulate import simulate
from ..terms.models import LINEAR
from . import joint
from .joint import JointData
from .plateaus import Plateau, PlateauDetection
from .results import FrictionOptions, FrictionResult, PreslidingFit, Stage
from .steady import CurveFit, curve_force

__all__ = ["shifted", "curve_weights"]


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
