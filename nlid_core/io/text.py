"""CSV, TSV and TXT tables: delimiter, decimal mark, header and field counts sniffed, then read by pandas."""

from __future__ import annotations

import codecs
import csv
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..limits import Limits
from ._table import _counter_text, _detail, _mb, _not_readable, _one_line, _over_limit, _Table

_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+(?:[eE][+-]?\d+)?$")
_DECIMAL_POINT = re.compile(r"^[+-]?\d*\.\d+(?:[eE][+-]?\d+)?$")
_SNIFF_LINES = 20
_CONTROL_BYTES = bytes([*range(1, 9), *range(0x0E, 0x20), 0x7F])


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

