"""The Data page in a real browser with the Silverbox file uploaded whole: exact sampling rate, split into a
training and a test record on the page, the sidebar current at once, rename, form values and the upload
panel's state kept when the user leaves the page and comes back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir
from .conftest import goto, serve, shot, wait_idle, wait_text

DATA = shared_data_dir() or Path("/nonexistent")
CSV = DATA / "silverbox" / "SNLS80mV.csv"
FIELDS = {"columns": "f=V1,x=V2", "units": "f=V,x=V", "fs": "610.3515625"}

pytestmark = pytest.mark.skipif(not CSV.is_file(), reason="the Silverbox data is not installed")



def sidebar(page, expect: str = "") -> str:  # type: ignore[no-untyped-def]
    """The sidebar's text, once it shows ``expect`` (or after a minute)."""
    return wait_text(page.locator('[data-testid="stSidebar"]'), expect)


def no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0


def edit_cell(page, grid, row: int, column: int, text: str, *, new_row: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Type ``text`` into a cell of the split table (columns name, from, to, role; the grid is drawn on a canvas)."""
    box = grid.bounding_box()
    inner = box["width"] - 33  # the row-number column is about 33 px wide
    x = box["x"] + 33 + inner * (0.125, 0.375, 0.625, 0.875)[column]
    y = box["y"] + 35 * (row + 1) + 17  # header and rows are 35 px high
    page.mouse.click(x, y)  # selects the cell; on the empty last line, adds a row and opens its first cell
    time.sleep(0.5)
    if not new_row:
        page.keyboard.press("Enter")  # opens the cell's editor
        time.sleep(0.5)
        page.keyboard.press("Control+A")
    page.keyboard.type(text, delay=60)
    page.keyboard.press("Enter")
    wait_idle(page)


def test_upload_split_rename_and_come_back(browser):  # type: ignore[no-untyped-def]
    with serve({"NLID_SHARED_DATA": str(DATA)}) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 1600})
        page = context.new_page()
        page.set_default_timeout(90_000)
        try:
            page.goto(server.url)
            wait_idle(page)
            goto(page, "Data")
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(CSV))
            wait_idle(page)
            for key, value in FIELDS.items():
                field = page.locator(f".st-key-{key} input")
                field.fill(value)
                field.press("Enter")
                wait_idle(page)
            assert page.locator(".st-key-load_upload button").is_visible()  # the panel stays open while editing
            # without the sampling rate: the error names the page's field, not the CLI flag
            page.locator(".st-key-fs input").fill("")
            page.locator(".st-key-fs input").press("Enter")
            wait_idle(page)
            page.locator(".st-key-load_upload button").click()
            wait_idle(page)
            error = page.locator('[data-testid="stAlertContentError"]').inner_text()
            assert "'Sampling rate [Hz]'" in error and "--fs" not in error, error
            shot(page, "data-error-1280")
            page.locator(".st-key-fs input").fill(FIELDS["fs"])
            page.locator(".st-key-fs input").press("Enter")
            wait_idle(page)
            page.locator(".st-key-load_upload button").click()
            wait_idle(page)
            no_exception(page)
            # the sidebar is drawn before the page runs: it must show the new record without another click
            assert "SNLS80mV: 131,072 samples, 610.3515625 Hz" in sidebar(page, "SNLS80mV: 131,072")
            main = wait_text(page.locator('[data-testid="stMain"]'), "131,072 samples at 610.3515625 Hz")
            assert "131,072 samples at 610.3515625 Hz" in main

            grid = page.locator('[data-testid="stDataFrame"]').first
            grid.scroll_into_view_if_needed()
            for column, text in enumerate(("train", "40650", "105712")):
                edit_cell(page, grid, 0, column, text)
            edit_cell(page, grid, 1, 0, "test", new_row=True)
            for column, text in ((1, "105712"), (2, "127400")):
                edit_cell(page, grid, 1, column, text)
            page.locator(".st-key-split_record button").click()
            wait_idle(page)
            no_exception(page)
            assert page.locator('[data-testid="stAlertContentError"]').count() == 0, page.inner_text("body")[-800:]
            side = sidebar(page, "test (test): 21,688")
            # the first part fits, the next one tests (the role column left empty)
            assert "train (fit): 65,062 samples, 610.3515625 Hz" in side and "test (test): 21,688 samples" in side
            shot(page, "data-split-1280")
            page.set_viewport_size({"width": 1600, "height": 1600})
            wait_idle(page)
            shot(page, "data-split-1600")
            page.set_viewport_size({"width": 1280, "height": 1600})

            name = page.locator('.st-key-rename_to_SNLS80mV input')
            name.fill("SNLS80mV whole")
            name.press("Enter")
            wait_idle(page)
            page.locator(".st-key-rename_record button").click()
            wait_idle(page)
            no_exception(page)
            side = sidebar(page, "SNLS80mV whole")
            assert "SNLS80mV whole: 131,072 samples" in side and "SNLS80mV:" not in side

            # leave the page and come back: the fields keep their values, the panel its state
            goto(page, "Model")
            goto(page, "Data")
            for key, value in FIELDS.items():
                assert page.locator(f".st-key-{key} input").input_value() == value
            panel = page.locator(".st-key-upload_panel summary")
            panel.click()  # close it
            wait_idle(page)
            page.locator(".st-key-columns input").wait_for(state="hidden", timeout=5_000)
            goto(page, "Home")
            goto(page, "Data")
            time.sleep(1.0)
            assert page.locator(".st-key-upload_panel details").get_attribute("open") is None  # still closed
            assert not page.locator(".st-key-columns input").is_visible()
            shot(page, "data-come-back-1280")
            panel.click()
            wait_idle(page)
            assert page.locator(".st-key-columns input").input_value() == FIELDS["columns"]
            no_exception(page)
        finally:
            context.close()
