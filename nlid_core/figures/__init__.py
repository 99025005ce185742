"""Plotly figure builders for records, evidence of nonlinearity and fit results.

Every builder takes data or result objects of ``nlid_core`` and returns a
:class:`plotly.graph_objects.Figure`; nothing is computed here beyond
decimation for plotting (long signals are thinned by :func:`decimate_for_plot`,
which keeps every peak; results are never computed from decimated data) and
the few direct transforms a plot needs (the Welch spectrum and the
autocorrelation of a residual, the envelope used to colour a hysteresis loop),
which come from :mod:`nlid_core.nonlinearity` and :mod:`nlid_core.metrics`.

All figures share one look (``TEMPLATE``, ``FONT``, legends above the plot)
and label every numeric axis with its unit in brackets, e.g. ``force [N]``.

Modules: :mod:`~nlid_core.figures.common` (shared look, label and argument
helpers, :func:`decimate_for_plot`, :func:`fig_to_html`),
:mod:`~nlid_core.figures.records` (records and excitation signals),
:mod:`~nlid_core.figures.evidence` (evidence of nonlinearity),
:mod:`~nlid_core.figures.fits` (fit and validation results),
:mod:`~nlid_core.figures.analysis` (identifiability and test design) and
:mod:`~nlid_core.figures.multibody` (the flexible double pendulum: animation, interval bounds, swarms).

This package is the only part of ``nlid_core`` that imports plotly, and
``nlid_core/__init__.py`` does not import it: ``import nlid_core`` stays free
of UI libraries. Use ``from nlid_core import figures``.
"""

from __future__ import annotations

from .analysis import fig_correlation, fig_design_comparison, fig_lcurve, fig_profile, fig_sensitivity
from .common import (
    COLORS,
    FONT,
    ROW_HEIGHT,
    SPECTRUM_BAND_MULTIPLE,
    TEMPLATE,
    decimate_for_plot,
    fig_to_html,
)
from .evidence import (
    FRF_BAND_MARGIN,
    fig_equivalent_linear,
    fig_frf_overlay,
    fig_harmonics,
    fig_restoring_force,
    fig_restoring_surface,
    fig_spectrogram,
    fig_spectrum,
)
from .fits import fig_closed_loop, fig_fit, fig_fit_spectrum, fig_residual_acf, fig_residual_spectrum
from .multibody import (
    fig_interval_bounds,
    fig_pendulum_animation,
    fig_surrogate_check,
    fig_swarm_convergence,
    fig_tip_trajectory,
)
from .records import fig_derivative_check, fig_excitation, fig_hysteresis, fig_record

__all__ = [
    "TEMPLATE",
    "FONT",
    "decimate_for_plot",
    "fig_record",
    "fig_derivative_check",
    "fig_hysteresis",
    "fig_restoring_force",
    "fig_spectrum",
    "fig_spectrogram",
    "fig_harmonics",
    "fig_frf_overlay",
    "fig_correlation",
    "fig_closed_loop",
    "fig_fit",
    "fig_fit_spectrum",
    "fig_residual_spectrum",
    "fig_residual_acf",
    "fig_to_html",
    "fig_restoring_surface",
    "fig_equivalent_linear",
    "fig_excitation",
    "fig_design_comparison",
    "fig_sensitivity",
    "fig_profile",
    "fig_lcurve",
    "fig_pendulum_animation",
    "fig_tip_trajectory",
    "fig_interval_bounds",
    "fig_swarm_convergence",
    "fig_surrogate_check",
]
