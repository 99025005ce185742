"""What a study stores, as bytes and text: records as Parquet plus a JSON of their metadata (and back,
validated again as a Record), configurations and results as strict JSON, and the checks of owners, names
and notes."""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataValidationError
from ..jsonsafe import json_safe
from ..record import Record, from_channels
from .schema import MAX_NAME_LENGTH, MAX_OWNER_LENGTH

__all__ = ["EncodedRecord", "validate_owner", "validate_name", "to_json", "encode_record", "decode_record",
           "record_from_channels"]


_OWNER_RE = re.compile(r"[A-Za-z0-9_.@-]+")


_NAME_CHARS = re.compile(r"[\w .+(),=#-]+")


_MAX_NOTES = 100_000


@dataclass(frozen=True, kw_only=True)
class EncodedRecord:
    """The canonical stored form of a record.

    Attributes
    ----------
    sha256 : str
        ``sha256(parquet + b"\\0" + meta_json)``, hex.
    parquet : bytes
        The channels as one Parquet table, float64 columns in canonical order.
    meta_json : str
        Canonical JSON (sorted keys, no NaN) of name, units, derived, source,
        warnings and meta.
    """

    sha256: str
    parquet: bytes
    meta_json: str


def validate_owner(owner: str) -> str:
    """Return ``owner`` if it is a valid owner name, else raise :class:`DataValidationError`."""
    if not isinstance(owner, str) or not 1 <= len(owner) <= MAX_OWNER_LENGTH or not _OWNER_RE.fullmatch(owner):
        raise DataValidationError(
            f"`owner` must be 1-{MAX_OWNER_LENGTH} characters of letters, digits, '_', '.', '@', '-'; "
            f"got {owner!r:.80}")
    return owner


def validate_name(name: str, argument: str = "name") -> str:
    """Return ``name`` if it is a valid study/record/run name, else raise naming ``argument``."""
    if not isinstance(name, str):
        raise DataValidationError(f"`{argument}` must be a string; got {type(name).__name__}")
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise DataValidationError(f"`{argument}` must be 1-{MAX_NAME_LENGTH} characters; got {len(name)}")
    if not _NAME_CHARS.fullmatch(name) or not name[0].isalnum() or name != name.strip():
        raise DataValidationError(
            f"`{argument}` may hold letters, digits, spaces and _ . - + ( ) , = # and must start with a letter or "
            f"digit; got {name!r}")
    return name


def _validate_notes(notes: str) -> str:
    if not isinstance(notes, str) or len(notes) > _MAX_NOTES:
        raise DataValidationError(f"`notes` must be a string of at most {_MAX_NOTES} characters")
    return notes


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(type(obj).__name__)


def to_json(value: Any, argument: str) -> str:
    """Canonical strict JSON of ``value`` (sorted keys, NaN/inf as null); raise naming ``argument``."""
    try:
        plain = json.loads(json.dumps(value, default=_json_default))
        return json.dumps(json_safe(plain), sort_keys=True, separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"`{argument}` is not JSON-serialisable: {exc}") from None


def encode_record(record: Record) -> EncodedRecord:
    """The canonical Parquet bytes, metadata JSON and content address of ``record``.

    Parameters
    ----------
    record : Record

    Returns
    -------
    EncodedRecord

    Raises
    ------
    DataValidationError
        A ``record.meta`` that cannot be written as JSON.

    Notes
    -----
    The Parquet table has one float64 column per channel, in the record's
    canonical channel order, written uncompressed-dictionary-free with
    statistics off, so equal records give equal bytes with one pyarrow
    version. Bytes (and so hashes) may differ between pyarrow versions: the
    same data is then stored twice, never confused.
    """
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    cols = record.to_dict()
    table = pa.table({c: pa.array(np.ascontiguousarray(v, dtype=np.float64)) for c, v in cols.items()})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=False, write_statistics=False,
                   store_schema=False)
    parquet = buf.getvalue()
    meta = {
        "name": record.name,
        "units": dict(record.channel_units),
        "derived": list(record.derived),
        "source": record.source,
        "warnings": list(record.warnings),
        "meta": dict(record.meta),
    }
    meta_json = to_json(meta, "record.meta")
    sha = hashlib.sha256(parquet + b"\0" + meta_json.encode("utf-8")).hexdigest()
    return EncodedRecord(sha256=sha, parquet=parquet, meta_json=meta_json)


def decode_record(parquet: bytes, meta_json: str) -> Record:
    """Rebuild (and validate) a :class:`Record` from its stored form (bytes this store wrote).

    Parquet from outside (an imported archive) is never decoded here but in
    the isolated, bounded reader of :mod:`nlid_core.guard` (see
    :mod:`nlid_core.store.archive`).

    Raises
    ------
    DataValidationError
        Bytes that are not a Parquet table of float64 channels, metadata
        that is not the JSON :func:`encode_record` writes, or a record that
        does not validate.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(parquet))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataValidationError(f"stored record is not a readable Parquet table: {exc}") from None
    for fld in table.schema:
        if fld.type != pa.float64():
            raise DataValidationError(f"stored record column `{fld.name}` is {fld.type}, not float64")
    return record_from_channels({c: table.column(c).to_numpy() for c in table.column_names}, meta_json)


def record_from_channels(channels: Mapping[str, Any], meta_json: str) -> Record:
    """Rebuild (and validate) a :class:`Record` from its channels and the metadata JSON of :func:`encode_record`.

    Raises
    ------
    DataValidationError
        Metadata that is not that JSON, or a record that does not validate.
    """
    try:
        meta = json.loads(meta_json)
    except ValueError as exc:
        raise DataValidationError(f"stored record metadata is not JSON: {exc}") from None
    expected = {"name": str, "units": dict, "derived": list, "source": str, "warnings": list, "meta": dict}
    if not isinstance(meta, dict) or set(meta) != set(expected) or any(
            not isinstance(meta[k], t) for k, t in expected.items()):
        raise DataValidationError(f"stored record metadata must have exactly the keys {sorted(expected)}")
    return from_channels(
        channels, name=meta["name"], units={str(k): str(v) for k, v in meta["units"].items()},
        derived=tuple(str(d) for d in meta["derived"]), source=meta["source"],
        warnings=tuple(str(w) for w in meta["warnings"]), meta=meta["meta"])
