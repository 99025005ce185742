"""Figures of saved studies: one parameter across the runs of a study, with its standard errors, and the
estimates of one parameter over the draws of a Monte Carlo batch, with the true value."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go  # type: ignore[import-untyped]

from ..errors import DataValidationError
from ..jsonsafe import finite_or_none
from .common import COLORS, _finish, _label, _text

__all__ = ["fig_parameter_across_runs", "fig_monte_carlo_estimates"]


def fig_parameter_across_runs(labels: Sequence[str], values: Sequence[float], stderrs: Sequence[float], *,
                              parameter: str, unit: str = "", title: str | None = None) -> go.Figure:
    """Estimates of one parameter across saved runs, as points with ±1 standard-error bars.

    Parameters
    ----------
    labels : sequence of str, length n
        One label per run (drawn on the x axis in the given order; repeated labels are kept apart).
    values : sequence of float, length n, in ``unit``
        The estimates; NaN where a run lacks the parameter (no point is drawn).
    stderrs : sequence of float, length n, in ``unit``
        Standard errors; NaN where unknown (the point is drawn without a bar).
    parameter : str
        Name of the parameter (y-axis label).
    unit : str
        Unit of the parameter.
    title : str or None
        Default: ``"<parameter> across runs"``.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    DataValidationError
        Sequences of different lengths, or no runs.
    """
    n = len(labels)
    if n == 0:
        raise DataValidationError("`labels` is empty: there are no runs to draw")
    if len(values) != n or len(stderrs) != n:
        raise DataValidationError(
            f"`labels`, `values` and `stderrs` must have one entry per run; got {n}, {len(values)}, {len(stderrs)}")
    # repeated labels would be merged on a categorical axis: number them
    seen: dict[str, int] = {}
    ticks: list[str] = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        ticks.append(_text(lab) if seen[lab] == 1 else _text(f"{lab} ({seen[lab]})"))
    vals = [finite_or_none(float(v)) for v in values]
    errs = [finite_or_none(float(e)) if v is not None else None for v, e in zip(vals, stderrs)]
    fig = go.Figure(go.Scatter(
        x=ticks, y=vals, mode="markers", marker={"size": 10, "color": COLORS[0]},
        error_y={"type": "data", "array": [e if e is not None else 0.0 for e in errs], "visible": True,
                 "thickness": 1.5, "width": 6},
        name=_text(parameter), showlegend=False,
        customdata=[e if e is not None else float("nan") for e in errs],
        hovertemplate="%{x}<br>%{y:.6g} ± %{customdata:.3g}<extra></extra>",
    ))
    fig.update_xaxes(title_text="run", type="category")
    fig.update_yaxes(title_text=_label(parameter, unit))
    return _finish(fig, title if title is not None else f"{parameter} across runs")


def fig_monte_carlo_estimates(values: Sequence[float], *, parameter: str, truth: float, unit: str = "",
                              title: str | None = None) -> go.Figure:
    """Histogram of one parameter's estimates over the draws of a Monte Carlo batch, with the true value and
    the mean estimate marked.

    Parameters
    ----------
    values : sequence of float, length n, in ``unit``
        The estimates of the successful draws; NaN entries are left out.
    parameter : str
        Name of the parameter (x-axis label).
    truth : float, in ``unit``
        The true value (a solid vertical line; none when NaN).
    unit : str
        Unit of the parameter.
    title : str or None
        Default: ``"<parameter>: estimates of <n> draws"``.

    Returns
    -------
    plotly.graph_objects.Figure
        One histogram trace (y: number of draws) and the two lines as layout shapes.

    Raises
    ------
    DataValidationError
        No finite estimate.

    Notes
    -----
    The bias of the estimator is the distance between the two lines; the histogram's width is the spread that
    the mean reported standard error should match.
    """
    vals = [float(v) for v in values if math.isfinite(float(v))]
    if not vals:
        raise DataValidationError(f"`values` holds no finite estimate of {parameter!r}; got {len(values)} entries")
    fig = go.Figure(go.Histogram(x=vals, marker={"color": COLORS[0]}, opacity=0.8, name=_text(parameter),
                                 showlegend=False, hovertemplate="%{x}<br>%{y} draws<extra></extra>"))
    mean = sum(vals) / len(vals)
    lines = [(mean, "mean", COLORS[0], "dash")]
    if math.isfinite(truth):
        lines.insert(0, (float(truth), "truth", COLORS[1], "solid"))
    for x, name, color, dash in lines:
        fig.add_vline(x=x, line={"color": color, "width": 2.5, "dash": dash})
        # a legend entry per line (shapes have none)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"color": color, "width": 2.5, "dash": dash},
                                 name=f"{name} {x:.6g}"))
    fig.update_xaxes(title_text=_label(parameter, unit))
    fig.update_yaxes(title_text="draws")
    fig.update_layout(bargap=0.05)
    return _finish(fig, title if title is not None else f"{parameter}: estimates of {len(vals)} draws")
