"""Figures of friction identification and hysteresis: plateaus, the Stribeck curve, pre-sliding loops,
the steady replay, stick-slip cycles and restoring-force loops of a hysteretic model.

Every builder takes result objects of :mod:`nlid_core.friction` or :mod:`nlid_core.nonlinearity.hysteresis`
and returns a :class:`plotly.graph_objects.Figure`; the only arithmetic is unit scaling for display
(displacements in µm when the record is in metres) and evaluating a fitted curve on a velocity grid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import ModelSpecError
from ..friction.plateaus import PlateauDetection
from ..friction.staged import FrictionResult, PreslidingFit, SteadyReplay
from ..friction.stickslip import StickSlipResult
from ..nonlinearity.hysteresis import HystereticLoops
from ..record import Record
from .common import COLORS, _check_max_points, _check_record, _finish, _label, _stride, _text, decimate_for_plot

__all__ = [
    "CURVE_LABELS",
    "fig_plateaus",
    "fig_stribeck",
    "fig_presliding",
    "fig_steady_replay",
    "fig_stick_slip",
    "fig_hysteretic_loops",
]

#: Legend names of the fitted steady curves.
CURVE_LABELS: Mapping[str, str] = {
    "stribeck": "LuGre steady curve (Stribeck)",
    "coulomb": "static: Coulomb",
    "coulomb-viscous": "static: Coulomb + viscous",
    "stribeck-exponent": "static: Stribeck, free exponent",
}
#: Legend below the plot, for figures with many entries or subplot titles.
_LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0.0}
_CURVE_DASH = {"stribeck": "solid", "coulomb": "dot", "coulomb-viscous": "dash", "stribeck-exponent": "dashdot"}


def _micro(unit: str) -> tuple[float, str]:
    """Display scale and unit for small displacements: µm for records in metres."""
    return (1e6, "µm") if unit.strip() == "m" else (1.0, unit)


#: Plateau speeds whose largest exceeds the smallest by more than this factor are drawn on a log axis.
PLATEAU_LOG_SPAN = 10.0


def fig_plateaus(rec: Record, detection: PlateauDetection, *, max_points: int = 6000) -> go.Figure:
    """Velocity against time with the plateau candidates: accepted ones shaded, rejected ones marked.

    Parameters
    ----------
    rec : Record
        The staircase record (needs ``v``).
    detection : PlateauDetection
        Its plateaus (``FrictionResult.plateaus`` or :func:`nlid_core.friction.plateaus.find_plateaus`).
    max_points : int
        Most points of the velocity trace (min/max decimation).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: "velocity", "accepted plateau" (mean velocity over each accepted span) and "rejected"
        (markers whose hover text gives the reason).
    """
    rec = _check_record(rec)
    if rec.v is None:
        raise ModelSpecError(f"`rec`: record `{rec.name}` has no velocity `v`")
    if not isinstance(detection, PlateauDetection):
        raise ModelSpecError(f"`detection` must be a PlateauDetection, got {type(detection).__name__}")
    mp = _check_max_points(max_points)
    v_unit, t_unit = rec.unit("v"), rec.unit("t")
    # plateau speeds spanning more than a decade (a Stribeck staircase) read on a log axis of |v|
    speeds = [abs(p.velocity) for p in detection.plateaus if p.velocity != 0]
    log = bool(speeds) and max(speeds) > PLATEAU_LOG_SPAN * min(speeds)
    v = np.abs(rec.channel("v")) if log else rec.channel("v")
    td, vd = decimate_for_plot(rec.t, v, mp)
    if log:
        vd = np.where(vd > 0, vd, np.nan)
    fig = go.Figure(go.Scattergl(x=td, y=vd, mode="lines", name="speed |v|" if log else "velocity",
                                 line={"color": COLORS[0], "width": 1}))
    acc_x: list[float | None] = []
    acc_y: list[float | None] = []
    for p in detection.accepted:
        fig.add_vrect(x0=p.t_start_s, x1=p.t_stop_s, fillcolor="#00CC96", opacity=0.18, line_width=0, layer="below")
        acc_x += [p.t_start_s, p.t_stop_s, None]
        acc_y += [abs(p.velocity) if log else p.velocity] * 2 + [None]
    fig.add_trace(go.Scatter(x=acc_x, y=acc_y, mode="lines", name="accepted plateau",
                             line={"color": "#00A07A", "width": 4}, hoverinfo="skip"))
    rej = detection.rejected
    fig.add_trace(go.Scatter(
        x=[0.5 * (p.t_start_s + p.t_stop_s) for p in rej], y=[abs(p.velocity) if log else p.velocity for p in rej],
        mode="markers",
        name="rejected", marker={"symbol": "x", "size": 11, "color": COLORS[1], "line": {"width": 2}},
        hovertext=[_text(f"{p.t_start_s:.2f}-{p.t_stop_s:.2f} s: {p.reason}") for p in rej], hoverinfo="text"))
    fig.update_xaxes(title_text=_label("time", t_unit))
    fig.update_yaxes(title_text=_label("speed |v| (log)" if log else "velocity", v_unit),
                     type="log" if log else "linear")
    n_acc, n_all = len(detection.accepted), len(detection.plateaus)
    return _finish(fig, f"{rec.name}: plateau detection ({n_acc} of {n_all} accepted)", height=420)


def fig_stribeck(result: FrictionResult, *, force_unit: str = "N", velocity_unit: str = "m/s",
                 curves: Sequence[str] | None = None, n_grid: int = 200) -> go.Figure:
    """The steady friction curve: plateau points with error bars, LuGre's steady curve and the static fits.

    Friction magnitude against speed on a logarithmic speed axis; positive and negative directions
    are separate series (the curves are symmetric).

    Parameters
    ----------
    result : FrictionResult
    force_unit, velocity_unit : str
        Units of the records (the identification works in SI).
    curves : sequence of str or None
        Curves to draw (keys of ``result.curves``); None: every successful one.
    n_grid : int
        Speeds at which each curve is evaluated.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(result, FrictionResult):
        raise ModelSpecError(f"`result` must be a FrictionResult, got {type(result).__name__}")
    grid_n = _check_max_points(n_grid, "n_grid")
    points = [p for d in result.plateaus for p in d.accepted]
    fig = go.Figure()
    for sign, name, color in ((1, "plateaus, v > 0", COLORS[0]), (-1, "plateaus, v < 0", COLORS[3])):
        sel = [p for p in points if np.sign(p.velocity) == sign]
        if not sel:
            continue
        fig.add_trace(go.Scatter(
            x=[abs(p.velocity) for p in sel], y=[abs(p.force) for p in sel], mode="markers", name=name,
            marker={"color": color, "size": 8, "symbol": "circle" if sign > 0 else "diamond"},
            error_x={"type": "data", "array": [2 * p.velocity_se for p in sel], "visible": True},
            error_y={"type": "data", "array": [2 * p.force_se for p in sel], "visible": True}))
    speeds = np.array([abs(p.velocity) for p in points if p.velocity != 0])
    lo, hi = (float(speeds.min()) / 2, float(speeds.max()) * 2) if speeds.size else (1e-5, 1.0)
    vv = np.logspace(np.log10(lo), np.log10(hi), grid_n)
    names = [n for n in (curves if curves is not None else result.curves) if n in result.curves]
    for i, name in enumerate(names):
        cf = result.curves[name]
        if not cf.success:
            continue
        label = CURVE_LABELS.get(name, name)
        fig.add_trace(go.Scatter(
            x=vv, y=cf.force(vv), mode="lines", name=f"{label} (AIC {cf.aic:.1f})",
            line={"color": COLORS[(i + 1) % len(COLORS)] if name != "stribeck" else "#222222",
                  "dash": _CURVE_DASH.get(name, "solid"), "width": 3 if name == "stribeck" else 2}))
    fig.update_xaxes(type="log", title_text=_label("speed |v|", velocity_unit))
    fig.update_yaxes(title_text=_label("friction force |F|", force_unit), rangemode="tozero")
    fig = _finish(fig, "Steady friction curve: plateau points (±2 SE) and fits", height=540)
    return fig.update_layout(legend=_LEGEND_BELOW, margin={"b": 150})


def fig_presliding(fit: PreslidingFit, *, x_unit: str = "m", force_unit: str = "N", time_unit: str = "s",
                   max_points: int = 6000) -> go.Figure:
    """Pre-sliding: force against displacement (µm for records in metres) and displacement against time,
    measured and simulated by the identified model.

    Parameters
    ----------
    fit : PreslidingFit
        One of ``FrictionResult.presliding``.
    x_unit, force_unit, time_unit : str
        Units of the record.
    max_points : int
        Most points per trace.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels; traces "measured" and "LuGre (identified)" in each.
    """
    if not isinstance(fit, PreslidingFit):
        raise ModelSpecError(f"`fit` must be a PreslidingFit, got {type(fit).__name__}")
    mp = _check_max_points(max_points)
    scale, xu = _micro(x_unit)
    idx = _stride(fit.t.size, mp)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.45, 0.55], horizontal_spacing=0.1,
                        subplot_titles=("force vs displacement", "displacement vs time"))
    for y, name, color, legend in ((fit.x, "measured", COLORS[0], True),
                                   (fit.x_sim, "LuGre (identified)", COLORS[1], True)):
        fig.add_trace(go.Scattergl(x=scale * y[idx], y=fit.f[idx], mode="lines", name=name, legendgroup=name,
                                   line={"color": color, "width": 1}), row=1, col=1)
        td, yd = decimate_for_plot(fit.t, scale * y, mp)
        fig.add_trace(go.Scattergl(x=td, y=yd, mode="lines", name=name, legendgroup=name, showlegend=not legend,
                                   line={"color": color, "width": 1}), row=1, col=2)
    fig.update_xaxes(title_text=_label("displacement", xu), row=1, col=1)
    fig.update_yaxes(title_text=_label("force", force_unit), row=1, col=1)
    fig.update_xaxes(title_text=_label("time", time_unit), row=1, col=2)
    fig.update_yaxes(title_text=_label("displacement", xu), row=1, col=2)
    fig = _finish(fig, f"{fit.record}: pre-sliding below breakaway (NRMSE {100 * fit.nrmse:.3g} %)", height=480)
    return fig.update_layout(legend=_LEGEND_BELOW, margin={"b": 120})


def fig_steady_replay(replay: SteadyReplay, *, force_unit: str = "N", time_unit: str = "s",
                      max_points: int = 6000) -> go.Figure:
    """Friction along the staircase: measured (``f − m·a``), LuGre driven by the measured motion, static curve.

    Parameters
    ----------
    replay : SteadyReplay
        From :func:`nlid_core.friction.staged.replay_steady`.
    force_unit, time_unit : str
        Units of the record.
    max_points : int
        Most points per trace.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(replay, SteadyReplay):
        raise ModelSpecError(f"`replay` must be a SteadyReplay, got {type(replay).__name__}")
    mp = _check_max_points(max_points)
    fig = go.Figure()
    for y, name, color in ((replay.measured, "measured f − m·a", COLORS[0]),
                           (replay.lugre, f"LuGre (NRMSE {100 * replay.nrmse_lugre:.3g} %)", COLORS[1]),
                           (replay.static, f"static Stribeck (NRMSE {100 * replay.nrmse_static:.3g} %)", COLORS[2])):
        td, yd = decimate_for_plot(replay.t, y, mp)
        fig.add_trace(go.Scattergl(x=td, y=yd, mode="lines", name=name, line={"color": color, "width": 1}))
    fig.update_xaxes(title_text=_label("time", time_unit))
    fig.update_yaxes(title_text=_label("friction force", force_unit))
    return _finish(fig, f"{replay.record}: friction along the measured motion", height=420)


def fig_stick_slip(truth: StickSlipResult | None, models: Mapping[str, StickSlipResult], *, x_unit: str = "m",
                   last_cycles: int = 3) -> go.Figure:
    """Stick-slip oscillator: displacement over the last cycles, truth against model predictions.

    Parameters
    ----------
    truth : StickSlipResult or None
        The simulated truth (None when the records were measured).
    models : mapping of str to StickSlipResult
        Predictions by label (e.g. "LuGre (identified)", "static Stribeck").
    x_unit : str
        Displacement unit (mm shown for metres).
    last_cycles : int
        Cycles shown (of the truth's period, or of the first model's).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    runs = ([("truth (simulated)", truth)] if truth is not None else []) + list(models.items())
    if not runs or not all(isinstance(r, StickSlipResult) for _, r in runs):
        raise ModelSpecError("`truth` and `models` must be StickSlipResult objects (at least one)")
    n_cyc = _check_max_points(last_cycles, "last_cycles", 1)
    scale, xu = (1e3, "mm") if x_unit.strip() == "m" else (1.0, x_unit)
    period = next((r.period_s for _, r in runs if r.period_s), None)
    fig = go.Figure()
    for i, (label, r) in enumerate(runs):
        t0 = float(r.t[-1]) - n_cyc * period if period else float(r.t[0])
        sel = r.t >= t0
        td, xd = decimate_for_plot(r.t[sel] - t0, scale * r.x[sel], 4000)
        extra = (f"period {r.period_s:.3g} s, p-p {scale * r.amplitude_m:.3g} {xu}"
                 if r.period_s and r.amplitude_m else "no limit cycle")
        fig.add_trace(go.Scatter(x=td, y=xd, mode="lines", name=_text(f"{label}: {extra}"),
                                 line={"color": "#222222" if i == 0 and truth is not None else COLORS[i % len(COLORS)],
                                       "width": 2, "dash": "solid" if i == 0 else "dash"}))
    fig.update_xaxes(title_text=_label("time over the last cycles", "s"))
    fig.update_yaxes(title_text=_label("displacement", xu))
    fig = _finish(fig, "Stick-slip oscillator: limit cycle", height=480)
    return fig.update_layout(legend=_LEGEND_BELOW, margin={"b": 130})


def fig_hysteretic_loops(loops: HystereticLoops, *, max_points: int = 8000) -> go.Figure:
    """Restoring force against displacement: the data (``f − m·a − c·v``) and the fitted model (``k·x + z``).

    Parameters
    ----------
    loops : HystereticLoops
        From :func:`nlid_core.nonlinearity.hysteresis.hysteretic_loops`.
    max_points : int
        Most points per trace.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(loops, HystereticLoops):
        raise ModelSpecError(f"`loops` must be HystereticLoops, got {type(loops).__name__}")
    mp = _check_max_points(max_points)
    idx = _stride(loops.t.size, mp)
    # lines in time order: each cycle is drawn as the closed loop it is (points would be a cloud)
    fig = go.Figure(go.Scattergl(x=loops.x[idx], y=loops.measured[idx], mode="lines", name="data: f − m·a − c·v",
                                 line={"width": 1, "color": COLORS[0]}, opacity=0.7))
    if loops.success:
        fig.add_trace(go.Scattergl(x=loops.x_model[idx], y=loops.model[idx], mode="lines",
                                   name=f"fit: k·x + z (NRMSE {100 * loops.nrmse:.3g} %)",
                                   line={"width": 1.6, "color": COLORS[1]}))
    fig.update_xaxes(title_text=_label("displacement", loops.units.get("x", "")))
    fig.update_yaxes(title_text=_label("restoring force", loops.units.get("f", "")))
    return _finish(fig, f"{loops.record}: hysteresis loops, data vs fit", height=480)
