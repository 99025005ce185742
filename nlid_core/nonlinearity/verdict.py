"""Plain-language findings on the nonlinearity of a record, each backed by a number.

:func:`evidence_summary` reads a harmonic analysis and an equation-error model comparison against
the thresholds of :mod:`.thresholds`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelSpecError, NlidError
from ..record import Record
from ..terms.registry import get_term
from ._args import _check_record
from .baseline import cubic_stiffness
from .comparison import LinearCheck, linear_fit_check
from .harmonics import HarmonicAnalysis, harmonic_distortion
from .hysteresis import HysteresisEvidence, hysteresis_evidence
from .thresholds import _LINEAR_TERMS, FORCE_HARMONIC_DB, HARMONIC_DB, IMPROVEMENT_RATIO, LINEAR_ENOUGH, MIN_IMPROVEMENT

__all__ = ["evidence_summary"]


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


def _model_findings(chk: LinearCheck) -> list[str]:
    out: list[str] = []
    lin = chk.linear.nrmse
    helpful = []
    for c in chk.candidates:
        term = next(t for t in c.terms if t not in _LINEAR_TERMS)
        if c.nrmse <= (1 - IMPROVEMENT_RATIO) * lin and lin - c.nrmse >= MIN_IMPROVEMENT:
            helpful.append((term, c))
            out.append(f"adding {term} lowers the linear model's force error from {_pct(lin)} to {_pct(c.nrmse)}")
    if not helpful:
        tried = ", ".join(next(t for t in c.terms if t not in _LINEAR_TERMS) for c in chk.candidates)
        best = min((c.nrmse for c in chk.candidates), default=lin)
        if lin < LINEAR_ENOUGH:
            out.append(f"the linear model {', '.join(_LINEAR_TERMS)} explains the force to {_pct(lin)} (NRMSE)")
        elif tried:
            out.append(
                f"adding {tried} changes the linear model's force error little ({_pct(lin)} -> {_pct(best)} at best)"
            )
    cubic = cubic_stiffness()
    for term, c in helpful:
        if term == cubic:
            name = get_term(term).param_names[0]
            k = float(c.values[name])
            kind = "hardening" if k > 0 else "softening"
            out.append(
                f"force–displacement loop bends: {kind} spring ({name} = {k:.3g} {c.units[name]}"
                f" {'>' if k > 0 else '<'} 0 in the {c.label} fit)"
            )
    return out


def _hysteresis_findings(rec: Record, hysteresis: HysteresisEvidence | None) -> tuple[str, ...]:
    if hysteresis is None:
        if rec.n_dof != 1:
            return ()
        try:
            hysteresis = hysteresis_evidence(rec)
        except NlidError:  # too short or degenerate for loops: no finding, as for any other missing evidence
            return ()
    return hysteresis.findings


def evidence_summary(
    rec: Record, *, harmonics: HarmonicAnalysis | None = None, check: LinearCheck | None = None,
    hysteresis: HysteresisEvidence | None = None,
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

    Returns
    -------
    tuple of str
        Findings on harmonics (threshold ``HARMONIC_DB``, held over ``SUSTAIN_WINDOWS`` windows; force
        distortion above ``FORCE_HARMONIC_DB``) and on the model comparison (a term counts when it
        lowers the force NRMSE by ``IMPROVEMENT_RATIO`` and ``MIN_IMPROVEMENT``; the sign of the cubic
        stiffness names a hardening or softening spring), then on hysteresis and friction (loops that
        persist at low frequency; a force step at velocity reversals: :mod:`.hysteresis`).
    """
    rec = _check_record(rec)
    if harmonics is not None and not isinstance(harmonics, HarmonicAnalysis):
        raise ModelSpecError(f"`harmonics` must be a HarmonicAnalysis or None, got {type(harmonics).__name__}")
    if check is not None and not isinstance(check, LinearCheck):
        raise ModelSpecError(f"`check` must be a LinearCheck or None, got {type(check).__name__}")
    if hysteresis is not None and not isinstance(hysteresis, HysteresisEvidence):
        raise ModelSpecError(f"`hysteresis` must be a HysteresisEvidence or None, got {type(hysteresis).__name__}")
    h = harmonics if harmonics is not None else harmonic_distortion(rec)
    chk = check if check is not None else linear_fit_check(rec)
    return (*_harmonic_findings(h), *_model_findings(chk), *_hysteresis_findings(rec, hysteresis))
