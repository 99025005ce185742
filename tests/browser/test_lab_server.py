"""Engineers on one server at once (real browsers), then the server's memory after they leave.

Two at once in the suite (enough to show that concurrent sessions keep their own data and that memory
comes back); ``NLID_LAB_SESSIONS=10`` runs the full load of ten (as before a release, about 4 minutes).

The server runs in trusted-header mode (``NLID_AUTH_HEADER``): each browser context sends its own
``X-Forwarded-User``, as a reverse proxy would. The sessions each upload their own record (a
different stiffness each), run an identification concurrently, save the run into a study of their own
and open the Studies page, which must list their study and nobody else's. The identified k1 of each
session must be its own record's (within 2 %), so no session saw another's data.

Memory: the resident set of the server and its worker processes (proportional set size, so pages the
forkserver's children share are not counted twice) is measured idle — after one warm-up session ran the
same steps and closed, so the one-time imports and compiled kernels are in the baseline — and again
after the sessions closed and Streamlit let go of them (``server.disconnectedSessionTTL`` and the
cache's time-to-live shortened for the test). It must come back within 20 % of idle.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from .conftest import goto, serve, shot, wait_idle

#: Engineers at once: 2 in the suite, NLID_LAB_SESSIONS=10 for the full load check.
SESSIONS = int(os.environ.get("NLID_LAB_SESSIONS", "2"))
HEADER = "X-Forwarded-User"
TRUE_K1 = [1500.0 + 150.0 * i for i in range(SESSIONS)]  # N/m: each engineer's own spring


def _record_csv(tmp_path: Path, i: int) -> Path:
    from nlid_core.examples import ExampleSpec, generate

    rec = generate(ExampleSpec(terms={"m0": 0.5, "c1": 1.2, "k1": TRUE_K1[i], "k3": -1e6}, amplitude_n=4.0,
                               f0_hz=1.0, f1_hz=20.0, duration_s=5.0, fs_hz=400.0, noise={"x": 1e-5},
                               measured=("x",), seed=100 + i), name=f"rig{i}")
    path = tmp_path / f"rig{i}.csv"
    pd.DataFrame({"time": rec.t, "force": rec.f, "disp": rec.x}).to_csv(path, index=False)
    return path


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def server_memory_mb(pid: int) -> float:
    """Proportional set size of the server and its descendants (MB)."""
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total / 1024.0


def _settled_memory(pid: int, seconds: float) -> float:
    """The lowest memory seen over ``seconds`` (the housekeeping thread trims every couple of seconds)."""
    low = float("inf")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        low = min(low, server_memory_mb(pid))
        time.sleep(0.5)
    return low


def _open(browser, url: str, user: str):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400}, extra_http_headers={HEADER: user})
    pg = ctx.new_page()
    pg.set_default_timeout(180_000)
    pg.goto(url)
    wait_idle(pg)
    return ctx, pg


def _upload(pg, path: Path) -> None:  # type: ignore[no-untyped-def]
    goto(pg, "Data")
    pg.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_idle(pg)
    pg.locator(".st-key-load_upload button").click()
    pg.get_by_text(f"Loaded {path.stem}.").first.wait_for()
    wait_idle(pg)
    goto(pg, "Identify")  # repeats the click if a rerun after the load swallows it


def _save_and_list(pg, study: str) -> str:  # type: ignore[no-untyped-def]
    """Wait for the identification, save it into a new study, open the Studies page; return the studies it offers."""
    pg.locator(".st-key-results").wait_for()
    wait_idle(pg)
    pg.get_by_label("New study").fill(study)
    pg.get_by_label("New study").press("Enter")
    wait_idle(pg)
    pg.get_by_role("button", name="Create and save").click()
    wait_idle(pg)
    pg.get_by_text("compare it on the Studies page").first.wait_for()
    goto(pg, "Studies")
    assert pg.locator('[data-testid="stException"]').count() == 0
    # the study picker lists every study this engineer can see (their own and those shared with them)
    pg.locator(".st-key-studies_pick").click()
    pg.get_by_role("option").first.wait_for()
    seen = " | ".join(pg.get_by_role("option").all_inner_texts())
    pg.keyboard.press("Escape")
    return seen


def test_engineers_at_once_then_memory_returns_to_idle(browser, tmp_path):  # type: ignore[no-untyped-def]
    from nlid_core.store.db import open_store
    from nlid_core.store import studies as S

    db = f"sqlite:///{tmp_path / 'lab.sqlite'}"
    env = {"NLID_AUTH_HEADER": HEADER, "NLID_DATABASE_URL": db, "NLID_CACHE_TTL_S": "8",
           "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "2"}
    files = [_record_csv(tmp_path, i) for i in range(SESSIONS)]
    with serve(env) as server:
        # warm-up: one engineer runs the same steps and leaves (imports, compiled kernels, job forkserver)
        ctx, pg = _open(browser, server.url, "warmup")
        _upload(pg, files[0])
        pg.locator(".st-key-run_identification button").click()
        _save_and_list(pg, "warm-up")
        ctx.close()
        idle = _settled_memory(server.pid, 12.0)

        opened = [_open(browser, server.url, f"eng{i}") for i in range(SESSIONS)]
        for (_, pg), path in zip(opened, files):
            _upload(pg, path)
        for _, pg in opened:  # every session's identification is started before any is awaited
            pg.locator(".st-key-run_identification button").click()
        busy = server_memory_mb(server.pid)
        listings = [_save_and_list(pg, f"rig study {i}") for i, (_, pg) in enumerate(opened)]
        peak = server_memory_mb(server.pid)
        shot(opened[-1][1], "lab-ten-sessions-studies")
        for i, text in enumerate(listings):
            assert f"rig study {i}" in text, text
            others = [j for j in range(SESSIONS) if j != i and f"rig study {j}" in text]
            assert not others and "warm-up" not in text, (i, others, text)
        for ctx, _ in opened:
            ctx.close()
        deadline = time.monotonic() + 90
        after = _settled_memory(server.pid, 6.0)
        while after > 1.2 * idle and time.monotonic() < deadline:
            after = _settled_memory(server.pid, 6.0)
        print(f"\nserver memory (PSS, server + workers): idle {idle:.0f} MB, {SESSIONS} sessions busy {busy:.0f} MB, "
              f"peak {peak:.0f} MB, after they closed {after:.0f} MB ({after / idle - 1:+.1%})")
        assert after <= 1.2 * idle, (idle, peak, after)

    # what landed in the database: each engineer's own study, with their own stiffness
    with open_store(db) as store:
        for i in range(SESSIONS):
            owner = f"eng{i}"
            (st,) = S.list_studies(store, owner)
            assert st.name == f"rig study {i}"
            (run,) = S.list_runs(store, owner, st.id)
            k1 = run.result["parameters"]["k1"]["value"]
            assert abs(k1 / TRUE_K1[i] - 1) < 0.02, (owner, k1, TRUE_K1[i])
