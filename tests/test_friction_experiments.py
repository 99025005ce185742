"""Simulated friction experiments (LuGre truth), the stribeck term and the stick-slip oscillator.

Known answers: the staircase's plateaus settle on the commanded velocities with the steady LuGre
friction as drive force; the pre-sliding record stays in the micrometre range below breakaway;
records agree with an independent solve_ivp solution of the LuGre equations; the truth's
stick-slip cycle is reproduced by LuGre parameters perturbed within the identification
tolerances and missed by the static models fitted to the same steady curve.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from nlid_core.errors import ModelSpecError
from nlid_core.friction import experiments as fx
from nlid_core.friction.stickslip import StickSlipResult, stick_slip
from nlid_core.models import ModelSettings, TermModel

TRUTH = dict(fx.DEFAULT_TRUTH)


def _lugre_rhs(p: dict[str, float], m: float, force):  # type: ignore[no-untyped-def]
    """The LuGre axis written out independently of the term programs."""

    def rhs(t: float, y: np.ndarray) -> list[float]:
        x, v, z = y[:3]
        g = p["Fc"] + (p["Fs"] - p["Fc"]) * np.exp(-((v / p["vs"]) ** 2))
        zd = v - p["sigma0"] * abs(v) * z / g
        f = force(t, y)
        return [v, (f - p["sigma0"] * z - p["sigma1"] * zd - p["sigma2"] * v) / m, zd]

    return rhs


@pytest.fixture(scope="module")
def staircase() -> fx.FrictionExperiment:
    return fx.friction_example("friction-staircase")


@pytest.fixture(scope="module")
def presliding() -> fx.FrictionExperiment:
    return fx.friction_example("friction-presliding")


@pytest.fixture(scope="module")
def truth_cycle() -> StickSlipResult:
    return stick_slip("lugre", TRUTH)


# --------------------------------------------------------------------------------- stribeck term
def test_the_steady_curve_is_the_lugre_terms_force_at_its_steady_state() -> None:
    """friction's steady law (``curve_force("stribeck")``, ``steady_friction``) against the ``lugre`` term's own
    text: its force with the bristle state at the term's steady value and ż = 0 (sympy, exact)."""
    from nlid_core.friction.steady import curve_force
    from nlid_core.terms.registry import get_term

    term = get_term("lugre")
    sym = term.symbolic
    named = {str(x): x for x in sym["force"].free_symbols}  # the term's own symbols (with their assumptions)
    z, v_s = named["z"], named["v"]
    force = sym["force"].subs(z, sym["steady"][0])
    values = {**TRUTH, "sigma2": 0.4}
    subs = {named[n]: values[n] for n in term.param_names}
    # in steady sliding ż = 0: the σ1·ż part of the force vanishes with the state rate
    rate = sym["rates"][0].subs(z, sym["steady"][0])
    for v in (-2e-2, -1e-3, 1e-4, 1e-3, 5e-3):
        assert abs(float(rate.subs({**subs, v_s: v}))) < 1e-12
        want = float(force.subs({**subs, v_s: v}))
        assert curve_force("stribeck", values, np.array([v]))[0] == pytest.approx(want, rel=1e-12)
        assert float(fx.steady_friction(values, v)) == pytest.approx(want, rel=1e-12)


def test_stribeck_term_force_is_the_smoothed_steady_curve() -> None:
    model = TermModel("m0,c1,stribeck", ModelSettings(v_eps=1e-6))
    theta = model.default_parameters({"m0": 1.0, "c1": 0.4, "Fc": 1.0, "Fs": 1.5, "vs": 1e-3}).values
    v = np.array([-2e-2, -1e-3, 1e-4, 1e-3, 5e-3])
    got = model.force(theta, np.zeros(5), v, np.zeros(5))
    np.testing.assert_allclose(got, fx.steady_friction(TRUTH, v), rtol=1e-12)
    assert model.default_parameters()["v_eps"].vary is False
    with pytest.raises(ModelSpecError):
        TermModel("m0,lugre,stribeck").default_parameters()


# --------------------------------------------------------------------------------- records
@pytest.mark.parametrize("name", ["friction-staircase", "friction-presliding", "friction-rail", "stick-slip"])
def test_records_have_channels_units_and_meta(name: str, staircase: fx.FrictionExperiment,
                                              presliding: fx.FrictionExperiment) -> None:
    ex = {"friction-staircase": staircase, "friction-presliding": presliding}.get(name) or fx.friction_example(name)
    rec = ex.record
    want = ("t", "f", "x") if name == "friction-presliding" else ("t", "f", "x", "v")
    assert rec.channels == want
    assert rec.unit("x") == "m" and rec.unit("f") == "N"
    assert rec.meta["true_parameters"] == {"m0": 1.0, **TRUTH} == dict(ex.truth)
    assert {"excitation", "noise", "seed"} <= set(rec.meta)
    assert rec.source == f"example:{name}"
    for c in want[1:]:
        resid = rec.channel(c) - ex.clean.channel(c)
        sd = rec.meta["noise"][c]
        assert 0.9 * sd < np.std(resid) < 1.1 * sd, c  # the stated noise was added, and only that
    again = fx.friction_example(name) if name in ("friction-rail",) else None
    if again is not None:
        np.testing.assert_array_equal(again.record.x, rec.x)  # seeded


def test_staircase_plateaus_reach_the_commanded_velocities(staircase: fx.FrictionExperiment) -> None:
    c = staircase.clean
    assert len(staircase.plateaus) == 24
    signs = [np.sign(p.v_ref_m_s) for p in staircase.plateaus]
    assert signs.count(1.0) == signs.count(-1.0) == 12
    speeds = sorted({abs(p.v_ref_m_s) for p in staircase.plateaus})
    assert speeds[0] == pytest.approx(0.1 * TRUTH["vs"]) and speeds[-1] >= 50 * TRUTH["vs"]
    for p in staircase.plateaus:
        sel = (c.t >= 0.5 * (p.t_start_s + p.t_end_s)) & (c.t < p.t_end_s)
        assert np.mean(c.v[sel]) == pytest.approx(p.v_ref_m_s, rel=1e-4)
        # settled: the drive force is the steady LuGre friction at that speed
        assert np.mean(c.f[sel]) == pytest.approx(float(fx.steady_friction(TRUTH, p.v_ref_m_s)), rel=1e-4)
    assert abs(c.x[-1]) < 0.05  # the +/- strokes return


def test_presliding_record_stays_below_breakaway(presliding: fx.FrictionExperiment) -> None:
    c = presliding.clean
    fn = np.sqrt(TRUTH["sigma0"]) / (2 * np.pi)
    assert presliding.design["f1_hz"] >= 1.5 * fn and presliding.record.fs >= 10 * presliding.design["f1_hz"]
    assert np.max(np.abs(c.f)) == pytest.approx(0.7 * TRUTH["Fs"], rel=1e-3)
    assert presliding.max_bristle_ratio < 0.9  # bristle force stays below the static level
    assert 5e-6 < np.max(np.abs(c.x)) < 5e-5  # micrometres of travel, never gross sliding
    late = c.t > c.t[-1] - 1.0
    assert abs(np.mean(c.x[late])) < 1e-5 and np.min(c.x[late]) < np.max(c.x[late]) - 5e-6  # returns, keeps moving


def test_presliding_chirp_matches_an_independent_solution() -> None:
    ex = fx.presliding_chirp(duration_s=0.3, f0_hz=20.0, f1_hz=100.0, noise={})
    d = ex.design
    amp, f0, f1, dur = d["amplitude_n"], d["f0_hz"], d["f1_hz"], d["duration_s"]

    def force(t: float, y: np.ndarray) -> float:
        return float(amp * np.sin(2 * np.pi * (f0 * t + 0.5 * (f1 - f0) / dur * t * t)))

    sol = solve_ivp(_lugre_rhs(TRUTH, 1.0, force), (0.0, dur), [0.0, 0.0, 0.0], method="DOP853", t_eval=ex.clean.t,
                    rtol=1e-13, atol=[1e-18, 1e-16, 1e-18])
    assert sol.success
    assert np.max(np.abs(sol.y[0] - ex.clean.x)) < 1e-6 * np.ptp(ex.clean.x)
    assert np.max(np.abs(sol.y[2] - ex.z)) < 2e-6 * np.ptp(ex.z)


def test_closed_loop_matches_an_independent_solution() -> None:
    ex = fx.servo_staircase(levels=[3e-3], dwell_s=0.15, ramp_s=0.03, rest_s=0.02, noise={})
    d = ex.design
    kp, ki = d["kp"], d["ki"]
    starts = np.array([d["rest_s"], d["rest_s"] + d["dwell_s"]])
    vals = np.array([3e-3, -3e-3])

    def vref(t: float) -> float:
        out, prev = 0.0, 0.0
        for t0, val in zip(starts, vals, strict=True):
            s = min(max((t - t0) / d["ramp_s"], 0.0), 1.0)
            out += (val - prev) * 0.5 * (1 - np.cos(np.pi * s))
            prev = val
        return out

    def force(t: float, y: np.ndarray) -> float:
        return kp * (vref(t) - y[1]) + ki * y[3]  # PI on the velocity error, y[3] = its integral

    lugre = _lugre_rhs(TRUTH, 1.0, force)

    def rhs(t: float, y: np.ndarray) -> list[float]:
        return [*lugre(t, y), vref(t) - y[1]]

    sol = solve_ivp(rhs, (0.0, ex.clean.t[-1]), [0.0] * 4, method="DOP853", t_eval=ex.clean.t, rtol=1e-12,
                    atol=[1e-16, 1e-14, 1e-18, 1e-16], max_step=d["ramp_s"] / 4)
    assert sol.success
    np.testing.assert_allclose(ex.clean.v, sol.y[1], atol=1e-6 * 3e-3)
    np.testing.assert_allclose(ex.clean.f, kp * (np.array([vref(t) for t in ex.clean.t]) - sol.y[1]) + ki * sol.y[3],
                               atol=1e-6 * TRUTH["Fs"])


# --------------------------------------------------------------------------------- stick-slip
def test_truth_stick_slips_and_the_measurement_is_consistent(truth_cycle: StickSlipResult) -> None:
    r = truth_cycle
    assert r.success and r.limit_cycle and r.sticks and r.cycles == 5
    assert r.stick_fraction > 0.5  # mostly stuck, short slips
    # breakaway below Fs (bristle creep under the slowly rising spring force), cycle of about 2 s
    assert 0.95 * TRUTH["Fs"] < r.breakaway_force_n < TRUTH["Fs"]  # type: ignore[operator]
    assert r.period_s == pytest.approx(2.076, rel=2e-3)
    assert r.force_amplitude_n == pytest.approx(0.935, rel=2e-3)
    again = stick_slip("lugre", TRUTH, duration_s=float(r.t[-1]) + 3.0)  # other cycles, same answer
    assert again.relative_errors(r) == pytest.approx((0.0, 0.0), abs=1e-5)


@pytest.mark.parametrize("scale", [
    {"sigma0": 1.1, "sigma1": 1.25}, {"sigma0": 1.1, "sigma1": 0.75},
    {"sigma0": 0.9, "sigma1": 1.25}, {"sigma0": 0.9, "sigma1": 0.75},
    # worst corners of everything (signs that add up), Fc and Fs within 0.1 % (the cycle amplifies errors
    # in the friction drop Fs - Fc: see the stickslip notes)
    {"sigma0": 1.1, "sigma1": 0.75, "vs": 1.05, "sigma2": 0.98, "Fs": 1.001, "Fc": 0.999},
    {"sigma0": 0.9, "sigma1": 1.25, "vs": 0.95, "sigma2": 1.02, "Fs": 0.999, "Fc": 1.001},
], ids=lambda s: ",".join(f"{k}*{v:g}" for k, v in s.items()))
def test_lugre_within_tolerances_reproduces_the_cycle(scale: dict[str, float], truth_cycle: StickSlipResult) -> None:
    params = {n: v * scale.get(n, 1.0) for n, v in TRUTH.items()}
    r = stick_slip("lugre", params, duration_s=float(truth_cycle.t[-1]))
    d_period, d_amp = r.relative_errors(truth_cycle)
    assert r.sticks and abs(d_period) < 0.02 and abs(d_amp) < 0.02, (d_period, d_amp)


def test_static_models_miss_the_cycle(truth_cycle: StickSlipResult) -> None:
    r = stick_slip("stribeck", TRUTH, duration_s=float(truth_cycle.t[-1]))
    d_period, d_amp = r.relative_errors(truth_cycle)
    assert r.sticks and d_period > 0.03 and d_amp > 0.05, (d_period, d_amp)  # sticks rigidly, breaks away at Fs
    assert r.breakaway_force_n > TRUTH["Fs"] > truth_cycle.breakaway_force_n  # type: ignore[operator]
    c = stick_slip("coulomb", TRUTH, duration_s=float(truth_cycle.t[-1]))
    assert not c.limit_cycle and not c.sticks and c.period_s is None
    assert c.relative_errors(truth_cycle) == (np.inf, np.inf)
    assert c.steady_x_m == pytest.approx((TRUTH["Fc"] + TRUTH["sigma2"] * 1e-3) / 500.0, rel=1e-9)


def test_no_stick_slip_on_a_fast_belt() -> None:
    r = stick_slip("lugre", TRUTH, v_belt=0.05, duration_s=6.0)  # far beyond vs: positive slope, steady sliding
    assert not r.sticks and not r.limit_cycle and "no stick-slip" in r.message
    steady = float(fx.steady_friction(TRUTH, 0.05)) / 500.0
    assert r.steady_x_m == pytest.approx(steady, rel=1e-9)
    late = r.t > r.t[-1] - 1.0
    assert np.min(r.x[late]) < steady < np.max(r.x[late])  # the decaying oscillation is about it


# --------------------------------------------------------------------------------- validation
def test_bad_inputs_raise_naming_the_argument() -> None:
    with pytest.raises(ModelSpecError, match="unknown friction example"):
        fx.friction_example("nope")
    with pytest.raises(ModelSpecError, match="overrides"):
        fx.friction_example("friction-rail", overrides={"dwell_s": 1.0})
    with pytest.raises(ModelSpecError, match="`params`"):
        fx.presliding_chirp({"sigma0": 1e5})
    with pytest.raises(ModelSpecError, match="`kind`"):
        fx.presliding_chirp(kind="square")
    with pytest.raises(ModelSpecError, match="`model`"):
        stick_slip("dahl", TRUTH)
    with pytest.raises(ModelSpecError, match="`v_belt`"):
        stick_slip("lugre", TRUTH, v_belt=0.0)
    ramp = fx.friction_example("friction-presliding-ramp", overrides={"sigma0": 2e5, "duration_s": 1.0})
    assert ramp.truth["sigma0"] == 2e5 and ramp.record.meta["true_parameters"]["sigma0"] == 2e5
