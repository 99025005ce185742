r"""Interval forward analysis and interval inverse problem of the flexible double pendulum (seed 002).

**Forward.** Inputs known only to lie in intervals :math:`X = X_c + X_w\,\eta`, :math:`\eta \in [-1, 1]^d`
(seed eq. 5). A Chebyshev polynomial surrogate of the tip response over the box
(:mod:`~nlid_core.multibody.surrogate`, seed eqs. 7–11) gives, at every output time, the response's
lower and upper bound as the minimum and maximum of the polynomial over the whole box — interior
extremes included, which the box's corners alone miss (the data README notes rows where this happens).
The surrogate's error is measured on held-out true runs inside the box.

**Inverse.** From given bounds :math:`\bar Y^l_j, \bar Y^u_j` (tip x and y at times :math:`t_j`) find
the intervals of the free inputs minimising the seed's eq. (19),

.. math:: F = \sum_j \lVert Y^l_j(x) - \bar Y^l_j \rVert^2 + \lVert Y^u_j(x) - \bar Y^u_j \rVert^2 ,

where :math:`x` holds each free input's lower and upper end. Steps:

1. the mid-line of the bounds is fitted by deterministic least squares
   (:func:`~nlid_core.multibody.inverse.identify_trajectory`), which gives the midpoints; the bounds'
   half-widths against the sensitivities there (non-negative least squares, to first order
   :math:`\tfrac12 (Y^u - Y^l) \approx \sum_i |\partial Y/\partial p_i|\, w_i`) give the radii;
2. one surrogate is built over a search domain around that estimate (midpoint ± ``DOMAIN_FACTOR``
   radii plus a floor), its runs in parallel, and reused by every particle; when its error on two held-out
   runs exceeds ``REFINE_RMS_M`` the box is located on it and the surrogate built again over the located
   box with a margin (at most ``REFINE_PASSES`` times: a domain half as wide fits an order-p polynomial
   about 2^(p+1) times better);
3. a particle swarm — the standard PSO or the seed's improved PSO (:mod:`~nlid_core.multibody.swarm`) —
   minimises :math:`F` over the intervals' ends inside the domain, each particle's bounds found over its
   own box on the surrogate.

Units: angles in rad, moduli in Pa, positions in m, fitness in m².
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from ..errors import DataValidationError, ModelSpecError, SimulationError
from ..progress import CancelFn, ProgressFn
from .interval_types import BOUNDS_COLUMNS, ForwardAnalysis, Interval, IntervalBounds, InverseResult, Response
from .inverse import _check_names, identify_trajectory
from .pendulum import PendulumRun, PendulumSpec, SolverSettings
from .surrogate import ChebyshevSurrogate, build_surrogate, sample_design
from .swarm import SWARMS

__all__ = ["Interval", "IntervalBounds", "Response", "ForwardAnalysis", "InverseResult", "interval_forward",
           "interval_inverse", "compare_swarms", "DOMAIN_FACTOR", "BOUNDS_COLUMNS"]

FloatArray = NDArray[np.float64]
#: Progress stage of the forward analysis (the inverse problems report ``"interval inverse"``).
FORWARD = "interval forward"

#: The search domain spans the first estimate's midpoint ± this many estimated radii (plus a floor).
DOMAIN_FACTOR = 3.0
#: Floor of the domain's half-width: angles (rad) and moduli (fraction of the estimate).
_DOMAIN_FLOOR_RAD = 0.01
_DOMAIN_FLOOR_REL = 0.02
#: A surrogate whose held-out error over the search domain exceeds this (m, rms) is built again over the box
#: located on it, widened on each side by REFINE_MARGIN radii (plus the floor); at most REFINE_PASSES times.
REFINE_RMS_M = 2e-4
REFINE_MARGIN = 1.0
REFINE_PASSES = 2
#: The improved PSO's archive threshold as an rms bound mismatch (m): fitness below ``4 n ARCHIVE_RMS_M²``
#: (n times; lower and upper bounds of x and of y) is "high quality". 0.5 mm is how closely the model reproduces the
#: paper's table; on its Table A2 a looser 2.5 mm filled the archive with mediocre positions whose mean pulled
#: the swarm off the optimum (median fitness 18 % above the standard PSO's over 8 seeds; 0.5 % with 0.5 mm).
ARCHIVE_RMS_M = 5e-4
#: Default surrogate order for the inverse problem (total degree): accurate to a fraction of a millimetre over
#: the search domain of the paper's cases (measured in the tests and the benchmark).
INVERSE_ORDER = 4


def _say(progress: ProgressFn | None, cancel: CancelFn | None, frac: float, text: str, stage: str = "interval inverse"
         ) -> None:
    if progress is not None:
        progress(stage, frac, text)
    if cancel is not None and cancel():
        raise SimulationError("cancelled")


class _OwnRunner:
    """Context: the caller's runner as it is, or a local one made (and closed) here."""

    def __init__(self, given: Any) -> None:
        self.given = given
        self.made: Any = None

    def __enter__(self) -> Any:
        if self.given is not None:
            return self.given
        from ..runners import runner

        self.made = runner()
        return self.made.__enter__() if hasattr(self.made, "__enter__") else self.made

    def __exit__(self, *exc: object) -> None:
        if self.made is not None and hasattr(self.made, "__exit__"):
            self.made.__exit__(*exc)


def _run_from_vector(t: FloatArray, y: FloatArray) -> PendulumRun:
    n = t.size
    return PendulumRun(success=True, message="", t=t, x_b=y[:n], y_b=y[n:], nodes=None, sensitivities={},
                       model="ancf", steps=0, newton_iterations=0, elapsed_s=0.0)


def forward_run_count(n_intervals: int, order: int = 4, kind: str = "total", n_check: int = 6) -> int:
    """Forward runs :func:`interval_forward` makes: twice the surrogate's terms (its fit samples), the
    ``n_check`` held-out points and the box's 2^d corners (for a time estimate before it runs)."""
    from .surrogate import basis_indices

    return 2 * int(basis_indices(int(n_intervals), int(order), kind).shape[0]) + int(n_check) + (1 << int(n_intervals))


def interval_forward(intervals: Sequence[Interval], *, fixed: Mapping[str, float] | None = None,
                     spec: PendulumSpec | None = None, settings: SolverSettings | None = None, t_end: float = 2.0,
                     dt_out: float = 0.05, order: int = 4, kind: str = "total", n_check: int = 6, seed: int = 0,
                     runner: Any = None, progress: ProgressFn | None = None,
                     cancel: CancelFn | None = None) -> ForwardAnalysis:
    """Bounds of the tip response when the inputs lie in ``intervals`` (see the module notes).

    Parameters
    ----------
    intervals : sequence of Interval
        The uncertain inputs (at least one).
    fixed : mapping or None
        Values of the other inputs; angles neither uncertain nor fixed default to the paper's π/4 and π/6.
    spec, settings, t_end, dt_out
        Model and output grid.
    order : int
        Surrogate order (per input; the seed uses 2).
    kind : {"total", "tensor"}
    n_check : int
        Held-out true runs inside the box (the centre and random points), also drawn in the plot.
    seed : int
    runner : Runner or None
        Where the runs go (default: local processes).
    progress, cancel
        Callbacks.

    Returns
    -------
    ForwardAnalysis
    """
    t0 = time.perf_counter()
    spec = spec or PendulumSpec()
    settings = settings or SolverSettings()
    ivs = tuple(intervals)
    if not ivs:
        raise ModelSpecError("`intervals` is empty")
    names, fx = _check_names([iv.name for iv in ivs], dict(fixed or {}))
    for angle, preset in (("theta1", math.pi / 4), ("theta2", math.pi / 6)):  # the paper's release angles
        if angle not in names:
            fx.setdefault(angle, preset)
    if n_check < 1:
        raise ModelSpecError(f"`n_check` must be ≥ 1, got {n_check}")
    lower = np.array([iv.lower for iv in ivs])
    upper = np.array([iv.upper for iv in ivs])
    degenerate = [iv.name for iv in ivs if not iv.upper > iv.lower]
    if degenerate:
        raise ModelSpecError(f"interval(s) of {', '.join(degenerate)} have zero width: hold them fixed instead")
    fn = Response(names=names, fixed=fx, spec=spec, settings=settings, t_end=float(t_end), dt_out=float(dt_out))
    with _OwnRunner(runner) as run_obj:
        _say(progress, cancel, 0.0, "surrogate: forward runs", FORWARD)
        sur = build_surrogate(fn, lower, upper, order=order, kind=kind, names=names, seed=seed, runner=run_obj,
                              progress=lambda _, f, s: _say(progress, cancel, 0.75 * f, f"surrogate: {s}", FORWARD))
        d = len(names)
        rng = np.random.default_rng(seed + 1)
        eta = np.vstack([np.zeros((1, d)), rng.uniform(-0.9, 0.9, size=(n_check - 1, d))])
        corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
        pts = lower + (upper - lower) * (np.vstack([eta, corners]) + 1.0) / 2.0
        _say(progress, cancel, 0.78, f"{len(pts)} check runs (held-out points and corners)", FORWARD)
        vals = np.asarray(run_obj.map(fn, list(pts)), dtype=np.float64)
    check, corner_vals = vals[:n_check], vals[n_check:]
    err = sur.evaluate(pts[:n_check]) - check
    t = np.round(np.arange(int(round(t_end / dt_out)) + 1) * dt_out, 12)
    lo, hi = sur.bounds(lower, upper)
    # the true runs are inside the box: the bounds must contain them (surrogate error aside)
    lo = np.minimum(lo, vals.min(axis=0))
    hi = np.maximum(hi, vals.max(axis=0))
    _say(progress, cancel, 1.0, "done", FORWARD)
    return ForwardAnalysis(success=True, message=f"surrogate of order {order} ({kind}) from {sur.samples.shape[0]}"
                                                 f" runs; held-out error {np.sqrt(np.mean(err**2)):.3g} m rms",
                           intervals=ivs, fixed=fx, surrogate=sur, bounds=IntervalBounds.from_vectors(t, lo, hi),
                           vertex_bounds=IntervalBounds.from_vectors(t, corner_vals.min(axis=0),
                                                                     corner_vals.max(axis=0)),
                           samples=tuple(_run_from_vector(t, v) for v in check),
                           holdout_rms=float(np.sqrt(np.mean(err**2))), holdout_max=float(np.max(np.abs(err))),
                           forward_runs=int(sur.samples.shape[0]) + len(pts), elapsed_s=time.perf_counter() - t0)


@dataclass(frozen=True, kw_only=True)
class _Prepared:
    names: tuple[str, ...]
    fixed: Mapping[str, float]
    start: tuple[Interval, ...]
    domain: tuple[Interval, ...]
    surrogate: ChebyshevSurrogate
    holdout_rms: float
    forward_runs: int
    elapsed_s: float
    t: FloatArray
    target_lo: FloatArray
    target_hi: FloatArray


def _prepare(bounds: IntervalBounds, free: Sequence[str], fixed: Mapping[str, float] | None, spec: PendulumSpec,
             settings: SolverSettings, order: int, kind: str, domain: Sequence[Interval] | None, seed: int,
             runner: Any, progress: ProgressFn | None, cancel: CancelFn | None) -> _Prepared:
    """Steps 1 and 2 of the module notes: first estimate, search domain, surrogate (shared by the swarms)."""
    t0 = time.perf_counter()
    names, fx = _check_names(free, dict(fixed or {}))
    if not isinstance(bounds, IntervalBounds):
        raise DataValidationError(f"`bounds` must be IntervalBounds, got {type(bounds).__name__}")
    t = bounds.t
    dt_out = float(t[-1] / (t.size - 1))
    runs = 0
    _say(progress, cancel, 0.0, "first estimate: least squares on the mid-line of the bounds")
    mid = identify_trajectory(t, 0.5 * (bounds.x_min + bounds.x_max), 0.5 * (bounds.y_min + bounds.y_max),
                              free=names, fixed=fx, spec=spec, settings=settings,
                              progress=lambda _, f, s: _say(progress, cancel, 0.2 * f, f"first estimate: {s}"))
    runs += mid.forward_runs
    centre = np.array([p.value for p in mid.parameters])
    run = mid.fitted
    jac = np.abs(np.concatenate([np.column_stack([run.sensitivities[n][:, 0] for n in names]),
                                 np.column_stack([run.sensitivities[n][:, 1] for n in names])], axis=0))
    half = 0.5 * (bounds.upper - bounds.lower)
    colscale = np.linalg.norm(jac, axis=0)
    colscale = np.where(colscale > 0, colscale, 1.0)
    w_s, _ = optimize.nnls(jac / colscale, half)
    w0 = w_s / colscale
    start = tuple(Interval.from_mid(n, float(centre[i]), float(w0[i])) for i, n in enumerate(names))
    if domain is not None:
        dom = tuple(domain)
        if tuple(iv.name for iv in dom) != names:
            raise ModelSpecError(f"`domain` must give intervals of {', '.join(names)} in that order")
    else:
        floor0 = np.array([_DOMAIN_FLOOR_REL * abs(centre[i]) if n.startswith("E_") else _DOMAIN_FLOOR_RAD
                           for i, n in enumerate(names)])
        reach = DOMAIN_FACTOR * w0 + floor0
        dom = tuple(Interval(name=n, lower=float(centre[i] - reach[i]), upper=float(centre[i] + reach[i]))
                    for i, n in enumerate(names))
    fx_all = dict(fx)
    for p in ("theta1", "theta2"):
        if p not in names and p not in fx_all:
            raise ModelSpecError(f"{p} is neither free nor fixed: make it free or give its value")
    fn = Response(names=names, fixed=fx_all, spec=spec, settings=settings, t_end=float(t[-1]), dt_out=dt_out)
    floor = np.array([_DOMAIN_FLOOR_REL * abs(centre[i]) if n.startswith("E_") else _DOMAIN_FLOOR_RAD
                      for i, n in enumerate(names)])
    passes = 1 if domain is not None else REFINE_PASSES + 1
    with _OwnRunner(runner) as run_obj:
        for k in range(passes):
            lower = np.array([iv.lower for iv in dom])
            upper = np.array([iv.upper for iv in dom])
            lo_f, hi_f = 0.2 + 0.6 * k / passes, 0.2 + 0.6 * (k + 1) / passes
            sur = build_surrogate(fn, lower, upper, order=order, kind=kind, names=names, seed=seed, runner=run_obj,
                                  progress=lambda _, f, s: _say(progress, cancel, lo_f + (hi_f - lo_f) * f,
                                                             f"surrogate{' (refined)' if k else ''}: {s}"))
            # two held-out runs inside the domain: the surrogate's error where the swarm searches
            eta = sample_design(len(names), 2, seed=seed + 7) * 0.8
            pts = lower + (upper - lower) * (eta + 1.0) / 2.0
            check = np.asarray(run_obj.map(fn, list(pts)), dtype=np.float64)
            hold = float(np.sqrt(np.mean((sur.evaluate(pts) - check) ** 2)))
            runs += int(sur.samples.shape[0]) + len(pts)
            if hold <= REFINE_RMS_M or k == passes - 1:
                break
            # too coarse over this domain: locate the box on it, then build the surrogate again over the
            # located box with a margin (a domain half as wide makes an order-p fit about 2^(p+1) times better)
            prep = _Prepared(names=names, fixed=fx_all, start=start, domain=dom, surrogate=sur, holdout_rms=hold,
                             forward_runs=runs, elapsed_s=0.0, t=t, target_lo=bounds.lower, target_hi=bounds.upper)
            from .swarm import pso

            x = pso(_fitness(prep), np.repeat(lower, 2), np.repeat(upper, 2), seed=seed).x
            a, b = np.minimum(x[0::2], x[1::2]), np.maximum(x[0::2], x[1::2])
            reach = REFINE_MARGIN * 0.5 * (b - a) + floor
            dom = tuple(Interval(name=n, lower=float(a[i] - reach[i]), upper=float(b[i] + reach[i]))
                        for i, n in enumerate(names))
    return _Prepared(names=names, fixed=fx_all, start=start, domain=dom, surrogate=sur, holdout_rms=hold,
                     forward_runs=runs, elapsed_s=time.perf_counter() - t0, t=t, target_lo=bounds.lower,
                     target_hi=bounds.upper)


def _fitness(prep: _Prepared) -> Callable[[FloatArray], FloatArray]:
    """Eq. (19) for a batch of particles: columns (lower_1, upper_1, lower_2, upper_2, …) of each input."""
    sur = prep.surrogate
    d = len(prep.names)

    def f(x: FloatArray) -> FloatArray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        a, b = x[:, 0::2], x[:, 1::2]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        ylo, yhi = sur.bounds(lo.reshape(-1, d), hi.reshape(-1, d))
        return np.asarray(np.sum((ylo - prep.target_lo) ** 2, axis=1) + np.sum((yhi - prep.target_hi) ** 2, axis=1),
                          dtype=np.float64)

    return f


def _solve(prep: _Prepared, method: str, population: int, iterations: int, seed: int, t_shared: float,
           progress: ProgressFn | None, cancel: CancelFn | None, frac: tuple[float, float]) -> InverseResult:
    if method not in SWARMS:
        raise ModelSpecError(f"`method` must be one of {', '.join(SWARMS)}, got {method!r}")
    lo = np.repeat([iv.lower for iv in prep.domain], 2)
    hi = np.repeat([iv.upper for iv in prep.domain], 2)
    fit = _fitness(prep)
    a, b = frac
    say = lambda _, f, s: _say(progress, None, a + (b - a) * f, f"{method}: {s}")  # noqa: E731
    if method == "ipso":
        # the archive takes positions whose bounds match the given ones to ARCHIVE_RMS_M rms (the seed's h = 0.1
        # is in its own fitness units; in ours, m² summed over every bound, it would admit every position)
        h = prep.target_lo.size * 2 * ARCHIVE_RMS_M**2
        res = SWARMS["ipso"](fit, lo, hi, population=population, iterations=iterations, seed=seed, threshold=h,
                             progress=say, cancel=cancel)
    else:
        res = SWARMS[method](fit, lo, hi, population=population, iterations=iterations, seed=seed, progress=say,
                             cancel=cancel)
    x = np.asarray(res.x, dtype=np.float64)
    ivs = tuple(Interval(name=n, lower=float(min(x[2 * i], x[2 * i + 1])), upper=float(max(x[2 * i], x[2 * i + 1])))
                for i, n in enumerate(prep.names))
    ylo, yhi = prep.surrogate.bounds(np.array([iv.lower for iv in ivs]), np.array([iv.upper for iv in ivs]))
    at_edge = [iv.name for iv, dm in zip(ivs, prep.domain)
               if min(iv.lower - dm.lower, dm.upper - iv.upper) < 1e-9 * max(1.0, abs(dm.upper))]
    msg = res.message
    if at_edge:
        msg += (f"; the interval of {', '.join(at_edge)} reaches the edge of the search domain: widen it"
                " (the first estimate may be poor)")
    return InverseResult(success=bool(res.success) and not at_edge, message=msg, method=method, intervals=ivs,
                         fixed=prep.fixed, fitness=float(res.fitness), swarm=res, surrogate=prep.surrogate,
                         domain=prep.domain, start=prep.start,
                         fitted_bounds=IntervalBounds.from_vectors(prep.t, ylo, yhi), forward_runs=prep.forward_runs,
                         elapsed_s=t_shared + res.elapsed_s, surrogate_holdout_rms=prep.holdout_rms)


def interval_inverse(bounds: IntervalBounds, *, free: Sequence[str] = ("theta1", "theta2"),
                     fixed: Mapping[str, float] | None = None, method: str = "ipso", spec: PendulumSpec | None = None,
                     settings: SolverSettings | None = None, order: int = INVERSE_ORDER, kind: str = "total",
                     population: int = 40, iterations: int = 100, seed: int = 0,
                     domain: Sequence[Interval] | None = None, runner: Any = None,
                     progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> InverseResult:
    """Recover the intervals of the free inputs from response bounds (see the module notes).

    Parameters
    ----------
    bounds : IntervalBounds
        Given bounds of x_B and y_B (m) at uniformly spaced times from 0.
    free : sequence of str
        Uncertain inputs (``theta1``, ``theta2``, ``E_ab``, ``E_oa``).
    fixed : mapping or None
        Exactly known inputs (rad, Pa); both angles must be free or fixed.
    method : {"ipso", "pso"}
    spec, settings
        Model.
    order, kind
        Surrogate order and basis over the search domain.
    population, iterations, seed
        Swarm settings (the seed's 40 and 100 by default).
    domain : sequence of Interval or None
        Search domain (default: around the first estimate).
    runner : Runner or None
        Parallel runner (default: local processes; a Dask runner for a cluster).
    progress, cancel
        Callbacks.

    Returns
    -------
    InverseResult
    """
    spec = spec or PendulumSpec()
    settings = settings or SolverSettings()
    prep = _prepare(bounds, free, fixed, spec, settings, order, kind, domain, seed, runner, progress, cancel)
    res = _solve(prep, method, population, iterations, seed, prep.elapsed_s, progress, cancel, (0.8, 1.0))
    return res


def compare_swarms(bounds: IntervalBounds, *, free: Sequence[str] = ("theta1", "theta2"),
                   fixed: Mapping[str, float] | None = None, spec: PendulumSpec | None = None,
                   settings: SolverSettings | None = None, order: int = INVERSE_ORDER, kind: str = "total",
                   population: int = 40, iterations: int = 100, seed: int = 0,
                   domain: Sequence[Interval] | None = None, runner: Any = None,
                   progress: ProgressFn | None = None,
                   cancel: CancelFn | None = None) -> tuple[InverseResult, InverseResult]:
    """The standard PSO and the improved PSO on one problem: one first estimate and one surrogate, the same
    population, iterations, seed and so the same number of fitness evaluations. Returns (pso, ipso)."""
    spec = spec or PendulumSpec()
    settings = settings or SolverSettings()
    prep = _prepare(bounds, free, fixed, spec, settings, order, kind, domain, seed, runner, progress, cancel)
    a = _solve(prep, "pso", population, iterations, seed, prep.elapsed_s, progress, cancel, (0.8, 0.9))
    b = _solve(prep, "ipso", population, iterations, seed, prep.elapsed_s, progress, cancel, (0.9, 1.0))
    return a, b

