"""Nonlinearity evidence on a measured multisine record (Silverbox) in a real browser: the verdict names the
cubic stiffness and the distortion above the noise, and at 1280 × 800 a plot is visible without scrolling."""

from __future__ import annotations

import time

import pytest

from tests.conftest import shared_data_dir

from .conftest import SHOTS, goto, load_upload, open_tab, serve, wait_idle

WIDTHS = (1280, 1600)


def no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0


def test_silverbox_broadband_evidence(browser):  # type: ignore[no-untyped-def]
    data = shared_data_dir()
    if data is None or not (data / "silverbox" / "SNLS80mV.csv").is_file():
        pytest.skip("Silverbox data not available (shared data directory)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve({"NLID_SHARED_DATA": str(data)}) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(120_000)
        try:
            page.goto(server.url)
            wait_idle(page)
            load_upload(page, "silverbox-arrow", key="load_silverbox")
            goto(page, "Nonlinearity")
            no_exception(page)
            summary = page.locator(".st-key-nl_summary")
            summary.wait_for()
            text = summary.inner_text()
            assert "k3" in text and "needs k3" in text, text
            assert "nonlinear distortion" in text and "above the noise" in text, text
            assert "odd-degree" in text, text

            # above the fold at 1280 x 800: the verdict box and the headline plot both start on screen
            chart = page.locator(".st-key-nl_headline .js-plotly-plot .main-svg").first
            chart.wait_for()
            time.sleep(0.5)
            box = chart.bounding_box()
            verdict = summary.bounding_box()
            assert box is not None and verdict is not None
            assert box["y"] + 0.5 * box["height"] < 800, box  # at least half the plot visible without scrolling
            assert verdict["y"] < 800 - 100, verdict
            page.screenshot(path=str(SHOTS / "broadband-fold-1280x800.png"))

            # the Broadband (BLA) tab: figures with the record's units, the detection lines, the CSV download
            open_tab(page, "Broadband (BLA)")
            page.locator(".st-key-bla_fig .js-plotly-plot .main-svg").first.wait_for()
            titles = page.locator(".st-key-bla_fig").locator(".g-ytitle, .g-xtitle, .g-y2title, .g-x2title").all_text_contents()
            assert any("dB re 1 V/V" in t for t in titles) and any("Hz" in t for t in titles), titles
            page.locator(".st-key-detection_fig .js-plotly-plot .main-svg").first.wait_for()
            with page.expect_download() as info:
                page.locator(".st-key-nl_bla_download button").click()
            csv = info.value.path().read_text(encoding="utf-8")
            assert csv.splitlines()[0].startswith("frequency [Hz],excited,")
            assert len(csv.splitlines()) == 8192 // 2 + 2
            no_exception(page)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 1800})
                time.sleep(0.8)
                page.screenshot(path=str(SHOTS / f"broadband-bla-{width}.png"))
            page.set_viewport_size({"width": 1600, "height": 800})
            open_tab(page, "Term check")
            time.sleep(0.5)
            page.screenshot(path=str(SHOTS / "broadband-fold-1600x800.png"))
            no_exception(page)

        finally:
            context.close()
