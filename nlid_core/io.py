"""Reading and writing measurement records.

Tables are read from CSV/TXT/TSV (delimiter sniffed), Parquet, Excel and
MATLAB ``.mat`` files, their columns are mapped to the channels ``t, f, x, v,
a`` of a :class:`~nlid_core.record.Record`, scaled to SI units and validated.

Every problem with the input raises
:class:`~nlid_core.errors.DataValidationError` whose message names the file,
the column (in backticks), the 0-based data row where one applies and what was
received; exceptions of pandas, scipy or openpyxl never leak out of
:func:`read_table`, :func:`load_record` or :func:`load_records`.

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

import dataclasses

import io as _stdio
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .errors import DataValidationError
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

_TEXT_EXTENSIONS = (".csv", ".txt", ".tsv")
_PARQUET_EXTENSIONS = (".parquet", ".pq")
_EXCEL_EXTENSIONS = (".xlsx", ".xls")
_MAT_EXTENSIONS = (".mat",)
#: File name extensions :func:`read_table` understands.
SUPPORTED_EXTENSIONS: tuple[str, ...] = _TEXT_EXTENSIONS + _PARQUET_EXTENSIONS + _EXCEL_EXTENSIONS + _MAT_EXTENSIONS
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


# --------------------------------------------------------------------------- reading tables


def read_table(path: StrPath) -> pd.DataFrame:
    """Read a table of measured columns from a file, choosing the reader by extension.

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.txt``, ``.tsv`` (delimiter sniffed among comma,
        semicolon, tab and whitespace; decimal commas are recognised with
        semicolon, tab or whitespace delimiters), ``.parquet``/``.pq``,
        ``.xlsx``/``.xls`` (first sheet) or ``.mat`` (MATLAB v4-v7).

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
        different lengths.
    """
    return _read(_existing_file(path)).df


def _existing_file(path: StrPath) -> Path:
    p = Path(path)
    if not p.exists():
        raise DataValidationError(f"file {p} does not exist")
    if not p.is_file():
        raise DataValidationError(f"{p} is not a file")
    return p


def _read(path: Path) -> _Table:
    ext = path.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise DataValidationError(
            f"file {path.name} has unsupported extension `{path.suffix or '(none)'}`;"
            f" supported: {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {exc}") from None
    if size == 0:
        raise DataValidationError(f"file {path.name} is empty")
    if ext in _TEXT_EXTENSIONS:
        table = _read_text(path)
    elif ext in _PARQUET_EXTENSIONS:
        table = _read_parquet(path)
    elif ext in _EXCEL_EXTENSIONS:
        table = _read_excel(path)
    else:
        table = _read_mat(path)
    df = _tidy(table.df)
    if df.shape[1] == 0:
        raise DataValidationError(f"file {path.name} has no columns")
    if df.shape[0] == 0:
        raise DataValidationError(f"file {path.name} has a header but no data rows")
    return _Table(df, table.nan_is_empty, table.decimal, table.notes)


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
    df = df.copy()
    df.columns = pd.Index(_unique(names), dtype=object)
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


def _not_readable(path: Path, kind: str, detail: object = None) -> DataValidationError:
    msg = f"file {path.name} is not a readable {kind} file (binary or corrupt content)"
    if detail is not None and str(detail).strip():
        msg += f": {str(detail).strip()}"
    return DataValidationError(msg)


def _decode(path: Path, raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise _not_readable(path, "CSV") from None
    if b"\x00" in raw:
        raise _not_readable(path, "CSV")
    try:
        text = raw.decode("utf-8-sig")
        control = _CONTROL_BYTES
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
        control = _CONTROL_BYTES + bytes(range(0x80, 0xA0))  # C1 controls are not latin-1 text
    # A text table has next to no control characters besides tab and newlines.
    n_control = len(raw) - len(raw.translate(None, control))
    if n_control > max(2, len(raw) // 1000):
        raise _not_readable(path, "CSV")
    return text


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


def _split(line: str, sep: str | None) -> list[str]:
    parts = line.split(sep) if sep is not None else line.split()
    return [p.strip().strip('"').strip() for p in parts]


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ".", 1) if _DECIMAL_COMMA.match(text) else text)
    except ValueError:
        return False
    return True


def _read_text(path: Path) -> _Table:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataValidationError(f"file {path.name} cannot be read: {exc}") from None
    text = _decode(path, raw)
    lines = text.splitlines()
    start = 0
    while start < len(lines) and (not lines[start].strip() or lines[start].lstrip().startswith("#")):
        start += 1
    if start == len(lines):
        raise DataValidationError(f"file {path.name} is empty")
    body = [ln for ln in lines[start:] if ln.strip()]
    sample = body[: _SNIFF_LINES + 1]
    sep = _sniff(sample)
    decimal = "."
    if sep != ",":
        cells = [c for ln in sample[1:] for c in _split(ln, sep)]
        if any(_DECIMAL_COMMA.match(c) for c in cells) and not any(_DECIMAL_POINT.match(c) for c in cells):
            decimal = ","
    header_fields = [c for c in _split(sample[0], sep) if c]
    headerless = bool(header_fields) and all(_is_number(c) for c in header_fields)
    try:
        df = pd.read_csv(
            _stdio.StringIO("\n".join(lines[start:])),
            sep=sep if sep is not None else r"\s+",
            decimal=decimal,
            header=None if headerless else 0,
            index_col=False,
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.EmptyDataError:
        raise DataValidationError(f"file {path.name} is empty") from None
    except (pd.errors.ParserError, ValueError, UnicodeError, OverflowError) as exc:
        raise _not_readable(path, "CSV", exc) from None
    if headerless:
        df.columns = pd.Index([str(i) for i in range(df.shape[1])], dtype=object)
    return _Table(df, nan_is_empty=True, decimal=decimal)


def _read_parquet(path: Path) -> _Table:
    try:
        df = pd.read_parquet(path)
    except ImportError as exc:
        raise DataValidationError(f"file {path.name}: reading Parquet needs pyarrow ({exc})") from None
    except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
        raise _not_readable(path, "Parquet", exc) from None
    return _Table(df, nan_is_empty=False)


def _read_excel(path: Path) -> _Table:
    engine: Literal["openpyxl"] | None = "openpyxl" if path.suffix.lower() == ".xlsx" else None
    try:
        df = pd.read_excel(path, sheet_name=0, engine=engine, keep_default_na=False, na_values=[""])
        if len(df.columns) and all(isinstance(c, (int, float)) for c in df.columns):
            df = pd.read_excel(
                path, sheet_name=0, engine=engine, header=None, keep_default_na=False, na_values=[""]
            )
            df.columns = pd.Index([str(i) for i in range(df.shape[1])], dtype=object)
    except ImportError as exc:
        raise DataValidationError(
            f"file {path.name}: reading {path.suffix} files needs an optional package ({exc});"
            " re-save it as .xlsx or .csv"
        ) from None
    except Exception as exc:  # openpyxl/zipfile/xlrd raise many types for corrupt files
        raise _not_readable(path, "Excel", exc) from None
    return _Table(df, nan_is_empty=True)


def _mat_is_v73(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(520)
    except OSError:
        return False
    return head[:10] == b"MATLAB 7.3" or head.startswith(b"\x89HDF\r\n\x1a\n") or head[512:520] == b"\x89HDF\r\n\x1a\n"


def _read_mat(path: Path) -> _Table:
    from scipy.io import loadmat

    v73_msg = (
        f"file {path.name} is a MATLAB v7.3 (HDF5) file, which cannot be read here;"
        " re-save it in MATLAB with save(name, ..., '-v7') or export a CSV"
    )
    if _mat_is_v73(path):
        raise DataValidationError(v73_msg)
    try:
        contents = loadmat(path, squeeze_me=False, struct_as_record=True)
    except NotImplementedError:
        raise DataValidationError(v73_msg) from None
    except Exception as exc:  # scipy raises MatReadError, ValueError, IndexError, ... for corrupt files
        raise _not_readable(path, "MAT", str(exc) or type(exc).__name__) from None
    vectors: dict[str, np.ndarray] = {}
    matrices: dict[str, np.ndarray] = {}
    seen: list[str] = []
    for key, value in contents.items():
        if key.startswith("__"):
            continue
        arr = np.asarray(value)
        seen.append(f"`{key}` {arr.dtype} {'x'.join(map(str, arr.shape))}")
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
        found = "; ".join(seen) if seen else "no variables"
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


def _fmt_columns(columns: Iterable[str]) -> str:
    return ", ".join(f"`{c}`" for c in columns)


def _rows_arg(rows: tuple[int, int | None] | str | None) -> tuple[int, int | None] | None:
    """Parse ``rows`` ("a:b", "a:", or a pair) into (start, stop)."""
    if rows is None:
        return None
    if isinstance(rows, str):
        parts = rows.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            start = int(parts[0]) if parts[0].strip() else 0
            stop = int(parts[1]) if parts[1].strip() else None
        except ValueError:
            raise DataValidationError(f"`rows` must look like START:STOP (e.g. 40650:105712), got {rows!r}") from None
    else:
        start, stop = rows
    if start < 0 or (stop is not None and stop < 0):
        raise DataValidationError(f"`rows` bounds must be >= 0, got {start}:{stop}")
    return int(start), (None if stop is None else int(stop))


def _map_columns(
    df: pd.DataFrame, columns: Mapping[str, str], fname: str, required: tuple[str, ...] = REQUIRED
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
            if c not in used and _CHANNEL_BY_ALIAS.get(_header_unit(c)[0].strip().lower()) == channel
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
    label = f"`{channel}`" if column == channel else f"`{column}` (mapped to `{channel}`)"
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
        ``rows`` keeps its place in time).
    rows : (start, stop) or "start:stop" or None
        Keep data rows ``start:stop`` (0-based, stop excluded, Python slice
        semantics with non-negative bounds; stop may be omitted).

    Returns
    -------
    Record
        Channels in SI units (or the kept unknown unit), ``source`` the path,
        ``meta`` holding ``columns`` (channel -> file column) and
        ``file_units`` (channel -> unit as given).

    Raises
    ------
    DataValidationError
        Any problem with the file, the mapping, the units or the data; the
        message names the file or the column and the 0-based data row.
    """
    p = _existing_file(path)
    column_map = _columns_arg(columns)
    unit_map = _units_arg(units)
    if fs is not None and not (np.isfinite(fs) and fs > 0):
        raise DataValidationError(f"`fs` must be a positive sampling rate in Hz, got {fs}")
    row_slice = _rows_arg(rows)
    table = _read(p)
    required = tuple(c for c in REQUIRED if not (c == "t" and fs is not None and "t" not in column_map))
    try:
        mapping = _map_columns(table.df, column_map, p.name, required)
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
        arrays["t"] = (first_row + np.arange(len(table.df), dtype=np.float64)) / float(fs)  # type: ignore[arg-type]
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
) -> tuple[Record, ...]:
    """Load several records (e.g. one per excitation level) with one mapping.

    Parameters
    ----------
    paths : sequence of str or path-like
        Files to load, in order. A single path is accepted too.
    columns, units, resample, fs, rows
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
            records.append(load_record(p, columns=columns, units=units, name=name, resample=resample, fs=fs, rows=rows))
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
