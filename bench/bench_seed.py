"""Benchmark: the default ``identify`` command against the seed-000 method, timed in one run.

What users run is timed: the seed record is written by the CLI
(``python -m nlid_core example seed --out seed.csv``: all samples, measured
x, v, a) and identified by the default command
(``python -m nlid_core identify seed.csv --json OUT``) in a fresh process;
the ratios use the ``timing`` fields of that JSON (``equation_error_s``,
``output_error_s``; the one-time compilation ``compile_s`` is reported
apart). The seed's own method is re-implemented here and timed in the same
run on the same record:

* equation error: ``scipy.optimize.least_squares`` (trf, bounds >= 0) on the
  residual ``((m0 + m1·x²)·a + c1·v + c2·|v|·v + k1·x + k3·x³ − f)/A`` over
  samples with |f| > 1.5 N, started from [1.6, 0.05, 0.4, 0.15, 700, 16000];
* output error: ``least_squares`` (trf, 2-point finite-difference Jacobian) on
  ``(x_sim − x_meas)[::10]`` where each residual runs ``solve_ivp`` (RK45,
  rtol 1e-6) with the force as a continuous function, started from its
  equation-error estimate, initial state at rest.

Targets: equation error >= 30x, output error >= 200x. The estimates of both
are printed side by side, with their difference in standard errors of the
nlid fit. ``--scaling`` also times the default identification from 1e4 to
1e6 samples.

Run: ``python bench/bench_seed.py [--repeats N] [--scaling]`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlid_core.estimate import identify  # noqa: E402
from nlid_core.estimate._threads import single_blas_thread  # noqa: E402
from nlid_core.examples import SEED_TRUTH, chirp_force, make_example  # noqa: E402
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


def run_cli(args, cwd):
    proc = subprocess.run([sys.executable, "-m", "nlid_core", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"`nlid_core {' '.join(args)}` failed ({proc.returncode}): {proc.stderr.strip()}")


def scaling():
    print("\nscaling of the default two-stage identification (x only, all samples)")
    warm_up()
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="CLI runs (the median of their timings is used)")
    parser.add_argument("--scaling", action="store_true", help="also time 1e4 to 1e6 samples")
    parser.add_argument("--seed-once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_once:  # the seed's script as it runs: a fresh process, one call of each stage
        rec = make_example("seed")
        with single_blas_thread():
            t0 = time.perf_counter()
            ee = seed_equation_error(rec)
            t1 = time.perf_counter()
            seed_output_error(rec, ee)
            t2 = time.perf_counter()
        print(json.dumps({"ee_s": t1 - t0, "oe_s": t2 - t1}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        run_cli(["example", "seed", "--out", "seed.csv"], tmp)
        docs = []
        for k in range(args.repeats):
            run_cli(["identify", "seed.csv", "--json", f"fit{k}.json", "--quiet"], tmp)
            docs.append(json.loads((Path(tmp) / f"fit{k}.json").read_text()))
    rec = make_example("seed")  # the record the CLI wrote, before rounding to text
    print(f"data: seed-000 benchmark, {rec.n} samples, measured {', '.join(rec.measured)};"
          f" default command `identify seed.csv --json OUT`, {args.repeats} runs")
    ee_s = statistics.median(d["timing"]["equation_error_s"] for d in docs)
    oe_s = statistics.median(d["timing"]["output_error_s"] for d in docs)
    for k, d in enumerate(docs):
        tm = d["timing"]
        print(f"  run {k}: compile {tm['compile_s']:.3f} s, equation error {1e3 * tm['equation_error_s']:.2f} ms,"
              f" output error {1e3 * tm['output_error_s']:.1f} ms, total {1e3 * tm['total_s']:.1f} ms")
    # the seed's method gets the same single BLAS thread as nlid (threads only slow these tall, narrow problems)
    with single_blas_thread():
        t_seed_ee, seed_ee = median_time(lambda: seed_equation_error(rec), 15)
        t_seed_oe, (seed_oe, seed_nfev) = median_time(lambda: seed_output_error(rec, seed_ee), 1)
    # like for like: the seed's code also run once in a fresh process, as its script runs
    once = json.loads(subprocess.run([sys.executable, __file__, "--seed-once"], capture_output=True, text=True,
                                     check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)
    print("\nequation error")
    print(f"  seed (iterative least_squares): {1e3 * t_seed_ee:8.2f} ms warm (median of 15),"
          f" {1e3 * once['ee_s']:.2f} ms once in a fresh process")
    print(f"  nlid (JSON timing, median):     {1e3 * ee_s:8.2f} ms (once in a fresh process, as the CLI runs)")
    print(f"  speed-up {t_seed_ee / ee_s:6.1f}x against the warm seed, {once['ee_s'] / ee_s:.1f}x like for like"
          " (target >= 30x)")
    print("\noutput error")
    print(f"  seed (solve_ivp RK45 in the residual, finite-difference Jacobian, {seed_nfev} fevs): {t_seed_oe:8.2f} s")
    print(f"  nlid (JSON timing, median): {1e3 * oe_s:8.1f} ms")
    print(f"  seed once in a fresh process: {once['oe_s']:8.2f} s")
    print(f"  speed-up {t_seed_oe / oe_s:6.0f}x, {once['oe_s'] / oe_s:.0f}x like for like (target >= 200x)")
    fit = docs[0]["parameters"]
    print("\nestimates (nlid default two-stage vs the seed's output error; difference in nlid standard errors)")
    for n, b in zip(NAMES, seed_oe, strict=True):
        p = fit[n]
        se = p["stderr"] or float("nan")
        print(f"    {n:3s} nlid {p['value']:14.8g} ± {se:.2g}  seed {b:14.8g}  ({(p['value'] - b) / se:+.2f} se)")
    if args.scaling:
        scaling()


if __name__ == "__main__":
    main()
