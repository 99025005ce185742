"""Long computations in a separate worker process: progress, cancel, resource limits, a cap on parallel jobs.

The dashboard is one Streamlit process shared by every session. A computation
run on a session's script thread holds the GIL and a core for everybody, and a
native crash or a runaway allocation in it takes the whole server down. A *job*
instead sends a top-level function and its (pickled) arguments to a worker
process; the server only waits, asleep in ``select`` with the GIL released,
for the worker's messages:

* ``progress(stage, fraction, message)`` when the function takes a progress
  callback (``progress_arg``), rate-limited in the worker;
* the result, pickled back (our own computations on validated records), or
  the error: an :class:`~nlid_core.errors.NlidError` comes back as the same
  type and message, anything else as a one-line :class:`JobError`.

Cancel
    Streamlit stops a running script at its next ``st.*`` call once a rerun or
    stop is requested (any widget click such as the *Cancel* button beside the
    bar, a page change, a closed tab): a ``StopException`` (with fast reruns,
    the default) or ``RerunException`` is raised there. :func:`run` looks for
    such a request every ``POLL_S`` seconds while it waits and kills the
    worker in ``finally:``; the next run of a page shows "Run cancelled (...);
    earlier results are kept." (see :func:`run` for how, given fast reruns).

Isolation
    Each worker has ``RLIMIT_AS`` = ``NLID_JOB_MEMORY_MB`` (default 4096 MB),
    ``RLIMIT_CPU`` = ``NLID_JOB_CPU_S`` (default 4 h), no core dumps, ``nice
    +5`` and single-threaded BLAS/OpenMP/numba. A ``MemoryError``, a crash (a
    signal) or the CPU limit becomes a :class:`JobError` with a specific
    message; the server and the session's earlier results are untouched. If
    the server dies, its workers exit.

Fair share
    At most ``NLID_MAX_JOBS`` (default: the number of CPU cores) jobs run at
    once across all sessions of the server; later ones show "waiting for a
    free worker".

Start-up
    Workers are forked from a multiprocessing *forkserver* that has imported
    :mod:`nlid_core` and loaded its compiled kernels once (the first job pays
    that, 1-2 s); later jobs start in about 10-30 ms. Workers do not re-run
    the server's main script (under Streamlit that is ``app.py``: see
    :func:`_without_main`). Where there is no forkserver, workers are spawned
    (slower, same behaviour).

``NLID_JOBS_INLINE=1`` runs jobs in the server process with the same API (no
isolation, no limits; cancel works through the progress callback only) for
environments where processes cannot be started.
"""

from __future__ import annotations

import copyreg
import io
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from multiprocessing import forkserver
from typing import Any

from nlid_core.errors import NlidError

__all__ = [
    "JobError",
    "JobCancelled",
    "Limits",
    "Progress",
    "Job",
    "max_jobs",
    "prestart",
    "run_job",
    "run",
]

MEMORY_ENV = "NLID_JOB_MEMORY_MB"
CPU_ENV = "NLID_JOB_CPU_S"
MAX_JOBS_ENV = "NLID_MAX_JOBS"
INLINE_ENV = "NLID_JOBS_INLINE"
DEFAULT_MEMORY_MB = 4096
DEFAULT_CPU_S = 4 * 3600
NICE = 5
POLL_S = 0.1  # how often the server looks for messages and for a cancel request
PROGRESS_EVERY_S = 0.1  # the worker sends at most this often (plus every change of stage)
# Modules every worker needs, imported once in the forkserver.
PRELOAD = ("nlid_core.estimate", "nlid_core.studies", "nlid_core.examples", "nlid_core.validation")
_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "NUMBA_NUM_THREADS")

_LOG = logging.getLogger(__name__)


class JobError(RuntimeError):
    """A job gave no result: the worker crashed, hit a limit, failed unexpectedly or was cancelled."""


class JobCancelled(JobError):
    """The job was cancelled before it finished."""


@dataclass(frozen=True)
class Progress:
    """One progress message of a job (``fraction`` in [0, 1])."""

    stage: str
    fraction: float
    message: str


@dataclass(frozen=True)
class Limits:
    """Resource limits of a worker process."""

    memory_mb: int = DEFAULT_MEMORY_MB
    cpu_s: int = DEFAULT_CPU_S
    nice: int = NICE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Limits from ``NLID_JOB_MEMORY_MB`` and ``NLID_JOB_CPU_S`` (defaults where unset)."""
        env = os.environ if environ is None else environ
        return cls(memory_mb=_positive_int(env, MEMORY_ENV, DEFAULT_MEMORY_MB),
                   cpu_s=_positive_int(env, CPU_ENV, DEFAULT_CPU_S))


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise JobError(f"the server setting {name} must be a positive integer; got {raw[:40]!r}")
    return value


def max_jobs() -> int:
    """``NLID_MAX_JOBS``, by default the number of CPU cores this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return _positive_int(os.environ, MAX_JOBS_ENV, max(cores, 1))


def _inline() -> bool:
    return os.environ.get(INLINE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


# ---------------------------------------------------------------------------------------------------------------------
# Pickling. TermModel holds the term library's regressor lambdas, which pickle cannot send; it is sent as
# (terms, settings), its identity, by a private dispatch table (nothing global is changed).

_DISPATCH: dict[type, Callable[[Any], Any]] | None = None


def _term_model(terms: tuple[str, ...], settings: Any) -> Any:
    from nlid_core.models import TermModel

    return TermModel(terms, settings)


def _term_spec(name: str) -> Any:
    from nlid_core.models import TERMS

    return TERMS[name]


def _dispatch() -> dict[type, Callable[[Any], Any]]:
    global _DISPATCH
    if _DISPATCH is None:
        from nlid_core.models import TermModel, TermSpec

        table: dict[type, Callable[[Any], Any]] = dict(copyreg.dispatch_table)
        table[TermModel] = lambda m: (_term_model, (m.terms, m.settings))
        table[TermSpec] = lambda s: (_term_spec, (s.name,))
        _DISPATCH = table
    return _DISPATCH


def _dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _dispatch()
    pickler.dump(obj)
    return buf.getvalue()


def _loads(data: bytes) -> Any:
    return pickle.loads(data)


def _reference(fn: Callable[..., Any]) -> tuple[str, str]:
    """``(module, qualified name)`` of a top-level function, checked to resolve to ``fn``."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<" in qualname or module == "__main__":
        raise JobError(f"{fn!r} cannot run in a worker: it is not a top-level function of an importable module")
    if _resolve((module, qualname)) is not fn:
        raise JobError(f"{module}.{qualname} cannot run in a worker: the name does not lead back to the function")
    return module, qualname


def _resolve(ref: tuple[str, str]) -> Callable[..., Any]:
    obj: Any = import_module(ref[0])
    for part in ref[1].split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------------------------------
# Worker side.


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


# ---------------------------------------------------------------------------------------------------------------------
# Server side.

_CTX_LOCK = threading.Lock()
_CTX: Any = None


_PROCESS_PREFIX = "nlid-job "


def _without_main(get_preparation_data: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    """``multiprocessing.spawn.get_preparation_data`` that tells our workers not to re-run the main script.

    multiprocessing re-runs the parent's ``__main__`` in each new process. Under
    Streamlit, ``__main__`` is the app script (``app.py``), which would run the
    whole dashboard once more in every worker. Our workers need nothing from it
    (the function is imported by its module name), so for processes named
    ``nlid-job ...`` the entries that ask for it are dropped; other processes
    are untouched.
    """

    def prepare(name: str) -> dict[str, Any]:
        data = get_preparation_data(name)
        if name.startswith(_PROCESS_PREFIX):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    prepare.nlid_without_main = True  # type: ignore[attr-defined]
    return prepare


def _context() -> Any:
    """The multiprocessing context of the workers (forkserver with our preload, or spawn)."""
    global _CTX
    with _CTX_LOCK:
        if _CTX is None:
            from multiprocessing import spawn

            if not getattr(spawn.get_preparation_data, "nlid_without_main", False):
                spawn.get_preparation_data = _without_main(spawn.get_preparation_data)  # type: ignore[assignment]
            ctx: Any
            if "forkserver" in multiprocessing.get_all_start_methods():
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload([__name__, *PRELOAD])
            else:
                ctx = multiprocessing.get_context("spawn")
            _CTX = ctx
        return _CTX


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
        if kind == "error":
            raise JobError(f"the computation failed unexpectedly ({self._outcome[1]}); the details are in the"
                           " server log")
        code = self._outcome[1]
        if code is not None and code < 0:
            if -code == signal.SIGXCPU:
                raise JobError(f"the computation used up its CPU-time limit of {self.limits.cpu_s} s ({CPU_ENV})")
            if -code == signal.SIGKILL:
                raise JobError("the computation's worker process was killed (signal SIGKILL), perhaps because the"
                               " server ran short of memory")
            raise JobError(f"the computation's worker process crashed (signal {_signal_name(-code)})")
        raise JobError(f"the computation's worker process ended without a result (exit code {code})")


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


# ---------------------------------------------------------------------------------------------------------------------
# Streamlit.

CANCELLED_NOTICE = "Run cancelled ({label}); earlier results are kept."


def _yield_check() -> Callable[[], None] | None:
    """Streamlit's check for a pending rerun/stop request of this script run (raises it), if available."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check
    except ImportError:
        return None
    return get_run_yield_check()


def run(label: str, fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
        key: str, progress_arg: str | None = None) -> Any:
    """Run ``fn(*args, **kwargs)`` as a job from a page, with a progress bar and a *Cancel* button.

    ``key`` names the Cancel button (``{key}_cancel``). Returns the value;
    raises the function's NlidError or a :class:`JobError` (show them with
    ``st.error``). When the script is stopped while the job runs (Cancel,
    another widget, a page change, a closed tab) the worker is killed and the
    next run of a page says the run was cancelled.

    Notes
    -----
    With ``runner.fastReruns`` (Streamlit's default) a widget click or a page
    change while a script runs *stops* that script run (``StopException`` at
    its next check, here within ``POLL_S``) and starts the next run at once in
    a new thread, before the stopped one has unwound; a stopped run can no
    longer write ``session_state`` either. So the "cancelled" notice is queued
    *before* the job starts and withdrawn when the job ends; a run stopped in
    between leaves it for the next run's ``state.show_notice()``.
    """
    import streamlit as st

    from app_support import state

    state.notify("info", CANCELLED_NOTICE.format(label=label))
    armed = state.queued_notice()

    def disarm() -> None:
        state.withdraw_notice(armed)

    box = st.empty()
    with box.container(border=True):
        left, right = st.columns([3, 1], vertical_alignment="center")
        bar = left.progress(0.0, text=f"{label}: starting")
        right.button("Cancel", key=f"{key}_cancel", icon=":material/stop_circle:")
    check = _yield_check()
    inline = _inline()
    shown: dict[str, Any] = {"text": "", "at": 0.0}
    latest: list[Progress] = []

    def draw(fraction: float, text: str) -> None:
        # Without Streamlit's check, every draw is the yield point where a cancel request is seen.
        now = time.monotonic()
        if check is None or (text != shown["text"] and now - shown["at"] >= 0.25):
            bar.progress(fraction, text=text)
            shown.update(text=text, at=now)

    def on_progress(p: Progress) -> None:
        latest[:] = [p]
        if inline:  # no ticks while an inline job runs: this is the only chance to update and to cancel
            if check is not None:
                check()
            draw(p.fraction, f"{label}: {p.stage}: {p.message}"[:300])

    def on_tick(job: Job) -> None:
        if check is not None:
            check()  # raises Streamlit's Stop/RerunException when the user has asked for something else
        elapsed = time.monotonic() - (job.submitted or time.monotonic())
        if latest:
            p = latest[0]
            draw(p.fraction, f"{label}: {p.stage}: {p.message} ({elapsed:.0f} s)"[:300])
        else:
            draw(0.0, f"{label}: running for {elapsed:.0f} s")

    def on_wait(waited: float, busy: int, n: int) -> None:
        if check is not None:
            check()
        draw(0.0, f"{label}: waiting for a free worker ({busy} of {n} busy on this server, {waited:.0f} s)")

    try:
        value = run_job(fn, args, kwargs, progress_arg=progress_arg, on_progress=on_progress, on_tick=on_tick,
                        on_wait=on_wait, inline=inline)
    except Exception:  # an error for the page to show, not a cancel (Streamlit's stop is a BaseException)
        disarm()
        box.empty()
        raise
    disarm()
    box.empty()
    return value


# ---------------------------------------------------------------------------------------------------------------------
# In the forkserver (imported there first by the preload): single-threaded numerics, then import and warm up the
# core once so that every worker forked from it starts with the kernels loaded.


def _imported_by_forkserver() -> bool:
    target = forkserver.main.__code__
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is target:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _prepare_forkserver() -> None:
    for name in _THREAD_ENV:
        os.environ[name] = "1"
    try:
        for module in PRELOAD:
            import_module(module)
        from nlid_core.simulate import warm_up

        _dispatch()
        warm_up()
    except Exception:  # a worker then imports and compiles on its own: slower, not wrong
        _LOG.warning("the job forkserver could not warm up", exc_info=True)


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


if _imported_by_forkserver():
    _prepare_forkserver()
