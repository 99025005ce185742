"""Worker processes that are bounded and never outlive the process that started them.

Everything a user hands to a shared server that could cost unbounded work runs in a worker process
(parsing a file: :mod:`nlid_core.guard`; compiling a typed term: :mod:`nlid_core.terms.vetting`;
batch items: :mod:`nlid_core.runners`). This module holds what they share:

* :func:`limit_self` caps the calling process's address space, CPU time and written-file size,
  disables core dumps and lowers its priority (``setrlimit``; the kernel sends ``SIGXCPU`` at the
  soft CPU limit and ``SIGKILL`` at the hard one);
* :func:`die_with_parent` makes a worker end when the process that started it ends, however it ends
  (``SIGKILL`` included): ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` where the parent is the direct parent
  (Linux), and in every case a watcher thread that ends the worker when the parent's pid is gone or
  (for ``multiprocessing`` workers started by a forkserver, whose direct parent is the forkserver)
  when the pipe from the starting process closes;
* :func:`run_module` hands a JSON request to ``python -m MODULE`` on standard input (a worker
  started for it, or one started ahead that has done its imports: :func:`prestart`), waits at most
  a wall-clock limit, kills the worker's whole session on the way out (a timeout, an exception, an
  interrupted caller) and returns the wait status with the CPU time and peak memory it used (the
  parse guard, typed-term vetting);
* :func:`worker_context` is the ``multiprocessing`` context of every worker that runs a function of
  ours (dashboard jobs, the process runner of batches): one *forkserver* per server process that
  has imported the modules its users preload, so a worker starts in milliseconds with the compiled
  kernels loaded; ``spawn`` where there is no forkserver. Workers named :data:`WORKER_PREFIX` do not
  re-run the starting process's main script (under Streamlit, the whole dashboard);
* :func:`single_threaded` sets one thread per numeric library in a worker (:data:`THREAD_ENV`).

References
----------
Linux ``prctl(2)`` (``PR_SET_PDEATHSIG``), ``setrlimit(2)`` (``RLIMIT_CPU``: ``SIGXCPU`` at the soft
limit, ``SIGKILL`` at the hard limit).
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PARENT_PID_ENV", "THREAD_ENV", "WORKER_PREFIX", "CpuBudgetExceeded", "WorkerExit", "cpu_budget",
           "die_with_parent", "kill_session", "limit_self", "prestart", "run_module", "single_threaded",
           "worker_context"]

#: Environment variable through which :func:`run_module` tells a worker its parent's pid.
PARENT_PID_ENV = "NLID_PARENT_PID"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
_PR_SET_PDEATHSIG = 1
_POLL_S = 0.005
_WATCH_S = 0.5
#: Thread-count settings of the numeric libraries; a worker sets each to 1 (:func:`single_threaded`).
THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
              "NUMBA_NUM_THREADS")
#: Name prefix of the ``multiprocessing`` workers that must not re-run the main script.
WORKER_PREFIX = "nlid-"


def limit_self(*, cpu_s: float | None = None, memory_bytes: int | None = None, file_bytes: int | None = None,
               nice: int = 0, hard_cpu_margin_s: int = 5) -> None:
    """Apply resource limits to the calling process (a limit already lower is kept).

    Parameters
    ----------
    cpu_s : float or None, s
        CPU time: ``SIGXCPU`` at this, ``SIGKILL`` ``hard_cpu_margin_s`` later.
    memory_bytes, file_bytes : int or None
        Address space; size of any file the process writes.
    nice : int
        Added to the scheduling priority (19 is the lowest).
    """
    import resource

    wanted: list[tuple[int, int, int]] = [(resource.RLIMIT_CORE, 0, 0)]
    if cpu_s is not None:
        soft = max(1, int(cpu_s))
        wanted.append((resource.RLIMIT_CPU, soft, soft + hard_cpu_margin_s))
    if memory_bytes is not None:
        wanted.append((resource.RLIMIT_AS, int(memory_bytes), int(memory_bytes)))
    if file_bytes is not None:
        wanted.append((resource.RLIMIT_FSIZE, int(file_bytes), int(file_bytes)))
    for which, soft, hard in wanted:
        try:
            _, old_hard = resource.getrlimit(which)
            if old_hard != resource.RLIM_INFINITY:
                hard = min(hard, old_hard)
            resource.setrlimit(which, (min(soft, hard), hard))
        except (ValueError, OSError):  # pragma: no cover - a platform without this limit
            pass
    if nice:
        try:
            os.nice(nice)
        except OSError:  # pragma: no cover
            pass


def _pdeathsig() -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)``; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover
        return False


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped by its own parent, is not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: the signal test is all there is
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def die_with_parent(parent_pid: int | None = None) -> None:
    """End this process (exit status 70) as soon as the process that started it is gone.

    Parameters
    ----------
    parent_pid : int or None
        The starting process; default ``NLID_PARENT_PID`` from the environment, else the
        ``multiprocessing`` parent, else the direct parent.

    Notes
    -----
    ``PR_SET_PDEATHSIG`` acts in the kernel, even while this process runs compiled code that holds
    the interpreter lock, and is all that is used when the starting process is the direct parent.
    It cannot cover a forkserver worker (its direct parent is the forkserver, which outlives the
    starting process while workers hold its pipe): there a watcher thread wakes when the
    ``multiprocessing`` parent's pipe closes, and every half second checks that ``parent_pid``
    still runs.
    """
    if parent_pid is None:
        raw = os.environ.get(PARENT_PID_ENV, "").strip()
        parent_pid = int(raw) if raw.isdigit() else None
    mp_parent = multiprocessing.parent_process()
    if parent_pid is None:
        parent_pid = mp_parent.pid if mp_parent is not None and mp_parent.pid else os.getppid()
    if parent_pid == os.getppid() and _pdeathsig():
        if os.getppid() != parent_pid:
            os._exit(70)  # the parent died before the signal was armed
        return  # the kernel ends this process with its parent: no thread needed
    if not _alive(parent_pid):
        os._exit(70)
    sentinel = mp_parent.sentinel if mp_parent is not None else None

    def watch() -> None:
        while True:
            if sentinel is not None:
                if multiprocessing.connection.wait([sentinel], _WATCH_S):
                    os._exit(70)
            else:
                time.sleep(_WATCH_S)
            if not _alive(parent_pid):
                os._exit(70)

    threading.Thread(target=watch, name="nlid-parent-watch", daemon=True).start()


def kill_session(pid: int) -> None:
    """SIGKILL the process group (session) led by ``pid``, or the process alone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass(frozen=True, kw_only=True)
class WorkerExit:
    """How a worker of :func:`run_module` ended.

    Attributes
    ----------
    status : int
        Its wait status (``os.WIFSIGNALED`` etc. apply); meaningless when ``timed_out``.
    timed_out : bool
        Killed at the wall-clock limit.
    cpu_s : float, s
        CPU time it used (user + system).
    maxrss_mb : float, MB
        Its peak resident memory as far as it is known (sampled while it ran, and the kernel's
        figure where that is above what a forked child inherits); 0 when unknown.
    """

    status: int
    timed_out: bool
    cpu_s: float
    maxrss_mb: float

    @property
    def signal(self) -> int | None:
        """The signal that ended it, if one did."""
        return os.WTERMSIG(self.status) if not self.timed_out and os.WIFSIGNALED(self.status) else None

    @property
    def code(self) -> int | None:
        """Its exit code, if it exited."""
        return os.WEXITSTATUS(self.status) if not self.timed_out and os.WIFEXITED(self.status) else None


def single_threaded() -> None:
    """One thread per numeric library in this process (set before they start their thread pools)."""
    for name in THREAD_ENV:
        os.environ[name] = "1"


def _without_main(get_preparation_data: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    """``multiprocessing.spawn.get_preparation_data`` that tells our workers not to re-run the main script.

    multiprocessing re-runs the parent's ``__main__`` in each new process. Under Streamlit,
    ``__main__`` is the app script, which would run the whole dashboard once more in every worker.
    Our workers need nothing from it (functions are sent by module and name), so for processes named
    ``WORKER_PREFIX...`` the entries that ask for it are dropped; other processes are untouched.
    """

    def prepare(name: str) -> dict[str, Any]:
        data = get_preparation_data(name)
        if name.startswith(WORKER_PREFIX):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    prepare.nlid_without_main = True  # type: ignore[attr-defined]
    return prepare


_CTX_LOCK = threading.Lock()
_PRELOAD: list[str] = []


def worker_context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """The ``multiprocessing`` context of this process's function workers: the forkserver (``spawn``
    where there is none).

    Parameters
    ----------
    preload : sequence of str
        Modules the forkserver imports before it forks its first worker (added to those of earlier
        calls; the forkserver is one per process and takes the list it has when it starts).
    """
    from multiprocessing import spawn

    with _CTX_LOCK:
        if not getattr(spawn.get_preparation_data, "nlid_without_main", False):
            spawn.get_preparation_data = _without_main(spawn.get_preparation_data)  # type: ignore[assignment]
        if "forkserver" not in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("spawn")
        ctx = multiprocessing.get_context("forkserver")
        wanted = [m for m in preload if m not in _PRELOAD]
        if wanted:
            _PRELOAD.extend(wanted)
            ctx.set_forkserver_preload(list(_PRELOAD))
        return ctx


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = _PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in THREAD_ENV:
        env[var] = "1"
    env["ARROW_DEFAULT_MEMORY_POOL"] = "system"  # no large virtual reservations under the address-space cap
    env["MALLOC_ARENA_MAX"] = "2"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env[PARENT_PID_ENV] = str(os.getpid())
    return env


def _environment_key() -> int:
    return hash(tuple(sorted(os.environ.items())))


def _popen(module: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", module],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(), env=_worker_env(), start_new_session=True, close_fds=True,
    )


class _WarmPool:
    """Workers started ahead of need, waiting for their one request on standard input.

    A worker imports what it needs (numpy, pandas, the readers) while it waits, so a request finds
    it ready: the overhead of isolation is then a pipe write and the answer's files. Each worker
    serves one request and exits, so no state passes from one untrusted file to the next. Workers
    are started by one long-lived thread (``PR_SET_PDEATHSIG`` is bound to the starting thread)
    and only used while the environment is the one they were started with.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[str, list[tuple[int, subprocess.Popen[bytes]]]] = {}
        self._pending: dict[str, int] = {}
        self.kept: set[str] = set()  # modules refilled after each use
        self._wanted: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _serve(self) -> None:
        while True:
            module = self._wanted.get()
            try:
                proc: subprocess.Popen[bytes] | None = _popen(module)
            except OSError:
                proc = None
            with self._lock:
                self._pending[module] = max(self._pending.get(module, 0) - 1, 0)
                if proc is not None:
                    self._idle.setdefault(module, []).append((_environment_key(), proc))

    def _usable(self, module: str) -> list[tuple[int, subprocess.Popen[bytes]]]:
        """The idle workers of ``module`` still alive and of this environment (the others are ended)."""
        key = _environment_key()
        keep = []
        for k, proc in self._idle.get(module, []):
            if k == key and proc.poll() is None:
                keep.append((k, proc))
            else:
                kill_session(proc.pid)
                proc.wait()
        self._idle[module] = keep
        return keep

    def prestart(self, module: str) -> None:
        """Have one worker of ``module`` waiting (started in the background; no-op when one is or will be)."""
        with self._lock:
            if self._usable(module) or self._pending.get(module, 0):
                return
            self._pending[module] = self._pending.get(module, 0) + 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="nlid-warm-workers", daemon=True)
                self._thread.start()
        self._wanted.put(module)

    def take(self, module: str) -> subprocess.Popen[bytes] | None:
        """A waiting worker of ``module`` started in the current environment, or None."""
        with self._lock:
            usable = self._usable(module)
            return usable.pop()[1] if usable else None


_WARM = _WarmPool()


def prestart(module: str, *, keep: bool = True) -> None:
    """Start a worker of ``module`` in the background now, for the next :func:`run_module` with
    ``warm=True`` (a front end calls it when it knows a file will be read). With ``keep``, another
    is started each time one is used (a server); without, this one only (a command run once)."""
    if keep:
        _WARM.kept.add(module)
    _WARM.prestart(module)


def run_module(module: str, request: dict[str, Any], out: Path, *, wall_s: float, warm: bool = False) -> WorkerExit:
    """Run ``python -m module`` with ``request`` (plus ``"out": OUT``) as JSON on standard input; wait
    at most ``wall_s``.

    The worker runs in a session of its own (so a kill reaches whatever it starts), with one thread
    per numeric library, ``PYTHONPATH`` leading to this package and ``NLID_PARENT_PID`` set (for
    :func:`die_with_parent`); it is expected to limit itself with :func:`limit_self` once it has
    read the request, and to write its answer in ``OUT``. With ``warm``, a worker started ahead
    (:func:`prestart`) is used when one is waiting (and another is started for the next request
    where the caller asked to keep one waiting).

    Raises
    ------
    OSError
        The worker could not be started.
    """
    start = time.monotonic()
    proc = _WARM.take(module) if warm else None
    if warm and module in _WARM.kept:
        _WARM.prestart(module)
    if proc is None:
        proc = _popen(module)
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps({**request, "out": str(out)}).encode())
        proc.stdin.close()
    except OSError:
        pass  # the worker died at once; its status says why
    deadline = start + wall_s
    status: int | None = None
    timed_out = False
    rusage = None
    peak_kb = 0
    try:
        while True:
            pid, wstatus, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                status = wstatus
                break
            peak_kb = max(peak_kb, _high_water_kb(proc.pid))
            if time.monotonic() > deadline:
                kill_session(proc.pid)
                _, status, rusage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(_POLL_S)
    finally:
        if status is None:  # interrupted (e.g. the session stopped the script): leave no worker behind
            kill_session(proc.pid)
            try:
                os.wait4(proc.pid, 0)
            except ChildProcessError:
                pass
        else:
            kill_session(proc.pid)  # anything the worker started in its session goes with it
        proc.returncode = 0  # reaped here; keep Popen from waiting again
    assert rusage is not None
    # the kernel's peak for a child includes the size of the process it was forked from (the peak of
    # the old address space is kept across exec): only a peak above this process's own is the worker's
    import resource

    inherited_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if rusage.ru_maxrss > inherited_kb:
        peak_kb = max(peak_kb, rusage.ru_maxrss)
    return WorkerExit(status=int(status), timed_out=timed_out, cpu_s=rusage.ru_utime + rusage.ru_stime,
                      maxrss_mb=peak_kb / 1024.0)


def _high_water_kb(pid: int) -> int:
    """The peak resident size of the live process ``pid`` since its exec (``VmHWM``), in kB; 0 if unknown."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class CpuBudgetExceeded(BaseException):
    """Raised in the main thread when a :func:`cpu_budget` runs out.

    A ``BaseException`` (like ``KeyboardInterrupt``), so that code which turns ordinary exceptions
    into a failed result (a residual that cannot be simulated) does not swallow it; whoever opened
    the budget turns it into its own error.
    """


@contextmanager
def cpu_budget(seconds: float | None, message: str) -> Iterator[None]:
    """Let the block use at most ``seconds`` more CPU time of this process, else raise
    :class:`CpuBudgetExceeded` (``message``) in it.

    Works through the soft ``RLIMIT_CPU`` (the kernel sends ``SIGXCPU`` when it is reached, and
    again every second) and a ``SIGXCPU`` handler, so only in the main thread; elsewhere, with
    ``seconds`` None, or where a tighter CPU limit already applies to the process (a dashboard
    job's), the block runs unbounded by this budget. The previous limit and handler are restored.
    The exception is raised between two Python instructions: a compiled loop finishes first.
    """
    import resource

    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    want = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    if (soft != resource.RLIM_INFINITY and soft <= want) or (hard != resource.RLIM_INFINITY and hard <= want):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        # a signal of an earlier budget can still be pending when this one starts: only a real overrun counts
        now = resource.getrusage(resource.RUSAGE_SELF)
        if now.ru_utime + now.ru_stime >= want - 0.1:
            raise CpuBudgetExceeded(message)

    previous = signal.signal(signal.SIGXCPU, handler)
    resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        signal.signal(signal.SIGXCPU, previous)
