"""Column mapping: ``CHANNEL=VALUE`` specs, channel aliases and finding each channel's column in a table.

Channels are named as in :mod:`nlid_core.channels` (``t``, ``f``, ``x2``,
``a12``, ...). In a ``--columns``/``--units`` spec a channel may also be
given by a long name, optionally followed by a DOF number (``force``,
``disp2``, ``acc_2``), in any case.

Without a mapping, a column is taken for a channel when its header (less a
bracketed unit, compared lower-case) is a long name or a single-DOF letter
(``time``, ``Force``, ``x [mm]``), a long name with a DOF number
(``disp2``, ``Acc 2``), or exactly a numbered channel name in lower case
(``x2``, ``f1``). Upper-case letters with a number (``V1``, ``A2``, ``X2``:
typical names of voltage or analogue-input channels) are never taken by
name; map them with ``--columns``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import pandas as pd

from ..channels import CHANNEL_GRAMMAR, ChannelKey, channel_name, parse_channel, sorted_keys
from ..errors import DataValidationError
from ..load_options import option_ref
from ..record import CHANNEL_LABELS, REQUIRED
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
#: A long name followed by a DOF number (``disp2``, ``acc_2``, ``force 1``), compared lower-case.
_NUMBERED_ALIAS = re.compile(
    r"^(?P<alias>" + "|".join(sorted((a for c, names in _ALIASES.items() if c != "t" for a in names if len(a) > 1),
                                     key=len, reverse=True)) + r")[ _]?(?P<dof>[0-9]+)$"
)
_NUMBERED_LETTER = re.compile(r"^(?P<alias>[a-z])(?P<dof>[0-9]+)$")
_CHANNEL_WORDS = f"{CHANNEL_GRAMMAR}, or their long names (time, force, disp, vel, acc, ...)"
_COLUMNS_EXAMPLE = "t=time,f=force,x=disp"
_UNITS_EXAMPLE = "x=mm,f=kN"
_SCALE_EXAMPLE = "f=35.15N"
_SCALE = re.compile(r"^\s*(?P<factor>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>\S*)\s*$")


# --------------------------------------------------------------------------- specs


def _spec_channel(name: str) -> str | None:
    """Channel named in a spec, spelt canonically (``x2``, ``f``; ``disp2`` -> ``x2``, ``X`` -> ``x``).

    None when ``name`` is no channel; a DataValidationError for a channel
    letter with a DOF number outside 1 to 99 (``x0``, ``f100``).
    """
    key = name.strip()
    try:
        parse_channel(key)
        return key
    except DataValidationError:
        pass
    low = key.lower()
    if low in _CHANNEL_BY_ALIAS:
        return _CHANNEL_BY_ALIAS[low]
    numbered = _NUMBERED_LETTER.match(low)
    if numbered is None:
        numbered = _NUMBERED_ALIAS.match(low)
    if numbered is None or numbered.group("alias") not in _CHANNEL_BY_ALIAS:
        return None
    channel = _CHANNEL_BY_ALIAS[numbered.group("alias")] + numbered.group("dof")
    parse_channel(channel)  # raises for a DOF number outside 1 to 99
    return channel


def _header_key(column: str) -> ChannelKey | None:
    """Channel a column is taken for without a mapping (see the module notes), or None."""
    name = _header_unit(column)[0].strip()
    low = name.lower()
    if low in _CHANNEL_BY_ALIAS:
        return parse_channel(_CHANNEL_BY_ALIAS[low])
    numbered = _NUMBERED_ALIAS.match(low)
    if _NUMBERED_LETTER.match(name) is None and numbered is None:
        return None
    channel = name if numbered is None else _CHANNEL_BY_ALIAS[numbered.group("alias")] + numbered.group("dof")
    try:
        return parse_channel(channel)
    except DataValidationError:
        return None


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
    seen: dict[ChannelKey, str] = {}
    for key, value in pairs:
        fragment = f"{str(key).strip()}={str(value).strip()}"
        try:
            channel = _spec_channel(str(key))
        except DataValidationError as exc:
            raise DataValidationError(f"{exc} (in {what} spec fragment `{fragment}`)") from None
        if channel is None:
            raise DataValidationError(
                f"unknown channel `{str(key).strip()}` in {what} spec fragment `{fragment}`;"
                f" channels are {_CHANNEL_WORDS}"
            )
        if value is None or not str(value).strip():
            raise DataValidationError(f"empty value in {what} spec fragment `{fragment}`; e.g. `{example}`")
        parsed = parse_channel(channel)
        if parsed in seen:
            same = "" if seen[parsed] == channel else f"; `{seen[parsed]}` and `{channel}` name the same channel"
            raise DataValidationError(f"channel `{channel}` is given twice in {what} spec (at `{fragment}`{same})")
        seen[parsed] = channel
        out[channel] = str(value).strip()
    return out


def parse_columns_spec(spec: str) -> dict[str, str]:
    """Parse a column mapping such as ``"t=time,f=force,x=disp"``.

    Parameters
    ----------
    spec : str
        Comma-separated ``CHANNEL=COLUMN`` pairs. Channels are ``t, f, x, v,
        a``, the last four optionally with a DOF number 1 to 99 (``f1``,
        ``x2``), or their long names (``time``, ``force``, ``disp2``, ...).
        ``x`` and ``x1`` are the same channel. Empty fragments (a trailing
        comma) are ignored.

    Returns
    -------
    dict of str to str
        File column name per channel, the channel spelt as given (a long
        name as its letter: ``disp2`` -> ``x2``).

    Raises
    ------
    DataValidationError
        A fragment without ``=``, an unknown channel (``y3``), a DOF number
        outside 1 to 99 (``x0``, ``f100``), an empty column name, a channel
        given twice (also as ``x`` and ``x1``) or one column mapped to two
        channels.
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
        Comma-separated ``CHANNEL=UNIT`` pairs, channels as for
        :func:`parse_columns_spec` (``x2=mm``); a unit is a name (see
        :data:`UNIT_FACTORS`) of the quantity of the channel's letter or a
        positive number, the factor to SI.

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


def parse_scale_spec(spec: str) -> dict[str, str]:
    """Parse a scale spec such as ``"f=35.15N"``: the file's values of a channel times a factor give it in a unit.

    A drive records its force as a voltage (``vir`` in V) and states a gain (35.15 N/V): ``f=35.15N`` reads the
    column as newtons after multiplying by 35.15; ``f=0.03515kN`` is the same. Without a unit the factor gives
    the SI unit of the channel's quantity.

    Returns
    -------
    dict of str to str
        Per channel, the factor to SI as a number written as a unit (what ``--units`` takes), so that every
        loader applies it the same way.

    Raises
    ------
    DataValidationError
        A fragment without a positive finite factor, or a unit that is not one of the channel's quantity.
    """
    out: dict[str, str] = {}
    for channel, text in _parse_spec(spec, "scale", _SCALE_EXAMPLE).items():
        m = _SCALE.match(text)
        factor = float(m.group("factor")) if m else math.nan
        if m is None or not (math.isfinite(factor) and factor > 0):
            raise DataValidationError(f"scale of `{channel}`: expected a positive factor and a unit, e.g."
                                      f" `{_SCALE_EXAMPLE}`, got `{text}`")
        unit = m.group("unit")
        to_si = unit_factor(channel, unit) if unit else 1.0
        if to_si is None:
            raise DataValidationError(f"scale of `{channel}`: `{unit}` is not a unit of its quantity; give the unit"
                                      f" the factor leads to, e.g. `{_SCALE_EXAMPLE}`")
        out[channel] = repr(factor * to_si)
    return out


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
    """File column per channel, channels named as the record will name them, in canonical order.

    ``columns`` maps channels (spelt as :func:`parse_columns_spec` returns
    them) to columns; other channels are found by header name, only for the DOFs that ``columns``
    names when it names any channel other than ``t``. ``required``
    names single-DOF channels that must be found; with several DOFs the
    displacement of every DOF is required too.
    """
    available = [str(c) for c in df.columns]
    mapping: dict[ChannelKey, str] = {}
    for channel, column in columns.items():
        key = parse_channel(channel)
        if column in available:
            mapping[key] = column
            continue
        loose = [c for c in available if c.strip().lower() == column.strip().lower()]
        if len(loose) == 1:
            mapping[key] = loose[0]
            continue
        raise DataValidationError(
            f"column `{column}` (mapped to `{channel}`) is not in {fname}; available columns: {_fmt_columns(available)}"
        )
    used = set(mapping.values())
    # channels mapped explicitly choose the DOFs: `--columns f=f1,x=x1` on a file with x2 reads DOF 1 only
    chosen = {k.dof for k in mapping if k.quantity != "t"}
    by_name: dict[ChannelKey, list[str]] = {}
    for c in available:
        found = None if c in used or c in not_by_name else _header_key(c)
        if found is not None and found not in mapping and (not chosen or found.quantity == "t" or found.dof in chosen):
            by_name.setdefault(found, []).append(c)
    # the time column belongs to no DOF (dof 0): a file holding only `t` by name is a one-DOF record
    n_dof = max((k.dof for k in [*mapping, *by_name] if k.quantity != "t"), default=1)
    for key in sorted_keys(by_name):
        hits = by_name[key]
        if len(hits) > 1:
            name = channel_name(key, n_dof)
            raise DataValidationError(
                f"{fname} has several columns that could be `{name}` ({CHANNEL_LABELS[key.quantity]}):"
                f" {_fmt_columns(hits)}; choose one with {option_ref('columns', f'{name}=NAME')}"
            )
        mapping[key] = hits[0]
    needed = [parse_channel(c) for c in required] + [ChannelKey("x", k) for k in range(2, n_dof + 1)]
    for key in sorted_keys(needed):
        if key not in mapping:
            name = channel_name(key, n_dof)
            hint = (f" (or give the sampling rate with {option_ref('fs')} when the file has no time column)"
                    if name == "t" else "")
            dofs = f" (the record has {n_dof} DOFs and needs the displacement of each)" if key.dof > 1 else ""
            mapping_ref = option_ref("columns", f"{name}=NAME")
            raise DataValidationError(
                f"no `{name}` ({CHANNEL_LABELS[key.quantity]}) column in {fname}{dofs}; available columns:"
                f" {_fmt_columns(available)}; name a column `{name}` or map one with {mapping_ref}" + hint
            )
    return {channel_name(k, n_dof): mapping[k] for k in sorted_keys(mapping)}


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

