"""The values of the pendulum's interval analyses: a parameter interval, bounds of the tip's trajectory
over time (as a table with the columns of :data:`BOUNDS_COLUMNS`), the response of one run, and the results of the
forward and inverse problems (see :mod:`.interval`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..errors import DataValidationError, ModelSpecError
from .inverse import UNITS, check_trajectory
from .pendulum import PARAMETERS, PendulumRun, PendulumSpec, SolverSettings, tip_response
from .surrogate import ChebyshevSurrogate
from .swarm import SwarmResult

FloatArray = NDArray[np.float64]

__all__ = ["BOUNDS_COLUMNS", "Interval", "IntervalBounds", "Response", "ForwardAnalysis", "InverseResult"]


#: Columns of a bounds table.
BOUNDS_COLUMNS = ("t", "x_B_min", "x_B_max", "y_B_min", "y_B_max")


@dataclass(frozen=True, kw_only=True)
class Interval:
    """An input interval [lower, upper] (rad or Pa).

    Attributes
    ----------
    name : str
    lower, upper : float
    """

    name: str
    lower: float
    upper: float

    def __post_init__(self) -> None:
        if self.name not in PARAMETERS:
            raise ModelSpecError(f"interval `name` must be one of {', '.join(PARAMETERS)}, got {self.name!r}")
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)) or self.upper < self.lower:
            raise ModelSpecError(f"interval of {self.name}: need finite lower ≤ upper, got [{self.lower}, {self.upper}]")
        if self.name.startswith("E_") and self.lower <= 0:
            raise ModelSpecError(f"interval of {self.name}: a modulus must be positive, got lower {self.lower:.6g} Pa")

    @property
    def mid(self) -> float:
        """Midpoint."""
        return 0.5 * (self.lower + self.upper)

    @property
    def radius(self) -> float:
        """Radius (half-width)."""
        return 0.5 * (self.upper - self.lower)

    @classmethod
    def from_mid(cls, name: str, mid: float, radius: float) -> Interval:
        """``mid ± radius``."""
        if not radius >= 0:
            raise ModelSpecError(f"interval of {name}: the radius must be ≥ 0, got {radius!r}")
        return cls(name=name, lower=mid - radius, upper=mid + radius)

    def to_dict(self) -> dict[str, float | str]:
        return {"lower": self.lower, "upper": self.upper, "mid": self.mid, "radius": self.radius,
                "unit": UNITS[self.name]}


@dataclass(frozen=True, kw_only=True)
class IntervalBounds:
    """Lower and upper bounds of the tip response at times ``t``.

    Attributes
    ----------
    t : (n,) ndarray, s
    x_min, x_max, y_min, y_max : (n,) ndarray, m
    """

    t: FloatArray
    x_min: FloatArray
    x_max: FloatArray
    y_min: FloatArray
    y_max: FloatArray

    @property
    def lower(self) -> FloatArray:
        """(2n,) lower bounds, x then y."""
        return np.concatenate([self.x_min, self.y_min])

    @property
    def upper(self) -> FloatArray:
        """(2n,) upper bounds, x then y."""
        return np.concatenate([self.x_max, self.y_max])

    def to_frame(self) -> pd.DataFrame:
        """Columns ``t, x_B_min, x_B_max, y_B_min, y_B_max``."""
        return pd.DataFrame(dict(zip(BOUNDS_COLUMNS, (self.t, self.x_min, self.x_max, self.y_min, self.y_max))))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> IntervalBounds:
        """From a table with the columns of :data:`BOUNDS_COLUMNS` (rows uniformly spaced from t = 0).

        Raises
        ------
        DataValidationError
            A column missing, a non-finite value, non-uniform times or a lower bound above its upper one.
        """
        missing = [c for c in BOUNDS_COLUMNS if c not in frame.columns]
        if missing:
            raise DataValidationError(f"the bounds table lacks column(s) {', '.join(missing)}; it needs "
                                      f"{', '.join(BOUNDS_COLUMNS)}")
        cols = {}
        for c in BOUNDS_COLUMNS:
            v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(v))
            if bad.size:
                raise DataValidationError(f"column `{c}` has a missing or non-numeric value in row {bad[0] + 1}")
            cols[c] = v
        check_trajectory(cols["t"], cols["x_B_min"], cols["y_B_min"])
        for a, b in (("x_B_min", "x_B_max"), ("y_B_min", "y_B_max")):
            bad = np.flatnonzero(cols[a] > cols[b])
            if bad.size:
                raise DataValidationError(f"row {bad[0] + 1}: `{a}` ({cols[a][bad[0]]:.6g}) is above `{b}`"
                                          f" ({cols[b][bad[0]]:.6g})")
        return cls(t=cols["t"], x_min=cols["x_B_min"], x_max=cols["x_B_max"], y_min=cols["y_B_min"],
                   y_max=cols["y_B_max"])

    @classmethod
    def from_vectors(cls, t: FloatArray, lower: FloatArray, upper: FloatArray) -> IntervalBounds:
        """From (2n,) lower and upper vectors (x then y)."""
        n = t.size
        return cls(t=t, x_min=lower[:n], x_max=upper[:n], y_min=lower[n:], y_max=upper[n:])


@dataclass(frozen=True)
class Response:
    """Picklable forward model for parallel runs: free parameter values → tip response (x_B…, y_B…), m.

    Attributes
    ----------
    names : tuple of str
        Free parameters, in the order of the vectors passed.
    fixed : mapping
        Held values of the other parameters (both angles must be free or fixed).
    spec, settings, t_end, dt_out
        As for :func:`~nlid_core.multibody.pendulum.simulate`.
    """

    names: tuple[str, ...]
    fixed: Mapping[str, float]
    spec: PendulumSpec
    settings: SolverSettings
    t_end: float
    dt_out: float

    def __call__(self, p: FloatArray) -> FloatArray:
        vals = [float(v) for v in p] + [float(v) for v in self.fixed.values()]
        names = list(self.names) + list(self.fixed)
        return tip_response(vals, names, spec=self.spec, t_end=self.t_end, dt_out=self.dt_out,
                            settings=self.settings)


@dataclass(frozen=True, kw_only=True)
class ForwardAnalysis:
    """Result of :func:`interval_forward`.

    Attributes
    ----------
    success, message
    intervals : tuple of Interval
    fixed : mapping
    surrogate : ChebyshevSurrogate
    bounds : IntervalBounds
        From the surrogate over the whole box.
    vertex_bounds : IntervalBounds
        From true runs at the box's corners only (misses interior extremes).
    samples : tuple of PendulumRun
        True runs at held-out points inside the box (the centre first).
    holdout_rms, holdout_max : float
        Surrogate error at those runs (m).
    forward_runs : int
    elapsed_s : float
    """

    success: bool
    message: str
    intervals: tuple[Interval, ...]
    fixed: Mapping[str, float]
    surrogate: ChebyshevSurrogate
    bounds: IntervalBounds
    vertex_bounds: IntervalBounds
    samples: tuple[PendulumRun, ...]
    holdout_rms: float
    holdout_max: float
    forward_runs: int
    elapsed_s: float

    def to_dict(self) -> dict[str, object]:
        return {"success": self.success, "message": self.message,
                "intervals": {iv.name: iv.to_dict() for iv in self.intervals}, "fixed": dict(self.fixed),
                "surrogate": {"order": self.surrogate.order, "kind": self.surrogate.kind,
                              "coefficients": int(self.surrogate.indices.shape[0]),
                              "samples": int(self.surrogate.samples.shape[0]),
                              "holdout_rms_m": self.holdout_rms if math.isfinite(self.holdout_rms) else None,
                              "holdout_max_m": self.holdout_max if math.isfinite(self.holdout_max) else None},
                "forward_runs": self.forward_runs, "elapsed_s": self.elapsed_s,
                "bounds": self.bounds.to_frame().to_dict(orient="list")}


@dataclass(frozen=True, kw_only=True)
class InverseResult:
    """Result of :func:`interval_inverse` (one swarm).

    Attributes
    ----------
    success, message
    method : str
        ``"pso"`` or ``"ipso"``.
    intervals : tuple of Interval
        The recovered intervals of the free inputs.
    fixed : mapping
    fitness : float
        The seed's eq. (19) at the result (m²).
    swarm : SwarmResult
    surrogate : ChebyshevSurrogate
    domain : tuple of Interval
        The search domain the surrogate covers.
    start : tuple of Interval
        The first (linearised) estimate.
    fitted_bounds : IntervalBounds
        The surrogate's bounds at the result.
    forward_runs : int
        Model runs: the first estimate plus the surrogate (shared when both swarms run).
    elapsed_s : float
        Wall time including the shared steps.
    """

    success: bool
    message: str
    method: str
    intervals: tuple[Interval, ...]
    fixed: Mapping[str, float]
    fitness: float
    swarm: SwarmResult
    surrogate: ChebyshevSurrogate
    domain: tuple[Interval, ...]
    start: tuple[Interval, ...]
    fitted_bounds: IntervalBounds
    forward_runs: int
    elapsed_s: float
    surrogate_holdout_rms: float = math.nan

    def interval(self, name: str) -> Interval:
        for iv in self.intervals:
            if iv.name == name:
                return iv
        raise ModelSpecError(f"no interval {name!r}; free: {', '.join(iv.name for iv in self.intervals)}")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: ``intervals`` {name: {lower, upper, mid, radius, unit}}, fitness, forward runs, time."""
        return {"success": self.success, "message": self.message, "method": self.method,
                "intervals": {iv.name: iv.to_dict() for iv in self.intervals}, "fixed": dict(self.fixed),
                "fitness": self.fitness if math.isfinite(self.fitness) else None, "forward_runs": self.forward_runs,
                "fitness_evaluations": self.swarm.evaluations, "iterations": self.swarm.iterations,
                "elapsed_s": self.elapsed_s, "swarm_s": self.swarm.elapsed_s,
                "history": [float(h) if math.isfinite(h) else None for h in self.swarm.history],
                "domain": {iv.name: iv.to_dict() for iv in self.domain},
                "start": {iv.name: iv.to_dict() for iv in self.start},
                "surrogate": {"order": self.surrogate.order, "kind": self.surrogate.kind,
                              "coefficients": int(self.surrogate.indices.shape[0]),
                              "samples": int(self.surrogate.samples.shape[0]),
                              "holdout_rms_m": (self.surrogate_holdout_rms
                                                if math.isfinite(self.surrogate_holdout_rms) else None)}}
