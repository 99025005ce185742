"""The Multi-DOF page in a real browser: the 3-mass chain is simulated and identified stage by stage, the stage
table and the validation figure appear, nothing raises; screenshots of each tab at two widths."""

from __future__ import annotations

import time

from .conftest import open_tab, shot, wait_idle, wait_text
from .test_dashboard import goto, no_exception

CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg'


def tab(page, name: str, click: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Open the tab ``name`` and press the button of key ``click`` in it, if any."""
    open_tab(page, name)
    if click:
        page.locator(f".st-key-{click} button").click()
        wait_idle(page)


def drawn(page, chart: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for the chart of key ``chart``; no exception on the page; screenshots at 1280 and 1600 px."""
    page.locator(f".st-key-{chart} {CHART}").first.wait_for(timeout=120_000)
    shots(page, name)


def shots(page, name: str) -> None:  # type: ignore[no-untyped-def]
    no_exception(page)
    for width in (1280, 1600):
        page.set_viewport_size({"width": width, "height": 2000})
        time.sleep(0.6)
        shot(page, f"mdof-{name}-{width}")
    page.set_viewport_size({"width": 1400, "height": 1800})


def test_the_chain_is_simulated_identified_and_validated(page):  # type: ignore[no-untyped-def]
    goto(page, "Multi-DOF")
    assert "3-mass chain: 3 DOFs" in wait_text(page.locator('[data-testid="stCode"]').first, "3-mass chain")
    drawn(page, "mdof_diagram", "model")

    tab(page, "2. Records", click="mdof_simulate")
    assert "5 records" in wait_text(page.locator(".st-key-mdof_records"), "5 records")
    drawn(page, "mdof_record_fig", "records")

    tab(page, "3. Evidence")
    drawn(page, "mdof_frf", "evidence")

    tab(page, "4. Stages", click="mdof_run_all")  # about 10 s for the four stages
    page.locator(".st-key-mdof_stage_results").wait_for(timeout=120_000)
    wait_idle(page)
    body = wait_text(page.locator('[data-testid="stMain"]'), "Stage 4: joint")
    assert "Stage 4: joint" in body and "Trust." in body and "Every stage has run" in body, body[-2000:]
    shots(page, "stages")

    tab(page, "5. Validate")
    try:
        drawn(page, "mdof_validation_fig", "validate")
    except Exception:
        shot(page, "mdof-validate-failed")
        raise AssertionError(page.locator('[data-testid="stMain"]').inner_text()[-3000:]) from None
    assert "x1: fit" in page.locator(".st-key-mdof_validation").inner_text()
