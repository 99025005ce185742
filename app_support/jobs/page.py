"""Running a job from a Streamlit page: a progress bar, a *Cancel* button and the "cancelled" notice."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .process import Job
from .runner import run_job
from .settings import Progress, _inline

CANCELLED_NOTICE = "Run cancelled ({label}); earlier results are kept."


def _yield_check() -> Callable[[], None] | None:
    """Streamlit's check for a pending rerun/stop request of this script run (raises it), if available."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check
    except ImportError:
        return None
    return get_run_yield_check()


def run(label: str, fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
        key: str, progress_arg: str | None = None) -> Any:
    """Run ``fn(*args, **kwargs)`` as a job from a page, with a progress bar and a *Cancel* button.

    ``key`` names the Cancel button (``{key}_cancel``). Returns the value;
    raises the function's NlidError or a :class:`JobError` (show them with
    ``st.error``). When the script is stopped while the job runs (Cancel,
    another widget, a page change, a closed tab) the worker is killed and the
    next run of a page says the run was cancelled.

    Notes
    -----
    With ``runner.fastReruns`` (Streamlit's default) a widget click or a page
    change while a script runs *stops* that script run (``StopException`` at
    its next check, here within ``POLL_S``) and starts the next run at once in
    a new thread, before the stopped one has unwound; a stopped run can no
    longer write ``session_state`` either. So the "cancelled" notice is queued
    *before* the job starts and withdrawn when the job ends; a run stopped in
    between leaves it for the next run's ``state.show_notice()``.
    """
    import streamlit as st

    from app_support import state

    state.notify("info", CANCELLED_NOTICE.format(label=label))
    armed = state.queued_notice()

    def disarm() -> None:
        state.withdraw_notice(armed)

    box = st.empty()
    with box.container(border=True):  # the bar over the button: in a narrow column a side-by-side Cancel was cut
        bar = st.progress(0.0, text=f"{label}: starting")
        st.button("Cancel", key=f"{key}_cancel", icon=":material/stop_circle:")
    check = _yield_check()
    inline = _inline()
    shown: dict[str, Any] = {"text": "", "at": 0.0}
    latest: list[Progress] = []

    def draw(fraction: float, text: str) -> None:
        # Without Streamlit's check, every draw is the yield point where a cancel request is seen.
        now = time.monotonic()
        if check is None or (text != shown["text"] and now - shown["at"] >= 0.25):
            bar.progress(fraction, text=text)
            shown.update(text=text, at=now)

    def what(p: Progress) -> str:
        # a study's stage repeats its label ("multi-start: multi-start: start (3 of 8)"): say it once
        if not p.stage or label.lower().startswith(p.stage.lower()[:7]):
            return f"{label}: {p.message}"
        return f"{label}: {p.stage}: {p.message}"

    def on_progress(p: Progress) -> None:
        latest[:] = [p]
        if inline:  # no ticks while an inline job runs: this is the only chance to update and to cancel
            if check is not None:
                check()
            draw(p.fraction, what(p)[:300])

    def on_tick(job: Job) -> None:
        if check is not None:
            check()  # raises Streamlit's Stop/RerunException when the user has asked for something else
        elapsed = time.monotonic() - (job.submitted or time.monotonic())
        if latest:
            p = latest[0]
            draw(p.fraction, f"{what(p)} ({elapsed:.0f} s)"[:300])
        else:
            draw(0.0, f"{label}: running for {elapsed:.0f} s")

    def on_wait(waited: float, busy: int, n: int) -> None:
        if check is not None:
            check()
        draw(0.0, f"{label}: waiting for a free worker ({busy} of {n} busy on this server, {waited:.0f} s)")

    try:
        value = run_job(fn, args, kwargs, progress_arg=progress_arg, on_progress=on_progress, on_tick=on_tick,
                        on_wait=on_wait, inline=inline)
    except Exception:  # an error for the page to show, not a cancel (Streamlit's stop is a BaseException)
        disarm()
        box.empty()
        raise
    disarm()
    box.empty()
    return value
