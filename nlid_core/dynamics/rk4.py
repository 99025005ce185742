r"""Explicit fixed-step RK4 with exact discrete forward sensitivities, for any assembled model (numba).

Each sample interval gets ``nsub`` classical RK4 steps; the inputs are evaluated at the stage times
from per-interval cubic coefficients (zero-order, first-order and spline holds are all cubics).
Sensitivities ``S = ∂y/∂(θ, y0)`` go through the *same* stages (internal differentiation:
``K_S = J_y·S_stage + J_θ``), so they are the exact derivatives of the discrete map.

A run reports ``STIFF`` when ``h·ρ(J_y)`` (checked every ``check_every`` samples at the step start)
exceeds the RK4 stability bound (2.78 on the real axis; 2.5 used); the caller then takes more
substeps or the implicit integrator (:mod:`nlid_core.dynamics.sdirk`).

The first stage of each interval reuses the evaluation made to record the sample, and the sensitivity stage uses
the structure ``∂q̇/∂y = [0 I 0]`` and skips the zeros of ``J_y`` (same sums, same order as the dense product). The
right-hand side is called with a literal ``want`` at each call site: the compiler then specialises it, which runs
it about 2.5 times faster than with the flag as a run-time value.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .evaluate import DIVERGED, NONPOSITIVE_MASS, OK, STIFF, input_at, rhs, spectral_radius

#: |h·λ| above which RK4 is considered unstable (its real-axis limit is 2.785).
STABILITY_LIMIT = 2.5


@njit(cache=True)
def _record(i, y, ydot, jy, jp, s, n, out_idx, want, yout, qdd, sens):  # type: ignore[no-untyped-def]
    nst = y.size
    npar = jp.shape[1]
    for k in range(nst):
        yout[i, k] = y[k]
    for k in range(n):
        qdd[i, k] = ydot[n + k]
    if want:
        q = s.shape[1]
        for c in range(out_idx.size):
            r = out_idx[c]
            if r < nst:
                for k in range(q):
                    sens[i, c, k] = s[r, k]
            else:
                row = n + (r - nst)
                for k in range(q):
                    acc = 0.0
                    for m in range(nst):
                        acc += jy[row, m] * s[m, k]
                    if k < npar:
                        acc += jp[row, k]
                    sens[i, c, k] = acc


@njit(cache=True)
def _sens_stage(jy, jp, s, ks, n):  # type: ignore[no-untyped-def]
    """``ks = J_y s + J_θ`` (parameter columns first), using ``∂q̇/∂y = [0 I 0]`` (the first ``n`` rows are the
    velocity rows of ``s``) and skipping the zeros of ``J_y``; row by row, so the inner loop runs along the
    contiguous columns. The sums are taken in the order of the dense product, so the result is the same."""
    nst = s.shape[0]
    q = s.shape[1]
    npar = jp.shape[1]
    for r in range(n):
        for k in range(q):
            ks[r, k] = s[n + r, k]
    for r in range(n, nst):
        for k in range(q):
            ks[r, k] = jp[r, k] if k < npar else 0.0
        for m in range(nst):
            a = jy[r, m]
            if a != 0.0:
                for k in range(q):
                    ks[r, k] += a * s[m, k]


@njit(cache=True)
def _allocate(ns, nst, npar, n, nin, nout, q, want):  # type: ignore[no-untyped-def]
    """Output arrays (NaN until filled) and the right-hand side's work arrays."""
    yout = np.full((ns, nst), np.nan)
    qdd = np.full((ns, n), np.nan)
    sens = np.full((ns, nout, q), np.nan) if want else np.zeros((1, 1, 1))
    work = (np.zeros(nst), np.zeros((nst, nst)), np.zeros((nst, npar)), np.zeros(n), np.zeros((n, nst)),
            np.zeros((n, npar)), np.zeros(nin))
    return yout, qdd, sens, work


@njit(cache=True, error_model="numpy")
def _at_sample(i, t, coef, y, s, theta, want, jac, out_idx, limits, n, elem, pidx, op, ia, ib, idst, reg,  # type: ignore[no-untyped-def]
               outs, dof_in, body, work, yout, qdd, sens):
    """Evaluate the model at sample ``i`` (filling ``work``; the Jacobians only with ``want`` or ``jac``), check the
    state, store the outputs; a status."""
    ydot, jy, jp, mass, dmy, dmp, u = work
    ns = t.size
    if i < ns - 1:
        input_at(coef, i, 0.0, u)
    else:
        input_at(coef, i - 1, t[i] - t[i - 1], u)
    if want or jac:
        status = rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, True, ydot, jy, jp, mass,
                     dmy, dmp)
    else:
        status = rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False, ydot, jy, jp, mass,
                     dmy, dmp)
    if status != OK:
        return status
    for k in range(y.size):
        if not (np.isfinite(y[k]) and abs(y[k]) <= limits[k]):
            return DIVERGED
    _record(i, y, ydot, jy, jp, s, n, out_idx, want, yout, qdd, sens)
    return OK


@njit(cache=True, error_model="numpy", nogil=True)
def integrate_rk4(t, coef, nsub, y0, theta, s0, want, out_idx, limits, check_every,  # type: ignore[no-untyped-def]
                  n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body):
    """Integrate over the sample grid ``t``.

    Returns
    -------
    yout : (ns, N) ndarray
    qdd : (ns, n) ndarray
    sens : (ns, len(out_idx), Q) ndarray
        ∂(output)/∂(θ, initial-state columns of ``s0``); outputs index ``[y, q̈]``.
    status : int
    index : int
        Sample where the run stopped (ns when complete).
    hrho : float
        Largest h·ρ(J) seen at the checks.
    """
    ns = t.size
    nst = y0.size
    q = s0.shape[1]
    yout, qdd, sens, work = _allocate(ns, nst, theta.size, n, coef.shape[1], out_idx.size, q, want)
    ydot, jy, jp, mass, dmy, dmp, u = work
    y = y0.copy()
    s = s0.copy()
    yt = np.zeros(nst)
    st = np.zeros((nst, q))
    ky = np.zeros((4, nst))
    ks = np.zeros((4, nst, q))
    hrho = 0.0
    for i in range(ns):
        check = check_every > 0 and i % check_every == 0 and i < ns - 1
        status = _at_sample(i, t, coef, y, s, theta, want, check, out_idx, limits, n, elem, pidx, op, ia, ib, idst,
                            reg, outs, dof_in, body, work, yout, qdd, sens)
        if status != OK:
            return yout, qdd, sens, status, i, hrho
        if i == ns - 1:
            break
        dt = t[i + 1] - t[i]
        h = dt / nsub
        if check:
            r = h * spectral_radius(jy)
            if r > hrho:
                hrho = r
            if r > STABILITY_LIMIT:
                return yout, qdd, sens, STIFF, i, hrho
        for sub in range(nsub):
            t0 = sub * h
            for stage in range(4):
                c = 0.0 if stage == 0 else (0.5 if stage < 3 else 1.0)
                for k in range(nst):
                    yt[k] = y[k] + (c * h * ky[stage - 1, k] if stage > 0 else 0.0)
                if want:
                    for k in range(nst):
                        for m in range(q):
                            st[k, m] = s[k, m] + (c * h * ks[stage - 1, k, m] if stage > 0 else 0.0)
                if sub > 0 or stage > 0:  # the first stage of an interval is the evaluation at the sample
                    input_at(coef, i, t0 + c * h, u)
                    if want:  # a literal flag at each call, so the compiled right-hand side is specialised (~2.5x)
                        status = rhs(yt, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, True,
                                     ydot, jy, jp, mass, dmy, dmp)
                    else:
                        status = rhs(yt, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False,
                                     ydot, jy, jp, mass, dmy, dmp)
                    if status != OK:
                        return yout, qdd, sens, status, i + 1, hrho
                for k in range(nst):
                    ky[stage, k] = ydot[k]
                if want:
                    _sens_stage(jy, jp, st, ks[stage], n)
            for k in range(nst):
                y[k] += h / 6.0 * (ky[0, k] + 2.0 * ky[1, k] + 2.0 * ky[2, k] + ky[3, k])
            if want:
                for k in range(nst):
                    for m in range(q):
                        s[k, m] += h / 6.0 * (ks[0, k, m] + 2.0 * ks[1, k, m] + 2.0 * ks[2, k, m] + ks[3, k, m])
            for k in range(nst):
                if not (np.isfinite(y[k]) and abs(y[k]) <= limits[k]):
                    return yout, qdd, sens, DIVERGED, i + 1, hrho
    return yout, qdd, sens, OK, ns, hrho


__all__ = ["STABILITY_LIMIT", "integrate_rk4", "NONPOSITIVE_MASS"]
