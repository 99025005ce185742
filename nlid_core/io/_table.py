"""The table a reader returns, and the messages and limit checks every reader shares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..errors import DataValidationError
from ..limits import Limits, limit_message

FloatArray = NDArray[np.float64]
StrPath = str | PathLike[str]

#: Compressed parts (pages, zip members, MAT variables) inflating to less than this are not ratio-checked.
_RATIO_FLOOR = 1_000_000


@dataclass(frozen=True)
class _Table:
    """A table as read, with what is needed to diagnose its cells."""

    df: pd.DataFrame
    nan_is_empty: bool  # a NaN in a float column is an empty cell (CSV, Excel)
    decimal: str = "."
    notes: tuple[str, ...] = ()
    index_columns: tuple[str, ...] = ()  # row counters under an index name: never auto-mapped


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

