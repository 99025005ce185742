"""The options of loading a record, and how an error message names them in each front end.

A loader message that tells the user to change a loading option (the column
mapping, the units, the sampling rate of a file without a time column, the
rows to keep, resampling) names it with :func:`option_ref`, which writes the
command-line flag: ``--fs``, ``--columns t=NAME``. The command line shows
the message as it is; another front end (the dashboard's Data page) passes
it through :func:`reword` with its own name for each option, so the user
reads the name of the field in front of them. The flag is the marker because
it survives every path a message takes, the isolated file-reading worker's
plain-text answer included. Every option of :data:`LOAD_OPTIONS` must have a
name in such a front end (its tests check that).

Example::

    msg = f"give the sampling rate with {option_ref('fs')}"        # "... with --fs"
    reword(msg, {"fs": "'Sampling rate [Hz]'", ...})              # "... with 'Sampling rate [Hz]'"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import DataValidationError

__all__ = ["LoadOption", "LOAD_OPTIONS", "FS_RANGE_HZ", "option_ref", "reword"]

#: Accepted sampling rates (Hz) of a file without a time column: the reciprocals of the longest and the
#: shortest sampling interval a record accepts (``_record_checks.MAX_DT``, ``MIN_DT``).
FS_RANGE_HZ = (1e-6, 1e9)


@dataclass(frozen=True, kw_only=True)
class LoadOption:
    """One loading option.

    Attributes
    ----------
    key : str
        Its name in :data:`LOAD_OPTIONS` and the argument of :func:`nlid_core.io.load_record`.
    flag : str
        The command-line flag (``--fs``).
    takes_value : bool
        Whether a reference may carry a value written after the flag (``--columns t=NAME``).
    """

    key: str
    flag: str
    takes_value: bool


#: Every loading option a message may name, by key.
LOAD_OPTIONS: Mapping[str, LoadOption] = {
    o.key: o for o in (
        LoadOption(key="columns", flag="--columns", takes_value=True),
        LoadOption(key="units", flag="--units", takes_value=True),
        LoadOption(key="fs", flag="--fs", takes_value=False),
        LoadOption(key="rows", flag="--rows", takes_value=True),
        LoadOption(key="resample", flag="--resample", takes_value=False),
    )
}

# a flag as a message writes it: not inside a backticked name (a file column may be called anything)
_REF = re.compile(
    r"(?<![`\w-])(?P<flag>" + "|".join(re.escape(o.flag) for o in LOAD_OPTIONS.values()) + r")(?![\w-])"
    r"(?: (?P<value>[^\s;,()`=:]*[=:][^\s;,()`]*))?"
)


def option_ref(key: str, value: str = "") -> str:
    """How a message names loading option ``key``: its command-line flag, with ``value`` after it if given.

    Parameters
    ----------
    key : str
        A key of :data:`LOAD_OPTIONS`.
    value : str
        What to write for the option: ``CHANNEL=...`` for the column mapping and the units,
        ``START:STOP`` for the rows (so holding ``=`` or ``:``), without spaces, commas, semicolons or
        brackets; empty for none.

    Returns
    -------
    str
        ``--fs``, ``--columns t=NAME``, ...

    Raises
    ------
    DataValidationError
        An unknown key, a value for an option that takes none, or a value :func:`reword` could not
        find again.
    """
    option = LOAD_OPTIONS.get(key)
    if option is None:
        raise DataValidationError(f"unknown loading option `{key}`; options are {', '.join(LOAD_OPTIONS)}")
    if not value:
        return option.flag
    if not option.takes_value or re.search(r"[\s;,()`]", value) or not re.search(r"[=:]", value):
        raise DataValidationError(f"`value` {value!r} cannot follow {option.flag} in a message")
    return f"{option.flag} {value}"


def reword(message: str, names: Mapping[str, str]) -> str:
    """``message`` with every loading option named as a front end names it.

    Parameters
    ----------
    message : str
        A message whose option references were written by :func:`option_ref`.
    names : mapping of str to str
        The front end's name of each option by key, a format string that may use ``{value}``
        (what the reference carries, empty when nothing), e.g.
        ``{"columns": "the column mapping {value}", "fs": "the field 'Sampling rate [Hz]'"}``. An
        option not in ``names`` keeps its flag.

    Returns
    -------
    str
    """
    by_flag = {o.flag: o.key for o in LOAD_OPTIONS.values()}

    def one(match: re.Match[str]) -> str:
        key = by_flag[match.group("flag")]
        value = match.group("value") or ""
        option = LOAD_OPTIONS[key]
        if key not in names:
            return match.group(0)
        if not option.takes_value and value:
            # the word after a flag that takes no value belongs to the sentence
            return names[key].format(value="").rstrip() + f" {value}"
        return " ".join(names[key].format(value=value).split())

    return _REF.sub(one, message)
