"""The process-wide shared cache and its housekeeping thread, which drops expired entries and sessions
and hands freed memory back to the operating system."""

from __future__ import annotations

import ctypes
import functools
import gc
import math
import os
import threading
import time
import weakref
from collections.abc import Callable

import streamlit as st

from .budget import ByteBudgetCache
from .sessions import reap_disconnected_sessions

CACHE_MB_VARIABLE = "NLID_CACHE_MB"
CACHE_TTL_VARIABLE = "NLID_CACHE_TTL_S"
DEFAULT_CACHE_MB = 512.0
DEFAULT_CACHE_TTL_S = 1800.0


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Hand memory freed by the process back to the operating system (glibc ``malloc_trim``; else nothing).

    Without it glibc keeps freed blocks of tens of MB in the heap (its mmap
    threshold grows after large arrays are freed), so the server's resident
    memory would not come down when cached records go.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _housekeeping(cache: weakref.ref[ByteBudgetCache], period_s: float) -> None:
    """Every ``period_s``: drop expired cache entries and sessions, and hand freed memory back to the system.

    Expired entries, sessions closed long enough ago and summarised runs free their arrays, but
    cycles wait for the garbage collector and glibc keeps freed heap blocks; collecting and trimming
    periodically (tens of milliseconds) returns them even when no session runs any more.
    """
    while True:
        time.sleep(period_s)
        live = cache()
        if live is None:
            return
        live.sweep()
        del live
        reap_disconnected_sessions()
        gc.collect()
        release_free_memory()


@st.cache_resource(show_spinner=False)
def shared_cache() -> ByteBudgetCache:
    """The process-wide cache of derived records and evidence (budget ``NLID_CACHE_MB``, ttl ``NLID_CACHE_TTL_S``).

    A daemon thread sweeps it every ``min(ttl / 4, 60 s)`` (see :func:`_housekeeping`).
    """
    ttl = _env_float(CACHE_TTL_VARIABLE, DEFAULT_CACHE_TTL_S)
    cache = ByteBudgetCache(int(_env_float(CACHE_MB_VARIABLE, DEFAULT_CACHE_MB) * 2**20), ttl_s=ttl,
                            release=release_free_memory)
    threading.Thread(target=_housekeeping, args=(weakref.ref(cache), min(ttl / 4, 60.0)), daemon=True,
                     name="nlid-cache-housekeeping").start()
    return cache
