"""Result types of the estimators: :class:`ParameterEstimate`, :class:`RecordFit`, :class:`FitResult`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..identifiability import Uncertainty
from ..jsonsafe import finite_or_none
from ..metrics import ChannelMetrics
from ..models import TermModel
from ..params import ParameterSet
from .options import FitOptions, FloatArray

__all__ = ["ParameterEstimate", "RecordFit", "FitResult", "Minimum"]


@dataclass(frozen=True, kw_only=True)
class ParameterEstimate:
    """One estimated (or fixed) parameter with its uncertainty.

    ``flags`` may contain ``fixed``, ``at_bound``, ``unidentifiable``
    (relative standard error above 50 %, interval containing zero, or a
    direction the data do not determine) and ``strongly_correlated``
    (|ρ| > 0.95 with another parameter, named in ``notes``).
    """

    name: str
    value: float
    stderr: float
    ci: tuple[float, float]
    unit: str
    vary: bool
    lower: float
    upper: float
    flags: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def rel_stderr(self) -> float:
        return abs(self.stderr / self.value) if self.value != 0 else math.inf

    def to_dict(self) -> dict[str, object]:
        return {
            "value": self.value,
            "stderr": finite_or_none(self.stderr),
            "ci95": [finite_or_none(self.ci[0]), finite_or_none(self.ci[1])],
            "rel_stderr": finite_or_none(self.rel_stderr),
            "unit": self.unit,
            "vary": self.vary,
            "bounds": [finite_or_none(self.lower), finite_or_none(self.upper)],
            "flags": list(self.flags),
            "notes": list(self.notes),
        }


@dataclass(frozen=True, kw_only=True)
class RecordFit:
    """Measured and predicted signals of one record (enough to redraw the fit).

    For equation error ``predicted`` holds the model force ``f``; for output
    error the simulated ``x``, ``v``, ``a``.
    """

    name: str
    t: FloatArray
    measured: Mapping[str, FloatArray]
    predicted: Mapping[str, FloatArray]
    fitted_channels: tuple[str, ...]
    x0: tuple[float, float]
    x0_stderr: tuple[float, float]
    x0_mode: str
    simulation_ok: bool
    simulation_message: str


@dataclass(frozen=True, kw_only=True)
class Minimum:
    """Where output error from another start ended (:mod:`nlid_core.estimate.minima`).

    ``distinct`` when some free parameter lies outside both fits' intervals (another minimum, not the same one
    reached again); ``validation_fit`` maps ``"record channel"`` to the fit (per cent) on held-out records, when
    the caller validated it.
    """

    start: str
    fit: FitResult
    distinct: bool
    validation_fit: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class FitResult:
    """Result of an identification (immutable).

    Attributes
    ----------
    success : bool
    message : str
    method : str
        Method that produced the final estimate.
    model : TermModel
    parameters : ParameterSet
        Final values with the bounds and units used.
    estimates : tuple of ParameterEstimate
    uncertainty : Uncertainty or None
        Over the free parameters (and initial states, named ``x0[k]``/``v0[k]``).
    weak_directions : tuple of str
    correlated_pairs : tuple of (str, str, float)
    metrics : tuple of ChannelMetrics
    records : tuple of RecordFit
    cost : float
        ½‖r‖² of the final weighted residual.
    nfev : int
    timing : mapping
        Seconds per stage (``compile_s`` separate).
    stages : mapping
        Parameter values after each stage.
    warnings : tuple of str
    options : FitOptions
    minima : tuple of Minimum
        Output error from other starts, when the residual is not white (:mod:`nlid_core.estimate.minima`).
    baseline_terms : tuple of str
        The linear model the fitted one extends (mass, damping, stiffness and any offset), fitted by output
        error for comparison when the residual is not white; empty otherwise.
    baseline_fit : mapping of str to float
        Its fit (per cent) per ``"record channel"``.
    """

    success: bool
    message: str
    method: str
    model: TermModel
    parameters: ParameterSet
    estimates: tuple[ParameterEstimate, ...]
    uncertainty: Uncertainty | None
    weak_directions: tuple[str, ...]
    correlated_pairs: tuple[tuple[str, str, float], ...]
    metrics: tuple[ChannelMetrics, ...]
    records: tuple[RecordFit, ...]
    cost: float
    nfev: int
    timing: Mapping[str, float]
    stages: Mapping[str, Mapping[str, float]]
    warnings: tuple[str, ...]
    options: FitOptions
    minima: tuple[Minimum, ...] = ()
    baseline_terms: tuple[str, ...] = ()
    baseline_fit: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def estimate(self, name: str) -> ParameterEstimate:
        for e in self.estimates:
            if e.name == name:
                return e
        raise KeyError(f"no parameter `{name}`; parameters are {', '.join(e.name for e in self.estimates)}")

    @property
    def values(self) -> dict[str, float]:
        return self.parameters.as_dict()

    def equation(self, *, with_errors: bool = True) -> str:
        se = {e.name: e.stderr for e in self.estimates if e.vary} if with_errors else None
        return self.model.equation(self.values, se)

