"""Regularisation path: Tikhonov priors over a λ grid, the L-curve and its corner."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelSpecError
from ..estimate import FitOptions, FitResult, Prior, data_scaling, equation_error, output_error, positive_mass
from ..identifiability import column_norms
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ._common import FloatArray, ProgressFn, _channel_scale, _model, _records, _Steps

__all__ = ["RegularisationPath", "regularisation_path"]


@dataclass(frozen=True, kw_only=True)
class RegularisationPath:
    """Estimates over a grid of Tikhonov weights and the L-curve.

    Attributes
    ----------
    success : bool
        False when any equation-error fit failed.
    message : str
    names : tuple of str
        Free parameters.
    lambdas : (L,) ndarray
        Ascending.
    estimates, stderr : (L, p) ndarray
        Equation-error estimates and standard errors per λ.
    residual_norm : (L,) ndarray
        ‖r‖ of the data rows (force normalised as in the estimator).
    deviation_norm : (L,) ndarray
        ‖D(θ − θ0)‖ over the regularised parameters (D the column norms of
        the weighted regressors, as in the prior).
    curvature : (L,) ndarray
        Signed curvature of the L-curve (log10 residual, log10 deviation),
        positive where it turns like an L (NaN at the ends, for λ = 0 and
        where neighbouring points coincide).
    corner_index : int
        Index of the largest positive curvature (-1 when there is none).
    suggested_lambda : float
    oe_estimates, oe_stderr : (L, p) ndarray or None
        Output-error estimates per λ (when asked for).
    oe_residual_norm, oe_deviation_norm : (L,) ndarray or None
        ‖r‖ of the data rows and ‖D(θ − θ0)‖ of the output-error fits (D the
        Jacobian column norms at the common start; NaN at λ = 0).
    """

    success: bool
    message: str
    names: tuple[str, ...]
    lambdas: FloatArray
    estimates: FloatArray
    stderr: FloatArray
    residual_norm: FloatArray
    deviation_norm: FloatArray
    curvature: FloatArray
    corner_index: int
    suggested_lambda: float
    oe_estimates: FloatArray | None
    oe_stderr: FloatArray | None
    oe_residual_norm: FloatArray | None
    oe_deviation_norm: FloatArray | None


def _lcurve_curvature(lams: FloatArray, rho: FloatArray, eta: FloatArray) -> FloatArray:
    """Signed curvature of the L-curve (log10 ρ, log10 η) at each λ (Menger curvature of neighbouring points).

    Positive where the curve turns like the corner of an L (coming down the
    steep leg and leaving along the flat one). ``log10 η`` is floored eight
    decades below its largest value, and points closer to the previous
    distinct point than 1e-3 of the curve's extent are merged with it, so
    that the clusters at both ends (where the estimate no longer changes) do
    not produce spurious curvature. NaN at the ends, for λ = 0 and for merged
    points.
    """
    kappa = np.full(lams.size, np.nan)
    pos = np.flatnonzero((lams > 0) & np.isfinite(rho) & np.isfinite(eta) & (rho > 0))
    if pos.size < 3:
        return kappa
    a = np.log10(rho[pos])
    eta_pos = eta[pos]
    top = float(np.log10(np.max(eta_pos))) if np.max(eta_pos) > 0 else 0.0
    b = np.maximum(np.log10(np.maximum(eta_pos, 1e-300)), top - 8.0)
    tol = 1e-3 * max(math.hypot(float(np.ptp(a)), float(np.ptp(b))), 1e-12)
    keep = [0]
    for i in range(1, pos.size):
        if math.hypot(a[i] - a[keep[-1]], b[i] - b[keep[-1]]) > tol:
            keep.append(i)
    for j in range(1, len(keep) - 1):
        i0, i1, i2 = keep[j - 1], keep[j], keep[j + 1]
        d1 = np.array([a[i1] - a[i0], b[i1] - b[i0]])
        d2 = np.array([a[i2] - a[i1], b[i2] - b[i1]])
        chord = math.hypot(a[i2] - a[i0], b[i2] - b[i0])
        den = float(np.linalg.norm(d1) * np.linalg.norm(d2) * chord)
        if den > 0:
            kappa[pos[i1]] = 2.0 * float(d1[0] * d2[1] - d1[1] * d2[0]) / den
    return kappa


def _ee_norms(recs: Sequence[Record], model: TermModel, params: ParameterSet, opts: FitOptions,
              theta: FloatArray, theta0: Mapping[str, float]) -> tuple[float, float]:
    """Data residual norm and ‖D(θ − θ0)‖ of an equation-error estimate (as the estimator weighs them).

    Computed on the estimator's exactly rescaled regressors (:class:`~nlid_core.estimate.DataScaling`),
    so neither norm under- or overflows whatever the units.
    """
    from ..signals import derive_missing

    recs_d = [r if (r.v is not None and r.a is not None) else derive_missing(r, method=opts.differentiator)
              for r in recs]
    scaling = data_scaling(model, recs_d)
    theta_s = scaling.to_scaled(np.asarray(theta, dtype=np.float64))
    theta0_s = scaling.to_scaled(np.array([float(theta0.get(n, 0.0)) for n in model.param_names]))
    amp = max(float(np.max(np.abs(r.f))) for r in recs_d)
    to_amp = math.ldexp(1.0, scaling.force_exp) / amp  # residuals are (Φθ − f) / max|f|, as in the estimator
    res_parts, phi_parts = [], []
    for k, r in enumerate(recs_d):
        w = (opts.record_weights[k] if opts.record_weights is not None else 1.0) * to_amp
        sel = np.arange(0, r.n, opts.sample_step)
        if opts.force_threshold > 0:
            sel = sel[np.abs(r.f[sel]) >= opts.force_threshold * amp]
        phi = scaling.regressors(r)[sel] * w
        res_parts.append(phi @ theta_s - w * scaling.force(r.f[sel]))
        phi_parts.append(phi)
    res = np.concatenate(res_parts)
    col = column_norms(np.vstack(phi_parts))
    dev = [col[i] * (theta_s[i] - theta0_s[i])
           for i, n in enumerate(model.param_names) if n in theta0 and params[n].vary]
    return float(column_norms(res[:, None])[0]), float(column_norms(np.asarray(dev, dtype=np.float64)[:, None])[0])


def regularisation_path(
    records: Sequence[Record] | Record,
    model: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    prior_values: Mapping[str, float],
    lambdas: Sequence[float] | ArrayLike,
    *,
    with_output_error: bool = False,
    progress: ProgressFn | None = None,
) -> RegularisationPath:
    """Tikhonov-regularised fits over a λ grid, the L-curve and its corner.

    Each λ gives an equation-error fit with ``Prior(values=prior_values,
    lam=λ)`` (cheap); optionally also an output-error fit from the
    equation-error estimate at the smallest λ (one common start, so the
    prior's scaling D is the same for every λ). The suggested λ is the corner
    of the L-curve: the largest (L-shaped) curvature of (log ‖r‖,
    log ‖D(θ − θ0)‖). When the data alone determine the parameters well the
    curve has no pronounced corner; its largest curvature then sits where the
    residual begins to grow, i.e. at about the largest λ the data do not
    object to.

    Parameters
    ----------
    records : Record or sequence of Record
    model : TermModel, str or sequence of str
    params : ParameterSet or None
        Bounds, fixed values and units (defaults from the model).
    options : FitOptions or None
        Estimator options (method and prior are set here).
    prior_values : mapping
        θ0 per regularised parameter.
    lambdas : sequence of float
        Prior weights (>= 0; sorted here).
    with_output_error : bool
        Also run output error at every λ.
    progress : callable or None
        ``progress(stage, fraction, message)``, e.g. ``("regularisation", 0.5, "equation error at λ = 0.01 (5 of
        9)")``.

    Returns
    -------
    RegularisationPath
    """
    recs = _records(records)
    mdl = _model(model)
    lams = np.sort(np.asarray(lambdas, dtype=np.float64).reshape(-1))
    if lams.size == 0 or np.any(~np.isfinite(lams)) or np.any(lams < 0):
        raise ModelSpecError(f"`lambdas` must be finite numbers >= 0, got {lams.tolist()}")
    base = options or FitOptions()
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    ps = params if params is not None else mdl.default_parameters(force_unit=fu, x_unit=xu)
    unknown = set(prior_values) - set(ps.names)
    if unknown:
        raise ModelSpecError(f"`prior_values` names unknown parameter(s) {sorted(unknown)}")
    names = ps.free_names
    fidx = np.flatnonzero(ps.free_mask)
    L, p = lams.size, fidx.size
    est = np.full((L, p), np.nan)
    se = np.full((L, p), np.nan)
    rho = np.full(L, np.nan)
    eta = np.full(L, np.nan)
    ok = True
    ee_fits: list[FitResult] = []
    steps = _Steps(progress, "regularisation", L * (2 if with_output_error else 1))
    for i, lam in enumerate(lams):
        steps.step(i, f"equation error at λ = {lam:.3g}")
        opts = dataclasses.replace(base, method="equation-error",
                                   prior=Prior(values=dict(prior_values), lam=float(lam)))
        fit = equation_error(recs, mdl, ps, opts)
        ee_fits.append(fit)
        ok = ok and fit.success
        est[i] = fit.parameters.values[fidx]
        se[i] = [fit.estimate(n).stderr for n in names]
        rho[i], eta[i] = _ee_norms(recs, mdl, ps, opts, fit.parameters.values, prior_values)
    kappa = _lcurve_curvature(lams, rho, eta)
    corner = int(np.nanargmax(kappa)) if np.any(kappa > 0) else -1
    oe_est = oe_se = oe_rho = oe_eta = None
    if with_output_error:
        mdl.require_simulable()
        start = positive_mass(ee_fits[0].parameters, mdl, recs)
        oe_est, oe_se = np.full((L, p), np.nan), np.full((L, p), np.nan)
        oe_rho, oe_eta = np.full(L, np.nan), np.full(L, np.nan)
        for i, lam in enumerate(lams):
            opts = dataclasses.replace(base, method="output-error",
                                       prior=Prior(values=dict(prior_values), lam=float(lam)))
            fit = output_error(recs, mdl, start, opts, progress=steps.step(L + i, f"output error at λ = {lam:.3g}"))
            if not fit.success:
                continue
            oe_est[i] = fit.parameters.values[fidx]
            oe_se[i] = [fit.estimate(n).stderr for n in names]
            rss = 0.0
            for c in opts.outputs:
                w = float(opts.channel_weights.get(c, 1.0)) / _channel_scale(recs, c)
                for rf in fit.records:
                    r_c = w * (rf.predicted[c] - rf.measured[c])[:: opts.sample_step]
                    rss += float(r_c @ r_c)
            oe_rho[i] = math.sqrt(rss)
            if lam > 0:
                oe_eta[i] = math.sqrt(max(2.0 * fit.cost - rss, 0.0) / lam)
    steps.done(f"{L} values of λ")
    suggested = float(lams[corner]) if corner >= 0 else math.nan
    if corner >= 0:
        msg = f"{L} values of λ; L-curve corner at λ = {suggested:.3g}"
    elif np.sum(lams > 0) < 3:
        msg = f"{L} values of λ; no L-curve corner (give at least three positive λ)"
    else:
        msg = (f"{L} values of λ; the L-curve has no corner (it never turns like an L: the data determine the"
               " parameters without the prior, or the grid is too coarse)")
    if not ok:
        msg += "; some equation-error fits failed"
    return RegularisationPath(success=ok, message=msg, names=names, lambdas=lams, estimates=est, stderr=se,
                              residual_norm=rho, deviation_norm=eta, curvature=kappa, corner_index=corner,
                              suggested_lambda=suggested, oe_estimates=oe_est, oe_stderr=oe_se,
                              oe_residual_norm=oe_rho, oe_deviation_norm=oe_eta)
