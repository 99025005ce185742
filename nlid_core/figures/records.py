"""Figures of records and test signals: channels over time, measured against derived channels,
force loops, and an excitation with its spectrum."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError, ModelSpecError
from ..nonlinearity import local_amplitude
from ..record import SI_UNITS, Record
from .common import (
    COLORS,
    _as_signal,
    _channel_name,
    _check_max_points,
    _check_record,
    _finish,
    _label,
    _stride,
    decimate_for_plot,
)

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
    # room between the panels for the spectrum's axis title beside tick labels such as 0.0015
    fig = make_subplots(rows=1, cols=2, subplot_titles=["time signal", "amplitude spectrum"],
                        column_widths=[0.6, 0.4], horizontal_spacing=0.14)
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
