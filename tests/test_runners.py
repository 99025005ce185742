"""Runners of independent forward runs: serial, local processes and a Dask cluster give the same results."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nlid_core.errors import ModelSpecError, SimulationError
from nlid_core.runners import DaskRunner, ProcessRunner, Runner, SerialRunner, runner


def response(x: np.ndarray) -> np.ndarray:
    """A deterministic numpy function with rounding-sensitive arithmetic."""
    t = np.linspace(0.0, 2.0, 41)
    return np.concatenate([np.sin(x[0] * t) * np.exp(-x[1] * t), np.cos(x[0] * t + x[1]) / (1.0 + t * t)])


def fail_on_negative(x: float) -> float:
    if x < 0:
        raise SimulationError(f"the run diverged at `x` = {x}")
    return 2.0 * x


def slow_identity(x: float) -> float:
    time.sleep(0.05 * (3 - int(x) % 3))
    return x


def items() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.uniform(0.1, 3.0, 2) for _ in range(12)]


@pytest.fixture(scope="module")
def dask_address():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def pool():
    with runner(workers=2) as r:
        yield r


def test_runner_kinds_and_protocol():
    with runner(serial=True) as s:
        assert isinstance(s, SerialRunner) and isinstance(s, Runner)
        assert (s.kind, s.workers) == ("serial", 1)
    r = runner(workers=3)
    assert isinstance(r, ProcessRunner) and r.kind == "processes" and r.workers == 3
    r.close()   # never started: closing is a no-op


def test_serial_processes_and_dask_give_bit_identical_results(pool, dask_address):
    xs = items()
    expected = [response(x) for x in xs]
    with runner(serial=True) as s:
        serial = s.map(response, xs)
    procs = pool.map(response, xs)
    with runner(dask_address) as d:
        assert isinstance(d, DaskRunner) and d.kind == "dask" and d.workers == 2
        dask = d.map(response, xs)
    for a, b, c, e in zip(serial, procs, dask, expected):
        assert np.array_equal(a, e) and np.array_equal(b, e) and np.array_equal(c, e)


def test_process_pool_is_reused_and_order_preserved(pool):
    first = pool.map(slow_identity, [0.0, 1.0, 2.0, 3.0, 4.0])
    executor = pool._executor()
    second = pool.map(slow_identity, [5.0, 4.0, 3.0])
    assert pool._executor() is executor
    assert first == [0.0, 1.0, 2.0, 3.0, 4.0] and second == [5.0, 4.0, 3.0]
    assert pool.map(slow_identity, []) == []


@pytest.mark.parametrize("kind", ["serial", "processes", "dask"])
def test_exception_in_fn_keeps_type_and_message(kind, pool, dask_address):
    r = {"serial": lambda: runner(serial=True), "processes": lambda: pool,
         "dask": lambda: runner(dask_address)}[kind]()
    try:
        assert r.map(fail_on_negative, [1.0, 2.0]) == [2.0, 4.0]
        with pytest.raises(SimulationError) as info:
            r.map(fail_on_negative, [1.0, -3.0, 2.0])
        assert str(info.value) == "the run diverged at `x` = -3.0"
        assert info.value.__cause__ is None
    finally:
        if r is not pool:
            r.close()


@pytest.mark.parametrize("kind", ["serial", "processes"])
def test_progress_reaches_one_and_cancel_stops(kind, pool):
    r = runner(serial=True) if kind == "serial" else pool
    seen: list[float] = []
    out = r.map(slow_identity, [0.0, 1.0, 2.0, 3.0], progress=lambda stage, f, text: seen.append(f))
    assert out == [0.0, 1.0, 2.0, 3.0]
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 4
    calls: list[float] = []
    with pytest.raises(SimulationError, match="^cancelled"):
        r.map(slow_identity, [float(i) for i in range(40)], progress=lambda stage, f, text: calls.append(f),
              cancel=lambda: len(calls) >= 2)
    assert 2 <= len(calls) < 40


def test_dask_cancel(dask_address):
    with runner(dask_address) as r:
        with pytest.raises(SimulationError, match="^cancelled"):
            r.map(slow_identity, [float(i) for i in range(30)], cancel=lambda: True)


def test_unreachable_scheduler_fails_fast():
    t0 = time.perf_counter()
    with pytest.raises(SimulationError, match="cannot reach the Dask scheduler at `tcp://127.0.0.1:9`"):
        runner("tcp://127.0.0.1:9", timeout_s=2.0)
    assert time.perf_counter() - t0 < 30.0   # generous: the point is that it does not hang


def test_unpicklable_function_is_rejected(pool):
    with pytest.raises(ModelSpecError, match="`fn` must be picklable"):
        pool.map(lambda x: x, [1, 2])


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"workers": 1.5}, {"workers": True}, {"timeout_s": 0.0},
                                    {"scheduler": ""}, {"scheduler": "tcp://h:1", "serial": True}])
def test_bad_arguments(kwargs):
    with pytest.raises(ModelSpecError):
        runner(**kwargs)
