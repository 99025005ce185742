"""The CLI on the model layer: the term table, ``simulate``, and identify's parameter options."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from nlid_core.cli import main
from nlid_core.models import TermModel
from nlid_core.simulate import simulate
from nlid_core.terms import REGISTRY, parse_custom

FS_HZ = 500.0
ASYM = "asym=ka*x*abs(x)"
TRUTH = {"m0": 1.0, "c1": 2.0, "k1": 400.0, "ka": 2e4}


def _chirp(duration_s: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(int(duration_s * FS_HZ)) / FS_HZ
    return t, 5.0 * np.sin(2 * np.pi * (0.5 + 0.8 * t) * t)


def _write(path, columns: dict[str, np.ndarray]):
    np.savetxt(path, np.column_stack(list(columns.values())), delimiter=",", header=",".join(columns),
               comments="", fmt="%.17g")
    return path


@pytest.fixture(scope="module")
def force_csv(tmp_path_factory):
    """A chirp force record without displacement: columns t, f."""
    t, f = _chirp(2.0)
    return _write(tmp_path_factory.mktemp("sim") / "force.csv", {"t": t, "f": f})


@pytest.fixture(scope="module")
def asym_csv(tmp_path_factory):
    """A record of m0, c1, k1 and the typed term ka·x·|x| (known ``TRUTH``), with 0.2 % noise on x."""
    t, f = _chirp(6.0)
    model = TermModel(("m0", "c1", "k1", "asym"), custom=parse_custom([ASYM]))
    res = simulate(model, t, f, [TRUTH[n] for n in model.param_names])
    assert res.success
    x = res.x + np.random.default_rng(7).normal(0.0, 2e-3 * res.x.std(), t.size)
    return _write(tmp_path_factory.mktemp("id") / "asym.csv", {"t": t, "f": f, "x": x})


def _one_error_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# --------------------------------------------------------------------------- terms


def test_terms_json_lists_every_term_with_parameters_and_states(capsys):
    assert main(["terms", "--json"]) == 0
    doc = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert list(doc) == list(REGISTRY)
    lugre = doc["lugre"]
    assert [p["name"] for p in lugre["parameters"]] == ["sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs"]
    assert [(s["name"], s["unit"]) for s in lugre["states"]] == [("z", "m")]
    sigma0 = lugre["parameters"][0]
    assert sigma0 == {**sigma0, "unit": "N/m", "lower": 0.0, "upper": None, "default": 1e5, "fixed": False}
    v_eps = {p["name"]: p for p in doc["fc"]["parameters"]}["v_eps"]
    assert v_eps["fixed"] is True and v_eps["unit"] == "m/s"
    assert doc["k3"]["expr"] == "k3·x³"


def test_terms_table_shows_force_parameters_and_states(capsys):
    assert main(["terms"]) == 0
    text = capsys.readouterr().out
    for name in REGISTRY:
        assert f"\n{name} " in "\n" + text
    assert "state z    [m]" in text and "sigma0" in text and "N/m^3" in text


# --------------------------------------------------------------------------- simulate


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path)


def test_simulate_reproduces_the_simulator_exactly(force_csv, tmp_path, capsys):
    out = tmp_path / "duffing.csv"
    values = {"m0": 1.5, "c1": 0.8, "k1": 400.0, "k3": 2e5}
    spec = ",".join(f"{k}={v}" for k, v in values.items())
    assert main(["simulate", str(force_csv), "--terms", "m0,c1,k1,k3", "--params", spec, "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    df = _read(out)
    assert list(df.columns) == ["t [s]", "f [N]", "x [m]", "v [m/s]", "a [m/s^2]"]
    data = np.loadtxt(force_csv, delimiter=",", skiprows=1)
    model = TermModel(("m0", "c1", "k1", "k3"))
    ref = simulate(model, data[:, 0], data[:, 1], model.default_parameters(values))
    assert len(df) == data.shape[0]
    np.testing.assert_array_equal(df["t [s]"], data[:, 0])
    np.testing.assert_array_equal(df["f [N]"], data[:, 1])
    for channel in ("x", "v", "a"):
        np.testing.assert_array_equal(df[[c for c in df.columns if c.startswith(channel + " ")][0]],
                                      getattr(ref, channel))


def test_simulate_lugre_writes_its_state_and_takes_initial_states(force_csv, tmp_path):
    out = tmp_path / "lugre.csv"
    assert main(["simulate", str(force_csv), "--terms", "m0,k1,lugre", "--params", "m0=1,k1=400",
                 "--out", str(out), "--quiet"]) == 0
    df = _read(out)
    assert list(df.columns) == ["t [s]", "f [N]", "x [m]", "v [m/s]", "z [m]", "a [m/s^2]"]
    assert np.all(np.isfinite(df.to_numpy())) and np.ptp(df["z [m]"]) > 0
    out2 = tmp_path / "lugre_z0.csv"
    assert main(["simulate", str(force_csv), "--terms", "m0,k1,lugre", "--params", "m0=1,k1=400",
                 "--initial-state", "x=1e-3,z=1e-5", "--out", str(out2), "--quiet"]) == 0
    first = _read(out2).iloc[0]
    assert first["x [m]"] == 1e-3 and first["z [m]"] == 1e-5 and first["v [m/s]"] == 0.0


def test_simulate_with_a_custom_term(force_csv, tmp_path):
    out = tmp_path / "asym.csv"
    assert main(["simulate", str(force_csv), "--terms", "m0,c1,k1", "--custom", ASYM,
                 "--params", "m0=1,c1=2,k1=400,ka=2e4", "--out", str(out), "--quiet"]) == 0
    df = _read(out)
    data = np.loadtxt(force_csv, delimiter=",", skiprows=1)
    model = TermModel(("m0", "c1", "k1", "asym"), custom=parse_custom([ASYM]))
    ref = simulate(model, data[:, 0], data[:, 1], [1.0, 2.0, 400.0, 2e4])
    np.testing.assert_array_equal(df["x [m]"], ref.x)


def test_simulate_output_loads_back_as_a_record(force_csv, tmp_path):
    from nlid_core.guard import load_record_guarded

    out = tmp_path / "lugre.csv"
    assert main(["simulate", str(force_csv), "--terms", "m0,k1,lugre", "--params", "m0=1,k1=400",
                 "--out", str(out), "--quiet"]) == 0
    rec = load_record_guarded(out)
    assert rec.channels == ("t", "f", "x", "v", "a") and rec.unit("a") == "m/s^2"
    np.testing.assert_array_equal(rec.x, _read(out)["x [m]"])


@pytest.mark.parametrize(("extra", "status", "needles"), [
    (["--terms", "m0,k1", "--params", "kk=1"], 2, ("kk", "m0, k1")),
    (["--terms", "m0,k1", "--params", "k1=abc"], 2, ("k1", "abc")),
    (["--terms", "m0,k1", "--params", "k1=inf"], 2, ("k1", "finite")),
    (["--terms", "c1,k1"], 2, ("m0", "cannot be simulated")),
    (["--terms", "m0,k1,zz"], 2, ("zz",)),
    (["--terms", "m0,k1", "--initial-state", "q=1"], 2, ("q", "x, v")),
    (["--terms", "m0,k1", "--params", "k1=-1e9"], 1, ("simulation failed", "diverged")),
    (["--terms", "m0,k1", "--params", "m0=-1"], 1, ("simulation failed", "mass")),
])
def test_simulate_errors_are_one_line(force_csv, tmp_path, capsys, extra, status, needles):
    out = tmp_path / "never.csv"
    assert main(["simulate", str(force_csv), *extra, "--out", str(out)]) == status
    _one_error_line(capsys, *needles)
    assert not out.exists()


def test_simulate_needs_a_force(tmp_path, capsys):
    t, f = _chirp(0.2)
    path = _write(tmp_path / "no_force.csv", {"t": t, "g": f})
    assert main(["simulate", str(path), "--terms", "m0,k1", "--out", str(tmp_path / "o.csv")]) == 2
    _one_error_line(capsys, "force", "no_force.csv")


def test_simulate_takes_the_loading_options(tmp_path):
    t, f = _chirp(0.5)
    path = _write(tmp_path / "renamed.csv", {"load": f / 1000.0})
    out = tmp_path / "o.csv"
    assert main(["simulate", str(path), "--terms", "m0,k1", "--params", "k1=400", "--columns", "f=load",
                 "--units", "f=kN", "--fs", str(FS_HZ), "--out", str(out), "--quiet"]) == 0
    df = _read(out)
    np.testing.assert_allclose(df["f [N]"], f, rtol=1e-12)
    np.testing.assert_allclose(df["t [s]"], t, rtol=1e-12)


# --------------------------------------------------------------------------- identify


def _identify(path, tmp_path, *extra: str) -> dict:
    out = tmp_path / "fit.json"
    status = main(["identify", str(path), "--terms", "m0,c1,k1", "--custom", ASYM, "--quiet", "--json", str(out),
                   *extra])
    doc = json.loads(out.read_text())
    assert status == {"ok": 0, "failed": 1}.get(doc["verdict"]["status"], 4)  # the exit status is the verdict's
    return doc


def test_identify_custom_recovers_the_typed_coefficient(asym_csv, tmp_path):
    doc = _identify(asym_csv, tmp_path)
    assert doc["success"] and doc["terms"] == ["m0", "c1", "k1", "asym"]
    for name, truth in TRUTH.items():
        assert doc["parameters"][name]["value"] == pytest.approx(truth, rel=0.03), name
    assert doc["parameters"]["ka"]["unit"] == "N/m^2"


def test_identify_fix_start_and_bounds_take_effect(asym_csv, tmp_path):
    doc = _identify(asym_csv, tmp_path, "--fix", "c1=2.5", "--bounds", "k1=0:350,m0=:2", "--start", "ka=1e4",
                    "--method", "output-error")
    setup, params = doc["parameter_setup"], doc["parameters"]
    assert setup["c1"] == {**setup["c1"], "start": 2.5, "fixed": True}
    assert setup["k1"] == {**setup["k1"], "start": 0.0, "bounds": [0.0, 350.0], "fixed": False}
    assert setup["m0"]["bounds"] == [None, 2.0] and setup["ka"]["start"] == 1e4
    assert params["c1"]["value"] == 2.5 and params["c1"]["vary"] is False and "fixed" in params["c1"]["flags"]
    assert params["k1"]["value"] <= 350.0 and params["k1"]["bounds"] == [0.0, 350.0]
    assert "at_bound" in params["k1"]["flags"]


def test_identify_frees_a_setting_and_reports_fixed_ones(asym_csv, tmp_path):
    out = tmp_path / "fc.json"
    # the bookkeeping of a freed and a fixed setting: the first second of the record is enough
    assert main(["identify", str(asym_csv), "--rows", "0:500", "--terms", "m0,c1,k1,fc,kg", "--free", "v_eps",
                 "--bounds", "v_eps=1e-4:1e-1", "--start", "v_eps=0.01", "--gap", "0.001", "--quiet",
                 "--json", str(out)]) in (0, 1, 4)
    doc = json.loads(out.read_text())
    v_eps, gap = doc["parameters"]["v_eps"], doc["parameters"]["gap"]
    assert v_eps["vary"] is True and v_eps["bounds"] == [1e-4, 0.1]
    assert doc["parameter_setup"]["v_eps"]["start"] == 0.01
    assert gap["vary"] is False and gap["flags"] == ["fixed"] and gap["value"] == 0.001


@pytest.mark.parametrize(("extra", "needles"), [
    (["--custom", "bad=__import__('os')"], ("__import__",)),
    (["--custom", "bad=x.__class__"], ("x.__class__",)),
    (["--custom", "bad=ka*x**1000"], ("x**1000",)),
    (["--custom", "bad"], ("NAME=EXPRESSION",)),
    (["--fix", "zz=1"], ("zz", "m0, c1, k1, ka")),
    (["--start", "c1=-1"], ("c1", "bounds")),
    (["--bounds", "k1=5:1"], ("k1", "lower bound")),
    (["--bounds", "k1=5"], ("k1", "LO:HI")),
    (["--fix", "c1=1", "--start", "c1=2"], ("c1", "--fix")),
    (["--free", "zz"], ("zz",)),
])
def test_identify_bad_model_options_are_one_line(asym_csv, capsys, extra, needles):
    assert main(["identify", str(asym_csv), "--terms", "m0,c1,k1", "--custom", ASYM, "--quiet", *extra]) == 2
    _one_error_line(capsys, *needles)


@pytest.mark.parametrize(("expr", "needle"), [("__import__('os')", "`__import__`"), ("x.__class__", "Attribute"),
                                             ("ka*x**1000", "`x**1000`")])
def test_simulate_refuses_hostile_expressions(force_csv, tmp_path, capsys, expr, needle):
    out = tmp_path / "o.csv"
    assert main(["simulate", str(force_csv), "--terms", "m0,k1", "--custom", f"bad={expr}", "--out", str(out)]) == 2
    _one_error_line(capsys, needle)
    assert not out.exists()
