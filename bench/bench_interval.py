"""Benchmark: the pendulum's inverse problems as a user runs them, on the paper's cases and on cases built the
same way (the paper's other tables are not published with the excerpt: their bounds are made here from a dense
grid of true runs over the stated boxes, rounded to 0.1 mm like the paper's tables).

Printed per case: the recovered intervals against the truth (rad; % for E), the standard PSO against the improved
PSO on one surrogate (fitness, fitness evaluations, forward runs, seconds), and the wall time of one interval
inverse problem including the first estimate and the surrogate (target: under 60 s on 2 cores). Then the
deterministic inverse on Table A1 and on the paper's case 2 trajectory (θ1 = π/3, θ2 = π/4).

Run: ``python bench/bench_interval.py [--quick]`` (about 2–3 minutes; ``--quick`` skips the three-input case).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.multibody.files import read_bounds, read_trajectory  # noqa: E402
from nlid_core.multibody.interval import Interval, IntervalBounds, Response, compare_swarms  # noqa: E402
from nlid_core.multibody.inverse import identify_trajectory  # noqa: E402
from nlid_core.runners import runner  # noqa: E402
from nlid_core.multibody.pendulum import PendulumSpec, SolverSettings, simulate  # noqa: E402

PI = math.pi


def shared() -> Path | None:
    env = os.environ.get("NLID_SHARED_DATA")
    for p in ([Path(env)] if env else []) + [Path(__file__).resolve().parents[2] / "shared" / "data"]:
        if (p / "pendulum").is_dir():
            return p
    return None


def grid_bounds(ivs: tuple[Interval, ...], fixed: dict[str, float], n: int) -> IntervalBounds:
    """Bounds from an n^d grid of true runs over the box, rounded to 0.1 mm."""
    names = tuple(iv.name for iv in ivs)
    fn = Response(names=names, fixed=fixed, spec=PendulumSpec(), settings=SolverSettings(), t_end=2.0, dt_out=0.05)
    grids = np.meshgrid(*[np.linspace(iv.lower, iv.upper, n) for iv in ivs], indexing="ij")
    pts = np.column_stack([g.ravel() for g in grids])
    with runner() as r:
        vals = np.asarray(r.map(fn, list(pts)))
    t = np.round(np.arange(41) * 0.05, 12)
    return IntervalBounds.from_vectors(t, np.round(vals.min(axis=0), 4), np.round(vals.max(axis=0), 4))


def report(label: str, bounds: IntervalBounds, truth: tuple[Interval, ...], fixed: dict[str, float]) -> bool:
    t0 = time.perf_counter()
    pso, ipso = compare_swarms(bounds, free=tuple(iv.name for iv in truth), fixed=fixed)
    wall = time.perf_counter() - t0
    print(f"\n{label}: both swarms on one surrogate in {wall:.1f} s wall ({pso.forward_runs} forward runs: first"
          f" estimate + {pso.surrogate.samples.shape[0]}-run surrogate of order {pso.surrogate.order};"
          f" held-out error {1e3 * pso.surrogate_holdout_rms:.3f} mm rms)")
    ok = True
    for r in (pso, ipso):
        errs = []
        for iv, tr in zip(r.intervals, truth):
            if iv.name.startswith("E_"):
                e = max(abs(iv.lower / tr.lower - 1), abs(iv.upper / tr.upper - 1))
                errs.append(f"{iv.name} [{iv.lower:.5g}, {iv.upper:.5g}] Pa, error {100 * e:.3f} %")
                ok &= r.method != "ipso" or e < 0.01
            else:
                e = max(abs(iv.lower - tr.lower), abs(iv.upper - tr.upper))
                errs.append(f"{iv.name} [{iv.lower:.5f}, {iv.upper:.5f}] rad, error {e:.2e}")
                ok &= r.method != "ipso" or e < 2e-3
        print(f"  {r.method:4s} fitness {r.fitness:.4g} m², {r.swarm.evaluations} evaluations, swarm"
              f" {r.swarm.elapsed_s:.2f} s; " + "; ".join(errs))
    print(f"  ipso/pso fitness ratio {ipso.fitness / pso.fitness:.3f}; one interval inverse problem (ipso) "
          f"{ipso.elapsed_s:.1f} s; within tolerance: {'yes' if ok else 'NO'}")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the three-input case")
    args = ap.parse_args()
    data = shared()
    print(f"machine: {os.cpu_count()} cores")
    if data is not None:
        t, x, y = read_trajectory(data / "pendulum" / "tableA1_case1.csv")
        fit = identify_trajectory(t, x, y)
        print("deterministic, Table A1: " + ", ".join(f"{p.name} = {p.value:.6f} ± {p.stderr:.1e} (truth"
                                                       f" {PI / 4 if p.name == 'theta1' else PI / 6:.6f})"
                                                       for p in fit.parameters)
              + f"; misfit {1e3 * fit.rms_m:.3f} mm rms; {fit.forward_runs} runs, {fit.elapsed_s:.1f} s")
    run = simulate(PI / 3, PI / 4)
    fit = identify_trajectory(run.t, np.round(run.x_b, 4), np.round(run.y_b, 4), free=("theta1", "theta2", "E_ab"))
    print("deterministic, case 2 (π/3, π/4, rounded to 0.1 mm), θ and E_AB free: " + ", ".join(
        f"{p.name} = {p.value:.7g} ± {p.stderr:.1e}" for p in fit.parameters)
        + f"; {fit.forward_runs} runs, {fit.elapsed_s:.1f} s")
    ok = True
    if data is not None:
        truth = (Interval(name="theta1", lower=0.95 * PI / 4, upper=1.05 * PI / 4),
                 Interval(name="theta2", lower=0.95 * PI / 6, upper=1.05 * PI / 6))
        ok &= report("interval case 1 (paper's Table A2)", read_bounds(data / "pendulum" / "tableA2_case1_interval.csv"),
                     truth, {})
    truth = (Interval(name="theta1", lower=0.95 * PI / 2, upper=1.05 * PI / 2),
             Interval(name="theta2", lower=0.95 * PI / 3, upper=1.05 * PI / 3))
    ok &= report("interval case 2 (θ1 = π/2·(1 ± 0.05), θ2 = π/3·(1 ± 0.05); bounds from 11 x 11 runs)",
                 grid_bounds(truth, {}, 11), truth, {})
    truth = (Interval(name="theta2", lower=0.95 * PI / 6, upper=1.05 * PI / 6),
             Interval(name="E_ab", lower=1.9e7, upper=2.1e7))
    ok &= report("θ1 = π/4 fixed, θ2 = π/6·(1 ± 0.05), E_AB = 2e7·(1 ± 0.05); bounds from 11 x 11 runs",
                 grid_bounds(truth, {"theta1": PI / 4}, 11), truth, {"theta1": PI / 4})
    if not args.quick:
        truth = (Interval(name="theta1", lower=0.95 * PI / 4, upper=1.05 * PI / 4),
                 Interval(name="theta2", lower=0.95 * PI / 6, upper=1.05 * PI / 6),
                 Interval(name="E_ab", lower=1.9e7, upper=2.1e7))
        ok &= report("interval case 3 (θ1, θ2, E_AB all ± 5 %; bounds from 7 x 7 x 7 runs)",
                     grid_bounds(truth, {}, 7), truth, {})
    print(f"\nall cases within 2e-3 rad and 1 % of E: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
