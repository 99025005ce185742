"""Cached wrappers around :mod:`nlid_core` calls, bounded for a shared server.

The dashboard runs as one process shared by every browser session, so every
cache here is bounded in entries, in time and, where it holds records or
arrays, in bytes:

* small, fixed results (the example record, the Silverbox benchmark) use
  ``st.cache_data`` with a small ``max_entries`` and a ``ttl``;
* derived records and the nonlinearity evidence, whose size grows with the
  record, live in one process-wide :class:`ByteBudgetCache` (least recently
  used entries go first once the byte budget is reached; an entry unused for
  the time-to-live is dropped). Its size is measured from the numpy arrays an
  entry holds (:func:`nbytes_of`).

Entries are keyed by the session-independent content hash
:func:`record_key` (channels, units and name), so two sessions share an entry
only when they hold identical data.

Uploaded files are not cached at all: a parsed upload lives in its session's
records, and a process-wide cache of uploads would keep other users' data in
memory. Uploads are parsed by :func:`nlid_core.guard.load_record_guarded`, in
a worker process with capped memory and time.

Settings (environment variables, read when the process first needs the cache):

=====================  ==================================================  =======
variable               meaning                                              default
=====================  ==================================================  =======
``NLID_CACHE_MB``      byte budget of the shared cache of derived records   512 MB
                       and nonlinearity evidence
``NLID_CACHE_TTL_S``   an entry unused this long is dropped                 1800 s
=====================  ==================================================  =======

An invalid value falls back to the default (the dashboard must start).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import gc
import hashlib
import math
import os
import re
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import streamlit as st

from app_support.text import plain
from nlid_core import nonlinearity
from nlid_core.errors import DataValidationError
from nlid_core.examples import make_example
from nlid_core.io import load_record
from nlid_core.record import CHANNELS, Record
from nlid_core.signals import derive_missing

SILVERBOX_FS = 1e7 / 2**14
REPO = Path(__file__).resolve().parents[1]

#: Upload types the Data page accepts (a subset of what :mod:`nlid_core.io` reads).
UPLOAD_TYPES: tuple[str, ...] = ("csv", "txt", "tsv", "parquet", "pq", "xlsx", "mat")
#: Longest record name made from an upload's file name.
MAX_NAME_CHARS = 80
#: Time-to-live of the ``st.cache_data`` caches (seconds).
CACHE_DATA_TTL_S = 30 * 60

CACHE_MB_VARIABLE = "NLID_CACHE_MB"
CACHE_TTL_VARIABLE = "NLID_CACHE_TTL_S"
DEFAULT_CACHE_MB = 512.0
DEFAULT_CACHE_TTL_S = 1800.0
#: Bytes charged per entry on top of its arrays (keys, small objects).
ENTRY_OVERHEAD = 1024
#: After dropping at least this many bytes, freed heap memory is handed back to the OS.
TRIM_AFTER_BYTES = 32 * 2**20

T = TypeVar("T")


# --------------------------------------------------------------------------- sizes
def nbytes_of(obj: object, _depth: int = 0, _seen: set[int] | None = None) -> int:
    """Bytes held by the numpy arrays (and strings) reachable from ``obj``.

    Walks records, dataclasses, mappings and sequences (to a depth of 8) and
    counts each array once. Small Python objects are not counted: the arrays
    are what makes a record or a result large.
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 8:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (str, bytes, bytearray)):
        return len(obj)
    if isinstance(obj, Record):
        return sum(nbytes_of(getattr(obj, c), _depth + 1, seen) for c in CHANNELS)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(nbytes_of(getattr(obj, f.name), _depth + 1, seen) for f in dataclasses.fields(obj))
    if isinstance(obj, Mapping):
        return sum(nbytes_of(v, _depth + 1, seen) for v in obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(nbytes_of(v, _depth + 1, seen) for v in obj)
    return 0


# --------------------------------------------------------------------------- shared byte-bounded cache
@dataclass(frozen=True, kw_only=True)
class CacheStats:
    """A snapshot of a :class:`ByteBudgetCache`."""

    entries: int
    nbytes: int
    budget_bytes: int
    hits: int
    misses: int
    evictions: int


class ByteBudgetCache:
    """A thread-safe least-recently-used cache bounded by the bytes of its entries.

    Parameters
    ----------
    budget_bytes : int
        Entries are evicted, least recently used first, while their total size
        exceeds this. A single value larger than the budget is never stored.
    ttl_s : float or None, seconds
        An entry not used for this long is dropped (checked on every access).
    sizeof : callable
        Size of a value in bytes; :func:`nbytes_of` plus :data:`ENTRY_OVERHEAD`
        by default.
    clock : callable
        Monotonic time in seconds (replaceable in tests).
    release : callable or None
        Called (outside the lock) after entries of at least
        :data:`TRIM_AFTER_BYTES` were dropped, to hand freed memory back to
        the operating system (:func:`release_free_memory`); None: not called.

    Notes
    -----
    Values are computed outside the lock, so a slow computation never blocks
    other sessions; two sessions asking for the same missing key at once both
    compute it and the second result replaces the first. Stored values are
    shared between sessions: treat them as read-only.

    Expired entries are dropped at every access and by :meth:`sweep`, which
    the process-wide cache's housekeeping thread calls periodically, so that
    memory comes back when no session uses the server any more.
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        ttl_s: float | None = None,
        sizeof: Callable[[object], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        release: Callable[[], None] | None = None,
    ) -> None:
        if budget_bytes < 0:
            raise ValueError(f"`budget_bytes` must be >= 0, got {budget_bytes}")
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"`ttl_s` must be positive or None, got {ttl_s}")
        self.budget_bytes = int(budget_bytes)
        self.ttl_s = ttl_s
        self._sizeof = sizeof if sizeof is not None else (lambda v: nbytes_of(v) + ENTRY_OVERHEAD)
        self._clock = clock
        self._release = release
        self._dropped = 0  # bytes dropped since the last release
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()  # value, size, last use
        self._nbytes = 0
        self._hits = self._misses = self._evictions = 0

    def _drop(self, key: Hashable) -> None:
        _, size, _ = self._entries.pop(key)
        self._nbytes -= size
        self._dropped += size
        self._evictions += 1

    def _release_if_due(self) -> None:
        """Call ``release`` when enough was dropped (after the lock is released; values are gone by then)."""
        with self._lock:
            due = self._release is not None and self._dropped >= TRIM_AFTER_BYTES
            if due:
                self._dropped = 0
        if due:
            self._release()  # type: ignore[misc]

    def _expire(self, now: float) -> None:
        # least recently used first, so expired entries are at the front
        if self.ttl_s is None:
            return
        while self._entries:
            key, (_, _, used) = next(iter(self._entries.items()))
            if now - used < self.ttl_s:
                break
            self._drop(key)

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value stored under ``key`` (marked as just used), else ``default``."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            entry = self._entries.get(key)
            if entry is None:
                self._misses += 1
            else:
                self._hits += 1
                self._entries[key] = (entry[0], entry[1], now)
                self._entries.move_to_end(key)
        self._release_if_due()
        return default if entry is None else entry[0]

    def put(self, key: Hashable, value: Any) -> bool:
        """Store ``value``, evicting least recently used entries; False when it alone exceeds the budget."""
        size = int(self._sizeof(value))
        with self._lock:
            now = self._clock()
            if key in self._entries:
                _, old, _ = self._entries.pop(key)
                self._nbytes -= old
            self._expire(now)
            stored = size <= self.budget_bytes
            if stored:
                self._entries[key] = (value, size, now)
                self._nbytes += size
                while self._nbytes > self.budget_bytes:
                    self._drop(next(iter(self._entries)))
        self._release_if_due()
        return stored

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value of ``key``, else ``compute()`` stored (exceptions propagate, nothing is stored)."""
        missing = object()
        value = self.get(key, missing)
        if value is not missing:
            return value  # type: ignore[no-any-return]
        value = compute()
        self.put(key, value)
        return value  # type: ignore[no-any-return]

    def sweep(self) -> None:
        """Drop the entries unused for longer than ``ttl_s`` now (called by the housekeeping thread)."""
        with self._lock:
            self._expire(self._clock())
        self._release_if_due()

    def clear(self) -> None:
        with self._lock:
            self._dropped += self._nbytes
            self._entries.clear()
            self._nbytes = 0
        self._release_if_due()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(entries=len(self._entries), nbytes=self._nbytes, budget_bytes=self.budget_bytes,
                              hits=self._hits, misses=self._misses, evictions=self._evictions)


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Hand memory freed by the process back to the operating system (glibc ``malloc_trim``; else nothing).

    Without it glibc keeps freed blocks of tens of MB in the heap (its mmap
    threshold grows after large arrays are freed), so the server's resident
    memory would not come down when cached records go.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def reap_disconnected_sessions() -> bool:
    """Make Streamlit let go of browser sessions closed longer ago than ``server.disconnectedSessionTTL``.

    Streamlit keeps a closed tab's session (its ``session_state``: records, runs; its uploaded files)
    for that time so the browser can reconnect, but its session store drops an expired session only
    on its next write, when another session disconnects, and then without shutting the session down,
    so the session's uploaded files stay in the upload manager. On a server that falls idle the last
    sessions' data would stay in memory indefinitely. This runs, on Streamlit's event loop (the only
    thread that may touch the store), the store's ``expire()`` and ``shutdown()`` of every session it
    drops (which removes the session's uploaded and media files). It uses Streamlit internals of the
    pinned version (checked by a test); returns False, doing nothing, where they differ or no server
    runs.
    """
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return False
        runtime = Runtime.instance()
        store = runtime._session_mgr._session_storage._cache  # type: ignore[attr-defined]
        loop = runtime._get_async_objs().eventloop

        def reap() -> None:
            for _, info in store.expire():
                try:
                    info.session.shutdown()
                except Exception:  # noqa: BLE001, S110 - a session that cannot shut down is still dropped
                    pass

        loop.call_soon_threadsafe(reap)
    except Exception:  # noqa: BLE001 - housekeeping must never take the server down
        return False
    return True


def _housekeeping(cache: weakref.ref[ByteBudgetCache], period_s: float) -> None:
    """Every ``period_s``: drop expired cache entries and sessions, and hand freed memory back to the system.

    Expired entries, sessions closed long enough ago and summarised runs free their arrays, but
    cycles wait for the garbage collector and glibc keeps freed heap blocks; collecting and trimming
    periodically (tens of milliseconds) returns them even when no session runs any more.
    """
    while True:
        time.sleep(period_s)
        live = cache()
        if live is None:
            return
        live.sweep()
        del live
        reap_disconnected_sessions()
        gc.collect()
        release_free_memory()


@st.cache_resource(show_spinner=False)
def shared_cache() -> ByteBudgetCache:
    """The process-wide cache of derived records and evidence (budget ``NLID_CACHE_MB``, ttl ``NLID_CACHE_TTL_S``).

    A daemon thread sweeps it every ``min(ttl / 4, 60 s)`` (see :func:`_housekeeping`).
    """
    ttl = _env_float(CACHE_TTL_VARIABLE, DEFAULT_CACHE_TTL_S)
    cache = ByteBudgetCache(int(_env_float(CACHE_MB_VARIABLE, DEFAULT_CACHE_MB) * 2**20), ttl_s=ttl,
                            release=release_free_memory)
    threading.Thread(target=_housekeeping, args=(weakref.ref(cache), min(ttl / 4, 60.0)), daemon=True,
                     name="nlid-cache-housekeeping").start()
    return cache


# --------------------------------------------------------------------------- content keys
_KEYS: dict[int, tuple[weakref.ref[Record], str]] = {}
_KEYS_LOCK = threading.Lock()


def _forget(rec_id: int) -> Callable[[object], None]:
    def callback(_: object) -> None:
        with _KEYS_LOCK:
            _KEYS.pop(rec_id, None)
    return callback


def record_key(rec: Record) -> str:
    """Content hash of a record (channels, units, name); remembered per record object while it lives."""
    with _KEYS_LOCK:
        known = _KEYS.get(id(rec))
    if known is not None and known[0]() is rec:
        return known[1]
    h = hashlib.sha1()
    for c in CHANNELS:
        arr = getattr(rec, c)
        if arr is not None:
            h.update(c.encode())
            h.update(np.ascontiguousarray(arr).tobytes())
    h.update(repr(sorted(rec.units.items())).encode())
    h.update(rec.name.encode())
    key = h.hexdigest()
    try:
        ref = weakref.ref(rec, _forget(id(rec)))
    except TypeError:
        return key
    with _KEYS_LOCK:
        _KEYS[id(rec)] = (ref, key)
    return key


# --------------------------------------------------------------------------- uploads
def upload_record_name(filename: str) -> str:
    """The record name for an upload: its stem as one line of plain text, at most ``MAX_NAME_CHARS``."""
    stem, dot, ext = filename.rpartition(".")
    if not dot or ext.lower() not in UPLOAD_TYPES:
        stem = filename
    return plain(stem, MAX_NAME_CHARS).strip(" .") or "upload"


def upload_extension(filename: str) -> str:
    """The lower-cased extension of an upload (``.csv``, ...); DataValidationError when it is not accepted."""
    _, dot, ext = filename.rpartition(".")
    ext = ext.lower()
    if not dot or ext not in UPLOAD_TYPES:
        got = f"`.{plain(ext, 12)}`" if dot else "no extension"
        raise DataValidationError(f"unsupported file type ({got}); accepted: {', '.join(UPLOAD_TYPES)}")
    return f".{ext}"


#: Command-line wording in loader messages and what the Data page calls the same thing (first match wins).
_CLI_WORDS: tuple[tuple[str, str], ...] = (
    (r" \(resample=True, CLI --resample\)", ""),
    (r" \(CLI --fs\)", ""),
    (r"with --fs when", "when"),
    (r"--columns (\w+)=NAME", r"the column mapping (\1=NAME)"),
    (r"--fs", "the sampling rate"),
    (r"--units", "the units box"),
    (r"--rows", "rows to keep"),
)


def _for_the_page(message: str, path: Path, shown: str) -> str:
    """A loader message naming the upload instead of the temporary file, in the Data page's words (no CLI flags)."""
    message = message.replace(str(path), shown).replace(path.name, shown)
    for pattern, words in _CLI_WORDS:
        message = re.sub(pattern, words, message)
    return message


def load_uploaded(data: bytes, filename: str, columns: str, units: str, fs: float | None, rows: str) -> Record:
    """Parse an uploaded file in the isolated loader; raises DataValidationError for every problem.

    The bytes go to a temporary file with a fixed name and the upload's
    (validated) extension, so no part of a user's file name reaches the file
    system. Not cached: the record lives in the session's records.
    """
    from nlid_core.guard import load_record_guarded  # noqa: PLC0415 (the isolated loader; imports a worker pool)

    ext = upload_extension(filename)
    name = upload_record_name(filename)
    shown = plain(filename, 120)
    with tempfile.TemporaryDirectory(prefix="nlid-upload-") as tmp:
        path = Path(tmp) / f"upload{ext}"
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise DataValidationError(f"the upload could not be stored for reading ({exc.strerror})") from None
        try:
            rec = load_record_guarded(path, columns=columns or None, units=units or None, name=name, fs=fs,
                                      rows=rows or None)
        except DataValidationError as exc:
            raise DataValidationError(_for_the_page(str(exc), path, shown)) from None
    warnings = tuple(_for_the_page(w, path, shown) for w in rec.warnings)
    return dataclasses.replace(rec, source=f"upload:{shown}", warnings=warnings)


# --------------------------------------------------------------------------- small fixed results
@st.cache_data(max_entries=4, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def example(name: str) -> Record:
    """An example record with a known answer (simulated once per process)."""
    return make_example(name)


def silverbox_path() -> Path | None:
    """The Silverbox benchmark CSV when it is available beside the checkout (or via NLID_SHARED_DATA)."""
    env = os.environ.get("NLID_SHARED_DATA")
    base = Path(env) if env else REPO.parent / "shared" / "data"
    path = base / "silverbox" / "SNLS80mV.csv"
    return path if path.is_file() else None


@st.cache_data(max_entries=1, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def silverbox() -> tuple[Record, Record]:
    """Silverbox training part and multisine test part (standard split), in volts."""
    path = silverbox_path()
    if path is None:
        raise FileNotFoundError("the Silverbox data is not available on this server")
    common = {"columns": "f=V1,x=V2", "units": "f=V,x=V", "fs": SILVERBOX_FS}
    train = load_record(path, rows="40650:105712", name="silverbox-train", **common)  # type: ignore[arg-type]
    test = load_record(path, rows="105712:127400", name="silverbox-test", **common)  # type: ignore[arg-type]
    return train, test


# --------------------------------------------------------------------------- record-sized results (byte-bounded)
def derived(key: str, method: str, rec: Record) -> Record:
    """``rec`` with missing v, a derived (``key`` is :func:`record_key` of ``rec``)."""
    return shared_cache().get_or_compute(("derived", key, method), lambda: derive_missing(rec, method=method))


def derived_from_x(key: str, method: str, rec: Record) -> Record:
    """``rec`` with v and a both re-derived from x (to compare with measured ones)."""
    return shared_cache().get_or_compute(
        ("derived_from_x", key, method),
        lambda: derive_missing(rec.replace(v=None, a=None, derived=()), method=method))


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The nonlinearity evidence of one record (what the Nonlinearity page shows)."""

    summary: tuple[str, ...]
    spectrum: nonlinearity.Spectrum
    harmonics: nonlinearity.HarmonicAnalysis
    spectrogram: nonlinearity.Spectrogram
    restoring: nonlinearity.RestoringForce
    check: nonlinearity.LinearCheck
    band: tuple[float, float]


def _evidence(rec: Record) -> Evidence:
    harmonics = nonlinearity.harmonic_distortion(rec)
    check = nonlinearity.linear_fit_check(rec)
    return Evidence(
        summary=tuple(nonlinearity.evidence_summary(rec, harmonics=harmonics, check=check)),
        spectrum=nonlinearity.spectrum(rec),
        harmonics=harmonics,
        spectrogram=nonlinearity.spectrogram(rec, channel="x"),
        restoring=nonlinearity.restoring_force(rec),
        check=check,
        band=nonlinearity.excitation_band(rec),
    )


def evidence(key: str, rec: Record) -> Evidence:
    """Harmonics, spectra, restoring force and linear-fit check of ``rec`` (``key``: its :func:`record_key`)."""
    return shared_cache().get_or_compute(("evidence", key), lambda: _evidence(rec))
