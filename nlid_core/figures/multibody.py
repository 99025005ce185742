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
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError
from .animation import exaggerate_bending, fig_pendulum_animation
from .common import COLORS, FloatArray, _finish, _label, _text
from .pendulum_args import (
    _Bounds, _DARK, _GREY, _Run, _T, _X, _Y, _field, _labels, _rgba, _run_label, _runs, _tip, _vector
)

__all__ = [
    "exaggerate_bending",
    "fig_pendulum_animation",
    "fig_tip_trajectory",
    "fig_interval_bounds",
    "fig_swarm_convergence",
    "fig_surrogate_check",
]


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
