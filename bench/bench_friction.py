"""Benchmark: staged LuGre identification against the one-shot fit, and on hidden axes.

Part 1, one-shot vs staged, on the same data (an axis with σ0 = 1e6 N/m, σ1 = 2e3 N·s/m, σ2 = 5 N·s/m,
Fc = 0.5 N, Fs = 0.8 N, vs = 5 mm/s, m = 2 kg: a velocity staircase under PI control and a force chirp
below breakaway, from ``nlid_core.friction.experiments`` with their default sensor noise):

* staged: ``identify_friction`` as ``python -m nlid_core friction identify`` runs it;
* one-shot on the pre-sliding record: all six LuGre parameters by output error at once (what the seed
  warns against), from the ``lugre`` term's default values;
* one-shot joint: all six at once over both records (plateau points and pre-sliding displacement, the
  residual of the staged procedure's polish), from the same defaults.

For each: the relative error of every parameter, the condition number of the column-scaled Jacobian at
the solution (how well the data separate the parameters), function evaluations and time.

Part 2, hidden axes: parameter sets spread over the seed's ranges (σ0 1e5–1e7 N/m, σ1 1e2–1e4 N·s/m,
σ2 0.1–100 N·s/m, Fs 0.5–5 N, Fc 0.1–2 N), mass known. Printed: each parameter's error against the
issue's tolerance (Fc, Fs, σ2 2 %; vs 5 %; σ0 10 %; σ1 25 %), whether the truth is inside the 95 %
interval, and the stick-slip period and amplitude predicted by the identified LuGre and by the static
Stribeck model against the truth's.

Part 3, speed: the staged identification's time per pre-sliding sample, and one simulation of a
1e5-sample force-driven rail record by ``simulate`` (SDIRK4, as ``python -m nlid_core simulate`` runs it)
against scipy's Radau at matched accuracy on the same record (``simulate_reference`` at rtol 1e-6 and a
tight Radau reference at 1e-10 to measure both errors).

Run: ``python bench/bench_friction.py [--axes N] [--skip-speed]`` (about 5 to 10 minutes on two cores).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.friction import joint  # noqa: E402
from nlid_core.friction.experiments import force_driven_rail, presliding_chirp, servo_staircase  # noqa: E402
from nlid_core.friction.plateaus import find_plateaus  # noqa: E402
from nlid_core.friction.staged import FrictionOptions, curve_weights, identify_friction, shifted  # noqa: E402
from nlid_core.friction.uncertainty import noise_level  # noqa: E402
from nlid_core.friction.steady import fit_curve  # noqa: E402
from nlid_core.friction.stickslip import stick_slip  # noqa: E402
from nlid_core.models import TermModel  # noqa: E402
from nlid_core.simulate import simulate, simulate_reference  # noqa: E402

NAMES = ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs")
TOL = {"Fc": 0.02, "Fs": 0.02, "sigma2": 0.02, "vs": 0.05, "sigma0": 0.10, "sigma1": 0.25}

COMPARISON = ({"sigma0": 1e6, "sigma1": 2e3, "sigma2": 5.0, "Fc": 0.5, "Fs": 0.8, "vs": 5e-3}, 2.0)

AXES = [
    ({"sigma0": 1e5, "sigma1": 300.0, "sigma2": 0.4, "Fc": 1.0, "Fs": 1.5, "vs": 1e-3}, 1.0),
    ({"sigma0": 1e6, "sigma1": 2e3, "sigma2": 5.0, "Fc": 0.5, "Fs": 0.8, "vs": 5e-3}, 2.0),
    ({"sigma0": 1e7, "sigma1": 1e4, "sigma2": 50.0, "Fc": 2.0, "Fs": 4.0, "vs": 2e-3}, 5.0),
    ({"sigma0": 3e5, "sigma1": 150.0, "sigma2": 0.15, "Fc": 0.15, "Fs": 0.6, "vs": 1e-2}, 0.5),
    ({"sigma0": 3e6, "sigma1": 5e3, "sigma2": 20.0, "Fc": 1.5, "Fs": 5.0, "vs": 5e-4}, 3.0),
]


def _row(label: str, values: dict[str, float], truth: dict[str, float], extra: str) -> str:
    errs = " ".join(f"{100 * (values[n] / truth[n] - 1):+9.3f}" for n in NAMES)
    return f"  {label:26s} {errs}   {extra}"


def part1() -> None:
    truth, mass = COMPARISON
    print("Part 1: one-shot vs staged on the same data (relative errors in %)")
    t0 = time.perf_counter()
    stair = servo_staircase(truth, mass=mass)
    pre = presliding_chirp(truth, mass=mass)
    print(f"  data: staircase {stair.record.n} samples, pre-sliding {pre.record.n} samples at {pre.record.fs:g} Hz"
          f" (generated in {time.perf_counter() - t0:.1f} s)")
    print(f"  {'method':26s} " + " ".join(f"{n:>9s}" for n in NAMES) + "   cond / nfev / time")
    t0 = time.perf_counter()
    res = identify_friction(stair.record, pre.record, FrictionOptions(fixed={"m0": mass}))
    dt = time.perf_counter() - t0
    print(_row("staged", res.values, truth, f"{res.condition_number:.3g} / "
               f"{sum(s.nfev for s in res.stages)} / {dt:.1f} s"))

    model = TermModel("m0,lugre")
    start = {p.name: p.value for p in model.default_parameters()}
    start["m0"] = mass
    srec, _ = shifted(pre.record)
    for label, with_points in (("one-shot, pre-sliding only", False), ("one-shot, both records", True)):
        data = joint.JointData(model=model, records=(srec,), sigma=(noise_level(srec.x),))
        if with_points:
            pts = tuple(find_plateaus(stair.record, mass=mass).accepted)
            curve = fit_curve("stribeck", pts)
            data = joint.JointData(model=model, records=(srec,), sigma=data.sigma, points=pts,
                                   weights=curve_weights(pts, start, curve))
        t0 = time.perf_counter()
        try:
            sol = joint.solve(data, start, NAMES, max_nfev=200)
            dt = time.perf_counter() - t0
            cols = [sol.names.index(n) for n in NAMES]
            J = sol.jacobian[:, cols]
            norms = np.linalg.norm(J, axis=0)
            norms[norms == 0] = 1.0
            s = np.linalg.svd(J / norms, compute_uv=False)
            cond = s[0] / s[-1] if s[-1] > 0 else math.inf
            print(_row(label, dict(sol.values), truth, f"{cond:.3g} / {sol.nfev} / {dt:.1f} s"
                       + ("" if sol.success else f"  ({sol.message})")))
        except Exception as exc:  # noqa: BLE001 - a failed one-shot fit is a result here
            print(f"  {label:26s} failed: {exc}")


def part2(n_axes: int) -> None:
    print("\nPart 2: hidden axes (error % / inside the 95 % interval); stick-slip vs the truth's")
    print(f"  {'axis':5s} " + " ".join(f"{n:>14s}" for n in NAMES) + "   time   stick-slip (period, amplitude) %")
    covered = total = within = 0
    for k, (truth, mass) in enumerate(AXES[:n_axes]):
        stair = servo_staircase(truth, mass=mass)
        pre = presliding_chirp(truth, mass=mass)
        t0 = time.perf_counter()
        res = identify_friction(stair.record, pre.record, FrictionOptions(fixed={"m0": mass}))
        dt = time.perf_counter() - t0
        if not res.success:
            print(f"  {k + 1:<5d} failed: {res.message}")
            continue
        cells = []
        for n in NAMES:
            e = res.estimate(n)
            err = e.value / truth[n] - 1
            inside = e.ci[0] <= truth[n] <= e.ci[1]
            ok = abs(err) < TOL[n]
            covered += inside
            within += ok
            total += 1
            cells.append(f"{100 * err:+8.3f}{'' if ok else '!'}/{'y' if inside else 'n'}")
        ss = ""
        try:
            tr = stick_slip("lugre", {**truth}, mass=mass)
            if tr.sticks:
                lp, la = stick_slip("lugre", res.values, mass=mass).relative_errors(tr)
                sp, sa = stick_slip("stribeck", res.values, mass=mass).relative_errors(tr)
                ss = f"LuGre {100 * lp:+.2f}, {100 * la:+.2f}; static {100 * sp:+.2f}, {100 * sa:+.2f}"
            else:
                ss = "no stick-slip at the default oscillator"
        except Exception as exc:  # noqa: BLE001
            ss = f"stick-slip not run: {exc}"
        print(f"  {k + 1:<5d} " + " ".join(f"{c:>14s}" for c in cells) + f"   {dt:5.1f} s   {ss}")
    print(f"  within tolerance: {within}/{total}; truth inside the 95 % interval: {covered}/{total}")


def part3() -> None:
    print("\nPart 3: speed")
    truth = AXES[0][0]
    pre = presliding_chirp(truth)
    stair = servo_staircase(truth)
    t0 = time.perf_counter()
    identify_friction(stair.record, pre.record, FrictionOptions(fixed={"m0": 1.0}))
    dt = time.perf_counter() - t0
    print(f"  staged identification: {dt:.1f} s for {pre.record.n} pre-sliding + {stair.record.n} staircase samples")
    rail = force_driven_rail(truth, duration_s=50.0)
    rec = rail.record
    model = TermModel("m0,lugre")
    theta = model.default_parameters({**truth, "m0": 1.0}).values
    simulate(model, rec.t[:100], rec.f[:100], theta)  # compile
    t0 = time.perf_counter()
    ours = simulate(model, rec.t, rec.f, theta)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = simulate_reference(model, rec.t, rec.f, theta, method="Radau", rtol=1e-10)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    radau = simulate_reference(model, rec.t, rec.f, theta, method="Radau", rtol=1e-6)
    t_radau = time.perf_counter() - t0
    scale = float(np.sqrt(np.mean(ref.x**2)))
    e_ours = float(np.sqrt(np.mean((ours.x - ref.x) ** 2))) / scale
    e_radau = float(np.sqrt(np.mean((radau.x - ref.x) ** 2))) / scale
    print(f"  simulate, {rec.n} samples of a force-driven rail (stick-slip): nlid {t_ours:.2f} s ({ours.method},"
          f" rel. error {e_ours:.2e}); Radau rtol 1e-6 {t_radau:.2f} s (rel. error {e_radau:.2e});"
          f" reference Radau rtol 1e-10 {t_ref:.1f} s")
    print(f"  ratio time(Radau)/time(nlid) = {t_radau / t_ours:.1f} with nlid "
          f"{'as accurate or better' if e_ours <= e_radau else 'less accurate'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--axes", type=int, default=len(AXES), help="hidden axes to run (part 2)")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    part1()
    part2(args.axes)
    if not args.skip_speed:
        part3()


if __name__ == "__main__":
    main()
