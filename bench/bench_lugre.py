"""Benchmark: stiff LuGre friction, nlid's SDIRK4 against scipy's Radau at matched accuracy.

The system is ``TermModel("m0,k1,lugre")``: 1 kg on a 100 N/m spring with LuGre friction
(σ0 = 1e7 N/m by default, σ1 = 2ζ·sqrt(σ0·m0) with bristle damping ratio ζ = 0.5, σ2 = 0.4 N·s/m,
Fc = 1 N, Fs = 1.5 N, vs = 1e-3 m/s), at rest at t = 0. The force is a 1 Hz sine whose amplitude
swings between 0.3 N and 3 N with a 10 s period (``(1 − cos)/2`` modulation): below the
breakaway force (Fs) the mass stays in pre-sliding, above it it sticks and slips twice a cycle.
The record has 1e5 samples at 1 kHz (ten modulation periods); the bristle equation is stiff
(|λ| ~ σ0·|v|/Fc up to ~1e6 1/s), so explicit RK4 is out and ``simulate`` (``method="auto"``)
switches to the implicit SDIRK4.

Steps, all in one run:

1. Reference: scipy ``solve_ivp`` Radau (exact Jacobian, via ``simulate_reference``) at
   ``--reference-rtol`` (1e-11). Its own convergence is shown by the difference between it and
   the Radau runs at looser tolerances, and it is compared with nlid's SDIRK4 at rtol 1e-12 (the
   other candidate reference): the more accurate one is the one whose looser runs converge to
   it, printed as "check".
2. Radau at ``--radau-rtols`` (1e-6, 1e-8) and nlid: ``simulate`` (``method="auto"``) and
   SDIRK4 (``integrate(..., method="sdirk", rtol=...)``) at ``--tolerances``. Error is the
   relative RMS of x against the reference, ``rms(x − x_ref) / rms(x_ref)`` (z likewise).
   Times are the best of ``--repeats`` runs after a warm-up that compiles every kernel.
   Radau's absolute tolerance is ``rtol·1e-6`` on every state (nlid's default per-state
   ``atol`` is the same on v and z and looser on x: ``rtol·1e-3``).
3. Matched accuracy: for each Radau tolerance the fastest nlid SDIRK4 run whose error is at or
   below Radau's, and the speed ratio time(Radau) / time(nlid) on the same samples.

Radau is a Python-level integrator (about 1 ms of wall time per record sample at these
tolerances), so the comparison (reference, Radau, every nlid run) is made on a window: the
first ``--window`` samples (default 1e4, one full modulation period, so it holds pre-sliding,
stick-slip and the transitions in the same proportions as the whole record). The window's
time per sample is what scales; nlid's default ``simulate`` and the matched SDIRK4 runs are
also timed once on the full record to show their per-sample time holds there. ``--window 0``
runs everything on the full record (about 15 minutes on two cores).

Run: ``python bench/bench_lugre.py [--samples N] [--sigma0 S] [--window W] [--repeats R]``
(about 2 to 3 minutes with the defaults).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.dynamics.integrate import integrate  # noqa: E402
from nlid_core.models import TermModel  # noqa: E402
from nlid_core.simulate import simulate, simulate_reference  # noqa: E402

MODEL = "m0,k1,lugre"
#: Radau's absolute tolerance on every state, as a multiple of its rtol.
RADAU_ATOL_PER_RTOL = 1e-6


@dataclass(frozen=True)
class Run:
    """One timed simulation of the window."""

    label: str
    rtol: float | None
    x: np.ndarray
    z: np.ndarray
    time_s: float
    steps: int | None
    nfev: int | None


def lugre_record(n: int, fs_hz: float, sigma0: float, zeta: float, period_s: float):
    """Model, parameters, time and force of the stick-slip / pre-sliding record."""
    model = TermModel(MODEL)
    m0 = 1.0
    params = model.default_parameters({
        "m0": m0, "k1": 100.0, "sigma0": sigma0, "sigma1": 2.0 * zeta * math.sqrt(sigma0 * m0), "sigma2": 0.4,
        "Fc": 1.0, "Fs": 1.5, "vs": 1e-3,
    })
    t = np.arange(n) / fs_hz
    amplitude = 0.3 + 2.7 * 0.5 * (1.0 - np.cos(2.0 * np.pi * t / period_s))
    return model, params, t, amplitude * np.sin(2.0 * np.pi * 1.0 * t)


def rel_rms(a: np.ndarray, ref: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - ref) ** 2)) / np.sqrt(np.mean(ref**2)))


def best_of(fn, repeats: int):
    """(best wall time, last result) of ``repeats`` calls."""
    best, out = math.inf, None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def radau(model, params, t, f, rtol: float, repeats: int) -> Run:
    def go():
        return simulate_reference(model, t, f, params, method="Radau", rtol=rtol, atol=rtol * RADAU_ATOL_PER_RTOL)

    sec, res = best_of(go, repeats)
    if not res.success:
        raise SystemExit(f"Radau at rtol {rtol:g} failed: {res.message}")
    return Run("scipy Radau", rtol, res.x, res.states["z"], sec, None, res.nfev)


def sdirk(model, params, t, f, rtol: float, repeats: int) -> Run:
    theta = params.values
    y0 = model.initial_state([0.0, 0.0], theta)
    sec, tr = best_of(lambda: integrate(model, t, f, theta, y0, method="sdirk", rtol=rtol), repeats)
    if not tr.success:
        raise SystemExit(f"SDIRK4 at rtol {rtol:g} failed: {tr.message}")
    return Run("nlid SDIRK4", rtol, tr.output("x"), tr.output("z"), sec, tr.steps, None)


def auto(model, params, t, f, repeats: int) -> tuple[Run, str]:
    sec, res = best_of(lambda: simulate(model, t, f, params, method="auto"), repeats)
    if not res.success:
        raise SystemExit(f"simulate (auto) failed: {res.message}")
    m = re.search(r"rtol ([0-9.e+-]+), (\d+) steps", res.method)
    rtol, steps = (float(m.group(1)), int(m.group(2))) if m else (None, None)
    return Run("nlid simulate auto", rtol, res.x, res.states["z"], sec, steps, None), res.method


def warm_up(model, params, t, f) -> float:
    """Compile every kernel the runs use (numba caches to disk; the first run of a fresh checkout is slower)."""
    t0 = time.perf_counter()
    k = min(t.size, 300)
    sdirk(model, params, t[:k], f[:k], 1e-6, 1)
    auto(model, params, t[:k], f[:k], 1)
    radau(model, params, t[:k], f[:k], 1e-6, 1)
    return time.perf_counter() - t0


def fmt_rtol(r: float | None) -> str:
    return "-" if r is None else f"{r:.0e}"


def steps_per(r: Run, n: int) -> str:
    """Accepted steps per sample (load-independent, unlike the times)."""
    return "-" if r.steps is None else f"{r.steps / n:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000, help="record length at 1 kHz (default 1e5)")
    parser.add_argument("--sigma0", type=float, default=1e7, help="bristle stiffness, N/m (default 1e7)")
    parser.add_argument("--zeta", type=float, default=0.5, help="bristle damping ratio (sigma1 = 2 zeta sqrt(sigma0 m0))")
    parser.add_argument("--period", type=float, default=10.0, help="amplitude-modulation period, s (default 10)")
    parser.add_argument("--window", type=int, default=10_000,
                        help="samples (from the start) on which every method is compared; 0 = the full record")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per nlid configuration (best is kept)")
    parser.add_argument("--radau-repeats", type=int, default=1, help="timed runs per Radau tolerance (best is kept)")
    parser.add_argument("--reference-rtol", type=float, default=1e-11, help="Radau tolerance of the reference")
    parser.add_argument("--radau-rtols", default="1e-6,1e-8", help="Radau tolerances to match (comma-separated)")
    parser.add_argument("--tolerances", default="1e-4,1e-6,1e-7,1e-8,1e-9,1e-10,1e-11,1e-12",
                        help="SDIRK4 tolerances (comma-separated)")
    parser.add_argument("--no-full", action="store_true", help="skip the full-record timing of nlid")
    args = parser.parse_args(argv)
    radau_rtols = [float(s) for s in args.radau_rtols.split(",") if s]
    tols = [float(s) for s in args.tolerances.split(",") if s]
    if args.samples < 10 or args.window < 0:
        parser.error("`--samples` must be >= 10 and `--window` >= 0")
    fs_hz = 1000.0
    model, params, t_all, f_all = lugre_record(args.samples, fs_hz, args.sigma0, args.zeta, args.period)
    w = args.samples if args.window == 0 else min(args.window, args.samples)
    t, f = t_all[:w], f_all[:w]
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"machine: {cores} cores ({usable} usable by this process), load average {load[0]:.2f} {load[1]:.2f}"
          f" {load[2]:.2f}; numpy {np.__version__}")
    p = dict(zip(model.param_names, params.values, strict=True))
    print(f"model {MODEL}: " + ", ".join(f"{k} = {v:.4g}" for k, v in p.items()))
    print(f"record: {args.samples} samples at {fs_hz:g} Hz ({t_all[-1]:.1f} s), force 1 Hz sine, amplitude"
          f" 0.3 .. 3 N over {args.period:g} s (breakaway Fs = {p['Fs']:g} N)")
    if w < args.samples:
        print(f"window: the first {w} samples ({t[-1]:.1f} s) — every method is compared there (Radau is too slow"
              " for the full record in this run's budget); times are also given per sample")
    print(f"warm-up (compiles): {warm_up(model, params, t, f):.2f} s")

    # 1. reference, and the check of it
    t0 = time.perf_counter()
    ref = radau(model, params, t, f, args.reference_rtol, 1)
    print(f"reference: Radau rtol {args.reference_rtol:g}, atol {args.reference_rtol * RADAU_ATOL_PER_RTOL:g}"
          f" ({ref.nfev} fevs, {time.perf_counter() - t0:.1f} s)")
    xr, zr = ref.x, ref.z
    v = np.gradient(xr, t)
    print(f"  motion: peak |x| {np.max(np.abs(xr)) * 1e3:.2f} mm, peak |v| {np.max(np.abs(v)):.3f} m/s, sliding"
          f" (|v| > vs) {100 * np.mean(np.abs(v) > p['vs']):.0f} % of samples")

    # 2. the runs
    runs: list[Run] = []
    for rtol in radau_rtols:
        runs.append(radau(model, params, t, f, rtol, args.radau_repeats))
    auto_run, auto_method = auto(model, params, t, f, args.repeats)
    runs.append(auto_run)
    sd = {rtol: sdirk(model, params, t, f, rtol, args.repeats) for rtol in tols}
    runs.extend(sd.values())
    tight = sd.get(1e-12) or sdirk(model, params, t, f, 1e-12, 1)
    radau_errs = {r.rtol: rel_rms(r.x, xr) for r in runs if r.label.startswith("scipy")}
    print("check of the reference (relative RMS of x):")
    for rtol, e in radau_errs.items():
        print(f"  Radau rtol {rtol:g} vs the reference: {e:.2e}")
    e_tight = rel_rms(tight.x, xr)
    print(f"  nlid SDIRK4 rtol 1e-12 vs the reference: {e_tight:.2e}")
    closest = min(radau_errs.values()) if radau_errs else math.inf
    if closest < e_tight:
        print(f"  -> Radau's own looser runs come within {closest:.1e} of it, SDIRK4 at 1e-12 only within"
              f" {e_tight:.1e}: Radau at rtol {args.reference_rtol:g} is the more accurate reference")
    else:
        print(f"  -> SDIRK4 at 1e-12 and Radau at rtol {args.reference_rtol:g} agree to {e_tight:.1e}, as closely as"
              " Radau's looser runs: the reference is accurate to about that")
    print(f"\nruns on {w} samples (error = relative RMS against the reference; time = best of"
          f" {args.repeats} nlid / {args.radau_repeats} Radau)")
    print(f"  {'method':22s} {'rtol':>6s} {'err x':>9s} {'err z':>9s} {'time s':>8s} {'us/sample':>10s}"
          f" {'steps':>8s} {'nfev':>8s}")
    for r in runs:
        print(f"  {r.label:22s} {fmt_rtol(r.rtol):>6s} {rel_rms(r.x, xr):9.2e} {rel_rms(r.z, zr):9.2e}"
              f" {r.time_s:8.3f} {1e6 * r.time_s / w:10.2f} {r.steps if r.steps is not None else '-':>8}"
              f" {r.nfev if r.nfev is not None else '-':>8}")
    print(f"  (simulate auto: {auto_method})")

    # 3. matched accuracy
    print("\nmatched accuracy (fastest SDIRK4 run with error <= Radau's)")
    matched: list[float] = []
    for r in runs:
        if not r.label.startswith("scipy"):
            continue
        err = rel_rms(r.x, xr)
        ok = [s for s in sd.values() if rel_rms(s.x, xr) <= err]
        if not ok:
            best = min(sd.values(), key=lambda s: rel_rms(s.x, xr))
            print(f"  Radau rtol {r.rtol:g} (err {err:.2e}, {r.time_s:.2f} s): no SDIRK4 tolerance tried reaches it;"
                  f" the most accurate is rtol {best.rtol:g} (err {rel_rms(best.x, xr):.2e}, {best.time_s:.3f} s,"
                  f" {r.time_s / best.time_s:.1f}x faster)")
            continue
        s = min(ok, key=lambda s: s.time_s)
        matched.append(s.rtol)
        print(f"  Radau rtol {r.rtol:g}: err {err:.2e}, {r.time_s:.2f} s  |  SDIRK4 rtol {s.rtol:g}: err"
              f" {rel_rms(s.x, xr):.2e}, {s.time_s:.3f} s  ->  speed ratio {r.time_s / s.time_s:.1f}x")
    if radau_rtols:
        r0 = runs[0]
        print(f"  nlid default simulate (auto) vs Radau rtol {r0.rtol:g}: err {rel_rms(auto_run.x, xr):.2e} vs"
              f" {rel_rms(r0.x, xr):.2e}, speed ratio {r0.time_s / auto_run.time_s:.1f}x")

    if not args.no_full and w < args.samples:
        print(f"\nfull record ({args.samples} samples, one run each): per-sample time against the window's")
        full = [auto(model, params, t_all, f_all, 1)[0]]
        full += [sdirk(model, params, t_all, f_all, rtol, 1) for rtol in dict.fromkeys(matched)]
        by_rtol = {("auto" if "auto" in r.label else r.rtol): r for r in [auto_run, *sd.values()]}
        for r in full:
            key = "auto" if "auto" in r.label else r.rtol
            win = by_rtol[key]
            print(f"  {r.label:22s} {fmt_rtol(r.rtol):>6s} {r.time_s:8.2f} s  {1e6 * r.time_s / args.samples:8.2f}"
                  f" us/sample (window {1e6 * win.time_s / w:8.2f}); steps/sample {steps_per(r, args.samples)}"
                  f" (window {steps_per(win, w)})")


if __name__ == "__main__":
    main()
