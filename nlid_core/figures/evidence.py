"""Figures of the evidence of nonlinearity: restoring force (scatter, surface, slices), spectra,
spectrogram, harmonics, FRFs at several levels (faded where not valid), equivalent linear parameters
against level (with error bars), the best linear approximation with its noise and distortion levels,
and the output at excited and detection lines."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError, ModelSpecError
from ..nonlinearity import (
    FRF, HARMONIC_DB, LEVEL_DRIFT, EquivalentLinear, HarmonicAnalysis, RestoringForce, RestoringSurface, Spectrum
)
from ..nonlinearity.thresholds import MIN_COHERENCE
from ..record import SI_UNITS
from .bla import fig_bla as fig_bla, fig_detection_lines as fig_detection_lines  # re-exported: the pages use
from .bla import fig_restoring_slices as fig_restoring_slices  # this module for every evidence figure
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
    _stride,
    _text,
)

#: Default frequency range of FRFs: the excitation band widened by this factor on both sides.
FRF_BAND_MARGIN = 1.25


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
    band: tuple[float, float] | None = None, min_coherence: float = MIN_COHERENCE,
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
        ``(0, math.inf)`` shows everything.
    min_coherence : float
        Lines with a lower coherence, or outside the excitation band, are drawn faded (dotted) and
        get no phase: the phase is unwrapped over the valid lines only (:meth:`FRF.valid`).

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
        valid = frf_.valid(min_coherence)
        fx = frf_.freq_hz[keep]
        mag = frf_.magnitude_db[keep]
        good = valid[keep]
        phase = frf_.valid_phase_deg(min_coherence)[keep]
        common = {"legendgroup": str(i), "line": {"color": color, "width": 1.4}, "mode": "lines"}
        fig.add_trace(go.Scatter(x=fx, y=np.where(good, mag, np.nan), name=_text(label), **common), row=1, col=1)
        if (~good).any():
            fig.add_trace(go.Scatter(x=fx, y=np.where(good, np.nan, mag), name=_text(f"{label} (not valid)"),
                                     opacity=0.25, showlegend=False, legendgroup=str(i), mode="lines",
                                     line={"color": color, "width": 1.0, "dash": "dot"},
                                     hovertemplate="coherence too low or outside the band<extra></extra>"),
                          row=1, col=1)
        fig.add_trace(go.Scatter(x=fx, y=phase, name=_text(label), showlegend=False, **common), row=2, col=1)
        if show_coherence:
            fig.add_trace(go.Scatter(x=fx, y=frf_.coherence[keep], name=_text(label), showlegend=False, **common),
                          row=3, col=1)
    fig.update_yaxes(title_text=_label("|H|", "dB re " + " / ".join(units)), row=1, col=1)
    fig.update_yaxes(title_text=_label("phase", "deg"), row=2, col=1)
    if show_coherence:
        fig.update_yaxes(title_text=_label("coherence", _DIMENSIONLESS), range=[0, 1.05], row=3, col=1)
        fig.add_hline(y=min_coherence, line={"color": "#999", "dash": "dot", "width": 1}, row=3, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=rows, col=1)
    if log_freq:
        fig.update_xaxes(type="log")
    return _finish(fig, "frequency response (H1)", rows=rows, height=620 if show_coherence else 500)


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
    fn = np.array([e.f_n_hz for e in levels])
    zt = np.array([e.zeta for e in levels])
    fse = np.array([e.f_n_se for e in levels])
    zse = np.array([e.zeta_se for e in levels])
    for col, y, se, name in ((1, fn, fse, "f_n"), (2, zt, zse, "ζ")):
        err = {"type": "data", "array": 2 * np.nan_to_num(se), "visible": bool(np.isfinite(se).any())}
        fig.add_trace(go.Scatter(x=lv, y=y, mode="markers", text=names, name=f"{name} ± 2 s.e.", error_y=err,
                                 marker={"size": 9}), row=1, col=col)
        ok = np.isfinite(y)
        if ok.any():
            # never let autoscaling blow up a change smaller than the drift threshold into a slope
            mid = float(np.mean(y[ok]))
            top = float(np.max(y[ok] + 2 * np.nan_to_num(se[ok])))
            bot = float(np.min(y[ok] - 2 * np.nan_to_num(se[ok])))
            half = max(top - mid, mid - bot, 2 * LEVEL_DRIFT * abs(mid)) * 1.15
            if half > 0:
                fig.update_yaxes(range=[mid - half, mid + half], row=1, col=col)
    for col in (1, 2):
        fig.update_xaxes(title_text=_label("displacement rms", xu), row=1, col=col)
    fig.update_yaxes(title_text=_label("equivalent natural frequency", "Hz"), row=1, col=1)
    fig.update_yaxes(title_text=_label("equivalent damping ratio", "-"), row=1, col=2)
    fig = _finish(fig, title or "equivalent linear parameters against level (constant if linear; bars ± 2 s.e.)",
                  height=420)
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0.0},
                      margin={"b": 110})
    return fig


