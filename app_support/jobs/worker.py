"""The worker side of a job: resource limits, exit with the server, progress messages, one outcome."""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from typing import Any

from nlid_core.errors import NlidError
from nlid_core.isolation import die_with_parent, limit_self, single_threaded

from .settings import PROGRESS_EVERY_S, Limits
from .transport import _dumps, _loads, _resolve

_LOG = logging.getLogger(__name__)


def _apply_limits(limits: Limits) -> None:
    single_threaded()
    limit_self(cpu_s=limits.cpu_s, memory_bytes=limits.memory_mb * 1024 * 1024, nice=limits.nice,
               hard_cpu_margin_s=30)  # SIGXCPU at the soft limit, SIGKILL 30 s later


class _Reporter:
    """The progress callback handed to the function in the worker: sends (stage, fraction, message), rate-limited."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._last = 0.0
        self._stage = ""

    def __call__(self, stage: str, fraction: float, message: str) -> None:
        try:
            f = float(fraction)
        except (TypeError, ValueError):
            f = 0.0
        now = time.monotonic()
        if stage == self._stage and now - self._last < PROGRESS_EVERY_S and f < 1.0:
            return
        self._last, self._stage = now, stage
        self._conn.send_bytes(_dumps(("progress", str(stage)[:200], f, str(message)[:500])))


def _worker_main(conn: Any, ref: tuple[str, str], payload: bytes, progress_arg: str | None, limits: Limits) -> None:
    """Entry point of a worker process: limits, run ``ref(*args, **kwargs)``, send one outcome message."""
    _apply_limits(limits)
    if multiprocessing.parent_process() is not None:
        die_with_parent()  # the worker ends when the server process goes away, however it ends
    try:
        fn = _resolve(ref)
        args, kwargs = _loads(payload)
        del payload
        if progress_arg:
            kwargs[progress_arg] = _Reporter(conn)
        conn.send_bytes(_dumps(("started", os.getpid(), time.monotonic())))
        outcome: tuple[Any, ...] = ("ok", fn(*args, **kwargs))
        del args, kwargs
    except MemoryError:
        outcome = ("memory",)
    except NlidError as exc:
        outcome = ("nlid_error", type(exc), str(exc))
    except Exception as exc:
        _LOG.error("job %s.%s failed", ref[0], ref[1], exc_info=True)
        outcome = ("error", f"{type(exc).__name__} in {ref[1]}")
    try:
        data = _dumps(outcome)
    except MemoryError:
        data = _dumps(("memory",))
    except Exception as exc:
        _LOG.error("the result of job %s.%s could not be pickled", ref[0], ref[1], exc_info=True)
        data = _dumps(("error", f"{type(exc).__name__} while sending the result of {ref[1]}"))
    del outcome
    conn.send_bytes(data)
    conn.close()
