"""The values a study store returns (studies, their records and runs) and the row helpers every query
shares: a study by owner or by a user it is shared with, records stored once per owner by content, the
clock in UTC."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..errors import DataValidationError
from ..record import Record
from .encoding import EncodedRecord, encode_record, validate_name
from .schema import records, shares, studies, study_records

__all__ = ["Study", "StoredRecord", "Run"]


@dataclass(frozen=True, kw_only=True)
class Study:
    """A saved study (its row; records and runs are read separately).

    Attributes
    ----------
    id : int
    owner, name, notes : str
    created, updated : datetime.datetime, UTC
        ``updated`` changes with every write to the study.
    """

    id: int
    owner: str
    name: str
    created: _dt.datetime
    updated: _dt.datetime
    notes: str


@dataclass(frozen=True, kw_only=True)
class StoredRecord:
    """A record as a study lists it, without its samples.

    Attributes
    ----------
    name : str
        Name inside the study.
    record_name : str
        The record's own :attr:`Record.name`.
    sha256 : str
        Content address (:func:`encode_record`).
    n_samples : int
    channels : tuple of str
    fs_hz : float, Hz
    """

    name: str
    record_name: str
    sha256: str
    n_samples: int
    channels: tuple[str, ...]
    fs_hz: float


@dataclass(frozen=True, kw_only=True)
class Run:
    """A saved run: what was asked (``config``) and what came out (``result``).

    Attributes
    ----------
    id, study_id : int
    created : datetime.datetime, UTC
    label : str
    config, result : dict
        Parsed JSON.
    success : bool
    item_key : str or None
        The batch item the run computed (unique within the study), if any.
    """

    id: int
    study_id: int
    created: _dt.datetime
    label: str
    config: dict[str, Any]
    result: dict[str, Any]
    success: bool
    item_key: str | None = None


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def _utc(value: _dt.datetime) -> _dt.datetime:
    """SQLite returns naive datetimes: they are UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)


def _study_from_row(row: sa.Row[Any]) -> Study:
    m = row._mapping
    return Study(id=int(m["id"]), owner=m["owner"], name=m["name"], created=_utc(m["created"]),
                 updated=_utc(m["updated"]), notes=m["notes"])


def _study_row(conn: sa.Connection, owner: str, study_id: int) -> Study:
    if isinstance(study_id, bool) or not isinstance(study_id, int):
        raise DataValidationError(f"`study_id` must be an int; got {type(study_id).__name__}")
    row = conn.execute(sa.select(studies).where(studies.c.id == study_id, studies.c.owner == owner)).first()
    if row is None:
        raise DataValidationError(f"no study with `study_id` {study_id} for owner {owner!r}")
    return _study_from_row(row)


def _readable_row(conn: sa.Connection, user: str, study_id: int) -> Study:
    """The study ``study_id`` if ``user`` owns it or it is shared with them; else "no study" as for a missing one."""
    if isinstance(study_id, bool) or not isinstance(study_id, int):
        raise DataValidationError(f"`study_id` must be an int; got {type(study_id).__name__}")
    granted = sa.select(shares.c.study_id).where(shares.c.grantee == user)
    row = conn.execute(sa.select(studies).where(
        studies.c.id == study_id, sa.or_(studies.c.owner == user, studies.c.id.in_(granted)))).first()
    if row is None:
        raise DataValidationError(f"no study with `study_id` {study_id} for owner {user!r}")
    return _study_from_row(row)


def _name_taken(conn: sa.Connection, owner: str, name: str) -> bool:
    q = sa.select(studies.c.id).where(studies.c.owner == owner, studies.c.name == name)
    return conn.execute(q).first() is not None


def _touch(conn: sa.Connection, study_id: int) -> None:
    conn.execute(sa.update(studies).where(studies.c.id == study_id).values(updated=_now()))


def _put_record(conn: sa.Connection, owner: str, enc: EncodedRecord, record: Record) -> int:
    """Id of the owner's record with this content, inserting it if new."""
    q = sa.select(records.c.id).where(records.c.owner == owner, records.c.sha256 == enc.sha256)
    found = conn.execute(q).scalar()
    if found is not None:
        return int(found)
    res = conn.execute(sa.insert(records).values(
        owner=owner, sha256=enc.sha256, name=record.name, n_samples=record.n,
        channels=json.dumps(list(record.channels)), fs_hz=float(record.fs), meta_json=enc.meta_json,
        parquet=enc.parquet, created=_now()))
    pk = res.inserted_primary_key
    assert pk is not None
    return int(pk[0])


def _insert_records(conn: sa.Connection, owner: str, study_id: int,
                    named: Sequence[tuple[str, EncodedRecord, Record]]) -> None:
    taken = set(conn.execute(sa.select(study_records.c.name).where(study_records.c.study_id == study_id)).scalars())
    for name, enc, rec in named:
        if name in taken:
            raise DataValidationError(f"the study already has a record named {name!r} (`records`)")
        taken.add(name)
        rid = _put_record(conn, owner, enc, rec)
        conn.execute(sa.insert(study_records).values(study_id=study_id, name=name, record_id=rid, owner=owner))


def _prepare_records(recs: Mapping[str, Record] | Sequence[Record] | None) -> list[tuple[str, EncodedRecord, Record]]:
    """Validate names and encode outside the transaction (encoding is the slow part)."""
    if recs is None:
        return []
    items = list(recs.items()) if isinstance(recs, Mapping) else [(r.name, r) for r in recs]
    out: list[tuple[str, EncodedRecord, Record]] = []
    seen: set[str] = set()
    for name, rec in items:
        if not isinstance(rec, Record):
            raise DataValidationError(f"`records` must hold Record objects; got {type(rec).__name__}")
        validate_name(name, "records")
        if name in seen:
            raise DataValidationError(f"`records` names {name!r} twice")
        seen.add(name)
        out.append((name, encode_record(rec), rec))
    return out


def _run_from_row(row: sa.Row[Any]) -> Run:
    m = row._mapping
    return Run(id=int(m["id"]), study_id=int(m["study_id"]), created=_utc(m["created"]), label=m["label"],
               config=json.loads(m["config_json"]), result=json.loads(m["result_json"]), success=bool(m["success"]),
               item_key=m["item_key"])
