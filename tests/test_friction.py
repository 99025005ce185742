"""Staged LuGre identification (nlid_core.friction: plateaus, steady curves, stages, CLI).

Known answers come from the simulated experiments of ``nlid_core.friction.experiments`` (SDIRK4 at
rtol 1e-10, checked there against solve_ivp): a servo axis under PI velocity control tracing a
velocity staircase, and a force chirp below breakaway, with sensor noise on x, v and f.

Tolerances are the issue's: Fc, Fs, σ2 within 2 %, vs within 5 %, σ0 within 10 %, σ1 within 25 %,
and the truth inside the reported 95 % intervals (each interval misses by chance 5 % of the time; the
seeds here are fixed, not chosen).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlid_core.cli import main
from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.friction.experiments import DEFAULT_TRUTH, presliding_chirp, servo_staircase
from nlid_core.friction.plateaus import find_plateaus
from nlid_core.friction.staged import FrictionOptions, identify_friction, replay_steady
from nlid_core.friction.steady import CURVES, curve_force, fit_curve
from nlid_core.friction.stickslip import stick_slip
from nlid_core.io import write_record
from nlid_core.record import from_arrays

TOLERANCE = {"Fc": 0.02, "Fs": 0.02, "sigma2": 0.02, "vs": 0.05, "sigma0": 0.10, "sigma1": 0.25}


@pytest.fixture(scope="module")
def axis():  # type: ignore[no-untyped-def]
    """The default axis: staircase and pre-sliding chirp with the default sensor noise."""
    return servo_staircase(DEFAULT_TRUTH), presliding_chirp(DEFAULT_TRUTH)


@pytest.fixture(scope="module")
def staged(axis):  # type: ignore[no-untyped-def]
    stair, pre = axis
    return identify_friction(stair.record, pre.record, FrictionOptions(fixed={"m0": stair.truth["m0"]}))


def test_plateaus_match_the_commanded_levels(axis) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    det = find_plateaus(stair.record, mass=1.0)
    assert det.success
    commanded = np.array([p.v_ref_m_s for p in stair.plateaus])
    acc = det.accepted
    assert len(acc) >= 0.75 * commanded.size
    for p in acc:
        nearest = commanded[np.argmin(np.abs(commanded - p.velocity))]
        assert abs(p.velocity - nearest) < 5 * p.velocity_se + 1e-3 * abs(nearest)
        assert abs(p.force - curve_force("stribeck", DEFAULT_TRUTH, np.array([p.velocity]))[0]) < 5 * p.force_se + 1e-3
    assert {p.velocity > 0 for p in acc} == {True, False}  # both directions
    assert all(p.reason for p in det.rejected)


def test_a_hunting_loop_is_rejected_with_its_reason() -> None:
    # a weak proportional gain cannot hold the velocity-weakening branch: the loop hunts (stick-slip)
    stair = servo_staircase(DEFAULT_TRUTH, levels=[2e-4, 5e-3], kp=30.0, ki=450.0, dwell_s=2.0)
    det = find_plateaus(stair.record)
    slow = [p for p in det.plateaus if abs(p.velocity) < 1e-3]
    assert slow and not any(p.accepted for p in slow)
    assert any("stick-slip or hunting" in p.reason or "drifts" in p.reason for p in slow)
    assert any(p.accepted and abs(p.velocity) > 4e-3 for p in det.plateaus)


def test_plateaus_need_a_velocity() -> None:
    """The plateau finder needs a velocity; `friction identify` derives it from the displacement (and says so)."""
    t = np.arange(2000) / 1000.0
    rec = from_arrays(t, np.ones_like(t), 1e-3 * t)
    with pytest.raises(DataValidationError, match="has no velocity `v`.*derived from the displacement"):
        find_plateaus(rec)


def test_steady_curve_recovers_the_stribeck_parameters(axis) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    pts = find_plateaus(stair.record, mass=1.0).accepted
    fit = fit_curve("stribeck", pts)
    assert fit.success and fit.dof == len(pts) - 4
    for name, value, (lo, hi) in zip(fit.names, fit.values, fit.ci, strict=True):
        truth = DEFAULT_TRUTH[name]
        assert abs(value / truth - 1) < TOLERANCE[name], name
        assert lo <= truth <= hi, name
    # the static models are worse on the same points, Coulomb + viscous by far
    worse = fit_curve("coulomb-viscous", pts)
    assert worse.aic > fit.aic + 10
    # a fixed parameter is held and the others still fit
    held = fit_curve("stribeck", pts, fixed={"sigma2": DEFAULT_TRUTH["sigma2"]})
    assert held.values[3] == DEFAULT_TRUTH["sigma2"] and held.stderr[3] == 0.0
    with pytest.raises(ModelSpecError, match="unknown friction curve"):
        fit_curve("dahl", pts)
    assert set(CURVES) >= {"coulomb", "coulomb-viscous", "stribeck"}


def test_staged_identification_meets_the_tolerances(axis, staged) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    res = staged
    assert res.success, res.message
    for name, tol in TOLERANCE.items():
        e = res.estimate(name)
        truth = stair.truth[name]
        assert abs(e.value / truth - 1) < tol, (name, e.value, truth)
        assert e.ci[0] <= truth <= e.ci[1], (name, e.value, e.stderr, truth)
    assert res.estimate("m0").flags == ("fixed",)
    names = [s.name for s in res.stages]
    assert names == ["steady-state curve", "pre-sliding"]
    s1, s2 = res.stages
    assert set(s1.estimated) == {"Fc", "Fs", "vs", "sigma2"} and set(s2.estimated) == {"sigma0", "sigma1"}
    assert s2.fixed["Fs"][1] == "stage 1" and s2.fixed["m0"][1] == "given" and s1.why and s2.why
    # stage 1's uncertainty is carried into stage 2
    assert any("carried over" in n for n in s2.notes)
    assert "Dynamic model needed" in res.verdict and res.evidence["dynamic_needed"] is True


def test_identified_lugre_predicts_stick_slip_and_a_static_model_does_not(axis, staged) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    truth = stick_slip("lugre", stair.truth)
    assert truth.sticks
    ident = stick_slip("lugre", staged.values)
    static = stick_slip("stribeck", staged.values)
    dp, da = ident.relative_errors(truth)
    assert abs(dp) < 0.02 and abs(da) < 0.02, (dp, da)
    sp, sa = static.relative_errors(truth)
    assert not (abs(sp) < 0.02 and abs(sa) < 0.02), (sp, sa)


def test_steady_replay_follows_the_measured_friction(axis, staged) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    rp = replay_steady(staged, stair.record)
    assert rp.lugre.shape == stair.record.t.shape
    assert rp.nrmse_lugre < 0.5 and np.all(np.isfinite(rp.lugre))


def test_result_json_has_the_shape_of_identify(staged) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(json.dumps(staged.to_dict(), allow_nan=False, default=float))
    for name in ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs", "m0"):
        p = doc["parameters"][name]
        assert {"value", "stderr", "ci95", "unit", "flags"} <= set(p)
    assert [s["name"] for s in doc["stages"]] == ["steady-state curve", "pre-sliding"]
    assert doc["parameters"]["sigma0"]["unit"] == "N/m"


def test_missing_presliding_record_is_reported_not_guessed(axis) -> None:  # type: ignore[no-untyped-def]
    stair, _ = axis
    res = identify_friction(stair.record, ())
    assert not res.success and "pre-sliding" in res.message
    assert res.stages[0].success  # stage 1 is kept
    assert all("not_estimated" in e.flags for e in res.estimates)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ModelSpecError, match="fixed"):
        FrictionOptions(fixed={"k3": 1.0})
    with pytest.raises(ModelSpecError, match="positive"):
        FrictionOptions(fixed={"Fs": -1.0})


def test_cli_friction_identify(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # a short test (8 levels, a 1.5 s chirp) keeps this end-to-end run quick
    stair = servo_staircase(DEFAULT_TRUTH, levels=[2.5e-4, 6e-4, 1.2e-3, 2e-3, 5e-3, 2e-2, 8e-2, 0.3])
    pre = presliding_chirp(DEFAULT_TRUTH, duration_s=1.5)
    st = write_record(stair.record, tmp_path / "stair.csv")
    pr = write_record(pre.record, tmp_path / "pre.csv")
    out = tmp_path / "fr.json"
    status = main(["friction", "identify", "--steady", str(st), "--presliding", str(pr), "--fix", "m0=1",
                   "--json", str(out)])
    text = capsys.readouterr().out
    assert status == 0, text
    assert "stage: steady-state curve" in text and "stage: pre-sliding" in text
    doc = json.loads(out.read_text())
    assert doc["success"] and doc["method"] == "staged-lugre"
    assert abs(doc["parameters"]["Fs"]["value"] / DEFAULT_TRUTH["Fs"] - 1) < 0.02
    assert len(doc["stages"]) == 2 and doc["stages"][1]["estimated"] == ["sigma0", "sigma1"]


def test_cli_friction_errors_are_one_line(axis, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, pre = axis
    pr = write_record(pre.record, tmp_path / "pre.csv")
    # a pre-sliding file (no velocity) given as the staircase: its velocity is derived, said, and it has no plateau
    status = main(["friction", "identify", "--steady", str(pr), "--presliding", str(pr)])
    captured = capsys.readouterr()
    assert status == 1 and "no steady plateau" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "has no measured velocity: it is derived from the displacement" in captured.out
    status = main(["friction", "identify", "--steady", str(pr), "--fix", "k9=1"])
    err = capsys.readouterr().err
    assert status == 2 and "fixed" in err and len(err.strip().splitlines()) == 1
    # a record with a velocity but no staircase in it: stage 1 fails, saying why, exit status 1
    t = np.arange(3000) / 1000.0
    rng = np.random.default_rng(0)
    noise = write_record(from_arrays(t, np.sin(t), 1e-3 * np.cos(t), rng.normal(size=t.size), name="noise"),
                         tmp_path / "noise.csv")
    status = main(["friction", "identify", "--steady", str(noise), "--presliding", str(pr), "--quiet"])
    captured = capsys.readouterr()
    assert status == 1 and captured.out == "" and "no steady plateau" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_cli_writes_the_friction_and_bouc_wen_examples(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from nlid_core.io import load_record

    out = tmp_path / "pre.csv"
    assert main(["example", "friction-presliding", "--duration", "0.5", "--truth", "sigma0=2e5,m0=2",
                 "--out", str(out)]) == 0
    rec = load_record(out)
    assert rec.channels == ("t", "f", "x") and rec.n == 1001
    assert "sigma0=200000" in capsys.readouterr().out
    assert main(["example", "friction-staircase", "--amplitude", "3", "--out", str(out)]) == 2
    assert "not a chirp example" in capsys.readouterr().err
    assert main(["example", "friction-staircase", "--truth", "sigma9=1", "--out", str(out)]) == 2
    assert "sigma9" in capsys.readouterr().err
    bw = tmp_path / "bw.csv"
    assert main(["example", "bouc-wen", "--noise", "x=0", "--out", str(bw)]) == 0
    assert load_record(bw).fs == pytest.approx(750.0)
    assert "gamma=800" in capsys.readouterr().out


def test_emps_steady_curve_without_a_velocity_is_a_partial_result(emps_mat, capsys) -> None:  # type: ignore[no-untyped-def]
    """The EMPS drive axis (no velocity channel, force in volts through its 35.15 N/V gain): the velocity is
    derived and said; its plateaus do not bend the Stribeck curve, and the report and the exit status (4) give the
    Coulomb + viscous curve they do determine, beside the published IDIM-LS values (Fc 20.39 N, Fv 203.5 N·s/m)."""
    status = main(["friction", "identify", "--steady", str(emps_mat), "--columns", "t=t,f=vir,x=qm", "--scale",
                   "f=35.15N", "--rows", "0:8000"])
    captured = capsys.readouterr()
    assert status == 4 and captured.err.startswith("partial result:")
    line = next(s for s in captured.out.splitlines() if s.startswith("PARTIAL: the plateaus determine Coulomb"))
    fc = float(line.split("Fc = ")[1].split(" ± ")[0])
    se = float(line.split("Fc = ")[1].split(" ± ")[1].split(" ")[0])
    assert abs(fc - 20.39) <= 2 * se and "the Stribeck curve is not determined" in line
    assert "derived from the displacement" in captured.out
