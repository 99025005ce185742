"""The planar ANCF double pendulum (nlid_core.multibody.pendulum / ancf / reference).

Measured when written (2 cores): preset vs the paper's table A1 0.35 mm RMS (0.88 mm max) at dt 5e-4 and
1e-3; generalized-α vs DOP853 (rtol 1e-10) 1.9e-5 m at 0.5 s with dt 5e-4 (2.0e-6 m at 2.5e-4);
energy drift with ρ∞ = 1 over 1 s 7.9e-7 of the peak kinetic energy; sensitivities vs central differences
2e-9 (angles) … 1.4e-6 (E_oa) relative; E ×1e3 tip within 2.0e-5 m of the rigid model at 0.5 s.
"""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import solve_ivp

from nlid_core.errors import ModelSpecError, SimulationError
from nlid_core.multibody import ancf
from nlid_core.multibody import reference as ref
from nlid_core.multibody.pendulum import (PARAMETERS, PendulumSpec, SolverSettings, _run, energy, initial_state,
                                          layout, rigid_energy, simulate, simulate_rigid, tip_response)
from nlid_core.multibody.rigid_pendulum import _rigid_states
from tests.conftest import shared_data_dir

TH1, TH2 = math.pi / 4, math.pi / 6
SPEC = PendulumSpec()


@pytest.fixture(scope="module")
def lay():  # type: ignore[no-untyped-def]
    return layout(SPEC)


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return ref.model(SPEC)


def _elastic(lay, q, spec=SPEC):  # type: ignore[no-untyped-def]
    f, k, fp = np.zeros(lay.n), np.zeros((lay.n, lay.n)), np.zeros((2, lay.n))
    ancf.elastic(q, lay.dofmap, lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod, spec.nu, lay.rod, True, True, f, k, fp)
    return f, k, fp


def _perturbed(lay, rng):  # type: ignore[no-untyped-def]
    q0, _ = initial_state(SPEC, 0.7, -0.3)
    return q0 + 0.02 * rng.standard_normal(lay.n)


# ----------------------------------------------------------------------------- 1. the paper's table
def test_reproduces_paper_table_a1() -> None:
    d = shared_data_dir()
    path = d / "pendulum" / "tableA1_case1.csv" if d else None
    if path is None or not path.is_file():
        pytest.skip("pendulum table not available (../shared/data/pendulum)")
    tab = pd.read_csv(path)
    for dt in (5e-4, 1e-3):
        run = simulate(TH1, TH2, settings=SolverSettings(dt=dt))
        assert run.success, run.message
        np.testing.assert_allclose(run.t, tab["t"].to_numpy(), atol=1e-12)
        err = np.concatenate([run.x_b - tab["x_B"].to_numpy(), run.y_b - tab["y_B"].to_numpy()])
        rms, worst = float(np.sqrt(np.mean(err**2))), float(np.max(np.abs(err)))
        print(f"dt {dt:g}: table A1 RMS {1e3 * rms:.3f} mm, max {1e3 * worst:.3f} mm")
        assert rms <= 2e-3 and worst <= 3e-3
    # the tip at t = 0 is the table's first row exactly (angle convention)
    assert abs(run.x_b[0] - 2.4392) < 5e-5 and abs(run.y_b[0] + 1.7071) < 5e-5


# ----------------------------------------------------------------------------- 2. independent integrator
def test_generalized_alpha_agrees_with_dop853(lay, mod) -> None:  # type: ignore[no-untyped-def]
    q0, _ = initial_state(SPEC, TH1, TH2)
    sol = solve_ivp(lambda _t, y: ref.rhs(mod, y), (0.0, 0.5), np.concatenate([q0, np.zeros(lay.n)]),
                    method="DOP853", rtol=1e-10, atol=1e-12, t_eval=[0.25, 0.5])
    assert sol.success
    tip = lay.node_r[-1]
    errs = []
    for dt in (5e-4, 2.5e-4):
        run = simulate(TH1, TH2, t_end=0.5, dt_out=0.25, settings=SolverSettings(dt=dt))
        errs.append(max(np.max(np.abs(run.x_b[1:] - sol.y[tip[0]])), np.max(np.abs(run.y_b[1:] - sol.y[tip[1]]))))
    print(f"generalized-α vs DOP853 tip error at 0.5 s: dt 5e-4 {errs[0]:.2e} m, dt 2.5e-4 {errs[1]:.2e} m")
    assert errs[0] <= 5e-5          # measured 1.9e-5 m
    assert errs[1] <= errs[0] / 3   # the scheme converges (second order: 4x; measured 9.7x)


# ----------------------------------------------------------------------------- 3. kernel = reference, tangent
def test_kernel_equals_reference_forces(lay, mod, rng) -> None:  # type: ignore[no-untyped-def]
    np.testing.assert_allclose(lay.mass, mod.mass, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(lay.q_g, mod.q_g, rtol=1e-12, atol=1e-12)
    for _ in range(3):
        q = _perturbed(lay, rng)
        f, k, fp = _elastic(lay, q)
        fr, kr, fpr = ref.elastic(mod, q)
        assert kr is not None
        np.testing.assert_allclose(f, fr, rtol=0, atol=1e-11 * np.max(np.abs(fr)))
        np.testing.assert_allclose(k, kr, rtol=0, atol=1e-11 * np.max(np.abs(kr)))
        np.testing.assert_allclose(fp, fpr, rtol=0, atol=1e-11 * np.max(np.abs(fpr)))
        # Q_e is linear in each rod's modulus
        np.testing.assert_allclose(fp[0] * SPEC.e_oa + fp[1] * SPEC.e_ab, f, rtol=0, atol=1e-11 * np.max(np.abs(f)))
        qd = rng.standard_normal(lay.n)
        assert energy(SPEC, q, qd, lay) == pytest.approx(ref.energy(mod, q, qd), rel=1e-12)


def test_tangent_equals_central_differences(lay, rng) -> None:  # type: ignore[no-untyped-def]
    q = _perturbed(lay, rng)
    _, k, _ = _elastic(lay, q)
    fd = np.zeros_like(k)
    h = 1e-6
    for j in range(lay.n):
        dq = np.zeros(lay.n)
        dq[j] = h
        fd[:, j] = (_elastic(lay, q + dq)[0] - _elastic(lay, q - dq)[0]) / (2 * h)
    assert np.max(np.abs(k - fd)) <= 1e-6 * np.max(np.abs(k))
    np.testing.assert_allclose(k, k.T, rtol=0, atol=1e-12 * np.max(np.abs(k)))
    # the force is the gradient of the strain energy
    u = lambda x: ancf.energy_elastic(x, lay.dofmap, lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod, SPEC.nu)  # noqa: E731
    f = _elastic(lay, q)[0]
    grad = np.array([(u(q + h * e) - u(q - h * e)) / (2 * h) for e in np.eye(lay.n)])
    assert np.max(np.abs(f - grad)) <= 1e-6 * np.max(np.abs(f))


def test_mass_matrix_and_rigid_motion(lay) -> None:  # type: ignore[no-untyped-def]
    m = lay.mass
    np.testing.assert_array_equal(m, m.T)
    assert np.min(np.linalg.eigvalsh(m)) > 0
    total = SPEC.density * SPEC.width * SPEC.height * (SPEC.length_oa + SPEC.length_ab)
    # rigid rotation of the straight system about O at unit rate: q̇ᵀMq̇ = I_O = m(L²/3 + H²/12), the inertia of
    # the L × H rectangle about the middle of its end (the rigid model's)
    q0, dq = initial_state(SPEC, 0.3, 0.3)
    w = dq[:, 0] + dq[:, 1]
    big_l, h = SPEC.length_oa + SPEC.length_ab, SPEC.height
    assert w @ m @ w == pytest.approx(total * (big_l**2 / 3 + h**2 / 12), rel=1e-12)
    # straight rods rotated and placed anywhere carry no elastic force
    for th1, th2 in ((0.0, 0.0), (TH1, TH2), (2.0, -1.1), (-3.0, 0.4)):
        q0, _ = initial_state(SPEC, th1, th2)
        f, _, _ = _elastic(lay, q0)
        assert np.max(np.abs(f)) <= 1e-9 * np.max(np.abs(lay.q_g))
        assert ancf.energy_elastic(q0, lay.dofmap, lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod, SPEC.nu) < 1e-12


def test_compiled_run_equals_reference_run(lay) -> None:  # type: ignore[no-untyped-def]
    names = ("theta2", "E_ab")
    run = simulate(TH1, TH2, t_end=0.2, sensitivities=names, nodes=True)
    rr = ref.simulate(SPEC, TH1, TH2, t_end=0.2, sensitivities=names)
    assert run.success and rr.success
    tip = lay.node_r[-1]
    np.testing.assert_allclose(run.x_b, rr.q[:, tip[0]], rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.y_b, rr.q[:, tip[1]], rtol=0, atol=1e-9)
    for j, name in enumerate(names):
        s_ref = rr.sens[:, tip, j]
        np.testing.assert_allclose(run.sensitivities[name], s_ref, rtol=0, atol=1e-9 * np.max(np.abs(s_ref)))
    assert run.newton_iterations == rr.newton_iterations


# ----------------------------------------------------------------------------- 4. energy
def test_energy_nearly_conserved_without_dissipation(lay) -> None:  # type: ignore[no-untyped-def]
    dt = 5e-4
    q, v, _, status, *_ = _run(SPEC, lay, TH1, TH2, (), dt, 100, 20, SolverSettings(rho_inf=1.0, dt=dt))
    assert status == ancf.OK
    e = np.array([energy(SPEC, q[i], v[i], lay) for i in range(q.shape[0])])
    kin = np.array([0.5 * v[i] @ lay.mass @ v[i] for i in range(q.shape[0])])
    drift = float(np.max(np.abs(e - e[0])) / np.max(kin))
    print(f"energy drift over 1 s with ρ∞ = 1: {drift:.2e} of the peak kinetic energy")
    assert kin.max() > 100.0   # it really moves (≈ 750 J)
    assert drift <= 5e-6       # measured 7.9e-7


# ----------------------------------------------------------------------------- 5. sensitivities
def test_sensitivities_match_central_differences() -> None:
    run = simulate(TH1, TH2, t_end=0.5, sensitivities=PARAMETERS)
    nominal = {"theta1": TH1, "theta2": TH2, "E_ab": SPEC.e_ab, "E_oa": SPEC.e_oa}
    for name in PARAMETERS:
        step = 1e-6 * (1.0 if name.startswith("theta") else nominal[name])
        vals = []
        for sign in (1, -1):
            p = dict(nominal)
            p[name] += sign * step
            vals.append(tip_response(list(p.values()), list(p.keys()), t_end=0.5))
        fd = (vals[0] - vals[1]) / (2 * step)
        s = np.concatenate([run.sensitivities[name][:, 0], run.sensitivities[name][:, 1]])
        rel = np.max(np.abs(s - fd)) / np.max(np.abs(s))
        print(f"d tip / d {name}: relative difference to central differences {rel:.1e}")
        assert rel <= 1e-5
    assert run.sensitivities["theta1"].shape == (11, 2)
    np.testing.assert_array_equal(run.sensitivities["E_ab"][0], 0.0)   # released straight: no E at t = 0


# ----------------------------------------------------------------------------- 6. rigid limit
def test_stiff_rods_approach_the_rigid_model() -> None:
    rigid = simulate_rigid(TH1, TH2, t_end=0.5)
    errs = []
    for scale in (10.0, 1e3):
        sp = dataclasses.replace(SPEC, e_oa=SPEC.e_oa * scale, e_ab=SPEC.e_ab * scale)
        run = simulate(TH1, TH2, spec=sp, t_end=0.5)
        assert run.success, run.message
        errs.append(max(np.max(np.abs(run.x_b - rigid.x_b)), np.max(np.abs(run.y_b - rigid.y_b))))
    print(f"ANCF vs rigid tip at 0.5 s: E x10 {errs[0]:.2e} m, E x1e3 {errs[1]:.2e} m")
    assert errs[1] <= 5e-5              # measured 2.0e-5 m
    assert errs[0] >= 20 * errs[1]      # the gap closes like 1/E (measured 100x)


def test_rigid_model_conserves_energy_and_matches_its_nodes() -> None:
    run = simulate_rigid(TH1, TH2, t_end=2.0, dt_out=0.01, nodes=True)
    assert run.success and run.model == "rigid"
    assert run.nodes is not None and run.nodes.shape == (201, SPEC.n_oa + SPEC.n_ab + 1, 2)
    a, b = run.nodes[:, SPEC.n_oa], run.nodes[:, -1]
    np.testing.assert_allclose(np.hypot(a[:, 0], a[:, 1]), SPEC.length_oa, rtol=1e-12)
    np.testing.assert_allclose(np.hypot(*(b - a).T), SPEC.length_ab, rtol=1e-12)
    np.testing.assert_array_equal(b[:, 0], run.x_b)
    y, ok, _, _ = _rigid_states(SPEC, TH1, TH2, run.t)
    assert ok
    np.testing.assert_allclose(np.cos(y[:, 0]), a[:, 0] / SPEC.length_oa, atol=1e-14)
    e = rigid_energy(SPEC, y[:, :2], y[:, 2:])
    kin_peak = float(np.max(e[0] - rigid_energy(SPEC, y[:, :2], np.zeros_like(y[:, 2:]))))
    drift = float(np.max(np.abs(e - e[0])) / kin_peak)
    print(f"rigid model energy drift over 2 s: {drift:.1e} of the peak kinetic energy")
    assert drift <= 1e-8


# ----------------------------------------------------------------------------- outputs
def test_outputs_and_frame() -> None:
    run = simulate(TH1, TH2, t_end=0.3, dt_out=0.1, nodes=True)
    assert run.success and run.model == "ancf" and run.steps == 600 and run.newton_iterations > 0
    np.testing.assert_array_equal(run.t, [0.0, 0.1, 0.2, 0.30000000000000004])
    assert run.nodes is not None and run.nodes.shape == (4, 7, 2)
    np.testing.assert_array_equal(run.nodes[:, 0], 0.0)
    np.testing.assert_array_equal(run.nodes[:, -1, 1], run.y_b)
    np.testing.assert_allclose(run.nodes[0, 2], [math.cos(TH1), -math.sin(TH1)], atol=1e-15)
    frame = run.to_frame()
    assert list(frame.columns) == ["t", "x_B", "y_B"] and len(frame) == 4
    assert run.sensitivities == {} and run.elapsed_s > 0
    back = pickle.loads(pickle.dumps(tip_response))
    y = back([TH1, TH2], ["theta1", "theta2"], t_end=0.3, dt_out=0.1)
    np.testing.assert_array_equal(y, np.concatenate([run.x_b, run.y_b]))
    # E given by name overrides the spec
    y2 = tip_response([2e6, TH2, TH1], ["E_ab", "theta2", "theta1"], t_end=0.3, dt_out=0.1)
    soft = simulate(TH1, TH2, spec=dataclasses.replace(SPEC, e_ab=2e6), t_end=0.3, dt_out=0.1)
    np.testing.assert_array_equal(y2, np.concatenate([soft.x_b, soft.y_b]))


# ----------------------------------------------------------------------------- 7. bad input and failure
@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"theta1": float("nan")}, "`theta1`"),
    ({"theta2": float("inf")}, "`theta2`"),
    ({"dt_out": 0.0507}, "`dt_out`"),
    ({"dt_out": 0.5, "t_end": 0.2}, "`dt_out`"),
    ({"t_end": -1.0}, "`t_end`"),
    ({"t_end": 61.0}, "`t_end`"),
    ({"sensitivities": ("E_xx",)}, "`sensitivities`"),
    ({"sensitivities": "theta1"}, "`sensitivities`"),
])
def test_bad_simulate_arguments(kwargs, needle) -> None:  # type: ignore[no-untyped-def]
    args = {"theta1": TH1, "theta2": TH2}
    args.update(kwargs)
    th1, th2 = args.pop("theta1"), args.pop("theta2")
    with pytest.raises(ModelSpecError, match=needle):
        simulate(th1, th2, **args)


@pytest.mark.parametrize(("field", "value"), [
    ("e_ab", -2e7), ("e_oa", 0.0), ("height", float("nan")), ("length_ab", -1.0), ("density", 0.0),
    ("width", -0.02), ("nu", 0.5), ("n_oa", 0), ("n_ab", 2.5), ("gravity", -9.8),
])
def test_bad_spec_names_the_field(field, value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelSpecError, match=f"`{field}`"):
        PendulumSpec(**{field: value})


@pytest.mark.parametrize(("field", "value"), [("dt", 0.0), ("rho_inf", 1.5), ("tol", -1.0), ("max_iter", 0)])
def test_bad_settings_name_the_field(field, value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelSpecError, match=f"`{field}`"):
        SolverSettings(**{field: value})


def test_tip_response_needs_both_angles() -> None:
    with pytest.raises(ModelSpecError, match="theta2"):
        tip_response([TH1, 2e7], ["theta1", "E_ab"], t_end=0.1)
    with pytest.raises(ModelSpecError, match="`params`"):
        tip_response([TH1], ["theta1", "theta2"], t_end=0.1)


def test_impossible_setting_fails_cleanly() -> None:
    huge = dataclasses.replace(SPEC, e_oa=2e14, e_ab=2e14)
    bad = SolverSettings(dt=0.05, rho_inf=1.0)
    run = simulate(TH1, TH2, spec=huge, t_end=1.0, dt_out=0.05, settings=bad)
    assert not run.success and "t = 0.05 s" in run.message
    assert np.isfinite(run.x_b[0]) and np.all(np.isnan(run.x_b[1:]))
    with pytest.raises(SimulationError, match="t = 0.05 s"):
        simulate(TH1, TH2, spec=huge, t_end=1.0, dt_out=0.05, settings=bad, strict=True)
    with pytest.raises(SimulationError):
        tip_response([TH1, TH2], ["theta1", "theta2"], spec=huge, t_end=1.0, dt_out=0.05, settings=bad)
    # too few Newton iterations: no convergence, reported with its time
    run = simulate(TH1, TH2, t_end=0.2, dt_out=0.01, settings=SolverSettings(dt=0.01, max_iter=1))
    assert not run.success and "did not converge at t =" in run.message
