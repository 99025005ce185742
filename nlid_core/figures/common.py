"""The look every figure shares and the helpers every builder uses.

One template, font and colour sequence (``TEMPLATE``, ``FONT``, ``COLORS``), legends above the
plot, and every numeric axis labelled with its unit in brackets, e.g. ``force [N]``. User-derived
text is escaped before plotly renders it. Long signals are thinned for plotting only, by
:func:`decimate_for_plot`, which keeps every peak.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from numpy.typing import ArrayLike, NDArray

from ..errors import DataValidationError, ModelSpecError
from ..record import CHANNEL_LABELS, Record

FloatArray = NDArray[np.float64]

#: Plotly template of every figure.
TEMPLATE = "plotly_white"
#: Base font of every figure.
FONT: Mapping[str, Any] = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 13}
#: Height (px) of one subplot row.
ROW_HEIGHT = 230
#: Colour sequence (plotly's default qualitative palette).
COLORS: tuple[str, ...] = (
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52",
)
_DIMENSIONLESS = "-"
#: Default frequency range of spectra: this many times the upper edge of the excitation band.
SPECTRUM_BAND_MULTIPLE = 8.0


def _text(value: object) -> str:
    """User-derived text (record names, units) made inert for plotly, which renders a subset of HTML
    (links, line breaks) in titles, labels and hover text; plotly shows the entities as the characters."""
    return html.escape(str(value), quote=False)


def _label(name: str, unit: str | None) -> str:
    u = (unit or "").strip()
    return _text(f"{name} [{u if u and u != '1' else _DIMENSIONLESS}]")


def _finish(fig: go.Figure, title: str | None, rows: int = 1, height: int | None = None,
            markup: bool = False) -> go.Figure:
    """Apply the common layout; ``title`` is escaped unless ``markup`` (its user parts escaped by the caller)."""
    if title and not markup:
        title = _text(title)
    fig.update_layout(
        template=TEMPLATE,
        font=dict(FONT),
        # the title at the top edge and the legend just above the plot: in a narrow column the legend wraps
        # to a second row and would otherwise run into the title
        title={"text": title or "", "x": 0.0, "xanchor": "left", "yref": "container", "y": 1.0, "yanchor": "top",
               "pad": {"t": 10}},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1.0},
        margin={"l": 70, "r": 30, "t": 95 if title else 40, "b": 55},
        height=height or max(320, ROW_HEIGHT * rows + 110),
        hovermode="closest",
    )
    return fig


def _check_type(name: str, value: Any, kind: type) -> None:
    if not isinstance(value, kind):
        raise DataValidationError(f"`{name}` must be a {kind.__name__}, got {type(value).__name__}")


def _check_max_points(max_points: Any, name: str = "max_points", minimum: int = 4) -> int:
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < minimum:
        raise ModelSpecError(f"`{name}` must be an integer >= {minimum}, got {max_points!r}")
    return int(max_points)


def _positive(name: str, value: Any, unit: str) -> float:
    try:
        val = float(value)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a positive number ({unit}), got {value!r}") from None
    if not (val > 0 and not math.isnan(val)):
        raise ModelSpecError(f"`{name}` must be a positive number ({unit}), got {value!r}")
    return val


def _as_signal(name: str, values: ArrayLike) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"`{name}` must be a numeric 1-D array") from None
    if arr.ndim != 1 or arr.size == 0:
        raise DataValidationError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    return arr


def _check_record(rec: Any) -> Record:
    if not isinstance(rec, Record):
        raise DataValidationError(f"`rec` must be a Record, got {type(rec).__name__}")
    return rec


def _stride(n: int, max_points: int) -> NDArray[np.intp]:
    """Evenly spaced indices (every k-th sample) for scatter plots."""
    step = max(1, int(math.ceil(n / max_points)))
    return np.arange(0, n, step, dtype=np.intp)


def _channel_name(c: str) -> str:
    return CHANNEL_LABELS.get(c, c)


def decimate_for_plot(t: ArrayLike, y: ArrayLike, max_points: int = 4000) -> tuple[FloatArray, FloatArray]:
    """Thin a signal for plotting with a min/max envelope that keeps every peak.

    The samples are split into ``max_points // 2`` equal buckets and each bucket keeps its smallest
    and its largest sample (in time order), so the plotted line covers the same range as the full
    signal: the global maximum and minimum are always kept. For plotting only, never for
    computation.

    Parameters
    ----------
    t : (n,) array_like
        Abscissa (time), same length as ``y``.
    y : (n,) array_like
        Signal.
    max_points : int
        Most points returned (>= 4); signals this short are returned unchanged.

    Returns
    -------
    t_dec, y_dec : (m,) ndarray
        ``m <= max_points``.
    """
    tt = _as_signal("t", t)
    yy = _as_signal("y", y)
    if tt.size != yy.size:
        raise DataValidationError(f"`t` has {tt.size} samples but `y` has {yy.size}")
    mp = _check_max_points(max_points)
    n = yy.size
    if n <= mp:
        return tt.copy(), yy.copy()
    buckets = mp // 2
    size = int(math.ceil(n / buckets))
    buckets = int(math.ceil(n / size))
    padded = np.empty(buckets * size)
    padded[:n] = yy
    padded[n:] = yy[-1]
    blocks = padded.reshape(buckets, size)
    base = np.arange(buckets) * size
    i_min = np.minimum(base + np.argmin(blocks, axis=1), n - 1)
    i_max = np.minimum(base + np.argmax(blocks, axis=1), n - 1)
    idx = np.unique(np.concatenate([i_min, i_max]))
    return tt[idx], yy[idx]


def fig_to_html(fig: go.Figure, *, include_plotlyjs: bool | str = False) -> str:
    """An HTML fragment (a ``<div>`` with its script) for embedding a figure in a report.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    include_plotlyjs : bool or str
        As in :meth:`plotly.graph_objects.Figure.to_html`: False (the page loads plotly.js once),
        True (inline, ~3.5 MB), ``"cdn"``, ...

    Returns
    -------
    str
    """
    if not isinstance(fig, go.Figure):
        raise ModelSpecError(f"`fig` must be a plotly Figure, got {type(fig).__name__}")
    return str(fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs))
