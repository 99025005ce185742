"""Defaults and decision thresholds of the nonlinearity evidence, documented in one place.

The analyses (spectra, harmonics, restoring force, model comparison) read their defaults here and
the plain-language findings (:mod:`.verdict`, :func:`.levels.level_drift_summary`) their thresholds,
so a number that decides a finding is stated once.
"""

from __future__ import annotations

from ..terms.registry import baseline_terms, evidence_terms, parse_terms

#: then 1 by construction); longer ones at least 8192 samples per segment and about 15 segments
#: (50 % overlap) at most, which keeps the resolution fine for long records.
DEFAULT_NPERSEG = 8192
#: Taper fraction of the Tukey window used when one Welch segment spans the whole record. A Hann
#: window over a whole sweep would weight its middle frequencies most; with short tapers every part
#: of the record counts (almost) equally.
SINGLE_SEGMENT_TAPER = 0.1
#: Cumulative force-power fractions bounding the excitation band.
BAND_POWER_FRACTIONS: tuple[float, float] = (0.01, 0.99)
#: Default harmonic-analysis window (s), shortened for fast sweeps (see :func:`harmonic_distortion`).
DEFAULT_WINDOW_S = 2.0
#: A window holding fewer fundamental cycles than this gives no harmonic levels (NaN).
MIN_WINDOW_CYCLES = 2.0
#: A window counts as tonal (a single sine drives it) when the force's fundamental holds at least
#: this fraction of the force variance in the window; other windows give no harmonic levels.
TONAL_MIN_FRACTION = 0.8
#: The force's phase must follow a quadratic in time within a window (a sweep) to within this rms
#: (rad) or ``PHASE_DEV_FACTOR`` times the median over all windows (noise), whichever is larger;
#: windows spanning a frequency step of a stepped sine (or a burst) give no harmonic levels.
PHASE_DEV_MAX = 0.1
PHASE_DEV_FACTOR = 3.0
#: Harmonics are valid only below this fraction of the sampling rate (0.5 = Nyquist).
NYQUIST_FRACTION = 0.45
#: A response harmonic above this level (dB re the fundamental) counts as evidence of nonlinearity;
#: below it a record "looks linear at this level". -40 dB is 1 % of the fundamental's amplitude.
HARMONIC_DB = -40.0
#: A force harmonic above this level (dB re the force fundamental) means the exciter is distorted,
#: so response harmonics may come from the force rather than from the structure.
FORCE_HARMONIC_DB = -40.0
#: Levels quoted in the summary are sustained over this many consecutive (50 % overlapping)
#: windows, so a single disturbed window (a start transient, a glitch) is not reported as a harmonic.
SUSTAIN_WINDOWS = 2
#: A free vibration (the start transient or the ringing after a resonance, at a natural frequency)
#: is not locked to the force's phase, so it stays in the residual of the harmonic fits as a line.
#: Where harmonic k·f0 crosses it, the fit takes the free vibration for harmonic k, so such windows
#: are marked ``coincident`` and left out of the summary. A residual line counts when it stands this
#: many dB above the median of the window's residual spectrum ...
RINGING_PROMINENCE_DB = 20.0
#: ... and is no more than this many dB below ``HARMONIC_DB`` (relative to the fundamental) ...
RINGING_MARGIN_DB = 10.0
#: ... in the window itself or in this many windows on either side (at the crossing the fit
#: absorbs the free vibration, so it is seen in the neighbours).
RINGING_NEIGHBOURS = 2
#: Adding a term "explains much more" when it lowers the force NRMSE of the linear model by at least
#: this factor (new/old <= 1 - IMPROVEMENT_RATIO) ...
IMPROVEMENT_RATIO = 0.3
#: ... and by at least this much in absolute terms (fraction of the force standard deviation).
MIN_IMPROVEMENT = 0.005
#: A linear model with a force NRMSE below this explains the record (nothing left to add).
LINEAR_ENOUGH = 0.01
#: Nonlinear terms tried one at a time on top of the linear baseline by :func:`linear_fit_check`
#: (the registry's evidence terms).
DEFAULT_CANDIDATES: tuple[str, ...] = evidence_terms()
#: The linear baseline (the registry's baseline terms: mass, viscous damping, linear stiffness).
_LINEAR_TERMS: tuple[str, ...] = baseline_terms()
#: Terms of the equation-error fit that estimates the mass for :func:`restoring_force`: the
#: baseline and the evidence terms.
MASS_TERMS: tuple[str, ...] = parse_terms((*baseline_terms(), *evidence_terms()))
#: Most harmonics analysed.
MAX_HARMONICS = 20
#: Fewest samples in a harmonic-analysis window.
_MIN_WINDOW_SAMPLES = 16
#: Most windows of a harmonic analysis (their length grows for very long records).
_MAX_WINDOWS = 2000
#: Most time columns of a spectrogram (the hop grows beyond).
_MAX_SPECTROGRAM_COLUMNS = 400
#: Budget (array elements) for one batch of the per-window least-squares fits.
_BATCH_ELEMENTS = 4_000_000
#: Lowest spectrogram level kept, below the maximum (dB).
_SPECTROGRAM_RANGE_DB = 120.0
#: Default spectrogram frequency range, in multiples of the excitation band's upper edge.
_SPECTROGRAM_BAND_MULTIPLE = 8.0

#: Relative change of the equivalent natural frequency across levels counted as a drift.
LEVEL_DRIFT = 0.02

# --- Broadband and periodic excitation (best linear approximation, detection lines) --------------
#: A DFT line of a period counts as excited when its input power is within this many dB of the
#: strongest line ...
EXCITED_DB = -40.0
#: ... and, when the input noise is known, this many dB above the input's noise at that line.
EXCITED_SNR_DB = 20.0
#: A class of unexcited lines shows nonlinear distortion when its output level stands this many dB
#: above the noise at the same lines (and the difference is significant for its number of lines).
DETECTION_DB = 3.0
#: Confidence of the per-line test "the BLA's total variance exceeds its noise variance" (F test).
BLA_CONFIDENCE = 0.99
#: The BLA shows nonlinear distortion above the noise when at least this fraction of the excited
#: lines passes the per-line test (a linear system passes it at about 1 - BLA_CONFIDENCE of them) ...
BLA_MIN_FRACTION = 0.05
#: ... and the median ratio total / noise variance over the excited lines exceeds this (dB).
BLA_MIN_DB = 1.0
#: The input repeats with a lag when its normalised autocorrelation there exceeds this ...
PERIOD_MIN_CORR = 0.02
#: ... and samples one period apart match: their smoothed difference power is below this fraction
#: of the signal power.
PERIOD_MATCH = 0.1
#: ... over stretches whose power is at least this fraction of the record's mean power (a silent
#: stretch, e.g. a zero input between two tests, repeats trivially).
SILENT_FRACTION = 0.01
#: Shortest period searched (samples).
MIN_PERIOD = 32
#: Segments of a non-periodic record for segment averaging of the BLA.
DEFAULT_SEGMENTS = 8
#: A transient overlapping the period (a realisation's first samples repeating its last ones) gives
#: the noise level when it holds at least this many samples (its second half is used).
MIN_OVERLAP_SAMPLES = 64
#: The output-error check adds a term when it lowers the output RMSE by at least this fraction.
OE_IMPROVEMENT = 0.1
#: Most samples of the output-error check's estimation segment (the next half as many validate).
OE_MAX_SAMPLES = 16000
#: An FRF line is shown as valid when its coherence reaches this and it lies in the excitation band.
MIN_COHERENCE = 0.5
#: A multisine counts as odd when at most this fraction of its excited lines is even (leakage, a
#: drifting offset); those even lines are then left out of the analysis.
ODD_TOLERANCE = 0.01
#: Term tried by the output-error check when the loops show a force step at reversals (friction).
FRICTION_TERM = "fc"
#: A candidate of the output-error check beside the nonlinear terms: a constant force offset. It is not
#: a nonlinearity, but a record with an offset (a sensor zero, a DC level the
#: system makes) leaves a mean in every residual, which the nonlinear terms cannot remove and which
#: can dominate the validation error (Silverbox: 5.3 mV with k3 alone, 0.45 mV with k3 and f0).
OFFSET_TERM = "f0"
#: Velocity scale of the smoothed Coulomb term in the output-error check, as a fraction of the
#: velocity rms (a sharper tanh makes the simulation stiff and the check slow).
OE_VEPS_FRACTION = 0.05
#: A change of an equivalent linear parameter across levels is a trend only beyond this many
#: combined standard errors.
LEVEL_SIGNIFICANCE = 2.0
