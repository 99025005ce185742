"""One BLAS thread while a fit runs.

The estimators' linear algebra is on tall, narrow matrices (samples × a few
parameters: the trust region's SVD, Gauss-Newton steps, covariances). Threads
gain nothing there, and when the cores are busy OpenBLAS's threads wait for
each other: one SVD of a 4000 × 20 Jacobian took 0.3-0.6 s instead of 2 ms.
:func:`single_blas_thread` sets every loaded OpenBLAS library to one thread
for the duration of a block and restores the previous count after it.

The setting belongs to the library, so it holds for the whole process while
any block is open (nested and concurrent blocks are counted; the last one to
leave restores it). Where no OpenBLAS library can be found (another BLAS,
or no ``/proc/self/maps``) the block changes nothing.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["single_blas_thread", "with_single_blas_thread"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: Names of the thread-count setter in OpenBLAS builds (plain, 64-bit interface, numpy's and scipy's wheels).
_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_", "scipy_openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads")

_lock = threading.Lock()
_depth = 0
_saved: list[tuple[Callable[[int], object], int]] = []


@functools.cache
def _openblas_controls() -> list[tuple[Callable[[int], object], Callable[[], int]]]:
    """(setter, getter) of every OpenBLAS library loaded in this process (numpy's and scipy's are loaded
    by the time an estimator runs; looked up once, since reading the process's memory map takes milliseconds)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line})
    except OSError:
        return []
    out = []
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=mode)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            getter = getattr(lib, name.replace("_set_", "_get_"), None)
            if setter is not None and getter is not None:
                setter.argtypes = [ctypes.c_int]
                getter.restype = ctypes.c_int
                out.append((setter, getter))
                break
    return out


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run the block with OpenBLAS on one thread (the previous count is restored after it).

    Yields
    ------
    None
    """
    global _depth
    with _lock:
        if _depth == 0:
            _saved.clear()
            for setter, getter in _openblas_controls():
                count = int(getter())
                if count > 1:
                    setter(1)
                    _saved.append((setter, count))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for setter, count in _saved:
                    setter(count)
                _saved.clear()


def with_single_blas_thread(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` running inside :func:`single_blas_thread` (same signature and docstring).

    Parameters
    ----------
    func : callable
        An estimator.

    Returns
    -------
    callable
    """

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with single_blas_thread():
            return func(*args, **kwargs)

    return wrapper
