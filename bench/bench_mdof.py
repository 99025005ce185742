"""Benchmark: the six-DOF platform identified in stages against one shot, the joint refinement's speed, the
simulator's cost per sample, and the calibration of the intervals.

1. **Staged against one-shot** on the same simulated experiments (``nlid_core.mdof.experiments.experiment_set`` of
   the platform preset: 40+ static load cases, small high-frequency motion, a sweep per DOF with the others held,
   two multi-DOF records; 0.5 % output noise) from the same start (every parameter off by a random factor in
   [1 − spread, 1 + spread], default 0.3). Printed per route: the error of every parameter group against the
   truth, how many truths lie inside their 95 % intervals, the condition numbers met on the way (each stage's,
   and the one-shot problem's), iterations and time.
2. **Joint refinement speed**: the joint stage (every parameter and every record's initial state free) on one
   multi-DOF record of ``--samples`` samples per channel (default 1e4, six channels), started from the truth off
   by ±5 %. Target: under 30 s here; printed as the ratio to 30 s.
3. **Simulation cost per sample** with sensitivities at 2500 … 20000 samples: linear in the record length means a
   constant time per sample (printed as ratios to the shortest run).
4. **Calibration**: ``--draws`` noise realisations of the three-mass chain's multi-DOF records, joint fit each
   time; the fraction of 95 % intervals that contain the truth, over all parameters and draws (about 95 % when the
   intervals are honest; the binomial 95 % band is printed with it).

5. **A quiet chain from an independent reference** (printed first): three masses simulated by scipy's DOP853 at rtol
   1e-10 from a cubic-spline force, displacements of 10–30 mm with noise 2e-6 m, two records of ``--samples``
   samples, fitted from starts 20–50 % off. Targets: the fit's CPU time under 5 s (printed as the ratio), and
   every estimate within 1.5 × its 95 % half-width of the truth (the intervals include the integration error).

Run: ``python bench/bench_mdof.py [--spread 0.3] [--samples 10000] [--draws 30] [--skip-staged]``
(about 10 minutes on two cores with the defaults, most of it the one-shot route).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.mdof import experiments as ex  # noqa: E402
from nlid_core.mdof.fit import fit_records  # noqa: E402
from nlid_core.mdof.integrate import simulate  # noqa: E402
from nlid_core.mdof.modelfile import parse_model  # noqa: E402
from nlid_core.mdof.presets import chain, platform  # noqa: E402
from nlid_core.mdof.stages import default_plan, one_shot, run_stages  # noqa: E402

GROUPS = (("mass, CoG", ("m", "cx", "cy", "cz")), ("inertia", ("J",)), ("k1 vertical", ("k1_m*_z", "k1_z")),
          ("k1 horizontal", ("k1_m*_x", "k1_m*_y", "k1_x", "k1_y")), ("k3", ("k3",)), ("c1", ("c1",)), ("c2", ("c2",)))


#: The quiet chain of part 5: its [parameters] are the truth.
QUIET_CHAIN = """
name = "three-mass chain"
[[dof]]
name = "x1"
[[dof]]
name = "x2"
[[dof]]
name = "x3"
[[connection]]
name = "g1"
between = ["x1", "ground"]
terms = ["k1", "k3", "c1"]
[[connection]]
name = "s12"
between = ["x2", "x1"]
terms = ["k1", "c1"]
[[connection]]
name = "s23"
between = ["x3", "x2"]
terms = ["k1", "c1"]
[inputs]
f_x1 = "F1"
[outputs]
x1 = "X1"
x2 = "X2"
x3 = "X3"
[parameters]
m_x1 = 1.2
m_x2 = 1.0
m_x3 = 0.8
k1_g1 = 2.0e4
k3_g1 = 5.0e8
c1_g1 = 6.0
k1_s12 = 1.5e4
c1_s12 = 4.0
k1_s23 = 1.0e4
c1_s23 = 3.0
"""


def _group(name: str) -> str:
    import fnmatch

    for label, pats in GROUPS:
        if any(fnmatch.fnmatch(name, p) or (not any(c in p for c in "*?") and name.startswith(p) and p in ("J", "k3", "c1", "c2"))
               or name == p for p in pats):
            return label
    return "other"


def _accuracy(model, fit, truth) -> tuple[dict[str, float], int, int]:  # type: ignore[no-untyped-def]
    worst: dict[str, float] = {}
    inside = total = 0
    for e in fit.estimates:
        t = truth[e.name]
        err = abs(e.value - t) / max(abs(t), 1e-12) if t != 0 else abs(e.value)
        g = _group(e.name)
        worst[g] = max(worst.get(g, 0.0), err)
        if e.vary and math.isfinite(e.stderr):
            total += 1
            inside += int(e.ci[0] <= t <= e.ci[1])
    return worst, inside, total


def _print_accuracy(label: str, worst: dict[str, float], inside: int, total: int) -> None:
    parts = ", ".join(f"{g} {100 * worst[g]:.3g} %" for g, _ in GROUPS if g in worst)
    print(f"  {label}: largest error per group: {parts}")
    print(f"  {label}: truths inside their 95 % intervals: {inside} of {total}")


def staged_vs_one_shot(spread: float, seed: int) -> None:
    model = platform()
    truth_vec = model.parameters().values
    truth = dict(zip(model.param_names, truth_vec))
    t0 = time.perf_counter()
    recs = ex.experiment_set(model, truth_vec, rng=seed)
    print(f"experiments: {', '.join(f'{r.name} ({r.n})' for r in recs)} in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(seed + 1)
    start = model.parameters({n: v * rng.uniform(1 - spread, 1 + spread) for n, v in truth.items()})

    t0 = time.perf_counter()
    staged = run_stages(model, recs, default_plan(model), start)
    t_staged = time.perf_counter() - t0
    print(f"\nstaged: {staged.message}, {t_staged:.1f} s")
    for s in staged.stages:
        if s.fit is None:
            print(f"  {s.stage.name}: skipped ({s.skipped})")
            continue
        f = s.fit
        print(f"  {s.stage.name}: {len(f.free)} free, {len(f.undetermined)} held as undetermined, condition number"
              f" {f.condition:.3g}, {f.iterations} iterations, {f.elapsed_s:.1f} s")
    final = staged.final
    assert final is not None
    w_s, in_s, tot_s = _accuracy(model, final, truth)
    _print_accuracy("staged", w_s, in_s, tot_s)

    t0 = time.perf_counter()
    shot = one_shot(model, recs, start)
    t_shot = time.perf_counter() - t0
    print(f"\none-shot: {shot.message}; condition number {shot.condition:.3g}, {shot.iterations} iterations,"
          f" {t_shot:.1f} s")
    w_o, in_o, tot_o = _accuracy(model, shot, truth)
    _print_accuracy("one-shot", w_o, in_o, tot_o)
    worst_stage = max(s.fit.condition for s in staged.stages[:-1] if s.fit is not None)
    print(f"\nconditioning: worst intermediate stage {worst_stage:.3g} against one-shot {shot.condition:.3g}"
          f" (ratio {shot.condition / worst_stage:.3g}); time staged/one-shot {t_staged / t_shot:.2f}")


def joint_speed(samples: int, seed: int) -> None:
    model = platform()
    truth = model.parameters().values
    fs = 500.0
    rec = ex.multi_excitation(model, truth, scale=[110, 110, 60, 40, 40, 30], band=(1.5, 32.0), duration=samples / fs,
                              fs=fs, rng=seed, floor=1e-5)
    rng = np.random.default_rng(seed)
    start = model.parameters({n: v * rng.uniform(0.95, 1.05) for n, v in zip(model.param_names, truth)})
    fit_records(model, [rec], start, model.param_names, max_iterations=1)  # compile outside the timing
    t0 = time.perf_counter()
    fit = fit_records(model, [rec], start, model.param_names)
    elapsed = time.perf_counter() - t0
    print(f"\njoint refinement: 12 states, {len(model.param_names)} parameters + 12 initial states, {rec.n} samples x 6"
          f" channels: {fit.message}, {fit.iterations} iterations, {fit.nfev} simulations, {elapsed:.1f} s"
          f" (ratio to the 30 s target: {elapsed / 30:.2f})")


def cost_per_sample(seed: int) -> None:
    model = platform()
    truth = model.parameters().values
    q0 = ex.equilibrium(model, np.zeros(6), truth)
    y0 = np.concatenate([q0, np.zeros(6)])
    base = None
    print("\nsimulation with sensitivities (42 parameters + 12 initial states):")
    for n in (2500, 5000, 10000, 20000):
        rec = ex.multi_excitation(model, truth, scale=[110, 110, 60, 40, 40, 30], band=(1.5, 32.0), duration=n / 500.0,
                                  rng=seed, floor=1e-5)
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            simulate(model.layout, rec.t, np.ascontiguousarray(rec.u), truth, y0)
            best = min(best, time.perf_counter() - t0)
        per = best / n
        base = base or per
        print(f"  {n:6d} samples: {best:.3f} s, {1e6 * per:.1f} µs per sample (ratio to 2500: {per / base:.2f})")


def calibration(draws: int, seed: int) -> None:
    model = chain(3)
    truth_vec = model.parameters().values
    truth = dict(zip(model.param_names, truth_vec))
    inside = total = 0
    t0 = time.perf_counter()
    for d in range(draws):
        recs = [ex.multi_excitation(model, truth_vec, scale=[3.0], band=(0.6, 18.0), duration=8.0, rng=seed * 1000 + 2 * d + k,
                                    name=f"multi{k}", floor=1e-5) for k in (1, 2)]
        rng = np.random.default_rng(seed + d)
        start = model.parameters({n: v * rng.uniform(0.95, 1.05) for n, v in truth.items()})
        fit = fit_records(model, recs, start, model.param_names)
        for e in fit.estimates:
            if e.vary and math.isfinite(e.stderr):
                total += 1
                inside += int(e.ci[0] <= truth[e.name] <= e.ci[1])
    p = inside / max(total, 1)
    half = 1.96 * math.sqrt(0.95 * 0.05 / max(total, 1))
    print(f"\ncalibration ({draws} noise draws of the 3-mass chain, joint fit, {total} intervals):"
          f" {100 * p:.1f} % inside (binomial band around 95 %: {100 * (0.95 - half):.1f}–{100 * (0.95 + half):.1f} %),"
          f" {time.perf_counter() - t0:.0f} s")


def quiet_chain(samples: int, seed: int) -> None:
    """A three-mass chain (k1 + k3 + c1 to ground, k1 + c1 between) simulated by scipy's DOP853 at rtol 1e-10 from
    a cubic-spline force, displacements of 10–30 mm, noise 2e-6 m, two records, fitted from starts 20–50 % off."""
    from scipy.integrate import solve_ivp
    from scipy.interpolate import CubicSpline

    from nlid_core.mdof.data import MdofRecord

    model = parse_model(QUIET_CHAIN)
    truth = dict(zip(model.param_names, model.parameters().values, strict=True))
    m = np.array([truth[f"m_x{i}"] for i in (1, 2, 3)])
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / 1000.0
    recs = []
    for r in range(2):
        freqs = np.arange(1, 61) * 1.0
        f = np.sin(2 * np.pi * freqs[:, None] * t + rng.uniform(0, 2 * np.pi, (freqs.size, 1))).sum(axis=0)
        spline = CubicSpline(t, f * 28.0 / np.std(f))

        def rhs(tt: float, y: np.ndarray, spline: CubicSpline = spline) -> np.ndarray:
            q, v = y[:3], y[3:]
            g = truth["k1_g1"] * q[0] + truth["k3_g1"] * q[0] ** 3 + truth["c1_g1"] * v[0]
            s12 = truth["k1_s12"] * (q[1] - q[0]) + truth["c1_s12"] * (v[1] - v[0])
            s23 = truth["k1_s23"] * (q[2] - q[1]) + truth["c1_s23"] * (v[2] - v[1])
            return np.concatenate([v, np.array([spline(tt) - g + s12, -s12 + s23, -s23]) / m])

        sol = solve_ivp(rhs, (0.0, t[-1]), np.zeros(6), method="DOP853", t_eval=t, rtol=1e-10, atol=1e-13)
        q = sol.y[:3].T + rng.normal(0.0, 2e-6, (t.size, 3))
        recs.append(MdofRecord(name=f"multi{r + 1}", t=t, u=spline(t)[:, None], y=q, input_names=model.used_inputs,
                               output_names=model.dof_names))
    off = rng.uniform(0.2, 0.5, len(truth)) * rng.choice([-1.0, 1.0], len(truth))
    start = model.parameters().with_values({n: v * (1 + o) for (n, v), o in zip(truth.items(), off, strict=True)})
    c0, w0 = time.process_time(), time.perf_counter()
    fit = fit_records(model, recs, start, model.param_names)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    worst = max(abs(e.value - truth[e.name]) / (0.5 * (e.ci[1] - e.ci[0])) for e in fit.estimates)
    print(f"quiet three-mass chain (2 x {samples} samples, noise 2e-6 m): fit {cpu:.1f} s CPU ({wall:.1f} s wall),"
          f" ratio to the 5 s target {cpu / 5.0:.2f}; largest |error| / 95 % half-width {worst:.2f} (target <= 1.5);"
          f" integration: {fit.message.split('; integration: ')[-1].split(',')[0] if 'integration' in fit.message else '?'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spread", type=float, default=0.3)
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--draws", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-staged", action="store_true")
    args = ap.parse_args()
    quiet_chain(args.samples, args.seed)
    joint_speed(args.samples, args.seed)
    cost_per_sample(args.seed)
    calibration(args.draws, args.seed)
    if not args.skip_staged:
        staged_vs_one_shot(args.spread, args.seed)


if __name__ == "__main__":
    main()
