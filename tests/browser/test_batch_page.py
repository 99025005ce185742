"""A Monte Carlo batch run from the Studies page in a real browser, on a real job worker: progress while it
runs, *Cancel* keeps the draws already saved, *Resume here* on the Batch tab computes only the rest, and the
study ends with every draw exactly once."""

from __future__ import annotations

import time

from .conftest import goto, open_tab, serve, shot, wait_idle, wait_text

STUDY = "chirp design, coverage"
DRAWS = 300


def _runs(db: str) -> int:
    from nlid_core.store import studies as S
    from nlid_core.store.db import open_store

    with open_store(db) as store:
        found = [s for s in S.list_studies(store, "local") if s.name == STUDY]
        if not found:
            return 0
        runs = S.list_runs(store, "local", found[0].id)
        keys = [r.item_key for r in runs if r.item_key]
        assert len(keys) == len(set(keys))  # no draw stored twice
        return len(runs)


def test_a_batch_runs_with_progress_is_cancelled_and_resumes_from_the_page(browser, tmp_path):  # type: ignore[no-untyped-def]
    from app_support.studies import MC_SPEC_EXAMPLE

    db = f"sqlite:///{tmp_path / 'lab.sqlite'}"
    t0 = time.monotonic()
    with serve({"NLID_DATABASE_URL": db}) as server:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
        pg = ctx.new_page()
        pg.set_default_timeout(120_000)
        pg.goto(server.url)
        wait_idle(pg)
        goto(pg, "Studies")
        pg.get_by_text("Run a Monte Carlo batch on this server").click()
        box = pg.get_by_label("Spec (TOML)")
        box.fill(MC_SPEC_EXAMPLE.replace("draws = 200", f"draws = {DRAWS}"))
        box.press("Control+Enter")
        wait_idle(pg)
        pg.get_by_role("button", name="Run batch").click()
        bar = pg.locator('[data-testid="stProgress"]').first
        seen = wait_text(bar, "draws stored", timeout=90)
        assert "Monte Carlo batch" in seen and "draws stored" in seen, seen
        shot(pg, "studies-batch-running")
        deadline = time.monotonic() + 90  # let some draws land, then cancel
        while _runs(db) < 40 and time.monotonic() < deadline:
            time.sleep(0.5)
        pg.locator(".st-key-studies_batch_job_cancel button").click()
        wait_idle(pg)
        assert "cancelled" in wait_text(pg.locator('[data-testid="stMain"]'), "cancelled").lower()
        time.sleep(1.0)
        stored = _runs(db)
        assert 40 <= stored < DRAWS + 1, stored
        time.sleep(2.0)
        assert _runs(db) == stored  # the worker is gone: nothing is added after the cancel

        # the study's Batch tab: unfinished; Resume here computes only the rest
        pg.reload()
        wait_idle(pg)
        open_tab(pg, "Batch")
        main = pg.locator('[data-testid="stMain"]')
        assert f"{stored - 1} of {DRAWS} items stored" in wait_text(main, f"of {DRAWS} items stored")
        pg.get_by_role("button", name="Resume here").click()
        posted = wait_text(main, "draw(s) computed", timeout=180)  # the page says how it ended
        wait_idle(pg)
        open_tab(pg, "Batch")
        text = wait_text(main, f"{DRAWS} of {DRAWS} items stored", timeout=30)
        assert f"{DRAWS} of {DRAWS} items stored" in text, text
        assert f"{DRAWS + 1 - stored} draw(s) computed" in posted and f"{stored - 1} already stored" in posted, posted
        shot(pg, "studies-batch-resumed")
        assert pg.locator('[data-testid="stException"]').count() == 0
        ctx.close()
    assert _runs(db) == DRAWS + 1
    print(f"\nbatch from the page: {DRAWS} draws, cancelled after {stored - 1}, resumed; {time.monotonic() - t0:.0f} s")
