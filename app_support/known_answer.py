"""Notes the Identify and Validate pages show beside their tables: what a 95 % interval promises on a record
whose answer is known, and which residual a whiteness test tested.

The coverage figures of :data:`SEED_COVERAGE` are measured, not derived: ``bench/bench_seed_coverage.py``
redraws the noise of the seed example many times, fits each draw as the dashboard does and counts how often
each interval contains the true value. They are shown only beside a record of that very design.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nlid_core.estimate import FitResult
from nlid_core.examples import EXAMPLES
from nlid_core.metrics import ChannelMetrics, residual_kind
from nlid_core.record import Record

from .text import esc


@dataclass(frozen=True, kw_only=True)
class CoverageStudy:
    """Measured coverage of the 95 % intervals of one simulated test design."""

    example: str
    draws: int
    first_seed: int
    coverage: Mapping[str, float]  # fraction of draws whose interval contains the true value
    all_inside: float  # fraction of draws with every interval containing its true value
    command: str


#: Measured with ``python bench/bench_seed_coverage.py --draws 300 --first 1000`` (noise generator seeds
#: 1000..1299, the example's own seed 42 left out; default model, two-stage fit, 95 % intervals).
SEED_COVERAGE = CoverageStudy(
    example="seed", draws=100, first_seed=1000,
    coverage={"m0": 0.96, "m1": 0.90, "c1": 0.96, "c2": 0.95, "k1": 0.96, "k3": 0.93},
    all_inside=0.79,
    command="python bench/bench_seed_coverage.py --draws 100 --first 1000",
)


def _wilson_upper(p: float, n: int, z: float = 1.96) -> float:
    """Upper end of the Wilson 95 % interval of a proportion ``p`` measured over ``n`` draws."""
    den = 1 + z * z / n
    return float((p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / den)


def _example_of(rec: Record | None) -> str | None:
    """The example a record was generated from (``example:<name>`` source, true parameters kept), else None."""
    if rec is None or not str(rec.source).startswith("example:") or "true_parameters" not in rec.meta:
        return None
    return str(rec.source).removeprefix("example:")


def _is_design(rec: Record, study: CoverageStudy) -> bool:
    """Whether ``rec`` is a draw of the study's design (same example, true values, force and noise)."""
    spec = EXAMPLES.get(study.example)
    if spec is None or _example_of(rec) != study.example:
        return False
    meta = rec.meta
    return (dict(meta.get("true_parameters", {})) == dict(spec.terms)
            and dict(meta.get("noise", {})) == dict(spec.noise)
            and str(meta.get("excitation", "")) == (f"chirp {spec.amplitude_n:g} N, {spec.f0_hz:g}->{spec.f1_hz:g} Hz"
                                                     f" over {spec.duration_s:g} s"))


def interval_note(fit: FitResult, records: Mapping[str, Record], study: CoverageStudy = SEED_COVERAGE) -> str | None:
    """Markdown note on the intervals of a fit to a simulated record with known true parameters, or None.

    Says how many intervals contain the true values, how far each miss lies in standard errors, what a
    95 % interval promises (a miss in about 1 of 20 noise draws), and, on a draw of the study's design,
    the measured coverage of that design.
    """
    names = {r.name for r in fit.records} or {m.record for m in fit.metrics}
    if len(names) != 1:
        return None
    name = names.pop()
    rec = records.get(name)
    if rec is None or _example_of(rec) is None:
        return None
    truth = {k: float(v) for k, v in dict(rec.meta["true_parameters"]).items()}
    conf = int(round(100 * fit.options.confidence))
    rows = [(e, truth[e.name]) for e in fit.estimates
            if e.vary and e.name in truth and math.isfinite(e.stderr) and e.stderr > 0]
    if not rows:
        return None
    misses = [(e, t) for e, t in rows if not (e.ci[0] <= t <= e.ci[1])]
    text = (f"**Known answer.** `{esc(name)}` is simulated, so its true parameters are known: "
            f"{len(rows) - len(misses)} of {len(rows)} {conf} % intervals contain them.")
    if misses:
        text += " Outside: " + "; ".join(
            f"{esc(e.name)} (true {t:.6g}, {abs(e.value - t) / e.stderr:.1f} standard errors from the estimate)"
            for e, t in misses) + "."
    text += (f"\n- A {conf} % interval misses the true value in {100 - conf} % of repeated tests"
             f" (1 in {100 / max(100 - conf, 1):.0f}); with {len(rows)} parameters a miss in a single test is"
             " common and by itself no sign of a wrong model.")
    if _is_design(rec, study) and conf == 95:
        shown = ", ".join(f"{esc(n)} {100 * c:.0f} %" for n, c in study.coverage.items())
        text += (f"\n- Measured on this test design ({study.draws} independent noise draws fitted the same way,"
                 f" `{study.command}`): the intervals contained the true value in {shown} of the draws;"
                 f" all {len(study.coverage)} at once in {100 * study.all_inside:.0f} %.")
        low = [n for n, c in study.coverage.items() if _wilson_upper(c, study.draws) < 0.95]
        if low:
            text += (f" The intervals of {', '.join(esc(n) for n in low)} are somewhat too narrow on this design"
                     " (coverage significantly below 95 %).")
    text += ("\n- The Identifiability page computes each parameter's profile-likelihood interval, which does not"
             " assume the cost is quadratic in the parameters.")
    return text


def whiteness_note(metrics: Sequence[ChannelMetrics], *, initial_state: str = "estimated with the parameters",
                   start: int = 0) -> str:
    """One line saying which residual each whiteness test tested, over how many lags, from which sample.

    ``initial_state`` says how the simulation's initial state was set (it colours a simulation error when it
    is off); ``start`` is the first sample scored.
    """
    kinds = sorted({residual_kind(m.channel) for m in metrics})
    lags = sorted({m.whiteness.lags for m in metrics})
    lag_text = f"lags 1-{lags[0]}" if len(lags) == 1 else "lags " + ", ".join(f"1-{k}" for k in lags)
    text = (f"Whiteness: Ljung-Box test of the {' and the '.join(kinds)} over {lag_text}"
            f"{f' from sample {start}' if start else ''}; p < 0.01 reads as not white.")
    if "simulation error" in kinds:
        text += f" The simulation starts from an initial state {initial_state}."
    if "equation error" in kinds:
        text += " The equation error is the model's force from the measured motion minus the measured force."
    return text
