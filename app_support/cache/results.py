"""Cached results of core calls: small fixed records (``st.cache_data``) and record-sized results
(derived channels, nonlinearity evidence) in the shared byte-bounded cache."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from nlid_core import nonlinearity
from nlid_core.examples import make_example
from nlid_core.io import load_record
from nlid_core.record import Record
from nlid_core.signals import derive_missing

from ..evidence import Evidence, compute_evidence
from .housekeeping import shared_cache

_MISSING = object()

SILVERBOX_FS = 1e7 / 2**14
REPO = Path(__file__).resolve().parents[2]
#: Time-to-live of the ``st.cache_data`` caches (seconds).
CACHE_DATA_TTL_S = 30 * 60


@st.cache_data(max_entries=4, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def example(name: str) -> Record:
    """An example record with a known answer (simulated once per process)."""
    return make_example(name)


#: Rows of the standard Silverbox split (data README): training, multisine test, arrow test.
SILVERBOX_ROWS: tuple[tuple[int, int], ...] = ((40650, 105712), (105712, 127400), (100, 40575))


def silverbox_path() -> Path | None:
    """The Silverbox benchmark CSV when it is available beside the checkout (or via NLID_SHARED_DATA)."""
    env = os.environ.get("NLID_SHARED_DATA")
    base = Path(env) if env else REPO.parent / "shared" / "data"
    path = base / "silverbox" / "SNLS80mV.csv"
    return path if path.is_file() else None


@st.cache_data(max_entries=1, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def silverbox() -> tuple[Record, Record, Record]:
    """Silverbox training part, multisine test part and arrow test part (standard split), in volts."""
    path = silverbox_path()
    if path is None:
        raise FileNotFoundError("the Silverbox data is not available on this server")
    common = {"columns": "f=V1,x=V2", "units": "f=V,x=V", "fs": SILVERBOX_FS}
    return tuple(load_record(path, rows=f"{a}:{b}", name=name, **common)  # type: ignore[arg-type,return-value]
                 for name, (a, b) in zip(("silverbox-train", "silverbox-test", "silverbox-arrow"), SILVERBOX_ROWS,
                                         strict=True))


def derived(key: str, method: str, rec: Record) -> Record:
    """``rec`` with missing v, a derived (``key`` is :func:`record_key` of ``rec``)."""
    return shared_cache().get_or_compute(("derived", key, method), lambda: derive_missing(rec, method=method))


def derived_from_x(key: str, method: str, rec: Record) -> Record:
    """``rec`` with v and a both re-derived from x (to compare with measured ones)."""
    return shared_cache().get_or_compute(
        ("derived_from_x", key, method),
        lambda: derive_missing(rec.replace(v=None, a=None, derived=()), method=method))


def evidence(key: str, rec: Record, run: Callable[[Record], Evidence] | None = None) -> Evidence:
    """Best linear approximation, harmonics, spectra, restoring force (and its slices), the output-error
    term check and the equation-error check of ``rec`` (``key``: its :func:`record_key`).

    ``run(rec)`` computes it when it is not cached (a page passes one that runs
    :func:`app_support.evidence.compute_evidence` as a job with progress and Cancel); by default it is
    computed here.
    """
    hit = shared_cache().get(("evidence", key), _MISSING)
    if hit is not _MISSING:
        return hit  # type: ignore[no-any-return]
    value = run(rec) if run is not None else compute_evidence(rec)
    shared_cache().put(("evidence", key), value)
    return value


def bla(key: str, rec: Record, period: int | None, transient: int | None, n_segments: int,
        segments: bool = False) -> nonlinearity.BLA:
    """Best linear approximation of ``rec`` with a given period and transient, or by segment averaging over
    ``n_segments`` segments (``key``: its :func:`record_key`); a bad setting raises the core's error."""
    return shared_cache().get_or_compute(("bla", key, period, transient, n_segments, segments),
                                         lambda: nonlinearity.bla(rec, period=period, transient=transient,
                                                                  n_segments=n_segments, segments=segments))
