"""Parquet tables: footer, column chunks and page headers checked against the limits before pyarrow decodes."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO


from ..errors import DataValidationError
from ..limits import Limits
from ._table import _RATIO_FLOOR, _check_shape, _detail, _mb, _not_readable, _one_line, _over_limit, _Table


#: Largest Parquet footer decoded (about 100 bytes per column chunk).
_MAX_FOOTER = 64_000_000
#: Most column chunks (row groups x columns) of a Parquet file: each costs a footer entry, a page walk and
#: pyarrow metadata objects.
_MAX_COLUMN_CHUNKS = 200_000
#: Longest string pyarrow may decode from Parquet metadata (schema JSON, statistics).
_THRIFT_STRING_LIMIT = 16_000_000
#: Pages of a Parquet file whose headers are checked before reading (a file beyond it is refused).
_MAX_PARQUET_PAGES = 1_000_000


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

