"""Uploaded files: accepted types, record names, and parsing in the isolated loader (never cached)."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from app_support.text import plain
from nlid_core.errors import DataValidationError
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


#: Command-line wording in loader messages and what the Data page calls the same thing (first match wins).
_CLI_WORDS: tuple[tuple[str, str], ...] = (
    (r" \(resample=True, CLI --resample\)", ""),
    (r" \(CLI --fs\)", ""),
    (r"with --fs when", "when"),
    (r"--columns (\w+)=NAME", r"the column mapping (\1=NAME)"),
    (r"--fs", "the sampling rate"),
    (r"--units", "the units box"),
    (r"--rows", "rows to keep"),
)


def _for_the_page(message: str, path: Path, shown: str) -> str:
    """A loader message naming the upload instead of the temporary file, in the Data page's words (no CLI flags)."""
    message = message.replace(str(path), shown).replace(path.name, shown)
    for pattern, words in _CLI_WORDS:
        message = re.sub(pattern, words, message)
    return message


def load_uploaded(data: bytes, filename: str, columns: str, units: str, fs: float | None, rows: str) -> Record:
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
                                      rows=rows or None)
        except DataValidationError as exc:
            raise DataValidationError(_for_the_page(str(exc), path, shown)) from None
    warnings = tuple(_for_the_page(w, path, shown) for w in rec.warnings)
    return dataclasses.replace(rec, source=f"upload:{shown}", warnings=warnings)
