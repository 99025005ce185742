"""Settings and results of the staged LuGre identification (:func:`.staged.identify_friction`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ModelSpecError
from ..estimate import ParameterEstimate
from ..jsonsafe import finite_or_none
from ..models import TermModel
from ..params import FloatArray
from ..terms.models import LUGRE_AXIS
from .plateaus import PlateauDetection
from .steady import CurveFit

__all__ = ["FrictionOptions", "Stage", "PreslidingFit", "FrictionResult", "SteadyReplay", "LUGRE_MODEL", "STAGE1",
           "STAGE2", "PARAMS"]

#: The model identified: a mass with LuGre friction.
LUGRE_MODEL = LUGRE_AXIS
#: Parameters of the steady-state stage and of the pre-sliding stage.
STAGE1 = ("Fc", "Fs", "vs", "sigma2")
STAGE2 = ("sigma0", "sigma1")
PARAMS = ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs")


@dataclass(frozen=True, kw_only=True)
class FrictionOptions:
    """Settings of :func:`identify_friction`.

    Attributes
    ----------
    fixed : mapping
        Parameters held at given values (any of ``m0 sigma0 sigma1 sigma2 Fc Fs vs``); ``m0`` fixed is
        the known moving mass (kg), also used for the plateaus' inertia correction.
    polish : bool
        Run the joint polish (stage 3).
    confidence : float
    block_s, min_duration_s, settle_fraction, rel_tol, max_scatter : float
        Plateau detection (see :func:`.plateaus.find_plateaus`).
    max_nfev : int
        Function evaluations of each output-error solve.
    """

    fixed: Mapping[str, float] = field(default_factory=dict)
    polish: bool = False
    confidence: float = 0.95
    block_s: float = 0.02
    min_duration_s: float = 0.2
    settle_fraction: float = 0.3
    rel_tol: float = 0.02
    max_scatter: float = 0.1
    max_nfev: int = 100
    draws: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        names = ("m0", *PARAMS)
        bad = {k: v for k, v in self.fixed.items() if k not in names or not math.isfinite(float(v))}
        if bad:
            raise ModelSpecError(f"`fixed` takes finite values of {', '.join(names)}; got {bad}")
        neg = {k: v for k, v in self.fixed.items() if float(v) < 0 or (k in ("m0", "Fc", "Fs", "vs") and v == 0)}
        if neg:
            raise ModelSpecError(f"fixed values must be positive (sigma0, sigma1, sigma2 may be 0); got {neg}")
        if not 0 < self.confidence < 1:
            raise ModelSpecError(f"`confidence` must be in (0, 1), got {self.confidence}")
        if self.max_nfev < 1:
            raise ModelSpecError(f"`max_nfev` must be >= 1, got {self.max_nfev}")


@dataclass(frozen=True, kw_only=True)
class Stage:
    """What one stage did.

    Attributes
    ----------
    name : str
    records : tuple of str
    estimated : tuple of str
    fixed : mapping of str to (value, source)
        Held parameters and where their values came from.
    why : str
        Why the stage estimates what it estimates.
    values, stderr : mapping
        Estimates after the stage (stderr as reported: for stage 2 including stage 1's uncertainty).
    success : bool
    message : str
    nfev : int
    time_s : float
    notes : tuple of str
    """

    name: str
    records: tuple[str, ...]
    estimated: tuple[str, ...]
    fixed: Mapping[str, tuple[float, str]]
    why: str
    values: Mapping[str, float]
    stderr: Mapping[str, float]
    success: bool
    message: str
    nfev: int
    time_s: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "records": list(self.records), "estimated": list(self.estimated),
            "fixed": {k: {"value": v, "from": s} for k, (v, s) in self.fixed.items()}, "why": self.why,
            "values": dict(self.values), "stderr": {k: finite_or_none(v) for k, v in self.stderr.items()},
            "success": self.success, "message": self.message, "nfev": self.nfev, "time_s": self.time_s,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, kw_only=True)
class PreslidingFit:
    """Stage 2 on one pre-sliding record: measured and simulated displacement (shifted to start at 0)."""

    record: str
    t: FloatArray
    f: FloatArray
    x: FloatArray
    x_sim: FloatArray
    x_offset: float
    max_force: float
    nrmse: float


@dataclass(frozen=True, kw_only=True)
class FrictionResult:
    """Result of :func:`identify_friction`.

    Attributes
    ----------
    success : bool
    message : str
    model : TermModel
        ``m0,lugre``.
    estimates : tuple of ParameterEstimate
        Final values in model order (stage 3 if run, else stages 1–2).
    stages : tuple of Stage
    plateaus : tuple of PlateauDetection
        One per steady record.
    curves : mapping of str to CurveFit
        Static curves (and LuGre's steady curve, ``stribeck``) fitted to the plateau points.
    presliding : tuple of PreslidingFit
        The final model on each pre-sliding record.
    verdict : str
        Whether the dynamic model is needed, in words.
    evidence : mapping
        The numbers behind the verdict.
    correlation : (p, p) ndarray
        Of the final free parameters, names in ``correlation_names``.
    correlation_names : tuple of str
    condition_number : float
        Of the final problem's column-scaled Jacobian.
    warnings : tuple of str
    timing : mapping
    confidence : float
    """

    success: bool
    message: str
    model: TermModel
    estimates: tuple[ParameterEstimate, ...]
    stages: tuple[Stage, ...]
    plateaus: tuple[PlateauDetection, ...]
    curves: Mapping[str, CurveFit]
    presliding: tuple[PreslidingFit, ...]
    verdict: str
    evidence: Mapping[str, object]
    correlation: FloatArray
    correlation_names: tuple[str, ...]
    condition_number: float
    warnings: tuple[str, ...]
    timing: Mapping[str, float]
    confidence: float

    @property
    def values(self) -> dict[str, float]:
        return {e.name: e.value for e in self.estimates}

    def estimate(self, name: str) -> ParameterEstimate:
        for e in self.estimates:
            if e.name == name:
                return e
        raise KeyError(f"no parameter `{name}`")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict with the shape of ``identify``'s (parameters with value, stderr, ci95, unit,
        flags), plus ``stages``, ``plateaus``, ``curves`` and the static-vs-dynamic ``verdict``."""
        from .._version import __version__

        return {
            "nlid_version": __version__,
            "success": self.success,
            "message": self.message,
            "method": "staged-lugre",
            "terms": list(self.model.terms),
            "equation": self.model.equation(self.values),
            "parameters": {e.name: e.to_dict() for e in self.estimates},
            "diagnostics": {
                "condition_number_scaled": finite_or_none(self.condition_number),
                "n_estimated": len(self.correlation_names),
                "correlation": {"names": list(self.correlation_names),
                                "matrix": [[finite_or_none(v) for v in row] for row in self.correlation]},
            },
            "stages": [s.to_dict() for s in self.stages],
            "plateaus": [{"record": d.record, "message": d.message, "noise_v": d.noise_v,
                          "points": [p.to_dict() for p in d.plateaus]} for d in self.plateaus],
            "curves": {k: c.to_dict() for k, c in self.curves.items()},
            "presliding": [{"record": p.record, "x_offset": p.x_offset, "max_force": p.max_force,
                            "nrmse": finite_or_none(p.nrmse)} for p in self.presliding],
            "verdict": self.verdict,
            "evidence": dict(self.evidence),
            "options": {"confidence": self.confidence},
            "timing": dict(self.timing),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, kw_only=True)
class SteadyReplay:
    """The identified friction along a staircase record's measured motion.

    Attributes
    ----------
    record : str
    t : (n,) ndarray, s
    v : (n,) ndarray, m/s
        Measured velocity.
    measured : (n,) ndarray, N
        Friction from the data, ``f − m·a`` (a the Savitzky–Golay derivative of v; m = the identified or
        given mass).
    lugre : (n,) ndarray, N
        LuGre friction with its bristle state driven by the measured x, v.
    static : (n,) ndarray, N
        The static Stribeck curve at the measured velocity (same Fc, Fs, vs, σ2).
    nrmse_lugre, nrmse_static : float
        RMS error over the rms of ``measured``.
    """

    record: str
    t: FloatArray
    v: FloatArray
    measured: FloatArray
    lugre: FloatArray
    static: FloatArray
    nrmse_lugre: float
    nrmse_static: float
