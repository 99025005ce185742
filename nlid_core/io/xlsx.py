"""Excel workbooks: the first sheet of an ``.xlsx`` streamed cell by cell, legacy ``.xls`` through xlrd."""

from __future__ import annotations

import posixpath
import re
import xml.parsers.expat as expat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..limits import Limits
from ._table import _check_shape, _detail, _mb, _not_readable, _one_line, _over_limit, _Table
from ._zipxml import (
    _check_zip_members,
    _date_styles,
    _Inflation,
    _local,
    _parse_part,
    _shared_strings,
    _small_xml,
    _TextCapture,
    _zip_directory_size,
)

#: Largest zip central directory of a workbook (a real one has a few kB; each entry is a Python object).
_MAX_ZIP_DIRECTORY = 4_000_000
#: Excel's last column, XFD.
_EXCEL_COLUMNS = 16_384
_CELL_REF = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"

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


