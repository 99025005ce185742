"""Other minima: output error from other starts when the residual says the model is not the system.

A white residual leaves one minimum near the truth; a coloured one (a real rig: unmodelled dynamics, drift, a
friction law that is only roughly right) often leaves several, each reporting tight intervals of its own. After
such a fit, output error is run again from :data:`START_FACTORS` times the final free parameters (and from the
equation-error estimate when that is not where the fit started), with the fit's own options. A run whose free
parameters all lie inside the two fits' combined intervals reached the same minimum; one outside is a distinct
minimum, listed with its cost and fit in the report, and one as good as the fit (cost within
:data:`AS_GOOD` of it, or below) makes the fit's verdict untrustworthy: the data do not choose between them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

from ..errors import NlidError
from ..models import TermModel
from ..record import Record
from .options import FitOptions, ProgressFn
from .results import FitResult, Minimum

__all__ = ["AS_GOOD", "START_FACTORS", "WORSE_THAN_LINEAR", "baseline_fit", "differing", "explore_minima", "rivals",
           "same_minimum", "wanted", "worse_than_baseline"]

#: The starts: every free parameter of the final fit times these factors.
START_FACTORS = (0.5, 2.0)
#: A distinct minimum whose cost is below (1 + AS_GOOD) times the fit's is as good as it.
AS_GOOD = 0.01
#: Evaluations allowed to each run from another start.
MAX_NFEV = 80


def wanted(final: FitResult) -> bool:
    """Whether to look for other minima: an output-error fit that converged with a residual that is not white."""
    return (final.success and final.method != "equation-error" and bool(final.metrics)
            and any(not m.whiteness.white for m in final.metrics))


def differing(a: FitResult, b: FitResult) -> list[str]:
    """The free parameters of ``a`` whose value in ``b`` lies outside the combined intervals of ``a`` and ``b``
    (their intervals do not overlap)."""
    out = []
    for ea in a.estimates:
        if not ea.vary:
            continue
        eb = b.estimate(ea.name)
        half = (ea.ci[1] - ea.ci[0]) / 2 + (eb.ci[1] - eb.ci[0]) / 2
        if not (math.isfinite(half) and abs(ea.value - eb.value) <= half):
            out.append(ea.name)
    return out


def same_minimum(a: FitResult, b: FitResult) -> bool:
    """Whether every free parameter of ``b`` lies within the combined intervals of ``a`` and ``b``."""
    return not differing(a, b)


def explore_minima(recs: Sequence[Record], model: TermModel, final: FitResult, opts: FitOptions,
                   progress: ProgressFn | None, budget_s: float = math.inf) -> tuple[Minimum, ...]:
    """Output error from the other starts of the module notes; each run as a :class:`Minimum` (one that did not
    converge too, ``distinct`` False: it says how far the basin reaches). No new start begins after ``budget_s``
    seconds (a stiff model's runs are long)."""
    from .oe_fit import output_error

    free = [e.name for e in final.estimates if e.vary]
    starts: list[tuple[str, dict[str, float]]] = []
    for factor in START_FACTORS:
        starts.append((f"free parameters × {factor:g}", {n: final.values[n] * factor for n in free}))
    run_opts = dataclasses.replace(opts, method="output-error", max_nfev=min(opts.max_nfev, MAX_NFEV))
    out = []
    t0 = time.perf_counter()
    for k, (label, values) in enumerate(starts):
        if time.perf_counter() - t0 > budget_s:
            break
        if progress:
            progress("other-starts", k / len(starts), f"output error from {label} ({k + 1} of {len(starts)})")
        params = final.parameters
        for name, value in values.items():
            p = params[name]
            params = params.update(name, value=min(max(value, p.lower), p.upper))
        try:
            fit = output_error(recs, model, params, run_opts)
        except NlidError:
            continue
        out.append(Minimum(start=label, fit=fit, distinct=fit.success and not same_minimum(final, fit)))
    return tuple(out)


def rivals(final: FitResult) -> list[Minimum]:
    """The distinct minima as good as ``final`` (cost within :data:`AS_GOOD` of it, or below)."""
    return [m for m in final.minima if m.distinct and m.fit.cost <= (1 + AS_GOOD) * final.cost]


def baseline_fit(recs: Sequence[Record], model: TermModel, opts: FitOptions) -> tuple[tuple[str, ...], dict[str, float]]:
    """The linear model ``model`` extends (the linear baseline's mass, damping and stiffness, plus the offset
    ``f0`` when the model has it) fitted by output error from its equation-error estimate, and its fit per
    ``"record channel"``; nothing when the model is that linear model already or the fit fails."""
    from ..terms.registry import baseline_terms
    from .linear import equation_error
    from .oe_fit import output_error
    from .prepare import positive_mass

    terms = (*baseline_terms(), *(t for t in model.terms if t == "f0"))
    if set(model.terms) <= set(terms):
        return (), {}
    lin = TermModel(terms)
    try:
        ee = equation_error(recs, lin, None, dataclasses.replace(opts, method="equation-error"), diagnostics=False)
        fit = output_error(recs, lin, positive_mass(ee.parameters, lin, recs),
                           dataclasses.replace(opts, method="output-error", max_nfev=min(opts.max_nfev, MAX_NFEV)))
    except NlidError:
        return (), {}
    if not fit.success:
        return (), {}
    return terms, {f"{m.record} {m.channel}": m.fit_percent for m in fit.metrics}


#: Percentage points of fit by which a model may trail the linear model it extends before it has failed.
WORSE_THAN_LINEAR = 1.0


def worse_than_baseline(fit: FitResult) -> list[tuple[str, float, float]]:
    """``(record channel, fit %, the linear model's fit %)`` wherever ``fit`` trails the linear model it extends
    by more than :data:`WORSE_THAN_LINEAR` points."""
    ours = {f"{m.record} {m.channel}": m.fit_percent for m in fit.metrics}
    out = []
    for key, lin in fit.baseline_fit.items():
        mine = ours.get(key, math.nan)
        if math.isfinite(lin) and math.isfinite(mine) and mine < lin - WORSE_THAN_LINEAR:
            out.append((key, mine, lin))
    return out
