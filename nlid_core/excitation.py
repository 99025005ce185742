r"""Excitation signals for identification tests.

The force drives what an identification can see, so the design follows the
regimes of a single-DOF oscillator (seed 000/001 of the project):

* a **chirp** sweeps through the stiffness-dominated (below resonance),
  damping-dominated (at resonance) and inertia-dominated (above resonance)
  regimes in one record: :func:`linear_chirp` (the phase law of
  :func:`nlid_core.examples.chirp_force`) and :func:`log_chirp` (exponential
  sweep, equal time per octave);
* a **multisine** with Schroeder phases puts equal power on every line of a
  band with a low crest factor (≈ 1.6–1.7 for a low-pass band), so the test
  reaches a high rms force without large peaks, and it is exactly periodic,
  so periods can be averaged and compared (:func:`schroeder_multisine`);
* a **stepped sine** dwells at single frequencies, the cleanest view of
  harmonics and of the response amplitude at each frequency
  (:func:`stepped_sine`);
* **stepped amplitude** repeats one excitation at several levels, which
  reveals amplitude dependence (a linear system scales, a nonlinear one does
  not): :func:`stepped_amplitude`.

Every generator returns a frozen :class:`Excitation` (time, force, sampling
rate, kind and the design values in ``settings``). Samples lie on
``t = i / fs_hz`` for ``i = 0 .. n - 1`` with ``n = round(duration_s · fs_hz)``
(a shaker controller plays them at ``fs_hz``). Design limits, checked with a
:class:`~nlid_core.errors.ModelSpecError` naming the argument: at least
``MIN_SAMPLES`` samples, and the band below the Nyquist frequency divided by
``NYQUIST_MARGIN`` (at least 10 samples per cycle at the top of the band), so
that the simulator's cubic input reconstruction and derivative estimates from
the sampled response stay accurate.

``EXCITATIONS`` maps each ``kind`` to its generator; :func:`make_excitation`
dispatches by name with the settings as a mapping (for configuration files
and dashboards).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int, check_positive
from .errors import ModelSpecError

__all__ = [
    "MIN_SAMPLES",
    "NYQUIST_MARGIN",
    "PHASE_LAWS",
    "EXCITATIONS",
    "Excitation",
    "crest_factor",
    "linear_chirp",
    "log_chirp",
    "schroeder_multisine",
    "stepped_sine",
    "stepped_amplitude",
    "make_excitation",
]

FloatArray = NDArray[np.float64]

#: Fewest samples an excitation may have.
MIN_SAMPLES = 100
#: The highest excited frequency must not exceed ``fs_hz / 2 / NYQUIST_MARGIN`` (Nyquist / 2.5,
#: i.e. at least 10 samples per cycle).
NYQUIST_MARGIN = 2.5
#: Phase laws of :func:`schroeder_multisine`.
PHASE_LAWS: tuple[str, ...] = ("schroeder", "random")
#: Power fractions bounding :attr:`Excitation.band_hz` when the settings hold no design band.
_BAND_FRACTIONS = (0.005, 0.995)
#: Tolerated deviation of a time step from ``1 / fs_hz`` (relative).
_UNIFORM_RTOL = 1e-3


# --------------------------------------------------------------------------- the result type


def crest_factor(y: ArrayLike) -> float:
    """Crest factor ``max|y| / rms(y)`` of a signal.

    A sine has √2 ≈ 1.414, a Schroeder multisine ≈ 1.6–1.9, Gaussian noise ≈ 3–4.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit; the ratio is dimensionless). Must be 1-D, non-empty and finite.

    Returns
    -------
    float
        The crest factor (dimensionless); NaN when ``y`` is identically zero.

    Raises
    ------
    ModelSpecError
        ``y`` is not a non-empty, finite 1-D array.
    """
    arr = _as_signal("y", y)
    rms = float(np.sqrt(np.mean(arr * arr)))
    if rms == 0.0:
        return math.nan
    return float(np.max(np.abs(arr))) / rms


@dataclass(frozen=True, kw_only=True)
class Excitation:
    """A sampled force signal designed for an identification test.

    Attributes
    ----------
    t_s : (n,) ndarray, s
        Sample times, uniform with step ``1 / fs_hz`` (within 1e-3 relative).
    force : (n,) ndarray, N
        Force at the samples.
    fs_hz : float, Hz
        Sampling rate.
    kind : str
        Generator name (a key of ``EXCITATIONS``), or ``"custom"``.
    settings : mapping
        Design values: the generator's arguments (with durations as realised on the sample grid)
        and derived values such as ``band_hz`` (Hz) or the level boundaries of a stepped amplitude.
        Freezing is shallow: the mapping is a private copy but not locked.
    description : str
        One line for reports.

    Raises
    ------
    ModelSpecError
        The arrays differ in length, have fewer than 2 samples, are not finite, or the time step does
        not match ``fs_hz``.
    """

    t_s: FloatArray
    force: FloatArray
    fs_hz: float
    kind: str = "custom"
    settings: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        fs = check_positive("fs_hz", self.fs_hz, "Hz")
        t = _as_signal("t_s", self.t_s)
        f = _as_signal("force", self.force)
        if t.size != f.size:
            raise ModelSpecError(f"`t_s` and `force` must have one length; got {t.size} and {f.size}")
        if t.size < 2:
            raise ModelSpecError(f"`t_s` must hold at least 2 samples, got {t.size}")
        steps = np.diff(t)
        if not np.all(np.abs(steps * fs - 1.0) <= _UNIFORM_RTOL):
            raise ModelSpecError(
                f"`t_s` must be uniform with step 1/fs_hz = {1.0 / fs:.6g} s; steps range "
                f"{float(steps.min()):.6g}..{float(steps.max()):.6g} s"
            )
        object.__setattr__(self, "fs_hz", fs)
        object.__setattr__(self, "t_s", t)
        object.__setattr__(self, "force", f)
        object.__setattr__(self, "kind", str(self.kind))
        object.__setattr__(self, "settings", dict(self.settings))

    @property
    def n_samples(self) -> int:
        """Number of samples."""
        return int(self.force.size)

    @property
    def duration_s(self) -> float:
        """Duration played at ``fs_hz``: ``n / fs_hz`` (s)."""
        return self.n_samples / self.fs_hz

    @property
    def rms(self) -> float:
        """Root mean square of the force (N)."""
        return float(np.sqrt(np.mean(self.force * self.force)))

    @property
    def peak(self) -> float:
        """Largest absolute force (N)."""
        return float(np.max(np.abs(self.force)))

    @property
    def crest_factor(self) -> float:
        """``peak / rms`` (dimensionless; NaN for a zero force)."""
        return crest_factor(self.force)

    @property
    def band_hz(self) -> tuple[float, float]:
        """Excited band ``(f_lo, f_hi)`` in Hz.

        The design band from ``settings["band_hz"]`` when a generator recorded it; otherwise the band
        holding 0.5 %..99.5 % of the force power above 0 Hz (periodogram of the whole signal).
        """
        band = self.settings.get("band_hz")
        if band is not None:
            lo, hi = band
            return float(lo), float(hi)
        freq, amp = self.spectrum()
        power = amp[1:] ** 2
        total = float(power.sum())
        if total == 0.0:
            return 0.0, 0.0
        cum = np.cumsum(power) / total
        lo_i = int(np.searchsorted(cum, _BAND_FRACTIONS[0]))
        hi_i = min(int(np.searchsorted(cum, _BAND_FRACTIONS[1])), power.size - 1)
        return float(freq[1 + lo_i]), float(freq[1 + hi_i])

    def spectrum(self) -> tuple[FloatArray, FloatArray]:
        """Single-sided amplitude spectrum of the force (rfft, no window).

        Returns
        -------
        freq_hz : (n // 2 + 1,) ndarray, Hz
            Frequencies ``k · fs_hz / n``.
        amplitude : (n // 2 + 1,) ndarray, N
            ``|X_k| · 2 / n`` (DC and the Nyquist bin not doubled): a sine of amplitude A on a bin
            shows A at that bin.
        """
        n = self.n_samples
        amp = np.abs(np.fft.rfft(self.force)) / n
        stop = amp.size - 1 if n % 2 == 0 else amp.size
        amp[1:stop] *= 2.0
        freq = np.fft.rfftfreq(n, 1.0 / self.fs_hz)
        return freq.astype(np.float64), amp.astype(np.float64)

    def to_frame(self) -> pd.DataFrame:
        """The signal as a DataFrame with columns ``t`` (s) and ``f`` (N), e.g. for CSV export."""
        return pd.DataFrame({"t": self.t_s.copy(), "f": self.force.copy()})


# --------------------------------------------------------------------------- generators


def linear_chirp(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float,
    duration_s: float,
    fs_hz: float,
    taper_s: float = 0.0,
) -> Excitation:
    """Linear sweep ``A·sin(2π(f0·t + (f1 − f0)·t²/(2T)))`` with an optional cosine fade-in/out.

    The phase law is that of :func:`nlid_core.examples.chirp_force`: the instantaneous frequency
    rises linearly from ``f0_hz`` at t = 0 to ``f1_hz`` at t = ``duration_s``, so equal time is
    spent per hertz (most of it above resonance when the band is wide).

    Parameters
    ----------
    f0_hz : float, Hz
        Start frequency (>= 0).
    f1_hz : float, Hz
        End frequency (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float, N
        Peak amplitude ``A`` (> 0).
    duration_s : float, s
        Sweep duration ``T``; ``n = round(duration_s · fs_hz)`` samples at ``t = i / fs_hz``.
    fs_hz : float, Hz
        Sampling rate.
    taper_s : float, s
        Length of the raised-cosine fade-in at the start and fade-out at the end (0: none; at most
        ``duration_s / 2``). With a taper the first and last samples are 0.

    Returns
    -------
    Excitation
        ``kind="linear_chirp"``; ``settings`` holds the arguments and ``band_hz = (f0_hz, f1_hz)``.

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs, duration, n, t = _grid(fs_hz, duration_s)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=True)
    amp = check_positive("amplitude_n", amplitude_n, "N")
    taper = _check_taper("taper_s", taper_s, duration)
    phase = 2.0 * np.pi * (f0 * t + 0.5 * (f1 - f0) / duration * t * t)
    force = amp * np.sin(phase) * _taper_window(n, round(taper * fs))
    settings = {"f0_hz": f0, "f1_hz": f1, "amplitude_n": amp, "duration_s": duration, "fs_hz": fs,
                "taper_s": taper, "band_hz": (f0, f1)}
    return Excitation(t_s=t, force=force, fs_hz=fs, kind="linear_chirp", settings=settings,
                      description=f"linear chirp {amp:g} N, {f0:g}->{f1:g} Hz over {duration:g} s")


def log_chirp(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float,
    duration_s: float,
    fs_hz: float,
    taper_s: float = 0.0,
) -> Excitation:
    """Exponential sweep: instantaneous frequency ``f0·r^(t/T)`` with ``r = f1/f0``.

    The phase is ``2π·f0·T/ln r·(r^(t/T) − 1)``, so the sweep spends equal time per octave
    (``T / log2 r``): a wide band is covered with as much time below resonance (stiffness
    regime) as above it (inertia regime).

    Parameters
    ----------
    f0_hz : float, Hz
        Start frequency (> 0).
    f1_hz : float, Hz
        End frequency (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float, N
        Peak amplitude (> 0).
    duration_s : float, s
        Sweep duration ``T``; ``n = round(duration_s · fs_hz)`` samples at ``t = i / fs_hz``.
    fs_hz : float, Hz
        Sampling rate.
    taper_s : float, s
        Length of the raised-cosine fade-in and fade-out (0: none; at most ``duration_s / 2``).

    Returns
    -------
    Excitation
        ``kind="log_chirp"``; ``settings`` holds the arguments, ``band_hz``, ``octaves`` and
        ``s_per_octave`` (s).

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs, duration, n, t = _grid(fs_hz, duration_s)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=False)
    amp = check_positive("amplitude_n", amplitude_n, "N")
    taper = _check_taper("taper_s", taper_s, duration)
    log_r = math.log(f1 / f0)
    phase = 2.0 * np.pi * f0 * duration / log_r * np.expm1(log_r * t / duration)
    force = amp * np.sin(phase) * _taper_window(n, round(taper * fs))
    octaves = math.log2(f1 / f0)
    settings = {"f0_hz": f0, "f1_hz": f1, "amplitude_n": amp, "duration_s": duration, "fs_hz": fs,
                "taper_s": taper, "band_hz": (f0, f1), "octaves": octaves, "s_per_octave": duration / octaves}
    return Excitation(t_s=t, force=force, fs_hz=fs, kind="log_chirp", settings=settings,
                      description=f"log chirp {amp:g} N, {f0:g}->{f1:g} Hz over {duration:g} s "
                                  f"({duration / octaves:.3g} s per octave)")


def schroeder_multisine(
    f0_hz: float,
    f1_hz: float,
    *,
    amplitude_n: float | None = None,
    rms_n: float | None = None,
    duration_s: float,
    fs_hz: float,
    periods: int = 1,
    odd_only: bool = False,
    phases: str = "schroeder",
    rng: int | np.random.Generator | None = None,
) -> Excitation:
    """Periodic multisine with equal-amplitude lines in ``[f0_hz, f1_hz]`` and Schroeder phases.

    One period has ``N = round(duration_s · fs_hz / periods)`` samples, so its lines lie on the
    grid ``k · df`` with ``df = fs_hz / N``. Every grid line ``k ≥ 1`` with ``f0_hz ≤ k·df ≤ f1_hz``
    (only odd ``k`` when ``odd_only``) gets the amplitude ``rms·√(2/K)`` (K lines) and the phase
    ``φ_j = −π·j·(j − 1)/K`` of its index ``j = 1..K`` among the excited lines (Schroeder): the
    signal sweeps the band once per period like a chirp, with a crest factor of about 1.6–1.7 when
    the band starts near ``df`` (about 1.9 for a band-pass, e.g. lines 10..109), against about 3
    for ``phases="random"``, which draws the phases uniformly from ``[0, 2π)``. One period is
    synthesised by an inverse FFT and repeated ``periods`` times, so the signal is exactly periodic
    with all of its power on the excited lines. The response needs time to reach steady state:
    discard the first period(s) before averaging.

    Parameters
    ----------
    f0_hz : float, Hz
        Lower band edge (>= 0).
    f1_hz : float, Hz
        Upper band edge (> ``f0_hz``, at most ``fs_hz / 5``).
    amplitude_n : float or None, N
        The **rms** force (> 0), not the peak (the peak is ``crest_factor · rms``). Give this or
        ``rms_n``, not both.
    rms_n : float or None, N
        Same as ``amplitude_n`` under an explicit name.
    duration_s : float, s
        Total duration (``periods`` periods), rounded to whole samples per period.
    fs_hz : float, Hz
        Sampling rate.
    periods : int
        Number of identical periods (>= 1).
    odd_only : bool
        Excite only odd lines (odd multiples of ``df``); the even lines then show even-order
        nonlinear distortion in the response.
    phases : {"schroeder", "random"}
        Phase law.
    rng : int, numpy.random.Generator or None
        Seed or generator for ``phases="random"`` (None: fresh entropy); unused for Schroeder phases.

    Returns
    -------
    Excitation
        ``kind="schroeder_multisine"``; ``settings`` holds the arguments (``rms_n``, the realised
        ``duration_s``, ``rng`` when it is an int seed) and ``band_hz`` (first and last line, Hz),
        ``n_lines``, ``df_hz`` (Hz), ``period_s`` (s), ``period_samples``, ``crest_factor``.

    Raises
    ------
    ModelSpecError
        A setting is out of range or no grid line falls in the band (the message names it).
    """
    fs = check_positive("fs_hz", fs_hz, "Hz")
    check_positive("duration_s", duration_s, "s")
    n_periods = check_int("periods", periods, 1)
    rms = _one_amplitude(amplitude_n, rms_n)
    f0, f1 = _band(f0_hz, f1_hz, fs, allow_zero=True)
    if not isinstance(odd_only, (bool, np.bool_)):
        raise ModelSpecError(f"`odd_only` must be True or False, got {odd_only!r}")
    if phases not in PHASE_LAWS:
        raise ModelSpecError(f"`phases` must be one of {', '.join(PHASE_LAWS)}; got {phases!r}")
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer, np.random.Generator))):
        raise ModelSpecError(f"`rng` must be an int seed, a numpy Generator or None; got {rng!r}")
    n_period = round(float(duration_s) * fs / n_periods)
    n = n_period * n_periods
    if n < MIN_SAMPLES:
        raise ModelSpecError(
            f"`duration_s` · `fs_hz` must give at least {MIN_SAMPLES} samples; got {n} "
            f"({n_periods} period(s) of {n_period})"
        )
    df = fs / n_period
    k = np.arange(max(1, math.ceil(f0 / df - 1e-9)), math.floor(f1 / df + 1e-9) + 1)
    if odd_only:
        k = k[k % 2 == 1]
    n_lines = int(k.size)
    if n_lines == 0:
        raise ModelSpecError(
            f"no line of the period's frequency grid (df = fs_hz·periods/(duration_s·fs_hz) = {df:.6g} Hz"
            f"{', odd lines only' if odd_only else ''}) lies in [`f0_hz`, `f1_hz`] = [{f0:g}, {f1:g}] Hz; "
            "widen the band or lengthen `duration_s` per period"
        )
    if phases == "schroeder":
        j = np.arange(1, n_lines + 1, dtype=np.float64)
        phi = -np.pi * j * (j - 1.0) / n_lines
    else:
        phi = np.random.default_rng(rng).uniform(0.0, 2.0 * np.pi, n_lines)
    line_amp = rms * math.sqrt(2.0 / n_lines)
    spec = np.zeros(n_period // 2 + 1, dtype=np.complex128)
    spec[k] = 0.5 * n_period * line_amp * np.exp(1j * phi)
    one = np.fft.irfft(spec, n_period)
    force = np.tile(one, n_periods)
    t = np.arange(n, dtype=np.float64) / fs
    band = (float(k[0] * df), float(k[-1] * df))
    cf = crest_factor(force)
    settings: dict[str, Any] = {
        "f0_hz": f0, "f1_hz": f1, "rms_n": rms, "duration_s": n / fs, "fs_hz": fs, "periods": n_periods,
        "odd_only": bool(odd_only), "phases": phases,
        "rng": int(rng) if isinstance(rng, (int, np.integer)) else None,
        "band_hz": band, "n_lines": n_lines, "df_hz": df, "period_s": n_period / fs,
        "period_samples": n_period, "crest_factor": cf,
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="schroeder_multisine", settings=settings,
        description=(f"{phases} multisine {rms:g} N rms, {n_lines} {'odd ' if odd_only else ''}lines "
                     f"{band[0]:g}-{band[1]:g} Hz, {n_periods} x {n_period / fs:g} s, crest factor {cf:.2f}"),
    )


def stepped_sine(
    frequencies_hz: Sequence[float] | ArrayLike,
    *,
    amplitude_n: float,
    dwell_s: float,
    fs_hz: float,
    ramp_s: float | None = None,
) -> Excitation:
    """Consecutive constant-frequency sines, phase-continuous from one frequency to the next.

    Segment ``j`` lasts ``dwell = round(dwell_s · fs_hz) / fs_hz`` and has the frequency
    ``frequencies_hz[j]``; the phase is integrated through the steps, so the force is continuous
    (only its slope changes at a step). The whole signal fades in and out over ``ramp_s`` with a
    raised cosine, so it starts and ends at zero force. Each dwell should be long enough for the
    response transient after a step to decay before the part that is analysed.

    Parameters
    ----------
    frequencies_hz : sequence of float, Hz
        Frequency of each dwell, in playing order (each > 0 and at most ``fs_hz / 5``; repeats and
        descending orders are allowed).
    amplitude_n : float, N
        Peak amplitude (> 0).
    dwell_s : float, s
        Duration of each segment (at least one cycle of the lowest frequency).
    fs_hz : float, Hz
        Sampling rate.
    ramp_s : float or None, s
        Fade-in at the start and fade-out at the end (0: none; at most ``dwell_s / 2``); default
        ``dwell_s / 10``.

    Returns
    -------
    Excitation
        ``kind="stepped_sine"``; ``settings`` holds the arguments (``dwell_s`` and ``ramp_s`` as
        realised), ``band_hz`` (lowest, highest frequency) and ``segment_starts_s`` (s).

    Raises
    ------
    ModelSpecError
        A setting is out of range (the message names it).
    """
    fs = check_positive("fs_hz", fs_hz, "Hz")
    amp = check_positive("amplitude_n", amplitude_n, "N")
    dwell_req = check_positive("dwell_s", dwell_s, "s")
    freqs = _as_frequencies(frequencies_hz, fs)
    n_dwell = round(dwell_req * fs)
    dwell = n_dwell / fs
    if n_dwell < 1 or dwell * float(freqs.min()) < 1.0:
        raise ModelSpecError(
            f"`dwell_s` = {dwell_req:g} s must hold at least one cycle of the lowest frequency "
            f"({float(freqs.min()):g} Hz)"
        )
    n = n_dwell * freqs.size
    if n < MIN_SAMPLES:
        raise ModelSpecError(
            f"`dwell_s` · `fs_hz` · len(`frequencies_hz`) must give at least {MIN_SAMPLES} samples; got {n}"
        )
    ramp = dwell / 10.0 if ramp_s is None else _check_taper("ramp_s", ramp_s, dwell)
    n_ramp = round(ramp * fs)
    t = np.arange(n, dtype=np.float64) / fs
    seg = np.arange(n) // n_dwell
    start_phase = 2.0 * np.pi * dwell * np.concatenate(([0.0], np.cumsum(freqs)[:-1]))
    phase = start_phase[seg] + 2.0 * np.pi * freqs[seg] * (t - seg * dwell)
    force = amp * np.sin(phase) * _taper_window(n, n_ramp)
    f_list = tuple(float(f) for f in freqs)
    settings: dict[str, Any] = {
        "frequencies_hz": f_list, "amplitude_n": amp, "dwell_s": dwell, "fs_hz": fs, "ramp_s": n_ramp / fs,
        "band_hz": (min(f_list), max(f_list)),
        "segment_starts_s": tuple(float(j * dwell) for j in range(freqs.size)),
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="stepped_sine", settings=settings,
        description=(f"stepped sine {amp:g} N, {len(f_list)} steps {min(f_list):g}-{max(f_list):g} Hz, "
                     f"{dwell:g} s each"),
    )


def stepped_amplitude(
    base: Excitation,
    levels: Sequence[float] | ArrayLike,
    *,
    pause_s: float | None = None,
) -> Excitation:
    """The same excitation repeated at several amplitude multipliers, with zero-force pauses.

    The result is ``levels[0]·base, pause, levels[1]·base, pause, …, levels[-1]·base`` at the base's
    sampling rate. A linear system's response scales with the level; a nonlinear one changes shape
    (resonance shift, harmonics), which is what the test is for. The pause lets the response ring
    down between levels; use a base that starts and ends at zero force (a taper or ramp) so that
    the transitions are smooth.

    Parameters
    ----------
    base : Excitation
        The excitation to repeat.
    levels : sequence of float
        Amplitude multipliers (dimensionless, each > 0, at least one), in playing order.
    pause_s : float or None, s
        Zero-force pause between consecutive levels (>= 0; none after the last); default a tenth of
        the base's duration.

    Returns
    -------
    Excitation
        ``kind="stepped_amplitude"``; ``settings`` holds ``levels``, ``pause_s`` (as realised),
        ``base_kind``, ``base_settings``, ``band_hz`` (the base's), ``level_slices`` (``(start,
        stop)`` sample indices of each level) and ``level_bounds_s`` (``(start, end)`` times, s).

    Raises
    ------
    ModelSpecError
        ``base`` is not an Excitation, or a level or the pause is out of range.
    """
    if not isinstance(base, Excitation):
        raise ModelSpecError(f"`base` must be an Excitation, got {type(base).__name__}")
    lv = _as_levels(levels)
    fs = base.fs_hz
    pause = base.duration_s / 10.0 if pause_s is None else _check_nonnegative("pause_s", pause_s, "s")
    n_pause = round(pause * fs)
    n_base = base.n_samples
    pieces: list[FloatArray] = []
    slices: list[tuple[int, int]] = []
    start = 0
    for i, level in enumerate(lv):
        if i:
            pieces.append(np.zeros(n_pause))
            start += n_pause
        pieces.append(level * base.force)
        slices.append((start, start + n_base))
        start += n_base
    force = np.concatenate(pieces)
    t = np.arange(force.size, dtype=np.float64) / fs
    level_list = tuple(float(v) for v in lv)
    settings: dict[str, Any] = {
        "levels": level_list, "pause_s": n_pause / fs, "base_kind": base.kind,
        "base_settings": dict(base.settings), "band_hz": base.band_hz,
        "level_slices": tuple(slices),
        "level_bounds_s": tuple((a / fs, b / fs) for a, b in slices),
    }
    return Excitation(
        t_s=t, force=force, fs_hz=fs, kind="stepped_amplitude", settings=settings,
        description=(f"{base.description or base.kind} at levels "
                     f"{', '.join(f'{v:g}' for v in level_list)} with {n_pause / fs:g} s pauses"),
    )


EXCITATIONS: Mapping[str, Callable[..., Excitation]] = {
    "linear_chirp": linear_chirp,
    "log_chirp": log_chirp,
    "schroeder_multisine": schroeder_multisine,
    "stepped_sine": stepped_sine,
    "stepped_amplitude": stepped_amplitude,
}


def make_excitation(kind: str, settings: Mapping[str, object] | None = None) -> Excitation:
    """Build an excitation by generator name.

    Parameters
    ----------
    kind : str
        A key of ``EXCITATIONS``: ``linear_chirp``, ``log_chirp``, ``schroeder_multisine``,
        ``stepped_sine`` or ``stepped_amplitude``.
    settings : mapping or None
        The generator's arguments by name (units as in the generator, e.g. ``f0_hz`` in Hz,
        ``amplitude_n`` in N, ``duration_s`` in s). For ``stepped_amplitude``, ``base`` may be an
        Excitation or a mapping ``{"kind": ..., "settings": {...}}`` built by this function.

    Returns
    -------
    Excitation

    Raises
    ------
    ModelSpecError
        Unknown ``kind`` (the message lists the valid ones), unknown or missing settings (named, with
        the valid ones), or a setting out of range.
    """
    if not isinstance(kind, str) or kind not in EXCITATIONS:
        raise ModelSpecError(f"unknown excitation `kind` {kind!r}; valid kinds are {', '.join(EXCITATIONS)}")
    if settings is not None and not isinstance(settings, Mapping):
        raise ModelSpecError(f"`settings` must be a mapping of argument names to values, got {type(settings).__name__}")
    values = dict(settings or {})
    generator = EXCITATIONS[kind]
    params = inspect.signature(generator).parameters
    unknown = sorted(set(values) - set(params))
    if unknown:
        raise ModelSpecError(
            f"unknown `settings` for {kind}: {', '.join(unknown)}; valid settings are {', '.join(params)}"
        )
    missing = [name for name, p in params.items() if p.default is inspect.Parameter.empty and name not in values]
    if missing:
        raise ModelSpecError(f"missing `settings` for {kind}: {', '.join(missing)}")
    if kind == "stepped_amplitude" and isinstance(values["base"], Mapping):
        base_spec = values["base"]
        extra = sorted(set(base_spec) - {"kind", "settings"})
        if "kind" not in base_spec or extra:
            raise ModelSpecError("`base` as a mapping must have the keys `kind` and optionally `settings`")
        base_settings = base_spec.get("settings")
        if base_settings is not None and not isinstance(base_settings, Mapping):
            raise ModelSpecError("`base` settings must be a mapping")
        values["base"] = make_excitation(str(base_spec["kind"]), base_settings)
    return generator(**values)


# --------------------------------------------------------------------------- helpers


def _as_signal(name: str, value: ArrayLike) -> FloatArray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a 1-D array of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ModelSpecError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelSpecError(f"`{name}` has non-finite values at index {int(np.flatnonzero(~np.isfinite(arr))[0])}")
    return arr


def _check_nonnegative(name: str, value: Any, unit: str) -> float:
    try:
        val = float(value)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{name}` must be a number >= 0 ({unit}), got {value!r}") from None
    if not (math.isfinite(val) and val >= 0):
        raise ModelSpecError(f"`{name}` must be a finite number >= 0 ({unit}), got {value!r}")
    return val


def _grid(fs_hz: Any, duration_s: Any) -> tuple[float, float, int, FloatArray]:
    """(fs, duration, n, t) with ``n = round(duration·fs)`` >= MIN_SAMPLES samples at ``i / fs``."""
    fs = check_positive("fs_hz", fs_hz, "Hz")
    duration = check_positive("duration_s", duration_s, "s")
    n = round(duration * fs)
    if n < MIN_SAMPLES:
        raise ModelSpecError(f"`duration_s` · `fs_hz` must give at least {MIN_SAMPLES} samples; got {n}")
    return fs, duration, n, np.arange(n, dtype=np.float64) / fs


def _max_frequency(fs: float) -> float:
    return fs / 2.0 / NYQUIST_MARGIN


def _band(f0_hz: Any, f1_hz: Any, fs: float, *, allow_zero: bool) -> tuple[float, float]:
    f0 = _check_nonnegative("f0_hz", f0_hz, "Hz") if allow_zero else check_positive("f0_hz", f0_hz, "Hz")
    f1 = check_positive("f1_hz", f1_hz, "Hz")
    if not f1 > f0:
        raise ModelSpecError(f"`f1_hz` ({f1:g} Hz) must be above `f0_hz` ({f0:g} Hz)")
    f_max = _max_frequency(fs)
    if f1 > f_max * (1 + 1e-12):
        raise ModelSpecError(
            f"`f1_hz` = {f1:g} Hz is above fs_hz/{2 * NYQUIST_MARGIN:g} = {f_max:g} Hz (Nyquist/{NYQUIST_MARGIN:g}); "
            "raise `fs_hz` or lower `f1_hz`"
        )
    return f0, f1


def _check_taper(name: str, value: Any, span_s: float) -> float:
    taper = _check_nonnegative(name, value, "s")
    if taper > span_s / 2.0:
        raise ModelSpecError(f"`{name}` = {taper:g} s must be at most half of {span_s:g} s")
    return taper


def _taper_window(n: int, n_ramp: int) -> FloatArray:
    """Ones with a raised-cosine rise over the first ``n_ramp`` samples and fall over the last."""
    w = np.ones(n)
    if n_ramp > 0:
        rise = 0.5 * (1.0 - np.cos(np.pi * np.arange(n_ramp) / n_ramp))
        w[:n_ramp] = rise
        w[n - n_ramp:] = np.minimum(w[n - n_ramp:], rise[::-1])
    return w


def _one_amplitude(amplitude_n: Any, rms_n: Any) -> float:
    if (amplitude_n is None) == (rms_n is None):
        raise ModelSpecError("give the rms force as exactly one of `amplitude_n` or `rms_n` (N)")
    if rms_n is not None:
        return check_positive("rms_n", rms_n, "N")
    return check_positive("amplitude_n", amplitude_n, "N")


def _as_frequencies(values: Any, fs: float) -> FloatArray:
    try:
        freqs = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelSpecError("`frequencies_hz` must be a sequence of numbers (Hz)") from None
    freqs = np.atleast_1d(freqs)
    if freqs.ndim != 1 or freqs.size == 0:
        raise ModelSpecError(f"`frequencies_hz` must be a non-empty 1-D sequence, got shape {freqs.shape}")
    f_max = _max_frequency(fs)
    for i, f in enumerate(freqs):
        if not (math.isfinite(f) and f > 0):
            raise ModelSpecError(f"`frequencies_hz`[{i}] must be a positive finite number (Hz), got {f!r}")
        if f > f_max * (1 + 1e-12):
            raise ModelSpecError(
                f"`frequencies_hz`[{i}] = {f:g} Hz is above fs_hz/{2 * NYQUIST_MARGIN:g} = {f_max:g} Hz; "
                "raise `fs_hz`"
            )
    return freqs


def _as_levels(values: Any) -> FloatArray:
    try:
        levels = np.atleast_1d(np.array(values, dtype=np.float64))
    except (TypeError, ValueError):
        raise ModelSpecError("`levels` must be a sequence of numbers") from None
    if levels.ndim != 1 or levels.size == 0:
        raise ModelSpecError(f"`levels` must be a non-empty 1-D sequence, got shape {levels.shape}")
    for i, v in enumerate(levels):
        if not (math.isfinite(v) and v > 0):
            raise ModelSpecError(f"`levels`[{i}] must be a positive finite multiplier, got {v!r}")
    return levels
