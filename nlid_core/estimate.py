r"""Estimators: equation error, output error, and the two-stage default.

Equation error (inverse model)
    Measured (or derived) x, ẋ, ẍ go into the model and the predicted force
    is compared with the measured one, :math:`r = (\Phi\theta - f)/A`, with
    :math:`A = \max|f|` over all records (force normalisation; the
    regressors are built from exactly rescaled signals, see
    :class:`DataScaling`, so that neither a force of 1e-200 N nor a cubic of
    1e-90 m³ leaves floating point), optional
    per-record weights, an optional low-force mask (|f| below a fraction of
    A carries only noise) and an optional Tikhonov prior
    :math:`\lambda\|D(\theta-\theta_0)\|^2` (D the column norms, so λ is
    relative to the data's information). Linear in θ: one bounded linear
    least-squares solve (:func:`scipy.optimize.lsq_linear`, BVLS) on
    column-scaled regressors. Biased when x, ẋ, ẍ are noisy (errors in
    variables): a starting point.

Output error (simulation)
    The model is simulated from the measured force and compared with the
    measured outputs, :math:`r_c = w_c (y_c^{sim}(\theta, x_0) - y_c)/s_c`,
    :math:`s_c` the rms of channel *c* over all records. Solved by
    :func:`scipy.optimize.least_squares` (trust-region reflective, bounds)
    with the exact Jacobian from the simulator's forward sensitivities.
    Several records share θ and each has its own initial state (fixed at the
    measured values or estimated). Unbiased under output noise.

Two-stage (default)
    Equation error gives the start of the output-error fit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.optimize import least_squares, lsq_linear

from .errors import DataValidationError, ModelSpecError
from .identifiability import (
    CORR_LIMIT,
    RSE_LIMIT,
    Uncertainty,
    column_norms,
    rescale_uncertainty,
    uncertainty_from_jacobian,
    weak_directions_text,
)
from .metrics import ChannelMetrics, channel_metrics, rms
from .models import TermModel
from .params import ParameterSet
from .record import Record
from .simulate import (
    INPUT_HOLDS,
    OUTPUT_CHANNELS,
    SimulationResult,
    auto_substeps,
    fine_input,
    simulate,
    warm_up,
)

__all__ = [
    "METHODS",
    "INITIAL_STATES",
    "starts_at_rest",
    "Prior",
    "FitOptions",
    "ParameterEstimate",
    "RecordFit",
    "FitResult",
    "equation_error",
    "output_error",
    "identify",
    "coefficient_scales",
    "positive_mass",
    "DataScaling",
    "data_scaling",
    "WarningTally",
    "numerical_warnings",
    "MASS_FLOOR",
    "ProgressFn",
]

FloatArray = NDArray[np.float64]
ProgressFn = Callable[[str, float, str], None]

METHODS: tuple[str, ...] = ("two-stage", "equation-error", "output-error")
INITIAL_STATES: tuple[str, ...] = ("auto", "estimate", "rest", "data")
#: Nonlinear terms dropped for a second attempt when the equation-error start diverges.
_NONLINEAR = ("m1", "c2", "fc", "k2", "k3", "kg")


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
        from .signals import DIFFERENTIATORS

        if not callable(self.differentiator) and self.differentiator not in DIFFERENTIATORS:
            raise ModelSpecError(
                f"unknown `differentiator` {self.differentiator!r}; choose from {', '.join(DIFFERENTIATORS)}"
            )
        if self.max_nfev < 1:
            raise ModelSpecError(f"`max_nfev` must be >= 1, got {self.max_nfev}")
        if not 0 < self.tol < 1:
            raise ModelSpecError(f"`tol` must be in (0, 1), got {self.tol}")
        if not 0 < self.confidence < 1:
            raise ModelSpecError(f"`confidence` must be in (0, 1), got {self.confidence}")


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
            "stderr": _finite_or_none(self.stderr),
            "ci95": [_finite_or_none(self.ci[0]), _finite_or_none(self.ci[1])],
            "rel_stderr": _finite_or_none(self.rel_stderr),
            "unit": self.unit,
            "vary": self.vary,
            "bounds": [_finite_or_none(self.lower), _finite_or_none(self.upper)],
            "flags": list(self.flags),
            "notes": list(self.notes),
        }


def _finite_or_none(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


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


# --------------------------------------------------------------------------- helpers
def _check_records(records: Sequence[Record] | Record) -> tuple[Record, ...]:
    recs = (records,) if isinstance(records, Record) else tuple(records)
    if not recs:
        raise DataValidationError("no records given")
    for r in recs:
        if not isinstance(r, Record):
            raise DataValidationError(f"expected Record objects, got {type(r).__name__}")
    fu = {r.unit("f") for r in recs}
    xu = {r.unit("x") for r in recs}
    if len(fu) > 1 or len(xu) > 1:
        raise DataValidationError(
            f"records use different units (force {sorted(fu)}, displacement {sorted(xu)}); convert them to one unit"
        )
    return recs


def _params_for(model: TermModel, recs: Sequence[Record], params: ParameterSet | None) -> ParameterSet:
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    if params is None:
        return model.default_parameters(force_unit=fu, x_unit=xu)
    if params.names != model.param_names:
        raise ModelSpecError(f"parameters {params.names} do not match the model terms {model.param_names}")
    return params


def _with_derivatives(rec: Record, differentiator: str) -> Record:
    if rec.v is not None and rec.a is not None:
        return rec
    from .signals import derive_missing

    return derive_missing(rec, method=differentiator)


#: Largest power of two (about 1e271) by which a coefficient, or the sensitivity of the response to it, may
#: differ from 1 in the units of the data: beyond it the simulator's products under- or overflow.
_MAX_SCALE_EXP = 900
#: Displacement that varies by less than this fraction of its magnitude is constant up to rounding.
_CONSTANT_RTOL = 1e-13


def _exponent(value: float) -> int:
    """``e`` with ``2**(e - 1) <= value < 2**e`` (``value`` positive and finite): scaling by 2**-e is exact."""
    return math.frexp(value)[1]


def _data_scales(recs: Sequence[Record]) -> tuple[int, int]:
    """Binary exponents of the largest force and displacement, after checking the data carry information.

    Raises
    ------
    DataValidationError
        The force is zero (or below the normal floating-point range) in
        every record, or the displacement does not change in any record.
    """
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    amp = max(float(np.max(np.abs(r.f))) for r in recs)
    if amp == 0:
        raise DataValidationError("the force is zero in every record: nothing excites the system")
    if amp < np.finfo(np.float64).tiny:
        raise DataValidationError(
            f"the force is at most {amp:.3g} {fu} in every record, below the floating-point range:"
            " nothing measurable excites the system (or the force unit is wrong)"
        )
    xmax = max(float(np.max(np.abs(r.x))) for r in recs)
    moving = [float(np.ptp(r.x)) > _CONSTANT_RTOL * float(np.max(np.abs(r.x))) for r in recs]
    if xmax == 0 or not any(moving):
        what = "is zero" if xmax == 0 else "is constant"
        raise DataValidationError(
            f"the displacement {what} in every record: the data carry no information about the dynamics"
        )
    if xmax < np.finfo(np.float64).tiny:
        raise DataValidationError(
            f"the displacement is at most {xmax:.3g} {xu} in every record, below the floating-point range:"
            " check the displacement unit"
        )
    return _exponent(amp), _exponent(xmax)


def _coefficient_exponents(model: TermModel, e_f: int, e_x: int) -> NDArray[np.int64]:
    """Per term, ``e`` with coefficient ``θ = θ̃ · 2**e`` for θ̃ the coefficient in data of order one.

    A term whose coefficient has unit ``F · X^-p · s^q`` scales as ``F / X^p``.
    """
    from .models import TERMS

    return np.array([e_f - TERMS[n].x_power * e_x for n in model.terms], dtype=np.int64)


@dataclass(frozen=True, kw_only=True)
class DataScaling:
    r"""Exact power-of-two scaling of a model and its data to magnitudes of order one.

    Force is divided by :math:`2^{e_f}` and displacement, velocity and
    acceleration by :math:`2^{e_x}` (the powers of two just above the largest
    magnitudes), so regressors such as :math:`x^3` neither underflow for
    :math:`x \sim 10^{-100}` nor overflow. A coefficient then becomes
    :math:`\tilde\theta_k = \theta_k\,2^{-e_k}` with
    :math:`e_k = e_f - p_k e_x` for a coefficient of unit
    :math:`F\,X^{-p_k}\,s^{q}`; ``v_eps`` and ``gap`` are scaled with the
    displacement, so every term is homogeneous and the scaled problem has
    exactly the solution of the original one (powers of two lose nothing).

    Attributes
    ----------
    force_exp, x_exp : int
        :math:`e_f`, :math:`e_x`.
    exponents : (n_params,) int ndarray
        :math:`e_k` per model term.
    model : TermModel
        The model with its settings in scaled units (for regressors only).
    """

    force_exp: int
    x_exp: int
    exponents: NDArray[np.int64]
    model: TermModel

    def regressors(self, rec: Record) -> FloatArray:
        """Regressor matrix of ``rec`` (which must have ``v`` and ``a``) in scaled units."""
        e = -self.x_exp
        x, v, a = (np.ldexp(rec.channel(c), e) for c in ("x", "v", "a"))
        return self.model.regressors(x, v, a)

    def force(self, f: FloatArray) -> FloatArray:
        """Force in scaled units."""
        return np.asarray(np.ldexp(f, -self.force_exp), dtype=np.float64)

    def to_scaled(self, theta: FloatArray) -> FloatArray:
        """Coefficients in scaled units (exact)."""
        return np.asarray(np.ldexp(theta, -self.exponents), dtype=np.float64)

    def from_scaled(self, theta_s: FloatArray) -> FloatArray:
        """Coefficients in the data's units (exact; ``inf`` beyond floating point)."""
        with np.errstate(over="ignore", under="ignore"):
            return np.asarray(np.ldexp(theta_s, self.exponents), dtype=np.float64)


def data_scaling(model: TermModel, records: Sequence[Record] | Record) -> DataScaling:
    """The :class:`DataScaling` of ``model`` for ``records``.

    Parameters
    ----------
    model : TermModel
    records : Record or sequence of Record

    Returns
    -------
    DataScaling

    Raises
    ------
    DataValidationError
        The data carry no information: the force is zero in every record, or
        the displacement does not change in any record.
    """
    recs = _check_records(records)
    e_f, e_x = _data_scales(recs)
    s = model.settings
    big = np.finfo(np.float64).max / 16
    settings = type(s)(v_eps=min(math.ldexp(s.v_eps, -e_x), big), gap=min(math.ldexp(s.gap, -e_x), big))
    return DataScaling(force_exp=e_f, x_exp=e_x, exponents=_coefficient_exponents(model, e_f, e_x),
                       model=TermModel(model.terms, settings))


def coefficient_scales(model: TermModel, records: Sequence[Record] | Record) -> dict[str, float]:
    """Typical magnitude of each coefficient in the units of ``records``.

    A coefficient with unit ``F · X^-p · s^q`` is of order ``F / X^p`` with
    F and X the largest force and displacement (rounded up to powers of two);
    scale-free thresholds (a small positive start for a mass on its bound 0,
    say) are fractions of these.

    Parameters
    ----------
    model : TermModel
    records : Record or sequence of Record

    Returns
    -------
    dict
        Term name -> magnitude (``inf`` or 0 beyond floating point).
    """
    mags = data_scaling(model, records).from_scaled(np.ones(model.n_params))
    return {n: float(v) for n, v in zip(model.terms, mags, strict=True)}


#: A mass on its bound 0 is restarted at this fraction of the mass scale (see ``coefficient_scales``).
MASS_FLOOR = 1e-12


def positive_mass(params: ParameterSet, model: TermModel, records: Sequence[Record] | Record) -> ParameterSet:
    """``params`` with ``m0`` moved off zero (a start at m0 = 0 cannot be simulated), relative to the data's units."""
    if "m0" not in params.names or params["m0"].value > 0:
        return params
    floor = MASS_FLOOR * coefficient_scales(model, records)["m0"]
    return params.update("m0", value=min(floor, params["m0"].upper))


def _check_scales(model: TermModel, params: ParameterSet, recs: Sequence[Record], *, simulate: bool) -> None:
    """Refuse units in which a free coefficient (or, to simulate, the response's sensitivity to it) leaves
    floating point: the coefficient is about ``2**e`` and its sensitivity about ``X / 2**e``."""
    e_f, e_x = _data_scales(recs)
    exps = _coefficient_exponents(model, e_f, e_x)

    def dec(e: int) -> str:
        return f"1e{int(round(e * math.log10(2))):+d}"

    coef, sens = [], []
    for name, e, free in zip(model.terms, (int(v) for v in exps), params.free_mask, strict=True):
        if not free:
            continue
        if abs(e) > _MAX_SCALE_EXP:
            coef.append(f"{name} ~{dec(e)} {params[name].unit}")
        elif simulate and abs(e_x - e) > _MAX_SCALE_EXP:
            sens.append(f"to {name} ~{dec(e_x - e)}")
    if not (coef or sens):
        return
    amp = max(float(np.max(np.abs(r.f))) for r in recs)
    xmax = max(float(np.max(np.abs(r.x))) for r in recs)
    what = []
    if coef:
        what.append(f"coefficients ({', '.join(coef)})")
    if sens:
        what.append(f"sensitivities of the response ({', '.join(sens)})")
    raise DataValidationError(
        f"forces up to {amp:.3g} {recs[0].unit('f')} and displacements up to {xmax:.3g} {recs[0].unit('x')} give "
        + " and ".join(what) + " too close to the limits of floating point (1e±308) to "
        + ("simulate" if simulate else "estimate") + "; express the force or the displacement in another unit"
        " (e.g. --units x=mm)"
    )


def _metrics(record: str, channel: str, unit: str, measured: FloatArray, predicted: FloatArray,
             u: FloatArray | None = None) -> ChannelMetrics:
    """:func:`channel_metrics` computed on exactly rescaled signals (squares of 1e-200 would underflow)."""
    peak = float(np.max(np.abs(measured))) if measured.size else 0.0
    scale = math.ldexp(1.0, _exponent(peak)) if peak > 0 and math.isfinite(peak) else 1.0
    u_s = None
    if u is not None:
        u_peak = float(np.max(np.abs(u))) if u.size else 0.0
        u_s = u / math.ldexp(1.0, _exponent(u_peak)) if u_peak > 0 and math.isfinite(u_peak) else u
    m = channel_metrics(record, channel, unit, measured / scale, predicted / scale, u=u_s)
    return dataclasses.replace(m, rmse=m.rmse * scale)


def _flags_and_estimates(
    model: TermModel,
    params: ParameterSet,
    unc: Uncertainty | None,
    active: Mapping[str, bool],
    confidence: float,
) -> tuple[tuple[ParameterEstimate, ...], tuple[tuple[str, str, float], ...]]:
    names = list(unc.names) if unc is not None else []
    pairs: list[tuple[str, str, float]] = []
    if unc is not None:
        free = [n for n in names if n in params]
        for i, a in enumerate(free):
            for b in free[i + 1 :]:
                rho = unc.correlation[names.index(a), names.index(b)]
                if np.isfinite(rho) and abs(rho) > CORR_LIMIT:
                    pairs.append((a, b, float(rho)))
    out = []
    for p in params:
        flags: list[str] = []
        notes: list[str] = []
        if not p.vary:
            out.append(
                ParameterEstimate(
                    name=p.name, value=p.value, stderr=0.0, ci=(p.value, p.value), unit=p.unit, vary=False,
                    lower=p.lower, upper=p.upper, flags=("fixed",), notes=("held at its given value",),
                )
            )
            continue
        if unc is not None and p.name in names:
            k = names.index(p.name)
            se = float(unc.stderr[k])
            hw = float(unc.ci_halfwidth[k])
        else:
            se = hw = math.inf
        ci = (p.value - hw, p.value + hw)
        span = max(abs(p.value), 1e-300)
        if active.get(p.name, False) or (
            math.isfinite(p.lower) and abs(p.value - p.lower) <= 1e-9 * span
        ) or (math.isfinite(p.upper) and abs(p.value - p.upper) <= 1e-9 * span):
            flags.append("at_bound")
            notes.append(f"at its bound ({p.lower:g} .. {p.upper:g}): the unconstrained optimum lies outside")
        rse = se / abs(p.value) if p.value != 0 else math.inf
        if not math.isfinite(se):
            flags.append("unidentifiable")
            notes.append("the data do not determine it (rank-deficient direction)")
        elif rse > RSE_LIMIT or ci[0] <= 0 <= ci[1]:
            flags.append("unidentifiable")
            reason = f"relative standard error {100 * rse:.0f} %" if rse > RSE_LIMIT else "interval contains zero"
            notes.append(f"practically unidentifiable: {reason}")
        partners = [(b if a == p.name else a, rho) for a, b, rho in pairs if p.name in (a, b)]
        if partners:
            flags.append("strongly_correlated")
            notes.append("strongly correlated with " + ", ".join(f"{n} (ρ = {r:+.3f})" for n, r in partners))
        out.append(
            ParameterEstimate(
                name=p.name, value=p.value, stderr=se, ci=ci, unit=p.unit, vary=True, lower=p.lower,
                upper=p.upper, flags=tuple(flags), notes=tuple(notes),
            )
        )
    return tuple(out), tuple(pairs)


def _prior_rows(
    prior: Prior | None, params: ParameterSet, col_norms: FloatArray, theta_free: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Rows (J_p, r_p) of the Tikhonov prior over the free parameters."""
    free = params.free_names
    if prior is None or prior.lam == 0:
        return np.zeros((0, len(free))), np.zeros(0)
    unknown = set(prior.values) - set(params.names)
    if unknown:
        raise ModelSpecError(f"prior names unknown parameter(s) {sorted(unknown)}")
    rows = []
    res = []
    for k, name in enumerate(free):
        if name in prior.values:
            row = np.zeros(len(free))
            w = math.sqrt(prior.lam) * col_norms[k]
            row[k] = w
            rows.append(row)
            res.append(w * (theta_free[k] - float(prior.values[name])))
    if not rows:
        return np.zeros((0, len(free))), np.zeros(0)
    return np.array(rows), np.array(res)


# --------------------------------------------------------------------------- equation error
def _triangular_factor(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """R (upper, p × p) and c with ‖a z − b‖² = ‖R z − c‖² + const, for column-normalised ``a``."""
    gram = a.T @ a
    try:
        low = np.linalg.cholesky(gram)
        d = np.abs(np.diag(low))
        if d.min() > 1e-5 * d.max():  # condition of a below ~1e5: the normal equations lose nothing that matters
            return np.asarray(low.T, dtype=np.float64), np.asarray(solve_triangular(low, a.T @ b, lower=True))
    except np.linalg.LinAlgError:
        pass
    q_mat, r_mat = np.linalg.qr(a, mode="reduced")
    return np.asarray(r_mat, dtype=np.float64), np.asarray(q_mat.T @ b, dtype=np.float64)


def equation_error(
    records: Sequence[Record] | Record,
    model: TermModel,
    params: ParameterSet | None = None,
    options: FitOptions | None = None,
) -> FitResult:
    """Bounded linear least-squares fit of the equation error.

    Parameters
    ----------
    records : Record or sequence of Record
        Missing v, a are derived (``options.differentiator``).
    model : TermModel
    params : ParameterSet or None
        Bounds, fixed values and units (defaults from the model).
    options : FitOptions or None

    Returns
    -------
    FitResult
        ``method="equation-error"``; metrics are on the force channel.
    """
    opts = options or FitOptions(method="equation-error")
    recs = _check_records(records)
    params = _params_for(model, recs, params)
    start = time.perf_counter()
    if opts.record_weights is not None and len(opts.record_weights) != len(recs):
        raise ModelSpecError(f"`record_weights` has {len(opts.record_weights)} entries for {len(recs)} records")
    recs_d = tuple(_with_derivatives(r, opts.differentiator) for r in recs)
    free = params.free_mask
    if not free.any():
        raise ModelSpecError("every parameter is fixed: nothing to estimate")
    _check_scales(model, params, recs_d, simulate=False)
    # Work in data of order one (see DataScaling): products such as x³ neither underflow for x ~ 1e-100 nor
    # overflow, and the solution is exactly that of the unscaled problem.
    scaling = data_scaling(model, recs_d)
    amp = max(float(np.max(np.abs(r.f))) for r in recs_d)
    theta_fixed = np.where(free, 0.0, scaling.to_scaled(params.values))
    blocks, targets, phis = [], [], []
    to_amp = math.ldexp(1.0, scaling.force_exp) / amp  # in [1, 2): residuals are (Φθ − f) / max|f|
    for k, r in enumerate(recs_d):
        w = (opts.record_weights[k] if opts.record_weights is not None else 1.0) * to_amp
        sel = np.arange(0, r.n, opts.sample_step)
        if opts.force_threshold > 0:
            sel = sel[np.abs(r.f[sel]) >= opts.force_threshold * amp]
        if sel.size == 0:
            raise DataValidationError(f"record `{r.name}`: the low-force mask removes every sample")
        phi_all = scaling.regressors(r)
        phis.append(phi_all)
        phi = phi_all[sel]
        blocks.append(w * phi)
        targets.append(w * (scaling.force(r.f[sel]) - phi @ theta_fixed))
    A = np.vstack(blocks)[:, free]
    b = np.concatenate(targets)
    if A.shape[0] <= A.shape[1]:
        raise DataValidationError(f"{A.shape[0]} usable samples for {A.shape[1]} parameters")
    norms = column_norms(A)
    zero_cols = [n for n, c in zip(params.free_names, norms, strict=True) if c == 0]
    if zero_cols:
        raise ModelSpecError(
            f"term(s) {', '.join(zero_cols)} are identically zero on this data (nothing excites them); remove or fix them"
        )
    if not np.all(np.isfinite(norms)) or not np.all(np.isfinite(b)):
        raise DataValidationError("the regressors overflow on this data: check the units of the displacement")
    e_free = scaling.exponents[free]
    with np.errstate(over="ignore", under="ignore"):  # a finite bound beyond floating point becomes ±inf or 0
        lb = np.ldexp(params.lower[free], -e_free) * norms
        ub = np.ldexp(params.upper[free], -e_free) * norms
    As = A / norms
    bb = b
    if opts.prior is not None and opts.prior.lam > 0:
        jp, _ = _prior_rows(opts.prior, params, np.ones(int(free.sum())), np.zeros(int(free.sum())))
        prior0 = np.array([float(opts.prior.values.get(n, 0.0)) for n in params.free_names])
        z0 = np.ldexp(prior0, -e_free) * norms
        sel_rows = np.flatnonzero(jp.any(axis=0)) if jp.size else np.array([], dtype=int)
        lam = math.sqrt(opts.prior.lam)
        As = np.vstack([As, lam * np.eye(As.shape[1])[sel_rows]])
        bb = np.concatenate([b, lam * z0[sel_rows]])
    # ‖As z − b‖² = ‖R z − Qᵀb‖² + const: the bounded solve and the covariance need only the p × p factor R.
    # The columns of As have unit norm, so the Cholesky factor of AsᵀAs is accurate unless As is badly
    # conditioned; then a QR decomposition is used.
    r_mat, rhs = _triangular_factor(As, bb)
    sol = lsq_linear(r_mat, rhs, bounds=(lb, ub), method="bvls", lsmr_tol=None)
    z = sol.x
    values = params.values.copy()
    values[free] = np.ldexp(z / norms, e_free)
    if not np.all(np.isfinite(values)):
        raise DataValidationError(
            "the estimated coefficients overflow in these units: express the force or the displacement in"
            " another unit (e.g. --units x=mm)"
        )
    fitted = params.with_values(values, clip=True)
    theta_s = scaling.to_scaled(fitted.values)
    n_data = A.shape[0]
    r_all = As @ z - bb
    dof = max(n_data - A.shape[1], 1)
    unc = rescale_uncertainty(
        uncertainty_from_jacobian(
            r_mat * norms, np.zeros(r_mat.shape[0]), params.free_names, confidence=opts.confidence,
            sigma2=float(r_all[:n_data] @ r_all[:n_data]) / dof, dof=dof,
        ),
        e_free,
    )
    active = {n: bool(a != 0) for n, a in zip(params.free_names, sol.active_mask, strict=True)}
    estimates, pairs = _flags_and_estimates(model, fitted, unc, active, opts.confidence)
    elapsed = time.perf_counter() - start
    rfits, metrics = [], []
    for r, phi_all in zip(recs_d, phis, strict=True):
        f_pred = np.ldexp(phi_all @ theta_s, scaling.force_exp)
        rfits.append(
            RecordFit(
                name=r.name, t=r.t, measured={"f": r.f}, predicted={"f": f_pred}, fitted_channels=("f",),
                x0=(float(r.x[0]), float(r.v[0])), x0_stderr=(math.nan, math.nan), x0_mode="not used",  # type: ignore[index]
                simulation_ok=True, simulation_message="equation error: no simulation",
            )
        )
        metrics.append(_metrics(r.name, "f", r.unit("f"), r.f, f_pred))
    warns = [f"{r.name}: {w}" for r in recs_d for w in r.warnings]
    ok = bool(sol.success) if hasattr(sol, "success") else True
    return FitResult(
        success=ok,
        message="equation error solved (bounded linear least squares)" if ok else f"lsq_linear: {sol.message}",
        method="equation-error",
        model=model,
        parameters=fitted,
        estimates=estimates,
        uncertainty=unc,
        weak_directions=weak_directions_text(unc),
        correlated_pairs=pairs,
        metrics=tuple(metrics),
        records=tuple(rfits),
        cost=0.5 * float(r_all @ r_all),
        nfev=1,
        timing={"equation_error_s": elapsed},
        stages={"equation-error": fitted.as_dict()},
        warnings=tuple(warns),
        options=opts,
    )


# --------------------------------------------------------------------------- output error
class _OEProblem:
    """Residual and Jacobian of the joint output-error problem in scaled variables."""

    def __init__(
        self,
        recs: Sequence[Record],
        model: TermModel,
        params: ParameterSet,
        x0s: Sequence[tuple[float, float]],
        est_x0: Sequence[bool],
        opts: FitOptions,
        progress: ProgressFn | None,
    ) -> None:
        self.recs = recs
        self.model = model
        self.params = params
        self.opts = opts
        self.progress = progress
        self.free = params.free_mask
        self.pf = int(self.free.sum())
        self.nrec = len(recs)
        self.x0s: list[tuple[float, float]] = [(float(x[0]), float(x[1])) for x in x0s]
        self.outputs = opts.outputs
        self.idx = [np.arange(0, r.n, opts.sample_step) for r in recs]
        self.scale = {}
        for c in self.outputs:
            ms = rms(np.concatenate([np.asarray(r.channel(c)) for r in recs]))
            self.scale[c] = ms if ms > 0 else 1.0
        self.weight = {c: float(opts.channel_weights.get(c, 1.0)) / self.scale[c] for c in self.outputs}
        self.substeps = [1] * self.nrec
        self.nfev = 0
        # the last few evaluated points (trf evaluates the residual, then the Jacobian at the same point,
        # and the result is usually one of the last points tried)
        self._cache: OrderedDict[bytes, list[SimulationResult]] = OrderedDict()
        self._fine: dict[tuple[int, int], FloatArray] = {}
        groups = []
        g = 0
        for k in range(self.nrec):
            for _ in self.outputs:
                groups.append(np.full(self.idx[k].size, g, dtype=np.int64))
                g += 1
        self.groups = np.concatenate(groups)
        self.est = [bool(e) for e in est_x0]
        self.x0_pos: dict[int, int] = {}
        for k in range(self.nrec):
            if self.est[k]:
                self.x0_pos[k] = 2 * len(self.x0_pos)
        self.n_x0 = 2 * len(self.x0_pos)
        self.prior_jp = np.zeros((0, self.pf))
        self.prior_c = np.zeros(0)
        self.s_theta = np.ones(self.pf)
        self.s_x0 = np.ones(self.n_x0)
        self.off_theta = np.zeros(self.pf)
        self.off_x0 = np.zeros(self.n_x0)
        self._scaled = False

    def fine_input(self, k: int, nsub: int | None = None) -> FloatArray:
        """Input of record k at every half substep (cached; the grid for 2·nsub is made at once,
        since the step-doubling check needs it and the grid for nsub is every other point of it)."""
        nsub = self.substeps[k] if nsub is None else nsub
        key = (k, nsub)
        if key not in self._fine:
            if (k, 2 * nsub) not in self._fine:
                r = self.recs[k]
                self._fine[(k, 2 * nsub)] = fine_input(r.t, r.f, 2 * nsub, self.opts.input_hold)
            self._fine[key] = np.ascontiguousarray(self._fine[(k, 2 * nsub)][::2])
        return self._fine[key]

    def full_simulation(self, k: int, theta: FloatArray, x0: tuple[float, float], substeps: int) -> SimulationResult:
        r = self.recs[k]
        return simulate(self.model, r.t, r.f, theta, x0, input_hold=self.opts.input_hold, substeps=substeps,
                        fine=self.fine_input(k, substeps))

    def too_coarse(self, z: FloatArray) -> list[bool]:
        """Step-doubling check: is the integration error above 5 % of each record's residual rms?"""
        sims = self.simulate_all(z)
        theta, x0s = self.unpack(z)
        out = []
        for k, r in enumerate(self.recs):
            if k >= len(sims) or not sims[k].success:
                out.append(False)
                continue
            fine_sim = self.full_simulation(k, theta, x0s[k], 2 * self.substeps[k])
            sel = self.idx[k]
            err = np.concatenate([self.weight[c] * (fine_sim.output(c) - sims[k].output(c))[sel] for c in self.outputs])
            res = np.concatenate([self.weight[c] * (sims[k].output(c) - r.channel(c))[sel] for c in self.outputs])
            out.append(bool(np.sqrt(np.mean(err**2)) > INTEGRATION_TOL * np.sqrt(np.mean(res**2))))
        return out

    def refine(self, z: FloatArray) -> bool:
        """Make the integration finer where the estimate needs it; True when anything changed."""
        theta, _ = self.unpack(z)
        need = [max(a, b) for a, b in zip(self.choose_substeps(theta), self.substeps, strict=True)]
        coarse = self.too_coarse(z) if self.opts.substeps is None else [False] * self.nrec
        changed = False
        for k in range(self.nrec):
            if coarse[k]:
                need[k] = 2 * need[k]
            if need[k] != self.substeps[k]:
                self.substeps[k] = need[k]
                changed = True
        if changed:
            self._cache.clear()
        return changed

    def choose_substeps(self, theta: FloatArray) -> list[int]:
        return [_substeps_for(r, self.model, theta, self.opts) for r in self.recs]

    # variable packing: z = [(theta_free - off_theta) / s_theta, (x0 - off_x0) / s_x0 ...]; z = 0 at the start,
    # so the solver's first trust region (radius 1 when z0 = 0) allows about a 10 % change of each parameter
    def set_scaling(self, s_theta: FloatArray, s_x0: FloatArray, off_theta: FloatArray, off_x0: FloatArray) -> None:
        same_point = self._scaled and np.array_equal(off_theta, self.off_theta) and np.array_equal(off_x0, self.off_x0)
        self._scaled = True
        self.s_theta = s_theta
        self.s_x0 = s_x0
        self.off_theta = off_theta
        self.off_x0 = off_x0
        # z means something else now, except z = 0 when the offsets (the start point) are unchanged
        zero = np.zeros(self.pf + self.n_x0).tobytes()
        kept = {k: v for k, v in self._cache.items() if same_point and k[:-1] == zero}
        self._cache.clear()
        self._cache.update(kept)

    def unpack(self, z: FloatArray) -> tuple[FloatArray, list[tuple[float, float]]]:
        theta = self.params.values.copy()
        theta[self.free] = self.off_theta + z[: self.pf] * self.s_theta
        x0s = list(self.x0s)
        xz = self.off_x0 + z[self.pf :] * self.s_x0
        for k, pos in self.x0_pos.items():
            x0s[k] = (float(xz[pos]), float(xz[pos + 1]))
        return theta, x0s

    def pack(self, theta: FloatArray, x0s: Sequence[tuple[float, float]]) -> FloatArray:
        z = list((theta[self.free] - self.off_theta) / self.s_theta)
        for k, pos in self.x0_pos.items():
            z += [(x0s[k][0] - self.off_x0[pos]) / self.s_x0[pos], (x0s[k][1] - self.off_x0[pos + 1]) / self.s_x0[pos + 1]]
        return np.asarray(z, dtype=np.float64)

    def simulate_all(self, z: FloatArray, sens: bool = True) -> list[SimulationResult]:
        key = z.tobytes() + bytes([sens])
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        theta, x0s = self.unpack(z)
        sims = []
        for k, r in enumerate(self.recs):
            sims.append(
                simulate(
                    self.model, r.t, r.f, theta, x0s[k], input_hold=self.opts.input_hold,
                    substeps=self.substeps[k], sensitivities=sens, outputs=self.outputs, fine=self.fine_input(k),
                    initial_state_sensitivities=k in self.x0_pos,
                    x_limit=1e3 * max(float(np.max(np.abs(r.x))), 1e-300) + abs(x0s[k][0]),
                )
            )
            if not sims[-1].success:
                break
        self.nfev += 1
        if self.progress is not None:
            self.progress("output-error", min(1.0, self.nfev / self.opts.max_nfev), f"evaluation {self.nfev}")
        self._cache[key] = sims
        if len(self._cache) > 4:
            self._cache.popitem(last=False)
        return sims

    def residual(self, z: FloatArray) -> FloatArray:
        sims = self.simulate_all(z)
        if len(sims) < self.nrec or not all(s.success for s in sims):
            return np.full(self.groups.size + self.prior_jp.shape[0], np.nan)
        parts = []
        for k, r in enumerate(self.recs):
            sel = self.idx[k]
            for c in self.outputs:
                parts.append(self.weight[c] * (sims[k].output(c)[sel] - r.channel(c)[sel]))
        out = np.concatenate(parts)
        if self.prior_jp.shape[0]:
            out = np.concatenate([out, self.prior_jp @ z[: self.pf] - self.prior_c])
        return out

    def jacobian(self, z: FloatArray) -> FloatArray:
        sims = self.simulate_all(z)
        ncol = self.pf + self.n_x0
        blocks = []
        fcols = np.flatnonzero(self.free)
        p = self.model.n_params
        for k in range(self.nrec):
            sel = self.idx[k]
            for c in self.outputs:
                s = sims[k].sens[c][sel]  # type: ignore[index]
                blk = np.zeros((sel.size, ncol))
                blk[:, : self.pf] = s[:, fcols] * self.s_theta
                if k in self.x0_pos:
                    pos = self.x0_pos[k]
                    blk[:, self.pf + pos] = s[:, p] * self.s_x0[pos]
                    blk[:, self.pf + pos + 1] = s[:, p + 1] * self.s_x0[pos + 1]
                blocks.append(self.weight[c] * blk)
        jac = np.vstack(blocks)
        if self.prior_jp.shape[0]:
            jp = np.zeros((self.prior_jp.shape[0], ncol))
            jp[:, : self.pf] = self.prior_jp
            jac = np.vstack([jac, jp])
        return jac

    def names(self) -> list[str]:
        names = list(self.params.free_names)
        for k in self.x0_pos:
            names += [f"x0[{k}]", f"v0[{k}]"]
        return names


def starts_at_rest(rec: Record) -> bool:
    """True when the record is statistically consistent with starting at rest.

    A cubic polynomial is fitted to the first ``k`` displacement samples (a
    tenth of a period of the signal's bandwidth, 12 to 500 samples); the record starts at rest when both its value and
    its slope at the first sample are within three standard errors of zero
    (plus 1e-6 of the displacement range, for noise-free data).
    """
    from .signals import signal_bandwidth_hz

    f_bw = signal_bandwidth_hz(rec.x, rec.dt)
    k = int(min(max(0.1 * rec.fs / max(f_bw, 1e-12), 12), 500, rec.n))
    tau = (rec.t[:k] - rec.t[0]) / (rec.t[k - 1] - rec.t[0])
    A = np.vander(tau, 4, increasing=True)
    peak = float(np.max(np.abs(rec.x)))
    if peak == 0:
        return True
    xs = np.ldexp(rec.x[:k], -_exponent(peak))  # exact rescaling: the squares below never underflow
    coef, *_ = np.linalg.lstsq(A, xs, rcond=None)
    resid = xs - A @ coef
    s2 = float(resid @ resid) / max(k - 4, 1)
    cov = s2 * np.linalg.inv(A.T @ A)
    tiny = 1e-6 * float(np.max(np.abs(np.ldexp(rec.x, -_exponent(peak)))))
    return bool(abs(coef[0]) <= 3 * math.sqrt(cov[0, 0]) + tiny and abs(coef[1]) <= 3 * math.sqrt(cov[1, 1]) + tiny)


def _initial_states(
    recs: Sequence[Record], opts: FitOptions, x0: Sequence[tuple[float, float]] | None
) -> tuple[list[tuple[float, float]], list[bool], list[str]]:
    """Start values, estimate flags and a description of each record's initial state."""
    if x0 is not None and len(x0) != len(recs):
        raise ModelSpecError(f"`x0` has {len(x0)} entries for {len(recs)} records")
    states, est, modes = [], [], []
    for k, r in enumerate(recs):
        if x0 is not None:
            data = (float(x0[k][0]), float(x0[k][1]))
        else:
            v = r.v if r.v is not None else _with_derivatives(r, opts.differentiator).v
            data = (float(r.x[0]), float(v[0]))  # type: ignore[index]
        mode = opts.initial_state
        if mode == "auto":
            mode = "rest" if starts_at_rest(r) else "estimate"
            label = "at rest (detected)" if mode == "rest" else "estimated"
        else:
            label = {"estimate": "estimated", "rest": "at rest", "data": "first sample"}[mode]
        states.append((0.0, 0.0) if mode == "rest" else data)
        est.append(mode == "estimate")
        modes.append(label)
    return states, est, modes


def output_error(
    records: Sequence[Record] | Record,
    model: TermModel,
    params: ParameterSet,
    options: FitOptions | None = None,
    *,
    x0: Sequence[tuple[float, float]] | None = None,
    progress: ProgressFn | None = None,
    diagnostics: bool = True,
) -> FitResult:
    """Output-error fit from the start values in ``params``.

    Parameters
    ----------
    records : Record or sequence of Record
        Fitted jointly with one parameter set.
    model : TermModel
        Must contain ``m0``.
    params : ParameterSet
        Start values, bounds, fixed/free, units.
    options : FitOptions or None
    x0 : sequence of (x0, v0) or None
        Initial states (start values when estimated); default from the data.
    progress : callable or None
        ``progress(stage, fraction, message)``.
    diagnostics : bool
        False returns the parameters only (no uncertainty, metrics or record
        fits, no integration refinement): for a start of another fit.

    Returns
    -------
    FitResult
        ``success=False`` with a message when the start diverges or the
        solver fails; never raises for a diverging simulation.
    """
    opts = options or FitOptions(method="output-error")
    recs = _check_records(records)
    model.require_simulable()
    params = _params_for(model, recs, params)
    for r in recs:
        for c in opts.outputs:
            if getattr(r, c) is None:
                raise DataValidationError(f"record `{r.name}` has no `{c}` channel to fit; output channels: {opts.outputs}")
            if c in r.derived:
                raise DataValidationError(
                    f"record `{r.name}`: channel `{c}` was derived, not measured; output error fits measured channels"
                    " only (choose outputs among " + ", ".join(r.measured) + ")"
                )
    _check_scales(model, params, recs, simulate=True)
    start = time.perf_counter()
    x0s, est_x0, x0_modes = _initial_states(recs, opts, x0)
    if not params.free_mask.any() and not any(est_x0):
        raise ModelSpecError("every parameter is fixed and the initial state too: nothing to estimate")
    prob = _OEProblem(recs, model, params, x0s, est_x0, opts, progress)
    theta0 = params.values
    prob.substeps = prob.choose_substeps(theta0)
    # scaling: 10 % of |start| for parameters (their Jacobian column where the start is 0),
    # 10 % of the displacement rms (and rms·2π·fs/50 for velocity) for initial states
    theta_free0 = theta0[params.free_mask].astype(np.float64)
    s_theta = 0.1 * np.abs(theta_free0)
    xs = max(rms(np.concatenate([r.x for r in recs])), 1e-300)
    s_x0 = np.zeros(prob.n_x0)
    off_x0 = np.zeros(prob.n_x0)
    for k, pos in prob.x0_pos.items():
        s_x0[pos] = 0.1 * xs
        s_x0[pos + 1] = 0.1 * xs * 2 * math.pi * recs[k].fs / 50
        off_x0[pos : pos + 2] = x0s[k]
    prob.set_scaling(np.where(s_theta > 0, s_theta, 1.0), s_x0, theta_free0, off_x0)
    z0 = prob.pack(theta0, x0s)
    sims = prob.simulate_all(z0)
    if len(sims) < len(recs) or not all(s.success for s in sims):
        bad = sims[-1]
        return _failed(model, params, recs, opts, f"the start values cannot be simulated: {bad.message}", start)
    # floor each parameter's scale at the change that moves the residual by its current norm, so a parameter
    # starting at (or next to) zero can still move
    jac0 = prob.jacobian(z0)
    cn_phys = column_norms(jac0[:, : prob.pf]) / prob.s_theta
    r0 = prob.residual(z0)
    r0_norm = rms(r0) * math.sqrt(r0.size)
    floor = np.where(cn_phys > 0, r0_norm / np.where(cn_phys > 0, cn_phys, 1.0), 0.0)
    s_new = np.maximum(s_theta, floor)
    s_new = np.where(s_new > 0, s_new, 1.0)
    if not np.array_equal(s_new, prob.s_theta):
        prob.set_scaling(s_new, s_x0, theta_free0, off_x0)  # same point z = 0: its simulation is kept
        z0 = prob.pack(theta0, x0s)
    if opts.prior is not None and opts.prior.lam > 0:
        jac0 = prob.jacobian(z0)
        cn = column_norms(jac0[:, : prob.pf])
        jp, _ = _prior_rows(opts.prior, params, cn, theta_free0)
        prob.prior_jp = jp  # rows act on z directly: cn are the scaled columns' norms
        t0 = np.array([float(opts.prior.values.get(n, 0.0)) for n in params.free_names])
        prob.prior_c = jp @ ((t0 - theta_free0) / prob.s_theta)
    lb = np.concatenate([(params.lower[params.free_mask] - theta_free0) / prob.s_theta, np.full(prob.n_x0, -np.inf)])
    ub = np.concatenate([(params.upper[params.free_mask] - theta_free0) / prob.s_theta, np.full(prob.n_x0, np.inf)])
    z0 = np.clip(z0, lb, ub)
    # A start on (or within a tenth of a scale of) a bound makes the reflective trust region crawl. The first
    # solve therefore lets such parameters go one scale unit past their bound; if the solution uses that room,
    # it is solved again from the clipped point with the true bounds.
    lb_run = np.where(lb > -0.1, np.minimum(lb, -1.0), lb)
    ub_run = np.where(ub < 0.1, np.maximum(ub, 1.0), ub)
    # One Gauss-Newton step from the start (the start is usually close, so the problem is nearly linear
    # there); kept when it lowers the cost, which saves the trust region several cautious first steps.
    z0 = _gauss_newton_step(prob, z0, lb_run, ub_run)
    warns: list[str] = []
    sol = None
    for attempt in range(MAX_REFINEMENTS + 2):
        try:
            sol = least_squares(
                prob.residual, z0, jac=prob.jacobian, bounds=(lb_run, ub_run), method="trf", x_scale=1.0,
                ftol=opts.tol, xtol=opts.tol, gtol=opts.tol, max_nfev=opts.max_nfev,
            )
        except ValueError as exc:
            return _failed(model, params, recs, opts, f"output error failed: {exc}", start)
        if np.any(sol.x < lb) or np.any(sol.x > ub):
            lb_run, ub_run = lb, ub
            z0 = np.clip(sol.x, lb, ub)
            continue
        if attempt <= MAX_REFINEMENTS and diagnostics and prob.refine(sol.x):
            warns.append(f"refined the integration ({max(prob.substeps)} RK4 substeps per sample): its error at the"
                         " estimate was not negligible against the residual")
            z0 = sol.x
            continue
        break
    assert sol is not None
    z_hat = sol.x
    theta_hat, x0_hat = prob.unpack(z_hat)
    r_hat = prob.residual(z_hat)
    if not np.all(np.isfinite(r_hat)):
        return _failed(model, params, recs, opts, "output error ended at parameters that do not simulate", start)
    if not diagnostics:  # a start for another fit: parameters only
        return dataclasses.replace(
            _failed(model, params.with_values(theta_hat, clip=True), recs, opts, "", start),
            success=bool(sol.status > 0), message=str(sol.message), cost=float(sol.cost), nfev=prob.nfev,
        )
    jac_z = prob.jacobian(z_hat)
    scales = np.concatenate([prob.s_theta, prob.s_x0])
    jac_phys = jac_z / scales  # ∂r/∂(θ, x0) = ∂r/∂z / s
    n_prior = prob.prior_jp.shape[0]
    groups = np.concatenate([prob.groups, np.zeros(n_prior, dtype=np.int64)])
    unc = uncertainty_from_jacobian(
        jac_phys, r_hat, prob.names(), groups=groups, confidence=opts.confidence, extra_rows=n_prior
    )
    fitted = params.with_values(theta_hat, clip=True)
    active = {n: bool(a != 0) for n, a in zip(params.free_names, sol.active_mask[: prob.pf], strict=True)}
    estimates, pairs = _flags_and_estimates(model, fitted, unc, active, opts.confidence)
    elapsed = time.perf_counter() - start
    # final simulations on every sample for predictions and metrics
    rfits, metrics = [], []
    final_sims = prob.simulate_all(z_hat)
    for k, r in enumerate(recs):
        sim = final_sims[k]
        if k in prob.x0_pos:
            names = prob.names()
            se_x = (float(unc.stderr[names.index(f"x0[{k}]")]), float(unc.stderr[names.index(f"v0[{k}]")]))
        else:
            se_x = (0.0, 0.0)
        rfits.append(
            RecordFit(
                name=r.name, t=r.t,
                measured={c: np.asarray(getattr(r, c)) for c in ("f", "x", "v", "a") if getattr(r, c) is not None},
                predicted={"x": sim.x, "v": sim.v, "a": sim.a}, fitted_channels=opts.outputs, x0=x0_hat[k],
                x0_stderr=se_x, x0_mode=x0_modes[k], simulation_ok=sim.success, simulation_message=sim.message,
            )
        )
        for c in opts.outputs:
            metrics.append(_metrics(r.name, c, r.unit(c), r.channel(c), sim.output(c), u=r.f))
    warns += [f"{r.name}: {w}" for r in recs for w in r.warnings]
    ok = bool(sol.status > 0)
    msg = f"output error converged ({sol.message.rstrip('.')})" if ok else f"output error did not converge: {sol.message}"
    return FitResult(
        success=ok,
        message=msg,
        method="output-error",
        model=model,
        parameters=fitted,
        estimates=estimates,
        uncertainty=unc,
        weak_directions=weak_directions_text(unc),
        correlated_pairs=pairs,
        metrics=tuple(metrics),
        records=tuple(rfits),
        cost=float(sol.cost),
        nfev=prob.nfev,
        timing={"output_error_s": elapsed},
        stages={"output-error": fitted.as_dict()},
        warnings=tuple(warns),
        options=opts,
    )


#: Integration error allowed at the estimate, as a fraction of the residual rms (step-doubling check).
INTEGRATION_TOL = 0.05
#: How often the substeps may be doubled after a fit.
MAX_REFINEMENTS = 3
#: Segment length in natural periods of the start model, and the most segments used per record.
SEGMENT_PERIODS = 3.0
MAX_SEGMENTS = 8


def _segments(rec: Record, model: TermModel, theta: FloatArray) -> list[Record]:
    """Short segments of a record: a few natural periods of the start model each.

    The period comes from the model linearised at rest; without a positive
    linear stiffness a segment is a twentieth of the record. Segments are at
    least 50 samples long; at most ``MAX_SEGMENTS`` of them are taken, spread
    evenly over the record (they only have to give a start, so a long record
    does not make this stage expensive).
    """
    from . import _kernels

    s = model.settings
    _, dadx, _, mass = _kernels._accel(0.0, 0.0, 0.0, theta, model.codes, s.v_eps, s.gap, False,
                                       np.zeros(model.n_params))
    if mass > 0 and dadx < 0:
        length = int(SEGMENT_PERIODS * 2 * math.pi / math.sqrt(-dadx) * rec.fs)
    else:
        length = rec.n // 20
    length = max(length, 50)
    count = rec.n // length
    if count < 2:
        return [rec]
    chosen = np.unique(np.linspace(0, count - 1, min(count, MAX_SEGMENTS)).round().astype(int))
    return [rec.slice(int(i) * length, (int(i) + 1) * length).replace(name=f"{rec.name}[{i * length}:{(i + 1) * length}]")
            for i in chosen]


def _start_nrmse(recs: Sequence[Record], model: TermModel, params: ParameterSet, opts: FitOptions,
                 x0s: Sequence[tuple[float, float]]) -> float:
    """Largest displacement NRMSE over the records when simulating ``params`` (inf if any diverges)."""
    from .metrics import nrmse

    worst = 0.0
    for r, x0 in zip(recs, x0s, strict=True):
        sim = simulate(model, r.t, r.f, params.values, x0, input_hold=opts.input_hold,
                       substeps=_substeps_for(r, model, params.values, opts))
        if not sim.success:
            return math.inf
        worst = max(worst, nrmse(r.x, sim.x))
    return worst


def _robust_start(
    recs: Sequence[Record], model: TermModel, start: ParameterSet, opts: FitOptions, progress: ProgressFn | None
) -> tuple[ParameterSet, str, float]:
    """A start for the full-record output-error fit that is in the right basin.

    Output error on a long record is multi-modal: a small error in a lightly
    damped resonance accumulates phase, and an equation-error start biased by
    noisy derived accelerations (errors in variables) can be far off while its
    simulation still looks fair. So output error is first solved on a few
    short segments of the records, each with its own estimated initial state
    (multiple shooting without continuity), where the cost is nearly convex.
    The full-record fit starts from whichever of the two simulates the records
    better. Nothing is done for records too short to segment.
    """
    t0 = time.perf_counter()
    x0s, _, _ = _initial_states(recs, opts, None)
    # velocity is derived once per record (the segments' initial states start from it), not per segment
    with_v = [r if r.v is not None else _with_derivatives(r, opts.differentiator) for r in recs]
    segments = [seg for r in with_v for seg in _segments(r, model, start.values)]
    if len(segments) == len(recs):
        return start, "", time.perf_counter() - t0
    seg_opts = dataclasses.replace(opts, initial_state="estimate", tol=max(opts.tol, 1e-6))
    seg_fit = output_error(segments, model, start, seg_opts, progress=progress, diagnostics=False)
    if not seg_fit.success:
        return start, "", time.perf_counter() - t0
    before = _start_nrmse(recs, model, start, opts, x0s)
    after = _start_nrmse(recs, model, seg_fit.parameters, opts, x0s)
    elapsed = time.perf_counter() - t0
    if not after < before:
        return start, "", elapsed
    note = ""
    if not math.isfinite(before) or before > 0.1:  # worth telling: the equation-error estimate was far off
        what = "does not simulate" if not math.isfinite(before) else f"simulates with NRMSE {before:.3f}"
        note = (f"the equation-error estimate {what} (noisy derived acceleration biases it); output error on"
                f" {len(segments)} short segments (NRMSE {after:.3f}) gave the start of the full-record fit")
    return seg_fit.parameters, note, elapsed


def _substeps_for(r: Record, model: TermModel, theta: FloatArray, opts: FitOptions) -> int:
    """RK4 substeps per sample for record ``r`` (fixed by the options or chosen from the dynamics)."""
    if opts.substeps is not None:
        return int(opts.substeps)
    xr = 1.5 * float(np.max(np.abs(r.x)))
    vr = 1.5 * float(np.max(np.abs(r.v))) if r.v is not None else xr * 2 * math.pi * r.fs / 4
    return auto_substeps(model, theta, r.dt, max(xr, 1e-300), max(vr, 1e-300))


def _gauss_newton_step(prob: _OEProblem, z0: FloatArray, lb: FloatArray, ub: FloatArray) -> FloatArray:
    """``z0`` moved by one Gauss-Newton step (clipped into the bounds) if that lowers the cost."""
    r0 = prob.residual(z0)
    if not np.all(np.isfinite(r0)):
        return z0
    jac = prob.jacobian(z0)
    if not np.all(np.isfinite(jac)):
        return z0
    try:
        step, *_ = np.linalg.lstsq(jac, -r0, rcond=None)
    except np.linalg.LinAlgError:  # pragma: no cover - finite matrices converge
        return z0
    z1 = np.clip(z0 + step, lb, ub)
    r1 = prob.residual(z1)
    if np.all(np.isfinite(r1)) and float(r1 @ r1) < float(r0 @ r0):
        return z1
    return z0


def _failed(
    model: TermModel, params: ParameterSet, recs: Sequence[Record], opts: FitOptions, message: str, start: float
) -> FitResult:
    estimates, _ = _flags_and_estimates(model, params, None, {}, opts.confidence)
    return FitResult(
        success=False, message=message, method="output-error", model=model, parameters=params,
        estimates=estimates, uncertainty=None, weak_directions=(), correlated_pairs=(), metrics=(), records=(),
        cost=math.nan, nfev=0, timing={"output_error_s": time.perf_counter() - start}, stages={},
        warnings=(), options=opts,
    )


# --------------------------------------------------------------------------- warnings
#: Longest warning text kept in a result (longer ones are cut with an ellipsis).
WARNING_CHARS = 300


class WarningTally:
    """Warnings counted by text; each is reported once, with its count.

    It accepts numpy's floating-point error messages (it is the ``call``
    object of ``numpy.errstate(..., "log")``, see :func:`numerical_warnings`)
    and Python warnings (``warnings.catch_warnings(record=True)`` entries,
    :meth:`record`). Lines read ``numpy: overflow encountered in multiply
    (12 times)``.
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self._counts)

    def add(self, source: str, text: str, count: int = 1) -> None:
        """Count ``count`` more occurrences of ``text`` from ``source`` (folded to one line)."""
        line = " ".join(f"{source}: {text}".split())
        if len(line) > WARNING_CHARS:
            line = line[: WARNING_CHARS - 1].rstrip() + "…"
        self._counts[line] = self._counts.get(line, 0) + count

    def write(self, message: str) -> None:
        """numpy's ``errstate(..., "log")`` protocol: ``"Warning: overflow encountered in multiply\\n"``."""
        self.add("numpy", message.strip().removeprefix("Warning:").strip())

    def record(self, entry: object) -> None:
        """Count a ``warnings.WarningMessage``; numpy's floating-point RuntimeWarnings are labelled ``numpy``."""
        category = getattr(entry, "category", Warning)
        text = str(getattr(entry, "message", entry))
        if issubclass(category, RuntimeWarning) and " encountered in " in text:
            source = "numpy"
        else:
            module = category.__module__.split(".")[0]
            source = category.__name__ if module == "builtins" else f"{module} {category.__name__}"
        self.add(source, text)

    def lines(self) -> tuple[str, ...]:
        """One line per distinct warning, in order of first occurrence."""
        return tuple(line if n == 1 else f"{line} ({n} times)" for line, n in self._counts.items())


@contextmanager
def numerical_warnings() -> Iterator[WarningTally]:
    """Collect numpy's floating-point errors (overflow, division by zero, invalid value) instead of printing them.

    Uses ``numpy.errstate``, which is local to the thread (and context), so
    two dashboard sessions identifying at once never see each other's
    warnings and nothing process-wide is changed; code that silences an
    error with its own ``errstate`` stays silent. Underflow is ignored, as
    by default.

    Yields
    ------
    WarningTally
        Filled while the block runs.
    """
    tally = WarningTally()
    with np.errstate(over="log", divide="log", invalid="log", call=tally):
        yield tally


# --------------------------------------------------------------------------- dispatcher
def identify(
    records: Sequence[Record] | Record,
    terms: TermModel | str | Sequence[str],
    *,
    params: ParameterSet | None = None,
    options: FitOptions | None = None,
    progress: ProgressFn | None = None,
) -> FitResult:
    """Identify the model from one or more records (the main entry point).

    Parameters
    ----------
    records : Record or sequence of Record
    terms : TermModel, str or sequence of str
        Model or term names (``"m0,c1,k1,k3"``).
    params : ParameterSet or None
        Bounds, fixed values, units and (for ``method="output-error"``) start
        values; defaults from the term library.
    options : FitOptions or None
        Default: two-stage, displacement output, initial states ``"auto"``
        (at rest when a record starts at rest, else estimated).
    progress : callable or None
        ``progress(stage, fraction, message)``.

    Returns
    -------
    FitResult
        With ``timing`` = compile_s, equation_error_s, output_error_s, total_s.
        Floating-point problems met on the way (numpy overflow, invalid
        values) are not printed but listed, counted, in ``warnings``.
    """
    with numerical_warnings() as tally:
        fit = _identify(records, terms, params, options, progress)
    if not tally:
        return fit
    return dataclasses.replace(fit, warnings=fit.warnings + tally.lines())


def _identify(
    records: Sequence[Record] | Record,
    terms: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    progress: ProgressFn | None,
) -> FitResult:
    opts = options or FitOptions()
    model = terms if isinstance(terms, TermModel) else TermModel(terms)
    recs = _check_records(records)
    compile_s = warm_up()
    t_start = time.perf_counter()
    ee_s = oe_s = 0.0
    stages: dict[str, Mapping[str, float]] = {}
    warns: list[str] = []
    if progress:
        progress("equation-error", 0.0, "equation error")
    if opts.method == "equation-error":
        res = equation_error(recs, model, params, opts)
        ee_s = res.timing["equation_error_s"]
        final = res
    else:
        model.require_simulable()
        start_params = _params_for(model, recs, params)
        user_start = params is not None and opts.method == "output-error"
        if not user_start:
            ee = equation_error(recs, model, start_params, opts)
            ee_s = ee.timing["equation_error_s"]
            stages["equation-error"] = ee.values
            start_params = ee.parameters
            start_params = positive_mass(start_params, model, recs)  # the bounded solve may put m0 on its bound 0
        if progress:
            progress("output-error", 0.0, "output error")
        seg_params, seg_note, seg_s = _robust_start(recs, model, start_params, opts, progress)
        if seg_params is not start_params:
            stages["segmented-output-error"] = seg_params.as_dict()
            start_params = seg_params
        if seg_note:
            warns.append(seg_note)
        final = output_error(recs, model, start_params, opts, progress=progress)
        oe_s = final.timing["output_error_s"] + seg_s
        if not final.success and not user_start and final.nfev == 0:
            # the equation-error start diverges: retry from its linear part
            lin = {n: 0.0 for n in start_params.names if n in _NONLINEAR and start_params[n].vary}
            if lin:
                retry_params = start_params.with_values(lin, clip=True)
                retry = output_error(recs, model, retry_params, opts, progress=progress)
                oe_s += retry.timing["output_error_s"]
                if retry.success:
                    warns.append(f"the equation-error start could not be simulated ({final.message}); "
                                 "output error was started from its linear part instead")
                    final = retry
        stages["output-error"] = final.values
    total = time.perf_counter() - t_start
    if progress:
        progress("done", 1.0, final.message)
    timing = {"compile_s": compile_s, "equation_error_s": ee_s, "output_error_s": oe_s, "total_s": total}
    return FitResult(
        success=final.success,
        message=final.message,
        method=opts.method,
        model=final.model,
        parameters=final.parameters,
        estimates=final.estimates,
        uncertainty=final.uncertainty,
        weak_directions=final.weak_directions,
        correlated_pairs=final.correlated_pairs,
        metrics=final.metrics,
        records=final.records,
        cost=final.cost,
        nfev=final.nfev,
        timing=timing,
        stages=stages or dict(final.stages),
        warnings=tuple(warns) + final.warnings,
        options=opts,
    )

