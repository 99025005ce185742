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
    :mod:`nlid_core.isolation`). Where there is no forkserver, workers are spawned
    (slower, same behaviour).

``NLID_JOBS_INLINE=1`` runs jobs in the server process with the same API (no
isolation, no limits; cancel works through the progress callback only) for
environments where processes cannot be started.

Modules: ``settings`` (server settings, limits, :class:`Progress`, errors),
``transport`` (sending functions and values), ``worker`` (the worker side),
``process`` (the forkserver context and :class:`Job`), ``runner`` (the cap on
parallel jobs, :func:`run_job`), ``page`` (:func:`run` with a progress bar and
*Cancel*), ``warmup`` (what the forkserver does first) and ``probes``
(functions the tests run as jobs).
"""

from __future__ import annotations

from . import warmup  # noqa: F401 - prepares the forkserver when the forkserver imports this package
from .page import CANCELLED_NOTICE, run
from .probes import _allocate_for_tests, _crash_for_tests, _origin_for_tests, _sleep_for_tests
from .process import Job, prestart
from .runner import _slots, _Slots, run_job
from .settings import (
    CPU_ENV,
    DEFAULT_CPU_S,
    DEFAULT_MEMORY_MB,
    INLINE_ENV,
    MAX_JOBS_ENV,
    MEMORY_ENV,
    NICE,
    POLL_S,
    PRELOAD,
    PROGRESS_EVERY_S,
    JobCancelled,
    JobError,
    Limits,
    Progress,
    max_jobs,
)

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
