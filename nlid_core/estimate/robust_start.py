"""Segmented (multiple-shooting) start of the full-record output-error fit."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import numpy as np

from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ..simulate import simulate
from .oe_fit import _initial_states, output_error
from .oe_problem import _substeps_for
from .options import FitOptions, FloatArray, ProgressFn
from .prepare import _with_derivatives

__all__ = ["SEGMENT_PERIODS", "MAX_SEGMENTS", "GOOD_START_NRMSE"]

#: Segment length in natural periods of the start model, and the most segments used per record.
SEGMENT_PERIODS = 3.0
MAX_SEGMENTS = 8
#: A start whose simulation already matches every record's displacement to this NRMSE is in the right basin:
#: the segmented stage is skipped (a far-off start that still simulates fairly lies well above it).
GOOD_START_NRMSE = 0.02


def _segments(rec: Record, model: TermModel, theta: FloatArray) -> list[Record]:
    """Short segments of a record: a few natural periods of the start model each.

    The period comes from the model linearised at rest; without a positive
    linear stiffness a segment is a twentieth of the record. Segments are at
    least 50 samples long; at most ``MAX_SEGMENTS`` of them are taken, spread
    evenly over the record (they only have to give a start, so a long record
    does not make this stage expensive).
    """
    _, jy, _, masses, _ = model.linearise(model.initial_state([0.0, 0.0], theta), theta)
    dadx, mass = float(jy[1, 0]), float(masses[0])
    if mass > 0 and dadx < 0:
        length = int(SEGMENT_PERIODS * 2 * math.pi / math.sqrt(-dadx) * rec.fs)
    else:
        length = rec.n // 20
    length = max(length, 50)
    count = rec.n // length
    if count < 2:
        return [rec]
    chosen = np.unique(np.linspace(0, count - 1, min(count, MAX_SEGMENTS)).round().astype(int))
    return [rec.slice(int(i) * length, (int(i) + 1) * length).replace(name=f"{rec.name}[{i * length}:{(i + 1) * length}]")
            for i in chosen]


def _start_nrmse(recs: Sequence[Record], model: TermModel, params: ParameterSet, opts: FitOptions,
                 x0s: Sequence[tuple[float, float]]) -> float:
    """Largest displacement NRMSE over the records when simulating ``params`` (inf if any diverges)."""
    from ..metrics import nrmse

    worst = 0.0
    for r, x0 in zip(recs, x0s, strict=True):
        sim = simulate(model, r.t, r.f, params.values, x0, input_hold=opts.input_hold,
                       substeps=_substeps_for(r, model, params.values, opts))
        if not sim.success:
            return math.inf
        worst = max(worst, nrmse(r.x, sim.x))
    return worst


def _robust_start(
    recs: Sequence[Record], model: TermModel, start: ParameterSet, opts: FitOptions, progress: ProgressFn | None,
    before: float | None = None, start_label: str = "the equation-error estimate",
) -> tuple[ParameterSet, str, float]:
    """A start for the full-record output-error fit that is in the right basin.

    Output error on a long record is multi-modal: a small error in a lightly
    damped resonance accumulates phase, and an equation-error start biased by
    noisy derived accelerations (errors in variables) can be far off while its
    simulation still looks fair. So output error is first solved on a few
    short segments of the records, each with its own estimated initial state
    (multiple shooting without continuity), where the cost is nearly convex.
    The full-record fit starts from whichever of the two simulates the records
    better. Nothing is done for records too short to segment, nor when the
    start already simulates every record's displacement within
    ``GOOD_START_NRMSE`` (one simulation per record decides; ``before``, the start's NRMSE if the caller
    has it, saves it). ``start_label`` names the start in the note.
    """
    t0 = time.perf_counter()
    x0s, _, _ = _initial_states(recs, opts, None)
    if before is None:
        before = _start_nrmse(recs, model, start, opts, x0s)
    if before <= GOOD_START_NRMSE:
        return start, "", time.perf_counter() - t0
    # velocity is derived once per record (the segments' initial states start from it), not per segment
    with_v = [r if r.v is not None else _with_derivatives(r, opts.differentiator) for r in recs]
    segments = [seg for r in with_v for seg in _segments(r, model, start.values)]
    if len(segments) == len(recs):
        return start, "", time.perf_counter() - t0
    seg_opts = dataclasses.replace(opts, initial_state="estimate", tol=max(opts.tol, 1e-6))
    seg_fit = output_error(segments, model, start, seg_opts, progress=progress, diagnostics=False)
    if not seg_fit.success:
        return start, "", time.perf_counter() - t0
    after = _start_nrmse(recs, model, seg_fit.parameters, opts, x0s)
    elapsed = time.perf_counter() - t0
    if not after < before:
        return start, "", elapsed
    note = ""
    if not math.isfinite(before) or before > 0.1:  # worth telling: the start was far off
        plural = start_label.endswith("values")
        what = (("do not simulate" if plural else "does not simulate") if not math.isfinite(before)
                else f"{'simulate' if plural else 'simulates'} with NRMSE {before:.3f}")
        why = " (noisy derived acceleration biases it)" if start_label == "the equation-error estimate" else ""
        note = (f"{start_label} {what}{why}; output error on {len(segments)} short segments (NRMSE {after:.3f})"
                " gave the start of the full-record fit")
    return seg_fit.parameters, note, elapsed

