"""Figures of the flexible double pendulum (:mod:`nlid_core.multibody`): the motion as an animation, the tip
trajectory against a measured table, interval bounds of the tip response, the convergence of the particle
swarms and the check of the Chebyshev surrogate on held-out runs.

The builders read result objects by their fields only (a run's ``t``, ``x_b``, ``y_b``, ``nodes``; bounds'
``t``, ``x_min``, ``x_max``, ``y_min``, ``y_max``; a swarm's ``history``; ...), so any object with those fields
can be drawn (the tests use :class:`types.SimpleNamespace`). Nothing is computed here but what a plot needs:
frames are thinned to at most ``max_frames`` and the axes get one scale in metres.

The pendulum is the planar ANCF double pendulum of Guo & Jin (2025): pivot O at the origin, rod OA (1 m) and
rod AB (2 m), x horizontal and y up (the tip hangs at negative y), released from rest at θ1, θ2 below the
horizontal.

References
----------
Guo, X., Jin, L. (2025). Flexible multibody inverse problems with interval uncertainty (in Chinese). Journal of
Vibration Engineering 38(5), 974-983.

Plotly animation (frames, ``updatemenus`` play/pause buttons, a slider):
https://plotly.com/python/animations/
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from .._checks import check_int
from ..errors import DataValidationError, ModelSpecError
from .common import COLORS, FloatArray, _finish, _label, _positive, _text

__all__ = [
    "exaggerate_bending",
    "fig_pendulum_animation",
    "fig_tip_trajectory",
    "fig_interval_bounds",
    "fig_swarm_convergence",
    "fig_surrogate_check",
]

_T = _label("t", "s")
_X = _label("x_B", "m")
_Y = _label("y_B", "m")
_GREY = "#9a9a9a"
_DARK = "#333333"
#: Most columns of the side-by-side animation.
MAX_PANELS = 4


class _Run(Protocol):
    """What the figures read of a :class:`~nlid_core.multibody.pendulum.PendulumRun`."""

    @property
    def t(self) -> Any: ...
    @property
    def x_b(self) -> Any: ...
    @property
    def y_b(self) -> Any: ...


class _Bounds(Protocol):
    """What the figures read of an :class:`~nlid_core.multibody.interval.IntervalBounds`."""

    @property
    def t(self) -> Any: ...
    @property
    def x_min(self) -> Any: ...
    @property
    def x_max(self) -> Any: ...
    @property
    def y_min(self) -> Any: ...
    @property
    def y_max(self) -> Any: ...


# --------------------------------------------------------------------------- argument helpers
def _vector(name: str, value: Any, n: int | None = None) -> FloatArray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"`{name}` must be a numeric 1-D array, got {type(value).__name__}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise DataValidationError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise DataValidationError(f"`{name}` has {arr.size} samples, but its time axis has {n}")
    return arr


def _field(name: str, obj: Any, attr: str) -> Any:
    if not hasattr(obj, attr):
        raise DataValidationError(f"`{name}` has no field `{attr}` (got a {type(obj).__name__})")
    return getattr(obj, attr)


def _runs(name: str, runs: Any) -> list[Any]:
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise DataValidationError(f"`{name}` must be a sequence of runs, got {type(runs).__name__}")
    out = list(runs)
    if not out:
        raise DataValidationError(f"`{name}` is empty: give at least one run")
    return out


def _labels(labels: Sequence[str] | None, n: int, default: Sequence[str]) -> list[str]:
    if labels is None:
        return list(default)
    if isinstance(labels, str) or len(labels) != n:
        raise DataValidationError(f"`labels` must give one label per item ({n}), got {labels!r}")
    return [str(s) for s in labels]


def _run_label(run: Any, k: int) -> str:
    model = getattr(run, "model", None)
    return {"ancf": "flexible (ANCF)", "rigid": "rigid"}.get(str(model), f"run {k + 1}")


def _tip(name: str, run: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    t = _vector(f"{name}.t", _field(name, run, "t"))
    return t, _vector(f"{name}.x_b", _field(name, run, "x_b"), t.size), _vector(f"{name}.y_b", _field(name, run, "y_b"),
                                                                                 t.size)


def _nodes(name: str, run: Any, n: int) -> FloatArray:
    raw = _field(name, run, "nodes")
    if raw is None:
        raise DataValidationError(f"`{name}` has no node positions (`nodes` is None): simulate with nodes=True")
    arr = np.asarray(raw, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[0] != n or arr.shape[2] != 2 or arr.shape[1] < 2:
        raise DataValidationError(f"`{name}.nodes` must have shape ({n}, n_nodes >= 2, 2), got {arr.shape}")
    return arr


def _rgba(color: str, alpha: float) -> str:
    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# --------------------------------------------------------------------------- animation
def _frame_times(t: FloatArray, max_frames: int) -> FloatArray:
    """At most ``max_frames`` sample times of ``t``, evenly spread, first and last included."""
    idx = np.unique(np.round(np.linspace(0, t.size - 1, min(max_frames, t.size))).astype(np.intp))
    return t[idx]


def _nearest(t: FloatArray, at: FloatArray) -> Any:
    """Index of the sample of ``t`` (increasing) nearest to each time of ``at``."""
    j = np.clip(np.searchsorted(t, at), 1, max(t.size - 1, 1))
    if t.size == 1:
        return np.zeros(at.size, dtype=np.intp)
    left = t[j - 1]
    right = t[np.minimum(j, t.size - 1)]
    return np.where(np.abs(at - left) <= np.abs(right - at), j - 1, j)


def exaggerate_bending(nodes: ArrayLike, joint: int, factor: float) -> FloatArray:
    r"""Node positions with each rod's bending drawn ``factor`` times larger (for plotting only).

    Each rod runs from its first to its last node (OA: nodes 0 … ``joint``, AB: ``joint`` … last). An interior
    node :math:`p` of a rod with end nodes :math:`P_0, P_1` is split into its foot on the chord,
    :math:`c = P_0 + ((p - P_0)\cdot u)\,u` with :math:`u = (P_1 - P_0)/\lVert P_1 - P_0\rVert`, and its
    offset :math:`p - c`; the drawn node is :math:`c + k\,(p - c)`. End nodes (O, A, B) and so the tip path
    are unchanged, and a straight rod stays straight.

    Parameters
    ----------
    nodes : (n, n_nodes, 2) array_like, m
        Node positions over time.
    joint : int
        Index of the joint A among the nodes (the number of elements on OA).
    factor : float
        Magnification k of the transverse offsets (1: as computed).

    Returns
    -------
    (n, n_nodes, 2) ndarray, m

    Raises
    ------
    DataValidationError
        When ``nodes`` is not (n, n_nodes, 2) or ``joint`` is not an interior node index.
    ModelSpecError
        When ``factor`` is not a positive number.
    """
    arr = np.array(nodes, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[2] != 2:
        raise DataValidationError(f"`nodes` must have shape (n, n_nodes, 2), got {arr.shape}")
    k = _positive("factor", factor, "a magnification")
    if isinstance(joint, bool) or not isinstance(joint, (int, np.integer)) or not 0 < joint < arr.shape[1] - 1:
        raise DataValidationError(f"`joint` must be a node index in 1 … {arr.shape[1] - 2}, got {joint!r}")
    if k == 1.0:
        return arr
    for a, b in ((0, int(joint)), (int(joint), arr.shape[1] - 1)):
        p0, p1 = arr[:, a:a + 1, :], arr[:, b:b + 1, :]
        chord = p1 - p0
        length = np.linalg.norm(chord, axis=-1, keepdims=True)
        u = chord / np.where(length > 0, length, 1.0)
        inner = arr[:, a + 1:b, :]
        foot = p0 + np.sum((inner - p0) * u, axis=-1, keepdims=True) * u
        arr[:, a + 1:b, :] = foot + k * (inner - foot)
    return arr


def fig_pendulum_animation(runs: Sequence[_Run], labels: Sequence[str] | None = None, *, overlay: bool = False,
                           max_frames: int = 121, exaggerate: float = 1.0, joint: int | None = None,
                           title: str | None = None) -> go.Figure:
    """The pendulum's motion as an animation: each run's node polyline, its tip and the tip's path so far.

    Each run is drawn as the polyline through its nodes (pivot O, the element nodes of OA, joint A, those of
    AB, tip B), so a flexible run shows its rods bending; a rigid run has three nodes. The runs go side by side
    (one panel each, same axis ranges) or, with ``overlay``, into one panel. Both axes have one scale (metres),
    so the rods keep their lengths on screen. A *Play*/*Pause* button and a time slider drive the frames; the
    whole tip path is drawn faintly under the traced one.

    Parameters
    ----------
    runs : sequence of PendulumRun
        Runs with node positions (``simulate(..., nodes=True)``): ``t`` (n,) seconds and ``nodes``
        (n, n_nodes, 2) metres, x horizontal and y up; also ``x_b``, ``y_b`` (n,) metres. Other runs are
        shown at the sample nearest to each frame time of the first run.
    labels : sequence of str or None
        One name per run; default from each run's ``model`` ("flexible (ANCF)", "rigid").
    overlay : bool
        All runs in one panel instead of side by side (at most ``MAX_PANELS`` panels).
    max_frames : int
        Most animation frames (>= 2); the first run's samples are thinned evenly to this many.
    exaggerate : float
        Draw each rod's bending this many times larger (:func:`exaggerate_bending`; the preset's rods bend by
        about 2 cm over 2 m, invisible at 1×). The panel titles say so when it is not 1.
    joint : int or None
        Index of the joint A among the nodes (elements on OA); needed when ``exaggerate`` is not 1.
    title : str or None
        Figure title; default names the runs.

    Returns
    -------
    plotly.graph_objects.Figure
        With ``frames``, a slider and play/pause buttons.

    Raises
    ------
    DataValidationError
        When ``runs`` is empty, a run has no ``nodes`` or its arrays disagree in length, or ``labels`` does not
        give one label per run.
    """
    items = _runs("runs", runs)
    names = _labels(labels, len(items), [_run_label(r, k) for k, r in enumerate(items)])
    m = check_int("max_frames", max_frames, 2)
    if not overlay and len(items) > MAX_PANELS:
        raise DataValidationError(f"`runs` has {len(items)} runs; side by side shows at most {MAX_PANELS}"
                                  " (use overlay=True)")
    tips = [_tip(f"runs[{k}]", r) for k, r in enumerate(items)]
    nodes = [_nodes(f"runs[{k}]", r, tips[k][0].size) for k, r in enumerate(items)]
    if exaggerate != 1.0:
        if joint is None:
            raise ModelSpecError("`joint` (the index of node A) is needed to exaggerate the bending")
        nodes = [exaggerate_bending(n, joint, exaggerate) for n in nodes]
        names = [f"{s}, bending ×{exaggerate:g}" if str(getattr(r, "model", "")) != "rigid" else s
                 for s, r in zip(names, items)]
    times = _frame_times(tips[0][0], m)
    index = [_nearest(tip[0], times) for tip in tips]

    allx = np.concatenate([n[..., 0].ravel() for n in nodes] + [np.zeros(1)])
    ally = np.concatenate([n[..., 1].ravel() for n in nodes] + [np.zeros(1)])
    finite = np.isfinite(allx) & np.isfinite(ally)
    if not finite.any():
        raise DataValidationError("`runs` have no finite node position")
    x_lo, x_hi = float(allx[finite].min()), float(allx[finite].max())
    y_lo, y_hi = float(ally[finite].min()), float(ally[finite].max())
    pad = 0.06 * max(x_hi - x_lo, y_hi - y_lo, 1e-3)
    x_range, y_range = [x_lo - pad, x_hi + pad], [y_lo - pad, y_hi + pad]

    panels = 1 if overlay else len(items)
    fig = make_subplots(rows=1, cols=panels, horizontal_spacing=0.06,
                        subplot_titles=None if overlay else [_text(s) for s in names])
    animated: list[int] = []  # trace indices the frames update, in the order of each frame's data
    for k in range(len(items)):
        col = 1 if overlay else k + 1
        color = COLORS[k % len(COLORS)]
        t, xb, yb = tips[k]
        i0 = int(index[k][0])
        first = k == 0 or not overlay
        fig.add_trace(go.Scatter(x=xb, y=yb, mode="lines", line={"color": _rgba(color, 0.25), "width": 1},
                                 name=f"{names[k]}: tip path", hoverinfo="skip", showlegend=False), row=1, col=col)
        if first:
            fig.add_trace(go.Scatter(x=[0.0], y=[0.0], mode="markers", name="pivot O", showlegend=k == 0,
                                     marker={"symbol": "triangle-down", "size": 12, "color": _DARK}), row=1, col=col)
        base = len(fig.data)
        fig.add_trace(go.Scatter(x=xb[:i0 + 1], y=yb[:i0 + 1], mode="lines", line={"color": color, "width": 1.5,
                                                                                     "dash": "dot"},
                                 name=f"{_text(names[k])}: tip path so far", showlegend=False,
                                 hovertemplate="x_B %{x:.4f} m<br>y_B %{y:.4f} m<extra></extra>"), row=1, col=col)
        fig.add_trace(go.Scatter(x=nodes[k][i0, :, 0], y=nodes[k][i0, :, 1], mode="lines+markers",
                                 line={"color": color, "width": 3}, marker={"size": 5, "color": color},
                                 name=_text(names[k]),
                                 hovertemplate="x %{x:.4f} m<br>y %{y:.4f} m<extra>%{fullData.name}</extra>"),
                      row=1, col=col)
        fig.add_trace(go.Scatter(x=[xb[i0]], y=[yb[i0]], mode="markers", name=f"{_text(names[k])}: tip B",
                                 showlegend=False, marker={"size": 11, "color": color, "line": {"width": 1,
                                                                                                 "color": _DARK}}),
                      row=1, col=col)
        animated += [base, base + 1, base + 2]

    frames = []
    for f, tf in enumerate(times):
        data = []
        for k in range(len(items)):
            i = int(index[k][f])
            _, xb, yb = tips[k]
            data += [go.Scatter(x=xb[:i + 1], y=yb[:i + 1]),
                     go.Scatter(x=nodes[k][i, :, 0], y=nodes[k][i, :, 1]),
                     go.Scatter(x=[xb[i]], y=[yb[i]])]
        frames.append(go.Frame(data=data, traces=animated, name=f"{tf:.4g}"))
    fig.frames = frames

    step_ms = 50
    play = {"frame": {"duration": step_ms, "redraw": False}, "fromcurrent": True,
            "transition": {"duration": 0}, "mode": "immediate"}
    pause = {"frame": {"duration": 0, "redraw": False}, "transition": {"duration": 0}, "mode": "immediate"}
    fig.update_layout(
        updatemenus=[{"type": "buttons", "direction": "left", "showactive": False, "x": 0.0, "xanchor": "left",
                      "y": -0.14, "yanchor": "top", "pad": {"r": 10, "t": 0},
                      "buttons": [{"label": "▶ Play", "method": "animate", "args": [None, play]},
                                  {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]}]}],
        sliders=[{"active": 0, "x": 0.2, "len": 0.8, "y": -0.12, "yanchor": "top", "pad": {"t": 0},
                  "currentvalue": {"prefix": "t = ", "suffix": " s", "visible": True, "xanchor": "right"},
                  "steps": [{"label": fr.name, "method": "animate",
                             "args": [[fr.name], {**pause, "frame": {"duration": 0, "redraw": False}}]}
                            for fr in frames]}],
    )
    for col in range(1, panels + 1):
        xa = "x" if col == 1 else f"x{col}"
        fig.update_xaxes(title_text=_label("x", "m"), range=x_range, row=1, col=col)
        fig.update_yaxes(title_text=_label("y", "m") if col == 1 else None, range=y_range, scaleanchor=xa,
                         scaleratio=1.0, constrain="domain", row=1, col=col)
    fig = _finish(fig, title if title is not None else "Motion of the double pendulum: " + " | ".join(names),
                  height=500)
    # side by side, the panel titles name the runs: no legend to run into them
    fig.update_layout(margin={"l": 70, "r": 30, "t": 95, "b": 130}, showlegend=overlay)
    return fig


# --------------------------------------------------------------------------- tip trajectory
def fig_tip_trajectory(runs: Sequence[_Run], labels: Sequence[str] | None = None, measured: Any = None, *,
                       measured_label: str = "measured", title: str | None = None) -> go.Figure:
    """Tip B's x and y over time for each run, and a measured table as markers.

    Parameters
    ----------
    runs : sequence of PendulumRun
        ``t`` (n,) seconds, ``x_b``, ``y_b`` (n,) metres.
    labels : sequence of str or None
        One name per run; default from each run's ``model``.
    measured : pandas.DataFrame or None
        Columns ``t`` (s), ``x_B``, ``y_B`` (m), e.g. the paper's Table A1; drawn as markers.
    measured_label : str
        Legend name of the markers.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Rows sharing the time axis: ``x_B [m]``, ``y_B [m]`` and, for runs sampled at the measured times, a
        third row with their misfit (run minus table) in millimetres, x solid and y dotted.

    Raises
    ------
    DataValidationError
        When a run's arrays disagree in length, ``labels`` does not match ``runs`` or ``measured`` lacks a
        column.
    """
    items = _runs("runs", runs) if len(runs) or measured is None else []
    names = _labels(labels, len(items), [_run_label(r, k) for k, r in enumerate(items)])
    tips = [_tip(f"runs[{k}]", run) for k, run in enumerate(items)]
    table = None
    if measured is not None:
        cols = getattr(measured, "columns", None)
        missing = [c for c in ("t", "x_B", "y_B") if cols is None or c not in cols]
        if missing:
            raise DataValidationError(f"`measured` must have the columns t, x_B, y_B; missing {missing}")
        tm = _vector("measured.t", measured["t"])
        table = (tm, _vector("measured.x_B", measured["x_B"], tm.size),
                 _vector("measured.y_B", measured["y_B"], tm.size))
    # the misfit row: runs sampled at the measured times (same grid)
    aligned = [k for k, tip in enumerate(tips)
               if table is not None and tip[0].size == table[0].size and np.allclose(tip[0], table[0], atol=1e-9)]
    rows = 3 if aligned else 2
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.07,
                        row_heights=[0.38, 0.38, 0.24] if aligned else None)
    for k, (t, xb, yb) in enumerate(tips):
        color = COLORS[k % len(COLORS)]
        for row, y in ((1, xb), (2, yb)):
            fig.add_trace(go.Scatter(x=t, y=y, mode="lines", line={"color": color, "width": 2}, name=_text(names[k]),
                                     legendgroup=f"run{k}", showlegend=row == 1), row=row, col=1)
    if table is not None:
        tm, xm, ym = table
        for row, y in ((1, xm), (2, ym)):
            fig.add_trace(go.Scatter(x=tm, y=y, mode="markers", marker={"symbol": "circle-open", "size": 7,
                                                                         "color": _DARK},
                                     name=_text(measured_label), legendgroup="measured", showlegend=row == 1),
                          row=row, col=1)
        for k in aligned:
            t, xb, yb = tips[k]
            color = COLORS[k % len(COLORS)]
            for j, (d, dash) in enumerate(((xb - xm, "solid"), (yb - ym, "dot"))):
                fig.add_trace(go.Scatter(x=t, y=1e3 * d, mode="lines", line={"color": color, "width": 1.5,
                                                                              "dash": dash},
                                         name=f"{_text(names[k])}: {'x' if j == 0 else 'y'} misfit",
                                         legendgroup=f"run{k}", showlegend=False,
                                         hovertemplate="%{y:.3g} mm<extra>%{fullData.name}</extra>"), row=3, col=1)
    fig.update_yaxes(title_text=_X, row=1, col=1)
    fig.update_yaxes(title_text=_Y, row=2, col=1)
    if aligned:
        fig.update_yaxes(title_text=_label("run − table", "mm"), row=3, col=1)
    fig.update_xaxes(title_text=_T, row=rows, col=1)
    return _finish(fig, title if title is not None else "Tip B over time", rows=rows)


# --------------------------------------------------------------------------- interval bounds
def _bounds_arrays(name: str, b: Any) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    t = _vector(f"{name}.t", _field(name, b, "t"))
    x_lo, x_hi, y_lo, y_hi = (_vector(f"{name}.{f}", _field(name, b, f), t.size)
                              for f in ("x_min", "x_max", "y_min", "y_max"))
    return t, x_lo, x_hi, y_lo, y_hi


def fig_interval_bounds(analysis_or_bounds: Any, samples: Sequence[_Run] = (), given: _Bounds | None = None,
                        vertex: _Bounds | None = None, *, relative: bool = False,
                        band_label: str = "bounds (surrogate over the box)", given_label: str = "given bounds",
                        title: str | None = None) -> go.Figure:
    """Bounds of tip B's x and y over time as filled bands, with true runs inside and the vertex-only bounds.

    The band fills between the lower and the upper bound. Thin grey lines are a few true runs with parameters
    inside the box: they should stay inside the band. The dashed lines are the bounds from the box's corners
    only; where the band reaches beyond them, the extreme response occurs inside the box, so corners alone do
    not bound it (seen in the paper's case, see the data's README). ``given`` bounds (e.g. the paper's Table A2,
    or the bounds an interval inverse was asked to match) are drawn as markers.

    The bands are a few centimetres wide on a swing of metres; with ``relative`` every curve is drawn in
    millimetres about the band's mid-line :math:`m(t) = (Y_{lower}(t) + Y_{upper}(t))/2` (linearly interpolated
    to the times of the other curves), so the widths and the differences between the bounds can be read.

    Parameters
    ----------
    analysis_or_bounds : ForwardAnalysis or IntervalBounds
        A forward analysis (its ``bounds``; its ``samples`` and ``vertex_bounds`` unless given here) or the
        bounds themselves: ``t`` (n,) s and ``x_min``, ``x_max``, ``y_min``, ``y_max`` (n,) m.
    samples : sequence of PendulumRun
        True runs inside the box (``t``, ``x_b``, ``y_b``).
    given : IntervalBounds or None
        Bounds to compare with, drawn as markers.
    vertex : IntervalBounds or None
        Bounds from the box's corners only, drawn dashed.
    relative : bool
        Draw everything in mm about the band's mid-line instead of in m.
    band_label, given_label : str
        Legend names of the band and of the markers.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Two rows sharing the time axis: ``x_B [m]`` and ``y_B [m]`` (relative: ``x_B − mid-line [mm]``, ...).

    Raises
    ------
    DataValidationError
        When an object lacks a field or its arrays disagree in length.
    """
    obj = analysis_or_bounds
    if not hasattr(obj, "x_min") and hasattr(obj, "bounds"):
        if not samples:
            samples = tuple(getattr(obj, "samples", ()) or ())
        if vertex is None:
            vertex = getattr(obj, "vertex_bounds", None)
        obj = obj.bounds
    t, x_lo, x_hi, y_lo, y_hi = _bounds_arrays("analysis_or_bounds", obj)
    mids = (0.5 * (x_lo + x_hi), 0.5 * (y_lo + y_hi))

    def shown(row: int, tt: FloatArray, y: FloatArray) -> FloatArray:
        """``y`` as drawn in ``row`` (1: x, 2: y): as it is, or in mm about the band's mid-line."""
        if not relative:
            return y
        ref = mids[row - 1] if tt.size == t.size and np.allclose(tt, t) else np.interp(tt, t, mids[row - 1])
        return np.asarray(1e3 * (y - ref), dtype=np.float64)

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    color = COLORS[0]
    for row, (lo, hi) in ((1, (x_lo, x_hi)), (2, (y_lo, y_hi))):
        fig.add_trace(go.Scatter(x=t, y=shown(row, t, hi), mode="lines", line={"color": color, "width": 1},
                                 name="upper bound", legendgroup="band", showlegend=False), row=row, col=1)
        fig.add_trace(go.Scatter(x=t, y=shown(row, t, lo), mode="lines", line={"color": color, "width": 1},
                                 fill="tonexty", fillcolor=_rgba(color, 0.22), name=_text(band_label),
                                 legendgroup="band", showlegend=row == 1), row=row, col=1)
    for k, run in enumerate(samples):
        ts, xs, ys = _tip(f"samples[{k}]", run)
        for row, y in ((1, xs), (2, ys)):
            fig.add_trace(go.Scatter(x=ts, y=shown(row, ts, y), mode="lines", line={"color": _GREY, "width": 1},
                                     name="true runs inside the box", legendgroup="samples",
                                     showlegend=k == 0 and row == 1, opacity=0.8), row=row, col=1)
    if vertex is not None:
        tv, vx_lo, vx_hi, vy_lo, vy_hi = _bounds_arrays("vertex", vertex)
        for row, pair in ((1, (vx_lo, vx_hi)), (2, (vy_lo, vy_hi))):
            for j, y in enumerate(pair):
                fig.add_trace(go.Scatter(x=tv, y=shown(row, tv, y), mode="lines",
                                         line={"color": COLORS[1], "width": 1.5, "dash": "dash"},
                                         name="corners of the box only", legendgroup="vertex",
                                         showlegend=row == 1 and j == 0), row=row, col=1)
    if given is not None:
        tg, gx_lo, gx_hi, gy_lo, gy_hi = _bounds_arrays("given", given)
        for row, pair in ((1, (gx_lo, gx_hi)), (2, (gy_lo, gy_hi))):
            for j, y in enumerate(pair):
                fig.add_trace(go.Scatter(x=tg, y=shown(row, tg, y), mode="markers", name=_text(given_label),
                                         legendgroup="given", showlegend=row == 1 and j == 0,
                                         marker={"symbol": "triangle-up" if j else "triangle-down", "size": 7,
                                                 "color": _DARK}), row=row, col=1)
    if relative:
        fig.update_yaxes(title_text=_label("x_B − mid-line", "mm"), row=1, col=1)
        fig.update_yaxes(title_text=_label("y_B − mid-line", "mm"), row=2, col=1)
    else:
        fig.update_yaxes(title_text=_X, row=1, col=1)
        fig.update_yaxes(title_text=_Y, row=2, col=1)
    fig.update_xaxes(title_text=_T, row=2, col=1)
    return _finish(fig, title if title is not None else "Bounds of the tip response", rows=2)


# --------------------------------------------------------------------------- swarms and surrogate
def fig_swarm_convergence(results: Sequence[Any], labels: Sequence[str] | None = None, *,
                          title: str | None = None) -> go.Figure:
    """Best fitness against iteration for each swarm run (PSO, IPSO), on a log scale.

    Parameters
    ----------
    results : sequence of SwarmResult
        Each with ``history`` (iterations + 1,): the best fitness after each iteration (0: the initial swarm),
        in the fitness's units (m² for the bound-matching fitness of the interval inverse).
    labels : sequence of str or None
        One name per result; default each result's ``method`` in capitals.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The y axis is logarithmic unless a history has a value <= 0 (then linear).

    Raises
    ------
    DataValidationError
        When ``results`` is empty, a history is not a 1-D array or ``labels`` does not match.
    """
    items = _runs("results", results)
    names = _labels(labels, len(items), [str(getattr(r, "method", f"run {k + 1}")).upper()
                                         for k, r in enumerate(items)])
    fig = go.Figure()
    positive = True
    dashes = ("solid", "dash", "dot", "dashdot")
    for k, res in enumerate(items):
        h = _vector(f"results[{k}].history", _field(f"results[{k}]", res, "history"))
        positive &= bool(np.all(h[np.isfinite(h)] > 0))
        fig.add_trace(go.Scatter(x=np.arange(h.size), y=h, mode="lines", name=_text(names[k]),
                                 line={"color": COLORS[k % len(COLORS)], "width": 2, "dash": dashes[k % 4]},
                                 hovertemplate="iteration %{x}<br>best fitness %{y:.4g} m²<extra>%{fullData.name}"
                                               "</extra>"))
    fig.update_xaxes(title_text=_label("iteration", None))
    fig.update_yaxes(title_text=_label("best fitness", "m²"), type="log" if positive else "linear",
                     exponentformat="power")
    return _finish(fig, title if title is not None else "Convergence of the swarms", height=380)


def fig_surrogate_check(surrogate: Any, holdout_true: ArrayLike, holdout_pred: ArrayLike, *,
                        title: str | None = None) -> go.Figure:
    """The surrogate's prediction against true runs on held-out parameter points (one marker per output).

    Parameters
    ----------
    surrogate : ChebyshevSurrogate or None
        For the title: its ``order``, ``kind`` and ``holdout_rms``, ``holdout_max`` (m) when present.
    holdout_true, holdout_pred : (k, m) array_like, metres
        True responses and the surrogate's predictions at ``k`` held-out points (``m`` outputs, e.g. x_B and
        y_B at every output time).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Predicted against true with the line ``y = x``.

    Raises
    ------
    DataValidationError
        When the arrays differ in shape or are empty.
    """
    true = np.asarray(holdout_true, dtype=np.float64)
    pred = np.asarray(holdout_pred, dtype=np.float64)
    if true.shape != pred.shape or true.size == 0:
        raise DataValidationError(f"`holdout_true` and `holdout_pred` must have one non-empty shape, got"
                                  f" {true.shape} and {pred.shape}")
    a, b = true.ravel(), pred.ravel()
    fin = np.isfinite(a) & np.isfinite(b)
    lo = float(min(a[fin].min(), b[fin].min())) if fin.any() else 0.0
    hi = float(max(a[fin].max(), b[fin].max())) if fin.any() else 1.0
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"color": _GREY, "dash": "dash"},
                             name="y = x"))
    fig.add_trace(go.Scatter(x=a, y=b, mode="markers", marker={"size": 4, "color": COLORS[0], "opacity": 0.6},
                             name="held-out outputs"))
    fig.update_xaxes(title_text=_label("true", "m"))
    fig.update_yaxes(title_text=_label("surrogate", "m"), scaleanchor="x", scaleratio=1.0)
    if title is None:
        parts = []
        if surrogate is not None and hasattr(surrogate, "order"):
            parts.append(f"order {surrogate.order} ({getattr(surrogate, 'kind', '')})")
        rms = getattr(surrogate, "holdout_rms", None)
        mx = getattr(surrogate, "holdout_max", None)
        if rms is not None and math.isfinite(float(rms)):
            parts.append(f"held-out rms {1e3 * float(rms):.3g} mm")
        if mx is not None and math.isfinite(float(mx)):
            parts.append(f"max {1e3 * float(mx):.3g} mm")
        title = "Surrogate against true runs" + (": " + ", ".join(parts) if parts else "")
    return _finish(fig, title, height=420)
