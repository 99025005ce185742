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

:func:`evidence_summary` turns these numbers into a few plain-language
findings; the thresholds are the module constants below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import fft as sp_fft
from scipy import signal as sp_signal

from ._checks import check_int as _check_int
from ._checks import check_positive as _check_positive
from .errors import DataValidationError, ModelSpecError
from .estimate import equation_error
from .models import TermModel
from .record import CHANNEL_LABELS, CHANNELS, Record
from .signals import derive_missing

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
    "LEVEL_DRIFT",
    "EquivalentLinear",
    "equivalent_linear",
    "level_drift_summary",
    "IntermodulationLine",
    "two_tone_products",
    "RestoringSurface",
    "restoring_surface",
]

FloatArray = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]

#: Welch segment length (samples) used when ``nperseg`` is not given: ``min(n, max(8192, n // 8))``.
#: Records of up to 8192 samples give one segment (finest resolution, no averaging; the coherence is
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
#: Nonlinear terms tried one at a time on top of ``m0,c1,k1`` by :func:`linear_fit_check`.
DEFAULT_CANDIDATES: tuple[str, ...] = ("k3", "c2", "k2")
_LINEAR_TERMS: tuple[str, ...] = ("m0", "c1", "k1")
#: Terms of the equation-error fit that estimates the mass for :func:`restoring_force`.
MASS_TERMS: tuple[str, ...] = ("m0", "c1", "c2", "k1", "k2", "k3")
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


# --------------------------------------------------------------------------- result types
@dataclass(frozen=True, kw_only=True)
class Spectrum:
    """Welch power spectral densities of some channels of one record.

    Attributes
    ----------
    freq_hz : (m,) ndarray
        Frequencies (Hz), 0 to the Nyquist frequency.
    psd : mapping
        Channel name -> one-sided PSD, (m,) ndarray in ``unit²/Hz``.
    units : mapping
        Channel name -> unit of the channel itself (the PSD is in that unit squared per Hz).
    record : str
        Name of the record.
    nperseg : int
        Welch segment length (samples).
    band_hz : (float, float)
        Excitation band of the record (see :func:`excitation_band`); NaNs when unknown.
    """

    freq_hz: FloatArray
    psd: Mapping[str, FloatArray]
    units: Mapping[str, str]
    record: str = ""
    nperseg: int = 0
    band_hz: tuple[float, float] = (math.nan, math.nan)

    def psd_unit(self, channel: str) -> str:
        """Unit of the PSD of ``channel``, e.g. ``N^2/Hz``."""
        return f"{_power_unit(self.units[channel])}/Hz"

    def psd_db(self, channel: str) -> FloatArray:
        """PSD of ``channel`` in dB re 1 unit²/Hz (zeros floored 300 dB below the maximum)."""
        p = np.asarray(self.psd[channel], dtype=np.float64)
        top = float(np.max(p)) if p.size else 0.0
        floor = top * 1e-30 if top > 0 else 1e-300
        return 10.0 * np.log10(np.maximum(p, floor))


@dataclass(frozen=True, kw_only=True)
class FRF:
    """H1 frequency response estimate from force to a response channel.

    Attributes
    ----------
    freq_hz : (m,) ndarray
    h : (m,) complex ndarray
        ``P_fy / P_ff`` (the response per unit force; NaN where the force has no power).
    coherence : (m,) ndarray
        ``|P_fy|² / (P_ff P_yy)`` in [0, 1] (identically 1 with a single Welch segment).
    unit : str
        Unit of ``h``, e.g. ``m/N``.
    record : str
    output : str
        Response channel (``x`` by default).
    nperseg : int
    band_hz : (float, float)
        Excitation band (see :func:`excitation_band`): outside it ``h`` is noise over noise.
    """

    freq_hz: FloatArray
    h: ComplexArray
    coherence: FloatArray
    unit: str = "m/N"
    record: str = ""
    output: str = "x"
    nperseg: int = 0
    band_hz: tuple[float, float] = (math.nan, math.nan)

    @property
    def magnitude_db(self) -> FloatArray:
        """``20 log10 |h|`` (dB re 1 ``unit``)."""
        mag = np.abs(self.h)
        with np.errstate(divide="ignore"):
            return np.where(mag > 0, 20.0 * np.log10(np.where(mag > 0, mag, 1.0)), -np.inf)

    @property
    def phase_deg(self) -> FloatArray:
        """Unwrapped phase of ``h`` in degrees (NaN where ``h`` is undefined)."""
        ok = np.isfinite(self.h)
        out = np.full(self.h.shape, np.nan)
        if ok.any():
            out[ok] = np.degrees(np.unwrap(np.angle(self.h[ok])))
        return out

    def peak_hz(self, band: tuple[float, float] | None = None) -> float:
        """Frequency of the largest ``|h|`` within ``band`` (Hz), refined by a parabola through 3 bins.

        Parameters
        ----------
        band : (float, float) or None
            Frequency range searched (Hz); the whole axis above 0 Hz when None.

        Returns
        -------
        float
            NaN when no bin of the band has a finite response.
        """
        lo, hi = (0.0, math.inf) if band is None else band
        mag = np.abs(self.h)
        sel = (self.freq_hz > lo) & (self.freq_hz <= hi) & np.isfinite(mag)
        if not sel.any():
            return math.nan
        idx = np.flatnonzero(sel)
        i = int(idx[np.argmax(mag[idx])])
        if 0 < i < mag.size - 1 and np.isfinite(mag[i - 1 : i + 2]).all() and (mag[i - 1 : i + 2] > 0).all():
            ym, y0, yp = np.log(mag[i - 1 : i + 2])
            den = ym - 2 * y0 + yp
            shift = 0.5 * (ym - yp) / den if den < 0 else 0.0
            df = float(self.freq_hz[1] - self.freq_hz[0])
            return float(self.freq_hz[i] + float(np.clip(shift, -0.5, 0.5)) * df)
        return float(self.freq_hz[i])


@dataclass(frozen=True, kw_only=True)
class HarmonicAnalysis:
    """Harmonic levels of a response along a swept- or stepped-sine record.

    Attributes
    ----------
    time_s : (w,) ndarray
        Centre time of each window (s).
    f0_hz : (w,) ndarray
        Instantaneous fundamental (force) frequency at the window centre (Hz).
    harmonics : tuple of int
        Harmonic orders 2..n (columns of ``levels_db``).
    levels_db : (w, n - 1) ndarray
        Amplitude of harmonic k of the response relative to its fundamental, ``20 log10(A_k/A_1)``
        (dB); NaN where the window is not tonal, holds fewer than ``MIN_WINDOW_CYCLES`` cycles or the
        harmonic lies above ``NYQUIST_FRACTION`` of the sampling rate.
    force_levels_db : (w, n - 1) ndarray
        The same for the force (distortion of the exciter).
    floor_db : (w,) ndarray
        Level (dB re the fundamental) that white residual noise alone gives a harmonic: levels near
        it are noise, not harmonics.
    amplitude : (w,) ndarray
        Amplitude of the response's fundamental (channel unit).
    tonal_fraction : (w,) ndarray
        Fraction of the force variance in its fundamental (1 for a pure sine).
    valid : (w,) bool ndarray
        Tonal windows with at least ``MIN_WINDOW_CYCLES`` cycles whose force phase follows a smooth
        sweep (see ``PHASE_DEV_MAX``).
    window_s : float
        Window length (s); windows overlap by 50 %.
    sweep_rate_hz_s : float
        Median rate of change of the fundamental (Hz/s; 0 for a stepped or fixed sine).
    ringing_hz : (w,) ndarray
        Frequency of a free vibration seen in the residual of each window's fit (NaN where no line
        stands out, see ``RINGING_PROMINENCE_DB``).
    coincident : (w, n - 1) bool ndarray
        Where harmonic k of the window's fundamental lies within the fit's resolution of a free
        vibration seen in that window or its neighbours: the level there may be the free vibration
        rather than a harmonic.
    channel : str
        Response channel analysed (``x`` by default).
    unit : str
        Unit of the response channel.
    record : str
    """

    time_s: FloatArray
    f0_hz: FloatArray
    harmonics: tuple[int, ...]
    levels_db: FloatArray
    force_levels_db: FloatArray
    floor_db: FloatArray
    amplitude: FloatArray
    tonal_fraction: FloatArray
    valid: NDArray[np.bool_]
    window_s: float
    sweep_rate_hz_s: float
    ringing_hz: FloatArray
    coincident: NDArray[np.bool_]
    channel: str = "x"
    unit: str = "m"
    record: str = ""

    @property
    def n_valid(self) -> int:
        """Number of windows with harmonic levels."""
        return int(np.count_nonzero(self.valid))

    def level(self, k: int, *, force: bool = False) -> FloatArray:
        """Levels (dB) of harmonic ``k`` per window.

        Parameters
        ----------
        k : int
            Harmonic order, 2..n.
        force : bool
            The force's harmonic instead of the response's.

        Returns
        -------
        (w,) ndarray
        """
        if k not in self.harmonics:
            raise ModelSpecError(f"harmonic `k` = {k} was not analysed; harmonics are {self.harmonics}")
        col = self.harmonics.index(k)
        return (self.force_levels_db if force else self.levels_db)[:, col]

    def sustained_peak(
        self, k: int, *, force: bool = False, windows: int = SUSTAIN_WINDOWS, skip_coincident: bool = True
    ) -> tuple[float, float, float]:
        """Highest level of harmonic ``k`` held over ``windows`` consecutive windows.

        Parameters
        ----------
        k : int
            Harmonic order, 2..n.
        force : bool
            The force's harmonic instead of the response's.
        windows : int
            Consecutive windows the level must be held over (the minimum over the run is taken);
            1 gives the plain maximum.
        skip_coincident : bool
            Leave out the response's windows where the harmonic crosses a free vibration
            (``coincident``).

        Returns
        -------
        (level_db, time_s, f0_hz)
            NaNs when no run of ``windows`` consecutive windows has a level.
        """
        lev = self.level(k, force=force)
        if skip_coincident and not force:
            lev = np.where(self.coincident[:, self.harmonics.index(k)], np.nan, lev)
        w = max(1, int(windows))
        if lev.size < w:
            return math.nan, math.nan, math.nan
        runs = np.lib.stride_tricks.sliding_window_view(lev, w)
        held = np.where(np.isnan(runs).any(axis=1), -np.inf, np.min(np.where(np.isnan(runs), 0.0, runs), axis=1))
        if not np.isfinite(held).any():
            return math.nan, math.nan, math.nan
        i = int(np.argmax(held))
        j = i + int(np.argmin(runs[i]))
        return float(held[i]), float(self.time_s[j]), float(self.f0_hz[j])


class Spectrogram(NamedTuple):
    """Short-time power spectrum (unpacks as ``times, freqs, power_db``)."""

    times_s: FloatArray
    """Centre time of each column (s)."""
    freq_hz: FloatArray
    """Frequencies of the rows (Hz)."""
    power_db: FloatArray
    """(freqs, times) PSD in dB re 1 unit²/Hz."""


@dataclass(frozen=True, kw_only=True)
class RestoringForce:
    """The force carried by the spring and damper, ``f − m·ẍ``, with the states it depends on.

    Attributes
    ----------
    t, x, v, force : (n,) ndarray
        Time, displacement, velocity and restoring force.
    mass : float
        Mass used (unit ``mass_unit``).
    mass_source : str
        ``"given"`` or how it was estimated (when no positive mass fits the data, ``mass`` is 0 and
        this says so).
    mass_unit : str
    units : mapping
        Unit per channel (``t``, ``x``, ``v``, ``f``); the restoring force has the unit of ``f``.
    record : str
    """

    t: FloatArray
    x: FloatArray
    v: FloatArray
    force: FloatArray
    mass: float
    mass_source: str
    mass_unit: str
    units: Mapping[str, str]
    record: str = ""


@dataclass(frozen=True, kw_only=True)
class ModelCheck:
    """Equation-error fit of one candidate model.

    Attributes
    ----------
    label : str
        ``"linear"`` or ``"linear + k3"`` etc.
    terms : tuple of str
    nrmse : float
        RMS force residual divided by the standard deviation of the force (0.02 = 2 %).
    values : mapping
        Fitted coefficient per term.
    units : mapping
        Unit per term.
    """

    label: str
    terms: tuple[str, ...]
    nrmse: float
    values: Mapping[str, float]
    units: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class LinearCheck:
    """Does one nonlinear term explain much more of the force than the linear model?

    Attributes
    ----------
    record : str
    linear : ModelCheck
        ``m0,c1,k1``.
    candidates : tuple of ModelCheck
        The linear model plus one term each.
    """

    record: str
    linear: ModelCheck
    candidates: tuple[ModelCheck, ...]

    @property
    def rows(self) -> tuple[ModelCheck, ...]:
        """The linear model followed by the candidates."""
        return (self.linear, *self.candidates)

    def candidate(self, term: str) -> ModelCheck:
        """The check of the linear model plus ``term``.

        Parameters
        ----------
        term : str
            Added term, e.g. ``"k3"``.

        Returns
        -------
        ModelCheck
        """
        for c in self.candidates:
            if term in c.terms and term not in _LINEAR_TERMS:
                return c
        raise ModelSpecError(f"no candidate with term `term` = {term!r}; tried {[c.label for c in self.candidates]}")

    def improvement(self, term: str) -> float:
        """Relative drop of the force NRMSE when ``term`` is added (0.8 = 80 % lower).

        Parameters
        ----------
        term : str
            Added term.

        Returns
        -------
        float
        """
        new = self.candidate(term).nrmse
        old = self.linear.nrmse
        return 1.0 - new / old if old > 0 else 0.0

    def to_rows(self) -> list[dict[str, object]]:
        """One dict per model (label, terms, nrmse, coefficients), e.g. for a table."""
        return [
            {"model": r.label, "terms": ",".join(r.terms), "force_nrmse": r.nrmse, **dict(r.values)} for r in self.rows
        ]


# --------------------------------------------------------------------------- argument checks
def _check_record(rec: Any, name: str = "rec") -> Record:
    if not isinstance(rec, Record):
        raise DataValidationError(f"`{name}` must be a Record, got {type(rec).__name__}")
    return rec




def _check_channel(rec: Record, name: str, value: Any) -> str:
    valid = CHANNELS[1:]
    if not isinstance(value, str) or value not in valid:
        raise ModelSpecError(f"`{name}` must be one of {', '.join(valid)}, got {value!r}")
    if getattr(rec, value) is None:
        raise DataValidationError(
            f"`{name}`: record `{rec.name}` has no `{value}` ({CHANNEL_LABELS[value]}) channel;"
            " measure it or derive it (signals.derive_missing)"
        )
    return value


def _check_nperseg(nperseg: Any, n: int) -> int:
    if nperseg is None:
        return min(n, max(DEFAULT_NPERSEG, n // 8))
    seg = _check_int("nperseg", nperseg, 8)
    if seg > n:
        raise DataValidationError(f"`nperseg` = {seg} exceeds the record length ({n} samples)")
    return seg


def _spectral_window(nperseg: int, n: int) -> str | tuple[str, float]:
    """Hann, or a Tukey window (10 % cosine tapers) when one segment spans the whole record."""
    return ("tukey", SINGLE_SEGMENT_TAPER) if nperseg >= n else "hann"


def _power_unit(unit: str) -> str:
    u = unit.strip() or "1"
    return f"{u}^2" if all(ch.isalnum() or ch == "_" for ch in u) else f"({u})^2"


def _ratio_unit(num: str, den: str) -> str:
    den_s = den if all(ch.isalnum() or ch == "_" for ch in den) else f"({den})"
    return f"{num}/{den_s}"


# --------------------------------------------------------------------------- spectra
def welch_psd(y: ArrayLike, fs: float, *, nperseg: int | None = None) -> tuple[FloatArray, FloatArray]:
    """One-sided Welch PSD of a uniformly sampled signal (Hann window, 50 % overlap, mean removed).

    A single segment spanning the whole signal uses a Tukey window (``SINGLE_SEGMENT_TAPER``) instead,
    so that every part of a sweep counts equally.

    Parameters
    ----------
    y : (n,) array_like
        Signal (at least 8 samples, finite).
    fs : float
        Sampling rate (Hz).
    nperseg : int or None
        Segment length; default ``min(n, max(DEFAULT_NPERSEG, n // 8))``.

    Returns
    -------
    freq_hz, psd : (m,) ndarray
        Frequencies (Hz) and PSD (unit²/Hz).
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8:
        raise DataValidationError(f"`y` must be a 1-D signal of at least 8 samples, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        i = int(np.argmax(~np.isfinite(arr)))
        raise DataValidationError(f"`y` has a non-finite value at index {i}")
    rate = _check_positive("fs", fs, "Hz")
    seg = _check_nperseg(nperseg, arr.size)
    freq, psd = sp_signal.welch(
        arr, fs=rate, window=_spectral_window(seg, arr.size), nperseg=seg, noverlap=seg // 2, detrend="constant"
    )
    return np.asarray(freq, dtype=np.float64), np.asarray(psd, dtype=np.float64)


def spectrum(rec: Record, *, channels: Sequence[str] = ("f", "x"), nperseg: int | None = None) -> Spectrum:
    """Welch power spectral density of some channels of a record.

    Parameters
    ----------
    rec : Record
    channels : sequence of str
        Channels wanted (``f``, ``x``, ``v``, ``a``); those the record lacks are skipped.
    nperseg : int or None
        Welch segment length (samples, Hann window, 50 % overlap; a Tukey window when one segment
        spans the record); default ``min(n, max(DEFAULT_NPERSEG, n // 8))``.

    Returns
    -------
    Spectrum

    Raises
    ------
    ModelSpecError
        An unknown channel name.
    DataValidationError
        None of ``channels`` is in the record, or ``nperseg`` exceeds the record.
    """
    rec = _check_record(rec)
    if isinstance(channels, str):
        channels = (channels,)
    wanted = tuple(channels)
    bad = [c for c in wanted if c not in CHANNELS[1:]]
    if bad or not wanted:
        raise ModelSpecError(f"`channels` must name some of {', '.join(CHANNELS[1:])}, got {list(wanted)}")
    present = [c for c in dict.fromkeys(wanted) if getattr(rec, c) is not None]
    if not present:
        raise DataValidationError(f"`channels`: record `{rec.name}` has none of {list(wanted)}")
    seg = _check_nperseg(nperseg, rec.n)
    psd: dict[str, FloatArray] = {}
    freq = np.zeros(0)
    for c in present:
        freq, psd[c] = welch_psd(rec.channel(c), rec.fs, nperseg=seg)
    return Spectrum(
        freq_hz=freq, psd=psd, units={c: rec.unit(c) for c in present}, record=rec.name, nperseg=seg,
        band_hz=_band_or_nan(rec),
    )


def _periodogram(y: FloatArray, fs: float) -> tuple[FloatArray, FloatArray]:
    """Periodogram of a whole signal with short tapers: every part of a sweep counts equally."""
    freq, psd = sp_signal.periodogram(y, fs=fs, window=("tukey", SINGLE_SEGMENT_TAPER), detrend="constant")
    return np.asarray(freq, dtype=np.float64), np.asarray(psd, dtype=np.float64)


def _force_periodogram(rec: Record) -> tuple[FloatArray, FloatArray]:
    return _periodogram(rec.f, rec.fs)


def _band_from_psd(
    freq: FloatArray, psd: FloatArray, lo: float, hi: float, what: str = "`f`: the force"
) -> tuple[float, float]:
    p = np.where(freq > 0, psd, 0.0)
    cum = np.cumsum(p)
    total = float(cum[-1])
    if total <= 0:
        raise DataValidationError(f"{what} has no power above 0 Hz (it is constant)")
    cum /= total
    f_lo = float(np.interp(lo, cum, freq))
    f_hi = float(np.interp(hi, cum, freq))
    return f_lo, max(f_hi, f_lo)


def _check_fractions(fractions: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in fractions)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`fractions` must be two numbers, got {fractions!r}") from None
    if not 0 <= lo < hi <= 1:
        raise ModelSpecError(f"`fractions` must satisfy 0 <= lower < upper <= 1, got {fractions!r}")
    return lo, hi


def power_band(
    y: ArrayLike, fs: float, *, fractions: tuple[float, float] = BAND_POWER_FRACTIONS
) -> tuple[float, float]:
    """Frequency band holding most of a signal's power (cumulative tapered periodogram).

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal.
    fs : float
        Sampling rate (Hz).
    fractions : (float, float)
        Cumulative power fractions of the lower and upper edge (default 1 % and 99 %).

    Returns
    -------
    (f_lo, f_hi) : (float, float)
        Band edges (Hz).
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8 or not np.isfinite(arr).all():
        raise DataValidationError(f"`y` must be a finite 1-D signal of at least 8 samples, got shape {arr.shape}")
    rate = _check_positive("fs", fs, "Hz")
    lo, hi = _check_fractions(fractions)
    return _band_from_psd(*_periodogram(arr, rate), lo, hi, what="`y`")


def _band_or_nan(rec: Record) -> tuple[float, float]:
    try:
        return _band_from_psd(*_force_periodogram(rec), *BAND_POWER_FRACTIONS)
    except DataValidationError:
        return (math.nan, math.nan)


def excitation_band(rec: Record, *, fractions: tuple[float, float] = BAND_POWER_FRACTIONS) -> tuple[float, float]:
    """Frequency band holding most of the force power.

    The band is read from the cumulative periodogram of the whole force (Tukey window with
    ``SINGLE_SEGMENT_TAPER``), so every part of a sweep counts equally.

    Parameters
    ----------
    rec : Record
    fractions : (float, float)
        Cumulative power fractions of the lower and upper edge (default 1 % and 99 %).

    Returns
    -------
    (f_lo, f_hi) : (float, float)
        Band edges (Hz).

    Raises
    ------
    DataValidationError
        The force is constant (no power above 0 Hz).
    """
    rec = _check_record(rec)
    lo, hi = _check_fractions(fractions)
    return _band_from_psd(*_force_periodogram(rec), lo, hi)


def frf(rec: Record, *, nperseg: int | None = None, output: str = "x") -> FRF:
    """H1 estimate of the frequency response from force to displacement (or another response).

    Parameters
    ----------
    rec : Record
    nperseg : int or None
        Welch segment length (Hann window, 50 % overlap; a Tukey window when one segment spans the
        record); default ``min(n, max(DEFAULT_NPERSEG, n // 8))``. With one segment the coherence
        is 1 everywhere.
    output : str
        Response channel (``x``, ``v`` or ``a``).

    Returns
    -------
    FRF
        ``h = P_fy / P_ff`` and the coherence; the unit is that of the response over that of the force.
    """
    rec = _check_record(rec)
    if output not in ("x", "v", "a"):
        raise ModelSpecError(f"`output` must be x, v or a, got {output!r}")
    y = rec.channel(_check_channel(rec, "output", output))
    seg = _check_nperseg(nperseg, rec.n)
    kw: dict[str, Any] = {
        "fs": rec.fs,
        "window": _spectral_window(seg, rec.n),
        "nperseg": seg,
        "noverlap": seg // 2,
        "detrend": "constant",
    }
    freq, pff = sp_signal.welch(rec.f, **kw)
    _, pyy = sp_signal.welch(y, **kw)
    _, pfy = sp_signal.csd(rec.f, y, **kw)
    with np.errstate(divide="ignore", invalid="ignore"):
        good = pff > 1e-300 * max(float(np.max(pff)), 1e-300)
        h = np.where(good, pfy / np.where(good, pff, 1.0), np.nan + 0j)
        den = pff * pyy
        coh = np.where(den > 0, np.abs(pfy) ** 2 / np.where(den > 0, den, 1.0), np.nan)
    return FRF(
        freq_hz=np.asarray(freq, dtype=np.float64),
        h=np.asarray(h, dtype=np.complex128),
        coherence=np.clip(np.asarray(coh, dtype=np.float64), 0.0, 1.0),
        unit=_ratio_unit(rec.unit(output), rec.unit("f")),
        record=rec.name,
        output=output,
        nperseg=seg,
        band_hz=_band_or_nan(rec),
    )


def spectrogram(
    rec: Record, channel: str = "x", *, window_s: float | None = None, max_freq_hz: float | None = None
) -> Spectrogram:
    """Short-time power spectrum of one channel (for a time–frequency plot).

    Parameters
    ----------
    rec : Record
    channel : str
        Channel (``f``, ``x``, ``v``, ``a``).
    window_s : float or None
        Hann window length (s); default ``DEFAULT_WINDOW_S`` (at most a quarter of the record).
        Windows overlap by 75 %; for long records the overlap shrinks (down to none) to keep the
        number of columns near 400.
    max_freq_hz : float or None
        Highest frequency returned; default 8 times the upper edge of the excitation band (at most
        the Nyquist frequency).

    Returns
    -------
    Spectrogram
        ``(times_s, freq_hz, power_db)`` with ``power_db`` of shape (freqs, times) in dB re
        1 unit²/Hz, floored 120 dB below its maximum.
    """
    rec = _check_record(rec)
    y = rec.channel(_check_channel(rec, "channel", channel))
    if window_s is None:
        win_s = max(min(DEFAULT_WINDOW_S, rec.duration / 4), _MIN_WINDOW_SAMPLES / rec.fs)
    else:
        win_s = _check_positive("window_s", window_s, "s")
    seg = int(round(win_s * rec.fs))
    if seg < _MIN_WINDOW_SAMPLES or seg > rec.n:
        raise DataValidationError(
            f"`window_s` = {win_s:.6g} s gives {seg} samples per window; it must hold"
            f" {_MIN_WINDOW_SAMPLES}..{rec.n} samples of record `{rec.name}`"
        )
    hop = min(seg, max(1, seg // 4, int(math.ceil((rec.n - seg) / _MAX_SPECTROGRAM_COLUMNS))))
    freq, times, sxx = sp_signal.spectrogram(
        y, fs=rec.fs, window="hann", nperseg=seg, noverlap=seg - hop, detrend="constant", scaling="density"
    )
    if max_freq_hz is None:
        try:
            f_top = _SPECTROGRAM_BAND_MULTIPLE * _band_from_psd(*_force_periodogram(rec), *BAND_POWER_FRACTIONS)[1]
        except DataValidationError:
            f_top = rec.fs / 2
    else:
        f_top = _check_positive("max_freq_hz", max_freq_hz, "Hz")
    keep = freq <= max(f_top, float(freq[min(1, freq.size - 1)]))
    sxx = np.asarray(sxx, dtype=np.float64)[keep]
    top = float(np.max(sxx)) if sxx.size else 0.0
    floor = top * 10 ** (-_SPECTROGRAM_RANGE_DB / 10) if top > 0 else 1e-300
    power_db = 10.0 * np.log10(np.maximum(sxx, floor))
    return Spectrogram(
        np.asarray(times, dtype=np.float64) + float(rec.t[0]), np.asarray(freq[keep], dtype=np.float64), power_db
    )


# --------------------------------------------------------------------------- harmonic analysis
def _force_phase(f: FloatArray) -> FloatArray:
    """Unwrapped phase (rad) of the analytic signal of the (mean-free) force."""
    return np.asarray(np.unwrap(np.angle(sp_signal.hilbert(f - f.mean()))), dtype=np.float64)


def _window_starts(n: int, seg: int) -> NDArray[np.intp]:
    hop = max(1, seg // 2)
    return np.arange(0, n - seg + 1, hop, dtype=np.intp)


def _phase_fits(phase: FloatArray, starts: NDArray[np.intp], seg: int) -> tuple[FloatArray, FloatArray]:
    """Quadratic fit ``p0 + p1 τ + p2 τ²`` (τ in [-1, 1]) of the phase in every window.

    Returns the coefficients (w, 3) and the rms deviation of the phase from the fit (w,) in rad.
    """
    tau = np.linspace(-1.0, 1.0, seg)
    vander = np.column_stack([np.ones(seg), tau, tau * tau])
    pinv = np.linalg.pinv(vander)  # (3, seg)
    out = np.empty((starts.size, 3))
    dev = np.empty(starts.size)
    step = max(1, _BATCH_ELEMENTS // seg)
    for i in range(0, starts.size, step):
        ph = phase[starts[i : i + step, None] + np.arange(seg)]
        c = ph @ pinv.T
        out[i : i + step] = c
        dev[i : i + step] = np.sqrt(np.mean((ph - c @ vander.T) ** 2, axis=1))
    return out, dev


def _sweep_rate(phase: FloatArray, fs: float, seg: int) -> tuple[float, float]:
    """Median |rate of change| (Hz/s) and median of the fundamental frequency (Hz) over windows of ``seg``."""
    starts = _window_starts(phase.size, seg)
    if starts.size == 0:
        return 0.0, 0.0
    coef, _ = _phase_fits(phase, starts, seg)
    half_s = 0.5 * (seg - 1) / fs
    freq = coef[:, 1] / (2 * math.pi * half_s)
    chirp = 2 * coef[:, 2] / (2 * math.pi * half_s * half_s)  # d f / dt inside each window
    return float(np.median(np.abs(chirp))), float(np.median(np.abs(freq)))


def _default_window_s(phase: FloatArray, rec: Record) -> float:
    seg0 = max(_MIN_WINDOW_SAMPLES, min(rec.n // 4, int(round(DEFAULT_WINDOW_S * rec.fs))))
    rate, f_typ = _sweep_rate(phase, rec.fs, seg0)
    win = DEFAULT_WINDOW_S
    if rate > 0:
        # frequency spread rate·T equals the resolution 1/T
        win = min(win, 1.0 / math.sqrt(rate))
    if f_typ > 0:
        win = max(win, 2 * MIN_WINDOW_CYCLES / f_typ)
    win = min(win, rec.duration / 4)
    win = max(win, 2.0 * rec.duration / _MAX_WINDOWS, _MIN_WINDOW_SAMPLES / rec.fs)
    return win


class _Fits(NamedTuple):
    amplitude: FloatArray  # (s, w, n_h): harmonics 1..n_h at the window centre
    residual: FloatArray  # (s, w): weighted residual rms
    line_hz: FloatArray  # (w,): strongest line in the first signal's residual
    line_amplitude: FloatArray  # (w,): its amplitude
    line_prominence_db: FloatArray  # (w,): its height over the median of the residual spectrum


def _harmonic_fits(ys: FloatArray, coef: FloatArray, starts: NDArray[np.intp], seg: int, n_h: int, fs: float) -> _Fits:
    """Weighted least-squares harmonic amplitudes per window.

    ``ys`` is (s, n) (signals fitted together). Each harmonic k has an amplitude linear in time,
    columns ``cos kφ, sin kφ, τ cos kφ, τ sin kφ`` (a sweep through a resonance changes amplitude and
    phase within a window), besides a constant and a trend; the samples are weighted by a Hann
    window, which keeps components that are not harmonics (a free vibration at the natural
    frequency, noise) from leaking into the harmonic estimates. The residual of the first signal is
    searched for its strongest line (a free vibration shows up there).
    """
    tau = np.linspace(-1.0, 1.0, seg)
    weight = np.hanning(seg + 2)[1:-1]
    p = 2 + 4 * n_h
    k = np.arange(1, n_h + 1)
    n_sig = ys.shape[0]
    amps = np.empty((n_sig, starts.size, n_h))
    resid = np.empty((n_sig, starts.size))
    line_hz = np.full(starts.size, np.nan)
    line_amp = np.zeros(starts.size)
    line_prom = np.zeros(starts.size)
    nfft = int(sp_fft.next_fast_len(4 * seg, real=True))
    freq = sp_fft.rfftfreq(nfft, 1.0 / fs)
    above_dc = freq > 2.0 * fs / seg  # outside the main lobe at 0 Hz
    step = max(1, _BATCH_ELEMENTS // (seg * p))
    wsum = float(weight.sum())
    for i in range(0, starts.size, step):
        st = starts[i : i + step]
        c = coef[i : i + step]
        phi = c[:, 0:1] + c[:, 1:2] * tau + c[:, 2:3] * tau * tau  # (b, seg)
        kphi = phi[:, :, None] * k  # (b, seg, n_h)
        cos, sin = np.cos(kphi), np.sin(kphi)
        a = np.empty((st.size, seg, p))
        a[:, :, 0] = 1.0
        a[:, :, 1] = tau
        a[:, :, 2::4] = cos
        a[:, :, 3::4] = sin
        a[:, :, 4::4] = tau[:, None] * cos
        a[:, :, 5::4] = tau[:, None] * sin
        aw = a * weight[:, None]
        gram = np.matmul(aw.transpose(0, 2, 1), a)
        scale = np.sqrt(np.einsum("bpp->bp", gram))
        scale = np.where(scale > 0, scale, 1.0)
        gram_s = gram / scale[:, :, None] / scale[:, None, :]
        ginv = np.linalg.pinv(gram_s, rcond=1e-10, hermitian=True) / scale[:, :, None] / scale[:, None, :]
        idx = st[:, None] + np.arange(seg)
        for j in range(n_sig):
            yw = ys[j][idx]  # (b, seg)
            rhs = np.matmul(aw.transpose(0, 2, 1), yw[:, :, None])  # (b, p, 1)
            sol = np.matmul(ginv, rhs)
            r = yw - np.matmul(a, sol)[:, :, 0]
            sol = sol[:, :, 0]
            amps[j, i : i + step] = np.hypot(sol[:, 2::4], sol[:, 3::4])
            resid[j, i : i + step] = np.sqrt((r * r) @ weight / wsum)
            if j == 0 and np.any(above_dc):
                spec = np.abs(sp_fft.rfft(r * weight, nfft, axis=1))[:, above_dc] * (2.0 / wsum)
                top = np.argmax(spec, axis=1)
                peak = spec[np.arange(st.size), top]
                med = np.median(spec, axis=1)
                line_hz[i : i + step] = freq[above_dc][top]
                line_amp[i : i + step] = peak
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = peak / np.where(med > 0, med, 1.0)
                    line_prom[i : i + step] = np.where(med > 0, 20.0 * np.log10(ratio), 0.0)
    return _Fits(amps, resid, line_hz, line_amp, line_prom)


def harmonic_distortion(
    rec: Record, *, n_harmonics: int = 5, window_s: float | None = None, channel: str = "x"
) -> HarmonicAnalysis:
    r"""Harmonic levels of the response along a swept- or stepped-sine record.

    The fundamental's phase :math:`\varphi(t)` is the unwrapped phase of the force's analytic
    signal, smoothed by a quadratic in each window; its slope at the window centre is the
    instantaneous fundamental frequency (for a tone the peak of the force spectrum in the window).
    In each window (50 % overlap) the response and the force are fitted by Hann-weighted least
    squares with a constant, a linear trend and :math:`\cos k\varphi`, :math:`\sin k\varphi`
    for k = 1..n, each with an amplitude linear in time (a sweep through a resonance changes the
    amplitude within a window); levels are the amplitudes at the window centre. Windows where a
    harmonic crosses a free vibration seen in the residual are marked ``coincident``.

    Parameters
    ----------
    rec : Record
        A record driven by a (swept, stepped or fixed) sine. Windows where the force is not
        dominated by one tone (broadband excitation) get NaN levels.
    n_harmonics : int
        Highest harmonic order n (2..20); levels are reported for 2..n.
    window_s : float or None
        Window length (s). Default ``DEFAULT_WINDOW_S``, shortened for fast sweeps to
        ``1/sqrt(sweep rate)`` (where the frequency swept within a window equals its resolution),
        but at least ``2 · MIN_WINDOW_CYCLES`` cycles of the median fundamental and at most a
        quarter of the record.
    channel : str
        Response channel (``x``, ``v`` or ``a``).

    Returns
    -------
    HarmonicAnalysis
    """
    rec = _check_record(rec)
    n_h = _check_int("n_harmonics", n_harmonics, 2, MAX_HARMONICS)
    if channel not in ("x", "v", "a"):
        raise ModelSpecError(f"`channel` must be x, v or a, got {channel!r}")
    y = rec.channel(_check_channel(rec, "channel", channel))
    f = rec.f
    if float(np.ptp(f)) == 0:
        raise DataValidationError(f"`rec`: the force of record `{rec.name}` is constant; there is no fundamental")
    phase = _force_phase(f)
    if window_s is None:
        win = _default_window_s(phase, rec)
    else:
        win = _check_positive("window_s", window_s, "s")
    seg = int(round(win * rec.fs))
    if seg < _MIN_WINDOW_SAMPLES or seg > rec.n:
        raise DataValidationError(
            f"`window_s` = {win:.6g} s gives {seg} samples per window; it must hold"
            f" {_MIN_WINDOW_SAMPLES}..{rec.n} samples of record `{rec.name}`"
        )
    starts = _window_starts(rec.n, seg)
    coef, phase_dev = _phase_fits(phase, starts, seg)
    half_s = 0.5 * (seg - 1) / rec.fs
    two_pi = 2 * math.pi
    f_centre = coef[:, 1] / (two_pi * half_s)
    # highest instantaneous frequency in the window (ends of the quadratic phase)
    f_edges = np.maximum(np.abs(coef[:, 1] + 2 * coef[:, 2]), np.abs(coef[:, 1] - 2 * coef[:, 2])) / (two_pi * half_s)
    cycles = np.abs(2 * coef[:, 1]) / two_pi
    fits = _harmonic_fits(np.vstack([y, f]), coef, starts, seg, n_h, rec.fs)
    ay, af = fits.amplitude
    resid = fits.residual
    f_var = _window_var(f - f.mean(), starts, seg)
    with np.errstate(divide="ignore", invalid="ignore"):
        tonal = np.where(f_var > 0, 0.5 * af[:, 0] ** 2 / f_var, 0.0)
    tonal = np.clip(tonal, 0.0, 1.0)
    dev_limit = max(PHASE_DEV_MAX, PHASE_DEV_FACTOR * float(np.median(phase_dev))) if phase_dev.size else PHASE_DEV_MAX
    valid = (tonal >= TONAL_MIN_FRACTION) & (cycles >= MIN_WINDOW_CYCLES) & (ay[:, 0] > 0) & (phase_dev <= dev_limit)
    harmonics = tuple(range(2, n_h + 1))
    below_nyquist = f_edges[:, None] * np.arange(2, n_h + 1) < NYQUIST_FRACTION * rec.fs
    ok = valid[:, None] & below_nyquist
    with np.errstate(divide="ignore", invalid="ignore"):
        lev = 20.0 * np.log10(ay[:, 1:] / ay[:, :1])
        flev = 20.0 * np.log10(af[:, 1:] / af[:, :1])
        floor = 20.0 * np.log10(resid[0] * _noise_amplitude_factor(seg) / ay[:, 0])
    lev = np.where(ok, np.maximum(lev, -300.0), np.nan)
    flev = np.where(ok, np.maximum(flev, -300.0), np.nan)
    floor = np.where(valid, np.maximum(floor, -300.0), np.nan)
    times = rec.t[starts] + half_s
    chirp = 2 * coef[:, 2] / (two_pi * half_s * half_s)  # d f0 / dt within each window
    rate = float(np.median(chirp[valid])) if valid.any() else 0.0
    # free vibrations: prominent lines in the residual, not negligible against the fundamental
    is_line = (
        (fits.line_prominence_db >= RINGING_PROMINENCE_DB)
        & (fits.line_amplitude >= 10 ** ((HARMONIC_DB - RINGING_MARGIN_DB) / 20) * ay[:, 0])
        & valid
    )
    ring = np.where(is_line, fits.line_hz, np.nan)
    f_low = np.minimum(np.abs(coef[:, 1] + 2 * coef[:, 2]), np.abs(coef[:, 1] - 2 * coef[:, 2])) / (two_pi * half_s)
    orders = np.arange(2, n_h + 1)
    lobe = 2.0 / (seg / rec.fs)  # half-width of the Hann-weighted fit's main lobe (Hz)
    lo_band = f_low[:, None] * orders - lobe
    hi_band = f_edges[:, None] * orders + lobe
    coincident = np.zeros(lev.shape, dtype=bool)
    for shift in range(-RINGING_NEIGHBOURS, RINGING_NEIGHBOURS + 1):
        other = np.full(ring.shape, np.nan)
        if shift >= 0:
            other[: ring.size - shift] = ring[shift:]
        else:
            other[-shift:] = ring[:shift]
        coincident |= (other[:, None] >= lo_band) & (other[:, None] <= hi_band)
    coincident &= ok
    return HarmonicAnalysis(
        time_s=np.asarray(times, dtype=np.float64),
        f0_hz=np.abs(f_centre),
        harmonics=harmonics,
        levels_db=lev,
        force_levels_db=flev,
        floor_db=floor,
        amplitude=ay[:, 0].copy(),
        tonal_fraction=tonal,
        valid=valid,
        window_s=seg / rec.fs,
        sweep_rate_hz_s=rate,
        ringing_hz=ring,
        coincident=coincident,
        channel=channel,
        unit=rec.unit(channel),
        record=rec.name,
    )


def _noise_amplitude_factor(seg: int) -> float:
    """rms amplitude a harmonic estimate gets from white noise of unit rms (Hann-weighted fit)."""
    w = np.hanning(seg + 2)[1:-1]
    # var(a_k) = var(b_k) ≈ σ² Σw² / (Σw/2)²; E[A²] = 2 var
    return math.sqrt(2.0 * float(w @ w) / (0.5 * float(w.sum())) ** 2)


def _window_var(y: FloatArray, starts: NDArray[np.intp], seg: int) -> FloatArray:
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(y * y)])
    s1 = c1[starts + seg] - c1[starts]
    s2 = c2[starts + seg] - c2[starts]
    return np.asarray(np.maximum(s2 / seg - (s1 / seg) ** 2, 0.0), dtype=np.float64)


# --------------------------------------------------------------------------- restoring force
def local_amplitude(y: ArrayLike) -> FloatArray:
    """Envelope (magnitude of the analytic signal) of a mean-free signal: its local amplitude.

    Within a few cycles of either end the envelope is less accurate (the FFT-based Hilbert transform
    treats the record as periodic).

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal.

    Returns
    -------
    (n,) ndarray
        Same unit as ``y``.
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8 or not np.isfinite(arr).all():
        raise DataValidationError(f"`y` must be a finite 1-D signal of at least 8 samples, got shape {arr.shape}")
    return np.asarray(np.abs(sp_signal.hilbert(arr - arr.mean())), dtype=np.float64)


def _with_va(rec: Record) -> Record:
    return rec if rec.v is not None and rec.a is not None else derive_missing(rec)


def restoring_force(
    rec: Record, *, mass: float | None = None, mass_terms: str | Sequence[str] = MASS_TERMS
) -> RestoringForce:
    """Restoring force ``f − m·ẍ``: what the spring and damper carry.

    Parameters
    ----------
    rec : Record
        Needs ``v`` and ``a`` (measured or derived, e.g. by ``signals.derive_missing``).
    mass : float or None
        Mass (force unit · s² / displacement unit). Default: ``m0`` of an equation-error fit of
        the terms ``mass_terms``.
    mass_terms : str or sequence of str
        Terms of the fit that estimates the mass when ``mass`` is None; must contain ``m0``. The
        default ``MASS_TERMS`` adds the common nonlinear terms to the linear ``m0,c1,k1``: on a
        nonlinear record the purely linear fit biases the mass (for the ``seed`` example it gives
        0.41 kg instead of 2 kg, which hides the cubic stiffness in the plot); pass ``"m0,c1,k1"``
        for the linear fit. If that fit finds no positive mass, the linear fit is tried, and
        failing that the mass is 0 (``mass_source`` says so).

    Returns
    -------
    RestoringForce

    Raises
    ------
    DataValidationError
        The record has no ``a`` or ``v`` channel.
    ModelSpecError
        ``mass`` is not a positive finite number.
    """
    rec = _check_record(rec)
    for c in ("a", "v"):
        if getattr(rec, c) is None:
            raise DataValidationError(
                f"restoring force needs `{c}` ({CHANNEL_LABELS[c]}); record `{rec.name}` has none:"
                " derive it first (signals.derive_missing)"
            )
    units = TermModel("m0").units(rec.unit("f"), rec.unit("x"))
    if mass is None:
        try:
            model = TermModel(mass_terms)
        except ModelSpecError as exc:
            raise ModelSpecError(f"`mass_terms`: {exc}") from None
        if "m0" not in model.terms:
            raise ModelSpecError(f"`mass_terms` must contain m0, got {', '.join(model.terms)}")
        m = float(equation_error(rec, model).values["m0"])
        source = f"m0 of an equation-error fit ({', '.join(model.terms)})"
        if not (math.isfinite(m) and m > 0) and model.terms != _LINEAR_TERMS:
            m = float(equation_error(rec, TermModel(_LINEAR_TERMS)).values["m0"])
            source = "m0 of a linear equation-error fit (m0, c1, k1)"
        if not (math.isfinite(m) and m > 0):
            m = 0.0
            source = "no positive mass fits the data (m0 = 0): the restoring force is the measured force"
    else:
        m = _check_positive("mass", mass, units["m0"])
        source = "given"
    force = rec.f - m * rec.channel("a")
    return RestoringForce(
        t=rec.t,
        x=rec.x,
        v=rec.channel("v"),
        force=np.asarray(force, dtype=np.float64),
        mass=m,
        mass_source=source,
        mass_unit=units["m0"],
        units={c: rec.unit(c) for c in ("t", "x", "v", "f")},
        record=rec.name,
    )


# --------------------------------------------------------------------------- model comparison
def _check_for(rec: Record, terms: tuple[str, ...], label: str) -> ModelCheck:
    model = TermModel(terms)
    fit = equation_error(rec, model)
    return ModelCheck(
        label=label,
        terms=model.terms,
        nrmse=float(fit.metrics[0].nrmse),
        values=fit.values,
        units=model.units(rec.unit("f"), rec.unit("x")),
    )


def linear_fit_check(rec: Record, *, candidates: Sequence[str] = DEFAULT_CANDIDATES) -> LinearCheck:
    """Fit the linear model and the linear model plus one nonlinear term each, by equation error.

    Parameters
    ----------
    rec : Record
        Missing ``v``, ``a`` are derived (Savitzky–Golay defaults) once for all fits.
    candidates : sequence of str
        Nonlinear terms tried one at a time on top of ``m0,c1,k1`` (default ``k3``, ``c2`` and ``k2``).

    Returns
    -------
    LinearCheck
        Force-residual NRMSE and coefficients of each model.
    """
    rec = _check_record(rec)
    if isinstance(candidates, str):
        candidates = (candidates,)
    terms = tuple(candidates)
    try:
        TermModel(tuple(t for t in terms if t not in _LINEAR_TERMS))
    except ModelSpecError as exc:
        raise ModelSpecError(f"`candidates`: {exc}") from None
    bad = [t for t in terms if t in _LINEAR_TERMS]
    if bad:
        raise ModelSpecError(f"`candidates` must be terms beyond m0, c1, k1, got {bad}")
    rd = _with_va(rec)
    linear = _check_for(rd, _LINEAR_TERMS, "linear")
    rows = tuple(_check_for(rd, (*_LINEAR_TERMS, t), f"linear + {t}") for t in terms)
    return LinearCheck(record=rec.name, linear=linear, candidates=rows)


# --------------------------------------------------------------------------- summary
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
            out.append(f"the linear model m0, c1, k1 explains the force to {_pct(lin)} (NRMSE)")
        elif tried:
            out.append(
                f"adding {tried} changes the linear model's force error little ({_pct(lin)} -> {_pct(best)} at best)"
            )
    for term, c in helpful:
        if term == "k3":
            k3 = float(c.values["k3"])
            kind = "hardening" if k3 > 0 else "softening"
            out.append(
                f"force–displacement loop bends: {kind} spring (k3 = {k3:.3g} {c.units['k3']}"
                f" {'>' if k3 > 0 else '<'} 0 in the linear + k3 fit)"
            )
    return out


def evidence_summary(
    rec: Record, *, harmonics: HarmonicAnalysis | None = None, check: LinearCheck | None = None
) -> tuple[str, ...]:
    """Short plain-language findings on the nonlinearity of a record, each backed by a number.

    Parameters
    ----------
    rec : Record
    harmonics : HarmonicAnalysis or None
        A harmonic analysis of ``rec`` already computed (default: :func:`harmonic_distortion`).
    check : LinearCheck or None
        A model comparison of ``rec`` already computed (default: :func:`linear_fit_check`).

    Returns
    -------
    tuple of str
        Findings on harmonics (threshold ``HARMONIC_DB``, held over ``SUSTAIN_WINDOWS`` windows; force
        distortion above ``FORCE_HARMONIC_DB``) and on the model comparison (a term counts when it
        lowers the force NRMSE by ``IMPROVEMENT_RATIO`` and ``MIN_IMPROVEMENT``; the sign of ``k3``
        names a hardening or softening spring).
    """
    rec = _check_record(rec)
    if harmonics is not None and not isinstance(harmonics, HarmonicAnalysis):
        raise ModelSpecError(f"`harmonics` must be a HarmonicAnalysis or None, got {type(harmonics).__name__}")
    if check is not None and not isinstance(check, LinearCheck):
        raise ModelSpecError(f"`check` must be a LinearCheck or None, got {type(check).__name__}")
    h = harmonics if harmonics is not None else harmonic_distortion(rec)
    chk = check if check is not None else linear_fit_check(rec)
    return (*_harmonic_findings(h), *_model_findings(chk))


# --------------------------------------------------------------------------- evidence across levels
@dataclass(frozen=True, kw_only=True)
class EquivalentLinear:
    """The linear model m0·ẍ + c1·ẋ + k1·x = f fitted (equation error) to one record.

    For a linear system these numbers do not depend on the excitation level; a
    nonlinear one shows them drifting (a hardening spring raises k1 and the
    natural frequency with amplitude, friction raises the damping at low levels).

    Attributes
    ----------
    record : str
    x_rms : float
        Displacement rms (the level), unit of x.
    m0, c1, k1 : float
        Equivalent linear coefficients.
    f_n_hz : float
        sqrt(k1/m0)/(2π), NaN when k1/m0 <= 0.
    zeta : float
        c1 / (2·sqrt(k1·m0)), NaN when undefined.
    nrmse : float
        Force residual rms / force std of the linear fit.
    units : mapping
        Unit per coefficient.
    x_unit : str
        Unit of displacement.
    """

    record: str
    x_rms: float
    m0: float
    c1: float
    k1: float
    f_n_hz: float
    zeta: float
    nrmse: float
    units: Mapping[str, str]
    x_unit: str = "m"


def equivalent_linear(records: Sequence[Record]) -> tuple[EquivalentLinear, ...]:
    """Equivalent linear parameters of each record (e.g. one per excitation level), sorted by level.

    Parameters
    ----------
    records : sequence of Record
        Records of one structure; missing v, a are derived (Savitzky-Golay).

    Returns
    -------
    tuple of EquivalentLinear
    """
    from .estimate import FitOptions, equation_error
    from .models import TermModel

    if not records:
        raise DataValidationError("`records` is empty")
    model = TermModel("m0,c1,k1")
    out = []
    for rec in records:
        rec = _check_record(rec, "records")
        full = _with_va(rec)
        params = model.default_parameters(force_unit=rec.unit("f"), x_unit=rec.unit("x")).update(
            "k1", lower=-math.inf)
        fit = equation_error(full, model, params, FitOptions(method="equation-error"))
        m0, c1, k1 = (fit.values[n] for n in ("m0", "c1", "k1"))
        ok = m0 > 0 and k1 > 0
        out.append(EquivalentLinear(
            record=rec.name, x_rms=float(np.sqrt(np.mean((rec.x - rec.x.mean()) ** 2))), m0=m0, c1=c1, k1=k1,
            f_n_hz=math.sqrt(k1 / m0) / (2 * math.pi) if ok else math.nan,
            zeta=c1 / (2 * math.sqrt(k1) * math.sqrt(m0)) if ok else math.nan,  # k1·m0 may underflow (1e-200 N)
            nrmse=fit.metrics[0].nrmse, units={e.name: e.unit for e in fit.estimates}, x_unit=rec.unit("x"),
        ))
    return tuple(sorted(out, key=lambda e: e.x_rms))


def level_drift_summary(levels: Sequence[EquivalentLinear]) -> tuple[str, ...]:
    """Plain-language reading of how the equivalent linear parameters change with level.

    Parameters
    ----------
    levels : sequence of EquivalentLinear
        From :func:`equivalent_linear`, sorted by level.
    """
    if len(levels) < 2:
        return ("load records at two or more excitation levels to see whether the equivalent linear"
                " parameters drift",)
    lo, hi = levels[0], levels[-1]
    out: list[str] = []
    if math.isfinite(lo.f_n_hz) and math.isfinite(hi.f_n_hz):
        shift = hi.f_n_hz / lo.f_n_hz - 1
        if abs(shift) > LEVEL_DRIFT:
            kind = "hardening (k3 > 0 likely)" if shift > 0 else "softening (k3 < 0 or a gap likely)"
            out.append(f"the equivalent natural frequency moves by {100 * shift:+.1f} % from the lowest to the"
                       f" highest level ({lo.f_n_hz:.3g} -> {hi.f_n_hz:.3g} Hz): {kind}")
        else:
            out.append(f"the equivalent natural frequency stays within {100 * LEVEL_DRIFT:.0f} % across levels"
                       f" ({lo.f_n_hz:.3g} -> {hi.f_n_hz:.3g} Hz)")
    if math.isfinite(lo.zeta) and math.isfinite(hi.zeta) and lo.zeta > 0:
        change = hi.zeta / lo.zeta - 1
        if abs(change) > 2 * LEVEL_DRIFT:
            why = ("damping grows with amplitude: quadratic damping (c2) likely" if change > 0 else
                   "damping falls with amplitude: Coulomb friction (fc) likely")
            out.append(f"the equivalent damping ratio changes by {100 * change:+.0f} % ({lo.zeta:.3g} ->"
                       f" {hi.zeta:.3g}): {why}")
    return tuple(out)


#: Relative change of the equivalent natural frequency across levels counted as a drift.
LEVEL_DRIFT = 0.02


@dataclass(frozen=True, kw_only=True)
class IntermodulationLine:
    """One combination frequency p·f1 + q·f2 of a two-tone test and its level.

    Attributes
    ----------
    p, q : int
    freq_hz : float
    level_db : float
        Amplitude of x at that frequency relative to the larger of the two tones (dB).
    """

    p: int
    q: int
    freq_hz: float
    level_db: float


def two_tone_products(rec: Record, f1_hz: float, f2_hz: float, *, order: int = 3) -> tuple[IntermodulationLine, ...]:
    """Levels of the sum and difference frequencies p·f1 + q·f2 (|p| + |q| <= order) in x.

    A linear system answers a two-tone force only at f1 and f2; a nonlinear one
    adds harmonics and intermodulation products (2·f1 − f2, f1 + f2, ...).

    Parameters
    ----------
    rec : Record
        Steady-state record under a two-tone force.
    f1_hz, f2_hz : float, Hz
        The two excitation frequencies.
    order : int
        Highest |p| + |q| considered (2 to 7).
    """
    rec = _check_record(rec)
    f1 = _check_positive("f1_hz", f1_hz, "Hz")
    f2 = _check_positive("f2_hz", f2_hz, "Hz")
    order = _check_int("order", order, 2, 7)
    x = rec.x - np.mean(rec.x)
    n = x.size
    win = np.hanning(n)
    spec = np.abs(np.fft.rfft(x * win)) * 2 / win.sum()
    freq = np.fft.rfftfreq(n, rec.dt)

    def amp(f: float) -> float:
        k = int(round(f / (freq[1] - freq[0])))
        lo, hi = max(k - 2, 0), min(k + 3, spec.size)
        return float(spec[lo:hi].max()) if lo < hi else 0.0

    ref = max(amp(f1), amp(f2), 1e-300)
    out: list[IntermodulationLine] = []
    nyq = 0.5 * rec.fs
    for p in range(-order, order + 1):
        for q in range(-order, order + 1):
            if (p, q) in ((1, 0), (0, 1)) or abs(p) + abs(q) > order or abs(p) + abs(q) < 2:
                continue
            f = p * f1 + q * f2
            if f <= 0 or f >= nyq:
                continue
            if any(line.freq_hz == f for line in out):
                continue
            out.append(IntermodulationLine(p=p, q=q, freq_hz=f, level_db=20 * math.log10(max(amp(f), 1e-300) / ref)))
    return tuple(sorted(out, key=lambda line: line.freq_hz))


@dataclass(frozen=True, kw_only=True)
class RestoringSurface:
    """Restoring force averaged over a grid of (x, ẋ) cells (NaN where no sample falls).

    Attributes
    ----------
    x_centers, v_centers : (nx,), (nv,) ndarray
    force : (nv, nx) ndarray
        Mean restoring force per cell, unit of f.
    count : (nv, nx) ndarray
        Samples per cell.
    units : mapping
    """

    x_centers: FloatArray
    v_centers: FloatArray
    force: FloatArray
    count: NDArray[np.int64]
    units: Mapping[str, str]


def restoring_surface(rf: RestoringForce, *, nx: int = 25, nv: int = 25) -> RestoringSurface:
    """Bin the restoring force of ``rf`` on an ``nx`` × ``nv`` grid over the (x, ẋ) range it covers.

    Parameters
    ----------
    rf : RestoringForce
        From :func:`restoring_force`.
    nx, nv : int
        Cells along x and ẋ (5 to 200).
    """
    nx = _check_int("nx", nx, 5, 200)
    nv = _check_int("nv", nv, 5, 200)
    xe = np.linspace(float(rf.x.min()), float(rf.x.max()), nx + 1)
    ve = np.linspace(float(rf.v.min()), float(rf.v.max()), nv + 1)
    total, _, _ = np.histogram2d(rf.v, rf.x, bins=(ve, xe), weights=rf.force)
    count, _, _ = np.histogram2d(rf.v, rf.x, bins=(ve, xe))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return RestoringSurface(x_centers=0.5 * (xe[1:] + xe[:-1]), v_centers=0.5 * (ve[1:] + ve[:-1]), force=mean,
                            count=count.astype(np.int64), units=dict(rf.units))
