"""Real-browser fixtures: the dashboard served by ``streamlit run`` and headless Chromium via Playwright.

Browser tests skip when Playwright or a Chromium binary is missing (a developer laptop without them);
CI installs both.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("NLID_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
SHOTS = REPO / "out" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


@contextlib.contextmanager
def serve(env_extra: dict[str, str] | None = None, *, port: int | None = None,
          args: list[str] | None = None) -> Iterator[Server]:
    """Run ``streamlit run app.py`` on a loopback port (a free one unless given), with extra environment and
    command-line options; yield its URL and pid."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
           "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", *(args or [])]
    env = dict(os.environ, **(env_extra or {}))
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                pytest.fail(f"streamlit did not start: {out[-2000:]}")
            time.sleep(0.5)
        yield Server(url, proc.pid)
        assert proc.poll() is None, "the dashboard server died during the tests"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    with serve() as server:
        yield server.url


@pytest.fixture(scope="session")
def browser():  # type: ignore[no-untyped-def]
    sync_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no Chromium binary (install the Debian package chromium)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser, app_url):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(app_url)
    wait_idle(pg)
    yield pg
    context.close()


def wait_idle(pg) -> None:  # type: ignore[no-untyped-def]
    """Wait until the script finished running and the websocket is connected."""
    time.sleep(0.3)
    pg.wait_for_selector(READY, timeout=90_000)


#: What shows that a page is open and ready for the next step, where a test goes on at once.
READY_ON = {"Identify": ".st-key-run_identification button", "Teaching mode": ".st-key-teach_measure button"}


def goto(pg, title: str, ready: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Open the page ``title`` from the navigation and wait until it is there.

    On a loaded machine a click on the navigation can land while a rerun the app asked for (after a
    load, say) is still starting, and be lost; so the click is repeated until the link's address is
    the page's and its ``ready`` element (default from :data:`READY_ON`) is shown.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    link = pg.get_by_role("link", name=title).first
    ready = ready or READY_ON.get(title)
    for attempt in range(5):
        href = link.get_attribute("href") or ""
        link.click()
        wait_idle(pg)
        try:
            if href:
                pg.wait_for_url(re.compile(re.escape(href.rstrip("/").rsplit("/", 1)[-1]) + r"/?([?#].*)?$"),
                                timeout=20_000)
            if ready:
                pg.locator(ready).first.wait_for(timeout=20_000)
            return
        except PlaywrightTimeout:
            if attempt == 4:
                raise


def load_upload(pg, expect: str, *, timeout: float = 60.0, key: str = "load_upload") -> None:  # type: ignore[no-untyped-def]
    """Press a load button (the Data page's by default; ``key`` names another, e.g. Home's ``load_silverbox``)
    and wait until the sidebar shows ``expect`` (a record's "name: N samples").

    On a loaded machine the press can land while a rerun (the one the file choice started, or the page's first)
    is redrawing the button, and be lost; it is pressed again only when the sidebar still lacks the record
    after a while, so a slow load is never done twice.
    """
    side = pg.locator('[data-testid="stSidebar"]')
    for attempt in range(3):
        wait_idle(pg)
        pg.locator(f".st-key-{key} button").click()
        wait_idle(pg)
        if expect in wait_text(side, expect, timeout):
            return
    raise AssertionError(f"the sidebar never showed {expect!r}: {' '.join(side.inner_text().split())[:300]}")


def open_tab(pg, name: str) -> None:  # type: ignore[no-untyped-def]
    """Open the tab ``name`` and wait until the rerun that switching asks for has ended with it selected.

    The dashboard's tabs are kept by the server (a rerun or a redraw leaves the chosen tab open), so one
    click is enough once it has landed; it is repeated if a rerun that was starting swallowed it.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(4):
        pg.get_by_role("tab", name=name).click()
        wait_idle(pg)
        try:
            pg.locator('[role="tab"][aria-selected="true"]', has_text=name).first.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == 3:
                raise


def choose(pg, key: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Pick ``option`` in the select box of key ``key`` and wait for the rerun it starts; the click that opens
    the list is repeated if a rerun redrew the box under it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(4):
        wait_idle(pg)
        pg.locator(f".st-key-{key}").click()
        try:
            pg.get_by_role("option", name=option).click(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 3:
                raise
    wait_idle(pg)


def wait_text(locator, text: str, timeout: float = 60.0) -> str:  # type: ignore[no-untyped-def]
    """Poll ``locator``'s whitespace-normalised text until it contains ``text`` (a rerun the app asks for
    after a click can start after ``wait_idle`` saw the first run end); return the text either way, so the
    caller's assertion shows what was there."""
    deadline = time.monotonic() + timeout
    while True:
        seen = " ".join(locator.inner_text().split())
        if text in seen or time.monotonic() > deadline:
            return seen
        time.sleep(0.25)


def shot(pg, name: str) -> Path:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    pg.screenshot(path=str(path))
    return path
