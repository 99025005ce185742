"""Standard PSO and the improved PSO of Guo & Jin (2025): minima found, bookkeeping, cancel, validation."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.errors import ModelSpecError
from nlid_core.multibody.swarm import SWARMS, SwarmResult, ipso, minimise, pso


def sphere(x: np.ndarray) -> np.ndarray:
    return np.sum((x - 0.37) ** 2, axis=1)


def rosenbrock(x: np.ndarray) -> np.ndarray:
    return np.sum(100.0 * (x[:, 1:] - x[:, :-1] ** 2) ** 2 + (1.0 - x[:, :-1]) ** 2, axis=1)


def rastrigin(x: np.ndarray) -> np.ndarray:
    return 10.0 * x.shape[1] + np.sum(x**2 - 10.0 * np.cos(2.0 * np.pi * x), axis=1)


def griewank(x: np.ndarray) -> np.ndarray:
    i = np.arange(1, x.shape[1] + 1)
    return 1.0 + np.sum(x**2, axis=1) / 4000.0 - np.prod(np.cos(x / np.sqrt(i)), axis=1)


def box(d: int, b: float) -> tuple[np.ndarray, np.ndarray]:
    return -b * np.ones(d), b * np.ones(d)


@pytest.mark.parametrize("method", ["pso", "ipso"])
@pytest.mark.parametrize(("fn", "d", "b", "x_true", "tol_f", "tol_x"), [
    (sphere, 2, 5.0, 0.37, 1e-8, 1e-3),
    (sphere, 6, 5.0, 0.37, 1e-4, 2e-2),
    (rosenbrock, 2, 2.0, 1.0, 0.1, 0.3),
    (rastrigin, 2, 5.12, 0.0, 0.1, 0.05),
])
def test_finds_the_minimum(method, fn, d, b, x_true, tol_f, tol_x):
    lo, up = box(d, b)
    r = SWARMS[method](fn, lo, up, seed=3)
    assert isinstance(r, SwarmResult) and r.success and r.method == method
    assert r.fitness <= tol_f
    assert np.max(np.abs(r.x - x_true)) <= tol_x
    assert np.all((r.x >= lo) & (r.x <= up))


@pytest.mark.parametrize("method", ["pso", "ipso"])
def test_bookkeeping(method):
    seen: list[float] = []
    r = SWARMS[method](sphere, *box(3, 2.0), population=40, iterations=25, seed=1,
                       progress=lambda stage, frac, text: seen.append(frac))
    assert r.history.shape == (26,) and r.iterations == 25
    assert np.all(np.diff(r.history) <= 0.0)
    assert r.history[-1] == r.fitness == pytest.approx(float(sphere(r.x[None])[0]), rel=0, abs=0)
    assert r.evaluations == 40 * 26
    assert seen[-1] == 1.0 and len(seen) == 25
    assert r.elapsed_s >= 0.0
    assert (r.archive_size > 0) == (method == "ipso")


@pytest.mark.parametrize("method", ["pso", "ipso"])
def test_seed_determines_the_run(method):
    a = SWARMS[method](rastrigin, *box(2, 5.12), iterations=15, seed=11)
    b = SWARMS[method](rastrigin, *box(2, 5.12), iterations=15, seed=11)
    c = SWARMS[method](rastrigin, *box(2, 5.12), iterations=15, seed=12)
    assert np.array_equal(a.history, b.history) and np.array_equal(a.x, b.x)
    assert not np.array_equal(a.history, c.history)


@pytest.mark.parametrize("method", ["pso", "ipso"])
def test_cancel_returns_best_so_far(method):
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 5

    r = SWARMS[method](sphere, *box(2, 1.0), iterations=100, seed=0, cancel=cancel)
    assert not r.success and r.message == "cancelled"
    assert r.iterations == 5 and r.history.shape == (6,) and r.evaluations == 40 * 6
    assert r.fitness == r.history[-1] and np.isfinite(r.fitness)


def test_non_finite_fitness_counts_as_infinite():
    def half_nan(x: np.ndarray) -> np.ndarray:
        return np.where(x[:, 0] > 0.0, np.nan, np.sum((x + 0.5) ** 2, axis=1))

    r = pso(half_nan, *box(2, 1.0), iterations=30, seed=0)
    assert r.success and r.x[0] <= 0.0 and np.isfinite(r.fitness)
    r = ipso(lambda x: np.full(x.shape[0], np.nan), *box(2, 1.0), iterations=3)
    assert not r.success and "no finite fitness" in r.message


def test_ipso_archive_is_capped_and_inertia_settings_accepted():
    r = ipso(sphere, *box(2, 1.0), threshold=10.0, archive_max=50, iterations=20, w_start=0.9, w_end=0.4)
    assert r.archive_size == 50
    r = ipso(sphere, *box(2, 1.0), threshold=-1.0, iterations=5)
    assert r.archive_size == 0 and r.success   # the attractor term is dropped with an empty archive


def test_ipso_not_worse_than_pso_on_a_multimodal_function():
    """Median final fitness over 10 seeds at equal evaluations (40 x 101) on 4-D Griewank.

    Measured: pso median 0.054, ipso median 0.039 (see bench/bench_multibody_swarm.py for the other
    functions; ipso is worse on Rastrigin and Rosenbrock)."""
    lo, up = box(4, 20.0)
    fp = [pso(griewank, lo, up, seed=s).fitness for s in range(10)]
    fi = [ipso(griewank, lo, up, seed=s).fitness for s in range(10)]
    assert np.median(fi) <= np.median(fp)


def test_minimise_registry():
    r = minimise("ipso", sphere, *box(2, 1.0), iterations=5, options={"threshold": 0.5})
    assert r.method == "ipso" and r.iterations == 5
    r = minimise(pso, sphere, *box(2, 1.0), iterations=5)
    assert r.method == "pso"
    with pytest.raises(ModelSpecError, match="one of \\['ipso', 'pso'\\]"):
        minimise("de", sphere, *box(2, 1.0))
    with pytest.raises(ModelSpecError, match="`options`"):
        minimise("pso", sphere, *box(2, 1.0), options={"threshold": 0.5})


@pytest.mark.parametrize("kwargs", [
    {"lower": [0.0, 1.0], "upper": [1.0, 1.0]},
    {"lower": [0.0], "upper": [1.0, 2.0]},
    {"lower": [0.0, np.nan], "upper": [1.0, 2.0]},
    {"population": 1},
    {"iterations": -1},
    {"population": 2.5},
])
@pytest.mark.parametrize("method", ["pso", "ipso"])
def test_bad_arguments(method, kwargs):
    args = {"lower": [0.0, 0.0], "upper": [1.0, 1.0], **kwargs}
    lo, up = args.pop("lower"), args.pop("upper")
    if method == "ipso" and "population" in args and args["population"] == 1:
        args["sub_swarms"] = (1, 0, 0)
    with pytest.raises(ModelSpecError):
        SWARMS[method](sphere, lo, up, **args)


def test_bad_ipso_settings_and_fitness_shape():
    with pytest.raises(ModelSpecError, match="`sub_swarms`"):
        ipso(sphere, *box(2, 1.0), sub_swarms=(30, 5, 4))
    with pytest.raises(ModelSpecError, match="`sub_swarms`"):
        ipso(sphere, *box(2, 1.0), population=10, sub_swarms=(0, 5, 5))
    with pytest.raises(ModelSpecError, match="`w_end`"):
        ipso(sphere, *box(2, 1.0), w_end=np.inf)
    with pytest.raises(ModelSpecError, match="`fitness` must map"):
        pso(lambda x: np.sum(x), *box(2, 1.0))
