"""What every part of the job machinery shares: the server settings, limits, progress messages, errors.

Settings (environment variables of the server): ``NLID_JOB_MEMORY_MB``, ``NLID_JOB_CPU_S`` and
``NLID_JOB_WALL_S`` (a worker's limits, :class:`Limits`), ``NLID_MAX_JOBS`` (:func:`max_jobs`) and
``NLID_JOBS_INLINE`` (run jobs in the server process).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

MEMORY_ENV = "NLID_JOB_MEMORY_MB"
CPU_ENV = "NLID_JOB_CPU_S"
WALL_ENV = "NLID_JOB_WALL_S"
MAX_JOBS_ENV = "NLID_MAX_JOBS"
INLINE_ENV = "NLID_JOBS_INLINE"
DEFAULT_MEMORY_MB = 4096
DEFAULT_CPU_S = 3600
DEFAULT_WALL_S = 2 * 3600
NICE = 5
POLL_S = 0.1  # how often the server looks for messages and for a cancel request
PROGRESS_EVERY_S = 0.1  # the worker sends at most this often (plus every change of stage)
# Modules every worker needs, imported once in the forkserver.
PRELOAD = ("nlid_core.estimate", "nlid_core.analysis", "nlid_core.examples", "nlid_core.validation")


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
    wall_s: int = DEFAULT_WALL_S
    nice: int = NICE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Limits from ``NLID_JOB_MEMORY_MB``, ``NLID_JOB_CPU_S`` and ``NLID_JOB_WALL_S`` (defaults where unset)."""
        env = os.environ if environ is None else environ
        return cls(memory_mb=_positive_int(env, MEMORY_ENV, DEFAULT_MEMORY_MB),
                   cpu_s=_positive_int(env, CPU_ENV, DEFAULT_CPU_S),
                   wall_s=_positive_int(env, WALL_ENV, DEFAULT_WALL_S))


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
