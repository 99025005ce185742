"""Figures of multi-DOF records and models: the FRF matrix, the cross-coupling table, the drift of a
resonance with level, the fit of each simulated channel, and a diagram of the model.

The data come from :mod:`nlid_core.nonlinearity.mimo`; nothing is computed here but what a plot
needs. The model diagram takes small descriptions (:class:`DiagramNode`, :class:`DiagramEdge`,
:class:`DiagramBody`); :func:`model_figure` builds them from an
:class:`~nlid_core.mdof.spec.MdofModel`: lumped DOFs as masses in a row (model order) with the
ground at the left (and a second ground at the right for a connection from the last DOF to
ground), one edge per connection labelled with its name and terms; a rigid body seen from above,
its outline through the mount points' body coordinates (a_x, a_y), the mounts, its reference point
O and the centre of gravity (c_x, c_y) at the model's values. :func:`record_figure` draws a
multi-DOF record's inputs and outputs with their units.
Labels of the diagram are placed greedily around their anchor (node, edge middle, body centre) so
they do not overlap each other or the nodes at the figure's nominal size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from .._checks import check_int
from ..errors import DataValidationError, ModelSpecError
from ..mdof.data import MdofRecord
from ..mdof.spec import MdofModel
from ..nonlinearity.mimo import ChannelFits, CouplingTable, FrfMatrix, LevelDrift
from ..nonlinearity.thresholds import LEVEL_SIGNIFICANCE, MIN_COHERENCE
from .common import COLORS, _as_signal, _check_type, _finish, _label, _text, decimate_for_plot
from .diagram import EDGE_KINDS, NODE_KINDS, DiagramBody, DiagramEdge, DiagramNode, model_diagram, model_figure
from .evidence import FRF_BAND_MARGIN

__all__ = [
    "NODE_KINDS",
    "EDGE_KINDS",
    "DiagramNode",
    "DiagramEdge",
    "DiagramBody",
    "frf_matrix_figure",
    "frf_output_figure",
    "coupling_figure",
    "level_drift_figure",
    "channel_fit_figure",
    "model_diagram",
    "model_figure",
    "record_figure",
]

_FAINT = "#b0b0b0"
_GRID_ROW_HEIGHT = 170
#: Above this many inputs the FRF grid's cells drop their axis titles (the units go in the figure title).
_WIDE_INPUTS = 3
_SMALL = 10


# --------------------------------------------------------------------------- FRF matrix


def _shown_band(frf: FrfMatrix) -> tuple[float, float]:
    bands = frf.band_hz[np.isfinite(frf.band_hz).all(axis=1)]
    if bands.size == 0:
        return 0.0, math.inf
    return float(bands[:, 0].min()) / FRF_BAND_MARGIN, float(bands[:, 1].max()) * FRF_BAND_MARGIN


def frf_matrix_figure(frf: FrfMatrix, *, max_outputs: int = 6, max_inputs: int = 6) -> go.Figure:
    """Grid of FRF magnitudes (output rows × input columns) and the multiple coherence per output.

    Each cell ``input → output`` shows ``|H|`` on log-log axes, solid where valid and thin grey where
    not (outside the input's band, low multiple coherence; NaN lines leave gaps). The last column
    holds the multiple coherence of the row's output with the ``MIN_COHERENCE`` line. All cells
    share the frequency axis (zooming one zooms all). With more than three inputs the cells are
    too narrow for axis titles: the units are listed in the figure title and in the hover text.

    Parameters
    ----------
    frf : FrfMatrix
        From :func:`nlid_core.nonlinearity.mimo.frf_matrix`.
    max_outputs, max_inputs : int
        Most outputs (rows) and inputs (columns) drawn; the first ones are kept.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    _check_type("frf", frf, FrfMatrix)
    n_out = min(len(frf.output_names), check_int("max_outputs", max_outputs, 1))
    n_in = min(len(frf.input_names), check_int("max_inputs", max_inputs, 1))
    wide = n_in > _WIDE_INPUTS  # narrow cells: axis titles would run into the next cell; units go in the title
    titles = []
    for i in range(n_out):
        titles += [f"{frf.input_names[j]} → {frf.output_names[i]}" for j in range(n_in)]
        titles.append(f"multiple coherence of {frf.output_names[i]}")
    fig = make_subplots(rows=n_out, cols=n_in + 1, shared_xaxes="all", subplot_titles=[_text(t) for t in titles],
                        horizontal_spacing=min(0.06, 0.3 / (n_in + 1)), vertical_spacing=min(0.08, 0.35 / n_out))
    lo, hi = _shown_band(frf)
    keep = (frf.freq_hz > 0) & (frf.freq_hz >= lo) & (frf.freq_hz <= hi)
    f = frf.freq_hz[keep]
    for i in range(n_out):
        for j in range(n_in):
            mag = np.abs(frf.H[keep, i, j])
            good = frf.valid[keep, i, j]
            first = i == 0 and j == 0
            hover = f"{_text(frf.input_names[j])} → {_text(frf.output_names[i])}: %{{y:.4g}} {_text(frf.units[i][j])}"
            fig.add_trace(go.Scatter(x=f, y=np.where(good, mag, np.nan), mode="lines", name="valid",
                                     legendgroup="valid", showlegend=first, line={"color": COLORS[0], "width": 1.5},
                                     hovertemplate=hover + " at %{x:.4g} Hz<extra></extra>"), row=i + 1, col=j + 1)
            fig.add_trace(go.Scatter(x=f, y=np.where(good, np.nan, mag), mode="lines", name="not valid",
                                     legendgroup="invalid", showlegend=first, line={"color": _FAINT, "width": 0.8},
                                     hovertemplate=hover + " (not valid)<extra></extra>"), row=i + 1, col=j + 1)
            fig.update_yaxes(type="log", nticks=5, row=i + 1, col=j + 1,
                             title={"text": "" if wide else _label("|H|", frf.units[i][j]), "font": {"size": _SMALL}})
        fig.add_trace(go.Scatter(x=f, y=frf.coherence_multiple[keep, i], mode="lines", name="multiple coherence",
                                 legendgroup="coherence", showlegend=i == 0, line={"color": COLORS[2], "width": 1.0},
                                 hovertemplate="γ² = %{y:.3f} at %{x:.4g} Hz<extra></extra>"),
                      row=i + 1, col=n_in + 1)
        fig.add_hline(y=MIN_COHERENCE, line={"color": "#999", "dash": "dot", "width": 1}, row=i + 1, col=n_in + 1)
        fig.update_yaxes(range=[0, 1.05], title={"text": "" if wide else _label("γ²", "-"), "font": {"size": _SMALL}},
                         row=i + 1, col=n_in + 1)
    fig.update_xaxes(type="log", tickfont={"size": _SMALL})
    fig.update_yaxes(tickfont={"size": _SMALL})
    for j in range(n_in + 1):
        fig.update_xaxes(title={"text": _label("frequency", "Hz"), "font": {"size": _SMALL}}, row=n_out, col=j + 1)
    fig.update_annotations(font={"size": 11})
    cut = n_out < len(frf.output_names) or n_in < len(frf.input_names)
    title = "FRF matrix (H1): |H| per input → output" + (
        f" (first {n_out} of {len(frf.output_names)} outputs, {n_in} of {len(frf.input_names)} inputs)"
        if cut else "")
    if wide:
        units = sorted({frf.units[i][j] for i in range(n_out) for j in range(n_in)})
        title += f"; |H| in {', '.join(units)} (hover a line for its unit)"
    return _finish(fig, title, height=_GRID_ROW_HEIGHT * n_out + 150)


def frf_output_figure(frf: FrfMatrix, output: int | str = 0) -> go.Figure:
    """The FRFs into one output, readable at any number of inputs: ``|H|`` of every input as one trace
    (log-log, the unit in the axis title when the inputs share it and in each trace's name), and below it
    the output's multiple coherence with the ``MIN_COHERENCE`` line. Lines that are not valid (outside the
    input's band, low coherence) are drawn thin and grey.

    Parameters
    ----------
    frf : FrfMatrix
    output : int or str
        The output, by position or name.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    _check_type("frf", frf, FrfMatrix)
    names = list(frf.output_names)
    if isinstance(output, str):
        if output not in names:
            raise DataValidationError(f"`output` must be one of {', '.join(names)}; got {output!r:.40}")
        i = names.index(output)
    else:
        i = check_int("output", output, 0)
        if i >= len(names):
            raise DataValidationError(f"`output` must be below {len(names)}; got {i}")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.08)
    lo, hi = _shown_band(frf)
    keep = (frf.freq_hz > 0) & (frf.freq_hz >= lo) & (frf.freq_hz <= hi)
    f = frf.freq_hz[keep]
    units = [frf.units[i][j] for j in range(len(frf.input_names))]
    for j, name in enumerate(frf.input_names):
        mag = np.abs(frf.H[keep, i, j])
        good = frf.valid[keep, i, j]
        color = COLORS[j % len(COLORS)]
        label = f"{_text(name)} [{_text(units[j])}]"
        fig.add_trace(go.Scatter(x=f, y=np.where(good, mag, np.nan), mode="lines", name=label, legendgroup=label,
                                 line={"color": color, "width": 1.6},
                                 hovertemplate=f"{label}: %{{y:.4g}} at %{{x:.4g}} Hz<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=f, y=np.where(good, np.nan, mag), mode="lines", name=f"{label} (not valid)",
                                 legendgroup=label, showlegend=False, line={"color": color, "width": 0.6, "dash": "dot"},
                                 opacity=0.45, hovertemplate=f"{label} (not valid): %{{y:.4g}}<extra></extra>"),
                      row=1, col=1)
    fig.add_trace(go.Scatter(x=f, y=frf.coherence_multiple[keep, i], mode="lines", name="multiple coherence",
                             line={"color": "#333", "width": 1.0},
                             hovertemplate="γ² = %{y:.3f} at %{x:.4g} Hz<extra></extra>"), row=2, col=1)
    fig.add_hline(y=MIN_COHERENCE, line={"color": "#999", "dash": "dot", "width": 1}, row=2, col=1)
    shared = sorted(set(units))
    fig.update_yaxes(type="log", title_text=_label("|H|", shared[0] if len(shared) == 1 else ", ".join(shared)),
                     row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], title_text=_label("γ²", "-"), row=2, col=1)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=2, col=1)
    return _finish(fig, f"FRFs into {_text(names[i])} (H1), one line per input", height=560)


# --------------------------------------------------------------------------- coupling


def coupling_figure(table: CouplingTable) -> go.Figure:
    """Heat map of the relative contributions (outputs × inputs, %), values written in the cells.

    Parameters
    ----------
    table : CouplingTable
        From :func:`nlid_core.nonlinearity.mimo.coupling`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    _check_type("table", table, CouplingTable)
    pct = 100.0 * np.asarray(table.relative, dtype=np.float64)
    text = [[("–" if not math.isfinite(v) else f"{v:.3g} %") for v in row] for row in pct]
    hover = [[f"{_text(o)} from {_text(i)}: %{{z:.3g}} % of its main input"
              f" ({table.contribution[r, c]:.3g} {_text(table.output_units[r])})"
              for c, i in enumerate(table.input_names)] for r, o in enumerate(table.output_names)]
    fig = go.Figure(go.Heatmap(
        z=pct, x=[_text(n) for n in table.input_names], y=[_text(n) for n in table.output_names], text=text,
        texttemplate="%{text}", customdata=hover, hovertemplate="%{customdata}<extra></extra>", zmin=0, zmax=100,
        colorscale="Blues", colorbar={"title": {"text": _label("relative contribution", "%")}},
    ))
    fig.update_xaxes(title_text="input", side="bottom")
    fig.update_yaxes(title_text="output", autorange="reversed")
    n = max(len(table.output_names), 2)
    title = "cross-coupling: band-averaged |H|·σ<sub>u</sub> relative to each output's main input"
    return _finish(fig, title, height=60 * n + 200, markup=True)


# --------------------------------------------------------------------------- level drift


def level_drift_figure(drift: LevelDrift) -> go.Figure:
    """Resonance frequency and peak gain against the level, with error bars of ± 2 standard uncertainties.

    Parameters
    ----------
    drift : LevelDrift
        From :func:`nlid_core.nonlinearity.mimo.level_drift`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    _check_type("drift", drift, LevelDrift)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["resonance frequency", "peak gain"])
    labels = [_text(v) for v in drift.labels]
    k = LEVEL_SIGNIFICANCE
    for col, (y, u, name) in enumerate(((drift.peak_hz, drift.peak_hz_u, "peak frequency"),
                                        (drift.peak_gain, drift.peak_gain_u, "peak gain")), start=1):
        fig.add_trace(go.Scatter(
            x=drift.input_rms, y=y, mode="lines+markers", text=labels, name=f"{name} ± {k:g} u",
            error_y={"type": "data", "array": k * np.nan_to_num(u)}, marker={"size": 9, "color": COLORS[col - 1]},
            hovertemplate="level %{text}: %{y:.5g}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=_label(f"{drift.input_name} rms", drift.input_unit), row=1, col=col)
    fig.update_yaxes(title_text=_label("peak frequency", "Hz"), row=1, col=1)
    fig.update_yaxes(title_text=_label("peak gain |H|", drift.gain_unit), row=1, col=2)
    title = (f"{drift.input_name} → {drift.output_name}: resonance against level"
             f" (bars ± {k:g} standard uncertainties)")
    fig = _finish(fig, title, height=460)
    # the verdict below the plots: a long sentence wraps badly in a title
    fig.add_annotation(text=_text(drift.verdict), xref="paper", yref="paper", x=0.0, y=-0.3, xanchor="left",
                       yanchor="top", showarrow=False, align="left", font={"size": 12})
    fig.update_layout(showlegend=False, margin={"b": 120})
    return fig


# --------------------------------------------------------------------------- channel fit


def channel_fit_figure(
    t: ArrayLike,
    measured: ArrayLike,
    simulated: ArrayLike,
    names: Sequence[str],
    units: Sequence[str],
    fits: ChannelFits,
) -> go.Figure:
    """Measured and simulated outputs, one panel per channel, the fit % in each panel's title.

    Parameters
    ----------
    t : (n,) array_like, s
        Sample times.
    measured, simulated : (n, n_out) array_like
        Outputs, time-major.
    names, units : sequence of str
        Channel names and units.
    fits : ChannelFits
        From :func:`nlid_core.nonlinearity.mimo.channel_fit` of the same signals.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    _check_type("fits", fits, ChannelFits)
    tt = _as_signal("t", t)
    y = np.asarray(measured, dtype=np.float64)
    y_hat = np.asarray(simulated, dtype=np.float64)
    n_out = len(fits.names)
    for name, arr in (("measured", y), ("simulated", y_hat)):
        if arr.shape != (tt.size, n_out):
            raise DataValidationError(f"`{name}` must have shape ({tt.size}, {n_out}), got {arr.shape}")
    if len(names) != n_out or len(units) != n_out:
        raise ModelSpecError(f"`names` and `units` must hold {n_out} entries, got {len(names)} and {len(units)}")
    titles = [_text(f"{names[k]}: fit {fits.fit_percent[k]:.1f} %") for k in range(n_out)]
    fig = make_subplots(rows=n_out, cols=1, shared_xaxes=True, subplot_titles=titles,
                        vertical_spacing=min(0.08, 0.4 / n_out))
    for k in range(n_out):
        for label, arr, color, width in (("measured", y, "#444444", 1.2), ("simulated", y_hat, COLORS[1], 1.4)):
            td, yd = decimate_for_plot(tt, arr[:, k])
            fig.add_trace(go.Scatter(x=td, y=yd, mode="lines", name=label, legendgroup=label, showlegend=k == 0,
                                     line={"color": color, "width": width}), row=k + 1, col=1)
        fig.update_yaxes(title_text=_label(names[k], units[k]), row=k + 1, col=1)
    fig.update_xaxes(title_text=_label("time", "s"), row=n_out, col=1)
    return _finish(fig, "measured and simulated outputs", rows=n_out)


# --------------------------------------------------------------------------- model diagram


# --------------------------------------------------------------------------- a model's diagram


# --------------------------------------------------------------------------- a record


_RECORD_ROW_HEIGHT = 120


def record_figure(model: MdofModel, rec: MdofRecord, *, max_points: int = 4000) -> go.Figure:
    """A multi-DOF record's inputs and measured outputs, one panel per channel, labelled with units.

    Parameters
    ----------
    model : MdofModel
        Gives the channels' units (N or N·m for inputs, m or rad for outputs).
    rec : MdofRecord
    max_points : int
        Most points per trace (min/max decimation).

    Returns
    -------
    plotly.graph_objects.Figure
        Inputs first, then outputs; a static record is drawn as markers against the load case.
    """
    _check_type("model", model, MdofModel)
    _check_type("rec", rec, MdofRecord)
    mp = check_int("max_points", max_points, 4)
    chans = [(n, rec.u[:, j], model.input_unit(n)) for j, n in enumerate(rec.input_names)]
    chans += [(n, rec.y[:, j], model.dof_unit(n)) for j, n in enumerate(rec.output_names)]
    rows = len(chans)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=min(0.06, 0.4 / rows))
    for k, (name, arr, unit) in enumerate(chans):
        if rec.static:
            td, yd = np.asarray(rec.t, dtype=np.float64), np.asarray(arr, dtype=np.float64)
        else:
            td, yd = decimate_for_plot(rec.t, arr, mp)
        is_input = k < len(rec.input_names)
        fig.add_trace(go.Scatter(x=td, y=yd, mode="markers" if rec.static else "lines", name=_text(name),
                                 line={"color": COLORS[0] if is_input else COLORS[1 + k % 5], "width": 1.1},
                                 showlegend=False), row=k + 1, col=1)
        fig.update_yaxes(title={"text": _label(name, unit), "font": {"size": _SMALL}}, tickfont={"size": _SMALL},
                         row=k + 1, col=1)
    fig.update_xaxes(title_text=_label("load case" if rec.static else "time", "-" if rec.static else "s"), row=rows,
                     col=1)
    held = f"; held: {', '.join(rec.held)}" if rec.held else ""
    title = f"record {rec.name}: inputs ({', '.join(rec.input_names)}) and outputs{held}"
    return _finish(fig, title, height=_RECORD_ROW_HEIGHT * rows + 130)
