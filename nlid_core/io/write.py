"""Writing records to CSV or Parquet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..record import Record
from ._table import StrPath

__all__ = ["write_record"]


_WRITE_EXTENSIONS = (".csv", ".parquet")


def write_record(record: Record, path: StrPath) -> Path:
    """Write a record's channels to CSV or Parquet.

    Parameters
    ----------
    record : Record
        Record to write; one column per channel, named as the record names
        it (``t, f, x`` and ``v``, ``a`` when present; ``t, f1, x1, x2, ...``
        with several DOFs, which read back by name).
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
    df = pd.DataFrame({c: np.asarray(record.channel(c), dtype=np.float64) for c in record.channels})
    if ext == ".csv":
        # pandas writes float64 as the shortest repr, which reads back bit-identical.
        df.to_csv(p, index=False, lineterminator="\n")
    else:
        df.to_parquet(p, index=False)
    return p
