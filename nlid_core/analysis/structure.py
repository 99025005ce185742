"""Structure check: every term removed and every candidate added, compared by AIC/BIC.

How the variants are fitted (and why it is fast)
------------------------------------------------
Every variant is nested in the base model: a term removed, or one added. So
each variant is fitted by output error started from the base estimate (the
removed term dropped, an added coefficient at 0, the base's initial states),
where its cost is at most that of the base for an added term and usually close
for a removed one. This *warm* fit

* keeps the integration of its start (the estimators' automatic RK4 substeps
  for the start values, no refinement on the way), and
* stops after at most :data:`WARM_NFEV` evaluations.

Hopeless variants (a model without its linear spring on Silverbox drifts far
from the data) otherwise spend hundreds of evaluations at ever finer
integration: that, not the number of samples, was where the time went. A fit
stopped by the cap gives an upper bound of its variant's cost; it is kept
when the decision is clear (it is marked in ``StructureVariant.start``).

A *close call* — |ΔBIC| below :data:`REFINE_BIC` after the warm fit, or a warm
fit that failed — is fitted again like any fit: from the warm estimate with
the estimator's full settings (integration refined where needed, the options'
evaluation limit) and, for a removed term, also from scratch by
:func:`~nlid_core.estimate.identify` (equation error, segmented start, output
error), keeping the lowest cost. Every variant is scored on all samples of the
estimation records. An added term is never fitted from scratch: its warm start
is the base optimum itself, so its fit can only improve on the base.

Without a ``base_fit`` (or with one that does not match: another model,
records, options or fixed parameters) the base is identified first.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..estimate import FitOptions, FitResult, identify, output_error
from ..estimate.assemble import _failed
from ..estimate.oe_problem import _substeps_for
from ..estimate.tally import numerical_warnings
from ..models import TermModel, parse_terms
from ..params import ParameterSet
from ..quantity import quantity
from ..record import Record
from ..simulate import simulate
from ..terms.registry import baseline_terms, get_term, proposable_terms
from ._common import ProgressFn, _channel_scale, _fit_x0s, _model, _records, _Steps

__all__ = ["StructureVariant", "StructureCheck", "structure_check", "structure_variants", "CANDIDATE_TERMS",
           "WEAK_BIC", "REFINE_BIC", "WARM_NFEV"]


#: Candidate terms tried by :func:`structure_check` by default (the registry's proposable terms).
CANDIDATE_TERMS: tuple[str, ...] = proposable_terms()
#: Terms never removed: the baseline's inertia (without it the model cannot be simulated).
_KEPT_TERMS: tuple[str, ...] = tuple(n for n in baseline_terms() if get_term(n).inertial)
#: |ΔBIC| below which the evidence for a structure decision is called weak.
WEAK_BIC = 6.0
#: |ΔBIC| after the warm fit below which a variant is a close call and is fitted again with full settings.
REFINE_BIC = 10 * WEAK_BIC
#: Evaluation limit of the warm fit of each variant.
WARM_NFEV = 30


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
    start : str
        How the kept fit was obtained: ``"base estimate"`` (warm fit),
        ``"base estimate, stopped after 30 evaluations"`` (warm fit at its
        evaluation limit: its cost is an upper bound), ``"refined"`` (a close
        call fitted again with full settings), ``"from scratch"``, or for the
        base ``"given fit"`` / ``"identified"``.
    seconds : float
        Wall time of this variant's fits and validation.
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
    start: str = ""
    seconds: float = 0.0


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
    seconds : float
        Wall time of the whole check.
    """

    success: bool
    message: str
    base: StructureVariant
    variants: tuple[StructureVariant, ...]
    recommendations: tuple[str, ...]
    seconds: float = 0.0

    def variant(self, label: str) -> StructureVariant:
        """The variant with ``label`` (``"without k3"``, ``"with f0"``, ``"base"``)."""
        for v in (self.base, *self.variants):
            if v.label == label:
                return v
        raise KeyError(f"no variant `{label}`; variants are {', '.join(v.label for v in self.variants)}")


def structure_variants(model_terms: TermModel | str | Sequence[str],
                       add: Sequence[str] = CANDIDATE_TERMS) -> list[tuple[str, str, str, TermModel]]:
    """The variants :func:`structure_check` fits, in order: ``(label, change, term, model)``.

    Every term of the base model removed (except its inertia, and unless the rest cannot be simulated),
    then every candidate in ``add`` that the model lacks, added.

    Parameters
    ----------
    model_terms : TermModel, str or sequence of str
        The base model.
    add : sequence of str
        Candidate library terms.

    Returns
    -------
    list of (str, str, str, TermModel)
    """
    base_model = _model(model_terms)
    out: list[tuple[str, str, str, TermModel]] = []
    for t in base_model.terms:
        rest = tuple(x for x in base_model.terms if x != t)
        if t in _KEPT_TERMS or not rest:
            continue
        mdl = base_model.with_terms(rest)
        if mdl.can_simulate:
            out.append((f"without {t}", "remove", t, mdl))
    for t in (x for x in parse_terms(add) if x not in base_model.terms) if add else ():
        out.append((f"with {t}", "add", t, base_model.with_terms((*base_model.terms, t))))
    return out


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


def _usable(fit: FitResult | None, capped_at: int | None = None) -> bool:
    """A fit that can be scored: converged, or stopped at the evaluation limit ``capped_at`` with finite cost."""
    if fit is None or not fit.records or not math.isfinite(fit.cost):
        return False
    return fit.success or (capped_at is not None and fit.nfev >= capped_at)


def _bic(fit: FitResult, recs: Sequence[Record]) -> tuple[float, float, float, int, int]:
    """AIC, BIC, RSS, residual count and parameter count of a scorable fit."""
    rss, n = _rss(fit, recs)
    if fit.uncertainty is not None:
        p = len(fit.uncertainty.names)
    else:  # free parameters and the estimated initial states
        p = len(fit.parameters.free_names) + 2 * sum(rf.x0_mode == "estimated" for rf in fit.records)
    core = n * math.log(max(rss, 1e-300) / n)
    return core + 2 * p, core + p * math.log(n), rss, n, p


def _variant(label: str, change: str, term: str, fit: FitResult, recs: Sequence[Record],
             validation: Record | None, *, usable: bool, start: str, seconds: float) -> StructureVariant:
    nan = math.nan
    if not usable:
        return StructureVariant(label=label, change=change, term=term, terms=fit.model.terms, success=False,
                                message=fit.message, cost=nan, rss=nan, n=0, n_params=0, aic=nan, bic=nan,
                                delta_aic=nan, delta_bic=nan, validation_rmse=nan, fit=fit, start=start,
                                seconds=seconds)
    t0 = time.perf_counter()
    aic, bic, rss, n, p = _bic(fit, recs)
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
                            delta_aic=0.0, delta_bic=0.0, validation_rmse=vrmse, fit=fit, start=start,
                            seconds=seconds + time.perf_counter() - t0)


def _given_base(base_fit: FitResult | None, model: TermModel, recs: Sequence[Record], opts: FitOptions) -> bool:
    """True when ``base_fit`` is a successful fit of ``model`` on ``recs`` with ``opts`` and default free parameters
    (what :func:`structure_check` would fit itself)."""
    if base_fit is None or not base_fit.success or not base_fit.records or base_fit.method == "equation-error":
        return False
    if base_fit.model.terms != model.terms or base_fit.options != opts or len(base_fit.records) != len(recs):
        return False
    if any(r.n != rf.t.size for r, rf in zip(recs, base_fit.records, strict=True)):
        return False
    defaults = model.default_parameters(force_unit=recs[0].unit("f"), x_unit=recs[0].unit("x"))
    return base_fit.parameters.free_names == defaults.free_names


def _lowest(fits: Sequence[tuple[FitResult, str]]) -> tuple[FitResult, str] | None:
    ok = [(f, s) for f, s in fits if _usable(f)]
    return min(ok, key=lambda fs: fs[0].cost) if ok else None


def _stays_at_bound(recs: Sequence[Record], model: TermModel, start: ParameterSet, base_fit: FitResult,
                    opts: FitOptions, nsub: int) -> bool:
    """True when every new coefficient of an added term starts on a bound and the cost rises as it leaves it.

    At the base optimum the other parameters are stationary, so then the start satisfies the first-order
    (KKT) conditions of the extended fit with a strictly positive multiplier: it is that fit's local optimum,
    the variant's cost is the base's, and no simulation away from the start is needed (which matters for
    terms that make the model stiff, e.g. smoothed Coulomb friction at a record's velocities).
    """
    new = [n for n in start.free_names if n not in base_fit.parameters.names]
    if not new or not base_fit.success:
        return False
    at_lower = {n: start[n].value == start[n].lower for n in new}
    at_upper = {n: start[n].value == start[n].upper for n in new}
    if not all(at_lower[n] or at_upper[n] for n in new):
        return False
    cols = [model.param_names.index(n) for n in new]
    grad = np.zeros(len(new))
    norm_j = np.zeros(len(new))
    norm_r = 0.0
    for r, rf in zip(recs, base_fit.records, strict=True):
        sim = simulate(model, r.t, r.f, start.values, tuple(map(float, rf.x0)), input_hold=opts.input_hold,
                       substeps=nsub, sensitivities=True, outputs=opts.outputs, initial_state_sensitivities=False)
        if not sim.success or sim.sens is None:
            return False
        for c in opts.outputs:
            w = float(opts.channel_weights.get(c, 1.0)) / _channel_scale(recs, c)
            res = w * (sim.output(c) - np.asarray(r.channel(c)))[:: opts.sample_step]
            jac = w * sim.sens[c][:: opts.sample_step][:, cols]
            grad += jac.T @ res
            norm_j += np.sum(jac * jac, axis=0)
            norm_r += float(res @ res)
    if not np.all(np.isfinite(grad)):
        return False
    tol = 1e-6 * np.sqrt(norm_j * norm_r)  # the cosine of the new column with the residual must clear 1e-6
    return all((grad[k] > tol[k]) if at_lower[n] else (grad[k] < -tol[k]) for k, n in enumerate(new))


def _fit_variant(recs: Sequence[Record], model: TermModel, change: str, opts: FitOptions, base_fit: FitResult,
                 base_bic: float, progress: ProgressFn | None) -> tuple[FitResult, bool, str]:
    """Fit one variant (see the module notes): the fit kept, whether it can be scored, and how it was started."""
    if opts.method == "equation-error":  # one linear solve: nothing to warm-start
        fit = identify(recs, model, options=opts, progress=progress)
        return fit, _usable(fit), "from scratch"
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    start = model.default_parameters({n: v for n, v in base_fit.values.items() if n in model.param_names},
                                     force_unit=fu, x_unit=xu)
    oe = dataclasses.replace(opts, method="output-error")
    x0s = _fit_x0s(base_fit)
    cap = min(WARM_NFEV, opts.max_nfev)
    nsub = opts.substeps or max(_substeps_for(r, model, start.values, oe) for r in recs)
    if change == "add":
        if progress is not None:
            progress("structure", 0.0, "gradient at the base estimate")
        with numerical_warnings():
            stays = _stays_at_bound(recs, model, start, base_fit, oe, nsub)
        if stays:
            kept = dataclasses.replace(
                _failed(model, start, recs, oe, "", time.perf_counter()), success=True, cost=base_fit.cost,
                records=base_fit.records, metrics=base_fit.metrics, uncertainty=None,
                message="the base estimate is this model's optimum: the new coefficient stays at its bound")
            return kept, True, "base estimate (the new coefficient stays at its bound)"
    with numerical_warnings():
        warm = output_error(recs, model, start, dataclasses.replace(oe, substeps=nsub, max_nfev=cap), x0=x0s,
                            progress=progress)
    if _usable(warm, cap):
        bic = _bic(warm, recs)[1]
        if abs(bic - base_bic) >= REFINE_BIC:
            how = "base estimate" if warm.success else f"base estimate, stopped after {cap} evaluations"
            return warm, True, how
    # a close call, or the warm fit failed: fit again with the estimator's full settings
    tries: list[tuple[FitResult, str]] = []
    again = warm.parameters if _usable(warm, cap) else start
    again_x0 = [tuple(map(float, rf.x0)) for rf in warm.records] if _usable(warm, cap) else x0s
    with numerical_warnings():
        tries.append((output_error(recs, model, again, oe, x0=again_x0, progress=progress),  # type: ignore[arg-type]
                      "refined"))
    if change == "remove":
        tries.append((identify(recs, model, options=opts, progress=progress), "from scratch"))
    best = _lowest(tries)
    if best is not None:
        return best[0], True, best[1]
    if _usable(warm, cap):
        return warm, True, f"base estimate, stopped after {cap} evaluations"
    return tries[-1][0], False, tries[-1][1]


def structure_check(
    records: Sequence[Record] | Record,
    model_terms: TermModel | str | Sequence[str],
    options: FitOptions | None,
    *,
    add: Sequence[str] = CANDIDATE_TERMS,
    validation: Record | None = None,
    base_fit: FitResult | None = None,
    progress: ProgressFn | None = None,
) -> StructureCheck:
    """Fit the model with each term removed and each candidate term added; compare by AIC/BIC.

    Each variant is fitted by output error from the base estimate (see the
    module notes: a warm fit with an evaluation limit; close calls, within
    :data:`REFINE_BIC`, fitted again with full settings and, for a removed
    term, also from scratch; the lowest cost kept). The baseline's mass term
    (``m0``) is never removed, nor a term without which the model has no
    inertia (it must stay simulable). Every variant keeps the base model's
    settings and custom terms (:meth:`TermModel.with_terms`). A term is
    recommended when removing it raises BIC, a candidate when adding it lowers
    BIC; |ΔBIC| below 6 is called weak evidence.

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
    base_fit : FitResult or None
        The base model's fit on ``records`` with ``options`` (e.g. the run being studied); identified here
        when None or when it does not match (another model, records or options, or fixed parameters).
    progress : callable or None
        ``progress(stage, fraction, message)``, e.g. ``("structure", 0.43, "refit without k3 (3 of 7):
        evaluation 4")``.

    Returns
    -------
    StructureCheck
    """
    t_start = time.perf_counter()
    recs = _records(records)
    base_model = _model(model_terms)
    opts = options or FitOptions()
    plan = structure_variants(base_model, add)
    steps = _Steps(progress, "structure", len(plan) + 1)
    t0 = time.perf_counter()
    if _given_base(base_fit, base_model, recs, opts):
        assert base_fit is not None
        steps.step(0, "score the base model")
        base_res, how = base_fit, "given fit"
    else:
        base_res = identify(recs, base_model, options=opts,
                            progress=steps.step(0, f"fit the base model {','.join(base_model.terms)}"))
        how = "identified"
    base = _variant("base", "base", "", base_res, recs, validation, usable=_usable(base_res), start=how,
                    seconds=time.perf_counter() - t0)
    if not base.success:
        steps.done("the base model could not be fitted")
        return StructureCheck(success=False, message=f"the base model could not be fitted: {base.message}", base=base,
                              variants=(), recommendations=(), seconds=time.perf_counter() - t_start)
    out_variants: list[StructureVariant] = []
    recs_text: list[str] = []
    for i, (label, change, term, mdl) in enumerate(plan):
        t0 = time.perf_counter()
        fit, usable, how = _fit_variant(recs, mdl, change, opts, base_res, base.bic,
                                        steps.step(i + 1, f"refit {label}"))
        v = _variant(label, change, term, fit, recs, validation, usable=usable, start=how,
                     seconds=time.perf_counter() - t0)
        if v.success:
            v = dataclasses.replace(v, delta_aic=v.aic - base.aic, delta_bic=v.bic - base.bic)
        out_variants.append(v)
        unit = validation.unit(base_res.records[0].fitted_channels[0]) if validation is not None and base_res.records else ""
        recs_text.append(_recommendation(v, base, validation is not None, unit))
    steps.done(f"{len(out_variants)} variants fitted")
    failed = sum(not v.success for v in out_variants)
    msg = f"{len(out_variants)} variants of {','.join(base_model.terms)} fitted"
    if failed:
        msg += f" ({failed} failed)"
    return StructureCheck(success=True, message=msg, base=base, variants=tuple(out_variants),
                          recommendations=tuple(recs_text), seconds=time.perf_counter() - t_start)


def _recommendation(v: StructureVariant, base: StructureVariant, with_validation: bool, unit: str = "") -> str:
    val_note = ""
    if math.isfinite(v.validation_rmse) and math.isfinite(base.validation_rmse):
        val_note = f"; validation RMSE {quantity(base.validation_rmse, unit)} -> {quantity(v.validation_rmse, unit)}"
    elif with_validation and v.success and math.isfinite(base.validation_rmse):
        val_note = "; its validation simulation failed"
    if not v.success:
        what = "keep" if v.change == "remove" else "do not add"
        verb = "without" if v.change == "remove" else "with"
        return f"{what} {v.term}: the model {verb} it could not be fitted ({v.message})"
    d = v.delta_bic
    weak = " (weak evidence)" if abs(d) < WEAK_BIC else ""
    if v.change == "remove":
        if d > 0:
            return f"keep {v.term}: removing it raises BIC by {d:.3g}{weak}{val_note}"
        return f"drop {v.term}: removing it lowers BIC by {-d:.3g}{weak}{val_note}"
    if d < 0:
        return f"add {v.term}: adding it lowers BIC by {-d:.3g}{weak}{val_note}"
    return f"do not add {v.term}: adding it raises BIC by {d:.3g}{weak}{val_note}"
