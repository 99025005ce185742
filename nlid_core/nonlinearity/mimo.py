r"""Evidence across the channels of a multi-input, multi-output record: the FRF matrix, cross-coupling,
the drift of a resonance with the excitation level, and the fit of each simulated channel.

Signals are time-major: an input block ``u`` is ``(n_samples, n_in)``, an output block ``y`` is
``(n_samples, n_out)``.

Cross-spectral matrices
    Every record is cut into Welch segments (Hann window, 50 % overlap, mean removed per segment);
    with :math:`U_k(f)`, :math:`Y_k(f)` the windowed DFTs of segment :math:`k`, the one-sided
    densities averaged over all :math:`K` segments of all records (a record weighs by its number of
    segments) are

    .. math:: S_{uu} = \frac{2}{K f_s \sum w^2} \sum_k U_k U_k^H, \qquad
              S_{yu} = \frac{2}{K f_s \sum w^2} \sum_k Y_k U_k^H, \qquad
              S_{yy,ii} = \frac{2}{K f_s \sum w^2} \sum_k |Y_{k,i}|^2

    (:math:`n_{in} \times n_{in}`, :math:`n_{out} \times n_{in}` and the diagonal of the output
    matrix). Records of one or of several excited inputs may be mixed: the inputs need not be
    excited together, only each of them by some record.

Multi-input H1 estimator
    :math:`H = S_{yu} S_{uu}^{-1}` per frequency, obtained by solving
    :math:`S_{uu} H^H = S_{yu}^H` (never by forming the inverse), after scaling
    :math:`S_{uu}` to its input-coherence matrix :math:`R = D^{-1/2} S_{uu} D^{-1/2}`,
    :math:`D = \mathrm{diag}(S_{uu})`, so inputs in different units (N, N·m) do not spoil the
    solve. An input whose power at a line is below ``EXCITATION_FLOOR`` times its largest power is
    not excited there: it is left out of the solve at that line (it carries no power, so it drives
    nothing) and its column of :math:`H` is NaN. Where :math:`\mathrm{cond}(R)` exceeds
    ``MAX_INPUT_CONDITION`` the excited inputs are (nearly) fully correlated, or the segments are
    too few to tell them apart: the line is NaN for every input. Each NaN line carries a reason.

Coherences
    Multiple coherence of output :math:`i`:
    :math:`\gamma^2_{i:u} = (H S_{uu} H^H)_{ii} / S_{yy,ii} = \mathrm{Re}\sum_j H_{ij}\overline{S_{yu,ij}} / S_{yy,ii}`,
    the fraction of the output's power explained linearly by all inputs together; the ordinary
    coherence of each pair :math:`\gamma^2_{ij} = |S_{yu,ij}|^2 / (S_{uu,jj} S_{yy,ii})`. With
    correlated inputs the ordinary coherences mix contributions; the multiple coherence does not.

Random error
    The standard uncertainty of :math:`|H_{ij}|` is
    :math:`\sigma_{ij} = \sqrt{(1-\gamma^2_{i:u})\, S_{yy,ii}\, (S_{uu}^{-1})_{jj} / (2 n_d)}`,
    which for one input reduces to the relative error
    :math:`\varepsilon = \sqrt{1-\gamma^2}/(|\gamma|\sqrt{2 n_d})` of Bendat & Piersol (2010), §9.2.
    :math:`n_d` is the number of *independent* averages: overlapping Hann segments are correlated,
    so :math:`n_d = \sum_r K_r / (1 + 2\rho (K_r - 1)/K_r)` with :math:`\rho` the squared overlap
    correlation of the window (Welch 1967; (1/6)² ≈ 0.028 for Hann at 50 %, so n_d ≈ K/1.06).

Validity
    A line of a pair is valid when :math:`H_{ij}` is finite, :math:`f > 0`, :math:`f` lies in the
    excited band of input :math:`j` (the band holding ``BAND_POWER_FRACTIONS`` of its power, or
    ``band`` when given) and the multiple coherence of output :math:`i` is at least
    ``MIN_COHERENCE``. Invalid lines are kept (a mask), not removed.

References
----------
J. S. Bendat, A. G. Piersol, *Random Data: Analysis and Measurement Procedures*, 4th ed., Wiley,
2010, §7.3 (multiple-input systems), §9.2-9.3 (random errors of frequency response estimates),
doi:10.1002/9781118032428.

P. D. Welch, "The use of fast Fourier transform for the estimation of power spectra", *IEEE Trans.
Audio Electroacoust.* 15(2), 70-73, 1967, doi:10.1109/TAU.1967.1161901.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import signal as sp_signal

from .._checks import check_int as _check_int
from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..metrics import fit_percent, nrmse, rmse
from ._args import ComplexArray, FloatArray, _ratio_unit
from .spectra import _band_from_psd
from .thresholds import BAND_POWER_FRACTIONS, DEFAULT_NPERSEG, LEVEL_SIGNIFICANCE, MIN_COHERENCE

__all__ = [
    "EXCITATION_FLOOR",
    "MAX_INPUT_CONDITION",
    "FrfMatrix",
    "frf_matrix",
    "CouplingTable",
    "coupling",
    "LevelDrift",
    "level_drift",
    "ChannelFits",
    "channel_fit",
]

#: An input counts as not excited at a line when its power density there is below this fraction of
#: its largest power density (-120 dB); it is then left out of the solve at that line.
EXCITATION_FLOOR = 1e-12
#: Largest condition number of the input-coherence matrix R accepted at a line. For two inputs,
#: cond(R) = (1 + |γ|)/(1 - |γ|), so 1e3 refuses an input coherence |γ| above 0.998; independent
#: inputs stay far below it once there are about twice as many segments as inputs.
MAX_INPUT_CONDITION = 1e3
#: Segments transformed at once (bounds the memory of long records).
_SEGMENT_BATCH = 256

BoolArray = NDArray[np.bool_]


# --------------------------------------------------------------------------- FRF matrix


@dataclass(frozen=True, kw_only=True)
class FrfMatrix:
    """Multi-input H1 estimate of the frequency-response matrix, with coherences and validity.

    Attributes
    ----------
    freq_hz : (nf,) ndarray, Hz
    H : (nf, n_out, n_in) complex ndarray
        ``H[f, i, j]``: response of output ``i`` per unit of input ``j`` (NaN where not estimable).
    coherence_multiple : (nf, n_out) ndarray
        Multiple coherence of each output with all inputs, in [0, 1].
    coherence : (nf, n_out, n_in) ndarray
        Ordinary coherence of each input-output pair, in [0, 1].
    valid : (nf, n_out, n_in) bool ndarray
        Lines where ``H`` means something (see the module notes).
    h_std : (nf, n_out, n_in) ndarray
        Standard uncertainty of ``|H|`` (random error, unit of ``H``).
    condition : (nf,) ndarray
        Condition number of the input-coherence matrix of the excited inputs (1 for one input).
    reason : tuple of str
        Per line, why ``H`` is (partly) NaN there; ``""`` where every column is estimated.
    band_hz : (n_in, 2) ndarray, Hz
        Excited band of each input (NaN when the input carries no power).
    input_rms : (n_in,) ndarray
        Rms of each input above 0 Hz, from the averaged spectra (unit of the input).
    input_names, output_names, input_units, output_units : tuple of str
    units : tuple of tuple of str
        ``units[i][j]``: unit of ``H[:, i, j]``, e.g. ``m/N`` or ``rad/(N·m)``.
    n_averages : int
        Welch segments averaged over all records.
    n_independent : float
        Equivalent number of independent averages ``n_d`` used by the random error.
    nperseg : int
    success : bool
        At least one valid line.
    message : str
    """

    freq_hz: FloatArray
    H: ComplexArray
    coherence_multiple: FloatArray
    coherence: FloatArray
    valid: BoolArray
    h_std: FloatArray
    condition: FloatArray
    reason: tuple[str, ...]
    band_hz: FloatArray
    input_rms: FloatArray
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    input_units: tuple[str, ...]
    output_units: tuple[str, ...]
    units: tuple[tuple[str, ...], ...]
    n_averages: int
    n_independent: float
    nperseg: int
    success: bool
    message: str

    def to_frame(self) -> pd.DataFrame:
        """One row per (frequency, output, input): the estimate, its uncertainty and the masks."""
        nf, n_out, n_in = self.H.shape
        f_idx, i_idx, j_idx = (a.ravel() for a in np.meshgrid(np.arange(nf), np.arange(n_out), np.arange(n_in),
                                                               indexing="ij"))
        h = self.H.ravel()
        return pd.DataFrame({
            "freq_hz": self.freq_hz[f_idx],
            "output": np.asarray(self.output_names, dtype=object)[i_idx],
            "input": np.asarray(self.input_names, dtype=object)[j_idx],
            "unit": [self.units[i][j] for i, j in zip(i_idx, j_idx)],
            "h_real": h.real,
            "h_imag": h.imag,
            "magnitude": np.abs(h),
            "phase_deg": np.degrees(np.angle(h)),
            "magnitude_std": self.h_std.ravel(),
            "coherence": self.coherence.ravel(),
            "coherence_multiple": self.coherence_multiple[f_idx, i_idx],
            "valid": self.valid.ravel(),
            "reason": np.asarray(self.reason, dtype=object)[f_idx],
        })


def _as_block(name: str, value: Any, n_cols: int | None) -> FloatArray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"`{name}` must be a numeric (n_samples, n_channels) array") from None
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise DataValidationError(f"`{name}` must be a 2-D (n_samples, n_channels) array, got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise DataValidationError(f"`{name}` has {arr.shape[1]} channels, expected {n_cols}")
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DataValidationError(f"`{name}` has a non-finite value at sample {row}, channel {col}")
    return arr


def _check_pairs(name: str, segments: Any) -> list[tuple[FloatArray, FloatArray]]:
    """The (u, y) pairs as float blocks of consistent widths and equal lengths within a pair."""
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence) or len(segments) == 0:
        raise DataValidationError(
            f"`{name}` must be a non-empty sequence of (u, y) pairs, got {type(segments).__name__}")
    out: list[tuple[FloatArray, FloatArray]] = []
    n_in: int | None = None
    n_out: int | None = None
    for r, pair in enumerate(segments):
        if not (isinstance(pair, Sequence) and len(pair) == 2):
            raise DataValidationError(f"`{name}[{r}]` must be a pair (u, y), got {type(pair).__name__}")
        u = _as_block(f"{name}[{r}][0]", pair[0], n_in)
        y = _as_block(f"{name}[{r}][1]", pair[1], n_out)
        if u.shape[0] != y.shape[0]:
            raise DataValidationError(
                f"`{name}[{r}]`: u has {u.shape[0]} samples but y has {y.shape[0]}")
        n_in, n_out = u.shape[1], y.shape[1]
        out.append((u, y))
    return out


def _check_names(name: str, value: Any, n: int) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or any(not isinstance(v, str) for v in value):
        raise ModelSpecError(f"`{name}` must be a sequence of {n} strings, got {value!r}")
    if len(value) != n:
        raise ModelSpecError(f"`{name}` must hold {n} entries (one per channel), got {len(value)}")
    return tuple(value)


def _check_band(band: Any) -> tuple[float, float] | None:
    if band is None:
        return None
    try:
        lo, hi = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`band` must be two frequencies (lo, hi) in Hz, got {band!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
        raise ModelSpecError(f"`band` must satisfy 0 <= lo < hi (Hz, finite), got {band!r}")
    return lo, hi


def _default_nperseg(n_min: int) -> int:
    """Largest power of two giving at least 15 segments of the shortest record (50 % overlap),
    capped at ``DEFAULT_NPERSEG`` and at least 8 samples."""
    if n_min < 64:
        return min(8, n_min)
    return int(min(DEFAULT_NPERSEG, 2 ** int(math.floor(math.log2(n_min / 8)))))


def _segment_count(n: int, nperseg: int) -> int:
    step = nperseg - nperseg // 2
    return (n - nperseg) // step + 1 if n >= nperseg else 0


def _overlap_rho(window: FloatArray, step: int) -> float:
    """Welch's correlation of two window-weighted segments ``step`` samples apart (squared overlap)."""
    if step >= window.size:
        return 0.0
    c = float(np.sum(window[:-step] * window[step:]) / np.sum(window**2))
    return c * c


def _spectra(
    pairs: Sequence[tuple[FloatArray, FloatArray]], fs: float, nperseg: int
) -> tuple[FloatArray, ComplexArray, ComplexArray, FloatArray, int, float]:
    """Averaged S_uu, S_yu and diag S_yy over all Welch segments of all records."""
    window = np.asarray(sp_signal.get_window("hann", nperseg), dtype=np.float64)
    step = nperseg - nperseg // 2
    rho = _overlap_rho(window, step)
    n_in, n_out = pairs[0][0].shape[1], pairs[0][1].shape[1]
    nf = nperseg // 2 + 1
    s_uu = np.zeros((nf, n_in, n_in), dtype=np.complex128)
    s_yu = np.zeros((nf, n_out, n_in), dtype=np.complex128)
    s_yy = np.zeros((nf, n_out), dtype=np.float64)
    total = 0
    n_ind = 0.0
    for u, y in pairs:
        k_r = _segment_count(u.shape[0], nperseg)
        both = np.concatenate([u, y], axis=1)
        for k0 in range(0, k_r, _SEGMENT_BATCH):
            starts = np.arange(k0, min(k_r, k0 + _SEGMENT_BATCH)) * step
            seg = both[starts[:, None] + np.arange(nperseg)[None, :], :]  # (b, nperseg, n_ch)
            seg = seg - seg.mean(axis=1, keepdims=True)
            spec = np.fft.rfft(seg * window[None, :, None], axis=1)  # (b, nf, n_ch)
            uu, yy = spec[:, :, :n_in], spec[:, :, n_in:]
            s_uu += np.einsum("bfi,bfj->fij", uu, uu.conj())
            s_yu += np.einsum("bfi,bfj->fij", yy, uu.conj())
            s_yy += np.sum(np.abs(yy) ** 2, axis=0)
        total += k_r
        n_ind += k_r / (1.0 + 2.0 * rho * (k_r - 1) / k_r)
    scale = np.full(nf, 2.0 / (total * fs * float(np.sum(window**2))))
    scale[0] /= 2.0
    if nperseg % 2 == 0:
        scale[-1] /= 2.0
    freq = np.fft.rfftfreq(nperseg, 1.0 / fs)
    s_uu *= scale[:, None, None]
    s_yu *= scale[:, None, None]
    s_yy *= scale[:, None]
    return np.asarray(freq, dtype=np.float64), s_uu, s_yu, s_yy, total, n_ind


def _solve_h1(
    s_uu: ComplexArray, s_yu: ComplexArray, names: tuple[str, ...]
) -> tuple[ComplexArray, FloatArray, FloatArray, list[str]]:
    """H = S_yu S_uu⁻¹ per line over the excited inputs, diag(S_uu⁻¹), cond(R) and the reasons."""
    nf, n_out, n_in = s_yu.shape
    power = np.real(np.einsum("fii->fi", s_uu))
    peak = np.max(power, axis=0)
    active = (power > EXCITATION_FLOOR * peak[None, :]) & (peak[None, :] > 0)
    h = np.full((nf, n_out, n_in), np.nan + 0j, dtype=np.complex128)
    inv_diag = np.full((nf, n_in), np.nan)
    cond = np.full(nf, np.nan)
    reason = [""] * nf
    patterns, which = np.unique(active, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        lines = np.flatnonzero(which.ravel() == p)
        cols = np.flatnonzero(pattern)
        missing = [names[j] for j in range(n_in) if not pattern[j]]
        note = (f"input(s) {', '.join(f'`{m}`' for m in missing)} not excited here: column(s) NaN"
                if missing else "")
        if cols.size == 0:
            for f in lines:
                reason[f] = "no input excited"
            continue
        sub = s_uu[np.ix_(lines, cols, cols)]
        d = np.sqrt(np.real(np.einsum("fii->fi", sub)))
        r = sub / (d[:, :, None] * d[:, None, :])
        eig = np.linalg.eigvalsh(r)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(eig[:, 0] > 0, eig[:, -1] / eig[:, 0], np.inf)
        cond[lines] = c
        ok = c <= MAX_INPUT_CONDITION
        for f, cf in zip(lines[~ok], c[~ok]):
            reason[f] = (f"S_uu ill-conditioned (condition number {cf:.3g} > {MAX_INPUT_CONDITION:.0e}):"
                         " inputs correlated or too few averages; every column NaN")
        for f in lines[ok]:
            reason[f] = note
        if not ok.any():
            continue
        good = lines[ok]
        dd = d[ok]
        rhs = np.conj(np.swapaxes(s_yu[np.ix_(good, np.arange(n_out), cols)], 1, 2)) / dd[:, :, None]
        x = np.linalg.solve(r[ok], rhs) / dd[:, :, None]  # (g, k, n_out) = H^H
        h[np.ix_(good, np.arange(n_out), cols)] = np.conj(np.swapaxes(x, 1, 2))
        eye = np.broadcast_to(np.eye(cols.size), (good.size, cols.size, cols.size))
        r_inv_diag = np.real(np.einsum("fii->fi", np.linalg.solve(r[ok], eye)))
        inv_diag[np.ix_(good, cols)] = r_inv_diag / dd**2
    return h, inv_diag, cond, reason


def _summary(valid: BoolArray, reason: Sequence[str], n_in: int, n_out: int, total: int, n_rec: int) -> str:
    kinds: dict[str, int] = {}
    for text in reason:
        if text:
            key = text.split(" (")[0] if text.startswith("S_uu") else text
            kinds[key] = kinds.get(key, 0) + 1
    parts = [f"H1 of {n_out} output(s) over {n_in} input(s) from {n_rec} record(s), {total} Welch averages;"
             f" {int(valid.all(axis=(1, 2)).sum())} of {valid.shape[0]} lines valid for every pair"]
    parts += [f"{count} line(s): {text}" for text, count in kinds.items()]
    return "; ".join(parts)


def frf_matrix(
    segments: Sequence[tuple[ArrayLike, ArrayLike]],
    dt: float,
    *,
    input_names: Sequence[str],
    output_names: Sequence[str],
    input_units: Sequence[str],
    output_units: Sequence[str],
    nperseg: int | None = None,
    band: tuple[float, float] | None = None,
) -> FrfMatrix:
    """Multi-input H1 estimate of the frequency-response matrix from one or several records.

    Parameters
    ----------
    segments : sequence of (u, y)
        One pair per record: ``u`` is ``(n_r, n_in)`` (inputs, e.g. Fx..Mz), ``y`` is ``(n_r, n_out)``
        (outputs, e.g. x..ψ), finite, sampled every ``dt``. Records may differ in length and each
        may excite one or several inputs.
    dt : float, s
        Sampling interval.
    input_names, output_names : sequence of str
        Channel names (``n_in`` and ``n_out`` of them).
    input_units, output_units : sequence of str
        Channel units; ``H[:, i, j]`` is in ``output_units[i]/input_units[j]``.
    nperseg : int or None
        Welch segment length (samples, at most the shortest record). Default: the largest power of
        two giving at least 15 segments of the shortest record, at most ``DEFAULT_NPERSEG``.
    band : (float, float) or None, Hz
        Band where the estimate is valid. Default: per input, the band holding
        ``BAND_POWER_FRACTIONS`` of its power in the averaged spectra.

    Returns
    -------
    FrfMatrix
        ``success`` is False when no line is valid (the message says why).

    Raises
    ------
    DataValidationError
        Arrays of the wrong shape, non-finite values, a record shorter than ``nperseg``, or fewer
        than 2 Welch segments in all.
    ModelSpecError
        Names or units of the wrong length, a bad ``dt``, ``nperseg`` or ``band``.

    Notes
    -----
    See the module docstring for the estimator, the coherences, the random error and the validity
    mask.
    """
    pairs = _check_pairs("segments", segments)
    fs = 1.0 / _check_positive("dt", dt, "s")
    n_in, n_out = pairs[0][0].shape[1], pairs[0][1].shape[1]
    in_names = _check_names("input_names", input_names, n_in)
    out_names = _check_names("output_names", output_names, n_out)
    in_units = _check_names("input_units", input_units, n_in)
    out_units = _check_names("output_units", output_units, n_out)
    lim = _check_band(band)
    n_min = min(u.shape[0] for u, _ in pairs)
    seg = _default_nperseg(n_min) if nperseg is None else _check_int("nperseg", nperseg, 8)
    if seg > n_min or seg < 8:
        raise DataValidationError(
            f"`nperseg` = {seg} must lie in 8..{n_min} (the shortest record of `segments` has {n_min} samples)")
    total_segments = sum(_segment_count(u.shape[0], seg) for u, _ in pairs)
    if total_segments < 2:
        raise DataValidationError(
            f"`segments` hold {total_segments} Welch segment(s) of {seg} samples; at least 2 are needed"
            " (longer records, more records or a smaller `nperseg`)")
    freq, s_uu, s_yu, s_yy, total, n_ind = _spectra(pairs, fs, seg)
    h, inv_diag, cond, reason = _solve_h1(s_uu, s_yu, in_names)
    s_in = np.real(np.einsum("fii->fi", s_uu))
    with np.errstate(divide="ignore", invalid="ignore"):
        explained = np.real(np.einsum("fij,fij->fi", np.nan_to_num(h), s_yu.conj()))
        coh_m = np.where(s_yy > 0, explained / s_yy, np.nan)
        coh_m = np.where(np.isfinite(h).any(axis=2), coh_m, np.nan)
        den = s_in[:, None, :] * s_yy[:, :, None]
        coh = np.where(den > 0, np.abs(s_yu) ** 2 / den, np.nan)
        var = (1.0 - np.clip(coh_m, 0.0, 1.0))[:, :, None] * s_yy[:, :, None] * inv_diag[:, None, :]
        h_std = np.sqrt(np.maximum(var, 0.0) / (2.0 * n_ind))
    coh_m = np.clip(coh_m, 0.0, 1.0)
    coh = np.clip(coh, 0.0, 1.0)
    bands = np.full((n_in, 2), np.nan)
    for j in range(n_in):
        if lim is not None:
            bands[j] = lim
        elif np.any(s_in[1:, j] > 0):
            bands[j] = _band_from_psd(freq, s_in[:, j], *BAND_POWER_FRACTIONS)
    df = float(freq[1] - freq[0])
    input_rms = np.sqrt(np.sum(s_in[1:], axis=0) * df)
    in_band = (freq[:, None] >= bands[None, :, 0]) & (freq[:, None] <= bands[None, :, 1])
    with np.errstate(invalid="ignore"):
        coherent = coh_m >= MIN_COHERENCE
    valid = (np.isfinite(h) & (freq > 0)[:, None, None] & in_band[:, None, :] & coherent[:, :, None])
    units = tuple(tuple(_ratio_unit(out_units[i], in_units[j]) for j in range(n_in)) for i in range(n_out))
    ok = bool(valid.any())
    message = _summary(valid, reason, n_in, n_out, total, len(pairs))
    if not ok:
        message = "no valid line: " + message
    return FrfMatrix(
        freq_hz=freq, H=h, coherence_multiple=coh_m, coherence=coh, valid=np.asarray(valid, dtype=bool),
        h_std=h_std, condition=cond, reason=tuple(reason), band_hz=bands, input_rms=input_rms,
        input_names=in_names, output_names=out_names, input_units=in_units, output_units=out_units,
        units=units, n_averages=total, n_independent=n_ind, nperseg=seg, success=ok, message=message,
    )


# --------------------------------------------------------------------------- coupling


@dataclass(frozen=True, kw_only=True)
class CouplingTable:
    r"""Which input drives each output, and how much each other input contributes.

    Attributes
    ----------
    output_names, input_names : tuple of str
    output_units : tuple of str
        Unit of ``contribution[i, :]``.
    input_rms : (n_in,) ndarray
        The :math:`\sigma_{u_j}` used (unit of each input).
    contribution : (n_out, n_in) ndarray
        :math:`c_{ij} = \overline{|H_{ij}|}\,\sigma_{u_j}` (unit of output ``i``), NaN without valid lines.
    relative : (n_out, n_in) ndarray
        :math:`c_{ij} / c_{i,m(i)}` (1 for the main input).
    main_input : tuple of str
        Per output, the input of the largest contribution (``""`` when none is valid).
    n_lines : (n_out, n_in) int ndarray
        Valid lines averaged per pair.
    success : bool
    message : str
    """

    output_names: tuple[str, ...]
    input_names: tuple[str, ...]
    output_units: tuple[str, ...]
    input_rms: FloatArray
    contribution: FloatArray
    relative: FloatArray
    main_input: tuple[str, ...]
    n_lines: NDArray[np.int64]
    success: bool
    message: str

    def to_frame(self) -> pd.DataFrame:
        """One row per (output, input): the contribution, and relative to the main input in %."""
        rows = []
        for i, out in enumerate(self.output_names):
            for j, inp in enumerate(self.input_names):
                rows.append({
                    "output": out, "input": inp, "main_input": self.main_input[i],
                    "contribution": self.contribution[i, j], "unit": self.output_units[i],
                    "relative_percent": 100.0 * self.relative[i, j], "n_lines": int(self.n_lines[i, j]),
                })
        return pd.DataFrame(rows)


def coupling(frf: FrfMatrix, *, input_rms: ArrayLike | None = None) -> CouplingTable:
    r"""Cross-coupling table: for each output, its main input and every other input's share.

    Parameters
    ----------
    frf : FrfMatrix
        From :func:`frf_matrix`.
    input_rms : (n_in,) array_like or None
        Input levels :math:`\sigma_{u_j}` (unit of each input) to weigh the gains with, e.g. the
        levels of the intended service loads; default ``frf.input_rms`` (the test's own levels).

    Returns
    -------
    CouplingTable

    Notes
    -----
    For output :math:`i` and input :math:`j`, with :math:`V_{ij}` the valid lines of the pair
    (``frf.valid[:, i, j]``),

    .. math:: c_{ij} = \sigma_{u_j} \frac{1}{|V_{ij}|} \sum_{f \in V_{ij}} |H_{ij}(f)|,

    the band-averaged gain scaled by the input's rms (unit of the output). The main input of
    output :math:`i` is :math:`m(i) = \arg\max_j c_{ij}` and the relative contribution
    :math:`r_{ij} = c_{ij} / c_{i,m(i)}`: ``r = 0.03`` reads "z responds 3 % to Fx (relative to
    its main input)". An uncoupled system gives :math:`r_{ij} \approx 0` off its main input (up
    to the random error of ``H``).
    """
    if not isinstance(frf, FrfMatrix):
        raise DataValidationError(f"`frf` must be a FrfMatrix, got {type(frf).__name__}")
    n_out, n_in = len(frf.output_names), len(frf.input_names)
    if input_rms is None:
        sigma = np.asarray(frf.input_rms, dtype=np.float64)
    else:
        sigma = np.asarray(input_rms, dtype=np.float64).reshape(-1)
        if sigma.size != n_in or not np.all(np.isfinite(sigma)) or np.any(sigma < 0):
            raise DataValidationError(
                f"`input_rms` must hold {n_in} finite non-negative levels, got {np.asarray(input_rms)!r}")
    mag = np.where(frf.valid, np.abs(np.nan_to_num(frf.H)), 0.0)
    count = frf.valid.sum(axis=0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_gain = np.where(count > 0, mag.sum(axis=0) / np.maximum(count, 1), np.nan)
    contrib = mean_gain * sigma[None, :]
    rel = np.full((n_out, n_in), np.nan)
    main: list[str] = []
    for i in range(n_out):
        row = contrib[i]
        if not np.any(np.isfinite(row)) or np.nanmax(row) <= 0:
            main.append("")
            continue
        m = int(np.nanargmax(row))
        main.append(frf.input_names[m])
        rel[i] = row / row[m]
    ok = any(main)
    missing = [frf.output_names[i] for i in range(n_out) if not main[i]]
    message = "coupling of every output" if not missing else f"no valid line for output(s) {missing}"
    return CouplingTable(
        output_names=frf.output_names, input_names=frf.input_names, output_units=frf.output_units,
        input_rms=sigma, contribution=contrib, relative=rel, main_input=tuple(main), n_lines=count,
        success=ok, message=message,
    )


# --------------------------------------------------------------------------- level drift


@dataclass(frozen=True, kw_only=True)
class LevelDrift:
    """Resonance of one diagonal FRF at several excitation levels, with standard uncertainties.

    Attributes
    ----------
    labels : tuple of str
        Level labels, sorted by ``input_rms``.
    input_rms : (n,) ndarray
        Rms of the driving input per level (unit ``input_unit``).
    peak_hz, peak_hz_u : (n,) ndarray, Hz
        Resonance frequency (parabolic fit of ln|H| over 3 lines) and its standard uncertainty.
    peak_gain, peak_gain_u : (n,) ndarray
        Peak |H| and its standard uncertainty (unit ``gain_unit``).
    freq_hz : (nf,) ndarray, Hz
    h : (n, nf) complex ndarray
        The diagonal FRF per level.
    valid : (n, nf) bool ndarray
    input_name, output_name, input_unit, gain_unit : str
    frequency_trend, gain_trend : str
        ``"up"``, ``"down"`` or ``"none"`` (from the lowest to the highest level, beyond
        ``LEVEL_SIGNIFICANCE`` combined standard uncertainties).
    verdict : str
    success : bool
    message : str
    """

    labels: tuple[str, ...]
    input_rms: FloatArray
    peak_hz: FloatArray
    peak_hz_u: FloatArray
    peak_gain: FloatArray
    peak_gain_u: FloatArray
    freq_hz: FloatArray
    h: ComplexArray
    valid: BoolArray
    input_name: str
    output_name: str
    input_unit: str
    gain_unit: str
    frequency_trend: str
    gain_trend: str
    verdict: str
    success: bool
    message: str

    def to_frame(self) -> pd.DataFrame:
        """One row per level: its rms, the peak frequency and gain with their uncertainties."""
        return pd.DataFrame({
            "level": list(self.labels), "input_rms": self.input_rms, "peak_hz": self.peak_hz,
            "peak_hz_u": self.peak_hz_u, "peak_gain": self.peak_gain, "peak_gain_u": self.peak_gain_u,
        })


def _parabola_peak(freq: FloatArray, mag: FloatArray, rel_err: FloatArray, valid: BoolArray
                   ) -> tuple[float, float, float, float]:
    """Peak of |H| over the valid lines by a parabola through ln|H| at 3 lines, with uncertainties.

    Returns (f_peak, u_f, gain, u_gain); NaNs when no interior valid maximum exists.
    """
    idx = np.flatnonzero(valid & np.isfinite(mag) & (mag > 0))
    if idx.size == 0:
        return (math.nan,) * 4
    i = int(idx[np.argmax(mag[idx])])
    df = float(freq[1] - freq[0])
    if not (0 < i < mag.size - 1) or not np.all(np.isfinite(mag[i - 1:i + 2]) & (mag[i - 1:i + 2] > 0)):
        return float(freq[i]), df / math.sqrt(12.0), float(mag[i]), float(mag[i] * rel_err[i])
    ym, y0, yp = np.log(mag[i - 1:i + 2])
    a, b = ym - yp, ym - 2.0 * y0 + yp
    if not b < 0:
        return float(freq[i]), df / math.sqrt(12.0), float(mag[i]), float(mag[i] * rel_err[i])
    delta = float(np.clip(a / (2.0 * b), -0.5, 0.5))
    eps = np.nan_to_num(rel_err[i - 1:i + 2], nan=0.0)
    g_delta = np.array([(b - a) / (2 * b * b), a / (b * b), -(a + b) / (2 * b * b)])
    g_logp = np.array([-a / (4 * b) + a * a / (8 * b * b), 1.0 - a * a / (4 * b * b),
                       a / (4 * b) + a * a / (8 * b * b)])
    u_par = df * float(np.sqrt(np.sum((g_delta * eps) ** 2)))
    gain = float(math.exp(y0 - a * a / (8.0 * b)))
    u_gain = gain * float(np.sqrt(np.sum((g_logp * eps) ** 2)))
    return float(freq[i] + delta * df), math.hypot(u_par, df / math.sqrt(12.0)), gain, u_gain


def _trend(lo: float, u_lo: float, hi: float, u_hi: float) -> str:
    if not all(math.isfinite(v) for v in (lo, u_lo, hi, u_hi)):
        return "none"
    if abs(hi - lo) <= LEVEL_SIGNIFICANCE * math.hypot(u_lo, u_hi):
        return "none"
    return "up" if hi > lo else "down"


def _level_label(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, Real):
        return f"{float(key):g}"
    raise ModelSpecError(f"`records_by_level` keys must be labels (str) or numbers, got {key!r}")


def level_drift(
    records_by_level: Mapping[str | float, tuple[ArrayLike, ArrayLike]],
    dt: float,
    *,
    input_index: int,
    output_index: int,
    input_name: str = "u",
    output_name: str = "y",
    input_unit: str = "N",
    output_unit: str = "m",
    nperseg: int | None = None,
    band: tuple[float, float] | None = None,
) -> LevelDrift:
    r"""Resonance frequency and peak gain of one diagonal FRF across excitation levels.

    Parameters
    ----------
    records_by_level : mapping of label -> (u, y)
        One record per level of one excitation direction: ``u`` is ``(n, n_in)``, ``y`` is
        ``(n, n_out)`` (as in :func:`frf_matrix`). Labels are strings or numbers (e.g. the nominal
        level); the levels are ordered by the rms of the driving input.
    dt : float, s
        Sampling interval.
    input_index, output_index : int
        Columns of ``u`` and ``y`` forming the diagonal pair (e.g. Fz and z).
    input_name, output_name : str
        Names of that input and output.
    input_unit, output_unit : str
        Their units (the gain is in ``output_unit/input_unit``).
    nperseg : int or None
        Welch segment length (common to all levels, so the resolution is the same); default as in
        :func:`frf_matrix` for the shortest record.
    band : (float, float) or None, Hz
        Band searched for the resonance; default the excited band of each record.

    Returns
    -------
    LevelDrift

    Notes
    -----
    Each level's FRF is the single-input H1 of the pair (the other inputs of a record of one
    direction are small and count as noise). The peak is the maximum of ``|H|`` over the valid
    lines, refined by a parabola through :math:`y = \ln|H|` at the peak line and its neighbours:
    with :math:`a = y_- - y_+`, :math:`b = y_- - 2y_0 + y_+`, the offset is
    :math:`\delta = a / 2b` lines and the peak gain :math:`\exp(y_0 - a^2/8b)`.

    Uncertainties: the random error of :math:`|H_1|` at a line,
    :math:`\varepsilon \approx \sqrt{1-\gamma^2}/(|\gamma|\sqrt{2 n_d})` (Bendat & Piersol,
    *Random Data*, 4th ed., 2010, §9.2, with :math:`n_d` the independent averages), is the standard
    uncertainty of :math:`\ln|H|` there; it is propagated through the parabola to first order
    (neighbouring lines taken as independent). The peak frequency adds, in quadrature, the
    resolution term :math:`\Delta f/\sqrt{12}` (a reading on a grid of step :math:`\Delta f`;
    conservative, as it ignores the interpolation's gain), so a shift below about one line is never
    called a trend.

    A change from the lowest to the highest level is a trend only when it exceeds
    ``LEVEL_SIGNIFICANCE`` (2) combined standard uncertainties
    :math:`\sqrt{u_{lo}^2 + u_{hi}^2}`; a rising resonance points to a hardening stiffness, a
    falling one to softening (or a loosening joint).
    """
    if not isinstance(records_by_level, Mapping) or len(records_by_level) == 0:
        raise DataValidationError(
            f"`records_by_level` must be a non-empty mapping label -> (u, y), got {type(records_by_level).__name__}")
    labels = [_level_label(k) for k in records_by_level]
    pairs = _check_pairs("records_by_level", list(records_by_level.values()))
    n_in, n_out = pairs[0][0].shape[1], pairs[0][1].shape[1]
    j = _check_int("input_index", input_index, 0, n_in - 1)
    i = _check_int("output_index", output_index, 0, n_out - 1)
    n_min = min(u.shape[0] for u, _ in pairs)
    seg = _default_nperseg(n_min) if nperseg is None else nperseg
    rows = []
    for label, (u, y) in zip(labels, pairs):
        est = frf_matrix([(u[:, [j]], y[:, [i]])], dt, input_names=[input_name], output_names=[output_name],
                         input_units=[input_unit], output_units=[output_unit], nperseg=seg, band=band)
        h = est.H[:, 0, 0]
        mag = np.abs(h)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = est.h_std[:, 0, 0] / mag
        peak = _parabola_peak(est.freq_hz, mag, rel, est.valid[:, 0, 0])
        u_rms = float(np.std(u[:, j]))
        rows.append((u_rms, label, peak, est))
    rows.sort(key=lambda r: r[0])
    f_pk = np.array([r[2][0] for r in rows])
    f_u = np.array([r[2][1] for r in rows])
    g_pk = np.array([r[2][2] for r in rows])
    g_u = np.array([r[2][3] for r in rows])
    gain_unit = rows[0][3].units[0][0]
    f_trend = _trend(f_pk[0], f_u[0], f_pk[-1], f_u[-1]) if len(rows) > 1 else "none"
    g_trend = _trend(g_pk[0], g_u[0], g_pk[-1], g_u[-1]) if len(rows) > 1 else "none"
    ok = bool(np.all(np.isfinite(f_pk)))
    verdict = _drift_verdict(rows[0][1], rows[-1][1], f_pk, f_u, g_pk, g_u, gain_unit, f_trend, g_trend)
    missing = [r[1] for r in rows if not math.isfinite(r[2][0])]
    message = "peak found at every level" if ok else f"no valid resonance peak at level(s) {missing}"
    return LevelDrift(
        labels=tuple(r[1] for r in rows), input_rms=np.array([r[0] for r in rows]), peak_hz=f_pk, peak_hz_u=f_u,
        peak_gain=g_pk, peak_gain_u=g_u, freq_hz=rows[0][3].freq_hz,
        h=np.array([r[3].H[:, 0, 0] for r in rows]), valid=np.array([r[3].valid[:, 0, 0] for r in rows]),
        input_name=input_name, output_name=output_name, input_unit=input_unit, gain_unit=gain_unit,
        frequency_trend=f_trend, gain_trend=g_trend, verdict=verdict, success=ok, message=message,
    )


def _drift_verdict(lo: str, hi: str, f: FloatArray, fu: FloatArray, g: FloatArray, gu: FloatArray,
                   gain_unit: str, f_trend: str, g_trend: str) -> str:
    if f.size < 2:
        return "one level only: record two or more levels to see a drift"
    if not (math.isfinite(f[0]) and math.isfinite(f[-1])):
        return "no resonance peak in the valid band at the lowest or highest level: no verdict"
    span = f"from level {lo} to {hi}"
    if f_trend == "none":
        text = (f"resonance {f[0]:.4g} ± {fu[0]:.2g} Hz -> {f[-1]:.4g} ± {fu[-1]:.2g} Hz {span}:"
                " no drift beyond the uncertainty")
    else:
        kind = "hardening" if f_trend == "up" else "softening"
        text = (f"resonance moves {100 * (f[-1] / f[0] - 1):+.1f} % {span} ({f[0]:.4g} -> {f[-1]:.4g} Hz,"
                f" beyond {LEVEL_SIGNIFICANCE:g} combined standard uncertainties): a trend, {kind}")
    if g_trend == "none":
        text += f"; peak gain: no drift beyond the uncertainty ({g[0]:.3g} -> {g[-1]:.3g} {gain_unit})"
    else:
        text += (f"; peak gain {'rises' if g_trend == 'up' else 'falls'} {100 * (g[-1] / g[0] - 1):+.0f} %"
                 f" ({g[0]:.3g} -> {g[-1]:.3g} {gain_unit})")
    return text


# --------------------------------------------------------------------------- channel fit


@dataclass(frozen=True, kw_only=True)
class ChannelFits:
    """Goodness of fit of each output channel of a simulation.

    Attributes
    ----------
    names, units : tuple of str
    fit_percent : (n_out,) ndarray
        ``100 (1 − ‖y − ŷ‖ / ‖y − ȳ‖)`` (100 is perfect; NaN for a constant channel).
    rmse : (n_out,) ndarray
        Rms of ``ŷ − y`` (unit of the channel).
    nrmse : (n_out,) ndarray
        ``rmse / std(y)``.
    start : int
        First sample scored.
    success : bool
    message : str
    """

    names: tuple[str, ...]
    units: tuple[str, ...]
    fit_percent: FloatArray
    rmse: FloatArray
    nrmse: FloatArray
    start: int
    success: bool
    message: str

    def to_frame(self) -> pd.DataFrame:
        """One row per channel: fit %, RMSE (with its unit) and NRMSE."""
        return pd.DataFrame({"channel": list(self.names), "unit": list(self.units),
                             "fit_percent": self.fit_percent, "rmse": self.rmse, "nrmse": self.nrmse})


def channel_fit(
    measured: ArrayLike,
    simulated: ArrayLike,
    names: Sequence[str],
    units: Sequence[str],
    start: int = 0,
) -> ChannelFits:
    """Fit %, RMSE and NRMSE of each output channel (see :mod:`nlid_core.metrics`).

    Parameters
    ----------
    measured, simulated : (n, n_out) array_like
        Measured and simulated outputs, time-major.
    names, units : sequence of str
        Channel names and units (``n_out`` of each).
    start : int
        First sample scored (e.g. after the initial transient), ``0 <= start < n - 1``.

    Returns
    -------
    ChannelFits
    """
    y = _as_block("measured", measured, None)
    y_hat = _as_block("simulated", simulated, y.shape[1])
    if y_hat.shape[0] != y.shape[0]:
        raise DataValidationError(f"`simulated` has {y_hat.shape[0]} samples but `measured` has {y.shape[0]}")
    chan = _check_names("names", names, y.shape[1])
    unit = _check_names("units", units, y.shape[1])
    s = _check_int("start", start, 0, y.shape[0] - 2)
    ym, ys = y[s:], y_hat[s:]
    fits = np.array([fit_percent(ym[:, k], ys[:, k]) for k in range(y.shape[1])])
    errs = np.array([rmse(ym[:, k], ys[:, k]) for k in range(y.shape[1])])
    norm = np.array([nrmse(ym[:, k], ys[:, k]) for k in range(y.shape[1])])
    flat = [chan[k] for k in range(y.shape[1]) if not math.isfinite(fits[k])]
    message = (f"{y.shape[1]} channel(s) scored over {ym.shape[0]} samples" if not flat
               else f"constant measured channel(s) {flat}: fit % undefined")
    return ChannelFits(names=chan, units=unit, fit_percent=fits, rmse=errs, nrmse=norm, start=s,
                       success=not flat, message=message)
