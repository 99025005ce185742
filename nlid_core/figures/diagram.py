"""Diagrams of multi-DOF models (plotly): masses as boxes, connections as springs, dampers or lines, a rigid
body with its mounts, labels placed where they overlap least; ``model_figure`` draws a model file's."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]

from ..errors import DataValidationError, ModelSpecError
from ..mdof.spec import MdofModel
from .common import COLORS, FONT, FloatArray, _check_type, _finish, _text

#: Kinds of diagram nodes and how they are drawn (plotly marker symbol, colour, size in px).
NODE_KINDS: dict[str, tuple[str, str, int]] = {
    "mass": ("square", COLORS[0], 26),
    "ground": ("triangle-down", "#555555", 20),
    "mount": ("diamond", COLORS[1], 16),
    "body_point": ("circle-x", COLORS[3], 13),
}

__all__ = ["NODE_KINDS", "EDGE_KINDS", "DiagramNode", "DiagramEdge", "DiagramBody", "model_diagram", "model_figure"]


#: Kinds of diagram edges: a zig-zag spring, a dashpot, or a plain (labelled) line.
EDGE_KINDS = ("spring", "damper", "line")


#: Nominal size of the model diagram (px); labels are kept apart at this size.
_DIAGRAM_WIDTH = 900


_DIAGRAM_MARGIN = {"l": 20, "r": 20, "t": 70, "b": 20}


#: Rough text metrics of a 12 px label (px per character, line height) used to keep labels apart.
_CHAR_PX = 7.5


_LINE_PX = 18.0


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
    by_name = _checked_diagram(nodes, edges, bodies)
    x0, x1, y0, y1, scale, plot_h, span = _frame(nodes, bodies)
    fig = go.Figure()
    for k, body in enumerate(bodies):
        fig.add_trace(go.Scatter(x=[*body.xs, body.xs[0]], y=[*body.ys, body.ys[0]], fill="toself", mode="lines",
                                 name=_text(body.name), fillcolor="rgba(99,110,250,0.10)",
                                 line={"color": COLORS[k % len(COLORS)], "width": 1.5}, hoverinfo="name"))
    edge_mid, reach = _draw_edges(fig, edges, by_name, 0.035 * span)
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
    m = _DIAGRAM_MARGIN
    fig = _finish(fig, title, height=int(plot_h + m["t"] + m["b"]))
    fig.update_layout(width=_DIAGRAM_WIDTH, margin=m, showlegend=True,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0})
    fig.update_xaxes(range=[x0, x1], visible=False, constrain="domain")
    fig.update_yaxes(range=[y0, y1], visible=False, scaleanchor="x", scaleratio=1, constrain="domain")
    _label(fig, nodes, size_of, edge_mid, bodies, scale)
    return fig


def _checked_diagram(nodes: Sequence[DiagramNode], edges: Sequence[DiagramEdge], bodies: Sequence[DiagramBody]
                     ) -> dict[str, DiagramNode]:
    """The nodes by name, once nodes, edges and bodies are checked."""
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
    return by_name


def _frame(nodes: Sequence[DiagramNode], bodies: Sequence[DiagramBody]
           ) -> tuple[float, float, float, float, float, float, float]:
    """The axes' ranges at equal scale, the scale (px per length unit), the plot's height (px) and the drawing's
    span (length unit)."""
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
    return x0, x1, y0, y1, scale, plot_h, span


_EdgeMid = tuple[DiagramEdge, FloatArray, FloatArray, FloatArray, float]


def _draw_edges(fig: go.Figure, edges: Sequence[DiagramEdge], by_name: Mapping[str, DiagramNode], amp: float
                ) -> tuple[list[_EdgeMid], dict[str, float]]:
    """Draw the springs and dampers (several between one pair side by side); (each edge's drawn ends, side and
    amplitude; how far from its node the edges of each node reach)."""
    groups: dict[tuple[str, str], list[DiagramEdge]] = {}
    for e in edges:
        groups.setdefault(tuple(sorted((e.a, e.b))), []).append(e)  # type: ignore[arg-type]
    edge_mid: list[_EdgeMid] = []
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
    return edge_mid, reach


def _label(fig: go.Figure, nodes: Sequence[DiagramNode], size_of: Mapping[str, int], edge_mid: Sequence[_EdgeMid],
           bodies: Sequence[DiagramBody], scale: float) -> None:
    """Label the nodes, the edges and the bodies where the labels keep off each other and the drawing."""
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
