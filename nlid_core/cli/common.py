"""What the CLI's commands share: the loading options of ``identify``, given to another command as they are."""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from ..progress import ProgressFn

__all__ = ["COMMAND_HELP", "names_of", "progress_printer", "share_options", "stop_on_interrupt"]

#: Every command of the CLI, in the order ``--help`` lists them, with its one-line help.
COMMAND_HELP = {
    "identify": "identify model parameters from measured records",
    "example": "write an example record with a known answer",
    "excitation": "write a test signal (CSV with columns t, f) for a shaker controller",
    "design": "predict the parameter uncertainty a linear-chirp test would give",
    "terms": "list the model terms: force, parameters (unit, default bounds and value, fixed or not), internal states",
    "simulate": "simulate a model driven by a recorded force; write the states as CSV",
    "friction": "dynamic friction: staged LuGre identification",
    "experiments": "write simulated multi-DOF experiments (static, small, sweeps, multi) with their model file and"
                   " manifest",
    "mimo": "FRF matrix, cross-coupling and level drift of multi-DOF records (needs --model)",
    "split": "cut one record file into named parts by rows or time; write one CSV per part",
    "pendulum": "flexible double pendulum (ANCF): simulate, identify release angles, interval inverse problems",
    "batch": "run a batch spec (records x model variants, or a Monte Carlo study) into a study, on local processes"
             " or a Dask cluster; resumable",
    "nonlinearity": "evidence of nonlinearity: best linear approximation, detection lines, term check",
    "studies": "saved studies: list, show, compare runs, export/import, rename, duplicate, delete, share",
    "health": "check the study database (and the dashboard): exit 0 healthy, 1 not",
}


def share_options(parser: argparse.ArgumentParser, source: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Add ``source``'s options whose destinations are in ``names`` to ``parser``, as they are (one
    definition of each flag, its help and its type, for every command that loads records)."""
    wanted = set(names)
    for action in source._actions:
        if action.dest in wanted:
            parser._add_action(action)


def names_of(spec: str) -> tuple[str, ...]:
    """``"a, b,,c"`` -> ("a", "b", "c"): the names of a comma-separated option."""
    return tuple(s.strip() for s in spec.split(",") if s.strip())


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[threading.Event]:
    """Ctrl-C while a fit runs: the first sets the event, and the fit stops at its next progress report (between
    two evaluations, never inside compiled code); a second stops at once. Outside the main thread, or when the
    process ignores SIGINT, nothing changes."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield stop
        return

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, old)


def progress_printer(emit: Callable[[str], None] | None, *, after_s: float = 2.0, every_s: float = 1.0,
                     stop: threading.Event | None = None) -> ProgressFn:
    """A progress callback for a long fit: once it has run ``after_s`` seconds, a line
    ``[  12.3 s] output-error: evaluation 35 of at most 400, cost 0.0123`` at most every ``every_s`` seconds
    (a quick fit prints nothing; ``emit`` None prints nothing at all). When ``stop`` is set (Ctrl-C) it raises
    KeyboardInterrupt, so the fit ends between two evaluations."""
    start = time.monotonic()
    last = [-math.inf]

    def show(stage: str, fraction: float, message: str) -> None:
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt(f"stopped during {stage} ({message}); nothing was written")
        if emit is None:
            return
        now = time.monotonic()
        if stage == "done" or now - start < after_s or now - last[0] < every_s:  # the report follows "done"
            return
        last[0] = now
        emit(f"[{now - start:7.1f} s] {stage}: {message}")

    return show
