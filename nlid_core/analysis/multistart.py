"""Multistart: output error from random starts; is the optimum unique?"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..estimate import MASS_FLOOR, FitOptions, FitResult, coefficient_scales, equation_error, identify
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ._common import FloatArray, ProgressFn, RngLike, _model, _records, _rng, _Steps, _substeps

__all__ = ["MultiStart", "multistart", "START_FACTOR"]


#: Multistart: factor range of the log-uniform starts for parameters without two finite bounds.
START_FACTOR = (0.3, 3.0)


@dataclass(frozen=True, kw_only=True)
class MultiStart:
    """Output error from several random starts.

    Attributes
    ----------
    success : bool
        At least one start converged.
    message : str
    names : tuple of str
        Free parameters.
    starts : (s, p) ndarray
        Start values.
    end_points : (s, p) ndarray
        Estimates (NaN where the run failed).
    costs : (s,) ndarray
    run_success : (s,) bool ndarray
    messages : tuple of str
    best_cost : float
    best_index : int
    n_at_best : int
        Runs whose cost is within ``cost_rtol`` (relative) of the best.
    at_best : (s,) bool ndarray
    spread : (p,) ndarray
        std / |mean| of each parameter across the runs at the best cost.
    substeps : int
        RK4 substeps used by every run (one discretisation, so costs compare).
    best_fit : FitResult or None
    """

    success: bool
    message: str
    names: tuple[str, ...]
    starts: FloatArray
    end_points: FloatArray
    costs: FloatArray
    run_success: NDArray[np.bool_]
    messages: tuple[str, ...]
    best_cost: float
    best_index: int
    n_at_best: int
    at_best: NDArray[np.bool_]
    spread: FloatArray
    substeps: int
    best_fit: FitResult | None


def _centre(recs: Sequence[Record], mdl: TermModel, ps: ParameterSet, no_params: bool, base_opts: FitOptions
            ) -> tuple[FloatArray, FloatArray]:
    """The centre values of the starts and, for centres still at zero, the half-width of their draws (±3
    equation-error standard errors; a zero centre has no scale of its own)."""
    centre = ps.values
    free = ps.free_mask
    zero_hw = np.zeros(centre.size)
    if no_params or np.any(centre[free] == 0):
        ee = equation_error(recs, mdl, ps, dataclasses.replace(base_opts, method="equation-error", prior=None))
        centre = np.where(free & ((centre == 0) | no_params), ee.parameters.values, centre)
        ee_se = np.array([ee.estimate(n).stderr for n in mdl.param_names])
        zero_hw = np.where((centre == 0) & np.isfinite(ee_se), 3.0 * ee_se, 0.0)
    return centre, zero_hw


def _draw_starts(gen: np.random.Generator, centre: FloatArray, zero_hw: FloatArray, ps: ParameterSet,
                 n_starts: int) -> FloatArray:
    """Start values of the free parameters, one row a start (see :func:`multistart`)."""
    lo, hi = ps.lower, ps.upper
    fidx = np.flatnonzero(ps.free_mask)
    starts = np.zeros((n_starts, fidx.size))
    for s in range(n_starts):
        for j, i in enumerate(fidx):
            if math.isfinite(lo[i]) and math.isfinite(hi[i]):
                val = gen.uniform(lo[i], hi[i])
            elif centre[i] == 0:
                val = gen.uniform(max(lo[i], -zero_hw[i]), min(hi[i], zero_hw[i]))
            else:
                val = centre[i] * math.exp(gen.uniform(math.log(START_FACTOR[0]), math.log(START_FACTOR[1])))
            starts[s, j] = min(max(val, lo[i]), hi[i])
    return starts


def _common_substeps(mdl: TermModel, recs: Sequence[Record], centre: FloatArray, fidx: NDArray[np.intp],
                     starts: FloatArray) -> int:
    """RK4 substeps enough for the fastest start, so that every run's cost compares."""
    nsub = 1
    for s in range(starts.shape[0]):
        th = centre.copy()
        th[fidx] = starts[s]
        for r in recs:
            v = r.v if r.v is not None else np.gradient(r.x, r.t)
            nsub = max(nsub, _substeps(mdl, th, r.dt, r.x, v))
    return int(nsub)


def multistart(
    records: Sequence[Record] | Record,
    model: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    *,
    n_starts: int = 8,
    rng: RngLike = None,
    cost_rtol: float = 1e-6,
    progress: ProgressFn | None = None,
) -> MultiStart:
    """Output error from ``n_starts`` random starts: is the optimum unique?

    Start values are drawn around the centre values (those of ``params``;
    an equation-error estimate replaces zeros and a missing ``params``):
    uniformly within the bounds when both are finite, otherwise log-uniformly
    within a factor 0.3 .. 3 of the centre (sign kept, clipped to the bounds);
    a centre that is still 0 gives starts within ±3 of its equation-error
    standard errors (within the bounds). Each start is identified by :func:`~nlid_core.estimate.identify` with
    ``method="output-error"`` and the start as user parameters (so the
    segmented start of the estimator runs before the full-record fit). Every
    run uses the same RK4 substeps (enough for the fastest start), so the
    costs compare.

    Parameters
    ----------
    records : Record or sequence of Record
    model : TermModel, str or sequence of str
    params : ParameterSet or None
        Centre values, bounds and fixed parameters.
    options : FitOptions or None
        Estimator options (the method is set to output error).
    n_starts : int
        Number of random starts.
    rng : numpy.random.Generator, int or None
        Source of the random starts.
    cost_rtol : float
        Relative cost difference within which a run counts as reaching the best.
    progress : callable or None
        ``progress(stage, fraction, message)``, e.g. ``("multi-start", 0.25, "start 3 of 8: evaluation 5")``.

    Returns
    -------
    MultiStart
    """
    recs = _records(records)
    mdl = _model(model)
    mdl.require_simulable()
    if n_starts < 1:
        raise ModelSpecError(f"`n_starts` must be >= 1, got {n_starts}")
    gen = _rng(rng)
    base_opts = options or FitOptions()
    opts = dataclasses.replace(base_opts, method="output-error")
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    ps = params if params is not None else mdl.default_parameters(force_unit=fu, x_unit=xu)
    if ps.names != mdl.param_names:
        raise ModelSpecError(f"parameters {ps.names} do not match the model terms {mdl.param_names}")
    centre, zero_hw = _centre(recs, mdl, ps, params is None, base_opts)
    names = ps.free_names
    fidx = np.flatnonzero(ps.free_mask)
    starts = _draw_starts(gen, centre, zero_hw, ps, n_starts)
    mass = mdl.mass_parameter
    if mass is not None and mass in names:  # a start exactly at zero mass cannot be simulated
        j = names.index(mass)
        floor = MASS_FLOOR * coefficient_scales(mdl, recs)[mass]
        starts[:, j] = np.maximum(starts[:, j], min(floor, ps.upper[fidx[j]]))
    if opts.substeps is None:
        opts = dataclasses.replace(opts, substeps=_common_substeps(mdl, recs, centre, fidx, starts))
    nsub_used = int(opts.substeps)  # type: ignore[arg-type]
    ends = np.full_like(starts, np.nan)
    costs = np.full(n_starts, np.nan)
    run_ok = np.zeros(n_starts, dtype=bool)
    msgs: list[str] = []
    fits: list[FitResult | None] = []
    steps = _Steps(progress, "multi-start", n_starts)
    for s in range(n_starts):
        th = centre.copy()
        th[fidx] = starts[s]
        res = identify(recs, mdl, params=ps.with_values(th), options=opts, progress=steps.step(s, "start"))
        msgs.append(res.message)
        ok = bool(res.success and math.isfinite(res.cost))
        fits.append(res if ok else None)
        if ok:
            run_ok[s] = True
            costs[s] = res.cost
            ends[s] = res.parameters.values[fidx]
    steps.done(f"{int(run_ok.sum())} of {n_starts} starts converged")
    if not run_ok.any():
        return MultiStart(success=False, message="no start converged", names=names, starts=starts, end_points=ends,
                          costs=costs, run_success=run_ok, messages=tuple(msgs), best_cost=math.nan, best_index=-1,
                          n_at_best=0, at_best=np.zeros(n_starts, dtype=bool), spread=np.full(fidx.size, np.nan),
                          substeps=nsub_used, best_fit=None)
    best = int(np.nanargmin(costs))
    best_cost = float(costs[best])
    at_best = run_ok & (np.abs(costs - best_cost) <= cost_rtol * abs(best_cost))
    sel = ends[at_best]
    mean = sel.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # relative to the mean before squaring: end points of 1e-200 would underflow in a plain std
        rel_std = (sel / np.where(mean != 0, np.abs(mean), 1.0)).std(axis=0)
        spread = np.where(mean != 0, rel_std, np.where(np.ptp(sel, axis=0) == 0, 0.0, np.inf))
    n_at = int(at_best.sum())
    msg = (f"{n_at} of {n_starts} starts reached the best cost {best_cost:.6g} (within {cost_rtol:g} relative);"
           f" {int((~run_ok).sum())} failed; largest spread {float(np.max(spread)):.2g}"
           f" ({names[int(np.argmax(spread))]})")
    return MultiStart(success=True, message=msg, names=names, starts=starts, end_points=ends, costs=costs,
                      run_success=run_ok, messages=tuple(msgs), best_cost=best_cost, best_index=best, n_at_best=n_at,
                      at_best=at_best, spread=spread, substeps=nsub_used, best_fit=fits[best])
