r"""Fit metrics and residual tests.

* RMSE and NRMSE = RMSE / std(y_meas).
* Fit % (as in MATLAB's ``compare``): :math:`100\,(1 - \|y - \hat y\| / \|y - \bar y\|)`.
* Whiteness: sample autocorrelation :math:`\hat\rho_k` of the residual for
  lags 1..L, the Ljung-Box statistic
  :math:`Q = n(n+2)\sum_k \hat\rho_k^2/(n-k)` against :math:`\chi^2_L`, and
  the fraction of lags outside the ±1.96/√n band. Coloured residuals mean the
  model structure (or the noise model) misses something.
* Input-residual cross-correlation over lags −L..L with the same band: a
  residual correlated with the input means unmodelled input dynamics.
* Structure a white-noise residual does not have (:func:`residual_notes`): a mean (an offset the
  model misses), a linear drift over the record, power concentrated at one frequency.
* Relative standard error :math:`|\sigma_\theta| / |\theta|` (infinite where the value is 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import fft as sp_fft
from scipy import special

from .errors import DataValidationError

__all__ = [
    "rms",
    "residual",
    "relative_error",
    "acf_max_lag",
    "rmse",
    "nrmse",
    "fit_percent",
    "autocorrelation",
    "cross_correlation",
    "WhitenessTest",
    "whiteness_test",
    "ChannelMetrics",
    "channel_metrics",
    "residual_kind",
    "residual_notes",
    "STRUCTURE_SHARE",
    "PEAK_SHARE",
]

#: A residual's mean (or its linear drift) is worth a note when it holds at least this fraction of the
#: residual's mean square: then it is at least half of the RMSE, far beyond what noise gives (1/n).
STRUCTURE_SHARE = 0.25
#: A residual line is not reported where the force holds at least this fraction of its power (there the
#: residual is the model's error at the excitation itself).
FORCED_SHARE = 0.05
#: Below this NRMSE a residual is numerical (integration, rounding) rather than something the model misses.
NOTE_MIN_NRMSE = 1e-4
#: Power of the detrended residual within ``_LINE_BINS`` lines either side of its spectrum's peak (the
#: Hann window's main lobe) above this fraction, in each half of the record, means a periodic component
#: the model misses.
PEAK_SHARE = 0.5
_LINE_BINS = 3

FloatArray = NDArray[np.float64]


def rms(a: FloatArray) -> float:
    """Root mean square of ``a`` without under- or overflow (0 for an empty or all-zero array).

    Squares ``a / max|a|`` rather than ``a``, so signals of 1e-200 or 1e200 keep their rms.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return 0.0
    peak = float(np.max(np.abs(a)))
    if not (peak > 0 and math.isfinite(peak)):
        return peak if not math.isfinite(peak) else 0.0
    return peak * math.sqrt(float(np.mean((a / peak) ** 2)))


def residual(measured: ArrayLike, predicted: ArrayLike, *, start: int = 0) -> FloatArray:
    """``predicted − measured`` from sample ``start`` on (e.g. after the samples that set an initial state).

    Parameters
    ----------
    measured : (n,) array_like
        Measured signal.
    predicted : (n,) array_like
        Simulated or predicted signal, same length.
    start : int
        First sample kept (0 ≤ start ≤ n).

    Returns
    -------
    (n - start,) ndarray
        Residual, unit of the signals.

    Raises
    ------
    DataValidationError
        The signals differ in shape, or ``start`` is outside 0..n.
    """
    y = np.asarray(measured, dtype=np.float64)
    y_hat = np.asarray(predicted, dtype=np.float64)
    if y.ndim != 1 or y.shape != y_hat.shape:
        raise DataValidationError(
            f"`measured` and `predicted` must be 1-D of one length, got shapes {y.shape} and {y_hat.shape}"
        )
    if not 0 <= int(start) <= y.size:
        raise DataValidationError(f"`start` must lie in 0..{y.size}, got {start}")
    return y_hat[int(start):] - y[int(start):]


#: Relative errors above this (as a percentage) are written as a bound: the digits would mean nothing.
PERCENT_CAP = 1e4


def percent_text(fraction: float, decimals: int = 2) -> str:
    """A relative error (0.05 = 5 %) as a percentage without the sign: ``"5.00"``, ``"231"``, ``">10000"``.

    Below 100 % with ``decimals`` decimals, up to :data:`PERCENT_CAP` rounded to whole percent, beyond it
    as a bound (a standard error 10^19 times its estimate says "undetermined", not a number); ``"inf"``
    when not finite.
    """
    if not math.isfinite(fraction):
        return "inf"
    pct = 100.0 * abs(fraction)
    if pct >= PERCENT_CAP:
        return f">{PERCENT_CAP:.0f}"
    if pct >= 100.0:
        return f"{pct:.0f}"
    return f"{pct:.{decimals}f}"


def percent_cell(fraction: float) -> str | None:
    """A relative error as a table cell: the percentage to 3 significant digits, ``">10000"`` beyond
    :data:`PERCENT_CAP` (digits there would mean nothing and widen the column), None when not finite."""
    if not math.isfinite(fraction):
        return None
    pct = 100.0 * abs(fraction)
    return f">{PERCENT_CAP:.0f}" if pct >= PERCENT_CAP else f"{pct:.3g}"


def relative_error(error: ArrayLike, value: ArrayLike) -> FloatArray:
    """``|error| / |value|`` elementwise, infinite where ``value`` is 0 (e.g. relative standard errors).

    Parameters
    ----------
    error : array_like
        Absolute errors (e.g. standard errors), any shape broadcastable with ``value``.
    value : array_like
        Reference values (e.g. estimates).

    Returns
    -------
    ndarray
        Fractions (0.05 = 5 %); NaN where ``error`` is NaN.
    """
    err = np.abs(np.asarray(error, dtype=np.float64))
    ref = np.abs(np.asarray(value, dtype=np.float64))
    err, ref = np.broadcast_arrays(err, ref)
    out = np.full(err.shape, np.inf)
    np.divide(err, ref, out=out, where=ref > 0)
    out[np.isnan(err)] = np.nan
    return out


def acf_max_lag(n: int, *, cap: int = 100) -> int:
    """Lags to show of a residual autocorrelation: a tenth of the ``n`` samples, at least 5, at most ``cap``.

    Parameters
    ----------
    n : int
        Number of residual samples.
    cap : int
        Largest lag returned (at least 5).

    Returns
    -------
    int
    """
    return int(min(max(5, cap), max(5, int(n) // 10)))


def rmse(measured: FloatArray, predicted: FloatArray) -> float:
    """Root-mean-square of ``predicted - measured``."""
    return rms(np.asarray(predicted) - np.asarray(measured))


def nrmse(measured: FloatArray, predicted: FloatArray) -> float:
    """RMSE of ``predicted`` divided by the standard deviation of ``measured``."""
    sd = float(np.std(measured))
    return rmse(measured, predicted) / sd if sd > 0 else float("inf")


def fit_percent(measured: FloatArray, predicted: FloatArray) -> float:
    """``100 · (1 − ‖y − ŷ‖ / ‖y − mean(y)‖)`` with y = ``measured``, ŷ = ``predicted``; 100 is perfect."""
    y = np.asarray(measured)
    den = float(np.linalg.norm(y - y.mean()))
    if den == 0:
        return float("nan")
    return 100.0 * (1.0 - float(np.linalg.norm(y - np.asarray(predicted))) / den)


def autocorrelation(r: FloatArray, max_lag: int) -> FloatArray:
    """Normalised autocorrelation for lags 0..max_lag (FFT-based, biased estimator)."""
    r = np.asarray(r, dtype=np.float64) - np.mean(r)
    n = r.size
    nfft = sp_fft.next_fast_len(n + max_lag + 1, real=True)  # no circular wrap up to max_lag
    spec = sp_fft.rfft(r, nfft)
    acov = sp_fft.irfft(spec * np.conj(spec), nfft)[: max_lag + 1]
    return acov / acov[0] if acov[0] > 0 else np.zeros(max_lag + 1)


def cross_correlation(u: FloatArray, r: FloatArray, max_lag: int) -> tuple[NDArray[np.int64], FloatArray]:
    """Normalised cross-correlation E[u(t) r(t+k)] for k = −max_lag..max_lag."""
    u = np.asarray(u, dtype=np.float64) - np.mean(u)
    r = np.asarray(r, dtype=np.float64) - np.mean(r)
    n = u.size
    nfft = sp_fft.next_fast_len(n + max_lag + 1, real=True)
    cc = sp_fft.irfft(np.conj(sp_fft.rfft(u, nfft)) * sp_fft.rfft(r, nfft), nfft)
    den = float(np.sqrt(np.sum(u * u) * np.sum(r * r)))
    lags = np.arange(-max_lag, max_lag + 1)
    vals = cc[lags % nfft] / den if den > 0 else np.zeros(lags.size)
    return lags, vals


@dataclass(frozen=True, kw_only=True)
class WhitenessTest:
    """Ljung-Box test of residual whiteness.

    Attributes
    ----------
    lags : int
    q_stat : float
    p_value : float
    fraction_outside : float
        Fraction of lags 1..L with |ρ_k| > 1.96/√n.
    white : bool
        ``p_value >= 0.01``.
    acf : (L + 1,) ndarray
    band : float
        1.96/√n.
    """

    lags: int
    q_stat: float
    p_value: float
    fraction_outside: float
    white: bool
    acf: FloatArray
    band: float


def whiteness_test(r: FloatArray, max_lag: int | None = None) -> WhitenessTest:
    """Ljung-Box whiteness test of the residual sequence ``r`` over lags 1..``max_lag``.

    ``max_lag`` defaults to n/10 clipped to [5, 50].
    """
    r = np.asarray(r, dtype=np.float64)
    n = r.size
    lag = int(max_lag) if max_lag is not None else int(min(50, max(5, n // 10)))
    lag = max(1, min(lag, n - 2))
    acf = autocorrelation(r, lag)
    k = np.arange(1, lag + 1)
    q = float(n * (n + 2) * np.sum(acf[1:] ** 2 / (n - k)))
    p = float(special.chdtrc(lag, q))  # chi-square survival function
    band = 1.96 / np.sqrt(n)
    frac = float(np.mean(np.abs(acf[1:]) > band))
    return WhitenessTest(lags=lag, q_stat=q, p_value=p, fraction_outside=frac, white=p >= 0.01, acf=acf, band=band)


def residual_kind(channel: str) -> str:
    """Which residual the metrics of ``channel`` score: ``"equation error"`` for a force channel (the model's
    force from the measured motion against the measured force), ``"simulation error"`` for a response channel
    (the response simulated from the measured force against the measured one).

    Their whiteness tests answer different questions and their p-values are not comparable: the equation
    error carries the noise of the derived velocity and acceleration, the simulation error the effect of an
    initial state and of slow model errors accumulated over time.
    """
    return "equation error" if str(channel).startswith("f") else "simulation error"


@dataclass(frozen=True, kw_only=True)
class ChannelMetrics:
    """Goodness of fit of one channel of one record."""

    record: str
    channel: str
    unit: str
    n: int
    rmse: float
    nrmse: float
    fit_percent: float
    whiteness: WhitenessTest
    input_xcorr_fraction_outside: float = float("nan")
    offset: float = float("nan")
    offset_share: float = float("nan")
    drift: float = float("nan")
    drift_share: float = float("nan")
    peak_hz: float = float("nan")
    peak_share: float = float("nan")

    def to_dict(self) -> dict[str, object]:
        return {
            "record": self.record,
            "channel": self.channel,
            "unit": self.unit,
            "n": self.n,
            "rmse": self.rmse,
            "nrmse": self.nrmse,
            "fit_percent": self.fit_percent,
            "whiteness_p_value": self.whiteness.p_value,
            "residual_white": self.whiteness.white,
            "acf_fraction_outside": self.whiteness.fraction_outside,
            "input_xcorr_fraction_outside": self.input_xcorr_fraction_outside,
            "residual_offset": self.offset,
            "residual_offset_share": self.offset_share,
            "residual_drift": self.drift,
            "residual_drift_share": self.drift_share,
            "residual_peak_hz": self.peak_hz,
            "residual_peak_share": self.peak_share,
        }

    def notes(self, terms: tuple[str, ...] = (), *, fitted: bool = True) -> tuple[str, ...]:
        """Plain-words notes on the residual's structure (see :func:`residual_notes`)."""
        return residual_notes(self, terms, fitted=fitted)


def channel_metrics(
    record: str,
    channel: str,
    unit: str,
    measured: FloatArray,
    predicted: FloatArray,
    u: FloatArray | None = None,
    fs: float | None = None,
) -> ChannelMetrics:
    """All metrics of one channel; with the input ``u``, also the input-residual cross-correlation.

    ``input_xcorr_fraction_outside`` is the fraction of lags −L..L (L as in the
    whiteness test) where |corr(u, residual)| exceeds 1.96/√n. The residual's
    structure (mean, linear drift, and with the sampling rate ``fs`` its spectral
    peak) is measured on what the model misses, ``measured − predicted``.
    """
    frac = float("nan")
    resid = np.asarray(predicted) - np.asarray(measured)
    white = whiteness_test(resid)
    if u is not None:
        _, cc = cross_correlation(np.asarray(u), resid, white.lags)
        frac = float(np.mean(np.abs(cc) > white.band))
    return ChannelMetrics(
        **_structure(-resid, fs, None if u is None else np.asarray(u)),
        input_xcorr_fraction_outside=frac,
        record=record,
        channel=channel,
        unit=unit,
        n=int(np.asarray(measured).size),
        rmse=rmse(measured, predicted),
        nrmse=nrmse(measured, predicted),
        fit_percent=fit_percent(measured, predicted),
        whiteness=white,
    )


def _structure(miss: FloatArray, fs: float | None, u: FloatArray | None = None) -> dict[str, float]:
    """Mean, linear drift and spectral peak of ``miss`` with the share of its mean square each holds."""
    nan = float("nan")
    out = {"offset": nan, "offset_share": nan, "drift": nan, "drift_share": nan, "peak_hz": nan, "peak_share": nan}
    n = miss.size
    if n < 8 or not np.all(np.isfinite(miss)):
        return out
    peak = float(np.max(np.abs(miss)))
    if peak == 0:
        return out
    r = miss / peak  # exact shares without under- or overflow
    ms = float(np.mean(r * r))
    mean = float(np.mean(r))
    tau = np.linspace(-0.5, 0.5, n)
    slope = float(tau @ (r - mean)) / float(tau @ tau)
    centred = r - mean - slope * tau
    out.update(offset=mean * peak, offset_share=mean * mean / ms, drift=slope * peak,
               drift_share=slope * slope * float(tau @ tau) / n / ms)
    if fs is not None and fs > 0 and n >= 128:
        # a line the model misses persists: its share is read in each half of the record (Hann-windowed
        # periodograms, the peak found in their sum) and the smaller one kept, so the decaying free vibration
        # of an initial-state error (first half only) does not count as a line
        half = n // 2
        window = np.hanning(half)

        def power(x: FloatArray) -> FloatArray:
            return np.abs(sp_fft.rfft((x - np.mean(x)) * window)) ** 2

        parts = (power(centred[:half]), power(centred[half:2 * half]))
        both = parts[0] + parts[1]
        if float(np.sum(both[1:])) > 0:
            k = int(np.argmax(both[1:])) + 1
            lobe = slice(max(k - _LINE_BINS, 1), k + _LINE_BINS + 1)
            shares = [float(np.sum(p[lobe])) / float(np.sum(p[1:])) if np.sum(p[1:]) > 0 else 0.0 for p in parts]
            # where the force itself has its power, the residual is the model's error at the excitation (a
            # parameter or an extrapolation error), not a line of its own
            forced = 0.0
            if u is not None and u.size == n:
                pu = power(u[:half]) + power(u[half:2 * half])
                forced = float(np.sum(pu[lobe])) / float(np.sum(pu[1:])) if np.sum(pu[1:]) > 0 else 0.0
            if forced < FORCED_SHARE:
                out.update(peak_hz=float(k * fs / half), peak_share=min(shares))
    return out


def residual_notes(m: ChannelMetrics, terms: tuple[str, ...] = (), *, fitted: bool = True) -> tuple[str, ...]:
    """Plain-words notes when a residual carries structure that noise would not: a mean, a drift, a line.

    Parameters
    ----------
    m : ChannelMetrics
    terms : tuple of str
        The model's terms (an offset note proposes ``f0`` only when the model lacks it).
    fitted : bool
        True for the records the model was fitted on, False for a validation record (an offset there
        with ``f0`` in the model means the records' offsets differ).

    Returns
    -------
    tuple of str
        Empty when the residual shows none of these (each share below its threshold).
    """
    from .quantity import quantity

    out: list[str] = []
    if not m.nrmse >= NOTE_MIN_NRMSE:  # at the accuracy of the integration (or NaN): nothing to read
        return ()
    what = f"the {residual_kind(m.channel)} of {m.channel} on {m.record}"
    if math.isfinite(m.offset_share) and m.offset_share >= STRUCTURE_SHARE:
        head = (f"{what} has a mean of {'+' if m.offset > 0 else ''}{quantity(m.offset, m.unit)}"
                f" ({100 * m.offset_share:.0f} % of its mean square)")
        if "f0" not in terms:
            out.append(f"{head}: the model misses an offset; add f0 (a constant force) to the model")
        elif fitted:
            out.append(f"{head} although the model has f0: the offset is not constant (a drift, or an offset"
                       " that differs between the fitted records)")
        else:
            out.append(f"{head} although the model has f0: this record's offset differs from the fitted"
                       " records' (check the sensor's zero)")
    if math.isfinite(m.drift_share) and m.drift_share >= STRUCTURE_SHARE:
        out.append(f"{what} drifts by {quantity(m.drift, m.unit)} over the record ({100 * m.drift_share:.0f} % of"
                   " its mean square): a slow drift the model cannot follow (sensor, temperature, a slow mode);"
                   " remove the trend from the record or fit a shorter stretch")
    if math.isfinite(m.peak_share) and m.peak_share >= PEAK_SHARE:
        out.append(f"{what} has {100 * m.peak_share:.0f} % of its power near {m.peak_hz:.3g} Hz: a periodic"
                   " component the model misses (a term that acts at that frequency, or a disturbance)")
    return tuple(out)
