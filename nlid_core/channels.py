"""Channel names of records: time, and force, displacement, velocity and acceleration per degree of freedom.

Grammar
-------
``t`` is time. Every other channel is a quantity letter, optionally followed
by a DOF number from 1 to 99 written without leading zeros:

=====  ============  =======  ======================
letter quantity      SI unit  role
=====  ============  =======  ======================
``f``  force         N        input (applied force)
``x``  displacement  m        output
``v``  velocity      m/s      output
``a``  acceleration  m/s^2    output
=====  ============  =======  ======================

for example ``f1``, ``x2``, ``v2``, ``a12``. The letter alone decides the
quantity, hence the unit conversion. Names are case-sensitive (``X2`` is not
a channel name).

Single and several DOFs
-----------------------
A record's number of DOFs is the highest DOF number among its channels; a
bare name (``x``) counts as DOF 1. The DOFs are numbered 1 to ``n_dof``
without gaps: every DOF has its displacement, and DOF 1 its force.

A bare name and the same name with ``1`` are the same channel in every
record: ``x`` and ``x1`` are synonyms everywhere a channel name is taken
(record constructors, units, ``derived``, column and unit specs, lookups),
so a mapping that gives both names a channel twice. A record writes its
channel names one way (:func:`channel_name`): bare in a single-DOF record
(``t, f, x, v, a``, as single-DOF records always were, in reports, JSON
and written files alike), with the DOF number in a record with several DOFs
(``t, f1, x1, x2``).

Channels are ordered by quantity (``t``, forces, displacements, velocities,
accelerations), then by DOF number: ``t, f1, f2, x1, x2, v1, v2, a1, a2``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import NamedTuple, TypeVar

from .errors import DataValidationError

__all__ = [
    "CHANNELS",
    "REQUIRED",
    "SI_UNITS",
    "CHANNEL_LABELS",
    "INPUT_QUANTITIES",
    "OUTPUT_QUANTITIES",
    "MAX_DOF",
    "CHANNEL_GRAMMAR",
    "ChannelKey",
    "parse_channel",
    "channel_name",
    "canonical_channel",
    "channel_label",
    "sorted_keys",
    "keyed_by_channel",
]

#: Channel names of a single-DOF record in their canonical order; ``t``, ``f`` and ``x`` are required.
CHANNELS: tuple[str, ...] = ("t", "f", "x", "v", "a")
REQUIRED: tuple[str, ...] = ("t", "f", "x")
#: SI unit per quantity letter.
SI_UNITS: Mapping[str, str] = {"t": "s", "f": "N", "x": "m", "v": "m/s", "a": "m/s^2"}
#: What each quantity letter measures.
CHANNEL_LABELS: Mapping[str, str] = {
    "t": "time",
    "f": "force",
    "x": "displacement",
    "v": "velocity",
    "a": "acceleration",
}
#: Quantity letters of inputs and of outputs (responses).
INPUT_QUANTITIES: tuple[str, ...] = ("f",)
OUTPUT_QUANTITIES: tuple[str, ...] = ("x", "v", "a")
#: Highest DOF number of a channel name.
MAX_DOF = 99
#: The grammar in words, for messages.
CHANNEL_GRAMMAR = f"t, or f, x, v, a optionally followed by a DOF number 1 to {MAX_DOF} (f1, x2, a12)"

_NAME = re.compile(r"^([a-z])([0-9]*)$")
_ORDER = {q: i for i, q in enumerate(CHANNELS)}
_V = TypeVar("_V")


class ChannelKey(NamedTuple):
    """A channel name parsed: its quantity letter and DOF number (0 for time, 1 for a bare name)."""

    quantity: str
    dof: int


def parse_channel(name: str) -> ChannelKey:
    """Parse a channel name into its quantity letter and DOF number.

    Parameters
    ----------
    name : str
        ``t``, or ``f``, ``x``, ``v``, ``a`` optionally followed by a DOF
        number 1 to 99 without leading zeros.

    Returns
    -------
    ChannelKey
        ``("t", 0)`` for time, ``("x", 1)`` for both ``x`` and ``x1``,
        ``("a", 12)`` for ``a12``.

    Raises
    ------
    DataValidationError
        A name outside the grammar (``y3``), a DOF number outside 1 to 99
        (``x0``, ``f100``) or written with a leading zero (``x01``), or a DOF
        number on time (``t1``).
    """
    if not isinstance(name, str):
        raise DataValidationError(f"a channel name must be a string, got {type(name).__name__}")
    return _parse_name(name)


@lru_cache(maxsize=1024)
def _parse_name(name: str) -> ChannelKey:
    m = _NAME.match(name)
    if m is None or m.group(1) not in _ORDER:
        raise DataValidationError(f"unknown channel `{name}`; channels are {CHANNEL_GRAMMAR}")
    quantity, digits = m.groups()
    if quantity == "t":
        if digits:
            raise DataValidationError(f"unknown channel `{name}`: time `t` has no DOF number")
        return ChannelKey("t", 0)
    if not digits:
        return ChannelKey(quantity, 1)
    dof = int(digits)
    if digits[0] == "0" or dof > MAX_DOF:
        raise DataValidationError(
            f"channel `{name}` has DOF number {digits}; DOF numbers run from 1 to {MAX_DOF}, without leading zeros"
        )
    return ChannelKey(quantity, dof)


def channel_name(key: ChannelKey, n_dof: int) -> str:
    """The name a record with ``n_dof`` DOFs gives channel ``key``.

    Parameters
    ----------
    key : ChannelKey
        Quantity letter and DOF number.
    n_dof : int
        Number of DOFs of the record: the bare letter when 1, the letter and
        the DOF number otherwise.

    Returns
    -------
    str
        ``"x"`` for ``("x", 1)`` in a single-DOF record, ``"x1"`` with two
        DOFs; ``"t"`` for time.
    """
    if key.quantity == "t":
        return "t"
    if n_dof == 1 and key.dof == 1:
        return key.quantity
    return f"{key.quantity}{key.dof}"


def canonical_channel(name: str, n_dof: int) -> str:
    """The way a record with ``n_dof`` DOFs writes channel ``name`` (``"x1"`` -> ``"x"`` when single-DOF).

    Parameters
    ----------
    name : str
        A channel name (see :func:`parse_channel`).
    n_dof : int
        Number of DOFs of the record.

    Returns
    -------
    str
        The canonical spelling.

    Raises
    ------
    DataValidationError
        ``name`` is not a channel name.
    """
    return channel_name(parse_channel(name), n_dof)


def channel_label(name: str) -> str:
    """What channel ``name`` measures (``"displacement"`` for ``x2``); the name itself if it is not a channel.

    Parameters
    ----------
    name : str
        A channel name.

    Returns
    -------
    str
        The quantity's label.
    """
    try:
        return CHANNEL_LABELS[parse_channel(name).quantity]
    except DataValidationError:
        return name


def sorted_keys(keys: Iterable[ChannelKey]) -> list[ChannelKey]:
    """Channel keys in the canonical order: time, then by quantity (f, x, v, a), then by DOF number.

    Parameters
    ----------
    keys : iterable of ChannelKey
        Keys to order.

    Returns
    -------
    list of ChannelKey
    """
    return sorted(keys, key=lambda k: (_ORDER[k.quantity], k.dof))


def keyed_by_channel(named: Mapping[str, _V], what: str) -> dict[ChannelKey, _V]:
    """Key each entry of ``named`` by its channel, refusing invalid names and a channel named twice.

    Parameters
    ----------
    named : mapping of str to any
        Values by channel name, in any spelling (``x`` or ``x1``).
    what : str
        Name of the argument, for messages.

    Returns
    -------
    dict of ChannelKey to any
        The same values, in the same order.

    Raises
    ------
    DataValidationError
        An invalid name, or two names of one channel (``x`` and ``x1``).
    """
    out: dict[ChannelKey, _V] = {}
    for name, value in named.items():
        try:
            key = parse_channel(name)
        except DataValidationError as exc:
            raise DataValidationError(f"`{what}` names an invalid channel: {exc}") from None
        if key in out:
            raise DataValidationError(
                f"`{what}` gives channel `{key.quantity}{key.dof}` twice"
                f" (`{key.quantity}` and `{key.quantity}{key.dof}` name the same channel)"
            )
        out[key] = value
    return out
