"""Typed terms on the Model page in a real browser: they join the term list the user sees, a bad line is
refused with its message and leaves them in place, and an identification runs with them."""

from __future__ import annotations

from .conftest import shot, wait_idle
from .test_dashboard import goto, no_exception


def test_typed_terms_join_the_model_and_survive_a_bad_line(page):  # type: ignore[no-untyped-def]
    page.locator(".st-key-load_example button").click()
    wait_idle(page)
    goto(page, "Model")
    box = page.locator(".st-key-custom_terms textarea")
    box.fill("asym=ka*x*abs(x)")
    box.press("Control+Enter")
    wait_idle(page)
    terms = page.locator(".st-key-terms")
    assert "asym" in terms.inner_text()
    box.fill("bad=__import__('os').system('id')")
    box.press("Control+Enter")
    wait_idle(page)
    assert "only the functions" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert "asym" in page.locator(".st-key-terms").inner_text(), "the previous typed term stays"
    no_exception(page)
    shot(page, "model-typed-terms")
    goto(page, "Identify")
    page.locator(".st-key-run_identification button").click()
    wait_idle(page)
    page.locator(".st-key-results").wait_for()
    no_exception(page)
    assert "ka" in page.locator(".st-key-results").inner_text()
