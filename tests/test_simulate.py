"""The compiled RK4 simulator against solve_ivp, and its sensitivities against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.errors import ModelSpecError
from nlid_core.models import ModelSettings, TermModel
from nlid_core.simulate import simulate, simulate_reference

ALL_TERMS = "m0,m1,c1,c2,fc,k1,k2,k3,kg,f0"
THETA_ALL = np.array([2.0, 0.08, 0.5, 0.2, 0.3, 800.0, 500.0, 20000.0, 150.0, 0.05])


def chirp(n=3000, fs=500.0, amp=10.0, f0=0.5, f1=5.0):
    t = np.arange(n) / fs
    T = t[-1]
    return t, amp * np.sin(2 * np.pi * (f0 * t + 0.5 * (f1 - f0) / T * t * t))


SMOOTH = "m0,m1,c1,c2,k1,k2,k3,f0"
THETA_SMOOTH = np.array([2.0, 0.08, 0.5, 0.2, 800.0, 500.0, 20000.0, 0.05])


@pytest.mark.parametrize(
    "terms,theta,tol,hold",
    [
        (SMOOTH, THETA_SMOOTH, 5e-7, "cubic"),
        (SMOOTH, THETA_SMOOTH, 5e-7, "foh"),
        # the dead zone has a kink and tanh(v/0.01) a sharp knee: RK4 loses order there
        (ALL_TERMS, THETA_ALL, 2e-5, "cubic"),
    ],
)
def test_rk4_matches_dop853(terms, theta, tol, hold):
    # same input reconstruction on both sides: the difference is integration error only.
    model = TermModel(terms, ModelSettings(v_eps=0.01, gap=0.002))
    theta = model.default_parameters(dict(zip(model.terms, theta))).values  # settings are parameters too
    t, f = chirp(n=1500)
    fast = simulate(model, t, f, theta, (0.001, -0.01), input_hold=hold, substeps=4)
    ref = simulate_reference(model, t, f, theta, (0.001, -0.01), input_hold=hold, rtol=1e-11, atol=1e-13)
    assert fast.success and ref.success
    for ch in ("x", "v", "a"):
        a, b = fast.output(ch), ref.output(ch)
        assert np.max(np.abs(a - b)) / np.max(np.abs(b)) < tol, ch


def test_cubic_input_beats_linear_and_zero_order_hold():
    # against the exact continuous chirp, cubic reconstruction is far closer than foh and zoh.
    model = TermModel("m0,c1,k1,k3")
    theta = np.array([2.0, 0.5, 800.0, 20000.0])
    fs = 100.0
    t, f = chirp(n=1200, fs=fs)
    T = t[-1]

    def exact_f(tau):
        return 10 * np.sin(2 * np.pi * (0.5 * tau + 0.5 * 4.5 / T * tau * tau))

    # exact input: sample finely (x20) and simulate with cubic interpolation of the fine grid
    tf = np.arange(20 * (t.size - 1) + 1) / (20 * fs)
    exact = simulate(model, tf, exact_f(tf), theta, substeps=1).x[::20]
    err = {h: np.max(np.abs(simulate(model, t, f, theta, input_hold=h, substeps=20).x - exact)) for h in
           ("cubic", "foh", "zoh")}
    assert err["cubic"] * 20 < err["foh"] < err["zoh"]


def test_sensitivities_match_finite_differences():
    model = TermModel(ALL_TERMS, ModelSettings(v_eps=0.05, gap=0.0))  # gap 0: no kink for central differences
    t, f = chirp(n=1500)
    x0 = np.array([0.002, 0.01])
    theta = model.default_parameters(dict(zip(model.terms, THETA_ALL))).values
    base = simulate(model, t, f, theta, x0, sensitivities=True, outputs=("x", "v", "a"), substeps=2)
    q = np.r_[theta, x0]
    for k in range(q.size):
        if base.sens_names[k] == "gap":
            continue  # gap = 0 sits on the dead zone's kink
        h = 1e-6 * max(abs(q[k]), 1e-3)
        dq = np.zeros(q.size)
        dq[k] = h
        up = simulate(model, t, f, (q + dq)[:-2], (q + dq)[-2:], substeps=2)
        dn = simulate(model, t, f, (q - dq)[:-2], (q - dq)[-2:], substeps=2)
        for ch in ("x", "v", "a"):
            fd = (up.output(ch) - dn.output(ch)) / (2 * h)
            an = base.sens[ch][:, k]
            scale = np.max(np.abs(an))
            assert np.max(np.abs(fd - an)) <= 2e-4 * scale + 1e-12, (base.sens_names[k], ch)


def test_divergence_is_a_result_not_a_crash():
    # a softening spring pushed past its well escapes to infinity
    model = TermModel("m0,c1,k1,k3")
    t, f = chirp(n=2000, amp=200.0)
    res = simulate(model, t, f, [1.0, 0.1, 100.0, -1e5], sensitivities=True)
    assert not res.success
    assert res.status == "diverged"
    assert "diverged at t =" in res.message
    assert res.fail_time is not None and 0 < res.fail_time < t[-1]


def test_nonpositive_mass_is_reported():
    model = TermModel("m0,m1,k1")
    t, f = chirp(n=500, amp=100.0)
    res = simulate(model, t, f, [1.0, -1e4, 100.0], (0.02, 0.0))
    assert not res.success and res.status == "nonpositive_mass"
    assert "non-positive" in res.message


def test_bad_arguments_raise_clear_errors():
    model = TermModel("m0,k1")
    t, f = chirp(n=100)
    with pytest.raises(ModelSpecError, match="input_hold"):
        simulate(model, t, f, [1.0, 1.0], input_hold="spline")
    with pytest.raises(ModelSpecError, match="needs 2"):
        simulate(model, t, f, [1.0])
    with pytest.raises(ModelSpecError, match="no mass term"):
        simulate(TermModel("c1,k1"), t, f, [1.0, 1.0])
