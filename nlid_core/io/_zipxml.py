"""Zip containers and streamed XML parts of workbooks, with every inflated byte counted."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
import xml.parsers.expat as expat
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path


from ..limits import Limits
from ._table import _RATIO_FLOOR, _mb, _not_readable, _one_line, _over_limit

_ZIP_DIRECTORY_END = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_DIRECTORY_END = b"PK\x06\x06"
#: Largest workbook part read whole (workbook.xml, relationships).
_MAX_SMALL_PART = 16_000_000
#: Longest text of one cell or shared string (Excel allows 32 767 characters).
_MAX_CELL_TEXT = 1_000_000
#: Most cell formats of a workbook (Excel allows 64 000).
_MAX_CELL_FORMATS = 200_000


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


