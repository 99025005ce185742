"""Validation of a record's channels: names, lengths, finite and plausible values, uniform time.

One pass over every channel of a :class:`~nlid_core.record.Record`, whatever
its number of DOFs. Each check raises
:class:`~nlid_core.errors.DataValidationError` naming the channel and the
(0-based data) row of the first offending sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .channels import CHANNEL_LABELS, ChannelKey, channel_name, parse_channel, sorted_keys
from ._checks import check_positive
from .errors import DataValidationError
from .load_options import option_ref

__all__ = [
    "MIN_SAMPLES",
    "MAX_ABS_VALUE",
    "SPIKE_RATIO",
    "UNIFORM_RTOL",
    "MIN_DT",
    "MAX_DT",
    "validate_record",
    "as_channel_array",
    "RESAMPLE_GROWTH",
    "MAX_RESAMPLED",
    "check_interval",
    "uniform_grid",
]

FloatArray = NDArray[np.float64]


class Record(Protocol):
    """What the checks read of a :class:`nlid_core.record.Record`."""

    @property
    def name(self) -> str: ...
    @property
    def t(self) -> FloatArray: ...
    @property
    def f(self) -> FloatArray: ...
    @property
    def x(self) -> FloatArray: ...
    @property
    def v(self) -> FloatArray | None: ...
    @property
    def a(self) -> FloatArray | None: ...
    @property
    def extra_channels(self) -> Mapping[str, FloatArray]: ...
    @property
    def derived(self) -> tuple[str, ...]: ...
    def unit(self, name: str) -> str: ...

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
_DT_RTOL = 1e-6
#: Resampling may make a record at most this many times longer (but always
#: allows ``_RESAMPLE_FLOOR`` samples), and never longer than ``MAX_RESAMPLED``
#: samples: a single far-off sample must not make a grid of 1e9 points.
RESAMPLE_GROWTH = 10
MAX_RESAMPLED = 10_000_000
_RESAMPLE_FLOOR = 10_000


def as_channel_array(name: str, values: ArrayLike) -> FloatArray:
    """``values`` as a contiguous 1-D float64 array (a single row or column is flattened); ``name`` for messages.

    Parameters
    ----------
    name : str
        Channel name, for messages.
    values : (n,) array_like
        The samples.

    Returns
    -------
    (n,) ndarray

    Raises
    ------
    DataValidationError
        Values that are not numeric or not one-dimensional.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"channel `{name}` is not numeric: {exc}") from None
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise DataValidationError(f"channel `{name}` must be 1-D, got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def _extra_key(name: object) -> ChannelKey:
    """Key of an ``extra_channels`` entry, which must be written ``x2`` (a DOF from 2 on)."""
    key = parse_channel(name)  # type: ignore[arg-type]
    if key.quantity == "t" or key.dof < 2 or name != f"{key.quantity}{key.dof}":
        raise DataValidationError(
            f"`extra_channels` holds `{name}`; it holds the channels of DOFs 2 and up, named like `x2`"
            " (DOF 1 is in the fields f, x, v, a)"
        )
    return key


def _arrays(rec: Record) -> tuple[dict[ChannelKey, FloatArray | None], int]:
    """Every channel by key (None where a required one is missing) in canonical order, and the number of DOFs."""
    keys = {name: _extra_key(name) for name in rec.extra_channels}
    n_dof = max((k.dof for k in keys.values()), default=1)
    found: dict[ChannelKey, FloatArray | None] = {
        ChannelKey("t", 0): rec.t, ChannelKey("f", 1): rec.f, ChannelKey("x", 1): rec.x,
        ChannelKey("v", 1): rec.v, ChannelKey("a", 1): rec.a,
    }
    for name, arr in rec.extra_channels.items():
        if not isinstance(arr, np.ndarray) or arr.ndim != 1:
            raise DataValidationError(f"channel `{name}` must be a 1-D array, got {type(arr).__name__}")
        found[keys[name]] = arr
    for dof in range(2, n_dof + 1):
        found.setdefault(ChannelKey("x", dof), None)
    required = {k for k in found if k.quantity in ("t", "x") or k == ChannelKey("f", 1)}
    arrays = {k: found[k] for k in sorted_keys(found) if found[k] is not None or k in required}
    return arrays, n_dof


def _check_spike(name: str, label: str, unit: str, arr: FloatArray, mag: FloatArray) -> None:
    """Reject one sample that dwarfs every other one (a glitch or a unit slip in one row); ``mag = |arr|``."""
    i = int(np.argmax(mag))
    second = max(float(mag[:i].max(initial=0.0)), float(mag[i + 1:].max(initial=0.0)))
    if second > 0 and mag[i] > SPIKE_RATIO * second:
        raise DataValidationError(
            f"channel `{name}` ({label}) row {i} holds {arr[i]:.6g} {unit}, more than"
            f" {SPIKE_RATIO:g} times any other sample (next largest {second:.3g}): a glitch or a unit mistake;"
            " correct or remove that row"
        )


def _check_values(name: str, label: str, unit: str, arr: FloatArray) -> None:
    mag = np.abs(arr)
    top = float(mag.max())  # NaN when any sample is NaN: one pass decides the common, clean case
    if not np.isfinite(top):
        bad = ~np.isfinite(arr)
        i = int(np.argmax(bad))
        raise DataValidationError(
            f"channel `{name}` ({label}) has a non-finite value ({arr[i]}) at row {i}"
            f" ({int(bad.sum())} such rows); remove or fill them"
        )
    if top > MAX_ABS_VALUE:
        i = int(np.argmax(mag > MAX_ABS_VALUE))
        raise DataValidationError(
            f"channel `{name}` ({label}) has an implausibly large value {arr[i]:.6g} at row {i}"
            f" (limit {MAX_ABS_VALUE:g} {unit}); check the unit or remove the glitch"
        )
    if name != "t":
        _check_spike(name, label, unit, arr, mag)


def _check_time(t: FloatArray) -> None:
    n = t.size
    dt = np.diff(t)
    dt_min, dt_max = float(dt.min()), float(dt.max())
    if dt_min == 0:
        i = int(np.argmax(dt == 0))
        raise DataValidationError(
            f"time `t` is duplicated at rows {i} and {i + 1} (t = {t[i]:.9g} s); remove duplicate samples"
        )
    if dt_min < 0:
        i = int(np.argmax(dt < 0))
        raise DataValidationError(
            f"time `t` decreases between rows {i} and {i + 1} ({t[i]:.9g} s -> {t[i + 1]:.9g} s);"
            " time must be strictly increasing"
        )
    mean_dt = (t[-1] - t[0]) / (n - 1)
    spread = max(dt_max - mean_dt, mean_dt - dt_min) / mean_dt
    if spread > UNIFORM_RTOL:
        i = int(np.argmax(np.abs(dt - mean_dt)))
        raise DataValidationError(
            f"irregular sampling: the interval between rows {i} and {i + 1} is {dt[i]:.6g} s, mean is"
            f" {mean_dt:.6g} s ({100 * spread:.2g} % off); resample to a uniform grid"
            f" ({option_ref('resample')})"
        )
    check_interval(float(mean_dt), "the sampling interval of `t`")


def validate_record(rec: Record) -> None:
    """Check every channel of ``rec`` in one pass; raise on the first problem.

    Parameters
    ----------
    rec : Record
        The record to check: required channels present (``t``, ``f`` and
        ``x`` of DOF 1, the displacement of every further DOF), all of one
        length of at least ``MIN_SAMPLES``, finite, at most
        ``MAX_ABS_VALUE`` and free of single-sample spikes; time strictly
        increasing and uniform; ``derived`` naming present channels as the
        record writes them.

    Raises
    ------
    DataValidationError
        The first problem found, naming the channel and the row.
    """
    arrays, n_dof = _arrays(rec)
    n = rec.t.size
    names = {key: channel_name(key, n_dof) for key in arrays}
    present: dict[ChannelKey, FloatArray] = {}
    for key, arr in arrays.items():
        if arr is None:
            if key.dof > 1:
                raise DataValidationError(
                    f"missing required channel `{names[key]}` (displacement): a record with {n_dof} DOFs needs the"
                    f" displacement of every DOF 1 to {n_dof}"
                )
            raise DataValidationError(f"missing required channel `{names[key]}` ({CHANNEL_LABELS[key.quantity]})")
        if arr.size != n:
            raise DataValidationError(
                f"channel `{names[key]}` has {arr.size} samples but `t` has {n}: all columns must have the same length"
            )
        present[key] = arr
    if n < MIN_SAMPLES:
        raise DataValidationError(f"record `{rec.name}` has {n} samples; at least {MIN_SAMPLES} are needed")
    for key, arr in present.items():
        _check_values(names[key], CHANNEL_LABELS[key.quantity], rec.unit(names[key]), arr)
    _check_time(rec.t)
    written = set(names.values())
    for d in rec.derived:
        if d not in written:
            raise DataValidationError(f"`derived` names channel `{d}`, which the record does not have")


def check_interval(dt: float, what: str) -> None:
    """Raise unless ``MIN_DT <= dt <= MAX_DT``.

    Parameters
    ----------
    dt : float, s
        Sampling interval.
    what : str
        Start of the message (what ``dt`` is).

    Raises
    ------
    DataValidationError
        ``dt`` outside the accepted range.
    """
    if MIN_DT * (1 - _DT_RTOL) <= dt <= MAX_DT * (1 + _DT_RTOL):  # rounding of t = i / fs
        return
    side = f"shorter than {MIN_DT:g} s (a 1 GHz sampling rate)" if dt < MIN_DT else f"longer than {MAX_DT:g} s"
    rate = f"{1.0 / dt:.3g} Hz" if dt > 0 else "no finite rate"
    raise DataValidationError(
        f"{what} is {dt:.3g} s ({rate}), {side}: check the time unit or the sampling rate ({option_ref('fs')});"
        f" accepted intervals are {MIN_DT:g} s to {MAX_DT:g} s"
    )


def uniform_grid(t: FloatArray, fs: float | None = None) -> tuple[FloatArray, float]:
    """The uniform time grid a record sampled at ``t`` is resampled onto, refused if it would be too long.

    Parameters
    ----------
    t : (n,) ndarray, s
        Strictly increasing (possibly irregular) sample times.
    fs : float or None, Hz
        New sampling rate; by default ``1 / median(diff(t))``.

    Returns
    -------
    t_new : (m,) ndarray, s
        ``t[0] + k dt`` up to ``t[-1]``.
    dt : float, s
        The new sampling interval.

    Raises
    ------
    DataValidationError
        Time not strictly increasing; a sampling interval outside
        [``MIN_DT``, ``MAX_DT``]; or a grid of more than ``RESAMPLE_GROWTH``
        times the original samples (at least 10 000) or more than
        ``MAX_RESAMPLED`` samples, checked before anything is allocated.
    """
    n_old = t.size
    dt_old = np.diff(t)
    if (dt_old <= 0).any():
        raise DataValidationError("cannot resample: time `t` is not strictly increasing")
    if fs is not None:
        fs_val = check_positive("fs", fs, "sampling rate in Hz", DataValidationError)
        dt = 1.0 / fs_val
        check_interval(dt, f"`fs` = {fs_val:g} Hz gives a sampling interval that")
    else:
        dt = float(np.median(dt_old))
        check_interval(dt, "the typical (median) interval of `t`")
    span = float(t[-1] - t[0])
    n_float = span / dt + 1.0
    limit = min(MAX_RESAMPLED, max(RESAMPLE_GROWTH * n_old, _RESAMPLE_FLOOR))
    if not n_float <= limit:
        raise DataValidationError(_resample_refusal(dt_old, dt, n_float, limit, n_old, fs is not None))
    n = int(np.floor(span / dt + 1e-9)) + 1
    return np.asarray(t[0] + dt * np.arange(n), dtype=np.float64), dt


def _seconds(value: float) -> str:
    """A duration in readable units: ``1 µs``, ``2.5 ms``, ``1000 s``."""
    mag = abs(value)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if mag >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.3g} s"


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
