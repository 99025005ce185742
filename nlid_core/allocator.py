"""Allocator settings for a short-lived command-line process (glibc only; elsewhere nothing changes).

By default glibc serves every allocation above 128 KiB with its own ``mmap`` and returns it at ``free``:
each new array of a record's size (a 6000 × 6 regressor matrix is 288 KiB) then costs fresh zeroed
pages and one page fault per 4 KiB on first touch, again and again. In a one-shot command the memory
is returned at exit anyway, so the command raises the mmap threshold to 32 MiB and keeps up to 128 MiB
of freed heap: arrays are reused from pages already faulted in (measured on the seed record: the
equation-error stage of ``identify`` 2.0 → 1.4 ms, first call in a fresh process). Long-running
processes (the dashboard server, its workers) keep glibc's defaults, which return memory promptly.

The parameters are glibc's ``mallopt`` ones (``malloc.h``: ``M_TRIM_THRESHOLD`` = −1,
``M_TOP_PAD`` = −2, ``M_MMAP_THRESHOLD`` = −3); the environment variables ``MALLOC_*_`` set by a
user take precedence.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 128 * 2**20
TOP_PAD = 16 * 2**20


def tune_for_command() -> bool:
    """Apply the settings above to this process; True when glibc took them."""
    if not sys.platform.startswith("linux"):
        return False
    if any(k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: libc is loaded already
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return all(mallopt(p, v) == 1 for p, v in ((M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                                (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD)))


__all__ = ["tune_for_command"]
