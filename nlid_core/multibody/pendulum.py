r"""The planar flexible double pendulum of Guo & Jin (2025): two ANCF rods under gravity, generalized-α time
integration with forward sensitivities, and its rigid-body limit.

**Model.** Rod OA (length :math:`L_1`, ``n_oa`` elements) is pinned to the ground at O = (0, 0); rod AB
(:math:`L_2`, ``n_ab`` elements) is joined to OA's end A by a revolute joint. Both are fully parameterised planar
ANCF beams (:mod:`nlid_core.multibody.ancf`) with in-plane section height ``H``, out-of-plane width ``W``,
density ρ, plane-stress Young's moduli :math:`E_{OA}, E_{AB}` and Poisson ratio ν, under gravity ``g`` along −y.
The system is released from rest, straight and stress free, at the absolute angles θ1 (OA) and θ2 (AB) measured
*below the horizontal*: :math:`A = L_1(\cos\theta_1, -\sin\theta_1)`, :math:`B = A + L_2(\cos\theta_2, -\sin\theta_2)`.
The width cancels from the response (mass, gravity and stiffness all scale with it); the height enters both the
bending stiffness and the rotary inertia. The paper's appendix table is reproduced with ``H = 0.4`` m (the
printed section is 0.04 × 0.02 m², which reproduces nothing; see the data README of seed 002).

**Coordinates** (joints by coordinate sharing, no multipliers; ``n = 6(n_oa + n_ab) + 8``, 44 for the preset):
``q[0:4]`` the slopes :math:`(r_x, r_y)` of OA at O (O's position is fixed at zero); then for each interior
node of OA its :math:`(r, r_x, r_y)` (6 each); then at A: :math:`r_A` (2, shared), OA's slopes at A (4), AB's
slopes at A (4); then each interior node of AB (6 each); then B's :math:`(r, r_x, r_y)` (6). Every 2-vector is
stored (x, y). In the straight initial state :math:`r_x` is the rod's unit direction and :math:`r_y` its
unit normal (the stress-free reference is the straight rod).

**Rigid limit.** Two uniform rigid rods with the same in-plane section (rectangles :math:`L_i\times H`): mass
:math:`m_i = \rho W H L_i`, rotary inertia about the centre of mass :math:`m_i(L_i^2 + H^2)/12` (about the rod's
end on its axis :math:`m_i(L_i^2/3 + H^2/12)`: exactly the inertia of the ANCF section, whose
:math:`\int\rho y^2 dA = \rho W H^3/12` per length). With counter-clockwise angles :math:`\varphi_i = -\theta_i`,
:math:`c_2 = L_2/2`, :math:`I_1 = m_1(L_1^2/3 + H^2/12)`, :math:`I_{2c} = m_2(L_2^2+H^2)/12`:

.. math::

    \begin{pmatrix} I_1 + m_2L_1^2 & m_2L_1c_2\cos\Delta \\ m_2L_1c_2\cos\Delta & I_{2c} + m_2c_2^2\end{pmatrix}
    \ddot\varphi = -\begin{pmatrix} m_2L_1c_2\sin\Delta\,\dot\varphi_2^2 + (m_1L_1/2 + m_2L_1)g\cos\varphi_1 \\
    -m_2L_1c_2\sin\Delta\,\dot\varphi_1^2 + m_2c_2 g\cos\varphi_2\end{pmatrix},\quad \Delta = \varphi_1-\varphi_2,

integrated by scipy's DOP853 (rtol 1e-10, atol 1e-12).

References
----------
Guo, X., Jin, Y. (2025). Inverse dynamical problem of flexible multibody systems with interval uncertainty.
J. Vib. Eng. 38(5), 974–983. https://doi.org/10.16385/j.cnki.issn.1004-4523.2025.05.009

Omar, M. A., Shabana, A. A. (2001). A two-dimensional shear deformable beam for large rotation and deformation
problems. J. Sound Vib. 243(3), 565–576. https://doi.org/10.1006/jsvi.2000.3416

Shabana, A. A. (2012). Computational Continuum Mechanics, 2nd ed. Cambridge University Press.

Chung, J., Hulbert, G. M. (1993). J. Appl. Mech. 60(2), 371–375. https://doi.org/10.1115/1.2900803

Arnold, M., Brüls, O. (2007). Multibody Syst. Dyn. 18(2), 185–202. https://doi.org/10.1007/s11044-007-9084-0
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError, SimulationError
from . import ancf
from .pendulum_spec import MAX_T_END, PARAMETERS, PendulumRun, PendulumSpec, SolverSettings, _angles, _grid
from .rigid_pendulum import rigid_constants, rigid_energy, simulate_rigid

__all__ = ["MAX_T_END", "PARAMETERS", "Layout", "PendulumRun", "PendulumSpec", "SolverSettings", "energy",
           "initial_state", "layout", "rigid_constants", "rigid_energy", "simulate", "simulate_rigid", "tip_response"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_STATUS = {ancf.NO_CONVERGENCE: "Newton did not converge", ancf.DIVERGED: "the state became non-finite",
           ancf.INDEFINITE: "the iteration matrix M + β'K is not positive definite"}


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Coordinates and element tables of a :class:`PendulumSpec` (see the module docstring for the order).

    Attributes
    ----------
    n : int
        Number of coordinates.
    dofmap : (n_el, 12) int ndarray
        Global index of each element coordinate, −1 for O's fixed position.
    node_r : (n_nodes, 2) int ndarray
        Global indices of each node's position (−1 for O).
    rod : (n_el,) int ndarray
        0 for OA's elements, 1 for AB's.
    e_mod : (n_el,) ndarray, Pa
    s_tab, a_tab, b_tab : (n_el, n_gp, 6) ndarray
        Shape scalars and their x, y derivatives at the quadrature points.
    w_tab : (n_el, n_gp) ndarray, m³
    mass : (n, n) ndarray
    q_g : (n,) ndarray, N
    """

    n: int
    dofmap: IntArray
    node_r: IntArray
    rod: IntArray
    e_mod: FloatArray
    s_tab: FloatArray
    a_tab: FloatArray
    b_tab: FloatArray
    w_tab: FloatArray
    mass: FloatArray
    q_g: FloatArray


def _rod_nodes(spec: PendulumSpec) -> tuple[list[list[int]], list[list[int]], int]:
    """Per rod, per node, the 6 global indices (r, r_x, r_y); −1 for O's position."""
    idx = 0

    def take(k: int) -> list[int]:
        nonlocal idx
        out = list(range(idx, idx + k))
        idx += k
        return out

    oa: list[list[int]] = [[-1, -1] + take(4)]
    for _ in range(spec.n_oa - 1):
        oa.append(take(6))
    r_a = take(2)
    oa.append(r_a + take(4))
    ab: list[list[int]] = [r_a + take(4)]
    for _ in range(spec.n_ab - 1):
        ab.append(take(6))
    ab.append(take(6))
    return oa, ab, idx


def layout(spec: PendulumSpec) -> Layout:
    """Build the coordinate layout, quadrature tables, mass matrix and gravity force of ``spec``.

    Parameters
    ----------
    spec : PendulumSpec

    Returns
    -------
    Layout
    """
    oa, ab, n = _rod_nodes(spec)
    rows, rods, moduli, tabs = [], [], [], []
    for r, (nodes, length, n_el, e_mod) in enumerate(((oa, spec.length_oa, spec.n_oa, spec.e_oa),
                                                       (ab, spec.length_ab, spec.n_ab, spec.e_ab))):
        tab = ancf.element_tables(length / n_el, spec.height, spec.width)
        for j in range(n_el):
            rows.append(nodes[j] + nodes[j + 1])
            rods.append(r)
            moduli.append(float(e_mod))
            tabs.append(tab)
    dofmap = np.asarray(rows, dtype=np.int64)
    s_tab, a_tab, b_tab, w_tab = (np.ascontiguousarray(np.stack([t[i] for t in tabs])) for i in range(4))
    node_r = np.asarray([nd[:2] for nd in oa] + [nd[:2] for nd in ab[1:]], dtype=np.int64)
    mass, qg = ancf.mass_and_gravity(n, dofmap, s_tab, w_tab, spec.density, spec.gravity)
    return Layout(n=n, dofmap=dofmap, node_r=node_r, rod=np.asarray(rods, dtype=np.int64),
                  e_mod=np.asarray(moduli), s_tab=s_tab, a_tab=a_tab, b_tab=b_tab, w_tab=w_tab, mass=mass, q_g=qg)


def initial_state(spec: PendulumSpec, theta1: float, theta2: float) -> tuple[FloatArray, FloatArray]:
    """The straight configuration at (θ1, θ2) and its derivative.

    Parameters
    ----------
    spec : PendulumSpec
    theta1, theta2 : float, rad
        Angles of OA and AB below the horizontal.

    Returns
    -------
    q0 : (n,) ndarray
    dq0 : (n, 2) ndarray
        ∂q0/∂(θ1, θ2).
    """
    oa, ab, n = _rod_nodes(spec)
    q0, dq = np.zeros(n), np.zeros((n, 2))
    u1, n1 = np.array([math.cos(theta1), -math.sin(theta1)]), np.array([math.sin(theta1), math.cos(theta1)])
    u2, n2 = np.array([math.cos(theta2), -math.sin(theta2)]), np.array([math.sin(theta2), math.cos(theta2)])
    du1, dn1 = np.array([-math.sin(theta1), -math.cos(theta1)]), np.array([math.cos(theta1), -math.sin(theta1)])
    du2, dn2 = np.array([-math.sin(theta2), -math.cos(theta2)]), np.array([math.cos(theta2), -math.sin(theta2)])
    start = np.zeros(2)
    for r, (nodes, length, u, nv, du, dnv) in enumerate(((oa, spec.length_oa, u1, n1, du1, dn1),
                                                          (ab, spec.length_ab, u2, n2, du2, dn2))):
        for j, idx in enumerate(nodes):
            x = length * j / (len(nodes) - 1)
            if idx[0] >= 0:
                q0[idx[0:2]] = start + x * u
                dq[idx[0:2], r] = x * du
                if r == 1:
                    dq[idx[0:2], 0] = spec.length_oa * du1
            q0[idx[2:4]], q0[idx[4:6]] = u, nv
            dq[idx[2:4], r], dq[idx[4:6], r] = du, dnv
        start = spec.length_oa * u1
    return q0, dq


def energy(spec: PendulumSpec, q: FloatArray, qd: FloatArray, lay: Layout | None = None) -> float:
    r"""Total energy :math:`\tfrac12\dot q^\top M\dot q + U(q) - Q_g^\top q` (J) of the ANCF model.

    Parameters
    ----------
    spec : PendulumSpec
    q, qd : (n,) ndarray
        Coordinates and their rates.
    lay : Layout or None
        The layout of ``spec`` (built when None).

    Returns
    -------
    float, J
    """
    lay = layout(spec) if lay is None else lay
    u = ancf.energy_elastic(np.asarray(q, dtype=float), lay.dofmap, lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod,
                            float(spec.nu))
    return float(0.5 * qd @ lay.mass @ qd + u - lay.q_g @ q)


def simulate(theta1: float, theta2: float, *, spec: PendulumSpec = PendulumSpec(), t_end: float = 2.0,
             dt_out: float = 0.05, settings: SolverSettings = SolverSettings(), sensitivities: Sequence[str] = (),
             nodes: bool = False, strict: bool = False) -> PendulumRun:
    """Simulate the flexible (ANCF) double pendulum released from rest at (θ1, θ2).

    Parameters
    ----------
    theta1, theta2 : float, rad
        Angles of OA and AB below the horizontal.
    spec : PendulumSpec
    t_end : float, s
        Horizon, in (0, 60].
    dt_out : float, s
        Output spacing: a multiple of ``settings.dt`` (to 1e-9 relative), at most ``t_end``. The step used is
        ``dt_out / round(dt_out / dt)``.
    settings : SolverSettings
    sensitivities : sequence of str
        Names from :data:`PARAMETERS` whose tip sensitivities to compute (forward sensitivities of the discrete
        scheme).
    nodes : bool
        Record every node's position.
    strict : bool
        Raise :class:`SimulationError` when the run fails instead of returning ``success=False``.

    Returns
    -------
    PendulumRun

    Raises
    ------
    ModelSpecError
        Non-finite angles, a bad grid or an unknown sensitivity name.
    SimulationError
        Only with ``strict`` and a failed run.

    Notes
    -----
    See :mod:`nlid_core.multibody.ancf` for the element, the integrator and the sensitivity recursion.
    """
    th1, th2 = _angles(theta1, theta2)
    n_out, per = _grid(t_end, dt_out, settings.dt)
    names = _names(sensitivities)
    lay = layout(spec)
    h = dt_out / per
    rec_q, _, rec_s, status, fail, iters, done, elapsed = _run(spec, lay, th1, th2, names, h, n_out, per, settings)
    if status == ancf.OK:
        message = f"generalized-α completed {done} steps of {h:.6g} s ({iters} Newton iterations)"
    else:
        message = (f"{_STATUS[status]} at t = {fail * h:.6g} s (step {fail} of {h:.6g} s, ρ∞ = {settings.rho_inf}, "
                   f"tol = {settings.tol:g}, max_iter = {settings.max_iter}); reduce `dt` or check the parameters")
        if strict:
            raise SimulationError(message)
    tip = lay.node_r[-1]
    pos = _node_positions(rec_q, lay.node_r)
    sens = {name: np.ascontiguousarray(rec_s[:, tip, j]) for j, name in enumerate(names)}
    t_out = np.arange(n_out + 1, dtype=np.float64) * float(dt_out)
    return PendulumRun(success=status == ancf.OK, message=message, t=t_out,
                       x_b=pos[:, -1, 0].copy(), y_b=pos[:, -1, 1].copy(), nodes=pos if nodes else None,
                       sensitivities=sens, model="ancf", steps=int(done), newton_iterations=int(iters),
                       elapsed_s=elapsed)


def _run(spec: PendulumSpec, lay: Layout, th1: float, th2: float, names: tuple[str, ...], h: float, n_out: int,
         per: int, settings: SolverSettings) -> tuple[FloatArray, FloatArray, FloatArray, int, int, int, int, float]:
    """Run the kernel; (q, q̇ (n_out+1, n), S_q (n_out+1, n, P), status, failed step, iterations, steps, seconds)."""
    q0, dq0 = initial_state(spec, th1, th2)
    sq0 = np.zeros((lay.n, len(names)))
    par_rod = np.full(len(names), -1, dtype=np.int64)
    for j, name in enumerate(names):
        if name == "theta1":
            sq0[:, j] = dq0[:, 0]
        elif name == "theta2":
            sq0[:, j] = dq0[:, 1]
        else:
            par_rod[j] = 0 if name == "E_oa" else 1
    am, af, gamma, beta = ancf.alpha_coefficients(float(settings.rho_inf))
    rec_q = np.full((n_out + 1, lay.n), np.nan)
    rec_v = np.full((n_out + 1, lay.n), np.nan)
    rec_s = np.full((n_out + 1, lay.n, len(names)), np.nan) if names else np.zeros((1, 1, 1))
    t0 = time.perf_counter()
    status, fail, iters, done = ancf.integrate(
        q0, sq0, par_rod, lay.mass, lay.q_g, lay.dofmap, lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod,
        float(spec.nu), lay.rod, h, n_out * per, per, am, af, gamma, beta, float(settings.tol),
        ancf.residual_floor(lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod), int(settings.max_iter), rec_q, rec_v,
        rec_s)
    return rec_q, rec_v, rec_s, int(status), int(fail), int(iters), int(done), time.perf_counter() - t0


def _names(sensitivities: Sequence[str]) -> tuple[str, ...]:
    if isinstance(sensitivities, str):
        raise ModelSpecError(f"`sensitivities` must be a sequence of names, got the string {sensitivities!r}")
    names = tuple(sensitivities)
    for name in names:
        if name not in PARAMETERS:
            raise ModelSpecError(f"`sensitivities` has the unknown name {name!r}; valid: {', '.join(PARAMETERS)}")
    if len(set(names)) != len(names):
        raise ModelSpecError(f"`sensitivities` repeats a name: {names!r}")
    return names


def _node_positions(rec_q: FloatArray, node_r: IntArray) -> FloatArray:
    pos = np.zeros((rec_q.shape[0], node_r.shape[0], 2))
    for i, (ix, iy) in enumerate(node_r):
        if ix >= 0:
            pos[:, i, 0], pos[:, i, 1] = rec_q[:, ix], rec_q[:, iy]
        else:
            pos[:, i, :] = np.where(np.isnan(rec_q[:, :1]), np.nan, 0.0)
    return pos


def tip_response(params: Sequence[float], names: Sequence[str], *, spec: PendulumSpec = PendulumSpec(),
                 t_end: float = 2.0, dt_out: float = 0.05, settings: SolverSettings = SolverSettings()) -> FloatArray:
    """The tip trajectory as one vector, for surrogates and finite differences (module level, picklable).

    Parameters
    ----------
    params : sequence of float
        Values of ``names`` (rad, Pa).
    names : sequence of str
        Names from :data:`PARAMETERS`; must include ``theta1`` and ``theta2``. ``E_ab``/``E_oa`` override ``spec``.
    spec, t_end, dt_out, settings
        As in :func:`simulate`.

    Returns
    -------
    (2 n,) ndarray, m
        ``(x_B at every output time, then y_B at every output time)``.

    Raises
    ------
    ModelSpecError
        Unknown, repeated or missing names, a length mismatch, or an invalid value.
    SimulationError
        When the run fails (a surrogate must not be fitted to a failed run).
    """
    nm = _names(names)
    vals = [float(v) for v in params]
    if len(vals) != len(nm):
        raise ModelSpecError(f"`params` has {len(vals)} values for {len(nm)} `names` {nm!r}")
    given = dict(zip(nm, vals))
    for a in ("theta1", "theta2"):
        if a not in given:
            raise ModelSpecError(f"`names` must include {a!r}, got {nm!r}")
    sp = spec
    if "E_ab" in given:
        sp = dataclasses.replace(sp, e_ab=given["E_ab"])
    if "E_oa" in given:
        sp = dataclasses.replace(sp, e_oa=given["E_oa"])
    run = simulate(given["theta1"], given["theta2"], spec=sp, t_end=t_end, dt_out=dt_out, settings=settings,
                   strict=True)
    return np.concatenate([run.x_b, run.y_b])
