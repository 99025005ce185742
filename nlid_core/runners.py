r"""Independent computations, serially, on local processes, or on a Dask cluster: the one runner of batch runs and
the multibody analyses.

A forward run of the flexible pendulum takes a fraction of a second, and a surrogate needs tens to
hundreds of them (:func:`nlid_core.multibody.surrogate.build_surrogate`); a batch spec holds tens to thousands of
identifications (:mod:`nlid_core.batch`). Both are embarrassingly parallel maps. :func:`runner` returns one of three runners with the same
:class:`Runner` interface, whose :meth:`~Runner.map` preserves the order of the items and returns
the same values whichever runner computed them (the function is called on the same inputs; only
where it runs changes):

``serial``
    A plain loop in the calling thread.
``processes``
    A :class:`concurrent.futures.ProcessPoolExecutor` whose worker processes start by
    the process's one forkserver (:func:`nlid_core.isolation.worker_context`; ``spawn`` where that
    is unavailable), never by ``fork``: the dashboard runs
    threads, and forking a threaded process can deadlock a child (Python documentation,
    :mod:`multiprocessing`, "Contexts and start methods"). The function must therefore be picklable:
    a module-level function or a picklable callable object, not a lambda or closure. The pool is
    created on the first :meth:`~Runner.map` and reused until :meth:`~Runner.close`.
``dask``
    A ``distributed.Client`` connected to a running scheduler (``tcp://host:8786``);
    ``client.map(fn, items, pure=False)`` then gathers the results (Dask documentation,
    "Futures").

Progress is reported as ``progress(stage, fraction, message)`` (stage ``"runs"``) after each finished item; ``cancel()`` is polled
between items and, when it returns true, the items not yet started are cancelled and
:class:`~nlid_core.errors.SimulationError` ``"cancelled ..."`` is raised. An exception raised by the
function surfaces as the same exception type with its own message (the remote traceback attached by
:mod:`concurrent.futures` is dropped).

Use a runner as a context manager so its pool or client is closed::

    with runner(workers=2) as r:
        values = r.map(simulate_one, parameter_vectors)
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from .errors import ModelSpecError, SimulationError
from .isolation import worker_context
from .progress import CancelFn, ProgressFn

__all__ = ["CancelFn", "DaskRunner", "ProcessRunner", "ProgressFn", "RUNNER_KINDS", "Runner", "SerialRunner",
           "runner"]

#: Kinds of runner, as :attr:`Runner.kind`.
RUNNER_KINDS: tuple[str, ...] = ("serial", "processes", "dask")
#: Default seconds to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT_S = 10.0
#: Seconds between two looks at the state of Dask futures.
POLL_S = 0.02


@runtime_checkable
class Runner(Protocol):
    """Maps a function over independent items.

    Attributes
    ----------
    workers : int
        Items computed at once (1 for ``serial``; the cluster's total threads for ``dask``).
    kind : str
        ``"serial"``, ``"processes"`` or ``"dask"``.
    """

    workers: int
    kind: str

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], *, progress: ProgressFn | None = None,
            cancel: CancelFn | None = None) -> list[Any]:
        """``[fn(item) for item in items]``, in the order of ``items``."""
        ...

    def close(self) -> None:
        """Release the pool or the client (the runner cannot be used afterwards)."""
        ...

    def __enter__(self) -> Runner: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...


def _report(progress: ProgressFn | None, done: int, total: int, kind: str) -> None:
    if progress is not None:
        progress("runs", done / total if total else 1.0, f"{done}/{total} runs done ({kind})")


def _cancelled(done: int, total: int) -> SimulationError:
    return SimulationError(f"cancelled: `cancel` returned true after {done} of {total} runs")


def _clean(exc: BaseException) -> BaseException:
    """The same exception without the chained remote traceback."""
    exc.__cause__ = None
    exc.__suppress_context__ = True
    return exc.with_traceback(None)


def _check_picklable(fn: Callable[[Any], Any]) -> None:
    try:
        pickle.dumps(fn)
    except Exception as exc:  # pickle raises several types (PicklingError, AttributeError, TypeError)
        raise ModelSpecError(
            f"`fn` must be picklable (a module-level function or a picklable object) to run in other "
            f"processes; received {fn!r}: {exc}") from None


class _Closable:
    """Context-manager plumbing shared by the runners."""

    def close(self) -> None:
        """Release resources; the base runner holds none."""

    def __enter__(self) -> Runner:
        return self  # type: ignore[return-value]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class SerialRunner(_Closable):
    """Runs the items one after the other in the calling thread (``kind = "serial"``)."""

    kind = "serial"

    def __init__(self) -> None:
        self.workers = 1

    def __repr__(self) -> str:
        return "SerialRunner()"

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], *, progress: ProgressFn | None = None,
            cancel: CancelFn | None = None) -> list[Any]:
        """``[fn(item) for item in items]`` with progress and cancellation between items.

        Raises
        ------
        SimulationError
            When ``cancel()`` returns true (``"cancelled: ..."``); whatever ``fn`` raises propagates.
        """
        total = len(items)
        out: list[Any] = []
        for i, item in enumerate(items):
            if cancel is not None and cancel():
                raise _cancelled(i, total)
            out.append(fn(item))
            _report(progress, i + 1, total, self.kind)
        return out


def _worker_start(parent_pid: int) -> None:
    """Initializer of each pool worker: it ends with the process that started the pool (a killed batch
    command leaves no worker computing; :func:`nlid_core.isolation.die_with_parent`)."""
    from .isolation import die_with_parent

    die_with_parent(parent_pid)


class ProcessRunner(_Closable):
    """Runs the items on a pool of local worker processes (``kind = "processes"``).

    Parameters
    ----------
    workers : int
        Worker processes (≥ 1).

    Notes
    -----
    At most ``2 * workers`` items are in flight, so a cancellation takes effect within a couple of
    runs; the pool is started on the first :meth:`map` (starting takes about a second: each worker
    imports numpy and the function's module) and reused until :meth:`close`.
    """

    kind = "processes"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: list[ProcessPoolExecutor] = []   # zero or one pool, started lazily

    def __repr__(self) -> str:
        return f"ProcessRunner(workers={self.workers})"

    def _executor(self) -> ProcessPoolExecutor:
        if not self._pool:
            self._pool.append(ProcessPoolExecutor(max_workers=self.workers, mp_context=worker_context(),
                                                  initializer=_worker_start, initargs=(os.getpid(),)))
        return self._pool[0]

    def close(self) -> None:
        """Shut the pool down (pending items are cancelled)."""
        while self._pool:
            self._pool.pop().shutdown(wait=True, cancel_futures=True)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], *, progress: ProgressFn | None = None,
            cancel: CancelFn | None = None) -> list[Any]:
        """``[fn(item) for item in items]`` computed by the worker processes, in the order of ``items``.

        Raises
        ------
        ModelSpecError
            ``fn`` cannot be pickled.
        SimulationError
            ``cancel()`` returned true, or a worker process died (the pool is then restarted on the next
            call); an exception raised by ``fn`` propagates with its type and message.
        """
        _check_picklable(fn)
        total = len(items)
        if total == 0:
            return []
        pool = self._executor()
        results: list[Any] = [None] * total
        running: dict[Future[Any], int] = {}
        nxt = 0
        done = 0
        window = 2 * self.workers
        try:
            while done < total:
                if cancel is not None and cancel():
                    raise _cancelled(done, total)
                while nxt < total and len(running) < window:
                    running[pool.submit(fn, items[nxt])] = nxt
                    nxt += 1
                finished, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                for fut in finished:
                    idx = running.pop(fut)
                    try:
                        results[idx] = fut.result()
                    except BrokenProcessPool as exc:
                        self._pool.clear()
                        raise SimulationError(f"a worker process died while running item {idx}: {exc}") from None
                    except BaseException as exc:
                        raise _clean(exc) from None
                    done += 1
                    _report(progress, done, total, self.kind)
        finally:
            for fut in running:
                fut.cancel()
        return results


class DaskRunner(_Closable):
    """Runs the items on a Dask cluster through a ``distributed.Client`` (``kind = "dask"``).

    Parameters
    ----------
    address : str
        The scheduler's address, e.g. ``"tcp://10.0.0.5:8786"``.
    timeout_s : float, s
        Seconds to wait for the scheduler.

    Raises
    ------
    SimulationError
        The scheduler cannot be reached within ``timeout_s``, or ``distributed`` is not installed.
    """

    kind = "dask"

    def __init__(self, address: str, *, timeout_s: float = DASK_CONNECT_TIMEOUT_S) -> None:
        try:
            import distributed
        except ImportError as exc:  # optional dependency
            raise SimulationError(f"a Dask scheduler was given (`{address}`) but `distributed` is not "
                                  f"installed: {exc}") from None
        try:
            client_cls: Any = distributed.Client     # untyped library: keep the client as Any
            self._client: Any = client_cls(address, timeout=f"{timeout_s}s", set_as_default=False)
        except Exception as exc:  # OSError / TimeoutError / ValueError for a malformed address
            raise SimulationError(f"cannot reach the Dask scheduler at `{address}`: {exc}") from None
        self.address = address
        info = self._client.scheduler_info()
        self.workers = max(1, sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()))

    def __repr__(self) -> str:
        return f"DaskRunner(address={self.address!r}, workers={self.workers})"

    def close(self) -> None:
        """Close the client (the cluster keeps running)."""
        self._client.close()

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], *, progress: ProgressFn | None = None,
            cancel: CancelFn | None = None) -> list[Any]:
        """``[fn(item) for item in items]`` computed on the cluster, in the order of ``items``.

        Raises
        ------
        ModelSpecError
            ``fn`` cannot be pickled.
        SimulationError
            ``cancel()`` returned true; the scheduler or a worker cannot import ``fn``'s module (the
            cluster runs another environment). An exception raised by ``fn`` propagates with its type
            and message.
        """
        _check_picklable(fn)
        try:
            return self._map(fn, items, progress, cancel)
        except (RuntimeError, ImportError) as exc:
            text = str(exc)
            if isinstance(exc, ImportError) or "deserializ" in text:
                # the scheduler (recent Dask versions unpickle the task graph there) or a worker cannot
                # import the function's module: an environment problem, not a failed item
                raise SimulationError(
                    f"the Dask cluster at `{self.address}` could not load nlid's tasks: its scheduler and every "
                    f"worker must be able to import nlid_core, in the same version as here (start them from the "
                    f"nlid image, or with nlid installed / on PYTHONPATH) ({type(exc).__name__}: {text})") from None
            raise

    def _map(self, fn: Callable[[Any], Any], items: Sequence[Any], progress: ProgressFn | None,
             cancel: CancelFn | None) -> list[Any]:
        total = len(items)
        if total == 0:
            return []
        futures = self._client.map(fn, list(items), pure=False)
        pending = list(futures)
        done = 0
        try:
            while pending:
                if cancel is not None and cancel():
                    raise _cancelled(done, total)
                still = []
                for fut in pending:
                    if not fut.done():
                        still.append(fut)
                    elif fut.status == "error":
                        raise _clean(fut.exception()) from None
                    else:
                        done += 1
                        _report(progress, done, total, self.kind)
                if len(still) == len(pending):
                    time.sleep(POLL_S)
                pending = still
            out: list[Any] = self._client.gather(futures)
        finally:
            if pending:
                self._client.cancel(list(pending))
        return out


def runner(scheduler: str | None = None, *, workers: int | None = None, serial: bool = False,
           timeout_s: float = DASK_CONNECT_TIMEOUT_S) -> Runner:
    """A runner for independent forward runs.

    Parameters
    ----------
    scheduler : str or None
        A Dask scheduler address (``"tcp://host:8786"``): run on that cluster. None: run locally.
    workers : int or None
        Local worker processes (default ``os.cpu_count()``); ignored with a scheduler.
    serial : bool
        Run in the calling thread (no processes); overrides ``workers``.
    timeout_s : float, s
        Seconds to wait for the Dask scheduler.

    Returns
    -------
    Runner
        A :class:`SerialRunner`, :class:`ProcessRunner` or :class:`DaskRunner`; use it as a context
        manager (or call ``close()``).

    Raises
    ------
    ModelSpecError
        ``workers`` < 1, ``scheduler`` is not a non-empty string, ``serial`` with a scheduler, or
        ``timeout_s`` ≤ 0.
    SimulationError
        The scheduler cannot be reached.

    Examples
    --------
    >>> with runner(serial=True) as r:
    ...     r.map(abs, [-1, 2, -3])
    [1, 2, 3]
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ModelSpecError(f"`workers` must be a positive integer; received {workers!r}")
    if not (timeout_s > 0):
        raise ModelSpecError(f"`timeout_s` must be positive; received {timeout_s!r}")
    if scheduler is not None:
        if not isinstance(scheduler, str) or not scheduler.strip():
            raise ModelSpecError(f"`scheduler` must be a Dask scheduler address such as 'tcp://host:8786'; "
                                 f"received {scheduler!r}")
        if serial:
            raise ModelSpecError(f"`serial` cannot be combined with a Dask `scheduler` ({scheduler!r})")
        return DaskRunner(scheduler.strip(), timeout_s=timeout_s)
    if serial:
        return SerialRunner()
    return ProcessRunner(workers if workers is not None else (os.cpu_count() or 1))
