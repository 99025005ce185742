"""Benchmark: nlid against the seed-000 method on the same data, in one run.

The seed's method (re-implemented here from its description, as the reference):
* equation error: ``scipy.optimize.least_squares`` (trf, bounds >= 0) on the
  residual ``((m0 + m1·x²)·a + c1·v + c2·|v|·v + k1·x + k3·x³ − f)/A`` over
  samples with |f| > 1.5 N, started from [1.6, 0.05, 0.4, 0.15, 700, 16000];
* output error: ``least_squares`` (trf, 2-point finite-difference Jacobian) on
  ``(x_sim − x_meas)[::10]`` where each residual runs ``solve_ivp`` (RK45,
  rtol 1e-6) with the force as a continuous function, started from its
  equation-error estimate, initial state at rest.

nlid is configured with the same residuals (force threshold 0.15·max|f|,
k1, k3 >= 0 as the seed; x on every 10th sample, initial state at rest) so the
estimates must agree (relative difference < 1e-3). Timings are medians over
repeats, measured after the one-time JIT compilation (reported separately).
Then the time of the default two-stage identification is measured from 1e4
to 1e6 samples.

Run: ``python bench/bench_seed.py`` (about 1-2 minutes).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.estimate import FitOptions, equation_error, identify, output_error  # noqa: E402
from nlid_core.examples import ExampleSpec, SEED_TRUTH, chirp_force, make_example  # noqa: E402
from nlid_core.models import TermModel  # noqa: E402
from nlid_core.record import from_arrays  # noqa: E402
from nlid_core.simulate import simulate, warm_up  # noqa: E402

NAMES = ("m0", "m1", "c1", "c2", "k1", "k3")


def median_time(fn, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def seed_equation_error(rec):
    x, v, a, f = rec.x, rec.v, rec.a, rec.f
    mask = np.abs(f) > 1.5

    def residual(p):
        m0, m1, c1, c2, k1, k3 = p
        fe = (m0 + m1 * x**2) * a + c1 * v + c2 * np.abs(v) * v + k1 * x + k3 * x**3
        return ((fe - f) / 10.0)[mask]

    res = least_squares(residual, np.array([1.6, 0.05, 0.4, 0.15, 700.0, 16000.0]), bounds=(0, np.inf), method="trf")
    return res.x


def seed_output_error(rec, start):
    t, xm = rec.t, rec.x
    force = chirp_force(10.0, 0.5, 5.0, 12.0)

    def rhs(tv, y, p):
        q, qd = y
        m0, m1, c1, c2, k1, k3 = p
        return [qd, (force(tv) - c1 * qd - c2 * abs(qd) * qd - k1 * q - k3 * q**3) / (m0 + m1 * q * q)]

    def residual(p):
        sol = solve_ivp(rhs, (0, t[-1]), [0.0, 0.0], t_eval=t, args=(p,), method="RK45", rtol=1e-6)
        return (sol.y[0] - xm)[::10]

    res = least_squares(residual, start, method="trf")
    return res.x, res.nfev


def ours_ee(rec):
    model = TermModel(NAMES)
    params = model.default_parameters().update("k1", lower=0.0).update("k3", lower=0.0)
    return equation_error(rec, model, params, FitOptions(method="equation-error", force_threshold=0.15))


def ours_oe(rec, start_params):
    return output_error(rec, TermModel(NAMES), start_params,
                        FitOptions(method="output-error", sample_step=10, initial_state="rest"))


def rel_diff(a, b):
    """|a - b| relative to the larger of |a|, |b| (floored at 1e-6 of the true value, for estimates on a
    bound of 0 such as m1 in equation error)."""
    a, b = np.asarray(a), np.asarray(b)
    floor = 1e-6 * np.array([SEED_TRUTH[n] for n in NAMES])
    return np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), floor)


def scaling_record(n):
    """A seed-system record of n samples at 500 Hz (chirp 0.5-5 Hz repeated), simulated by nlid itself."""
    fs = 500.0
    t = np.arange(n) / fs
    period = 12.0
    tau = t % period
    f = 10.0 * np.sin(2 * np.pi * (0.5 * tau + 0.5 * 4.5 / period * tau**2))
    sim = simulate(TermModel(NAMES), t, f, [SEED_TRUTH[k] for k in NAMES], substeps=2)
    rng = np.random.default_rng(1)
    return from_arrays(t, f, sim.x + 4e-4 * rng.standard_normal(n), name=f"n={n}")


def main():
    compile_s = warm_up()
    rec = make_example("seed")
    print(f"data: seed-000 benchmark, {rec.n} samples; one-time JIT compile/load {compile_s:.2f} s (excluded)\n")

    # equation error
    t_seed_ee, seed_ee = median_time(lambda: seed_equation_error(rec), 15)
    ours_ee(rec)
    t_ours_ee, ee = median_time(lambda: ours_ee(rec), 101)
    d_ee = rel_diff(ee.parameters.values, seed_ee)
    print("equation error")
    print(f"  seed (iterative least_squares): {1e3 * t_seed_ee:8.2f} ms")
    print(f"  nlid (bounded linear LSQ + covariance + metrics): {1e3 * t_ours_ee:8.3f} ms")
    print(f"  speed-up {t_seed_ee / t_ours_ee:6.1f}x (target >= 30x)")
    print(f"  max relative difference of estimates: {d_ee.max():.2e} (target < 1e-3)")
    for n, a, b in zip(NAMES, ee.parameters.values, seed_ee, strict=True):
        print(f"    {n:3s} nlid {a:14.8g}  seed {b:14.8g}")

    # output error, both from the seed's equation-error estimate
    start = TermModel(NAMES).default_parameters(dict(zip(NAMES, seed_ee, strict=True)))
    t_seed_oe, (seed_oe, seed_nfev) = median_time(lambda: seed_output_error(rec, seed_ee), 3)
    ours_oe(rec, start)
    t_ours_oe, oe = median_time(lambda: ours_oe(rec, start), 31)
    d_oe = rel_diff(oe.parameters.values, seed_oe)
    print("\noutput error (x on every 10th sample, initial state at rest)")
    print(f"  seed (solve_ivp RK45 in the residual, finite-difference Jacobian, {seed_nfev} fevs): {t_seed_oe:8.2f} s")
    print(f"  nlid (compiled RK4 + exact sensitivities, {oe.nfev} fevs): {1e3 * t_ours_oe:8.2f} ms")
    print(f"  speed-up {t_seed_oe / t_ours_oe:6.0f}x (target >= 200x)")
    print(f"  max relative difference of estimates: {d_oe.max():.2e} (target < 1e-3)")
    for n, a, b, e, d in zip(NAMES, oe.parameters.values, seed_oe, oe.estimates, d_oe, strict=True):
        print(f"    {n:3s} nlid {a:14.8g}  seed {b:14.8g}  rel diff {d:.1e}  (relative stderr {e.stderr / abs(a):.1e})")

    # scaling of the default two-stage identification
    print("\nscaling of the default two-stage identification (x only, all samples)")
    base = None
    for n in (10_000, 100_000, 1_000_000):
        r = scaling_record(n)
        identify(r, NAMES) if n <= 100_000 else None
        t, fit = median_time(lambda r=r: identify(r, NAMES), 3 if n <= 100_000 else 1)
        per = t / n
        base = base or per
        print(f"  n = {n:>9,d}: {t:8.3f} s  ({1e6 * per:6.2f} us/sample, {per / base:4.2f}x the 1e4 rate)"
              f"  EE {fit.timing['equation_error_s']:.3f} s, OE {fit.timing['output_error_s']:.3f} s,"
              f" k3 = {fit.values['k3']:.1f}")


if __name__ == "__main__":
    main()
