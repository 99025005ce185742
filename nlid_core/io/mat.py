"""MATLAB ``.mat`` files (v4 to v7): every variable header walked before scipy loads the numeric ones."""

from __future__ import annotations

import math
import struct
import warnings
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..limits import Limits
from ._table import _RATIO_FLOOR, _detail, _mb, _not_readable, _one_line, _over_limit, _Table

_MAX_MAT_COLUMNS = 10


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

