r"""Evidence of nonlinearity: what an engineer looks at before choosing model terms.

Everything here works on one :class:`~nlid_core.record.Record` and returns
frozen result objects that the figure builders (``figures.py``) draw and a
dashboard can tabulate. Nothing here plots.

Spectra and the frequency response
    :func:`spectrum` (Welch power spectral density per channel),
    :func:`excitation_band` (band holding 1 %..99 % of the force power) and
    :func:`frf` (H1 estimate ``P_fx / P_ff`` of displacement over force, with
    the coherence). A linear system driven by a force has no response outside
    the force's band and a coherence near 1 inside it.

Harmonic distortion under swept or stepped sines
    :func:`harmonic_distortion` follows the phase :math:`\varphi(t)` of the
    force's fundamental (unwrapped phase of its analytic signal, smoothed by
    a quadratic per window) and fits, window by window (Hann-weighted least
    squares, 50 % overlap), the response as a sum of harmonics of that phase
    whose amplitudes may change linearly within the window,
    :math:`y \approx c_0 + c_1\tau + \sum_k (a_k + a'_k\tau)\cos k\varphi + (b_k + b'_k\tau)\sin k\varphi`.
    Because the harmonics follow the instantaneous phase, a sweep does not
    smear them and a window of a few cycles is enough. Harmonics 2..n of the
    response are reported relative to the fundamental in dB. A linear system
    driven by a pure tone responds at the fundamental only; a 3rd harmonic
    points to a cubic stiffness or damping term, a 2nd (even) one to an
    asymmetric term (``k2``) or an offset. The same fit of the force tells
    whether the exciter itself is distorted. A free vibration (the start
    transient, the ringing after a resonance) is not locked to the force; it
    is found as a line in the fit residual, and windows where a harmonic
    crosses it are marked, because there the fit cannot tell the two apart
    (a lightly damped *linear* system would otherwise show "harmonics").
    :func:`spectrogram` gives the time–frequency picture to check this by eye.

Restoring force and model comparison
    :func:`restoring_force` is :math:`f - m\ddot x`, the force the spring and
    damper carry; plotted against ``x`` or ``ẋ`` it shows the shape of the
    stiffness and damping curves directly. The mass, unless given, comes from
    an equation-error fit that includes the common nonlinear terms (a purely
    linear fit biases it on a nonlinear record). :func:`linear_fit_check` fits
    the linear model ``m0,c1,k1`` and the same plus one nonlinear term by
    equation error and compares the force residuals.

Broadband and periodic excitation
    :func:`bla` is the best linear approximation with its noise and nonlinear-distortion variances
    per line, from several periods and realisations of a multisine (found automatically by
    :func:`periodic_layout`) or by segment averaging of a random record; :func:`detection_lines`
    compares the output at unexcited odd and even lines with the noise (odd- vs even-degree
    nonlinearity). Pintelon & Schoukens, *System Identification: A Frequency Domain Approach*,
    2nd ed., 2012, ch. 3-4.

Output-error check
    :func:`output_error_check` adds nonlinear terms one at a time by output error (simulation),
    the reference when the equation-error comparison, biased towards the linear model by derived
    noisy signals, says a term helps "little".

:func:`evidence_summary` turns these numbers into a few plain-language
findings; the thresholds are the constants of :mod:`.thresholds`.

Modules
    ``spectra`` (PSD, excitation band, spectrogram), ``frf`` (H1 and coherence), ``harmonics``
    (harmonic distortion along a sweep), ``restoring`` (restoring force and its (x, ẋ) surface),
    ``comparison`` (equation-error fits of the linear model and one added term), ``levels``
    (equivalent linear parameters across levels), ``intermodulation`` (two-tone products),
    ``bla`` (best linear approximation, periods and realisations), ``detection`` (excited and
    detection lines), ``output_check`` (forward selection of terms by output error),
    ``verdict`` (plain-language findings), ``baseline`` (the linear baseline's parameters by role,
    read from the term registry) and ``thresholds`` (defaults and decision thresholds).
"""

from __future__ import annotations

from .bla import BLA, Layout, bla, bla_findings, detect_period, periodic_layout
from .comparison import LinearCheck, ModelCheck, linear_fit_check
from .detection import DetectionLines, LineClass, detection_lines, excited_lines, input_kind
from .frf import FRF, frf
from .harmonics import HarmonicAnalysis, harmonic_distortion
from .intermodulation import IntermodulationLine, two_tone_products
from .levels import EquivalentLinear, equivalent_linear, level_drift_summary
from .output_check import OutputErrorCheck, OutputErrorStep, output_error_check
from .restoring import (
    RestoringForce,
    RestoringSlice,
    RestoringSlices,
    restoring_slices,
    RestoringSurface,
    local_amplitude,
    model_restoring_surface,
    restoring_force,
    restoring_surface,
)
from .spectra import Spectrogram, Spectrum, excitation_band, power_band, spectrogram, spectrum, welch_psd
from .thresholds import (
    BAND_POWER_FRACTIONS,
    DEFAULT_CANDIDATES,
    DEFAULT_NPERSEG,
    DEFAULT_WINDOW_S,
    FORCE_HARMONIC_DB,
    HARMONIC_DB,
    IMPROVEMENT_RATIO,
    LEVEL_DRIFT,
    LINEAR_ENOUGH,
    MASS_TERMS,
    MIN_IMPROVEMENT,
    MIN_WINDOW_CYCLES,
    RINGING_PROMINENCE_DB,
    TONAL_MIN_FRACTION,
)
from .thresholds import MAX_HARMONICS as MAX_HARMONICS
from .thresholds import NYQUIST_FRACTION as NYQUIST_FRACTION
from .thresholds import PHASE_DEV_FACTOR as PHASE_DEV_FACTOR
from .thresholds import PHASE_DEV_MAX as PHASE_DEV_MAX
from .thresholds import RINGING_MARGIN_DB as RINGING_MARGIN_DB
from .thresholds import RINGING_NEIGHBOURS as RINGING_NEIGHBOURS
from .thresholds import SINGLE_SEGMENT_TAPER as SINGLE_SEGMENT_TAPER
from .thresholds import SUSTAIN_WINDOWS as SUSTAIN_WINDOWS
from .verdict import evidence_summary, term_check

__all__ = [
    "DEFAULT_NPERSEG",
    "BAND_POWER_FRACTIONS",
    "DEFAULT_WINDOW_S",
    "MIN_WINDOW_CYCLES",
    "TONAL_MIN_FRACTION",
    "RINGING_PROMINENCE_DB",
    "HARMONIC_DB",
    "FORCE_HARMONIC_DB",
    "IMPROVEMENT_RATIO",
    "MIN_IMPROVEMENT",
    "LINEAR_ENOUGH",
    "DEFAULT_CANDIDATES",
    "MASS_TERMS",
    "Spectrum",
    "FRF",
    "HarmonicAnalysis",
    "Spectrogram",
    "RestoringForce",
    "ModelCheck",
    "LinearCheck",
    "welch_psd",
    "spectrum",
    "excitation_band",
    "power_band",
    "harmonic_distortion",
    "spectrogram",
    "frf",
    "local_amplitude",
    "restoring_force",
    "linear_fit_check",
    "evidence_summary",
    "term_check",
    "LEVEL_DRIFT",
    "EquivalentLinear",
    "equivalent_linear",
    "level_drift_summary",
    "IntermodulationLine",
    "two_tone_products",
    "RestoringSurface",
    "restoring_surface",
    "model_restoring_surface",
    "BLA",
    "Layout",
    "bla",
    "bla_findings",
    "detect_period",
    "periodic_layout",
    "DetectionLines",
    "LineClass",
    "detection_lines",
    "excited_lines",
    "input_kind",
    "OutputErrorCheck",
    "OutputErrorStep",
    "output_error_check",
    "RestoringSlice",
    "RestoringSlices",
    "restoring_slices",
]
