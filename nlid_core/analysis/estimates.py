r"""How long a study will take on a given fit, said before it starts.

Every study is a number of fits, simulations or predictions of the same
model on the same records, so its run time follows from what the fit itself
measured (``FitResult.timing`` and ``nfev``):

* one output-error *evaluation* (simulation with sensitivities of every
  record plus the solver's step) costs :math:`t_e = t_{OE}/n_{fev}`;
* a *fit* costs its total time :math:`t_f` (compilation excluded).

A study of :math:`k` refits costs about :math:`k` times the refit's share:
a multi-start run is a fit (:math:`1.2\,t_f` with its segmented start), a
profile point a warm output-error fit (:data:`PROFILE_EVALS` evaluations), a
structure variant a warm fit of at most
:data:`~nlid_core.analysis.structure.WARM_NFEV` evaluations (on average
:data:`STRUCTURE_EVALS`, plus its validation) and a close call twice that, a
Monte Carlo run an output-error fit of the design (:data:`MC_EVALS`
predictions); a refit also has a fixed cost (:data:`REFIT_OVERHEAD_S`). The
factors were measured on the seed example and on Silverbox (two shared
cores; e.g. Silverbox: structure check 24 s for an estimate of 25 s,
2 multi-starts 6.9 s for 6.8 s, sensitivity 1.0 s for 0.9 s; seed design:
12 Monte Carlo runs 6.3 s for 5.7 s, a search of 9 chirps 0.38 s for 0.37 s); they are
estimates to within a factor of about two, which is what a user needs to
decide whether to wait.
"""

from __future__ import annotations

import math

from ..errors import ModelSpecError
from ..estimate import FitResult

__all__ = ["evaluation_seconds", "fit_seconds", "study_seconds", "design_seconds", "duration_text", "STUDIES",
           "PROFILE_EVALS", "STRUCTURE_EVALS", "MC_EVALS", "REFIT_OVERHEAD_S"]

#: Studies :func:`study_seconds` knows.
STUDIES: tuple[str, ...] = ("sensitivity", "profile", "multistart", "regularisation", "structure")
#: Output-error evaluations of one profile point (warm start from its neighbour).
PROFILE_EVALS = 4.0
#: Fixed cost of one refit besides its evaluations (set-up, start values, warm-ups), seconds.
REFIT_OVERHEAD_S = 0.1
#: Average evaluations of one structure variant (warm fit, its validation and the share of close calls).
STRUCTURE_EVALS = 14.0
#: Predictions' worth of work in one Monte Carlo run (an output-error fit from the truth).
MC_EVALS = 18.0


def fit_seconds(fit: FitResult) -> float:
    """Seconds the fit took, compilation excluded (``timing["total_s"]``, else the sum of its stages)."""
    t = fit.timing
    total = t.get("total_s")
    if total is None:
        total = sum(v for k, v in t.items() if k != "compile_s")
    return max(float(total), 0.0)


def evaluation_seconds(fit: FitResult) -> float:
    """Seconds of one output-error evaluation of the fit: its output-error time over its evaluations.

    An equation-error fit has no evaluation; its total time is returned (a lower bound).
    """
    oe = fit.timing.get("output_error_s")
    if oe is None or fit.nfev < 1:
        return fit_seconds(fit)
    return max(float(oe) / fit.nfev, 0.0)


def study_seconds(fit: FitResult, study: str, count: int = 1) -> float:
    """Estimated seconds of ``study`` on ``fit`` (see the module notes).

    Parameters
    ----------
    fit : FitResult
        The fit the study starts from (its timing is the measurement).
    study : str
        One of :data:`STUDIES`.
    count : int
        Grid points (profile), starts (multistart), λ values (regularisation) or variants (structure);
        ignored for the sensitivity study (one simulation with sensitivities of every record).

    Returns
    -------
    float
        Seconds (the start of a worker, ~0.1 s, excluded).
    """
    if study not in STUDIES:
        raise ModelSpecError(f"unknown `study` {study!r}; choose from {', '.join(STUDIES)}")
    k = max(int(count), 0)
    te, tf = evaluation_seconds(fit), fit_seconds(fit)
    if study == "sensitivity":
        return 2.0 * te
    if study == "profile":
        return k * PROFILE_EVALS * te
    if study == "multistart":
        return k * (1.2 * tf + REFIT_OVERHEAD_S)
    if study == "regularisation":
        return k * 5.0 * float(fit.timing.get("equation_error_s", 0.01))
    return tf + k * (STRUCTURE_EVALS * te + 0.5 * REFIT_OVERHEAD_S)  # the base is scored (or fitted) first


def design_seconds(prediction_s: float, study: str, count: int = 1, *, length_ratio: float = 1.0) -> float:
    """Estimated seconds of a design study from the measured time of one prediction.

    Parameters
    ----------
    prediction_s : float
        Seconds of one :func:`~nlid_core.analysis.predict_uncertainty` of the current design.
    study : {"search", "monte carlo"}
        A chirp search of ``count`` designs, or a Monte Carlo check of ``count`` runs.
    count : int
    length_ratio : float
        Samples of the searched designs over those of the measured one.

    Returns
    -------
    float
    """
    k = max(int(count), 0)
    if study == "search":
        return 1.7 * k * prediction_s * length_ratio  # a chirp is built and simulated before the prediction
    if study == "monte carlo":
        return (k * MC_EVALS + 20.0) * prediction_s  # the reference simulation (solve_ivp) comes first
    raise ModelSpecError(f"unknown design `study` {study!r}; choose from search, monte carlo")


def duration_text(seconds: float) -> str:
    """A rough duration in words.

    Parameters
    ----------
    seconds : float
        The estimate.

    Returns
    -------
    str
        ``"under 2 s"``, ``"about 40 s"``, ``"about 3 min"``, ``"about 1.5 h"``; ``"an unknown time"`` for a
        negative or non-finite estimate.
    """
    if not math.isfinite(seconds) or seconds < 0:
        return "an unknown time"
    if seconds < 2:
        return "under 2 s"
    if seconds < 60:
        step = 1 if seconds < 10 else 5
        return f"about {max(step, round(seconds / step) * step):.0f} s"
    if seconds < 3600:
        minutes = seconds / 60
        return f"about {minutes:.0f} min" if minutes >= 2 else f"about {minutes:.1f} min"
    return f"about {seconds / 3600:.1f} h"
