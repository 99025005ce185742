"""Jobs in worker processes (app_support.jobs): results, progress, cancel, crashes, limits, the Identify page."""

from __future__ import annotations

import math
import os
import re
import resource
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from app_support import jobs, state
from nlid_core.errors import ModelSpecError
from nlid_core.estimate import identify

REPO = Path(__file__).resolve().parents[2]
TERMS = "m0,m1,c1,c2,k1,k3"


@pytest.fixture(autouse=True)
def _process_workers(monkeypatch):
    """Every test here exercises real worker processes unless it says otherwise."""
    monkeypatch.delenv(jobs.INLINE_ENV, raising=False)
    monkeypatch.delenv(jobs.MEMORY_ENV, raising=False)


def gone(pid: int, within_s: float = 2.0) -> bool:
    """True once process ``pid`` no longer exists (checked for up to ``within_s``)."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def finish(job: jobs.Job, timeout_s: float = 60.0) -> list[jobs.Progress]:
    updates: list[jobs.Progress] = []
    end = time.monotonic() + timeout_s
    while not job.done and time.monotonic() < end:
        updates += job.wait(jobs.POLL_S)
    assert job.done
    return updates


def test_identify_in_a_worker_gives_the_in_process_result(seed_record):
    job = jobs.Job(identify, (seed_record, TERMS), progress_arg="progress").start()
    updates = finish(job)
    assert job.pid is not None and job.pid != os.getpid()
    fit = job.result()
    direct = identify(seed_record, TERMS)
    assert fit.success and direct.success
    assert list(fit.values) == list(direct.values)
    np.testing.assert_allclose([fit.values[n] for n in fit.values], [direct.values[n] for n in direct.values],
                               rtol=1e-9)
    assert fit.equation() == direct.equation()
    stages = [u.stage for u in updates]
    assert stages[0] == "equation-error" and stages[-1] == "done"
    assert all(0.0 <= u.fraction <= 1.0 for u in updates)
    assert gone(job.pid)


def test_start_up_is_small_after_the_first_job():
    """Jobs fork from one preloaded server: not a fresh interpreter each (the times are in bench/)."""
    first = jobs.Job(jobs._origin_for_tests).start()
    finish(first)
    second = jobs.Job(jobs._origin_for_tests).start()
    finish(second)
    (pid1, parent1, loaded1), (pid2, parent2, loaded2) = first.result(), second.result()
    assert pid1 != pid2 and pid1 == first.pid and pid2 == second.pid
    if jobs.process._context().get_start_method() == "forkserver":
        # both forked by the same server, which is not this process, with the heavy imports already done
        assert parent1 == parent2 != os.getpid()
        assert loaded1 == loaded2 == list(jobs.PRELOAD)
    assert second.startup_s is not None and second.startup_s >= 0.0


def test_jobs_and_the_process_runner_share_one_forkserver_context():
    """One isolation module: the jobs' context is the process runner's, with the jobs' preload added."""
    from nlid_core.isolation import WORKER_PREFIX, worker_context

    assert worker_context() is jobs.process._context()
    assert jobs.process._PROCESS_PREFIX.startswith(WORKER_PREFIX)


def test_workers_are_limited_niced_and_single_threaded(monkeypatch):
    monkeypatch.setenv(jobs.MEMORY_ENV, "3000")
    assert jobs.run_job(resource.getrlimit, (resource.RLIMIT_AS,)) == (3000 * 2**20, 3000 * 2**20)
    cpu_soft, _ = jobs.run_job(resource.getrlimit, (resource.RLIMIT_CPU,))
    assert cpu_soft == jobs.DEFAULT_CPU_S
    assert jobs.run_job(os.nice, (0,)) >= os.nice(0) + jobs.NICE
    assert jobs.run_job(os.getenv, ("OPENBLAS_NUM_THREADS",)) == "1"


def test_nlid_errors_come_back_as_the_same_type_and_message(seed_record):
    with pytest.raises(ModelSpecError) as direct:
        identify(seed_record, "m0,zz")
    with pytest.raises(ModelSpecError) as remote:
        jobs.run_job(identify, (seed_record, "m0,zz"))
    assert str(remote.value) == str(direct.value)


def test_other_errors_become_one_generic_line():
    with pytest.raises(jobs.JobError, match=r"failed unexpectedly \(ValueError in sqrt\)") as err:
        jobs.run_job(math.sqrt, (-1.0,))
    assert "\n" not in str(err.value) and "domain" not in str(err.value)


def test_what_cannot_run_in_a_worker_is_refused_before_starting(seed_record):
    with pytest.raises(jobs.JobError, match="not a top-level function"):
        jobs.Job(lambda: 0)
    with pytest.raises(jobs.JobError, match="cannot be sent to a worker"):
        jobs.Job(identify, (seed_record, TERMS), {"progress": lambda *a: None})


def test_cancel_kills_the_worker_promptly():
    job = jobs.Job(jobs._sleep_for_tests, (30.0,), progress_arg="progress").start()
    end = time.monotonic() + 30
    while not job.wait(jobs.POLL_S) and time.monotonic() < end:
        pass  # until the function is running (first progress message)
    assert job.alive
    t0 = time.monotonic()
    job.cancel()
    assert gone(job.pid) and time.monotonic() - t0 < 2.0
    with pytest.raises(jobs.JobCancelled):
        job.result()


def test_streamlit_stopping_the_script_kills_the_worker():
    """A rerun/stop request surfaces as an exception out of a tick (an st.* call): the worker must die."""
    seen: list[jobs.Job] = []

    def tick(job: jobs.Job) -> None:
        seen.append(job)
        if job.startup_s is not None:
            raise StopException()

    busy_before = jobs._slots().busy
    with pytest.raises(StopException):
        jobs.run_job(jobs._sleep_for_tests, (30.0,), progress_arg="progress", on_tick=tick)
    assert gone(seen[-1].pid)
    assert jobs._slots().busy == busy_before  # the worker slot is free again


def test_a_segfault_in_the_worker_is_reported_and_the_server_is_fine():
    with pytest.raises(jobs.JobError, match=r"the computation's worker process crashed \(signal SIGSEGV\)"):
        jobs.run_job(jobs._crash_for_tests)
    assert jobs.run_job(jobs._sleep_for_tests, (0.0,)) != os.getpid()


def test_a_worker_over_its_memory_limit_gets_the_memory_message(monkeypatch):
    monkeypatch.setenv(jobs.MEMORY_ENV, "1500")
    with pytest.raises(jobs.JobError) as err:
        jobs.run_job(jobs._allocate_for_tests, (3000,))
    assert str(err.value) == "the computation ran out of its memory limit of 1500 MB (NLID_JOB_MEMORY_MB)"
    assert jobs.run_job(jobs._allocate_for_tests, (10,)) == 10 * 2**20


def test_a_bad_limit_setting_is_reported(monkeypatch):
    monkeypatch.setenv(jobs.MEMORY_ENV, "lots")
    with pytest.raises(jobs.JobError, match="NLID_JOB_MEMORY_MB must be a positive integer"):
        jobs.run_job(jobs._sleep_for_tests, (0.0,))


def test_jobs_wait_for_a_free_worker(monkeypatch):
    monkeypatch.setattr(jobs.runner, "_SLOTS", jobs._Slots(1))
    holder = threading.Thread(target=jobs.run_job, args=(jobs._sleep_for_tests, (1.0,)))
    holder.start()
    try:
        end = time.monotonic() + 10
        while jobs._slots().busy == 0 and time.monotonic() < end:
            time.sleep(0.01)
        waits: list[tuple[float, int, int]] = []
        pid = jobs.run_job(jobs._sleep_for_tests, (0.0,), on_wait=lambda *w: waits.append(w))
    finally:
        holder.join(30)
    assert waits and waits[0][1:] == (1, 1)
    assert pid != os.getpid() and jobs._slots().busy == 0


def test_inline_mode_runs_in_this_process(monkeypatch):
    monkeypatch.setenv(jobs.INLINE_ENV, "1")
    updates: list[jobs.Progress] = []
    pid = jobs.run_job(jobs._sleep_for_tests, (0.1,), progress_arg="progress", on_progress=updates.append)
    assert pid == os.getpid()
    assert updates and updates[0].stage == "sleeping"


def test_identify_page_runs_in_a_worker_and_a_cancel_keeps_earlier_results(monkeypatch):
    pids: list[int] = []
    start = jobs.Job.start

    def recording_start(self: jobs.Job) -> jobs.Job:
        start(self)
        pids.append(self.pid)
        return self

    monkeypatch.setattr(jobs.Job, "start", recording_start)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.button(key="load_example").click().run()
    at.switch_page("app_pages/identify.py").run()
    before = len(pids)  # other pages may have run jobs of their own (the Nonlinearity page's evidence)
    at.button(key="run_identification").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(pids) == before + 1 and pids[-1] != os.getpid()
    runs = at.session_state[state.RUNS]
    assert len(runs) == 1 and runs[0].result.success
    assert at.dataframe[0].value["parameter"].tolist() == TERMS.split(",")

    # The user stops the next run (Streamlit raises out of the wait loop's next check): worker killed, notice shown.
    monkeypatch.setattr(jobs.page, "_yield_check", lambda: _raise_stop)
    at.button(key="run_identification").click().run()
    monkeypatch.undo()
    assert len(pids) == before + 2 and gone(pids[-1])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    notices = [i.value.replace("\\", "") for i in at.info]  # shown escaped
    assert "Run cancelled (identification); earlier results are kept." in notices
    assert len(at.session_state[state.RUNS]) == 1
    assert at.dataframe[0].value["parameter"].tolist() == TERMS.split(",")


def _raise_stop() -> None:
    raise StopException()


def test_a_study_in_a_worker_reports_each_refit(seed_record):
    from nlid_core.analysis import structure_check

    fit = identify(seed_record, TERMS)
    job = jobs.Job(structure_check, (seed_record, fit.model, fit.options),
                   {"add": ("f0",), "base_fit": fit}, progress_arg="progress").start()
    updates = finish(job)
    sc = job.result()
    assert sc.success and sc.base.start == "given fit"
    messages = [u.message for u in updates]
    assert {u.stage for u in updates} == {"structure"}
    # the worker sends at most one message per 0.1 s of a stage, so not every step's message arrives
    # (how many arrive depends on the machine's speed: a fast one sends fewer, so one is all a test can ask for)
    order = [int(m.group(1)) for m in (re.match(r"refit .* \((\d) of 7\)", x) for x in messages) if m]
    assert order and order == sorted(order) and set(order) <= set(range(2, 8)), messages
    assert messages[-1] == "6 variants fitted"  # 5 removed, f0 added; step 1 of 7 is the base
    fractions = [u.fraction for u in updates]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_the_progress_line_names_a_study_once(monkeypatch):
    """The page's progress text: "multi-start: start (2 of 8)", not "multi-start: multi-start: ..."."""
    monkeypatch.setenv(jobs.INLINE_ENV, "1")
    drawn: list[str] = []

    class Bar:
        def progress(self, fraction: float, text: str = "") -> None:
            drawn.append(text)

    class Box:
        def container(self, **_: object) -> "Box":
            return self

        def __enter__(self) -> "Box":
            return self

        def __exit__(self, *_: object) -> None:
            return None

        def empty(self) -> None:
            return None

    class Column:
        def progress(self, fraction: float, text: str = "") -> Bar:
            drawn.append(text)
            return Bar()

        def button(self, *_: object, **__: object) -> bool:
            return False

    import streamlit as st

    monkeypatch.setattr(st, "empty", lambda: Box())
    monkeypatch.setattr(st, "progress", Column().progress)
    monkeypatch.setattr(st, "button", Column().button)
    monkeypatch.setattr(jobs.page, "_yield_check", lambda: None)
    monkeypatch.setattr(state, "notify", lambda *a, **k: None)
    monkeypatch.setattr(state, "queued_notice", lambda: None)
    monkeypatch.setattr(state, "withdraw_notice", lambda *_: None)

    def study(progress):  # type: ignore[no-untyped-def]
        progress("multi-start", 0.5, "start (2 of 8)")
        progress("output-error", 0.7, "evaluation 3")
        return 1

    assert jobs.run("multi-start", study, key="t", progress_arg="progress") == 1
    assert "multi-start: start (2 of 8)" in drawn
    assert "multi-start: output-error: evaluation 3" in drawn
