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
from numpy.typing import NDArray
from scipy.optimize import least_squares

from ..errors import ModelSpecError
from ..identifiability import uncertainty_from_jacobian
from ..jsonsafe import finite_or_none
from ..params import FloatArray
from .plateaus import Plateau

__all__ = ["CurveModel", "CURVES", "CurveFit", "fit_curve", "fit_curves", "curve_force", "undetermined"]


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


def undetermined(fit: CurveFit) -> str | None:
    """Why the plateaus do not determine ``fit`` (the fit failed, or a parameter's standard error is not finite
    or above its value), or None when they do."""
    if not fit.success:
        return fit.message
    loose = [f"{n} = {v:.4g} ± {s:.2g}" for n, v, s in zip(fit.names, fit.values, fit.stderr, strict=True)
             if not (math.isfinite(float(s)) and abs(float(s)) <= abs(float(v)))]
    if loose:
        return (f"the plateaus do not determine {', '.join(loose)} (a standard error above the value): too few"
                " plateaus at low speed, where the curve bends")
    return None


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
    force_of: _ForceFn = lambda th, vv: curve_force(name, dict(zip(cm.params, th, strict=True)), vv)  # noqa: E731
    scale_f = float(np.max(np.abs(f))) or 1.0
    points = _Points(v=v, f=f, sv=sv, sf=sf, scale_f=scale_f)
    chi2, theta, w, nfev = _multistart(name, cm.params, points, force_of, free, fixed)
    dof = v.size - pf
    s2 = chi2 / dof if dof > 0 else math.nan
    cov, se, half = _curve_covariance(cm.params, points, force_of, theta, w, free, s2, dof, confidence)
    ci = np.column_stack([theta - half, theta + half])
    rms_n = float(np.sqrt(np.mean((force_of(theta, v) - f) ** 2)))
    aic = v.size * math.log(max(chi2 / v.size, 1e-300)) + 2 * pf
    ok = bool(np.all(np.isfinite(se)))
    msg = (f"`{name}` fitted to {v.size} plateau points (χ²/dof = {s2:.3g})" if ok else
           f"`{name}`: the plateau points do not determine every parameter (singular curvature)")
    return CurveFit(success=ok, message=msg, curve=name, names=cm.params, units=cm.units, values=theta, stderr=se,
                    ci=ci, covariance=cov, chi2=chi2, dof=dof, rms_n=rms_n, aic=aic, nfev=nfev, confidence=confidence)


_ForceFn = Callable[[FloatArray, FloatArray], FloatArray]


@dataclass(frozen=True)
class _Points:
    """Plateau points: velocities and forces with their standard errors, and the force scale."""

    v: FloatArray
    f: FloatArray
    sv: FloatArray
    sf: FloatArray
    scale_f: float

    @property
    def vmax(self) -> float:
        return max(float(np.max(np.abs(self.v))), 1e-300)

    def weights(self, force_of: _ForceFn, th: FloatArray) -> FloatArray:
        """Effective-variance weights ``1/√(se(F)² + (F'(v)·se(v))²)`` at the parameters ``th``."""
        h = np.maximum(np.abs(self.v) * 1e-6, 1e-300)
        slope = (force_of(th, self.v + h) - force_of(th, self.v - h)) / (2 * h)
        s = np.sqrt(self.sf**2 + (slope * self.sv) ** 2)
        return np.asarray(1.0 / np.maximum(s, 1e-12 * self.scale_f))

    def unpack(self, params: Sequence[str], u: FloatArray) -> FloatArray:
        """Natural parameters from the fitted ones (positive ones in logs, σ2 over the force per velocity)."""
        th = np.array(u, dtype=np.float64)
        for i, n in enumerate(params):
            if n in ("Fc", "Fs", "vs"):
                th[i] = math.exp(min(float(u[i]), 700.0))
            elif n == "sigma2":
                th[i] = u[i] * self.scale_f / self.vmax
        return th

    def pack(self, params: Sequence[str], th: FloatArray) -> FloatArray:
        """The inverse of :meth:`unpack`."""
        u = np.array(th, dtype=np.float64)
        for i, n in enumerate(params):
            if n in ("Fc", "Fs", "vs"):
                u[i] = math.log(max(th[i], 1e-300))
            elif n == "sigma2":
                u[i] = th[i] / (self.scale_f / self.vmax)
        return u


def _multistart(name: str, params: Sequence[str], pts: _Points, force_of: _ForceFn, free: NDArray[np.bool_],
                fixed: Mapping[str, float]) -> tuple[float, FloatArray, FloatArray, int]:
    """Bounded weighted least squares from every start of :func:`_starts` (positive parameters in logs, Fs − Fc
    of either sign, the exponent in [0.2, 5]); the effective-variance weights are iterated with the slope.
    Returns the best χ², parameters, weights and the evaluations used."""
    lb = np.full(len(params), -np.inf)
    ub = np.full(len(params), np.inf)
    for i, n in enumerate(params):
        if n == "sigma2":
            lb[i] = 0.0
        elif n == "ds":
            lb[i], ub[i] = 0.2, 5.0
    best = None
    nfev = 0
    fix_idx = [i for i, n in enumerate(params) if n in fixed]
    for th0 in _starts(name, pts.v, pts.f):
        for i in fix_idx:
            th0[i] = float(fixed[params[i]])
        w = pts.weights(force_of, th0)
        for _ in range(3):  # effective-variance weights depend on the slope: iterate them
            u_all = np.clip(pts.pack(params, th0), lb + 1e-12, ub - 1e-12)

            def resid(uf: FloatArray, u_all: FloatArray = u_all, w: FloatArray = w) -> FloatArray:
                u = u_all.copy()
                u[free] = uf
                return np.asarray(w * (force_of(pts.unpack(params, u), pts.v) - pts.f))

            sol = least_squares(resid, u_all[free], bounds=(lb[free], ub[free]), x_scale="jac",
                                xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=400)
            nfev += int(sol.nfev)
            u_all = u_all.copy()
            u_all[free] = sol.x
            th0 = pts.unpack(params, u_all)
            for i in fix_idx:
                th0[i] = float(fixed[params[i]])
            w = pts.weights(force_of, th0)
        cost = float(np.sum((w * (force_of(th0, pts.v) - pts.f)) ** 2))
        if best is None or cost < best[0]:
            best = (cost, th0, w)
    assert best is not None
    return best[0], best[1], best[2], nfev


def _curve_covariance(params: Sequence[str], pts: _Points, force_of: _ForceFn, theta: FloatArray, w: FloatArray,
                      free: NDArray[np.bool_], s2: float, dof: int, confidence: float
                      ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Covariance (fixed parameters: zero), standard errors and interval half-widths in the natural parameters,
    from the Jacobian by central differences, through the one uncertainty path (``s2·(JᵀJ)⁻¹``)."""
    p = len(params)
    J = np.zeros((pts.v.size, p))
    typical = {"Fc": pts.scale_f, "Fs": pts.scale_f, "vs": pts.vmax, "sigma2": pts.scale_f / pts.vmax, "ds": 1.0}
    for i in (int(j) for j in np.flatnonzero(free)):
        # steps relative to the value, or to the parameter's natural scale when the value is ~0 (a bound)
        h = 1e-6 * max(abs(theta[i]), 1e-3 * typical[params[i]])
        tp, tm = theta.copy(), theta.copy()
        tp[i] += h
        tm[i] -= h
        J[:, i] = w * (force_of(tp, pts.v) - force_of(tm, pts.v)) / (2 * h)
    unc = uncertainty_from_jacobian(J[:, free], np.zeros(pts.v.size), [n for n, k in zip(params, free) if k],
                                    sigma2=s2, dof=dof, confidence=confidence, rank_rtol=1e-14)
    cov = np.zeros((p, p))
    cov[np.ix_(free, free)] = unc.covariance
    se, half = np.zeros(p), np.zeros(p)
    se[free], half[free] = unc.stderr, unc.ci_halfwidth
    return cov, se, half


def fit_curves(plateaus: Sequence[Plateau], names: Sequence[str] | None = None, *,
               confidence: float = 0.95) -> dict[str, CurveFit]:
    """Fit several curves (default: every one in :data:`CURVES`) to the same plateau points."""
    return {n: fit_curve(n, plateaus, confidence=confidence) for n in (names or tuple(CURVES))}
