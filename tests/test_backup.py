"""The README's backup recipes, run for real: what an administrator restores must be the studies they had.

- SQLite (WAL mode): the README's online-backup one-liner, taken from the README itself, run while
  another process keeps saving studies; the copy opens, passes ``integrity_check``, and every study in it
  is whole (its records bit for bit, its runs).
- PostgreSQL: ``pg_dump -Fc`` then ``pg_restore --clean --if-exists`` (the README's options) into an
  empty database and into one nlid has already opened (as happens when the app is up during a restore),
  on a real server; the restored database is at nlid's schema revision, holds the same studies, records,
  runs, shares and batch item keys, and takes new studies afterwards (its sequences came along).
"""

from __future__ import annotations

import glob
import re
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from nlid_core.record import from_arrays
from nlid_core.store import studies as S
from nlid_core.store.db import current_revision, open_store
from nlid_core.store.schema import SCHEMA_REVISION

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def _record(seed: int, n: int = 500):
    rng = np.random.default_rng(seed)
    return from_arrays(np.arange(n) * 1e-3, rng.standard_normal(n), rng.standard_normal(n), name=f"rec{seed}",
                       units={"x": "mm"})


def _fill(store) -> None:  # type: ignore[no-untyped-def]
    for k in range(3):
        st = S.create_study(store, "ann", f"beam {k}", records={"a": _record(k), "b": _record(10 + k)},
                            notes=f"notes of beam {k}")
        S.add_run(store, "ann", st.id, label="fit", config={"k": k}, result={"success": True, "k1": 1000.0 + k},
                  success=True, item_key=f"mc-{k:04d}")
    S.share_study(store, "ann", S.open_study(store, "ann", "beam 0").id, "bob")


def _snapshot(store) -> dict:  # type: ignore[no-untyped-def]
    """Everything an engineer would miss: studies, notes, records (content hashes), runs, shares, keys."""
    out = {}
    for owner in ("ann", "bob"):
        for st in S.list_studies(store, owner):
            recs = S.load_records(store, owner, st.id)
            out[(owner, st.owner, st.name)] = {
                "notes": st.notes,
                "records": {n: (r.channels, tuple(np.asarray(r.channel(c)).tobytes() for c in r.channels))
                            for n, r in recs.items()},
                "sha": sorted(r.sha256 for r in S.list_records(store, owner, st.id)),
                "runs": [(r.label, r.config, r.result, r.success) for r in S.list_runs(store, owner, st.id)],
                "keys": sorted(S.run_item_keys(store, owner, st.id)) if owner == st.owner else [],
                "shares": S.list_shares(store, owner, st.id) if owner == st.owner else (),
            }
    return out


# ----------------------------------------------------------------------------- SQLite


def _readme_sqlite_backup_code() -> str:
    """The Python code of the README's SQLite backup command (the one for the image, which has no sqlite3)."""
    m = re.search(r'docker exec nlid python -c "([^"]+)"', README.read_text(encoding="utf-8"))
    assert m, "the README's SQLite backup command is gone"
    return m.group(1)


WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from nlid_core.record import from_arrays
    from nlid_core.store import studies as S
    from nlid_core.store.db import open_store
    with open_store(sys.argv[1]) as s:
        i = 0
        while True:
            x = np.random.default_rng(i).standard_normal(300)
            # a study with its record and its run: one transaction, as the dashboard saves a session
            S.create_study(s, "ann", f"live {i}", records={"r": from_arrays(np.arange(300) * 1e-3, x, x)},
                           runs=[{"label": "fit", "config": {"i": i}, "result": {"success": True}}])
            print(i, flush=True)
            i += 1
""")


def test_the_readme_sqlite_backup_while_nlid_writes_gives_a_whole_copy(tmp_path):
    live = tmp_path / "nlid-studies.sqlite"
    copy = tmp_path / "backup.sqlite"
    with open_store(f"sqlite:///{live}") as s:
        _fill(s)
        before = _snapshot(s)
    code = _readme_sqlite_backup_code()
    assert "/data/nlid-studies.sqlite" in code and "/data/backup.sqlite" in code
    code = code.replace("/data/nlid-studies.sqlite", str(live)).replace("/data/backup.sqlite", str(copy))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, f"sqlite:///{live}"], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    try:
        assert writer.stdout is not None
        for _ in range(3):  # the writer is saving studies while the backup runs
            assert writer.stdout.readline(), writer.stderr.read() if writer.stderr else ""
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    finally:
        writer.kill()
        writer.wait()
    import sqlite3

    con = sqlite3.connect(copy)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        con.close()
    with open_store(f"sqlite:///{copy}") as s:
        assert current_revision(s.engine) == SCHEMA_REVISION
        got = _snapshot(s)
        for key, value in before.items():  # everything committed before the backup is in it
            assert got[key] == value, key
        live_studies = [st for st in S.list_studies(s, "ann") if st.name.startswith("live ")]
        assert len(live_studies) >= 3
        for st in live_studies:  # every transaction the writer committed is whole in the copy: record and run
            assert len(S.load_records(s, "ann", st.id)) == 1 and len(S.list_runs(s, "ann", st.id)) == 1


# ----------------------------------------------------------------------------- PostgreSQL


def _pg_tool(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))  # where the pg_server fixture finds the server
    if not found:
        pytest.skip(f"PostgreSQL client {name} not installed")
    return found[-1]


def _libpq_args(url: str) -> list[str]:
    u = urllib.parse.urlsplit(url)
    q = dict(urllib.parse.parse_qsl(u.query))
    return ["-h", q["host"], "-p", q["port"], "-U", u.username or "nlid", "-d", u.path.lstrip("/")]


@pytest.mark.parametrize("target", ["empty", "opened by nlid"])
def test_the_readme_postgresql_dump_and_restore_round_trip(pg_server, tmp_path, target):
    pg_dump, pg_restore = _pg_tool("pg_dump"), _pg_tool("pg_restore")
    readme = README.read_text(encoding="utf-8")
    assert "pg_dump -U nlid -d nlid -Fc" in readme and "pg_restore -U nlid -d nlid --clean --if-exists" in readme
    src, dst = pg_server(), pg_server()
    with open_store(src) as s:
        _fill(s)
        before = _snapshot(s)
    if target == "opened by nlid":
        open_store(dst).close()  # migrated, empty: the app was up while the administrator restored
    dump = tmp_path / "nlid.dump"
    with dump.open("wb") as fh:
        subprocess.run([pg_dump, *_libpq_args(src), "-Fc"], stdout=fh, check=True, timeout=120)
    with dump.open("rb") as fh:
        done = subprocess.run([pg_restore, *_libpq_args(dst), "--clean", "--if-exists"], stdin=fh,
                              capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    with open_store(dst) as s:
        assert current_revision(s.engine) == SCHEMA_REVISION
        assert _snapshot(s) == before
        # the sequences came along: new studies, records and runs get fresh ids
        st = S.create_study(s, "ann", "after restore", records={"c": _record(99)})
        S.add_run(s, "ann", st.id, label="fit", config={}, result={"success": True}, item_key="mc-0000")
        assert {x.name for x in S.list_studies(s, "ann")} == {"beam 0", "beam 1", "beam 2", "after restore"}
        assert "beam 0" in {x.name for x in S.list_studies(s, "bob")}  # the share survived
