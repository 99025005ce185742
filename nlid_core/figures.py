"""Plotly figure builders for records, evidence of nonlinearity and fit results.

Every builder takes data or result objects of ``nlid_core`` and returns a
:class:`plotly.graph_objects.Figure`; nothing is computed here beyond
decimation for plotting (long signals are thinned by :func:`decimate_for_plot`,
which keeps every peak; results are never computed from decimated data) and
the few direct transforms a plot needs (the Welch spectrum and the
autocorrelation of a residual, the envelope used to colour a hysteresis loop),
which come from :mod:`nlid_core.nonlinearity` and :mod:`nlid_core.metrics`.

All figures share one look (``TEMPLATE``, ``FONT``, legends above the plot)
and label every numeric axis with its unit in brackets, e.g. ``force [N]``.

This is the only module of ``nlid_core`` that imports plotly, and
``nlid_core/__init__.py`` does not import it: ``import nlid_core`` stays free
of UI libraries. Use ``from nlid_core import figures``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike, NDArray
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from .errors import DataValidationError, ModelSpecError
from .estimate import FitResult, RecordFit
from .metrics import autocorrelation
from .nonlinearity import (
    FRF,
    HARMONIC_DB,
    EquivalentLinear,
    HarmonicAnalysis,
    RestoringForce,
    RestoringSurface,
    Spectrum,
    local_amplitude,
    power_band,
    welch_psd,
)
from .record import CHANNEL_LABELS, SI_UNITS, Record
from .validation import ValidationResult

__all__ = [
    "TEMPLATE",
    "FONT",
    "decimate_for_plot",
    "fig_record",
    "fig_derivative_check",
    "fig_hysteresis",
    "fig_restoring_force",
    "fig_spectrum",
    "fig_spectrogram",
    "fig_harmonics",
    "fig_frf_overlay",
    "fig_correlation",
    "fig_fit",
    "fig_fit_spectrum",
    "fig_residual_spectrum",
    "fig_residual_acf",
    "fig_to_html",
    "fig_restoring_surface",
    "fig_equivalent_linear",
    "fig_excitation",
    "fig_design_comparison",
    "fig_sensitivity",
    "fig_profile",
    "fig_lcurve",
]

FloatArray = NDArray[np.float64]

#: Plotly template of every figure.
TEMPLATE = "plotly_white"
#: Base font of every figure.
FONT: Mapping[str, Any] = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 13}
#: Height (px) of one subplot row.
ROW_HEIGHT = 230
#: Colour sequence (plotly's default qualitative palette).
COLORS: tuple[str, ...] = (
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52",
)
_DIMENSIONLESS = "-"
#: Default frequency range of spectra: this many times the upper edge of the excitation band.
SPECTRUM_BAND_MULTIPLE = 8.0
#: Default frequency range of FRFs: the excitation band widened by this factor on both sides.
FRF_BAND_MARGIN = 1.25


# --------------------------------------------------------------------------- helpers
def _text(value: object) -> str:
    """User-derived text (record names, units) made inert for plotly, which renders a subset of HTML
    (links, line breaks) in titles, labels and hover text; plotly shows the entities as the characters."""
    return html.escape(str(value), quote=False)


def _label(name: str, unit: str | None) -> str:
    u = (unit or "").strip()
    return _text(f"{name} [{u if u and u != '1' else _DIMENSIONLESS}]")


def _finish(fig: go.Figure, title: str | None, rows: int = 1, height: int | None = None,
            markup: bool = False) -> go.Figure:
    """Apply the common layout; ``title`` is escaped unless ``markup`` (its user parts escaped by the caller)."""
    if title and not markup:
        title = _text(title)
    fig.update_layout(
        template=TEMPLATE,
        font=dict(FONT),
        title={"text": title or "", "x": 0.0, "xanchor": "left"},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1.0},
        margin={"l": 70, "r": 30, "t": 70 if title else 40, "b": 55},
        height=height or max(320, ROW_HEIGHT * rows + 110),
        hovermode="closest",
    )
    return fig


def _check_max_points(max_points: Any, name: str = "max_points", minimum: int = 4) -> int:
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < minimum:
        raise ModelSpecError(f"`{name}` must be an integer >= {minimum}, got {max_points!r}")
    return int(max_points)


def _positive(name: str, value: Any, unit: str) -> float:
    try:
        val = float(value)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a positive number ({unit}), got {value!r}") from None
    if not (val > 0 and not math.isnan(val)):
        raise ModelSpecError(f"`{name}` must be a positive number ({unit}), got {value!r}")
    return val


def _as_signal(name: str, values: ArrayLike) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"`{name}` must be a numeric 1-D array") from None
    if arr.ndim != 1 or arr.size == 0:
        raise DataValidationError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    return arr


def _check_record(rec: Any) -> Record:
    if not isinstance(rec, Record):
        raise DataValidationError(f"`rec` must be a Record, got {type(rec).__name__}")
    return rec


def _stride(n: int, max_points: int) -> NDArray[np.intp]:
    """Evenly spaced indices (every k-th sample) for scatter plots."""
    step = max(1, int(math.ceil(n / max_points)))
    return np.arange(0, n, step, dtype=np.intp)


def _channel_name(c: str) -> str:
    return CHANNEL_LABELS.get(c, c)


# --------------------------------------------------------------------------- decimation
def decimate_for_plot(t: ArrayLike, y: ArrayLike, max_points: int = 4000) -> tuple[FloatArray, FloatArray]:
    """Thin a signal for plotting with a min/max envelope that keeps every peak.

    The samples are split into ``max_points // 2`` equal buckets and each bucket keeps its smallest
    and its largest sample (in time order), so the plotted line covers the same range as the full
    signal: the global maximum and minimum are always kept. For plotting only, never for
    computation.

    Parameters
    ----------
    t : (n,) array_like
        Abscissa (time), same length as ``y``.
    y : (n,) array_like
        Signal.
    max_points : int
        Most points returned (>= 4); signals this short are returned unchanged.

    Returns
    -------
    t_dec, y_dec : (m,) ndarray
        ``m <= max_points``.
    """
    tt = _as_signal("t", t)
    yy = _as_signal("y", y)
    if tt.size != yy.size:
        raise DataValidationError(f"`t` has {tt.size} samples but `y` has {yy.size}")
    mp = _check_max_points(max_points)
    n = yy.size
    if n <= mp:
        return tt.copy(), yy.copy()
    buckets = mp // 2
    size = int(math.ceil(n / buckets))
    buckets = int(math.ceil(n / size))
    padded = np.empty(buckets * size)
    padded[:n] = yy
    padded[n:] = yy[-1]
    blocks = padded.reshape(buckets, size)
    base = np.arange(buckets) * size
    i_min = np.minimum(base + np.argmin(blocks, axis=1), n - 1)
    i_max = np.minimum(base + np.argmax(blocks, axis=1), n - 1)
    idx = np.unique(np.concatenate([i_min, i_max]))
    return tt[idx], yy[idx]


# --------------------------------------------------------------------------- records
def fig_record(
    rec: Record, *, channels: Sequence[str] | None = None, max_points: int = 4000, title: str | None = None
) -> go.Figure:
    """Stacked time plots of a record's channels (shared time axis).

    Parameters
    ----------
    rec : Record
    channels : sequence of str or None
        Channels to show (``f``, ``x``, ``v``, ``a``); default every channel present. Derived channels
        are drawn dashed and labelled "derived".
    max_points : int
        Most points per trace (min/max decimation, :func:`decimate_for_plot`).
    title : str or None
        Figure title; default the record's name.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rec = _check_record(rec)
    present = [c for c in rec.channels if c != "t"]
    if channels is None:
        chans = present
    else:
        if isinstance(channels, str):
            channels = (channels,)
        chans = list(dict.fromkeys(channels))
        bad = [c for c in chans if c not in SI_UNITS or c == "t"]
        if bad or not chans:
            raise ModelSpecError(f"`channels` must name some of f, x, v, a, got {list(channels)}")
        missing = [c for c in chans if c not in present]
        if missing:
            raise DataValidationError(f"`channels`: record `{rec.name}` has no channel(s) {missing}")
    mp = _check_max_points(max_points)
    fig = make_subplots(rows=len(chans), cols=1, shared_xaxes=True, vertical_spacing=0.04)
    for i, c in enumerate(chans, start=1):
        derived = c in rec.derived
        td, yd = decimate_for_plot(rec.t, rec.channel(c), mp)
        fig.add_trace(
            go.Scatter(
                x=td, y=yd, mode="lines", name=f"{c} (derived)" if derived else c,
                line={"color": COLORS[(i - 1) % len(COLORS)], "width": 1.2, "dash": "dash" if derived else "solid"},
            ),
            row=i, col=1,
        )
        label = _channel_name(c) + (" (derived)" if derived else "")
        fig.update_yaxes(title_text=_label(label, rec.unit(c)), row=i, col=1)
    fig.update_xaxes(title_text=_label("time", rec.unit("t")), row=len(chans), col=1)
    return _finish(fig, title if title is not None else f"record {rec.name}", rows=len(chans))


def fig_derivative_check(
    t: ArrayLike,
    measured: ArrayLike,
    derived: ArrayLike,
    *,
    name: str,
    unit: str,
    time_unit: str = "s",
    max_points: int = 4000,
) -> go.Figure:
    """Overlay of a measured channel and the same channel derived by differentiation, with their difference.

    Parameters
    ----------
    t : (n,) array_like
        Time.
    measured, derived : (n,) array_like
        The measured signal and the one obtained by differentiating another channel.
    name : str
        What the signal is, e.g. ``"velocity"``.
    unit : str
        Its unit, e.g. ``"m/s"``.
    time_unit : str
        Unit of ``t``.
    max_points : int
        Most points per trace.

    Returns
    -------
    plotly.graph_objects.Figure
        Two rows: both signals, and derived − measured.
    """
    tt = _as_signal("t", t)
    ym = _as_signal("measured", measured)
    yd = _as_signal("derived", derived)
    if not (tt.size == ym.size == yd.size):
        raise DataValidationError(
            f"`t`, `measured` and `derived` must have one length, got {tt.size}, {ym.size}, {yd.size}"
        )
    mp = _check_max_points(max_points)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06, row_heights=[0.65, 0.35])
    for y, label, color, dash in ((ym, "measured", COLORS[0], "solid"), (yd, "derived", COLORS[1], "dash")):
        td, yy = decimate_for_plot(tt, y, mp)
        line = {"color": color, "width": 1.2, "dash": dash}
        fig.add_trace(go.Scatter(x=td, y=yy, mode="lines", name=label, line=line), row=1, col=1)
    td, dd = decimate_for_plot(tt, yd - ym, mp)
    fig.add_trace(go.Scatter(x=td, y=dd, mode="lines", name="derived − measured", line={"color": "#555", "width": 1}),
                  row=2, col=1)
    fig.update_yaxes(title_text=_label(name, unit), row=1, col=1)
    fig.update_yaxes(title_text=_label("derived − measured", unit), row=2, col=1)
    fig.update_xaxes(title_text=_label("time", time_unit), row=2, col=1)
    return _finish(fig, f"{name}: measured vs derived", rows=2)


def fig_hysteresis(
    rec: Record, *, against: str = "x", color_by: str = "time", max_points: int = 6000
) -> go.Figure:
    """Force against displacement or velocity (hysteresis / damping loops).

    Parameters
    ----------
    rec : Record
    against : {"x", "v"}
        Abscissa: displacement (stiffness loops) or velocity (damping loops).
    color_by : {"time", "amplitude"}
        Colour of the points: time (colour bar "time [s]") or the local amplitude (envelope) of the
        ``against`` channel.
    max_points : int
        Most points plotted (every k-th sample).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rec = _check_record(rec)
    if against not in ("x", "v"):
        raise ModelSpecError(f"`against` must be 'x' or 'v', got {against!r}")
    if color_by not in ("time", "amplitude"):
        raise ModelSpecError(f"`color_by` must be 'time' or 'amplitude', got {color_by!r}")
    if getattr(rec, against) is None:
        raise DataValidationError(f"`against`: record `{rec.name}` has no `{against}` channel; derive it first")
    mp = _check_max_points(max_points)
    xs = rec.channel(against)
    if color_by == "time":
        color = rec.t
        cbar = _label("time", rec.unit("t"))
    else:
        color = local_amplitude(xs)
        cbar = _label(f"amplitude of {against}", rec.unit(against))
    idx = _stride(rec.n, mp)
    fig = go.Figure(
        go.Scattergl(
            x=xs[idx], y=rec.f[idx], mode="markers", name=f"f vs {against}",
            marker={"size": 3, "color": color[idx], "colorscale": "Viridis", "showscale": True,
                    "colorbar": {"title": {"text": cbar}}},
        )
    )
    fig.update_xaxes(title_text=_label(_channel_name(against), rec.unit(against)))
    fig.update_yaxes(title_text=_label("force", rec.unit("f")))
    kind = "stiffness" if against == "x" else "damping"
    return _finish(fig, f"{rec.name}: force vs {_channel_name(against)} ({kind} loops)", height=480)


def fig_restoring_force(
    rf: RestoringForce,
    *,
    against: str = "x",
    model_curve: tuple[ArrayLike, ArrayLike] | None = None,
    max_points: int = 6000,
) -> go.Figure:
    """Restoring force ``f − m·ẍ`` against displacement or velocity.

    Points are coloured by the other state (velocity when plotted against displacement and vice
    versa): points near zero velocity trace the stiffness curve, near zero displacement the damping
    curve.

    Parameters
    ----------
    rf : RestoringForce
        From :func:`nlid_core.nonlinearity.restoring_force`.
    against : {"x", "v"}
        Abscissa.
    model_curve : (array_like, array_like) or None
        A model's curve to overlay, as abscissa values and force values.
    max_points : int
        Most points plotted (every k-th sample).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(rf, RestoringForce):
        raise DataValidationError(f"`rf` must be a RestoringForce, got {type(rf).__name__}")
    if against not in ("x", "v"):
        raise ModelSpecError(f"`against` must be 'x' or 'v', got {against!r}")
    mp = _check_max_points(max_points)
    other = "v" if against == "x" else "x"
    xs = rf.x if against == "x" else rf.v
    cs = rf.v if against == "x" else rf.x
    idx = _stride(xs.size, mp)
    units = dict(SI_UNITS) | dict(rf.units)
    fig = go.Figure(
        go.Scattergl(
            x=xs[idx], y=rf.force[idx], mode="markers", name="f − m·ẍ",
            marker={"size": 3, "color": cs[idx], "colorscale": "RdBu", "cmid": 0.0, "showscale": True,
                    "colorbar": {"title": {"text": _label(_channel_name(other), units[other])}}},
        )
    )
    if model_curve is not None:
        try:
            mx, my = model_curve
        except (TypeError, ValueError):
            raise DataValidationError("`model_curve` must be a pair (abscissa values, force values)") from None
        mxa = _as_signal("model_curve[0]", mx)
        mya = _as_signal("model_curve[1]", my)
        if mxa.size != mya.size:
            raise DataValidationError(f"`model_curve` arrays differ in length ({mxa.size} vs {mya.size})")
        fig.add_trace(go.Scatter(x=mxa, y=mya, mode="lines", name="model", line={"color": "black", "width": 2}))
    fig.update_xaxes(title_text=_label(_channel_name(against), units[against]))
    fig.update_yaxes(title_text=_label("restoring force f − m·ẍ", units["f"]))
    title = (f"{_text(rf.record)}: restoring force (m = {rf.mass:.4g} {_text(rf.mass_unit)})"
             f"<br><sup>mass: {_text(rf.mass_source)}</sup>")
    return _finish(fig, title, height=480, markup=True)


# --------------------------------------------------------------------------- spectra
def fig_spectrum(
    spec: Spectrum,
    *,
    harmonics_of: float | None = None,
    n_markers: int = 5,
    log_freq: bool = False,
    max_freq: float | None = None,
) -> go.Figure:
    """Power spectral densities in dB, one row per channel.

    Parameters
    ----------
    spec : Spectrum
        From :func:`nlid_core.nonlinearity.spectrum`.
    harmonics_of : float or None
        A fundamental frequency (Hz): dotted vertical markers at k·f for k = 1..``n_markers``.
    n_markers : int
        Number of harmonic markers.
    log_freq : bool
        Logarithmic frequency axis.
    max_freq : float or None
        Highest frequency shown (Hz); default ``SPECTRUM_BAND_MULTIPLE`` times the upper edge of the
        excitation band (where harmonics of the fundamental lie), all of it when the band is
        unknown. ``math.inf`` shows everything.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(spec, Spectrum):
        raise DataValidationError(f"`spec` must be a Spectrum, got {type(spec).__name__}")
    chans = list(spec.psd)
    if not chans:
        raise DataValidationError("`spec` holds no channel")
    nm = _check_max_points(n_markers, "n_markers", 1)
    fig = make_subplots(rows=len(chans), cols=1, shared_xaxes=True, vertical_spacing=0.05)
    freq = spec.freq_hz
    top = _top_frequency(max_freq, spec.band_hz)
    keep = (freq > 0 if log_freq else np.ones(freq.size, dtype=bool)) & (freq <= top)
    for i, c in enumerate(chans, start=1):
        fig.add_trace(
            go.Scatter(x=freq[keep], y=spec.psd_db(c)[keep], mode="lines", name=c,
                       line={"color": COLORS[(i - 1) % len(COLORS)], "width": 1.2}),
            row=i, col=1,
        )
        fig.update_yaxes(title_text=_label(f"PSD of {c}", f"dB re {spec.psd_unit(c)}"), row=i, col=1)
    if harmonics_of is not None:
        f1 = _positive("harmonics_of", harmonics_of, "Hz")
        if not math.isfinite(f1):
            raise ModelSpecError(f"`harmonics_of` must be a finite frequency in Hz, got {harmonics_of!r}")
        shown_top = float(freq[keep][-1]) if keep.any() else 0.0
        for k in range(1, nm + 1):
            if k * f1 > shown_top:
                break
            line = {"color": "#888", "width": 1, "dash": "dot"}
            fig.add_vline(x=k * f1, line=line, row=1, col=1, annotation_text=f"{k}×" if k > 1 else "f0",
                          annotation_position="top", annotation_font_size=10)
            for row in range(2, len(chans) + 1):
                fig.add_vline(x=k * f1, line=line, row=row, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=len(chans), col=1)
    if log_freq:
        fig.update_xaxes(type="log")
    return _finish(fig, f"{spec.record}: power spectral density" if spec.record else "power spectral density",
                   rows=len(chans))


def _top_frequency(max_freq: float | None, band: tuple[float, float]) -> float:
    if max_freq is None:
        hi = float(band[1])
        return SPECTRUM_BAND_MULTIPLE * hi if math.isfinite(hi) and hi > 0 else math.inf
    return _positive("max_freq", max_freq, "Hz")


def fig_spectrogram(
    times: ArrayLike,
    freqs: ArrayLike,
    power_db: ArrayLike,
    *,
    max_freq: float | None = None,
    unit: str | None = None,
    title: str | None = None,
) -> go.Figure:
    """Spectrogram heatmap (time × frequency, colour = PSD in dB).

    Parameters
    ----------
    times : (w,) array_like
        Column times (s).
    freqs : (m,) array_like
        Row frequencies (Hz).
    power_db : (m, w) array_like
        PSD in dB (as from :func:`nlid_core.nonlinearity.spectrogram`).
    max_freq : float or None
        Highest frequency shown (Hz).
    unit : str or None
        Unit of the signal, for the colour bar ("PSD [dB re m^2/Hz]").
    title : str or None

    Returns
    -------
    plotly.graph_objects.Figure
    """
    tt = _as_signal("times", times)
    ff = _as_signal("freqs", freqs)
    pp = np.asarray(power_db, dtype=np.float64)
    if pp.shape != (ff.size, tt.size):
        raise DataValidationError(
            f"`power_db` must have shape (len(freqs), len(times)) = {(ff.size, tt.size)}, got {pp.shape}"
        )
    if max_freq is not None:
        keep = ff <= _positive("max_freq", max_freq, "Hz")
        ff, pp = ff[keep], pp[keep]
    bar = _label("PSD", f"dB re {unit}^2/Hz" if unit else "dB")
    fig = go.Figure(go.Heatmap(x=tt, y=ff, z=pp, colorscale="Viridis", colorbar={"title": {"text": bar}},
                               name="PSD", hovertemplate="t %{x:.3g} s<br>f %{y:.4g} Hz<br>%{z:.1f} dB<extra></extra>"))
    fig.update_xaxes(title_text=_label("time", "s"))
    fig.update_yaxes(title_text=_label("frequency", "Hz"))
    return _finish(fig, title or "spectrogram", height=460)


def fig_harmonics(h: HarmonicAnalysis, *, against: str = "time", show_floor: bool = True) -> go.Figure:
    """Harmonic levels of the response relative to its fundamental, along the record.

    Windows where a harmonic crosses a free vibration (``h.coincident``) are drawn as open markers;
    the threshold ``HARMONIC_DB`` is a dashed line and the noise floor a dotted grey line.

    Parameters
    ----------
    h : HarmonicAnalysis
        From :func:`nlid_core.nonlinearity.harmonic_distortion`.
    against : {"time", "frequency"}
        Abscissa: window time or the instantaneous fundamental frequency.
    show_floor : bool
        Draw the level white residual noise alone would give.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(h, HarmonicAnalysis):
        raise DataValidationError(f"`h` must be a HarmonicAnalysis, got {type(h).__name__}")
    if against not in ("time", "frequency"):
        raise ModelSpecError(f"`against` must be 'time' or 'frequency', got {against!r}")
    xs = h.time_s if against == "time" else h.f0_hz
    order = np.argsort(xs, kind="stable") if against == "frequency" else np.arange(xs.size)
    xs = xs[order]
    fig = go.Figure()
    for j, k in enumerate(h.harmonics):
        lev = h.levels_db[order, j]
        hit = h.coincident[order, j]
        color = COLORS[j % len(COLORS)]
        fig.add_trace(go.Scatter(x=xs, y=np.where(hit, np.nan, lev), mode="lines+markers", name=f"{k}×",
                                 legendgroup=str(k), line={"color": color, "width": 1.5}, marker={"size": 6},
                                 connectgaps=False))
        if hit.any():
            fig.add_trace(go.Scatter(x=xs, y=np.where(hit, lev, np.nan), mode="markers", name=f"{k}× (free vibration)",
                                     legendgroup=str(k), showlegend=False,
                                     marker={"size": 8, "color": color, "symbol": "circle-open"}))
    if h.coincident.any():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="crosses a free vibration (not counted)",
                                 marker={"size": 8, "color": "#666", "symbol": "circle-open"}))
    if show_floor:
        fig.add_trace(go.Scatter(x=xs, y=h.floor_db[order], mode="lines", name="noise floor",
                                 line={"color": "#999", "width": 1, "dash": "dot"}))
    fig.add_hline(y=HARMONIC_DB, line={"color": "#444", "width": 1, "dash": "dash"},
                  annotation_text=f"{HARMONIC_DB:.0f} dB", annotation_position="bottom right")
    if h.n_valid == 0:
        fig.add_annotation(text="no tonal window: the force is not a single sine", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)
    xlabel = _label("time", "s") if against == "time" else _label("fundamental frequency", "Hz")
    fig.update_xaxes(title_text=xlabel)
    fig.update_yaxes(title_text=_label(f"harmonic of {h.channel} re fundamental", "dB"))
    title = f"{h.record}: harmonics of {h.channel} (window {h.window_s:.3g} s)"
    return _finish(fig, title, height=440)


def fig_frf_overlay(
    frfs: Sequence[tuple[str, FRF]], *, show_coherence: bool = True, log_freq: bool = False,
    band: tuple[float, float] | None = None,
) -> go.Figure:
    """Magnitude (dB), phase and coherence of several FRFs (e.g. one per excitation level).

    Parameters
    ----------
    frfs : sequence of (str, FRF)
        Label and FRF (from :func:`nlid_core.nonlinearity.frf`) per trace.
    show_coherence : bool
        Add a coherence row.
    log_freq : bool
        Logarithmic frequency axis.
    band : (float, float) or None
        Frequency range shown (Hz). Default: the FRFs' excitation bands (``FRF.band_hz``), widened
        by ``FRF_BAND_MARGIN``; outside the band the estimate is noise over noise.
        ``(0, math.inf)`` shows everything. The phase is unwrapped within the range shown.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    items = list(frfs) if not isinstance(frfs, (str, bytes)) else []
    if not items or any(not (isinstance(it, tuple) and len(it) == 2 and isinstance(it[1], FRF)) for it in items):
        raise DataValidationError("`frfs` must be a non-empty sequence of (label, FRF) pairs")
    rows = 3 if show_coherence else 2
    heights = [0.45, 0.3, 0.25] if show_coherence else [0.6, 0.4]
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.05, row_heights=heights)
    units = sorted({frf_.unit for _, frf_ in items})
    if band is None:
        los = [b.band_hz[0] for _, b in items if math.isfinite(b.band_hz[0])]
        his = [b.band_hz[1] for _, b in items if math.isfinite(b.band_hz[1])]
        lo, hi = (min(los) / FRF_BAND_MARGIN, max(his) * FRF_BAND_MARGIN) if los and his else (0.0, math.inf)
    else:
        try:
            lo, hi = (float(v) for v in band)
        except (TypeError, ValueError):
            raise ModelSpecError(f"`band` must be two frequencies in Hz, got {band!r}") from None
        if not lo < hi:
            raise ModelSpecError(f"`band` must be (low, high) with low < high, got {band!r}")
    for i, (label, frf_) in enumerate(items):
        color = COLORS[i % len(COLORS)]
        keep = (frf_.freq_hz > 0) & (frf_.freq_hz >= lo) & (frf_.freq_hz <= hi) & np.isfinite(frf_.h)
        fx = frf_.freq_hz[keep]
        phase = np.degrees(np.unwrap(np.angle(frf_.h[keep]))) if keep.any() else np.zeros(0)
        common = {"legendgroup": str(i), "line": {"color": color, "width": 1.4}, "mode": "lines"}
        fig.add_trace(go.Scatter(x=fx, y=frf_.magnitude_db[keep], name=str(label), **common), row=1, col=1)
        fig.add_trace(go.Scatter(x=fx, y=phase, name=str(label), showlegend=False, **common), row=2, col=1)
        if show_coherence:
            fig.add_trace(go.Scatter(x=fx, y=frf_.coherence[keep], name=str(label), showlegend=False, **common),
                          row=3, col=1)
    fig.update_yaxes(title_text=_label("|H|", "dB re " + " / ".join(units)), row=1, col=1)
    fig.update_yaxes(title_text=_label("phase", "deg"), row=2, col=1)
    if show_coherence:
        fig.update_yaxes(title_text=_label("coherence", _DIMENSIONLESS), range=[0, 1.05], row=3, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=rows, col=1)
    if log_freq:
        fig.update_xaxes(type="log")
    return _finish(fig, "frequency response (H1)", rows=rows, height=620 if show_coherence else 500)


# --------------------------------------------------------------------------- fit results
def fig_correlation(fit: FitResult, *, include_states: bool = False) -> go.Figure:
    """Heatmap of the estimated parameters' correlation matrix, values annotated.

    Parameters
    ----------
    fit : FitResult
        A fit with an uncertainty analysis.
    include_states : bool
        Also show the estimated initial states (``x0[k]``, ``v0[k]``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(fit, FitResult):
        raise DataValidationError(f"`fit` must be a FitResult, got {type(fit).__name__}")
    unc = fit.uncertainty
    if unc is None or not unc.names:
        raise DataValidationError("`fit` has no uncertainty analysis (no correlation matrix to show)")
    names = list(unc.names)
    sel = [i for i, n in enumerate(names) if include_states or not (n.startswith("x0[") or n.startswith("v0["))]
    if not sel:
        raise DataValidationError("`fit`: no free parameter in the correlation matrix")
    corr = np.asarray(unc.correlation, dtype=np.float64)[np.ix_(sel, sel)]
    labels = [names[i] for i in sel]
    fig = go.Figure(
        go.Heatmap(
            x=labels, y=labels, z=corr, zmin=-1.0, zmax=1.0, zmid=0.0, colorscale="RdBu_r", name="correlation",
            text=np.vectorize(lambda v: "" if not np.isfinite(v) else f"{v:.2f}")(corr),
            texttemplate="%{text}", hovertemplate="%{y} / %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": _label("correlation", _DIMENSIONLESS)}},
        )
    )
    fig.update_xaxes(title_text="parameter", side="bottom")
    fig.update_yaxes(title_text="parameter", autorange="reversed")
    size = max(380, 60 * len(labels) + 160)
    return _finish(fig, f"parameter correlation ({fit.method})", height=size)


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
    for y, label, color, dash in pairs:
        td, yd = decimate_for_plot(t, y, mp)
        line = {"color": color, "width": 1.2, "dash": dash}
        fig.add_trace(go.Scatter(x=td, y=yd, mode="lines", name=label, line=line), row=1, col=1)
    td, rd = decimate_for_plot(t, sig.predicted - sig.measured, mp)
    fig.add_trace(go.Scatter(x=td, y=rd, mode="lines", name="residual", line={"color": COLORS[0], "width": 1}),
                  row=2, col=1)
    if sig.shade is not None:
        fig.add_vrect(x0=sig.shade[0], x1=sig.shade[1], fillcolor="#bbb", opacity=0.25, line_width=0,
                      annotation_text="initial state", annotation_position="top left")
    fig.update_yaxes(title_text=_label(_channel_name(sig.channel), sig.unit), row=1, col=1)
    fig.update_yaxes(title_text=_label(f"residual ({sig.verb} − measured)", sig.unit), row=2, col=1)
    fig.update_xaxes(title_text=_label("time", sig.units.get("t", "s")), row=2, col=1)
    return _finish(fig, f"{sig.name}: measured vs {sig.verb} {_channel_name(sig.channel)}", rows=2)


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


def fig_to_html(fig: go.Figure, *, include_plotlyjs: bool | str = False) -> str:
    """An HTML fragment (a ``<div>`` with its script) for embedding a figure in a report.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    include_plotlyjs : bool or str
        As in :meth:`plotly.graph_objects.Figure.to_html`: False (the page loads plotly.js once),
        True (inline, ~3.5 MB), ``"cdn"``, ...

    Returns
    -------
    str
    """
    if not isinstance(fig, go.Figure):
        raise ModelSpecError(f"`fig` must be a plotly Figure, got {type(fig).__name__}")
    return str(fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs))


def fig_restoring_surface(surface: RestoringSurface, model_force: ArrayLike | None = None,
                          *, title: str | None = None) -> go.Figure:
    """Restoring force over (x, ẋ): the measured cell means, and the fitted model's surface beside it.

    Parameters
    ----------
    surface : RestoringSurface
        From :func:`nlid_core.nonlinearity.restoring_surface`.
    model_force : (nv, nx) array_like or None
        The model's restoring force on the same cell centres (e.g.
        ``TermModel.restoring_force`` on the grid); cells without data are blanked alike.
    title : str or None
        Figure title.
    """
    fu = surface.units.get("f", "N")
    xu = surface.units.get("x", "m")
    vu = surface.units.get("v", f"{xu}/s")
    panels = [("measured (cell means)", surface.force)]
    if model_force is not None:
        model = np.asarray(model_force, dtype=np.float64)
        if model.shape != surface.force.shape:
            raise ModelSpecError(f"`model_force` has shape {model.shape}, the surface {surface.force.shape}")
        panels.append(("fitted model", np.where(np.isnan(surface.force), np.nan, model)))
    finite = np.concatenate([p[1][np.isfinite(p[1])] for p in panels])
    lim = float(np.max(np.abs(finite))) if finite.size else 1.0
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels], shared_yaxes=True,
                        horizontal_spacing=0.08)
    for k, (_, z) in enumerate(panels, start=1):
        fig.add_trace(go.Heatmap(x=surface.x_centers, y=surface.v_centers, z=z, zmin=-lim, zmax=lim,
                                 colorscale="RdBu_r", showscale=k == len(panels),
                                 colorbar={"title": {"text": _label("restoring force", fu)}}), row=1, col=k)
        fig.update_xaxes(title_text=_label("displacement", xu), row=1, col=k)
    fig.update_yaxes(title_text=_label("velocity", vu), row=1, col=1)
    return _finish(fig, title or "restoring force surface f − m·ẍ over (x, ẋ)", height=420)


def fig_equivalent_linear(levels: Sequence[EquivalentLinear], *, title: str | None = None) -> go.Figure:
    """Equivalent natural frequency and damping ratio against the excitation level.

    Parameters
    ----------
    levels : sequence of EquivalentLinear
        From :func:`nlid_core.nonlinearity.equivalent_linear`.
    title : str or None
        Figure title.
    """
    if not levels:
        raise DataValidationError("`levels` is empty")
    xu = levels[0].x_unit
    lv = np.array([e.x_rms for e in levels])
    fig = make_subplots(rows=1, cols=2, subplot_titles=["natural frequency", "damping ratio"])
    names = [_text(e.record) for e in levels]
    fig.add_trace(go.Scatter(x=lv, y=[e.f_n_hz for e in levels], mode="lines+markers", text=names,
                             name="f_n"), row=1, col=1)
    fig.add_trace(go.Scatter(x=lv, y=[e.zeta for e in levels], mode="lines+markers", text=names,
                             name="ζ"), row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text=_label("displacement rms", xu), row=1, col=col)
    fig.update_yaxes(title_text=_label("equivalent natural frequency", "Hz"), row=1, col=1)
    fig.update_yaxes(title_text=_label("equivalent damping ratio", "-"), row=1, col=2)
    return _finish(fig, title or "equivalent linear parameters against level (constant if linear)", height=380)


def fig_excitation(t_s: ArrayLike, force: ArrayLike, freq_hz: ArrayLike, amplitude: ArrayLike, *,
                   title: str | None = None, force_unit: str = "N", max_points: int = 4000) -> go.Figure:
    """An excitation signal: force against time, and its amplitude spectrum.

    Parameters
    ----------
    t_s, force : (n,) array_like
        Time (s) and force.
    freq_hz, amplitude : (m,) array_like
        Amplitude spectrum (e.g. ``Excitation.spectrum()``).
    title : str or None
        Figure title.
    force_unit : str
        Unit of the force.
    max_points : int
        Points drawn of the time signal (envelope-preserving decimation).
    """
    td, fd = decimate_for_plot(t_s, force, max_points)
    fq = np.asarray(freq_hz, dtype=np.float64)
    amp = np.asarray(amplitude, dtype=np.float64)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["time signal", "amplitude spectrum"],
                        column_widths=[0.6, 0.4])
    fig.add_trace(go.Scattergl(x=td, y=fd, mode="lines", name="force", line={"width": 1}), row=1, col=1)
    keep = amp > 1e-3 * float(np.max(amp)) if amp.size else amp > 0
    top = float(fq[keep].max()) * 1.2 if keep.any() else float(fq[-1])
    sel = fq <= top
    fig.add_trace(go.Scatter(x=fq[sel], y=amp[sel], mode="lines", name="spectrum"), row=1, col=2)
    fig.update_xaxes(title_text=_label("time", "s"), row=1, col=1)
    fig.update_yaxes(title_text=_label("force", force_unit), row=1, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=1, col=2)
    fig.update_yaxes(title_text=_label("amplitude", force_unit), row=1, col=2)
    fig = _finish(fig, title or "excitation", height=360)
    fig.update_layout(showlegend=False)
    return fig


def fig_design_comparison(predictions: Sequence[Any], *, title: str | None = None) -> go.Figure:
    """Predicted relative standard error of every parameter for several candidate tests (log scale).

    Parameters
    ----------
    predictions : sequence of DesignPrediction
        From :func:`nlid_core.studies.compare_designs` (objects with ``label``, ``names``,
        ``rel_stderr`` and ``success``).
    title : str or None
        Figure title.
    """
    fig = go.Figure()
    for pred in predictions:
        if not pred.success:
            continue
        fig.add_trace(go.Bar(x=list(pred.names), y=100 * np.asarray(pred.rel_stderr), name=pred.label))
    names = [n for pred in predictions if pred.success for n in pred.names]
    if names:
        fig.add_trace(go.Scatter(x=list(dict.fromkeys(names)), y=[10.0] * len(dict.fromkeys(names)), mode="lines",
                                 line={"dash": "dot", "color": "#52606d"}, name="10 %"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log", title_text=_label("predicted relative standard error", "%"))
    fig.update_xaxes(title_text=_label("parameter", "-"))
    return _finish(fig, title or "predicted parameter uncertainty per candidate test", height=400)


def fig_sensitivity(study: Any, *, title: str | None = None) -> go.Figure:
    """Where the information on each parameter lies: over time windows and over frequency bands.

    Parameters
    ----------
    study : SensitivityStudy
        From :func:`nlid_core.studies.sensitivity_study` (``names``, ``window_edges``, ``window_energy``,
        ``band_edges_hz``, ``band_energy``).
    title : str or None
        Figure title.
    """
    names = list(study.names)
    we = np.asarray(study.window_energy, dtype=np.float64)
    be = np.asarray(study.band_energy, dtype=np.float64)

    def share(e: FloatArray) -> FloatArray:
        tot = e.sum(axis=1, keepdims=True)
        return np.asarray(100 * np.divide(e, tot, out=np.zeros_like(e), where=tot > 0), dtype=np.float64)

    edges = 100 * np.asarray(study.window_edges, dtype=np.float64).ravel()  # fractions of each record -> %
    n_win = we.shape[1]
    per_rec = max(edges.size - 1, 1)
    n_rec = max(n_win // per_rec, 1)
    mids = 0.5 * (edges[:-1] + edges[1:])
    t_mid = np.concatenate([mids + 100 * k for k in range(n_rec)]) if mids.size * n_rec == n_win else \
        np.arange(n_win, dtype=np.float64)
    edges_f = np.asarray(study.band_edges_hz, dtype=np.float64)
    f_mid = 0.5 * (edges_f[:-1] + edges_f[1:])
    fig = make_subplots(rows=1, cols=2, subplot_titles=["information over time", "information over frequency"],
                        horizontal_spacing=0.1)
    fig.add_trace(go.Heatmap(x=t_mid, y=names, z=share(we), colorscale="Viridis", showscale=False), row=1, col=1)
    fig.add_trace(go.Heatmap(x=f_mid, y=names, z=share(be), colorscale="Viridis",
                             colorbar={"title": {"text": _label("share of the parameter's information", "%")}}),
                  row=1, col=2)
    fig.update_xaxes(title_text=_label("position in the record (records side by side)", "%"), row=1, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=1, col=2)
    fig.update_yaxes(title_text=_label("parameter", "-"), row=1, col=1)
    return _finish(fig, title or "which parts of the record carry the information on each parameter", height=380)


def fig_profile(profile: Any, *, unit: str = "", title: str | None = None) -> go.Figure:
    """Profile likelihood of one parameter with the likelihood-ratio threshold and both intervals.

    Parameters
    ----------
    profile : Profile
        From :func:`nlid_core.studies.profile_likelihood` (``grid``, ``delta_chi2``, ``threshold``,
        ``interval``, ``wald_interval``, ``estimate``, ``name``).
    unit : str
        Unit of the parameter.
    title : str or None
        Figure title.
    """
    grid = np.asarray(profile.grid, dtype=np.float64)
    y = np.asarray(profile.delta_chi2, dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=grid, y=y, mode="lines+markers", name="profile"))
    fig.add_hline(y=float(profile.threshold), line_dash="dot", annotation_text=f"{100 * profile.confidence:.0f} % threshold")
    for (lo, hi), name, dash in ((profile.interval, "likelihood-ratio interval", "dash"),
                                 (profile.wald_interval, "Wald interval", "dot")):
        for v in (lo, hi):
            if math.isfinite(v):
                fig.add_vline(x=v, line_dash=dash, line_color="#7b8794")
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"dash": dash, "color": "#7b8794"}, name=name))
    fig.add_vline(x=float(profile.estimate), line_color="#1f5f8b")
    fig.update_xaxes(title_text=_label(profile.name, unit))
    fig.update_yaxes(title_text=_label("Δχ² = 2·Δcost / s²", "-"))
    return _finish(fig, title or f"profile likelihood of {profile.name}", height=380)


def fig_lcurve(path: Any, *, title: str | None = None) -> go.Figure:
    """The L-curve of a Tikhonov regularisation path: residual norm against deviation from the prior.

    Parameters
    ----------
    path : RegularisationPath
        From :func:`nlid_core.studies.regularisation_path` (``lambdas``, ``residual_norm``,
        ``deviation_norm``, ``corner_index``).
    title : str or None
        Figure title.
    """
    rho = np.asarray(path.residual_norm, dtype=np.float64)
    eta = np.asarray(path.deviation_norm, dtype=np.float64)
    lams = np.asarray(path.lambdas, dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=rho, y=eta, mode="lines+markers", text=[f"λ = {v:.3g}" for v in lams], name="λ grid"))
    k = int(path.corner_index)
    if 0 <= k < lams.size:
        fig.add_trace(go.Scatter(x=[rho[k]], y=[eta[k]], mode="markers", marker={"size": 14, "symbol": "star"},
                                 name=f"corner λ = {lams[k]:.3g}"))
    fig.update_xaxes(type="log", title_text=_label("residual norm", "-"))
    fig.update_yaxes(type="log", title_text=_label("deviation from the prior ‖D(θ − θ0)‖", "-"))
    return _finish(fig, title or "L-curve (pick λ at the corner)", height=380)
