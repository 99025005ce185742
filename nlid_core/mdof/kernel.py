r"""The compiled right-hand side of a multi-DOF model with a full mass matrix, its exact Jacobians,
and static equilibrium (numba kernel, numpy wrappers).

State :math:`y = (q, \dot q)`; the equations of motion are :math:`M(q)\,\ddot q = Q(q, \dot q, u;\theta)`.

**Lumped parts.** A mass ``m`` on DOF ``i`` adds ``m`` to :math:`M_{ii}` and :math:`m g_i` to
:math:`Q_i`. A connection element between DOFs ``i`` and ``j`` has :math:`x = q_i - q_j`,
:math:`v = \dot q_i - \dot q_j` and adds :math:`-F(x, v)` to :math:`Q_i`, :math:`+F` to :math:`Q_j`.

**Rigid body.** :math:`q_r = (o, \eta)`: the world position of the reference point O and ZYX Euler
angles with :math:`R = R_z(\psi)R_y(\vartheta)R_x(\varphi)` and :math:`\omega_b = E_b\dot\eta`
(:mod:`.geometry`). With mass ``m``, centre of gravity ``c`` (body axes, from O), inertia ``J``
about the CoG (body axes), the kinetic energy is
:math:`T = \tfrac12 m\,|\dot o + R(\omega_b\times c)|^2 + \tfrac12\omega_b^\top J\omega_b`, whence

.. math::

    M_r = \begin{pmatrix} m I & -m R[c]_\times E_b \\ (\cdot)^\top & E_b^\top J_O E_b \end{pmatrix},
    \qquad J_O = J - m[c]_\times[c]_\times .

The kernel writes the rigid body's equations as a residual :math:`r(q, \dot q, \ddot q) = 0` from
Newton–Euler about O, projected on the generalised coordinates (Kane): with
:math:`\alpha_b = E_b\ddot\eta + \dot E_b\dot\eta` and the body-axes acceleration of the CoG
relative to free fall

.. math::

    a_b = R^\top(\ddot o + g\,e_z) + \alpha_b\times c + \omega_b\times(\omega_b\times c),

.. math::

    r_o = m R a_b, \qquad r_\eta = E_b^\top\big(J\alpha_b + \omega_b\times J\omega_b + m\,c\times a_b\big).

(The moment about O of the inertia forces is :math:`J\alpha + \omega\times J\omega + c\times m a_G`, which
equals :math:`J_O\alpha + \omega\times J_O\omega + m c\times R^\top\ddot o` of the Newton–Euler form.)
``r`` is affine in :math:`\ddot q` with slope :math:`M_r`, so the rigid body contributes
:math:`-r(q, \dot q, 0)` to ``Q`` (velocity terms and gravity, :math:`m g\,e_z` pointing down included).

**Mounts.** Mount ``j`` at body point :math:`a_j` is anchored to ground where it is at ``q = 0``: its
deflection is :math:`d_j = o + R a_j - a_j` (world) and :math:`\dot d_j = J_{d}\dot q` with
:math:`J_d = \partial d_j/\partial q_r = [I,\ \partial_\varphi R a_j,\ \partial_\vartheta R a_j,\ \partial_\psi R a_j]`.
An element on world axis ``k`` acts on :math:`x = d_{jk}`, :math:`v = \dot d_{jk}` and adds
:math:`-J_{d,k}^\top F` to :math:`Q_r` (the force :math:`-F e_k` at the body point :math:`a_j`).

**Inputs.** Kind 0 adds ``u`` to :math:`Q_i`; kind 1, a world force along axis ``k`` at O, adds
:math:`u e_k` to :math:`Q_o`; kind 2, a world moment about axis ``k``, adds
:math:`E_b^\top R^\top e_k u` to :math:`Q_\eta`.

**Held DOFs** are locked (:math:`\ddot q_h = 0`): :math:`M_{ff}\ddot q_f = Q_f` is solved on the free
DOFs by a Cholesky factorisation (a non-positive-definite :math:`M_{ff}` gives ``NONPOSITIVE_MASS``).

**Jacobians.** Every element, the mounts, the inputs and the rigid residual are differentiated
exactly (the terms' programs carry ∂F/∂x, ∂F/∂v, ∂F/∂θ; R and E_b are differentiated twice in
closed form). Then

.. math::

    \frac{\partial\ddot q_f}{\partial y} = M_{ff}^{-1}\Big(\frac{\partial Q_f}{\partial y}
    - \frac{\partial M_{f\cdot}}{\partial y}\ddot q\Big), \qquad
    \frac{\partial\ddot q_f}{\partial\theta} = M_{ff}^{-1}\Big(\frac{\partial Q_f}{\partial\theta}
    - \frac{\partial M_{f\cdot}}{\partial\theta}\ddot q\Big),

where :math:`(\partial M/\partial\cdot)\ddot q` is the derivative of the rigid residual at
:math:`\dot\eta = 0`, ``g = 0`` and the solved accelerations; every column is solved with the factor
(:math:`M^{-1}` is never formed). Rows of held DOFs are zero.

**Static equilibrium** (:mod:`.equilibrium`) solves :math:`Q_f(q, 0, u) = 0` by damped Newton steps with the exact
:math:`\partial Q/\partial q`; its sensitivity follows from the implicit function theorem,
:math:`\partial q_f^*/\partial\theta = -(\partial Q_f/\partial q_f)^{-1}\partial Q_f/\partial\theta`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelSpecError
from ..status import DIVERGED, GIMBAL_LOCK, NONPOSITIVE_MASS, OK, STIFF
from ..terms.vm import run_program
from .geometry import fill_geometry
from .layout import Layout
from .linalg import (
    _add, _axpy, _chol_solve, _cholesky, _col, _cross, _dot, _mtv, _mv, _put, _scale, _solve_rows, _sym_unit
)

__all__ = ["DIVERGED", "GIMBAL_COS", "GIMBAL_LOCK", "NONPOSITIVE_MASS", "OK", "STIFF", "evaluate", "forces",
           "generalised_forces", "gimbal_locked", "held_mask", "make_work", "mass_matrix", "rhs"]

FloatArray = NDArray[np.float64]

#: |cos θ| below which the attitude counts as gimbal-locked.
GIMBAL_COS = 1e-6


# ----------------------------------------------------------------------------- rigid body
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
def _rigid_residual(etad, acc_o, acc_eta, m, c, gval, want, geo, rig):  # type: ignore[no-untyped-def]
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
def _rigid_mass(m, c, geo, jmat, rdof, mass):  # type: ignore[no-untyped-def]
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
def _mount_kinematics(y, n, rdof, mounts, geo, mnt):  # type: ignore[no-untyped-def]
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
def _apply_row(nidx, eidx, ejr, edv, eh, f, fx, fv, n, want, q, dq):  # type: ignore[no-untyped-def]
    """Add ``−J_rowᵀ F`` and its q, q̇ derivatives for a force ``F(x, v)`` whose x has gradient ``ejr`` on
    DOFs ``eidx``, whose v has gradient ``edv`` in q (and ``ejr`` in q̇), and whose row has gradient ``eh``."""
    for a in range(nidx):
        ra = eidx[a]
        q[ra] -= ejr[a] * f
        if want:
            for b in range(nidx):
                cb = eidx[b]
                dq[ra, cb] -= ejr[a] * (fx * ejr[b] + fv * edv[b]) + f * eh[a, b]
                dq[ra, n + cb] -= ejr[a] * fv * ejr[b]


@njit(cache=True)
def _mount_row(jm, k, rdof, mnt, elw):  # type: ignore[no-untyped-def]
    """Gradients of mount ``jm``'s deflection along world axis ``k`` into the element work ``elw``."""
    mj, mh, mvd = mnt[2], mnt[3], mnt[4]
    eidx, ejr, edv, eh = elw
    for a in range(3):
        eidx[a] = rdof[a]
        eidx[3 + a] = rdof[3 + a]
        ejr[a] = 1.0 if a == k else 0.0
        ejr[3 + a] = mj[jm, k, a]
        edv[a] = 0.0
        edv[3 + a] = mvd[jm, k, a]
    for a in range(6):
        for b in range(6):
            eh[a, b] = mh[jm, k, a - 3, b - 3] if (a >= 3 and b >= 3) else 0.0


@njit(cache=True)
def _rigid_params(theta, rpar, jmat):  # type: ignore[no-untyped-def]
    """m, c of the rigid body; fills ``jmat`` with J."""
    for k in range(6):
        v = theta[rpar[4 + k]]
        jmat[_J_ROW[k], _J_COL[k]] = v
        jmat[_J_COL[k], _J_ROW[k]] = v
    return theta[rpar[0]], (theta[rpar[1]], theta[rpar[2]], theta[rpar[3]])


@njit(cache=True, error_model="numpy")
def forces(y, u, theta, lay, reg, want, work):  # type: ignore[no-untyped-def]
    """Fill M (n, n), Q (n,) and, when ``want``, ∂Q/∂y (n, 2n) and ∂Q/∂θ (n, P) in ``work[0]``.

    ``lay`` is :meth:`Layout.kernel_args`, ``reg`` a copy of the layout's registers, ``work`` from
    :func:`make_work`.
    """
    (n, rigid, g, mass_dof, mass_par, grav, rdof, rpar, elem, pidx, op, ia, ib, idst, outs, mounts,
     in_kind, in_idx) = lay
    sysw, geo, mnt, rig, elw = work
    q, mass, dq, dqp = sysw[0], sysw[1], sysw[2], sysw[3]
    eidx, ejr, edv, eh = elw
    npar = theta.size
    for i in range(n):
        q[i] = 0.0
        for k in range(n):
            mass[i, k] = 0.0
        if want:
            for k in range(2 * n):
                dq[i, k] = 0.0
            for k in range(npar):
                dqp[i, k] = 0.0
    for k in range(mass_dof.size):
        i = mass_dof[k]
        mass[i, i] += theta[mass_par[k]]
        q[i] += theta[mass_par[k]] * grav[i]
        if want:
            dqp[i, mass_par[k]] += grav[i]
    if rigid:
        eta = (y[rdof[3]], y[rdof[4]], y[rdof[5]])
        etad = (y[n + rdof[3]], y[n + rdof[4]], y[n + rdof[5]])
        fill_geometry(eta, geo)
        m, c = _rigid_params(theta, rpar, rig[0])
        _rigid_residual(etad, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), m, c, g, want, geo, rig)
        rr, rq, rqd, rp = rig[1], rig[2], rig[3], rig[4]
        for a in range(6):
            ra = rdof[a]
            q[ra] -= rr[a]
            if want:
                for l in range(3):
                    dq[ra, rdof[3 + l]] -= rq[a, l]
                    dq[ra, n + rdof[3 + l]] -= rqd[a, l]
                for k in range(10):
                    dqp[ra, rpar[k]] -= rp[a, k]
        _rigid_mass(m, c, geo, rig[0], rdof, mass)
        _mount_kinematics(y, n, rdof, mounts, geo, mnt)
    rot, d_rot, rate, d_rate = geo[1], geo[2], geo[4], geo[5]
    for k in range(in_kind.size):
        kind = in_kind[k]
        ax = in_idx[k]
        if kind == 0:
            q[ax] += u[k]
        elif kind == 1:
            q[rdof[ax]] += u[k]
        else:
            for a in range(3):
                acc = 0.0
                for b in range(3):
                    acc += rate[b, a] * rot[ax, b]
                q[rdof[3 + a]] += acc * u[k]
                if want:
                    for l in range(3):
                        acc = 0.0
                        for b in range(3):
                            acc += d_rate[l, b, a] * rot[ax, b] + rate[b, a] * d_rot[l, ax, b]
                        dq[rdof[3 + a], rdof[3 + l]] += acc * u[k]
    md, mv, msum = mnt[0], mnt[1], mnt[5]
    msum[:, :, :] = 0.0
    for e in range(elem.shape[0]):
        mount, di, dj = elem[e, 0] == 1, elem[e, 1], elem[e, 2]
        npe, po, base, o = elem[e, 3], elem[e, 4], elem[e, 7], elem[e, 8]
        if mount:
            x = md[di, dj]
            v = mv[di, dj]
        else:
            x = y[di] - (y[dj] if dj >= 0 else 0.0)
            v = y[n + di] - (y[n + dj] if dj >= 0 else 0.0)
        reg[base] = x
        reg[base + 1] = v
        for p in range(npe):
            reg[base + 2 + p] = theta[pidx[po + p]]
        run_program(op, ia, ib, idst, elem[e, 5], elem[e, 6], reg)
        f = reg[outs[o]]
        if mount:  # summed per mount axis, applied below; ∂Q/∂θ = −J_rowᵀ ∂F/∂θ
            msum[di, dj, 0] += f
            msum[di, dj, 1] += reg[outs[o + 1]]
            msum[di, dj, 2] += reg[outs[o + 2]]
            msum[di, dj, 3] = 1.0
            if want:
                for p in range(npe):
                    fp = reg[outs[o + 3 + p]]
                    col = pidx[po + p]
                    dqp[rdof[dj], col] -= fp
                    for a in range(3):
                        dqp[rdof[3 + a], col] -= mnt[2][di, dj, a] * fp
            continue
        eidx[0] = di
        eidx[1] = dj
        ejr[0] = 1.0
        ejr[1] = -1.0
        for a in range(2):
            edv[a] = 0.0
            for b in range(2):
                eh[a, b] = 0.0
        _apply_row(1 if dj < 0 else 2, eidx, ejr, edv, eh, f, reg[outs[o + 1]], reg[outs[o + 2]], n, want, q, dq)
        if want:
            for p in range(npe):
                fp = reg[outs[o + 3 + p]]
                dqp[di, pidx[po + p]] -= fp
                if dj >= 0:
                    dqp[dj, pidx[po + p]] += fp
    for jm in range(mounts.shape[0]):
        for k in range(3):
            if msum[jm, k, 3] != 0.0:
                _mount_row(jm, k, rdof, mnt, elw)
                _apply_row(6, eidx, ejr, edv, eh, msum[jm, k, 0], msum[jm, k, 1], msum[jm, k, 2], n, want, q, dq)
    return OK


@njit(cache=True)
def gimbal_locked(y, lay):  # type: ignore[no-untyped-def]
    """True when the rigid body's pitch is within ``GIMBAL_COS`` of ±90°."""
    return lay[1] != 0 and abs(np.cos(y[lay[6][4]])) < GIMBAL_COS


@njit(cache=True, error_model="numpy")
def rhs(y, u, theta, held, lay, reg, want, ydot, jy, jp, work):  # type: ignore[no-untyped-def]
    """Fill ``ydot`` (2n,) and, when ``want``, ``jy`` = ∂ẏ/∂y (2n, 2n) and ``jp`` = ∂ẏ/∂θ (2n, P); return a status.

    ``held`` (n,) bool locks DOFs; ``lay``, ``reg``, ``work`` as in :func:`forces`.
    """
    n = lay[0]
    q, mass, dq, dqp, low, acc, col, free = work[0]
    for i in range(n):
        ydot[i] = y[n + i]
        ydot[n + i] = 0.0
    if want:
        jy[:, :] = 0.0
        jp[:, :] = 0.0
        for i in range(n):
            jy[i, n + i] = 1.0
    if gimbal_locked(y, lay):
        return GIMBAL_LOCK
    forces(y, u, theta, lay, reg, want, work)
    nf = 0
    for i in range(n):
        acc[i] = 0.0
        if not held[i]:
            free[nf] = i
            nf += 1
    if not _cholesky(mass, free, nf, low):
        return NONPOSITIVE_MASS
    for a in range(nf):
        col[a] = q[free[a]]
    _chol_solve(low, nf, col)
    for a in range(nf):
        acc[free[a]] = col[a]
        ydot[n + free[a]] = col[a]
    if want:
        _subtract_inertia_slope(acc, theta, lay, work)
        _solve_rows(low, free, nf, dq, n, jy)
        _solve_rows(low, free, nf, dqp, n, jp)
    return OK


@njit(cache=True)
def _subtract_inertia_slope(acc, theta, lay, work):  # type: ignore[no-untyped-def]
    """``∂Q/∂(q, θ) −= ∂(M q̈)/∂(q, θ)`` at the solved accelerations ``acc`` (geometry already filled)."""
    n, rigid, mass_dof, mass_par, rdof, rpar = lay[0], lay[1], lay[3], lay[4], lay[6], lay[7]
    dq, dqp = work[0][2], work[0][3]
    for k in range(mass_dof.size):
        dqp[mass_dof[k], mass_par[k]] -= acc[mass_dof[k]]
    if rigid:
        rig = work[3]
        m, c = _rigid_params(theta, rpar, rig[0])
        _rigid_residual((0.0, 0.0, 0.0), (acc[rdof[0]], acc[rdof[1]], acc[rdof[2]]),
                        (acc[rdof[3]], acc[rdof[4]], acc[rdof[5]]), m, c, 0.0, True, work[1], rig)
        rq, rp = rig[2], rig[4]
        for a in range(6):
            for l in range(3):
                dq[rdof[a], rdof[3 + l]] -= rq[a, l]
            for k in range(10):
                dqp[rdof[a], rpar[k]] -= rp[a, k]


@njit(cache=True)
def make_work(n, npar, n_mounts):  # type: ignore[no-untyped-def]
    """Work arrays of :func:`forces` and :func:`rhs` (allocate once per run)."""
    nm = max(n_mounts, 1)
    sysw = (np.zeros(n), np.zeros((n, n)), np.zeros((n, 2 * n)), np.zeros((n, npar)), np.zeros((n, n)),
            np.zeros(n), np.zeros(n), np.zeros(n, np.int64))
    geo = (np.zeros((3, 3, 3, 3)), np.eye(3), np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)), np.eye(3),
           np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3)))
    mnt = (np.zeros((nm, 3)), np.zeros((nm, 3)), np.zeros((nm, 3, 3)), np.zeros((nm, 3, 3, 3)), np.zeros((nm, 3, 3)),
           np.zeros((nm, 3, 4)))
    rig = (np.zeros((3, 3)), np.zeros(6), np.zeros((6, 3)), np.zeros((6, 3)), np.zeros((6, 10)))
    elw = (np.zeros(6, np.int64), np.zeros(6), np.zeros(6), np.zeros((6, 6)))
    return sysw, geo, mnt, rig, elw


# ----------------------------------------------------------------------------- numpy wrappers
def _vector(value: ArrayLike | None, size: int, what: str) -> FloatArray:
    arr = np.zeros(size) if value is None else np.ascontiguousarray(value, dtype=np.float64).reshape(-1)
    if arr.size != size or not np.all(np.isfinite(arr)):
        raise ModelSpecError(f"`{what}` needs {size} finite values; got {arr.size} ({arr.size - np.isfinite(arr).sum()}"
                             " non-finite)")
    return arr


def held_mask(layout: Layout, held: ArrayLike | None) -> NDArray[np.bool_]:
    """``held`` as an (n_dof,) boolean mask (None: nothing held).

    Raises
    ------
    ModelSpecError
        Wrong length, or every DOF held.
    """
    mask = np.zeros(layout.n_dof, dtype=bool) if held is None else np.asarray(held, dtype=bool).reshape(-1)
    if mask.size != layout.n_dof:
        raise ModelSpecError(f"`held` needs {layout.n_dof} flags; got {mask.size}")
    if mask.all():
        raise ModelSpecError("`held` locks every DOF; leave at least one free")
    return np.ascontiguousarray(mask)


def _kernel_forces(layout: Layout, y: FloatArray, u: FloatArray, theta: FloatArray, want: bool
                   ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    work = make_work(layout.n_dof, layout.n_params, layout.n_mounts)
    forces(y, u, theta, layout.kernel_args(), layout.programs.registers.copy(), want, work)
    q, mass, dq, dqp = work[0][:4]
    return q.copy(), mass.copy(), dq.copy(), dqp.copy()


def evaluate(layout: Layout, y: ArrayLike, u: ArrayLike | None, theta: ArrayLike, held: ArrayLike | None = None,
             want: bool = True) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Right-hand side and exact Jacobians at one state.

    Parameters
    ----------
    layout : Layout
    y : (2n,) array_like
        State ``(q, q̇)``.
    u : (n_in,) array_like or None
        Inputs (None: zero).
    theta : (P,) array_like
        Parameters.
    held : (n,) array_like of bool or None
        Locked DOFs.
    want : bool
        Also compute the Jacobians (else they are returned as zeros).

    Returns
    -------
    ydot : (2n,) ndarray
    jy : (2n, 2n) ndarray
        ∂ẏ/∂y.
    jp : (2n, P) ndarray
        ∂ẏ/∂θ.
    status : int
        ``OK``, ``NONPOSITIVE_MASS`` or ``GIMBAL_LOCK``.

    Raises
    ------
    ModelSpecError
        Wrong sizes or non-finite values.
    """
    n, npar = layout.n_dof, layout.n_params
    yy = _vector(y, 2 * n, "y")
    uu = _vector(u, layout.n_inputs, "u")
    th = _vector(theta, npar, "theta")
    ydot, jy, jp = np.zeros(2 * n), np.zeros((2 * n, 2 * n)), np.zeros((2 * n, npar))
    status = rhs(yy, uu, th, held_mask(layout, held), layout.kernel_args(), layout.programs.registers.copy(),
                 bool(want), ydot, jy, jp, make_work(n, npar, layout.n_mounts))
    return ydot, jy, jp, int(status)


def generalised_forces(layout: Layout, q: ArrayLike, qd: ArrayLike, u: ArrayLike | None, theta: ArrayLike
                       ) -> FloatArray:
    """The generalised forces ``Q(q, q̇, u; θ)`` (n,), velocity terms of the rigid body and gravity included."""
    n = layout.n_dof
    y = np.concatenate([_vector(q, n, "q"), _vector(qd, n, "qd")])
    return _kernel_forces(layout, y, _vector(u, layout.n_inputs, "u"), _vector(theta, layout.n_params, "theta"),
                          False)[0]


def mass_matrix(layout: Layout, q: ArrayLike, theta: ArrayLike) -> FloatArray:
    """The mass matrix ``M(q; θ)`` (n, n)."""
    n = layout.n_dof
    y = np.concatenate([_vector(q, n, "q"), np.zeros(n)])
    return _kernel_forces(layout, y, np.zeros(layout.n_inputs), _vector(theta, layout.n_params, "theta"), False)[1]


