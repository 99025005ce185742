"""Studies, their records and their runs: the queries of the study store.

A study belongs to one ``owner`` and holds records (by a name inside the
study) and runs (a configuration and a result, both JSON). Every function
takes the engineer and filters on it: a study of another owner is reported
exactly as a study that does not exist, by name or by id, so nobody learns
what others hold by guessing. An owner may share a study with another
engineer (:func:`share_study`); the grantee then finds it in
:func:`list_studies` and may read it (:func:`get_study`, :func:`list_records`,
:func:`load_record`, :func:`list_runs`, :func:`compare_runs`, export), but
every write (rename, notes, records, runs, sharing, deletion) stays the
owner's. Every write is one transaction
(:meth:`Store.write <nlid_core.store.db.Store.write>`): it happens whole or
not at all, also when the process is killed in the middle.

Records are content-addressed (:func:`encode_record`): the same data added to
ten studies is stored once; a record no study references any more is removed
with the last reference.

Names
-----
Owners: 1–64 characters of ``A-Z a-z 0-9 _ . @ -``. Study, record and run
names: 1–100 characters, letters (any script), digits, space and
``_ . - + ( ) , = #``, starting with a letter or digit, no leading or
trailing space. Bad names raise :class:`~nlid_core.errors.DataValidationError`
naming the argument.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from ..errors import DataValidationError
from ..record import Record
from .db import Store
from .encoding import (
    EncodedRecord, _validate_notes, decode_record, encode_record, record_from_channels, to_json, validate_name,
    validate_owner
)
from .rows import (
    Run, StoredRecord, Study, _insert_records, _name_taken, _now, _prepare_records, _readable_row, _study_from_row,
    _study_row, _touch
)
from .schema import records, runs, shares, studies, study_records
from .study_runs import (
    _insert_run, _prepare_run, add_item_runs, add_run, compare_runs, list_runs, run_item_keys, update_run_result,
    validate_item_key
)

__all__ = [
    "Study",
    "StoredRecord",
    "Run",
    "EncodedRecord",
    "validate_owner",
    "validate_name",
    "validate_item_key",
    "to_json",
    "encode_record",
    "decode_record",
    "record_from_channels",
    "create_study",
    "list_studies",
    "open_study",
    "get_study",
    "rename_study",
    "set_notes",
    "duplicate_study",
    "delete_study",
    "add_records",
    "list_records",
    "load_record",
    "load_records",
    "add_run",
    "update_run_result",
    "add_item_runs",
    "list_runs",
    "run_item_keys",
    "share_study",
    "unshare_study",
    "list_shares",
    "compare_runs",
]


# ----------------------------------------------------------------------------- validation


# ----------------------------------------------------------------------------- records


def _gc_records(conn: sa.Connection, owner: str) -> None:
    """Remove the owner's records no study references."""
    used = sa.select(study_records.c.record_id).where(study_records.c.owner == owner)
    conn.execute(sa.delete(records).where(records.c.owner == owner, records.c.id.not_in(used)))


# ----------------------------------------------------------------------------- studies


def create_study(
    store: Store,
    owner: str,
    name: str,
    *,
    notes: str = "",
    records: Mapping[str, Record] | Sequence[Record] | None = None,
    runs: Sequence[Mapping[str, Any]] = (),
) -> Study:
    """Create a study, with its first records and runs, in one transaction.

    Parameters
    ----------
    store : Store
    owner, name : str
        ``name`` must be new for ``owner``.
    notes : str
    records : mapping of str to Record, sequence of Record, or None
        By name inside the study (a sequence uses each ``Record.name``).
    runs : sequence of mapping
        Each with keys ``label``, ``config``, ``result`` and optionally
        ``success`` (see :func:`add_run`).

    Returns
    -------
    Study

    Raises
    ------
    DataValidationError
        An invalid owner, name, record name or run; ``name`` already used
        by ``owner``. Nothing is written then.
    """
    validate_owner(owner)
    validate_name(name)
    _validate_notes(notes)
    named = _prepare_records(records)
    run_rows = [_prepare_run(str(r.get("label", "")), r.get("config", {}), r.get("result"), r.get("success"))
                for r in runs]
    with store.write() as conn:
        if _name_taken(conn, owner, name):
            raise DataValidationError(f"owner {owner!r} already has a study named {name!r} (`name`)")
        now = _now()
        res = conn.execute(sa.insert(studies).values(owner=owner, name=name, created=now, updated=now, notes=notes))
        pk = res.inserted_primary_key
        assert pk is not None
        sid = int(pk[0])
        _insert_records(conn, owner, sid, named)
        for rr in run_rows:
            _insert_run(conn, owner, sid, rr)
        return _study_row(conn, owner, sid)


def list_studies(store: Store, owner: str) -> tuple[Study, ...]:
    """The studies of ``owner``, then those shared with them, each most recently updated first."""
    validate_owner(owner)
    with store.read() as conn:
        rows = list(conn.execute(sa.select(studies).where(studies.c.owner == owner)
                                 .order_by(studies.c.updated.desc(), studies.c.id.desc())).all())
        granted = sa.select(shares.c.study_id).where(shares.c.grantee == owner)
        rows += conn.execute(sa.select(studies).where(studies.c.id.in_(granted), studies.c.owner != owner)
                             .order_by(studies.c.updated.desc(), studies.c.id.desc())).all()
    return tuple(_study_from_row(r) for r in rows)


def open_study(store: Store, owner: str, name: str) -> Study:
    """The study of ``owner`` named ``name``; raise :class:`DataValidationError` when there is none."""
    validate_owner(owner)
    validate_name(name)
    with store.read() as conn:
        row = conn.execute(sa.select(studies).where(studies.c.owner == owner, studies.c.name == name)).first()
    if row is None:
        raise DataValidationError(f"owner {owner!r} has no study named {name!r} (`name`)")
    return _study_from_row(row)


def get_study(store: Store, owner: str, study_id: int) -> Study:
    """The study ``study_id`` of ``owner`` or shared with them; any other study is reported as missing."""
    validate_owner(owner)
    with store.read() as conn:
        return _readable_row(conn, owner, study_id)


def rename_study(store: Store, owner: str, study_id: int, new_name: str) -> Study:
    """Rename a study; ``new_name`` must be free for ``owner``."""
    validate_owner(owner)
    validate_name(new_name, "new_name")
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        if new_name != st.name and _name_taken(conn, owner, new_name):
            raise DataValidationError(f"owner {owner!r} already has a study named {new_name!r} (`new_name`)")
        conn.execute(sa.update(studies).where(studies.c.id == st.id).values(name=new_name, updated=_now()))
        return _study_row(conn, owner, st.id)


def set_notes(store: Store, owner: str, study_id: int, notes: str) -> Study:
    """Replace the notes of a study."""
    validate_owner(owner)
    _validate_notes(notes)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        conn.execute(sa.update(studies).where(studies.c.id == st.id).values(notes=notes, updated=_now()))
        return _study_row(conn, owner, st.id)


def duplicate_study(store: Store, owner: str, study_id: int, new_name: str) -> Study:
    """Copy a study (records by reference, runs as new rows) under ``new_name``, in one transaction."""
    validate_owner(owner)
    validate_name(new_name, "new_name")
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        if _name_taken(conn, owner, new_name):
            raise DataValidationError(f"owner {owner!r} already has a study named {new_name!r} (`new_name`)")
        now = _now()
        res = conn.execute(sa.insert(studies).values(owner=owner, name=new_name, created=now, updated=now,
                                                     notes=st.notes))
        pk = res.inserted_primary_key
        assert pk is not None
        new_id = int(pk[0])
        links = conn.execute(sa.select(study_records.c.name, study_records.c.record_id)
                             .where(study_records.c.study_id == st.id)).all()
        for ln in links:
            conn.execute(sa.insert(study_records).values(study_id=new_id, name=ln.name, record_id=ln.record_id,
                                                         owner=owner))
        old_runs = conn.execute(sa.select(runs).where(runs.c.study_id == st.id).order_by(runs.c.id)).all()
        for r in old_runs:
            m = r._mapping
            conn.execute(sa.insert(runs).values(study_id=new_id, owner=owner, created=m["created"], label=m["label"],
                                                config_json=m["config_json"], result_json=m["result_json"],
                                                success=m["success"], item_key=m["item_key"]))
        return _study_row(conn, owner, new_id)


def delete_study(store: Store, owner: str, study_id: int, *, confirm: str) -> None:
    """Delete a study with its runs (and records no other study uses); ``confirm`` must repeat its name.

    Raises
    ------
    DataValidationError
        No such study for ``owner``, or ``confirm`` is not the study's name
        (nothing is deleted then).
    """
    validate_owner(owner)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        if confirm != st.name:
            raise DataValidationError(
                f"`confirm` must repeat the study name {st.name!r} to delete it; got {confirm!r:.120}")
        conn.execute(sa.delete(runs).where(runs.c.study_id == st.id))
        conn.execute(sa.delete(shares).where(shares.c.study_id == st.id))
        conn.execute(sa.delete(study_records).where(study_records.c.study_id == st.id))
        conn.execute(sa.delete(studies).where(studies.c.id == st.id))
        _gc_records(conn, owner)


# ----------------------------------------------------------------------------- records of a study


def add_records(store: Store, owner: str, study_id: int,
                records: Mapping[str, Record] | Sequence[Record]) -> tuple[StoredRecord, ...]:
    """Add records to a study in one transaction (data already stored by the owner is reused).

    Parameters
    ----------
    records : mapping of str to Record or sequence of Record
        By name inside the study; names must be new in the study.

    Returns
    -------
    tuple of StoredRecord
        Every record of the study after the addition.
    """
    validate_owner(owner)
    named = _prepare_records(records)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        _insert_records(conn, owner, st.id, named)
        _touch(conn, st.id)
    return list_records(store, owner, study_id)


def list_records(store: Store, owner: str, study_id: int) -> tuple[StoredRecord, ...]:
    """The records of a study (no samples), by name."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        rows = conn.execute(
            sa.select(study_records.c.name, records.c.name.label("record_name"), records.c.sha256,
                      records.c.n_samples, records.c.channels, records.c.fs_hz)
            .join(records, records.c.id == study_records.c.record_id)
            .where(study_records.c.study_id == st.id, records.c.owner == st.owner)
            .order_by(study_records.c.name)).all()
    return tuple(StoredRecord(name=r.name, record_name=r.record_name, sha256=r.sha256, n_samples=int(r.n_samples),
                              channels=tuple(json.loads(r.channels)), fs_hz=float(r.fs_hz)) for r in rows)


def load_record(store: Store, owner: str, study_id: int, name: str) -> Record:
    """The record ``name`` of a study, rebuilt and validated."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        row = conn.execute(
            sa.select(records.c.parquet, records.c.meta_json)
            .join(study_records, records.c.id == study_records.c.record_id)
            .where(study_records.c.study_id == st.id, study_records.c.name == name,
                   records.c.owner == st.owner)).first()
    if row is None:
        raise DataValidationError(f"study {st.name!r} has no record named {name!r} (`name`)")
    return decode_record(bytes(row.parquet), row.meta_json)


def load_records(store: Store, owner: str, study_id: int) -> dict[str, Record]:
    """Every record of a study, by name inside the study."""
    return {r.name: load_record(store, owner, study_id, r.name) for r in list_records(store, owner, study_id)}


# ----------------------------------------------------------------------------- runs


# ----------------------------------------------------------------------------- sharing


def share_study(store: Store, owner: str, study_id: int, grantee: str) -> tuple[str, ...]:
    """Let ``grantee`` read the owner's study; returns everyone it is shared with.

    Raises
    ------
    DataValidationError
        Not the owner's study; a bad grantee name, or the owner themself.
    """
    validate_owner(owner)
    validate_owner(grantee)
    if grantee == owner:
        raise DataValidationError(f"`grantee` {grantee!r} owns the study already")
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        known = conn.execute(sa.select(shares.c.grantee).where(shares.c.study_id == st.id,
                                                               shares.c.grantee == grantee)).first()
        if known is None:
            conn.execute(sa.insert(shares).values(study_id=st.id, grantee=grantee, owner=owner, created=_now()))
            _touch(conn, st.id)
    return list_shares(store, owner, study_id)


def unshare_study(store: Store, owner: str, study_id: int, grantee: str) -> tuple[str, ...]:
    """Stop sharing the owner's study with ``grantee`` (no error if it was not shared); returns who remains."""
    validate_owner(owner)
    validate_owner(grantee)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        conn.execute(sa.delete(shares).where(shares.c.study_id == st.id, shares.c.grantee == grantee))
    return list_shares(store, owner, study_id)


def list_shares(store: Store, owner: str, study_id: int) -> tuple[str, ...]:
    """The engineers the owner's study is shared with, sorted."""
    validate_owner(owner)
    with store.read() as conn:
        st = _study_row(conn, owner, study_id)
        names = conn.execute(sa.select(shares.c.grantee).where(shares.c.study_id == st.id)
                             .order_by(shares.c.grantee)).scalars().all()
    return tuple(str(n) for n in names)


