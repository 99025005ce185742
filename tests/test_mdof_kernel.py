"""Multi-DOF kernel: exact Jacobians, the mass matrix and kinetic energy, energy conservation, an
independent world-frame Newton–Euler reference under ``solve_ivp``, simulation and static
sensitivities, held DOFs and failure statuses.

The references here are written independently of the kernel: the rotation is composed from
elementary rotations in numpy, the body's angular velocity comes from finite differences of R, and
the reference dynamics are Newton–Euler in world axes (ω in world axes, J_w = R J Rᵀ, about the CoG).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from nlid_core.errors import ModelSpecError
from nlid_core.mdof import equilibrium
from nlid_core.mdof import evaluate as kernel
from nlid_core.dynamics.geometry import euler_rate_matrix, rotation, rotation_partials
from nlid_core.mdof.integrate import simulate
from nlid_core.mdof.layout import build_layout
from nlid_core.terms.registry import get_term

K1, K3, C1, C2, FC = (get_term(s) for s in ("k1", "k3", "c1", "c2", "fc"))
G0 = 9.80665
MOUNTS = ((0.4, 0.3, -0.1), (-0.4, 0.3, -0.1), (-0.4, -0.3, -0.1), (0.4, -0.3, -0.05))
#: m, cx, cy, cz, Jxx, Jyy, Jzz, Jxy, Jxz, Jyz: an offset CoG and a full inertia tensor with products.
RIGID = (20.0, 0.05, -0.03, 0.12, 1.2, 1.5, 2.0, 0.1, -0.05, 0.08)


# ----------------------------------------------------------------------------- models
def chain():
    """3 masses; k1 to ground, k3 0–1, c1 1–2, c2 2–ground, fc 1–ground, k1 2–0; gravity on DOF 2."""
    conns = [(K1, 0, -1, [3]), (K3, 0, 1, [4]), (C1, 1, 2, [5]), (C2, 2, -1, [6]), (FC, 1, -1, [7, 8]),
             (K1, 2, 0, [9])]
    lay = build_layout(3, 10, masses=[(0, 0), (1, 1), (2, 2)], grav=[0.0, 0.0, -G0], connections=conns,
                       inputs=[(0, 0), (0, 1), (0, 2)])
    theta = np.array([1.0, 2.0, 1.5, 100.0, 50.0, 0.3, 0.2, 0.5, 0.05, 30.0])
    return lay, theta


def platform(laws=None, g=G0):
    """A rigid platform on four mounts; ``laws[axis]`` = ((term, value), ...) on every mount's axis."""
    if laws is None:
        laws = {ax: ((K1, 2e4), (K3, 1e6), (C1, 50.0), (C2, 10.0)) for ax in range(3)}
    elements, theta = [], list(RIGID)
    for j in range(len(MOUNTS)):
        for ax in range(3):
            for term, value in laws[ax]:
                values = np.atleast_1d(value).tolist()
                elements.append((term, j, ax, list(range(len(theta), len(theta) + len(values)))))
                theta += values
    lay = build_layout(6, len(theta), rigid=(range(6), range(10)), g=g, mount_points=MOUNTS,
                       mount_elements=elements, inputs=[(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)])
    return lay, np.array(theta)


def linear_laws(k_xy=1e4, k_z=2e4, c=0.0):
    terms = ((K1, k_xy),) + (((C1, c),) if c else ())
    return {0: terms, 1: terms, 2: ((K1, k_z),) + (((C1, c),) if c else ())}


# ----------------------------------------------------------------------------- independent references
def rot(eta):
    """R = Rz(ψ) Ry(θ) Rx(φ), composed here independently of the package."""
    f, t, p = eta
    rx = np.array([[1, 0, 0], [0, np.cos(f), -np.sin(f)], [0, np.sin(f), np.cos(f)]])
    ry = np.array([[np.cos(t), 0, np.sin(t)], [0, 1, 0], [-np.sin(t), 0, np.cos(t)]])
    rz = np.array([[np.cos(p), -np.sin(p), 0], [np.sin(p), np.cos(p), 0], [0, 0, 1]])
    return rz @ ry @ rx


def inertia(par):
    _, _, _, _, jxx, jyy, jzz, jxy, jxz, jyz = par
    return np.array([[jxx, jxy, jxz], [jxy, jyy, jyz], [jxz, jyz, jzz]])


def body_rates_fd(eta, etad, h=1e-6):
    """ω_b and Ṙ from central differences of R along the motion (independent of E_b)."""
    rdot = (rot(eta + h * etad) - rot(eta - h * etad)) / (2 * h)
    skew = rot(eta).T @ rdot
    return np.array([skew[2, 1] - skew[1, 2], skew[0, 2] - skew[2, 0], skew[1, 0] - skew[0, 1]]) / 2, rdot


def world_rate_matrix(eta):
    """ω_world = W η̇: the yaw axis, the once-yawed pitch axis and the yawed-and-pitched roll axis."""
    f, t, p = eta
    rz = rot((0.0, 0.0, p))
    rzy = rot((0.0, t, p))
    return np.column_stack([rzy @ [1.0, 0, 0], rz @ [0, 1.0, 0], [0, 0, 1.0]])


def reference_rhs(theta, laws, u_fun, g=G0):
    """World-frame Newton–Euler of the platform about its CoG, with np.linalg.solve of the 6×6 system."""
    m = theta[0]
    c = np.array(theta[1:4])
    jb = inertia(theta[:10])
    par = iter(theta[10:])
    mount_law = [[(term.name, [next(par) for _ in term.params]) for term, _ in laws[ax]] for _ in MOUNTS
                 for ax in range(3)]

    def law(terms, d, v, z, zdot):
        """Force of one mount axis; a LuGre term reads its bristle state from ``z`` and appends its rate."""
        out = 0.0
        for name, val in terms:
            if name == "lugre":
                s0, s1, s2, fc, fs, vs = val
                zk = z[len(zdot)]
                rate = v - s0 * abs(v) * zk / (fc + (fs - fc) * np.exp(-((v / vs) ** 2)))
                zdot.append(rate)
                out += s0 * zk + s1 * rate + s2 * v
                continue
            k = val[0]
            out += {"k1": k * d, "k3": k * d**3, "c1": k * v, "c2": k * abs(v) * v}[name]
        return out

    def f(t, y):
        o, eta, od, etad, z = y[:3], y[3:6], y[6:9], y[9:12], y[12:]
        zdot: list[float] = []
        r = rot(eta)
        w = world_rate_matrix(eta)
        omega = w @ etad
        rc = r @ c
        force = np.array([0.0, 0.0, -m * g])
        moment = np.zeros(3)  # about the CoG
        for j, a in enumerate(MOUNTS):
            ra = r @ np.array(a)
            d = o + ra - np.array(a)
            dd = od + np.cross(omega, ra)
            fm = -np.array([law(mount_law[3 * j + ax], d[ax], dd[ax], z, zdot) for ax in range(3)])
            force += fm
            moment += np.cross(ra - rc, fm)
        u = u_fun(t)
        force += u[:3]
        moment += np.cross(-rc, u[:3]) + u[3:]
        jw = r @ jb @ r.T
        a = np.zeros((6, 6))
        a[:3, :3] = m * np.eye(3)
        a[:3, 3:] = -m * np.array([[0, -rc[2], rc[1]], [rc[2], 0, -rc[0]], [-rc[1], rc[0], 0]])
        a[3:, 3:] = jw
        b = np.concatenate([force - m * np.cross(omega, np.cross(omega, rc)), moment - np.cross(omega, jw @ omega)])
        acc = np.linalg.solve(a, b)
        # ω = W η̇ ⇒ ω̇ = W η̈ + Ẇ η̇, with the columns of W turning at the rates of the outer angles
        f_, t_, p_ = etad
        wz = np.array([0, 0, p_])
        wdot_etad = np.cross(wz + t_ * w[:, 1], w[:, 0]) * f_ + np.cross(wz, w[:, 1]) * t_
        etadd = np.linalg.solve(w, acc[3:] - wdot_etad)
        return np.concatenate([od, etad, acc[:3], etadd, zdot])

    return f


def fd_jacobian(fun, x, rel=1e-6):
    cols = []
    for k in range(x.size):
        h = rel * max(1.0, abs(x[k]))
        e = np.zeros_like(x)
        e[k] = h
        cols.append((fun(x + e) - fun(x - e)) / (2 * h))
    return np.array(cols).T


def assert_close_columns(exact, approx, rtol):
    """Each column within ``rtol`` of its largest entry (or of the matrix's, for tiny columns)."""
    scale = np.maximum(np.abs(exact).max(axis=0), 1e-3 * np.abs(exact).max())
    err = np.abs(exact - approx) / scale
    assert err.max() <= rtol, f"worst column {err.max(axis=0).argmax()}: {err.max():.2e}"


# ----------------------------------------------------------------------------- geometry
def test_rotation_and_its_partials_against_composition_and_finite_differences():
    eta = np.array([0.7, -0.4, 2.1])
    fac, r, dr, d2r = np.zeros((3, 3, 3, 3)), np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3))
    rotation_partials(*eta, fac, r, dr, d2r)
    e, de, d2e = np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3))
    euler_rate_matrix(eta[0], eta[1], e, de, d2e)
    np.testing.assert_allclose(r, rot(eta), atol=1e-15)
    np.testing.assert_allclose(rotation(*eta), rot(eta), atol=1e-15)
    assert rotation([0.1, 0.2], 0.0, 0.3).shape == (2, 3, 3)
    h = 1e-5  # central differences: truncation ~h² = 1e-10
    for k in range(3):
        step = np.eye(3)[k] * h
        np.testing.assert_allclose(dr[k], (rot(eta + step) - rot(eta - step)) / (2 * h), atol=1e-9)
        for m in range(3):
            num = (rot(eta + step + np.eye(3)[m] * h) - rot(eta + step - np.eye(3)[m] * h)
                   - rot(eta - step + np.eye(3)[m] * h) + rot(eta - step - np.eye(3)[m] * h)) / (4 * h * h)
            np.testing.assert_allclose(d2r[k, m], num, atol=1e-5)  # second differences: roundoff ~1e-16/h²
    # E_b: ω_b of R's finite difference equals E_b η̇; its partials by differences of E_b itself
    etad = np.array([0.3, -1.1, 0.8])
    omega, _ = body_rates_fd(eta, etad)
    np.testing.assert_allclose(e @ etad, omega, atol=1e-9)
    for k in range(2):
        ep, em = np.zeros((3, 3)), np.zeros((3, 3))
        euler_rate_matrix(eta[0] + h * (k == 0), eta[1] + h * (k == 1), ep, np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)))
        euler_rate_matrix(eta[0] - h * (k == 0), eta[1] - h * (k == 1), em, np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)))
        np.testing.assert_allclose(de[k], (ep - em) / (2 * h), atol=1e-9)


# ----------------------------------------------------------------------------- layout validation
def test_build_layout_refuses_bad_descriptions():
    with pytest.raises(ModelSpecError, match="lugre"):
        build_layout(1, 8, masses=[(0, 0)], connections=[(get_term("lugre"), 0, -1, list(range(1, 8)))])
    with pytest.raises(ModelSpecError, match="m0"):
        build_layout(2, 2, masses=[(0, 0), (1, 1)], connections=[(get_term("m0"), 0, 1, [0])])
    with pytest.raises(ModelSpecError, match=r"DOF\(s\) \[1\] have no inertia"):
        build_layout(2, 2, masses=[(0, 0)], connections=[(K1, 0, 1, [1])])
    with pytest.raises(ModelSpecError, match="connections\\[0\\] \\(j\\)"):
        build_layout(2, 3, masses=[(0, 0), (1, 1)], connections=[(K1, 0, 5, [2])])
    with pytest.raises(ModelSpecError, match="gives 2 parameter indices"):
        build_layout(1, 3, masses=[(0, 0)], connections=[(K1, 0, -1, [1, 2])])
    with pytest.raises(ModelSpecError, match="need a rigid body"):
        build_layout(1, 2, masses=[(0, 0)], mount_points=[(0.0, 0.0, 0.0)])
    with pytest.raises(ModelSpecError, match="no rigid body"):
        build_layout(1, 1, masses=[(0, 0)], inputs=[(2, 0)])


# ----------------------------------------------------------------------------- Jacobians
def check_jacobians(lay, y, u, theta, held):
    """jy and jp of :func:`kernel.evaluate` against central differences of its ẏ; returns ẏ, jy, jp."""
    ydot, jy, jp, status = kernel.evaluate(lay, y, u, theta, held)
    assert status == kernel.OK

    def f(yy, tt):
        return kernel.evaluate(lay, yy, u, tt, held, False)[0]

    # central differences, relative step 1e-6: truncation ~1e-12, roundoff ~1e-10 relative
    assert_close_columns(jy, fd_jacobian(lambda yy: f(yy, theta), y), 1e-6)
    assert_close_columns(jp, fd_jacobian(lambda tt: f(y, tt), theta), 1e-6)
    return ydot, jy, jp


@pytest.mark.parametrize("held", [None, [False, True, False]])
def test_chain_jacobians_match_finite_differences(held, rng):
    lay, theta = chain()
    for _ in range(3):
        _, jy, jp = check_jacobians(lay, rng.normal(size=6), rng.normal(size=3), theta, held)
        if held is not None:
            assert not jy[4].any() and not jp[4].any()


@pytest.mark.parametrize("held", [None, [False, True, False, True, False, False]])
def test_platform_jacobians_match_finite_differences(held, rng):
    lay, theta = platform()
    for _ in range(3):
        y = np.concatenate([rng.normal(scale=0.05, size=3), rng.normal(scale=0.7, size=3), rng.normal(size=6)])
        ydot, jy, jp = check_jacobians(lay, y, rng.normal(scale=20.0, size=6), theta, held)
        if held is not None:
            assert ydot[7] == 0.0 and ydot[9] == 0.0 and not jy[[7, 9]].any() and not jp[[7, 9]].any()


# ----------------------------------------------------------------------------- mass matrix and energy
def test_mass_matrix_is_spd_and_gives_the_kinetic_energy(rng):
    lay, theta = platform()
    m, c, jb = theta[0], theta[1:4], inertia(theta[:10])
    for _ in range(5):
        q = np.concatenate([rng.normal(size=3), rng.uniform(-1.2, 1.2, size=3)])
        qd = rng.normal(size=6)
        mass = kernel.mass_matrix(lay, q, theta)
        np.testing.assert_allclose(mass, mass.T, rtol=0, atol=1e-13)
        assert np.linalg.eigvalsh(mass).min() > 0
        omega, rdot = body_rates_fd(q[3:], qd[3:])
        v_cog = qd[:3] + rdot @ c
        expected = 0.5 * m * v_cog @ v_cog + 0.5 * omega @ jb @ omega
        # R̈-free central differences with h = 1e-6: relative error ~1e-10
        assert 0.5 * qd @ mass @ qd == pytest.approx(expected, rel=1e-8)
    lay_c, th_c = chain()
    np.testing.assert_array_equal(kernel.mass_matrix(lay_c, np.zeros(3), th_c), np.diag(th_c[:3]))


def mount_energy(q, theta, laws):
    r = rot(q[3:])
    par = iter(theta[10:])
    out = 0.0
    for a in MOUNTS:
        d = q[:3] + r @ np.array(a) - np.array(a)
        for ax in range(3):
            for term, _ in laws[ax]:
                val = next(par)
                out += 0.5 * val * d[ax] ** 2 if term is K1 else 0.25 * val * d[ax] ** 4
    return out


def test_free_undamped_tumbling_conserves_energy():
    laws = {ax: ((K1, 30.0), (K3, 200.0)) for ax in range(3)}
    lay, theta = platform(laws)
    m, c = theta[0], theta[1:4]
    t = np.linspace(0.0, 2.0, 2001)
    y0 = np.array([0.0, 0.0, 0.1, 0.2, 0.1, 0.0, 0.3, -0.2, 0.5, 3.0, 0.8, 4.0])
    run = simulate(lay, t, np.zeros((t.size, 6)), theta, y0, sens=False, nsub=4)
    assert run.success, run.message

    def energy(i):
        q, qd = run.q[i], run.qd[i]
        kin = 0.5 * qd @ kernel.mass_matrix(lay, q, theta) @ qd
        return kin + m * G0 * (q[2] + (rot(q[3:]) @ c)[2]) + mount_energy(q, theta, laws)

    e = np.array([energy(i) for i in range(0, t.size, 50)])
    assert np.ptp(run.q[:, 3]) > 2 * np.pi and np.ptp(run.q[:, 5]) > 1.0  # a full roll turn: tumbling
    # RK4 with h = 2.5e-4 s against rates up to ~10 rad/s: energy drift ~(ωh)^4·ωT ≈ 1e-10 (2e-12 measured)
    assert np.ptp(e) <= 1e-8 * np.abs(e).max()


# ----------------------------------------------------------------------------- against solve_ivp
def smooth_inputs(t):
    t = np.asarray(t)
    return np.stack([40 * np.sin(2 * np.pi * 2.0 * t), 30 * np.cos(2 * np.pi * 1.5 * t), 60 * np.sin(2 * np.pi * t),
                     150 * np.sin(2 * np.pi * 1.2 * t + 0.3), 100 * np.cos(2 * np.pi * 0.8 * t),
                     200 * np.sin(2 * np.pi * 1.5 * t)], axis=-1)


def test_simulation_matches_an_independent_newton_euler_reference():
    laws = {ax: ((K1, 300.0), (K3, 2e3), (C1, 20.0), (C2, 5.0)) for ax in range(3)}
    lay, theta = platform(laws)
    t = np.linspace(0.0, 0.6, 601)
    y0 = np.array([0.01, -0.02, 0.0, 0.3, -0.2, 0.5, 0.1, 0.0, -0.1, 1.0, -0.5, 2.0])
    run = simulate(lay, t, smooth_inputs(t), theta, y0, sens=False, nsub=4, hold="cubic")
    assert run.success, run.message
    ref = solve_ivp(reference_rhs(theta, laws, smooth_inputs), (0.0, t[-1]), y0, method="DOP853", t_eval=t,
                    rtol=1e-10, atol=1e-12)
    assert ref.success
    assert np.ptp(run.q[:, 3]) > 1.0 and np.ptp(run.q[:, 5]) > 1.0  # large angles
    # RK4 with h = 2.5e-4 s and rates up to ~20 rad/s: global error ~(ωh)^4 ≈ 1e-9 relative; the cubic
    # spline of the inputs on a 1 ms grid adds ~1e-8 (1.6e-8 measured): 1e-6 of the motion's range
    for k in range(6):
        scale = np.ptp(ref.y[k])
        assert np.abs(run.q[:, k] - ref.y[k]).max() <= 1e-6 * scale, k
        assert np.abs(run.qd[:, k] - ref.y[6 + k]).max() <= 1e-6 * np.ptp(ref.y[6 + k]), k


LUGRE = get_term("lugre")
#: σ0, σ1, σ2, Fc, Fs, vs of the bristle friction on every mount's vertical axis: stiff (σ0 = 1e6 N/m).
LUGRE_MOUNT = (1e6, 400.0, 20.0, 15.0, 25.0, 0.01)


def lugre_platform():
    laws = {0: ((K1, 2e3), (C1, 30.0)), 1: ((K1, 2e3), (C1, 30.0)), 2: ((K1, 4e3), (LUGRE, LUGRE_MOUNT))}
    return (*platform(laws), laws)


def test_internal_states_on_mounts_have_exact_jacobians(rng):
    lay, theta, _ = lugre_platform()
    assert lay.n_states == 12 + len(MOUNTS)
    for _ in range(2):
        y = np.concatenate([rng.normal(scale=0.005, size=3), rng.normal(scale=0.1, size=3),
                            rng.normal(scale=0.05, size=6), rng.normal(scale=1e-5, size=len(MOUNTS))])
        check_jacobians(lay, y, rng.normal(scale=20.0, size=6), theta, None)


def test_a_stiff_lugre_mount_simulates_against_radau_on_an_independent_reference():
    """LuGre (σ0 = 1e6 N/m) on the vertical axis of every mount: the model switches to SDIRK4 and matches scipy's
    Radau on the independent Newton–Euler reference with the bristle states (relative rms ≤ 1e-3)."""
    lay, theta, laws = lugre_platform()
    t = np.linspace(0.0, 0.4, 401)
    y0 = np.zeros(12)
    run = simulate(lay, t, smooth_inputs(t), theta, y0, sens=False)
    assert run.success and "sdirk" in run.message, run.message
    ref = solve_ivp(reference_rhs(theta, laws, smooth_inputs), (0.0, t[-1]), np.zeros(12 + len(MOUNTS)),
                    method="Radau", t_eval=t, rtol=1e-9, atol=1e-12)
    assert ref.success
    for k in range(6):
        err = np.sqrt(np.mean((run.q[:, k] - ref.y[k]) ** 2) / np.mean(ref.y[k] ** 2))
        assert err <= 1e-3, (k, err)


# ----------------------------------------------------------------------------- sensitivities
@pytest.mark.parametrize("held", [None, [False, False, False, True, False, False]])
def test_simulation_sensitivities_match_finite_differences(held):
    lay, theta = platform()
    t = np.linspace(0.0, 0.1, 101)
    u = smooth_inputs(t)
    y0 = np.array([0.001, -0.002, 0.003, 0.0, 0.02, -0.01, 0.05, 0.0, -0.05, 0.2, -0.3, 0.1])
    outs = tuple(range(18))
    run = simulate(lay, t, u, theta, y0, held=held, outputs=outs, nsub=2)
    assert run.success, run.message
    n_init = 12 if held is None else 10
    assert run.sens.shape == (t.size, 18, theta.size + n_init)

    def record(th, y):
        r = simulate(lay, t, u, th, y, held=held, sens=False, nsub=2)
        return np.concatenate([r.q, r.qd, r.qdd], axis=1)

    def worst(exact, fd):
        """Largest error relative to the largest entry of each block (q, q̇, q̈) of one column."""
        return max(np.abs(exact[:, b] - fd[:, b]).max() / np.abs(fd[:, b]).max()
                   for b in (slice(0, 6), slice(6, 12), slice(12, 18)))

    # central differences of whole runs: relative parameter step 1e-4 keeps the truncation below 1e-8;
    # the roundoff floor of the weak k3/c2 columns is ~1e-6 (measured 9e-7), hence 2e-6
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = 1e-4 * abs(theta[k])
        fd = (record(theta + e, y0) - record(theta - e, y0)) / (2 * e[k])
        assert worst(run.sens[:, :, k], fd) <= 2e-6, k
    for c, k in enumerate(run.init_states):  # step 1e-6 on states of size 1e-3..0.3: measured 1e-8
        e = np.zeros(12)
        e[k] = 1e-6
        fd = (record(theta, y0 + e) - record(theta, y0 - e)) / 2e-6
        assert worst(run.sens[:, :, theta.size + c], fd) <= 1e-6, k


# ----------------------------------------------------------------------------- statics
def test_static_equilibrium_under_gravity_and_loads_and_its_sensitivity():
    lay, theta = platform()
    u = np.array([300.0, -200.0, 100.0, 50.0, -40.0, 30.0])
    q, ok, msg = equilibrium.static_equilibrium(lay, u, theta)
    assert ok, msg
    res = kernel.generalised_forces(lay, q, np.zeros(6), u, theta)
    assert np.abs(res).max() <= 1e-9 * theta[0] * G0
    sens = equilibrium.static_sensitivity(lay, q, u, theta)
    for k in range(theta.size):
        h = 1e-6 * abs(theta[k])
        e = np.zeros_like(theta)
        e[k] = h
        qp = equilibrium.static_equilibrium(lay, u, theta + e, q)[0]
        qm = equilibrium.static_equilibrium(lay, u, theta - e, q)[0]
        fd = (qp - qm) / (2 * h)
        assert np.abs(sens[:, k] - fd).max() <= 1e-6 * np.abs(sens).max(), k


def test_static_equilibrium_of_a_linear_mount_law_matches_the_small_load_solution():
    lay, theta = platform(linear_laws(), g=0.0)
    stiff = np.zeros((6, 6))
    for a in MOUNTS:
        ax_ = np.array(a)
        jd = np.hstack([np.eye(3), -np.array([[0, -ax_[2], ax_[1]], [ax_[2], 0, -ax_[0]], [-ax_[1], ax_[0], 0]])])
        stiff += jd.T @ np.diag([1e4, 1e4, 2e4]) @ jd
    u = np.array([2.0, -1.0, 3.0, 0.5, -0.3, 0.2])  # small loads: deflections ~1e-4 m, rotations ~1e-4 rad
    q, ok, msg = equilibrium.static_equilibrium(lay, u, theta)
    assert ok, msg
    q_lin = np.linalg.solve(stiff, u)  # at q = 0: J_d = [I, −[a]×], Q_o = f, Q_η = N
    # the nonlinearity of the geometry is second order in the rotation: relative error ~1e-4
    np.testing.assert_allclose(q, q_lin, rtol=0, atol=1e-3 * np.abs(q_lin).max())
    assert np.abs(q - q_lin).max() > 0  # not identical: the kinematics are not linearised


def test_an_equilibrium_with_a_rounding_residual_is_found_where_it_starts():
    """The preset table with every DOF held but one translation (a sweep rig): at the start the free DOF's force is
    rounding (1e-30 N beside 1e3 N of gravity on the held ones), no Newton step can reduce it, and the start is the
    equilibrium. Every DOF freed alone has one; before, the two horizontal ones were refused, and with them
    ``experiments --preset platform``."""
    from nlid_core.mdof.presets import platform as preset

    model = preset()
    theta = model.parameters().values
    for dof in model.dof_names:
        held = model.held_mask([d for d in model.dof_names if d != dof])
        q, ok, msg = equilibrium.static_equilibrium(model.layout, np.zeros(6), theta, held=held)
        assert ok, (dof, msg)
        assert np.all(q[held] == 0.0)


# ----------------------------------------------------------------------------- held DOFs
def test_platform_held_but_z_is_a_mass_on_the_vertical_springs():
    lay, theta = platform(linear_laws(), g=0.0)
    held = [True, True, False, True, True, True]
    omega = np.sqrt(4 * 2e4 / theta[0])
    t = np.linspace(0.0, 0.5, 2001)
    y0 = np.zeros(12)
    y0[2] = 1e-3
    run = simulate(lay, t, np.zeros((t.size, 6)), theta, y0, held=held, nsub=2)
    assert run.success, run.message
    assert run.init_states == (2, 8) and run.sens.shape[2] == theta.size + 2
    assert not run.q[:, [0, 1, 3, 4, 5]].any()
    # RK4 phase error ~(ωh)^4·ωt/120 with ωh = 0.008: ~1e-10 relative
    np.testing.assert_allclose(run.q[:, 2], 1e-3 * np.cos(omega * t), rtol=0, atol=1e-9)


# ----------------------------------------------------------------------------- failures
def test_failures_are_statuses_with_messages():
    lay, theta = platform()
    t = np.linspace(0.0, 1.0, 1001)
    u = np.zeros((t.size, 6))
    bad = theta.copy()
    bad[0] = -1.0
    run = simulate(lay, t, u, bad, np.zeros(12))
    assert run.status == "nonpositive_mass" and not run.success and "t = 0 s" in run.message
    assert kernel.evaluate(lay, np.zeros(12), None, bad)[3] == kernel.NONPOSITIVE_MASS
    lock = np.zeros(12)
    lock[4] = np.pi / 2
    assert kernel.evaluate(lay, lock, None, theta)[3] == kernel.GIMBAL_LOCK
    run = simulate(lay, t, u, theta, lock)
    assert run.status == "gimbal_lock" and "gimbal lock" in run.message
    # negative linear stiffness: the platform runs away until the position limit
    lin, th_lin = platform(linear_laws(k_xy=-1e4, k_z=-1e4), g=0.0)
    y0 = np.zeros(12)
    y0[2] = 1e-3
    run = simulate(lin, t, u, th_lin, y0, sens=False)
    assert run.status == "diverged" and run.fail_time is not None and "diverged at t =" in run.message
    assert np.isnan(run.q[-1]).all()
    q, ok, msg = equilibrium.static_equilibrium(lay, None, theta, q0=lock[:6])
    assert not ok and "gimbal" in msg


def test_substeps_follow_the_fastest_rate():
    lay, theta = platform(linear_laws(k_xy=1e6, k_z=1e6))
    t = np.linspace(0.0, 0.01, 11)
    run = simulate(lay, t, np.zeros((t.size, 6)), theta, np.zeros(12), sens=False)
    rate = np.abs(np.linalg.eigvals(kernel.evaluate(lay, np.zeros(12), None, theta)[1])).max()
    assert run.nsub == int(np.ceil(rate * 1e-3 / 0.25)) > 1
