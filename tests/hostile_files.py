"""Hostile and awkward input files for the readers of :mod:`nlid_core.io`.

Each generator writes one file into ``directory`` and returns its path. They
are deterministic, quick (well under a second each with their defaults) and
small on disk, while declaring or inflating to sizes that would exhaust a
server if a reader believed them. Tests of the core, the CLI, the dashboard
and the parsing worker import them::

    from tests.hostile_files import xlsx_dimension_bomb
    path = xlsx_dimension_bomb(tmp_path)

Hostile (every reader must refuse them with a ``DataValidationError`` naming
the limit, before allocating what they declare):

==============================  ==============================================================
``xlsx_dimension_bomb``         ``<dimension ref="A1:XFD1048576"/>``, one cell at XFD1048576
``xlsx_far_cell``               the same cell without a ``<dimension>`` element
``xlsx_zip_bomb``               a sheet XML of ``uncompressed_mb`` MB in a zip of a few hundred kB
``xlsx_many_rows``              a genuine sheet with ``rows`` data rows (for a lowered limit)
``mat_zlib_bomb``               a compressed double vector inflating to ``inflated_mb`` MB
``mat_lying_header``            a compressed variable declaring 1x1 that inflates to MBs
``mat_v4_huge_dims``            a MATLAB v4 header declaring 100 000 x 100 000 doubles
``parquet_rle_bomb``            one RLE run of ``rows`` values in a ~300 byte file
``parquet_lying_rle``           as ``parquet_rle_bomb`` but the footer declares 100 rows
``parquet_page_bomb``           a GZIP page declaring 1.5 GB under a footer declaring 800 bytes
``parquet_many_row_groups``     ``row_groups`` row groups of one row each
``parquet_bad_histogram``       column metadata that makes pyarrow 26 abort when its accessor is built
``parquet_corrupt_footer``      a valid file whose footer length is garbage
``csv_many_rows``               ``rows`` data rows (for a lowered ``NLID_MAX_ROWS``)
``csv_wide``                    a header of ``columns`` columns
``csv_long_line``               a data line of several MB of ``1,1,1,...`` with no line break
``csv_long_row``                row 30 has one field more than the header (not an index)
``csv_comma_decimal_comma``     comma delimiter and decimal commas, unquoted: ambiguous
==============================  ==============================================================

Benign but awkward (must load with correct ``t``, ``f``, ``x``):

==============================  ==============================================================
``csv_index_column``            header ``t,f,x``, rows ``0,t,f,x``: a row index without a name
``csv_r_row_names``             R's ``write.table``: quoted header, rows start with ``"1"``
``txt_index_column``            pandas ``to_csv(sep=" ")``: the index name is lost in the header
``csv_unnamed_index``           pandas ``to_csv()`` default: header ``,t,f,x``
``csv_decimal_comma``           semicolon delimiter and decimal commas
``csv_quoted_decimal_comma``    comma delimiter, decimal commas in quoted cells
==============================  ==============================================================

The signal is the one of ``tests/test_io.py``: ``t = i * 1e-3``,
``f = 2.5 sin(2 pi 7 t)``, ``x = 1e-3 sin(2 pi 7 t + 0.3)``; :func:`expected`
returns it for comparisons.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

__all__ = [
    "expected",
    "xlsx_dimension_bomb",
    "xlsx_far_cell",
    "xlsx_zip_bomb",
    "xlsx_many_rows",
    "mat_zlib_bomb",
    "mat_lying_header",
    "mat_v4_huge_dims",
    "parquet_rle_bomb",
    "parquet_lying_rle",
    "parquet_page_bomb",
    "parquet_many_row_groups",
    "parquet_bad_histogram",
    "parquet_corrupt_footer",
    "csv_many_rows",
    "csv_wide",
    "csv_long_line",
    "csv_long_row",
    "csv_comma_decimal_comma",
    "csv_index_column",
    "csv_r_row_names",
    "txt_index_column",
    "csv_unnamed_index",
    "csv_decimal_comma",
    "csv_quoted_decimal_comma",
    "HOSTILE",
    "BENIGN",
]

N = 200
DT = 1e-3


def expected(n: int = N) -> dict[str, np.ndarray]:
    """The ``t, f, x`` arrays every benign file holds (``n`` samples)."""
    t = np.arange(n) * DT
    return {
        "t": t,
        "f": 2.5 * np.sin(2 * np.pi * 7.0 * t),
        "x": 1e-3 * np.sin(2 * np.pi * 7.0 * t + 0.3),
    }


def _rows(n: int = N) -> list[list[str]]:
    a = expected(n)
    return [[repr(float(a[c][i])) for c in ("t", "f", "x")] for i in range(n)]


def _write_lines(path: Path, lines: Iterable[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for line in lines:
            fh.write(line + "\n")
    return path


# --------------------------------------------------------------------------- xlsx

_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml"'
    ' ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml"'
    ' ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="{_NS_PKG}">'
    f'<Relationship Id="rId1" Type="{_NS_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="{_NS_MAIN}" xmlns:r="{_NS_REL}">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="{_NS_PKG}">'
    f'<Relationship Id="rId1" Type="{_NS_REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
)


def _xlsx(path: Path, sheet_chunks: Iterable[bytes]) -> Path:
    """A minimal workbook (no styles, no shared strings) whose first sheet is ``sheet_chunks``."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", _CONTENT_TYPES)
        zf.writestr("_rels/.rels", _ROOT_RELS)
        zf.writestr("xl/workbook.xml", _WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            for chunk in sheet_chunks:
                fh.write(chunk)
    return path


def _sheet_head(dimension: str | None) -> bytes:
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_NS_MAIN}">{dim}'.encode()


def _header_row() -> bytes:
    cells = "".join(f'<c r="{col}1" t="inlineStr"><is><t>{name}</t></is></c>' for col, name in zip("ABC", "tfx"))
    return f'<row r="1">{cells}</row>'.encode()


def _data_rows(n: int) -> bytes:
    out = []
    for i, row in enumerate(_rows(n)):
        r = i + 2
        cells = "".join(f'<c r="{col}{r}"><v>{v}</v></c>' for col, v in zip("ABC", row))
        out.append(f'<row r="{r}">{cells}</row>')
    return "".join(out).encode()


def xlsx_dimension_bomb(directory: Path) -> Path:
    """A 2 kB workbook declaring ``A1:XFD1048576`` (1.7e10 cells) with one cell at XFD1048576.

    pandas/openpyxl pad every row to the declared width: 22.7 GB before the fix.
    """
    far = b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    return _xlsx(
        Path(directory) / "dimension_bomb.xlsx",
        [_sheet_head("A1:XFD1048576"), b"<sheetData>", _header_row(), _data_rows(30), far, b"</sheetData></worksheet>"],
    )


def xlsx_far_cell(directory: Path) -> Path:
    """As :func:`xlsx_dimension_bomb` without a ``<dimension>``: the far cell alone sets the size."""
    far = b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    return _xlsx(
        Path(directory) / "far_cell.xlsx",
        [_sheet_head(None), b"<sheetData>", _header_row(), _data_rows(30), far, b"</sheetData></worksheet>"],
    )


def xlsx_zip_bomb(directory: Path, uncompressed_mb: float = 112.0) -> Path:
    """A sheet XML of ``uncompressed_mb`` MB (identical rows) deflated about 1000-fold."""
    row = b"<row><c><v>0</v></c><c><v>0</v></c><c><v>0</v></c></row>"
    block = row * (1_000_000 // len(row))
    n_blocks = max(1, int(uncompressed_mb * 1e6) // len(block))

    def chunks() -> Iterable[bytes]:
        yield _sheet_head(None) + b"<sheetData>" + _header_row()
        for _ in range(n_blocks):
            yield block
        yield b"</sheetData></worksheet>"

    return _xlsx(Path(directory) / "zip_bomb.xlsx", chunks())


def xlsx_many_rows(directory: Path, rows: int = 5_000, dimension: bool = True) -> Path:
    """A genuine sheet of ``rows`` data rows, with or without a ``<dimension>`` element."""
    return _xlsx(
        Path(directory) / "many_rows.xlsx",
        [_sheet_head(f"A1:C{rows + 1}" if dimension else None), b"<sheetData>", _header_row(), _data_rows(rows),
         b"</sheetData></worksheet>"],
    )


# --------------------------------------------------------------------------- MAT (v5 and v4)

_MI_INT8, _MI_UINT32, _MI_INT32, _MI_DOUBLE, _MI_MATRIX, _MI_COMPRESSED = 1, 6, 5, 9, 14, 15
_MX_DOUBLE = 6


def _mat5_header() -> bytes:
    text = b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: nlid hostile_files"
    return text.ljust(116, b" ") + b"\x00" * 8 + struct.pack("<H", 0x0100) + b"IM"


def _mat5_matrix_head(name: bytes, dims: tuple[int, int], data_bytes: int) -> bytes:
    """miMATRIX tag and sub-elements up to the tag of the real part (data not included)."""
    flags = struct.pack("<II", _MI_UINT32, 8) + struct.pack("<II", _MX_DOUBLE, 0)
    dim = struct.pack("<II", _MI_INT32, 8) + struct.pack("<ii", *dims)
    name_el = struct.pack("<HH", _MI_INT8, len(name)) + name.ljust(4, b"\x00")  # small data element
    real_tag = struct.pack("<II", _MI_DOUBLE, data_bytes)
    body = flags + dim + name_el + real_tag
    return struct.pack("<II", _MI_MATRIX, len(body) + data_bytes) + body


def _deflate_zeros(head: bytes, n_zero_bytes: int) -> bytes:
    """zlib stream of ``head`` followed by ``n_zero_bytes`` zeros, made without deflating them all.

    A block of zeros compressed after a full flush does not refer back, so it
    can be repeated; the stream ends with an empty final block and the Adler-32
    of the whole.
    """
    block_len = 8 * 1024 * 1024
    comp = zlib.compressobj(9)
    out = [comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH)]
    block = comp.compress(bytes(block_len)) + comp.flush(zlib.Z_FULL_FLUSH)
    n_blocks, rest = divmod(n_zero_bytes, block_len)
    out.extend([block] * n_blocks)
    if rest:
        out.append(comp.compress(bytes(rest)) + comp.flush(zlib.Z_FULL_FLUSH))
    adler = zlib.adler32(head)
    low, high = adler & 0xFFFF, adler >> 16
    high = (high + n_zero_bytes * low) % 65521  # zeros leave the low sum alone and add it n times to the high
    adler = (high << 16) | low
    out.append(b"\x03\x00" + struct.pack(">I", adler))  # empty final fixed-Huffman block, checksum
    return b"".join(out)


def _mat5_compressed(path: Path, name: bytes, dims: tuple[int, int], inflated_bytes: int) -> Path:
    n_bytes = inflated_bytes - inflated_bytes % 8
    data = _deflate_zeros(_mat5_matrix_head(name, dims, n_bytes), n_bytes)
    path.write_bytes(_mat5_header() + struct.pack("<II", _MI_COMPRESSED, len(data)) + data)
    return path


def mat_zlib_bomb(directory: Path, inflated_mb: float = 3100.0) -> Path:
    """A MAT v5 file holding one compressed double vector of ``inflated_mb`` MB of zeros (~3 MB on disk)."""
    n_bytes = int(inflated_mb * 1e6) // 8 * 8
    return _mat5_compressed(Path(directory) / "zlib_bomb.mat", b"x", (1, n_bytes // 8), n_bytes)


def mat_lying_header(directory: Path, inflated_mb: float = 400.0) -> Path:
    """A compressed variable declaring a 1x1 double whose data element inflates to ``inflated_mb`` MB."""
    return _mat5_compressed(Path(directory) / "lying_header.mat", b"x", (1, 1), int(inflated_mb * 1e6))


def mat_v4_huge_dims(directory: Path) -> Path:
    """A MATLAB v4 file whose one header declares 100 000 x 100 000 doubles (80 GB) and holds 80 bytes."""
    name = b"x\x00"
    header = struct.pack("<5i", 0, 100_000, 100_000, 0, len(name)) + name
    path = Path(directory) / "v4_huge.mat"
    path.write_bytes(header + bytes(80))
    return path


# --------------------------------------------------------------------------- Parquet


class _Thrift:
    """Just enough of the Thrift compact protocol to write Parquet pages and footers."""

    I32, I64, BINARY, LIST, STRUCT = 5, 6, 8, 9, 12

    @staticmethod
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            if n:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                return bytes(out)

    @classmethod
    def zigzag(cls, n: int) -> bytes:
        return cls.varint((n << 1) ^ (n >> 63))

    @classmethod
    def struct(cls, fields: list[tuple[int, int, object]]) -> bytes:
        """``fields`` as (id, type, value) in increasing id; value is int, bytes, list or bytes of a struct."""
        out = bytearray()
        last = 0
        for fid, ftype, value in fields:
            delta = fid - last
            out.append((delta << 4) | ftype) if 0 < delta <= 15 else out.extend(bytes([ftype]) + cls.zigzag(fid))
            last = fid
            out += cls.value(ftype, value)
        out.append(0)
        return bytes(out)

    @classmethod
    def value(cls, ftype: int, value: object) -> bytes:
        if ftype in (cls.I32, cls.I64):
            assert isinstance(value, int)
            return cls.zigzag(value)
        if ftype == cls.BINARY:
            assert isinstance(value, bytes)
            return cls.varint(len(value)) + value
        if ftype == cls.STRUCT:
            assert isinstance(value, bytes)
            return value
        assert ftype == cls.LIST and isinstance(value, tuple)
        elem_type, items = value
        head = bytes([(len(items) << 4) | elem_type]) if len(items) < 15 else bytes([0xF0 | elem_type]) + cls.varint(
            len(items)
        )
        return head + b"".join(cls.value(elem_type, item) for item in items)


def _page_header(page_type: int, size: int, sub_id: int, sub: bytes) -> bytes:
    T = _Thrift
    return T.struct([(1, T.I32, page_type), (2, T.I32, size), (3, T.I32, size), (sub_id, T.STRUCT, sub)])


def _rle_parquet(path: Path, metadata_rows: int, page_values: int) -> Path:
    """One REQUIRED double column ``x``: a one-value dictionary and a data page of one RLE run."""
    T = _Thrift
    dict_data = struct.pack("<d", 1.0)
    dict_page = _page_header(2, len(dict_data), 7, T.struct([(1, T.I32, 1), (2, T.I32, 0)])) + dict_data
    # bit width 1, then one RLE run: header varint(count << 1), value 0 in one byte
    data = b"\x01" + T.varint(page_values << 1) + b"\x00"
    data_header = T.struct([(1, T.I32, page_values), (2, T.I32, 8), (3, T.I32, 3), (4, T.I32, 3)])
    data_page = _page_header(0, len(data), 5, data_header) + data
    dict_offset = 4
    data_offset = dict_offset + len(dict_page)
    chunk_size = len(dict_page) + len(data_page)
    meta = T.struct([
        (1, T.I32, 5),  # DOUBLE
        (2, T.LIST, (T.I32, [0, 8])),  # PLAIN, RLE_DICTIONARY
        (3, T.LIST, (T.BINARY, [b"x"])),
        (4, T.I32, 0),  # UNCOMPRESSED
        (5, T.I64, metadata_rows),
        (6, T.I64, chunk_size),
        (7, T.I64, chunk_size),
        (9, T.I64, data_offset),
        (11, T.I64, dict_offset),
    ])
    column = T.struct([(2, T.I64, dict_offset), (3, T.STRUCT, meta)])
    row_group = T.struct([(1, T.LIST, (T.STRUCT, [column])), (2, T.I64, chunk_size), (3, T.I64, metadata_rows)])
    schema = [
        T.struct([(4, T.BINARY, b"schema"), (5, T.I32, 1)]),
        T.struct([(1, T.I32, 5), (3, T.I32, 0), (4, T.BINARY, b"x")]),
    ]
    footer = T.struct([
        (1, T.I32, 1),
        (2, T.LIST, (T.STRUCT, schema)),
        (3, T.I64, metadata_rows),
        (4, T.LIST, (T.STRUCT, [row_group])),
    ])
    path.write_bytes(b"PAR1" + dict_page + data_page + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path


def parquet_rle_bomb(directory: Path, rows: int = 1_300_000_000) -> Path:
    """A ~300 byte Parquet file whose one column is a single RLE run of ``rows`` values (10 GB as float64)."""
    return _rle_parquet(Path(directory) / "rle_bomb.parquet", rows, rows)


def parquet_lying_rle(directory: Path, rows: int = 1_300_000_000) -> Path:
    """As :func:`parquet_rle_bomb`, but the footer declares 100 rows; only the page declares ``rows``."""
    return _rle_parquet(Path(directory) / "lying_rle.parquet", 100, rows)


def _crc32_zeros(crc: int, n: int) -> int:
    """CRC-32 of some data followed by ``n`` zero bytes, from the CRC-32 of the data (no pass over the zeros)."""

    def times(matrix: list[int], vector: int) -> int:
        out, i = 0, 0
        while vector:
            if vector & 1:
                out ^= matrix[i]
            vector >>= 1
            i += 1
        return out

    def square(matrix: list[int]) -> list[int]:
        return [times(matrix, row) for row in matrix]

    # operator of one zero bit on the reflected register, squared up to one zero byte
    op = [0xEDB88320] + [1 << k for k in range(31)]
    for _ in range(3):
        op = square(op)
    state = crc ^ 0xFFFFFFFF
    while n:
        if n & 1:
            state = times(op, state)
        n >>= 1
        op = square(op)
    return state ^ 0xFFFFFFFF


def _gzip_zeros(n_bytes: int) -> bytes:
    """A gzip member of ``n_bytes`` zeros made from one repeated deflate block (see :func:`_deflate_zeros`)."""
    block_len = 8 * 1024 * 1024
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(bytes(block_len)) + comp.flush(zlib.Z_FULL_FLUSH)
    n_blocks, rest = divmod(n_bytes, block_len)
    tail = comp.compress(bytes(rest)) + comp.flush(zlib.Z_FULL_FLUSH) if rest else b""
    trailer = struct.pack("<II", _crc32_zeros(0, n_bytes), n_bytes & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + block * n_blocks + tail + b"\x03\x00" + trailer


def parquet_page_bomb(directory: Path, inflated_mb: float = 1500.0, honest_footer: bool = False) -> Path:
    """A 1.5 MB Parquet file whose one GZIP page declares (and inflates to) ``inflated_mb`` MB.

    The footer is modest (100 rows, 800 bytes decompressed; with
    ``honest_footer`` the column chunk declares the page's size); pyarrow
    allocates and inflates the page at the size its own header declares.
    """
    T = _Thrift
    rows = 100
    n_bytes = int(inflated_mb * 1e6)
    data = _gzip_zeros(n_bytes)
    header = T.struct([
        (1, T.I32, 0),
        (2, T.I32, n_bytes),
        (3, T.I32, len(data)),
        (5, T.STRUCT, T.struct([(1, T.I32, rows), (2, T.I32, 0), (3, T.I32, 3), (4, T.I32, 3)])),
    ])
    page = header + data
    meta = T.struct([
        (1, T.I32, 5),
        (2, T.LIST, (T.I32, [0])),
        (3, T.LIST, (T.BINARY, [b"x"])),
        (4, T.I32, 2),  # GZIP
        (5, T.I64, rows),
        (6, T.I64, (n_bytes if honest_footer else rows * 8) + len(header)),
        (7, T.I64, len(page)),
        (9, T.I64, 4),
    ])
    column = T.struct([(2, T.I64, 4), (3, T.STRUCT, meta)])
    row_group = T.struct([(1, T.LIST, (T.STRUCT, [column])), (2, T.I64, rows * 8), (3, T.I64, rows)])
    schema = [
        T.struct([(4, T.BINARY, b"schema"), (5, T.I32, 1)]),
        T.struct([(1, T.I32, 5), (3, T.I32, 0), (4, T.BINARY, b"x")]),
    ]
    footer = T.struct([(1, T.I32, 1), (2, T.LIST, (T.STRUCT, schema)), (3, T.I64, rows),
                       (4, T.LIST, (T.STRUCT, [row_group]))])
    path = Path(directory) / "page_bomb.parquet"
    path.write_bytes(b"PAR1" + page + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path


def parquet_many_row_groups(directory: Path, row_groups: int = 200_000) -> Path:
    """A Parquet file of ``row_groups`` row groups of one row each; every row group shares one data page.

    The footer (about 60 bytes per row group) is what costs: pyarrow decodes
    it into gigabytes of metadata objects.
    """
    T = _Thrift
    rows = _rows(1)
    value = struct.pack("<d", float(rows[0][0]))
    page = _page_header(0, len(value), 5, T.struct([(1, T.I32, 1), (2, T.I32, 0), (3, T.I32, 3), (4, T.I32, 3)]))
    page += value
    offset = 4
    meta = T.struct([
        (1, T.I32, 5),
        (2, T.LIST, (T.I32, [0])),
        (3, T.LIST, (T.BINARY, [b"t"])),
        (4, T.I32, 0),
        (5, T.I64, 1),
        (6, T.I64, len(page)),
        (7, T.I64, len(page)),
        (9, T.I64, offset),
    ])
    column = T.struct([(2, T.I64, offset), (3, T.STRUCT, meta)])
    row_group = T.struct([(1, T.LIST, (T.STRUCT, [column])), (2, T.I64, len(page)), (3, T.I64, 1)])
    schema = [
        T.struct([(4, T.BINARY, b"schema"), (5, T.I32, 1)]),
        T.struct([(1, T.I32, 5), (3, T.I32, 0), (4, T.BINARY, b"t")]),
    ]
    groups_head = bytes([0xF0 | T.STRUCT]) + T.varint(row_groups)
    footer = (
        bytes([(1 << 4) | T.I32]) + T.zigzag(1)
        + bytes([(1 << 4) | T.LIST]) + T.value(T.LIST, (T.STRUCT, schema))
        + bytes([(1 << 4) | T.I64]) + T.zigzag(row_groups)
        + bytes([(1 << 4) | T.LIST]) + groups_head + row_group * row_groups
        + b"\x00"
    )
    path = Path(directory) / "many_row_groups.parquet"
    path.write_bytes(b"PAR1" + page + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path


def parquet_bad_histogram(directory: Path) -> Path:
    """A small file whose column metadata holds a repetition-level histogram of the wrong size.

    Constructing pyarrow's column-chunk metadata object from it aborts the
    process (pyarrow 26: a C++ exception escapes); reading the table reports
    it as an error.
    """
    T = _Thrift
    rows = 3
    values = struct.pack("<3d", 0.0, 1.0, 2.0)
    page = _page_header(0, len(values), 5, T.struct([(1, T.I32, rows), (2, T.I32, 0), (3, T.I32, 3), (4, T.I32, 3)]))
    page += values
    size_statistics = T.struct([(2, T.LIST, (T.I64, [1, 2, 3, 4]))])
    meta = T.struct([
        (1, T.I32, 5),
        (2, T.LIST, (T.I32, [0])),
        (3, T.LIST, (T.BINARY, [b"x"])),
        (4, T.I32, 0),
        (5, T.I64, rows),
        (6, T.I64, len(page)),
        (7, T.I64, len(page)),
        (9, T.I64, 4),
        (16, T.STRUCT, size_statistics),
    ])
    column = T.struct([(2, T.I64, 4), (3, T.STRUCT, meta)])
    row_group = T.struct([(1, T.LIST, (T.STRUCT, [column])), (2, T.I64, len(values)), (3, T.I64, rows)])
    schema = [
        T.struct([(4, T.BINARY, b"schema"), (5, T.I32, 1)]),
        T.struct([(1, T.I32, 5), (3, T.I32, 0), (4, T.BINARY, b"x")]),
    ]
    footer = T.struct([(1, T.I32, 1), (2, T.LIST, (T.STRUCT, schema)), (3, T.I64, rows),
                       (4, T.LIST, (T.STRUCT, [row_group]))])
    path = Path(directory) / "bad_histogram.parquet"
    path.write_bytes(b"PAR1" + page + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path


def parquet_corrupt_footer(directory: Path) -> Path:
    """A valid pandas-written file whose footer length field claims 2 GB."""
    import pandas as pd

    path = Path(directory) / "corrupt_footer.parquet"
    pd.DataFrame(expected()).to_parquet(path)
    raw = bytearray(path.read_bytes())
    raw[-8:-4] = struct.pack("<I", 0x7FFF_FFF0)
    path.write_bytes(bytes(raw))
    return path


# --------------------------------------------------------------------------- CSV / TXT


def csv_many_rows(directory: Path, rows: int = 200_000) -> Path:
    """A genuine ``t,f,x`` CSV of ``rows`` data rows; with ``NLID_MAX_ROWS`` below it, too long."""
    a = expected(rows)
    path = Path(directory) / "many_rows.csv"
    with path.open("w", encoding="ascii", newline="\n") as fh:
        fh.write("t,f,x\n")
        np.savetxt(fh, np.column_stack([a["t"], a["f"], a["x"]]), fmt="%.17g", delimiter=",")
    return path


def csv_wide(directory: Path, columns: int = 5_000) -> Path:
    """A header of ``columns`` columns over three rows."""
    names = ["t", "f", "x"] + [f"c{i}" for i in range(columns - 3)]
    return _write_lines(Path(directory) / "wide.csv", [",".join(names)] + [",".join(["0"] * columns)] * 3)


def csv_long_line(directory: Path, mb: float = 5.0) -> Path:
    """A header and one data line of ``mb`` MB, ``1,1,1,...`` without a line break (millions of fields)."""
    path = Path(directory) / "long_line.csv"
    path.write_bytes(b"t,f,x\n" + b"1," * int(mb * 5e5) + b"1")
    return path


def csv_long_row(directory: Path) -> Path:
    """Data row 30 has four fields under a three-field header; the extra one is not an index."""
    rows = _rows()
    rows[30] = [*rows[30], "9"]
    return _write_lines(Path(directory) / "long_row.csv", ["t,f,x"] + [",".join(r) for r in rows])


def csv_comma_decimal_comma(directory: Path) -> Path:
    """Decimal commas under a comma delimiter, unquoted: ``0,001,2,5`` is four fields, not two numbers."""
    rows = [[f"{float(v):.6f}".replace(".", ",") for v in r] for r in _rows()]
    return _write_lines(Path(directory) / "comma_decimal_comma.csv", ["t,f,x"] + [",".join(r) for r in rows])


def csv_index_column(directory: Path) -> Path:
    """Header ``t,f,x``; every row starts with its index 0, 1, 2, ... (one field more than the header)."""
    rows = _rows()
    lines = ["t,f,x"] + [",".join([str(i), *r]) for i, r in enumerate(rows)]
    return _write_lines(Path(directory) / "index_column.csv", lines)


def csv_r_row_names(directory: Path) -> Path:
    """R's ``write.table(df, sep=",")``: quoted header of three names, rows start with ``"1"``, ``"2"``, ..."""
    rows = _rows()
    lines = ['"t","f","x"'] + [",".join([f'"{i + 1}"', *r]) for i, r in enumerate(rows)]
    return _write_lines(Path(directory) / "r_row_names.csv", lines)


def txt_index_column(directory: Path) -> Path:
    """pandas ``to_csv(sep=" ")``: the header ``" t f x"`` splits into three names, rows into four fields."""
    rows = _rows()
    lines = [" t f x"] + [" ".join([str(i), *r]) for i, r in enumerate(rows)]
    return _write_lines(Path(directory) / "index_column.txt", lines)


def csv_unnamed_index(directory: Path) -> Path:
    """pandas ``to_csv()`` default: header ``,t,f,x`` and rows ``0,...``; the index column has no name."""
    rows = _rows()
    lines = [",t,f,x"] + [",".join([str(i), *r]) for i, r in enumerate(rows)]
    return _write_lines(Path(directory) / "unnamed_index.csv", lines)


def csv_decimal_comma(directory: Path) -> Path:
    """Semicolon delimiter and decimal commas (a European spreadsheet export)."""
    rows = [[v.replace(".", ",") for v in r] for r in _rows()]
    return _write_lines(Path(directory) / "decimal_comma.csv", ["t;f;x"] + [";".join(r) for r in rows])


def csv_quoted_decimal_comma(directory: Path) -> Path:
    """Comma delimiter with every number quoted and written with a decimal comma."""
    rows = [[f'"{v}"'.replace(".", ",") for v in r] for r in _rows()]
    return _write_lines(Path(directory) / "quoted_decimal_comma.csv", ["t,f,x"] + [",".join(r) for r in rows])


#: Generators of files every reader must refuse (with their default arguments).
HOSTILE = (
    xlsx_dimension_bomb,
    xlsx_far_cell,
    xlsx_zip_bomb,
    mat_zlib_bomb,
    mat_lying_header,
    mat_v4_huge_dims,
    parquet_rle_bomb,
    parquet_lying_rle,
    parquet_page_bomb,
    parquet_many_row_groups,
    parquet_bad_histogram,
    parquet_corrupt_footer,
    csv_wide,
    csv_long_line,
    csv_long_row,
    csv_comma_decimal_comma,
)
#: Generators of awkward files that must load with the signal of :func:`expected`.
BENIGN = (
    csv_index_column,
    csv_r_row_names,
    txt_index_column,
    csv_unnamed_index,
    csv_decimal_comma,
    csv_quoted_decimal_comma,
)
