"""Reading and writing measurement records.

Tables are read from CSV/TXT/TSV (delimiter sniffed), Parquet, Excel and
MATLAB ``.mat`` files, their columns are mapped to the channels ``t, f, x, v,
a`` of a :class:`~nlid_core.record.Record`, scaled to SI units and validated.

Every problem with the input raises
:class:`~nlid_core.errors.DataValidationError` whose message names the file,
the column (in backticks), the 0-based data row where one applies and what was
received; exceptions of pandas, pyarrow, scipy, zipfile or the XML parser
never leak out of :func:`read_table`, :func:`load_record` or
:func:`load_records`, and every message is one printable line (a library's
own text is cut to 200 characters).

Files are untrusted (uploads to a shared server). Each reader checks what the
file *declares* against :class:`~nlid_core.limits.Limits` before allocating
it, and refuses with a message naming the limit and its environment
variable:

* every format: size on disk (``max_file_mb``); rows, columns and cells of
  the table (``max_rows``, ``max_columns``, ``max_cells``);
* CSV/TXT/TSV: delimiter, decimal mark, header and field counts are sniffed
  from the first 64 kB (1 MB for long lines) and pandas reads the file from
  disk, at most ``max_rows`` (and ``max_cells / columns``) rows plus one to
  detect more. Rows with more fields than the header are never shifted: one
  more field counting 0, 1, 2, ... is a row index, dropped with a note;
  anything else is an error naming the row;
* ``.xlsx``: the zip directory, each part's declared size and compression
  ratio (``max_uncompressed_mb``, ``max_ratio``) and compression method; the
  sheet's ``<dimension>``; then the first sheet is streamed, each row and
  cell checked as it arrives, the bytes actually inflated counted, and
  nothing allocated for the size a sheet declares;
* ``.mat``: every variable header is walked first (class, dimensions; a
  compressed variable is inflated, counted and discarded no further than its
  header, the ratio and the decompressed-size limits allow); only real
  numeric variables are then loaded by scipy;
* Parquet: the footer's declared columns, rows and row groups
  (``max_row_groups``) are skimmed before pyarrow decodes it; then each
  column chunk's declared sizes and every page header (decompressed size,
  ratio, value count) are checked before any page is read.

A column named like a row index (empty, ``Unnamed: 0``, ``index``) that
counts 0, 1, 2, ... is never mapped to a channel by name.

Specs as given on a command line::

    parse_columns_spec("t=time,f=force,x=disp")  # channel -> file column
    parse_units_spec("x=mm,f=kN")                # channel -> unit

A unit is a name from :data:`UNIT_FACTORS` for the channel's quantity, or a
plain positive number (the factor to SI). A name the table does not know for
that quantity (e.g. ``V`` for an electrical analogue) is kept as the
channel's unit string with factor 1; a name belonging to another quantity
(e.g. ``x=kN``) is an error. A column header ending in a bracketed known unit
(or ``V``, ``mV``), such as ``x [mm]`` or ``Force (kN)``, supplies the unit of
its channel when none is given explicitly.
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import math
import operator
import posixpath
import re
import struct
import warnings
import xml.etree.ElementTree as ET
import xml.parsers.expat as expat
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .errors import DataValidationError
from .limits import Limits, limit_message
from .record import CHANNEL_LABELS, CHANNELS, REQUIRED, SI_UNITS, Record, from_arrays

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "UNIT_FACTORS",
    "CHANNEL_QUANTITY",
    "read_table",
    "parse_columns_spec",
    "parse_units_spec",
    "unit_factor",
    "load_record",
    "load_records",
    "write_record",
]

FloatArray = NDArray[np.float64]
StrPath = str | PathLike[str]

_WRITE_EXTENSIONS = (".csv", ".parquet")

#: Physical quantity measured by each channel.
CHANNEL_QUANTITY: Mapping[str, str] = {
    "t": "time",
    "f": "force",
    "x": "length",
    "v": "velocity",
    "a": "acceleration",
}

_LBF = 4.4482216152605  # N per pound-force (exact by definition)
_INCH = 0.0254  # m per inch (exact by definition)
_G0 = 9.80665  # m/s^2 per standard gravity (exact by definition)

#: Known unit names per quantity and their factor to the SI unit.
UNIT_FACTORS: Mapping[str, Mapping[str, float]] = {
    "time": {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6},
    "force": {"N": 1.0, "kN": 1e3, "mN": 1e-3, "lbf": _LBF},
    "length": {"m": 1.0, "mm": 1e-3, "um": 1e-6, "µm": 1e-6, "μm": 1e-6, "cm": 1e-2, "in": _INCH},
    "velocity": {"m/s": 1.0, "mm/s": 1e-3, "um/s": 1e-6, "µm/s": 1e-6, "cm/s": 1e-2, "in/s": _INCH},
    "acceleration": {
        "m/s^2": 1.0,
        "m/s2": 1.0,
        "m/s²": 1.0,
        "mm/s^2": 1e-3,
        "mm/s2": 1e-3,
        "mm/s²": 1e-3,
        "in/s^2": _INCH,
        "g": _G0,
    },
}

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
_HEADER_UNIT = re.compile(r"^(?P<name>.*?)\s*[\[(]\s*(?P<unit>[^\[\]()]+?)\s*[\])]\s*$")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+(?:[eE][+-]?\d+)?$")
_DECIMAL_POINT = re.compile(r"^[+-]?\d*\.\d+(?:[eE][+-]?\d+)?$")
_SNIFF_LINES = 20
_CONTROL_BYTES = bytes([*range(1, 9), *range(0x0E, 0x20), 0x7F])
#: Non-SI units recognised in column headers besides those of UNIT_FACTORS.
_SIGNAL_UNITS = ("V", "mV")
_COLUMNS_EXAMPLE = "t=time,f=force,x=disp"
_UNITS_EXAMPLE = "x=mm,f=kN"
_MAX_MAT_COLUMNS = 10


@dataclass(frozen=True)
class _Table:
    """A table as read, with what is needed to diagnose its cells."""

    df: pd.DataFrame
    nan_is_empty: bool  # a NaN in a float column is an empty cell (CSV, Excel)
    decimal: str = "."
    notes: tuple[str, ...] = ()
    index_columns: tuple[str, ...] = ()  # row counters under an index name: never auto-mapped


# --------------------------------------------------------------------------- reading tables


def read_table(path: StrPath, *, limits: Limits | None = None) -> pd.DataFrame:
    """Read a table of measured columns from a file, choosing the reader by extension.

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.txt``, ``.tsv`` (delimiter sniffed among comma,
        semicolon, tab and whitespace; decimal commas are recognised with
        semicolon, tab or whitespace delimiters, and in quoted cells with a
        comma delimiter), ``.parquet``/``.pq``, ``.xlsx``/``.xls`` (first
        sheet) or ``.mat`` (MATLAB v4-v7).
    limits : Limits or None
        Bounds on what the file may declare and hold (size on disk, rows,
        columns, cells, decompressed size, compression ratio, Parquet row
        groups); ``Limits.from_env()`` when None. They are checked against
        what the file declares before anything of that size is allocated.

    Returns
    -------
    pandas.DataFrame
        One column per file column, names stripped of surrounding whitespace.
        Clean numeric columns are float or integer; columns with text cells
        keep their text. A text file whose first line is all numbers has no
        header: its columns are named ``0``, ``1``, ...

    Raises
    ------
    DataValidationError
        Missing, empty or unreadable file, header without data rows,
        unsupported extension, MATLAB v7.3 file, ``.mat`` variables of
        different lengths, a file beyond one of ``limits`` (the message
        names the limit and the environment variable that raises it).
    """
    try:
        checked = _limits_arg(limits)
        return _read(_existing_file(path), checked).df
    except DataValidationError as exc:
        raise _one_line_error(exc) from None


def _limits_arg(limits: Limits | None) -> Limits:
    if limits is None:
        return Limits.from_env()
    if not isinstance(limits, Limits):
        raise DataValidationError(f"`limits` must be a Limits or None, got {type(limits).__name__}")
    return limits


def _existing_file(path: StrPath) -> Path:
    p = Path(path)
    if not p.exists():
        raise DataValidationError(f"file {p} does not exist")
    if not p.is_file():
        raise DataValidationError(f"{p} is not a file")
    return p


def _read(path: Path, limits: Limits) -> _Table:
    ext = path.suffix.lower()
    reader = _READERS.get(ext)
    if reader is None:
        raise DataValidationError(
            f"file {path.name} has unsupported extension `{path.suffix or '(none)'}`;"
            f" supported: {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None
    if size == 0:
        raise DataValidationError(f"file {path.name} is empty")
    if size > limits.max_file_bytes:
        raise _over_limit(path, "its size", _mb(size), "max_file_mb", limits.max_file_mb)
    table = reader(path, limits)
    df = _tidy(table.df)
    if df.shape[1] == 0:
        raise DataValidationError(f"file {path.name} has no columns")
    if df.shape[0] == 0:
        raise DataValidationError(f"file {path.name} has a header but no data rows")
    _check_shape(path, df.shape[0], df.shape[1], limits)
    index_columns = _row_index_columns(df)
    notes = table.notes + tuple(
        f"column `{c}` is a row index ({_counter_text(_counter_start(df[c]))}) and is not used as a channel"
        for c in index_columns
    )
    return _Table(df, table.nan_is_empty, table.decimal, notes, index_columns)


# --------------------------------------------------------------------------- messages and limits


_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")
#: Longest excerpt of a library's exception text put into a message.
_DETAIL_CHARS = 200


def _one_line(text: str, limit: int | None = None) -> str:
    """``text`` without escape sequences or control characters, whitespace collapsed, cut to ``limit``."""
    if limit is not None:
        text = text[: 8 * limit]
    text = _ESCAPE.sub("", text)
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text


def _detail(exc: BaseException) -> str:
    """A library exception as one short printable line."""
    return _one_line(str(exc), _DETAIL_CHARS) or type(exc).__name__


def _one_line_error(exc: DataValidationError) -> DataValidationError:
    text = str(exc)
    clean = _one_line(text)
    return exc if clean == text else DataValidationError(clean)


def _mb(n_bytes: float) -> str:
    if n_bytes < 10_000:
        return f"{n_bytes:,.0f} bytes"
    return f"{n_bytes / 1e6:,.0f} MB" if n_bytes >= 1e7 else f"{n_bytes / 1e6:.2g} MB"


def _over_limit(path: Path, what: str, value: str, field: str, limit: float | int) -> DataValidationError:
    return DataValidationError(f"file {path.name}: {limit_message(what, value, field, limit)}")


def _check_shape(path: Path, rows: int, columns: int, limits: Limits, *, what: str = "its", where: str = "") -> None:
    """Rows, columns and cells against the limits; ``what`` says whose, ``where`` is appended to the value."""
    if columns > limits.max_columns:
        raise _over_limit(path, f"{what} number of columns", f"{columns:,}{where}", "max_columns", limits.max_columns)
    if rows > limits.max_rows:
        raise _over_limit(path, f"{what} number of data rows", f"{rows:,}{where}", "max_rows", limits.max_rows)
    if rows * columns > limits.max_cells:
        raise _over_limit(
            path, f"{what} number of cells", f"{rows * columns:,} ({rows:,} rows x {columns:,} columns){where}",
            "max_cells", limits.max_cells,
        )


_OUT_OF_MEMORY = ("out of memory", "bad_alloc", "memoryerror", "cannot allocate memory", "failed to allocate")


def _not_readable(path: Path, kind: str, detail: object = None) -> DataValidationError:
    """The error for a file a reader could not read.

    Running out of memory is not a property of the file: a ``MemoryError``, or a library error
    that says the allocation failed, is raised again as ``MemoryError`` so that the caller (the
    parsing worker of :mod:`nlid_core.guard`) reports the memory limit rather than a corrupt file.
    """
    if isinstance(detail, MemoryError) or any(w in str(detail).lower() for w in _OUT_OF_MEMORY):
        raise MemoryError(f"reading {path.name} ran out of memory")
    msg = f"file {path.name} is not a readable {kind} file (binary or corrupt content)"
    if detail is not None:
        text = _detail(detail) if isinstance(detail, BaseException) else _one_line(str(detail), _DETAIL_CHARS)
        if text:
            msg += f": {text}"
    return DataValidationError(msg)


# --------------------------------------------------------------------------- tidying


def _empty_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Boolean frame: cell is missing or blank text."""
    out = {}
    for col in df.columns:
        s = df[col]
        empty = s.isna()
        if s.dtype.kind not in "iufbmM":
            empty = empty | (s.astype(object).where(~empty, "").astype(str).str.strip() == "")
        out[col] = empty.to_numpy()
    return pd.DataFrame(out, index=df.index, columns=df.columns)


def _tidy(df: pd.DataFrame) -> pd.DataFrame:
    """Strip column names, drop empty unnamed columns and trailing empty rows."""
    names = [str(c).strip() for c in df.columns]
    df = df.set_axis(pd.Index(_unique(names), dtype=object), axis=1)
    empty = _empty_cells(df)
    keep = [
        c
        for c, name in zip(df.columns, names, strict=True)
        if not ((name == "" or name.startswith("Unnamed:")) and bool(empty[c].all()))
    ]
    df = df[keep]
    if df.shape[0] and df.shape[1]:
        filled = np.flatnonzero(~empty[keep].to_numpy().all(axis=1))
        df = df.iloc[: int(filled[-1]) + 1 if filled.size else 0]
    return df.reset_index(drop=True)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            seen[name] += 1
            new = f"{name}.{seen[name]}"
            while new in seen:
                seen[name] += 1
                new = f"{name}.{seen[name]}"
            seen[new] = 0
            out.append(new)
        else:
            seen[name] = 0
            out.append(name)
    return out


#: Column names a row index is written under (pandas, R, spreadsheets).
_INDEX_NAME = re.compile(r"^(?:|unnamed: ?\d+|index|level_0|__index_level_\d+__)$", re.IGNORECASE)


def _counter_start(values: pd.Series) -> int | None:
    """0 or 1 when ``values`` are 0, 1, 2, ... or 1, 2, 3, ...; None otherwise."""
    if values.dtype.kind not in "iuf" or len(values) < 2:
        return None
    arr = values.to_numpy(dtype=np.float64)
    start = float(arr[0])
    if start not in (0.0, 1.0) or not np.array_equal(arr, start + np.arange(len(arr), dtype=np.float64)):
        return None
    return int(start)


def _counter_text(start: int | None) -> str:
    first = start or 0
    return f"{first}, {first + 1}, {first + 2}, ..."


def _row_index_columns(df: pd.DataFrame) -> tuple[str, ...]:
    """Columns that are a row counter written under an index name: never auto-mapped to a channel."""
    return tuple(
        str(c) for c in df.columns if _INDEX_NAME.match(str(c).strip()) and _counter_start(df[c]) is not None
    )


# --------------------------------------------------------------------------- CSV, TSV, TXT

#: Bytes read to sniff a text table: first the small prefix, the larger one when it holds too few lines.
_PREFIX_BYTES = (64_000, 1_000_000)
#: Data lines of the prefix whose field counts are compared with the header.
_FIELD_CHECK_LINES = 2_000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_INTEGER = re.compile(r"^[+-]?\d+$")
_LEADING_ZERO = re.compile(r"^[+-]?0\d+$")
_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


@dataclass(frozen=True)
class _Prefix:
    """The start of a text file, decoded."""

    encoding: str
    lines: list[str]  # complete lines
    partial: str  # text after the last complete line when the prefix is not the whole file
    whole: bool


def _decode_prefix(path: Path, raw: bytes, whole: bool) -> tuple[str, str]:
    """(encoding for pandas, decoded text) of the first bytes of a text file."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return "utf-16", codecs.getincrementaldecoder("utf-16")().decode(raw, final=whole)
        except UnicodeDecodeError:
            raise _not_readable(path, "CSV") from None
    if b"\x00" in raw:
        raise _not_readable(path, "CSV")
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(raw, final=whole)
        encoding, control = "utf-8-sig", _CONTROL_BYTES
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
        encoding = "latin-1"
        control = _CONTROL_BYTES + bytes(range(0x80, 0xA0))  # C1 controls are not latin-1 text
    # A text table has next to no control characters besides tab and newlines.
    n_control = len(raw) - len(raw.translate(None, control))
    if n_control > max(2, len(raw) // 1000):
        raise _not_readable(path, "CSV")
    return encoding, text


def _leading_skip(lines: list[str]) -> int:
    """Number of leading blank or ``#`` comment lines."""
    start = 0
    while start < len(lines) and (not lines[start].strip() or lines[start].lstrip().startswith("#")):
        start += 1
    return start


def _text_prefix(path: Path) -> _Prefix:
    """Decode the start of a text file: 64 kB, or 1 MB when that holds too few lines to sniff."""
    prefix = _Prefix("utf-8-sig", [], "", True)
    for n_bytes in _PREFIX_BYTES:
        try:
            with path.open("rb") as fh:
                raw = fh.read(n_bytes + 1)
        except OSError as exc:
            raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None
        whole = len(raw) <= n_bytes
        encoding, text = _decode_prefix(path, raw[:n_bytes], whole)
        parts = _LINE_BREAK.split(text)
        lines, partial = (parts, "") if whole else (parts[:-1], parts[-1])
        prefix = _Prefix(encoding, lines, partial, whole)
        skip = _leading_skip(lines)
        if whole or sum(1 for ln in lines[skip:] if ln.strip()) > _SNIFF_LINES:
            break
    return prefix


def _count_outside_quotes(line: str, sep: str) -> int:
    count, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            count += 1
    return count


def _sniff(lines: list[str]) -> str | None:
    """Pick the delimiter of the header and first data lines; None means whitespace."""
    best: tuple[bool, int] | None = None
    choice = None
    for sep in (",", ";", "\t"):
        counts = [_count_outside_quotes(line, sep) for line in lines]
        if counts[0] == 0:
            continue
        score = (all(c == counts[0] for c in counts), counts[0])
        if best is None or score > best:
            best, choice = score, sep
    return choice


def _fields(path: Path, line: str, sep: str | None) -> list[str]:
    """The fields of one line as the parser will see them (quotes removed, whitespace stripped)."""
    if sep is None:
        return line.split()
    try:
        row = next(csv.reader([line], delimiter=sep), [])
    except csv.Error as exc:
        raise _not_readable(path, "CSV", exc) from None
    return [f.strip() for f in row]


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ".", 1) if _DECIMAL_COMMA.match(text) else text)
    except ValueError:
        return False
    return True


def _parse_int(text: str) -> int | None:
    return int(text) if _INTEGER.match(text) else None


def _decimal_comma_hint(sep: str | None, rows: list[list[str]]) -> str:
    cells = [c for r in rows for c in r if c]
    if sep == "," and cells and all(_INTEGER.match(c) for c in cells):
        return (
            "; the values look like numbers with decimal commas (`0,5`) under a comma delimiter, which cannot be"
            " told apart from two columns: save the file with `;` as the delimiter or with decimal points"
        )
    return ""


def _extra_field_check(path: Path, rows: list[list[str]], sep: str | None, headerless: bool) -> int | None:
    """Compare the field counts of data rows with the header's.

    Returns the first value of a row index (0 or 1) when every data row has
    exactly one field more than the header and that field counts 0, 1, 2, ...
    (or 1, 2, 3, ...); None when the counts agree (a trailing delimiter, one
    empty field more, is fine). Raises when any other row has more fields
    than the header: columns would be shifted against their names.
    """
    n_ref = len(rows[0])
    data = rows[1:]
    first = 1 if headerless else 0  # data-row number of rows[1]
    ref_what = "the first row" if headerless else "the header"
    longer = [i for i, r in enumerate(data) if len(r) > n_ref and not (len(r) == n_ref + 1 and r[-1] == "")]
    if not longer:
        return None
    if not headerless and len(longer) == len(data) and all(len(r) == n_ref + 1 for r in data):
        counter = [_parse_int(r[0]) for r in data]
        start = counter[0]
        if start in (0, 1):
            broken = next((k for k, v in enumerate(counter) if v != start + k), None)
            if broken is None:
                return start
            if broken > 1:
                raise _index_broken(path, start, broken, data[broken][0])
        raise DataValidationError(
            f"file {path.name} is not a readable CSV file: its data rows have {n_ref + 1} fields but the header"
            f" has {n_ref}, and their first field is not a row index (0, 1, 2, ...), so the columns cannot be"
            f" matched to their names; give every column a name in the header{_decimal_comma_hint(sep, data)}"
        )
    i = longer[0]
    raise DataValidationError(
        f"file {path.name} is not a readable CSV file: data row {i + first} has {len(data[i])} fields but"
        f" {ref_what} has {n_ref}{_decimal_comma_hint(sep, [data[i]])}"
    )


def _decimal_mark(path: Path, rows: list[list[str]], sep: str | None) -> tuple[str, tuple[str, ...]]:
    """(decimal mark, notes) from the first data rows; raises for decimal commas under a comma delimiter."""
    cells = [c for r in rows for c in r if c]
    comma = any(_DECIMAL_COMMA.match(c) for c in cells)
    point = any(_DECIMAL_POINT.match(c) for c in cells)
    if comma and not point:
        where = " in quoted cells" if sep == "," else ""
        return ",", (f"decimal commas were read{where} (`1,5` = 1.5)",)
    if sep == "," and cells and all(_INTEGER.match(c) for c in cells):
        zero = next((c for c in cells if _LEADING_ZERO.match(c)), None)
        if zero is not None:
            raise DataValidationError(
                f"file {path.name}: values such as `{zero}` look like the decimal part of numbers written with"
                " decimal commas under a comma delimiter, which cannot be told apart from separate columns;"
                " save the file with `;` as the delimiter or with decimal points"
            )
    return ".", ()


def _long_first_line(path: Path, prefix: _Prefix, limits: Limits) -> DataValidationError:
    text = prefix.partial
    fields = max(text.count(sep) for sep in (",", ";", "\t")) + 1
    if fields > limits.max_columns:
        return _over_limit(path, "its number of columns", f"at least {fields:,}", "max_columns", limits.max_columns)
    return _not_readable(path, "CSV", f"its first line is longer than {_mb(_PREFIX_BYTES[-1])}")


def _read_text(path: Path, limits: Limits) -> _Table:
    prefix = _text_prefix(path)
    skip = _leading_skip(prefix.lines)
    body = [ln for ln in prefix.lines[skip:] if ln.strip()]
    if not body:
        if prefix.whole or not prefix.partial.strip():
            raise DataValidationError(f"file {path.name} is empty")
        raise _long_first_line(path, prefix, limits)
    sep = _sniff(body[: _SNIFF_LINES + 1])
    rows = [_fields(path, ln, sep) for ln in body[:_FIELD_CHECK_LINES]]
    widest = max(len(r) for r in rows)
    partial_fields = 0
    if not prefix.whole and len(body) <= _FIELD_CHECK_LINES and prefix.partial.strip():
        partial_fields = len(prefix.partial.split()) if sep is None else prefix.partial.count(sep) + 1
    if max(widest, partial_fields) > limits.max_columns:
        shown = f"{widest:,}" if widest >= partial_fields else f"at least {partial_fields:,}"
        raise _over_limit(path, "its number of columns", shown, "max_columns", limits.max_columns)
    header_fields = [c for c in rows[0] if c]
    headerless = bool(header_fields) and all(_is_number(c) for c in header_fields)
    index_start = _extra_field_check(path, rows, sep, headerless)
    sample = rows[:_SNIFF_LINES + 1] if headerless else rows[1:_SNIFF_LINES + 1]
    if index_start is not None:
        sample = [r[1:] for r in sample]
    decimal, notes = _decimal_mark(path, sample, sep)
    n_columns = max(len(rows[0]), 1)
    row_cap = max(1, min(limits.max_rows, limits.max_cells // n_columns))
    df = _pandas_text(path, prefix.encoding, sep, "." if sep == "," else decimal, headerless, index_start is not None,
                      skip, row_cap + 1)
    if len(df) > row_cap:
        if row_cap == limits.max_rows:
            raise _over_limit(path, "its number of data rows", f"more than {row_cap:,}", "max_rows", limits.max_rows)
        raise _over_limit(
            path, "its number of cells", f"more than {row_cap * n_columns:,} (more than {row_cap:,} rows x"
            f" {n_columns:,} columns)", "max_cells", limits.max_cells,
        )
    if index_start is not None:
        df = _drop_row_index(path, df, index_start)
        notes += (
            "the file's rows have one field more than its header; the first field is a row index"
            f" ({_counter_text(index_start)}) and was dropped",
        )
    if headerless:
        df.columns = pd.Index([str(i) for i in range(df.shape[1])], dtype=object)
    return _Table(df, nan_is_empty=True, decimal=decimal, notes=notes)


def _pandas_text(
    path: Path, encoding: str, sep: str | None, decimal: str, headerless: bool, implicit_index: bool, skip: int,
    nrows: int,
) -> pd.DataFrame:
    """pandas' C parser on the file itself, at most ``nrows`` data rows; latin-1 when UTF-8 fails later on."""
    for enc in (encoding, "latin-1") if encoding == "utf-8-sig" else (encoding,):
        try:
            return pd.read_csv(
                path,
                sep=sep if sep is not None else r"\s+",
                decimal=decimal,
                header=None if headerless else 0,
                index_col=None if implicit_index else False,
                skiprows=skip,
                nrows=nrows,
                encoding=enc,
                keep_default_na=False,
                na_values=[""],
                skip_blank_lines=True,
                engine="c",
            )
        except UnicodeDecodeError:
            continue
        except pd.errors.EmptyDataError:
            raise DataValidationError(f"file {path.name} is empty") from None
        except pd.errors.ParserError as exc:
            m = _PANDAS_FIELDS.search(str(exc))
            if m:
                raise DataValidationError(
                    f"file {path.name} is not a readable CSV file: line {m[2]} has {m[3]} fields but"
                    f" the header has {m[1]}"
                ) from None
            raise _not_readable(path, "CSV", exc) from None
        except (ValueError, UnicodeError, OverflowError) as exc:
            raise _not_readable(path, "CSV", exc) from None
    raise _not_readable(path, "CSV", "the text is neither UTF-8 nor Latin-1")


def _drop_row_index(path: Path, df: pd.DataFrame, start: int) -> pd.DataFrame:
    """Check that the index pandas took from the first field counts on through the whole file, then drop it."""
    index = np.asarray(pd.to_numeric(pd.Series(df.index), errors="coerce"), dtype=np.float64)
    expected = start + np.arange(len(df), dtype=np.float64)
    bad = np.flatnonzero(index != expected)
    if bad.size:
        raise _index_broken(path, start, int(bad[0]), df.index[int(bad[0])])
    return df.reset_index(drop=True)


def _index_broken(path: Path, start: int, row: int, value: object) -> DataValidationError:
    return DataValidationError(
        f"file {path.name} is not a readable CSV file: its rows have one field more than its header and start"
        f" with a row index ({_counter_text(start)}), but data row {row} starts with `{_one_line(str(value), 40)}`"
        f" instead of {start + row}; columns would be shifted"
    )


# --------------------------------------------------------------------------- Parquet

#: Largest Parquet footer decoded (about 100 bytes per column chunk).
_MAX_FOOTER = 64_000_000
#: Most column chunks (row groups x columns) of a Parquet file: each costs a footer entry, a page walk and
#: pyarrow metadata objects.
_MAX_COLUMN_CHUNKS = 200_000
#: Longest string pyarrow may decode from Parquet metadata (schema JSON, statistics).
_THRIFT_STRING_LIMIT = 16_000_000
#: Pages of a Parquet file whose headers are checked before reading (a file beyond it is refused).
_MAX_PARQUET_PAGES = 1_000_000
#: Compressed parts (pages, zip members, MAT variables) inflating to less than this are not ratio-checked.
_RATIO_FLOOR = 1_000_000


class _ThriftError(Exception):
    """Thrift compact data that ends early or is malformed."""


class _Thrift:
    """Reader of the Thrift compact protocol, just enough for Parquet footers and page headers.

    Integers and booleans of a struct are kept, nested structs are read into
    dicts, everything else (strings, lists, maps) is skipped. Reading never
    goes past the buffer and never nests deeper than 32 levels.
    """

    def __init__(self, data: bytes, max_list: int = 1_024) -> None:
        self.data = data
        self.pos = 0
        self.max_list = max_list  # longest list decoded into a Python list (longer ones are refused)

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise _ThriftError("truncated")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def advance(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise _ThriftError("truncated")
        self.pos += n

    def varint(self) -> int:
        result = shift = 0
        for _ in range(10):
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
        raise _ThriftError("varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def field(self, last: int) -> tuple[int, int]:
        """(type, id) of the next field; type 0 is the end of the struct."""
        b = self.byte()
        if b == 0:
            return 0, 0
        delta = b >> 4
        return b & 0x0F, (last + delta if delta else self.zigzag())

    def list_header(self) -> tuple[int, int]:
        b = self.byte()
        size = b >> 4
        return b & 0x0F, (self.varint() if size == 15 else size)

    def skip(self, ftype: int, depth: int = 0, *, element: bool = False) -> None:
        if depth > 32:
            raise _ThriftError("nested too deeply")
        if ftype in (1, 2):
            if element:
                self.byte()  # a boolean list element is a byte; a boolean field is all in its header
        elif ftype == 3:
            self.byte()
        elif ftype in (4, 5, 6):
            self.varint()
        elif ftype == 7:
            self.advance(8)
        elif ftype == 8:
            self.advance(self.varint())
        elif ftype in (9, 10):
            etype, n = self.list_header()
            for _ in range(n):
                self.skip(etype, depth + 1, element=True)
        elif ftype == 11:
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.skip(kv >> 4, depth + 1, element=True)
                    self.skip(kv & 0x0F, depth + 1, element=True)
        elif ftype == 12:
            self.struct(depth + 1)
        else:
            raise _ThriftError(f"unknown type {ftype}")

    def struct(self, depth: int = 0) -> dict[int, Any]:
        """A struct's fields by id: integers, booleans, short strings (bytes), nested structs, lists of those."""
        if depth > 32:
            raise _ThriftError("nested too deeply")
        values: dict[int, Any] = {}
        last = 0
        while True:
            ftype, fid = self.field(last)
            if ftype == 0:
                return values
            last = fid
            if ftype in (1, 2):
                values[fid] = ftype == 1
            else:
                values[fid] = self.value(ftype, depth + 1)

    def value(self, ftype: int, depth: int) -> Any:
        if ftype in (4, 5, 6):
            return self.zigzag()
        if ftype == 8:
            n = self.varint()
            start = self.pos
            self.advance(n)
            return self.data[start : self.pos] if n <= 1_024 else None
        if ftype == 12:
            return self.struct(depth)
        if ftype == 9:
            etype, n = self.list_header()
            if etype in (4, 5, 6, 8, 12):
                if n > self.max_list:
                    raise _ThriftError(f"a list of {n:,} items")
                return [self.value(etype, depth + 1) for _ in range(n)]
            for _ in range(n):
                self.skip(etype, depth + 1, element=True)
            return None
        self.skip(ftype, depth)
        return None


def _parquet_footer(path: Path, size: int) -> bytes:
    """The Thrift-encoded footer, after checking the magic bytes and the footer length."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
            fh.seek(max(0, size - 8))
            tail = fh.read(8)
            if size < 12 or head != b"PAR1" or tail[4:] not in (b"PAR1", b"PARE"):
                raise _not_readable(path, "Parquet", "no Parquet magic bytes at its start and end")
            if tail[4:] == b"PARE":
                raise DataValidationError(f"file {path.name} is an encrypted Parquet file, which cannot be read here")
            (footer_len,) = struct.unpack("<I", tail[:4])
            if footer_len > size - 12:
                raise _not_readable(path, "Parquet", f"its footer claims {footer_len:,} bytes but the file has"
                                    f" {size:,}")
            if footer_len > _MAX_FOOTER:
                raise _not_readable(path, "Parquet", f"its metadata is {_mb(footer_len)}, more than the"
                                    f" {_mb(_MAX_FOOTER)} accepted")
            fh.seek(size - 8 - footer_len)
            return fh.read(footer_len)
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None


class _ParquetCheck:
    """What a Parquet footer declares, checked field by field as it is decoded (before pyarrow decodes it)."""

    def __init__(self, path: Path, size: int, limits: Limits) -> None:
        self.path, self.size, self.limits = path, size, limits
        self.inflated = self.stored = self.pages = self.chunks = 0
        self.names: list[str] = []

    def footer(self, fh: BinaryIO, data: bytes) -> None:
        path, limits = self.path, self.limits
        reader = _Thrift(data, max_list=max(4 * limits.max_columns, 1_024))
        last = 0
        while True:
            ftype, fid = reader.field(last)
            if ftype == 0:
                break
            last = fid
            if fid == 2 and ftype == 9:  # schema: the root, then one element per column (more when nested)
                etype, n = reader.list_header()
                if n - 1 > limits.max_columns:
                    raise _over_limit(path, "the number of columns its metadata declares", f"{n - 1:,}",
                                      "max_columns", limits.max_columns)
                if etype != 12:
                    raise _ThriftError("a schema that is not a list of structs")
                elements = [reader.value(etype, 1) for _ in range(n)]
                self.names = [
                    _one_line(name.decode("utf-8", "replace"), 60) if isinstance(name, bytes) else "?"
                    for name in (e.get(4) if isinstance(e, dict) else None for e in elements)
                ]
            elif fid == 3 and ftype == 6:
                rows = reader.zigzag()
                if rows > limits.max_rows:
                    raise _over_limit(path, "the number of rows its metadata declares", f"{rows:,}", "max_rows",
                                      limits.max_rows)
            elif fid == 4 and ftype == 9:
                etype, n = reader.list_header()
                if n > limits.max_row_groups:
                    raise _over_limit(path, "its number of row groups", f"{n:,}", "max_row_groups",
                                      limits.max_row_groups)
                for _ in range(n):  # one row group at a time: memory stays that of one
                    group = reader.value(etype, 1)
                    columns = group.get(1) if isinstance(group, dict) else None
                    if not isinstance(columns, list):
                        raise _not_readable(path, "Parquet", "a row group without columns")
                    self.chunks += len(columns)
                    if n * len(columns) > _MAX_COLUMN_CHUNKS:
                        raise _not_readable(path, "Parquet", f"it has {n:,} row groups x {len(columns):,} columns,"
                                            f" more than the {_MAX_COLUMN_CHUNKS:,} column chunks accepted")
                    for j, chunk in enumerate(columns):
                        self.column_chunk(fh, chunk, j)
            else:
                reader.skip(ftype)
        if self.inflated > _RATIO_FLOOR and self.inflated > limits.max_ratio * max(self.stored, 1):
            raise _over_limit(path, "its compression ratio", f"{self.inflated / max(self.stored, 1):,.0f}"
                              f" ({_mb(self.inflated)} from {_mb(self.stored)})", "max_ratio", limits.max_ratio)

    def column_chunk(self, fh: BinaryIO, chunk: Any, j: int) -> None:
        path, limits = self.path, self.limits
        meta = chunk.get(3) if isinstance(chunk, dict) else None
        if not isinstance(meta, dict):
            raise _not_readable(path, "Parquet", "a column chunk without metadata")
        if 1 in chunk:
            raise _not_readable(path, "Parquet", "its columns refer to another file")
        numbers = [v for v in (meta.get(k) for k in (5, 6, 7, 9)) if isinstance(v, int) and v >= 0]
        if len(numbers) != 4:
            raise _not_readable(path, "Parquet", "corrupt column chunk metadata")
        declared_values, declared_bytes, stored, data_offset = numbers
        self.inflated += declared_bytes
        self.stored += stored
        if self.inflated > limits.max_uncompressed_bytes:
            raise _over_limit(path, "its decompressed size", f"more than {_mb(self.inflated)}",
                              "max_uncompressed_mb", limits.max_uncompressed_mb)
        dict_offset = meta.get(11)
        start = dict_offset if isinstance(dict_offset, int) and 4 <= dict_offset < data_offset else data_offset
        name = self.names[j + 1] if j + 1 < len(self.names) else f"#{j}"
        self.pages_of(fh, name, start, start + stored, declared_bytes, declared_values)

    def pages_of(
        self, fh: BinaryIO, name: str, start: int, end: int, declared_bytes: int, declared_values: int
    ) -> None:
        """Walk the page headers of one column chunk.

        pyarrow allocates each page at the decompressed size its header
        declares, whatever the footer says, so every header is checked:
        decompressed sizes within the chunk's declared total and the
        compression-ratio limit, values within the chunk's declared count.
        """
        path, limits = self.path, self.limits
        if start < 4 or end > self.size - 8:
            raise _not_readable(path, "Parquet", f"column `{name}` lies outside the file")
        pos, inflated, values = start, 0, 0
        while pos < end:
            header, header_len = _page_header(path, fh, pos, end)
            page_bytes, page_stored = header.get(2), header.get(3)
            if not isinstance(page_bytes, int) or not isinstance(page_stored, int) or page_bytes < 0 or page_stored < 0:
                raise _not_readable(path, "Parquet", f"corrupt page header in column `{name}`")
            self.pages += 1
            if self.pages > _MAX_PARQUET_PAGES:
                raise _not_readable(path, "Parquet", f"it has more than {_MAX_PARQUET_PAGES:,} pages")
            inflated += page_bytes
            if inflated > declared_bytes:
                raise _not_readable(
                    path, "Parquet", f"pages of column `{name}` declare {_mb(inflated)} decompressed, more than the"
                    f" {_mb(declared_bytes)} of their column chunk",
                )
            if page_bytes > _RATIO_FLOOR and page_bytes > limits.max_ratio * max(page_stored, 1):
                raise _over_limit(
                    path, f"the compression ratio of a page of column `{name}`",
                    f"{page_bytes / max(page_stored, 1):,.0f} ({_mb(page_bytes)} from {_mb(page_stored)})",
                    "max_ratio", limits.max_ratio,
                )
            for sub in (5, 8):  # data page header, v1 and v2
                if isinstance(header.get(sub), dict) and isinstance(header[sub].get(1), int):
                    values += header[sub][1]
            if values > declared_values:
                raise _not_readable(
                    path, "Parquet", f"pages of column `{name}` declare {values:,} values, more than the"
                    f" {declared_values:,} of their column chunk",
                )
            pos += header_len + page_stored


def _page_header(path: Path, fh: BinaryIO, pos: int, end: int) -> tuple[dict[int, Any], int]:
    """The Thrift PageHeader at ``pos`` and its length in bytes."""
    for n_bytes in (256, 65_536, 1_000_000):
        fh.seek(pos)
        data = fh.read(min(n_bytes, end - pos))
        reader = _Thrift(data)
        try:
            return reader.struct(), reader.pos
        except _ThriftError:
            if len(data) < n_bytes:
                break
    raise _not_readable(path, "Parquet", f"corrupt page header at byte {pos:,}")


def _read_parquet(path: Path, limits: Limits) -> _Table:
    """Check the footer and every page header with a Thrift decoder of our own, then let pyarrow read.

    pyarrow's per-column metadata objects are never touched: some corrupt
    footers make constructing them abort the process (pyarrow 26), while
    reading the table reports the same corruption as an error.
    """
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DataValidationError(f"file {path.name}: reading Parquet needs pyarrow ({_detail(exc)})") from None
    size = path.stat().st_size
    footer = _parquet_footer(path, size)
    check = _ParquetCheck(path, size, limits)
    try:
        with path.open("rb") as fh:
            check.footer(fh, footer)
    except _ThriftError as exc:
        raise _not_readable(path, "Parquet", f"corrupt metadata ({exc})") from None
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None
    try:
        pf = pq.ParquetFile(
            path,
            thrift_string_size_limit=_THRIFT_STRING_LIMIT,
            thrift_container_size_limit=max(limits.max_row_groups, 4 * limits.max_columns, 1_024) + 16,
        )
        meta = pf.metadata
        n_groups, n_rows, n_columns = int(meta.num_row_groups), int(meta.num_rows), int(meta.num_columns)
        if n_groups > limits.max_row_groups:
            raise _over_limit(path, "its number of row groups", f"{n_groups:,}", "max_row_groups",
                              limits.max_row_groups)
        _check_shape(path, n_rows, n_columns, limits)
        df = pf.read().to_pandas()
    except DataValidationError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
        raise _not_readable(path, "Parquet", exc) from None
    return _Table(df, nan_is_empty=False)


# --------------------------------------------------------------------------- Excel

_ZIP_DIRECTORY_END = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_DIRECTORY_END = b"PK\x06\x06"
#: Largest zip central directory of a workbook (a real one has a few kB; each entry is a Python object).
_MAX_ZIP_DIRECTORY = 4_000_000
#: Largest workbook part read whole (workbook.xml, relationships).
_MAX_SMALL_PART = 16_000_000
#: Excel's last column, XFD.
_EXCEL_COLUMNS = 16_384
#: Longest text of one cell or shared string (Excel allows 32 767 characters).
_MAX_CELL_TEXT = 1_000_000
#: Most cell formats of a workbook (Excel allows 64 000).
_MAX_CELL_FORMATS = 200_000
_CELL_REF = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


class _Inflation:
    """Bytes actually decompressed from a container, against the limit."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path, self.limits, self.total = path, limits, 0

    def add(self, n: int) -> None:
        self.total += n
        if self.total > self.limits.max_uncompressed_bytes:
            raise _over_limit(self.path, "its decompressed size", f"more than {_mb(self.total)}",
                              "max_uncompressed_mb", self.limits.max_uncompressed_mb)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _zip_directory_size(path: Path, size: int) -> int | None:
    """Size in bytes of the zip central directory, from the end records; None when they are not found."""
    tail_len = min(size, 22 + 65_535)
    with path.open("rb") as fh:
        fh.seek(size - tail_len)
        tail = fh.read(tail_len)
        at = tail.rfind(_ZIP_DIRECTORY_END)
        if at < 0 or at + 22 > len(tail):
            return None
        fields = struct.unpack("<4s4H2LH", tail[at : at + 22])
        n_entries, dir_size = int(fields[4]), int(fields[5])
        if dir_size != 0xFFFF_FFFF and n_entries != 0xFFFF:
            return dir_size
        loc = at - 20
        if loc < 0 or tail[loc : loc + 4] != _ZIP64_LOCATOR:
            return dir_size
        offset = int(struct.unpack("<4sLQL", tail[loc : loc + 20])[2])
        if offset > size - 56:
            return None
        fh.seek(offset)
        record = fh.read(56)
    if record[:4] != _ZIP64_DIRECTORY_END:
        return None
    return int(struct.unpack("<4sQ2H2L4Q", record)[8])


def _check_zip_members(path: Path, zf: zipfile.ZipFile, limits: Limits) -> None:
    """Declared sizes of every member: total, compression ratio, compression method."""
    total = 0
    for info in zf.infolist():
        name = _one_line(info.filename, 80)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _not_readable(path, "Excel", f"part `{name}` uses compression method {info.compress_type},"
                                " which Excel does not write")
        total += info.file_size
        if info.file_size > _RATIO_FLOOR and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise _over_limit(
                path, f"the compression ratio of its part `{name}`",
                f"{info.file_size / max(info.compress_size, 1):,.0f} ({_mb(info.file_size)} from"
                f" {_mb(info.compress_size)})", "max_ratio", limits.max_ratio,
            )
    if total > limits.max_uncompressed_bytes:
        raise _over_limit(path, "its decompressed size", _mb(total), "max_uncompressed_mb", limits.max_uncompressed_mb)


def _member_chunks(zf: zipfile.ZipFile, name: str, inflation: _Inflation) -> Iterator[bytes]:
    with zf.open(name) as fh:
        while chunk := fh.read(65_536):
            inflation.add(len(chunk))
            yield chunk


def _small_xml(path: Path, zf: zipfile.ZipFile, name: str, inflation: _Inflation) -> ET.Element:
    info = zf.getinfo(name)
    if info.file_size > _MAX_SMALL_PART:
        raise _not_readable(path, "Excel", f"part `{_one_line(name, 80)}` is {_mb(info.file_size)}")
    return ET.fromstring(b"".join(_member_chunks(zf, name, inflation)))


_Start = Callable[[str, dict[str, str]], None]
_End = Callable[[str], None]
_Text = Callable[[str], None]


def _parse_part(
    path: Path, zf: zipfile.ZipFile, name: str, inflation: _Inflation, start: _Start, end: _End, text: _Text
) -> None:
    """Stream one XML part through expat with local element names; no tree is built.

    A part may not declare a DTD or entities (OOXML never does), so entity
    expansion cannot inflate it; the handlers keep what they need.
    """
    locals_: dict[str, str] = {}

    def local(qname: str) -> str:
        tag = locals_.get(qname)
        if tag is None:
            tag = locals_[qname] = qname[qname.rfind("}") + 1 :]
        return tag

    def refuse(*_: object) -> None:
        raise _not_readable(path, "Excel", f"part `{_one_line(name, 80)}` declares a DTD or entities")

    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.StartElementHandler = lambda qname, attrs: start(local(qname), attrs)
    parser.EndElementHandler = lambda qname: end(local(qname))
    parser.CharacterDataHandler = text
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    for chunk in _member_chunks(zf, name, inflation):
        parser.Parse(chunk, False)
    parser.Parse(b"", True)


class _TextCapture:
    """Text of the elements being captured, bounded by ``_MAX_CELL_TEXT`` characters per value."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parts: list[str] | None = None
        self.size = 0

    def begin(self) -> None:
        self.parts, self.size = [], 0

    def add(self, data: str) -> None:
        if self.parts is not None:
            self.size += len(data)
            if self.size > _MAX_CELL_TEXT:
                raise _not_readable(self.path, "Excel",
                                    f"a cell or string holds more than {_MAX_CELL_TEXT:,} characters")
            self.parts.append(data)

    def finish(self) -> str:
        text = "".join(self.parts or ())
        self.parts = None
        return text


def _shared_strings(path: Path, zf: zipfile.ZipFile, name: str, limits: Limits, inflation: _Inflation) -> list[str]:
    """The shared-string table: each ``si``'s ``t`` texts (runs joined, phonetic hints left out)."""
    strings: list[str] = []
    item: list[str] | None = None
    phonetic = 0
    capture = _TextCapture(path)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal item, phonetic
        if tag == "si":
            item = []
        elif tag == "t" and item is not None and not phonetic:
            capture.begin()
        elif tag == "rPh":
            phonetic += 1

    def end(tag: str) -> None:
        nonlocal item, phonetic
        if tag == "t" and capture.parts is not None and item is not None:
            item.append(capture.finish())
        elif tag == "rPh":
            phonetic -= 1
        elif tag == "si" and item is not None:
            strings.append("".join(item))
            item = None
            if len(strings) > limits.max_cells:
                raise _over_limit(path, "its number of shared strings", f"more than {limits.max_cells:,}",
                                  "max_cells", limits.max_cells)

    _parse_part(path, zf, name, inflation, start, end, capture.add)
    return strings


def _date_styles(path: Path, zf: zipfile.ZipFile, name: str, inflation: _Inflation) -> tuple[set[int], set[int]]:
    """Indices of the cell formats (``s`` of a cell) that show dates and durations."""
    from openpyxl.styles.numbers import (  # type: ignore[import-untyped]
        BUILTIN_FORMATS,
        is_date_format,
        is_timedelta_format,
    )

    custom: dict[int, str] = {}
    formats: list[int] = []
    in_cell_formats = False

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal in_cell_formats
        if tag == "numFmt":
            custom[int(attrs.get("numFmtId", "0"))] = attrs.get("formatCode", "")
        elif tag == "cellXfs":
            in_cell_formats = True
        elif tag == "xf" and in_cell_formats:
            formats.append(int(attrs.get("numFmtId", "0")))
            if len(formats) > _MAX_CELL_FORMATS:
                raise _not_readable(path, "Excel", f"it has more than {_MAX_CELL_FORMATS:,} cell formats")

    def end(tag: str) -> None:
        nonlocal in_cell_formats
        if tag == "cellXfs":
            in_cell_formats = False

    _parse_part(path, zf, name, inflation, start, end, lambda data: None)
    dates: set[int] = set()
    durations: set[int] = set()
    for i, fid in enumerate(formats):
        code = custom.get(fid) or BUILTIN_FORMATS.get(fid, "")
        if is_timedelta_format(code):
            durations.add(i)
        elif is_date_format(code):
            dates.add(i)
    return dates, durations


def _column_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


@dataclass(frozen=True)
class _Workbook:
    """What reading a sheet's cells needs from the rest of the workbook."""

    sheet: str
    shared: list[str]
    date_styles: frozenset[int]
    timedelta_styles: frozenset[int]
    date1904: bool


def _relationships(path: Path, zf: zipfile.ZipFile, part: str, inflation: _Inflation) -> dict[str, tuple[str, str]]:
    """Relationship id -> (type's last path segment, target part) of ``part``."""
    folder, base = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", base + ".rels")
    if rels_name not in zf.NameToInfo:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for rel in _small_xml(path, zf, rels_name, inflation).iter(f"{{{_REL_NS}}}Relationship"):
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External" or not target:
            continue
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        out[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], resolved)
    return out


def _workbook(path: Path, zf: zipfile.ZipFile, limits: Limits, inflation: _Inflation) -> _Workbook:
    root_rels = _relationships(path, zf, "", inflation)
    book = next((target for kind, target in root_rels.values() if kind == "officeDocument"), "xl/workbook.xml")
    if book not in zf.NameToInfo:
        raise _not_readable(path, "Excel", "it has no workbook part")
    rels = _relationships(path, zf, book, inflation)
    root = _small_xml(path, zf, book, inflation)
    sheet = None
    for elem in root.iter():
        if _local(elem.tag) != "sheet":
            continue
        rid = next((v for k, v in elem.attrib.items() if k.startswith("{") and _local(k) == "id"), "")
        kind, target = rels.get(rid, ("", ""))
        if kind == "worksheet" and target in zf.NameToInfo:
            sheet = target
            break
    if sheet is None:
        raise _not_readable(path, "Excel", "it has no worksheet")
    date1904 = any(
        _local(e.tag) == "workbookPr" and e.get("date1904", "").lower() in ("1", "true") for e in root.iter()
    )
    shared: list[str] = []
    dates: set[int] = set()
    durations: set[int] = set()
    for kind, target in rels.values():
        if kind == "sharedStrings" and target in zf.NameToInfo:
            shared = _shared_strings(path, zf, target, limits, inflation)
        elif kind == "styles" and target in zf.NameToInfo:
            dates, durations = _date_styles(path, zf, target, inflation)
    return _Workbook(sheet, shared, frozenset(dates), frozenset(durations), date1904)


def _cell_value(path: Path, attrs: dict[str, str], raw: str | None, inline: str | None, book: _Workbook) -> Any:
    """A cell's value as pandas would get it from openpyxl (None for an empty cell)."""
    kind = attrs.get("t", "n")
    if kind == "inlineStr":
        return inline or None
    if raw is None or raw == "":
        return None
    if kind == "s":
        index = int(raw) if raw.isdigit() else -1
        if not 0 <= index < len(book.shared):
            raise _not_readable(path, "Excel", f"cell {attrs.get('r', '?')} refers to a missing shared string")
        return book.shared[index] or None
    if kind == "b":
        return raw.strip() in ("1", "true")
    if kind in ("str", "e", "d"):
        return raw
    try:
        number = float(raw)
    except ValueError:
        return raw
    style = attrs.get("s")
    if style and (book.date_styles or book.timedelta_styles):
        index = int(style) if style.isdigit() else 0
        if index in book.date_styles or index in book.timedelta_styles:
            from openpyxl.utils.datetime import MAC_EPOCH, WINDOWS_EPOCH, from_excel  # type: ignore[import-untyped]

            try:
                return from_excel(number, MAC_EPOCH if book.date1904 else WINDOWS_EPOCH,
                                  timedelta=index in book.timedelta_styles)
            except (OverflowError, ValueError):
                return "#VALUE!"
    return number


class _SheetColumns:
    """A sheet's cells gathered column by column, row by row, checked against the limits as they arrive.

    Row 1 is the header (as pandas reads it); a missing row between filled
    ones becomes a row of empty cells, as in pandas; nothing is allocated for
    a row or column beyond the limits, or for the size a sheet declares.
    """

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path, self.limits = path, limits
        self.columns: list[list[Any]] = []
        self.n_rows = 0  # sheet rows stored, from row 1
        self.last_row = 0  # last row number seen, stored or not

    def row_number(self, ref: str | None) -> int:
        try:
            row_no = self.last_row + 1 if ref is None else int(float(ref))
        except (ValueError, OverflowError):
            raise _not_readable(self.path, "Excel", f"row number `{_one_line(ref or '', 20)}`") from None
        if row_no <= self.last_row:
            raise _not_readable(self.path, "Excel", f"row {row_no:,} comes after row {self.last_row:,}")
        self.last_row = row_no
        return row_no

    def add_row(self, row_no: int, values: dict[int, Any]) -> None:
        if not values:
            return
        path, limits = self.path, self.limits
        if row_no - 1 > limits.max_rows:
            raise _over_limit(path, "its number of data rows", f"at least {row_no - 1:,} (row {row_no:,} holds"
                              " a value)", "max_rows", limits.max_rows)
        width = max(len(self.columns), max(values))
        if (row_no - 1) * width > limits.max_cells:
            raise _over_limit(path, "its number of cells", f"at least {(row_no - 1) * width:,} ({row_no - 1:,}"
                              f" rows x {width:,} columns)", "max_cells", limits.max_cells)
        while len(self.columns) < width:
            self.columns.append([None] * self.n_rows)
        gap = row_no - 1 - self.n_rows
        for j, column in enumerate(self.columns):
            if gap:
                column.extend([None] * gap)
            column.append(values.get(j + 1))
        self.n_rows = row_no

    def table(self) -> _Table:
        if not self.columns:
            return _Table(pd.DataFrame(), nan_is_empty=True)
        header = [c[0] for c in self.columns]
        headerless = all(isinstance(h, (int, float)) and not isinstance(h, bool) for h in header)
        first = 0 if headerless else 1
        names = [str(j) if headerless else _header_name(h, j) for j, h in enumerate(header)]
        data: dict[int, Any] = {}
        for j in range(len(self.columns)):
            values = self.columns[j][first:]
            self.columns[j] = []
            data[j] = _column_array(values)
        df = pd.DataFrame(data, index=pd.RangeIndex(self.n_rows - first))
        df.columns = pd.Index(names, dtype=object)
        return _Table(df, nan_is_empty=True)


def _header_name(value: Any, j: int) -> str:
    if value is None:
        return f"Unnamed: {j}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _column_array(values: list[Any]) -> np.ndarray[Any, Any]:
    """float64 when every cell is a number or empty, bool when every cell is a boolean, else object."""
    if all(v is None or type(v) in (float, int) for v in values):
        return np.array(values, dtype=np.float64)
    if all(type(v) is bool for v in values):
        return np.array(values, dtype=bool)
    return np.array(values, dtype=object)


def _check_dimension(path: Path, ref: str | None, limits: Limits) -> None:
    """Refuse a sheet whose ``<dimension ref="A1:XFD1048576">`` declares more than the limits allow."""
    if not ref:
        return
    corners = [_CELL_REF.match(part) for part in ref.split(":")]
    if not all(corners):
        return  # a malformed dimension is ignored, as Excel does; the cells themselves are checked
    rows = max(int(m[2]) for m in corners if m) - min(int(m[2]) for m in corners if m)
    columns = max(_column_number(m[1]) for m in corners if m) - min(_column_number(m[1]) for m in corners if m) + 1
    _check_shape(path, rows, columns, limits, what="its first sheet's declared",
                 where=f" (<dimension ref=\"{_one_line(ref, 30)}\">)")


def _read_sheet(path: Path, zf: zipfile.ZipFile, book: _Workbook, limits: Limits, inflation: _Inflation) -> _Table:
    """Stream the sheet's rows and cells; the ``<dimension>`` is checked when met (before ``<sheetData>``)."""
    columns = _SheetColumns(path, limits)
    capture = _TextCapture(path)
    row_no = 0
    values: dict[int, Any] = {}
    col = 0
    cell: dict[str, str] | None = None
    raw: str | None = None
    inline: list[str] | None = None
    phonetic = 0

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal row_no, values, col, cell, raw, inline, phonetic
        if tag == "c":
            cell, raw, inline = attrs, None, None
        elif tag == "v" and cell is not None:
            capture.begin()
        elif tag == "row":
            row_no, values, col = columns.row_number(attrs.get("r")), {}, 0
        elif tag == "is" and cell is not None:
            inline = []
        elif tag == "t" and inline is not None and not phonetic:
            capture.begin()
        elif tag == "rPh":
            phonetic += 1
        elif tag == "dimension":
            _check_dimension(path, attrs.get("ref"), limits)

    def end(tag: str) -> None:
        nonlocal col, cell, raw, inline, phonetic
        if tag == "v" and capture.parts is not None:
            raw = capture.finish()
        elif tag == "c" and cell is not None:
            ref = cell.get("r")
            if ref:
                m = _CELL_REF.match(ref)
                if not m:
                    raise _not_readable(path, "Excel", f"cell reference `{_one_line(ref, 20)}`")
                col = _column_number(m[1])
            else:
                col += 1
            value = _cell_value(path, cell, raw, None if inline is None else "".join(inline), book)
            cell = None
            if value is not None:
                if col > limits.max_columns:
                    raise _over_limit(path, "its number of columns", f"at least {col:,} (cell {ref or col})",
                                      "max_columns", limits.max_columns)
                values[col] = value
        elif tag == "row":
            columns.add_row(row_no, values)
        elif tag == "t" and capture.parts is not None and inline is not None:
            inline.append(capture.finish())
        elif tag == "rPh":
            phonetic -= 1

    _parse_part(path, zf, book.sheet, inflation, start, end, capture.add)
    return columns.table()


def _read_xlsx(path: Path, limits: Limits) -> _Table:
    """Stream the first worksheet of an .xlsx workbook with bounded memory.

    The zip directory and every member's declared size and compression ratio
    are checked first; the sheet's ``<dimension>`` before any row; every row
    and cell against the limits as it is read, and the bytes actually
    decompressed against the decompressed-size limit.
    """
    try:
        size = path.stat().st_size
        directory = _zip_directory_size(path, size)
        if directory is not None and directory > _MAX_ZIP_DIRECTORY:
            raise _not_readable(path, "Excel", f"its zip directory is {_mb(directory)}, far more than a workbook's")
        with zipfile.ZipFile(path) as zf:
            _check_zip_members(path, zf, limits)
            inflation = _Inflation(path, limits)
            book = _workbook(path, zf, limits, inflation)
            return _read_sheet(path, zf, book, limits, inflation)
    except DataValidationError:
        raise
    except Exception as exc:  # zipfile, zlib and expat raise many types for corrupt files
        raise _not_readable(path, "Excel", exc) from None


def _read_xls(path: Path, limits: Limits) -> _Table:
    """Old binary .xls through xlrd when installed; a workbook that is really .xlsx goes to :func:`_read_xlsx`."""
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None
    if magic == b"PK\x03\x04":
        return _read_xlsx(path, limits)
    try:
        df = pd.read_excel(path, sheet_name=0, engine="xlrd", keep_default_na=False, na_values=[""])
        if len(df.columns) and all(isinstance(c, (int, float)) for c in df.columns):
            df = pd.read_excel(path, sheet_name=0, engine="xlrd", header=None, keep_default_na=False, na_values=[""])
            df.columns = pd.Index([str(i) for i in range(df.shape[1])], dtype=object)
    except ImportError as exc:
        raise DataValidationError(
            f"file {path.name}: reading {path.suffix} files needs an optional package ({_detail(exc)});"
            " re-save it as .xlsx or .csv"
        ) from None
    except Exception as exc:  # xlrd raises many types for corrupt files
        raise _not_readable(path, "Excel", exc) from None
    return _Table(df, nan_is_empty=True)


# --------------------------------------------------------------------------- MATLAB

#: MAT array classes: name and, for the numeric ones, bytes per element.
_MAT_CLASSES: Mapping[int, tuple[str, int]] = {
    1: ("cell", 0), 2: ("struct", 0), 3: ("object", 0), 4: ("char", 0), 5: ("sparse", 0),
    6: ("double", 8), 7: ("single", 4), 8: ("int8", 1), 9: ("uint8", 1), 10: ("int16", 2), 11: ("uint16", 2),
    12: ("int32", 4), 13: ("uint32", 4), 14: ("int64", 8), 15: ("uint64", 8), 16: ("function", 0), 17: ("opaque", 0),
}
_MAT4_TYPES = ("double", "single", "int32", "int16", "uint16", "uint8")
_MAT4_ITEMSIZE = (8, 4, 4, 2, 2, 1)
_MI_INT8, _MI_INT32, _MI_UINT32, _MI_MATRIX, _MI_COMPRESSED = 1, 5, 6, 14, 15
#: Element types a numeric array's data may be stored in (int8 to uint32, single, double, int64, uint64).
_MI_NUMERIC = frozenset({1, 2, 3, 4, 5, 6, 7, 9, 12, 13})
#: Most variables a MAT file may hold (a measurement file has a few).
_MAX_MAT_VARIABLES = 10_000
#: Decompressed bytes read to parse a compressed variable's header.
_MAT_HEADER_PEEK = 4_096


class _MatShort(Exception):
    """A MAT header ends before a field it needs."""


@dataclass(frozen=True)
class _MatVar:
    """One variable as its header declares it."""

    name: str
    kind: str
    dims: tuple[int, ...]
    numeric: bool  # real, non-logical numeric: the only variables loaded
    data_bytes: int = 0  # size of the (real part's) data element

    @property
    def cells(self) -> int:
        return math.prod(self.dims)

    def describe(self) -> str:
        return f"`{_one_line(self.name, 40)}` {self.kind} {'x'.join(map(str, self.dims))}"


class _MatTally:
    """Variables seen so far, checked against the limits as soon as each header is read."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path, self.limits = path, limits
        self.variables: list[_MatVar] = []
        self.numeric_cells = 0

    def check(self, var: _MatVar) -> None:
        path, limits = self.path, self.limits
        self.variables.append(var)
        if len(self.variables) > _MAX_MAT_VARIABLES:
            raise _not_readable(path, "MAT", f"it has more than {_MAX_MAT_VARIABLES:,} variables")
        if var.numeric:
            self.numeric_cells += var.cells
            if self.numeric_cells > limits.max_cells:
                raise _over_limit(path, f"the number of values of its numeric variables ({var.describe()})",
                                  f"{self.numeric_cells:,}", "max_cells", limits.max_cells)
            if var.data_bytes > 8 * var.cells:
                raise _not_readable(
                    path, "MAT", f"variable {var.describe()} declares {var.cells:,} values but its data element"
                    f" holds {var.data_bytes:,} bytes",
                )


def _mat_version(head: bytes) -> int:
    """4, 5 or 73 from the first 128 bytes (scipy's rule: a zero among the first four bytes means v4)."""
    if len(head) >= 4 and 0 in head[:4]:
        return 4
    if len(head) < 128:
        return 0
    major = head[125] if head[126:128] == b"IM" else head[124] if head[126:128] == b"MI" else 0
    return {1: 5, 2: 73}.get(major, 0)


def _mat5_element(data: bytes, pos: int, endian: str) -> tuple[int, int, int, int]:
    """(type, byte count, data offset, next offset) of the element at ``pos``, small format included."""
    if pos + 8 > len(data):
        raise _MatShort
    mdtype, nbytes = struct.unpack(endian + "II", data[pos : pos + 8])
    if mdtype >> 16:
        return mdtype & 0xFFFF, mdtype >> 16, pos + 4, pos + 8
    return mdtype, nbytes, pos + 8, pos + 8 + nbytes + (-nbytes % 8)


def _mat5_header(data: bytes, endian: str) -> _MatVar:
    """Class, dimensions and name of a miMATRIX element's content (``data`` starts after its tag).

    The sub-elements must have the types the format prescribes, and a loaded
    variable's data a numeric type: scipy reads some other values out of
    bounds and crashes the process.
    """
    mdtype, n, at, pos = _mat5_element(data, 0, endian)
    if mdtype != _MI_UINT32 or n != 8:
        raise ValueError(f"array flags of type {mdtype} and {n} bytes")
    if at + 8 > len(data):
        raise _MatShort
    (flags,) = struct.unpack(endian + "I", data[at : at + 4])
    kind, itemsize = _MAT_CLASSES.get(flags & 0xFF, (f"class {flags & 0xFF}", 0))
    numeric = itemsize > 0 and not flags & 0x800 and not flags & 0x200
    if flags & 0xFF == 17:
        return _MatVar("", kind, (), False)
    mdtype, n, at, pos = _mat5_element(data, pos, endian)
    if mdtype != _MI_INT32 or n % 4 or n == 0:
        raise ValueError(f"dimensions of type {mdtype} and {n} bytes")
    if at + n > len(data):
        raise _MatShort
    dims = struct.unpack(endian + f"{n // 4}i", data[at : at + n])
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension {dims}")
    mdtype, n, at, pos = _mat5_element(data, pos, endian)
    if mdtype != _MI_INT8:
        raise ValueError(f"variable name of type {mdtype}")
    if at + n > len(data):
        raise _MatShort
    name = data[at : at + n].decode("latin-1")
    data_bytes = 0
    if numeric:
        mdtype, data_bytes, _, _ = _mat5_element(data, pos, endian)
        if mdtype not in _MI_NUMERIC:
            raise ValueError(f"data of variable `{_one_line(name, 40)}` has element type {mdtype}")
    return _MatVar(name, kind, tuple(dims), numeric, data_bytes)


def _mat5_variables(path: Path, fh: BinaryIO, size: int, tally: _MatTally) -> None:
    """Walk a v5 file's variables, inflating compressed ones only as far as checking them needs."""
    fh.seek(126)
    endian = "<" if fh.read(2) == b"IM" else ">"
    pos, inflated = 128, 0
    while pos < size:
        fh.seek(pos)
        tag = fh.read(8)
        if len(tag) < 8:
            raise _not_readable(path, "MAT", "it ends inside a variable header")
        mdtype, nbytes = struct.unpack(endian + "II", tag)
        if nbytes == 0 or mdtype not in (_MI_MATRIX, _MI_COMPRESSED):
            raise _not_readable(path, "MAT", f"unexpected element (type {mdtype}, {nbytes:,} bytes) at byte {pos:,}")
        if pos + 8 + nbytes > size:
            raise _not_readable(path, "MAT", f"a variable at byte {pos:,} declares {nbytes:,} bytes but the file"
                                f" ends after {size - pos - 8:,}")
        if mdtype == _MI_COMPRESSED:
            left = tally.limits.max_uncompressed_bytes - inflated
            inflated += _mat5_compressed(path, fh, nbytes, endian, tally, left)
        else:
            try:
                tally.check(_mat5_header(fh.read(min(nbytes, _MAT_HEADER_PEEK)), endian))
            except _MatShort:
                raise _not_readable(path, "MAT", f"truncated variable header at byte {pos:,}") from None
        pos += 8 + nbytes


def _mat5_compressed(path: Path, fh: BinaryIO, nbytes: int, endian: str, tally: _MatTally, budget: int) -> int:
    """Check one miCOMPRESSED variable; return the bytes inflated to check it.

    Only the header is inflated for a variable that is not loaded (scipy skips
    it without inflating). A numeric one is inflated, counted and discarded up
    to the least of: what its header declares (twice, for packing slack), the
    compression-ratio limit and what is left of the decompressed-size limit.
    """
    inflater = zlib.decompressobj()
    head = bytearray()
    read = 0

    def feed(max_out: int) -> bytes:
        nonlocal read
        if inflater.unconsumed_tail:
            chunk = inflater.unconsumed_tail
        else:
            chunk = fh.read(min(1 << 20, nbytes - read)) if read < nbytes else b""
            read = read + len(chunk) if chunk else nbytes
            if not chunk:
                return b""
        return inflater.decompress(chunk, max_out)

    try:
        while len(head) < _MAT_HEADER_PEEK and not inflater.eof:
            piece = feed(_MAT_HEADER_PEEK - len(head))
            if not piece and not inflater.unconsumed_tail and read >= nbytes:
                break
            head += piece
        mdtype, _, _, _ = _mat5_element(bytes(head), 0, endian)
        if mdtype != _MI_MATRIX:
            raise _not_readable(path, "MAT", f"a compressed variable holds element type {mdtype}")
        var = _mat5_header(bytes(head[8:]), endian)
    except _MatShort:
        raise _not_readable(path, "MAT", "truncated compressed variable") from None
    except zlib.error as exc:
        raise _not_readable(path, "MAT", exc) from None
    tally.check(var)
    limits = tally.limits
    inflated = len(head)
    if not var.numeric:
        return inflated
    declared = 2 * 8 * var.cells + _MAT_HEADER_PEEK
    ratio_cap = max(_RATIO_FLOOR, int(limits.max_ratio * nbytes))
    try:
        while not inflater.eof:
            piece = feed(1 << 20)
            if not piece and not inflater.unconsumed_tail and read >= nbytes:
                break
            inflated += len(piece)
            if inflated > declared:
                raise _not_readable(
                    path, "MAT", f"compressed variable {var.describe()} declares {var.cells:,} values but inflates"
                    f" to more than {_mb(inflated)}",
                )
            if inflated > ratio_cap:
                raise _over_limit(path, f"the compression ratio of its variable {var.describe()}",
                                  f"more than {inflated / nbytes:,.0f}", "max_ratio", limits.max_ratio)
            if inflated > budget:
                raise _over_limit(path, "its decompressed size", f"more than {_mb(limits.max_uncompressed_bytes)}",
                                  "max_uncompressed_mb", limits.max_uncompressed_mb)
    except zlib.error as exc:
        raise _not_readable(path, "MAT", exc) from None
    return inflated


def _mat4_variables(path: Path, fh: BinaryIO, size: int, tally: _MatTally) -> None:
    """Walk a v4 file's variable headers (no compression: every declared size must fit in the file)."""
    pos = 0
    endian = "<"
    while pos < size:
        fh.seek(pos)
        head = fh.read(20)
        if len(head) < 20:
            raise _not_readable(path, "MAT", "it ends inside a variable header")
        if pos == 0 and not 0 <= struct.unpack("<i", head[:4])[0] < 5000:
            endian = ">"
        mopt, rows, cols, imagf, namlen = struct.unpack(endian + "5i", head)
        precision, kind = mopt // 10 % 10, mopt % 10
        if not (0 <= mopt < 5000 and mopt // 100 % 10 == 0 and precision < 6 and kind < 3 and rows >= 0
                and cols >= 0 and imagf in (0, 1) and 0 < namlen <= 65_536):
            raise _not_readable(path, "MAT", f"corrupt MATLAB v4 header at byte {pos:,}")
        name = fh.read(namlen).strip(b"\x00").decode("latin-1")
        type_name = ("", "char", "sparse")[kind] or _MAT4_TYPES[precision]
        data_bytes = rows * cols * _MAT4_ITEMSIZE[precision] * (2 if imagf else 1)
        tally.check(_MatVar(name, type_name, (rows, cols), kind == 0 and not imagf, data_bytes))
        end = pos + 20 + namlen + data_bytes
        if end > size:
            raise _not_readable(path, "MAT", f"variable `{_one_line(name, 40)}` declares {rows:,}x{cols:,} values"
                                f" ({_mb(data_bytes)}) but the file ends before them")
        pos = end


#: Header walker per MAT version.
_MAT_WALKERS: Mapping[int, Callable[[Path, BinaryIO, int, _MatTally], None]] = {
    4: _mat4_variables,
    5: _mat5_variables,
}


def _mat_variables(path: Path, version: int, size: int, limits: Limits) -> list[_MatVar]:
    """Every variable's header, checked against the limits before scipy loads anything."""
    tally = _MatTally(path, limits)
    try:
        with path.open("rb") as fh:
            _MAT_WALKERS[version](path, fh, size, tally)
    except DataValidationError:
        raise
    except (OSError, ValueError, struct.error) as exc:
        raise _not_readable(path, "MAT", exc) from None
    return tally.variables


def _read_mat(path: Path, limits: Limits) -> _Table:
    from scipy.io import loadmat

    v73_msg = (
        f"file {path.name} is a MATLAB v7.3 (HDF5) file, which cannot be read here;"
        " re-save it in MATLAB with save(name, ..., '-v7') or export a CSV"
    )
    try:
        with path.open("rb") as fh:
            head = fh.read(520)
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {_detail(exc)}") from None
    if head[:10] == b"MATLAB 7.3" or head.startswith(b"\x89HDF\r\n\x1a\n") or head[512:520] == b"\x89HDF\r\n\x1a\n":
        raise DataValidationError(v73_msg)
    version = _mat_version(head)
    if version == 73:
        raise DataValidationError(v73_msg)
    if version == 0:
        raise _not_readable(path, "MAT", "no MATLAB v4 or v5 header")
    variables = _mat_variables(path, version, path.stat().st_size, limits)
    all_numeric: dict[str, bool] = {}
    for var in variables:
        all_numeric[var.name] = all_numeric.get(var.name, True) and var.numeric
    names = [n for n, ok in all_numeric.items() if ok and not n.startswith("__")]
    contents: dict[str, Any] = {}
    if names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                contents = loadmat(path, variable_names=names, squeeze_me=False, struct_as_record=True)
        except NotImplementedError:
            raise DataValidationError(v73_msg) from None
        except Exception as exc:  # scipy raises MatReadError, ValueError, IndexError, ... for corrupt files
            raise _not_readable(path, "MAT", exc) from None
    vectors: dict[str, np.ndarray] = {}
    matrices: dict[str, np.ndarray] = {}
    for key, value in contents.items():
        if key.startswith("__"):
            continue
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf" or arr.ndim > 2 or arr.size <= 1:
            continue
        if arr.ndim == 1 or 1 in arr.shape:
            vectors[key] = arr.reshape(-1)
        elif arr.shape[1] <= _MAX_MAT_COLUMNS and arr.shape[0] > arr.shape[1]:
            matrices[key] = arr
        elif arr.shape[0] <= _MAX_MAT_COLUMNS and arr.shape[1] > arr.shape[0]:
            matrices[key] = arr.T
    columns: dict[str, np.ndarray] = dict(vectors)
    if not vectors:
        for key, mat in matrices.items():
            columns.update({f"{key}_{j}": mat[:, j] for j in range(mat.shape[1])})
    if not columns:
        shown = [v.describe() for v in variables[:20]]
        if len(variables) > 20:
            shown.append(f"{len(variables) - 20} more")
        found = "; ".join(shown) if shown else "no variables"
        raise DataValidationError(
            f"file {path.name} has no numeric vector (1xn or nx1) or nxk matrix (k <= {_MAX_MAT_COLUMNS})"
            f" variables; found: {found}"
        )
    lengths = {key: col.size for key, col in columns.items()}
    notes: tuple[str, ...] = ()
    if len(set(lengths.values())) > 1:
        # signals are the longest vectors; shorter ones (settings, parameter vectors) are left out
        longest = max(lengths.values())
        kept = [k for k, n in lengths.items() if n == longest]
        listing = ", ".join(f"`{k}` ({n})" for k, n in lengths.items())
        if len(kept) < 2:
            raise DataValidationError(
                f"file {path.name}: variables have different lengths: {listing}; the signals must have the same"
                " number of samples"
            )
        dropped = [f"`{k}` ({lengths[k]})" for k in lengths if k not in kept]
        notes = (f"MAT variables with another length than the signals ({longest} samples) were left out:"
                 f" {', '.join(dropped)}",)
        columns = {k: columns[k] for k in kept}
    df = pd.DataFrame({k: np.asarray(v, dtype=np.float64) for k, v in columns.items()})
    return _Table(df, nan_is_empty=False, notes=notes)


#: Reader per file name extension (lower case).
_READERS: Mapping[str, Callable[[Path, Limits], _Table]] = {
    ".csv": _read_text,
    ".txt": _read_text,
    ".tsv": _read_text,
    ".parquet": _read_parquet,
    ".pq": _read_parquet,
    ".xlsx": _read_xlsx,
    ".xls": _read_xls,
    ".mat": _read_mat,
}
#: File name extensions :func:`read_table` understands.
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(_READERS)


# --------------------------------------------------------------------------- specs and units


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


def unit_factor(channel: str, unit: str) -> float | None:
    """Factor converting values of ``channel`` given in ``unit`` to SI.

    Parameters
    ----------
    channel : str
        One of ``t, f, x, v, a``.
    unit : str
        A unit name of the channel's quantity (``"mm"`` for ``x``), or a plain
        positive number.

    Returns
    -------
    float or None
        The factor (``1e-3`` for ``"mm"``); None when the unit is not known
        for this quantity and the values are to be kept as they are, labelled
        with ``unit`` (``"V"``).

    Raises
    ------
    DataValidationError
        Unknown channel, a unit of a different quantity, a number that is not
        positive and finite, an empty unit, or a known unit with wrong
        capitalisation (``"KN"``).
    """
    if channel not in CHANNELS:
        raise DataValidationError(f"unknown channel `{channel}`; channels are {', '.join(CHANNELS)}")
    u = str(unit).strip()
    if not u:
        raise DataValidationError(f"empty unit for `{channel}`")
    quantity = CHANNEL_QUANTITY[channel]
    table = UNIT_FACTORS[quantity]
    if u in table:
        return table[u]
    try:
        number = float(u)
    except ValueError:
        number = None
    if number is not None:
        if not (math.isfinite(number) and number > 0):
            raise DataValidationError(f"unit factor for `{channel}` must be a positive number, got `{u}`")
        return number
    for other, other_table in UNIT_FACTORS.items():
        if other != quantity and u in other_table:
            raise DataValidationError(
                f"unit `{u}` given for `{channel}` ({CHANNEL_LABELS[channel]}) is a {other} unit;"
                f" {quantity} units are {', '.join(table)} (or a number, the factor to {SI_UNITS[channel]})"
            )
    near = sorted(name for name in table if name.lower() == u.lower())
    if near:
        raise DataValidationError(
            f"unit `{u}` for `{channel}` is not recognised; did you mean {' or '.join(f'`{n}`' for n in near)}?"
            " (units are case-sensitive; give a number for a custom factor to SI)"
        )
    for other, other_table in UNIT_FACTORS.items():
        near = sorted(name for name in other_table if name.lower() == u.lower())
        if near:
            raise DataValidationError(
                f"unit `{u}` given for `{channel}` ({CHANNEL_LABELS[channel]}) looks like the {other} unit"
                f" `{near[0]}`; {quantity} units are {', '.join(table)} (units are case-sensitive)"
            )
    return None


# --------------------------------------------------------------------------- loading records


def _header_unit(column: str) -> tuple[str, str | None]:
    """Split ``"x [mm]"`` into name and unit; brackets not holding a unit stay in the name."""
    m = _HEADER_UNIT.match(column)
    if m and m.group("name"):
        unit = m.group("unit")
        if unit in _SIGNAL_UNITS or any(unit in table for table in UNIT_FACTORS.values()):
            return m.group("name"), unit
    return column, None


def _fmt_columns(columns: Iterable[str], limit: int = 30) -> str:
    names = [f"`{_one_line(c, 60)}`" for c in columns]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


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
_FS_RANGE_HZ = (1e-6, 1e9)


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
) -> Record:
    """Load, map, scale and validate one record from a file.

    Parameters
    ----------
    path : str or path-like
        A file :func:`read_table` can read.
    columns : mapping or str or None
        File column per channel (``{"f": "force_N"}`` or ``"f=force_N"``).
        Unmapped channels are found by name: ``t, f, x, v, a`` (any case)
        or ``time, force, disp/displacement, vel/velocity, acc/acceleration``,
        optionally followed by a bracketed unit (``x [mm]``).
    units : mapping or str or None
        Unit per channel (``{"x": "mm"}`` or ``"x=mm"``); see
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

    Returns
    -------
    Record
        Channels in SI units (or the kept unknown unit), ``source`` the path,
        ``meta`` holding ``columns`` (channel -> file column) and
        ``file_units`` (channel -> unit as given).

    Raises
    ------
    DataValidationError
        Any problem with the file, the mapping, the units or the data, or a
        file beyond one of ``limits``; the message (one printable line) names
        the file or the column and the 0-based data row, or the limit.
    """
    try:
        return _load_record(path, columns, units, name, resample, fs, rows, _limits_arg(limits))
    except DataValidationError as exc:
        raise _one_line_error(exc) from None


def _load_record(
    path: StrPath,
    columns: Mapping[str, str] | str | None,
    units: Mapping[str, str] | str | None,
    name: str | None,
    resample: bool,
    fs_given: float | None,
    rows: tuple[int, int | None] | str | None,
    limits: Limits,
) -> Record:
    p = _existing_file(path)
    column_map = _columns_arg(columns)
    unit_map = _units_arg(units)
    fs = _fs_arg(fs_given)
    row_slice = _rows_arg(rows)
    table = _read(p, limits)
    required = tuple(c for c in REQUIRED if not (c == "t" and fs is not None and "t" not in column_map))
    try:
        mapping = _map_columns(table.df, column_map, p.name, required, table.index_columns)
    except DataValidationError as exc:
        if table.notes:
            raise DataValidationError(f"{exc} ({'; '.join(table.notes)})") from None
        raise
    if fs is not None and "t" in mapping:
        raise DataValidationError(
            f"{p.name} has a time column `{mapping['t']}`; give either the time column or --fs, not both"
        )
    n_rows = len(table.df)
    if row_slice is not None:
        start, stop = row_slice
        stop = n_rows if stop is None else min(stop, n_rows)
        if start >= stop:
            raise DataValidationError(f"`rows` {start}:{stop} selects nothing from the {n_rows} data rows of {p.name}")
        table = dataclasses.replace(table, df=table.df.iloc[start:stop].reset_index(drop=True))
        first_row = start
    else:
        first_row = 0
    arrays: dict[str, FloatArray] = {}
    unit_strings: dict[str, str] = {}
    file_units: dict[str, str] = {}
    notes: list[str] = list(table.notes)
    for channel, column in mapping.items():
        values = _numeric(table.df[column], channel, column, table)
        header_unit = _header_unit(column)[1]
        unit = unit_map.get(channel)
        if unit is None and header_unit is not None:
            try:
                unit_factor(channel, header_unit)
            except DataValidationError as exc:
                raise DataValidationError(f"column `{column}` in {p.name}: {exc}") from None
            unit = header_unit
            if unit != SI_UNITS[channel]:
                notes.append(f"unit `{unit}` of `{channel}` taken from column header `{column}`")
        elif unit is not None and header_unit is not None and header_unit != unit:
            notes.append(f"unit `{unit}` given for `{channel}` overrides `{header_unit}` in column header `{column}`")
        if unit is None:
            unit_strings[channel] = SI_UNITS[channel]
        else:
            file_units[channel] = unit
            factor = unit_factor(channel, unit)
            if factor is None:
                unit_strings[channel] = unit
                notes.append(
                    f"unit `{unit}` of `{channel}` is not a known {CHANNEL_QUANTITY[channel]} unit;"
                    " values are kept unscaled"
                )
            else:
                if factor != 1.0:
                    values = values * factor
                unit_strings[channel] = SI_UNITS[channel]
        arrays[channel] = values
    if "t" not in arrays:
        assert fs is not None  # "t" is required unless fs is given
        arrays["t"] = (first_row + np.arange(len(table.df), dtype=np.float64)) / fs
        unit_strings["t"] = "s"
        notes.append(f"time built from the sampling rate {fs:g} Hz")
    if first_row:
        notes.append(f"data rows {first_row}:{first_row + len(table.df)} of the file")
    return from_arrays(
        arrays["t"],
        arrays["f"],
        arrays["x"],
        arrays.get("v"),
        arrays.get("a"),
        name=name if name is not None else p.stem,
        units=unit_strings,
        source=str(path),
        warnings=tuple(notes),
        meta={"columns": dict(mapping), "file_units": file_units},
        resample=resample,
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


# --------------------------------------------------------------------------- writing


def write_record(record: Record, path: StrPath) -> Path:
    """Write a record's channels to CSV or Parquet.

    Parameters
    ----------
    record : Record
        Record to write; columns ``t, f, x`` and ``v``, ``a`` when present.
    path : str or path-like
        Destination ending in ``.csv`` (floats written at full precision, so
        they read back bit-identical) or ``.parquet``.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    DataValidationError
        Unsupported extension.
    OSError
        The file cannot be written.

    Notes
    -----
    Units are not stored: write SI records, or pass ``units`` again when
    loading a record kept in other units.
    """
    p = Path(path)
    ext = p.suffix.lower()
    if ext not in _WRITE_EXTENSIONS:
        raise DataValidationError(
            f"cannot write `{p.name}`: unsupported extension `{p.suffix or '(none)'}`;"
            f" supported: {', '.join(_WRITE_EXTENSIONS)}"
        )
    df = pd.DataFrame({c: np.asarray(getattr(record, c), dtype=np.float64) for c in record.channels})
    if ext == ".csv":
        # pandas writes float64 as the shortest repr, which reads back bit-identical.
        df.to_csv(p, index=False, lineterminator="\n")
    else:
        df.to_parquet(p, index=False)
    return p
