"""Resource limits for reading untrusted files, settable by an administrator.

Every file a user hands to nlid (an upload on the shared dashboard, a path on
the command line) is parsed against these limits. Readers check what a file
*declares* (sheet dimensions, decompressed sizes, Parquet row groups, MAT
variable shapes) before allocating anything, and the whole parse runs in a
worker process whose address space, CPU time and wall-clock time are capped
(:mod:`nlid_core.guard`), so a file that still gets past the declared-size
checks kills only its worker.

Each limit is read from an environment variable when :func:`Limits.from_env`
is called (the dashboard and the CLI call it for every file, so a changed
setting applies to the next file without a restart):

==========================  ====================================  =========
variable                    meaning                                default
==========================  ====================================  =========
``NLID_MAX_FILE_MB``        size of the file on disk               1000 MB
``NLID_MAX_ROWS``           data rows of a table                   10 000 000
``NLID_MAX_COLUMNS``        columns of a table                     256
``NLID_MAX_CELLS``          rows x columns                         50 000 000
``NLID_MAX_UNCOMPRESSED_MB`` decompressed size of a compressed       2000 MB
                            container (xlsx zip members, MAT
                            compressed variables, Parquet pages)
``NLID_MAX_RATIO``          decompressed / compressed size         200
``NLID_MAX_ROW_GROUPS``     row groups of a Parquet file           10 000
``NLID_PARSE_MEMORY_MB``    address space of the parsing worker    2048 MB
``NLID_PARSE_CPU_S``        CPU time of the parsing worker         60 s
``NLID_PARSE_TIMEOUT_S``    wall-clock time of the parsing worker  25 s
==========================  ====================================  =========

The defaults fit a lab server with a few GB of memory per engineer: a
1e6-sample record with five channels is 5e6 cells (40 MB as float64), far
inside every limit, while the files that exhaust a server (a spreadsheet that
declares 1e6 x 16 384 cells, a 1 MB file that inflates to GB) are stopped
before they allocate. A message about a limit names it and the variable that
raises it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from .errors import DataValidationError

__all__ = ["BUDGETS", "CAN_BE_OFF", "Limits", "LIMIT_VARIABLES", "budget", "limit_message"]

#: Environment variable per limit field.
LIMIT_VARIABLES: Mapping[str, str] = {
    "max_file_mb": "NLID_MAX_FILE_MB",
    "max_rows": "NLID_MAX_ROWS",
    "max_columns": "NLID_MAX_COLUMNS",
    "max_cells": "NLID_MAX_CELLS",
    "max_uncompressed_mb": "NLID_MAX_UNCOMPRESSED_MB",
    "max_ratio": "NLID_MAX_RATIO",
    "max_row_groups": "NLID_MAX_ROW_GROUPS",
    "parse_memory_mb": "NLID_PARSE_MEMORY_MB",
    "parse_cpu_s": "NLID_PARSE_CPU_S",
    "parse_timeout_s": "NLID_PARSE_TIMEOUT_S",
}


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds on what parsing one untrusted file may declare and consume.

    Attributes
    ----------
    max_file_mb : float
        Size of the file on disk (MB = 1e6 bytes).
    max_rows, max_columns, max_cells : int
        Data rows, columns and rows x columns of the table read.
    max_uncompressed_mb : float
        Total decompressed size of a compressed container.
    max_ratio : float
        Decompressed over compressed size of a compressed container or member.
    max_row_groups : int
        Row groups of a Parquet file.
    parse_memory_mb : float
        Address-space limit of the parsing worker process.
    parse_cpu_s : float
        CPU-time limit of the parsing worker process.
    parse_timeout_s : float
        Wall-clock limit of the parsing worker process.
    """

    max_file_mb: float = 1000.0
    max_rows: int = 10_000_000
    max_columns: int = 256
    max_cells: int = 50_000_000
    max_uncompressed_mb: float = 2000.0
    max_ratio: float = 200.0
    max_row_groups: int = 10_000
    parse_memory_mb: float = 2048.0
    parse_cpu_s: float = 60.0
    parse_timeout_s: float = 25.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise DataValidationError(
                    f"limit `{f.name}` ({LIMIT_VARIABLES[f.name]}) must be a positive number, got {value!r}"
                )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Limits with every field overridden by its environment variable where set.

        Raises
        ------
        DataValidationError
            A variable that is set but is not a positive number.
        """
        env = os.environ if environ is None else environ
        values: dict[str, float | int] = {}
        for f in fields(cls):
            var = LIMIT_VARIABLES[f.name]
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            try:
                number = float(raw)
            except ValueError:
                raise DataValidationError(f"{var} must be a positive number, got {raw!r}") from None
            if not (math.isfinite(number) and number > 0):
                raise DataValidationError(f"{var} must be a positive number, got {raw!r}")
            values[f.name] = int(number) if f.type in ("int", int) else number
        return cls(**values)  # type: ignore[arg-type]

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1e6)

    @property
    def max_uncompressed_bytes(self) -> int:
        return int(self.max_uncompressed_mb * 1e6)


def limit_message(what: str, value: str, field: str, limit: float | int) -> str:
    """``"<what> is <value>, above the limit of <limit> (raise it with NLID_...)"``."""
    shown = f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
    return f"{what} is {value}, above the limit of {shown} (an administrator can raise it with {LIMIT_VARIABLES[field]})"


# ----------------------------------------------------------------------------- work budgets

#: Work budgets of a shared server: environment variable -> (default, what it bounds). Each is a
#: positive number; those marked in :data:`CAN_BE_OFF` may also be ``off`` (no bound).
BUDGETS: Mapping[str, tuple[float, str]] = {
    "NLID_TERM_CPU_S": (10.0, "CPU seconds to derive and compile one typed term"),
    "NLID_TERM_MAX_PARTS": (20_000.0, "estimated parts of a typed term's first derivatives (checked before sympy)"),
    "NLID_BATCH_MAX_SAMPLES": (2e9, "items x samples of one batch (the samples each item fits)"),
    "NLID_BATCH_ITEM_CPU_S": (900.0, "CPU seconds of one batch item (identification of one record or draw)"),
    "NLID_GLOB_MAX_ENTRIES": (100_000.0, "directory entries a batch spec's file patterns may visit"),
    "NLID_ARCHIVE_MAX_RUNS": (100_000.0, "runs in one imported study archive"),
    "NLID_ARCHIVE_MAX_RECORDS": (1_000.0, "records in one imported study archive"),
}
CAN_BE_OFF = frozenset({"NLID_TERM_CPU_S", "NLID_BATCH_ITEM_CPU_S"})


def budget(variable: str, environ: Mapping[str, str] | None = None) -> float | None:
    """The work budget ``variable`` (see :data:`BUDGETS`): its environment value, else its default;
    None when it is ``off`` (allowed for :data:`CAN_BE_OFF` only).

    Raises
    ------
    DataValidationError
        A value that is not a positive number (nor ``off`` where allowed); the message names the variable.
    """
    default, _ = BUDGETS[variable]
    env = os.environ if environ is None else environ
    raw = env.get(variable, "").strip()
    if not raw:
        return default
    if raw.lower() == "off" and variable in CAN_BE_OFF:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        also = " or `off`" if variable in CAN_BE_OFF else ""
        raise DataValidationError(f"the server setting {variable} must be a positive number{also}; got {raw[:40]!r}")
    return value
