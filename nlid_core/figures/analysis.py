"""Figures of identifiability and test design: parameter correlations, predicted uncertainty of
candidate tests, where the information lies, profile likelihoods and the L-curve."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from ..errors import DataValidationError
from ..estimate import FitResult
from ..metrics import PERCENT_CAP
from .common import _DIMENSIONLESS, FloatArray, _finish, _label

def fig_correlation(fit: FitResult, *, include_states: bool = False) -> go.Figure:
    """Heatmap of the estimated parameters' correlation matrix, values annotated.

    Parameters
    ----------
    fit : FitResult
        A fit with an uncertainty analysis.
    include_states : bool
        Also show the estimated initial states (``x0[k]``, ``v0[k]``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(fit, FitResult):
        raise DataValidationError(f"`fit` must be a FitResult, got {type(fit).__name__}")
    unc = fit.uncertainty
    if unc is None or not unc.names:
        raise DataValidationError("`fit` has no uncertainty analysis (no correlation matrix to show)")
    names = list(unc.names)
    sel = [i for i, n in enumerate(names) if include_states or not (n.startswith("x0[") or n.startswith("v0["))]
    if not sel:
        raise DataValidationError("`fit`: no free parameter in the correlation matrix")
    corr = np.asarray(unc.correlation, dtype=np.float64)[np.ix_(sel, sel)]
    labels = [names[i] for i in sel]
    fig = go.Figure(
        go.Heatmap(
            x=labels, y=labels, z=corr, zmin=-1.0, zmax=1.0, zmid=0.0, colorscale="RdBu_r", name="correlation",
            text=np.vectorize(lambda v: "" if not np.isfinite(v) else f"{v:.2f}")(corr),
            texttemplate="%{text}", hovertemplate="%{y} / %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": _label("correlation", _DIMENSIONLESS)}},
        )
    )
    fig.update_xaxes(title_text="parameter", side="bottom")
    fig.update_yaxes(title_text="parameter", autorange="reversed")
    size = max(380, 60 * len(labels) + 160)
    return _finish(fig, f"parameter correlation ({fit.method})", height=size)


def fig_design_comparison(predictions: Sequence[Any], *, title: str | None = None) -> go.Figure:
    """Predicted relative standard error of every parameter for several candidate tests (log scale).

    Errors beyond :data:`nlid_core.metrics.PERCENT_CAP` % are drawn at the cap and labelled as a bound
    (such a parameter is undetermined by the test; 10^16 % would only stretch the axis).

    Parameters
    ----------
    predictions : sequence of DesignPrediction
        From :func:`nlid_core.analysis.compare_designs` (objects with ``label``, ``names``,
        ``rel_stderr`` and ``success``).
    title : str or None
        Figure title.
    """
    fig = go.Figure()
    for pred in predictions:
        if not pred.success:
            continue
        pct = 100 * np.asarray(pred.rel_stderr, dtype=np.float64)
        capped = ~(pct < PERCENT_CAP)  # beyond the cap (or not finite) the parameter is undetermined
        fig.add_trace(go.Bar(x=list(pred.names), y=np.where(capped, PERCENT_CAP, pct), name=pred.label,
                             text=[f">{PERCENT_CAP:.0f}" if c else "" for c in capped], textposition="outside"))
    names = [n for pred in predictions if pred.success for n in pred.names]
    if names:
        fig.add_trace(go.Scatter(x=list(dict.fromkeys(names)), y=[10.0] * len(dict.fromkeys(names)), mode="lines",
                                 line={"dash": "dot", "color": "#52606d"}, name="10 %"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log", title_text=_label("predicted relative standard error", "%"))
    fig.update_xaxes(title_text=_label("parameter", "-"))
    return _finish(fig, title or "predicted parameter uncertainty per candidate test", height=400)


def fig_sensitivity(study: Any, *, title: str | None = None) -> go.Figure:
    """Where the information on each parameter lies: over time windows and over frequency bands.

    Parameters
    ----------
    study : SensitivityStudy
        From :func:`nlid_core.analysis.sensitivity_study` (``names``, ``window_edges``, ``window_energy``,
        ``band_edges_hz``, ``band_energy``).
    title : str or None
        Figure title.
    """
    names = list(study.names)
    we = np.asarray(study.window_energy, dtype=np.float64)
    be = np.asarray(study.band_energy, dtype=np.float64)

    def share(e: FloatArray) -> FloatArray:
        tot = e.sum(axis=1, keepdims=True)
        return np.asarray(100 * np.divide(e, tot, out=np.zeros_like(e), where=tot > 0), dtype=np.float64)

    edges = 100 * np.asarray(study.window_edges, dtype=np.float64).ravel()  # fractions of each record -> %
    n_win = we.shape[1]
    per_rec = max(edges.size - 1, 1)
    n_rec = max(n_win // per_rec, 1)
    mids = 0.5 * (edges[:-1] + edges[1:])
    t_mid = np.concatenate([mids + 100 * k for k in range(n_rec)]) if mids.size * n_rec == n_win else \
        np.arange(n_win, dtype=np.float64)
    edges_f = np.asarray(study.band_edges_hz, dtype=np.float64)
    f_mid = 0.5 * (edges_f[:-1] + edges_f[1:])
    fig = make_subplots(rows=1, cols=2, subplot_titles=["information over time", "information over frequency"],
                        horizontal_spacing=0.1)
    fig.add_trace(go.Heatmap(x=t_mid, y=names, z=share(we), colorscale="Viridis", showscale=False), row=1, col=1)
    fig.add_trace(go.Heatmap(x=f_mid, y=names, z=share(be), colorscale="Viridis",
                             colorbar={"title": {"text": _label("share of information", "%"), "side": "right"},
                                       "thickness": 14}),
                  row=1, col=2)
    fig.update_xaxes(title_text=_label("position in the record", "%"), row=1, col=1)
    fig.update_xaxes(title_text=_label("frequency", "Hz"), row=1, col=2)
    fig.update_yaxes(title_text="parameter", row=1, col=1)
    caption = "records side by side" if n_rec > 1 else ""
    return _finish(fig, title or "which parts of the record carry the information on each parameter"
                   + (f" ({caption})" if caption else ""), height=380)


def fig_profile(profile: Any, *, unit: str = "", title: str | None = None) -> go.Figure:
    """Profile likelihood of one parameter with the likelihood-ratio threshold and both intervals.

    Parameters
    ----------
    profile : Profile
        From :func:`nlid_core.analysis.profile_likelihood` (``grid``, ``delta_chi2``, ``threshold``,
        ``interval``, ``wald_interval``, ``estimate``, ``name``).
    unit : str
        Unit of the parameter.
    title : str or None
        Figure title.
    """
    grid = np.asarray(profile.grid, dtype=np.float64)
    y = np.asarray(profile.delta_chi2, dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=grid, y=y, mode="lines+markers", name="profile"))
    fig.add_hline(y=float(profile.threshold), line_dash="dot", annotation_text=f"{100 * profile.confidence:.0f} % threshold")
    for (lo, hi), name, dash in ((profile.interval, "likelihood-ratio interval", "dash"),
                                 (profile.wald_interval, "Wald interval", "dot")):
        for v in (lo, hi):
            if math.isfinite(v):
                fig.add_vline(x=v, line_dash=dash, line_color="#7b8794")
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"dash": dash, "color": "#7b8794"}, name=name))
    fig.add_vline(x=float(profile.estimate), line_color="#1f5f8b")
    fig.update_xaxes(title_text=_label(profile.name, unit))
    fig.update_yaxes(title_text=_label("Δχ² = 2·Δcost / s²", "-"))
    return _finish(fig, title or f"profile likelihood of {profile.name}", height=380)


def fig_lcurve(path: Any, *, title: str | None = None) -> go.Figure:
    """The L-curve of a Tikhonov regularisation path: residual norm against deviation from the prior.

    Parameters
    ----------
    path : RegularisationPath
        From :func:`nlid_core.analysis.regularisation_path` (``lambdas``, ``residual_norm``,
        ``deviation_norm``, ``corner_index``).
    title : str or None
        Figure title.
    """
    rho = np.asarray(path.residual_norm, dtype=np.float64)
    eta = np.asarray(path.deviation_norm, dtype=np.float64)
    lams = np.asarray(path.lambdas, dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=rho, y=eta, mode="lines+markers", text=[f"λ = {v:.3g}" for v in lams], name="λ grid"))
    k = int(path.corner_index)
    if 0 <= k < lams.size:
        fig.add_trace(go.Scatter(x=[rho[k]], y=[eta[k]], mode="markers", marker={"size": 14, "symbol": "star"},
                                 name=f"corner λ = {lams[k]:.3g}"))
    fig.update_xaxes(type="log", title_text=_label("residual norm", "-"))
    fig.update_yaxes(type="log", title_text=_label("deviation from the prior ‖D(θ − θ0)‖", "-"))
    return _finish(fig, title or "L-curve (pick λ at the corner)", height=380)
