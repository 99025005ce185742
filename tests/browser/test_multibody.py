"""The Multibody & interval page in a real browser: the pendulum is simulated at the paper's preset, the animation
(with its play button and time slider) and the tip trajectory appear, nothing raises; screenshots at two widths."""

from __future__ import annotations

import time

from .conftest import open_tab, shot, wait_idle, wait_text
from .test_dashboard import goto, no_exception

CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg'


def shots(page, name: str) -> None:  # type: ignore[no-untyped-def]
    no_exception(page)
    for width in (1280, 1600):
        page.set_viewport_size({"width": width, "height": 1900})
        time.sleep(0.8)
        shot(page, f"multibody-{name}-{width}")
    page.set_viewport_size({"width": 1400, "height": 1800})


def test_the_pendulum_is_simulated_and_animated(page):  # type: ignore[no-untyped-def]
    goto(page, "Multibody & interval")
    assert "height is 0.4 m" in wait_text(page.locator('[data-testid="stMain"]'), "height is 0.4 m")
    shots(page, "model")

    open_tab(page, "2. Simulate")
    page.locator(".st-key-mb_simulate button").click()
    wait_idle(page)
    try:
        page.locator(f".st-key-mb_animation {CHART}").first.wait_for(timeout=60_000)
    except Exception:
        shot(page, "multibody-simulate-failed")
        raise AssertionError(page.locator('[data-testid="stMain"]').inner_text()[-3000:]) from None
    page.locator(f".st-key-mb_tip_fig {CHART}").first.wait_for(timeout=30_000)
    results = wait_text(page.locator(".st-key-mb_sim_results"), "Play")
    assert "Play" in results and "t = 0 s" in results, results[-1000:]  # the play button and the slider's time
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Flexible (ANCF)" in body and "Rigid" in body
    # the animation runs: after Play the slider's time moves on
    page.locator(".st-key-mb_animation").get_by_text("Play").first.click()
    time.sleep(1.5)
    assert "t = 0 s" not in page.locator(".st-key-mb_animation").inner_text()
    page.locator(".st-key-mb_animation").get_by_text("Pause").first.click()
    shots(page, "simulate")
