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

import datetime as _dt
import hashlib
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sqlalchemy as sa

from ..errors import DataValidationError
from ..jsonsafe import json_safe
from ..record import Record, from_channels
from .db import Store
from .schema import MAX_ITEM_KEY_LENGTH, MAX_NAME_LENGTH, MAX_OWNER_LENGTH, records, runs, shares, studies, study_records

if TYPE_CHECKING:
    import pandas as pd

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

_OWNER_RE = re.compile(r"[A-Za-z0-9_.@-]+")
_NAME_CHARS = re.compile(r"[\w .+(),=#-]+")
_MAX_NOTES = 100_000


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


@dataclass(frozen=True, kw_only=True)
class EncodedRecord:
    """The canonical stored form of a record.

    Attributes
    ----------
    sha256 : str
        ``sha256(parquet + b"\\0" + meta_json)``, hex.
    parquet : bytes
        The channels as one Parquet table, float64 columns in canonical order.
    meta_json : str
        Canonical JSON (sorted keys, no NaN) of name, units, derived, source,
        warnings and meta.
    """

    sha256: str
    parquet: bytes
    meta_json: str


# ----------------------------------------------------------------------------- validation


def validate_owner(owner: str) -> str:
    """Return ``owner`` if it is a valid owner name, else raise :class:`DataValidationError`."""
    if not isinstance(owner, str) or not 1 <= len(owner) <= MAX_OWNER_LENGTH or not _OWNER_RE.fullmatch(owner):
        raise DataValidationError(
            f"`owner` must be 1-{MAX_OWNER_LENGTH} characters of letters, digits, '_', '.', '@', '-'; "
            f"got {owner!r:.80}")
    return owner


def validate_name(name: str, argument: str = "name") -> str:
    """Return ``name`` if it is a valid study/record/run name, else raise naming ``argument``."""
    if not isinstance(name, str):
        raise DataValidationError(f"`{argument}` must be a string; got {type(name).__name__}")
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise DataValidationError(f"`{argument}` must be 1-{MAX_NAME_LENGTH} characters; got {len(name)}")
    if not _NAME_CHARS.fullmatch(name) or not name[0].isalnum() or name != name.strip():
        raise DataValidationError(
            f"`{argument}` may hold letters, digits, spaces and _ . - + ( ) , = # and must start with a letter or "
            f"digit; got {name!r}")
    return name


def _validate_notes(notes: str) -> str:
    if not isinstance(notes, str) or len(notes) > _MAX_NOTES:
        raise DataValidationError(f"`notes` must be a string of at most {_MAX_NOTES} characters")
    return notes


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(type(obj).__name__)


def to_json(value: Any, argument: str) -> str:
    """Canonical strict JSON of ``value`` (sorted keys, NaN/inf as null); raise naming ``argument``."""
    try:
        plain = json.loads(json.dumps(value, default=_json_default))
        return json.dumps(json_safe(plain), sort_keys=True, separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"`{argument}` is not JSON-serialisable: {exc}") from None


# ----------------------------------------------------------------------------- records


def encode_record(record: Record) -> EncodedRecord:
    """The canonical Parquet bytes, metadata JSON and content address of ``record``.

    Parameters
    ----------
    record : Record

    Returns
    -------
    EncodedRecord

    Raises
    ------
    DataValidationError
        A ``record.meta`` that cannot be written as JSON.

    Notes
    -----
    The Parquet table has one float64 column per channel, in the record's
    canonical channel order, written uncompressed-dictionary-free with
    statistics off, so equal records give equal bytes with one pyarrow
    version. Bytes (and so hashes) may differ between pyarrow versions: the
    same data is then stored twice, never confused.
    """
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    cols = record.to_dict()
    table = pa.table({c: pa.array(np.ascontiguousarray(v, dtype=np.float64)) for c, v in cols.items()})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=False, write_statistics=False,
                   store_schema=False)
    parquet = buf.getvalue()
    meta = {
        "name": record.name,
        "units": dict(record.channel_units),
        "derived": list(record.derived),
        "source": record.source,
        "warnings": list(record.warnings),
        "meta": dict(record.meta),
    }
    meta_json = to_json(meta, "record.meta")
    sha = hashlib.sha256(parquet + b"\0" + meta_json.encode("utf-8")).hexdigest()
    return EncodedRecord(sha256=sha, parquet=parquet, meta_json=meta_json)


def decode_record(parquet: bytes, meta_json: str) -> Record:
    """Rebuild (and validate) a :class:`Record` from its stored form (bytes this store wrote).

    Parquet from outside (an imported archive) is never decoded here but in
    the isolated, bounded reader of :mod:`nlid_core.guard` (see
    :mod:`nlid_core.store.archive`).

    Raises
    ------
    DataValidationError
        Bytes that are not a Parquet table of float64 channels, metadata
        that is not the JSON :func:`encode_record` writes, or a record that
        does not validate.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(parquet))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataValidationError(f"stored record is not a readable Parquet table: {exc}") from None
    for fld in table.schema:
        if fld.type != pa.float64():
            raise DataValidationError(f"stored record column `{fld.name}` is {fld.type}, not float64")
    return record_from_channels({c: table.column(c).to_numpy() for c in table.column_names}, meta_json)


def record_from_channels(channels: Mapping[str, Any], meta_json: str) -> Record:
    """Rebuild (and validate) a :class:`Record` from its channels and the metadata JSON of :func:`encode_record`.

    Raises
    ------
    DataValidationError
        Metadata that is not that JSON, or a record that does not validate.
    """
    try:
        meta = json.loads(meta_json)
    except ValueError as exc:
        raise DataValidationError(f"stored record metadata is not JSON: {exc}") from None
    expected = {"name": str, "units": dict, "derived": list, "source": str, "warnings": list, "meta": dict}
    if not isinstance(meta, dict) or set(meta) != set(expected) or any(
            not isinstance(meta[k], t) for k, t in expected.items()):
        raise DataValidationError(f"stored record metadata must have exactly the keys {sorted(expected)}")
    return from_channels(
        channels, name=meta["name"], units={str(k): str(v) for k, v in meta["units"].items()},
        derived=tuple(str(d) for d in meta["derived"]), source=meta["source"],
        warnings=tuple(str(w) for w in meta["warnings"]), meta=meta["meta"])


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


@dataclass(frozen=True, kw_only=True)
class _RunRow:
    label: str
    config_json: str
    result_json: str
    success: bool
    created: _dt.datetime
    item_key: str | None = None


def validate_item_key(item_key: str | None) -> str | None:
    """``item_key`` checked: None, or 1–200 printable characters."""
    if item_key is None:
        return None
    if not isinstance(item_key, str) or not 0 < len(item_key) <= MAX_ITEM_KEY_LENGTH or not item_key.isprintable():
        raise DataValidationError(
            f"`item_key` must be 1-{MAX_ITEM_KEY_LENGTH} printable characters; got {item_key!r:.80}")
    return item_key


def _prepare_run(label: str, config: Mapping[str, Any], result: Any, success: bool | None,
                 created: _dt.datetime | None = None, item_key: str | None = None) -> _RunRow:
    validate_name(label, "label")
    validate_item_key(item_key)
    if not isinstance(config, Mapping):
        raise DataValidationError(f"`config` must be a mapping; got {type(config).__name__}")
    from ..estimate import FitResult

    if isinstance(result, FitResult):
        from ..report import result_to_dict

        doc = result_to_dict(result)
        ok = bool(result.success) if success is None else bool(success)
    elif isinstance(result, Mapping):
        doc = dict(result)
        ok = bool(doc.get("success", False)) if success is None else bool(success)
    else:
        raise DataValidationError(f"`result` must be a FitResult or a mapping; got {type(result).__name__}")
    return _RunRow(label=label, config_json=to_json(dict(config), "config"), result_json=to_json(doc, "result"),
                   success=ok, created=created or _now(), item_key=item_key)


def _insert_run(conn: sa.Connection, owner: str, study_id: int, run: _RunRow) -> int:
    res = conn.execute(sa.insert(runs).values(
        study_id=study_id, owner=owner, created=run.created, label=run.label, config_json=run.config_json,
        result_json=run.result_json, success=run.success, item_key=run.item_key))
    pk = res.inserted_primary_key
    assert pk is not None
    return int(pk[0])


def _insert_runs(conn: sa.Connection, owner: str, study_id: int, rows: Sequence[_RunRow]) -> None:
    """Insert many runs in one statement per batch of 1000 (an executemany: an archive of 1e5 runs is
    imported in seconds, not one round trip per run)."""
    for start in range(0, len(rows), 1000):
        conn.execute(sa.insert(runs), [
            {"study_id": study_id, "owner": owner, "created": r.created, "label": r.label, "config_json": r.config_json,
             "result_json": r.result_json, "success": r.success, "item_key": r.item_key}
            for r in rows[start:start + 1000]])


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


def add_run(store: Store, owner: str, study_id: int, *, label: str, config: Mapping[str, Any],
            result: Any, success: bool | None = None, item_key: str | None = None,
            records: Mapping[str, Record] | Sequence[Record] | None = None) -> Run:
    """Save a run of a study.

    Parameters
    ----------
    label : str
        A name for the run (validated like study names; need not be unique).
    config : mapping
        What was run (terms, options, record names, ...); JSON-serialisable.
    result : FitResult or mapping
        A :class:`~nlid_core.estimate.FitResult` is written with
        :func:`nlid_core.report.result_to_dict`; a mapping as it is.
    success : bool or None
        Default: the result's ``success``.
    item_key : str or None
        The batch item this run computed: at most one run per key and study
        (:func:`run_item_keys` lists them, so a resumed batch skips them).
    records : mapping of str to Record, sequence of Record, or None
        Records to add to the study with the run, in the same transaction
        (names must be new in the study, as for :func:`add_records`): a
        crash leaves either both or neither.

    Returns
    -------
    Run

    Raises
    ------
    DataValidationError
        Not the owner's study; a bad label or key; ``item_key`` already
        used in the study (nothing is written then).
    """
    validate_owner(owner)
    row = _prepare_run(label, config, result, success, item_key=item_key)
    named = _prepare_records(records)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        _insert_records(conn, owner, st.id, named)
        if item_key is not None and conn.execute(sa.select(runs.c.id).where(
                runs.c.study_id == st.id, runs.c.item_key == item_key)).first() is not None:
            raise DataValidationError(f"study {st.name!r} already has a run for `item_key` {item_key!r:.80}")
        rid = _insert_run(conn, owner, st.id, row)
        _touch(conn, st.id)
        new = conn.execute(sa.select(runs).where(runs.c.id == rid)).one()
    return _run_from_row(new)


def update_run_result(store: Store, owner: str, study_id: int, run_id: int, result: Any) -> Run:
    """Replace a saved run's result document (e.g. with the validations made since it was saved); its label,
    configuration and success stay.

    Raises
    ------
    DataValidationError
        Not the owner's study, or no such run in it.
    """
    validate_owner(owner)
    old = next((r for r in list_runs(store, owner, study_id) if r.id == run_id), None)
    if old is None:
        raise DataValidationError(f"study #{study_id} has no run #{run_id}")
    row = _prepare_run(old.label, old.config, result, old.success)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        conn.execute(sa.update(runs).where(runs.c.id == run_id, runs.c.study_id == st.id)
                     .values(result_json=row.result_json))
        _touch(conn, st.id)
        new = conn.execute(sa.select(runs).where(runs.c.id == run_id)).one()
    return _run_from_row(new)


def add_item_runs(store: Store, owner: str, study_id: int, items: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Save the runs of several batch items in one transaction; a key the study already holds is skipped.

    One transaction (one disk sync) for a whole chunk of a batch instead of one per item; a crash leaves
    all of the chunk's runs or none.

    Parameters
    ----------
    items : sequence of mapping
        Each with the keywords of :func:`add_run`: ``label``, ``config``, ``result``, ``item_key``
        (required here) and optionally ``success``.

    Returns
    -------
    tuple of str
        The item keys saved now (those already in the study, e.g. stored meanwhile by another run of the
        same batch, are left as they are and not listed).

    Raises
    ------
    DataValidationError
        Not the owner's study; a bad label or key, a missing ``item_key``, a key given twice (nothing is
        written then).
    """
    validate_owner(owner)
    rows: list[_RunRow] = []
    for i, item in enumerate(items):
        key = item.get("item_key")
        if key is None:
            raise DataValidationError(f"item {i}: `item_key` is required")
        rows.append(_prepare_run(item["label"], item["config"], item["result"], item.get("success"), item_key=key))
    keys = [r.item_key for r in rows]
    if len(set(keys)) != len(keys):
        raise DataValidationError("an `item_key` is given twice")
    if not rows:
        return ()
    for attempt in (0, 1):
        try:
            with store.write() as conn:
                st = _study_row(conn, owner, study_id)
                held = set(conn.execute(sa.select(runs.c.item_key).where(
                    runs.c.study_id == st.id, runs.c.item_key.in_(keys))).scalars().all())
                new = [r for r in rows if r.item_key not in held]
                for r in new:
                    _insert_run(conn, owner, st.id, r)
                if new:
                    _touch(conn, st.id)
            return tuple(str(r.item_key) for r in new)
        except sa.exc.IntegrityError:  # another writer stored one of the keys between the check and the insert
            if attempt:
                raise
    raise AssertionError("unreachable")


def run_item_keys(store: Store, owner: str, study_id: int) -> frozenset[str]:
    """The item keys of a study's runs (the batch items already computed)."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        keys = conn.execute(sa.select(runs.c.item_key).where(runs.c.study_id == st.id,
                                                             runs.c.item_key.is_not(None))).scalars().all()
    return frozenset(str(k) for k in keys)


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


def _run_from_row(row: sa.Row[Any]) -> Run:
    m = row._mapping
    return Run(id=int(m["id"]), study_id=int(m["study_id"]), created=_utc(m["created"]), label=m["label"],
               config=json.loads(m["config_json"]), result=json.loads(m["result_json"]), success=bool(m["success"]),
               item_key=m["item_key"])


def list_runs(store: Store, owner: str, study_id: int) -> tuple[Run, ...]:
    """The runs of a study, oldest first."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        rows = conn.execute(sa.select(runs).where(runs.c.study_id == st.id, runs.c.owner == st.owner)
                            .order_by(runs.c.id)).all()
    return tuple(_run_from_row(r) for r in rows)


def compare_runs(store: Store, owner: str, study_id: int, run_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """Parameters per run side by side.

    Returns
    -------
    pandas.DataFrame
        Indexed by run id; columns ``label``, ``success``, ``cost`` and then
        one column per parameter value (``result["parameters"][name]["value"]``,
        NaN where a run lacks it) and ``<name> stderr``.
    """
    import pandas as pd

    all_runs = list_runs(store, owner, study_id)
    if run_ids is not None:
        wanted = list(run_ids)
        known = {r.id for r in all_runs}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise DataValidationError(f"`run_ids` names runs not in the study: {missing}")
        all_runs = tuple(r for r in all_runs if r.id in set(wanted))
    rows: list[dict[str, Any]] = []
    names: dict[str, None] = {}
    for r in all_runs:
        params = r.result.get("parameters", {})
        row: dict[str, Any] = {"label": r.label, "success": r.success,
                               "cost": _num(r.result.get("metrics", {}).get("cost"))}
        if isinstance(params, Mapping):
            for pname, p in params.items():
                names.setdefault(str(pname))
                p = p if isinstance(p, Mapping) else {}
                row[str(pname)] = _num(p.get("value"))
                row[f"{pname} stderr"] = _num(p.get("stderr"))
        rows.append(row)
    cols = ["label", "success", "cost"] + [c for n in names for c in (n, f"{n} stderr")]
    return pd.DataFrame(rows, index=pd.Index([r.id for r in all_runs], name="run"), columns=cols)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")
