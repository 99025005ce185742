"""One engine: a model built through different front doors simulates the same, to rounding.

The same two-mass chain built by hand on the general layer (``dynamics.Model``) and read from a multi-DOF model file
gives the same trajectories and sensitivities (1e-10 relative: both run the same compiled right-hand side and RK4,
so the only differences are summation order); and the model file's route agrees with the rigid-body-capable
multi-DOF kernel on a lumped chain with gravity, a held DOF and a shared parameter (same discrete map, 1e-10).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nlid_core.dynamics.integrate import integrate
from nlid_core.dynamics.model import Element, Model
from nlid_core.mdof.integrate import simulate
from nlid_core.mdof.modelfile import parse_model
from nlid_core.terms.registry import get_term

CHAIN = """
name = "two masses"
[[dof]]
name = "x1"
[[dof]]
name = "x2"
{gravity}
[[connection]]
name = "g"
between = ["x1", "ground"]
terms = ["k1", "k3", "c1"]
[[connection]]
name = "s"
between = ["x2", "x1"]
terms = ["k1", "c2"]
[inputs]
f_x1 = "F"
[outputs]
x1 = "X1"
x2 = "X2"
[parameters]
m_x1 = 1.3
m_x2 = 0.7
k1_g = 900.0
k3_g = 4.0e6
c1_g = 1.5
k1_s = 600.0
c2_s = 20.0
{share}
"""


def _input() -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(1500) / 400.0
    return t, 4.0 * np.sin(2 * np.pi * 1.7 * t) + 2.0 * np.sin(2 * np.pi * 6.1 * t + 1.0)


def _close(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def test_model_file_and_general_layer_give_the_same_trajectories_and_sensitivities() -> None:
    model = parse_model(CHAIN.format(gravity="", share=""))
    theta = model.parameters().values
    t, f = _input()
    y0 = np.array([1e-3, -2e-3, 0.01, 0.0])
    run = simulate(model.layout, t, f, theta, y0, hold="cubic", nsub=2)
    assert run.success and run.sens is not None
    T = get_term
    hand = Model([Element(T("m0"), 1), Element(T("m0"), 2), Element(T("k1"), 1), Element(T("k3"), 1),
                  Element(T("c1"), 1), Element(T("k1"), 2, 1), Element(T("c2"), 2, 1)])
    values = dict(zip(model.param_names, theta, strict=True))
    by_place = {"m0_1": "m_x1", "m0_2": "m_x2", "k1_1": "k1_g", "k3_1": "k3_g", "c1_1": "c1_g", "k1_2_1": "k1_s",
                "c2_2_1": "c2_s"}
    th_hand = np.array([values[by_place[n]] for n in hand.param_names])
    ref = integrate(hand, t, np.column_stack([f, np.zeros_like(f)]), th_hand, y0, method="rk4", substeps=2,
                    sensitivities=True, outputs=("x1", "x2"), initial=hand.state_names)
    assert ref.success and ref.sens is not None
    assert _close(run.q, ref.states[:, :2]) < 1e-10 and _close(run.qd, ref.states[:, 2:4]) < 1e-10
    for j, out in enumerate(("x1", "x2")):
        for name, col in zip(hand.param_names, ref.sens[out].T, strict=False):
            k = model.param_names.index(by_place[name])
            assert _close(run.sens[:, j, k], col) < 1e-10, (out, name)
        # initial-state columns: the free positions, then the free velocities, as the state order
        assert _close(run.sens[:, j, model.n_params:], ref.sens[out][:, hand.n_params:]) < 1e-10


@pytest.mark.parametrize("held", [None, (False, True)])
def test_shared_parameters_gravity_and_held_dofs_keep_exact_sensitivities(held: tuple[bool, ...] | None) -> None:
    """A shared stiffness (one column for two elements), lumped gravity (folded into the mass columns) and a held DOF:
    the model file's sensitivities are the derivatives of its own simulation (central differences, 1e-6)."""
    text = CHAIN.format(gravity="gravity = -9.80665", share='[share]\nk1 = ["k1_g", "k1_s"]')
    model = parse_model(text.replace("k1_g = 900.0\n", "k1 = 800.0\n").replace("k1_s = 600.0\n", ""))
    assert "k1" in model.param_names
    theta = model.parameters().values
    t, f = _input()
    y0 = np.array([-2e-3, 1e-3, 0.0, 0.0])
    mask = None if held is None else np.array(held)
    run = simulate(model.layout, t, f, theta, y0, held=mask, hold="cubic", nsub=2)
    assert run.success and run.sens is not None
    for k in range(model.n_params):
        h = 1e-6 * abs(theta[k])
        up, down = theta.copy(), theta.copy()
        up[k] += h
        down[k] -= h
        qs = [simulate(model.layout, t, f, th, y0, held=mask, hold="cubic", nsub=2, sens=False).q for th in (up, down)]
        assert _close(run.sens[:, :, k], (qs[0] - qs[1]) / (2 * h)) < 1e-6, model.param_names[k]
    if held is not None:
        assert np.all(run.q[:, 1] == y0[1])


LUGRE_CHAIN = """
name = "two masses, LuGre between them"
[[dof]]
name = "x1"
[[dof]]
name = "x2"
[[connection]]
name = "g"
between = ["x1", "ground"]
terms = ["k1", "c1"]
[[connection]]
name = "s"
between = ["x2", "x1"]
terms = ["k1", "lugre"]
[inputs]
f_x1 = "F"
[outputs]
x1 = "X1"
x2 = "X2"
[parameters]
m_x1 = 1.0
m_x2 = 0.5
k1_g = 2000.0
c1_g = 2.0
k1_s = 500.0
sigma0_s = { value = 1.0e6, fixed = true }
sigma1_s = { value = 300.0, fixed = true }
sigma2_s = 0.5
Fc_s = 3.0
Fs_s = 4.0
vs_s = { value = 0.01, fixed = true }
"""


def test_a_stiff_lugre_connection_simulates_against_radau_and_is_identified() -> None:
    """LuGre with σ0 = 1e6 N/m between two masses: the general layer switches to SDIRK4 and matches scipy's Radau
    (relative rms ≤ 1e-3; measured ~2e-7), and the multi-DOF fit recovers the connection from a noisy record with
    the truths inside their intervals."""
    from scipy.integrate import solve_ivp
    from scipy.interpolate import CubicSpline

    from nlid_core.mdof.data import MdofRecord
    from nlid_core.mdof.fit import fit_records

    model = parse_model(LUGRE_CHAIN)
    truth = dict(zip(model.param_names, model.parameters().values, strict=True))
    t = np.arange(1000) / 1000.0
    f = 20 * np.sin(2 * np.pi * 1.5 * t) + 5 * np.sin(2 * np.pi * 7 * t)
    spline = CubicSpline(t, f)
    s0, s1, s2, fc, fs, vs = (truth[n + "_s"] for n in ("sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs"))

    def rhs(tt: float, y: np.ndarray) -> list[float]:
        x1, x2, v1, v2, z = y
        v = v2 - v1
        zd = v - s0 * abs(v) * z / (fc + (fs - fc) * np.exp(-((v / vs) ** 2)))
        force = s0 * z + s1 * zd + s2 * v + truth["k1_s"] * (x2 - x1)
        return [v1, v2, (spline(tt) - truth["k1_g"] * x1 - truth["c1_g"] * v1 + force) / truth["m_x1"],
                -force / truth["m_x2"], zd]

    ref = solve_ivp(rhs, (0.0, t[-1]), np.zeros(5), method="Radau", t_eval=t, rtol=1e-9, atol=1e-12).y[:2].T
    run = simulate(model.layout, t, f, model.parameters().values, np.zeros(4), hold="cubic", sens=False)
    assert run.success and "sdirk" in run.message
    for j in range(2):
        assert np.sqrt(np.mean((run.q[:, j] - ref[:, j]) ** 2) / np.mean(ref[:, j] ** 2)) < 1e-3
    y = ref + np.random.default_rng(1).normal(0.0, 2e-6, ref.shape)
    rec = MdofRecord(name="multi1", t=t, u=f[:, None], y=y, input_names=model.used_inputs, output_names=model.dof_names)
    start = model.parameters().with_values({"k1_s": 420.0, "Fc_s": 2.4, "Fs_s": 4.6, "k1_g": 2300.0})
    fit = fit_records(model, [rec], start, ["k1_g", "c1_g", "k1_s", "Fc_s", "Fs_s", "sigma2_s"])
    assert fit.success, fit.message
    for e in fit.estimates:
        if e.vary:
            assert e.ci[0] <= truth[e.name] <= e.ci[1] or abs(e.value - truth[e.name]) < 3.5 * e.stderr, e


ONE_DOF = """
name = "one mass"
[[dof]]
name = "y"
[[connection]]
name = "g"
between = ["y", "ground"]
terms = ["c1", "k1", "k3", "kq = kq*x*abs(x)"]
[inputs]
f_y = "force"
[outputs]
y = "disp"
[parameters]
m_y = { value = 0.8, lower = 0.05 }
c1_g = { value = 0.5, lower = 0.0 }
k1_g = 700.0
k3_g = 3.0e5
kq_g = { value = 0.0, fixed = true }
"""


def test_a_one_dof_model_file_and_terms_give_bit_identical_estimates(tmp_path: object) -> None:
    """``identify --model`` of a one-DOF model file on dynamic records is the single-DOF identification of
    ``--terms`` from the same start: the same estimators, so every value, standard error and interval is equal bit
    for bit; the JSON maps the model file's names to the single-DOF ones. Anything the single-DOF form cannot hold
    (here, a static load case) still runs the staged multi-DOF fit, and options that describe a model are refused."""
    import json
    from pathlib import Path

    from nlid_core.cli import main
    from nlid_core.examples import make_example

    d = Path(str(tmp_path))
    rec = make_example("seed", overrides={"terms": {"m0": 1.0, "c1": 0.6, "k1": 900.0, "k3": 4e5}, "duration_s": 6.0,
                                          "noise": {"x": 2e-5}, "measured": ("x",)})
    import pandas as pd

    pd.DataFrame({"t": rec.t, "force": rec.f, "disp": rec.x}).to_csv(d / "run.csv", index=False)
    (d / "one.toml").write_text(ONE_DOF)
    common = [str(d / "run.csv"), "--method", "output-error", "--quiet"]
    assert main(["identify", *common, "--model", str(d / "one.toml"), "--json", str(d / "m.json")]) == 0
    assert main(["identify", *common, "--terms", "m0,c1,k1,k3,kq", "--custom", "kq=kq*x*abs(x)",
                 "--columns", "f=force,x=disp", "--start", "m0=0.8,c1=0.5,k1=700,k3=3e5", "--fix", "kq=0",
                 "--bounds", "m0=0.05:,c1=0:", "--json", str(d / "t.json")]) == 0
    by_file, by_terms = (json.loads((d / n).read_text()) for n in ("m.json", "t.json"))
    assert by_file["model_file"]["parameters"] == {"m_y": "m0", "c1_g": "c1", "k1_g": "k1", "k3_g": "k3", "kq_g": "kq"}
    assert by_file["parameters"] == by_terms["parameters"]
    assert by_file["parameter_setup"] == by_terms["parameter_setup"]
    assert abs(by_file["parameters"]["k1"]["value"] - 900.0) < 4 * by_file["parameters"]["k1"]["stderr"]
    assert by_file["parameters"]["kq"]["vary"] is False

    x = np.linspace(-2e-3, 2e-3, 20)
    pd.DataFrame({"t": np.arange(20.0), "force": 900.0 * x + 4e5 * x**3, "disp": x}).to_csv(d / "static.csv", index=False)
    (d / "manifest.toml").write_text('[[record]]\nfile = "run.csv"\n\n[[record]]\nfile = "static.csv"\nstatic = true\n')
    assert main(["identify", "--records", str(d / "manifest.toml"), "--model", str(d / "one.toml"), "--stages", "none",
                 "--quiet", "--json", str(d / "s.json")]) in (0, 1)
    assert "stages" in json.loads((d / "s.json").read_text())
    assert main(["identify", *common, "--model", str(d / "one.toml"), "--start", "k1_g=800"]) == 2
    from nlid_core.mdof.single import single_dof_form

    assert "rotation" in str(single_dof_form(parse_model(ONE_DOF.replace('name = "y"', 'name = "y"\nunit = "rad"'))))
