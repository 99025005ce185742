"""Exceptions and warnings of nlid_core.

Domain exceptions subclass the builtin they specialise, so callers that
catch ``ValueError`` or ``RuntimeError`` keep working. A fit that fails
(diverging simulation, no convergence) is not an exception: it is a result
with ``success=False`` and a message.
"""

from __future__ import annotations

__all__ = [
    "NlidError",
    "DataValidationError",
    "ModelSpecError",
    "SimulationError",
]


class NlidError(Exception):
    """Base class of every error raised on purpose by nlid_core."""


class DataValidationError(NlidError, ValueError):
    """A record or file is unusable; the message names the column and row."""


class ModelSpecError(NlidError, ValueError):
    """A model, term list, parameter set or estimator option is invalid."""


class SimulationError(NlidError, RuntimeError):
    """A simulation could not be run (not raised for divergence, which is a result)."""
