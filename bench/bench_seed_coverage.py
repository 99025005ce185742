"""Calibration study: how often the 95 % intervals of the seed example contain the true parameters.

The seed example (``nlid_core.examples``, ``make_example("seed")``) is one noise draw of a fixed test
design: the seed-000 system under a 10 N chirp from 0.5 to 5 Hz, 12 s, noisy x, v, a. Its fit by the
dashboard's default model and settings (``models.DEFAULT_TERMS``, default parameters,
``estimate.FitOptions()``) reports one 95 % interval per parameter. Over many independent noise draws
of the same design, a calibrated interval contains the true value in about 95 % of the draws; one draw
whose interval misses is then the expected 1 in 20, not a defect.

This script redraws the noise ``--draws`` times (generator seeds ``--first``, ``--first`` + 1, ...;
the example's own seed 42 is reported separately and left out of the count), fits each draw as the
dashboard does, and prints per parameter:

* coverage: the fraction of draws whose interval contains the true value, with its Wilson 95 %
  interval (with 100 draws a calibrated 95 % interval shows 88-98 %);
* z rms: the rms of (estimate − truth) / standard error (1 when the standard errors are right);
* spread / se: the standard deviation of the estimates over the draws divided by the mean reported
  standard error (1 when the standard errors are right);
* bias / se: the mean error in units of the mean standard error.

``--noise-colour ar1:0.9`` or ``band:0.5-5`` draws coloured measurement noise of the same standard deviations
(``examples.ExampleSpec.noise_colour``): the fit then finds its residual not white and reports Newey–West
intervals; the target is a coverage of at least 90 % per parameter.

Run: ``python bench/bench_seed_coverage.py [--draws 100] [--first 1000] [--noise-colour white]`` (2-3 s per draw on a shared 2-core
machine). ``--draws 300 --first 1000`` gives the figures the Identify page states beside the seed example
(``app_support/known_answer.py``): coverage 95.0-96.3 % per parameter, all six inside in 260 of 300 draws.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlid_core.estimate import FitOptions, identify  # noqa: E402
from nlid_core.examples import EXAMPLES, SEED_TRUTH, make_example  # noqa: E402
from nlid_core.models import DEFAULT_TERMS, TermModel  # noqa: E402


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (centre - half, centre + half)


def fit_draw(seed: int, model: TermModel, colour: str = "white"
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, bool]:
    """Values, standard errors and interval bounds of the free parameters for one noise draw, whether the fit
    converged and whether its intervals are the Newey–West ones (the residual not white)."""
    rec = make_example("seed", overrides={"seed": seed, "noise_colour": colour})
    fit = identify([rec], model, params=model.default_parameters(), options=FitOptions())
    est = [fit.estimate(n) for n in SEED_TRUTH]
    return (np.array([e.value for e in est]), np.array([e.stderr for e in est]),
            np.array([e.ci[0] for e in est]), np.array([e.ci[1] for e in est]), fit.success,
            bool(fit.uncertainty is not None and fit.uncertainty.serial))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--first", type=int, default=1000, help="generator seed of the first draw")
    ap.add_argument("--noise-colour", default="white",
                    help="white, ar1:PHI or band:F1-F2 (examples.ExampleSpec.noise_colour), e.g. ar1:0.9")
    args = ap.parse_args()
    if args.draws < 1:
        ap.error("--draws must be at least 1")
    model = TermModel(DEFAULT_TERMS)
    if set(model.param_names) != set(SEED_TRUTH):
        raise SystemExit(f"the default model {model.param_names} is not the seed system {tuple(SEED_TRUTH)}")
    names = tuple(SEED_TRUTH)
    truth = np.array([SEED_TRUTH[n] for n in names])
    spec = EXAMPLES["seed"]
    rec = make_example("seed")
    design = {"true_parameters": dict(rec.meta["true_parameters"]), "excitation": rec.meta["excitation"],
              "noise": dict(rec.meta["noise"]), "fs_hz": round(1.0 / rec.dt, 6), "n": rec.n,
              "measured": list(rec.measured)}
    print(f"design: {spec.description}")
    print(f"design as the dashboard checks it (app_support.known_answer.design_of): {design}")
    print(f"fit: default model {', '.join(model.param_names)}, {FitOptions().method},"
          f" {int(100 * FitOptions().confidence)} % intervals")

    print(f"noise colour: {args.noise_colour}")
    values, errors, inside, failed, serial = [], [], [], 0, 0
    start = time.perf_counter()
    for seed in range(args.first, args.first + args.draws):
        val, se, lo, hi, ok, hac = fit_draw(seed, model, args.noise_colour)
        if not ok:
            failed += 1
            continue
        serial += hac
        values.append(val)
        errors.append(se)
        inside.append((lo <= truth) & (truth <= hi))
    elapsed = time.perf_counter() - start
    n = len(values)
    vals, ses, ins = np.array(values), np.array(errors), np.array(inside)
    hits = ins.sum(axis=0)
    print(f"{args.draws} draws (generator seeds {args.first}..{args.first + args.draws - 1}), {n} fits converged,"
          f" {failed} failed, {elapsed:.1f} s; Newey–West intervals (residual not white) in {serial}")
    print(f"{'param':6s} {'coverage':>9s} {'Wilson 95 %':>15s} {'z rms':>7s} {'spread/se':>10s} {'bias/se':>8s}")
    for j, name in enumerate(names):
        lo, hi = wilson(int(hits[j]), n)
        z = (vals[:, j] - truth[j]) / ses[:, j]
        mean_se = float(np.mean(ses[:, j]))
        spread = float(np.std(vals[:, j], ddof=1)) / mean_se if n > 1 else float("nan")
        bias = float(np.mean(vals[:, j] - truth[j])) / mean_se
        print(f"{name:6s} {100 * hits[j] / n:8.1f}% {f'[{100 * lo:.0f}, {100 * hi:.0f}] %':>15s}"
              f" {float(np.sqrt(np.mean(z * z))):7.2f} {spread:10.2f} {bias:8.2f}")
    all_in = int(np.sum(np.all(ins, axis=1)))
    print(f"draws with every parameter inside its interval: {all_in} of {n}"
          f" (independent parameters would give about {100 * 0.95 ** len(names):.0f} %)")

    val, se, lo, hi, *_ = fit_draw(spec.seed, model, args.noise_colour)
    z = (val - truth) / se
    print(f"the example's own draw (seed {spec.seed}): "
          + ", ".join(f"{nm} {zz:+.1f} se" for nm, zz in zip(names, z)))


if __name__ == "__main__":
    main()
