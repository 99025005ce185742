"""Benchmark: Chebyshev-surrogate bounds (speed and accuracy) and PSO vs improved PSO (Guo & Jin 2025).

1. Speed of :meth:`ChebyshevSurrogate.bounds` for a swarm's batch of boxes (k = 40 boxes, m = 82
   outputs, d = 3 inputs, order 4 total degree: P = 35), grid 9, polish 0 and 3.
2. Accuracy of the bounds vs a 41^3 grid of each box, on a smooth 82-output stand-in response
   (orders 2-4): how many (box, output, min/max) cases are worse than the dense grid, and by how much.
3. PSO vs IPSO: final fitness over 10 seeds at equal evaluations (40 x 101) on test functions.

Run: ``python bench/bench_multibody_swarm.py`` (about half a minute).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.multibody.surrogate import build_surrogate  # noqa: E402
from nlid_core.multibody.swarm import ipso, pso  # noqa: E402

T41 = np.linspace(0.0, 2.0, 41)
LOWER = np.array([0.6, 0.4, 1.5e7])
UPPER = np.array([1.0, 0.7, 2.5e7])


def response(x: np.ndarray) -> np.ndarray:
    th1, th2, e = x
    w = 3.0 + 0.5 * np.sin(th1) + 0.2 * (e / 2e7)
    return np.concatenate([np.cos(th1) + 2.0 * np.cos(th2 + w * T41) * np.exp(-0.1 * T41),
                           np.sin(th1) - 2.0 * np.sin(th2 + 0.8 * w * T41)])


def boxes(k: int, frac: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = rng.uniform(LOWER + 0.05 * (UPPER - LOWER), UPPER - 0.05 * (UPPER - LOWER), (k, 3))
    w = rng.uniform(0.0, frac * np.minimum(c - LOWER, UPPER - c), (k, 3))
    return c - w, c + w


def bench_speed() -> None:
    s = build_surrogate(response, LOWER, UPPER, order=4, n_holdout=20)
    print(f"surrogate: P = {s.n_terms}, M = {len(s.samples)}, cond = {s.condition_number:.2f}, "
          f"held-out rms = {s.holdout_rms:.2e} (rel. {s.holdout_rel_rms:.2e})")
    lo, hi = boxes(40, 0.2, 1)
    for polish in (0, 3):
        s.bounds(lo, hi, polish=polish)
        ts = []
        for _ in range(30):
            t0 = time.perf_counter()
            s.bounds(lo, hi, polish=polish)
            ts.append(time.perf_counter() - t0)
        print(f"bounds k=40 m=82 d=3 P=35 grid=9 polish={polish}: min {1e3 * min(ts):.2f} ms, "
              f"median {1e3 * float(np.median(ts)):.2f} ms")


def bench_accuracy() -> None:
    g = np.linspace(0.0, 1.0, 41)
    unit = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    for order in (2, 3, 4):
        s = build_surrogate(response, LOWER, UPPER, order=order, seed=2)
        lo, hi = boxes(40, 0.5, 3)
        ymin, ymax = s.bounds(lo, hi)
        worse, worst = 0, 0.0
        for i in range(len(lo)):
            v = s.evaluate(lo[i] + unit * (hi[i] - lo[i]))
            width = v.max(0) - v.min(0) + 1e-300
            d = np.concatenate([(ymin[i] - v.min(0)) / width, (v.max(0) - ymax[i]) / width])
            worse += int(np.sum(d > 1e-9))
            worst = max(worst, float(d.max()))
        print(f"order {order}: {worse} of {2 * ymin.size} (box, output, min/max) cases worse than a 41^3 grid "
              f"by > 1e-9 of the box's output range; worst {worst:.1e}")


def bench_swarms() -> None:
    def sphere(x: np.ndarray) -> np.ndarray:
        return np.sum(x**2, axis=1)

    def rosenbrock(x: np.ndarray) -> np.ndarray:
        return np.sum(100 * (x[:, 1:] - x[:, :-1] ** 2) ** 2 + (1 - x[:, :-1]) ** 2, axis=1)

    def rastrigin(x: np.ndarray) -> np.ndarray:
        return 10 * x.shape[1] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=1)

    def ackley(x: np.ndarray) -> np.ndarray:
        d = x.shape[1]
        return (-20 * np.exp(-0.2 * np.sqrt(np.sum(x**2, axis=1) / d))
                - np.exp(np.sum(np.cos(2 * np.pi * x), axis=1) / d) + 20 + np.e)

    def griewank(x: np.ndarray) -> np.ndarray:
        i = np.arange(1, x.shape[1] + 1)
        return 1 + np.sum(x**2, axis=1) / 4000 - np.prod(np.cos(x / np.sqrt(i)), axis=1)

    print("function        D  pso median / max       ipso median / max     (10 seeds, 40 x 101 evaluations)")
    for name, f, dim, b in [("sphere", sphere, 6, 5.12), ("rosenbrock", rosenbrock, 2, 2.0),
                            ("rastrigin", rastrigin, 2, 5.12), ("rastrigin", rastrigin, 4, 5.12),
                            ("ackley", ackley, 4, 5.0), ("griewank", griewank, 4, 20.0)]:
        lo, up = -b * np.ones(dim), b * np.ones(dim)
        fp = [pso(f, lo, up, seed=s).fitness for s in range(10)]
        fi = [ipso(f, lo, up, seed=s).fitness for s in range(10)]
        print(f"{name:14s} {dim:2d}  {np.median(fp):9.3g} / {np.max(fp):9.3g}   "
              f"{np.median(fi):9.3g} / {np.max(fi):9.3g}")


if __name__ == "__main__":
    bench_speed()
    bench_accuracy()
    bench_swarms()
