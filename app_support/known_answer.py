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
    design: Mapping[str, object]  # what a record of the design holds: see :func:`design_of`
    method: str = "two-stage"  # how each draw was fitted (the dashboard's default model and options)
    outputs: tuple[str, ...] = ("x",)


#: Measured with ``python bench/bench_seed_coverage.py --draws 300 --first 1000`` (noise generator seeds
#: 1000..1299; the example's own seed 42 left out; default model, two-stage fit, 95 % intervals). The bench
#: prints ``design`` as it finds it; a test checks that the seed example still has this design.
SEED_COVERAGE = CoverageStudy(
    example="seed", draws=300, first_seed=1000,
    coverage={"m0": 0.960, "m1": 0.953, "c1": 0.950, "c2": 0.957, "k1": 0.957, "k3": 0.963},
    all_inside=0.867,
    command="python bench/bench_seed_coverage.py --draws 300 --first 1000",
    design={"true_parameters": {"m0": 2.0, "m1": 0.08, "c1": 0.5, "c2": 0.2, "k1": 800.0, "k3": 20000.0},
            "excitation": "chirp 10 N, 0.5->5 Hz over 12 s", "noise": {"x": 0.0004, "v": 0.003, "a": 0.05},
            "fs_hz": 500.0, "n": 6000, "measured": ["x", "v", "a"]},
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


def design_of(rec: Record) -> dict[str, object]:
    """The test design of a simulated record: true parameters, excitation, noise, sampling rate, length."""
    meta = rec.meta
    return {"true_parameters": dict(meta.get("true_parameters", {})), "excitation": str(meta.get("excitation", "")),
            "noise": dict(meta.get("noise", {})), "fs_hz": round(1.0 / rec.dt, 6), "n": rec.n,
            "measured": list(rec.measured)}


def _is_design(rec: Record, study: CoverageStudy) -> bool:
    """Whether ``rec`` is a draw of the design the study measured (any noise seed)."""
    return _example_of(rec) == study.example and design_of(rec) == dict(study.design)


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
    left_out = [k for k, v in truth.items() if v != 0 and k not in fit.model.param_names]
    if left_out:
        text += (f"\n- The model leaves out {', '.join(esc(k) for k in left_out)} of the true system: its estimates"
                 " are biased by the missing terms, and its intervals do not account for that.")
    else:
        text += (f"\n- A {conf} % interval misses the true value in {100 - conf} % of repeated tests"
                 f" (1 in {100 / max(100 - conf, 1):.0f}); with {len(rows)} parameters a miss in a single test is"
                 " common and by itself no sign of a wrong model.")
    same_fit = (set(fit.model.param_names) == set(study.coverage) and all(e.vary for e in fit.estimates)
                and fit.options.method == study.method and tuple(fit.options.outputs) == study.outputs)
    if _is_design(rec, study) and conf == 95 and same_fit:
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


def fit_state_text(fit: FitResult, record: str | None = None) -> str:
    """How the fit set the initial state of ``record`` (default its first record), as words."""
    modes = {r.name: r.x0_mode for r in fit.records}
    mode = modes.get(record) if record is not None else next(iter(modes.values()), None)
    if mode is None:
        return "as the fit set it"
    return "estimated with the parameters" if mode == "estimated" else mode


def whiteness_note(metrics: Sequence[ChannelMetrics], *, initial_state: str = "estimated with the parameters",
                   start: int = 0, closed_loop: bool = False) -> str:
    """One line saying which residual each whiteness test tested, over how many lags, from which sample.

    ``initial_state`` says how the simulation's initial state was set (it colours a simulation error when it
    is off); ``start`` is the first sample scored; ``closed_loop`` for a fit inside a position loop, whose
    position and force are both simulated in the loop.
    """
    lags = sorted({m.whiteness.lags for m in metrics})
    lag_text = f"lags 1-{lags[0]}" if len(lags) == 1 else "lags " + ", ".join(f"1-{k}" for k in lags)
    if closed_loop:
        return (f"Whiteness: Ljung-Box test of the closed-loop errors over {lag_text}: the position and the applied"
                " force simulated inside the loop from the reference, against the measured ones; p < 0.01 reads as"
                " not white.")
    kinds = sorted({residual_kind(m.channel) for m in metrics})
    text = (f"Whiteness: Ljung-Box test of the {' and the '.join(kinds)} over {lag_text}"
            f"{f' from sample {start}' if start else ''}; p < 0.01 reads as not white.")
    if "simulation error" in kinds:
        text += f" The simulation starts from an initial state {initial_state}."
    if "equation error" in kinds:
        text += " The equation error is the model's force from the measured motion minus the measured force."
    return text
