"""Uploaded files: accepted types, record names, and parsing in the isolated loader (never cached)."""

from __future__ import annotations

import dataclasses
import math
import tempfile
from pathlib import Path

from app_support.text import plain
from nlid_core.errors import DataValidationError
from nlid_core.load_options import FS_RANGE_HZ, reword
from nlid_core.record import Record

#: Upload types the Data page accepts (a subset of what :mod:`nlid_core.io` reads).
UPLOAD_TYPES: tuple[str, ...] = ("csv", "txt", "tsv", "parquet", "pq", "xlsx", "mat")
#: Longest record name made from an upload's file name.
MAX_NAME_CHARS = 80


def upload_record_name(filename: str) -> str:
    """The record name for an upload: its stem as one line of plain text, at most ``MAX_NAME_CHARS``."""
    stem, dot, ext = filename.rpartition(".")
    if not dot or ext.lower() not in UPLOAD_TYPES:
        stem = filename
    return plain(stem, MAX_NAME_CHARS).strip(" .") or "upload"


def upload_extension(filename: str) -> str:
    """The lower-cased extension of an upload (``.csv``, ...); DataValidationError when it is not accepted."""
    _, dot, ext = filename.rpartition(".")
    ext = ext.lower()
    if not dot or ext not in UPLOAD_TYPES:
        got = f"`.{plain(ext, 12)}`" if dot else "no extension"
        raise DataValidationError(f"unsupported file type ({got}); accepted: {', '.join(UPLOAD_TYPES)}")
    return f".{ext}"


#: The Data page's name of each loading option (:data:`nlid_core.load_options.LOAD_OPTIONS`): its field labels.
FIELD_LABELS: dict[str, str] = {
    "columns": "Column mapping",
    "units": "Units of the file's columns",
    "fs": "Sampling rate [Hz]",
    "rows": "Rows to keep",
    "resample": "Resample irregular time",
}
#: How a loader message names each option on the page (``{value}``: what the message suggests to enter).
_PAGE_NAMES: dict[str, str] = {
    "columns": f"'{FIELD_LABELS['columns']}' {{value}}",
    "units": f"'{FIELD_LABELS['units']}' {{value}}",
    "fs": f"'{FIELD_LABELS['fs']}'",
    "rows": f"'{FIELD_LABELS['rows']}' {{value}}",
    "resample": f"the box '{FIELD_LABELS['resample']}'",
}


def _for_the_page(message: str, path: Path, shown: str) -> str:
    """A loader message naming the upload instead of the temporary file, and the page's fields instead of flags;
    names the loader quotes in backticks (code style) quoted plainly, as the page shows text (escaped)."""
    message = message.replace(str(path), shown).replace(path.name, shown)
    return reword(message, _PAGE_NAMES).replace("`", "'")


def parse_rate_field(text: str) -> float | None:
    """The sampling-rate field as a number in Hz (None when empty), read exactly as typed.

    Raises DataValidationError naming the field for text that is no number or a rate out of range.
    """
    raw = str(text).strip()
    if not raw:
        return None
    label = FIELD_LABELS["fs"]
    try:
        value = float(raw.replace(",", ".") if raw.count(",") == 1 and "." not in raw else raw)
    except ValueError:
        raise DataValidationError(f"'{label}': {plain(raw, 40)!r} is not a number (e.g. 610.3515625)") from None
    low, high = FS_RANGE_HZ
    if not (math.isfinite(value) and low <= value <= high):
        raise DataValidationError(f"'{label}' must be between {low:g} and {high:g} Hz, got {plain(raw, 40)}")
    return value


def parse_rows_field(text: str) -> str | None:
    """The rows field as ``START:STOP`` (None when empty); DataValidationError naming the field otherwise."""
    raw = str(text).strip()
    if not raw:
        return None
    start, colon, stop = raw.partition(":")
    if not colon or not all(p.strip().isdigit() for p in (start, stop) if p.strip()):
        raise DataValidationError(
            f"'{FIELD_LABELS['rows']}' must be START:STOP with row numbers from 0 (e.g. 40650:105712 or 1000:),"
            f" got {plain(raw, 40)}"
        )
    return raw


def load_uploaded(data: bytes, filename: str, columns: str, units: str, fs: float | None, rows: str | None,
                  resample: bool = False) -> Record:
    """Parse an uploaded file in the isolated loader; raises DataValidationError for every problem.

    The bytes go to a temporary file with a fixed name and the upload's
    (validated) extension, so no part of a user's file name reaches the file
    system. Not cached: the record lives in the session's records.
    """
    from nlid_core.guard import load_record_guarded  # noqa: PLC0415 (the isolated loader; imports a worker pool)

    ext = upload_extension(filename)
    name = upload_record_name(filename)
    shown = plain(filename, 120)
    with tempfile.TemporaryDirectory(prefix="nlid-upload-") as tmp:
        path = Path(tmp) / f"upload{ext}"
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise DataValidationError(f"the upload could not be stored for reading ({exc.strerror})") from None
        try:
            rec = load_record_guarded(path, columns=columns or None, units=units or None, name=name, fs=fs,
                                      rows=rows or None, resample=resample)
        except DataValidationError as exc:
            raise DataValidationError(_for_the_page(str(exc), path, shown)) from None
    warnings = tuple(_for_the_page(w, path, shown) for w in rec.warnings)
    return dataclasses.replace(rec, source=f"upload:{shown}", warnings=warnings)
