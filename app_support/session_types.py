"""What a dashboard session keeps, as types, and its bounds: a model configuration (terms, typed terms,
settings, fit options), a run (its configuration and result) and a reference to an open saved study; the
limits of a session read from the environment on every use (see :mod:`app_support.state`)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from functools import lru_cache

from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitOptions, FitResult
from nlid_core.models import ModelSettings, TermModel
from nlid_core.params import ParameterSet
from nlid_core.terms import TermDef, parse_custom

__all__ = ["MAX_RECORDS_VARIABLE", "MAX_RUNS_KEPT_VARIABLE", "MAX_VALIDATIONS_VARIABLE", "MAX_RUNS_VARIABLE",
           "DEFAULT_MAX_RECORDS", "DEFAULT_MAX_RUNS_KEPT", "DEFAULT_MAX_VALIDATIONS", "DEFAULT_MAX_RUNS", "DROPPED",
           "max_records", "max_runs_kept", "max_validations", "max_runs", "SessionLimitError", "CustomSpec",
           "custom_terms", "parse_custom_text", "ModelConfig", "Run", "StudyRef", "summarise"]


MAX_RECORDS_VARIABLE = "NLID_MAX_RECORDS"


MAX_RUNS_KEPT_VARIABLE = "NLID_MAX_RUNS_KEPT"


MAX_VALIDATIONS_VARIABLE = "NLID_MAX_VALIDATIONS"


MAX_RUNS_VARIABLE = "NLID_MAX_RUNS"


DEFAULT_MAX_RECORDS = 20


DEFAULT_MAX_RUNS_KEPT = 10


DEFAULT_MAX_VALIDATIONS = 10


DEFAULT_MAX_RUNS = 100


#: What a page says about a summarised run.
DROPPED = "this run's detailed results were dropped to save memory; re-run it"


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value >= minimum else default


def max_records() -> int:
    return _env_int(MAX_RECORDS_VARIABLE, DEFAULT_MAX_RECORDS)


def max_runs_kept() -> int:
    return _env_int(MAX_RUNS_KEPT_VARIABLE, DEFAULT_MAX_RUNS_KEPT)


def max_validations() -> int:
    return _env_int(MAX_VALIDATIONS_VARIABLE, DEFAULT_MAX_VALIDATIONS)


def max_runs() -> int:
    return _env_int(MAX_RUNS_VARIABLE, DEFAULT_MAX_RUNS)


class SessionLimitError(DataValidationError):
    """A session limit (records per session) would be exceeded; the message says which and how to go on."""


#: A typed term as text: (name, force expression), e.g. ``("asym", "ka*x*abs(x)")``.
CustomSpec = tuple[str, str]


@lru_cache(maxsize=64)
def _parse_lines(lines: tuple[str, ...]) -> tuple[TermDef, ...]:
    return parse_custom(lines)


def custom_terms(specs: tuple[CustomSpec, ...]) -> tuple[TermDef, ...]:
    """The terms of ``(name, expression)`` pairs (parsed once per distinct set).

    Raises ModelSpecError (from ``parse_custom``) on a bad name or expression.
    """
    return _parse_lines(tuple(f"{name}={expr}" for name, expr in specs))


def parse_custom_text(text: str) -> tuple[CustomSpec, ...]:
    """``NAME=EXPR`` lines (blank lines skipped) as checked ``(name, expression)`` pairs.

    Raises ModelSpecError pointing at the bad line's name or expression.
    """
    terms = _parse_lines(tuple(ln.strip() for ln in str(text).splitlines() if ln.strip()))
    return tuple((t.name, t.force) for t in terms)


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Everything the Identify page needs: model, parameters, estimator options, records to fit.

    ``custom`` holds the typed terms as ``(name, expression)`` text pairs, so a configuration stays
    picklable and comparable; :attr:`model` rebuilds them.
    """

    terms: tuple[str, ...]
    settings: ModelSettings
    params: ParameterSet
    options: FitOptions
    fit_records: tuple[str, ...]
    custom: tuple[CustomSpec, ...] = ()

    @property
    def model(self) -> TermModel:
        return TermModel(self.terms, self.settings, custom=custom_terms(self.custom))


@dataclass(frozen=True, kw_only=True)
class Run:
    """One identification run kept in the session history."""

    id: int
    label: str
    created: str
    config: ModelConfig
    result: FitResult
    elapsed_s: float
    detailed: bool = True  # False: ``result.records`` (the fitted signals) were dropped to save memory


@dataclass(frozen=True, kw_only=True)
class StudyRef:
    """The saved study open in a session: its id and name, its owner, and the engineer who opened it
    (a session whose engineer changed, e.g. after signing out, no longer has it open)."""

    id: int
    name: str
    owner: str
    viewer: str


def summarise(run: Run) -> Run:
    """``run`` without its per-record signals (keeps configuration, estimates, metrics and message)."""
    if not run.detailed:
        return run
    return dataclasses.replace(run, result=dataclasses.replace(run.result, records=()), detailed=False)
