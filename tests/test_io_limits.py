"""Readers of nlid_core.io against untrusted files: declared sizes checked before allocation, limits named.

Every hostile file of :mod:`tests.hostile_files` must be refused quickly with a
one-line ``DataValidationError`` naming the limit (or the inconsistency), and
without allocating what it declares; awkward but benign files must load with
the right columns; normal files of every format must still load. A
property-based test mutates valid files and accepts only a Record or a
one-line ``DataValidationError``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.io
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nlid_core.errors import DataValidationError
from nlid_core.io import load_record, load_records, read_table
from nlid_core.limits import Limits
from nlid_core.record import Record
from tests import hostile_files as hf

REPO = Path(__file__).resolve().parents[1]
#: Seconds any hostile file may take to be refused (they take milliseconds; the margin is for a busy machine).
QUICK_S = 5.0


def _refusal(path: Path, limits: Limits | None = None, **kwargs: Any) -> tuple[str, float]:
    start = time.perf_counter()
    with pytest.raises(DataValidationError) as info:
        load_record(path, limits=limits, **kwargs)
    seconds = time.perf_counter() - start
    message = str(info.value)
    assert message.isprintable() and "\n" not in message, repr(message)
    assert len(message) < 700, message
    return message, seconds


def _assert_signal(rec: Record, n: int = hf.N) -> None:
    expected = hf.expected(n)
    for c in ("t", "f", "x"):
        np.testing.assert_allclose(getattr(rec, c), expected[c], rtol=1e-12, atol=1e-15, err_msg=c)


# --------------------------------------------------------------------------- hostile files, default limits

#: generator (with arguments that keep it quick) -> words the message must contain
HOSTILE_CASES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "xlsx_dimension_bomb": (hf.xlsx_dimension_bomb, ("NLID_MAX_COLUMNS", 'dimension ref="A1:XFD1048576"')),
    "xlsx_far_cell": (hf.xlsx_far_cell, ("NLID_MAX_COLUMNS", "XFD1048576")),
    "xlsx_zip_bomb": (lambda d: hf.xlsx_zip_bomb(d, uncompressed_mb=20), ("NLID_MAX_RATIO", "sheet1.xml")),
    "mat_zlib_bomb": (hf.mat_zlib_bomb, ("NLID_MAX_CELLS", "`x` double 1x387500000")),
    "mat_lying_header": (lambda d: hf.mat_lying_header(d, inflated_mb=20), ("not a readable MAT", "1x1")),
    "mat_v4_huge_dims": (hf.mat_v4_huge_dims, ("NLID_MAX_CELLS", "100000x100000")),
    "parquet_rle_bomb": (hf.parquet_rle_bomb, ("NLID_MAX_ROWS", "1,300,000,000")),
    "parquet_lying_rle": (hf.parquet_lying_rle, ("not a readable Parquet", "more than the 100")),
    "parquet_page_bomb": (lambda d: hf.parquet_page_bomb(d, inflated_mb=100), ("not a readable Parquet",
                                                                                 "column chunk")),
    "parquet_many_row_groups": (hf.parquet_many_row_groups, ("NLID_MAX_ROW_GROUPS", "200,000")),
    "parquet_bad_histogram": (hf.parquet_bad_histogram, ("not a readable Parquet", "histogram")),
    "parquet_corrupt_footer": (hf.parquet_corrupt_footer, ("not a readable Parquet", "footer")),
    "csv_wide": (hf.csv_wide, ("NLID_MAX_COLUMNS", "5,000")),
    "csv_long_line": (hf.csv_long_line, ("NLID_MAX_COLUMNS", "at least")),
    "csv_long_row": (hf.csv_long_row, ("data row 30 has 4 fields but the header has 3",)),
    "csv_comma_decimal_comma": (hf.csv_comma_decimal_comma, ("decimal commas", "`;`")),
}


def test_every_hostile_generator_is_covered() -> None:
    names = {g.__name__ for g in hf.HOSTILE}
    assert names == set(HOSTILE_CASES), names ^ set(HOSTILE_CASES)


@pytest.mark.parametrize(("make", "words"), HOSTILE_CASES.values(), ids=HOSTILE_CASES.keys())
def test_hostile_file_is_refused_naming_the_limit(
    tmp_path: Path, make: Callable[[Path], Path], words: tuple[str, ...]
) -> None:
    path = make(tmp_path)
    message, seconds = _refusal(path, Limits())
    for word in words:
        assert word in message, message
    assert path.name in message
    assert seconds < QUICK_S


def test_limits_default_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = hf.csv_many_rows(tmp_path, rows=300)
    monkeypatch.setenv("NLID_MAX_ROWS", "100")
    message, _ = _refusal(path)
    assert "NLID_MAX_ROWS" in message and "more than 100" in message
    with pytest.raises(DataValidationError, match="NLID_MAX_ROWS"):
        read_table(path)
    with pytest.raises(DataValidationError, match=r"^many_rows\.csv: .*NLID_MAX_ROWS"):
        load_records([path])
    monkeypatch.delenv("NLID_MAX_ROWS")
    assert load_record(path).n == 300


def test_bad_limits_argument() -> None:
    with pytest.raises(DataValidationError, match="`limits` must be a Limits"):
        read_table("whatever.csv", limits={"max_rows": 3})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- every limit, lowered


def test_file_size_limit(tmp_path: Path) -> None:
    path = hf.csv_many_rows(tmp_path, rows=300)
    message, _ = _refusal(path, Limits(max_file_mb=0.001))
    assert "NLID_MAX_FILE_MB" in message and "its size is" in message


@pytest.mark.parametrize("ext", ["csv", "parquet", "xlsx", "mat"])
def test_rows_columns_cells_limits_for_every_format(tmp_path: Path, ext: str) -> None:
    a = hf.expected(300)
    df = pd.DataFrame(a)
    path = tmp_path / f"rec.{ext}"
    if ext == "csv":
        df.to_csv(path, index=False)
    elif ext == "parquet":
        df.to_parquet(path)
    elif ext == "xlsx":
        df.to_excel(path, index=False)
    else:
        scipy.io.savemat(path, a)
    assert load_record(path, limits=Limits(max_rows=300, max_columns=3, max_cells=900)).n == 300
    assert "NLID_MAX_ROWS" in _refusal(path, Limits(max_rows=299))[0]
    if ext != "mat":  # a MAT file's columns are its vectors; the cells limit covers them
        assert "NLID_MAX_COLUMNS" in _refusal(path, Limits(max_columns=2))[0]
    assert "NLID_MAX_CELLS" in _refusal(path, Limits(max_cells=899))[0]


def test_csv_row_limit_reads_no_further(tmp_path: Path) -> None:
    path = hf.csv_many_rows(tmp_path, rows=20_000)
    message, _ = _refusal(path, Limits(max_rows=1_000))
    assert "its number of data rows is more than 1,000" in message and "NLID_MAX_ROWS" in message
    message, _ = _refusal(path, Limits(max_cells=3_000))
    assert "more than 1,000 rows x 3 columns" in message and "NLID_MAX_CELLS" in message


@pytest.mark.parametrize("dimension", [True, False], ids=["declared", "streamed"])
def test_xlsx_rows_limit_declared_and_streamed(tmp_path: Path, dimension: bool) -> None:
    path = hf.xlsx_many_rows(tmp_path, rows=300, dimension=dimension)
    message, _ = _refusal(path, Limits(max_rows=100))
    assert "NLID_MAX_ROWS" in message
    assert ("declared" in message) == dimension, message
    assert load_record(path, limits=Limits(max_rows=300)).n == 300


def test_xlsx_decompressed_size_limit(tmp_path: Path) -> None:
    path = hf.xlsx_zip_bomb(tmp_path, uncompressed_mb=20)
    message, _ = _refusal(path, Limits(max_ratio=1e6, max_uncompressed_mb=5))
    assert "its decompressed size is 20 MB" in message and "NLID_MAX_UNCOMPRESSED_MB" in message


def test_xlsx_compression_method_and_zip_garbage(tmp_path: Path) -> None:
    path = tmp_path / "bz.xlsx"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
    assert "compression method 12" in _refusal(path)[0]


def test_mat_inflation_stops_at_the_ratio_and_size_limits(tmp_path: Path) -> None:
    path = hf.mat_zlib_bomb(tmp_path, inflated_mb=400)
    message, seconds = _refusal(path, Limits(max_cells=10**9))
    assert "NLID_MAX_RATIO" in message and "`x` double 1x50000000" in message
    message, _ = _refusal(path, Limits(max_cells=10**9, max_ratio=1e6, max_uncompressed_mb=30))
    assert "NLID_MAX_UNCOMPRESSED_MB" in message
    assert seconds < QUICK_S


def test_parquet_page_ratio_and_size_limits_with_an_honest_footer(tmp_path: Path) -> None:
    # the page bomb whose column chunk declares what its page inflates to
    path = hf.parquet_page_bomb(tmp_path, inflated_mb=100, honest_footer=True)
    message, _ = _refusal(path)
    assert "the compression ratio of a page of column `x`" in message and "NLID_MAX_RATIO" in message
    message, _ = _refusal(path, Limits(max_ratio=1e9, max_uncompressed_mb=50))
    assert "its decompressed size is more than 100 MB" in message and "NLID_MAX_UNCOMPRESSED_MB" in message


def test_parquet_row_groups_limit_on_a_pyarrow_file(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    a = hf.expected()
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table(a), path, row_group_size=10)
    assert load_record(path, limits=Limits(max_row_groups=20)).n == hf.N
    message, _ = _refusal(path, Limits(max_row_groups=19))
    assert "its number of row groups is 20" in message and "NLID_MAX_ROW_GROUPS" in message


# --------------------------------------------------------------------------- awkward but benign files


@pytest.mark.parametrize("make", hf.BENIGN, ids=[g.__name__ for g in hf.BENIGN])
def test_benign_file_loads_the_right_columns(tmp_path: Path, make: Callable[[Path], Path]) -> None:
    rec = load_record(make(tmp_path))
    _assert_signal(rec)
    assert rec.meta["columns"] == {"t": "t", "f": "f", "x": "x"}


@pytest.mark.parametrize(
    ("make", "note"),
    [
        (hf.csv_index_column, "row index (0, 1, 2, ...) and was dropped"),
        (hf.csv_r_row_names, "row index (1, 2, 3, ...) and was dropped"),
        (hf.txt_index_column, "one field more than its header"),
        (hf.csv_unnamed_index, "column `Unnamed: 0` is a row index (0, 1, 2, ...) and is not used as a channel"),
        (hf.csv_decimal_comma, "decimal commas were read"),
        (hf.csv_quoted_decimal_comma, "decimal commas were read in quoted cells"),
    ],
)
def test_benign_file_says_what_was_done(tmp_path: Path, make: Callable[[Path], Path], note: str) -> None:
    assert any(note in w for w in load_record(make(tmp_path)).warnings)


def test_row_index_column_is_never_taken_as_time(tmp_path: Path) -> None:
    a = hf.expected()
    path = tmp_path / "no_time.csv"
    pd.DataFrame({"f": a["f"], "x": a["x"]}).to_csv(path)  # pandas' default: an unnamed index column
    with pytest.raises(DataValidationError, match=r"no `t` \(time\) column.*`Unnamed: 0` is a row index"):
        load_record(path)
    rec = load_record(path, fs=1000.0)
    _assert_signal(rec)
    named = tmp_path / "named.csv"
    pd.DataFrame({"index": np.arange(hf.N), "f": a["f"], "x": a["x"]}).to_csv(named, index=False)
    assert load_record(named, fs=1000.0).meta["columns"] == {"f": "f", "x": "x"}
    explicit = load_record(named, columns="t=index,f=f,x=x", units="t=ms")
    np.testing.assert_allclose(explicit.t, a["t"])


def test_row_index_that_stops_counting_is_an_error(tmp_path: Path) -> None:
    rows = [",".join([str(i if i != 150 else 7), *r]) for i, r in enumerate(hf._rows())]
    path = tmp_path / "broken_index.csv"
    path.write_text("t,f,x\n" + "\n".join(rows) + "\n")
    message, _ = _refusal(path)
    assert "data row 150 starts with `7` instead of 150" in message


def test_extra_field_that_is_not_an_index_is_an_error(tmp_path: Path) -> None:
    rows = [",".join([*r, "5"]) for r in hf._rows()]
    path = tmp_path / "extra.csv"
    path.write_text("t,f,x\n" + "\n".join(rows) + "\n")
    message, _ = _refusal(path)
    assert "have 4 fields but the header has 3" in message and "not a row index" in message


def test_long_row_beyond_the_sniffed_prefix_names_its_line(tmp_path: Path) -> None:
    rows = [",".join(r) for r in hf._rows(5_000)]
    rows[4_000] += ",9"
    path = tmp_path / "late.csv"
    path.write_text("# rig 3\n\nt,f,x\n" + "\n".join(rows) + "\n")
    message, _ = _refusal(path)
    assert "line 4004 has 4 fields but the header has 3" in message


def test_trailing_delimiter_is_not_an_extra_field(tmp_path: Path) -> None:
    path = tmp_path / "trailing.csv"
    path.write_text("t,f,x\n" + "\n".join(",".join(r) + "," for r in hf._rows()) + "\n")
    _assert_signal(load_record(path))


def test_equal_field_counts_with_decimal_comma_parts_are_an_error(tmp_path: Path) -> None:
    # six "columns" that are three numbers with decimal commas: same count as the header
    rows = [",".join(f"{float(v):.4f}".replace(".", ",") for v in r) for r in hf._rows()]
    path = tmp_path / "six.csv"
    path.write_text("t,f,x,v,a,b\n" + "\n".join(rows) + "\n")
    message, _ = _refusal(path)
    assert "decimal commas" in message


# --------------------------------------------------------------------------- fs and rows at the boundary


@pytest.mark.parametrize("fs", [1e300, 1e10, 0.0, -5.0, float("nan"), float("inf"), 1e-7, "abc", True])
def test_sampling_rate_out_of_range(tmp_path: Path, fs: Any) -> None:
    path = tmp_path / "u.csv"
    pd.DataFrame({"u": np.sin(np.arange(100) / 7.0), "y": np.cos(np.arange(100) / 7.0)}).to_csv(path, index=False)
    message, _ = _refusal(path, columns="f=u,x=y", fs=fs)
    assert "`fs`" in message and ("between 1e-06 and 1e+09 Hz" in message or "sampling rate in Hz" in message)


def test_sampling_rate_at_the_range_ends(tmp_path: Path) -> None:
    path = tmp_path / "u.csv"
    pd.DataFrame({"u": np.sin(np.arange(100) / 7.0), "y": np.cos(np.arange(100) / 7.0)}).to_csv(path, index=False)
    assert load_record(path, columns="f=u,x=y", fs=1e9).dt == pytest.approx(1e-9)
    assert load_record(path, columns="f=u,x=y", fs=1e-6).dt == pytest.approx(1e6)


def test_rows_bounds(tmp_path: Path) -> None:
    path = hf.csv_many_rows(tmp_path, rows=300)
    assert load_record(path, rows="100:" + "9" * 40).n == 200
    assert load_record(path, rows=(100, 10**30)).n == 200
    for bad in [("a", None), (True, 5), (1.5, 3)]:
        with pytest.raises(DataValidationError, match="`rows` must be START:STOP or a pair of integers"):
            load_record(path, rows=bad)  # type: ignore[arg-type]
    with pytest.raises(DataValidationError, match="`rows` must look like START:STOP"):
        load_record(path, rows="1.5:30")


# --------------------------------------------------------------------------- messages


def test_messages_are_one_printable_line(tmp_path: Path) -> None:
    name = "bad\nname\x1b[31m.csv"
    path = tmp_path / name
    path.write_bytes(b"t,f,x\n" + b"1,2,\x1b[2J\n" * 30)
    message, _ = _refusal(path)
    assert "\x1b" not in message and "\n" not in message
    # a library's own text is cut to about 200 characters
    garbage = tmp_path / "junk.parquet"
    garbage.write_bytes(b"PAR1" + bytes(range(256)) * 40 + (100).to_bytes(4, "little") + b"PAR1")
    message, _ = _refusal(garbage)
    assert len(message) < 400


# --------------------------------------------------------------------------- normal files still load


def _formats(tmp_path: Path) -> dict[str, Path]:
    a = hf.expected()
    df = pd.DataFrame(a)
    out = {}
    for name, write in {
        "csv": lambda p: df.to_csv(p, index=False),
        "tsv": lambda p: df.to_csv(p, index=False, sep="\t"),
        "txt": lambda p: df.to_csv(p, index=False, sep=" "),
        "parquet": lambda p: df.to_parquet(p),
        "pq": lambda p: df.to_parquet(p, compression="zstd"),
        "xlsx": lambda p: df.to_excel(p, index=False),
        "mat": lambda p: scipy.io.savemat(p, a),
    }.items():
        path = tmp_path / f"rec.{name}"
        write(path)
        out[name] = path
    for label, kwargs in {"v5z": {"do_compression": True}, "v4": {"format": "4"}}.items():
        path = tmp_path / label / "rec.mat"
        path.parent.mkdir()
        scipy.io.savemat(path, a, **kwargs)
        out[label] = path
    return out


def test_normal_files_of_every_format_load(tmp_path: Path) -> None:
    for label, path in _formats(tmp_path).items():
        rec = load_record(path)
        assert rec.n == hf.N, label
        _assert_signal(rec)


@pytest.mark.parametrize("case", ["cr", "latin-1 later", "latin-1 header", "bom", "quoted header", "tab comma"])
def test_text_encodings_and_line_endings(tmp_path: Path, case: str) -> None:
    rows = hf._rows(3_000)  # longer than the sniffed prefix
    lines = ["t,f,x"] + [",".join(r) for r in rows]
    path = tmp_path / "rec.csv"
    if case == "cr":
        path.write_bytes("\r".join(lines).encode() + b"\r")
    elif case == "latin-1 later":  # the first 64 kB are plain ASCII
        path.write_bytes(("\n".join(ln + ",note" for ln in lines[:2_500]) + "\n"
                          + "\n".join(ln + ",é" for ln in lines[2_500:]) + "\n").encode("latin-1"))
    elif case == "latin-1 header":
        path.write_bytes(("# Prüfstand 3\nt,f,x,T [°C]\n" + "\n".join(",".join([*r, "1"]) for r in rows)
                          + "\n").encode("latin-1"))
    elif case == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")
    elif case == "quoted header":
        path.write_text('"t","force, N","x"\n' + "\n".join(lines[1:]) + "\n")
    else:
        path.write_text("\n".join(ln.replace(",", "\t").replace(".", ",") for ln in lines) + "\n")
    rec = load_record(path, columns={"f": "force, N"} if case == "quoted header" else None)
    _assert_signal(rec, 3_000)


def test_xlsx_reader_agrees_with_pandas(tmp_path: Path) -> None:
    import datetime

    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["t", "f", None, "label", "flag", "mixed", "when", "t"])
    for i in range(40):
        ws.append([i * 0.5, np.sin(i), None, f"s{i % 3}", i % 2 == 0, i if i % 5 else "x", None, i])
    ws["G5"] = datetime.datetime(2024, 3, 1, 12, 30)
    ws["B20"] = None  # a hole
    ws["A50"] = 99.0  # after empty rows
    ws["I1"] = "far"
    path = tmp_path / "mixed.xlsx"
    wb.save(path)
    ours = read_table(path)
    theirs = pd.read_excel(path, keep_default_na=False, na_values=[""])
    theirs.columns = [str(c).strip() for c in theirs.columns]
    assert list(ours.columns) == ["t", "f", "label", "flag", "mixed", "when", "t.1", "far"]
    assert ours.shape == (49, 8)
    for ours_col, their_col in zip(ours.columns, [c for c in theirs.columns if c != "Unnamed: 2"], strict=True):
        left = ours[ours_col].tolist()
        right = theirs[their_col].tolist()
        assert len(left) == len(right)
        for a, b in zip(left, right, strict=True):
            if pd.isna(a) and pd.isna(b):
                continue
            if isinstance(b, pd.Timestamp):
                b = b.to_pydatetime()
            assert a == b or (isinstance(b, (bool, np.bool_)) and a == bool(b)), (ours_col, a, b)


def test_xlsx_inline_and_shared_strings_and_headerless(tmp_path: Path) -> None:
    path = tmp_path / "numbers.xlsx"
    pd.DataFrame(np.column_stack(list(hf.expected().values()))).to_excel(path, index=False, header=False)
    df = read_table(path)
    assert list(df.columns) == ["0", "1", "2"] and df.shape == (hf.N, 3)
    rec = load_record(hf.xlsx_many_rows(tmp_path, rows=hf.N))  # inline-string header, no styles
    _assert_signal(rec)


def test_xls_that_is_really_xlsx_goes_through_the_bounded_reader(tmp_path: Path) -> None:
    path = hf.xlsx_dimension_bomb(tmp_path)
    renamed = path.with_suffix(".xls")
    path.rename(renamed)
    assert "NLID_MAX_COLUMNS" in _refusal(renamed)[0]


# --------------------------------------------------------------------------- memory


_MEMORY_PROBE = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from nlid_core.errors import DataValidationError
from nlid_core.io import load_record
out = {}
for path in map(Path, sys.argv[2:]):  # made by the test, so that making them does not count here
    start = time.perf_counter()
    try:
        load_record(path)
        out[path.name] = "loaded"
    except DataValidationError:
        out[path.name] = time.perf_counter() - start
# VmHWM: this program's own peak (getrusage's ru_maxrss would also count the forked test runner before exec)
hwm = [ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith("VmHWM:")]
out["peak_mb"] = float(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def test_hostile_files_are_refused_without_big_allocations(tmp_path: Path) -> None:
    paths = [str(make(tmp_path)) for make in (hf.xlsx_dimension_bomb, hf.xlsx_far_cell, hf.xlsx_zip_bomb,
                                                hf.mat_zlib_bomb, hf.parquet_rle_bomb, hf.parquet_page_bomb,
                                                hf.parquet_many_row_groups, hf.csv_long_line)]
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(REPO), *paths], capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    peak_mb = result.pop("peak_mb")
    assert all(isinstance(s, float) and s < QUICK_S for s in result.values()), result
    # pandas, pyarrow and scipy imported take about 120 MB; the files declare 1.5 GB to 10 GB; the largest of
    # all children of this test run (the probe, unless an earlier test ran a bigger one) agrees
    assert peak_mb < 400, f"peak {peak_mb:.0f} MB"


# --------------------------------------------------------------------------- fuzzing


def _seed_files() -> dict[str, bytes]:
    import tempfile

    a = hf.expected(40)
    df = pd.DataFrame(a)
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for ext, write in {
            "csv": lambda p: df.to_csv(p, index=False),
            "xlsx": lambda p: df.to_excel(p, index=False),
            "parquet": lambda p: df.to_parquet(p, compression=None),
        }.items():
            path = Path(d) / f"seed.{ext}"
            write(path)
            out[ext] = path.read_bytes()
    return out


_SEEDS = _seed_files()


def _parquet_data_end(raw: bytes) -> int:
    return len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")


_mutation = st.tuples(st.sampled_from(["flip", "cut", "insert", "set"]), st.floats(0, 1), st.binary(min_size=1,
                                                                                                    max_size=8))


@settings(deadline=None, derandomize=True, database=None,  # examples: the profile's (tests/conftest.py)
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ext=st.sampled_from(["csv", "xlsx", "xlsx-part", "parquet"]), mutations=st.lists(_mutation, min_size=1,
                                                                                          max_size=4))
def test_fuzzed_files_give_a_record_or_a_one_line_error(
    tmp_path: Path, ext: str, mutations: list[tuple[str, float, bytes]]
) -> None:
    """Mutated CSV, xlsx (the zip bytes, or one XML part re-zipped) and Parquet files.

    Parquet mutations stay out of the footer: some corrupt footers make
    pyarrow 26 abort the whole process (a C++ exception escaping), which only
    the isolated parsing worker can contain; MAT files are not mutated for the
    same reason (scipy segfaults).
    """

    def mutate(raw: bytes, span: int) -> bytes:
        data = bytearray(raw)
        for kind, where, blob in mutations:
            pos = min(int(where * span), max(len(data) - 1, 0))
            if kind == "flip" and data:
                data[pos] ^= blob[0] or 1
            elif kind == "cut" and ext != "parquet":
                del data[pos:]
            elif kind == "insert" and ext != "parquet":
                data[pos:pos] = blob
            elif data:
                data[pos] = blob[0]
        return bytes(data)

    path = tmp_path / f"fuzz.{ext.split('-')[0]}"
    if ext == "xlsx-part":
        source = tmp_path / "seed.xlsx"
        source.write_bytes(_SEEDS["xlsx"])
        with zipfile.ZipFile(source) as zin, zipfile.ZipFile(path, "w") as zout:
            names = zin.namelist()
            target = names[int(mutations[0][1] * (len(names) - 1))]
            for name in names:
                raw = zin.read(name)
                zout.writestr(name, mutate(raw, len(raw)) if name == target else raw)
    else:
        raw = _SEEDS[ext]
        path.write_bytes(mutate(raw, _parquet_data_end(raw) if ext == "parquet" else len(raw)))
    limits = Limits(max_rows=10_000, max_cells=100_000, max_uncompressed_mb=20)
    try:
        rec = load_record(path, limits=limits)
    except DataValidationError as exc:
        message = str(exc)
        assert message and message.isprintable() and "\n" not in message, repr(message)
        assert len(message) < 1_000
        event(f"{ext}: refused")
    else:
        assert isinstance(rec, Record) and rec.n >= 20
        event(f"{ext}: loaded")
