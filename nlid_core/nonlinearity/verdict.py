"""Plain-language findings on the nonlinearity of a record, each backed by a number.

:func:`evidence_summary` reads the best linear approximation (distortion against noise, detection
lines), a harmonic analysis, the output-error term check and the equation-error model comparison
against the thresholds of :mod:`.thresholds`. Where the quick equation-error test and the
output-error check disagree it says which to trust: equation error puts derived, noisy velocity and
acceleration into the regressors and is biased towards the linear model; output error simulates
the record and is the reference.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelSpecError, NlidError
from ..estimate import ProgressFn
from ..record import Record
from ..terms.registry import get_term
from ._args import _check_record, _with_va
from .baseline import cubic_stiffness
from .bla import BLA, bla, bla_findings
from .comparison import LinearCheck, ModelCheck, linear_fit_check
from .harmonics import HarmonicAnalysis, harmonic_distortion
from .hysteresis import HysteresisEvidence, hysteresis_evidence
from .output_check import OutputErrorCheck, _and, output_error_check
from .restoring import RestoringSlices, restoring_force, restoring_slices
from .thresholds import (
    _LINEAR_TERMS,
    DEFAULT_CANDIDATES,
    FORCE_HARMONIC_DB,
    FRICTION_TERM,
    OFFSET_TERM,
    HARMONIC_DB,
    IMPROVEMENT_RATIO,
    LINEAR_ENOUGH,
    MIN_IMPROVEMENT,
    OE_IMPROVEMENT,
)

__all__ = ["evidence_summary", "term_check"]


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def _pct(x: float) -> str:
    v = 100 * x
    if v < 0.01:
        return "< 0.01 %"
    return f"{v:.2g} %" if v < 10 else f"{v:.0f} %"


def _harmonic_findings(h: HarmonicAnalysis) -> list[str]:
    out: list[str] = []
    if h.n_valid == 0:
        return [
            "the force is not a single tone in any window (broadband or too few cycles):"
            " no harmonic analysis; rely on the model comparison"
        ]
    peaks = {k: h.sustained_peak(k) for k in h.harmonics}
    fpeaks = {k: h.sustained_peak(k, force=True) for k in h.harmonics}
    found = {k: p for k, p in peaks.items() if math.isfinite(p[0]) and p[0] > HARMONIC_DB}
    odd = {k: p for k, p in found.items() if k % 2 == 1}
    even = {k: p for k, p in found.items() if k % 2 == 0}
    ch = h.channel
    if odd:
        k = 3 if 3 in odd else max(odd, key=lambda j: odd[j][0])
        lev, _, f0 = odd[k]
        out.append(
            f"{_ordinal(k)} harmonic of {ch} reaches {lev:.0f} dB of the fundamental (at {f0:.3g} Hz):"
            " stiffness or damping nonlinearity likely (cubic stiffness k3, quadratic damping c2, friction)"
        )
    if even:
        k = 2 if 2 in even else max(even, key=lambda j: even[j][0])
        lev, _, f0 = even[k]
        out.append(
            f"even harmonics ({_ordinal(k)} at {lev:.0f} dB, {f0:.3g} Hz):"
            " asymmetric stiffness (k2) or an offset likely"
        )
    distorted = {k: p for k, p in fpeaks.items() if math.isfinite(p[0]) and p[0] > FORCE_HARMONIC_DB}
    if distorted:
        k = max(distorted, key=lambda j: distorted[j][0])
        out.append(
            f"the force itself has a {_ordinal(k)} harmonic at {distorted[k][0]:.0f} dB: harmonics of {ch}"
            " may come from the exciter rather than from the structure"
        )
    hidden = {
        k: p
        for k in h.harmonics
        if k not in found
        for p in [h.sustained_peak(k, skip_coincident=False)]
        if math.isfinite(p[0]) and p[0] > HARMONIC_DB
    }
    if hidden:
        k = max(hidden, key=lambda j: hidden[j][0])
        col = h.harmonics.index(k)
        rings = h.ringing_hz[np.isfinite(h.ringing_hz)]
        near = f" near {float(np.median(rings)):.3g} Hz" if rings.size and h.coincident[:, col].any() else ""
        out.append(
            f"the {_ordinal(k)} harmonic of {ch} reaches {hidden[k][0]:.0f} dB only where it crosses a free"
            f" vibration{near} (start transient or ringing after the resonance): not counted as evidence"
        )
    if not found:
        finite = {k: p for k, p in peaks.items() if math.isfinite(p[0])}
        if finite:
            k = max(finite, key=lambda j: finite[j][0])
            out.append(
                f"no harmonic above {HARMONIC_DB:.0f} dB (highest: {_ordinal(k)} at {finite[k][0]:.0f} dB):"
                " the record looks linear at this level"
            )
    return out


def _ee_helpful(chk: LinearCheck) -> list[tuple[str, ModelCheck]]:
    lin = chk.linear.nrmse
    out = []
    for c in chk.candidates:
        term = next(t for t in c.terms if t not in _LINEAR_TERMS)
        if c.nrmse <= (1 - IMPROVEMENT_RATIO) * lin and lin - c.nrmse >= MIN_IMPROVEMENT:
            out.append((term, c))
    return out


def _spring_kind(name: str, k: float, unit: str, label: str) -> str:
    kind = "hardening" if k > 0 else "softening"
    return f"{kind} spring ({name} = {k:.3g} {unit} {'>' if k > 0 else '<'} 0 in the {label} fit)"


def _model_findings(chk: LinearCheck, oe: OutputErrorCheck | None, derived: bool) -> list[str]:
    out: list[str] = []
    lin = chk.linear.nrmse
    helpful = _ee_helpful(chk)
    tried = [next(t for t in c.terms if t not in _LINEAR_TERMS) for c in chk.candidates]
    oe_ok = oe is not None and oe.success
    needed = set(oe.selected) if oe is not None and oe.success else set()
    how = ("equation error (force residual with velocity and acceleration derived from x)" if derived
           else "equation error (force residual)")
    for term, c in helpful:
        note = ""
        if oe_ok and term in oe.candidates and term not in needed:  # type: ignore[union-attr]
            note = ("; output error does not confirm it (trust the output-error check: it simulates the"
                    " record instead of using derived signals)")
        out.append(f"{how}: adding {term} lowers the linear model's force error from {_pct(lin)} to"
                   f" {_pct(c.nrmse)}{note}")
    if not helpful and tried:
        best = min((c.nrmse for c in chk.candidates), default=lin)
        if needed:
            out.append(
                f"{how}: adding {', '.join(tried)} changes the linear model's force error little ({_pct(lin)} ->"
                f" {_pct(best)} at best), but that test is biased towards the linear model when velocity and"
                " acceleration are noisy (derived, errors in variables) and is dominated by their noise; the"
                f" output-error check above is the reference: {' and '.join(oe.selected)} needed"  # type: ignore[union-attr]
            )
        elif lin < LINEAR_ENOUGH:
            out.append(f"the linear model {', '.join(_LINEAR_TERMS)} explains the force to {_pct(lin)} (NRMSE)")
        else:
            out.append(
                f"{how}: adding {', '.join(tried)} changes the linear model's force error little ({_pct(lin)} ->"
                f" {_pct(best)} at best)"
            )
    cubic = cubic_stiffness()
    if cubic is not None and cubic in needed and oe is not None:
        step = next(s for s in oe.path if s.added == cubic)
        name = get_term(cubic).param_names[0]
        if name in step.values:
            out.append(f"the cubic stiffness bends the force–displacement curve: "
                       + _spring_kind(name, float(step.values[name]), step.units.get(name, ""),
                                      f"output-error {step.label}"))
    elif cubic is not None and not oe_ok:
        for term, c in helpful:
            if term == cubic:
                name = get_term(term).param_names[0]
                out.append("force–displacement loop bends: "
                           + _spring_kind(name, float(c.values[name]), c.units[name], c.label))
    return out


def _hysteresis(rec: Record, hysteresis: HysteresisEvidence | None) -> HysteresisEvidence | None:
    if hysteresis is None:
        if rec.n_dof != 1:
            return None
        try:
            hysteresis = hysteresis_evidence(rec)
        except NlidError:  # too short or degenerate for loops: no finding, as for any other missing evidence
            return None
    return hysteresis


def _hysteresis_findings(hysteresis: HysteresisEvidence | None, oe: OutputErrorCheck | None,
                         force_unit: str) -> tuple[str, ...]:
    if hysteresis is None:
        return ()
    out = list(hysteresis.findings)
    if hysteresis.dead_band and oe is not None and oe.success and FRICTION_TERM in oe.candidates:
        if FRICTION_TERM not in oe.selected:
            gain = oe.gain(FRICTION_TERM)
            change = f"{100 * gain:.0f} %" if math.isfinite(gain) else "nothing"
            # the loops' friction finding is replaced by the reconciled one
            out = [f for f in out if not f.startswith("friction:")]
            out.append(f"friction-like step: the restoring force steps by {hysteresis.step:.3g} {force_unit} at"
                       f" velocity reversals, but output error does not confirm friction (adding {FRICTION_TERM}"
                       f" lowers the RMSE by {change}, less than {100 * OE_IMPROVEMENT:.0f} %): the step more likely"
                       " comes from the derived acceleration or the mass estimate; trust output error")
    return tuple(out)


def _broadband(rec: Record, h: HarmonicAnalysis, b: BLA | None) -> tuple[BLA | None, list[str]]:
    """The BLA findings: always for a periodic record; for a random one only when it is not tonal."""
    if b is None:
        try:
            b = bla(rec)
        except NlidError:
            return None, []
    if b.layout.mode == "segments" and h.n_valid > 0:
        return b, []
    return b, list(bla_findings(b))


def _headline(b: BLA | None, oe: OutputErrorCheck | None) -> tuple[str, ...]:
    """One line first: the conclusion of the two references (output error, distortion against noise)."""
    parts = []
    nonlinear = b.nonlinear if b is not None and b.layout.mode == "periodic" else None
    if nonlinear:
        parts.append(f"nonlinear distortion {b.stats()['total_over_noise_db']:.0f} dB above the noise")  # type: ignore[union-attr]
    checked = oe if oe is not None and oe.success else None
    if checked is not None and checked.nonlinear:
        parts.append(f"output error needs {_and(checked.nonlinear)}")
    offsets = [t for t in checked.offsets if t in checked.selected] if checked is not None else []
    tail = f"; the record also carries an offset: add {_and(offsets)}" if offsets else ""
    if checked is not None and checked.selected:
        tail += f" (model to fit: {', '.join(checked.path[-1].terms)})"
    if parts:
        return ("verdict: nonlinear — " + "; ".join(parts) + tail,)
    if nonlinear is False and checked is not None:
        return ("verdict: linear at this level — no distortion above the noise and no nonlinear term needed by"
                " output error" + tail,)
    if checked is not None:
        return ("verdict: no nonlinear term needed by output error at this level" + tail,)
    return ()


def _slices(rec: Record, slices: RestoringSlices | None) -> RestoringSlices | None:
    if slices is not None or rec.n_dof != 1:
        return slices
    try:
        return restoring_slices(restoring_force(_with_va(rec)))
    except NlidError:
        return None


def _output_check(rec: Record, oe: OutputErrorCheck | None, run: bool, friction: bool,
                  progress: ProgressFn | None) -> OutputErrorCheck | None:
    if oe is not None or not run or rec.n_dof != 1 or not rec.has("x") or rec.is_derived("x"):
        return oe
    try:
        return output_error_check(rec, candidates=DEFAULT_CANDIDATES, late=(FRICTION_TERM,) if friction else (),
                                  offsets=(OFFSET_TERM,),
                                  progress=progress)
    except NlidError:
        return None


def term_check(rec: Record, *, hysteresis: HysteresisEvidence | None = None,
               progress: ProgressFn | None = None) -> OutputErrorCheck | None:
    """The output-error term check the verdict uses: the evidence terms, then the force offset, plus the
    friction term (tried late, on a short segment) when the loops show a force step at reversals.

    Parameters
    ----------
    rec : Record
    hysteresis : HysteresisEvidence or None
        Loop evidence of ``rec`` already computed (default: computed here).
    progress : callable or None
        ``progress(stage, fraction, message)``.

    Returns
    -------
    OutputErrorCheck or None
        None for a record it cannot run on (several DOFs, no measured displacement, a failure).
    """
    rec = _check_record(rec)
    hyst = _hysteresis(rec, hysteresis)
    return _output_check(rec, None, True, bool(hyst is not None and hyst.dead_band), progress)


def evidence_summary(
    rec: Record, *, harmonics: HarmonicAnalysis | None = None, check: LinearCheck | None = None,
    hysteresis: HysteresisEvidence | None = None, broadband: BLA | None = None,
    output_check: OutputErrorCheck | None = None, run_output_check: bool = True,
    slices: RestoringSlices | None = None, progress: ProgressFn | None = None,
) -> tuple[str, ...]:
    """Short plain-language findings on the nonlinearity of a record, each backed by a number.

    Parameters
    ----------
    rec : Record
    harmonics : HarmonicAnalysis or None
        A harmonic analysis of ``rec`` already computed (default: :func:`harmonic_distortion`).
    check : LinearCheck or None
        A model comparison of ``rec`` already computed (default: :func:`linear_fit_check`).
    hysteresis : HysteresisEvidence or None
        Loop and reversal evidence of ``rec`` already computed (default: :func:`.hysteresis.hysteresis_evidence`
        for a one-DOF record).
    broadband : BLA or None
        Best linear approximation of ``rec`` already computed (default: :func:`.bla.bla` with the
        period found automatically).
    output_check : OutputErrorCheck or None
        Output-error term check already computed (default: :func:`.output_check.output_error_check`
        when ``run_output_check``; the friction term is tried too when the loops show a dead band).
    run_output_check : bool
        Run the output-error check when none is given (a few seconds at most).
    slices : RestoringSlices or None
        Stiffness and damping slices of the restoring force already computed (default:
        :func:`.restoring.restoring_slices` of :func:`.restoring.restoring_force` for a one-DOF record).
    progress : callable or None
        ``progress(stage, fraction, message)`` of the output-error check.

    Returns
    -------
    tuple of str
        In this order: the best linear approximation (distortion against noise, detection lines;
        :mod:`.bla`) for periodic or broadband records; harmonics (threshold ``HARMONIC_DB``, held over
        ``SUSTAIN_WINDOWS`` windows; force distortion above ``FORCE_HARMONIC_DB``); the output-error
        check (:mod:`.output_check`: the terms a simulation needs, the reference); the curvature of the
        restoring force's stiffness and damping slices (:mod:`.restoring`); the equation-error
        comparison (a term counts when it lowers the force NRMSE by ``IMPROVEMENT_RATIO`` and
        ``MIN_IMPROVEMENT``), with which to trust when the two disagree; the sign of the cubic
        stiffness (hardening or softening); hysteresis and friction (:mod:`.hysteresis`), with
        whether output error confirms friction.
    """
    rec = _check_record(rec)
    if harmonics is not None and not isinstance(harmonics, HarmonicAnalysis):
        raise ModelSpecError(f"`harmonics` must be a HarmonicAnalysis or None, got {type(harmonics).__name__}")
    if check is not None and not isinstance(check, LinearCheck):
        raise ModelSpecError(f"`check` must be a LinearCheck or None, got {type(check).__name__}")
    if hysteresis is not None and not isinstance(hysteresis, HysteresisEvidence):
        raise ModelSpecError(f"`hysteresis` must be a HysteresisEvidence or None, got {type(hysteresis).__name__}")
    if broadband is not None and not isinstance(broadband, BLA):
        raise ModelSpecError(f"`broadband` must be a BLA or None, got {type(broadband).__name__}")
    if slices is not None and not isinstance(slices, RestoringSlices):
        raise ModelSpecError(f"`slices` must be RestoringSlices or None, got {type(slices).__name__}")
    if output_check is not None and not isinstance(output_check, OutputErrorCheck):
        raise ModelSpecError(
            f"`output_check` must be an OutputErrorCheck or None, got {type(output_check).__name__}")
    h = harmonics if harmonics is not None else harmonic_distortion(rec)
    chk = check if check is not None else linear_fit_check(rec)
    hyst = _hysteresis(rec, hysteresis)
    b, bb = _broadband(rec, h, broadband)
    harm = _harmonic_findings(h)
    if bb and h.n_valid == 0:
        harm = []  # "not a single tone": the BLA above is the analysis for such records
    oe = _output_check(rec, output_check, run_output_check, bool(hyst is not None and hyst.dead_band), progress)
    derived = any(rec.is_derived(c) for c in ("v", "a") if rec.has(c)) or not (rec.has("v") and rec.has("a"))
    oe_lines = list(oe.findings()) if oe is not None else []
    sl = _slices(rec, slices)
    head = _headline(b, oe)
    return (*head, *bb, *harm, *oe_lines, *(sl.findings() if sl is not None else ()), *_model_findings(chk, oe, derived),
            *_hysteresis_findings(hyst, oe, rec.unit("f")))
