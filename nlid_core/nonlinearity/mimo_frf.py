"""The H1 frequency-response matrix of a test with several inputs and outputs, from one or several records:
averaged cross-spectra, the solve for H per frequency with the input matrix's condition checked, and the
multiple and ordinary coherences and the random uncertainty of |H| (the mathematics is in :mod:`.mimo`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import signal as sp_signal

from .._checks import check_int as _check_int
from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ._args import ComplexArray, FloatArray, _ratio_unit
from .spectra import _band_from_psd
from .thresholds import BAND_POWER_FRACTIONS, DEFAULT_NPERSEG, MIN_COHERENCE

BoolArray = NDArray[np.bool_]

__all__ = ["EXCITATION_FLOOR", "MAX_INPUT_CONDITION", "FrfMatrix", "frf_matrix"]


#: An input counts as not excited at a line when its power density there is below this fraction of
#: its largest power density (-120 dB); it is then left out of the solve at that line.
EXCITATION_FLOOR = 1e-12


#: Largest condition number of the input-coherence matrix R accepted at a line. For two inputs,
#: cond(R) = (1 + |γ|)/(1 - |γ|), so 1e3 refuses an input coherence |γ| above 0.998; independent
#: inputs stay far below it once there are about twice as many segments as inputs.
MAX_INPUT_CONDITION = 1e3


#: Segments transformed at once (bounds the memory of long records).
_SEGMENT_BATCH = 256


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
