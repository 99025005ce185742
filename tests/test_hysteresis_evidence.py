"""Hysteresis and friction evidence: found on friction and Bouc-Wen records, not on linear or Duffing ones."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.examples import ExampleSpec, generate
from nlid_core.models import TermModel
from nlid_core.nonlinearity import evidence_summary
from nlid_core.nonlinearity.hysteresis import hysteresis_evidence, turning_points
from nlid_core.record import from_arrays
from nlid_core.simulate import simulate

CHIRP = dict(amplitude_n=10.0, f0_hz=0.5, f1_hz=5.0, duration_s=12.0, fs_hz=500.0, noise={"x": 2e-5},
             measured=("x",), seed=3)
BOUC_WEN = {"m0": 2.0, "c1": 10.0, "k1": 5e4, "alpha": 5e4, "beta": 1e3, "gamma": 0.8, "delta": -1.1, "nu": 1.0}


def chirp_record(terms, name):
    return generate(ExampleSpec(terms=terms, **CHIRP), name=name)


@pytest.fixture(scope="module")
def records():
    model = TermModel("m0,c1,k1,bouc_wen")
    t = np.arange(0.0, 4.0, 1 / 1500)
    f = 40.0 * np.sin(2 * np.pi * (2.0 * t + 0.5 * 58.0 / 4.0 * t**2))  # 2 -> 60 Hz, around the 35 Hz resonance
    sim = simulate(model, t, f, model.default_parameters(BOUC_WEN))
    x = sim.x + np.random.default_rng(1).normal(0.0, 8e-6, t.size)
    return {
        "linear": chirp_record({"m0": 2.0, "c1": 1.0, "k1": 800.0}, "linear"),
        "duffing": chirp_record({"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": 2e6}, "duffing"),
        "coulomb": chirp_record({"m0": 1.0, "c1": 0.5, "fc": 1.5, "k1": 400.0}, "coulomb"),
        "bouc-wen": from_arrays(t=t, f=f, x=x, name="bouc-wen"),
    }


def test_friction_record_shows_persistent_loops_and_a_dead_band(records):
    ev = hysteresis_evidence(records["coulomb"])
    assert ev.success and ev.persistent and ev.dead_band
    assert ev.persistence > 2.0
    assert ev.friction_force == pytest.approx(1.5, rel=0.35)  # Fc = 1.5 N
    assert any(s.startswith("friction") for s in ev.findings)


def test_bouc_wen_record_shows_persistent_loops_without_a_dead_band(records):
    ev = hysteresis_evidence(records["bouc-wen"])
    assert ev.persistent and not ev.dead_band
    assert [s.split(":")[0] for s in ev.findings] == ["hysteresis"]


@pytest.mark.parametrize("name", ["linear", "duffing"])
def test_no_evidence_on_viscous_records(records, name):
    ev = hysteresis_evidence(records[name])
    assert ev.success and ev.n_cycles > 10
    assert 0.5 < ev.persistence < 1.6  # a viscous loop shrinks with the frequency
    assert not ev.persistent and not ev.dead_band and ev.findings == ()
    assert math.isnan(ev.friction_force)


def test_the_verdict_mentions_friction_only_where_it_is(records):
    assert any("dead band" in s for s in evidence_summary(records["coulomb"]))
    assert not any("hysteresis" in s or "dead band" in s for s in evidence_summary(records["linear"]))


def test_a_record_without_reversals_is_not_judged():
    t = np.linspace(0.0, 1.0, 500)
    ev = hysteresis_evidence(from_arrays(t=t, f=np.ones_like(t), x=0.1 * t**2, name="ramp"))
    assert not ev.success and "cycle" in ev.message and ev.findings == ()


def test_turning_points_alternate_and_ignore_noise():
    t = np.linspace(0.0, 3.0, 3000)
    x = np.sin(2 * np.pi * t) + np.random.default_rng(0).normal(0.0, 0.01, t.size)
    idx, kind = turning_points(x, 0.2)
    assert kind.tolist() == [1, -1, 1, -1, 1, -1]
    assert np.allclose(t[idx], [0.25, 0.75, 1.25, 1.75, 2.25, 2.75], atol=0.05)


def test_arguments_are_checked(records):
    with pytest.raises(ModelSpecError, match="`low_fraction`"):
        hysteresis_evidence(records["linear"], low_fraction=0.9)
    with pytest.raises(DataValidationError, match="`rec`"):
        hysteresis_evidence("not a record")  # type: ignore[arg-type]
