"""``identify``: the equation-error, output-error and two-stage methods behind one entry point."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.linalg import svd
from scipy.optimize import lsq_linear

from ..errors import NlidError
from ..metrics import whiteness_test
from ..models import TermModel
from ..params import ParameterSet
from ..record import CHANNELS, Record
from ..simulate import warm_up
from ._threads import with_single_blas_thread
from .hysteretic_start import grid_parameters, hysteretic_start
from .initial_check import check_initial_states
from .minima import baseline_fit, explore_minima, wanted, worse_than_baseline
from . import robust_start
from .oe_fit import PoorStart, output_error
from .options import FitOptions, ProgressFn
from .prepare import _check_records, _params_for, positive_mass
from .redundancy import flag_redundancies
from .results import FitResult
from .robust_start import _robust_start
from .tally import numerical_warnings

__all__ = ["identify"]



@with_single_blas_thread
def identify(
    records: Sequence[Record] | Record,
    terms: TermModel | str | Sequence[str],
    *,
    params: ParameterSet | None = None,
    options: FitOptions | None = None,
    progress: ProgressFn | None = None,
    explore: bool = False,
) -> FitResult:
    """Identify the model from one or more records (the main entry point).

    Parameters
    ----------
    records : Record or sequence of Record
    terms : TermModel, str or sequence of str
        Model or term names (``"m0,c1,k1,k3"``).
    params : ParameterSet or None
        Bounds, fixed values, units and (for ``method="output-error"``) start
        values; defaults from the term library.
    options : FitOptions or None
        Default: two-stage, displacement output, initial states ``"auto"``
        (at rest when a record starts at rest, else estimated). Without
        given start values, state-carrying terms that declare a start grid
        (Bouc-Wen) get theirs from :mod:`.hysteretic_start` after the
        equation-error stage (stage ``"hysteretic-start"``).
    progress : callable or None
        ``progress(stage, fraction, message)``.
    explore : bool
        After an output-error fit whose residual is not white, also fit the linear model it extends and run
        output error from other starts (:mod:`.minima`; what ``identify`` on the command line and the Identify
        page do, for a user's final fit; other callers that fit on the way to something else leave it off).

    Returns
    -------
    FitResult
        With ``timing`` = compile_s, equation_error_s, output_error_s, total_s
        (the start search of state-carrying terms counts as output error).
        Parameter groups a term declares redundant (Bouc-Wen's β, γ, δ) are
        flagged ``unidentifiable`` and explained in words when all are free
        (:mod:`.redundancy`).
        Floating-point problems met on the way (numpy overflow, invalid
        values) are not printed but listed, counted, in ``warnings``.
    """
    with numerical_warnings() as tally:
        fit = flag_redundancies(_identify(records, terms, params, options, progress, explore))
    if not tally:
        return fit
    return dataclasses.replace(fit, warnings=fit.warnings + tally.lines())


def _warm_linear_algebra() -> float:
    """Seconds spent on a first tiny call of each LAPACK routine the estimators use.

    The first call into numpy's and scipy's BLAS/LAPACK in a process allocates
    their buffers (milliseconds, once); like the simulator's compilation it is
    counted in ``compile_s``, not in a stage. Later calls return 0 at once.
    """
    if _WARM_LAPACK:
        return 0.0
    t0 = time.perf_counter()
    a = np.eye(3) + 0.1
    np.linalg.lstsq(a, np.ones(3), rcond=None)
    np.linalg.cholesky(a.T @ a)
    svd(a, full_matrices=False)
    lsq_linear(a, np.ones(3), bounds=(np.zeros(3), np.full(3, np.inf)), method="bvls", lsmr_tol=None)
    tall = np.random.default_rng(0).normal(size=(8192, 12))  # BLAS/LAPACK set up their buffers for tall problems
    tall.T @ tall
    svd(tall, full_matrices=False)
    np.linalg.lstsq(tall, tall[:, 0], rcond=None)
    np.linalg.qr(tall)
    _WARM_LAPACK.append(True)
    return time.perf_counter() - t0


_WARM_LAPACK: list[bool] = []  # non-empty once this process has made its first LAPACK calls


def _warm_equation_error(model: TermModel, recs: Sequence[Record]) -> float:
    """Seconds for a first two-stage fit of 256 samples of the first record, once per process and model:
    the first call of every routine on the path (like the simulator's compilation, counted in
    ``compile_s``); nothing of it is kept."""
    from . import equation_error
    from .oe_fit import output_error

    key = (model, recs[0].unit("f"), recs[0].unit("x"))
    if key in _WARM:
        return 0.0
    t0 = time.perf_counter()
    rec = recs[0]
    if rec.n > 512 and rec.v is not None and rec.a is not None and model.can_simulate:
        part = rec.slice(0, 256)
        # numba compiles (and loads from its cache) one kernel per array layout, read-only arrays included:
        # give the slice the record's own flags, or the record's first simulation loads another version
        for c in CHANNELS:
            whole, piece = getattr(rec, c), getattr(part, c)
            if whole is not None and piece is not None:
                piece.flags.writeable = bool(whole.flags.writeable)
        try:
            with np.errstate(all="ignore"):
                ee = equation_error(part, model, diagnostics=False)
                start = positive_mass(ee.parameters, model, part)
                _robust_start((part,), model, start, FitOptions(), None)  # its check simulates without sensitivities
                output_error(part, model, start, FitOptions(max_nfev=2), start_nrmse_limit=math.inf)
        except (ValueError, ArithmeticError, RuntimeError):  # a short slice may carry too little: the stages report
            pass
    # the whiteness test that chooses the covariance: its FFT of the record's length and the chi-square tail,
    # first called here rather than inside the timed fit
    whiteness_test(np.sin(np.arange(rec.n, dtype=np.float64)))
    if len(_WARM) < 64:
        _WARM.add(key)
    return time.perf_counter() - t0


_WARM: set[tuple[object, str, str]] = set()


def _identify(
    records: Sequence[Record] | Record,
    terms: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    progress: ProgressFn | None,
    explore: bool = False,
) -> FitResult:
    # equation_error is looked up on the package at call time, so a wrapper installed there is the one used
    from . import equation_error

    opts = options or FitOptions()
    model = terms if isinstance(terms, TermModel) else TermModel(terms)
    recs: Sequence[Record] = _check_records(records)
    compile_s = warm_up() + _warm_linear_algebra() + model.compile() + _warm_equation_error(model, recs)
    t_start = time.perf_counter()
    spent = {"ee": 0.0, "oe": 0.0}
    stages: dict[str, Mapping[str, float]] = {}
    warns: list[str] = []
    if progress:
        progress("equation-error", 0.0, "equation error")
    if opts.method == "equation-error":
        final = equation_error(recs, model, params, opts)
        spent["ee"] = final.timing["equation_error_s"]
    else:
        model.require_simulable()
        user_start = params is not None and opts.method == "output-error"
        start_params, recs = _output_error_start(recs, model, _params_for(model, recs, params), opts, progress,
                                                 user_start, spent, stages, warns)
        if progress:
            progress("output-error", 0.0, "output error")
        final, start_params = _output_error_from(recs, model, start_params, opts, progress, user_start, spent, stages,
                                                 warns)
        if not final.success and final.nfev == 0:
            final = _unsimulable_start(recs, model, start_params, opts, progress, user_start, final, spent, stages,
                                       warns)
        stages["output-error"] = final.values
        if final.success:
            checked, alt = check_initial_states(recs, model, final, opts, progress)
            warns.extend(checked)
            if alt is not None:
                stages["measured-initial-state"] = alt
        if explore and wanted(final):
            t_min = time.perf_counter()
            terms, fits = baseline_fit(recs, model, opts)
            final = dataclasses.replace(final, baseline_terms=terms, baseline_fit=fits)
            if not worse_than_baseline(final):  # a fit the linear model beats has failed: no other starts
                final = dataclasses.replace(final, minima=explore_minima(recs, model, final, opts, progress,
                                                                         budget_s=max(10.0, spent["oe"])))
            spent["minima"] = time.perf_counter() - t_min
            distinct = [m for m in final.minima if m.distinct]
            if distinct:
                warns.append(f"output error from {len(final.minima)} other starts reached {len(distinct)} other"
                             " minima (listed in the report): the estimate depends on where the fit starts, and its"
                             " intervals describe one minimum only")
    ee_s, oe_s = spent["ee"], spent["oe"]
    total = time.perf_counter() - t_start
    if progress:
        progress("done", 1.0, final.message)
    timing = {"compile_s": compile_s, "equation_error_s": ee_s, "output_error_s": oe_s, "total_s": total}
    if "minima" in spent:
        timing = {**timing, "other_starts_s": spent["minima"]}
    return FitResult(
        success=final.success,
        message=final.message,
        method=opts.method,
        model=final.model,
        parameters=final.parameters,
        estimates=final.estimates,
        uncertainty=final.uncertainty,
        weak_directions=final.weak_directions,
        correlated_pairs=final.correlated_pairs,
        metrics=final.metrics,
        records=final.records,
        cost=final.cost,
        nfev=final.nfev,
        timing=timing,
        stages=stages or dict(final.stages),
        warnings=tuple(warns) + final.warnings,
        options=opts,
        minima=final.minima,
        baseline_terms=final.baseline_terms,
        baseline_fit=final.baseline_fit,
    )


def _output_error_start(recs: Sequence[Record], model: TermModel, start_params: ParameterSet, opts: FitOptions,
                        progress: ProgressFn | None, user_start: bool, spent: dict[str, float],
                        stages: dict[str, Mapping[str, float]], warns: list[str]
                        ) -> tuple[ParameterSet, Sequence[Record]]:
    """The start of output error: the given values (method output-error with parameters), else the equation-error
    estimate, with the hysteretic search for the starts of state-carrying terms; the records (with derived
    velocity after that search)."""
    from . import equation_error  # looked up on the package at call time: a wrapper installed there is used

    if user_start:
        return start_params, recs
    ee = equation_error(recs, model, start_params, opts, diagnostics=False)  # only its values are used
    spent["ee"] = ee.timing["equation_error_s"]
    stages["equation-error"] = ee.values
    start_params = positive_mass(ee.parameters, model, recs)  # the bounded solve may put m0 on its bound 0
    if grid_parameters(model, start_params):  # state-carrying terms at neutral defaults: search their starts
        if progress:
            progress("hysteretic-start", 0.0, "start values of the state-carrying terms")
        found = hysteretic_start(recs, model, start_params, opts)
        spent["start"] = found.seconds
        stages["hysteretic-start"] = found.parameters.as_dict()
        start_params = found.parameters
        recs = found.records  # with derived velocity: the simulators' substeps follow its range
        if not found.success:
            warns.append(f"start values of the state-carrying terms: {found.message}")
    return start_params, recs


def _output_error_from(recs: Sequence[Record], model: TermModel, start_params: ParameterSet, opts: FitOptions,
                       progress: ProgressFn | None, user_start: bool, spent: dict[str, float],
                       stages: dict[str, Mapping[str, float]], warns: list[str]) -> tuple[FitResult, ParameterSet]:
    """Output error from ``start_params``; the fit's first simulation checks its start, and one that does not
    simulate well enough gets the segmented start first (see :func:`_robust_start`). Returns the fit and the
    start it used."""
    seg_s = 0.0
    try:
        final = output_error(recs, model, start_params, opts, progress=progress,
                             start_nrmse_limit=robust_start.GOOD_START_NRMSE)
    except PoorStart as poor:
        seg_params, seg_note, seg_s = _robust_start(
            recs, model, start_params, opts, progress, before=poor.nrmse,
            start_label="the given start values" if user_start else "the equation-error estimate")
        seg_s += poor.seconds
        if seg_params is not start_params:
            stages["segmented-output-error"] = seg_params.as_dict()
            start_params = seg_params
        if seg_note:
            warns.append(seg_note)
        final = output_error(recs, model, start_params, opts, progress=progress)
    spent["oe"] = final.timing["output_error_s"] + seg_s + spent.get("start", 0.0)
    return final, start_params


def _unsimulable_start(recs: Sequence[Record], model: TermModel, start_params: ParameterSet, opts: FitOptions,
                       progress: ProgressFn | None, user_start: bool, final: FitResult, spent: dict[str, float],
                       stages: dict[str, Mapping[str, float]], warns: list[str]) -> FitResult:
    """A start that could not be simulated at all: from the equation-error estimate's linear part (an automatic
    start), or from the automatic initial guess (a given start); ``final`` when that does not work either."""
    from . import equation_error

    if not user_start:
        # the equation-error start diverges: retry from its linear part
        lin = {n: 0.0 for n in _nonlinear_coefficients(model) if n in start_params.names and start_params[n].vary}
        if lin:
            retry = output_error(recs, model, start_params.with_values(lin, clip=True), opts, progress=progress)
            spent["oe"] += retry.timing["output_error_s"]
            if retry.success:
                warns.append(f"the equation-error start could not be simulated ({final.message}); "
                             "output error was started from its linear part instead")
                return retry
        return final
    if not model.linear_mask.any():
        return final
    # the given start cannot be simulated: take the automatic initial guess (the equation-error estimate,
    # with the given bounds and fixed values) rather than stop
    try:
        guess = equation_error(recs, model, start_params, opts, diagnostics=False)
    except NlidError:
        return final
    if not guess.success:
        return final
    spent["ee"] += guess.timing["equation_error_s"]
    retry = output_error(recs, model, positive_mass(guess.parameters, model, recs), opts, progress=progress)
    spent["oe"] += retry.timing["output_error_s"]
    if not retry.success:
        return final
    stages["equation-error"] = guess.values
    detail = final.message.removeprefix("the start values cannot be simulated: ")
    warns.append(f"the given start values could not be simulated ({detail}); output error was started from the"
                 " automatic initial guess (the equation-error estimate) instead")
    return retry


def _nonlinear_coefficients(model: TermModel) -> tuple[str, ...]:
    """Linear coefficients of the terms outside the linear baseline (mass, viscous damping, stiffness):
    set to zero for a second attempt when the equation-error start diverges."""
    from ..terms.registry import baseline_terms

    base = set(baseline_terms())
    return tuple(n for n, term, lin in zip(model.param_names, model.term_of_param, model.linear_mask, strict=True)
                 if lin and term not in base)
