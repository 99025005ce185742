r"""Plain-numpy implementation of the ANCF double pendulum and its generalized-α integrator.

The same model and scheme as :mod:`nlid_core.multibody.ancf` / :mod:`nlid_core.multibody.pendulum`, written
independently in the textbook matrix form (Shabana, *Computational Continuum Mechanics*): at each quadrature
point the 2×12 matrices :math:`S_x = \partial S/\partial x`, :math:`S_y = \partial S/\partial y` are formed, the
strain–displacement matrix is

.. math::

    B = \partial\varepsilon/\partial e = \begin{pmatrix} r_x^\top S_x \\ r_y^\top S_y \\
    r_y^\top S_x + r_x^\top S_y\end{pmatrix},\qquad Q_e = \int B^\top D\varepsilon\,dV,

.. math::

    K = \int \big[B^\top D B + \sigma_{xx} S_x^\top S_x + \sigma_{yy} S_y^\top S_y
    + \tau_{xy}(S_x^\top S_y + S_y^\top S_x)\big]\,dV,

vectorised over elements and points with ``einsum``; the linear systems use ``numpy.linalg.solve``. Only the
coordinate layout and the initial state come from :mod:`nlid_core.multibody.pendulum`. It is the benchmark's
baseline and an independent check of the compiled kernels; :func:`rhs` gives the first-order ODE
:math:`\dot y = (\dot q, M^{-1}(Q_g - Q_e(q)))` for a general-purpose integrator.

References
----------
Shabana, A. A. (2012). Computational Continuum Mechanics, 2nd ed., Cambridge University Press, ch. 6.

Omar, M. A., Shabana, A. A. (2001). J. Sound Vib. 243(3), 565–576. https://doi.org/10.1006/jsvi.2000.3416

Arnold, M., Brüls, O. (2007). Multibody Syst. Dyn. 18(2), 185–202. https://doi.org/10.1007/s11044-007-9084-0
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .ancf import residual_floor
from .pendulum import PendulumSpec, SolverSettings, initial_state, layout

__all__ = ["ReferenceModel", "ReferenceRun", "elastic", "energy", "model", "rhs", "simulate"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, kw_only=True)
class ReferenceModel:
    """Matrices of the numpy model.

    Attributes
    ----------
    n : int
    dofmap : (n_el, 12) int ndarray
        Global indices, with ``n`` (a padding slot holding zero) for O's fixed position.
    sx, sy : (n_el, n_gp, 2, 12) ndarray
        Shape-function derivatives at the quadrature points.
    w : (n_el, n_gp) ndarray, m³
    e_mod : (n_el,) ndarray, Pa
    rod : (n_el,) int ndarray
    d_unit : (3, 3) ndarray
        Plane-stress elasticity matrix for a unit modulus.
    mass : (n, n) ndarray
    q_g : (n,) ndarray, N
    tip : (2,) int ndarray
        Global indices of B's position.
    """

    n: int
    dofmap: IntArray
    sx: FloatArray
    sy: FloatArray
    w: FloatArray
    e_mod: FloatArray
    rod: IntArray
    d_unit: FloatArray
    mass: FloatArray
    q_g: FloatArray
    tip: IntArray


@dataclass(frozen=True, kw_only=True)
class ReferenceRun:
    """Result of :func:`simulate`: output times (s), coordinates (n_rec, n), sensitivities (n_rec, n, P)."""

    success: bool
    message: str
    t: FloatArray
    q: FloatArray
    sens: FloatArray
    newton_iterations: int
    elapsed_s: float


def _shape_matrices(length: float, height: float, width: float) -> tuple[FloatArray, FloatArray, FloatArray,
                                                                         FloatArray]:
    """S, S_x, S_y (n_gp, 2, 12) and weights (m³) on a 5 × 3 Gauss grid."""
    gx, wx = np.polynomial.legendre.leggauss(5)
    gy, wy = np.polynomial.legendre.leggauss(3)
    big_l = length
    s_all, sx_all, sy_all, w_all = [], [], [], []
    eye = np.eye(2)
    for i, u in enumerate(gx):
        x = 0.5 * length * (1.0 + u)
        for j, v in enumerate(gy):
            y = 0.5 * height * v
            xi, eta = x / big_l, y / big_l
            s = [1 - 3 * xi**2 + 2 * xi**3, big_l * (xi - 2 * xi**2 + xi**3), big_l * (eta - xi * eta),
                 3 * xi**2 - 2 * xi**3, big_l * (-xi**2 + xi**3), big_l * xi * eta]
            # d/dx = (1/L) d/dξ, d/dy = (1/L) d/dη
            ds_dxi = [-6 * xi + 6 * xi**2, big_l * (1 - 4 * xi + 3 * xi**2), -big_l * eta, 6 * xi - 6 * xi**2,
                      big_l * (-2 * xi + 3 * xi**2), big_l * eta]
            ds_deta = [0.0, 0.0, big_l * (1 - xi), 0.0, 0.0, big_l * xi]
            s_all.append(np.kron(np.asarray(s)[None, :], eye))
            sx_all.append(np.kron(np.asarray(ds_dxi)[None, :] / big_l, eye))
            sy_all.append(np.kron(np.asarray(ds_deta)[None, :] / big_l, eye))
            w_all.append(wx[i] * wy[j] * (length / 2) * (height / 2) * width)
    return np.asarray(s_all), np.asarray(sx_all), np.asarray(sy_all), np.asarray(w_all)


def model(spec: PendulumSpec) -> ReferenceModel:
    """Build the numpy model of ``spec`` (same coordinates as :func:`nlid_core.multibody.pendulum.layout`).

    Parameters
    ----------
    spec : PendulumSpec

    Returns
    -------
    ReferenceModel
    """
    lay = layout(spec)
    n = lay.n
    dof = np.where(lay.dofmap < 0, n, lay.dofmap)
    mats = []
    for rod, (length, n_el) in enumerate(((spec.length_oa, spec.n_oa), (spec.length_ab, spec.n_ab))):
        mats += [_shape_matrices(length / n_el, spec.height, spec.width)] * n_el
    s, sx, sy, w = (np.stack([m[i] for m in mats]) for i in range(4))
    mass = np.zeros((n + 1, n + 1))
    qg = np.zeros(n + 1)
    grav = np.array([0.0, -spec.gravity])
    me = spec.density * np.einsum("ep,epij,epik->ejk", w, s, s)
    ge = spec.density * np.einsum("ep,epij,i->ej", w, s, grav)
    for el in range(dof.shape[0]):
        mass[np.ix_(dof[el], dof[el])] += me[el]
        np.add.at(qg, dof[el], ge[el])
    nu = spec.nu
    d_unit = np.array([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, 0.5 * (1 - nu)]]) / (1 - nu * nu)
    return ReferenceModel(n=n, dofmap=dof, sx=sx, sy=sy, w=w, e_mod=lay.e_mod.copy(), rod=lay.rod.copy(),
                          d_unit=d_unit, mass=mass[:n, :n], q_g=qg[:n], tip=lay.node_r[-1].copy())


def _kinematics(mod: ReferenceModel, q: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    qp = np.append(q, 0.0)
    e = qp[mod.dofmap]
    rx = np.einsum("epij,ej->epi", mod.sx, e)
    ry = np.einsum("epij,ej->epi", mod.sy, e)
    eps = np.stack([0.5 * (np.sum(rx * rx, -1) - 1), 0.5 * (np.sum(ry * ry, -1) - 1), np.sum(rx * ry, -1)], -1)
    return rx, ry, eps, e


def elastic(mod: ReferenceModel, q: FloatArray, want_k: bool = True) -> tuple[FloatArray, FloatArray | None,
                                                                              FloatArray]:
    """Elastic force, tangent and ∂Q_e/∂E_rod of the numpy model.

    Parameters
    ----------
    mod : ReferenceModel
    q : (n,) ndarray
    want_k : bool

    Returns
    -------
    f : (n,) ndarray, N
    k : (n, n) ndarray or None
    fp : (2, n) ndarray, N/Pa
    """
    n = mod.n
    rx, ry, eps, _ = _kinematics(mod, q)
    sig = np.einsum("kl,epl->epk", mod.d_unit, eps) * mod.e_mod[:, None, None]
    bmat = np.stack([np.einsum("epi,epij->epj", rx, mod.sx), np.einsum("epi,epij->epj", ry, mod.sy),
                     np.einsum("epi,epij->epj", ry, mod.sx) + np.einsum("epi,epij->epj", rx, mod.sy)], axis=2)
    fe = np.einsum("ep,epk,epkj->ej", mod.w, sig, bmat)
    f = np.zeros(n + 1)
    fp = np.zeros((2, n + 1))
    for el in range(fe.shape[0]):
        np.add.at(f, mod.dofmap[el], fe[el])
        np.add.at(fp[mod.rod[el]], mod.dofmap[el], fe[el] / mod.e_mod[el])
    if not want_k:
        return f[:n], None, fp[:, :n]
    we = mod.w * mod.e_mod[:, None]
    ke = np.einsum("ep,epkj,kl,eplm->ejm", we, bmat, mod.d_unit, bmat, optimize=True)
    ke += np.einsum("ep,epij,epim->ejm", mod.w * sig[..., 0], mod.sx, mod.sx, optimize=True)
    ke += np.einsum("ep,epij,epim->ejm", mod.w * sig[..., 1], mod.sy, mod.sy, optimize=True)
    cross = np.einsum("ep,epij,epim->ejm", mod.w * sig[..., 2], mod.sx, mod.sy, optimize=True)
    ke += cross + np.swapaxes(cross, 1, 2)
    k = np.zeros((n + 1, n + 1))
    for el in range(ke.shape[0]):
        k[np.ix_(mod.dofmap[el], mod.dofmap[el])] += ke[el]
    return f[:n], k[:n, :n], fp[:, :n]


def energy(mod: ReferenceModel, q: FloatArray, qd: FloatArray) -> float:
    r"""Total energy :math:`\tfrac12\dot q^\top M\dot q + \tfrac12\int\varepsilon^\top D\varepsilon\,dV - Q_g^\top q`
    (J) of the numpy model at ``q``, ``qd``."""
    _, _, eps, _ = _kinematics(mod, q)
    u = 0.5 * np.einsum("ep,e,epk,kl,epl->", mod.w, mod.e_mod, eps, mod.d_unit, eps)
    return float(0.5 * qd @ mod.mass @ qd + u - mod.q_g @ q)


def rhs(mod: ReferenceModel, y: FloatArray) -> FloatArray:
    """First-order form :math:`(\\dot q, M^{-1}(Q_g - Q_e(q)))` of the state ``y = (q, q̇)`` (2n,)."""
    n = mod.n
    f, _, _ = elastic(mod, y[:n], want_k=False)
    return np.concatenate([y[n:], np.linalg.solve(mod.mass, mod.q_g - f)])


def simulate(spec: PendulumSpec, theta1: float, theta2: float, *, t_end: float = 2.0, dt_out: float = 0.05,
             settings: SolverSettings = SolverSettings(), sensitivities: Sequence[str] = ()) -> ReferenceRun:
    """Generalized-α (with optional forward sensitivities) in plain numpy; the same scheme as
    :func:`nlid_core.multibody.pendulum.simulate` (inputs are assumed valid here).

    Parameters
    ----------
    spec : PendulumSpec
    theta1, theta2 : float, rad
    t_end, dt_out : float, s
    settings : SolverSettings
    sensitivities : sequence of str
        Names among ``theta1``, ``theta2``, ``E_ab``, ``E_oa``.

    Returns
    -------
    ReferenceRun
    """
    mod = model(spec)
    n = mod.n
    per = max(1, round(dt_out / settings.dt))
    h = dt_out / per
    n_out = int(math.floor(t_end / dt_out * (1 + 1e-9)))
    rho = settings.rho_inf
    am, af = (2 * rho - 1) / (rho + 1), rho / (rho + 1)
    gamma = 0.5 + af - am
    beta = 0.25 * (gamma + 0.5) ** 2
    bp = h * h * beta * (1 - af) / (1 - am)
    q0, dq0 = initial_state(spec, theta1, theta2)
    names = tuple(sensitivities)
    npar = len(names)
    sq = np.zeros((n, npar))
    rodp = []
    for j, name in enumerate(names):
        if name in ("theta1", "theta2"):
            sq[:, j] = dq0[:, 0 if name == "theta1" else 1]
            rodp.append(-1)
        else:
            rodp.append(0 if name == "E_oa" else 1)

    def dqe_dp(fp: FloatArray) -> FloatArray:
        out = np.zeros((n, npar))
        for j, r in enumerate(rodp):
            if r >= 0:
                out[:, j] = fp[r]
        return out

    t0 = time.perf_counter()
    q, v = q0.copy(), np.zeros(n)
    f, k, fp = elastic(mod, q)
    assert k is not None
    qdd = np.linalg.solve(mod.mass, mod.q_g - f)
    acc = qdd.copy()
    sv = np.zeros((n, npar))
    sqdd = np.linalg.solve(mod.mass, -k @ sq - dqe_dp(fp)) if npar else np.zeros((n, 0))
    sa = sqdd.copy()
    rec_q = np.full((n_out + 1, n), np.nan)
    rec_s = np.full((n_out + 1, n, npar), np.nan)
    rec_q[0], rec_s[0] = q, sq
    t_out = np.arange(n_out + 1, dtype=np.float64) * float(dt_out)
    qg_norm = np.max(np.abs(mod.q_g))
    lay = layout(spec)
    floor = residual_floor(lay.a_tab, lay.b_tab, lay.w_tab, lay.e_mod)  # the same convergence test as the kernel
    iters = 0
    for step in range(1, n_out * per + 1):
        base = q + h * v + h * h * (0.5 - beta) * acc
        x = qdd.copy()
        ok = False
        for it in range(settings.max_iter + 1):
            a_new = ((1 - af) * x + af * qdd - am * acc) / (1 - am)
            q_new = base + h * h * beta * a_new
            f, _, _ = elastic(mod, q_new, want_k=False)
            mq = mod.mass @ x
            res = mq + f - mod.q_g
            if not np.all(np.isfinite(res)):
                break
            if np.max(np.abs(res)) <= max(settings.tol * (qg_norm + np.max(np.abs(mq)) + np.max(np.abs(f))), floor):
                ok = True
                break
            if it == settings.max_iter:
                break
            iters += 1
            _, k, _ = elastic(mod, q_new)
            assert k is not None
            x = x + np.linalg.solve(mod.mass + bp * k, -res)
        if not ok:
            return ReferenceRun(success=False, message=f"failed at t = {step * h:.6g} s", t=t_out,
                                q=rec_q, sens=rec_s, newton_iterations=iters, elapsed_s=time.perf_counter() - t0)
        v = v + h * (1 - gamma) * acc + h * gamma * a_new
        q, acc = q_new, a_new
        if npar:
            _, k, fp = elastic(mod, q)
            assert k is not None
            pred = sq + h * sv + h * h * (0.5 - beta) * sa + h * h * beta * (af * sqdd - am * sa) / (1 - am)
            sqdd_new = np.linalg.solve(mod.mass + bp * k, -dqe_dp(fp) - k @ pred)
            sa_new = ((1 - af) * sqdd_new + af * sqdd - am * sa) / (1 - am)
            sv = sv + h * (1 - gamma) * sa + h * gamma * sa_new
            sq, sa, sqdd = pred + bp * sqdd_new, sa_new, sqdd_new
        qdd = x
        if step % per == 0:
            rec_q[step // per], rec_s[step // per] = q, sq
    return ReferenceRun(success=True, message="completed", t=t_out, q=rec_q, sens=rec_s,
                        newton_iterations=iters, elapsed_s=time.perf_counter() - t0)
