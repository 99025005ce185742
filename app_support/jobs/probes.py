"""Small functions the tests and benchmarks run as jobs: a crash, an allocation, a sleep with progress."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

def _crash_for_tests() -> None:
    """Test helper: the worker dies of a segmentation fault."""
    os.kill(os.getpid(), signal.SIGSEGV)


def _allocate_for_tests(mb: int) -> int:
    """Test helper: allocate and touch ``mb`` megabytes."""
    block = bytearray(mb * 1024 * 1024)
    return len(block)


def _sleep_for_tests(seconds: float, progress: Callable[[str, float, str], None] | None = None) -> int:
    """Test helper: sleep in steps, reporting progress; returns the worker's pid."""
    steps = max(int(seconds / 0.05), 1)
    for k in range(steps):
        if progress is not None:
            progress("sleeping", k / steps, f"step {k + 1} of {steps}")
        time.sleep(seconds / steps)
    return os.getpid()


def _origin_for_tests() -> tuple[int, int, list[str]]:
    """Test helper: the worker's pid, its parent's pid and which preloaded modules it found imported."""
    from .settings import PRELOAD

    return os.getpid(), os.getppid(), [name for name in PRELOAD if name in sys.modules]
