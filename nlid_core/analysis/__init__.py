r"""Identifiability studies around a finished fit, and experiment design before a test.

After a fit
    * :func:`sensitivity_study` — scaled output sensitivities
      :math:`\partial y/\partial\theta_j\cdot|\theta_j|` over time, their
      energy per time window and per frequency band, the Fisher information
      :math:`F = S^\top S/\sigma^2`, its eigen-decomposition in the
      column-scaled problem, the weakest directions in words and the weakest
      parameter with a one-line reason (weak sensitivity and/or correlation).
    * :func:`profile_likelihood` — one parameter held on a grid, the others
      re-fitted by output error; the likelihood-ratio interval
      :math:`2\Delta\mathrm{cost}/s^2 \le \chi^2_1(\mathrm{conf})` compared
      with the Wald interval of the fit.
    * :func:`multistart` — output error from random starts; is the optimum
      unique?
    * :func:`structure_check` — every term removed and every candidate term
      added, compared by AIC/BIC (and validation RMSE), with a recommendation
      per term.
    * :func:`regularisation_path` — Tikhonov priors over a λ grid, the L-curve
      (residual norm against :math:`\|D(\theta-\theta_0)\|`) and its corner.

Before a test
    * :func:`predict_uncertainty` — the standard errors a candidate force
      would give if the prior model were true (Cramér-Rao bound from the
      simulated sensitivities), :func:`compare_designs` and
      :func:`suggest_design` (a grid of linear chirps);
      :func:`monte_carlo_check` compares the prediction with the realised
      scatter of output-error estimates on simulated noisy tests.

Noise level and residual: for a fit, the noise standard deviation of each
record × channel is the rms of its output-error residual (corrected for the
degrees of freedom); for a design it is given (``noise_sd``). The Fisher
information is then :math:`F = \sum_g S_g^\top S_g/\sigma_g^2` and the
covariance its (pseudo-)inverse, computed by
:func:`~nlid_core.identifiability.uncertainty_from_jacobian` on the
σ-weighted sensitivities. Estimated initial states are nuisance columns: they
enter the information (and so the correlations) but are not reported as
parameters.

Long studies
    Every study takes an optional ``progress(stage, fraction, message)``
    callback (one step per refit, grid point, design or simulated test, e.g.
    ``"refit without k3 (3 of 7): evaluation 4"``), and :mod:`.estimates`
    says beforehand roughly how long a study will take on a given fit, from
    the fit's own measured time.

Modules: ``sensitivity``, ``profile``, ``multistart``, ``structure`` and
``regularisation`` study a finished fit; ``design`` (prediction, comparison,
chirp search, defaults from a record) and ``monte_carlo`` plan a test;
``estimates`` gives run-time estimates; ``_common`` holds the shared argument
checks and the progress steps.
"""

from __future__ import annotations

from .design import (
    DesignDefaults,
    DesignPrediction,
    DesignSuggestion,
    chirp_design,
    compare_designs,
    design_defaults,
    format_percent,
    predict_uncertainty,
    suggest_design,
)
from .estimates import design_seconds, duration_text, evaluation_seconds, fit_seconds, study_seconds
from .monte_carlo import MonteCarloCheck, monte_carlo_check
from .multistart import MultiStart, multistart
from .profile import Profile, profile_likelihood
from .regularisation import RegularisationPath, regularisation_path
from .sensitivity import SensitivityStudy, sensitivity_study
from .structure import StructureCheck, StructureVariant, structure_check, structure_variants

__all__ = [
    "SensitivityStudy",
    "sensitivity_study",
    "Profile",
    "profile_likelihood",
    "MultiStart",
    "multistart",
    "StructureVariant",
    "StructureCheck",
    "structure_check",
    "structure_variants",
    "RegularisationPath",
    "regularisation_path",
    "DesignPrediction",
    "predict_uncertainty",
    "compare_designs",
    "DesignSuggestion",
    "chirp_design",
    "suggest_design",
    "DesignDefaults",
    "design_defaults",
    "format_percent",
    "MonteCarloCheck",
    "monte_carlo_check",
    "fit_seconds",
    "evaluation_seconds",
    "study_seconds",
    "design_seconds",
    "duration_text",
]
