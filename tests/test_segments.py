"""Splitting one record into named records by rows or time (nlid_core.segments) and the ``split`` command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlid_core.cli import main
from nlid_core.errors import DataValidationError
from nlid_core.io import load_record
from nlid_core.record import from_arrays
from nlid_core.segments import Segment, SegmentError, overlaps, parse_segment, segment_rows, split_record

FS = 610.3515625


def volts(n: int = 2000, first_row: int = 0):  # type: ignore[no-untyped-def]
    """A record in volts without a time column in its file: t = i / fs from row ``first_row``."""
    k = np.arange(first_row, first_row + n)
    return from_arrays(k / FS, np.sin(k / 9.0), 0.1 * np.sin(k / 9.0 - 0.3), name="SNLS",
                       units={"f": "V", "x": "V"}, source="SNLS.csv", warnings=("time built from fs",),
                       meta={"columns": {"f": "V1", "x": "V2"}})


def test_split_by_rows_keeps_units_time_stamps_and_provenance():
    rec = volts()
    train, test = split_record(rec, [Segment(name="train", start=100, stop=1500), Segment(name=" test ", start=1500)])
    assert (train.n, test.n) == (1400, 500) and (train.name, test.name) == ("train", "test")
    assert test.t[0] == rec.t[1500] and np.array_equal(test.x, rec.x[1500:])  # original time, same samples
    assert test.units == rec.units and test.fs == pytest.approx(FS, rel=1e-12)
    assert test.source == rec.source and test.meta["columns"] == {"f": "V1", "x": "V2"}
    assert test.meta["segment"] == {"of": "SNLS", "rows": [1500, 2000]}
    assert test.warnings[0] == "time built from fs" and "rows 1500:2000 of SNLS" in test.warnings[-1]
    assert rec.n == 2000  # the record itself is left as it was


def test_split_by_time_is_half_open_and_robust_to_rounded_times():
    rec = volts(first_row=40650)
    t_cut = 41000 / FS  # a time stamp of the file
    a, b = split_record(rec, [Segment(name="a", stop=t_cut), Segment(name="b", start=round(t_cut, 9))], by="time")
    assert a.n + b.n == rec.n and b.t[0] == rec.t[350] and a.t[-1] == rec.t[349]
    assert segment_rows(rec, [Segment(name="all")], by="time") == [(0, rec.n)]
    assert segment_rows(rec, [Segment(name="all", start=rec.t[0], stop=rec.t[-1] + rec.dt)], by="time") == [(0, rec.n)]


@pytest.mark.parametrize("segments, by, index, reason", [
    ([Segment(name="a", start=0, stop=100), Segment(name="b", start=300, stop=200)], "rows", 1, "must be after start"),
    ([Segment(name="a", start=0, stop=2001)], "rows", 0, "outside the record's rows 0 to 2000"),
    ([Segment(name="a", start=-1, stop=100)], "rows", 0, "outside"),
    ([Segment(name="a", start=1.5, stop=100)], "rows", 0, "not a whole row number"),
    ([Segment(name="a", start=0, stop=10)], "rows", 0, "holds 10 samples"),
    ([Segment(name="", start=0, stop=100)], "rows", 0, "give the part a name"),
    ([Segment(name="a\nb", start=0, stop=100)], "rows", 0, "control character"),
    ([Segment(name="x" * 81, start=0, stop=100)], "rows", 0, "at most 80"),
    ([Segment(name="a", start=0, stop=100), Segment(name="a", start=100, stop=200)], "rows", 1, "same name"),
    ([Segment(name="a", start=0.0, stop=1e4)], "time", 0, "outside the record's time"),
    ([Segment(name="a", start=float("inf"))], "time", 0, "not a time"),
])
def test_bad_segments_say_which_and_why(segments, by, index, reason):
    with pytest.raises(SegmentError) as info:
        split_record(volts(), segments, by=by)
    assert info.value.index == index and reason in info.value.reason
    assert str(info.value).startswith(f"segment {index + 1}")


def test_no_segments_and_an_unknown_unit_are_refused():
    with pytest.raises(DataValidationError, match="at least one segment"):
        split_record(volts(), [])
    with pytest.raises(DataValidationError, match="`by` must be one of rows, time"):
        split_record(volts(), [Segment(name="a")], by="samples")


def test_overlaps_are_listed_pairwise():
    assert overlaps([(0, 100), (50, 200), (200, 300)], ["a", "b", "c"]) == ["a and b share rows 50:100 (50 samples)"]
    assert overlaps([(0, 100), (100, 200)], ["a", "b"]) == []


def test_parse_segment():
    assert parse_segment("train=40650:105712") == Segment(name="train", start=40650, stop=105712)
    assert parse_segment("rest=100:") == Segment(name="rest", start=100, stop=None)
    for bad in ("train", "train=1-2", "train=a:5"):
        with pytest.raises(DataValidationError):
            parse_segment(bad)


def test_split_command_writes_parts_that_load_back_without_options(tmp_path: Path, capsys):
    k = np.arange(3000)
    src = tmp_path / "SNLS.csv"
    pd.DataFrame({"V1": np.sin(k / 9.0), "V2": 0.1 * np.sin(k / 9.0 - 0.3)}).to_csv(src, index=False)
    out = tmp_path / "parts"
    status = main(["split", str(src), "--columns", "f=V1,x=V2", "--units", "f=V,x=V", "--fs", str(FS),
                   "--segment", "train=500:2000", "--segment", "test=1900:", "--out", str(out)])
    report = capsys.readouterr().out
    assert status == 0
    assert "wrote" in report and "train.csv: 1,500 samples, rows 500:2000" in report
    assert "note: train and test share rows 1900:2000 (100 samples)" in report
    test = load_record(out / "test.csv")
    assert test.n == 1100 and test.unit("x") == "V" and test.unit("f") == "V"
    assert test.t[0] == pytest.approx(1900 / FS, rel=1e-15) and test.fs == pytest.approx(FS, rel=1e-9)


@pytest.mark.parametrize("segment, message", [
    ("test=1900:9000", "--segment test=1900:9000: stop row 9000 is outside"),
    ("../evil=0:100", "must be a file name"),
    ("test", "NAME=START:STOP"),
])
def test_split_command_names_the_bad_segment(tmp_path: Path, capsys, segment, message):
    k = np.arange(3000)
    src = tmp_path / "u.csv"
    pd.DataFrame({"t": k / 100.0, "f": np.sin(k / 9.0), "x": np.cos(k / 9.0)}).to_csv(src, index=False)
    assert main(["split", str(src), "--segment", segment, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
