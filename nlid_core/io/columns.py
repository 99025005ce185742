"""Column mapping: ``CHANNEL=VALUE`` specs, channel aliases and finding each channel's column in a table."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import pandas as pd

from ..errors import DataValidationError
from ..record import CHANNEL_LABELS, CHANNELS, REQUIRED
from ._table import _one_line
from .units import _header_unit, unit_factor

__all__ = ["parse_columns_spec", "parse_units_spec"]

#: Column names recognised without a mapping (compared lower-case, with a
#: trailing bracketed unit removed).
_ALIASES: Mapping[str, tuple[str, ...]] = {
    "t": ("t", "time"),
    "f": ("f", "force"),
    "x": ("x", "disp", "displacement"),
    "v": ("v", "vel", "velocity"),
    "a": ("a", "acc", "accel", "acceleration"),
}
_CHANNEL_BY_ALIAS: Mapping[str, str] = {alias: c for c, names in _ALIASES.items() for alias in names}
_COLUMNS_EXAMPLE = "t=time,f=force,x=disp"
_UNITS_EXAMPLE = "x=mm,f=kN"


# --------------------------------------------------------------------------- specs


def _canonical_channel(name: str) -> str | None:
    key = name.strip()
    if key in CHANNELS:
        return key
    return _CHANNEL_BY_ALIAS.get(key.lower())


def _parse_spec(spec: str, what: str, example: str) -> dict[str, str]:
    if not isinstance(spec, str):
        raise DataValidationError(f"{what} spec must be a string like `{example}`, got {type(spec).__name__}")
    pairs: list[tuple[str, str]] = []
    for fragment in spec.split(","):
        if not fragment.strip():
            continue
        key, eq, value = fragment.partition("=")
        if not eq:
            raise DataValidationError(
                f"malformed {what} spec fragment `{fragment.strip()}` in `{spec}`:"
                f" expected CHANNEL=VALUE, e.g. `{example}`"
            )
        pairs.append((key, value))
    return _normalise_pairs(pairs, what, example)


def _normalise_pairs(pairs: Iterable[tuple[Any, Any]], what: str, example: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in pairs:
        fragment = f"{str(key).strip()}={str(value).strip()}"
        channel = _canonical_channel(str(key))
        if channel is None:
            raise DataValidationError(
                f"unknown channel `{str(key).strip()}` in {what} spec fragment `{fragment}`;"
                f" channels are {', '.join(CHANNELS)}"
            )
        if value is None or not str(value).strip():
            raise DataValidationError(f"empty value in {what} spec fragment `{fragment}`; e.g. `{example}`")
        if channel in out:
            raise DataValidationError(f"channel `{channel}` is given twice in {what} spec (at `{fragment}`)")
        out[channel] = str(value).strip()
    return out


def parse_columns_spec(spec: str) -> dict[str, str]:
    """Parse a column mapping such as ``"t=time,f=force,x=disp"``.

    Parameters
    ----------
    spec : str
        Comma-separated ``CHANNEL=COLUMN`` pairs. Channels are ``t, f, x, v,
        a`` or their long names (``time``, ``force``, ``disp``, ...). Empty
        fragments (a trailing comma) are ignored.

    Returns
    -------
    dict of str to str
        File column name per channel.

    Raises
    ------
    DataValidationError
        A fragment without ``=``, an unknown channel, an empty column name, a
        channel given twice or one column mapped to two channels.
    """
    return _checked_columns(_parse_spec(spec, "columns", _COLUMNS_EXAMPLE))


def _checked_columns(mapping: dict[str, str]) -> dict[str, str]:
    by_column: dict[str, str] = {}
    for channel, column in mapping.items():
        if column in by_column:
            raise DataValidationError(
                f"column `{column}` is mapped to both `{by_column[column]}` and `{channel}`;"
                " map each channel to its own column"
            )
        by_column[column] = channel
    return mapping


def _checked_units(mapping: dict[str, str]) -> dict[str, str]:
    for channel, unit in mapping.items():
        unit_factor(channel, unit)
    return mapping


def parse_units_spec(spec: str) -> dict[str, str]:
    """Parse a unit spec such as ``"x=mm,f=kN"``.

    Parameters
    ----------
    spec : str
        Comma-separated ``CHANNEL=UNIT`` pairs; a unit is a name (see
        :data:`UNIT_FACTORS`) or a positive number, the factor to SI.

    Returns
    -------
    dict of str to str
        Unit string per channel, as given.

    Raises
    ------
    DataValidationError
        A malformed fragment, an unknown channel, a unit of another quantity
        (``x=kN``), a non-positive number or a miscapitalised known unit.
    """
    return _checked_units(_parse_spec(spec, "units", _UNITS_EXAMPLE))


def _fmt_columns(columns: Iterable[str], limit: int = 30) -> str:
    names = [f"`{_one_line(c, 60)}`" for c in columns]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _map_columns(
    df: pd.DataFrame,
    columns: Mapping[str, str],
    fname: str,
    required: tuple[str, ...] = REQUIRED,
    not_by_name: Collection[str] = (),
) -> dict[str, str]:
    available = [str(c) for c in df.columns]
    mapping: dict[str, str] = {}
    for channel, column in columns.items():
        if column in available:
            mapping[channel] = column
            continue
        loose = [c for c in available if c.strip().lower() == column.strip().lower()]
        if len(loose) == 1:
            mapping[channel] = loose[0]
            continue
        raise DataValidationError(
            f"column `{column}` (mapped to `{channel}`) is not in {fname}; available columns: {_fmt_columns(available)}"
        )
    used = set(mapping.values())
    for channel in CHANNELS:
        if channel in mapping:
            continue
        hits = [
            c
            for c in available
            if c not in used
            and c not in not_by_name
            and _CHANNEL_BY_ALIAS.get(_header_unit(c)[0].strip().lower()) == channel
        ]
        if len(hits) > 1:
            raise DataValidationError(
                f"{fname} has several columns that could be `{channel}` ({CHANNEL_LABELS[channel]}):"
                f" {_fmt_columns(hits)}; choose one with --columns {channel}=NAME"
            )
        if hits:
            mapping[channel] = hits[0]
    for channel in required:
        if channel not in mapping:
            hint = " (or give the sampling rate with --fs when the file has no time column)" if channel == "t" else ""
            raise DataValidationError(
                f"no `{channel}` ({CHANNEL_LABELS[channel]}) column in {fname}; available columns:"
                f" {_fmt_columns(available)}; name a column `{channel}` or map one with --columns {channel}=NAME"
                + hint
            )
    return {c: mapping[c] for c in CHANNELS if c in mapping}


def _columns_arg(value: Mapping[str, str] | str | None) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_columns_spec(value)
    if not isinstance(value, Mapping):
        raise DataValidationError(f"`columns` must be a mapping or a spec string, got {type(value).__name__}")
    return _checked_columns(_normalise_pairs(value.items(), "columns", _COLUMNS_EXAMPLE))


def _units_arg(value: Mapping[str, str] | str | None) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_units_spec(value)
    if not isinstance(value, Mapping):
        raise DataValidationError(f"`units` must be a mapping or a spec string, got {type(value).__name__}")
    return _checked_units(_normalise_pairs(value.items(), "units", _UNITS_EXAMPLE))

