"""Structure check: every term removed and every candidate added, compared by AIC/BIC."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..estimate import FitOptions, FitResult, identify
from ..models import TermModel, parse_terms
from ..record import Record
from ..terms.registry import baseline_terms, get_term, proposable_terms
from ._common import _channel_scale, _model, _records

__all__ = ["StructureVariant", "StructureCheck", "structure_check", "CANDIDATE_TERMS", "WEAK_BIC"]


#: Candidate terms tried by :func:`structure_check` by default (the registry's proposable terms).
CANDIDATE_TERMS: tuple[str, ...] = proposable_terms()
#: Terms never removed: the baseline's inertia (without it the model cannot be simulated).
_KEPT_TERMS: tuple[str, ...] = tuple(n for n in baseline_terms() if get_term(n).inertial)
#: |ΔBIC| below which the evidence for a structure decision is called weak.
WEAK_BIC = 6.0


@dataclass(frozen=True, kw_only=True)
class StructureVariant:
    """One model structure fitted by :func:`structure_check`.

    Attributes
    ----------
    label : str
        ``"base"``, ``"without k3"`` or ``"with f0"``.
    change : str
        ``"base"``, ``"remove"`` or ``"add"``.
    term : str
        The term removed or added (empty for the base).
    terms : tuple of str
    success : bool
    message : str
    cost : float
    rss : float
        Σ of squared residuals of the fitted channel(s), each divided by the
        rms of its channel (as the estimator weighs them).
    n : int
        Residuals.
    n_params : int
        Estimated parameters, initial states included.
    aic, bic : float
        ``n·ln(RSS/n) + 2p`` and ``n·ln(RSS/n) + p·ln(n)``.
    delta_aic, delta_bic : float
        Against the base model (positive: worse).
    validation_rmse : float
        Of the first fitted channel on the validation record (NaN without one).
    fit : FitResult
    """

    label: str
    change: str
    term: str
    terms: tuple[str, ...]
    success: bool
    message: str
    cost: float
    rss: float
    n: int
    n_params: int
    aic: float
    bic: float
    delta_aic: float
    delta_bic: float
    validation_rmse: float
    fit: FitResult


@dataclass(frozen=True, kw_only=True)
class StructureCheck:
    """Each term removed and each candidate added, with a recommendation per term.

    Attributes
    ----------
    success : bool
        False when the base model could not be fitted.
    message : str
    base : StructureVariant
    variants : tuple of StructureVariant
    recommendations : tuple of str
        One line per term, e.g. ``"keep k3: removing it raises BIC by 2400"``.
    """

    success: bool
    message: str
    base: StructureVariant
    variants: tuple[StructureVariant, ...]
    recommendations: tuple[str, ...]

    def variant(self, label: str) -> StructureVariant:
        """The variant with ``label`` (``"without k3"``, ``"with f0"``, ``"base"``)."""
        for v in (self.base, *self.variants):
            if v.label == label:
                return v
        raise KeyError(f"no variant `{label}`; variants are {', '.join(v.label for v in self.variants)}")


def _rss(fit: FitResult, recs: Sequence[Record]) -> tuple[float, int]:
    chans = fit.records[0].fitted_channels if fit.records else ()
    step = fit.options.sample_step
    rss, n = 0.0, 0
    for c in chans:
        scale = _channel_scale(recs, c) if c != "f" else max(float(np.max(np.abs(r.f))) for r in recs)
        for rf in fit.records:
            sel = slice(None, None, step)
            res = (rf.predicted[c] - rf.measured[c])[sel] / scale
            rss += float(res @ res)
            n += int(res.size)
    return rss, n


def _variant(label: str, change: str, term: str, fit: FitResult, recs: Sequence[Record],
             validation: Record | None) -> StructureVariant:
    nan = math.nan
    if not fit.success or not fit.records:
        return StructureVariant(label=label, change=change, term=term, terms=fit.model.terms, success=False,
                                message=fit.message, cost=nan, rss=nan, n=0, n_params=0, aic=nan, bic=nan,
                                delta_aic=nan, delta_bic=nan, validation_rmse=nan, fit=fit)
    rss, n = _rss(fit, recs)
    p = len(fit.uncertainty.names) if fit.uncertainty is not None else len(fit.parameters.free_names)
    core = n * math.log(max(rss, 1e-300) / n)
    aic, bic = core + 2 * p, core + p * math.log(n)
    vrmse = nan
    if validation is not None:
        from ..validation import validate

        chan = fit.records[0].fitted_channels[0]
        if chan in validation.measured:
            val = validate(fit, validation, outputs=(chan,))
            if val.success:
                vrmse = val.metric(chan).rmse
    return StructureVariant(label=label, change=change, term=term, terms=fit.model.terms, success=True,
                            message=fit.message, cost=fit.cost, rss=rss, n=n, n_params=p, aic=aic, bic=bic,
                            delta_aic=0.0, delta_bic=0.0, validation_rmse=vrmse, fit=fit)


def _fit_variant(recs: Sequence[Record], model: TermModel, opts: FitOptions, base: FitResult) -> FitResult:
    """Identify a variant twice (from scratch, and by output error from the base estimate); keep the better."""
    fresh = identify(recs, model, options=opts)
    if opts.method == "equation-error" or not base.success:
        return fresh
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    start = model.default_parameters({n: v for n, v in base.values.items() if n in model.param_names},
                                     force_unit=fu, x_unit=xu)
    nested = identify(recs, model, params=start, options=dataclasses.replace(opts, method="output-error"))
    if not nested.success or not math.isfinite(nested.cost):
        return fresh
    if not fresh.success or not math.isfinite(fresh.cost) or nested.cost < fresh.cost:
        return nested
    return fresh


def structure_check(
    records: Sequence[Record] | Record,
    model_terms: TermModel | str | Sequence[str],
    options: FitOptions | None,
    *,
    add: Sequence[str] = CANDIDATE_TERMS,
    validation: Record | None = None,
) -> StructureCheck:
    """Fit the model with each term removed and each candidate term added; compare by AIC/BIC.

    Every variant is identified with :func:`~nlid_core.estimate.identify`
    (default bounds, ``options``) twice — from scratch, and by output error
    started from the base estimate (a removed term dropped, an added one at
    0) — and the lower cost is kept, so a variant is not judged by a poor
    local optimum. The baseline's mass term (``m0``) is never removed, nor a
    term without which the model has no inertia (it must stay simulable).
    Every variant keeps the base model's settings and custom terms
    (:meth:`TermModel.with_terms`).
    A term is recommended when removing it raises BIC, a candidate when
    adding it lowers BIC; |ΔBIC| below 6 is called weak evidence.

    Parameters
    ----------
    records : Record or sequence of Record
    model_terms : TermModel, str or sequence of str
        The base model (a TermModel keeps its settings and custom terms).
    options : FitOptions or None
        Estimator options for every variant.
    add : sequence of str
        Candidate library terms (those already in the model are skipped); default: the registry's
        proposable terms.
    validation : Record or None
        A record not used for fitting; each variant's RMSE on it is reported.

    Returns
    -------
    StructureCheck
    """
    recs = _records(records)
    base_model = _model(model_terms)
    opts = options or FitOptions()
    add_terms = [t for t in parse_terms(add) if t not in base_model.terms] if add else []
    base_fit = identify(recs, base_model, options=opts)
    base = _variant("base", "base", "", base_fit, recs, validation)
    variants: list[StructureVariant] = []
    for t in base_model.terms:
        rest = tuple(x for x in base_model.terms if x != t)
        if t in _KEPT_TERMS or not rest:
            continue
        mdl = base_model.with_terms(rest)
        if not mdl.can_simulate:
            continue
        variants.append(_variant(f"without {t}", "remove", t, _fit_variant(recs, mdl, opts, base_fit), recs,
                                 validation))
    for t in add_terms:
        mdl = base_model.with_terms((*base_model.terms, t))
        variants.append(_variant(f"with {t}", "add", t, _fit_variant(recs, mdl, opts, base_fit), recs, validation))
    if not base.success:
        return StructureCheck(success=False, message=f"the base model could not be fitted: {base.message}", base=base,
                              variants=tuple(variants), recommendations=())
    out_variants = []
    recs_text = []
    for v in variants:
        if v.success:
            v = dataclasses.replace(v, delta_aic=v.aic - base.aic, delta_bic=v.bic - base.bic)
        out_variants.append(v)
        val_note = ""
        if math.isfinite(v.validation_rmse) and math.isfinite(base.validation_rmse):
            val_note = f"; validation RMSE {base.validation_rmse:.3g} -> {v.validation_rmse:.3g}"
        elif validation is not None and v.success and math.isfinite(base.validation_rmse):
            val_note = "; its validation simulation failed"
        if not v.success:
            what = "keep" if v.change == "remove" else "do not add"
            verb = "without" if v.change == "remove" else "with"
            recs_text.append(f"{what} {v.term}: the model {verb} it could not be fitted ({v.message})")
            continue
        d = v.delta_bic
        weak = " (weak evidence)" if abs(d) < WEAK_BIC else ""
        if v.change == "remove":
            if d > 0:
                recs_text.append(f"keep {v.term}: removing it raises BIC by {d:.3g}{weak}{val_note}")
            else:
                recs_text.append(f"drop {v.term}: removing it lowers BIC by {-d:.3g}{weak}{val_note}")
        elif d < 0:
            recs_text.append(f"add {v.term}: adding it lowers BIC by {-d:.3g}{weak}{val_note}")
        else:
            recs_text.append(f"do not add {v.term}: adding it raises BIC by {d:.3g}{weak}{val_note}")
    failed = sum(not v.success for v in out_variants)
    msg = f"{len(out_variants)} variants of {','.join(base_model.terms)} fitted"
    if failed:
        msg += f" ({failed} failed)"
    return StructureCheck(success=True, message=msg, base=base, variants=tuple(out_variants),
                          recommendations=tuple(recs_text))
