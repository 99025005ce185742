"""The one progress protocol of every long computation: ``progress(stage, fraction, message)`` and ``cancel()``.

``stage`` names the step (``"output-error"``, ``"joint"``, ``"runs"``, ``"pso"``), ``fraction`` runs from 0 to 1
within the whole computation, ``message`` says what is happening in words. A computation that takes ``cancel``
polls it between units of work and stops with an error when it returns True. Imports nothing.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["CancelFn", "ProgressFn"]

#: ``progress(stage, fraction, message)``.
ProgressFn = Callable[[str, float, str], None]
#: ``cancel() -> bool``: True asks the computation to stop.
CancelFn = Callable[[], bool]
