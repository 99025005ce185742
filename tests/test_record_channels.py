"""Records with named channels for several DOFs: grammar, Record API, loaders, units, derivatives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlid_core import cli
from nlid_core.channels import ChannelKey, canonical_channel, parse_channel
from nlid_core.errors import DataValidationError
from nlid_core.guard import load_record_guarded
from nlid_core.io import load_record, parse_columns_spec, parse_units_spec, unit_factor, write_record
from nlid_core.record import Record, from_arrays, from_channels, resample_uniform
from nlid_core.signals import derive_missing, filter_record

FS = 1000.0
N = 4000
W1, W2 = 2 * np.pi * 3.0, 2 * np.pi * 5.0


def _t() -> np.ndarray:
    return np.arange(N) / FS


def _signals() -> dict[str, np.ndarray]:
    t = _t()
    return {
        "t": t,
        "f1": 10.0 * np.sin(W1 * t),
        "x1": 1e-3 * np.sin(W1 * t + 0.3),
        "x2": 2e-3 * np.sin(W2 * t + 0.1),
    }


@pytest.fixture
def two_dof_csv(tmp_path: Path) -> Path:
    """Columns time, F, X1 (m) and X2 (mm): header names the loader never takes by itself."""
    s = _signals()
    path = tmp_path / "two_dof.csv"
    pd.DataFrame({"time": s["t"], "F": s["f1"], "X1": s["x1"], "X2": s["x2"] * 1e3}).to_csv(path, index=False)
    return path


@pytest.fixture
def named_csv(tmp_path: Path) -> Path:
    """Columns t, f1, x1, x2 with x2 in mm."""
    s = _signals()
    path = tmp_path / "named.csv"
    pd.DataFrame({"t": s["t"], "f1": s["f1"], "x1": s["x1"], "x2": s["x2"] * 1e3}).to_csv(path, index=False)
    return path


def _check_two_dof(rec: Record) -> None:
    s = _signals()
    assert rec.channels == ("t", "f1", "x1", "x2")
    assert rec.n_dof == 2
    assert rec.inputs == ("f1",) and rec.outputs == ("x1", "x2") and rec.measured == ("x1", "x2")
    assert rec.channel_units == {"t": "s", "f1": "N", "x1": "m", "x2": "m"}
    np.testing.assert_allclose(rec.channel("x2"), s["x2"], rtol=1e-12)
    np.testing.assert_allclose(rec.channel("x1"), s["x1"], rtol=1e-12)
    np.testing.assert_allclose(rec.input_array, s["f1"][:, None], rtol=1e-12)
    assert rec.input_array.shape == (N, 1)


# --------------------------------------------------------------------------- grammar


@pytest.mark.parametrize(
    ("name", "key"),
    [("t", ("t", 0)), ("x", ("x", 1)), ("x1", ("x", 1)), ("f2", ("f", 2)), ("a12", ("a", 12)), ("v99", ("v", 99))],
)
def test_channel_grammar(name: str, key: tuple[str, int]) -> None:
    assert parse_channel(name) == ChannelKey(*key)


@pytest.mark.parametrize(
    ("name", "match"),
    [("y3", "unknown channel `y3`"), ("x0", "DOF number 0"), ("f100", "DOF number 100"), ("x01", "leading zeros"),
     ("t1", "no DOF number"), ("X2", "unknown channel"), ("", "unknown channel")],
)
def test_bad_channel_names(name: str, match: str) -> None:
    with pytest.raises(DataValidationError, match=match):
        parse_channel(name)


def test_canonical_spelling_depends_on_the_number_of_dofs() -> None:
    assert canonical_channel("x1", 1) == "x" and canonical_channel("x", 2) == "x1" and canonical_channel("t", 3) == "t"


# --------------------------------------------------------------------------- Record


def test_record_from_channels_api() -> None:
    rec = from_channels(_signals(), units={"x2": "mm"})
    assert rec.channels == ("t", "f1", "x1", "x2") and rec.n_dof == 2
    assert rec.unit("x2") == "mm" and rec.unit("x") == "m" and rec.unit("v2") == "m/s"
    assert rec.has("x") and rec.has("x1") and rec.has("x2") and not rec.has("v2")
    assert rec.channel("x") is rec.x and rec.channel("f1") is rec.f
    assert set(rec.extra_channels) == {"x2"}
    assert list(rec.to_dict()) == ["t", "f1", "x1", "x2"]
    with pytest.raises(DataValidationError, match="no `v2` \\(velocity\\) channel"):
        rec.channel("v2")
    with pytest.raises(DataValidationError, match="unknown channel `y3`"):
        rec.has("y3")
    part = rec.slice(100, 600)
    assert part.n == 500 and part.channels == rec.channels
    np.testing.assert_array_equal(part.channel("x2"), rec.channel("x2")[100:600])


def test_several_inputs_make_a_time_major_array() -> None:
    s = _signals()
    rec = from_channels({**s, "f2": 2.0 * s["f1"] + 1.0})
    assert rec.inputs == ("f1", "f2")
    assert rec.input_array.shape == (N, 2) and rec.input_array.flags.c_contiguous
    np.testing.assert_array_equal(rec.input_array[:, 1], 2.0 * s["f1"] + 1.0)


@pytest.mark.parametrize(
    ("channels", "match"),
    [
        ({"x3": None}, "missing required channel `x2`"),
        ({"x": None}, "gives channel `x1` twice"),
        ({"y3": None}, "invalid channel: unknown channel `y3`"),
        ({"f1": None, "f": None}, "gives channel `f1` twice"),
    ],
)
def test_from_channels_refuses(channels: dict[str, None], match: str) -> None:
    s = _signals()
    extra = {k: s["x2"] for k in channels}
    base = {"t": s["t"], "f1": s["f1"], "x1": s["x1"]}
    if "x3" in channels:
        base = {"t": s["t"], "f": s["f1"], "x": s["x1"]}
    with pytest.raises(DataValidationError, match=match):
        from_channels({**base, **extra})


def test_every_channel_is_validated() -> None:
    s = _signals()
    bad = s["x2"].copy()
    bad[7] = np.nan
    with pytest.raises(DataValidationError, match="channel `x2` \\(displacement\\) has a non-finite value .* row 7"):
        from_channels({**s, "x2": bad})
    with pytest.raises(DataValidationError, match="channel `x2` has 10 samples but `t` has"):
        from_channels({**s, "x2": s["x2"][:10]})
    with pytest.raises(DataValidationError, match="extra_channels"):
        Record(name="r", t=s["t"], f=s["f1"], x=s["x1"], extra_channels={"x1": s["x2"]}).replace()


def test_with_channels_adds_a_dof_and_renames() -> None:
    s = _signals()
    one = from_arrays(s["t"], s["f1"], s["x1"], units={"x": "m"})
    two = one.with_channels({"x2": s["x2"]})
    assert one.channels == ("t", "f", "x") and two.channels == ("t", "f1", "x1", "x2")
    assert two.unit("x1") == "m" and two.n_dof == 2
    back = two.with_channels({"x2": None})
    assert back.channels == ("t", "f", "x") and back.n_dof == 1


def test_resampling_keeps_every_channel() -> None:
    s = _signals()
    t = s["t"].copy()
    t[1:-1] += 1e-4 / FS * np.sin(np.arange(1, N - 1))  # jitter well inside a sample
    t[2000] += 0.3 / FS
    rec = from_channels({**s, "t": t}, resample=True)
    assert rec.channels == ("t", "f1", "x1", "x2") and any("resampled" in w for w in rec.warnings)
    again = resample_uniform(rec, fs=500.0)
    assert again.channels == rec.channels and again.fs == pytest.approx(500.0)


# --------------------------------------------------------------------------- single DOF unchanged


def test_single_dof_names_stay_bare_and_accept_synonyms() -> None:
    s = _signals()
    rec = from_arrays(s["t"], s["f1"], s["x1"])
    assert rec.channels == ("t", "f", "x") and rec.n_dof == 1 and rec.extra_channels == {}
    assert dict(rec.units) == {"t": "s", "f": "N", "x": "m", "v": "m/s", "a": "m/s^2"}
    assert rec.has("x1") and rec.channel("f1") is rec.f and rec.unit("x1") == "m"
    assert rec.inputs == ("f",) and rec.outputs == ("x",) and rec.measured == ("x",)
    same = from_channels({"t": s["t"], "f1": s["f1"], "x1": s["x1"]}, units={"x1": "mm"}, derived=())
    assert same.channels == ("t", "f", "x") and same.units["x"] == "mm" and "x1" not in same.units
    derived = derive_missing(rec, method="gradient")
    assert derived.channels == ("t", "f", "x", "v", "a") and derived.derived == ("v", "a")
    assert [w.split(" by ")[0] for w in derived.warnings] == ["v derived from x", "a derived from x"]


def test_single_dof_file_round_trip_keeps_bare_columns(tmp_path: Path) -> None:
    s = _signals()
    rec = from_arrays(s["t"], s["f1"], s["x1"])
    path = write_record(rec, tmp_path / "one.csv")
    assert pd.read_csv(path).columns.tolist() == ["t", "f", "x"]
    back = load_record(path, columns="f1=f")
    assert back.channels == ("t", "f", "x") and back.meta["columns"] == {"t": "t", "f": "f", "x": "x"}


def test_voltage_channel_names_are_not_taken_by_name(tmp_path: Path) -> None:
    """``V1``/``V2`` are voltages in lab files, never velocities by default."""
    s = _signals()
    path = tmp_path / "volts.csv"
    pd.DataFrame({"t": s["t"], "f": s["f1"], "x": s["x1"], "V1": s["x2"], "A2": s["x2"]}).to_csv(path, index=False)
    rec = load_record(path)
    assert rec.channels == ("t", "f", "x")


# --------------------------------------------------------------------------- loaders


def test_two_dof_csv_by_name_through_the_guarded_loader(named_csv: Path) -> None:
    rec = load_record_guarded(named_csv, units="x2=mm")
    _check_two_dof(rec)
    assert rec.meta["columns"] == {"t": "t", "f1": "f1", "x1": "x1", "x2": "x2"}
    assert rec.meta["file_units"] == {"x2": "mm"}


def test_two_dof_csv_through_the_cli_options(two_dof_csv: Path) -> None:
    argv = ["identify", str(two_dof_csv), "--columns", "t=time,f1=F,x1=X1,x2=X2", "--units", "x2=mm"]
    args = cli.build_parser(argv).parse_args(argv)
    assert args.columns == {"t": "time", "f1": "F", "x1": "X1", "x2": "X2"} and args.units == {"x2": "mm"}
    rec = load_record_guarded(args.data[0], columns=args.columns, units=args.units)
    _check_two_dof(rec)
    assert rec.meta["columns"] == {"t": "time", "f1": "F", "x1": "X1", "x2": "X2"}
    same = load_record(two_dof_csv, columns="t=time,force=F,disp1=X1,disp_2=X2", units="disp2=mm")
    _check_two_dof(same)


def test_bare_names_are_dof_one_in_a_two_dof_file(two_dof_csv: Path) -> None:
    rec = load_record(two_dof_csv, columns="t=time,f=F,x=X1,x2=X2", units={"x2": "mm"})
    _check_two_dof(rec)


def test_a_header_unit_converts_a_numbered_channel(tmp_path: Path) -> None:
    s = _signals()
    path = tmp_path / "hdr.csv"
    pd.DataFrame({"t": s["t"], "force": s["f1"], "disp1 [m]": s["x1"], "disp2 [mm]": s["x2"] * 1e3}).to_csv(
        path, index=False
    )
    rec = load_record(path)
    _check_two_dof(rec)
    assert any("`mm` of `x2`" in w for w in rec.warnings)


def test_write_and_read_back_two_dofs(tmp_path: Path) -> None:
    rec = derive_missing(from_channels(_signals()), method="gradient")
    path = write_record(rec, tmp_path / "two.parquet")
    back = load_record(path)
    assert back.channels == rec.channels == ("t", "f1", "x1", "x2", "v1", "v2", "a1", "a2")
    for c in rec.channels:
        np.testing.assert_array_equal(back.channel(c), rec.channel(c))


def test_a_missing_displacement_of_a_dof_is_named(tmp_path: Path) -> None:
    s = _signals()
    path = tmp_path / "no_x2.csv"
    pd.DataFrame({"t": s["t"], "f1": s["f1"], "x1": s["x1"], "v2": s["x2"]}).to_csv(path, index=False)
    with pytest.raises(DataValidationError, match="no `x2` \\(displacement\\) column .*--columns x2=NAME"):
        load_record(path)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("t=time,y3=X2", "unknown channel `y3` in columns spec"),
        ("t=time,x0=X2", "DOF number 0.*columns spec fragment `x0=X2`"),
        ("t=time,f100=F", "DOF number 100.*columns spec fragment `f100=F`"),
        ("t=time,x2=X1,x2=X2", "channel `x2` is given twice in columns spec"),
        ("t=time,x=X1,x1=X2", "channel `x1` is given twice in columns spec.*same channel"),
    ],
)
def test_bad_channel_names_in_the_column_option(two_dof_csv: Path, spec: str, match: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DataValidationError, match=match):
        parse_columns_spec(spec)
    with pytest.raises(DataValidationError, match=match):
        load_record_guarded(two_dof_csv, columns=spec)
    assert cli.main(["identify", str(two_dof_csv), "--columns", spec]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "argument --columns:" in err
    assert "unknown channel" in err or "DOF number" in err or "given twice" in err


@pytest.mark.parametrize(("spec", "match"), [("x3=kN", "force unit"), ("y2=mm", "unknown channel `y2`"),
                                              ("x2=mm,disp2=m", "given twice")])
def test_bad_unit_specs_name_the_channel(spec: str, match: str) -> None:
    with pytest.raises(DataValidationError, match=match):
        parse_units_spec(spec)


def test_unit_factor_reads_the_quantity_from_the_letter() -> None:
    assert unit_factor("x2", "mm") == 1e-3 and unit_factor("a12", "g") == 9.80665 and unit_factor("f3", "kN") == 1e3
    assert parse_units_spec("x2=mm,acc_2=g") == {"x2": "mm", "a2": "g"}


# --------------------------------------------------------------------------- derived channels


@pytest.mark.parametrize("method", ["savgol", "spectral"])
def test_derive_missing_gives_every_dof_its_derivatives(method: str) -> None:
    s = _signals()
    rec = derive_missing(from_channels(s), method=method)
    assert rec.channels == ("t", "f1", "x1", "x2", "v1", "v2", "a1", "a2")
    assert rec.derived == ("v1", "a1", "v2", "a2") and rec.measured == ("x1", "x2")
    assert rec.is_derived("v2") and not rec.is_derived("x2")
    assert rec.unit("v2") == "m/s" and rec.unit("a2") == "m/s^2"
    assert any(w.startswith("v2 derived from x2 by") for w in rec.warnings)
    t = s["t"]
    exact = {
        "v1": 1e-3 * W1 * np.cos(W1 * t + 0.3),
        "a1": -1e-3 * W1**2 * np.sin(W1 * t + 0.3),
        "v2": 2e-3 * W2 * np.cos(W2 * t + 0.1),
        "a2": -2e-3 * W2**2 * np.sin(W2 * t + 0.1),
    }
    inner = slice(200, N - 200)
    for c, want in exact.items():
        err = np.max(np.abs(rec.channel(c)[inner] - want[inner])) / np.max(np.abs(want))
        assert err < 1e-3, (c, err)


def test_acceleration_of_a_dof_comes_from_its_measured_velocity() -> None:
    s = _signals()
    v2 = 2e-3 * W2 * np.cos(W2 * s["t"] + 0.1)
    rec = derive_missing(from_channels({**s, "v2": v2}), method="gradient")
    assert rec.derived == ("v1", "a1", "a2")
    assert any(w.startswith("a2 derived from v2") for w in rec.warnings)
    np.testing.assert_array_equal(rec.channel("v2"), v2)


def test_filter_record_by_quantity_or_channel() -> None:
    rec = from_channels(_signals())
    every_x = filter_record(rec, 50.0, channels=("x",))
    assert "low-pass filtered x1, x2 at 50 Hz" in every_x.warnings[-1]
    np.testing.assert_array_equal(every_x.channel("f1"), rec.channel("f1"))
    one = filter_record(rec, 50.0, channels=("x2",))
    assert "low-pass filtered x2 at" in one.warnings[-1]
    np.testing.assert_array_equal(one.channel("x1"), rec.channel("x1"))


def test_mapping_one_dof_of_a_two_dof_file_reads_that_dof_only(named_csv: Path) -> None:
    """`--columns f=f1,x=x1` picks DOF 1 for the single-DOF estimators; other DOFs are not added by name."""
    s = _signals()
    rec = load_record(named_csv, columns="f=f1,x=x1")
    assert rec.n_dof == 1 and rec.channels == ("t", "f", "x")
    np.testing.assert_allclose(rec.x, s["x1"])
    both = load_record(named_csv, columns="t=t", units="x2=mm")  # only time mapped: every DOF by name
    assert both.n_dof == 2
