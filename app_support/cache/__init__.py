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

Modules: ``budget`` (:class:`ByteBudgetCache`, :func:`nbytes_of`),
``housekeeping`` (the shared cache and its housekeeping thread),
``sessions`` (reaping closed browser sessions), ``keys`` (:func:`record_key`),
``uploads`` (accepted uploads and their parsing) and ``results`` (the cached
core calls the pages use).
"""

from __future__ import annotations

from .budget import ENTRY_OVERHEAD, TRIM_AFTER_BYTES, ByteBudgetCache, CacheStats, nbytes_of
from .housekeeping import (
    CACHE_MB_VARIABLE,
    CACHE_TTL_VARIABLE,
    DEFAULT_CACHE_MB,
    DEFAULT_CACHE_TTL_S,
    release_free_memory,
    shared_cache,
)
from .keys import designs_key, record_key
from .results import (
    CACHE_DATA_TTL_S,
    REPO,
    SILVERBOX_FS,
    SILVERBOX_ROWS,
    Evidence,
    derived,
    derived_from_x,
    evidence,
    example,
    silverbox,
    silverbox_path,
)
from .sessions import reap_disconnected_sessions
from .uploads import MAX_NAME_CHARS, UPLOAD_TYPES, load_uploaded, upload_extension, upload_record_name

__all__ = [
    "ByteBudgetCache",
    "CACHE_DATA_TTL_S",
    "CACHE_MB_VARIABLE",
    "CACHE_TTL_VARIABLE",
    "CacheStats",
    "DEFAULT_CACHE_MB",
    "DEFAULT_CACHE_TTL_S",
    "derived",
    "derived_from_x",
    "ENTRY_OVERHEAD",
    "Evidence",
    "evidence",
    "example",
    "load_uploaded",
    "MAX_NAME_CHARS",
    "nbytes_of",
    "reap_disconnected_sessions",
    "record_key",
    "designs_key",
    "release_free_memory",
    "REPO",
    "shared_cache",
    "silverbox",
    "SILVERBOX_FS",
    "SILVERBOX_ROWS",
    "silverbox_path",
    "TRIM_AFTER_BYTES",
    "upload_extension",
    "upload_record_name",
    "UPLOAD_TYPES",
]
