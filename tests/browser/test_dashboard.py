"""The dashboard in a real browser: upload, identify, results table, validation plot; every page renders."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .conftest import choose, goto, load_upload, shot, wait_idle, wait_text

PAGES = ["Home", "Data", "Nonlinearity", "Model", "Identify", "Friction & hysteresis", "Validate", "Identifiability",
         "Excitation design", "Export", "Teaching mode"]



def no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0


def test_example_walk_through_every_page(page):  # type: ignore[no-untyped-def]
    page.locator(".st-key-load_example button").click()
    wait_idle(page)
    for title in PAGES:
        goto(page, title)
        no_exception(page)
        if title == "Identify":
            page.locator(".st-key-run_identification button").click()
            wait_idle(page)
            page.locator(".st-key-results").wait_for()
        shot(page, f"example-{title.lower().replace(' ', '-')}")
    goto(page, "Validate")
    page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for()
    no_exception(page)


def test_upload_identify_validate(page, tmp_path):  # type: ignore[no-untyped-def]
    # a different system from the example: light, stiff, softening spring, displacement only
    from nlid_core.examples import ExampleSpec, generate

    rec = generate(ExampleSpec(terms={"m0": 0.5, "c1": 1.2, "k1": 2000.0, "k3": -2e6}, amplitude_n=4.0,
                               f0_hz=1.0, f1_hz=20.0, duration_s=10.0, fs_hz=500.0, noise={"x": 2e-5},
                               measured=("x",), seed=4), name="rig")
    path = tmp_path / "rig.csv"
    pd.DataFrame({"time": rec.t, "force": rec.f, "disp": rec.x}).to_csv(path, index=False)
    goto(page, "Data")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    load_upload(page, "rig:")
    no_exception(page)
    goto(page, "Model")
    no_exception(page)
    goto(page, "Identify")
    page.locator(".st-key-run_identification button").click()
    wait_idle(page)
    results = page.locator(".st-key-results")
    results.wait_for()
    assert "k3" in results.inner_text()
    shot(page, "upload-identify")
    goto(page, "Validate")
    page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for()
    no_exception(page)
    shot(page, "upload-validate")


def test_two_sessions_do_not_share_data(browser, app_url):  # type: ignore[no-untyped-def]
    first = browser.new_context(viewport={"width": 1200, "height": 1000})
    second = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        a = first.new_page()
        a.goto(app_url)
        wait_idle(a)
        a.locator(".st-key-load_example button").click()
        wait_idle(a)
        assert "seed: 6,000 samples" in wait_text(a.locator('[data-testid="stSidebar"]'), "seed: 6,000 samples")
        b = second.new_page()
        b.goto(app_url)
        wait_idle(b)
        assert "No record loaded yet" in b.locator('[data-testid="stSidebar"]').inner_text()
    finally:
        first.close()
        second.close()


def test_teaching_mode_in_the_browser(page):  # type: ignore[no-untyped-def]
    """Every step as a class would see it, in the browser: measure, the evidence (from a record of displacement
    only), the linear model, identify, reveal, on System B (whose default test once diverged); every system is
    walked through the same steps by ``tests/app/test_pages.py``."""
    goto(page, "Teaching mode")
    main = page.locator('[data-testid="stMain"]')
    for system, structure in (("System B", "softening spring"),):
        choose(page, "teach_system", system)
        page.locator(".st-key-teach_measure button").click()
        wait_idle(page)
        assert "verdict:" in wait_text(main, "verdict:", timeout=120), system
        assert "Linear fit:" in wait_text(main, "Linear fit:", timeout=120), system
        assert f"{system} is a" not in main.inner_text(), system  # the evidence is the exercise: no answer yet
        page.locator(".st-key-teach_identify button").click()
        wait_idle(page)
        assert "on a second test at 60 % of the level" in wait_text(main, "on a second test", timeout=120), system
        page.locator(".st-key-teach_reveal label").click()
        wait_idle(page)
        assert f"{system} is a {structure}" in wait_text(main, f"{system} is a {structure}"), system
        text = main.inner_text()
        assert "Analysis failed" not in text and "step size" not in text and "Traceback" not in text, system
        no_exception(page)
        if system == "System B":
            page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for()
            shot(page, "teaching")


def test_the_favicon_is_served_by_the_dashboard_itself(page, app_url):  # type: ignore[no-untyped-def]
    # an offline lab network cannot reach an emoji or font CDN: the icon comes from the app's own server
    href = page.eval_on_selector("link[rel~='icon']", "el => el.href")
    assert href.startswith(app_url) or href.startswith("data:"), href
