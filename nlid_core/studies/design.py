"""Experiment design before a test: predicted uncertainty of a candidate force, design comparison, chirp search."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelSpecError
from ..examples import chirp_force
from ..identifiability import uncertainty_from_jacobian
from ..models import TermModel
from ..params import ParameterSet
from ..simulate import simulate
from ._common import FloatArray, _check_outputs, _model, _noise_map, _param_set, _substeps

__all__ = ["DesignPrediction", "predict_uncertainty", "compare_designs", "DesignSuggestion", "chirp_design", "suggest_design"]


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
                                worst_parameter="", x_max=xmax, x_rms=xrms, **common)  # type: ignore[arg-type]

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
    msg = (f"{label + ': ' if label else ''}largest predicted relative standard error {100 * rel[worst]:.3g} %"
           f" ({names[worst]}); peak displacement {xmax:.3g}")
    return DesignPrediction(success=True, message=msg, stderr=unc.stderr, rel_stderr=rel, covariance=unc.covariance,
                            correlation=unc.correlation, fisher=jac.T @ jac, condition_number=unc.condition_number,
                            max_rel_stderr=float(rel[worst]), worst_parameter=names[worst], x_max=xmax, x_rms=xrms,
                            **common)  # type: ignore[arg-type]


def compare_designs(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    designs: Sequence[tuple[str, ArrayLike, ArrayLike]],
    *,
    noise_sd: float | Mapping[str, float],
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
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

    Returns
    -------
    list of DesignPrediction
        In the order of ``designs``.
    """
    return [predict_uncertainty(model, params_values, t, f, noise_sd=noise_sd, outputs=outputs, x0=x0,
                                input_hold=input_hold, label=str(label)) for label, t, f in designs]


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
    amplitude : float, N
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
        Chirp amplitudes (N).
    bands : sequence of (f_start, f_end)
        Chirp bands (Hz).
    outputs : sequence of {"x", "v", "a"}
    x0 : (2,) sequence
        Initial displacement and velocity.
    input_hold : {"cubic", "foh", "zoh"}
    max_displacement : float or None
        Stroke limit of the test rig.

    Returns
    -------
    DesignSuggestion
    """
    if not amplitudes or not bands:
        raise ModelSpecError("`amplitudes` and `bands` must not be empty")
    table, settings = [], []
    for amp in amplitudes:
        for f_lo, f_hi in bands:
            t, f = chirp_design(float(amp), float(f_lo), float(f_hi), duration_s, fs_hz)
            label = f"chirp {amp:g} N {f_lo:g}-{f_hi:g} Hz"
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
    msg = (f"{win.label}: largest predicted relative standard error {100 * win.max_rel_stderr:.3g} %"
           f" ({win.worst_parameter}); {len(table)} designs" + (f", {skipped} skipped" if skipped else ""))
    return DesignSuggestion(success=True, message=msg, table=tuple(table), settings=tuple(settings), usable=usable,
                            best_index=best, best=win, best_settings=settings[best])
