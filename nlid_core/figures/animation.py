"""The double pendulum animated (plotly frames): flexible and rigid runs side by side or overlaid, the
bending optionally exaggerated, the tip's trace drawn as it goes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from .._checks import check_int
from ..errors import DataValidationError, ModelSpecError
from .common import COLORS, FloatArray, _finish, _label, _positive, _text
from .pendulum_args import MAX_PANELS, _DARK, _Run, _labels, _nodes, _rgba, _run_label, _runs, _tip

__all__ = ["exaggerate_bending", "fig_pendulum_animation"]


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

    x_range, y_range = _ranges(nodes)
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

    _animate(fig, times, index, tips, nodes, animated)
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


def _ranges(nodes: Sequence[FloatArray]) -> tuple[list[float], list[float]]:
    """The x and y ranges (m) that show every node and the pivot, with a margin."""
    allx = np.concatenate([n[..., 0].ravel() for n in nodes] + [np.zeros(1)])
    ally = np.concatenate([n[..., 1].ravel() for n in nodes] + [np.zeros(1)])
    finite = np.isfinite(allx) & np.isfinite(ally)
    if not finite.any():
        raise DataValidationError("`runs` have no finite node position")
    x_lo, x_hi = float(allx[finite].min()), float(allx[finite].max())
    y_lo, y_hi = float(ally[finite].min()), float(ally[finite].max())
    pad = 0.06 * max(x_hi - x_lo, y_hi - y_lo, 1e-3)
    return [x_lo - pad, x_hi + pad], [y_lo - pad, y_hi + pad]


def _animate(fig: go.Figure, times: FloatArray, index: Sequence[Any],
             tips: Sequence[tuple[FloatArray, FloatArray, FloatArray]],
             nodes: Sequence[FloatArray], animated: list[int]) -> None:
    """The frames (each run's tip path so far, rods and tip at each frame time) and the play/pause buttons and
    time slider that drive them."""
    frames = []
    for f, tf in enumerate(times):
        data = []
        for k in range(len(tips)):
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
