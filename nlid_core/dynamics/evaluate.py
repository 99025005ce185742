r"""The compiled right-hand side of an assembled model and its exact Jacobians (numba).

State ``y = (q, q̇, z)``: n positions, n velocities, then every internal state. For each element
(a term on one DOF, or on a connection between DOFs i and j with relative ``x = q_i − q_j``,
``v = q̇_i − q̇_j``) the term's program gives its force ``F``, inertia ``m`` and state rates ``R``
with their derivatives. The equations are

.. math::

    M(q)\,\ddot q + \sum_e B_e F_e = \tau(t), \qquad \dot z_e = R_e,

with ``B_e`` putting ``+F`` on DOF i and ``−F`` on DOF j, and ``M`` diagonal, the sum of the
inertia terms of each DOF (solved row by row, never inverted as a matrix). A model with a rigid body adds the
body's block to ``M`` (full and configuration-dependent), its velocity terms and gravity, and elements on its
mount axes (``B_e`` the mount's row of ∂d/∂q); it is solved by a Cholesky factor (:mod:`.rigid`). Otherwise

.. math::

    \frac{\partial \ddot q_i}{\partial y} = -\frac{1}{M_i}\Big(\frac{\partial G_i}{\partial y}
    + \ddot q_i \frac{\partial M_i}{\partial y}\Big), \qquad G = \sum_e B_e F_e,

and likewise for the parameters. ``elem`` columns: 0 dof i, 1 dof j (−1: ground), 2 number of
states, 3 number of parameters, 4 index of the first state in y, 5 offset into ``pidx``,
6–7 instruction range, 8 register offset, 9 output offset, 10 inertial (0/1), 11 on a mount (0/1: then
column 0 is the mount and column 1 its world axis). ``dof_in[i]`` is the input
column driving DOF i (−1: none; ``HELD``: the DOF is locked, q̈_i = 0 and its rows of the Jacobians are zero).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

# the codes rhs returns, defined in status (re-exported for the integrators)
from ..status import DIVERGED as DIVERGED, NEWTON_FAILED as NEWTON_FAILED, NONPOSITIVE_MASS as NONPOSITIVE_MASS
from ..status import GIMBAL_LOCK as GIMBAL_LOCK, OK as OK, STIFF as STIFF
from ..terms.vm import run_program
from .rigid import body_prepare, body_solve, mount_row

FloatArray = NDArray[np.float64]

#: ``dof_in`` of a DOF the rig holds (locked: q̈ = 0); −1 is a DOF without input, k >= 0 the input column.
HELD = -2


@njit(cache=True, error_model="numpy")
def rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, want, ydot, jy, jp, mass, dmy,  # type: ignore[no-untyped-def]
        dmp):
    """Fill ``ydot`` (and, when ``want``, ``jy = ∂ẏ/∂y`` and ``jp = ∂ẏ/∂θ``); return a status.

    ``body`` is :func:`.rigid.body_args`, or None for a model without a rigid body (compiled apart, without the
    body's code); ``mass``, ``dmy``, ``dmp`` are work arrays of shapes (n,), (n, N), (n, P).
    """
    if body is not None:  # (a None body is pruned when compiling: models without one get none of its code)
        if not body_prepare(y, n, body):
            return GIMBAL_LOCK
    nst = y.size
    npar = theta.size
    for r in range(nst):
        ydot[r] = 0.0
    for i in range(n):
        ydot[i] = y[n + i]
        mass[i] = 0.0
    if want:
        for r in range(nst):
            for c in range(nst):
                jy[r, c] = 0.0
            for c in range(npar):
                jp[r, c] = 0.0
        for i in range(n):
            jy[i, n + i] = 1.0
            for c in range(nst):
                dmy[i, c] = 0.0
            for c in range(npar):
                dmp[i, c] = 0.0
    for e in range(elem.shape[0]):
        di = elem[e, 0]
        dj = elem[e, 1]
        nz = elem[e, 2]
        npe = elem[e, 3]
        zo = elem[e, 4]
        po = elem[e, 5]
        base = elem[e, 8]
        mount = False
        x = 0.0
        v = 0.0
        if body is not None:
            if elem[e, 11] != 0:  # mount di, world axis dj of the rigid body
                mount = True
                mnt = body[5][6]
                x = mnt[0][di, dj]
                v = mnt[1][di, dj]
        if not mount:
            x = y[di]
            v = y[n + di]
            if dj >= 0:
                x -= y[dj]
                v -= y[n + dj]
        reg[base] = x
        reg[base + 1] = v
        for k in range(nz):
            reg[base + 2 + k] = y[zo + k]
        for k in range(npe):
            reg[base + 2 + nz + k] = theta[pidx[po + k]]
        run_program(op, ia, ib, idst, elem[e, 6], elem[e, 7], reg)
        o = elem[e, 9]
        bs = 3 + nz + npe
        f = reg[outs[o]]
        if body is not None:
            if mount:
                _mount_element(di, dj, n, nz, npe, zo, po, o, f, pidx, reg, outs, body, want, ydot, jy, jp)
                continue
        ydot[n + di] -= f
        if dj >= 0:
            ydot[n + dj] += f
        if want:
            fx = reg[outs[o + 1]]
            fv = reg[outs[o + 2]]
            jy[n + di, di] -= fx
            jy[n + di, n + di] -= fv
            if dj >= 0:
                jy[n + di, dj] += fx
                jy[n + di, n + dj] += fv
                jy[n + dj, di] += fx
                jy[n + dj, n + di] += fv
                jy[n + dj, dj] -= fx
                jy[n + dj, n + dj] -= fv
            for k in range(nz):
                fz = reg[outs[o + 3 + k]]
                jy[n + di, zo + k] -= fz
                if dj >= 0:
                    jy[n + dj, zo + k] += fz
            for k in range(npe):
                fp = reg[outs[o + 3 + nz + k]]
                jp[n + di, pidx[po + k]] -= fp
                if dj >= 0:
                    jp[n + dj, pidx[po + k]] += fp
        if elem[e, 10]:
            o += bs
            mass[di] += reg[outs[o]]
            if want:
                dmy[di, di] += reg[outs[o + 1]]
                dmy[di, n + di] += reg[outs[o + 2]]
                for k in range(npe):
                    dmp[di, pidx[po + k]] += reg[outs[o + 3 + nz + k]]
        for s in range(nz):
            o += bs
            rx, rv = _state_row(zo + s, o, nz, npe, zo, po, pidx, reg, outs, want, ydot, jy, jp)
            if want:
                row = zo + s
                jy[row, di] += rx
                jy[row, n + di] += rv
                if dj >= 0:
                    jy[row, dj] -= rx
                    jy[row, n + dj] -= rv
    if body is not None:
        return body_solve(y, u, theta, n, dof_in, HELD, body, want, ydot, jy, jp, mass, dmy, dmp)
    for i in range(n):
        if dof_in[i] == HELD:  # a locked DOF: q̈ = 0 whatever acts on it
            ydot[n + i] = 0.0
            if want:
                for c in range(nst):
                    jy[n + i, c] = 0.0
                for c in range(npar):
                    jp[n + i, c] = 0.0
            continue
        m = mass[i]
        if not m > 0.0:
            return NONPOSITIVE_MASS
        tau = u[dof_in[i]] if dof_in[i] >= 0 else 0.0
        acc = (tau + ydot[n + i]) / m
        ydot[n + i] = acc
        if want:
            for c in range(nst):
                jy[n + i, c] = (jy[n + i, c] - acc * dmy[i, c]) / m
            for c in range(npar):
                jp[n + i, c] = (jp[n + i, c] - acc * dmp[i, c]) / m
    return OK


@njit(cache=True, error_model="numpy")
def _rhs_with_jacobians(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, ydot, jy, jp,  # type: ignore[no-untyped-def]
                        mass, dmy, dmp):
    return rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, True, ydot, jy, jp, mass, dmy,
               dmp)


@njit(cache=True, error_model="numpy")
def _rhs_alone(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, ydot, jy, jp,  # type: ignore[no-untyped-def]
               mass, dmy, dmp):
    return rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False, ydot, jy, jp, mass, dmy,
               dmp)


def rhs_call(y: ArrayLike, u: ArrayLike, theta: ArrayLike, args: tuple[Any, ...], want: bool, ydot: FloatArray,
             jy: FloatArray, jp: FloatArray, mass: FloatArray, dmy: FloatArray, dmp: FloatArray) -> int:
    """:func:`rhs` from Python (``args`` a plan's :meth:`~nlid_core.dynamics.model.Plan.args`); its status.

    The integrators call :func:`rhs` with a literal ``want``, which compiles one version for each value; a Python
    ``bool``, or an input that is strided or read-only, would compile yet another of the whole tree (tens of
    seconds for a rigid body). This reaches the integrators' two versions, with the inputs as they take them."""
    fn: Any = _rhs_with_jacobians if want else _rhs_alone
    return int(fn(np.require(y, np.float64, ("C", "W")), np.require(u, np.float64, ("C", "W")),
                  np.require(theta, np.float64, ("C", "W")), *args, ydot, jy, jp, mass, dmy, dmp))


@njit(cache=True, inline="always")
def _state_row(row, o, nz, npe, zo, po, pidx, reg, outs, want, ydot, jy, jp):  # type: ignore[no-untyped-def]
    """The rate of one internal state (program outputs from ``o``) and its columns in z and θ; returns ∂R/∂x and
    ∂R/∂v, which the caller spreads over the coordinates its element's x and v depend on."""
    ydot[row] = reg[outs[o]]
    if not want:
        return 0.0, 0.0
    for k in range(nz):
        jy[row, zo + k] += reg[outs[o + 3 + k]]
    for k in range(npe):
        jp[row, pidx[po + k]] += reg[outs[o + 3 + nz + k]]
    return reg[outs[o + 1]], reg[outs[o + 2]]


@njit(cache=True)
def _mount_element(jm, k, n, nz, npe, zo, po, o, f, pidx, reg, outs, body, want, ydot, jy, jp):  # type: ignore[no-untyped-def]
    """An element on axis ``k`` of mount ``jm``: ``−J_rowᵀ F`` into the body's rows, and its internal states' rates,
    with their derivatives (``x`` has gradient ``J_row`` in q, ``v`` has ``∂v/∂q`` and ``J_row`` in q̇). ``J_row`` is
    zero on the two other translations, and so are ``∂v/∂q`` and ``∂J_row/∂q`` there, which the loops skip."""
    rdof = body[1]
    elw = body[5][8]
    mount_row(jm, k, rdof, body[5][6], elw)
    eidx, ejr, edv, eh = elw
    bs = 3 + nz + npe
    # rows and columns that can be non-zero: the mount axis's translation k and the three angles
    for ia in range(4):
        a = k if ia == 0 else ia + 2
        ydot[n + eidx[a]] -= ejr[a] * f
    if want:
        fx = reg[outs[o + 1]]
        fv = reg[outs[o + 2]]
        for ia in range(4):
            a = k if ia == 0 else ia + 2
            ra = n + eidx[a]
            for ib in range(4):
                b = k if ib == 0 else ib + 2
                cb = eidx[b]
                jy[ra, cb] -= ejr[a] * (fx * ejr[b] + fv * edv[b]) + f * eh[a, b]
                jy[ra, n + cb] -= ejr[a] * fv * ejr[b]
            for kk in range(nz):
                jy[ra, zo + kk] -= ejr[a] * reg[outs[o + 3 + kk]]
            for kk in range(npe):
                jp[ra, pidx[po + kk]] -= ejr[a] * reg[outs[o + 3 + nz + kk]]
    for s in range(nz):
        o += bs
        rx, rv = _state_row(zo + s, o, nz, npe, zo, po, pidx, reg, outs, want, ydot, jy, jp)
        if want:
            row = zo + s
            for b in range(6):
                cb = eidx[b]
                jy[row, cb] += rx * ejr[b] + rv * edv[b]
                jy[row, n + cb] += rv * ejr[b]


@njit(cache=True)
def input_at(coef, i, tau, u):  # type: ignore[no-untyped-def]
    """Fill ``u`` with the inputs at local time ``tau`` of sample interval ``i`` (cubic per interval)."""
    k = min(i, coef.shape[0] - 1)
    for c in range(coef.shape[1]):
        u[c] = ((coef[k, c, 3] * tau + coef[k, c, 2]) * tau + coef[k, c, 1]) * tau + coef[k, c, 0]


@njit(cache=True)
def spectral_radius(jy):  # type: ignore[no-untyped-def]
    """Largest eigenvalue magnitude of ``jy`` (closed form for 1×1 and 2×2)."""
    nst = jy.shape[0]
    if nst == 1:
        return abs(jy[0, 0])
    if nst == 2:
        tr = jy[0, 0] + jy[1, 1]
        det = jy[0, 0] * jy[1, 1] - jy[0, 1] * jy[1, 0]
        disc = tr * tr / 4.0 - det
        if disc >= 0.0:
            s = np.sqrt(disc)
            return max(abs(tr / 2.0 + s), abs(tr / 2.0 - s))
        return np.sqrt(det) if det > 0.0 else 0.0
    ev = np.linalg.eigvals(jy.astype(np.complex128))
    r = 0.0
    for k in range(ev.size):
        a = abs(ev[k])
        if a > r:
            r = a
    return r
