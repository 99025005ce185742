"""Figures of the best linear approximation (plotly): its magnitude and phase with the noise and
nonlinear-distortion levels, the detection lines of a multisine, and the restoring-force slices."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError
from ..nonlinearity import BLA, RestoringSlices
from ..record import SI_UNITS
from .common import COLORS, _channel_name, _finish, _label, _text

__all__ = ["fig_bla", "fig_detection_lines", "fig_restoring_slices"]


def _break_gaps(f: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f`` and ``y`` with a NaN point inserted wherever the line spacing jumps to more than four times
    its median, so a curve over the excited lines is not drawn straight across an unexcited band."""
    if f.size < 3:
        return f, y
    step = np.diff(f)
    gaps = np.flatnonzero(step > 4.0 * np.median(step))
    if gaps.size == 0:
        return f, y
    mid = 0.5 * (f[gaps] + f[gaps + 1])
    return np.insert(f, gaps + 1, mid), np.insert(np.asarray(y, dtype=np.float64), gaps + 1, np.nan)


def fig_bla(b: BLA, *, show_phase: bool = True, height: int | None = None) -> go.Figure:
    """The best linear approximation with its total, noise and nonlinear-distortion levels.

    The classical plot of Pintelon & Schoukens (2012, ch. 4): ``|G_BLA|`` at the excited lines and,
    below it, the standard deviation of ``G_BLA`` due to noise (spread over periods, or the
    overlap) and due to nonlinear distortion (spread over realisations minus noise). Distortion far
    above the noise means a nonlinear system; distortion at the noise level a linear one.

    Parameters
    ----------
    b : BLA
        From :func:`nlid_core.nonlinearity.bla`.
    show_phase : bool
        Add the phase (unwrapped over the excited lines) below.
    height : int or None
        Figure height (px).
    """
    if not isinstance(b, BLA):
        raise DataValidationError(f"`b` must be a BLA, got {type(b).__name__}")
    rows = 2 if show_phase else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        row_heights=[0.72, 0.28] if show_phase else [1.0])
    ex = b.excited
    f = b.freq_hz[ex]
    traces = [("G (BLA)", b.level_db("g"), COLORS[0], 1.6)]
    if b.layout.mode == "segments":
        traces.append(("spread (noise + distortion)", b.level_db("total"), COLORS[3], 1.0))
    else:
        if b.has_total and b.has_noise:
            traces.append(("nonlinear distortion", b.level_db("distortion"), COLORS[1], 1.0))
        elif b.has_total:
            traces.append(("spread over realisations (noise + distortion)", b.level_db("total"), COLORS[3], 1.0))
        if b.has_noise:
            traces.append(("noise", b.level_db("noise"), COLORS[2], 1.0))
    for name, y, color, width in traces:
        yy = y[ex]
        fx, yy = _break_gaps(f, yy) if name == "G (BLA)" else (f, yy)
        fig.add_trace(go.Scatter(x=fx, y=np.where(np.isfinite(yy), yy, np.nan), name=name,
                                   mode="markers" if name != "G (BLA)" else "lines",
                                   marker={"size": 3, "color": color}, line={"color": color, "width": width}),
                      row=1, col=1)
    fig.update_yaxes(title_text=_label("level", f"dB re 1 {b.unit}"), row=1, col=1)
    if show_phase:
        fx, ph = _break_gaps(f, b.phase_deg[ex])
        fig.add_trace(go.Scatter(x=fx, y=ph, name="phase", mode="lines", showlegend=False,
                                   line={"color": COLORS[0], "width": 1.2}), row=2, col=1)
        fig.update_yaxes(title_text=_label("phase", "deg"), row=2, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=rows, col=1)
    sub = b.layout.describe(b.fs)
    title = f"{_text(b.record)}: best linear approximation {_text(b.output)}/f<br><sup>{_text(sub)}</sup>"
    return _finish(fig, title, rows=rows, height=height or (460 if show_phase else 360), markup=True)


def fig_detection_lines(b: BLA, *, height: int | None = None) -> go.Figure:
    """Output spectrum of one period at the excited lines, the unexcited odd and even lines, and the noise.

    For an odd multisine, energy above the noise at unexcited odd lines is odd-degree distortion
    (k3, c2, friction), at even lines even-degree distortion (k2, an offset).

    Parameters
    ----------
    b : BLA
        A periodic BLA (from :func:`nlid_core.nonlinearity.bla`).
    height : int or None
        Figure height (px).
    """
    if not isinstance(b, BLA):
        raise DataValidationError(f"`b` must be a BLA, got {type(b).__name__}")
    if b.layout.mode != "periodic":
        raise DataValidationError("detection lines need a periodic excitation; this BLA is from segment averaging")
    k = np.arange(b.freq_hz.size)
    with np.errstate(divide="ignore"):
        level = 10 * np.log10(np.maximum(b.y_power, 1e-300))
        noise = 10 * np.log10(np.maximum(b.y_noise, 1e-300)) if np.isfinite(b.y_noise).all() else None
    unexc = ~b.excited & (k > 0)
    kind = b.input_kind
    groups: list[tuple[str, np.ndarray, str]] = [("excited lines", b.excited, COLORS[0])]
    if kind in ("odd", "random-odd"):
        groups += [("unexcited odd lines", unexc & (k % 2 == 1), COLORS[1]),
                   ("unexcited even lines", unexc & (k % 2 == 0), COLORS[2])]
    else:
        groups += [("unexcited lines", unexc, COLORS[1])]
    fig = go.Figure()
    for name, sel, color in groups:
        if sel.any():
            fig.add_trace(go.Scatter(x=b.freq_hz[sel], y=level[sel], mode="markers", name=name,
                                       marker={"size": 3, "color": color}))
    if noise is not None:
        fig.add_trace(go.Scatter(x=b.freq_hz[k > 0], y=noise[k > 0], mode="lines", name="noise level",
                                   line={"color": "black", "width": 1.2}))
    fig.update_xaxes(title_text=_label("frequency", "Hz"))
    fig.update_yaxes(title_text=_label(f"{b.output} per line", f"dB re 1 {b.y_unit}"))
    title = f"{b.record}: output at excited and unexcited lines ({kind} multisine)"
    return _finish(fig, title, height=height or 400)


def fig_restoring_slices(slices: RestoringSlices, *, height: int | None = None) -> go.Figure:
    """Restoring force along the slices ẋ ≈ 0 (stiffness curve) and x ≈ 0 (damping curve).

    Bin means with ± 2 standard errors and the fitted polynomial (``x, x², x³`` or ``ẋ, |ẋ|ẋ``).

    Parameters
    ----------
    slices : RestoringSlices
        From :func:`nlid_core.nonlinearity.restoring_slices`.
    height : int or None
        Figure height (px).
    """
    if not isinstance(slices, RestoringSlices):
        raise DataValidationError(f"`slices` must be RestoringSlices, got {type(slices).__name__}")
    units = dict(SI_UNITS) | dict(slices.units)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["stiffness curve (slice ẋ ≈ 0)",
                                                        "damping curve (slice x ≈ 0)"])
    for col, sl in ((1, slices.stiffness), (2, slices.damping)):
        ax = "x" if col == 1 else "v"
        fig.update_xaxes(title_text=_label(_channel_name(ax), units[ax]), row=1, col=col)
        if sl is None:
            continue
        ok = np.isfinite(sl.mean)
        fig.add_trace(go.Scatter(x=sl.centers[ok], y=sl.mean[ok], mode="markers", name="bin mean ± 2 s.e.",
                                 showlegend=col == 1, marker={"color": COLORS[0], "size": 6},
                                 error_y={"type": "data", "array": 2 * np.nan_to_num(sl.stderr[ok])}),
                      row=1, col=col)
        xs = np.linspace(float(sl.centers[0]), float(sl.centers[-1]), 200)
        ys = sl.curve(xs)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="fit " + " + ".join(sl.basis),
                                 line={"color": COLORS[1], "width": 2}), row=1, col=col)
    fig.update_yaxes(title_text=_label("restoring force f − m·ẍ", units["f"]), row=1, col=1)
    fig = _finish(fig, f"{slices.record}: restoring-force slices", height=height or 440)
    # legend below the plots: above them it would cover the subplot titles
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0.0},
                      margin={"b": 110})
    return fig
