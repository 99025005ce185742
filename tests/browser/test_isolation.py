"""One engineer's hostile files must not touch the shared server or anyone else's work (real browser).

Session A, which already holds the seed example, uploads a MAT file that crashes scipy's reader
natively and a spreadsheet that declares 1 048 576 x 16 384 cells. The server of this test runs
with a reader that has a native bug (``tests/fault_injection``: the crash file goes straight to
scipy inside the parsing worker, as it did before nlid walked MAT headers itself), so the crash
really happens and the isolation is what is tested. While those are being read,
session B on the same server uploads a record and completes an identification. A then sees one
specific error per file and keeps its earlier record; the server answers its health check
throughout and afterwards.
"""

from __future__ import annotations

import os
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.crash_files import mat_reader_crash
from tests.hostile_files import xlsx_dimension_bomb

from .conftest import goto, load_upload, serve, shot, wait_idle

FAULTS = Path(__file__).resolve().parents[1] / "fault_injection"


@pytest.fixture(scope="module")
def crashing_server() -> Iterator[str]:
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FAULTS), os.environ.get("PYTHONPATH")])),
           "NLID_TEST_UNGUARDED_MAT": "1"}
    with serve(env) as server:
        yield server.url


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as resp:
        return bool(resp.read().decode().strip() == "ok")


def test_crashing_and_bomb_uploads_leave_the_server_and_other_sessions_working(browser, crashing_server, tmp_path):
    app_url = crashing_server  # type: ignore[no-untyped-def]
    from nlid_core.examples import ExampleSpec, generate

    crash = mat_reader_crash(tmp_path)
    bomb = xlsx_dimension_bomb(tmp_path)
    rec = generate(ExampleSpec(terms={"m0": 0.5, "c1": 1.2, "k1": 2000.0, "k3": -2e6}, amplitude_n=4.0,
                               f0_hz=1.0, f1_hz=20.0, duration_s=6.0, fs_hz=500.0, noise={"x": 2e-5},
                               measured=("x",), seed=5), name="rig")
    good = tmp_path / "rig.csv"
    pd.DataFrame({"time": rec.t, "force": rec.f, "disp": rec.x}).to_csv(good, index=False)

    ctx_a = browser.new_context(viewport={"width": 1400, "height": 1800})
    ctx_b = browser.new_context(viewport={"width": 1400, "height": 1800})
    try:
        a = ctx_a.new_page()
        a.set_default_timeout(90_000)
        a.goto(app_url)
        wait_idle(a)
        a.locator(".st-key-load_example button").click()
        wait_idle(a)
        goto(a, "Data")

        b = ctx_b.new_page()
        b.set_default_timeout(90_000)
        b.goto(app_url)
        wait_idle(b)
        goto(b, "Data")

        # A starts reading the hostile files and does not wait for them
        a.get_by_text("Upload records").first.click()  # collapsed once a record is loaded
        a.locator('[data-testid="stFileUploaderDropzoneInput"]').wait_for(state="attached")
        a.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files([str(crash), str(bomb)])
        wait_idle(a)
        a.locator(".st-key-load_upload button").click()

        # meanwhile B loads its record and identifies a model
        b.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(good))
        load_upload(b, "rig:")
        assert _healthy(app_url)
        goto(b, "Identify")
        b.locator(".st-key-run_identification button").click()
        wait_idle(b)
        results = b.locator(".st-key-results")
        results.wait_for()
        assert "k1" in results.inner_text()
        assert b.locator('[data-testid="stException"]').count() == 0

        # A gets one specific error per file and keeps the example
        wait_idle(a)
        errors = " ".join(a.locator('[data-testid="stAlertContentError"]').all_inner_texts())
        assert re.search(r"crash\.mat\b.*reader crashed on it \(signal SIG", errors), errors
        assert re.search(rf"{re.escape(bomb.name)}\b.*NLID_MAX_COLUMNS", errors), errors
        assert a.locator('[data-testid="stException"]').count() == 0
        sidebar = a.locator('[data-testid="stSidebar"]').inner_text()
        assert "seed: 6,000 samples" in sidebar
        shot(a, "isolation-hostile-uploads")
        assert _healthy(app_url)
        # and A can go on working
        goto(a, "Identify")
        a.locator(".st-key-run_identification button").click()
        wait_idle(a)
        a.locator(".st-key-results").wait_for()
    finally:
        ctx_a.close()
        ctx_b.close()


def test_a_page_url_opened_directly_goes_through_the_app(browser, app_url):  # type: ignore[no-untyped-def]
    """A bookmarked page URL gets the app's navigation and sidebar, never a page run on its own."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(f"{app_url}/design")
        wait_idle(pg)
        sidebar = pg.locator('[data-testid="stSidebar"]').inner_text()
        assert "Excitation design" in sidebar and "Study" in sidebar, sidebar
        assert pg.locator('[data-testid="stException"]').count() == 0
    finally:
        ctx.close()
