"""Figures of fit and validation results: measured against simulated signals (also inside a position loop),
their spectra, and the residual's spectrum and autocorrelation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError, ModelSpecError
from ..estimate import FitResult, RecordFit
from ..metrics import autocorrelation
from ..nonlinearity import power_band, welch_psd
from ..record import SI_UNITS
from ..validation import ValidationResult
from .common import (
    _DIMENSIONLESS,
    COLORS,
    SPECTRUM_BAND_MULTIPLE,
    _as_signal,
    _channel_name,
    _check_max_points,
    _finish,
    _label,
    _positive,
    _text,
    decimate_for_plot,
)

def fit_units(fit: FitResult, record: str | None = None) -> dict[str, str]:
    """Unit of each channel of a fitted record, as the fit's metrics state them.

    A :class:`RecordFit` carries no units; its fit's metrics do (one per fitted channel, in the record's
    own units, e.g. volts). Velocity and acceleration, when not fitted, take the displacement's unit
    per second and per second squared. Pass the result as ``units`` to :func:`fig_fit`.

    Parameters
    ----------
    fit : FitResult
    record : str or None
        Name of the record (one of ``fit.records``); default the first fitted record.

    Returns
    -------
    dict
        Channel (``t``, ``f``, ``x``, ``v``, ``a``) -> unit; channels the metrics do not name are
        left out, except ``t`` (seconds) and ``v``, ``a`` derived from ``x``.
    """
    if not isinstance(fit, FitResult):
        raise DataValidationError(f"`fit` must be a FitResult, got {type(fit).__name__}")
    names = [m.record for m in fit.metrics]
    name = record if record is not None else (fit.records[0].name if fit.records else (names[0] if names else None))
    units = {"t": "s"}
    units.update({m.channel: m.unit for m in fit.metrics if m.record == name and m.unit})
    x = units.get("x")
    if x is not None:
        units.setdefault("v", f"{x}/s")
        units.setdefault("a", f"{x}/s^2")
    return units


class _FitSignals:
    """Measured and predicted signal of one channel of a RecordFit or ValidationResult."""

    def __init__(self, obj: Any, channel: str, units: Mapping[str, str] | None) -> None:
        self.shade: tuple[float, float] | None = None
        if isinstance(obj, ValidationResult):
            self.name, self.t = obj.record, np.asarray(obj.t, dtype=np.float64)
            self.units = dict(SI_UNITS) | dict(obj.units)
            if obj.n_init > 0 and self.t.size > obj.n_init:
                self.shade = (float(self.t[0]), float(self.t[obj.n_init]))
        elif isinstance(obj, RecordFit):
            self.name, self.t = obj.name, np.asarray(obj.t, dtype=np.float64)
            self.units = dict(SI_UNITS) | dict(units or {})
        else:
            raise DataValidationError(
                f"`rec_fit_or_validation` must be a RecordFit or a ValidationResult, got {type(obj).__name__}"
            )
        if channel not in SI_UNITS or channel == "t":
            raise ModelSpecError(f"`channel` must be one of f, x, v, a, got {channel!r}")
        ch = channel
        if ch not in obj.predicted and "f" in obj.predicted:
            ch = "f"  # equation error predicts the force
        if ch not in obj.predicted or ch not in obj.measured:
            raise DataValidationError(
                f"`channel`: `{channel}` is not both measured and predicted for `{self.name}`"
                f" (measured: {sorted(obj.measured)}, predicted: {sorted(obj.predicted)})"
            )
        self.channel = ch
        self.verb = "predicted" if ch == "f" else "simulated"
        self.measured = np.asarray(obj.measured[ch], dtype=np.float64)
        self.predicted = np.asarray(obj.predicted[ch], dtype=np.float64)
        self.force = np.asarray(obj.measured["f"], dtype=np.float64) if "f" in obj.measured else None
        if not (self.measured.size == self.predicted.size == self.t.size):
            raise DataValidationError(f"`rec_fit_or_validation`: signals of `{self.name}` differ in length")
        self.unit = self.units.get(ch, SI_UNITS[ch])


def fig_fit(
    rec_fit_or_validation: RecordFit | ValidationResult,
    *,
    channel: str = "x",
    max_points: int = 4000,
    units: Mapping[str, str] | None = None,
) -> go.Figure:
    """Measured against simulated (or predicted) signal, with the residual below.

    Parameters
    ----------
    rec_fit_or_validation : RecordFit or ValidationResult
        One record of ``FitResult.records`` or the result of ``validate``.
    channel : str
        Channel to show. For an equation-error fit, whose prediction is the force, ``f`` is used
        when ``channel`` is not predicted.
    max_points : int
        Most points per trace (min/max decimation).
    units : mapping or None
        Unit per channel for a ``RecordFit`` (which does not carry units; e.g. ``rec.units``);
        SI by default. A ``ValidationResult`` carries its own.

    Returns
    -------
    plotly.graph_objects.Figure
        Two rows; for a ``ValidationResult`` the samples that set the initial state are shaded.
    """
    sig = _FitSignals(rec_fit_or_validation, channel, units)
    mp = _check_max_points(max_points)
    t = sig.t
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06, row_heights=[0.65, 0.35])
    pairs = ((sig.measured, "measured", "#333", "solid"), (sig.predicted, sig.verb, COLORS[1], "dash"))
    # values with their units in the hover box (units are user data: escaped)
    hover = f"%{{y:.4g}} {_text(sig.unit)} at %{{x:.4g}} {_text(sig.units.get('t', 's'))}"
    for y, label, color, dash in pairs:
        td, yd = decimate_for_plot(t, y, mp)
        line = {"color": color, "width": 1.2, "dash": dash}
        fig.add_trace(go.Scatter(x=td, y=yd, mode="lines", name=label, line=line, hovertemplate=hover),
                      row=1, col=1)
    td, rd = decimate_for_plot(t, sig.predicted - sig.measured, mp)
    fig.add_trace(go.Scatter(x=td, y=rd, mode="lines", name="residual", line={"color": COLORS[0], "width": 1},
                             hovertemplate=hover), row=2, col=1)
    if sig.shade is not None:
        fig.add_vrect(x0=sig.shade[0], x1=sig.shade[1], fillcolor="#bbb", opacity=0.25, line_width=0,
                      annotation_text="initial state", annotation_position="top left")
    fig.update_yaxes(title_text=_label(_channel_name(sig.channel), sig.unit), row=1, col=1)
    fig.update_yaxes(title_text=_label(f"residual ({sig.verb} − measured)", sig.unit), row=2, col=1)
    fig.update_xaxes(title_text=_label("time", sig.units.get("t", "s")), row=2, col=1)
    return _finish(fig, f"{sig.name}: measured vs {sig.verb} {_channel_name(sig.channel)}", rows=2)


def fig_closed_loop(
    t: ArrayLike,
    reference: ArrayLike,
    measured: Mapping[str, ArrayLike],
    simulated: Mapping[str, ArrayLike],
    *,
    units: Mapping[str, str],
    name: str,
    max_points: int = 4000,
) -> go.Figure:
    """A model simulated inside a position loop against the record: the position (with the loop's reference)
    on top, its error below it, the applied force against the measured force at the bottom.

    Parameters
    ----------
    t, reference : (n,) array_like
    measured, simulated : mapping of str to (n,) array_like
        ``x`` and ``f``; a channel missing from ``measured`` is drawn simulated only.
    units : mapping of str to str
        ``t``, ``x`` and ``f``.
    name : str
        The record's name (user data: escaped).
    """
    mp = _check_max_points(max_points)
    tt = _as_signal("t", t)
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.05, row_heights=[0.4, 0.2, 0.4])
    hover = {c: f"%{{y:.4g}} {_text(units.get(c, SI_UNITS[c]))} at %{{x:.4g}} {_text(units.get('t', 's'))}"
             for c in ("x", "f")}
    x_meas = measured.get("x")
    error = None if x_meas is None else _as_signal("x", simulated["x"]) - _as_signal("x", x_meas)
    traces = [(1, "x", reference, "reference", "#999", "dot"), (1, "x", x_meas, "measured", "#333", "solid"),
              (1, "x", simulated["x"], "simulated in the loop", COLORS[1], "dash"),
              (2, "x", error, "position error", COLORS[0], "solid"),
              (3, "f", measured.get("f"), "measured force", "#777", "solid"),
              (3, "f", simulated["f"], "applied force, simulated", COLORS[1], "dash")]
    for row, c, y, label, color, dash in traces:
        if y is None:
            continue
        td, yd = decimate_for_plot(tt, _as_signal(label, y), mp)
        fig.add_trace(go.Scatter(x=td, y=yd, mode="lines", name=label, line={"color": color, "width": 1.2, "dash": dash},
                                 hovertemplate=hover[c]), row=row, col=1)
    fig.update_yaxes(title_text=_label("displacement", units.get("x", SI_UNITS["x"])), row=1, col=1)
    fig.update_yaxes(title_text=_label("simulated − measured", units.get("x", SI_UNITS["x"])), row=2, col=1)
    fig.update_yaxes(title_text=_label("force", units.get("f", SI_UNITS["f"])), row=3, col=1)
    fig.update_xaxes(title_text=_label("time", units.get("t", "s")), row=3, col=1)
    return _finish(fig, f"{name}: simulated inside the position loop", rows=3)


def fig_fit_spectrum(
    rec_fit_or_validation: RecordFit | ValidationResult,
    *,
    channel: str = "x",
    units: Mapping[str, str] | None = None,
    nperseg: int | None = None,
    max_freq: float | None = None,
) -> go.Figure:
    """Welch PSDs (dB) of the measured and simulated (or predicted) signal and of the residual.

    A model that misses a nonlinearity leaves the harmonics of the measured response unexplained:
    they stand out in the residual's spectrum.

    Parameters
    ----------
    rec_fit_or_validation : RecordFit or ValidationResult
        One record of ``FitResult.records`` or the result of ``validate``; for a validation the
        samples that set the initial state are left out.
    channel : str
        Channel (``f`` for an equation-error fit, used automatically when ``channel`` is not predicted).
    units : mapping or None
        Unit per channel for a ``RecordFit``; SI by default.
    nperseg : int or None
        Welch segment length (see :func:`nlid_core.nonlinearity.welch_psd`).
    max_freq : float or None
        Highest frequency shown (Hz); default ``SPECTRUM_BAND_MULTIPLE`` times the upper edge of the
        force's band (of the measured channel's band without a force). ``math.inf`` shows everything.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    sig = _FitSignals(rec_fit_or_validation, channel, units)
    start = 0
    if isinstance(rec_fit_or_validation, ValidationResult):
        start = min(rec_fit_or_validation.n_init, max(0, sig.t.size - 8))
    t = sig.t[start:]
    if t.size < 8 or not t[-1] > t[0]:
        raise DataValidationError(f"`rec_fit_or_validation`: `{sig.name}` is too short for a spectrum")
    fs = (t.size - 1) / float(t[-1] - t[0])
    meas, pred = sig.measured[start:], sig.predicted[start:]
    if max_freq is None:
        ref = sig.force[start:] if sig.force is not None and np.ptp(sig.force[start:]) > 0 else meas
        try:
            top = SPECTRUM_BAND_MULTIPLE * power_band(ref, fs)[1]
        except DataValidationError:
            top = math.inf
    else:
        top = _positive("max_freq", max_freq, "Hz")
    fig = go.Figure()
    styles = (("measured", meas, "#333", "solid"), (sig.verb, pred, COLORS[1], "dash"),
              ("residual", pred - meas, COLORS[0], "solid"))
    for label, y, color, dash in styles:
        freq, psd = welch_psd(y, fs, nperseg=nperseg)
        keep = freq <= top
        peak = float(np.max(psd)) if psd.size else 0.0
        db = 10.0 * np.log10(np.maximum(psd, peak * 1e-30 if peak > 0 else 1e-300))
        fig.add_trace(go.Scatter(x=freq[keep], y=db[keep], mode="lines", name=label,
                                 line={"color": color, "width": 1.3, "dash": dash}))
    fig.update_xaxes(title_text=_label("frequency", "Hz"))
    fig.update_yaxes(title_text=_label(f"PSD of {sig.channel}", f"dB re {sig.unit}^2/Hz"))
    return _finish(fig, f"{sig.name}: spectra of measured, {sig.verb} and residual {_channel_name(sig.channel)}",
                   height=420)


def fig_residual_spectrum(
    t: ArrayLike, residual: ArrayLike, *, unit: str, nperseg: int | None = None
) -> go.Figure:
    """Welch PSD (dB) of a residual: peaks show dynamics the model misses.

    Parameters
    ----------
    t : (n,) array_like
        Uniform sample times (s).
    residual : (n,) array_like
        Residual signal.
    unit : str
        Unit of the residual.
    nperseg : int or None
        Welch segment length (see :func:`nlid_core.nonlinearity.welch_psd`).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    tt = _as_signal("t", t)
    rr = _as_signal("residual", residual)
    if tt.size != rr.size or tt.size < 8:
        raise DataValidationError(f"`t` and `residual` must have one length of at least 8, got {tt.size}, {rr.size}")
    span = float(tt[-1] - tt[0])
    if not span > 0:
        raise DataValidationError("`t` must increase")
    fs = (tt.size - 1) / span
    freq, psd = welch_psd(rr, fs, nperseg=nperseg)
    top = float(np.max(psd)) if psd.size else 0.0
    db = 10.0 * np.log10(np.maximum(psd, top * 1e-30 if top > 0 else 1e-300))
    line = {"color": COLORS[0], "width": 1.2}
    fig = go.Figure(go.Scatter(x=freq, y=db, mode="lines", name="residual PSD", line=line))
    fig.update_xaxes(title_text=_label("frequency", "Hz"))
    fig.update_yaxes(title_text=_label("PSD of residual", f"dB re {unit}^2/Hz"))
    return _finish(fig, "residual spectrum", height=380)


def fig_residual_acf(residual: ArrayLike, *, max_lag: int = 50, dt: float | None = None) -> go.Figure:
    """Autocorrelation of a residual (stems) with the ±1.96/√n whiteness band.

    Parameters
    ----------
    residual : (n,) array_like
        Residual signal.
    max_lag : int
        Largest lag shown (samples).
    dt : float or None
        Sampling interval (s): lags in seconds instead of samples.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rr = _as_signal("residual", residual)
    if rr.size < 3:
        raise DataValidationError(f"`residual` needs at least 3 samples, got {rr.size}")
    lag = _check_max_points(max_lag, "max_lag", 1)
    lag = min(lag, rr.size - 1)
    acf = autocorrelation(rr, lag)
    band = 1.96 / math.sqrt(rr.size)
    if dt is not None:
        step = _positive("dt", dt, "s")
        if not math.isfinite(step):
            raise ModelSpecError(f"`dt` must be a finite interval in s, got {dt!r}")
        lags = np.arange(lag + 1) * step
        xlabel = _label("lag", "s")
    else:
        lags = np.arange(lag + 1, dtype=np.float64)
        xlabel = _label("lag", "samples")
    stem_x = np.column_stack([lags, lags, np.full(lags.size, np.nan)]).ravel()
    stem_y = np.column_stack([np.zeros(lags.size), acf, np.full(lags.size, np.nan)]).ravel()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=stem_x, y=stem_y, mode="lines", name="ACF", line={"color": COLORS[0], "width": 1.5},
                             showlegend=False, hoverinfo="skip"))
    marker = {"color": COLORS[0], "size": 6}
    fig.add_trace(go.Scatter(x=lags, y=acf, mode="markers", name="autocorrelation", marker=marker))
    for sign in (1.0, -1.0):
        fig.add_trace(go.Scatter(x=[lags[0], lags[-1]], y=[sign * band, sign * band], mode="lines",
                                 name="±1.96/√n", showlegend=sign > 0, legendgroup="band",
                                 line={"color": COLORS[1], "width": 1, "dash": "dash"}))
    fig.update_xaxes(title_text=xlabel)
    fig.update_yaxes(title_text=_label("autocorrelation", _DIMENSIONLESS))
    return _finish(fig, "residual autocorrelation", height=360)
