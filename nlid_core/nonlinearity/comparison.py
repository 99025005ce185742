"""Equation-error comparison: does one nonlinear term explain much more of the force than the linear baseline?

:func:`linear_fit_check` fits the linear model and the same plus one nonlinear term each, by
equation error, and compares their force residuals (NRMSE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import ModelSpecError
from ..estimate import equation_error
from ..models import TermModel
from ..record import Record
from ._args import _check_record, _with_va
from .thresholds import _LINEAR_TERMS, DEFAULT_CANDIDATES

__all__ = ["ModelCheck", "LinearCheck", "linear_fit_check"]


@dataclass(frozen=True, kw_only=True)
class ModelCheck:
    """Equation-error fit of one candidate model.

    Attributes
    ----------
    label : str
        ``"linear"`` or ``"linear + k3"`` etc.
    terms : tuple of str
    nrmse : float
        RMS force residual divided by the standard deviation of the force (0.02 = 2 %).
    values : mapping
        Fitted value per parameter.
    units : mapping
        Unit per parameter.
    """

    label: str
    terms: tuple[str, ...]
    nrmse: float
    values: Mapping[str, float]
    units: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class LinearCheck:
    """Does one nonlinear term explain much more of the force than the linear model?

    Attributes
    ----------
    record : str
    linear : ModelCheck
        The linear baseline (``terms.baseline_terms()``).
    candidates : tuple of ModelCheck
        The linear model plus one term each.
    """

    record: str
    linear: ModelCheck
    candidates: tuple[ModelCheck, ...]

    @property
    def rows(self) -> tuple[ModelCheck, ...]:
        """The linear model followed by the candidates."""
        return (self.linear, *self.candidates)

    def candidate(self, term: str) -> ModelCheck:
        """The check of the linear model plus ``term``.

        Parameters
        ----------
        term : str
            Added term, one of the candidates.

        Returns
        -------
        ModelCheck
        """
        for c in self.candidates:
            if term in c.terms and term not in _LINEAR_TERMS:
                return c
        raise ModelSpecError(f"no candidate with term `term` = {term!r}; tried {[c.label for c in self.candidates]}")

    def improvement(self, term: str) -> float:
        """Relative drop of the force NRMSE when ``term`` is added (0.8 = 80 % lower).

        Parameters
        ----------
        term : str
            Added term.

        Returns
        -------
        float
        """
        new = self.candidate(term).nrmse
        old = self.linear.nrmse
        return 1.0 - new / old if old > 0 else 0.0

    def to_rows(self) -> list[dict[str, object]]:
        """One dict per model (label, terms, nrmse, coefficients), e.g. for a table."""
        return [
            {"model": r.label, "terms": ",".join(r.terms), "force_nrmse": r.nrmse, **dict(r.values)} for r in self.rows
        ]



def _check_for(rec: Record, terms: tuple[str, ...], label: str) -> ModelCheck:
    model = TermModel(terms)
    fit = equation_error(rec, model)
    return ModelCheck(
        label=label,
        terms=model.terms,
        nrmse=float(fit.metrics[0].nrmse),
        values=fit.values,
        units=model.units(rec.unit("f"), rec.unit("x")),
    )


def linear_fit_check(rec: Record, *, candidates: Sequence[str] = DEFAULT_CANDIDATES) -> LinearCheck:
    """Fit the linear model and the linear model plus one nonlinear term each, by equation error.

    Parameters
    ----------
    rec : Record
        Missing ``v``, ``a`` are derived (Savitzky–Golay defaults) once for all fits.
    candidates : sequence of str
        Nonlinear terms tried one at a time on top of the linear baseline (default: the registry's
        evidence terms, ``terms.evidence_terms()``).

    Returns
    -------
    LinearCheck
        Force-residual NRMSE and coefficients of each model.
    """
    rec = _check_record(rec)
    if isinstance(candidates, str):
        candidates = (candidates,)
    terms = tuple(candidates)
    try:
        TermModel(tuple(t for t in terms if t not in _LINEAR_TERMS))
    except ModelSpecError as exc:
        raise ModelSpecError(f"`candidates`: {exc}") from None
    bad = [t for t in terms if t in _LINEAR_TERMS]
    if bad:
        raise ModelSpecError(f"`candidates` must be terms beyond {', '.join(_LINEAR_TERMS)}, got {bad}")
    rd = _with_va(rec)
    linear = _check_for(rd, _LINEAR_TERMS, "linear")
    rows = tuple(_check_for(rd, (*_LINEAR_TERMS, t), f"linear + {t}") for t in terms)
    return LinearCheck(record=rec.name, linear=linear, candidates=rows)
