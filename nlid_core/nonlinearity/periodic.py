"""How a record is cut for the best linear approximation (:mod:`.bla`): the period of a repeating input
(autocorrelation peaks confirmed by samples that match one lag apart), the settling periods dropped from
the response, the whole periods of each realisation, or segments when the input does not repeat."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import check_int as _check_int
from ..errors import DataValidationError
from ._args import FloatArray
from .thresholds import (
    DEFAULT_SEGMENTS, MIN_OVERLAP_SAMPLES, MIN_PERIOD, PERIOD_MATCH, PERIOD_MIN_CORR, SILENT_FRACTION
)

__all__ = ["Layout", "detect_period", "periodic_layout"]


#: Samples dropped at the end of a run of repeating samples: the first samples of the next realisation
#: may match by chance (a smooth signal), and a period window must not reach into it.
_EDGE_MARGIN = 2


@dataclass(frozen=True, kw_only=True)
class Layout:
    """How a record is cut into realisations and periods (or segments) for the BLA.

    Attributes
    ----------
    mode : str
        ``"periodic"`` (the input repeats) or ``"segments"`` (it does not: segment averaging).
    period : int
        Samples per period (per segment in ``"segments"`` mode).
    n_periods : int
        Periods used per realisation (1 in ``"segments"`` mode).
    starts : tuple of int
        First sample of the first period used in each realisation (of each segment).
    transient : int
        Samples skipped at the start of each realisation (the fewest over realisations, so that given back
        as ``transient`` it keeps every realisation); 0 for segments.
    noise_source : str
        ``"periods"`` (spread over periods), ``"overlap"`` (a transient repeating the period's end),
        or ``"none"``.
    overlap : tuple of (int, int)
        Sample ranges ``[i0, i1)`` where ``y[i]`` and ``y[i + period]`` are both steady (overlap noise).
    auto : bool
        Period and transient found automatically.
    notes : tuple of str
        What was found or assumed, in words.
    """

    mode: str
    period: int
    n_periods: int
    starts: tuple[int, ...]
    transient: int
    noise_source: str
    overlap: tuple[tuple[int, int], ...] = ()
    auto: bool = True
    notes: tuple[str, ...] = ()

    @property
    def n_realisations(self) -> int:
        """Realisations (segments) used."""
        return len(self.starts)

    def describe(self, fs: float) -> str:
        """One line, e.g. ``"7 realisations × 1 period of 8192 samples (13.4 s), 502 transient samples skipped"``."""
        if self.mode == "segments":
            return f"{self.n_realisations} segments of {self.period} samples ({self.period / fs:.3g} s)"
        m, p = self.n_realisations, self.n_periods
        return (f"{m} realisation{'s' if m != 1 else ''} × {p} period{'s' if p != 1 else ''} of {self.period}"
                f" samples ({self.period / fs:.3g} s), at least {self.transient} transient samples skipped")


def _autocorrelation(u: FloatArray) -> FloatArray:
    x = u - u.mean()
    n = x.size
    nfft = 1 << int(math.ceil(math.log2(2 * n)))
    spec = np.fft.rfft(x, nfft)
    r = np.fft.irfft(spec * np.conj(spec), nfft)[:n]
    return np.asarray(r / r[0], dtype=np.float64) if r[0] > 0 else np.zeros(n)


def _match_runs(u: FloatArray, period: int) -> list[tuple[int, int]]:
    """Runs ``[a, b)`` of samples with ``u[i] ≈ u[i + period]`` (smoothed difference power below
    ``PERIOD_MATCH`` of the signal power, and the signal power above ``SILENT_FRACTION`` of the record's),
    short gaps bridged, at least ``MIN_OVERLAP_SAMPLES`` long."""
    if period >= u.size:
        return []
    x = u - u.mean()
    d = (x[period:] - x[:-period]) ** 2
    s = x[period:] ** 2 + x[:-period] ** 2
    w = int(np.clip(period // 16, 8, 64))
    kernel = np.ones(w) / w
    ds = np.convolve(d, kernel, mode="same")
    ss = np.convolve(s, kernel, mode="same")
    # silent stretches (a zero input before or between tests) repeat trivially: they are not a period
    loud = ss > 2.0 * SILENT_FRACTION * float(np.mean(x**2))
    match = (ds < PERIOD_MATCH * 0.5 * ss) & loud
    if not match.any():
        return []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], match.astype(np.int8), [0]))))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
    merged: list[tuple[int, int]] = []
    for a, b in runs:
        if merged and a - merged[-1][1] <= w:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    # the smoothed mask puts a run's edges about w/2 inside the true ones: refine each edge to the sample as
    # the change point of the cumulative score PERIOD_MATCH·s/2 − d (positive where samples repeat)
    score = PERIOD_MATCH * 0.5 * s - d
    out = []
    for a, b in merged:
        if b - a < MIN_OVERLAP_SAMPLES:
            continue
        lo, hi = max(a - w, 0), min(a + w, b)
        start = lo + int(np.argmin(np.concatenate(([0.0], np.cumsum(score[lo:hi])))))
        lo, hi = max(b - w, start), min(b + w, d.size)
        end = lo + int(np.argmax(np.concatenate(([0.0], np.cumsum(score[lo:hi]))))) - _EDGE_MARGIN
        if end - start >= MIN_OVERLAP_SAMPLES:
            out.append((start, end))
    return out


def detect_period(u: FloatArray) -> int | None:
    """Period of a repeating input (samples), or None when it does not repeat.

    The candidate lags are the largest peaks of the normalised autocorrelation (at least
    ``MIN_PERIOD`` samples, at most the length less ``MIN_OVERLAP_SAMPLES``). A lag is a period
    when its correlation exceeds ``PERIOD_MIN_CORR`` and three times the median magnitude of the
    correlation over the half to one-and-a-half times that lag (an isolated peak: a pure tone or a
    sweep, whose correlation oscillates smoothly, is not taken for a multisine period), and when
    samples one lag apart match over runs of at least ``MIN_OVERLAP_SAMPLES`` samples. When a
    divisor of the best lag (down to 1/8) also qualifies with at least 80 % of its correlation,
    the shortest such divisor is the period.

    Parameters
    ----------
    u : (n,) ndarray
        The input (force) signal.

    Returns
    -------
    int or None
    """
    x = np.asarray(u, dtype=np.float64)
    n = x.size
    hi = n - MIN_OVERLAP_SAMPLES
    if x.ndim != 1 or hi <= MIN_PERIOD + 2 or not np.isfinite(x).all():
        return None
    r = _autocorrelation(x)
    seg = r[MIN_PERIOD:hi]
    peaks = np.flatnonzero((seg[1:-1] >= seg[:-2]) & (seg[1:-1] >= seg[2:]) & (seg[1:-1] > PERIOD_MIN_CORR)) + 1
    if peaks.size == 0:
        return None
    lags = peaks + MIN_PERIOD
    order = lags[np.argsort(r[lags])[::-1]][:8]

    def isolated(lag: int) -> bool:
        lo, up = max(1, lag // 2), min(n - 1, lag + lag // 2)
        return bool(r[lag] > PERIOD_MIN_CORR and r[lag] > 3.0 * float(np.median(np.abs(r[lo:up]))))

    def qualifies(lag: int) -> bool:
        return isolated(lag) and bool(_match_runs(x, lag))

    for lag in (int(v) for v in order):
        if not qualifies(lag):
            continue
        best = lag
        for k in range(8, 1, -1):
            base = int(round(lag / k))
            if base < MIN_PERIOD:
                continue
            cand = base + int(np.argmax(r[base - 1 : base + 2])) - 1
            if r[cand] >= 0.8 * r[lag] and qualifies(cand):
                best = cand
                break
        return best
    return None


def _drop_settling(y: FloatArray, start: int, period: int, n_periods: int) -> int:
    """Leading periods to drop because the output still settles (needs >= 3 periods)."""
    if n_periods < 3:
        return 0
    blocks = y[start : start + n_periods * period].reshape(n_periods, period)
    d = np.sqrt(np.mean(np.diff(blocks, axis=0) ** 2, axis=1))
    ref = float(np.median(d[1:])) if d.size > 1 else float(d[0])
    drop = 0
    while drop < n_periods - 2 and d[drop] > 3.0 * ref:
        drop += 1
    return drop


def periodic_layout(
    u: FloatArray, y: FloatArray | None = None, *, period: int | None = None, transient: int | None = None,
    n_segments: int = DEFAULT_SEGMENTS, segments: bool = False,
) -> Layout:
    """Cut a record into realisations and periods (or into segments when the input does not repeat).

    Parameters
    ----------
    u : (n,) ndarray
        Input (force).
    y : (n,) ndarray or None
        Output; when given, leading periods in which it still settles are dropped (3 or more periods).
    period : int or None
        Samples per period; None finds it (:func:`detect_period`).
    transient : int or None
        Samples skipped at the start of each realisation; None: the samples before the last whole
        periods of each realisation (plus periods in which the output still settles).
    n_segments : int
        Segments for segment averaging when the input does not repeat.
    segments : bool
        Use segment averaging whatever the input (``period`` and ``transient`` are then ignored).

    Returns
    -------
    Layout
    """
    x = np.asarray(u, dtype=np.float64)
    n = x.size
    n_segments = _check_int("n_segments", n_segments, 2, 1000)
    if period is not None:
        period = _check_int("period", period, 8, n)
    if transient is not None:
        transient = _check_int("transient", transient, 0, n - 1)
    auto = period is None
    notes: list[str] = []
    per = None if segments else (detect_period(x) if period is None else period)
    if per is None:
        seg = n // n_segments
        if seg < 16:
            raise DataValidationError(f"`n_segments`: record too short for {n_segments} segments ({n} samples)")
        notes.append(f"segment averaging over {n_segments} segments of {seg} samples" if segments else
                     f"the input does not repeat: segment averaging over {n_segments} segments of {seg} samples")
        return Layout(mode="segments", period=seg, n_periods=1, starts=tuple(i * seg for i in range(n_segments)),
                      transient=0, noise_source="none", auto=auto, notes=tuple(notes))
    runs = _match_runs(x, per)
    if not runs:
        notes.append(f"the input does not repeat with a period of {per} samples; the record is taken as one"
                     " realisation")
        runs = [(0, max(n - per, 0))]
    blocks: list[tuple[int, int, int, int]] = []  # (block start, first period start, periods, leftover)
    for a, b in runs:
        end = min(b + per, n)
        if transient is not None:
            first = a + transient
            p = (min(end + _EDGE_MARGIN, n) - first) // per
            left = transient
        else:
            p = (end - a) // per
            first = end - p * per
            left = first - a
        if p < 1:
            continue
        if y is not None and transient is None:
            drop = _drop_settling(np.asarray(y, dtype=np.float64), first, per, p)
            first += drop * per
            p -= drop
            left += drop * per
        blocks.append((a, first, p, left))
    if not blocks:
        raise DataValidationError(
            f"no realisation holds a whole period of {per} samples after a transient of"
            f" {transient if transient is not None else 'the detected'} samples")
    p_use = min(b[2] for b in blocks)
    starts = tuple(first + (p - p_use) * per for _, first, p, _ in blocks)
    skipped = min(left + (p - p_use) * per for _, _, p, left in blocks)
    overlap: list[tuple[int, int]] = []
    if p_use == 1:
        for a, first, p, left in blocks:
            lo = a + left // 2
            hi = min(first, n - per)
            if p == 1 and hi - lo >= MIN_OVERLAP_SAMPLES // 2 and left >= MIN_OVERLAP_SAMPLES:
                overlap.append((lo, hi))
    if p_use >= 2:
        source = "periods"
    elif sum(hi - lo for lo, hi in overlap) >= MIN_OVERLAP_SAMPLES:
        source = "overlap"
        notes.append("one period per realisation: the noise level comes from the transient samples that repeat"
                     " the end of the period")
    else:
        source = "none"
        overlap = []
        notes.append("one period per realisation and no repeated samples: the noise level is unknown")
    if auto:
        notes.insert(0, f"period {per} samples found from the input")
    return Layout(mode="periodic", period=per, n_periods=p_use, starts=starts, transient=int(skipped),
                  noise_source=source, overlap=tuple(overlap), auto=auto, notes=tuple(notes))
