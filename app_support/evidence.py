"""The nonlinearity evidence of one record, computed in one call with progress (runs as a job).

Kept free of Streamlit so that a job's worker process can import it; :func:`app_support.cache.evidence`
stores the result in the shared cache and the Nonlinearity and Teaching pages show it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlid_core import nonlinearity
from nlid_core.errors import NlidError
from nlid_core.nonlinearity.hysteresis import HysteresisEvidence, hysteresis_evidence
from nlid_core.record import Record
from nlid_core.signals import derive_missing
from nlid_core.progress import ProgressFn


#: Share of the work in each step (the output-error term check dominates on long records).
_STEPS = (("harmonics", 0.04), ("equation-error check", 0.06), ("loops", 0.04), ("best linear approximation", 0.10),
          ("restoring force", 0.06), ("output-error term check", 0.62), ("spectra", 0.08))


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The nonlinearity evidence of one record (what the Nonlinearity page shows)."""

    summary: tuple[str, ...]
    spectrum: nonlinearity.Spectrum
    harmonics: nonlinearity.HarmonicAnalysis
    spectrogram: nonlinearity.Spectrogram
    restoring: nonlinearity.RestoringForce
    check: nonlinearity.LinearCheck
    band: tuple[float, float]
    broadband: nonlinearity.BLA | None = None
    broadband_error: str = ""
    output_check: nonlinearity.OutputErrorCheck | None = None
    slices: nonlinearity.RestoringSlices | None = None


def compute_evidence(rec: Record, progress: ProgressFn | None = None) -> Evidence:
    """Harmonics, the equation-error check, loops, the best linear approximation, the restoring force and
    its slices, the output-error term check, spectra and the verdict of ``rec``.

    ``progress(stage, fraction, message)`` is called before each step (and inside the term check). A record
    without velocity or acceleration gets them derived from the displacement (Savitzky-Golay) first.
    """
    if rec.v is None or rec.a is None:
        rec = derive_missing(rec)
    done = 0.0
    shares = dict(_STEPS)

    def step(name: str) -> None:
        nonlocal done
        if progress is not None:
            progress("nonlinearity evidence", min(done, 1.0), name)
        done += shares[name]

    step("harmonics")
    harmonics = nonlinearity.harmonic_distortion(rec)
    step("equation-error check")
    check = nonlinearity.linear_fit_check(rec)
    step("loops")
    try:
        hyst: HysteresisEvidence | None = hysteresis_evidence(rec)
    except NlidError:
        hyst = None
    step("best linear approximation")
    broadband, broadband_error = None, ""
    try:
        broadband = nonlinearity.bla(rec)
    except NlidError as exc:
        broadband_error = str(exc)
    step("restoring force")
    restoring = nonlinearity.restoring_force(rec)
    try:
        slices: nonlinearity.RestoringSlices | None = nonlinearity.restoring_slices(restoring)
    except NlidError:
        slices = None
    start = done
    step("output-error term check")
    span = shares["output-error term check"]

    def inner(stage: str, fraction: float, message: str) -> None:
        if progress is not None:
            progress("nonlinearity evidence", min(start + span * fraction, 1.0), message)

    oe = nonlinearity.term_check(rec, hysteresis=hyst, progress=inner)
    step("spectra")
    summary = nonlinearity.evidence_summary(rec, harmonics=harmonics, check=check, hysteresis=hyst,
                                            broadband=broadband, output_check=oe, run_output_check=False,
                                            slices=slices)
    return Evidence(
        summary=tuple(summary),
        spectrum=nonlinearity.spectrum(rec),
        harmonics=harmonics,
        spectrogram=nonlinearity.spectrogram(rec, channel="x"),
        restoring=restoring,
        check=check,
        band=nonlinearity.excitation_band(rec),
        broadband=broadband,
        broadband_error=broadband_error,
        output_check=oe,
        slices=slices,
    )
