"""Tests of nlid_core.io: readers, column/unit mapping, writers and a bad-input corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.io

from nlid_core.errors import DataValidationError
from nlid_core.io import (
    load_record,
    load_records,
    parse_columns_spec,
    parse_units_spec,
    read_table,
    unit_factor,
    write_record,
)
from nlid_core.record import Record, from_arrays

N = 200
DT = 1e-3


def _arrays() -> dict[str, np.ndarray]:
    t = np.arange(N) * DT
    return {
        "t": t,
        "f": 2.5 * np.sin(2 * np.pi * 7.0 * t),
        "x": 1e-3 * np.sin(2 * np.pi * 7.0 * t + 0.3),
        "v": 0.044 * np.cos(2 * np.pi * 7.0 * t + 0.3),
    }


@pytest.fixture
def rec() -> Record:
    return from_arrays(**_arrays(), name="sine")


def _write_csv(path: Path, header: str, rows: list[list[Any]], sep: str = ",") -> Path:
    lines = [header] + [sep.join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(**changes: Any) -> list[list[Any]]:
    """Rows of t, f, x (repr strings) with ``changes = {(row, col): value}`` applied via ``cells``."""
    a = _arrays()
    rows: list[list[Any]] = [[repr(float(a["t"][i])), repr(float(a["f"][i])), repr(float(a["x"][i]))] for i in range(N)]
    for (i, j), value in changes.get("cells", {}).items():
        rows[i][j] = value
    return rows


def _assert_same(loaded: Record, ref: Record, channels: tuple[str, ...] = ("t", "f", "x", "v")) -> None:
    for c in channels:
        np.testing.assert_array_equal(getattr(loaded, c), getattr(ref, c), err_msg=c)


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_write_load_round_trip_is_exact(tmp_path: Path, rec: Record, ext: str) -> None:
    path = write_record(rec, tmp_path / f"rec.{ext}")
    assert path == tmp_path / f"rec.{ext}"
    loaded = load_record(path)
    _assert_same(loaded, rec)
    assert loaded.a is None
    assert loaded.name == "rec"
    assert loaded.source == str(path)
    assert dict(loaded.units) == {"t": "s", "f": "N", "x": "m", "v": "m/s", "a": "m/s^2"}


def test_write_csv_columns_and_full_precision(tmp_path: Path) -> None:
    a = _arrays()
    a["x"] = a["x"] + 1e-3 / 3.0  # many significant digits
    rec = from_arrays(a["t"], a["f"], a["x"], name="p")
    path = write_record(rec, tmp_path / "p.csv")
    assert path.read_text().splitlines()[0] == "t,f,x"
    np.testing.assert_array_equal(load_record(path).x, rec.x)


def test_excel_round_trip(tmp_path: Path, rec: Record) -> None:
    path = tmp_path / "rec.xlsx"
    pd.DataFrame(rec.to_dict()).to_excel(path, index=False, engine="openpyxl")
    loaded = load_record(path)
    for c in ("t", "f", "x", "v"):  # openpyxl writes 15-16 significant digits
        np.testing.assert_allclose(getattr(loaded, c), getattr(rec, c), rtol=1e-14, atol=1e-18, err_msg=c)


def test_mat_round_trip_vectors_and_scalar_ignored(tmp_path: Path, rec: Record) -> None:
    path = tmp_path / "rec.mat"
    scipy.io.savemat(path, {"t": rec.t, "f": rec.f[:, None], "x": rec.x, "v": rec.v, "fs": 1000.0})
    _assert_same(load_record(path), rec)


def test_mat_matrix_columns(tmp_path: Path, rec: Record) -> None:
    path = tmp_path / "m.mat"
    scipy.io.savemat(path, {"data": np.column_stack([rec.t, rec.f, rec.x])})
    assert list(read_table(path).columns) == ["data_0", "data_1", "data_2"]
    loaded = load_record(path, columns="t=data_0,f=data_1,x=data_2")
    _assert_same(loaded, rec, ("t", "f", "x"))


# --------------------------------------------------------------------------- text formats


def test_semicolon_decimal_comma_and_aliases(tmp_path: Path, rec: Record) -> None:
    rows = [[f"{t:.3f}".replace(".", ","), f"{f:.6f}".replace(".", ",")] + [repr(float(x)).replace(".", ",")]
            for t, f, x in zip(rec.t, rec.f, rec.x, strict=True)]
    path = _write_csv(tmp_path / "eu.csv", "Time;Force;Displacement", rows, sep=";")
    loaded = load_record(path)
    np.testing.assert_allclose(loaded.t, rec.t, atol=1e-12)
    np.testing.assert_array_equal(loaded.x, rec.x)


@pytest.mark.parametrize("sep", ["\t", " ", "   "])
def test_tab_and_whitespace_delimiters(tmp_path: Path, rec: Record, sep: str) -> None:
    path = _write_csv(tmp_path / "w.txt", sep.join(["time", "force", "disp"]), _rows(), sep=sep)
    _assert_same(load_record(path), rec, ("t", "f", "x"))


def test_trailing_comma_quoted_header_and_whitespace_names(tmp_path: Path, rec: Record) -> None:
    rows = [r + [""] for r in _rows()]
    path = _write_csv(tmp_path / "v.csv", '" V1 ","V2","V3",', rows)
    df = read_table(path)
    assert list(df.columns) == ["V1", "V2", "V3"]
    loaded = load_record(path, columns={"t": "V1", "f": "V2", "x": "V3"})
    _assert_same(loaded, rec, ("t", "f", "x"))
    assert loaded.meta["columns"] == {"t": "V1", "f": "V2", "x": "V3"}


def test_headerless_text_gets_numbered_columns(tmp_path: Path) -> None:
    path = tmp_path / "h.txt"
    path.write_text("\n".join(" ".join(r) for r in _rows()) + "\n")
    df = read_table(path)
    assert list(df.columns) == ["0", "1", "2"]
    assert df.shape == (N, 3)
    assert load_record(path, columns="t=0,f=1,x=2").n == N


def test_partial_mapping_falls_back_to_names(tmp_path: Path, rec: Record) -> None:
    path = _write_csv(tmp_path / "m.csv", "t,F_meas,x", _rows())
    loaded = load_record(path, columns="f=F_meas", name="custom")
    assert loaded.name == "custom"
    _assert_same(loaded, rec, ("t", "f", "x"))


# --------------------------------------------------------------------------- units


def test_mm_scaling_is_exactly_1e_minus_3(tmp_path: Path) -> None:
    a = _arrays()
    x_mm = a["x"] * 1e3
    path = tmp_path / "mm.csv"
    pd.DataFrame({"t": a["t"], "f": a["f"], "x": x_mm}).to_csv(path, index=False)
    loaded = load_record(path, units="x=mm")
    np.testing.assert_array_equal(loaded.x, x_mm * 1e-3)
    assert loaded.unit("x") == "m"
    assert loaded.meta["file_units"] == {"x": "mm"}


def test_g_and_kn_and_ms_and_numeric_factor(tmp_path: Path) -> None:
    a = _arrays()
    acc_g = np.cos(a["t"])
    path = tmp_path / "g.csv"
    pd.DataFrame({"t": a["t"] * 1e3, "f": a["f"], "x": a["x"], "a": acc_g}).to_csv(path, index=False)
    loaded = load_record(path, units={"a": "g", "f": "kN", "t": "ms", "x": "0.5"})
    np.testing.assert_array_equal(loaded.a, acc_g * 9.80665)
    np.testing.assert_array_equal(loaded.f, a["f"] * 1e3)
    np.testing.assert_allclose(loaded.t, a["t"], rtol=1e-12)
    np.testing.assert_array_equal(loaded.x, a["x"] * 0.5)
    assert (loaded.unit("a"), loaded.unit("f"), loaded.unit("x")) == ("m/s^2", "N", "m")


def test_volts_record_keeps_unit(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "silverbox.csv", "t,V1,V2", _rows())
    loaded = load_record(path, columns="t=t,f=V1,x=V2", units="f=V,x=V")
    assert loaded.unit("f") == "V" and loaded.unit("x") == "V" and loaded.unit("t") == "s"
    np.testing.assert_array_equal(loaded.f, _arrays()["f"])
    assert any("`V`" in w for w in loaded.warnings)


def test_header_unit_is_applied(tmp_path: Path) -> None:
    a = _arrays()
    path = tmp_path / "hu.csv"
    pd.DataFrame({"time [s]": a["t"], "Force (kN)": a["f"], "x [mm]": a["x"] * 1e3}).to_csv(path, index=False)
    loaded = load_record(path)
    np.testing.assert_array_equal(loaded.f, a["f"] * 1e3)
    np.testing.assert_allclose(loaded.x, a["x"], rtol=1e-15)
    assert any("x [mm]" in w for w in loaded.warnings)


def test_bracket_that_is_not_a_unit_is_ignored(tmp_path: Path, rec: Record) -> None:
    path = _write_csv(tmp_path / "nu.csv", "t,f (sensor 2),x(t)", _rows())
    loaded = load_record(path, columns="f=f (sensor 2),x=x(t)")
    _assert_same(loaded, rec, ("t", "f", "x"))
    assert loaded.unit("f") == "N" and loaded.warnings == ()


def test_unit_factor_table() -> None:
    assert unit_factor("x", "mm") == 1e-3
    assert unit_factor("a", "g") == 9.80665
    assert unit_factor("f", "lbf") == pytest.approx(4.4482216152605)
    assert unit_factor("v", "in/s") == 0.0254
    assert unit_factor("t", "us") == 1e-6
    assert unit_factor("x", "V") is None


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("x=kN", "is a force unit"),
        ("x=m/s", "is a velocity unit"),
        ("f=KN", "did you mean `kN`"),
        ("x=-2", "positive number"),
        ("x=0", "positive number"),
        ("q=mm", "unknown channel `q`"),
        ("xmm", "malformed units spec fragment `xmm`"),
        ("x=", "empty value"),
        ("x=mm,x=m", "given twice"),
    ],
)
def test_bad_units_spec(spec: str, match: str) -> None:
    with pytest.raises(DataValidationError, match=match):
        parse_units_spec(spec)


def test_parse_specs() -> None:
    assert parse_columns_spec("t=time, f=force ,x=disp,") == {"t": "time", "f": "force", "x": "disp"}
    assert parse_columns_spec("force=F,displacement=X") == {"f": "F", "x": "X"}
    assert parse_units_spec("x=mm,f=kN,a=g") == {"x": "mm", "f": "kN", "a": "g"}
    assert parse_columns_spec("") == {}


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("t=time,speed=v", "unknown channel `speed` in columns spec fragment `speed=v`"),
        ("t=time,f", "malformed columns spec fragment `f`"),
        ("t=a,f=a", "mapped to both"),
        ("t=", "empty value"),
    ],
)
def test_bad_columns_spec(spec: str, match: str) -> None:
    with pytest.raises(DataValidationError, match=match):
        parse_columns_spec(spec)


# --------------------------------------------------------------------------- several files


def test_load_records_and_error_prefix(tmp_path: Path) -> None:
    good = [_write_csv(tmp_path / f"level{i}.csv", "t,f,x", _rows()) for i in range(2)]
    recs = load_records(good)
    assert [r.name for r in recs] == ["level0", "level1"]
    bad = _write_csv(tmp_path / "level2.csv", "t,f,x", _rows(cells={(4, 1): "oops"}))
    with pytest.raises(DataValidationError, match=r'^level2\.csv: column `f` row 4: "oops" is not a number'):
        load_records([*good, bad])
    with pytest.raises(DataValidationError, match="no files"):
        load_records([])


def test_load_records_units_must_agree(tmp_path: Path) -> None:
    p1 = _write_csv(tmp_path / "a.csv", "t,f,x", _rows())
    p2 = _write_csv(tmp_path / "b.csv", "t,f [V],x", _rows())
    with pytest.raises(DataValidationError, match="same units"):
        load_records([p1, p2])


def test_write_record_bad_extension(tmp_path: Path, rec: Record) -> None:
    with pytest.raises(DataValidationError, match="unsupported extension"):
        write_record(rec, tmp_path / "rec.json")


# --------------------------------------------------------------------------- bad-input corpus


def _bytes(data: bytes, name: str = "bad.csv") -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        p = d / name
        p.write_bytes(data)
        return p

    return make


def _csv(header: str = "t,f,x", name: str = "bad.csv", **changes: Any) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        return _write_csv(d / name, header, _rows(**changes))

    return make


def _time_csv(t: np.ndarray) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        a = _arrays()
        rows = [[repr(float(t[i])), repr(float(a["f"][i])), repr(float(a["x"][i]))] for i in range(N)]
        return _write_csv(d / "bad.csv", "t,f,x", rows)

    return make


def _short_line(d: Path) -> Path:
    rows = _rows()
    rows[30] = rows[30][:2]
    return _write_csv(d / "bad.csv", "t,f,x", rows)


def _long_line(d: Path) -> Path:
    rows = _rows()
    rows[30] = [*rows[30], "9"]
    return _write_csv(d / "bad.csv", "t,f,x", rows)


def _excel(cells: dict[tuple[int, str], Any]) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        df = pd.DataFrame({c: v.astype(object) for c, v in _arrays().items() if c != "v"})
        for (i, c), value in cells.items():
            df.loc[i, c] = value
        p = d / "bad.xlsx"
        df.to_excel(p, index=False, engine="openpyxl")
        return p

    return make


def _parquet_nan(d: Path) -> Path:
    a = _arrays()
    a["f"][7] = np.nan
    p = d / "bad.parquet"
    pd.DataFrame(a).to_parquet(p)
    return p


def _mat_v73(d: Path) -> Path:
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 ."
    header = text.ljust(116, b" ") + b"\x00" * 8 + b"\x00\x02IM"
    p = d / "bad.mat"
    p.write_bytes(header.ljust(512, b"\x00") + b"\x89HDF\r\n\x1a\n" + bytes(64))
    return p


def _mat_hdf_version_only(d: Path) -> Path:
    # Header text that does not say 7.3 but carries the v7.3 version bytes: scipy's
    # NotImplementedError must be wrapped too.
    header = b"MATLAB 5.0 MAT-file".ljust(116, b" ") + b"\x00" * 8 + b"\x00\x02IM"
    p = d / "bad.mat"
    p.write_bytes(header + bytes(64))
    return p


def _mat_lengths(d: Path) -> Path:
    p = d / "bad.mat"
    scipy.io.savemat(p, {"t": np.arange(50.0), "f": np.arange(50.0), "x": np.arange(40.0)})
    return p


_RNG_GARBAGE = bytes(np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8)) + b"\x00"
_A = _arrays()
_T_DEC = _A["t"].copy()
_T_DEC[[50, 51]] = _T_DEC[[51, 50]]
_T_DUP = _A["t"].copy()
_T_DUP[80] = _T_DUP[79]
_T_IRR = _A["t"].copy()
_T_IRR[100:] += 0.4 * DT

BAD_INPUTS: list[tuple[str, Callable[[Path], Path], dict[str, Any], str]] = [
    ("empty_file", _bytes(b""), {}, "file bad.csv is empty"),
    ("blank_lines_only", _bytes(b"\n  \n\n"), {}, "file bad.csv is empty"),
    ("header_only", _bytes(b"t,f,x\n"), {}, "file bad.csv has a header but no data rows"),
    ("nan_row", _csv(cells={(5, 1): "nan"}), {}, "`f` (force) has a non-finite value (nan) at row 5"),
    ("text_cell", _csv(cells={(17, 2): "abc"}), {}, 'column `x` row 17: "abc" is not a number'),
    ("text_cell_mapped", _csv(header="t,f,disp", cells={(3, 2): "1.2.3"}), {"columns": "x=disp"},
     'column `disp` (mapped to `x`) row 3: "1.2.3" is not a number'),
    ("decreasing_time", _time_csv(_T_DEC), {}, "time `t` decreases between rows 50 and 51"),
    ("duplicated_time", _time_csv(_T_DUP), {}, "time `t` is duplicated at rows 79 and 80"),
    ("irregular_time", _time_csv(_T_IRR), {}, "irregular sampling"),
    ("short_line", _short_line, {}, "column `x` has 1 empty cells (first at row 30): columns have different lengths"),
    ("empty_cell", _csv(cells={(12, 1): ""}), {}, "column `f` has 1 empty cells (first at row 12)"),
    ("long_line", _long_line, {}, "file bad.csv is not a readable CSV file"),
    ("unknown_mapped_column", _csv(), {"columns": "x=foo"},
     "column `foo` (mapped to `x`) is not in bad.csv; available columns: `t`, `f`, `x`"),
    ("missing_f", _csv(header="t,force_N,x"), {},
     "no `f` (force) column in bad.csv; available columns: `t`, `force_N`, `x`"),
    ("missing_f_hint", _csv(header="t,force_N,x"), {}, "--columns f=NAME"),
    # only the time column found by name (a drive's `t, qm, vir`): a one-DOF record, its force is `f`, not `f1`
    ("missing_f_and_x", _csv(header="t,qm,vir"), {}, "no `f` (force) column in bad.csv; available columns: `t`, `qm`"),
    ("ambiguous_x", _bytes(b"t,f,x,disp\n0,0,0,0\n"), {}, "several columns that could be `x`"),
    ("binary_garbage", _bytes(_RNG_GARBAGE), {}, "file bad.csv is not a readable CSV file (binary or corrupt content)"),
    ("control_chars", _bytes(b"t,f,x\n" + bytes(range(1, 9)) * 50), {}, "is not a readable CSV file"),
    ("huge_value", _csv(cells={(3, 2): "1e30"}), {},
     "`x` (displacement) has an implausibly large value 1e+30 at row 3"),
    ("too_few_samples", _bytes(b"t,f,x\n0,0,0\n1,1,1\n"), {}, "at least 20 are needed"),
    ("mat_v73", _mat_v73, {}, "re-save it in MATLAB with save(name, ..., '-v7')"),
    ("mat_v73_scipy", _mat_hdf_version_only, {}, "MATLAB v7.3 (HDF5)"),
    ("mat_garbage", _bytes(b"this is not a mat file at all" * 10, "bad.mat"), {}, "is not a readable MAT file"),
    ("mat_lengths", _mat_lengths, {}, "another length than the signals (50 samples) were left out: `x` (40)"),
    ("xlsx_garbage", _bytes(b"PK\x03\x04garbage" * 20, "bad.xlsx"), {}, "is not a readable Excel file"),
    ("parquet_garbage", _bytes(b"PAR1garbage" * 20, "bad.parquet"), {}, "is not a readable Parquet file"),
    ("excel_text_cell", _excel({(9, "x"): "n/a"}), {}, 'column `x` row 9: "n/a" is not a number'),
    ("excel_short_column", _excel({(198, "f"): None, (199, "f"): None}), {},
     "column `f` has 2 empty cells (first at row 198)"),
    ("parquet_nan", _parquet_nan, {}, "`f` (force) has a non-finite value (nan) at row 7"),
    ("xls_garbage", _bytes(b"garbage" * 20, "bad.xls"), {}, "file bad.xls"),
    ("unknown_extension", _bytes(b"t,f,x\n", "bad.json"), {}, "unsupported extension `.json`; supported: .csv"),
    ("missing_path", lambda d: d / "nope.csv", {}, "does not exist"),
    ("wrong_quantity_unit", _csv(), {"units": {"x": "kN"}}, "is a force unit"),
    ("wrong_header_unit", _csv(header="t,f,x (kN)"), {}, "column `x (kN)` in bad.csv"),
]


@pytest.mark.parametrize(("make", "kwargs", "match"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_corpus(tmp_path: Path, make: Callable[[Path], Path], kwargs: dict[str, Any], match: str) -> None:
    path = make(tmp_path)
    with pytest.raises(DataValidationError) as info:
        load_record(path, **kwargs)
    assert match in str(info.value)


def test_irregular_time_fixed_by_resample(tmp_path: Path) -> None:
    path = _time_csv(_T_IRR)(tmp_path)
    loaded = load_record(path, resample=True)
    assert np.allclose(np.diff(loaded.t), DT)
    assert any("resampled" in w for w in loaded.warnings)


def test_read_table_wraps_errors(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match="is empty"):
        read_table(_bytes(b"")(tmp_path))
    with pytest.raises(DataValidationError, match="does not exist"):
        read_table(tmp_path / "missing.parquet")


def test_comment_lines_and_utf16(tmp_path: Path, rec: Record) -> None:
    text = "# rig 3, run 7\n# sampled at 1 kHz\nt,f,x\n" + "\n".join(",".join(r) for r in _rows()) + "\n"
    p8 = tmp_path / "c.csv"
    p8.write_text(text, encoding="utf-8")
    _assert_same(load_record(p8), rec, ("t", "f", "x"))
    p16 = tmp_path / "u.csv"
    p16.write_bytes(text.encode("utf-16"))
    _assert_same(load_record(p16), rec, ("t", "f", "x"))


def test_sampling_rate_and_row_selection(tmp_path):
    import numpy as np
    import pandas as pd

    from nlid_core.errors import DataValidationError
    from nlid_core.io import load_record

    n = 500
    df = pd.DataFrame({"u": np.sin(np.arange(n) / 7.0), "y": np.cos(np.arange(n) / 7.0)})
    path = tmp_path / "no_time.csv"
    df.to_csv(path, index=False)
    rec = load_record(path, columns="f=u,x=y", fs=100.0, rows="100:300")
    assert rec.n == 200
    assert rec.t[0] == pytest.approx(1.0) and rec.dt == pytest.approx(0.01)
    assert rec.x[0] == pytest.approx(np.cos(100 / 7.0))
    with pytest.raises(DataValidationError, match="--fs"):
        load_record(path, columns="f=u,x=y")
    with pytest.raises(DataValidationError, match="START:STOP"):
        load_record(path, columns="f=u,x=y", fs=100.0, rows="10-20")
    with pytest.raises(DataValidationError, match="selects nothing"):
        load_record(path, columns="f=u,x=y", fs=100.0, rows="600:700")


def test_mat_file_with_a_short_settings_vector_loads(tmp_path):
    import numpy as np
    from scipy.io import savemat

    from nlid_core.io import load_record

    t = np.arange(100) / 50.0
    path = tmp_path / "with_settings.mat"
    savemat(path, {"t": t, "f": np.sin(t), "x": np.cos(t), "gains": np.array([1.0, 2.0, 3.0])})
    rec = load_record(path)
    assert rec.n == 100
    assert any("`gains` (3)" in w for w in rec.warnings)


def test_a_single_glitch_sample_is_rejected(tmp_path):
    import numpy as np
    import pandas as pd

    from nlid_core.errors import DataValidationError
    from nlid_core.io import load_record

    t = np.arange(300) * 0.01
    x = 0.01 * np.sin(t * 5)
    x[123] = 50.0  # a dropout written as a huge reading
    pd.DataFrame({"t": t, "f": np.cos(t * 5), "x": x}).to_csv(tmp_path / "glitch.csv", index=False)
    with pytest.raises(DataValidationError, match="row 123 holds 50"):
        load_record(tmp_path / "glitch.csv")
    # an impulse that spans a few samples is a signal, not a glitch
    f = np.zeros(300)
    f[10:13] = [200.0, 900.0, 300.0]
    pd.DataFrame({"t": t, "f": f, "x": 0.001 * np.sin(t)}).to_csv(tmp_path / "hammer.csv", index=False)
    assert load_record(tmp_path / "hammer.csv").n == 300


# --------------------------------------------------------------------------- loading options named per front end
from nlid_core.load_options import LOAD_OPTIONS, option_ref, reword  # noqa: E402

PAGE = {"columns": "'Column mapping' {value}", "units": "'Units' {value}", "fs": "'Sampling rate [Hz]'",
        "rows": "'Rows to keep' {value}", "resample": "the box 'Resample'"}


def test_option_references_are_flags_and_reword_names_the_fields():
    assert option_ref("fs") == "--fs" and option_ref("columns", "t=NAME") == "--columns t=NAME"
    msg = (f"map one with {option_ref('columns', 't=NAME')} (or give the sampling rate with {option_ref('fs')}"
           f" when the file has no time column); {option_ref('rows', '5:3')} selects nothing"
           f" ({option_ref('resample')})")
    assert reword(msg, PAGE) == ("map one with 'Column mapping' t=NAME (or give the sampling rate with"
                                 " 'Sampling rate [Hz]' when the file has no time column); 'Rows to keep' 5:3"
                                 " selects nothing (the box 'Resample')")
    assert reword(msg, {}) == msg  # a front end without names keeps the flags
    # a file column that looks like a flag is data, not an option
    assert reword("column `--fs` (mapped to `t`)", PAGE) == "column `--fs` (mapped to `t`)"
    for bad in (("speed",), ("fs", "100"), ("columns", "t NAME"), ("rows", "12")):
        with pytest.raises(DataValidationError):
            option_ref(*bad)
    assert set(PAGE) == set(LOAD_OPTIONS)


def test_loader_messages_name_the_options_by_flag(tmp_path: Path):
    path = tmp_path / "no_time.csv"
    pd.DataFrame({"u": np.sin(np.arange(300) / 7.0), "y": np.cos(np.arange(300) / 7.0)}).to_csv(path, index=False)
    with pytest.raises(DataValidationError) as info:
        load_record(path)
    message = str(info.value)
    assert "--columns t=NAME" in message and "--fs" in message
    assert "'Column mapping' t=NAME" in reword(message, PAGE) and "--" not in reword(message, PAGE)
    timed = tmp_path / "timed.csv"
    pd.DataFrame({"t": np.arange(300) / 10.0, "f": np.sin(np.arange(300) / 7.0),
                  "x": np.cos(np.arange(300) / 7.0)}).to_csv(timed, index=False)
    with pytest.raises(DataValidationError, match="give either the time column or --fs, not both"):
        load_record(timed, fs=10.0)
    irregular = np.arange(300) / 10.0
    irregular[100:] += 0.05
    with pytest.raises(DataValidationError, match=r"resample to a uniform grid \(--resample\)"):
        from_arrays(irregular, np.sin(irregular), np.cos(irregular))


def test_time_from_an_exact_sampling_rate(tmp_path: Path):
    path = tmp_path / "silver.csv"
    pd.DataFrame({"V1": np.sin(np.arange(400) / 7.0), "V2": np.cos(np.arange(400) / 7.0)}).to_csv(path, index=False)
    rec = load_record(path, columns="f=V1,x=V2", units="f=V,x=V", fs=610.3515625, rows="100:400")
    assert f"{rec.fs:.10g}" == "610.3515625" and rec.t[0] == 100 / 610.3515625
    assert "time built from the sampling rate 610.3515625 Hz" in rec.warnings
