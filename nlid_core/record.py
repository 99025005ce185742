"""Validated measurement records of a single-DOF test.

A :class:`Record` holds time ``t`` (s), force ``f`` (N), displacement ``x``
(m) and, where measured or derived, velocity ``v`` (m/s) and acceleration
``a`` (m/s²), all as 1-D float64 arrays of one length. Units other than SI
may be kept (e.g. volts for an electrical analogue such as Silverbox); they
are then recorded in :attr:`Record.units` and carried into parameter units.

Every constructor validates at the boundary and raises
:class:`~nlid_core.errors.DataValidationError` naming the channel and the
(0-based data) row of the first offending sample.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_positive
from .errors import DataValidationError

__all__ = [
    "CHANNELS",
    "SI_UNITS",
    "MIN_SAMPLES",
    "MAX_ABS_VALUE",
    "MIN_DT",
    "MAX_DT",
    "RESAMPLE_GROWTH",
    "MAX_RESAMPLED",
    "Record",
    "from_arrays",
    "resample_uniform",
    "trim",
]

FloatArray = NDArray[np.float64]

#: Channel names in their canonical order; ``t``, ``f`` and ``x`` are required.
CHANNELS: tuple[str, ...] = ("t", "f", "x", "v", "a")
REQUIRED: tuple[str, ...] = ("t", "f", "x")
SI_UNITS: Mapping[str, str] = {"t": "s", "f": "N", "x": "m", "v": "m/s", "a": "m/s^2"}
CHANNEL_LABELS: Mapping[str, str] = {
    "t": "time",
    "f": "force",
    "x": "displacement",
    "v": "velocity",
    "a": "acceleration",
}
#: Fewest samples a record may have (an identification needs many more).
MIN_SAMPLES = 20
#: Largest magnitude accepted in any channel after unit scaling. A cubic term
#: of 1e9 is 1e27, still far from overflow; anything larger is a glitch or a
#: unit mistake.
MAX_ABS_VALUE = 1e9
#: A single sample this many times larger than every other one is a glitch.
SPIKE_RATIO = 1e3
#: Relative spread of the sampling interval tolerated as "uniform".
UNIFORM_RTOL = 1e-3
#: Shortest and longest accepted sampling interval (s): 1 GHz down to one
#: sample in about 12 days. Between them every derived quantity (derivatives
#: up to the second of a signal of at most ``MAX_ABS_VALUE``, frequencies,
#: simulation steps) stays many decades inside floating point.
MIN_DT = 1e-9
MAX_DT = 1e6
#: Resampling may make a record at most this many times longer (but always
#: allows ``_RESAMPLE_FLOOR`` samples), and never longer than ``MAX_RESAMPLED``
#: samples: a single far-off sample must not make a grid of 1e9 points.
RESAMPLE_GROWTH = 10
MAX_RESAMPLED = 10_000_000
_RESAMPLE_FLOOR = 10_000
_DT_RTOL = 1e-6


@dataclass(frozen=True, kw_only=True)
class Record:
    """One measured (or simulated) test record, validated and uniform in time.

    Attributes
    ----------
    name : str
        Label shown in reports (file name for loaded records).
    t, f, x : (n,) ndarray
        Time (s), force (N) and displacement (m), or the units in ``units``.
    v, a : (n,) ndarray or None
        Velocity and acceleration, measured or derived (see ``derived``).
    units : mapping
        Unit string per channel.
    derived : tuple of str
        Channels computed from others (not measured): never used as
        output-error channels.
    source : str
        Where the record came from (path, ``example:seed``, ...).
    warnings : tuple of str
        Non-fatal observations made while loading (resampling, spikes, ...).
    meta : mapping
        Free-form provenance (generator settings, true parameters, ...).
    """

    name: str
    t: FloatArray
    f: FloatArray
    x: FloatArray
    v: FloatArray | None = None
    a: FloatArray | None = None
    units: Mapping[str, str] = field(default_factory=lambda: dict(SI_UNITS))
    derived: tuple[str, ...] = ()
    source: str = ""
    warnings: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.t.size)

    @property
    def dt(self) -> float:
        """Mean sampling interval (s)."""
        return float((self.t[-1] - self.t[0]) / (self.t.size - 1))

    @property
    def fs(self) -> float:
        """Sampling rate (Hz)."""
        return 1.0 / self.dt

    @property
    def duration(self) -> float:
        """Record length ``t[-1] - t[0]`` (s)."""
        return float(self.t[-1] - self.t[0])

    @property
    def channels(self) -> tuple[str, ...]:
        """Channels present, canonical order."""
        return tuple(c for c in CHANNELS if getattr(self, c) is not None)

    @property
    def measured(self) -> tuple[str, ...]:
        """Response channels (x, v, a) that were measured, not derived."""
        return tuple(c for c in ("x", "v", "a") if getattr(self, c) is not None and c not in self.derived)

    def channel(self, name: str) -> FloatArray:
        """Return channel ``name``; raise if it is absent."""
        if name not in CHANNELS:
            raise DataValidationError(f"unknown channel `{name}`; channels are {', '.join(CHANNELS)}")
        arr = getattr(self, name)
        if arr is None:
            raise DataValidationError(
                f"record `{self.name}` has no `{name}` ({CHANNEL_LABELS[name]}) channel; "
                "measure it or derive it from displacement"
            )
        return arr  # type: ignore[no-any-return]

    def unit(self, name: str) -> str:
        """Unit string of channel ``name``."""
        return self.units.get(name, SI_UNITS[name])

    def replace(self, **changes: Any) -> Record:
        """A copy with some fields changed (validated again)."""
        new = dataclasses.replace(self, **changes)
        _validate(new)
        return new

    def slice(self, start: int, stop: int | None = None) -> Record:
        """Samples ``start:stop`` as a new record (time is kept, not shifted)."""
        sl = slice(start, stop)
        return self.replace(
            **{c: (None if getattr(self, c) is None else getattr(self, c)[sl].copy()) for c in CHANNELS}
        )

    def to_dict(self) -> dict[str, FloatArray]:
        """Channels as a dict of arrays (for ``pandas.DataFrame``)."""
        return {c: getattr(self, c) for c in self.channels}


def _as_1d(name: str, values: ArrayLike) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"channel `{name}` is not numeric: {exc}") from None
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise DataValidationError(f"channel `{name}` must be 1-D, got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def _check_spike(rec: Record, c: str, arr: FloatArray, mag: FloatArray) -> None:
    """Reject one sample that dwarfs every other one (a glitch or a unit slip in one row); ``mag = |arr|``."""
    i = int(np.argmax(mag))
    second = max(float(mag[:i].max(initial=0.0)), float(mag[i + 1:].max(initial=0.0)))
    if second > 0 and mag[i] > SPIKE_RATIO * second:
        raise DataValidationError(
            f"channel `{c}` ({CHANNEL_LABELS[c]}) row {i} holds {arr[i]:.6g} {rec.unit(c)}, more than"
            f" {SPIKE_RATIO:g} times any other sample (next largest {second:.3g}): a glitch or a unit mistake;"
            " correct or remove that row"
        )


def _validate(rec: Record) -> None:
    n = rec.t.size
    for c in CHANNELS:
        arr = getattr(rec, c)
        if arr is None:
            if c in REQUIRED:
                raise DataValidationError(f"missing required channel `{c}` ({CHANNEL_LABELS[c]})")
            continue
        if arr.size != n:
            raise DataValidationError(
                f"channel `{c}` has {arr.size} samples but `t` has {n}: all columns must have the same length"
            )
    if n < MIN_SAMPLES:
        raise DataValidationError(f"record `{rec.name}` has {n} samples; at least {MIN_SAMPLES} are needed")
    for c in rec.channels:
        arr = getattr(rec, c)
        mag = np.abs(arr)
        top = float(mag.max())  # NaN when any sample is NaN: one pass decides the common, clean case
        if not np.isfinite(top):
            bad = ~np.isfinite(arr)
            i = int(np.argmax(bad))
            raise DataValidationError(
                f"channel `{c}` ({CHANNEL_LABELS[c]}) has a non-finite value ({arr[i]}) at row {i}"
                f" ({int(bad.sum())} such rows); remove or fill them"
            )
        if top > MAX_ABS_VALUE:
            i = int(np.argmax(mag > MAX_ABS_VALUE))
            raise DataValidationError(
                f"channel `{c}` ({CHANNEL_LABELS[c]}) has an implausibly large value {arr[i]:.6g} at row {i}"
                f" (limit {MAX_ABS_VALUE:g} {rec.unit(c)}); check the unit or remove the glitch"
            )
        if c != "t":
            _check_spike(rec, c, arr, mag)
    dt = np.diff(rec.t)
    dt_min, dt_max = float(dt.min()), float(dt.max())
    if dt_min == 0:
        i = int(np.argmax(dt == 0))
        raise DataValidationError(
            f"time `t` is duplicated at rows {i} and {i + 1} (t = {rec.t[i]:.9g} s); remove duplicate samples"
        )
    if dt_min < 0:
        i = int(np.argmax(dt < 0))
        raise DataValidationError(
            f"time `t` decreases between rows {i} and {i + 1} ({rec.t[i]:.9g} s -> {rec.t[i + 1]:.9g} s);"
            " time must be strictly increasing"
        )
    mean_dt = (rec.t[-1] - rec.t[0]) / (n - 1)
    spread = max(dt_max - mean_dt, mean_dt - dt_min) / mean_dt
    if spread > UNIFORM_RTOL:
        i = int(np.argmax(np.abs(dt - mean_dt)))
        raise DataValidationError(
            f"irregular sampling: the interval between rows {i} and {i + 1} is {dt[i]:.6g} s, mean is"
            f" {mean_dt:.6g} s ({100 * spread:.2g} % off); resample to a uniform grid"
            " (resample=True, CLI --resample)"
        )
    _check_interval(float(mean_dt), "the sampling interval of `t`")
    for d in rec.derived:
        if d not in rec.channels:
            raise DataValidationError(f"`derived` names channel `{d}`, which the record does not have")


def from_arrays(
    t: ArrayLike,
    f: ArrayLike,
    x: ArrayLike,
    v: ArrayLike | None = None,
    a: ArrayLike | None = None,
    *,
    name: str = "record",
    units: Mapping[str, str] | None = None,
    derived: tuple[str, ...] = (),
    source: str = "",
    warnings: tuple[str, ...] = (),
    meta: Mapping[str, Any] | None = None,
    resample: bool = False,
) -> Record:
    """Build and validate a :class:`Record` from arrays.

    Parameters
    ----------
    t : (n,) array_like, seconds
        Sample times, strictly increasing and uniform (see ``resample``).
    f : (n,) array_like, N
        Applied force.
    x : (n,) array_like, m
        Displacement.
    v, a : (n,) array_like or None
        Velocity (m/s) and acceleration (m/s²) where measured.
    name, source : str
        Labels for reports.
    units : mapping or None
        Unit string per channel; SI when omitted.
    derived : tuple of str
        Channels computed rather than measured.
    warnings : tuple of str
        Notes to carry along.
    meta : mapping or None
        Provenance.
    resample : bool
        Interpolate irregularly sampled data onto a uniform grid instead of
        raising (duplicate or decreasing times still raise).

    Returns
    -------
    Record

    Raises
    ------
    DataValidationError
        Missing, non-numeric or non-finite values, mismatched lengths,
        non-increasing or irregular time, too few samples.
    """
    arrays = {"t": t, "f": f, "x": x, "v": v, "a": a}
    conv = {c: (None if val is None else _as_1d(c, val)) for c, val in arrays.items()}
    all_units = dict(SI_UNITS)
    if units:
        unknown = set(units) - set(CHANNELS)
        if unknown:
            raise DataValidationError(f"`units` names unknown channel(s) {sorted(unknown)}; channels are {CHANNELS}")
        all_units.update(units)
    rec = Record(
        name=name,
        t=conv["t"],  # type: ignore[arg-type]
        f=conv["f"],  # type: ignore[arg-type]
        x=conv["x"],  # type: ignore[arg-type]
        v=conv["v"],
        a=conv["a"],
        units=all_units,
        derived=tuple(derived),
        source=source,
        warnings=tuple(warnings),
        meta=dict(meta or {}),
    )
    if resample:
        try:
            _validate(rec)
        except DataValidationError as exc:
            if "irregular sampling" not in str(exc):
                raise
            return resample_uniform(rec)
    _validate(rec)
    return rec


def resample_uniform(rec: Record, fs: float | None = None) -> Record:
    """Interpolate every channel linearly onto a uniform time grid.

    Parameters
    ----------
    rec : Record
        Record with strictly increasing (possibly irregular) time.
    fs : float or None, Hz
        New sampling rate; by default ``1 / median(diff(t))``.

    Returns
    -------
    Record
        A validated record with a ``warnings`` entry saying what was done.

    Raises
    ------
    DataValidationError
        Time not strictly increasing; a sampling interval outside
        [``MIN_DT``, ``MAX_DT``]; or a grid that would hold more than
        ``RESAMPLE_GROWTH`` times the original samples (at least 10 000) or
        more than ``MAX_RESAMPLED`` samples. The count is checked before
        anything is allocated.
    """
    dt_old = np.diff(rec.t)
    if (dt_old <= 0).any():
        raise DataValidationError("cannot resample: time `t` is not strictly increasing")
    if fs is not None:
        fs_val = check_positive("fs", fs, "sampling rate in Hz", DataValidationError)
        dt = 1.0 / fs_val
        _check_interval(dt, f"`fs` = {fs_val:g} Hz gives a sampling interval that")
    else:
        dt = float(np.median(dt_old))
        _check_interval(dt, "the typical (median) interval of `t`")
    span = float(rec.t[-1] - rec.t[0])
    n_float = span / dt + 1.0
    limit = min(MAX_RESAMPLED, max(RESAMPLE_GROWTH * rec.n, _RESAMPLE_FLOOR))
    if not n_float <= limit:
        raise DataValidationError(_resample_refusal(dt_old, dt, n_float, limit, rec.n, fs is not None))
    n = int(np.floor(span / dt + 1e-9)) + 1
    t_new = rec.t[0] + dt * np.arange(n)
    new = {c: np.interp(t_new, rec.t, getattr(rec, c)) for c in CHANNELS[1:] if getattr(rec, c) is not None}
    note = f"resampled from {rec.n} irregular samples to {n} samples at {1.0 / dt:.6g} Hz (linear interpolation)"
    return from_arrays(
        t_new,
        new["f"],
        new["x"],
        new.get("v"),
        new.get("a"),
        name=rec.name,
        units=rec.units,
        derived=rec.derived,
        source=rec.source,
        warnings=(*rec.warnings, note),
        meta=rec.meta,
    )


def _seconds(value: float) -> str:
    """A duration in readable units: ``1 µs``, ``2.5 ms``, ``1000 s``."""
    mag = abs(value)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if mag >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.3g} s"


def _check_interval(dt: float, what: str) -> None:
    """Raise unless ``MIN_DT <= dt <= MAX_DT`` (``what`` starts the message)."""
    if MIN_DT * (1 - _DT_RTOL) <= dt <= MAX_DT * (1 + _DT_RTOL):  # rounding of t = i / fs
        return
    side = f"shorter than {MIN_DT:g} s (a 1 GHz sampling rate)" if dt < MIN_DT else f"longer than {MAX_DT:g} s"
    rate = f"{1.0 / dt:.3g} Hz" if dt > 0 else "no finite rate"
    raise DataValidationError(
        f"{what} is {dt:.3g} s ({rate}), {side}: check the time unit or the sampling rate (CLI --fs);"
        f" accepted intervals are {MIN_DT:g} s to {MAX_DT:g} s"
    )


def _resample_refusal(dt_old: FloatArray, dt: float, n_float: float, limit: int, n_old: int, given: bool) -> str:
    """Why a resampling grid of ``n_float`` samples is refused, naming the interval that causes it."""
    need = (f"would need {n_float:.3g} samples (limit {limit:,}: {RESAMPLE_GROWTH} times the {n_old} samples, at least"
            f" {_RESAMPLE_FLOOR:,}, at most {MAX_RESAMPLED:,})")
    if given:
        return f"cannot resample at {1.0 / dt:.6g} Hz: the grid {need}; choose a lower `fs`"
    big = dt_old > 100.0 * dt
    if big.any():
        i = int(np.argmax(dt_old))
        count = int(big.sum())
        what = (f"one interval of {_seconds(float(dt_old[i]))}" if count == 1
                else f"{count} intervals of up to {_seconds(float(dt_old[i]))}")
        return (f"cannot resample: {what} (after row {i}) among intervals of {_seconds(dt)} {need};"
                " split the record at the gap or remove the stray sample")
    return f"cannot resample: intervals of {_seconds(dt)} over {_seconds(float(dt_old.sum()))} {need}"


def trim(rec: Record, t_start: float | None = None, t_end: float | None = None) -> Record:
    """Keep the samples of ``rec`` with ``t_start <= t <= t_end`` (seconds, absolute time; None = open)."""
    lo = -np.inf if t_start is None else t_start
    hi = np.inf if t_end is None else t_end
    if lo >= hi:
        raise DataValidationError(f"`t_start` ({t_start}) must be below `t_end` ({t_end})")
    idx = np.flatnonzero((rec.t >= lo) & (rec.t <= hi))
    if idx.size < MIN_SAMPLES:
        raise DataValidationError(
            f"trimming to [{t_start}, {t_end}] s leaves {idx.size} samples; at least {MIN_SAMPLES} are needed"
        )
    return rec.slice(int(idx[0]), int(idx[-1]) + 1)
