"""Benchmark: the planar ANCF double pendulum (seed 002), compiled kernel against the plain-numpy reference.

What a user runs: one default 0–2 s run of the preset (θ1 = π/4, θ2 = π/6, H = 0.4 m, 2 + 4 elements, 44 DOF,
generalized-α with dt = 5e-4 s and ρ∞ = 0.9, output every 0.05 s).

1. **First call** in a fresh Python process (``simulate`` once, timed around the call, imports excluded): with
   the on-disk numba cache (what a user sees after the first ever run) and with an empty cache directory
   (``NUMBA_CACHE_DIR`` pointing to a temporary directory: full compilation).
2. **Warm**: best of ``--repeats`` compiled runs against one run of :mod:`nlid_core.multibody.reference` (the
   same model and scheme in numpy), with the ratio and the largest tip difference between the two. Target:
   compiled under 0.5 s (numpy about 5 s).
3. The same **with sensitivities** for three parameters (θ1, θ2, E_ab), and the cost of getting the same
   derivatives by central finite differences (6 extra runs) for comparison.
4. The rigid model's run for scale.

Run: ``python bench/bench_pendulum.py [--repeats 3] [--skip-cold]`` (about 30 s on two cores).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlid_core.multibody import reference  # noqa: E402
from nlid_core.multibody.pendulum import PendulumSpec, layout, simulate, simulate_rigid  # noqa: E402

TH1, TH2 = math.pi / 4, math.pi / 6
SENS = ("theta1", "theta2", "E_ab")
_FIRST_CALL = (
    "import math, time\n"
    "from nlid_core.multibody.pendulum import simulate\n"
    "t0 = time.perf_counter()\n"
    "run = simulate(math.pi / 4, math.pi / 6)\n"
    "print(f'{time.perf_counter() - t0:.6f} {run.elapsed_s:.6f} {run.success}')\n"
)


def first_call(cold: bool) -> tuple[float, float]:
    """(wall time of the first call, of which the integration) in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        if cold:
            env["NUMBA_CACHE_DIR"] = tmp
        out = subprocess.run([sys.executable, "-c", _FIRST_CALL], cwd=ROOT, env=env, capture_output=True, text=True,
                             check=True, timeout=600)
    total, inner, ok = out.stdout.split()
    assert ok == "True"
    return float(total), float(inner)


def best(fn, repeats: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
    return min(times), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-cold", action="store_true", help="skip the first call with an empty numba cache")
    args = ap.parse_args()
    spec = PendulumSpec()
    print(f"preset: {spec}")
    print(f"coordinates: {layout(spec).n}, steps: {round(2.0 / 5e-4)}")

    print("\n1. first call in a fresh process (imports excluded)")
    total, inner = first_call(cold=False)
    print(f"  with the on-disk numba cache: {total:.3f} s (integration {inner:.3f} s)")
    if not args.skip_cold:
        total, inner = first_call(cold=True)
        print(f"  empty cache (full compilation): {total:.3f} s (integration {inner:.3f} s)")

    print("\n2. default 0-2 s run, warm")
    simulate(TH1, TH2, t_end=0.1)
    tc, run = best(lambda: simulate(TH1, TH2), args.repeats)
    t0 = time.perf_counter()
    rr = reference.simulate(spec, TH1, TH2)
    tn = time.perf_counter() - t0
    tip = layout(spec).node_r[-1]
    diff = max(np.max(np.abs(run.x_b - rr.q[:, tip[0]])), np.max(np.abs(run.y_b - rr.q[:, tip[1]])))
    print(f"  compiled: {tc:.3f} s (best of {args.repeats}; {run.newton_iterations} Newton iterations)"
          f"  target < 0.5 s: {'met' if tc < 0.5 else 'NOT met'}")
    print(f"  numpy reference: {tn:.3f} s; ratio numpy/compiled {tn / tc:.1f}x; largest tip difference {diff:.1e} m")

    print(f"\n3. with sensitivities for {', '.join(SENS)}")
    ts, srun = best(lambda: simulate(TH1, TH2, sensitivities=SENS), args.repeats)
    t0 = time.perf_counter()
    rs = reference.simulate(spec, TH1, TH2, sensitivities=SENS)
    tns = time.perf_counter() - t0
    sdiff = max(float(np.max(np.abs(srun.sensitivities[n] - rs.sens[:, tip, j]) / np.max(np.abs(rs.sens[:, tip, j]))))
                for j, n in enumerate(SENS))
    print(f"  compiled: {ts:.3f} s ({ts / tc:.2f}x the plain run); numpy reference: {tns:.3f} s;"
          f" ratio {tns / ts:.1f}x; largest relative sensitivity difference {sdiff:.1e}")
    print(f"  central finite differences instead: 7 runs = {7 * tc:.3f} s compiled ({7 * tc / ts:.1f}x the"
          f" sensitivity run), {7 * tn:.1f} s numpy")

    print("\n4. rigid model, same horizon")
    tr, _ = best(lambda: simulate_rigid(TH1, TH2), args.repeats)
    print(f"  rigid (DOP853, rtol 1e-10): {tr:.3f} s")


if __name__ == "__main__":
    main()
