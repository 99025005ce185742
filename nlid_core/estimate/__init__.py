r"""Estimators: equation error, output error, and the two-stage default.

Equation error (inverse model)
    Measured (or derived) x, ẋ, ẍ go into the model and the predicted force
    is compared with the measured one, :math:`r = (\Phi\theta - f)/A`, with
    :math:`A = \max|f|` over all records (force normalisation; the
    regressors are built from exactly rescaled signals, see
    :class:`DataScaling`, so that neither a force of 1e-200 N nor a cubic of
    1e-90 m³ leaves floating point), optional
    per-record weights, an optional low-force mask (|f| below a fraction of
    A carries only noise) and an optional Tikhonov prior
    :math:`\lambda\|D(\theta-\theta_0)\|^2` (D the column norms, so λ is
    relative to the data's information). Linear in θ: one bounded linear
    least-squares solve (:func:`scipy.optimize.lsq_linear`, BVLS) on
    column-scaled regressors. Biased when x, ẋ, ẍ are noisy (errors in
    variables): a starting point.

Output error (simulation)
    The model is simulated from the measured force and compared with the
    measured outputs, :math:`r_c = w_c (y_c^{sim}(\theta, x_0) - y_c)/s_c`,
    :math:`s_c` the rms of channel *c* over all records. Solved by
    :func:`scipy.optimize.least_squares` (trust-region reflective, bounds)
    with the exact Jacobian from the simulator's forward sensitivities.
    Several records share θ and each has its own initial state (fixed at the
    measured values or estimated). Unbiased under output noise.

Two-stage (default)
    Equation error gives the start of the output-error fit.

Modules
    ``options`` (settings, prior), ``results`` (result types), ``prepare``
    (record checks, derived channels, exact scaling), ``linear`` (equation
    error), ``oe_problem`` (output-error residual and Jacobian), ``oe_fit``
    (initial states, output-error fit), ``robust_start`` (segmented start),
    ``assemble`` (flags, estimates, metrics), ``tally`` (floating-point
    warnings) and ``dispatch`` (:func:`identify`).
"""

from __future__ import annotations

from .assemble import _metrics as _metrics
from .dispatch import identify
from .linear import equation_error
from .oe_fit import output_error, starts_at_rest
from .options import INITIAL_STATES, METHODS, FitOptions, Prior, ProgressFn
from .prepare import MASS_FLOOR, DataScaling, coefficient_scales, data_scaling, positive_mass
from .results import FitResult, Minimum, ParameterEstimate, RecordFit
from .tally import WarningTally, numerical_warnings

__all__ = [
    "METHODS",
    "INITIAL_STATES",
    "starts_at_rest",
    "Prior",
    "FitOptions",
    "ParameterEstimate",
    "RecordFit",
    "FitResult",
    "Minimum",
    "equation_error",
    "output_error",
    "identify",
    "coefficient_scales",
    "positive_mass",
    "DataScaling",
    "data_scaling",
    "WarningTally",
    "numerical_warnings",
    "MASS_FLOOR",
    "ProgressFn",
]
