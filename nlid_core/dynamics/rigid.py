r"""The rigid body of an assembled model: its inertia, velocity terms, gravity, mounts and moment inputs (numba).

Used by :func:`nlid_core.dynamics.evaluate.rhs` when the model carries a rigid body on six of its DOFs
:math:`q_r = (o, \eta)`: the world position of the reference point O and ZYX Euler angles with
:math:`R = R_z(\psi)R_y(\vartheta)R_x(\varphi)` and :math:`\omega_b = E_b\dot\eta` (:mod:`.geometry`). With mass
``m``, centre of gravity ``c`` (body axes, from O), inertia ``J`` about the CoG (body axes), the kinetic energy is
:math:`T = \tfrac12 m\,|\dot o + R(\omega_b\times c)|^2 + \tfrac12\omega_b^\top J\omega_b`, whence

.. math::

    M_r = \begin{pmatrix} m I & -m R[c]_\times E_b \\ (\cdot)^\top & E_b^\top J_O E_b \end{pmatrix},
    \qquad J_O = J - m[c]_\times[c]_\times .

The body's equations are written as a residual :math:`r(q, \dot q, \ddot q) = 0` from Newton–Euler about O,
projected on the generalised coordinates (Kane): with :math:`\alpha_b = E_b\ddot\eta + \dot E_b\dot\eta` and the
body-axes acceleration of the CoG relative to free fall

.. math::

    a_b = R^\top(\ddot o + g\,e_z) + \alpha_b\times c + \omega_b\times(\omega_b\times c),

.. math::

    r_o = m R a_b, \qquad r_\eta = E_b^\top\big(J\alpha_b + \omega_b\times J\omega_b + m\,c\times a_b\big).

(The moment about O of the inertia forces is :math:`J\alpha + \omega\times J\omega + c\times m a_G`, which equals
:math:`J_O\alpha + \omega\times J_O\omega + m c\times R^\top\ddot o` of the Newton–Euler form.) ``r`` is affine in
:math:`\ddot q` with slope :math:`M_r`, so the body contributes :math:`-r(q, \dot q, 0)` to the generalised force
``Q`` (velocity terms and gravity, :math:`m g\,e_z` pointing down, included).

**Mounts.** Mount ``j`` at body point :math:`a_j` is anchored to ground where it is at ``q = 0``: its deflection is
:math:`d_j = o + R a_j - a_j` (world) and :math:`\dot d_j = J_d\dot q` with
:math:`J_d = \partial d_j/\partial q_r = [I,\ \partial_\varphi R a_j,\ \partial_\vartheta R a_j,\ \partial_\psi R a_j]`.
An element on world axis ``k`` acts on :math:`x = d_{jk}`, :math:`v = \dot d_{jk}` and adds
:math:`-J_{d,k}^\top F` to :math:`Q_r` (the force :math:`-F e_k` at the body point :math:`a_j`); its internal states,
if any, see the same ``x`` and ``v``.

**Inputs.** A world force along axis ``k`` at O is a generalised force on the DOF of :math:`o_k` (the model's
``dof_in``); a world moment about axis ``k`` adds :math:`E_b^\top R^\top e_k u` to :math:`Q_\eta` (``moments``).

**Solve.** :math:`M_{ff}\ddot q_f = Q_f` on the free DOFs (held ones locked, :math:`\ddot q_h = 0`) by a Cholesky
factorisation (a non-positive-definite :math:`M_{ff}` gives ``NONPOSITIVE_MASS``), and

.. math::

    \frac{\partial\ddot q_f}{\partial y} = M_{ff}^{-1}\Big(\frac{\partial Q_f}{\partial y}
    - \frac{\partial M_{f\cdot}}{\partial y}\ddot q\Big),

likewise for θ, where :math:`(\partial M/\partial\cdot)\ddot q` is the derivative of the body's residual at
:math:`\dot\eta = 0`, ``g = 0`` and the solved accelerations (plus the lumped inertia terms' slopes); every column is
solved with the factor (:math:`M^{-1}` is never formed). ``R`` and ``E_b`` are differentiated twice in closed form,
so every Jacobian is exact.

``body`` (:func:`body_args`) = (g, rdof (6,), rpar (10,), mounts (n_m, 3), moments (k, 2), work): gravity along
−z (m/s²), the body's DOFs (x, y, z, φ, θ, ψ), the parameter indices of
(m, cx, cy, cz, Jxx, Jyy, Jzz, Jxy, Jxz, Jyz), the mount points (body axes, m), the (input column, world axis) of each
moment input, and work arrays. A model without a body passes None: the right-hand side is one function, and the
compiler prunes the body's branches from the version for such models (it carries none of this code).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from ..status import GIMBAL_LOCK, NONPOSITIVE_MASS, OK
from .geometry import fill_geometry
from .linalg import _add, _axpy, _chol_solve, _cholesky, _col, _cross, _dot, _mtv, _mv, _put, _scale, _solve_block, _sym_unit

__all__ = ["GIMBAL_COS", "body_args", "body_prepare", "body_solve", "mount_row"]

#: |cos θ| below which the attitude counts as gimbal-locked.
GIMBAL_COS = 1e-6


#: (row, column) of Jxx, Jyy, Jzz, Jxy, Jxz, Jyz in J.
_J_ROW = (0, 1, 2, 0, 0, 1)
_J_COL = (0, 1, 2, 1, 2, 2)


@njit(cache=True, inline="always")
def _vary(dw, da, ds, w, wc, jw, c, m, jmat):  # type: ignore[no-untyped-def]
    """Variations of ``a_b`` and of the moment ``h`` from variations of ω, α and ``Rᵀ(ö + g e_z)``."""
    dab = _add(_add(ds, _cross(da, c)), _add(_cross(dw, wc), _cross(w, _cross(dw, c))))
    dh = _add(_add(_mv(jmat, da), _cross(dw, jw)), _axpy(_cross(w, _mv(jmat, dw)), m, _cross(c, dab)))
    return dab, dh


@njit(cache=True)
def rigid_residual(etad, acc_o, acc_eta, m, c, gval, want, geo, rig):  # type: ignore[no-untyped-def]
    """The rigid body's residual ``r`` (6,) and, when ``want``, ∂r/∂η, ∂r/∂η̇ (6, 3) and ∂r/∂(m, c, J) (6, 10)."""
    rot, d_rot, rate, d_rate, d2_rate = geo[1], geo[2], geo[4], geo[5], geo[6]
    jmat, rr, rq, rqd, rp = rig
    zero = (0.0, 0.0, 0.0)
    w = _mv(rate, etad)
    beta = zero
    for j in range(3):
        beta = _axpy(beta, etad[j], _mv(d_rate[j], etad))
    alpha = _add(_mv(rate, acc_eta), beta)
    lin = (acc_o[0], acc_o[1], acc_o[2] + gval)
    wc = _cross(w, c)
    ab = _add(_add(_mtv(rot, lin), _cross(alpha, c)), _cross(w, wc))
    jw = _mv(jmat, w)
    h = _add(_add(_mv(jmat, alpha), _cross(w, jw)), _scale(m, _cross(c, ab)))
    rab = _mv(rot, ab)
    eh = _mtv(rate, h)
    for i in range(3):
        rr[i] = m * rab[i]
        rr[3 + i] = eh[i]
    if not want:
        return
    for k in range(3):  # angles
        db = zero
        for j in range(3):
            db = _axpy(db, etad[j], _mv(d2_rate[j, k], etad))
        dab, dh = _vary(_mv(d_rate[k], etad), _add(_mv(d_rate[k], acc_eta), db), _mtv(d_rot[k], lin),
                        w, wc, jw, c, m, jmat)
        _put(rq, k, _scale(m, _add(_mv(d_rot[k], ab), _mv(rot, dab))), _add(_mtv(d_rate[k], h), _mtv(rate, dh)))
    for k in range(3):  # angle rates
        db = _mv(d_rate[k], etad)
        for j in range(3):
            db = _axpy(db, etad[j], _col(d_rate[j], k))
        dab, dh = _vary(_col(rate, k), db, zero, w, wc, jw, c, m, jmat)
        _put(rqd, k, _scale(m, _mv(rot, dab)), _mtv(rate, dh))
    _put(rp, 0, rab, _mtv(rate, _cross(c, ab)))
    for i in range(3):  # CoG offset
        ei = (1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0)
        dab = _add(_cross(alpha, ei), _cross(w, _cross(w, ei)))
        dh = _scale(m, _add(_cross(ei, ab), _cross(c, dab)))
        _put(rp, 1 + i, _scale(m, _mv(rot, dab)), _mtv(rate, dh))
    for k in range(6):  # inertia tensor entries
        dh = _add(_sym_unit(_J_ROW[k], _J_COL[k], alpha), _cross(w, _sym_unit(_J_ROW[k], _J_COL[k], w)))
        _put(rp, 4 + k, zero, _mtv(rate, dh))


@njit(cache=True)
def rigid_mass(m, c, geo, jmat, rdof, mass):  # type: ignore[no-untyped-def]
    """Add the rigid body's block of M."""
    rot, rate = geo[1], geo[4]
    for i in range(3):
        mass[rdof[i], rdof[i]] += m
    for k in range(3):
        ek = _col(rate, k)
        top = _scale(-m, _mv(rot, _cross(c, ek)))
        jo_ek = _add(_mv(jmat, ek), _scale(m, _cross(c, _cross(ek, c))))
        for i in range(3):
            mass[rdof[i], rdof[3 + k]] += top[i]
            mass[rdof[3 + k], rdof[i]] += top[i]
        for l in range(3):
            mass[rdof[3 + l], rdof[3 + k]] += _dot(_col(rate, l), jo_ek)


@njit(cache=True)
def mount_kinematics(y, n, rdof, mounts, geo, mnt):  # type: ignore[no-untyped-def]
    """Deflection d, rate ḋ, ∂d/∂η (``mj[j, k, l]``), ∂²d/∂η∂η (``mh``) and ∂ḋ/∂η (``mvd``) of every mount."""
    rot, d_rot, d2_rot = geo[1], geo[2], geo[3]
    md, mv, mj, mh, mvd = mnt[0], mnt[1], mnt[2], mnt[3], mnt[4]
    for j in range(mounts.shape[0]):
        a = (mounts[j, 0], mounts[j, 1], mounts[j, 2])
        ra = _mv(rot, a)
        for k in range(3):
            md[j, k] = y[rdof[k]] + ra[k] - a[k]
            mv[j, k] = y[n + rdof[k]]
        for l in range(3):
            dl = _mv(d_rot[l], a)
            etad_l = y[n + rdof[3 + l]]
            for k in range(3):
                mj[j, k, l] = dl[k]
                mv[j, k] += dl[k] * etad_l
            for s in range(3):
                dls = _mv(d2_rot[l, s], a)
                for k in range(3):
                    mh[j, k, l, s] = dls[k]
        for k in range(3):
            for l in range(3):
                acc = 0.0
                for s in range(3):
                    acc += mh[j, k, l, s] * y[n + rdof[3 + s]]
                mvd[j, k, l] = acc




@njit(cache=True)
def mount_row(jm, k, rdof, mnt, elw):  # type: ignore[no-untyped-def]
    """Gradients of mount ``jm``'s deflection along world axis ``k`` into the element work ``elw`` (the rows and
    columns of ``eh`` of the translations stay at the zeros they are allocated with)."""
    mj, mh, mvd = mnt[2], mnt[3], mnt[4]
    eidx, ejr, edv, eh = elw
    for a in range(3):
        eidx[a] = rdof[a]
        eidx[3 + a] = rdof[3 + a]
        ejr[a] = 1.0 if a == k else 0.0
        ejr[3 + a] = mj[jm, k, a]
        edv[a] = 0.0
        edv[3 + a] = mvd[jm, k, a]
    for a in range(3):
        for b in range(3):
            eh[3 + a, 3 + b] = mh[jm, k, a, b]


@njit(cache=True)
def rigid_params(theta, rpar, jmat):  # type: ignore[no-untyped-def]
    """m, c of the rigid body; fills ``jmat`` with J."""
    for k in range(6):
        v = theta[rpar[4 + k]]
        jmat[_J_ROW[k], _J_COL[k]] = v
        jmat[_J_COL[k], _J_ROW[k]] = v
    return theta[rpar[0]], (theta[rpar[1]], theta[rpar[2]], theta[rpar[3]])


def body_args(n: int, g: float, rdof: ArrayLike, rpar: ArrayLike, mounts: ArrayLike | None = None,
              moments: ArrayLike | None = None) -> tuple[Any, ...]:
    """The ``body`` argument of the right-hand side, with fresh work arrays (one per run: they are written to)."""
    pts = np.zeros((0, 3)) if mounts is None else np.ascontiguousarray(mounts, dtype=np.float64).reshape(-1, 3)
    nm = max(pts.shape[0], 1)
    geo = (np.zeros((3, 3, 3, 3)), np.eye(3), np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)), np.eye(3),
           np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)))
    mnt = (np.zeros((nm, 3)), np.zeros((nm, 3)), np.zeros((nm, 3, 3)), np.zeros((nm, 3, 3, 3)), np.zeros((nm, 3, 3)))
    rig = (np.zeros((3, 3)), np.zeros(6), np.zeros((6, 3)), np.zeros((6, 3)), np.zeros((6, 10)))
    elw = (np.zeros(6, np.int64), np.zeros(6), np.zeros(6), np.zeros((6, 6)))
    work = (np.zeros((n, n)), np.zeros((n, n)), np.zeros(n), np.zeros(n, np.int64), np.zeros(n), geo, mnt, rig, elw)
    mom = np.zeros((0, 2), np.int64) if moments is None else np.ascontiguousarray(moments, dtype=np.int64).reshape(-1, 2)
    return (float(g), np.ascontiguousarray(rdof, dtype=np.int64), np.ascontiguousarray(rpar, dtype=np.int64), pts,
            mom, work)


@njit(cache=True)
def body_prepare(y, n, body):  # type: ignore[no-untyped-def]
    """Geometry and mount kinematics at ``y``; False at gimbal lock (|cos θ| < ``GIMBAL_COS``)."""
    rdof, mounts, work = body[1], body[3], body[5]
    if abs(np.cos(y[rdof[4]])) < GIMBAL_COS:
        return False
    fill_geometry((y[rdof[3]], y[rdof[4]], y[rdof[5]]), work[5])
    mount_kinematics(y, n, rdof, mounts, work[5], work[6])
    return True


@njit(cache=True)
def _moments(u, n, rdof, moments, want, geo, ydot, jy):  # type: ignore[no-untyped-def]
    """World moments ``E_bᵀ Rᵀ e_k u`` into the angle rows, with their angle derivatives."""
    rot, d_rot, rate, d_rate = geo[1], geo[2], geo[4], geo[5]
    for r in range(moments.shape[0]):
        uk = u[moments[r, 0]]
        ax = moments[r, 1]
        for a in range(3):
            acc = 0.0
            for b in range(3):
                acc += rate[b, a] * rot[ax, b]
            ydot[n + rdof[3 + a]] += acc * uk
            if want:
                for l in range(3):
                    acc = 0.0
                    for b in range(3):
                        acc += d_rate[l, b, a] * rot[ax, b] + rate[b, a] * d_rot[l, ax, b]
                    jy[n + rdof[3 + a], rdof[3 + l]] += acc * uk


@njit(cache=True, error_model="numpy")
def body_solve(y, u, theta, n, dof_in, held_code, body, want, ydot, jy, jp, mass, dmy, dmp):  # type: ignore[no-untyped-def]
    """Finish the right-hand side of a model with a body: rows ``n..2n`` of ``ydot``, ``jy``, ``jp`` hold the
    element forces ``−ΣB_e F_e`` and their derivatives, ``mass``, ``dmy``, ``dmp`` the lumped inertia; add the inputs
    and the body's residual, then solve for the accelerations (see the module notes). Returns a status."""
    g, rdof, rpar, moments, work = body[0], body[1], body[2], body[4], body[5]
    fm, low, col, free, acc, geo, _, rig, _ = work
    nst = y.size
    npar = theta.size
    for i in range(n):
        if dof_in[i] >= 0:
            ydot[n + i] += u[dof_in[i]]
    _moments(u, n, rdof, moments, want, geo, ydot, jy)
    m, c = rigid_params(theta, rpar, rig[0])
    etad = (y[n + rdof[3]], y[n + rdof[4]], y[n + rdof[5]])
    rigid_residual(etad, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), m, c, g, want, geo, rig)
    rr, rq, rqd, rp = rig[1], rig[2], rig[3], rig[4]
    for a in range(6):
        ra = n + rdof[a]
        ydot[ra] -= rr[a]
        if want:
            for l in range(3):
                jy[ra, rdof[3 + l]] -= rq[a, l]
                jy[ra, n + rdof[3 + l]] -= rqd[a, l]
            for k in range(10):
                jp[ra, rpar[k]] -= rp[a, k]
    for i in range(n):
        for k in range(n):
            fm[i, k] = 0.0
        fm[i, i] = mass[i]
    rigid_mass(m, c, geo, rig[0], rdof, fm)
    nf = 0
    for i in range(n):
        acc[i] = 0.0
        if dof_in[i] != held_code:
            free[nf] = i
            nf += 1
    if not _cholesky(fm, free, nf, low):
        return NONPOSITIVE_MASS
    for a in range(nf):
        col[a] = ydot[n + free[a]]
    _chol_solve(low, nf, col)
    for a in range(nf):
        acc[free[a]] = col[a]
    for i in range(n):
        ydot[n + i] = acc[i]
    if not want:
        return OK
    for i in range(n):
        ai = acc[i]
        if ai != 0.0:
            for k in range(nst):
                jy[n + i, k] -= ai * dmy[i, k]
            for k in range(npar):
                jp[n + i, k] -= ai * dmp[i, k]
    rigid_residual((0.0, 0.0, 0.0), (acc[rdof[0]], acc[rdof[1]], acc[rdof[2]]),
                   (acc[rdof[3]], acc[rdof[4]], acc[rdof[5]]), m, c, 0.0, True, geo, rig)
    for a in range(6):
        ra = n + rdof[a]
        for l in range(3):
            jy[ra, rdof[3 + l]] -= rq[a, l]
        for k in range(10):
            jp[ra, rpar[k]] -= rp[a, k]
    for i in range(n):
        if dof_in[i] == held_code:
            for k in range(nst):
                jy[n + i, k] = 0.0
            for k in range(npar):
                jp[n + i, k] = 0.0
    _solve_block(low, free, nf, jy, n)
    _solve_block(low, free, nf, jp, n)
    return OK
