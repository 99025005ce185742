"""The worker side of a job: resource limits, exit with the server, progress messages, one outcome."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from typing import Any

from nlid_core.errors import NlidError

from .settings import PROGRESS_EVERY_S, Limits
from .transport import _dumps, _loads, _resolve

_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "NUMBA_NUM_THREADS")

_LOG = logging.getLogger(__name__)


def _apply_limits(limits: Limits) -> None:
    import resource

    for name in _THREAD_ENV:
        os.environ[name] = "1"
    try:
        os.nice(limits.nice)
    except OSError:
        pass
    wanted = (
        (resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024, 0),
        (resource.RLIMIT_CPU, limits.cpu_s, 30),  # SIGXCPU at the soft limit, SIGKILL 30 s later
        (resource.RLIMIT_CORE, 0, 0),
    )
    for res, soft, extra in wanted:
        _, hard = resource.getrlimit(res)
        new_hard = soft + extra if hard == resource.RLIM_INFINITY else min(hard, soft + extra)
        resource.setrlimit(res, (min(soft, new_hard), new_hard))


def _exit_with_parent() -> None:
    """A daemon thread that ends this worker when the server process goes away."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(70)

    threading.Thread(target=watch, name="nlid-job-parent-watch", daemon=True).start()


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
    _exit_with_parent()
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
