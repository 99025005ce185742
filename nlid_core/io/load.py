"""Record assembly: a table read, its columns mapped, scaled to SI and validated as a :class:`Record`."""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..limits import Limits
from ..load_options import FS_RANGE_HZ, option_ref
from ..channels import parse_channel
from ..record import REQUIRED, SI_UNITS, Record, from_channels
from ._table import FloatArray, StrPath, _existing_file, _limits_arg, _one_line, _one_line_error, _Table, _unique
from .columns import _columns_arg, _map_columns, _units_arg
from .readers import _read
from .units import CHANNEL_QUANTITY, _header_unit, unit_factor

__all__ = ["load_record", "load_records"]


def _rows_arg(rows: tuple[int, int | None] | str | None) -> tuple[int, int | None] | None:
    """Parse ``rows`` ("a:b", "a:", or a pair) into (start, stop)."""
    if rows is None:
        return None
    shown = _one_line(repr(rows), 60)
    if isinstance(rows, str):
        parts = rows.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            start = int(parts[0]) if parts[0].strip() else 0
            stop = int(parts[1]) if parts[1].strip() else None
        except ValueError:
            raise DataValidationError(f"`rows` must look like START:STOP (e.g. 40650:105712), got {shown}") from None
    else:
        try:
            first, last = rows
            start = operator.index(first)
            stop = None if last is None else operator.index(last)
            if isinstance(first, bool) or isinstance(last, bool):
                raise TypeError
        except (TypeError, ValueError):
            raise DataValidationError(
                f"`rows` must be START:STOP or a pair of integers (stop may be None), got {shown}"
            ) from None
    if start < 0 or (stop is not None and stop < 0):
        raise DataValidationError(f"`rows` bounds must be >= 0, got {start}:{stop}")
    return int(start), (None if stop is None else int(stop))


#: Accepted sampling rates (Hz): the reciprocals of record.MAX_DT and record.MIN_DT.
_FS_RANGE_HZ = FS_RANGE_HZ


def _fs_arg(fs: float | None) -> float | None:
    if fs is None:
        return None
    low, high = _FS_RANGE_HZ
    shown = _one_line(repr(fs), 40)
    try:
        value = float(fs)
    except (TypeError, ValueError, OverflowError):
        raise DataValidationError(f"`fs` must be a sampling rate in Hz, got {shown}") from None
    if isinstance(fs, bool) or not (math.isfinite(value) and low <= value <= high):
        raise DataValidationError(f"`fs` must be a sampling rate between {low:g} and {high:g} Hz, got {shown}")
    return value


def _numeric(series: pd.Series, channel: str, column: str, table: _Table) -> FloatArray:
    """Convert one column to float64, reporting text and empty cells first."""
    shown = _one_line(column, 60)
    label = f"`{channel}`" if column == channel else f"`{shown}` (mapped to `{channel}`)"
    if series.dtype.kind in "iuf":
        values = series.to_numpy(dtype=np.float64)
        empty = np.isnan(values) if table.nan_is_empty else np.zeros(values.shape, dtype=bool)
    elif series.dtype.kind == "b":
        raise DataValidationError(f"column {label} holds true/false values, not numbers")
    else:
        obj = series.astype(object)
        missing = obj.isna().to_numpy()
        text = obj.where(~missing, "").astype(str).str.strip()
        if table.decimal == ",":
            text = text.str.replace(",", ".", regex=False)
        parsed = np.array(pd.to_numeric(text.where(text != "", "nan"), errors="coerce"), dtype=np.float64)
        empty = missing | (text == "").to_numpy()
        suspect = np.flatnonzero(np.isnan(parsed) & ~empty)
        for i in suspect:
            raw = obj.iloc[i]
            if isinstance(raw, (int, float, np.integer, np.floating)) and not isinstance(raw, bool):
                continue  # a genuine NaN number, reported as non-finite later
            try:
                number = float(text.iloc[i])
            except (TypeError, ValueError):
                shown = str(raw)
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                raise DataValidationError(f'column {label} row {int(i)}: "{shown}" is not a number') from None
            parsed[i] = number
        values = parsed
    if empty.any():
        first = int(np.argmax(empty))
        raise DataValidationError(
            f"column {label} has {int(empty.sum())} empty cells (first at row {first}):"
            " columns have different lengths or values are missing"
        )
    return values


def load_record(
    path: StrPath,
    *,
    columns: Mapping[str, str] | str | None = None,
    units: Mapping[str, str] | str | None = None,
    name: str | None = None,
    resample: bool = False,
    fs: float | None = None,
    rows: tuple[int, int | None] | str | None = None,
    limits: Limits | None = None,
    input_only: bool = False,
) -> Record:
    """Load, map, scale and validate one record from a file.

    Parameters
    ----------
    path : str or path-like
        A file :func:`read_table` can read.
    columns : mapping or str or None
        File column per channel (``{"f": "force_N"}`` or ``"f=force_N"``;
        ``"t=time,f1=F,x1=X1,x2=X2"`` for two DOFs, channel names as in
        :mod:`nlid_core.channels`). Unmapped channels are found by name:
        ``t, f, x, v, a`` (any case) or ``time, force, disp/displacement,
        vel/velocity, acc/acceleration``, those but ``t`` also with a DOF
        number (``disp2``; ``x2`` in lower case), optionally followed by a
        bracketed unit (``x [mm]``). With a DOF number 2 or more among the
        channels the record has several DOFs, and a bare name (``f``) is
        DOF 1.
    units : mapping or str or None
        Unit per channel (``{"x": "mm"}`` or ``"x=mm,x2=mm"``); see
        :func:`unit_factor`. A channel without one takes the unit in its
        column header if any, else SI.
    name : str or None
        Record name; the file stem by default.
    resample : bool
        Interpolate irregular time onto a uniform grid instead of raising.
    fs : float or None, Hz
        Sampling rate for a file without a time column: ``t = i / fs`` for
        data row ``i`` (row numbers of the whole file, so a part selected with
        ``rows`` keeps its place in time). Between 1e-6 and 1e9 Hz.
    rows : (start, stop) or "start:stop" or None
        Keep data rows ``start:stop`` (0-based, stop excluded, Python slice
        semantics with non-negative bounds; stop may be omitted).
    limits : Limits or None
        Bounds on what the file may declare and hold (see
        :func:`read_table`); ``Limits.from_env()`` when None.
    input_only : bool
        Only ``t`` (or ``fs``) and ``f`` are required (an input to simulate): without a displacement
        column, ``x`` is a placeholder of zeros listed in ``derived`` and in the warnings.

    Returns
    -------
    Record
        Channels in SI units (or the kept unknown unit), ``source`` the path,
        ``meta`` holding ``columns`` (channel -> file column) and
        ``file_units`` (channel -> unit as given), channels named as the
        record names them (``x`` with one DOF, ``x1`` with several).

    Raises
    ------
    DataValidationError
        Any problem with the file, the mapping, the units or the data, or a
        file beyond one of ``limits``; the message (one printable line) names
        the file or the column and the 0-based data row, or the limit.
    """
    try:
        return _load_record(path, columns, units, name, resample, fs, rows, _limits_arg(limits), input_only)
    except DataValidationError as exc:
        raise _one_line_error(exc) from None


def _select_rows(table: _Table, row_slice: tuple[int, int | None] | None, file_name: str) -> tuple[_Table, int]:
    """The table cut to ``--rows`` (start, stop), and the index of its first row in the file."""
    if row_slice is None:
        return table, 0
    n_rows = len(table.df)
    start, stop = row_slice
    stop = n_rows if stop is None else min(stop, n_rows)
    if start >= stop:
        raise DataValidationError(
            f"{option_ref('rows', f'{start}:{stop}')} selects nothing from the {n_rows} data rows of {file_name}"
        )
    return dataclasses.replace(table, df=table.df.iloc[start:stop].reset_index(drop=True)), start


def _channel_unit(channel: str, column: str, given: str | None, file_name: str, notes: list[str]) -> str | None:
    """The unit of a channel's column: the one given (``--units``), else the column header's, else None (SI);
    what was taken from where is noted."""
    header_unit = _header_unit(column)[1]
    if given is None and header_unit is not None:
        try:
            unit_factor(channel, header_unit)
        except DataValidationError as exc:
            raise DataValidationError(f"column `{column}` in {file_name}: {exc}") from None
        if header_unit != SI_UNITS[parse_channel(channel).quantity]:
            notes.append(f"unit `{header_unit}` of `{channel}` taken from column header `{column}`")
        return header_unit
    if given is not None and header_unit is not None and header_unit != given:
        notes.append(f"unit `{given}` given for `{channel}` overrides `{header_unit}` in column header `{column}`")
    return given


def _in_si(channel: str, values: FloatArray, unit: str | None, notes: list[str]) -> tuple[FloatArray, str]:
    """The values in SI units and the unit they are then in (an unknown unit keeps them unscaled)."""
    quantity = parse_channel(channel).quantity
    if unit is None:
        return values, SI_UNITS[quantity]
    factor = unit_factor(channel, unit)
    if factor is None:
        notes.append(f"unit `{unit}` of `{channel}` is not a known {CHANNEL_QUANTITY[quantity]} unit;"
                     " values are kept unscaled")
        return values, unit
    return (values * factor if factor != 1.0 else values), SI_UNITS[quantity]


def _load_record(
    path: StrPath,
    columns: Mapping[str, str] | str | None,
    units: Mapping[str, str] | str | None,
    name: str | None,
    resample: bool,
    fs_given: float | None,
    rows: tuple[int, int | None] | str | None,
    limits: Limits,
    input_only: bool = False,
) -> Record:
    p = _existing_file(path)
    column_map = _columns_arg(columns)
    unit_map = _units_arg(units)
    fs = _fs_arg(fs_given)
    row_slice = _rows_arg(rows)
    table = _read(p, limits)
    base = ("t", "f") if input_only else REQUIRED
    required = tuple(c for c in base if not (c == "t" and fs is not None and "t" not in column_map))
    try:
        mapping = _map_columns(table.df, column_map, p.name, required, table.index_columns)
    except DataValidationError as exc:
        if table.notes:
            raise DataValidationError(f"{exc} ({'; '.join(table.notes)})") from None
        raise
    if fs is not None and "t" in mapping:
        raise DataValidationError(
            f"{p.name} has a time column `{mapping['t']}`; give either the time column or {option_ref('fs')}, not both"
        )
    table, first_row = _select_rows(table, row_slice, p.name)
    arrays: dict[str, FloatArray] = {}
    unit_strings: dict[str, str] = {}
    file_units: dict[str, str] = {}
    notes: list[str] = list(table.notes)
    unit_by_key = {parse_channel(c): u for c, u in unit_map.items()}
    for channel, column in mapping.items():
        values = _numeric(table.df[column], channel, column, table)
        unit = _channel_unit(channel, column, unit_by_key.get(parse_channel(channel)), p.name, notes)
        arrays[channel], unit_strings[channel] = _in_si(channel, values, unit, notes)
        if unit is not None:
            file_units[channel] = unit
    if "t" not in arrays:
        assert fs is not None  # "t" is required unless fs is given
        arrays = {"t": (first_row + np.arange(len(table.df), dtype=np.float64)) / fs, **arrays}
        unit_strings["t"] = "s"
        notes.append(f"time built from the sampling rate {fs:.10g} Hz")
    if first_row:
        notes.append(f"data rows {first_row}:{first_row + len(table.df)} of the file")
    placeholder: tuple[str, ...] = ()
    if input_only and not any(parse_channel(c) == parse_channel("x") for c in arrays):
        arrays["x"] = np.zeros(len(table.df))
        placeholder = ("x",)
        notes.append("no displacement column: `x` is a placeholder of zeros (input only)")
    return from_channels(
        arrays,
        name=name if name is not None else p.stem,
        units=unit_strings,
        source=str(path),
        warnings=tuple(notes),
        meta={"columns": dict(mapping), "file_units": file_units},
        resample=resample,
        derived=placeholder,
    )


def load_records(
    paths: Sequence[StrPath] | StrPath,
    *,
    columns: Mapping[str, str] | str | None = None,
    units: Mapping[str, str] | str | None = None,
    resample: bool = False,
    fs: float | None = None,
    rows: tuple[int, int | None] | str | None = None,
    limits: Limits | None = None,
) -> tuple[Record, ...]:
    """Load several records (e.g. one per excitation level) with one mapping.

    Parameters
    ----------
    paths : sequence of str or path-like
        Files to load, in order. A single path is accepted too.
    columns, units, resample, fs, rows, limits
        As for :func:`load_record`, applied to every file.

    Returns
    -------
    tuple of Record
        One record per file, named by file stem (by ``parent/stem`` where
        stems repeat).

    Raises
    ------
    DataValidationError
        No paths; any error of :func:`load_record`, prefixed with the file
        name; channels whose units differ between files.
    """
    try:
        return _load_records(paths, columns, units, resample, fs, rows, _limits_arg(limits))
    except DataValidationError as exc:
        raise _one_line_error(exc) from None


def _load_records(
    paths: Sequence[StrPath] | StrPath,
    columns: Mapping[str, str] | str | None,
    units: Mapping[str, str] | str | None,
    resample: bool,
    fs: float | None,
    rows: tuple[int, int | None] | str | None,
    limits: Limits,
) -> tuple[Record, ...]:
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    plist = [Path(p) for p in paths]
    if not plist:
        raise DataValidationError("no files given")
    stems = [p.stem for p in plist]
    names = [f"{p.parent.name}/{p.stem}" if stems.count(p.stem) > 1 else p.stem for p in plist]
    names = _unique(names)
    records = []
    for p, name in zip(plist, names, strict=True):
        try:
            records.append(
                load_record(p, columns=columns, units=units, name=name, resample=resample, fs=fs, rows=rows,
                            limits=limits)
            )
        except DataValidationError as exc:
            raise DataValidationError(f"{p.name}: {exc}") from None
    first = records[0]
    for rec, p in zip(records[1:], plist[1:], strict=True):
        for channel in set(first.channels) & set(rec.channels):
            if first.unit(channel) != rec.unit(channel):
                raise DataValidationError(
                    f"`{channel}` is in {first.unit(channel)} in {plist[0].name} but in {rec.unit(channel)}"
                    f" in {p.name}; records loaded together must use the same units"
                )
    return tuple(records)

