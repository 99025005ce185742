"""Whether an identification can be trusted: a verdict over the finished fit and its validations.

An estimator that converged has only found a minimum; the verdict says whether that minimum is a model. It is
``failed`` when the estimator failed, when the model reproduces a fitted or validation record worse than
the record's own mean (fit below 0 %: a constant would do better), or worse than the linear model it extends
(fitted beside it when the residual is not white, :func:`nlid_core.estimate.minima.baseline_fit`); ``untrustworthy`` when the fit ran but a
free parameter sits at a bound, has a standard error above its value, or breaks a physical order its term
declares (:attr:`nlid_core.terms.base.TermDef.orders`, e.g. LuGre's Fs below Fc), or when output error from
another start ends in a different minimum as good as the fit (:mod:`nlid_core.estimate.minima`); ``ok``
otherwise. Each reason
comes with what to try. The CLI's exit status follows it (0 ok, 1 failed, 4 untrustworthy) and the reports
print it first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .estimate import FitResult
from .estimate.minima import rivals, worse_than_baseline
from .validation import ValidationResult

__all__ = ["FAILED", "OK", "UNTRUSTWORTHY", "Verdict", "judge", "order_violations"]

OK = "ok"
UNTRUSTWORTHY = "untrustworthy"
FAILED = "failed"
#: A relative standard error above this (100 %) leaves the sign of the estimate open.
RSE_UNTRUSTED = 1.0

_ADVICE_FIT = ("give starts near physical values (--start), fit the difficult terms in stages (e.g. friction"
               " identify for the friction curve, then --fix it), or record a richer excitation")
_ADVICE_BOUND = "widen or drop the bound if it is not physical, or drop the term if the data do not need it"
_ADVICE_RSE = "excite what this parameter does (amplitude, band, a longer record), or fix it at a known value (--fix)"
_ADVICE_START = ("compare the minima's validation fits (--validate), fix what a known quantity gives (--fix), or"
                 " extend the model where the residual shows structure")
_ADVICE_ORDER = "start the parameters in their physical order (--start) or bound them (--bounds)"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """``status`` (``ok``, ``untrustworthy`` or ``failed``), a sentence per reason and what to try."""

    status: str
    reasons: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def label(self) -> str:
        """As the reports print it: ``OK``, ``UNTRUSTWORTHY``, ``FAILED``."""
        return self.status.upper()

    @property
    def exit_status(self) -> int:
        """The CLI's: 0 ok, 1 failed, 4 untrustworthy."""
        return {OK: 0, FAILED: 1}.get(self.status, 4)

    def to_dict(self) -> dict[str, object]:
        return {"status": self.status, "reasons": list(self.reasons), "advice": list(self.advice)}


def order_violations(fit: FitResult) -> list[str]:
    """A sentence per declared physical order of the model's terms that the estimates break."""
    model, values = fit.model, fit.values
    out = []
    for spec, first in zip(model.specs, model.coefficient_index, strict=True):
        names = dict(zip(spec.param_names, model.param_names[int(first): int(first) + spec.n_params], strict=True))
        for low, high, sentence in spec.orders:
            lo, hi = values.get(names[low]), values.get(names[high])
            if lo is not None and hi is not None and lo > hi:
                out.append(f"{names[high]} = {hi:.4g} < {names[low]} = {lo:.4g}: {sentence}")
    return out


def judge(fit: FitResult, validations: Sequence[ValidationResult] = ()) -> Verdict:
    """The verdict on ``fit`` and its ``validations`` (see the module notes)."""
    failed: list[str] = []
    untrusted: list[str] = []
    advice: list[str] = []
    if not fit.success:
        failed.append(f"the estimator failed: {fit.message}")
    for m in fit.metrics:
        if math.isfinite(m.fit_percent) and m.fit_percent < 0:
            failed.append(f"{m.record} {m.channel}: fit {m.fit_percent:.1f} % — the model is further from the"
                          " record than the record's own mean")
    for v in validations:
        if not v.success:
            failed.append(f"validation on {v.record} failed: {v.message}")
        for m in v.metrics if v.success else ():
            if math.isfinite(m.fit_percent) and m.fit_percent < 0:
                failed.append(f"validation on {v.record} {m.channel}: fit {m.fit_percent:.1f} % — worse than the"
                              " record's own mean")
    for key, mine, lin in worse_than_baseline(fit):
        failed.append(f"{key}: fit {mine:.1f} %, worse than the linear model it extends"
                      f" ({','.join(fit.baseline_terms)}: fit {lin:.1f} %)")
    if failed:
        advice.append(_ADVICE_FIT)
    bound = [e for e in fit.estimates if e.vary and "at_bound" in e.flags]
    if bound:
        untrusted.extend(f"{e.name} = {e.value:.4g} sits at its bound [{e.lower:.4g}, {e.upper:.4g}]" for e in bound)
        advice.append(_ADVICE_BOUND)
    loose = [e for e in fit.estimates if e.vary and not (e.rel_stderr <= RSE_UNTRUSTED) and e not in bound]
    if loose and fit.uncertainty is not None:
        untrusted.extend(f"{e.name}: standard error {_percent(e.rel_stderr)} of its value — the data do not"
                         " determine it" for e in loose)
        advice.append(_ADVICE_RSE)
    for rival in rivals(fit):
        untrusted.append(f"output error from {rival.start} ends in another minimum as good as this one (cost"
                         f" ×{rival.fit.cost / fit.cost:.4g}): the data do not choose between them")
        if _ADVICE_START not in advice:
            advice.append(_ADVICE_START)
    orders = order_violations(fit)
    if orders:
        untrusted.extend(orders)
        advice.append(_ADVICE_ORDER)
    if failed:
        return Verdict(status=FAILED, reasons=(*failed, *untrusted), advice=tuple(advice))
    if untrusted:
        return Verdict(status=UNTRUSTWORTHY, reasons=tuple(untrusted), advice=tuple(advice))
    return Verdict(status=OK)


def _percent(rel: float) -> str:
    return f"{100 * rel:.0f} %" if math.isfinite(rel) else "infinite"
