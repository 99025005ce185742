"""Estimator settings: the method and initial-state registries, :class:`Prior` and :class:`FitOptions`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..simulate import INPUT_HOLDS, OUTPUT_CHANNELS
from ..progress import ProgressFn

__all__ = ["METHODS", "INITIAL_STATES", "Prior", "FitOptions", "ProgressFn", "FloatArray"]

FloatArray = NDArray[np.float64]

METHODS: tuple[str, ...] = ("two-stage", "equation-error", "output-error")
INITIAL_STATES: tuple[str, ...] = ("auto", "estimate", "rest", "data")
COVARIANCES: tuple[str, ...] = ("auto", "independent")


@dataclass(frozen=True, kw_only=True)
class Prior:
    """Tikhonov prior ``λ‖D(θ − θ0)‖²`` on some parameters.

    Attributes
    ----------
    values : mapping
        θ0 per parameter name (parameters not named are not regularised).
    lam : float
        Weight relative to the data (1 ≈ as informative as the whole record).
    """

    values: Mapping[str, float]
    lam: float

    def __post_init__(self) -> None:
        if not (self.lam >= 0 and math.isfinite(self.lam)):
            raise ModelSpecError(f"prior `lam` must be >= 0 and finite, got {self.lam}")


@dataclass(frozen=True, kw_only=True)
class FitOptions:
    """Estimator settings (validated on construction).

    Attributes
    ----------
    method : {"two-stage", "equation-error", "output-error"}
    outputs : tuple of {"x", "v", "a"}
        Output-error channels; each must be measured (not derived) in every record.
    channel_weights : mapping
        Extra weight per output channel (default 1 after normalisation).
    initial_state : {"auto", "estimate", "rest", "data"}
        Each record's initial displacement and velocity: estimated, fixed at
        rest (0, 0), or fixed at the first measured (or derived) values.
        ``"auto"`` fixes a record at rest when it starts at rest (its first
        samples stay within the noise band around zero) and estimates it
        otherwise.
    input_hold : {"cubic", "foh", "zoh"}
    substeps : int or None
        RK4 steps per sample; None chooses from the model's fastest rate.
    sample_step : int
        Use every k-th sample in the residual (1 = all).
    force_threshold : float
        Equation error only: drop samples with |f| < force_threshold · max|f|.
    record_weights : tuple of float or None
        Equation error: weight per record.
    prior : Prior or None
        Tikhonov regularisation (both residual types).
    differentiator : str
        How missing v, a are derived for equation error (see ``signals``).
    max_nfev : int
        Output-error function evaluations.
    tol : float
        ``ftol = xtol = gtol`` of the output-error solver.
    confidence : float
        Interval level.
    covariance : {"auto", "independent"}
        ``"auto"``: the Newey–West covariance when a record's residual fails the whiteness test (the intervals
        then hold for serially correlated errors), else the usual one; ``"independent"``: always the usual one
        (for comparing fits of one deliberately simplified model across records, where the structure of the
        residual is the same at every level and only the noise differs).
    """

    method: str = "two-stage"
    outputs: tuple[str, ...] = ("x",)
    channel_weights: Mapping[str, float] = field(default_factory=dict)
    initial_state: str = "auto"
    input_hold: str = "cubic"
    substeps: int | None = None
    sample_step: int = 1
    force_threshold: float = 0.0
    record_weights: tuple[float, ...] | None = None
    prior: Prior | None = None
    differentiator: str = "savgol"
    max_nfev: int = 200
    tol: float = 1e-10
    confidence: float = 0.95
    covariance: str = "auto"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ModelSpecError(f"unknown `method` {self.method!r}; choose from {', '.join(METHODS)}")
        outs = tuple(self.outputs)
        object.__setattr__(self, "outputs", outs)
        if not outs or any(o not in OUTPUT_CHANNELS for o in outs) or len(set(outs)) != len(outs):
            raise ModelSpecError(f"`outputs` must be distinct channels from {OUTPUT_CHANNELS}, got {outs}")
        bad = [c for c in self.channel_weights if c not in OUTPUT_CHANNELS]
        if bad or any(not (w > 0 and math.isfinite(w)) for w in self.channel_weights.values()):
            raise ModelSpecError(f"`channel_weights` must map {OUTPUT_CHANNELS} to positive numbers, got {dict(self.channel_weights)}")
        if self.initial_state not in INITIAL_STATES:
            raise ModelSpecError(
                f"unknown `initial_state` {self.initial_state!r}; choose from {', '.join(INITIAL_STATES)}"
            )
        if self.input_hold not in INPUT_HOLDS:
            raise ModelSpecError(f"unknown `input_hold` {self.input_hold!r}; choose from {', '.join(INPUT_HOLDS)}")
        if self.substeps is not None and int(self.substeps) < 1:
            raise ModelSpecError(f"`substeps` must be >= 1, got {self.substeps}")
        if int(self.sample_step) < 1:
            raise ModelSpecError(f"`sample_step` must be >= 1, got {self.sample_step}")
        if not 0 <= self.force_threshold < 1:
            raise ModelSpecError(f"`force_threshold` is a fraction of max|f| in [0, 1), got {self.force_threshold}")
        from ..signals import DIFFERENTIATORS

        if not callable(self.differentiator) and self.differentiator not in DIFFERENTIATORS:
            raise ModelSpecError(
                f"unknown `differentiator` {self.differentiator!r}; choose from {', '.join(DIFFERENTIATORS)}"
            )
        if self.covariance not in COVARIANCES:
            raise ModelSpecError(f"unknown `covariance` {self.covariance!r}; choose from {', '.join(COVARIANCES)}")
        if self.max_nfev < 1:
            raise ModelSpecError(f"`max_nfev` must be >= 1, got {self.max_nfev}")
        if not 0 < self.tol < 1:
            raise ModelSpecError(f"`tol` must be in (0, 1), got {self.tol}")
        if not 0 < self.confidence < 1:
            raise ModelSpecError(f"`confidence` must be in (0, 1), got {self.confidence}")

