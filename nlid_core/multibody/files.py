"""Trajectory and bounds tables of the pendulum problems: small CSV files read with hard limits.

A trajectory has the columns ``t, x_B, y_B`` (s, m); a bounds table ``t, x_B_min, x_B_max, y_B_min, y_B_max``.
Both are short (the paper's have 41 rows), so the readers refuse anything over :data:`MAX_TABLE_BYTES` or
:data:`MAX_TABLE_ROWS` before parsing, read only text as numbers (no formulas, no pickles, no type
inference beyond floats) and give one specific message per problem.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..errors import DataValidationError
from .interval import BOUNDS_COLUMNS, IntervalBounds
from .inverse import check_trajectory

__all__ = ["read_trajectory", "read_bounds", "MAX_TABLE_BYTES", "MAX_TABLE_ROWS", "TRAJECTORY_COLUMNS"]

FloatArray = NDArray[np.float64]
#: Largest table file accepted (bytes).
MAX_TABLE_BYTES = 5_000_000
#: Most data rows accepted.
MAX_TABLE_ROWS = 100_000
#: Columns of a trajectory table.
TRAJECTORY_COLUMNS = ("t", "x_B", "y_B")


def _frame(source: str | Path | bytes, what: str, needed: tuple[str, ...]) -> pd.DataFrame:
    if isinstance(source, (bytes, bytearray)):
        raw, name = bytes(source), f"the {what} table"
    else:
        path = Path(source)
        name = f"{what} file `{path.name}`"
        if not path.is_file():
            raise DataValidationError(f"{name} does not exist")
        if path.stat().st_size > MAX_TABLE_BYTES:
            raise DataValidationError(f"{name} is {path.stat().st_size / 1e6:.1f} MB; a {what} table"
                                      f" is at most {MAX_TABLE_BYTES / 1e6:.0f} MB")
        raw = path.read_bytes()
    if len(raw) > MAX_TABLE_BYTES:
        raise DataValidationError(f"{name} is {len(raw) / 1e6:.1f} MB; at most {MAX_TABLE_BYTES / 1e6:.0f} MB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataValidationError(f"{name} is not a UTF-8 text (CSV) file") from None
    if text.count("\n") > MAX_TABLE_ROWS + 1:
        raise DataValidationError(f"{name} has more than {MAX_TABLE_ROWS:,} rows")
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataValidationError(f"{name} is not a readable CSV table: {str(exc).splitlines()[0]}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DataValidationError(f"{name} lacks column(s) {', '.join(missing)}; it needs {', '.join(needed)}"
                                  f" (found: {', '.join(frame.columns[:8]) or 'none'})")
    out = {}
    for c in needed:
        v = pd.to_numeric(frame[c].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise DataValidationError(f"{name}: column `{c}` has a missing or non-numeric value in data row"
                                      f" {bad[0] + 1} ({frame[c].iloc[bad[0]]!r})")
        out[c] = v
    return pd.DataFrame(out)


def read_trajectory(source: str | Path | bytes) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Times (s) and tip positions (m) from a CSV with columns ``t, x_B, y_B`` (rows uniformly spaced from 0).

    Raises
    ------
    DataValidationError
    """
    f = _frame(source, "trajectory", TRAJECTORY_COLUMNS)
    t, x, y, _ = check_trajectory(f["t"].to_numpy(), f["x_B"].to_numpy(), f["y_B"].to_numpy())
    return t, x, y


def read_bounds(source: str | Path | bytes) -> IntervalBounds:
    """Response bounds from a CSV with columns ``t, x_B_min, x_B_max, y_B_min, y_B_max``.

    Raises
    ------
    DataValidationError
    """
    return IntervalBounds.from_frame(_frame(source, "bounds", BOUNDS_COLUMNS))
