"""Validated measurement records: time, input forces and responses of one or several DOFs.

A single-DOF :class:`Record` holds time ``t`` (s), force ``f`` (N),
displacement ``x`` (m) and, where measured or derived, velocity ``v`` (m/s)
and acceleration ``a`` (m/s²), all as 1-D float64 arrays of one length.
Units other than SI may be kept (e.g. volts for an electrical analogue such
as Silverbox); they are then recorded in :attr:`Record.units` and carried
into parameter units.

A record of several DOFs names its channels with DOF numbers (``f1``,
``x1``, ``x2``, ``v2``, ...; the grammar and the naming rules are in
:mod:`nlid_core.channels`). DOF 1 is kept in the fields ``f``, ``x``, ``v``,
``a`` and every further DOF in :attr:`Record.extra_channels`; code reads any
channel by name with :meth:`Record.channel` and lists them with
:attr:`Record.channels`, :attr:`Record.inputs` and :attr:`Record.outputs`.

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

from ._record_checks import (
    MAX_ABS_VALUE,
    MAX_DT,
    MIN_DT,
    MAX_RESAMPLED,
    MIN_SAMPLES,
    RESAMPLE_GROWTH,
    SPIKE_RATIO,
    UNIFORM_RTOL,
    as_channel_array,
    uniform_grid,
    validate_record,
)
from .channels import (
    CHANNEL_LABELS,
    CHANNELS,
    INPUT_QUANTITIES,
    OUTPUT_QUANTITIES,
    REQUIRED,
    SI_UNITS,
    ChannelKey,
    channel_name,
    keyed_by_channel,
    parse_channel,
    sorted_keys,
)
from .errors import DataValidationError

__all__ = [
    "CHANNELS",
    "REQUIRED",
    "CHANNEL_LABELS",
    "SI_UNITS",
    "SPIKE_RATIO",
    "UNIFORM_RTOL",
    "MIN_SAMPLES",
    "MAX_ABS_VALUE",
    "MIN_DT",
    "MAX_DT",
    "RESAMPLE_GROWTH",
    "MAX_RESAMPLED",
    "Record",
    "from_arrays",
    "from_channels",
    "resample_uniform",
    "trim",
]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Record:
    """One measured (or simulated) test record, validated and uniform in time.

    Attributes
    ----------
    name : str
        Label shown in reports (file name for loaded records).
    t, f, x : (n,) ndarray
        Time (s), force (N) and displacement (m), or the units in ``units``;
        ``f`` and ``x`` are those of DOF 1 (``f1``, ``x1``) in a record of
        several DOFs.
    v, a : (n,) ndarray or None
        Velocity and acceleration (of DOF 1), measured or derived (see
        ``derived``).
    extra_channels : mapping of str to (n,) ndarray
        Channels of DOFs 2 and up, by name (``x2``, ``f2``, ``v2``, ``a2``,
        ...); empty in a single-DOF record.
    units : mapping
        Unit string per channel, keyed as the record writes its channel
        names (``x`` single-DOF, ``x1`` with several DOFs).
    derived : tuple of str
        Channels computed from others (not measured), as the record writes
        them: never used as output-error channels.
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
    extra_channels: Mapping[str, FloatArray] = field(default_factory=dict)
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
    def n_dof(self) -> int:
        """Number of degrees of freedom: the highest DOF number of the channels (1 for a single-DOF record)."""
        return max((parse_channel(c).dof for c in self.extra_channels), default=1)

    def _arrays(self) -> dict[ChannelKey, FloatArray]:
        """Channels present by key, in canonical order."""
        found: dict[ChannelKey, FloatArray | None] = {ChannelKey("t", 0): self.t}
        for q in CHANNELS[1:]:
            found[ChannelKey(q, 1)] = getattr(self, q)
        for c, arr in self.extra_channels.items():
            found[parse_channel(c)] = arr
        out: dict[ChannelKey, FloatArray] = {}
        for k in sorted_keys(found):
            values = found[k]
            if values is not None:
                out[k] = values
        return out

    @property
    def channels(self) -> tuple[str, ...]:
        """Channels present as the record writes them, canonical order (``t, f, x, v, a`` single-DOF)."""
        n_dof = self.n_dof
        return tuple(channel_name(k, n_dof) for k in self._arrays())

    @property
    def channel_units(self) -> dict[str, str]:
        """Unit of every channel present, by name, in canonical order."""
        return {c: self.unit(c) for c in self.channels}

    @property
    def inputs(self) -> tuple[str, ...]:
        """Input (force) channels present, by DOF number: ``("f",)`` single-DOF, e.g. ``("f1", "f2")``."""
        n_dof = self.n_dof
        return tuple(channel_name(k, n_dof) for k in self._arrays() if k.quantity in INPUT_QUANTITIES)

    @property
    def input_array(self) -> FloatArray:
        """The inputs as one time-major ``(n_samples, n_inputs)`` array, columns in the order of ``inputs``."""
        arrays = self._arrays()
        cols = [arr for k, arr in arrays.items() if k.quantity in INPUT_QUANTITIES]
        return np.ascontiguousarray(np.column_stack(cols), dtype=np.float64)

    @property
    def outputs(self) -> tuple[str, ...]:
        """Response channels present (measured or derived): displacements, velocities, accelerations, by DOF."""
        n_dof = self.n_dof
        return tuple(channel_name(k, n_dof) for k in self._arrays() if k.quantity in OUTPUT_QUANTITIES)

    @property
    def measured(self) -> tuple[str, ...]:
        """Response channels that were measured, not derived (``outputs`` less ``derived``)."""
        return tuple(c for c in self.outputs if c not in self.derived)

    def has(self, name: str) -> bool:
        """Whether channel ``name`` (any spelling: ``x1`` is ``x``) is present; an invalid name raises."""
        return parse_channel(name) in self._arrays()

    def is_derived(self, name: str) -> bool:
        """Whether channel ``name`` is present and was derived (computed, not measured)."""
        key = parse_channel(name)
        return key in self._arrays() and channel_name(key, self.n_dof) in self.derived

    def channel(self, name: str) -> FloatArray:
        """Return channel ``name`` (any spelling: ``x1`` is ``x``); raise if it is absent or not a channel name."""
        key = parse_channel(name)
        arr = self._arrays().get(key)
        if arr is None:
            shown = channel_name(key, self.n_dof)
            raise DataValidationError(
                f"record `{self.name}` has no `{shown}` ({CHANNEL_LABELS[key.quantity]}) channel; "
                "measure it or derive it from displacement"
            )
        return arr

    def unit(self, name: str) -> str:
        """Unit string of channel ``name`` (any spelling); SI when the record holds none for it."""
        key = parse_channel(name)
        for spelling in dict.fromkeys((channel_name(key, self.n_dof), channel_name(key, 1), f"{key.quantity}{key.dof}")):
            if spelling in self.units:
                return self.units[spelling]
        return SI_UNITS[key.quantity]

    def replace(self, **changes: Any) -> Record:
        """A copy with some fields changed (validated again)."""
        new = dataclasses.replace(self, **changes)
        validate_record(new)
        return new

    def with_channels(self, channels: Mapping[str, ArrayLike | None], **changes: Any) -> Record:
        """A copy with channels added, replaced or (given None) removed, and other fields changed; validated.

        Parameters
        ----------
        channels : mapping of str to (n,) array_like or None
            New values by channel name (any spelling). Adding a channel of a
            new DOF renames the DOF-1 channels (``x`` becomes ``x1``): keys
            of ``units`` and ``derived`` are renamed with them.
        **changes
            Other fields to change (``units``, ``derived``, ``warnings``,
            ...), as :func:`dataclasses.replace` takes them; names in
            ``units`` and ``derived`` may use any spelling.

        Returns
        -------
        Record

        Raises
        ------
        DataValidationError
            An invalid channel name, or a record that does not validate
            (a removed required channel, another length, ...).
        TypeError
            A channel given in ``changes`` instead of ``channels``.
        """
        fixed = sorted(set(changes) & {*CHANNELS, "extra_channels"})
        if fixed:
            raise TypeError(f"give channels in `channels`, not as {', '.join(f'`{c}`' for c in fixed)}")
        old_n = self.n_dof
        arrays: dict[ChannelKey, Any] = dict(self._arrays())
        for name, values in channels.items():
            key = parse_channel(name)
            if values is None:
                arrays.pop(key, None)
            else:
                arrays[key] = as_channel_array(channel_name(key, max(old_n, key.dof)), values)
        units = changes.pop("units", self.units)
        derived = changes.pop("derived", self.derived)
        rec = _assemble(arrays, units=units, derived=derived, **{
            "name": self.name, "source": self.source, "warnings": self.warnings, "meta": self.meta, **changes})
        validate_record(rec)
        return rec

    def slice(self, start: int, stop: int | None = None) -> Record:
        """Samples ``start:stop`` as a new record (time is kept, not shifted)."""
        sl = slice(start, stop)
        return self.replace(
            **{c: (None if getattr(self, c) is None else getattr(self, c)[sl].copy()) for c in CHANNELS},
            extra_channels={c: arr[sl].copy() for c, arr in self.extra_channels.items()},
        )

    def to_dict(self) -> dict[str, FloatArray]:
        """Channels as a dict of arrays by name (for ``pandas.DataFrame``)."""
        n_dof = self.n_dof
        return {channel_name(k, n_dof): arr for k, arr in self._arrays().items()}


def _assemble(
    arrays: Mapping[ChannelKey, Any],
    *,
    units: Mapping[str, str] | None,
    derived: tuple[str, ...] | list[str],
    **fields: Any,
) -> Record:
    """A record (not yet validated) from arrays keyed by channel: DOF 1 into the fields, further DOFs into
    ``extra_channels``; names in ``units`` and ``derived`` written as the record writes them."""
    n_dof = max((k.dof for k in arrays), default=1)
    unit_keys = keyed_by_channel(dict(units or {}), "units")
    if n_dof == 1:
        all_units = dict(SI_UNITS)
    else:
        all_units = {channel_name(k, n_dof): SI_UNITS[k.quantity] for k in sorted_keys(arrays)}
    all_units.update({channel_name(k, n_dof): str(u) for k, u in unit_keys.items()})
    derived_names: list[str] = []
    for d in derived:
        try:
            key = parse_channel(d)
        except DataValidationError as exc:
            raise DataValidationError(f"`derived` names an invalid channel: {exc}") from None
        derived_names.append(channel_name(key, n_dof))
    one = {k.quantity: arr for k, arr in arrays.items() if k.dof <= 1}
    rec = Record(
        t=one.get("t"),  # type: ignore[arg-type]
        f=one.get("f"),  # type: ignore[arg-type]
        x=one.get("x"),  # type: ignore[arg-type]
        v=one.get("v"),
        a=one.get("a"),
        extra_channels={channel_name(k, n_dof): arr for k, arr in arrays.items() if k.dof > 1},
        units=all_units,
        derived=tuple(derived_names),
        **fields,
    )
    return rec


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
    """Build and validate a single-DOF :class:`Record` from arrays.

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

    See Also
    --------
    from_channels : the same for any channels, of any number of DOFs.
    """
    arrays = {"t": t, "f": f, "x": x, "v": v, "a": a}
    return from_channels(
        {c: val for c, val in arrays.items() if val is not None},
        name=name, units=units, derived=derived, source=source, warnings=warnings, meta=meta, resample=resample,
    )


def from_channels(
    channels: Mapping[str, ArrayLike],
    *,
    name: str = "record",
    units: Mapping[str, str] | None = None,
    derived: tuple[str, ...] = (),
    source: str = "",
    warnings: tuple[str, ...] = (),
    meta: Mapping[str, Any] | None = None,
    resample: bool = False,
) -> Record:
    """Build and validate a :class:`Record` of any number of DOFs from channels by name.

    Parameters
    ----------
    channels : mapping of str to (n,) array_like
        Every channel, by name (:mod:`nlid_core.channels`): ``t``, and
        ``f``/``x``/``v``/``a`` with an optional DOF number, e.g.
        ``{"t": t, "f1": f, "x1": x1, "x2": x2}``. ``t``, the force of DOF 1
        and the displacement of every DOF are required. A bare name is
        DOF 1: ``x`` and ``x1`` are the same channel (giving both raises).
    name, source : str
        Labels for reports.
    units : mapping or None
        Unit string per channel (any spelling); SI when omitted.
    derived : tuple of str
        Channels computed rather than measured (any spelling).
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
        Channel names written as in :func:`nlid_core.channels.channel_name`:
        bare with one DOF, numbered with several.

    Raises
    ------
    DataValidationError
        An invalid or repeated channel name, or any problem of
        :func:`from_arrays`; a missing displacement of a DOF.
    """
    keyed = keyed_by_channel(channels, "channels")
    n_dof = max((k.dof for k in keyed), default=1)
    arrays = {k: as_channel_array(channel_name(k, n_dof), val) for k, val in keyed.items()}
    rec = _assemble(arrays, units=units, derived=derived, name=name, source=source, warnings=tuple(warnings),
                    meta=dict(meta or {}))
    if resample:
        try:
            validate_record(rec)
        except DataValidationError as exc:
            if "irregular sampling" not in str(exc):
                raise
            return resample_uniform(rec)
    validate_record(rec)
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
    t_new, dt = uniform_grid(rec.t, fs)
    n = t_new.size
    new = {c: np.interp(t_new, rec.t, arr) for c, arr in rec.to_dict().items() if c != "t"}
    note = f"resampled from {rec.n} irregular samples to {n} samples at {1.0 / dt:.6g} Hz (linear interpolation)"
    return from_channels(
        {"t": t_new, **new},
        name=rec.name,
        units=rec.units,
        derived=rec.derived,
        source=rec.source,
        warnings=(*rec.warnings, note),
        meta=rec.meta,
    )


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
