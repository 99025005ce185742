"""One record split into named records by row ranges or time ranges (training and test parts, levels).

A :class:`Segment` names a part of a record by ``start`` and ``stop``, as
0-based sample rows (``by="rows"``, Python slice semantics: ``start``
included, ``stop`` excluded) or as times in seconds on the record's own time
axis (``by="time"``: the samples with ``start <= t < stop``). A missing
``start`` is the record's first sample, a missing ``stop`` its end.

Each part keeps the record's channels, units, ``derived`` flags, source,
warnings and meta, and **its original time stamps**: a test part cut from
rows 105712:127400 of a file sampled at ``fs`` starts at ``t = 105712 / fs``,
so times quoted for a segment match the file and the whole record. The part's
``meta["segment"]`` says where it came from, and a warning line names the rows.

Segments may overlap (a training part and a validation part that shares it);
:func:`overlaps` lists them so a front end can say so. Everything else that
makes a segment unusable raises :class:`SegmentError`, which carries the
0-based position of the segment (a front end names its table row or option).

Example::

    train, test = split_record(rec, [Segment(name="train", start=40650, stop=105712),
                                     Segment(name="test", start=105712, stop=127400)])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._record_checks import MIN_SAMPLES
from .errors import DataValidationError
from .record import Record

__all__ = ["Segment", "SegmentError", "SEGMENT_UNITS", "MAX_NAME_CHARS", "parse_segment", "segment_rows",
           "split_record", "overlaps"]

#: How segment bounds are given: sample rows of the record, or seconds on its time axis.
SEGMENT_UNITS: tuple[str, ...] = ("rows", "time")
#: Longest record name a segment may have.
MAX_NAME_CHARS = 80
By = Literal["rows", "time"]


class SegmentError(DataValidationError):
    """A segment cannot be cut; ``index`` is its 0-based position and ``reason`` says why (no name, no position).

    ``str()`` of the error names the segment by position and name.
    """

    def __init__(self, index: int, name: str, reason: str) -> None:
        shown = f" `{name}`" if name else ""
        super().__init__(f"segment {index + 1}{shown}: {reason}")
        self.index = index
        self.reason = reason


@dataclass(frozen=True, kw_only=True)
class Segment:
    """One named part of a record.

    Attributes
    ----------
    name : str
        Name of the record the part becomes.
    start, stop : float or None
        Bounds as rows (integers) or seconds, per the ``by`` of :func:`split_record`; None for the
        record's first sample or its end.
    """

    name: str
    start: float | None = None
    stop: float | None = None


def parse_segment(spec: str) -> Segment:
    """A segment written ``NAME=START:STOP`` (either bound may be empty), e.g. ``test=105712:127400``.

    Parameters
    ----------
    spec : str
        The text; numbers are rows or seconds (the caller decides which).

    Returns
    -------
    Segment

    Raises
    ------
    DataValidationError
        No ``=``, no ``:``, or a bound that is not a number.
    """
    name, eq, span = str(spec).partition("=")
    lo, colon, hi = span.partition(":")
    if not eq or not colon:
        raise DataValidationError(f"a segment is NAME=START:STOP (e.g. test=105712:127400), got {spec!r}")
    bounds: list[float | None] = []
    for text in (lo, hi):
        try:
            bounds.append(float(text) if text.strip() else None)
        except ValueError:
            raise DataValidationError(f"segment {spec!r}: {text.strip()!r} is not a number") from None
    return Segment(name=name.strip(), start=bounds[0], stop=bounds[1])


def _by_arg(by: str) -> By:
    if by not in SEGMENT_UNITS:
        raise DataValidationError(f"`by` must be one of {', '.join(SEGMENT_UNITS)}, got {by!r}")
    return "rows" if by == "rows" else "time"


def _check_name(i: int, name: object, seen: dict[str, int]) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SegmentError(i, "", "give the part a name")
    text = name.strip()
    if len(text) > MAX_NAME_CHARS:
        raise SegmentError(i, text[:20] + "...", f"the name has {len(text)} characters; at most {MAX_NAME_CHARS}")
    if any(not ch.isprintable() for ch in text):
        raise SegmentError(i, "", "the name holds a line break or another control character")
    if text in seen:
        raise SegmentError(i, text, f"segment {seen[text] + 1} has the same name; names must be unique")
    seen[text] = i
    return text


def _row_bound(i: int, name: str, value: float | None, default: int, n: int, what: str) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return default
    if not math.isfinite(value) or value != int(value):
        raise SegmentError(i, name, f"{what} {value:g} is not a whole row number")
    row = int(value)
    if not 0 <= row <= n:
        raise SegmentError(i, name, f"{what} row {row} is outside the record's rows 0 to {n} ({n:,} samples)")
    return row


def _time_bound(i: int, name: str, value: float | None, default: int, t: np.ndarray, what: str) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return default
    if not math.isfinite(value):
        raise SegmentError(i, name, f"{what} {value} is not a time")
    dt = float((t[-1] - t[0]) / (t.size - 1))
    if not t[0] - 0.5 * dt <= value <= t[-1] + dt:
        raise SegmentError(
            i, name, f"{what} {value:.10g} s is outside the record's time {t[0]:.10g} s to {t[-1]:.10g} s")
    # the first sample at or after ``value``; a millionth of a sample absorbs the rounding of t = i / fs
    return int(np.searchsorted(t, value - 1e-6 * dt, side="left"))


def segment_rows(rec: Record, segments: Sequence[Segment], by: str = "rows") -> list[tuple[int, int]]:
    """The rows ``(start, stop)`` of each segment in ``rec``, after checking every segment.

    Parameters
    ----------
    rec : Record
        The record to split.
    segments : sequence of Segment
        The parts, in order.
    by : {"rows", "time"}
        Whether the bounds are 0-based rows (stop excluded) or seconds on ``rec.t`` (``start <= t < stop``).

    Returns
    -------
    list of (int, int)
        ``start, stop`` rows of each segment, ``stop`` excluded.

    Raises
    ------
    SegmentError
        A name missing, too long, with control characters or repeated; a bound that is not a row
        (or time) of the record; a stop at or before the start; a part of fewer than ``MIN_SAMPLES``
        samples.
    DataValidationError
        No segments, or an unknown ``by``.
    """
    unit = _by_arg(by)
    if not segments:
        raise DataValidationError("give at least one segment")
    seen: dict[str, int] = {}
    out = []
    for i, seg in enumerate(segments):
        name = _check_name(i, seg.name, seen)
        if unit == "rows":
            lo = _row_bound(i, name, seg.start, 0, rec.n, "start")
            hi = _row_bound(i, name, seg.stop, rec.n, rec.n, "stop")
        else:
            lo = _time_bound(i, name, seg.start, 0, rec.t, "start")
            hi = _time_bound(i, name, seg.stop, rec.n, rec.t, "stop")
        if hi <= lo:
            shown = "rows" if unit == "rows" else "s"
            raise SegmentError(
                i, name, f"stop ({_fmt(seg.stop, rec.n if unit == 'rows' else None)} {shown}) must be after start"
                         f" ({_fmt(seg.start, 0 if unit == 'rows' else None)} {shown})")
        if hi - lo < MIN_SAMPLES:
            raise SegmentError(i, name, f"holds {hi - lo} samples; a record needs at least {MIN_SAMPLES}")
        out.append((lo, hi))
    return out


def _fmt(value: float | None, default: int | None) -> str:
    if value is None:
        return "the end" if default else "the start"
    return f"{value:.10g}"


def split_record(rec: Record, segments: Sequence[Segment], by: str = "rows") -> list[Record]:
    """Cut ``rec`` into one record per segment, each named after its segment.

    Parameters
    ----------
    rec : Record
        The record to split (left unchanged).
    segments : sequence of Segment
        The parts, in order; they may overlap (see :func:`overlaps`).
    by : {"rows", "time"}
        As for :func:`segment_rows`.

    Returns
    -------
    list of Record
        One per segment, in order: the same channels, units, ``derived`` flags, source and meta, the
        original time stamps, ``meta["segment"]`` = ``{"of": rec.name, "rows": [start, stop]}`` and a
        warning line naming the rows.

    Raises
    ------
    SegmentError, DataValidationError
        As :func:`segment_rows`.
    """
    parts = []
    for seg, (lo, hi) in zip(segments, segment_rows(rec, segments, by), strict=True):
        part = rec.slice(lo, hi)
        note = f"rows {lo}:{hi} of {rec.name} (t = {rec.t[lo]:.10g} s to {rec.t[hi - 1]:.10g} s)"
        parts.append(part.replace(
            name=seg.name.strip(), warnings=(*rec.warnings, note),
            meta={**rec.meta, "segment": {"of": rec.name, "rows": [lo, hi]}},
        ))
    return parts


def overlaps(rows: Sequence[tuple[int, int]], names: Sequence[str]) -> list[str]:
    """One line per pair of segments that share samples, e.g. ``train and val share rows 100:200``.

    Parameters
    ----------
    rows : sequence of (int, int)
        The segments' rows as :func:`segment_rows` returns them.
    names : sequence of str
        Their names, in the same order.

    Returns
    -------
    list of str
    """
    lines = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            lo, hi = max(rows[i][0], rows[j][0]), min(rows[i][1], rows[j][1])
            if lo < hi:
                lines.append(f"{names[i].strip()} and {names[j].strip()} share rows {lo}:{hi} ({hi - lo:,} samples)")
    return lines
