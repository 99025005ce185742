"""Experiment design before a test: predicted uncertainty of a candidate force, design comparison, chirp search."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelSpecError
from ..estimate import FitResult
from ..examples import chirp_force
from ..identifiability import uncertainty_from_jacobian
from ..metrics import PERCENT_CAP
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ..simulate import simulate
from ._common import FloatArray, ProgressFn, _check_outputs, _model, _noise_map, _param_set, _Steps, _substeps

__all__ = ["DesignPrediction", "predict_uncertainty", "compare_designs", "DesignSuggestion", "chirp_design",
           "suggest_design", "DesignDefaults", "design_defaults", "format_percent", "SEED_DESIGN",
           "MAX_DEFAULT_DURATION_S"]


@dataclass(frozen=True, kw_only=True)
class DesignPrediction:
    """Predicted parameter uncertainty of one candidate test (Cramér-Rao bound at the prior model).

    Attributes
    ----------
    success : bool
        False when the prior model diverges under this force.
    message : str
    label : str
    names : tuple of str
        Estimated parameters.
    values : (p,) ndarray
        Prior values.
    stderr : (p,) ndarray
        Predicted standard errors (√ diagonal of the inverse Fisher information).
    rel_stderr : (p,) ndarray
        ``stderr / |value|``.
    covariance, correlation, fisher : (p, p) ndarray
    condition_number : float
        Of the column-scaled weighted sensitivity matrix.
    max_rel_stderr : float
    worst_parameter : str
    x_max, x_rms : float
        Peak and rms of the predicted displacement.
    force_max, force_rms : float
    duration_s : float
    n_samples : int
    outputs : tuple of str
    noise_sd : mapping
        Noise standard deviation per output channel.
    seconds : float
        Wall time of the prediction (simulation with sensitivities and the SVD).
    """

    success: bool
    message: str
    label: str
    names: tuple[str, ...]
    values: FloatArray
    stderr: FloatArray
    rel_stderr: FloatArray
    covariance: FloatArray
    correlation: FloatArray
    fisher: FloatArray
    condition_number: float
    max_rel_stderr: float
    worst_parameter: str
    x_max: float
    x_rms: float
    force_max: float
    force_rms: float
    duration_s: float
    n_samples: int
    outputs: tuple[str, ...]
    noise_sd: Mapping[str, float]
    seconds: float = 0.0

    def rse(self, name: str) -> float:
        """Predicted relative standard error of parameter ``name``."""
        if name not in self.names:
            raise KeyError(f"no estimated parameter `{name}`; parameters are {', '.join(self.names)}")
        return float(self.rel_stderr[self.names.index(name)])


def predict_uncertainty(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    excitation_t: ArrayLike,
    excitation_force: ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    label: str = "",
) -> DesignPrediction:
    """Standard errors a test with this force would give if the prior model were true.

    The prior model is simulated under the force with forward sensitivities
    (RK4, twice the estimators' substeps); with white measurement noise of
    standard deviation σ_c on each output channel the Fisher information is
    ``F = Σ_c S_cᵀS_c/σ_c²`` over every sample, and the covariance its
    inverse (SVD of the column-scaled, σ-weighted sensitivities, as for a
    fit). The initial state is known (not estimated).

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term; with a ParameterSet only its free
        parameters are estimated.
    excitation_t : (n,) array_like, s
        Sample times of the candidate test.
    excitation_force : (n,) array_like, N
        Candidate force at those times.
    noise_sd : float or mapping
        Measurement-noise standard deviation (one for every channel, or per
        output channel).
    outputs : sequence of {"x", "v", "a"}
        Channels that would be measured and fitted.
    x0 : (2,) sequence
        Initial displacement and velocity (known).
    input_hold : {"cubic", "foh", "zoh"}
    label : str
        Name of the design in tables.

    Returns
    -------
    DesignPrediction
        ``success=False`` with a message when the model diverges.
    """
    t_start = time.perf_counter()
    mdl = _model(model)
    mdl.require_simulable()
    ps = _param_set(mdl, params_values)
    outs = _check_outputs(outputs)
    sd = _noise_map(noise_sd, outs)
    t = np.asarray(excitation_t, dtype=np.float64).reshape(-1)
    f = np.asarray(excitation_force, dtype=np.float64).reshape(-1)
    if t.size < 3 or f.shape != t.shape or not np.all(np.isfinite(f)) or not np.all(np.diff(t) > 0):
        raise ModelSpecError("`excitation_t` and `excitation_force` must be finite 1-D arrays of one length (>= 3)"
                             " with increasing times")
    theta = ps.values
    fidx = np.flatnonzero(ps.free_mask)
    names = ps.free_names
    p = fidx.size
    dt = float((t[-1] - t[0]) / (t.size - 1))
    nan = np.full(p, np.nan)
    common = dict(label=label, names=names, values=theta[fidx], duration_s=float(t[-1] - t[0]), n_samples=int(t.size),
                  outputs=outs, noise_sd=sd, force_max=float(np.max(np.abs(f))),
                  force_rms=float(np.sqrt(np.mean(f**2))))

    def failed(message: str, xmax: float = math.nan, xrms: float = math.nan) -> DesignPrediction:
        return DesignPrediction(success=False, message=message, stderr=nan, rel_stderr=nan,
                                covariance=np.full((p, p), np.nan), correlation=np.full((p, p), np.nan),
                                fisher=np.full((p, p), np.nan), condition_number=math.nan, max_rel_stderr=math.inf,
                                worst_parameter="", x_max=xmax, x_rms=xrms, seconds=time.perf_counter() - t_start,
                                **common)  # type: ignore[arg-type]

    if p == 0:
        raise ModelSpecError("every parameter is fixed: nothing to predict")
    first = simulate(mdl, t, f, theta, x0, input_hold=input_hold)
    if not first.success:
        return failed(f"the prior model diverges under this excitation: {first.message}")
    nsub = _substeps(mdl, theta, dt, first.x, first.v)
    sim = simulate(mdl, t, f, theta, x0, input_hold=input_hold, substeps=nsub, sensitivities=True, outputs=outs,
                   initial_state_sensitivities=False)
    if not sim.success:
        return failed(f"the prior model diverges under this excitation: {sim.message}")
    xmax, xrms = float(np.max(np.abs(sim.x))), float(np.sqrt(np.mean(sim.x**2)))
    jac = np.vstack([sim.sens[c][:, fidx] / sd[c] for c in outs])  # type: ignore[index]
    if not np.all(np.isfinite(jac)):
        return failed("the sensitivities are not finite (the model is on the edge of divergence)", xmax, xrms)
    unc = uncertainty_from_jacobian(jac, np.zeros(jac.shape[0]), names, sigma2=1.0, dof=max(jac.shape[0] - p, 1))
    vals = np.abs(theta[fidx])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(vals > 0, unc.stderr / np.where(vals > 0, vals, 1.0), np.inf)
    worst = int(np.argmax(np.where(np.isnan(rel), np.inf, rel)))
    msg = (f"{label + ': ' if label else ''}largest predicted relative standard error {format_percent(float(rel[worst]))}"
           f" ({names[worst]}); peak displacement {xmax:.3g}")
    return DesignPrediction(success=True, message=msg, stderr=unc.stderr, rel_stderr=rel, covariance=unc.covariance,
                            correlation=unc.correlation, fisher=jac.T @ jac, condition_number=unc.condition_number,
                            max_rel_stderr=float(rel[worst]), worst_parameter=names[worst], x_max=xmax, x_rms=xrms,
                            seconds=time.perf_counter() - t_start, **common)  # type: ignore[arg-type]


def compare_designs(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    designs: Sequence[tuple[str, ArrayLike, ArrayLike]],
    *,
    noise_sd: float | Mapping[str, float],
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    progress: ProgressFn | None = None,
) -> list[DesignPrediction]:
    """:func:`predict_uncertainty` for several candidate tests.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term.
    designs : sequence of (label, t, force)
        Candidate tests.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    outputs : sequence of {"x", "v", "a"}
    x0 : (2,) sequence
        Initial displacement and velocity.
    input_hold : {"cubic", "foh", "zoh"}
    progress : callable or None
        ``progress(stage, fraction, message)``: one step per design.

    Returns
    -------
    list of DesignPrediction
        In the order of ``designs``.
    """
    steps = _Steps(progress, "predict", len(designs))
    out = []
    for i, (label, t, f) in enumerate(designs):
        steps.step(i, f"predict {label}")
        out.append(predict_uncertainty(model, params_values, t, f, noise_sd=noise_sd, outputs=outputs, x0=x0,
                                       input_hold=input_hold, label=str(label)))
    return out


@dataclass(frozen=True, kw_only=True)
class DesignSuggestion:
    """Grid of linear-chirp designs and the best one.

    Attributes
    ----------
    success : bool
        False when every design diverges (or exceeds ``max_displacement``).
    message : str
    table : tuple of DesignPrediction
        Every design, amplitude-major.
    settings : tuple of (amplitude, f_start, f_end)
        Chirp settings of each row of ``table``.
    usable : (d,) bool ndarray
        Designs that simulate (and respect ``max_displacement``).
    best_index : int
        -1 when none is usable.
    best : DesignPrediction or None
    best_settings : (amplitude, f_start, f_end) or None
    """

    success: bool
    message: str
    table: tuple[DesignPrediction, ...]
    settings: tuple[tuple[float, float, float], ...]
    usable: NDArray[np.bool_]
    best_index: int
    best: DesignPrediction | None
    best_settings: tuple[float, float, float] | None


def chirp_design(amplitude: float, f_start_hz: float, f_end_hz: float, duration_s: float,
                 fs_hz: float) -> tuple[FloatArray, FloatArray]:
    """Time and force of a linear chirp sampled like the examples (``linspace(0, T, int(T·fs))``).

    Parameters
    ----------
    amplitude : float
        Peak force, in the force unit of the record (N for SI records).
    f_start_hz, f_end_hz : float
        Start and end frequency.
    duration_s : float
    fs_hz : float
        Sampling rate.

    Returns
    -------
    (t, f) : tuple of ndarray
    """
    if not (duration_s > 0 and fs_hz > 0 and amplitude >= 0 and f_start_hz >= 0 and f_end_hz >= 0):
        raise ModelSpecError("chirp: amplitude and frequencies must be >= 0, duration and sampling rate > 0")
    if max(f_start_hz, f_end_hz) >= fs_hz / 2:
        raise ModelSpecError(f"chirp up to {max(f_start_hz, f_end_hz):g} Hz needs a sampling rate above twice that")
    t = np.linspace(0.0, duration_s, int(duration_s * fs_hz))
    return t, chirp_force(amplitude, f_start_hz, f_end_hz, duration_s)(t)


def suggest_design(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    duration_s: float,
    fs_hz: float,
    amplitudes: Sequence[float] = (10.0, 20.0, 30.0),
    bands: Sequence[tuple[float, float]] = ((0.5, 5.0), (0.5, 10.0), (1.0, 15.0)),
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    max_displacement: float | None = None,
    force_unit: str = "N",
    progress: ProgressFn | None = None,
) -> DesignSuggestion:
    """Linear chirps over a grid of amplitudes and bands; the one with the smallest worst relative error.

    Designs under which the prior model diverges (or whose peak displacement
    exceeds ``max_displacement``) are skipped; among the others the winner
    minimises the largest predicted relative standard error.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    duration_s : float
        Length of every candidate test.
    fs_hz : float
        Sampling rate.
    amplitudes : sequence of float
        Chirp amplitudes (peak force, in ``force_unit``).
    bands : sequence of (f_start, f_end)
        Chirp bands (Hz).
    outputs : sequence of {"x", "v", "a"}
    x0 : (2,) sequence
        Initial displacement and velocity.
    input_hold : {"cubic", "foh", "zoh"}
    max_displacement : float or None
        Stroke limit of the test rig.
    force_unit : str
        Unit of the amplitudes, used in the design labels (the record's force unit, e.g. ``"V"``).
    progress : callable or None
        ``progress(stage, fraction, message)``: one step per design of the grid.

    Returns
    -------
    DesignSuggestion
    """
    if not amplitudes or not bands:
        raise ModelSpecError("`amplitudes` and `bands` must not be empty")
    table: list[DesignPrediction] = []
    settings: list[tuple[float, float, float]] = []
    steps = _Steps(progress, "design search", len(amplitudes) * len(bands))
    for amp in amplitudes:
        for f_lo, f_hi in bands:
            label = f"chirp {amp:.3g} {force_unit} {f_lo:g}-{f_hi:g} Hz"
            steps.step(len(table), label)
            t, f = chirp_design(float(amp), float(f_lo), float(f_hi), duration_s, fs_hz)
            table.append(predict_uncertainty(model, params_values, t, f, noise_sd=noise_sd, outputs=outputs, x0=x0,
                                             input_hold=input_hold, label=label))
            settings.append((float(amp), float(f_lo), float(f_hi)))
    usable = np.array([d.success and (max_displacement is None or d.x_max <= max_displacement) for d in table])
    if not usable.any():
        return DesignSuggestion(success=False, message="every design diverges or exceeds the displacement limit",
                                table=tuple(table), settings=tuple(settings), usable=usable, best_index=-1, best=None,
                                best_settings=None)
    score = np.array([d.max_rel_stderr if u else np.inf for d, u in zip(table, usable, strict=True)])
    best = int(np.argmin(score))
    win = table[best]
    skipped = int((~usable).sum())
    msg = (f"{win.label}: largest predicted relative standard error {format_percent(win.max_rel_stderr)}"
           f" ({win.worst_parameter}); {len(table)} designs" + (f", {skipped} skipped" if skipped else ""))
    return DesignSuggestion(success=True, message=msg, table=tuple(table), settings=tuple(settings), usable=usable,
                            best_index=best, best=win, best_settings=settings[best])


#: The seed example's design inputs (SI): the defaults without a record.
SEED_DESIGN = {"amplitude": 30.0, "f_start_hz": 0.5, "f_end_hz": 10.0, "duration_s": 12.0, "fs_hz": 500.0,
               "noise_sd": 4e-4}
#: Longest default design duration taken from a record (longer records make every prediction slower).
MAX_DEFAULT_DURATION_S = 30.0


@dataclass(frozen=True, kw_only=True)
class DesignDefaults:
    """Start values of the design inputs, in the units and at the sampling rate of a record.

    Attributes
    ----------
    success : bool
        Always True (a result type of the studies).
    message : str
        One line saying where the values come from.
    from_record : bool
        False: the seed example's SI values (no record given).
    force_unit, x_unit : str
        Units of the amplitudes and of the displacement (output) noise.
    fs_hz : float
        Sampling rate (the record's).
    amplitude : float
        Peak force of the record (two significant digits), in ``force_unit``.
    f_start_hz, f_end_hz : float
        Band of the record's force (0.5 % .. 99.5 % of its power), within the design limit ``fs / 5``.
    duration_s : float
        The record's duration, at most :data:`MAX_DEFAULT_DURATION_S`.
    noise_sd : float
        The fit's displacement residual rms (two significant digits), in ``x_unit``; the record's
        displacement rms / 100 without a fit.
    x_peak : float
        Largest measured |x| (NaN without a record): predictions far beyond it extrapolate the model.
    """

    success: bool
    message: str
    from_record: bool
    force_unit: str
    x_unit: str
    fs_hz: float
    amplitude: float
    f_start_hz: float
    f_end_hz: float
    duration_s: float
    noise_sd: float
    x_peak: float


def _round2(value: float) -> float:
    """``value`` to two significant digits (0 stays 0)."""
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.2g}")


def design_defaults(record: Record | None = None, fit: FitResult | None = None) -> DesignDefaults:
    """Design inputs in the record's units: amplitude, band, duration and sampling rate from the record, noise
    from the fit's residual; the seed example's SI values without a record.

    Parameters
    ----------
    record : Record or None
        The record the prior model was fitted on (its first one).
    fit : FitResult or None
        The prior model's fit; the rms of its displacement residual gives the noise level.

    Returns
    -------
    DesignDefaults
    """
    if record is None:
        s = SEED_DESIGN
        return DesignDefaults(success=True, message="no record: the seed example's SI values (N, m, 500 Hz)",
                              from_record=False, force_unit="N", x_unit="m", fs_hz=s["fs_hz"],
                              amplitude=s["amplitude"], f_start_hz=s["f_start_hz"], f_end_hz=s["f_end_hz"],
                              duration_s=s["duration_s"], noise_sd=s["noise_sd"], x_peak=math.nan)
    from ..excitation import NYQUIST_MARGIN

    fs = float(record.fs)
    f = np.asarray(record.f, dtype=np.float64)
    x = np.asarray(record.x, dtype=np.float64)
    amp = _round2(float(np.max(np.abs(f)))) or 1.0
    spec = np.abs(np.fft.rfft(f - f.mean())) ** 2
    freq = np.fft.rfftfreq(f.size, 1.0 / fs)
    top = fs / 2.0 / NYQUIST_MARGIN
    if spec[1:].sum() > 0:
        cum = np.cumsum(spec[1:]) / spec[1:].sum()
        lo = float(freq[1 + int(np.searchsorted(cum, 0.005))])
        hi = float(freq[1 + min(int(np.searchsorted(cum, 0.995)), cum.size - 1)])
    else:
        lo, hi = 0.01 * top, 0.5 * top
    hi = min(_round2(hi), float(f"{0.99 * top:.2g}"))
    lo = min(max(_round2(lo), 0.01), 0.5 * hi)
    duration = min(record.n / fs, MAX_DEFAULT_DURATION_S)
    noise, noise_from = math.nan, ""
    if fit is not None and fit.records and "x" in fit.records[0].predicted and "x" in fit.records[0].measured:
        res = np.concatenate([rf.predicted["x"] - rf.measured["x"] for rf in fit.records])
        noise = float(np.sqrt(np.mean(res * res))) if res.size else math.nan
        noise_from = "the fit's displacement residual rms"
    if not (noise > 0 and math.isfinite(noise)):
        noise = float(np.sqrt(np.mean(x * x))) / 100 or 1e-6
        noise_from = "1 % of the record's displacement rms"
    xu, fu = record.unit("x"), record.unit("f")
    msg = (f"from record {record.name}: force in {fu}, displacement in {xu}, {fs:.10g} Hz sampling, amplitude"
           f" {amp:g} {fu} (its peak force), band {lo:g}-{hi:g} Hz (its force spectrum), noise {_round2(noise):g} {xu}"
           f" ({noise_from})")
    return DesignDefaults(success=True, message=msg, from_record=True, force_unit=fu, x_unit=xu, fs_hz=fs,
                          amplitude=amp, f_start_hz=lo, f_end_hz=hi, duration_s=float(f"{duration:.3g}"),
                          noise_sd=_round2(noise), x_peak=float(np.max(np.abs(x))))


def format_percent(fraction: float) -> str:
    """A relative value as a percentage with sensible digits.

    Parameters
    ----------
    fraction : float
        The relative value (0.01 is 1 %).

    Returns
    -------
    str
        Three significant digits below 100 % (``0.000123 -> "0.0123 %"``, ``0.637144 -> "63.7 %"``), whole
        percent above (``12.3 -> "1230 %"``), a bound beyond :data:`~nlid_core.metrics.PERCENT_CAP` %;
        ``"not determined"`` for inf or NaN.
    """
    if not math.isfinite(fraction):
        return "not determined"
    pct = 100.0 * fraction
    if abs(pct) >= PERCENT_CAP:
        return f">{PERCENT_CAP:.0f} % (not determined)"
    if abs(pct) >= 100:
        return f"{pct:.0f} %"
    return f"{pct:.3g} %"
