"""``python -m nlid_core split``: one record file cut into named parts (training, test, levels), one CSV each.

The parts are cut by :func:`nlid_core.segments.split_record` (the Data page's "Split into records"
does the same) and keep their original time stamps. Each file has the columns of the record with
its unit in brackets (``t [s]``, ``f [V]``, ``x [V]``), the form the loaders read, so a part loads
back as it was (``identify train.csv`` needs no ``--fs`` nor ``--units``). Numbers are written at
full precision.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import NlidError
from ..record import Record
from ..segments import SEGMENT_UNITS, SegmentError, parse_segment, segment_rows, split_record
from .common import COMMAND_HELP, share_options

__all__ = ["SHARED_OPTIONS", "add_split_parser", "run_split", "write_part"]

#: Options of ``identify`` that ``split`` takes as they are (loading the input).
SHARED_OPTIONS = ("columns", "units", "scale", "fs", "resample")
#: Part names that are safe file names.
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def add_split_parser(sub: argparse._SubParsersAction[Any], identify: argparse.ArgumentParser) -> None:
    """Add the ``split`` command; its loading options are ``identify``'s own (one definition).

    Parameters
    ----------
    sub : argparse subparsers
        The CLI's commands.
    identify : argparse.ArgumentParser
        The ``identify`` parser, whose :data:`SHARED_OPTIONS` are added as they are.
    """
    sp = sub.add_parser(
        "split", help=COMMAND_HELP["split"],
        description="Cut INPUT into named parts, e.g. --segment train=40650:105712 --segment test=105712:127400"
                    " (rows of the record, stop excluded; --by time for seconds, start <= t < stop). Each part"
                    " keeps its original time stamps and is written as OUT/NAME.csv with units in the column"
                    " headers, so it loads back without options. Parts may overlap (a note says so).")
    sp.add_argument("input", help="record file (CSV, Parquet, Excel, MAT)")
    sp.add_argument("--segment", action="append", required=True, metavar="NAME=START:STOP",
                    help="a part: its name (letters, digits, . _ -) and bounds; either bound may be empty (repeat)")
    sp.add_argument("--by", choices=SEGMENT_UNITS, default="rows", help="bounds as rows (default) or seconds")
    sp.add_argument("--out", required=True, metavar="DIR", help="directory for the parts (created if missing)")
    sp.add_argument("--quiet", action="store_true", help="print nothing but errors")
    share_options(sp, identify, SHARED_OPTIONS)


def write_part(rec: Record, path: Path) -> Path:
    """Write ``rec`` as CSV with ``channel [unit]`` headers at full precision; returns ``path``.

    Parameters
    ----------
    rec : Record
        The part.
    path : Path
        Destination file.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    frame = pd.DataFrame({f"{c} [{rec.unit(c)}]": np.asarray(rec.channel(c)) for c in rec.channels})
    frame.to_csv(path, index=False, lineterminator="\n")
    return path


def run_split(args: argparse.Namespace) -> list[str]:
    """Load, cut and write; returns the report lines (the CLI prints them unless ``--quiet``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``split`` command line.

    Raises
    ------
    NlidError
        A bad segment (naming its ``--segment``), a name that is not a safe file name, a file that
        cannot be loaded or written.
    """
    from ..guard import load_record_guarded
    from ..segments import overlaps

    segments = []
    for text in args.segment:
        try:
            seg = parse_segment(text)
        except NlidError as exc:
            raise NlidError(f"--segment {text}: {exc}") from None
        if not _FILE_NAME.match(seg.name):
            raise NlidError(f"--segment {text}: the name {seg.name!r} must be a file name of letters, digits,"
                            " '.', '_' and '-' (starting with a letter or digit)")
        segments.append(seg)
    rec = load_record_guarded(args.input, columns=args.columns, units=args.units, resample=args.resample, fs=args.fs)
    try:
        rows = segment_rows(rec, segments, args.by)
        parts = split_record(rec, segments, args.by)
    except SegmentError as exc:
        raise NlidError(f"--segment {args.segment[exc.index]}: {exc.reason}") from None
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NlidError(f"cannot create `{args.out}`: {exc.strerror}") from None
    lines = []
    for part, (lo, hi) in zip(parts, rows, strict=True):
        path = out / f"{part.name}.csv"
        try:
            write_part(part, path)
        except OSError as exc:
            raise NlidError(f"cannot write `{path}`: {exc.strerror}") from None
        lines.append(f"wrote {path}: {part.n:,} samples, rows {lo}:{hi}, t = {part.t[0]:.10g} s to"
                     f" {part.t[-1]:.10g} s at {part.fs:.10g} Hz")
    lines += [f"note: {line}" for line in overlaps(rows, [s.name for s in segments])]
    return lines
