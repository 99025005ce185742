r"""Deterministic inverse problem of the flexible double pendulum: release angles (and a rod's modulus)
from a measured tip trajectory.

Given tip positions :math:`\bar x_B(t_k), \bar y_B(t_k)` at uniformly spaced times from :math:`t_0 = 0`,
find the free parameters :math:`p` (among ``theta1``, ``theta2``, ``E_ab``, ``E_oa``) minimising the seed
paper's eq. (3),

.. math:: \min_p \sum_k (x_B(t_k; p) - \bar x_B(t_k))^2 + (y_B(t_k; p) - \bar y_B(t_k))^2 .

Two routes:

- ``"lsq"``: Levenberg–Marquardt (scipy ``least_squares``) with the Jacobian from the forward
  sensitivities of the generalized-α scheme itself (:func:`~nlid_core.multibody.pendulum.simulate` with
  ``sensitivities``): exact derivatives of the discrete solution, one run per iteration, no finite
  differences.
- ``"pso"``: a particle swarm (the seed's improved PSO) on a Chebyshev surrogate of the trajectory built once
  over a box around the start (its runs in parallel), then the same Jacobian at the swarm's optimum for the
  standard errors.

The start comes from the first row when it is at t = 0: the pendulum is released from rest and straight,
so the tip position fixes the angles by two-link inverse kinematics (two mirror solutions: both are tried,
the one whose trajectory fits better is kept). Standard errors from the final Jacobian
:math:`J` (m per unit of each parameter): :math:`\operatorname{cov} = s^2 (J^T J)^{-1}`,
:math:`s^2 = \mathrm{RSS}/(N - n_p)`; 95 % intervals with Student's t on :math:`N - n_p` degrees of freedom
(Seber & Wild, *Nonlinear Regression*, 1989, §2.1). The residual here is mostly model and rounding error,
not white noise, so the intervals describe the misfit's size rather than a sampling distribution.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..errors import DataValidationError, ModelSpecError, SimulationError
from ..estimate.results import ParameterEstimate
from ..identifiability import CORR_LIMIT, RSE_LIMIT, uncertainty_from_jacobian
from ..jsonsafe import finite_or_none
from ..progress import CancelFn, ProgressFn
from .pendulum import PARAMETERS, PendulumRun, PendulumSpec, SolverSettings, simulate

__all__ = ["DeterministicFit", "identify_trajectory", "start_angles", "check_trajectory",
           "UNITS", "METHODS"]

FloatArray = NDArray[np.float64]

#: Unit of each parameter the inverse problems estimate.
UNITS: Mapping[str, str] = {"theta1": "rad", "theta2": "rad", "E_ab": "Pa", "E_oa": "Pa"}
#: Deterministic inverse methods.
METHODS = ("lsq", "pso")
#: Relative tolerance on uniform row spacing of a trajectory.
_SPACING_TOL = 1e-6


@dataclass(frozen=True, kw_only=True)
class DeterministicFit:
    """Result of :func:`identify_trajectory`.

    Attributes
    ----------
    success, message
    method : str
        ``"lsq"`` or ``"pso"``.
    parameters : tuple of ParameterEstimate
        The free parameters.
    fixed : mapping
        Held parameter values.
    rms_m : float
        RMS of the tip misfit over x and y at the fitted values (m).
    cost : float
        Sum of squared misfits, the seed's eq. (3) (m²).
    fitted : PendulumRun
        The trajectory at the fitted values.
    forward_runs : int
        Model runs used (a run with sensitivities counts once).
    elapsed_s : float
    history : (k,) ndarray
        Cost after each evaluation (LSQ) or the swarm's best cost per iteration (PSO), m².
    condition_number : float
        Of the scaled final Jacobian.
    """

    success: bool
    message: str
    method: str
    parameters: tuple[ParameterEstimate, ...]
    fixed: Mapping[str, float]
    rms_m: float
    cost: float
    fitted: PendulumRun
    forward_runs: int
    elapsed_s: float
    history: FloatArray = field(default_factory=lambda: np.zeros(0))
    condition_number: float = math.nan

    def estimate(self, name: str) -> ParameterEstimate:
        """The estimate of ``name``."""
        for p in self.parameters:
            if p.name == name:
                return p
        raise ModelSpecError(f"`name` {name!r} was not estimated; free: {', '.join(p.name for p in self.parameters)}")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: parameters (each estimate's own document: value, stderr, ci95, unit, flags, ...), fixed
        values and the figures of merit."""
        return {"success": self.success, "message": self.message, "method": self.method,
                "parameters": {p.name: p.to_dict() for p in self.parameters},
                "fixed": dict(self.fixed), "rms_m": finite_or_none(self.rms_m), "cost_m2": finite_or_none(self.cost),
                "forward_runs": self.forward_runs, "elapsed_s": self.elapsed_s,
                "condition_number": finite_or_none(self.condition_number)}


def check_trajectory(t: ArrayLike, x_b: ArrayLike, y_b: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    """Validate a tip trajectory: finite, same length (≥ 3 rows), uniformly spaced times from 0.

    Returns
    -------
    t, x_b, y_b : (n,) ndarray
    dt_out : float
        The row spacing (s).

    Raises
    ------
    DataValidationError
        Naming what is wrong (row numbers counted from 1).
    """
    arrays = []
    for name, v in (("t", t), ("x_B", x_b), ("y_B", y_b)):
        a = np.asarray(v, dtype=np.float64).ravel()
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise DataValidationError(f"`{name}` has a missing or non-finite value in row {bad[0] + 1}")
        arrays.append(a)
    tt, xx, yy = arrays
    if not tt.size == xx.size == yy.size:
        raise DataValidationError(f"`t`, `x_B`, `y_B` differ in length ({tt.size}, {xx.size}, {yy.size})")
    if tt.size < 3:
        raise DataValidationError(f"a trajectory needs at least 3 rows, got {tt.size}")
    if abs(tt[0]) > 1e-9:
        raise DataValidationError(f"the first time must be 0 s (release from rest), got {tt[0]:.6g} s")
    steps = np.diff(tt)
    if np.any(steps <= 0):
        k = int(np.flatnonzero(steps <= 0)[0])
        raise DataValidationError(f"times must increase: row {k + 2} ({tt[k + 1]:.6g} s) follows {tt[k]:.6g} s")
    dt_out = float(tt[-1] / (tt.size - 1))
    if np.max(np.abs(tt - dt_out * np.arange(tt.size))) > _SPACING_TOL * max(tt[-1], 1.0) + 1e-9:
        raise DataValidationError("times must be uniformly spaced (rows at multiples of one step from 0 s)")
    return tt, xx, yy, dt_out


def start_angles(x0: float, y0: float, spec: PendulumSpec) -> list[tuple[float, float]]:
    """Release angles (θ1, θ2) below the horizontal that put the tip at (x0, y0) with both rods straight.

    Two-link inverse kinematics: A lies on the circle of radius L_OA about O and on the circle of radius
    L_AB about B; the (up to two) intersections give the candidates. A tip out of reach gives the
    stretched configuration pointing at it.
    """
    l1, l2 = spec.length_oa, spec.length_ab
    d = math.hypot(x0, y0)
    if d < 1e-12:
        raise DataValidationError("the first tip position is at the pivot O: the release angles are not determined")
    ex, ey = x0 / d, y0 / d
    a = (l1 * l1 - l2 * l2 + d * d) / (2 * d)
    h2 = l1 * l1 - a * a
    cands = []
    for sign in ((1.0, -1.0) if h2 > 0 else (0.0,)):
        h = math.sqrt(max(h2, 0.0)) * sign
        ax, ay = a * ex - h * ey, a * ey + h * ex
        th1 = math.atan2(-ay, ax)
        th2 = math.atan2(-(y0 - ay), x0 - ax)
        cands.append((th1, th2))
    return cands


def _check_names(free: Sequence[str], fixed: Mapping[str, float]) -> tuple[tuple[str, ...], dict[str, float]]:
    names = tuple(free)
    if not names:
        raise ModelSpecError("`free` is empty: name at least one of " + ", ".join(PARAMETERS))
    for n in names:
        if n not in PARAMETERS:
            raise ModelSpecError(f"`free`: unknown parameter {n!r}; known: {', '.join(PARAMETERS)}")
    if len(set(names)) != len(names):
        raise ModelSpecError(f"`free` names a parameter twice: {', '.join(names)}")
    fx = {}
    for n, v in fixed.items():
        if n not in PARAMETERS:
            raise ModelSpecError(f"`fixed`: unknown parameter {n!r}; known: {', '.join(PARAMETERS)}")
        if n in names:
            raise ModelSpecError(f"{n!r} is both free and fixed")
        if not math.isfinite(float(v)):
            raise ModelSpecError(f"`fixed` value of {n!r} must be finite, got {v!r}")
        fx[n] = float(v)
    return names, fx


def _spec_with(spec: PendulumSpec, values: Mapping[str, float]) -> PendulumSpec:
    from dataclasses import replace

    return replace(spec, e_ab=float(values.get("E_ab", spec.e_ab)), e_oa=float(values.get("E_oa", spec.e_oa)))


def _run(values: Mapping[str, float], spec: PendulumSpec, settings: SolverSettings, t_end: float, dt_out: float,
         sens: Sequence[str]) -> PendulumRun:
    if "theta1" not in values or "theta2" not in values:
        raise ModelSpecError("both release angles are needed: make `theta1` and `theta2` free or fixed")
    for n in ("E_ab", "E_oa"):
        if n in values and not values[n] > 0:
            raise SimulationError(f"{n} = {values[n]:.6g} Pa is not positive")
    return simulate(values["theta1"], values["theta2"], spec=_spec_with(spec, values), t_end=t_end, dt_out=dt_out,
                    settings=settings, sensitivities=tuple(n for n in sens))


def _scales(names: Sequence[str], start: Mapping[str, float]) -> FloatArray:
    """Typical size per parameter: 1 rad for angles, the start value for moduli."""
    return np.array([abs(start[n]) if n.startswith("E_") else 1.0 for n in names], dtype=np.float64)


def _estimates(names: Sequence[str], p: FloatArray, jac: FloatArray, resid: FloatArray,
               ) -> tuple[tuple[ParameterEstimate, ...], float]:
    """Estimates with standard errors, 95 % intervals and flags from the final Jacobian (columns per unit of
    p), through the one uncertainty path (singular values below 1e-12 of the largest: not determined)."""
    unc = uncertainty_from_jacobian(jac, resid, list(names), rank_rtol=1e-12)
    out = []
    for i, n in enumerate(names):
        se, value = float(unc.stderr[i]), float(p[i])
        flags: list[str] = []
        notes: list[str] = []
        if not (math.isfinite(se) and se <= RSE_LIMIT * abs(value)):
            flags.append("unidentifiable")
        for j, m in enumerate(names):
            if j != i and abs(unc.correlation[i, j]) > CORR_LIMIT:
                if "strongly_correlated" not in flags:
                    flags.append("strongly_correlated")
                notes.append(f"ρ({n}, {m}) = {unc.correlation[i, j]:+.3f}")
        half = float(unc.ci_halfwidth[i])
        out.append(ParameterEstimate(name=n, value=value, stderr=se, ci=(value - half, value + half), unit=UNITS[n],
                                     vary=True, lower=-math.inf, upper=math.inf, flags=tuple(flags), notes=tuple(notes)))
    return tuple(out), float(unc.condition_number)


def _jacobian(run: PendulumRun, names: Sequence[str]) -> FloatArray:
    return np.concatenate([np.column_stack([run.sensitivities[n][:, 0] for n in names]),
                           np.column_stack([run.sensitivities[n][:, 1] for n in names])], axis=0)


def identify_trajectory(t: ArrayLike, x_b: ArrayLike, y_b: ArrayLike, *,
                        free: Sequence[str] = ("theta1", "theta2"), fixed: Mapping[str, float] | None = None,
                        start: Mapping[str, float] | None = None, spec: PendulumSpec | None = None,
                        settings: SolverSettings | None = None, method: str = "lsq", runner: object | None = None,
                        seed: int = 0, progress: ProgressFn | None = None,
                        cancel: CancelFn | None = None) -> DeterministicFit:
    """Estimate the free parameters from a tip trajectory (see the module notes).

    Parameters
    ----------
    t, x_b, y_b : (n,) array_like
        Times (s, uniformly spaced from 0) and tip positions (m).
    free : sequence of str
        Parameters to estimate, among ``theta1``, ``theta2``, ``E_ab``, ``E_oa``.
    fixed : mapping or None
        Held values (rad, Pa); angles neither free nor fixed come from the first row.
    start : mapping or None
        Start values; default: angles from the first row (inverse kinematics), moduli from ``spec``.
    spec : PendulumSpec or None
        Geometry and materials (default: the paper's preset).
    settings : SolverSettings or None
    method : {"lsq", "pso"}
    runner : Runner or None
        Parallel runner for the surrogate runs of ``"pso"`` (default: local processes).
    seed : int
        Seed of the swarm.
    progress : callable or None
        ``progress(stage, fraction, message)`` (stage ``"fit"``).
    cancel : callable or None
        Returns True to stop (a cancelled fit raises ``SimulationError``).

    Returns
    -------
    DeterministicFit

    Raises
    ------
    DataValidationError, ModelSpecError
        Bad trajectory or parameter names.
    SimulationError
        The model cannot be simulated at the start, or the fit was cancelled.
    """
    t0 = time.perf_counter()
    spec = spec or PendulumSpec()
    settings = settings or SolverSettings()
    if method not in METHODS:
        raise ModelSpecError(f"`method` must be one of {', '.join(METHODS)}, got {method!r}")
    tt, xx, yy, dt_out = check_trajectory(t, x_b, y_b)
    names, fx = _check_names(free, fixed or {})
    data = np.concatenate([xx, yy])
    t_end = float(tt[-1])

    def say(frac: float, text: str) -> None:
        if progress is not None:
            progress("fit", frac, text)
        if cancel is not None and cancel():
            raise SimulationError("the fit was cancelled")

    base: dict[str, float] = {"E_ab": spec.e_ab, "E_oa": spec.e_oa, **fx}
    prob = _TrajectoryProblem(names=names, data=data, spec=spec, settings=settings, t_end=t_end, dt_out=dt_out,
                              say=say)
    best_c = prob.best_start(_start_candidates(float(xx[0]), float(yy[0]), spec, base, names, start))
    p0 = np.array([best_c[n] for n in names], dtype=np.float64)
    if method == "pso":
        p0, runs_pso, hist = _swarm_start(names, best_c, tt, data, spec, settings, t_end, dt_out, runner, seed,
                                          say)
        prob.runs += runs_pso
        prob.history.extend(hist)
    prob.around(best_c)
    if method == "lsq":
        sol = optimize.least_squares(prob.residual, p0 / prob.scale, jac=prob.jacobian, method="lm", xtol=1e-12,
                                     ftol=1e-14, gtol=1e-14, max_nfev=60)
        z = sol.x
        ok, msg = bool(sol.success), str(sol.message)
    else:
        z = p0 / prob.scale
        ok, msg = True, "particle swarm on the trajectory surrogate, standard errors from the Jacobian at its optimum"
    final = prob.run_at(z)
    r = np.concatenate([final.x_b, final.y_b]) - data
    ests, cond = _estimates(names, z * prob.scale, _jacobian(final, names), r)
    say(1.0, "done")
    return DeterministicFit(success=ok, message=msg, method=method, parameters=ests, fixed=fx,
                            rms_m=float(np.sqrt(np.mean(r**2))), cost=float(r @ r), fitted=final,
                            forward_runs=prob.runs, elapsed_s=time.perf_counter() - t0,
                            history=np.asarray(prob.history, dtype=np.float64), condition_number=cond)


def _start_candidates(x0: float, y0: float, spec: PendulumSpec, base: Mapping[str, float], names: Sequence[str],
                      start: Mapping[str, float] | None) -> list[dict[str, float]]:
    """The given start, else both release configurations that put the tip at its first sample (distinct in the
    free parameters: a held angle makes the mirror solutions coincide in the free one)."""
    if start:
        for n, v in start.items():
            if n not in PARAMETERS or not math.isfinite(float(v)):
                raise ModelSpecError(f"`start`: {n!r} = {v!r} is not a known parameter with a finite value")
        return [{**base, **{n: float(v) for n, v in start.items()}}]
    candidates = []
    for th1, th2 in start_angles(x0, y0, spec):
        c = dict(base)
        c.setdefault("theta1", th1)
        c.setdefault("theta2", th2)
        candidates.append(c)
    uniq: list[dict[str, float]] = []
    for c in candidates:
        if not any(all(abs(c[n] - u[n]) < 1e-9 for n in names) for u in uniq):
            uniq.append(c)
    return uniq


class _TrajectoryProblem:
    """The misfit of the tip trajectory as a function of the free parameters over their scales, with the runs
    counted, the cost history kept and the last run cached (the Jacobian comes with it)."""

    def __init__(self, *, names: Sequence[str], data: FloatArray, spec: PendulumSpec, settings: SolverSettings,
                 t_end: float, dt_out: float, say: Callable[[float, str], None]) -> None:
        self.names, self.data, self.spec, self.settings = list(names), data, spec, settings
        self.t_end, self.dt_out, self.say = t_end, dt_out, say
        self.runs = 0
        self.history: list[float] = []
        self.base: dict[str, float] = {}
        self.scale = np.ones(len(names))
        self._cache: dict[bytes, PendulumRun] = {}

    def best_start(self, candidates: Sequence[dict[str, float]]) -> dict[str, float]:
        """The candidate whose run is closest to the data (its cost starts the history)."""
        best_c, best_cost = None, math.inf
        for c in candidates:
            self.say(0.02, "checking the start values")
            run = _run(c, self.spec, self.settings, self.t_end, self.dt_out, ())
            self.runs += 1
            if run.success:
                r = np.concatenate([run.x_b, run.y_b]) - self.data
                cost = float(r @ r)
                if cost < best_cost:
                    best_c, best_cost = c, cost
        if best_c is None:
            raise SimulationError("the model cannot be simulated from the start values (both release configurations"
                                  " failed); give start values")
        self.history.append(best_cost)
        return best_c

    def around(self, base: Mapping[str, float]) -> None:
        """Evaluate around ``base`` (the held values), the free parameters scaled by their typical sizes."""
        self.base = dict(base)
        self.scale = _scales(self.names, self.base)

    def run_at(self, z: FloatArray) -> PendulumRun:
        """The run at the scaled free parameters ``z`` (with sensitivities; a failure raises)."""
        key = np.asarray(z, dtype=np.float64).tobytes()
        if key not in self._cache:
            vals = dict(self.base)
            vals.update({n: float(z[i] * self.scale[i]) for i, n in enumerate(self.names)})
            run = _run(vals, self.spec, self.settings, self.t_end, self.dt_out, self.names)
            self.runs += 1
            if not run.success:
                raise SimulationError(f"the model cannot be simulated at {vals}: {run.message}")
            self._cache.clear()
            self._cache[key] = run
        return self._cache[key]

    def residual(self, z: FloatArray) -> FloatArray:
        """Simulated minus measured tip positions (x then y), m."""
        run = self.run_at(z)
        r: FloatArray = np.concatenate([run.x_b, run.y_b]) - self.data
        self.history.append(float(r @ r))
        self.say(min(0.95, 0.1 + 0.08 * len(self.history)),
                 f"least squares: evaluation {len(self.history)}, cost {self.history[-1]:.3g} m²")
        return r

    def jacobian(self, z: FloatArray) -> FloatArray:
        """∂residual/∂z (the sensitivities of the cached run)."""
        return _jacobian(self.run_at(z), self.names) * self.scale


def _swarm_start(names: Sequence[str], base: Mapping[str, float], tt: FloatArray, data: FloatArray,
                 spec: PendulumSpec, settings: SolverSettings, t_end: float, dt_out: float, runner: object | None,
                 seed: int, say: Callable[[float, str], None]) -> tuple[FloatArray, int, list[float]]:
    """The swarm route: a Chebyshev surrogate of the trajectory over a box around ``base`` (±0.05 rad for
    angles, ±20 % for moduli), the improved PSO on it; returns the optimum, the runs used and the history."""
    from .interval import Response
    from ..runners import runner as make_runner
    from .surrogate import build_surrogate
    from .swarm import ipso

    centre = np.array([base[n] for n in names], dtype=np.float64)
    half = np.array([0.2 * abs(base[n]) if n.startswith("E_") else 0.05 for n in names])
    lower, upper = centre - half, centre + half
    fixed = {n: v for n, v in base.items() if n not in names}
    fn = Response(names=tuple(names), fixed=fixed, spec=spec, settings=settings, t_end=t_end, dt_out=dt_out)
    say(0.05, "trajectory surrogate: forward runs")
    own = runner is None
    run_obj = make_runner() if own else runner
    try:
        sur = build_surrogate(fn, lower, upper, order=4, kind="total", names=tuple(names), runner=run_obj,  # type: ignore[arg-type]
                              progress=lambda _, f, s: say(0.05 + 0.5 * f, f"trajectory surrogate: {s}"))
    finally:
        if own and hasattr(run_obj, "close"):
            run_obj.close()

    def fitness(x: FloatArray) -> FloatArray:
        pred = sur.evaluate(x)
        out: FloatArray = np.sum((pred - data) ** 2, axis=1).astype(np.float64)
        return out

    res = ipso(fitness, lower, upper, seed=seed, progress=lambda _, f, s: say(0.55 + 0.35 * f, f"swarm: {s}"))
    return np.asarray(res.x, dtype=np.float64), int(sur.samples.shape[0]), [float(h) for h in res.history]
