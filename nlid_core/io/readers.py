"""The reader registry: :func:`read_table` chooses a reader by file name extension and tidies its table."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

from ..errors import DataValidationError
from ..limits import Limits
from ._table import (
    StrPath,
    _check_shape,
    _counter_start,
    _counter_text,
    _detail,
    _existing_file,
    _limits_arg,
    _mb,
    _one_line_error,
    _over_limit,
    _row_index_columns,
    _Table,
    _tidy,
)
from .mat import _read_mat
from .parquet import _read_parquet
from .text import _read_text
from .xlsx import _read_xls, _read_xlsx

__all__ = ["SUPPORTED_EXTENSIONS", "read_table"]


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
