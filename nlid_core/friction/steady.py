r"""Steady-state friction curves fitted to plateau points: static models and LuGre's stage 1.

In steady sliding at speed v, LuGre's bristle state settles at ``z = sign(v)·g(v)/σ0``, so the
friction force is the static Stribeck curve

.. math:: F(v) = \operatorname{sign}(v)\,\bigl(F_c + (F_s - F_c)\,e^{-|v/v_s|^{\delta}}\bigr) + \sigma_2 v,

with δ = 2 in the ``lugre`` term. Fitting this curve to the plateau points ``(v_i, F_i)`` gives
``Fc Fs vs sigma2`` (stage 1). The same points are fitted by the static models of
:data:`CURVES` for comparison.

Weights are the effective variances :math:`s_i^2 = \mathrm{se}(F_i)^2 + (F'(v_i)\,\mathrm{se}(v_i))^2`.
The covariance is :math:`\hat s^2 (J^T J)^{-1}` with :math:`\hat s^2 = \chi^2/(n-p)` (the plateau
standard errors fix the relative weights; their absolute level is re-estimated, as
``scipy.optimize.curve_fit`` does with ``absolute_sigma=False``), and intervals use Student's t
with n − p degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.optimize import least_squares

from ..errors import ModelSpecError
from ..jsonsafe import finite_or_none
from ..params import FloatArray
from .plateaus import Plateau

__all__ = ["CurveModel", "CURVES", "CurveFit", "fit_curve", "fit_curves", "curve_force"]


@dataclass(frozen=True)
class CurveModel:
    """A static friction-velocity law: parameter names, units and a short formula."""

    name: str
    description: str
    params: tuple[str, ...]
    units: tuple[str, ...]
    formula: str


CURVES: Mapping[str, CurveModel] = {
    "coulomb": CurveModel("coulomb", "Coulomb", ("Fc",), ("N",), "Fc·sign(v)"),
    "coulomb-viscous": CurveModel("coulomb-viscous", "Coulomb + viscous", ("Fc", "sigma2"), ("N", "N·s/m"),
                                  "Fc·sign(v) + σ2·v"),
    "stribeck": CurveModel("stribeck", "Stribeck + viscous (LuGre's steady state)", ("Fc", "Fs", "vs", "sigma2"),
                           ("N", "N", "m/s", "N·s/m"), "sign(v)·(Fc + (Fs − Fc)·exp(−(v/vs)²)) + σ2·v"),
    "stribeck-exponent": CurveModel("stribeck-exponent", "Stribeck with a free exponent + viscous",
                                    ("Fc", "Fs", "vs", "sigma2", "ds"), ("N", "N", "m/s", "N·s/m", "1"),
                                    "sign(v)·(Fc + (Fs − Fc)·exp(−|v/vs|^δs)) + σ2·v"),
}


def curve_force(name: str, values: Mapping[str, float], v: FloatArray) -> FloatArray:
    """Friction force of curve ``name`` with parameter ``values`` at velocities ``v`` (m/s)."""
    if name not in CURVES:
        raise ModelSpecError(f"unknown friction curve {name!r}; choose from {', '.join(CURVES)}")
    v = np.asarray(v, dtype=np.float64)
    s = np.sign(v)
    fc = values["Fc"]
    sigma2 = values.get("sigma2", 0.0) if name != "coulomb" else 0.0
    if name in ("coulomb", "coulomb-viscous"):
        return np.asarray(s * fc + sigma2 * v)
    ds = values.get("ds", 2.0) if name == "stribeck-exponent" else 2.0
    g = fc + (values["Fs"] - fc) * np.exp(-np.abs(v / values["vs"]) ** ds)
    return np.asarray(s * g + sigma2 * v)


@dataclass(frozen=True, kw_only=True)
class CurveFit:
    """One static curve fitted to plateau points.

    Attributes
    ----------
    success : bool
    message : str
    curve : str
        Key of :data:`CURVES`.
    names, units : tuple of str
    values, stderr : (p,) ndarray
    ci : (p, 2) ndarray
        Intervals at ``confidence``.
    covariance : (p, p) ndarray
    chi2 : float
        Weighted residual sum of squares.
    dof : int
        Points minus parameters.
    rms_n : float, N
        Unweighted RMS force residual.
    aic : float
        Akaike's criterion from the weighted residual (for comparing curves on the same points).
    nfev : int
    confidence : float
    """

    success: bool
    message: str
    curve: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    values: FloatArray
    stderr: FloatArray
    ci: FloatArray
    covariance: FloatArray
    chi2: float
    dof: int
    rms_n: float
    aic: float
    nfev: int
    confidence: float

    def value_dict(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, self.values, strict=True)}

    def force(self, v: FloatArray) -> FloatArray:
        return curve_force(self.curve, self.value_dict(), v)

    def to_dict(self) -> dict[str, object]:
        return {
            "success": self.success, "message": self.message, "curve": self.curve,
            "formula": CURVES[self.curve].formula,
            "parameters": {
                n: {"value": float(v), "stderr": finite_or_none(s), "ci95": [finite_or_none(c[0]), finite_or_none(c[1])], "unit": u}
                for n, u, v, s, c in zip(self.names, self.units, self.values, self.stderr, self.ci, strict=True)
            },
            "chi2": finite_or_none(self.chi2), "dof": self.dof, "rms_n": finite_or_none(self.rms_n), "aic": finite_or_none(self.aic),
        }


def _starts(name: str, v: FloatArray, f: FloatArray) -> list[FloatArray]:
    """Start values from the points themselves (several for the Stribeck velocity)."""
    a = np.abs(v)
    fa = np.abs(f)
    order = np.argsort(a)
    hi = order[-max(2, a.size // 3):]
    if np.ptp(a[hi]) > 0:
        slope, icpt = np.polyfit(a[hi], fa[hi], 1)
    else:
        slope, icpt = 0.0, float(np.mean(fa[hi]))
    slope = max(float(slope), 0.0)
    fc = max(float(icpt), 1e-3 * float(np.max(fa)))
    if name == "coulomb":
        return [np.array([float(np.median(fa))])]
    if name == "coulomb-viscous":
        return [np.array([fc, slope])]
    excess = fa - fc - slope * a
    fs = fc + max(float(np.max(excess)), 1e-3 * fc)
    pos = a[a > 0]
    lo, hi_v = float(np.min(pos)), float(np.max(pos))
    vs_grid = np.geomspace(lo, hi_v, 7)
    base = [np.array([fc, fs, vs, slope]) for vs in vs_grid]
    if name == "stribeck-exponent":
        return [np.append(b, ds) for b in base for ds in (1.0, 2.0)]
    return base


def fit_curve(name: str, plateaus: Sequence[Plateau], *, fixed: Mapping[str, float] | None = None,
              confidence: float = 0.95) -> CurveFit:
    """Fit the static curve ``name`` to accepted plateau points (weighted, bounded least squares).

    Parameters
    ----------
    name : str
        Key of :data:`CURVES`.
    plateaus : sequence of Plateau
        Accepted plateaus (velocity, force and their standard errors).
    fixed : mapping or None
        Parameters held at given values (reported with zero standard error).
    confidence : float

    Returns
    -------
    CurveFit
        ``success=False`` with a message when there are too few points.
    """
    fixed = dict(fixed or {})
    if name not in CURVES:
        raise ModelSpecError(f"unknown friction curve {name!r}; choose from {', '.join(CURVES)}")
    cm = CURVES[name]
    unknown = [k for k in fixed if k not in cm.params]
    if unknown:
        raise ModelSpecError(f"`fixed` names {unknown} that curve `{name}` does not have ({', '.join(cm.params)})")
    p = len(cm.params)
    free = np.array([n not in fixed for n in cm.params])
    pf = int(free.sum())
    v = np.array([q.velocity for q in plateaus], dtype=np.float64)
    f = np.array([q.force for q in plateaus], dtype=np.float64)
    sv = np.array([q.velocity_se for q in plateaus], dtype=np.float64)
    sf = np.array([q.force_se for q in plateaus], dtype=np.float64)
    nan = np.full(p, math.nan)
    if v.size < pf + 1 or pf == 0:
        return CurveFit(success=False, curve=name, names=cm.params, units=cm.units, values=nan, stderr=nan,
                        ci=np.full((p, 2), math.nan), covariance=np.full((p, p), math.nan), chi2=math.nan, dof=0,
                        rms_n=math.nan, aic=math.nan, nfev=0, confidence=confidence,
                        message=f"{v.size} plateau points cannot determine the {p} parameters of `{name}`")
    # positive parameters are fitted in logs (Fs − Fc may have either sign; the exponent in [0.2, 5])
    force_of: Callable[[FloatArray, FloatArray], FloatArray] = lambda th, vv: curve_force(  # noqa: E731
        name, dict(zip(cm.params, th, strict=True)), vv)
    scale_f = float(np.max(np.abs(f))) or 1.0

    def unpack(u: FloatArray) -> FloatArray:
        th = np.array(u, dtype=np.float64)
        for i, n in enumerate(cm.params):
            if n in ("Fc", "Fs", "vs"):
                th[i] = math.exp(min(float(u[i]), 700.0))
            elif n == "sigma2":
                th[i] = u[i] * scale_f / max(float(np.max(np.abs(v))), 1e-300)
        return th

    def pack(th: FloatArray) -> FloatArray:
        u = np.array(th, dtype=np.float64)
        for i, n in enumerate(cm.params):
            if n in ("Fc", "Fs", "vs"):
                u[i] = math.log(max(th[i], 1e-300))
            elif n == "sigma2":
                u[i] = th[i] / (scale_f / max(float(np.max(np.abs(v))), 1e-300))
        return u

    def weights(th: FloatArray) -> FloatArray:
        h = np.maximum(np.abs(v) * 1e-6, 1e-300)
        slope = (force_of(th, v + h) - force_of(th, v - h)) / (2 * h)
        s = np.sqrt(sf**2 + (slope * sv) ** 2)
        return np.asarray(1.0 / np.maximum(s, 1e-12 * scale_f))

    lb = np.full(p, -np.inf)
    ub = np.full(p, np.inf)
    for i, n in enumerate(cm.params):
        if n == "sigma2":
            lb[i] = 0.0
        elif n == "ds":
            lb[i], ub[i] = 0.2, 5.0
    best = None
    nfev = 0
    fix_idx = [i for i, n in enumerate(cm.params) if n in fixed]
    for th0 in _starts(name, v, f):
        for i in fix_idx:
            th0[i] = float(fixed[cm.params[i]])
        w = weights(th0)
        for _ in range(3):  # effective-variance weights depend on the slope: iterate them
            u_all = np.clip(pack(th0), lb + 1e-12, ub - 1e-12)

            def resid(uf: FloatArray, u_all: FloatArray = u_all, w: FloatArray = w) -> FloatArray:
                u = u_all.copy()
                u[free] = uf
                return np.asarray(w * (force_of(unpack(u), v) - f))

            sol = least_squares(resid, u_all[free], bounds=(lb[free], ub[free]), x_scale="jac",
                                xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=400)
            nfev += int(sol.nfev)
            u_all = u_all.copy()
            u_all[free] = sol.x
            th0 = unpack(u_all)
            for i in fix_idx:
                th0[i] = float(fixed[cm.params[i]])
            w = weights(th0)
        cost = float(np.sum((w * (force_of(th0, v) - f)) ** 2))
        if best is None or cost < best[0]:
            best = (cost, th0, w)
    assert best is not None
    chi2, theta, w = best
    # covariance in the natural parameters from the Jacobian by central differences
    J = np.zeros((v.size, p))
    vmax = max(float(np.max(np.abs(v))), 1e-300)
    typical = {"Fc": scale_f, "Fs": scale_f, "vs": vmax, "sigma2": scale_f / vmax, "ds": 1.0}
    for i in (int(j) for j in np.flatnonzero(free)):
        # steps relative to the value, or to the parameter's natural scale when the value is ~0 (a bound)
        h = 1e-6 * max(abs(theta[i]), 1e-3 * typical[cm.params[i]])
        tp, tm = theta.copy(), theta.copy()
        tp[i] += h
        tm[i] -= h
        J[:, i] = w * (force_of(tp, v) - force_of(tm, v)) / (2 * h)
    dof = v.size - pf
    s2 = chi2 / dof if dof > 0 else math.nan
    cov = np.zeros((p, p))
    Jf = J[:, free]
    try:
        cov[np.ix_(free, free)] = s2 * np.linalg.inv(Jf.T @ Jf)
    except np.linalg.LinAlgError:
        cov[np.ix_(free, free)] = math.inf
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    q = float(stats.t.ppf(0.5 + confidence / 2, dof)) if dof > 0 else math.inf
    ci = np.column_stack([theta - q * se, theta + q * se])
    rms_n = float(np.sqrt(np.mean((force_of(theta, v) - f) ** 2)))
    aic = v.size * math.log(max(chi2 / v.size, 1e-300)) + 2 * pf
    ok = bool(np.all(np.isfinite(se)))
    msg = (f"`{name}` fitted to {v.size} plateau points (χ²/dof = {s2:.3g})" if ok else
           f"`{name}`: the plateau points do not determine every parameter (singular curvature)")
    return CurveFit(success=ok, message=msg, curve=name, names=cm.params, units=cm.units, values=theta, stderr=se,
                    ci=ci, covariance=cov, chi2=chi2, dof=dof, rms_n=rms_n, aic=aic, nfev=nfev, confidence=confidence)


def fit_curves(plateaus: Sequence[Plateau], names: Sequence[str] | None = None, *,
               confidence: float = 0.95) -> dict[str, CurveFit]:
    """Fit several curves (default: every one in :data:`CURVES`) to the same plateau points."""
    return {n: fit_curve(n, plateaus, confidence=confidence) for n in (names or tuple(CURVES))}
