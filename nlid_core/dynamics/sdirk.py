r"""Implicit, L-stable SDIRK of order 4 with error control and exact discrete sensitivities (numba).

The 5-stage singly diagonally implicit Runge-Kutta method of Hairer and Wanner (Solving Ordinary
Differential Equations II, 2nd ed., Springer 1996, §IV.6, Table 6.5; γ = 1/4, stiffly accurate,
embedded order 3 for the error estimate). Stiff models (LuGre bristles with σ0 up to 1e7 N/m) run
at step sizes set by accuracy, not stability.

Each stage solves ``K_i = f(t_i, y + h Σ_{j<i} a_ij K_j + h γ K_i)`` by Newton's method with the
exact Jacobian. Steps adapt inside every sample interval (never crossing a sample) to the local
error ``‖h Σ (b_i − b̂_i) K_i‖`` scaled by ``atol + rtol·|y|``. After an accepted step the
sensitivities follow by differentiating the converged stage equations (the staggered direct
method): ``(I − hγJ_i)·dK_i = J_i·(S + h Σ_{j<i} a_ij dK_j) + J_θ,i``, ``S ← S + h Σ b_i dK_i``, with
``J_i`` at the converged stage, so they are the exact derivatives of the computed solution for
the accepted step sizes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .evaluate import DIVERGED, NEWTON_FAILED, OK, input_at, rhs
from .rk4 import _allocate, _at_sample

GAMMA = 0.25
A = np.array([
    [0.25, 0.0, 0.0, 0.0, 0.0],
    [0.5, 0.25, 0.0, 0.0, 0.0],
    [17.0 / 50.0, -1.0 / 25.0, 0.25, 0.0, 0.0],
    [371.0 / 1360.0, -137.0 / 2720.0, 15.0 / 544.0, 0.25, 0.0],
    [25.0 / 24.0, -49.0 / 48.0, 125.0 / 16.0, -85.0 / 12.0, 0.25],
])
C = np.array([0.25, 0.75, 11.0 / 20.0, 0.5, 1.0])
B = A[4].copy()
BHAT = np.array([59.0 / 48.0, -17.0 / 96.0, 225.0 / 32.0, -85.0 / 12.0, 0.0])
MAX_NEWTON = 12
MAX_STEPS_PER_SAMPLE = 20000


@njit(cache=True)
def _lu(w, piv):  # type: ignore[no-untyped-def]
    """LU factorisation of the small square ``w`` in place, partial pivoting; False when singular."""
    m = w.shape[0]
    for c in range(m):
        p = c
        big = abs(w[c, c])
        for r in range(c + 1, m):
            if abs(w[r, c]) > big:
                big = abs(w[r, c])
                p = r
        piv[c] = p
        if big == 0.0 or not np.isfinite(big):
            return False
        if p != c:
            for k in range(m):
                tmp = w[c, k]
                w[c, k] = w[p, k]
                w[p, k] = tmp
        inv = 1.0 / w[c, c]
        for r in range(c + 1, m):
            f = w[r, c] * inv
            w[r, c] = f
            for k in range(c + 1, m):
                w[r, k] -= f * w[c, k]
    return True


@njit(cache=True)
def _lu_solve(w, piv, b):  # type: ignore[no-untyped-def]
    """Solve with the factors of :func:`_lu` in place on ``b`` (m,) or (m, q)."""
    m = w.shape[0]
    bb = b.reshape(m, -1)
    q = bb.shape[1]
    for c in range(m):
        p = piv[c]
        if p != c:
            for k in range(q):
                tmp = bb[c, k]
                bb[c, k] = bb[p, k]
                bb[p, k] = tmp
    for r in range(1, m):
        for c in range(r):
            f = w[r, c]
            for k in range(q):
                bb[r, k] -= f * bb[c, k]
    for r in range(m - 1, -1, -1):
        inv = 1.0 / w[r, r]
        for k in range(q):
            acc = bb[r, k]
            for c in range(r + 1, m):
                acc -= w[r, c] * bb[c, k]
            bb[r, k] = acc * inv


@njit(cache=True, error_model="numpy", nogil=True)
def integrate_sdirk(t, coef, y0, theta, s0, want, out_idx, limits, rtol, atol,  # type: ignore[no-untyped-def]
                    n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body):
    """Integrate over the sample grid ``t`` with adaptive SDIRK4 steps.

    Returns
    -------
    yout, qdd, sens, status, index, nsteps
        As :func:`nlid_core.dynamics.rk4.integrate_rk4`, with the number of accepted steps last.
    """
    ns = t.size
    nst = y0.size
    npar = theta.size
    q = s0.shape[1]
    yout, qdd, sens, work = _allocate(ns, nst, npar, n, coef.shape[1], out_idx.size, q, want)
    ydot, jy, jp, mass, dmy, dmp, u = work
    y = y0.copy()
    s = s0.copy()
    kst = np.zeros((5, nst))
    jst = np.zeros((5, nst, nst))
    jpst = np.zeros((5, nst, npar))
    dk = np.zeros((5, nst, q))
    base = np.zeros(nst)
    yst = np.zeros(nst)
    ynew = np.zeros(nst)
    w = np.zeros((nst, nst))
    g = np.zeros(nst)
    rhs_s = np.zeros((nst, q))
    eye = np.eye(nst)
    piv = np.zeros(nst, dtype=np.int64)
    h = 0.0
    nsteps = 0
    jac = ns < 0  # False as a plain bool: a literal would compile another _at_sample than RK4's
    for i in range(ns):
        status = _at_sample(i, t, coef, y, s, theta, want, jac, out_idx, limits, n, elem, pidx, op, ia, ib, idst,
                            reg, outs, dof_in, body, work, yout, qdd, sens)
        if status != OK:
            return yout, qdd, sens, status, i, nsteps
        if i == ns - 1:
            break
        dt = t[i + 1] - t[i]
        if h <= 0.0 or h > dt:
            h = dt if i > 0 else dt / 4.0
        tau = 0.0
        steps = 0
        while tau < dt * (1.0 - 1e-12):
            steps += 1
            if steps > MAX_STEPS_PER_SAMPLE or h < dt * 1e-12:
                return yout, qdd, sens, NEWTON_FAILED, i + 1, nsteps
            last = tau + h >= dt * (1.0 - 1e-9)
            hh = dt - tau if last else h
            ok = True
            for st in range(5):
                for k in range(nst):
                    acc = y[k]
                    for j in range(st):
                        acc += hh * A[st, j] * kst[j, k]
                    base[k] = acc
                    kst[st, k] = kst[st - 1, k] if st > 0 else ydot[k]
                input_at(coef, i, tau + C[st] * hh, u)
                conv = False
                for it in range(MAX_NEWTON):
                    for k in range(nst):
                        yst[k] = base[k] + hh * GAMMA * kst[st, k]
                    status = rhs(yst, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, True,
                                 g, jy, jp, mass, dmy, dmp)
                    if status != OK:
                        break
                    res = 0.0
                    for k in range(nst):
                        g[k] = kst[st, k] - g[k]
                        sc = atol[k] + rtol * abs(yst[k])
                        res = max(res, abs(hh * GAMMA * g[k]) / sc)
                    if not np.isfinite(res):
                        break
                    if res < 1e-6:
                        conv = True
                        break
                    for r in range(nst):
                        for c in range(nst):
                            w[r, c] = eye[r, c] - hh * GAMMA * jy[r, c]
                    if not _lu(w, piv):
                        break
                    _lu_solve(w, piv, g)
                    for k in range(nst):
                        kst[st, k] -= g[k]
                if not conv:
                    ok = False
                    break
                jst[st] = jy
                jpst[st] = jp
            err = 0.0
            if ok:
                for k in range(nst):
                    acc = y[k]
                    e = 0.0
                    for j in range(5):
                        acc += hh * B[j] * kst[j, k]
                        e += hh * (B[j] - BHAT[j]) * kst[j, k]
                    ynew[k] = acc
                    sc = atol[k] + rtol * max(abs(y[k]), abs(acc))
                    err += (e / sc) ** 2
                err = np.sqrt(err / nst)
                ok = np.isfinite(err) and err <= 1.0
            if not ok:
                h = hh * (0.25 if not np.isfinite(err) or err == 0.0 else max(0.2, min(0.9, 0.9 * err ** -0.25)))
                continue
            if want:
                for st in range(5):
                    for r in range(nst):
                        for c in range(nst):
                            w[r, c] = eye[r, c] - hh * GAMMA * jst[st, r, c]
                    if not _lu(w, piv):  # I − hγJ singular at a converged stage: no sensitivities exist
                        return yout, qdd, sens, NEWTON_FAILED, i + 1, nsteps
                    for r in range(nst):
                        for m in range(q):
                            acc = 0.0
                            for c in range(nst):
                                tot = s[c, m]
                                for j in range(st):
                                    tot += hh * A[st, j] * dk[j, c, m]
                                acc += jst[st, r, c] * tot
                            if m < npar:
                                acc += jpst[st, r, m]
                            rhs_s[r, m] = acc
                    _lu_solve(w, piv, rhs_s)
                    dk[st] = rhs_s
                for r in range(nst):
                    for m in range(q):
                        acc = s[r, m]
                        for j in range(5):
                            acc += hh * B[j] * dk[j, r, m]
                        s[r, m] = acc
            for k in range(nst):
                y[k] = ynew[k]
            tau += hh
            nsteps += 1
            fac = 4.0 if err == 0.0 else min(4.0, max(0.2, 0.9 * err ** -0.25))
            if not last:
                h = hh * fac
            else:
                h = max(h, hh) * fac if fac < 1.0 else max(h, hh)
            input_at(coef, i, tau, u)
            status = rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False, ydot, jy, jp,
                         mass, dmy, dmp)
            if status != OK:
                return yout, qdd, sens, status, i + 1, nsteps
            for k in range(nst):
                if not (np.isfinite(y[k]) and abs(y[k]) <= limits[k]):
                    return yout, qdd, sens, DIVERGED, i + 1, nsteps
    return yout, qdd, sens, OK, ns, nsteps


__all__ = ["integrate_sdirk"]
