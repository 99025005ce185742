"""One-file export of a study, and its guarded import.

Layout of the zip (format ``nlid-study``, version :data:`FORMAT_VERSION`)::

    manifest.json                 {"format", "format_version", "schema_revision",
                                   "members": {path: {"sha256", "size"}}}
    study.json                    {"name", "notes", "created", "updated",
                                   "records": [{"name", "sha256", "meta_json"}]}
    runs.json                     [{"label", "created", "config", "result", "success",
                                    "item_key" (optional)}]
    records/<sha256>.parquet      one per distinct record (the content address)

Nothing else is allowed, and nothing is pickled. An archive to import is an
untrusted upload: :func:`import_study` checks it completely before it writes
anything, and refuses with a specific
:class:`~nlid_core.errors.DataValidationError`:

- more than :data:`MAX_ARCHIVE_BYTES` of zip, more than :data:`MAX_MEMBERS`
  members, a declared or actual uncompressed size above
  :data:`MAX_MEMBER_BYTES` per member (:data:`MAX_JSON_BYTES` for JSON) or :data:`MAX_TOTAL_BYTES` in all, a
  compression ratio above :data:`MAX_RATIO` (zip bombs);
- absolute paths, ``..`` or backslashes, directories, symbolic links,
  encrypted or duplicate members (path traversal);
- a pickle (by name or by content) or any member other than the four
  kinds above; Parquet members that do not start and end with ``PAR1``;
- another format or format version than this version writes, a schema
  revision it does not know (:data:`READABLE_REVISIONS`); a member missing from or not listed in the manifest; a SHA-256
  that does not match; a record whose content address is not its hash.

The database is written (in one transaction) only after every check passed.

References
----------
PKWARE, "APPNOTE.TXT - .ZIP File Format Specification" 6.3.10 (external
attributes carry the Unix mode, hence symlinks);
OWASP, "File Upload Cheat Sheet" (size, type and name checks of uploads).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import re
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from .._checks import too_deep
from ..errors import DataValidationError
from ..limits import budget
from ..record import Record
from .db import Store
from .encoding import EncodedRecord, encode_record, record_from_channels, to_json, validate_name, validate_owner
from .rows import Study, _insert_records, _name_taken, _now, _readable_row, _study_row, _utc
from .schema import SCHEMA_REVISION, records, runs, studies, study_records
from .study_runs import _insert_runs, _RunRow, validate_item_key

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "READABLE_REVISIONS",
    "MAX_ARCHIVE_BYTES",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "MAX_JSON_BYTES",
    "MAX_TOTAL_BYTES",
    "MAX_RATIO",
    "export_study",
    "import_study",
]

#: Value of ``manifest["format"]``.
FORMAT = "nlid-study"
#: Version of the archive layout this module writes and reads.
FORMAT_VERSION = 1
#: Schema revisions whose archives this version imports (the layout has not changed since 0001;
#: revision 0002 added the optional ``item_key`` of runs).
READABLE_REVISIONS = ("0001", SCHEMA_REVISION)
#: Largest zip accepted (bytes).
MAX_ARCHIVE_BYTES = 512 * 2**20
#: Most members accepted (manifest, study, runs and up to this many minus 3 records).
MAX_MEMBERS = 1003
#: Largest uncompressed member (bytes).
MAX_MEMBER_BYTES = 256 * 2**20
#: Largest uncompressed JSON member (bytes): parsed in this process.
MAX_JSON_BYTES = 64 * 2**20
#: Largest uncompressed total (bytes).
MAX_TOTAL_BYTES = 1024 * 2**20
#: Deepest nesting of a JSON member (runs hold results of a few levels).
MAX_JSON_DEPTH = 32
#: Largest uncompressed/compressed size ratio of a member (deflated JSON of typical studies is ~5-20).
MAX_RATIO = 100.0

_RECORD_MEMBER = re.compile(r"records/([0-9a-f]{64})\.parquet")
_FIXED = ("manifest.json", "study.json", "runs.json")
_PICKLE_SUFFIXES = (".pkl", ".pickle", ".p", ".pck", ".pcl", ".joblib", ".npy", ".npz")
_STAMP = (1980, 1, 1, 0, 0, 0)


def _member_bytes(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """Read a member, never more than its declared size plus one byte."""
    try:
        with zf.open(info) as fh:
            data = fh.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise DataValidationError(
            f"study archive member {info.filename!r} cannot be read (corrupt, or its declared size is false): "
            f"{exc}") from None
    if len(data) != info.file_size:
        raise DataValidationError(
            f"study archive member {info.filename!r} holds {len(data)} bytes but declares {info.file_size} "
            "(zip bomb or corrupt archive)")
    return data


def _check_member_name(info: zipfile.ZipInfo) -> None:
    name = info.filename
    mode = (info.external_attr >> 16) & 0xFFFF
    if stat.S_ISLNK(mode):
        raise DataValidationError(f"study archive member {name!r} is a symbolic link; links are refused")
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        raise DataValidationError(f"study archive member {name!r} has an absolute path; refused")
    parts = name.replace("\\", "/").split("/")
    if "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise DataValidationError(f"study archive member {name!r} leaves its folder (path traversal); refused")
    if info.is_dir():
        raise DataValidationError(f"study archive member {name!r} is a directory; refused")
    if info.flag_bits & 0x1:
        raise DataValidationError(f"study archive member {name!r} is encrypted; refused")
    if name.lower().endswith(_PICKLE_SUFFIXES):
        raise DataValidationError(f"study archive member {name!r} is a pickle or numpy file; only Parquet and "
                                  "JSON are accepted")
    if name not in _FIXED and not _RECORD_MEMBER.fullmatch(name):
        raise DataValidationError(
            f"study archive member {name!r} is unknown; allowed are {', '.join(_FIXED)} and "
            "records/<sha256>.parquet")


def _looks_pickled(data: bytes) -> bool:
    return len(data) >= 2 and data[0] == 0x80 and 0 < data[1] <= 5


def _no_constant(token: str) -> Any:
    """``NaN`` and ``Infinity`` are Python's extension, not JSON."""
    raise ValueError(f"{token} is not JSON")


def _json_member(name: str, data: bytes) -> Any:
    if _looks_pickled(data):
        raise DataValidationError(f"study archive member {name!r} is a pickle, not JSON; refused")
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataValidationError(f"study archive member {name!r} is not valid JSON: {str(exc)[:200]}") from None
    path = too_deep(doc, MAX_JSON_DEPTH)
    if path is not None:
        raise DataValidationError(f"study archive member {name!r}: `{path[:120]}` is nested deeper than "
                                  f"{MAX_JSON_DEPTH} levels")
    return doc


def _require(cond: bool, what: str) -> None:
    if not cond:
        raise DataValidationError(f"study archive: {what}")


def _parse_records(parquets: Mapping[str, bytes]) -> dict[str, Record]:
    """Decode untrusted Parquet members in the project's isolated, bounded reader (:mod:`nlid_core.guard`)."""
    if not parquets:
        return {}
    from ..guard import load_records_guarded

    with tempfile.TemporaryDirectory(prefix="nlid-import-") as tmp:
        paths: dict[str, Path] = {}
        for member, data in sorted(parquets.items()):
            path = Path(tmp) / Path(member).name  # records/<sha256>.parquet, checked by _check_member_name
            path.write_bytes(data)
            paths[member] = path
        loaded = load_records_guarded(list(paths.values()))
    return dict(zip(paths, loaded))


def _rebuild(member: str, parsed: Record, meta_json: str) -> Record:
    """The record of ``member`` with the channels of its Parquet table and its metadata."""
    try:
        meta = json.loads(meta_json)
        wanted = list(meta["units"])
    except (ValueError, KeyError, TypeError):
        raise DataValidationError(f"study archive record {member!r}: metadata is not the JSON nlid writes") from None
    measured = set(parsed.channels) - set(parsed.derived)
    if set(wanted) != measured:
        raise DataValidationError(
            f"study archive record {member!r}: table columns {sorted(measured)} do not match the channels "
            f"{sorted(map(str, wanted))} of its metadata")
    return record_from_channels({c: parsed.channel(c) for c in wanted}, meta_json)


# ----------------------------------------------------------------------------- export


def export_study(store: Store, owner: str, study_id: int) -> bytes:
    """The study as one zip (see the module docstring for the layout).

    Returns
    -------
    bytes
        The archive; members are written in a fixed order with fixed
        timestamps, so exporting the same study twice gives the same bytes.
    """
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        recs = conn.execute(
            sa.select(study_records.c.name, records.c.sha256, records.c.meta_json, records.c.parquet)
            .join(records, records.c.id == study_records.c.record_id)
            .where(study_records.c.study_id == st.id, records.c.owner == st.owner)
            .order_by(study_records.c.name)).all()
        run_rows = conn.execute(sa.select(runs).where(runs.c.study_id == st.id, runs.c.owner == st.owner)
                                .order_by(runs.c.id)).all()
    members: dict[str, bytes] = {}
    members["study.json"] = to_json({
        "name": st.name, "notes": st.notes, "created": st.created.isoformat(), "updated": st.updated.isoformat(),
        "records": [{"name": r.name, "sha256": r.sha256, "meta_json": r.meta_json} for r in recs],
    }, "study").encode("utf-8")
    members["runs.json"] = to_json([
        {"label": m["label"], "created": _utc(m["created"]).isoformat(), "config": json.loads(m["config_json"]),
         "result": json.loads(m["result_json"]), "success": bool(m["success"]),
         **({"item_key": m["item_key"]} if m["item_key"] is not None else {})}
        for m in (r._mapping for r in run_rows)], "runs").encode("utf-8")
    for r in recs:
        members[f"records/{r.sha256}.parquet"] = bytes(r.parquet)
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "schema_revision": SCHEMA_REVISION,
        "members": {k: {"sha256": hashlib.sha256(v).hexdigest(), "size": len(v)} for k, v in members.items()},
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in [("manifest.json", to_json(manifest, "manifest").encode("utf-8")), *members.items()]:
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.compress_type = zipfile.ZIP_STORED if name.endswith(".parquet") else zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, data)
    return buf.getvalue()


# ----------------------------------------------------------------------------- import


@dataclass(frozen=True, kw_only=True)
class _Checked:
    name: str
    notes: str
    records: list[tuple[str, EncodedRecord, Record]]
    runs: list[_RunRow]


def _read_archive(data: bytes) -> dict[str, bytes]:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DataValidationError(f"`data` must be the archive's bytes; got {type(data).__name__}")
    if len(data) > MAX_ARCHIVE_BYTES:
        raise DataValidationError(f"study archive is {len(data)} bytes; at most {MAX_ARCHIVE_BYTES} are accepted")
    try:
        zf = zipfile.ZipFile(io.BytesIO(bytes(data)))
    except (zipfile.BadZipFile, zlib.error, ValueError, EOFError) as exc:
        raise DataValidationError(f"`data` is not a zip archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise DataValidationError(f"study archive has {len(infos)} members; at most {MAX_MEMBERS} are accepted")
        seen: set[str] = set()
        total = 0
        for info in infos:
            _check_member_name(info)
            if info.filename in seen:
                raise DataValidationError(f"study archive member {info.filename!r} appears twice; refused")
            seen.add(info.filename)
            if info.file_size > MAX_MEMBER_BYTES:
                raise DataValidationError(
                    f"study archive member {info.filename!r} declares {info.file_size} bytes uncompressed; at most "
                    f"{MAX_MEMBER_BYTES} are accepted (zip bomb)")
            if info.filename.endswith(".json") and info.file_size > MAX_JSON_BYTES:
                raise DataValidationError(
                    f"study archive member {info.filename!r} declares {info.file_size} bytes of JSON; at most "
                    f"{MAX_JSON_BYTES} are accepted")
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise DataValidationError(
                    f"study archive declares more than {MAX_TOTAL_BYTES} bytes uncompressed (zip bomb)")
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > 4096 and ratio > MAX_RATIO:
                raise DataValidationError(
                    f"study archive member {info.filename!r} compresses {ratio:.0f}:1; at most {MAX_RATIO:.0f}:1 "
                    "is accepted (zip bomb)")
        return {info.filename: _member_bytes(zf, info) for info in infos}


def _check(members: Mapping[str, bytes]) -> _Checked:
    """Every check of an untrusted archive's members, in this order: the manifest, the study and its records,
    the runs; the first failure raises :class:`DataValidationError`."""
    _check_manifest(members)
    study, recs = _check_study(members)
    return _Checked(name=study["name"], notes=study["notes"], records=recs, runs=_check_runs(members))


def _check_manifest(members: Mapping[str, bytes]) -> None:
    """Format, version and revision; every member listed with its SHA-256 and size; Parquet members' magic."""
    _require("manifest.json" in members, "`manifest.json` is missing")
    manifest = _json_member("manifest.json", members["manifest.json"])
    _require(isinstance(manifest, dict), "`manifest.json` must hold an object")
    if manifest.get("format") != FORMAT:
        raise DataValidationError(f"study archive format is {manifest.get('format')!r:.60}, expected {FORMAT!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise DataValidationError(
            f"study archive format version is {manifest.get('format_version')!r:.60}; this version reads "
            f"{FORMAT_VERSION}")
    if manifest.get("schema_revision") not in READABLE_REVISIONS:
        raise DataValidationError(
            f"study archive schema revision is {manifest.get('schema_revision')!r:.60}; this version reads "
            f"{', '.join(READABLE_REVISIONS)}")
    listed = manifest.get("members")
    _require(isinstance(listed, dict), "`manifest.json` must list `members`")
    present = set(members) - {"manifest.json"}
    if set(listed) != present:
        raise DataValidationError(
            f"study archive members do not match the manifest: missing {sorted(set(listed) - present)}, "
            f"unlisted {sorted(present - set(listed))}")
    for name in sorted(present):
        entry = listed[name]
        _require(isinstance(entry, dict) and isinstance(entry.get("sha256"), str),
                 f"manifest entry of {name!r} must give `sha256`")
        digest = hashlib.sha256(members[name]).hexdigest()
        if digest != entry["sha256"] or entry.get("size") != len(members[name]):
            raise DataValidationError(f"study archive member {name!r} does not match its SHA-256/size in the manifest")
    for fixed in ("study.json", "runs.json"):
        _require(fixed in members, f"`{fixed}` is missing")
    for name, data in members.items():
        if name.endswith(".parquet"):
            if _looks_pickled(data):
                raise DataValidationError(f"study archive member {name!r} is a pickle, not Parquet; refused")
            if len(data) < 12 or data[:4] != b"PAR1" or data[-4:] != b"PAR1":
                raise DataValidationError(f"study archive member {name!r} is not a Parquet file")


def _check_study(members: Mapping[str, bytes]) -> tuple[dict[str, Any], list[tuple[str, EncodedRecord, Record]]]:
    """``study.json`` and every record it names (content hash, the isolated Parquet reader, metadata)."""
    study = _json_member("study.json", members["study.json"])
    _require(isinstance(study, dict) and {"name", "notes", "records"} <= set(study),
             "`study.json` must hold `name`, `notes` and `records`")
    _require(isinstance(study["name"], str) and isinstance(study["notes"], str), "`study.json` name/notes not text")
    _require(isinstance(study["records"], list), "`study.json` `records` must be a list")
    used: dict[str, str] = {}
    entries: list[tuple[str, str, str]] = []
    most_records = int(budget("NLID_ARCHIVE_MAX_RECORDS") or 0)
    if len(study["records"]) > most_records:
        raise DataValidationError(f"study archive holds {len(study['records']):,} records; at most {most_records:,}"
                                  " are imported (an administrator can raise the limit with NLID_ARCHIVE_MAX_RECORDS)")
    for item in study["records"]:
        _require(isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("sha256"), str)
                 and isinstance(item.get("meta_json"), str), "each `study.json` record needs name, sha256, meta_json")
        validate_name(item["name"], "records")
        member = f"records/{item['sha256']}.parquet"
        if member not in members:
            raise DataValidationError(f"study archive record {item['name']!r} refers to a missing {member!r}")
        sha = hashlib.sha256(members[member] + b"\0" + item["meta_json"].encode("utf-8")).hexdigest()
        if sha != item["sha256"]:
            raise DataValidationError(f"study archive record {item['name']!r}: content does not match its SHA-256")
        used[member] = item["meta_json"]
        entries.append((item["name"], member, item["meta_json"]))
    unused = sorted(m for m in members if m.startswith("records/") and m not in used)
    if unused:
        raise DataValidationError(f"study archive holds records no study entry uses: {unused[:5]}")
    parsed = _parse_records({m: members[m] for m in used})
    recs: list[tuple[str, EncodedRecord, Record]] = []
    for rec_name, member, meta_json in entries:
        rec = _rebuild(member, parsed[member], meta_json)
        recs.append((rec_name, encode_record(rec), rec))
    return study, recs


def _check_runs(members: Mapping[str, bytes]) -> list[_RunRow]:
    """``runs.json``: each run's fields, labels, times and distinct item keys."""
    run_doc = _json_member("runs.json", members["runs.json"])
    _require(isinstance(run_doc, list), "`runs.json` must hold a list")
    most = int(budget("NLID_ARCHIVE_MAX_RUNS") or 0)
    if len(run_doc) > most:
        raise DataValidationError(f"study archive holds {len(run_doc):,} runs; at most {most:,} are imported (an"
                                  " administrator can raise the limit with NLID_ARCHIVE_MAX_RUNS)")
    run_rows: list[_RunRow] = []
    keys: set[str] = set()
    for item in run_doc:
        _require(isinstance(item, dict) and isinstance(item.get("label"), str)
                 and isinstance(item.get("config"), dict) and isinstance(item.get("result"), dict)
                 and isinstance(item.get("success"), bool) and isinstance(item.get("created"), str),
                 "each run in `runs.json` needs label, created, config, result and success")
        validate_name(item["label"], "label")
        try:
            created = _utc(_dt.datetime.fromisoformat(item["created"]))
        except ValueError:
            raise DataValidationError(f"run `created` is not an ISO time: {item['created']!r:.60}") from None
        key = item.get("item_key")
        _require(key is None or isinstance(key, str), "a run's `item_key` in `runs.json` must be text")
        validate_item_key(key)
        _require(key is None or key not in keys, f"`runs.json` repeats the item key {key!r:.60}")
        if key is not None:
            keys.add(key)
        run_rows.append(_RunRow(label=item["label"], config_json=to_json(item["config"], "config"),
                                result_json=to_json(item["result"], "result"), success=item["success"],
                                created=created, item_key=key))
    return run_rows


def import_study(store: Store, owner: str, data: bytes, *, name: str | None = None) -> Study:
    """Import an archive written by :func:`export_study` as a new study of ``owner``.

    Parameters
    ----------
    store : Store
    owner : str
    data : bytes
        The zip, untrusted.
    name : str or None
        Name of the new study; default the name in the archive. It must be
        free for ``owner``.

    Returns
    -------
    Study

    Raises
    ------
    DataValidationError
        Any check of the module docstring failing, or the name being taken.
        The database is unchanged then.
    """
    validate_owner(owner)
    if name is not None:
        validate_name(name)
    checked = _check(_read_archive(data))
    new_name = validate_name(name if name is not None else checked.name, "name")
    with store.write() as conn:
        if _name_taken(conn, owner, new_name):
            raise DataValidationError(
                f"owner {owner!r} already has a study named {new_name!r}; import it with another `name`")
        now = _now()
        res = conn.execute(sa.insert(studies).values(owner=owner, name=new_name, created=now, updated=now,
                                                     notes=checked.notes))
        pk = res.inserted_primary_key
        assert pk is not None
        sid = int(pk[0])
        _insert_records(conn, owner, sid, checked.records)
        _insert_runs(conn, owner, sid, checked.runs)
        return _study_row(conn, owner, sid)
