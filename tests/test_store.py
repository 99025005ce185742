"""Study store (nlid_core.store): opening and migrating, studies, records, runs, owners, crash safety.

The functional tests run on SQLite and, when the PostgreSQL server binaries are installed
(``/usr/lib/postgresql/*/bin``), on a throwaway real PostgreSQL started for this module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from nlid_core.errors import DataValidationError
from nlid_core.record import from_arrays, from_channels
from nlid_core.store import studies as S
from nlid_core.store.db import BUSY_TIMEOUT_MS, DEFAULT_FILENAME, current_revision, default_url, open_store
from nlid_core.store.schema import SCHEMA_REVISION, metadata, records, runs, studies, study_records

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- a real PostgreSQL


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'studies.sqlite'}"
    return request.getfixturevalue("pg_server")()


@pytest.fixture
def store(url):
    s = open_store(url)
    yield s
    s.close()


# ----------------------------------------------------------------------------- records used below


def _record(seed: int = 0, n: int = 400, name: str = "rec", **kw):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    return from_arrays(t, rng.standard_normal(n), rng.standard_normal(n), name=name, **kw)


def _two_dof(seed: int = 1):
    rng = np.random.default_rng(seed)
    t = np.arange(300) * 2e-3
    return from_channels({"t": t, "f1": rng.standard_normal(300), "x1": rng.standard_normal(300),
                          "x2": rng.standard_normal(300), "v2": rng.standard_normal(300)},
                         name="two dof", units={"x2": "mm"}, derived=("v2",), source="bench",
                         warnings=("a note",), meta={"seed": seed, "truth": {"k": 1.5}})


def _same_record(a, b) -> None:
    assert a.name == b.name and a.channels == b.channels
    assert dict(a.channel_units) == dict(b.channel_units)
    assert a.derived == b.derived and a.source == b.source and a.warnings == b.warnings
    assert a.fs == b.fs and a.n == b.n
    for c in a.channels:
        np.testing.assert_array_equal(a.channel(c), b.channel(c))  # bit for bit


def _counts(s) -> dict[str, int]:
    with s.read() as conn:
        return {t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
                for t in (studies, records, study_records, runs)}


# ----------------------------------------------------------------------------- opening


def test_default_url_comes_from_the_environment_then_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("NLID_DATABASE_URL", raising=False)
    monkeypatch.setenv("NLID_DATA_DIR", str(tmp_path / "data"))
    assert default_url() == f"sqlite:///{tmp_path / 'data' / DEFAULT_FILENAME}"
    s = open_store()
    try:
        assert (tmp_path / "data" / DEFAULT_FILENAME).is_file()
        assert s.revision == SCHEMA_REVISION
    finally:
        s.close()
    other = f"sqlite:///{tmp_path / 'env.sqlite'}"
    monkeypatch.setenv("NLID_DATABASE_URL", other)
    assert default_url() == other
    with open_store() as s2:
        assert s2.url.endswith("env.sqlite")
    with open_store(f"sqlite:///{tmp_path / 'arg.sqlite'}") as s3:  # the argument wins
        assert s3.url.endswith("arg.sqlite")


def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'a.sqlite'}") as s, s.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_TIMEOUT_MS
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


@pytest.mark.parametrize("bad", ["mysql://u@h/db", "sqlite://", "sqlite:///:memory:", "not a url"])
def test_unsupported_urls_are_refused(bad):
    with pytest.raises(DataValidationError, match="`url`"):
        open_store(bad)


def test_migrations_build_exactly_the_schema_and_reopening_is_a_no_op(store):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    with store.read() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diffs == []
    assert current_revision(store.engine) == SCHEMA_REVISION
    again = open_store(store.engine.url.render_as_string(hide_password=False))
    assert again.revision == SCHEMA_REVISION
    again.close()


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    open_store(url).close()
    eng = sa.create_engine(url)
    with eng.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    eng.dispose()
    with pytest.raises(DataValidationError, match="expected revision 0002"):
        open_store(url)


# ----------------------------------------------------------------------------- studies


def test_create_list_open_rename_duplicate_delete(store):
    a = S.create_study(store, "alice", "Beam A", notes="first try")
    b = S.create_study(store, "alice", "Beam B")
    assert a.name == "Beam A" and a.notes == "first try" and a.created.tzinfo is not None
    assert {s.name for s in S.list_studies(store, "alice")} == {"Beam A", "Beam B"}
    assert S.open_study(store, "alice", "Beam A") == a
    assert S.get_study(store, "alice", b.id) == b
    with pytest.raises(DataValidationError, match="already has a study named 'Beam A'"):
        S.create_study(store, "alice", "Beam A")
    with pytest.raises(DataValidationError, match="`new_name`"):
        S.rename_study(store, "alice", b.id, "Beam A")
    renamed = S.rename_study(store, "alice", b.id, "Beam B (v2)")
    assert renamed.id == b.id and renamed.updated >= b.updated
    assert S.set_notes(store, "alice", a.id, "changed").notes == "changed"

    S.add_records(store, "alice", a.id, {"r1": _record(1), "r2": _record(2)})
    S.add_run(store, "alice", a.id, label="fit 1", config={"terms": "m0,c1,k1"},
              result={"success": True, "parameters": {"k1": {"value": 2.0}}})
    dup = S.duplicate_study(store, "alice", a.id, "Beam A copy")
    assert [r.name for r in S.list_records(store, "alice", dup.id)] == ["r1", "r2"]
    assert [r.label for r in S.list_runs(store, "alice", dup.id)] == ["fit 1"]
    assert dup.notes == "changed"
    assert _counts(store)["records"] == 2  # the copy references the same data

    with pytest.raises(DataValidationError, match="`confirm` must repeat the study name 'Beam A'"):
        S.delete_study(store, "alice", a.id, confirm="beam a")
    assert S.get_study(store, "alice", a.id) == S.open_study(store, "alice", "Beam A")
    S.delete_study(store, "alice", a.id, confirm="Beam A")
    with pytest.raises(DataValidationError, match="no study named 'Beam A'"):
        S.open_study(store, "alice", "Beam A")
    assert _counts(store)["records"] == 2  # still used by the copy
    S.delete_study(store, "alice", dup.id, confirm="Beam A copy")
    assert _counts(store) == {"studies": 1, "records": 0, "study_records": 0, "runs": 0}


def test_records_read_back_equal_and_are_stored_once(store):
    one, two = _record(3, units={"x": "mm", "f": "kN"}, source="bench 3", meta={"run": 3}), _two_dof()
    st = S.create_study(store, "alice", "round trip", records={"one": one, "two": two})
    listed = {r.name: r for r in S.list_records(store, "alice", st.id)}
    assert listed["one"].channels == one.channels and listed["one"].fs_hz == one.fs
    assert listed["two"].n_samples == two.n and listed["two"].record_name == "two dof"
    _same_record(S.load_record(store, "alice", st.id, "one"), one)
    back = S.load_records(store, "alice", st.id)
    _same_record(back["two"], two)
    assert back["two"].meta == {"seed": 1, "truth": {"k": 1.5}}
    other = S.create_study(store, "alice", "other", records=[one])
    assert S.list_records(store, "alice", other.id)[0].sha256 == listed["one"].sha256
    assert _counts(store)["records"] == 2
    with pytest.raises(DataValidationError, match="no record named 'nope'"):
        S.load_record(store, "alice", st.id, "nope")


def test_encoding_is_canonical_and_content_addressed():
    a, b = S.encode_record(_record(5)), S.encode_record(_record(5))
    assert a == b
    assert S.encode_record(_record(6)).sha256 != a.sha256
    renamed = S.encode_record(_record(5, name="other name"))
    assert renamed.parquet == a.parquet and renamed.sha256 != a.sha256  # metadata is part of the address
    _same_record(S.decode_record(a.parquet, a.meta_json), _record(5))


def test_a_failed_write_leaves_nothing_behind(store):
    st = S.create_study(store, "alice", "atomic", records={"old": _record(1)})
    before = _counts(store)
    with pytest.raises(DataValidationError, match="already has a record named 'old'"):
        S.add_records(store, "alice", st.id, {"new": _record(2), "old": _record(3)})  # "new" goes in first
    assert _counts(store) == before
    assert [r.name for r in S.list_records(store, "alice", st.id)] == ["old"]


@pytest.mark.parametrize(("owner", "name", "arg"), [
    ("alice", "", "name"),
    ("alice", "x" * 101, "name"),
    ("alice", "../etc", "name"),
    ("alice", " leading", "name"),
    ("alice", "tab\there", "name"),
    ("alice", "<script>", "name"),
    ("alice", "nul\x00", "name"),
    ("", "ok", "owner"),
    ("al ice", "ok", "owner"),
    ("a" * 65, "ok", "owner"),
    ("alice'--", "ok", "owner"),
])
def test_bad_names_are_refused_naming_the_argument(store, owner, name, arg):
    with pytest.raises(DataValidationError, match=f"`{arg}`"):
        S.create_study(store, owner, name)
    assert _counts(store)["studies"] == 0


def test_names_may_use_any_script():
    assert S.validate_name("Prüfstand 3 (Ω-Feder) #2") == "Prüfstand 3 (Ω-Feder) #2"


def test_an_owner_never_reaches_another_owners_study(store):
    secret = S.create_study(store, "alice", "secret", notes="alice only", records={"r": _record(7)})
    S.add_run(store, "alice", secret.id, label="fit", config={}, result={"success": True})
    S.create_study(store, "bob", "mine")
    assert [s.name for s in S.list_studies(store, "bob")] == ["mine"]
    with pytest.raises(DataValidationError, match="no study named 'secret'"):
        S.open_study(store, "bob", "secret")
    from nlid_core.store.archive import export_study

    by_id = [
        lambda: S.get_study(store, "bob", secret.id),
        lambda: S.rename_study(store, "bob", secret.id, "stolen"),
        lambda: S.set_notes(store, "bob", secret.id, "x"),
        lambda: S.duplicate_study(store, "bob", secret.id, "copy"),
        lambda: S.delete_study(store, "bob", secret.id, confirm="secret"),
        lambda: S.add_records(store, "bob", secret.id, {"r": _record(8)}),
        lambda: S.list_records(store, "bob", secret.id),
        lambda: S.load_record(store, "bob", secret.id, "r"),
        lambda: S.add_run(store, "bob", secret.id, label="x", config={}, result={}),
        lambda: S.list_runs(store, "bob", secret.id),
        lambda: S.compare_runs(store, "bob", secret.id),
        lambda: export_study(store, "bob", secret.id),
    ]
    missing = secret.id + 1000
    for call in by_id:
        with pytest.raises(DataValidationError) as exc:
            call()
        # the same message as for an id that does not exist: nothing is learnt by guessing
        assert str(exc.value) == f"no study with `study_id` {secret.id} for owner 'bob'"
        assert "secret" not in str(exc.value).replace(f"{secret.id}", "")
    with pytest.raises(DataValidationError, match=f"no study with `study_id` {missing} for owner 'bob'"):
        S.get_study(store, "bob", missing)
    # bob storing the same data does not link to alice's row
    S.add_records(store, "bob", S.open_study(store, "bob", "mine").id, {"r": _record(7)})
    with store.read() as conn:
        owners = conn.execute(sa.select(records.c.owner).order_by(records.c.owner)).scalars().all()
    assert owners == ["alice", "bob"]
    assert S.get_study(store, "alice", secret.id).notes == "alice only"
    assert len(S.list_runs(store, "alice", secret.id)) == 1


def test_concurrent_writers_on_one_sqlite_file_all_succeed(tmp_path):
    """Four engines (as four processes would have) writing at once queue on the lock instead of failing."""
    import threading

    url = f"sqlite:///{tmp_path / 'busy.sqlite'}"
    open_store(url).close()
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            with open_store(url) as s:
                for i in range(5):
                    st = S.create_study(s, "team", f"w{k} s{i}", records={"r": _record(10 * k + i)})
                    S.add_run(s, "team", st.id, label="fit", config={"k": k}, result={"success": True})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    with open_store(url) as s:
        assert len(S.list_studies(s, "team")) == 20
        assert _counts(s) == {"studies": 20, "records": 20, "study_records": 20, "runs": 20}


# ----------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def fit():
    from nlid_core.estimate import identify
    from nlid_core.examples import make_example

    return identify(make_example("seed"), "m0,c1,k1")


def test_runs_store_a_fit_result_as_json_and_compare(store, fit):
    st = S.create_study(store, "alice", "runs")
    run = S.add_run(store, "alice", st.id, label="linear", config={"terms": "m0,c1,k1", "nan": float("nan")},
                    result=fit)
    assert run.success is fit.success and run.config == {"terms": "m0,c1,k1", "nan": None}
    assert run.result["parameters"]["k1"]["value"] == pytest.approx(
        next(e.value for e in fit.estimates if e.name == "k1"), rel=0, abs=0)
    S.add_run(store, "alice", st.id, label="failed", config={}, result={"success": False, "parameters": {
        "k1": {"value": 1.0, "stderr": None}, "k3": {"value": 5.0, "stderr": 0.5}}})
    frame = S.compare_runs(store, "alice", st.id)
    assert list(frame.index) == [r.id for r in S.list_runs(store, "alice", st.id)]
    assert list(frame.columns[:3]) == ["label", "success", "cost"]
    assert {"m0", "c1", "k1", "k3", "k1 stderr"} <= set(frame.columns)
    est = {e.name: e.value for e in fit.estimates}
    first, second = frame.index
    for name in ("m0", "c1", "k1"):
        assert frame.loc[first, name] == est[name]
    assert np.isnan(frame.loc[first, "k3"]) and frame.loc[second, "k3"] == 5.0
    assert np.isnan(frame.loc[second, "k1 stderr"]) and not frame.loc[second, "success"]
    assert list(S.compare_runs(store, "alice", st.id, [second]).index) == [second]
    with pytest.raises(DataValidationError, match="`run_ids`"):
        S.compare_runs(store, "alice", st.id, [second + 99])


def test_run_config_must_be_json(store):
    st = S.create_study(store, "alice", "cfg")
    with pytest.raises(DataValidationError, match="`config` is not JSON-serialisable"):
        S.add_run(store, "alice", st.id, label="x", config={"f": object()}, result={})
    with pytest.raises(DataValidationError, match="`label`"):
        S.add_run(store, "alice", st.id, label="", config={}, result={})
    assert S.list_runs(store, "alice", st.id) == ()


# ----------------------------------------------------------------------------- crash safety

_CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import sqlalchemy as sa
    from nlid_core.record import from_arrays
    from nlid_core.store.db import open_store
    from nlid_core.store.studies import create_study

    url, pause_at, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = open_store(url)
    state = {"i": -1, "inserts": 0}

    @sa.event.listens_for(store.engine, "after_cursor_execute")
    def _pause(conn, cursor, statement, params, context, executemany):
        # test hook: in study `pause_at`, stop inside the open transaction after some rows went in
        if statement.lstrip().upper().startswith("INSERT INTO STUDY_RECORDS"):
            state["inserts"] += 1
            if state["i"] == pause_at and state["inserts"] == 3:
                print("inside", state["i"], flush=True)
                time.sleep(60)

    def recs(i):
        t = np.arange(2000) * 1e-3
        return {f"r{j}": from_arrays(t, np.sin(t * (i + 1) + j), np.cos(t * (j + 1) + i), name=f"s{i}r{j}")
                for j in range(6)}

    i = start
    while True:
        state["i"], state["inserts"] = i, 0
        print("begin", i, flush=True)
        create_study(store, "crash", f"s{i:04d}", notes=f"study {i}", records=recs(i),
                     runs=[{"label": f"run {k}", "config": {"i": i, "k": k}, "result": {"success": True}}
                           for k in range(4)])
        print("done", i, flush=True)
        i += 1
""")


def _expected_records(i: int) -> dict[str, np.ndarray]:
    t = np.arange(2000) * 1e-3
    return {f"r{j}": np.sin(t * (i + 1) + j) for j in range(6)}


def _kill_child(url: str, *, start: int, pause_at: int, kill_after_begin: int | None,
                delay_s: float) -> tuple[set[int], int]:
    """Run the writer; SIGKILL it inside study ``pause_at``'s transaction, or ``delay_s`` after ``begin`` of
    study ``kill_after_begin``. Returns the studies reported committed and the one being written."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, url, str(pause_at), str(start)], stdout=subprocess.PIPE,
                            text=True, env=env, cwd=REPO, start_new_session=True)
    done: set[int] = set()
    current = -1
    deadline = time.monotonic() + 120
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            word, num = line.split()
            if word == "done":
                done.add(int(num))
            elif word == "begin":
                current = int(num)
                if kill_after_begin is not None and current == kill_after_begin:
                    time.sleep(delay_s)
                    break
            elif word == "inside":
                break
            assert time.monotonic() < deadline, "writer too slow"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return done, current


def _check_after_crash(url: str, done: set[int], killed: int, *, must_lack_killed: bool) -> None:
    with open_store(url) as s:
        found = {st.name: st for st in S.list_studies(s, "crash")}
        for i in done:
            assert f"s{i:04d}" in found, f"committed study {i} lost"
        if must_lack_killed:
            assert f"s{killed:04d}" not in found
        for name, st in found.items():
            i = int(name[1:])
            recs = S.list_records(s, "crash", st.id)
            assert [r.name for r in recs] == [f"r{j}" for j in range(6)], f"study {name} half-written"
            assert len(S.list_runs(s, "crash", st.id)) == 4 and st.notes == f"study {i}"
            exp = _expected_records(i)
            for r in recs:
                np.testing.assert_array_equal(S.load_record(s, "crash", st.id, r.name).f, exp[r.name])
        counts = _counts(s)
        assert counts == {"studies": len(found), "records": 6 * len(found), "study_records": 6 * len(found),
                          "runs": 4 * len(found)}, "rows of an uncommitted study remain"
        if s.dialect == "sqlite":
            with s.read() as conn:
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


def test_sigkill_inside_a_save_loses_nothing_committed_and_leaves_nothing_half_written(url):
    # 1. killed deterministically inside the transaction of study 3 (rows of it already inserted)
    done, killed = _kill_child(url, start=0, pause_at=3, kill_after_begin=None, delay_s=0.0)
    assert done == {0, 1, 2} and killed == 3
    _check_after_crash(url, done, killed, must_lack_killed=True)
    # 2. the writer restarted on the same database, killed at an arbitrary moment of a later save
    done2, killed2 = _kill_child(url, start=10, pause_at=-1, kill_after_begin=12, delay_s=0.013)
    _check_after_crash(url, done | done2, killed2, must_lack_killed=False)


# ----------------------------------------------------------------------------- sharing (revision 0002)


def test_a_shared_study_is_readable_by_the_grantee_only_and_writable_by_its_owner_only(store):
    from nlid_core.store.archive import export_study

    st = S.create_study(store, "alice", "shared one", notes="n", records={"r": _record(3)})
    S.add_run(store, "alice", st.id, label="fit", config={"a": 1}, result={"success": True})
    S.create_study(store, "bob", "bobs")
    assert S.share_study(store, "alice", st.id, "bob") == ("bob",)
    assert S.share_study(store, "alice", st.id, "bob") == ("bob",)  # idempotent
    listed = S.list_studies(store, "bob")
    assert [(s.name, s.owner) for s in listed] == [("bobs", "bob"), ("shared one", "alice")]
    # reads work for the grantee
    assert S.get_study(store, "bob", st.id).name == "shared one"
    assert [r.name for r in S.list_records(store, "bob", st.id)] == ["r"]
    _same_record(S.load_record(store, "bob", st.id, "r"), _record(3))
    assert len(S.list_runs(store, "bob", st.id)) == 1 and len(S.compare_runs(store, "bob", st.id)) == 1
    assert export_study(store, "bob", st.id) == export_study(store, "alice", st.id)
    # writes do not, with the message of a missing study
    writes = [
        lambda: S.rename_study(store, "bob", st.id, "taken"),
        lambda: S.set_notes(store, "bob", st.id, "x"),
        lambda: S.add_records(store, "bob", st.id, {"q": _record(4)}),
        lambda: S.add_run(store, "bob", st.id, label="x", config={}, result={}),
        lambda: S.delete_study(store, "bob", st.id, confirm="shared one"),
        lambda: S.duplicate_study(store, "bob", st.id, "copy"),
        lambda: S.share_study(store, "bob", st.id, "carol"),
        lambda: S.unshare_study(store, "bob", st.id, "bob"),
        lambda: S.list_shares(store, "bob", st.id),
    ]
    for call in writes:
        with pytest.raises(DataValidationError, match=f"no study with `study_id` {st.id} for owner 'bob'"):
            call()
    # a third engineer sees nothing; the name is not reachable by open_study either
    assert S.list_studies(store, "carol") == ()
    with pytest.raises(DataValidationError, match=f"no study with `study_id` {st.id} for owner 'carol'"):
        S.get_study(store, "carol", st.id)
    with pytest.raises(DataValidationError):
        S.share_study(store, "alice", st.id, "alice")
    with pytest.raises(DataValidationError):
        S.share_study(store, "alice", st.id, "bad name!")
    # unsharing takes it away; deleting the study removes its shares
    assert S.unshare_study(store, "alice", st.id, "bob") == ()
    with pytest.raises(DataValidationError):
        S.get_study(store, "bob", st.id)
    S.share_study(store, "alice", st.id, "bob")
    S.delete_study(store, "alice", st.id, confirm="shared one")
    assert [s.name for s in S.list_studies(store, "bob")] == ["bobs"]
    from nlid_core.store.schema import shares

    with store.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(shares)).scalar_one() == 0


def test_item_keys_are_unique_per_study_and_listed_for_resuming(store):
    st = S.create_study(store, "alice", "batch")
    other = S.create_study(store, "alice", "other")
    S.add_run(store, "alice", st.id, label="item", config={}, result={"success": True}, item_key="mc=1")
    S.add_run(store, "alice", st.id, label="item", config={}, result={"success": True}, item_key="mc=2")
    S.add_run(store, "alice", st.id, label="plain", config={}, result={"success": True})
    S.add_run(store, "alice", other.id, label="item", config={}, result={"success": True}, item_key="mc=1")
    with pytest.raises(DataValidationError, match="already has a run for `item_key` 'mc=1'"):
        S.add_run(store, "alice", st.id, label="again", config={}, result={"success": False}, item_key="mc=1")
    for bad in ("", "x" * 201, "a\nb"):
        with pytest.raises(DataValidationError, match="`item_key`"):
            S.add_run(store, "alice", st.id, label="bad", config={}, result={}, item_key=bad)
    assert S.run_item_keys(store, "alice", st.id) == frozenset({"mc=1", "mc=2"})
    assert [r.item_key for r in S.list_runs(store, "alice", st.id)] == ["mc=1", "mc=2", None]
    copy = S.duplicate_study(store, "alice", st.id, "batch copy")
    assert S.run_item_keys(store, "alice", copy.id) == frozenset({"mc=1", "mc=2"})
    from nlid_core.store.archive import export_study, import_study

    back = import_study(store, "bob", export_study(store, "alice", st.id))
    assert [r.item_key for r in S.list_runs(store, "bob", back.id)] == ["mc=1", "mc=2", None]
    # the database enforces it too (two writers racing past the check)
    with pytest.raises(sa.exc.IntegrityError):
        with store.write() as conn:
            conn.execute(sa.insert(runs).values(study_id=st.id, owner="alice", created=S._now(), label="x",
                                                config_json="{}", result_json="{}", success=True, item_key="mc=2"))


def test_a_chunk_of_item_runs_is_one_transaction_skipping_keys_already_held(store):
    st = S.create_study(store, "alice", "chunks")
    S.add_run(store, "alice", st.id, label="item", config={}, result={"success": True}, item_key="mc=1")

    def item(k: int, **kw):  # type: ignore[no-untyped-def]
        return {"label": f"draw {k}", "config": {"k": k}, "result": {"success": k != 3, "k": k}, "item_key": f"mc={k}",
                **kw}

    assert S.add_item_runs(store, "alice", st.id, [item(1), item(2), item(3)]) == ("mc=2", "mc=3")
    runs_ = S.list_runs(store, "alice", st.id)
    assert [(r.item_key, r.success, r.result.get("k")) for r in runs_] == [("mc=1", True, None), ("mc=2", True, 2),
                                                                          ("mc=3", False, 3)]
    assert S.add_item_runs(store, "alice", st.id, [item(2)]) == ()  # all held: nothing written
    before = _counts(store)
    for bad, words in (([item(4), item(4)], "given twice"), ([item(5), {**item(6), "item_key": None}], "required"),
                       ([item(7), {**item(8), "config": "x"}], "`config`"), ([item(9), item(10, label="")], "label")):
        with pytest.raises(DataValidationError, match=words):
            S.add_item_runs(store, "alice", st.id, bad)
    assert _counts(store) == before  # a bad item writes none of the chunk
    with pytest.raises(DataValidationError):
        S.add_item_runs(store, "bob", st.id, [item(11)])  # not bob's study
    assert _counts(store) == before


def test_a_database_at_revision_0001_is_migrated_with_its_data(tmp_path):
    from alembic import command
    from alembic.config import Config

    from nlid_core.store import db as store_db

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    eng = sa.create_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(store_db._MIGRATIONS))
    with eng.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    assert current_revision(eng) == "0001"
    with eng.begin() as conn:
        conn.execute(sa.insert(studies).values(id=5, owner="alice", name="old", created=S._now(), updated=S._now(),
                                               notes="from 0001"))
        conn.exec_driver_sql("INSERT INTO runs (study_id, owner, created, label, config_json, result_json, success) "
                             "VALUES (5, 'alice', '2026-01-01 00:00:00', 'fit', '{}', '{\"success\": true}', 1)")
    eng.dispose()
    with open_store(url) as s:
        assert s.revision == SCHEMA_REVISION
        assert S.get_study(s, "alice", 5).notes == "from 0001"
        (run,) = S.list_runs(s, "alice", 5)
        assert run.label == "fit" and run.item_key is None and run.success
