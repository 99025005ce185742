r"""Scale redundancies declared by terms: flagged, and said in words, when every parameter of a group is free.

A term may declare groups ``(p0, p1, ..., pk)`` on which the model depends only through the
products ``p0·p1, ..., p0·pk`` (Bouc-Wen's β, γ, δ): the map
:math:`(p_0, p_i) \mapsto (c\,p_0, p_i/c)` leaves every simulated output unchanged, so the
output-error Jacobian has an exact null direction and the data cannot determine the parameters
separately. The uncertainty code already gives that direction infinite standard errors (an SVD
with a rank threshold); this module adds the reason in words to the parameters' notes, the
result's weak directions and its warnings, so the CLI report and the dashboard say it.
"""

from __future__ import annotations

import dataclasses

from ..models import TermModel
from ..params import ParameterSet
from .results import FitResult, ParameterEstimate

__all__ = ["free_redundancies", "flag_redundancies"]


def free_redundancies(model: TermModel, params: ParameterSet) -> tuple[tuple[tuple[str, ...], str], ...]:
    """The declared redundancy groups of ``model`` whose parameters are all free in ``params``.

    Parameters
    ----------
    model : TermModel
    params : ParameterSet
        The fit's parameters (names as in the model).

    Returns
    -------
    tuple of ((str, ...), str)
        Model parameter names of each group and the term's sentence.
    """
    out = []
    for spec, first in zip(model.specs, model.coefficient_index, strict=True):
        names = model.param_names[int(first): int(first) + spec.n_params]
        local = dict(zip(spec.param_names, names, strict=True))
        for group, sentence in spec.redundancies:
            full = tuple(local[g] for g in group)
            if all(n in params.names and params[n].vary for n in full):
                out.append((full, sentence))
    return tuple(out)


def flag_redundancies(fit: FitResult) -> FitResult:
    """``fit`` with every free redundancy group flagged ``unidentifiable`` and explained.

    Each parameter of such a group gets the flag ``unidentifiable`` (if not already there) and the
    term's sentence as a note; the sentence is added to ``weak_directions`` and ``warnings``.
    A fit without free redundancy groups is returned unchanged (the same object).

    Parameters
    ----------
    fit : FitResult

    Returns
    -------
    FitResult
    """
    groups = free_redundancies(fit.model, fit.parameters)
    if not groups:
        return fit
    by_name: dict[str, list[str]] = {}
    for names, sentence in groups:
        for n in names:
            by_name.setdefault(n, []).append(sentence)
    estimates: list[ParameterEstimate] = []
    for e in fit.estimates:
        if e.name not in by_name:
            estimates.append(e)
            continue
        flags = e.flags if "unidentifiable" in e.flags else (*e.flags, "unidentifiable")
        notes = (*e.notes, *(s for s in by_name[e.name] if s not in e.notes))
        estimates.append(dataclasses.replace(e, flags=flags, notes=notes))
    words = tuple(f"{', '.join(names)}: {sentence}" for names, sentence in groups)
    return dataclasses.replace(
        fit,
        estimates=tuple(estimates),
        weak_directions=(*words, *(w for w in fit.weak_directions if w not in words)),
        warnings=(*fit.warnings, *(w for w in words if w not in fit.warnings)),
    )
