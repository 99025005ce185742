"""Floating-point problems met during a fit, counted instead of printed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["WARNING_CHARS", "WarningTally", "numerical_warnings"]

#: Longest warning text kept in a result (longer ones are cut with an ellipsis).
WARNING_CHARS = 300


class WarningTally:
    """Warnings counted by text; each is reported once, with its count.

    It accepts numpy's floating-point error messages (it is the ``call``
    object of ``numpy.errstate(..., "log")``, see :func:`numerical_warnings`)
    and Python warnings (``warnings.catch_warnings(record=True)`` entries,
    :meth:`record`). Lines read ``numpy: overflow encountered in multiply
    (12 times)``.
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self._counts)

    def add(self, source: str, text: str, count: int = 1) -> None:
        """Count ``count`` more occurrences of ``text`` from ``source`` (folded to one line)."""
        line = " ".join(f"{source}: {text}".split())
        if len(line) > WARNING_CHARS:
            line = line[: WARNING_CHARS - 1].rstrip() + "…"
        self._counts[line] = self._counts.get(line, 0) + count

    def write(self, message: str) -> None:
        """numpy's ``errstate(..., "log")`` protocol: ``"Warning: overflow encountered in multiply\\n"``."""
        self.add("numpy", message.strip().removeprefix("Warning:").strip())

    def record(self, entry: object) -> None:
        """Count a ``warnings.WarningMessage``; numpy's floating-point RuntimeWarnings are labelled ``numpy``."""
        category = getattr(entry, "category", Warning)
        text = str(getattr(entry, "message", entry))
        if issubclass(category, RuntimeWarning) and " encountered in " in text:
            source = "numpy"
        else:
            module = category.__module__.split(".")[0]
            source = category.__name__ if module == "builtins" else f"{module} {category.__name__}"
        self.add(source, text)

    def lines(self) -> tuple[str, ...]:
        """One line per distinct warning, in order of first occurrence."""
        return tuple(line if n == 1 else f"{line} ({n} times)" for line, n in self._counts.items())


@contextmanager
def numerical_warnings() -> Iterator[WarningTally]:
    """Collect numpy's floating-point errors (overflow, division by zero, invalid value) instead of printing them.

    Uses ``numpy.errstate``, which is local to the thread (and context), so
    two dashboard sessions identifying at once never see each other's
    warnings and nothing process-wide is changed; code that silences an
    error with its own ``errstate`` stays silent. Underflow is ignored, as
    by default.

    Yields
    ------
    WarningTally
        Filled while the block runs.
    """
    tally = WarningTally()
    with np.errstate(over="log", divide="log", invalid="log", call=tally):
        yield tally

