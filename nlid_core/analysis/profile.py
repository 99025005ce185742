"""Profile likelihood: one parameter held on a grid, the others re-fitted by output error."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ..errors import ModelSpecError
from ..estimate import FitResult, output_error
from ..params import ParameterSet
from ..record import Record
from ._common import FloatArray, ProgressFn, _check_oe_fit, _fit_x0s, _n_residuals, _records, _Steps

__all__ = ["Profile", "profile_likelihood", "PROFILE_REL_SPAN"]


#: Profile grid half-width per ``span`` unit, relative to |value|, when the standard error is infinite.
PROFILE_REL_SPAN = 0.1


@dataclass(frozen=True, kw_only=True)
class Profile:
    """Profile likelihood of one parameter.

    Attributes
    ----------
    success : bool
        False when fewer than three grid points could be fitted.
    message : str
    name : str
    estimate : float
    grid : (n,) ndarray
        Values at which ``name`` was held (ascending; includes the estimate).
    cost : (n,) ndarray
        ½‖r‖² of the re-fit at each value (NaN where the re-fit failed).
    delta_chi2 : (n,) ndarray
        ``2·(cost − cost_min)/s²`` with ``s² = 2·cost_min/(n_res − p)``.
    point_success : (n,) bool ndarray
    others : mapping
        Name -> (n,) values of the other free parameters along the profile.
    threshold : float
        χ²₁ quantile at the fit's confidence (3.84 at 95 %).
    confidence : float
    interval : (float, float)
        Likelihood-ratio interval (interpolated); ±inf where the profile does
        not reach the threshold within the grid.
    wald_interval : (float, float)
        The fit's interval.
    halfwidth_ratio : (float, float)
        Likelihood-ratio over Wald half-width, below and above the estimate.
    agrees : bool
        Both ratios within ``1 ± agreement_tol``.
    """

    success: bool
    message: str
    name: str
    estimate: float
    grid: FloatArray
    cost: FloatArray
    delta_chi2: FloatArray
    point_success: NDArray[np.bool_]
    others: Mapping[str, FloatArray]
    threshold: float
    confidence: float
    interval: tuple[float, float]
    wald_interval: tuple[float, float]
    halfwidth_ratio: tuple[float, float]
    agrees: bool


def _crossing(x: FloatArray, y: FloatArray, thr: float, centre: int, step: int) -> float:
    """Where ``y`` first exceeds ``thr`` walking from ``centre`` in direction ``step`` (linear interpolation)."""
    k = centre
    while 0 <= k + step < x.size:
        j = k + step
        if y[j] >= thr:
            return float(x[k] + (thr - y[k]) * (x[j] - x[k]) / (y[j] - y[k])) if y[j] != y[k] else float(x[j])
        k = j
    return -math.inf if step < 0 else math.inf


def profile_likelihood(
    fit: FitResult,
    records: Sequence[Record] | Record,
    name: str,
    *,
    n_points: int = 15,
    span: float = 3.0,
    agreement_tol: float = 0.2,
    progress: ProgressFn | None = None,
) -> Profile:
    """Profile likelihood of parameter ``name`` and its likelihood-ratio interval.

    ``name`` is held at ``n_points`` values over estimate ± ``span``·stderr
    (± ``span``·10 % of |estimate| when the standard error is infinite;
    clipped to the bounds) and the other parameters are re-fitted by output
    error with the fit's options and initial states, starting from the
    neighbouring grid point's solution (walking outward from the estimate).

    Parameters
    ----------
    fit : FitResult
        An output-error or two-stage fit.
    records : Record or sequence of Record
        The records the fit used.
    name : str
        A free parameter of the fit.
    n_points : int
        Grid points (the estimate is always one of them).
    span : float
        Half-width of the grid in standard errors.
    agreement_tol : float
        Largest relative difference of the half-widths for ``agrees``.
    progress : callable or None
        ``progress(stage, fraction, message)``, e.g. ``("profile", 0.4, "k3 = 4.17 (5 of 12): evaluation 3")``.

    Returns
    -------
    Profile
    """
    recs = _records(records)
    _check_oe_fit(fit, recs, "profile_likelihood")
    params = fit.parameters
    if name not in params.names:
        raise ModelSpecError(f"no parameter `{name}`; parameters are {', '.join(params.names)}")
    if not params[name].vary:
        raise ModelSpecError(f"parameter `{name}` is fixed in the fit; profile a free parameter")
    if n_points < 3 or not (span > 0 and math.isfinite(span)):
        raise ModelSpecError(f"`n_points` must be >= 3 and `span` positive, got {n_points} and {span}")
    est = fit.estimate(name)
    value = est.value
    se = est.stderr
    half = span * se if math.isfinite(se) and se > 0 else span * PROFILE_REL_SPAN * max(abs(value), 1e-12)
    grid = np.union1d(np.linspace(value - half, value + half, n_points), [value])
    grid = np.unique(np.clip(grid, params[name].lower, params[name].upper))
    centre = int(np.argmin(np.abs(grid - value)))
    opts = dataclasses.replace(fit.options, method="output-error")
    x0s = _fit_x0s(fit)
    others_names = [n for n in params.free_names if n != name]
    cost = np.full(grid.size, np.nan)
    ok = np.zeros(grid.size, dtype=bool)
    others = {n: np.full(grid.size, np.nan) for n in others_names}
    starts: dict[int, ParameterSet] = {}
    steps = _Steps(progress, "profile", grid.size)
    done = [0]

    def run(i: int, start: ParameterSet) -> None:
        p_i = start.update(name, value=float(grid[i]), vary=False)
        cb = steps.step(done[0], f"{name} = {grid[i]:.4g}")
        done[0] += 1
        res = output_error(recs, fit.model, p_i, opts, x0=x0s, diagnostics=False, progress=cb)
        if res.success and math.isfinite(res.cost):
            cost[i] = res.cost
            ok[i] = True
            for n in others_names:
                others[n][i] = res.parameters[n].value
            starts[i] = res.parameters.update(name, vary=True)

    run(centre, params)
    for step in (-1, 1):
        i = centre + step
        while 0 <= i < grid.size:
            run(i, starts.get(i - step, params))
            i += step
    steps.done(f"{int(ok.sum())} of {grid.size} profile points fitted")
    confidence = fit.options.confidence
    thr = float(stats.chi2.ppf(confidence, 1))
    wald = est.ci
    if ok.sum() < 3:
        return Profile(success=False, message=f"only {int(ok.sum())} of {grid.size} profile points could be fitted",
                       name=name, estimate=value, grid=grid, cost=cost, delta_chi2=np.full(grid.size, np.nan),
                       point_success=ok, others=others, threshold=thr, confidence=confidence,
                       interval=(math.nan, math.nan), wald_interval=wald, halfwidth_ratio=(math.nan, math.nan),
                       agrees=False)
    n_res = _n_residuals(recs, opts)
    p_est = len(fit.uncertainty.names) if fit.uncertainty is not None else len(params.free_names)
    cmin = float(np.nanmin(cost))
    s2 = 2.0 * cmin / max(n_res - p_est, 1)
    dchi2 = 2.0 * (cost - cmin) / s2
    gx, gy = grid[ok], dchi2[ok]
    c_ok = int(np.argmin(gy))
    interval = (_crossing(gx, gy, thr, c_ok, -1), _crossing(gx, gy, thr, c_ok, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = ((value - interval[0]) / (value - wald[0]), (interval[1] - value) / (wald[1] - value))
    agrees = all(math.isfinite(r) and abs(r - 1.0) <= agreement_tol for r in ratios)
    open_ends = [side for side, b in zip(("lower", "upper"), interval, strict=True) if not math.isfinite(b)]
    msg = (f"profile of {name}: likelihood-ratio interval [{interval[0]:.6g}, {interval[1]:.6g}], Wald"
           f" [{wald[0]:.6g}, {wald[1]:.6g}], half-width ratios {ratios[0]:.3g} / {ratios[1]:.3g}")
    if open_ends:
        msg += (f"; the profile stays below the threshold at the {' and '.join(open_ends)} end of the grid"
                " (widen `span`)")
    return Profile(success=True, message=msg, name=name, estimate=value, grid=grid, cost=cost, delta_chi2=dchi2,
                   point_success=ok, others=others, threshold=thr, confidence=confidence, interval=interval,
                   wald_interval=wald, halfwidth_ratio=(float(ratios[0]), float(ratios[1])), agrees=agrees)
