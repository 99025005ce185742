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
from dataclasses import dataclass
from typing import Any, NamedTuple

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
from .common import COLORS, FONT, FloatArray, _as_signal, _finish, _label, _text, decimate_for_plot
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

#: Kinds of diagram nodes and how they are drawn (plotly marker symbol, colour, size in px).
NODE_KINDS: dict[str, tuple[str, str, int]] = {
    "mass": ("square", COLORS[0], 26),
    "ground": ("triangle-down", "#555555", 20),
    "mount": ("diamond", COLORS[1], 16),
    "body_point": ("circle-x", COLORS[3], 13),
}
#: Kinds of diagram edges: a zig-zag spring, a dashpot, or a plain (labelled) line.
EDGE_KINDS = ("spring", "damper", "line")
_FAINT = "#b0b0b0"
_GRID_ROW_HEIGHT = 170
#: Above this many inputs the FRF grid's cells drop their axis titles (the units go in the figure title).
_WIDE_INPUTS = 3
_SMALL = 10
#: Nominal size of the model diagram (px); labels are kept apart at this size.
_DIAGRAM_WIDTH = 900
_DIAGRAM_MARGIN = {"l": 20, "r": 20, "t": 70, "b": 20}
#: Rough text metrics of a 12 px label (px per character, line height) used to keep labels apart.
_CHAR_PX = 7.5
_LINE_PX = 18.0


def _check_type(name: str, value: Any, kind: type) -> None:
    if not isinstance(value, kind):
        raise DataValidationError(f"`{name}` must be a {kind.__name__}, got {type(value).__name__}")


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


@dataclass(frozen=True)
class DiagramNode:
    """A point of a model diagram.

    Attributes
    ----------
    name : str
    x, y : float
        Position (any length unit, the same for every node; equal scale on both axes).
    kind : str
        One of ``NODE_KINDS``: ``mass``, ``ground``, ``mount``, ``body_point``.
    """

    name: str
    x: float
    y: float
    kind: str = "mass"

    def __post_init__(self) -> None:
        if self.kind not in NODE_KINDS:
            raise ModelSpecError(f"`kind` of node {self.name!r} must be one of {', '.join(NODE_KINDS)},"
                                 f" got {self.kind!r}")
        if not (math.isfinite(self.x) and math.isfinite(self.y)):
            raise ModelSpecError(f"node {self.name!r} needs finite `x`, `y`, got ({self.x!r}, {self.y!r})")


@dataclass(frozen=True)
class DiagramEdge:
    """A spring, damper or plain link between two nodes (by name), with a label (e.g. ``"k1, c1"``).

    Attributes
    ----------
    a, b : str
        Names of the nodes joined.
    label : str
    kind : str
        One of ``EDGE_KINDS`` (default ``spring``, a zig-zag).
    """

    a: str
    b: str
    label: str = ""
    kind: str = "spring"

    def __post_init__(self) -> None:
        if self.kind not in EDGE_KINDS:
            raise ModelSpecError(f"`kind` of edge {self.a!r}-{self.b!r} must be one of {', '.join(EDGE_KINDS)},"
                                 f" got {self.kind!r}")


@dataclass(frozen=True)
class DiagramBody:
    """A rigid body drawn as a filled polygon (e.g. a platform outline seen from above).

    Attributes
    ----------
    name : str
    xs, ys : tuple of float
        Corner coordinates (at least 3, the polygon is closed automatically).
    """

    name: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.xs) != len(self.ys) or len(self.xs) < 3:
            raise ModelSpecError(f"body {self.name!r} needs `xs` and `ys` of one length >= 3,"
                                 f" got {len(self.xs)} and {len(self.ys)}")


class _Geometry(NamedTuple):
    """Data range and pixel frame of the diagram's plot area."""

    x0: float
    x1: float
    y0: float
    y1: float
    left: float
    bottom: float
    width: float
    height: float

    def px(self, x: float, y: float) -> tuple[float, float]:
        return (self.left + (x - self.x0) / (self.x1 - self.x0) * self.width,
                self.bottom + (y - self.y0) / (self.y1 - self.y0) * self.height)


def _geometry(fig: go.Figure) -> _Geometry:
    lay = fig.layout
    m = lay.margin
    x0, x1 = lay.xaxis.range
    y0, y1 = lay.yaxis.range
    return _Geometry(float(x0), float(x1), float(y0), float(y1), float(m.l), float(m.b),
                     float(lay.width - m.l - m.r), float(lay.height - m.t - m.b))


def _text_box(cx: float, cy: float, text: str) -> tuple[float, float, float, float]:
    w = _CHAR_PX * max(len(text), 1) + 6.0
    return cx - w / 2, cy - _LINE_PX / 2, cx + w / 2, cy + _LINE_PX / 2


def _label_box_px(fig: go.Figure, ann: Any) -> tuple[float, float, float, float]:
    """Pixel box (left, bottom, right, top) of a diagram label (an annotation with x/y shifts)."""
    geo = _geometry(fig)
    x, y = geo.px(float(ann.x), float(ann.y))
    raw = ann.name if ann.name else ann.text
    return _text_box(x + float(ann.xshift or 0), y + float(ann.yshift or 0), str(raw))


def _overlap_area(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _place(anchor: tuple[float, float], text: str, candidates: Sequence[tuple[float, float]],
           taken: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """First candidate shift (px) whose box hits nothing taken, else the least overlapping one."""
    best, best_hit = candidates[0], math.inf
    for dx, dy in candidates:
        box = _text_box(anchor[0] + dx, anchor[1] + dy, text)
        hit = sum(_overlap_area(box, t) for t in taken)
        if hit == 0:
            best = (dx, dy)
            break
        if hit < best_hit:
            best, best_hit = (dx, dy), hit
    taken.append(_text_box(anchor[0] + best[0], anchor[1] + best[1], text))
    return best


def _node_candidates(text: str) -> list[tuple[float, float]]:
    """Shifts (px) tried for a node's label: above, below, beside, then the diagonals, further and further out."""
    half = _CHAR_PX * len(text) / 2 + 16
    out: list[tuple[float, float]] = []
    for r in (1.0, 1.8, 2.6, 3.6, 5.0):
        out += [(0, 22 * r), (0, -22 * r), (half * r, 0), (-half * r, 0),
                (half * r, 20 * r), (-half * r, 20 * r), (half * r, -20 * r), (-half * r, -20 * r)]
    return out


def _edge_candidates(nrm: FloatArray, along: FloatArray, dist: float) -> list[tuple[float, float]]:
    """Shifts (px) tried for an edge's label: beside the middle (preferred side first), then slid along it."""
    out: list[tuple[float, float]] = []
    for slide in (0.0, 0.25, -0.25, 0.4, -0.4):
        for r in (1.0, -1.0, 2.2, -2.2, 3.4, -3.4):
            out.append((float(nrm[0] * dist * r + along[0] * slide), float(nrm[1] * dist * r + along[1] * slide)))
    return out


def _zigzag(pa: np.ndarray, pb: np.ndarray, amp: float, kind: str) -> tuple[list[float], list[float]]:
    """Polyline of a spring (zig-zag), a damper (dashpot) or a line from ``pa`` to ``pb`` (data units)."""
    d = pb - pa
    length = float(np.hypot(*d))
    if length == 0 or kind == "line":
        return [float(pa[0]), float(pb[0]), math.nan], [float(pa[1]), float(pb[1]), math.nan]
    e = d / length
    nrm = np.array([-e[1], e[0]])
    pts: list[np.ndarray]
    if kind == "spring":
        s = np.concatenate([[0.0, 0.2], np.linspace(0.25, 0.75, 11), [0.8, 1.0]])
        side = np.concatenate([[0.0, 0.0], amp * np.array([(-1) ** k for k in range(11)]) * (np.arange(11) % 10 > 0),
                               [0.0, 0.0]])
        pts = [pa + si * d + oi * nrm for si, oi in zip(s, side)]
    else:  # damper: a rod into a cup (open towards b) and a piston plate on a rod from b
        gap = np.array([math.nan, math.nan])
        cup = [pa + si * d + oi * nrm for si, oi in ((0.58, amp), (0.4, amp), (0.4, -amp), (0.58, -amp))]
        plate = [pa + 0.5 * d + 0.75 * amp * nrm, pa + 0.5 * d - 0.75 * amp * nrm]
        pts = [pa, pa + 0.4 * d, gap, *cup, gap, *plate, gap, pa + 0.5 * d, pb]
    xs = [float(p[0]) for p in pts] + [math.nan]
    ys = [float(p[1]) for p in pts] + [math.nan]
    return xs, ys


def model_diagram(
    nodes: Sequence[DiagramNode],
    edges: Sequence[DiagramEdge],
    *,
    title: str,
    bodies: Sequence[DiagramBody] = (),
) -> go.Figure:
    """Diagram of a lumped model: nodes (masses, ground, mounts, body points), springs/dampers, bodies.

    Parameters
    ----------
    nodes : sequence of DiagramNode
        Unique names; positions in one length unit (axes have equal scale).
    edges : sequence of DiagramEdge
        Joining nodes by name; several edges between one pair are drawn side by side.
    title : str
        Figure title.
    bodies : sequence of DiagramBody
        Polygons drawn under everything (e.g. the platform outline, top view).

    Returns
    -------
    plotly.graph_objects.Figure
        Axes hidden, equal scale; labels are annotations placed to avoid each other and the nodes
        at the nominal width of 900 px (up to about 8 nodes with short names).
    """
    nodes = list(nodes)
    if not nodes or any(not isinstance(n, DiagramNode) for n in nodes):
        raise DataValidationError("`nodes` must be a non-empty sequence of DiagramNode")
    if any(not isinstance(e, DiagramEdge) for e in edges) or any(not isinstance(b, DiagramBody) for b in bodies):
        raise DataValidationError("`edges` must hold DiagramEdge and `bodies` DiagramBody objects")
    by_name = {n.name: n for n in nodes}
    if len(by_name) != len(nodes):
        raise ModelSpecError("`nodes` must have unique names")
    for e in edges:
        for end in (e.a, e.b):
            if end not in by_name:
                raise ModelSpecError(f"`edges`: edge {e.a!r}-{e.b!r} names unknown node {end!r}")
    xs = [n.x for n in nodes] + [v for b in bodies for v in b.xs]
    ys = [n.y for n in nodes] + [v for b in bodies for v in b.ys]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-12)
    pad = 0.18 * span
    x0, x1, y0, y1 = min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad
    m = _DIAGRAM_MARGIN
    plot_w = _DIAGRAM_WIDTH - m["l"] - m["r"]
    scale = plot_w / (x1 - x0)
    plot_h = min(max((y1 - y0) * scale, 260.0), 620.0)
    if plot_h / scale > y1 - y0:  # widen the y range to the plot's height (equal scale)
        extra = (plot_h / scale - (y1 - y0)) / 2
        y0, y1 = y0 - extra, y1 + extra
    else:  # too tall: shrink the scale, widen x
        scale = plot_h / (y1 - y0)
        extra = (plot_w / scale - (x1 - x0)) / 2
        x0, x1 = x0 - extra, x1 + extra
    fig = go.Figure()
    for k, body in enumerate(bodies):
        fig.add_trace(go.Scatter(x=[*body.xs, body.xs[0]], y=[*body.ys, body.ys[0]], fill="toself", mode="lines",
                                 name=_text(body.name), fillcolor="rgba(99,110,250,0.10)",
                                 line={"color": COLORS[k % len(COLORS)], "width": 1.5}, hoverinfo="name"))
    amp = 0.035 * span
    groups: dict[tuple[str, str], list[DiagramEdge]] = {}
    for e in edges:
        groups.setdefault(tuple(sorted((e.a, e.b))), []).append(e)  # type: ignore[arg-type]
    edge_mid: list[tuple[DiagramEdge, FloatArray, FloatArray, FloatArray, float]] = []
    reach: dict[str, float] = {}
    ex: list[float] = []
    ey: list[float] = []
    for group in groups.values():
        for idx, e in enumerate(group):
            pa = np.array([by_name[e.a].x, by_name[e.a].y])
            pb = np.array([by_name[e.b].x, by_name[e.b].y])
            d = pb - pa
            length = float(np.hypot(*d)) or 1.0
            nrm = np.array([-d[1], d[0]]) / length
            amp_e = min(amp, 0.15 * length)
            off = (idx - (len(group) - 1) / 2) * 3.0 * amp_e * nrm
            zx, zy = _zigzag(pa + off, pb + off, amp_e, e.kind)
            ex += zx
            ey += zy
            side = 1.0 if idx >= (len(group) - 1) / 2 else -1.0
            edge_mid.append((e, pa + off, pb + off, side * nrm, amp_e))
            for end in (e.a, e.b):  # a mass is drawn tall enough to take every edge side by side
                reach[end] = max(reach.get(end, 0.0), float(np.hypot(*off)))
    if ex:
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", name="springs / dampers", hoverinfo="skip",
                                 line={"color": "#333333", "width": 1.4}))
    size_of = {n.name: NODE_KINDS[n.kind][2] if n.kind != "mass" else
               max(NODE_KINDS["mass"][2], int(2 * reach.get(n.name, 0.0) * scale) + 10) for n in nodes}
    for kind, (symbol, color, _) in NODE_KINDS.items():
        sel = [n for n in nodes if n.kind == kind]
        if sel:
            fig.add_trace(go.Scatter(
                x=[n.x for n in sel], y=[n.y for n in sel], mode="markers", name=kind.replace("_", " "),
                marker={"symbol": symbol, "color": color, "size": [size_of[n.name] for n in sel],
                        "line": {"color": "#222", "width": 1}},
                text=[_text(n.name) for n in sel], hovertemplate="%{text} (%{x:.4g}, %{y:.4g})<extra></extra>"))
    fig = _finish(fig, title, height=int(plot_h + m["t"] + m["b"]))
    fig.update_layout(width=_DIAGRAM_WIDTH, margin=m, showlegend=True,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0})
    fig.update_xaxes(range=[x0, x1], visible=False, constrain="domain")
    fig.update_yaxes(range=[y0, y1], visible=False, scaleanchor="x", scaleratio=1, constrain="domain")
    geo = _geometry(fig)
    taken = [_marker_box(geo.px(n.x, n.y), size_of[n.name]) for n in nodes]
    for _, pa, pb, _, amp_e in edge_mid:  # the drawn springs and dampers: boxes along their middle part
        for frac in np.linspace(0.25, 0.75, 6):
            taken.append(_marker_box(geo.px(*(pa + frac * (pb - pa))), int(2 * amp_e * scale)))
    for body in bodies:  # the outline: labels keep off its sides
        corners = np.column_stack([[*body.xs, body.xs[0]], [*body.ys, body.ys[0]]])
        for p0, p1 in zip(corners[:-1], corners[1:]):
            for frac in np.linspace(0.0, 1.0, 13):
                taken.append(_marker_box(geo.px(*(p0 + frac * (p1 - p0))), 4))
    for n in nodes:
        _annotate(fig, geo, (n.x, n.y), n.name, _node_candidates(n.name), taken)
    for e, pa, pb, nrm, amp_e in edge_mid:
        mid = 0.5 * (pa + pb)
        if e.label:
            along = (pb - pa) * scale  # px vector of the whole edge
            cands = _edge_candidates(nrm, along, amp_e * scale + 14.0)
            _annotate(fig, geo, (float(mid[0]), float(mid[1])), e.label, cands, taken, size=11, color="#444")
    for body in bodies:
        cx, cy = float(np.mean(body.xs)), float(np.mean(body.ys))
        cands = [(0.0, -30.0 * r) for r in (1.0, 2.0, 3.0)] + [(0.0, 30.0 * r) for r in (1.0, 2.0, 3.0)]
        _annotate(fig, geo, (cx, cy), body.name, cands, taken, size=12, color=COLORS[0])
    return fig


def _marker_box(p: tuple[float, float], size: int) -> tuple[float, float, float, float]:
    h = size / 2 + 2
    return p[0] - h, p[1] - h, p[0] + h, p[1] + h


def _annotate(fig: go.Figure, geo: _Geometry, at: tuple[float, float], text: str,
              candidates: Sequence[tuple[float, float]], taken: list[tuple[float, float, float, float]],
              *, size: int = 12, color: str = "#111") -> None:
    dx, dy = _place(geo.px(*at), text, candidates, taken)
    fig.add_annotation(x=at[0], y=at[1], xshift=dx, yshift=dy, text=_text(text), name=text, showarrow=False,
                       xanchor="center", yanchor="middle", font={"family": FONT["family"], "size": size,
                                                                  "color": color})


# --------------------------------------------------------------------------- a model's diagram


def _terms_text(terms: Sequence[Any]) -> str:
    return " + ".join(t.name for t in terms)


def _chain_parts(model: MdofModel) -> tuple[list[DiagramNode], list[DiagramEdge]]:
    """Masses in a row at x = 1 … n (model order), the ground at x = 0 and, for a connection from the last
    DOF to ground, a second ground at x = n + 1."""
    names = model.dof_names
    nodes = [DiagramNode("ground", 0.0, 0.0, "ground")]
    nodes += [DiagramNode(n, float(i + 1), 0.0, "mass") for i, n in enumerate(names)]
    edges = []
    right = "ground "  # the far end's ground: a distinct node name that reads like the left one
    for c in model.connections:
        b = c.b
        if b is None:
            b = right if len(names) > 1 and c.a == names[-1] else "ground"
        edges.append(DiagramEdge(c.a, b, f"{c.name}: {_terms_text(c.terms)}"))
    if any(e.b == right for e in edges):
        nodes.append(DiagramNode(right, float(len(names) + 1), 0.0, "ground"))
    return nodes, edges


def _body_parts(model: MdofModel) -> tuple[list[DiagramNode], list[DiagramBody], str]:
    """Top view of a rigid body: the mounts at (a_x, a_y), O, the CoG, the outline through the mounts (by angle
    about their centroid) and a summary of the mounts' terms."""
    values = model.parameters()
    pts = np.array([[m.at[0], m.at[1]] for m in model.mounts], dtype=np.float64)
    nodes = [DiagramNode(m.name, float(p[0]), float(p[1]), "mount") for m, p in zip(model.mounts, pts)]
    nodes += [DiagramNode("O", 0.0, 0.0, "body_point"),
              DiagramNode("CoG", float(values["cx"].value), float(values["cy"].value), "body_point")]
    bodies: list[DiagramBody] = []
    centre = pts.mean(axis=0)
    order = np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))
    outline = pts[order]
    span = outline - outline[0]
    if len(outline) >= 3 and np.any(np.abs(span[1:, 0] * span[-1, 1] - span[1:, 1] * span[-1, 0]) > 0):
        bodies.append(DiagramBody("body (top view)", tuple(float(v) for v in outline[:, 0]),
                                  tuple(float(v) for v in outline[:, 1])))
    summaries = {"; ".join(f"{a}: {_terms_text(t)}" for a, t in m.terms) for m in model.mounts}
    terms = f"mounts {summaries.pop()}" if len(summaries) == 1 else "mount terms differ (see the description)"
    return nodes, bodies, terms


def model_figure(model: MdofModel) -> go.Figure:
    """Diagram of a multi-DOF model (see the module docstring), drawn by :func:`model_diagram`.

    Parameters
    ----------
    model : MdofModel
        Lumped DOFs with connections, or a rigid body on mounts.

    Returns
    -------
    plotly.graph_objects.Figure
        Lumped: masses in a row, the ground at the left, one spring per connection labelled
        ``name: terms``. Rigid body: top view (x right, y up, m) with the outline through the mount
        points, the mounts, O and the CoG; the mounts' terms in the title.
    """
    _check_type("model", model, MdofModel)
    if model.body:
        nodes, bodies, terms = _body_parts(model)
        return model_diagram(nodes, [], title=f"{model.name}, top view (body axes, m); {terms}", bodies=bodies)
    nodes, edges = _chain_parts(model)
    return model_diagram(nodes, edges, title=f"{model.name}: masses and connections (ground at the left)")


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
