"""The general model layer: several DOFs, internal states, RK4 and SDIRK4 with exact sensitivities.

References are independent: a two-DOF chain written out by hand in numpy and integrated by scipy's
DOP853 at tight tolerances; every term against ``solve_ivp``; LuGre (stiff) against Radau with the
exact Jacobian; Bouc-Wen against the official benchmark output; sensitivities against central
finite differences of the same integrator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

from nlid_core.dynamics.integrate import integrate
from nlid_core.dynamics.model import Element, Model
from nlid_core.errors import ModelSpecError
from nlid_core.models import TermModel
from nlid_core.simulate import simulate, simulate_reference
from nlid_core.terms import REGISTRY, custom_term, get_term

BOUCWEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "boucwen"


def chain() -> Model:
    """Two masses: DOF 1 to ground by k1, c1; DOF 1 to DOF 2 by k1, k3, c2; DOF 2 to ground by c1."""
    return Model([
        Element(get_term("m0"), 1), Element(get_term("k1"), 1), Element(get_term("c1"), 1),
        Element(get_term("m0"), 2), Element(get_term("c1"), 2),
        Element(get_term("k1"), 1, 2), Element(get_term("k3"), 1, 2), Element(get_term("c2"), 1, 2),
    ])


CHAIN_VALUES = {"m0_1": 1.5, "k1_1": 800.0, "c1_1": 0.8, "m0_2": 0.7, "c1_2": 0.3, "k1_1_2": 300.0,
                "k3_1_2": 2e5, "c2_1_2": 0.5}


def drive(n: int = 1500, fs: float = 500.0) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(n) / fs
    f1 = 8 * np.sin(2 * np.pi * (0.5 * t + 0.5 * 6.0 / t[-1] * t * t))
    f2 = 3 * np.sin(2 * np.pi * 3.1 * t + 0.4)
    return t, np.column_stack([f1, f2])


def test_chain_names_parameters_states_and_equations() -> None:
    m = chain()
    assert m.n_dof == 2 and m.state_names == ("x1", "x2", "v1", "v2")
    assert m.param_names == ("m0_1", "k1_1", "c1_1", "m0_2", "c1_2", "k1_1_2", "k3_1_2", "c2_1_2")
    eq = m.equation().splitlines()
    assert eq[0].startswith("m0_1·ẍ1") and eq[0].endswith("= f1(t)") and "k3_1_2·x³[1-2]" in eq[0]
    assert eq[1].startswith("m0_2·ẍ2") and "- k3_1_2·x³[1-2]" in eq[1]
    with pytest.raises(ModelSpecError, match="DOF 2"):
        Model([Element(get_term("m0"), 1), Element(get_term("k1"), 1, 2)]).require_simulable()
    with pytest.raises(ModelSpecError, match="must sit on one DOF"):
        Model([Element(get_term("m0"), 1, 2)])


def test_two_dof_chain_matches_an_independent_reference() -> None:
    m = chain()
    theta = m.default_parameters(CHAIN_VALUES).values
    t, u = drive()
    y0 = np.array([0.001, -0.002, 0.0, 0.01])
    tr = integrate(m, t, u, theta, y0, substeps=4, method="rk4")
    assert tr.success
    p = CHAIN_VALUES
    spl = CubicSpline(t, u, axis=0, bc_type="not-a-knot")

    def rhs(tau: float, y: np.ndarray) -> list[float]:
        x1, x2, v1, v2 = y
        f1, f2 = spl(tau)
        d, dv = x1 - x2, v1 - v2
        conn = p["k1_1_2"] * d + p["k3_1_2"] * d**3 + p["c2_1_2"] * abs(dv) * dv
        a1 = (f1 - p["k1_1"] * x1 - p["c1_1"] * v1 - conn) / p["m0_1"]
        a2 = (f2 - p["c1_2"] * v2 + conn) / p["m0_2"]
        return [v1, v2, a1, a2]

    ref = solve_ivp(rhs, (t[0], t[-1]), y0, method="DOP853", t_eval=t, rtol=1e-11, atol=1e-13, max_step=t[1] - t[0])
    for k, name in enumerate(m.state_names):
        err = np.max(np.abs(tr.output(name) - ref.y[k])) / np.max(np.abs(ref.y[k]))
        assert err < 1e-6, (name, err)
    acc = np.array([rhs(tau, y) for tau, y in zip(t, ref.y.T)])[:, 2:]
    np.testing.assert_allclose(tr.accelerations, acc, rtol=0, atol=1e-6 * np.max(np.abs(acc)))


@pytest.mark.parametrize("method", ["rk4", "sdirk"])
def test_two_dof_sensitivities_match_finite_differences(method: str) -> None:
    m = chain()
    theta = m.default_parameters(CHAIN_VALUES).values
    t, u = drive(n=600)
    y0 = np.array([0.001, -0.002, 0.0, 0.01])
    outs = ("x1", "x2", "a2")
    kw = {"substeps": 2} if method == "rk4" else {"rtol": 1e-10}
    base = integrate(m, t, u, theta, y0, method=method, sensitivities=True, outputs=outs, initial=("x1", "v2"), **kw)
    q = np.r_[theta, y0[0], y0[3]]
    for k in range(q.size):
        h = 1e-6 * max(abs(q[k]), 1e-3)
        runs = []
        for sgn in (1, -1):
            qq = q.copy()
            qq[k] += sgn * h
            yy = y0.copy()
            yy[0], yy[3] = qq[-2], qq[-1]
            # SDIRK: the step sizes of the base run are not replayed; a tight tolerance keeps the
            # step-selection difference below the check's tolerance
            runs.append(integrate(m, t, u, qq[: theta.size], yy, method=method, **kw))
        for name in outs:
            fd = (runs[0].output(name) - runs[1].output(name)) / (2 * h)
            an = base.sens[name][:, k]  # type: ignore[index]
            scale = np.max(np.abs(an))
            tol = 2e-4 if method == "rk4" else 2e-3
            assert np.max(np.abs(fd - an)) <= tol * scale + 1e-12, (method, base.sens_names[k], name)


SETUPS = {
    "m0": {}, "m1": {"m1": 0.08}, "c1": {"c1": 0.5}, "c2": {"c2": 0.3}, "fc": {"fc": 0.4, "v_eps": 0.02},
    "k1": {}, "k2": {"k2": 800.0}, "k3": {"k3": 3e4}, "kg": {"kg": 300.0, "gap": 0.002}, "f0": {"f0": 0.2},
    "lugre": {"sigma0": 1e5, "sigma1": 300.0, "sigma2": 0.4, "Fc": 0.5, "Fs": 0.8, "vs": 0.01},
    "bouc_wen": {"alpha": 200.0, "beta": 30.0, "gamma": 0.8, "delta": -0.3, "nu": 1.0},
    "stribeck": {"Fc": 0.3, "Fs": 0.5, "vs": 0.02, "v_eps": 0.01},
}


@pytest.mark.parametrize("name", list(REGISTRY) + ["custom"])
def test_every_term_simulates_like_solve_ivp(name: str) -> None:
    assert set(SETUPS) == set(REGISTRY), "a new term needs a setup here"
    custom = [custom_term("asym", "ka*x*abs(x)")] if name == "custom" else []
    terms = tuple(dict.fromkeys(("m0", "c1", "k1", custom[0].name if custom else name)))
    model = TermModel(terms, custom=custom)
    values = {"m0": 1.0, "c1": 0.5, "k1": 400.0, **SETUPS.get(name, {"ka": 2e4})}
    theta = model.default_parameters({k: v for k, v in values.items() if k in model.param_names}).values
    t, u = drive(n=1000, fs=400.0)
    f = u[:, 0]
    stiff = name == "lugre"
    # 8 RK4 substeps: the comparison checks the model and integrator, not the default step's accuracy
    sim = simulate(model, t, f, theta, (0.001, 0.0), substeps=None if stiff else 8)
    ref = simulate_reference(model, t, f, theta, (0.001, 0.0), method="Radau" if stiff else "DOP853",
                             rtol=1e-10, atol=1e-13)
    assert sim.success and ref.success, sim.message
    err = np.sqrt(np.mean((sim.x - ref.x) ** 2)) / np.sqrt(np.mean(ref.x**2))
    assert err < (1e-5 if name in ("kg", "fc") else 1e-6), (name, sim.method, err)
    for z in model.internal_state_names:
        zs, zr = sim.states[z], ref.states[z]
        assert np.sqrt(np.mean((zs - zr) ** 2)) <= 1e-5 * np.sqrt(np.mean(zr**2)), z


@pytest.mark.parametrize("sigma0", [1e5, 1e7])
@pytest.mark.parametrize("amplitude,regime", [(3.0, "stick-slip"), (0.5, "pre-sliding")])
def test_lugre_agrees_with_a_stiff_reference(sigma0: float, amplitude: float, regime: str) -> None:
    model = TermModel("m0,k1,lugre")
    p = model.default_parameters({"m0": 1.0, "k1": 10.0, "sigma0": sigma0, "sigma1": np.sqrt(sigma0), "sigma2": 0.4,
                                  "Fc": 1.0, "Fs": 1.5, "vs": 1e-3})
    t = np.arange(0, 2.0, 1e-3)
    f = amplitude * np.sin(2 * np.pi * t)
    sim = simulate(model, t, f, p)
    ref = simulate_reference(model, t, f, p, method="Radau", rtol=1e-10, atol=1e-14)
    assert sim.success and ref.success
    err = np.sqrt(np.mean((sim.x - ref.x) ** 2)) / np.sqrt(np.mean(ref.x**2))
    assert err < 1e-3, (regime, sim.method, err)
    if regime == "stick-slip":
        assert sim.method.startswith("sdirk"), "sliding at sigma0 >= 1e5 is stiff: the implicit integrator is chosen"
        assert np.ptp(ref.x) > 0.05
    else:
        assert np.max(np.abs(ref.x)) < 2 * amplitude / sigma0 + 1e-12, "below breakaway the motion is pre-sliding"


def test_lugre_sensitivities_through_the_stiff_integrator() -> None:
    model = TermModel("m0,k1,lugre")
    p = model.default_parameters({"m0": 1.0, "k1": 10.0, "sigma0": 1e5, "sigma1": 300.0, "sigma2": 0.4, "Fc": 1.0,
                                  "Fs": 1.5, "vs": 1e-2})
    t = np.arange(0, 1.0, 2e-3)
    f = 3.0 * np.sin(2 * np.pi * t)
    base = simulate(model, t, f, p, method="sdirk", sensitivities=True, outputs=("x",))
    theta = p.values
    for k, name in enumerate(model.param_names):
        h = 1e-5 * abs(theta[k])
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        fd = (simulate(model, t, f, up, method="sdirk").x - simulate(model, t, f, dn, method="sdirk").x) / (2 * h)
        an = base.sens["x"][:, k]  # type: ignore[index]
        assert np.max(np.abs(fd - an)) <= 5e-3 * np.max(np.abs(an)) + 1e-14, name


def test_sdirk_is_fourth_order() -> None:
    model = TermModel("m0,c1,k1,k3")
    theta = np.array([1.0, 0.3, 100.0, 1e4])
    t = np.linspace(0, 2.0, 41)
    f = 5 * np.sin(3 * t)
    ref = simulate_reference(model, t, f, theta, rtol=1e-13, atol=1e-15)
    errs = []
    for rtol in (1e-5, 1e-7, 1e-9):
        sim = simulate(model, t, f, theta, method="sdirk", x0=(0.0, 0.0))
        sim = integrate(model, t, f, theta, [0.0, 0.0], method="sdirk", rtol=rtol)
        errs.append(np.max(np.abs(sim.output("x") - ref.x)))
    assert errs[2] < errs[1] < errs[0]
    assert errs[2] < 1e-8 * np.max(np.abs(ref.x)) * 10


@pytest.mark.skipif(not BOUCWEN.is_dir(), reason="Bouc-Wen benchmark data not installed beside the checkout")
def test_bouc_wen_reproduces_the_benchmark_multisine() -> None:
    from scipy.io import loadmat

    def load(name: str) -> np.ndarray:
        d = loadmat(BOUCWEN / name)
        return next(v for k, v in d.items() if not k.startswith("__")).ravel().astype(float)

    u, y = load("uval_multisine.mat"), load("yval_multisine.mat")
    model = TermModel("m0,c1,k1,bouc_wen")
    p = model.default_parameters({"m0": 2.0, "c1": 10.0, "k1": 5e4, "alpha": 5e4, "beta": 1e3, "gamma": 0.8,
                                  "delta": -1.1, "nu": 1.0})
    periods = 4
    uu = np.tile(u, periods)
    t = np.arange(uu.size) / 750.0
    sim = simulate(model, t, uu, p)
    assert sim.success
    err = np.sqrt(np.mean((sim.x[-u.size :] - y) ** 2)) / np.sqrt(np.mean(y**2))
    assert err < 5e-3, err  # the benchmark's own floor with a cubic-spline input is 0.04 %
