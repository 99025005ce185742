"""Long studies in a real browser: progress that says what it does, a Cancel that keeps earlier results; the
Excitation design page in the units and at the sampling rate of a volt record (Silverbox)."""

from __future__ import annotations

import re
import time

from .conftest import choose, goto, load_upload, open_tab, serve, shot, wait_idle

PROGRESS = '[data-testid="stProgress"]'



def no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_study_shows_its_progress_and_a_cancel_keeps_earlier_results(page):  # type: ignore[no-untyped-def]
    page.locator(".st-key-load_example button").click()
    wait_idle(page)
    goto(page, "Identify")
    page.locator(".st-key-run_identification button").click()
    wait_idle(page)
    page.locator(".st-key-results").wait_for()
    goto(page, "Identifiability")
    summary = page.locator(".st-key-identifiability_summary")
    summary.wait_for()
    assert "Weakest parameter" in summary.inner_text()  # the earlier result the cancel must keep
    open_tab(page, "Multi-start")
    assert re.search(r"Takes (under 2 s|about \d+ (s|min)) on this record", page.inner_text("body"))
    starts = page.locator(".st-key-n_starts input")
    starts.fill("50")
    starts.press("Enter")
    wait_idle(page)
    page.locator(".st-key-run_multistart button").click()  # the tab stays open across the rerun
    bar = page.locator(PROGRESS).first
    bar.wait_for()
    seen: list[str] = []
    deadline = time.time() + 45
    while time.time() < deadline:  # the text changes as the starts go by: "start (1 of 50)", "start (2 of 50)", ...
        text = bar.inner_text()
        found = re.findall(r"start \((\d+) of 50\)", text)
        if found and (not seen or seen[-1] != found[0]):
            seen.append(found[0])
        if len(seen) >= 2:
            break
        time.sleep(0.2)
    assert len(seen) >= 2, f"the progress text did not move on: {seen}"
    assert text.startswith("multi-start: start (")
    page.locator(".st-key-multistart_cancel button").click()
    wait_idle(page)
    page.get_by_text("Run cancelled (multi-start); earlier results are kept.").wait_for()
    assert page.locator(PROGRESS).count() == 0
    assert "Weakest parameter" in page.locator(".st-key-identifiability_summary").inner_text()
    assert page.locator(".st-key-multistart_table").count() == 0  # the cancelled study left nothing behind
    no_exception(page)


def test_design_page_on_volt_data_uses_the_record_units_and_rate(browser, silverbox_csv):  # type: ignore[no-untyped-def]
    with serve({"NLID_SHARED_DATA": str(silverbox_csv.parents[1])}) as server:
        context = browser.new_context(viewport={"width": 1600, "height": 2000})
        pg = context.new_page()
        pg.set_default_timeout(90_000)
        try:
            pg.goto(server.url)
            wait_idle(pg)
            load_upload(pg, "silverbox-arrow", key="load_silverbox")
            goto(pg, "Identify")
            pg.locator(".st-key-run_identification button").click()
            wait_idle(pg)
            pg.locator(".st-key-results").wait_for()
            goto(pg, "Identifiability")
            pg.locator(".st-key-identifiability_summary").wait_for()
            wait_idle(pg)  # the page may still be drawing after the study summary appeared: a tab chosen then is redrawn
            open_tab(pg, "Do I need this term?")
            assert re.search(r"8 refits \(without c1, without k1, without k2, without k3, with m1, with c2,"
                             r" with fc, with f0\)", pg.inner_text("body"))
            choose(pg, "struct_val", "silverbox-test")
            pg.locator(".st-key-run_structure button").click()
            pg.locator(PROGRESS).first.wait_for()
            assert "structure check: " in pg.locator(PROGRESS).first.inner_text()
            pg.get_by_text("keep k3: removing it raises BIC").wait_for(timeout=180_000)
            wait_idle(pg)
            body = pg.inner_text("body")
            # k3 is essential: without it the validation RMSE rises from about 4.7 mV to about 8.5 mV; the offset
            # f0 is missing: with it the validation RMSE falls to about 0.3 mV
            assert re.search(r"keep k3: removing it raises BIC by [\d.e+]+; validation RMSE 4\.7\d mV (->|→)"
                             r" 8\.[45]\d mV", body), body
            assert re.search(r"add f0: adding it lowers BIC by [\d.e+]+; validation RMSE 4\.7\d mV (->|→) 3\d\d µV",
                             body), body
            assert re.search(r"Took [\d.]+ s\. Each variant was fitted by output error from this run's estimate", body)
            no_exception(pg)
            for width in (1600, 1280):
                pg.set_viewport_size({"width": width, "height": 2400})
                time.sleep(0.5)
                shot(pg, f"silverbox-identifiability-{width}")
            goto(pg, "Excitation design")
            pg.locator(".st-key-design_results").wait_for()
            body = pg.inner_text("body")
            assert "Amplitude [V]" in body and "Displacement noise standard deviation [V]" in body
            assert "[N]" not in body and "[m]" not in body
            assert "610.3515625 Hz sampling" in body
            assert pg.locator(".st-key-exc_fs_run1 input").input_value() == "610.3515625"
            pg.locator(".st-key-suggest_design button").click()
            wait_idle(pg)
            best = pg.locator(".st-key-design_suggestion")
            best.wait_for()
            assert re.search(r"Best: chirp [\d.]+ V over", best.inner_text())
            pg.locator(".st-key-add_design button").click()  # the next click keeps the suggestion on screen
            wait_idle(pg)
            assert "Best: chirp" in pg.locator(".st-key-design_suggestion").inner_text()
            no_exception(pg)
            for width in (1600, 1280):
                pg.set_viewport_size({"width": width, "height": 2400})
                time.sleep(0.5)
                shot(pg, f"silverbox-design-{width}")
        finally:
            context.close()

