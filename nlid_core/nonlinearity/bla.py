r"""Best linear approximation (BLA) with its noise and nonlinear-distortion levels per frequency.

A nonlinear system driven by a random (or random-phase multisine) excitation of a given power
spectrum has a *best linear approximation* :math:`G_{BLA}`: the linear system whose output is
closest, in the mean-square sense, to the measured one. What the BLA leaves out is the
*stochastic nonlinear distortion* :math:`Y_S`, which behaves like noise over realisations of the
excitation but, unlike noise, does not average out over periods of one realisation. So with
``M`` realisations of ``P`` periods each (Pintelon & Schoukens 2012, §4.3, "robust method"):

.. math::

    \hat U^{[m]} = \tfrac1P \sum_p U^{[m,p]},\quad \hat Y^{[m]} = \tfrac1P \sum_p Y^{[m,p]},\quad
    \hat G^{[m]} = \hat Y^{[m]} / \hat U^{[m]},\qquad
    \hat G_{BLA} = \tfrac1M \sum_m \hat G^{[m]},

    \hat\sigma^2_{\hat G^{[m]},n} = |\hat G^{[m]}|^2 \Big( \frac{\hat\sigma^2_{\hat Y}}{|\hat Y|^2}
      + \frac{\hat\sigma^2_{\hat U}}{|\hat U|^2}
      - 2\,\mathrm{Re}\frac{\hat\sigma^2_{\hat Y\hat U}}{\hat Y \bar{\hat U}} \Big),\qquad
    \hat\sigma^2_{\hat G_{BLA},n} = \tfrac1{M^2} \sum_m \hat\sigma^2_{\hat G^{[m]},n},

    \hat\sigma^2_{\hat G_{BLA}} = \frac{1}{M(M-1)} \sum_m |\hat G^{[m]} - \hat G_{BLA}|^2,\qquad
    \hat\sigma^2_{\hat G_{BLA},s} \approx \hat\sigma^2_{\hat G_{BLA}} - \hat\sigma^2_{\hat G_{BLA},n},

where the (co)variances of :math:`\hat Y, \hat U` are the sample (co)variances over the ``P``
periods divided by ``P``. The *total* variance (over realisations) holds noise and distortion;
the *noise* variance (over periods) noise alone; the difference is the distortion. For a linear
system both estimate the same thing, so their ratio follows an F distribution with
``2(M-1)`` and ``2M(P-1)`` degrees of freedom; a nonlinear system pushes it up.

Records with one period per realisation (the Silverbox benchmark: ten odd random-phase multisines
of 8192 samples, each preceded by about 500 transient samples that repeat the end of the period)
have no spread over periods. There the noise comes from the *overlap*: the second half of the
transient repeats the period's last samples, so ``y[i] - y[i+N]`` there is noise alone; its
spectrum (Welch, short segments) gives the noise level per line (a transient not yet decayed makes
the noise look larger, which errs towards "linear").

Records whose input does not repeat (random noise, several chirps) fall back to *segment
averaging*: the record is cut into ``M`` Hann-windowed segments and the BLA is the H1 estimate
:math:`\sum_m Y_m \bar U_m / \sum_m |U_m|^2` with the residual variance
:math:`\sum_m |Y_m - \hat G U_m|^2 / (M-1) / \sum_m |U_m|^2`. That variance mixes noise,
nonlinear distortion and leakage: it cannot tell them apart, and the result says so.

Periods and realisations are found from the input alone (:func:`periodic_layout`): a period is a
lag at which the input's autocorrelation has an isolated peak and samples one period apart
match; a realisation is a run of such matching samples. The period and the transient can be given
instead.

References
----------
R. Pintelon and J. Schoukens, *System Identification: A Frequency Domain Approach*, 2nd ed.,
Wiley-IEEE Press, 2012, ch. 3 (multisines, detection lines) and ch. 4 (the best linear
approximation, its noise and nonlinear-distortion variances from P periods × M realisations).
J. Schoukens, R. Pintelon, T. Dobrowiecki and Y. Rolain, "Identification of linear systems with
nonlinear distortions", *Automatica* 41(3), 491–504, 2005, doi:10.1016/j.automatica.2004.10.004.
T. Wigren and J. Schoukens, "Three free data sets for development and benchmarking in nonlinear
system identification", European Control Conference 2013, 2933–2938 (the Silverbox records).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import signal as sp_signal
from scipy import stats

from ..errors import ModelSpecError
from ..estimate import ProgressFn
from ..record import Record
from ._args import ComplexArray, FloatArray, _check_channel, _check_record, _ratio_unit, _unwrapped_deg
from .detection import DetectionLines, detection_lines, excited_lines, input_kind
from .periodic import Layout, detect_period, periodic_layout
from .thresholds import BLA_CONFIDENCE, BLA_MIN_DB, BLA_MIN_FRACTION, DEFAULT_SEGMENTS, ODD_TOLERANCE

__all__ = ["Layout", "BLA", "detect_period", "periodic_layout", "bla", "bla_findings"]




@dataclass(frozen=True, kw_only=True)
class BLA:
    """Best linear approximation from the force to a response, with its variances per line.

    Attributes
    ----------
    record, output : str
    unit : str
        Unit of ``g`` (response unit over force unit, e.g. ``V/V``).
    y_unit, u_unit : str
    fs : float
    layout : Layout
    freq_hz : (m,) ndarray
        DFT lines of one period (segment), 0 to Nyquist.
    g : (m,) complex ndarray
        The BLA (NaN where the input has no power).
    var_total : (m,) ndarray
        Variance of ``g`` over realisations (noise + distortion), unit², NaN when unknown.
    var_noise : (m,) ndarray
        Variance of ``g`` due to noise alone, unit², NaN when unknown.
    excited : (m,) bool ndarray
        Excited lines (periodic mode) or lines of the excitation band (segments).
    u_power, y_power : (m,) ndarray
        Mean power per line of the period-averaged input and output spectra (amplitude scaling:
        a sine of amplitude A gives A²), averaged over realisations.
    y_noise : (m,) ndarray
        Noise power per line of the period-averaged output spectrum (NaN when unknown).
    detection : DetectionLines or None
        Output energy at unexcited lines (periodic mode only).
    dof_total, dof_noise : int
        Degrees of freedom (real) of the two variance estimates.
    """

    record: str
    output: str
    unit: str
    y_unit: str
    u_unit: str
    fs: float
    layout: Layout
    freq_hz: FloatArray
    g: ComplexArray
    var_total: FloatArray
    var_noise: FloatArray
    excited: NDArray[np.bool_]
    u_power: FloatArray
    y_power: FloatArray
    y_noise: FloatArray
    detection: DetectionLines | None = None
    dof_total: int = 0
    dof_noise: int = 0

    @property
    def var_distortion(self) -> FloatArray:
        """Variance of ``g`` due to nonlinear distortion, ``max(var_total − var_noise, 0)`` (NaN when unknown)."""
        return np.asarray(np.maximum(self.var_total - self.var_noise, 0.0), dtype=np.float64)

    @property
    def band_hz(self) -> tuple[float, float]:
        """Lowest and highest excited line (Hz)."""
        f = self.freq_hz[self.excited]
        return (float(f[0]), float(f[-1])) if f.size else (math.nan, math.nan)

    @property
    def input_kind(self) -> str:
        """Kind of multisine (:func:`.detection.input_kind`), ``"random"`` for segment averaging."""
        return input_kind(self.excited) if self.layout.mode == "periodic" else "random"

    @property
    def has_total(self) -> bool:
        """The total variance (over realisations) is known."""
        return bool(np.isfinite(self.var_total[self.excited]).any())

    @property
    def has_noise(self) -> bool:
        """The noise variance is known."""
        return bool(np.isfinite(self.var_noise[self.excited]).any())

    @staticmethod
    def _db(v: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.where(v > 0, 10 * np.log10(np.where(v > 0, v, 1.0)), -np.inf), dtype=np.float64)

    def level_db(self, which: str) -> FloatArray:
        """``20·log10`` of ``|g|`` (``which="g"``) or of a standard deviation (``"total"``, ``"noise"``,
        ``"distortion"``), dB re 1 ``unit``."""
        if which == "g":
            return self._db(np.abs(self.g) ** 2)
        v = {"total": self.var_total, "noise": self.var_noise, "distortion": self.var_distortion}.get(which)
        if v is None:
            raise ModelSpecError(f"`which` must be g, total, noise or distortion, got {which!r}")
        out = self._db(v)
        return np.asarray(np.where(np.isnan(v), np.nan, out), dtype=np.float64)

    @property
    def phase_deg(self) -> FloatArray:
        """Phase of ``g`` in degrees, unwrapped over the excited lines only (NaN elsewhere)."""
        out = np.full(self.g.shape, np.nan)
        ok = self.excited & np.isfinite(self.g)
        if ok.any():
            out[ok] = _unwrapped_deg(self.g[ok])
        return out

    def stats(self) -> dict[str, float]:
        """Medians over the excited lines: ``g_db``, ``total_db``, ``noise_db``, ``distortion_db``
        (dB re 1 unit), ``total_re_g_db``, ``noise_re_g_db``, ``distortion_re_g_db`` (dB re ``|g|``),
        ``total_over_noise_db`` (median of 10·log10(var_total/var_noise)), ``significant_fraction``
        (fraction of lines whose ratio exceeds the ``BLA_CONFIDENCE`` quantile of F(dof_total,
        dof_noise)) and ``n_lines``."""
        ex = self.excited & np.isfinite(self.g) & (np.abs(self.g) > 0)
        nan = math.nan
        out: dict[str, float] = {"n_lines": float(ex.sum())}
        g2 = np.abs(self.g[ex]) ** 2

        def med_db(v: FloatArray) -> float:
            ok = np.isfinite(v) & (v > 0)
            return float(10 * np.log10(np.median(v[ok]))) if ok.any() else nan

        out["g_db"] = med_db(g2)
        for name, v in (("total", self.var_total), ("noise", self.var_noise), ("distortion", self.var_distortion)):
            out[f"{name}_db"] = med_db(v[ex])
            out[f"{name}_re_g_db"] = med_db(v[ex] / g2) if ex.any() else nan
        vt, vn = self.var_total[ex], self.var_noise[ex]
        ok = np.isfinite(vt) & np.isfinite(vn) & (vn > 0)
        if ok.any() and self.dof_total > 0 and self.dof_noise > 0:
            ratio = vt[ok] / vn[ok]
            crit = float(stats.f.ppf(BLA_CONFIDENCE, self.dof_total, self.dof_noise))
            out["total_over_noise_db"] = float(10 * np.log10(np.median(ratio)))
            out["significant_fraction"] = float(np.mean(ratio > crit))
        else:
            out["total_over_noise_db"] = nan
            out["significant_fraction"] = nan
        return out

    @property
    def nonlinear(self) -> bool | None:
        """Distortion significantly above the noise (True), not (False), or unknown (None): at least
        ``BLA_MIN_FRACTION`` of the excited lines pass the per-line F test and the median ratio
        exceeds ``BLA_MIN_DB``."""
        s = self.stats()
        if not math.isfinite(s["significant_fraction"]):
            return None
        return bool(s["significant_fraction"] >= BLA_MIN_FRACTION and s["total_over_noise_db"] > BLA_MIN_DB)

    def to_columns(self) -> dict[str, FloatArray | NDArray[np.bool_]]:
        """Columns of the BLA table (one row per line up to Nyquist): frequency, excited, |G| (dB),
        phase (deg), total / noise / distortion standard deviation of G (dB), output level and output
        noise level (dB re 1 output unit)."""
        return {
            "freq_hz": self.freq_hz,
            "excited": self.excited,
            "g_real": self.g.real.astype(np.float64),
            "g_imag": self.g.imag.astype(np.float64),
            "g_db": self.level_db("g"),
            "phase_deg": self.phase_deg,
            "total_std_db": self.level_db("total"),
            "noise_std_db": self.level_db("noise"),
            "distortion_std_db": self.level_db("distortion"),
            "output_db": self._db(self.y_power),
            "output_noise_db": np.asarray(np.where(np.isnan(self.y_noise), np.nan, self._db(self.y_noise)),
                                          dtype=np.float64),
        }


def _spectra(sig: FloatArray, starts: tuple[int, ...], period: int, n_periods: int) -> ComplexArray:
    """(M, P, m) amplitude spectra (2/N scaling) of every period."""
    blocks = np.stack([sig[s : s + n_periods * period].reshape(n_periods, period) for s in starts])
    blocks = blocks - blocks.mean(axis=(1, 2), keepdims=True)
    return np.asarray(np.fft.rfft(blocks, axis=2) * (2.0 / period), dtype=np.complex128)


def _overlap_noise(u: FloatArray, y: FloatArray, layout: Layout, fs: float,
                   freq: FloatArray) -> tuple[FloatArray, FloatArray, ComplexArray, int]:
    """Noise power per line (2/N amplitude scaling) of u and y and their cross power, from the overlap.

    In the overlap ranges ``d(i) = s(i) − s(i + N)`` is noise alone with twice the noise's spectrum.
    Its Welch spectrum (short Hann segments within each range, averaged over the ranges) is
    interpolated to the lines of the period; a noise of one-sided density ``S(f)`` puts
    ``2·S(f)·fs/N`` on one line of the period's amplitude spectrum. The degrees of freedom are
    those of the averaged Welch segments (two per segment of ``nseg`` samples, 50 % overlap).
    """
    per = layout.period
    pieces = [(a, b) for a, b in layout.overlap if b - a >= 16]
    shortest = min(b - a for a, b in pieces)
    nseg = int(min(256, 2 ** int(math.floor(math.log2(shortest)))))
    acc_u: float | FloatArray = 0.0
    acc_y: float | FloatArray = 0.0
    acc_uy: complex | ComplexArray = 0j
    weight = 0
    f_w = np.zeros(0)
    for a, b in pieces:
        du = u[a:b] - u[a + per : b + per]
        dy = y[a:b] - y[a + per : b + per]
        f_w, puu = sp_signal.welch(du, fs=fs, nperseg=nseg, detrend="constant")
        _, pyy = sp_signal.welch(dy, fs=fs, nperseg=nseg, detrend="constant")
        _, pyu = sp_signal.csd(dy, du, fs=fs, nperseg=nseg, detrend="constant")
        acc_u = acc_u + puu * (b - a)
        acc_y = acc_y + pyy * (b - a)
        acc_uy = acc_uy + pyu * (b - a)
        weight += b - a
    scale = fs / per  # 2·S·fs/N with S the density of the difference divided by 2
    su = np.interp(freq, f_w, np.asarray(acc_u) / weight) * scale
    sy = np.interp(freq, f_w, np.asarray(acc_y) / weight) * scale
    cuy = np.asarray(acc_uy) / weight
    syu = (np.interp(freq, f_w, cuy.real) + 1j * np.interp(freq, f_w, cuy.imag)) * scale
    dof = max(2, int(2 * (2 * weight / nseg - 1)))
    return (np.asarray(su, dtype=np.float64), np.asarray(sy, dtype=np.float64),
            np.asarray(syu, dtype=np.complex128), dof)


def _periodic(u: FloatArray, y: FloatArray, layout: Layout, fs: float) -> dict[str, object]:
    per, p = layout.period, layout.n_periods
    uu = _spectra(u, layout.starts, per, p)
    yy = _spectra(y, layout.starts, per, p)
    m = uu.shape[0]
    um, ym = uu.mean(axis=1), yy.mean(axis=1)
    if layout.noise_source == "periods":
        scale = 1.0 / (p * (p - 1))
        var_u = np.sum(np.abs(uu - um[:, None]) ** 2, axis=1) * scale
        var_y = np.sum(np.abs(yy - ym[:, None]) ** 2, axis=1) * scale
        cov_yu = np.sum((yy - ym[:, None]) * np.conj(uu - um[:, None]), axis=1) * scale
        dof_noise = 2 * m * (p - 1)
    elif layout.noise_source == "overlap":
        su, sy, syu, dof_noise = _overlap_noise(u, y, layout, fs,
                                                  np.asarray(np.fft.rfftfreq(per, 1.0 / fs), dtype=np.float64))
        var_u = np.broadcast_to(su, um.shape)
        var_y = np.broadcast_to(sy, ym.shape)
        cov_yu = np.broadcast_to(syu, ym.shape)
    else:
        var_u = var_y = np.full(um.shape, np.nan)
        cov_yu = np.full(um.shape, np.nan, dtype=np.complex128)
        dof_noise = 0
    u_power = np.mean(np.abs(um) ** 2, axis=0)
    u_noise = np.mean(var_u, axis=0)
    known_u = bool(np.isfinite(u_noise).all())
    # lines excited in every realisation (a random harmonic grid may differ between realisations);
    # lines excited in some realisations only are neither excited nor detection lines
    each = np.stack([excited_lines(np.abs(um[i]) ** 2, var_u[i] if known_u else None) for i in range(m)])
    excited: NDArray[np.bool_] = np.asarray(each.all(axis=0), dtype=bool)
    partial: NDArray[np.bool_] = np.asarray(each.any(axis=0) & ~excited, dtype=bool)
    even = excited & (np.arange(excited.size) % 2 == 0)
    if 0 < even.sum() <= ODD_TOLERANCE * excited.sum():
        # an odd multisine with a few even lines above the threshold (leakage, a DC drift): those lines
        # are neither excited nor detection lines
        excited &= ~even
        partial |= even
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = np.abs(um) > 0
        gm = np.where(ok, ym / np.where(ok, um, 1.0), np.nan + 0j)
        rel = (var_y / np.abs(ym) ** 2 + var_u / np.abs(um) ** 2
               - 2 * np.real(cov_yu / (ym * np.conj(um))))
        var_gm = np.abs(gm) ** 2 * np.maximum(rel, 0.0)
    gm[:, 0] = np.nan  # DC: the means were removed
    var_gm[:, 0] = np.nan
    g = gm.mean(axis=0)
    var_noise = np.sum(var_gm, axis=0) / m**2
    var_total = np.sum(np.abs(gm - g) ** 2, axis=0) / (m * (m - 1)) if m >= 2 else np.full(g.shape, np.nan)
    y_power = np.mean(np.abs(ym) ** 2, axis=0)
    y_noise = np.mean(var_y, axis=0)
    known = bool(np.isfinite(y_noise).all())
    det = detection_lines(excited, y_power, y_noise if known else None, n_realisations=m, ignore=partial)
    return {"g": g, "var_total": var_total, "var_noise": var_noise, "excited": excited, "u_power": u_power,
            "y_power": y_power, "y_noise": y_noise, "detection": det, "dof_total": 2 * (m - 1) if m >= 2 else 0,
            "dof_noise": dof_noise}


def _segments(u: FloatArray, y: FloatArray, layout: Layout, fs: float) -> dict[str, object]:
    seg, m = layout.period, layout.n_realisations
    win = np.hanning(seg)
    norm = 2.0 / win.sum()
    ub = np.stack([u[s : s + seg] - u[s : s + seg].mean() for s in layout.starts]) * win
    yb = np.stack([y[s : s + seg] - y[s : s + seg].mean() for s in layout.starts]) * win
    uu = np.fft.rfft(ub, axis=1) * norm
    yy = np.fft.rfft(yb, axis=1) * norm
    suu = np.sum(np.abs(uu) ** 2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = suu > 0
        g = np.where(ok, np.sum(yy * np.conj(uu), axis=0) / np.where(ok, suu, 1.0), np.nan + 0j)
        resid = np.sum(np.abs(yy - g * uu) ** 2, axis=0) / (m - 1)
        var_total = np.where(ok, resid / np.where(ok, suu, 1.0), np.nan)
    g[0] = np.nan  # DC: the means were removed
    var_total[0] = np.nan
    u_power = suu / m
    from .spectra import power_band

    lo, hi = power_band(u, fs)
    freq = np.fft.rfftfreq(seg, 1.0 / fs)
    excited = (freq >= lo) & (freq <= hi) & (u_power > float(np.max(u_power[1:])) * 1e-4)
    excited[0] = False
    return {"g": g, "var_total": var_total, "var_noise": np.full(g.shape, np.nan), "excited": excited,
            "u_power": u_power, "y_power": np.mean(np.abs(yy) ** 2, axis=0), "y_noise": np.full(g.shape, np.nan),
            "detection": None, "dof_total": 2 * (m - 1), "dof_noise": 0}


def bla(
    rec: Record, *, output: str = "x", period: int | None = None, transient: int | None = None,
    n_segments: int = DEFAULT_SEGMENTS, segments: bool = False, progress: ProgressFn | None = None,
) -> BLA:
    """Best linear approximation from the force to ``output``, with noise and distortion variances.

    Parameters
    ----------
    rec : Record
    output : str
        Response channel (``x``, ``v`` or ``a``).
    period : int or None
        Samples per period; None finds it from the force (:func:`periodic_layout`).
    transient : int or None
        Samples skipped at the start of each realisation; None finds them.
    n_segments : int
        Segments for segment averaging when the force does not repeat.
    segments : bool
        Segment averaging whatever the force (``period`` and ``transient`` ignored).
    progress : callable or None
        ``progress(stage, fraction, message)``.

    Returns
    -------
    BLA

    Raises
    ------
    DataValidationError
        The record is too short, or no realisation holds a whole period.
    """
    rec = _check_record(rec)
    if output not in ("x", "v", "a"):
        raise ModelSpecError(f"`output` must be x, v or a, got {output!r}")
    y = rec.channel(_check_channel(rec, "output", output))
    u = rec.f
    if progress is not None:
        progress("best linear approximation", 0.1, "finding periods and realisations")
    layout = periodic_layout(u, y, period=period, transient=transient, n_segments=n_segments, segments=segments)
    if progress is not None:
        progress("best linear approximation", 0.5, "spectra of every period")
    parts = _periodic(u, y, layout, rec.fs) if layout.mode == "periodic" else _segments(u, y, layout, rec.fs)
    freq = np.fft.rfftfreq(layout.period, 1.0 / rec.fs)
    result = BLA(record=rec.name, output=output, unit=_ratio_unit(rec.unit(output), rec.unit("f")),
                 y_unit=rec.unit(output), u_unit=rec.unit("f"), fs=rec.fs, layout=layout,
                 freq_hz=np.asarray(freq, dtype=np.float64), **parts)  # type: ignore[arg-type]
    if progress is not None:
        progress("best linear approximation", 1.0, "done")
    return result


def _fmt_db(v: float) -> str:
    return f"{v:.0f} dB" if math.isfinite(v) else "unknown"


def bla_findings(b: BLA) -> tuple[str, ...]:
    """Plain-language findings of a BLA: distortion against noise, and the detection lines.

    Parameters
    ----------
    b : BLA

    Returns
    -------
    tuple of str
    """
    if not isinstance(b, BLA):
        raise ModelSpecError(f"`b` must be a BLA, got {type(b).__name__}")
    s = b.stats()
    lo, hi = b.band_hz
    where = f"{int(s['n_lines'])} excited lines, {lo:.3g}-{hi:.3g} Hz"
    out: list[str] = []
    how = b.layout.describe(b.fs)
    if b.layout.mode == "segments":
        out.append(
            f"best linear approximation by segment averaging ({how}): its spread"
            f" ({_fmt_db(s['total_re_g_db'])} re |G|, {where}) mixes noise and nonlinear distortion and cannot"
            " tell them apart; a periodic excitation with several periods or realisations can")
        return tuple(out)
    verdict = b.nonlinear
    if verdict is not None:
        frac = 100 * s["significant_fraction"]
        if verdict:
            head = (f"best linear approximation ({how}): nonlinear distortion"
                    f" {_fmt_db(s['distortion_re_g_db'])}, noise {_fmt_db(s['noise_re_g_db'])} re |G|"
                    f" (medians over {where})")
        else:
            head = (f"best linear approximation ({how}): spread over realisations"
                    f" {_fmt_db(s['total_re_g_db'])}, noise {_fmt_db(s['noise_re_g_db'])} re |G|"
                    f" (medians over {where})")
        if verdict:
            out.append(f"{head}: the distortion stands {s['total_over_noise_db']:.0f} dB above the noise"
                       f" ({frac:.0f} % of the lines significant at {100 * BLA_CONFIDENCE:.0f} %): the system is"
                       " nonlinear at this level")
        else:
            out.append(f"{head}: the spread over realisations matches the noise ({s['total_over_noise_db']:+.1f} dB,"
                       f" {frac:.0f} % of the lines significant, about {100 * (1 - BLA_CONFIDENCE):.0f} % expected"
                       " for a linear system): no nonlinear distortion above the noise at this level")
    elif b.has_noise:
        out.append(f"best linear approximation ({how}): noise {_fmt_db(s['noise_re_g_db'])} re |G| ({where});"
                   " nonlinear distortion at the excited lines needs two or more realisations (different"
                   " random phases): see the detection lines")
    elif b.has_total:
        out.append(f"best linear approximation ({how}): spread over realisations {_fmt_db(s['total_re_g_db'])} re"
                   f" |G| ({where}); it mixes noise and nonlinear distortion (no repeated period gives the noise)")
    det = b.detection
    if det is not None and det.noise_known:
        odd, even, anyc = det.odd_distortion(), det.even_distortion(), det.any_distortion()
        if det.input_kind in ("odd", "random-odd"):
            if odd is not None:
                out.append(f"odd-degree nonlinearity: the output at the unexcited {odd.name} stands"
                           f" {odd.above_noise_db:.0f} dB above the noise ({odd.n_lines} lines): a cubic"
                           " stiffness (k3), quadratic damping (c2) or friction")
            elif verdict:
                out.append("the distortion at the excited (odd) lines is odd-degree: an odd multisine puts"
                           " even-degree products on even lines only (k3, c2 or friction)")
            if even is not None:
                out.append(f"even-degree nonlinearity: the output at the unexcited {even.name} stands"
                           f" {even.above_noise_db:.0f} dB above the noise ({even.n_lines} lines): an asymmetric"
                           " spring (k2) or an offset")
            if odd is None and even is None and not verdict:
                levels = ", ".join(f"{c.name} {c.above_noise_db:+.1f} dB" for c in det.classes)
                out.append(f"no energy above the noise at the unexcited lines ({levels})")
        elif anyc is not None:
            out.append(f"the output at the {anyc.name} stands {anyc.above_noise_db:.0f} dB above the noise: nonlinear"
                       " (an odd multisine would tell odd- from even-degree terms)")
    return tuple(out)
