"""Cached wrappers around :mod:`nlid_core` calls (pure computations only).

``st.cache_data`` hashes its arguments; records are passed with a leading
underscore (not hashed) next to an explicit content key, which is cheaper
than hashing arrays of a million samples on every rerun.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

from nlid_core.examples import make_example
from nlid_core.io import load_record
from nlid_core.record import CHANNELS, Record
from nlid_core.signals import derive_missing

SILVERBOX_FS = 1e7 / 2**14
REPO = Path(__file__).resolve().parents[1]


def record_key(rec: Record) -> str:
    """Content hash of a record (channels, units, name)."""
    h = hashlib.sha1()
    for c in CHANNELS:
        arr = getattr(rec, c)
        if arr is not None:
            h.update(c.encode())
            h.update(np.ascontiguousarray(arr).tobytes())
    h.update(repr(sorted(rec.units.items())).encode())
    h.update(rec.name.encode())
    return h.hexdigest()


@st.cache_data(max_entries=16, show_spinner=False)
def load_uploaded(data: bytes, filename: str, columns: str, units: str, fs: float | None, rows: str) -> Record:
    """Parse an uploaded file (bytes) into a validated record; raises DataValidationError."""
    suffix = Path(filename).suffix or ".csv"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{Path(filename).stem}{suffix}"
        path.write_bytes(data)
        rec = load_record(path, columns=columns or None, units=units or None, fs=fs, rows=rows or None)
    return rec.replace(source=filename)


@st.cache_data(max_entries=8, show_spinner=False)
def example(name: str) -> Record:
    """An example record with a known answer (simulated once per process)."""
    return make_example(name)


def silverbox_path() -> Path | None:
    """The Silverbox benchmark CSV when it is available beside the checkout (or via NLID_SHARED_DATA)."""
    env = os.environ.get("NLID_SHARED_DATA")
    base = Path(env) if env else REPO.parent / "shared" / "data"
    path = base / "silverbox" / "SNLS80mV.csv"
    return path if path.is_file() else None


@st.cache_data(max_entries=2, show_spinner=False)
def silverbox() -> tuple[Record, Record]:
    """Silverbox training part and multisine test part (standard split), in volts."""
    path = silverbox_path()
    if path is None:
        raise FileNotFoundError("the Silverbox data is not available on this server")
    common = {"columns": "f=V1,x=V2", "units": "f=V,x=V", "fs": SILVERBOX_FS}
    train = load_record(path, rows="40650:105712", name="silverbox-train", **common)  # type: ignore[arg-type]
    test = load_record(path, rows="105712:127400", name="silverbox-test", **common)  # type: ignore[arg-type]
    return train, test


@st.cache_data(max_entries=16, show_spinner=False)
def derived(key: str, method: str, _rec: Record) -> Record:
    """``_rec`` with missing v, a derived (cached by the record's content key)."""
    return derive_missing(_rec, method=method)


@st.cache_data(max_entries=16, show_spinner=False)
def derived_from_x(key: str, method: str, _rec: Record) -> Record:
    """``_rec`` with v and a both re-derived from x (to compare with measured ones)."""
    return derive_missing(_rec.replace(v=None, a=None, derived=()), method=method)
