"""Fair share and running a job to its end: at most ``NLID_MAX_JOBS`` jobs at once, and :func:`run_job`."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nlid_core.errors import NlidError

from .process import Job
from .settings import POLL_S, JobError, Limits, Progress, _inline, max_jobs

_LOG = logging.getLogger(__name__)


class _Slots:
    """At most ``n`` jobs at once in this process (all sessions)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._sem = threading.BoundedSemaphore(n)
        self._lock = threading.Lock()
        self.busy = 0

    def acquire(self, timeout: float) -> bool:
        if not self._sem.acquire(timeout=timeout):
            return False
        with self._lock:
            self.busy += 1
        return True

    def release(self) -> None:
        with self._lock:
            self.busy -= 1
        self._sem.release()


_SLOTS_LOCK = threading.Lock()
_SLOTS: _Slots | None = None


def _slots() -> _Slots:
    global _SLOTS
    with _SLOTS_LOCK:
        if _SLOTS is None:
            _SLOTS = _Slots(max_jobs())
        return _SLOTS


def _run_inline(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], progress_arg: str | None,
                on_progress: Callable[[Progress], None] | None) -> Any:
    kw = dict(kwargs)
    if progress_arg and on_progress is not None:
        kw[progress_arg] = lambda stage, fraction, message: on_progress(
            Progress(str(stage), min(max(float(fraction), 0.0), 1.0), str(message)))
    try:
        return fn(*args, **kw)
    except NlidError:
        raise
    except MemoryError:
        raise JobError("the computation ran out of memory") from None
    except Exception as exc:
        _LOG.error("job %s failed", getattr(fn, "__qualname__", fn), exc_info=True)
        raise JobError(f"the computation failed unexpectedly ({type(exc).__name__}); the details are in the"
                       " server log") from None


def run_job(fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
            progress_arg: str | None = None, limits: Limits | None = None,
            on_progress: Callable[[Progress], None] | None = None,
            on_tick: Callable[[Job], None] | None = None,
            on_wait: Callable[[float, int, int], None] | None = None,
            inline: bool | None = None) -> Any:
    """Run ``fn(*args, **kwargs)`` as a job and return its value (blocking).

    Waits for a free worker slot (``on_wait(seconds waited, busy, slots)`` every
    ``POLL_S``), then runs the job, calling ``on_progress(Progress)`` for each
    progress message and ``on_tick(job)`` every ``POLL_S``. An exception out of
    a callback (e.g. Streamlit stopping the script) kills the worker and
    propagates. Raises the function's NlidError or a :class:`JobError`.
    """
    inline = _inline() if inline is None else inline
    job = None if inline else Job(fn, args, kwargs, progress_arg=progress_arg, limits=limits)
    slots = _slots()
    t0 = time.monotonic()
    while not slots.acquire(timeout=POLL_S):
        if on_wait is not None:
            on_wait(time.monotonic() - t0, slots.busy, slots.n)
    try:
        if job is None:
            return _run_inline(fn, args, kwargs or {}, progress_arg, on_progress)
        try:
            job.start()
            while not job.done:
                for update in job.wait(POLL_S):
                    if on_progress is not None:
                        on_progress(update)
                if on_tick is not None:
                    on_tick(job)
            return job.result()
        finally:
            job.cancel()  # no-op once finished; kills the worker when we leave early
    finally:
        slots.release()
