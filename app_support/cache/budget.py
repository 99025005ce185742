"""A thread-safe least-recently-used cache bounded by the bytes of its entries, and how entries are sized."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from nlid_core.record import CHANNELS, Record

#: Bytes charged per entry on top of its arrays (keys, small objects).
ENTRY_OVERHEAD = 1024
#: After dropping at least this many bytes, freed heap memory is handed back to the OS.
TRIM_AFTER_BYTES = 32 * 2**20

T = TypeVar("T")


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
