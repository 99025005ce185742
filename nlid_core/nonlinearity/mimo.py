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

from .._checks import check_int as _check_int
from ..errors import DataValidationError, ModelSpecError
from ..metrics import fit_percent, nrmse, rmse
from ._args import ComplexArray, FloatArray
from .mimo_frf import (
    EXCITATION_FLOOR, FrfMatrix, MAX_INPUT_CONDITION, _as_block, _check_names, _check_pairs, _default_nperseg,
    frf_matrix
)
from .thresholds import LEVEL_SIGNIFICANCE

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


BoolArray = NDArray[np.bool_]


# --------------------------------------------------------------------------- FRF matrix


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
