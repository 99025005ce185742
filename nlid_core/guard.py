"""Isolated, bounded parsing of untrusted files.

A file handed to nlid by a user is parsed in a separate worker process
(:mod:`nlid_core._parse_worker`), never in the process that serves the
dashboard or runs the command line:

* the worker caps its own address space, CPU time and the size of files it
  writes, disables core dumps and lowers its priority before it opens the
  file; the parent kills it (its whole process group) after a wall-clock
  limit. The limits are those of :class:`~nlid_core.limits.Limits`, settable
  by an administrator through environment variables;
* the readers inside check what the file declares (sheet dimensions,
  decompressed sizes, Parquet row groups, MAT variable shapes) against the
  same limits before allocating (:mod:`nlid_core.io`);
* the worker answers with JSON and ``.npz`` arrays read back with
  ``allow_pickle=False``, and the parent validates the arrays again as a
  :class:`~nlid_core.record.Record`: nothing the worker sends is executed;
* a native crash of a reader (scipy's MAT reader can be made to segfault by
  a corrupt file), a bomb that exhausts the worker's memory or CPU time, or a
  hang ends only the worker and becomes a :class:`DataValidationError` with a
  specific, one-line message for that file;
* at most ``NLID_PARSE_WORKERS`` files (default: the number of CPU cores) are
  parsed at once in one server process; further requests wait for a free
  slot up to the wall-clock limit.

:func:`load_record_guarded` and :func:`load_records_guarded` take the same
arguments and return the same records as :func:`nlid_core.io.load_record`
and :func:`nlid_core.io.load_records`; the dashboard and the CLI use them for
every user file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import tempfile
import threading
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataValidationError
from .isolation import WorkerExit, prestart, run_module
from .limits import LIMIT_VARIABLES, Limits
from .channels import MAX_DOF, parse_channel
from .record import Record, from_channels

__all__ = ["PARSE_WORKER", "load_record_guarded", "load_records_guarded", "parse_slots", "prestart_reader"]

#: The module every guarded parse runs in.
PARSE_WORKER = "nlid_core._parse_worker"


def prestart_reader(*, keep: bool = True) -> None:
    """Start a file-reading worker now, in the background, so that the next guarded parse finds one
    with its imports done (a front end calls it when a file will be read: the dashboard's Data page,
    with ``keep`` so that one is always waiting; the CLI once, before it builds the model)."""
    prestart(PARSE_WORKER, keep=keep)

StrPath = str | PathLike[str]

#: Largest JSON answer accepted from a worker (record headers only; the arrays are in .npz files).
_MAX_ANSWER_BYTES = 4_000_000
#: Most channels a record may have (time, and four quantities per DOF).
_MAX_CHANNELS = 1 + 4 * MAX_DOF
_KINDS = {".csv": "CSV", ".txt": "text", ".tsv": "TSV", ".parquet": "Parquet", ".pq": "Parquet",
          ".xlsx": "Excel", ".xls": "Excel", ".mat": "MAT"}

_slots_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None
_slots_n = 0


def parse_slots() -> int:
    """How many files one process parses at once (``NLID_PARSE_WORKERS``, default the CPU count)."""
    raw = os.environ.get("NLID_PARSE_WORKERS", "").strip()
    try:
        n = int(raw) if raw else (os.cpu_count() or 1)
    except ValueError:
        raise DataValidationError(f"NLID_PARSE_WORKERS must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise DataValidationError(f"NLID_PARSE_WORKERS must be a positive integer, got {raw!r}")
    return n


def _semaphore() -> threading.BoundedSemaphore:
    global _slots, _slots_n
    n = parse_slots()
    with _slots_lock:
        if _slots is None or n != _slots_n:
            _slots, _slots_n = threading.BoundedSemaphore(n), n
        return _slots


def load_record_guarded(
    path: StrPath,
    *,
    columns: Mapping[str, str] | str | None = None,
    units: Mapping[str, str] | str | None = None,
    name: str | None = None,
    resample: bool = False,
    fs: float | None = None,
    rows: tuple[int, int | None] | str | None = None,
    limits: Limits | None = None,
    input_only: bool = False,
) -> Record:
    """Load one record like :func:`nlid_core.io.load_record`, parsing the file in an isolated worker.

    Parameters
    ----------
    path, columns, units, name, resample, fs, rows, input_only
        As for :func:`nlid_core.io.load_record`.
    limits : Limits or None
        Bounds on the parse; ``Limits.from_env()`` when None.

    Returns
    -------
    Record
        The record, validated again in this process.

    Raises
    ------
    DataValidationError
        Every problem with the file, including a crash of the reader, a
        limit reached by the worker and a parse that takes too long; the
        message is one line and names the file.
    """
    kwargs = {"columns": columns, "units": units, "name": name, "resample": resample, "fs": fs, "rows": rows}
    if input_only:
        kwargs["input_only"] = True
    return _guarded([path], kwargs, single=True, limits=limits)[0]


def load_records_guarded(
    paths: Sequence[StrPath] | StrPath,
    *,
    columns: Mapping[str, str] | str | None = None,
    units: Mapping[str, str] | str | None = None,
    resample: bool = False,
    fs: float | None = None,
    rows: tuple[int, int | None] | str | None = None,
    limits: Limits | None = None,
) -> tuple[Record, ...]:
    """Load several records like :func:`nlid_core.io.load_records`, parsing the files in an isolated worker.

    Parameters
    ----------
    paths, columns, units, resample, fs, rows
        As for :func:`nlid_core.io.load_records`.
    limits : Limits or None
        Bounds on the parse (one worker reads all the files, under one set of
        limits); ``Limits.from_env()`` when None.

    Returns
    -------
    tuple of Record

    Raises
    ------
    DataValidationError
        As :func:`load_record_guarded`, prefixed with the file name.
    """
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    plist = list(paths)
    if not plist:
        raise DataValidationError("no files given")
    kwargs = {"columns": columns, "units": units, "resample": resample, "fs": fs, "rows": rows}
    return _guarded(plist, kwargs, single=False, limits=limits)


# --------------------------------------------------------------------------- the parent side


def _jsonable(value: Any, what: str) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v, what) for v in value]
    raise DataValidationError(f"`{what}` must be a string, a mapping or a pair, got {type(value).__name__}")


def _guarded(paths: list[StrPath], kwargs: dict[str, Any], *, single: bool, limits: Limits | None) -> tuple[Record, ...]:
    lim = Limits.from_env() if limits is None else limits
    resolved = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise DataValidationError(f"file {path} does not exist")
        if not path.is_file():
            raise DataValidationError(f"{path} is not a file")
        resolved.append(str(path.resolve()))
    request = {
        "paths": resolved,
        "single": single,
        "kwargs": {k: _jsonable(v, k) for k, v in kwargs.items()},
        "limits": dataclasses.asdict(lim),
    }
    what = Path(paths[0]).name if len(paths) == 1 else f"{len(paths)} files"
    slots = _semaphore()
    if not slots.acquire(timeout=lim.parse_timeout_s):
        raise DataValidationError(
            f"{what}: the server is busy reading other files (all {parse_slots()} reading slots in use"
            f" for {lim.parse_timeout_s:g} s); try again in a moment"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="nlid-parse-") as tmp:
            out = Path(tmp)
            try:
                ended = run_module(PARSE_WORKER, request, out, wall_s=lim.parse_timeout_s, warm=True)
            except OSError as exc:
                raise DataValidationError(
                    f"could not start the file-reading worker: {exc.strerror or exc}") from None
            records = _collect(out, paths, ended, lim)
    finally:
        slots.release()
    return records


def _kind(paths: list[StrPath]) -> str:
    kinds = {_KINDS.get(Path(p).suffix.lower(), "file") for p in paths}
    return kinds.pop() if len(kinds) == 1 else "file"


def _collect(out: Path, paths: list[StrPath], ended: WorkerExit, lim: Limits) -> tuple[Record, ...]:
    """Turn the worker's answer (or its death) into records or one specific DataValidationError."""
    what = Path(paths[0]).name if len(paths) == 1 else ", ".join(Path(p).name for p in paths)
    kind = _kind(paths)
    if ended.timed_out:
        raise DataValidationError(
            f"reading {what} took longer than {lim.parse_timeout_s:g} s and was stopped (the file is too large or"
            f" built to be slow to unpack; an administrator can raise the limit with"
            f" {LIMIT_VARIABLES['parse_timeout_s']})"
        )
    error = out / "error.json"
    if error.is_file():
        doc = _read_json(error)
        kind_of_error = doc.get("kind")
        message = str(doc.get("message", ""))
        if kind_of_error == "data":
            raise DataValidationError(message)
        if kind_of_error == "memory":
            raise _memory_error(what, lim)
        raise DataValidationError(f"{what} could not be read: the {kind} reader failed ({message})")
    sig = ended.signal
    if sig is not None:
        name = _signal_name(sig)
        # SIGXCPU at the soft CPU limit, SIGKILL at the hard one; any other SIGKILL (the kernel's or a
        # container's out-of-memory killer) is told by the worker's peak memory below
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and ended.cpu_s >= lim.parse_cpu_s):
            raise DataValidationError(
                f"reading {what} used more than {lim.parse_cpu_s:g} s of CPU time and was stopped (an administrator"
                f" can raise the limit with {LIMIT_VARIABLES['parse_cpu_s']})"
            )
        if ended.maxrss_mb > 0.5 * lim.parse_memory_mb:
            raise _memory_error(what, lim)
        if sig == signal.SIGKILL:
            raise DataValidationError(
                f"reading {what} was stopped from outside ({name}, e.g. by the server's memory limit); nothing was"
                " loaded; try again, or ask the administrator"
            )
        raise DataValidationError(
            f"{what} is corrupt: the {kind} reader crashed on it ({name}); nothing was loaded and the server"
            " is unaffected; re-export the file from the measurement software"
        )
    code = ended.code if ended.code is not None else -1
    answer = out / "result.json"
    if code != 0 or not answer.is_file():
        raise DataValidationError(f"{what} could not be read: the {kind} reader stopped (exit status {code})")
    doc = _read_json(answer)
    headers = doc.get("records")
    if not isinstance(headers, list) or not headers:
        raise DataValidationError(f"{what} could not be read: the reader returned no record")
    return tuple(_record(out / f"rec{i}.npz", h) for i, h in enumerate(headers))


def _memory_error(what: str, lim: Limits) -> DataValidationError:
    return DataValidationError(
        f"reading {what} needed more than the {lim.parse_memory_mb:g} MB allowed for one file and was stopped"
        f" (an administrator can raise the limit with {LIMIT_VARIABLES['parse_memory_mb']})"
    )


def _signal_name(sig: int) -> str:
    try:
        return f"signal {signal.Signals(sig).name}"
    except ValueError:
        return f"signal {sig}"


def _read_json(path: Path) -> dict[str, Any]:
    if path.stat().st_size > _MAX_ANSWER_BYTES:
        raise DataValidationError("the file-reading worker gave an oversized answer")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise DataValidationError("the file-reading worker gave an unreadable answer") from None
    if not isinstance(doc, dict):
        raise DataValidationError("the file-reading worker gave an unreadable answer")
    return doc


def _record(npz: Path, header: Mapping[str, Any]) -> Record:
    """Rebuild and validate a record from the worker's plain answer (no pickle)."""
    try:
        with np.load(npz, allow_pickle=False) as data:
            names = list(data.files)
            if len(names) > _MAX_CHANNELS or not all(_is_channel(c) for c in names):
                raise DataValidationError("the file-reading worker gave an unreadable answer")
            arrays = {c: np.asarray(data[c], dtype=np.float64) for c in names}
    except (OSError, ValueError, KeyError):
        raise DataValidationError("the file-reading worker gave an unreadable answer") from None
    for c in ("t", "f", "x"):
        if not any(_is_channel(k) and parse_channel(k) == parse_channel(c) for k in arrays):
            raise DataValidationError("the file-reading worker gave an incomplete answer")
    units = header.get("units")
    meta = header.get("meta")
    return from_channels(
        arrays,
        name=str(header.get("name", "record")),
        units={str(k): str(v) for k, v in units.items()} if isinstance(units, dict) else None,
        derived=tuple(str(d) for d in header.get("derived", ())),
        source=str(header.get("source", "")),
        warnings=tuple(str(w) for w in header.get("warnings", ())),
        meta=meta if isinstance(meta, dict) else {},
    )


def _is_channel(name: str) -> bool:
    try:
        parse_channel(name)
    except DataValidationError:
        return False
    return True
