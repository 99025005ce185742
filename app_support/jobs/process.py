"""The server side of one job: the workers' process context (forkserver) and :class:`Job`."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from multiprocessing import forkserver
from typing import Any

from nlid_core.isolation import WORKER_PREFIX, worker_context

from .settings import CPU_ENV, MEMORY_ENV, PRELOAD, WALL_ENV, JobCancelled, JobError, Limits, Progress, _inline
from .transport import _dumps, _loads, _reference
from .worker import _worker_main

#: The package the forkserver imports first (its ``warmup`` module prepares the forkserver).
_PACKAGE = __name__.rpartition(".")[0]
#: Name prefix of the worker processes (they do not re-run the main script: :mod:`nlid_core.isolation`).
_PROCESS_PREFIX = f"{WORKER_PREFIX}job "


def _context() -> Any:
    """The multiprocessing context of the workers (the forkserver with our preload, or spawn)."""
    return worker_context([_PACKAGE, *PRELOAD])


def prestart() -> None:
    """Start the workers' forkserver now, in the background, so that the first job starts quickly (idempotent)."""
    if not _inline() and _context().get_start_method() == "forkserver":
        forkserver.ensure_running()


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


class Job:
    """``fn(*args, **kwargs)`` in a worker process.

    Parameters
    ----------
    fn : callable
        A top-level function of an importable module (sent by name).
    args, kwargs
        Its arguments; they must pickle (checked here: :class:`JobError` otherwise).
    progress_arg : str or None
        Name of ``fn``'s ``progress(stage, fraction, message)`` keyword, if it has one.
    limits : Limits or None
        Default :meth:`Limits.from_env`.
    """

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
                 progress_arg: str | None = None, limits: Limits | None = None) -> None:
        self.ref = _reference(fn)
        try:
            self._payload: bytes | None = _dumps((tuple(args), dict(kwargs or {})))
        except Exception as exc:
            raise JobError(f"the arguments of {self.ref[1]} cannot be sent to a worker: {exc}") from None
        self.progress_arg = progress_arg
        self.limits = limits or Limits.from_env()
        self.pid: int | None = None
        self.submitted: float | None = None
        self.startup_s: float | None = None  # submit -> the worker calls the function
        self._proc: Any = None
        self._conn: Any = None
        self._outcome: tuple[Any, ...] | None = None

    def start(self) -> Job:
        """Start the worker; returns ``self``."""
        if self._proc is not None:
            raise RuntimeError("a job starts only once")
        ctx = _context()
        recv, send = ctx.Pipe(duplex=False)
        self.submitted = time.monotonic()
        proc = ctx.Process(target=_worker_main, name=f"{_PROCESS_PREFIX}{self.ref[1]}", daemon=True,
                           args=(send, self.ref, self._payload, self.progress_arg, self.limits))
        try:
            proc.start()
        except BaseException:
            recv.close()
            raise
        finally:
            send.close()
            self._payload = None
        self._proc, self._conn, self.pid = proc, recv, proc.pid
        return self

    @property
    def done(self) -> bool:
        """True once the outcome (result, error, crash or cancel) is known."""
        return self._outcome is not None

    @property
    def alive(self) -> bool:
        """True while the worker process exists."""
        return self._proc is not None and self._proc.is_alive()

    def wait(self, timeout: float) -> list[Progress]:
        """Wait up to ``timeout`` seconds (asleep) for messages; returns the progress messages received."""
        if self._outcome is not None or self._proc is None:
            return []
        multiprocessing.connection.wait([self._conn, self._proc.sentinel], timeout)
        updates: list[Progress] = []
        eof = False
        while self._outcome is None:
            try:
                if not self._conn.poll():
                    break
                msg = _loads(self._conn.recv_bytes())
            except (EOFError, OSError):
                eof = True
                break
            kind = msg[0]
            if kind == "progress":
                updates.append(Progress(msg[1], min(max(msg[2], 0.0), 1.0), msg[3]))
            elif kind == "started":
                self.startup_s = msg[2] - (self.submitted or msg[2])
            else:
                self._outcome = msg
        if self._outcome is None and (eof or not self._proc.is_alive()):
            self._proc.join(2.0)
            self._outcome = ("exit", self._proc.exitcode)
        if self._outcome is None and time.monotonic() - (self.submitted or time.monotonic()) > self.limits.wall_s:
            self._outcome = ("wall",)
            self._proc.kill()
            self._proc.join(2.0)
        if self._outcome is not None:
            self._finish()
        return updates

    def _finish(self) -> None:
        if self._proc is not None:
            self._proc.join(1.0)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(2.0)
        if self._conn is not None:
            self._conn.close()

    def cancel(self) -> None:
        """Stop the worker now (SIGKILL) unless it has finished; ``result()`` then raises :class:`JobCancelled`."""
        if self._outcome is None:
            self._outcome = ("cancelled",)
            if self._proc is not None and self._proc.is_alive():
                self._proc.kill()
                self._proc.join(2.0)
        self._finish()

    def result(self) -> Any:
        """The function's value; or raises its NlidError, or a JobError."""
        if self._outcome is None:
            raise RuntimeError("the job has not finished")
        kind = self._outcome[0]
        if kind == "ok":
            return self._outcome[1]
        if kind == "nlid_error":
            cls, message = self._outcome[1], self._outcome[2]
            try:
                error = cls(message)
            except Exception:
                error = JobError(message)
            raise error
        if kind == "memory":
            raise JobError(f"the computation ran out of its memory limit of {self.limits.memory_mb} MB ({MEMORY_ENV})")
        if kind == "cancelled":
            raise JobCancelled("the computation was cancelled")
        if kind == "wall":
            raise JobError(f"the computation ran longer than its time limit of {self.limits.wall_s} s and was stopped"
                           f" (an administrator can raise it with {WALL_ENV})")
        if kind == "error":
            raise JobError(f"the computation failed unexpectedly ({self._outcome[1]}); the details are in the"
                           " server log")
        code = self._outcome[1]
        if code is not None and code < 0:
            if -code == signal.SIGXCPU:
                raise JobError(f"the computation used up its CPU-time limit of {self.limits.cpu_s} s and was stopped"
                               f" (an administrator can raise it with {CPU_ENV})")
            if -code == signal.SIGKILL:
                raise JobError("the computation's worker process was killed (signal SIGKILL), perhaps because the"
                               " server ran short of memory")
            raise JobError(f"the computation's worker process crashed (signal {_signal_name(-code)})")
        raise JobError(f"the computation's worker process ended without a result (exit code {code})")
