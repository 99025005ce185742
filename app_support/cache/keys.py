"""Session-independent content keys of records (remembered per record object while it lives) and of
the inputs of a design comparison."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from nlid_core.record import CHANNELS, Record

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


def designs_key(terms: Sequence[str], values: Mapping[str, float], noise_sd: float,
                candidates: Sequence[tuple[str, np.ndarray]]) -> str:
    """Content hash of a design comparison's inputs: the prior model (terms, values), the noise level and
    every candidate's label and force (a kept prediction is reused only for the same inputs)."""
    h = hashlib.sha1(repr((tuple(terms), sorted(values.items()), float(noise_sd))).encode())
    for label, force in candidates:
        h.update(label.encode())
        h.update(np.ascontiguousarray(force).tobytes())
    return h.hexdigest()
