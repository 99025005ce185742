"""Study archives (nlid_core.store.archive): round trip; every hostile archive refused, the database unchanged."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import stat
import struct
import zipfile

import numpy as np
import pytest
import sqlalchemy as sa

from nlid_core.errors import DataValidationError
from nlid_core.record import from_arrays
from nlid_core.store import archive as A
from nlid_core.store import studies as S
from nlid_core.store.db import open_store
from nlid_core.store.schema import records, runs, studies, study_records


def _record(seed: int, name: str = "rec", **kw):
    rng = np.random.default_rng(seed)
    t = np.arange(500) * 1e-3
    return from_arrays(t, rng.standard_normal(500), rng.standard_normal(500), rng.standard_normal(500),
                       name=name, **kw)


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path / 'studies.sqlite'}")
    yield s
    s.close()


@pytest.fixture
def exported(store):
    st = S.create_study(store, "alice", "Beam A", notes="notes ü", records={
        "run 1": _record(1, units={"x": "mm"}, meta={"seed": 1}), "run 2": _record(2), "again": _record(1, units={
            "x": "mm"}, meta={"seed": 1})})
    S.add_run(store, "alice", st.id, label="fit", config={"terms": "m0,c1,k1"},
              result={"success": True, "parameters": {"k1": {"value": 3.5, "stderr": 0.1}}})
    return st, A.export_study(store, "alice", st.id)


def _dump(store) -> dict[str, list[tuple]]:
    """Every row of every table (blobs by hash): the database state to compare."""
    with store.read() as conn:
        out = {}
        for t in (studies, records, study_records, runs):
            rows = conn.execute(sa.select(t)).all()
            out[t.name] = sorted(tuple(hashlib.sha256(v).hexdigest() if isinstance(v, bytes) else v for v in r)
                                 for r in rows)
        return out


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def _pack(members: dict[str, bytes], *, resign: bool = True, infos: dict[str, zipfile.ZipInfo] | None = None) -> bytes:
    """A zip of ``members``; with ``resign`` the manifest is rewritten to match them (a careful attacker)."""
    members = dict(members)
    if resign:
        man = json.loads(members["manifest.json"])
        man["members"] = {k: {"sha256": hashlib.sha256(v).hexdigest(), "size": len(v)}
                          for k, v in members.items() if k != "manifest.json"}
        members["manifest.json"] = json.dumps(man).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = (infos or {}).get(name) or zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def _refused(store, data: bytes, match: str) -> None:
    before = _dump(store)
    with pytest.raises(DataValidationError, match=match):
        A.import_study(store, "alice", data, name="imported")
    assert _dump(store) == before


# ----------------------------------------------------------------------------- round trip


def test_export_import_round_trip(store, exported):
    st, data = exported
    assert A.export_study(store, "alice", st.id) == data  # deterministic bytes
    names = set(_members(data))
    assert names == {"manifest.json", "study.json", "runs.json",
                     *(f"records/{r.sha256}.parquet" for r in S.list_records(store, "alice", st.id))}
    assert len(names) == 5  # "run 1" and "again" are one record
    new = A.import_study(store, "alice", data, name="Beam A (imported)")
    assert new.notes == "notes ü" and new.id != st.id
    old_recs, new_recs = S.load_records(store, "alice", st.id), S.load_records(store, "alice", new.id)
    assert old_recs.keys() == new_recs.keys() == {"run 1", "run 2", "again"}
    for k, rec in old_recs.items():
        back = new_recs[k]
        assert back.channels == rec.channels and dict(back.channel_units) == dict(rec.channel_units)
        assert back.name == rec.name and back.fs == rec.fs and back.meta == rec.meta
        for c in rec.channels:
            np.testing.assert_array_equal(back.channel(c), rec.channel(c))
    (r_old,), (r_new,) = S.list_runs(store, "alice", st.id), S.list_runs(store, "alice", new.id)
    assert (r_new.label, r_new.config, r_new.result, r_new.success, r_new.created) == (
        r_old.label, r_old.config, r_old.result, r_old.success, r_old.created)
    with store.read() as conn:  # the data is not stored again
        assert conn.execute(sa.select(sa.func.count()).select_from(records)).scalar_one() == 2
    other = A.import_study(store, "bob", data)  # another owner, the archive's own name
    assert other.name == "Beam A" and other.owner == "bob"


def test_import_under_a_taken_name_is_refused(store, exported):
    _, data = exported
    before = _dump(store)
    with pytest.raises(DataValidationError, match="already has a study named 'Beam A'; import it with another `name`"):
        A.import_study(store, "alice", data)
    assert _dump(store) == before
    with pytest.raises(DataValidationError, match="`name`"):
        A.import_study(store, "alice", data, name="../x")


# ----------------------------------------------------------------------------- hostile archives


def test_not_a_zip(store):
    _refused(store, b"PK\x03\x04 not really a zip", "`data` is not a zip archive")
    _refused(store, pickle.dumps({"a": 1}), "`data` is not a zip archive")


def test_archive_too_large(store, exported, monkeypatch):
    monkeypatch.setattr(A, "MAX_ARCHIVE_BYTES", 1000)
    _refused(store, exported[1], "at most 1000 are accepted")


def test_too_many_members(store, exported, monkeypatch):
    monkeypatch.setattr(A, "MAX_MEMBERS", 4)
    _refused(store, exported[1], "has 5 members; at most 4")


def test_declared_size_over_the_limit(store, exported, monkeypatch):
    monkeypatch.setattr(A, "MAX_MEMBER_BYTES", 1000)
    _refused(store, exported[1], r"declares \d+ bytes uncompressed; at most 1000 .*zip bomb")


def test_json_member_over_its_limit(store, exported, monkeypatch):
    monkeypatch.setattr(A, "MAX_JSON_BYTES", 100)
    _refused(store, exported[1], r"declares \d+ bytes of JSON; at most 100")


def test_total_declared_size_over_the_limit(store, exported, monkeypatch):
    monkeypatch.setattr(A, "MAX_TOTAL_BYTES", 20_000)
    _refused(store, exported[1], "more than 20000 bytes uncompressed")


def test_high_compression_ratio(store, exported):
    members = _members(exported[1])
    members["runs.json"] = b"[" + b" " * 5_000_000 + b"]"  # valid JSON, 5 MB of blanks: ~1000:1
    _refused(store, _pack(members), r"compresses \d+:1; at most 100:1")


def _lie_about_size(data: bytes, member: str, declared: int) -> bytes:
    """Patch the uncompressed size of ``member`` in its local header and the central directory."""
    buf = bytearray(data)
    name = member.encode()
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = buf.find(sig)
        while pos >= 0:
            n_len = struct.unpack_from("<H", buf, pos + (26 if sig == b"PK\x03\x04" else 28))[0]
            start = pos + (30 if sig == b"PK\x03\x04" else 46)
            if bytes(buf[start:start + n_len]) == name:
                struct.pack_into("<I", buf, pos + off, declared)
            pos = buf.find(sig, pos + 4)
    return bytes(buf)


def test_actual_size_beyond_the_declared_size(store, exported):
    members = _members(exported[1])
    members["runs.json"] = json.dumps([{"pad": "y" * 3000}]).encode()
    data = _lie_about_size(_pack(members), "runs.json", 100)
    _refused(store, data, "'runs.json' (holds 101 bytes but declares 100|cannot be read)")


@pytest.mark.parametrize(("member", "match"), [
    ("../evil.json", "path traversal"),
    ("records/../../evil.json", "path traversal"),
    ("/etc/passwd", "absolute path"),
    ("C:/Windows/evil.json", "absolute path"),
    ("records\\..\\evil.json", "path traversal"),
    ("./study.json", "path traversal"),
    ("records/", "path traversal|directory"),
])
def test_path_traversal_members(store, exported, member, match):
    members = _members(exported[1])
    members[member] = b"{}"
    _refused(store, _pack(members, resign=False), match)


def test_symlink_member(store, exported):
    members = _members(exported[1])
    info = zipfile.ZipInfo("runs.json")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    members["runs.json"] = b"/etc/passwd"
    _refused(store, _pack(members, infos={"runs.json": info}), "'runs.json' is a symbolic link")


@pytest.mark.parametrize(("member", "match"), [
    ("notes.txt", "'notes.txt' is unknown"),
    ("records/abc.parquet", "'records/abc.parquet' is unknown"),
    ("study.json.bak", "is unknown"),
    ("model.pkl", "'model.pkl' is a pickle"),
    ("records/x.pickle", "is a pickle"),
    ("arrays.npz", "is a pickle or numpy file"),
])
def test_unknown_and_pickle_members(store, exported, member, match):
    members = _members(exported[1])
    members[member] = pickle.dumps({"evil": True})
    _refused(store, _pack(members), match)


def test_pickle_disguised_as_parquet_or_json(store, exported):
    members = _members(exported[1])
    target = next(k for k in members if k.endswith(".parquet"))
    _refused(store, _pack({**members, target: pickle.dumps(np.zeros(3))}), f"'{target}' is a pickle, not Parquet")
    _refused(store, _pack({**members, "runs.json": pickle.dumps([1])}), "'runs.json' is a pickle, not JSON")


def test_duplicate_members(store, exported):
    members = _members(exported[1])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("runs.json", b"[]")
    _refused(store, buf.getvalue(), "'runs.json' appears twice")


@pytest.mark.parametrize(("key", "value", "match"), [
    ("format", "zip-of-something", "format is 'zip-of-something'"),
    ("format_version", 2, "format version is 2; this version reads 1"),
    ("schema_revision", "0003", "schema revision is '0003'; this version reads 0001, 0002"),
])
def test_mismatched_format_or_schema(store, exported, key, value, match):
    members = _members(exported[1])
    man = json.loads(members["manifest.json"])
    man[key] = value
    members["manifest.json"] = json.dumps(man).encode()
    _refused(store, _pack(members, resign=False), match)


def test_hash_mismatch(store, exported):
    members = _members(exported[1])
    runs_doc = json.loads(members["runs.json"])
    runs_doc[0]["result"]["parameters"]["k1"]["value"] = 99.0
    members["runs.json"] = json.dumps(runs_doc).encode()
    _refused(store, _pack(members, resign=False), "'runs.json' does not match its SHA-256")


def test_members_missing_from_or_not_in_the_manifest(store, exported):
    members = _members(exported[1])
    extra = {**members, f"records/{'0' * 64}.parquet": b"PAR1....PAR1"}
    _refused(store, _pack(extra, resign=False), "do not match the manifest: missing \\[\\], unlisted")
    fewer = {k: v for k, v in members.items() if k != "runs.json"}
    _refused(store, _pack(fewer, resign=False), "missing \\['runs.json'\\]")
    _refused(store, _pack({k: v for k, v in members.items() if k != "manifest.json"}, resign=False),
             "`manifest.json` is missing")


def test_record_content_not_matching_its_address(store, exported):
    """A re-signed manifest does not help: a record's content address is checked too."""
    members = _members(exported[1])
    study = json.loads(members["study.json"])
    meta = json.loads(study["records"][0]["meta_json"])
    meta["name"] = "forged"
    study["records"][0]["meta_json"] = json.dumps(meta)
    members["study.json"] = json.dumps(study).encode()
    _refused(store, _pack(members), "content does not match its SHA-256")


def test_orphan_record_member(store, exported):
    members = _members(exported[1])
    study = json.loads(members["study.json"])
    study["records"] = [r for r in study["records"] if r["name"] == "run 2"]
    members["study.json"] = json.dumps(study).encode()
    _refused(store, _pack(members), "holds records no study entry uses")


def test_corrupt_parquet_with_valid_hashes_is_refused_by_the_guarded_reader(store, exported):
    members = _members(exported[1])
    study = json.loads(members["study.json"])
    entry = dict(study["records"][0])
    old = f"records/{entry['sha256']}.parquet"
    bad = b"PAR1" + b"\x15\x00" * 200 + struct.pack("<I", 300) + b"PAR1"  # a footer that is not Thrift
    sha = hashlib.sha256(bad + b"\0" + entry["meta_json"].encode()).hexdigest()
    for r in study["records"]:
        if r["sha256"] == entry["sha256"]:
            r["sha256"] = sha
    members = {("records/" + sha + ".parquet" if k == old else k): (bad if k == old else v)
               for k, v in members.items()}
    members["study.json"] = json.dumps(study).encode()
    _refused(store, _pack(members), "Parquet")


def test_parquet_columns_must_match_the_metadata(store, exported):
    members = _members(exported[1])
    study = json.loads(members["study.json"])
    entry = dict(study["records"][0])
    meta = json.loads(entry["meta_json"])
    meta["units"]["a"] = "m/s^2"  # claims an acceleration column the table lacks
    new_meta = json.dumps(meta)
    parquet = members[f"records/{entry['sha256']}.parquet"]
    sha = hashlib.sha256(parquet + b"\0" + new_meta.encode()).hexdigest()
    members[f"records/{sha}.parquet"] = parquet
    for r in study["records"]:
        if r["sha256"] == entry["sha256"]:
            r["sha256"], r["meta_json"] = sha, new_meta
    members.pop(f"records/{entry['sha256']}.parquet")
    members["study.json"] = json.dumps(study).encode()
    _refused(store, _pack(members), "do not match the channels")


@pytest.mark.parametrize(("member", "payload", "match"), [
    ("runs.json", b"{\"not\": \"a list\"}", "`runs.json` must hold a list"),
    ("runs.json", b"[NaN]", "'runs.json' is not valid JSON"),
    ("runs.json", b"\xff\xfe", "'runs.json' is not valid JSON"),
    ("runs.json", b"[{\"label\": \"x\"}]", "each run in `runs.json` needs"),
    ("study.json", b"[]", "`study.json` must hold"),
    ("study.json", b"{\"name\": \"../x\", \"notes\": \"\", \"records\": []}", "`name`"),
    ("study.json", b"{\"name\": \"ok\", \"notes\": 3, \"records\": []}", "name/notes not text"),
])
def test_malformed_json_members(store, exported, member, payload, match):
    members = _members(exported[1])
    if member == "study.json" and payload.startswith(b"{"):  # keep the archive's records
        doc = json.loads(members["study.json"])
        changed = {k: v for k, v in json.loads(payload).items() if k != "records"}
        members[member] = json.dumps({**doc, **changed}).encode()
    else:
        members[member] = payload
    before = _dump(store)
    with pytest.raises(DataValidationError, match=match):
        A.import_study(store, "alice", _pack(members))  # the archive's own name: checked too
    assert _dump(store) == before
