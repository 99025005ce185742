"""The sanity check of an estimated initial state: does it agree with the record's first measured sample?

An initial state estimated by output error is free to absorb what the model lacks (a drift, an offset, a slow
mode): it then sits far from what the sensor read at the first sample, flatters the estimation fit and moves
the parameters. The estimated initial displacement disagrees with the first measured sample when it lies more
than :data:`AGREE_SE` standard errors from it (the estimate's own standard error combined with the sensor's
noise, the scatter of a cubic over the first samples), or more than :data:`NOTED_SE` standard errors and
farther than the fit's own RMS error on the displacement (the initial state absorbs more than the model's
typical misfit: on a real rig whose Newey–West intervals are wide, this is the usual sign). The fit is then
run again from the measured initial state, and the report shows both side by side in a warning; the second
fit's values are kept as the stage ``measured-initial-state``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..models import TermModel
from ..quantity import quantity
from ..record import Record
from .options import FitOptions, ProgressFn
from .results import FitResult, RecordFit

__all__ = ["AGREE_SE", "NOTED_SE", "check_initial_states", "first_sample_noise"]

#: Standard errors beyond which an estimated initial displacement disagrees with the first measured sample ...
AGREE_SE = 4.0
#: ... and beyond which it does when it is also farther than the fit's RMS error on the displacement.
NOTED_SE = 2.0


def first_sample_noise(rec: Record, k: int = 40) -> float:
    """The scatter of the displacement about a cubic over its first ``k`` samples (the sensor's noise there)."""
    k = int(min(k, rec.n))
    if k < 8:
        return 0.0
    tau = np.linspace(0.0, 1.0, k)
    basis = np.vander(tau, 4, increasing=True)
    coef, *_ = np.linalg.lstsq(basis, rec.x[:k], rcond=None)
    resid = rec.x[:k] - basis @ coef
    return float(math.sqrt(float(resid @ resid) / (k - 4)))


def _disagreement(rec: Record, rf: RecordFit, rmse_x: float) -> float:
    """|estimated − measured| initial displacement in standard errors when it disagrees (module notes), else 0."""
    if rf.x0_mode != "estimated":
        return 0.0
    se = math.hypot(rf.x0_stderr[0] if math.isfinite(rf.x0_stderr[0]) else 0.0, first_sample_noise(rec))
    span = float(np.ptp(rec.x)) if rec.n else 0.0
    delta = abs(rf.x0[0] - float(rec.x[0]))
    if delta <= 1e-6 * span:
        return 0.0
    z = delta / se if se > 0 else math.inf
    return z if z > AGREE_SE or (z > NOTED_SE and delta > rmse_x) else 0.0


def check_initial_states(recs: Sequence[Record], model: TermModel, final: FitResult, opts: FitOptions,
                         progress: ProgressFn | None) -> tuple[list[str], Mapping[str, float] | None]:
    """Warnings on estimated initial states that disagree with the measured first samples, each with the fit
    from the measured initial state beside it; and that fit's parameter values (None when nothing disagreed or
    the second fit failed)."""
    from .oe_fit import output_error

    rmse = {m.record: m.rmse for m in final.metrics if m.channel == "x"}
    far = [(r, rf, z) for r, rf in zip(recs, final.records, strict=True)
           if (z := _disagreement(r, rf, rmse.get(r.name, math.inf))) > 0]
    if not far:
        return [], None
    if progress:
        progress("initial-state-check", 0.0, "the fit from the measured initial state, for comparison")
    alt = output_error(recs, model, final.parameters, dataclasses.replace(opts, initial_state="data"))
    lines = []
    for r, rf, z in far:
        unit = r.unit("x")
        head = (f"{r.name}: the estimated initial displacement {quantity(rf.x0[0], unit, 4)} lies {z:.1f} standard"
                f" errors from the measured first sample {quantity(float(r.x[0]), unit, 4)}: the initial state may be"
                " absorbing a"
                " drift or an offset the model lacks, and flattering the fit")
        if not alt.success:
            lines.append(f"{head}. The fit from the measured initial state failed: {alt.message}")
            continue
        ours = {(m.record, m.channel): m.fit_percent for m in final.metrics}
        fits = "; ".join(f"{m.channel} fit {m.fit_percent:.1f} % (against {ours.get((m.record, m.channel), math.nan):.1f}"
                         " %)" for m in alt.metrics if m.record == r.name)
        values = ", ".join(f"{e.name} {e.value:.5g} (against {final.estimate(e.name).value:.5g})"
                           for e in alt.estimates if e.vary)
        lines.append(f"{head}. From the measured initial state instead: {values}; {fits}")
    return lines, (alt.values if alt.success else None)
