"""Compiled fixed-step RK4 simulator with forward sensitivities (numba).

State ``y = (x, ẋ)``; ``ẍ = (f − Σ θ_j ψ_j(x, ẋ)) / Σ θ_i φ_i(x)`` with the
term codes of :mod:`nlid_core.models`. Sensitivities ``S = ∂y/∂q`` for
``q = (θ, x0, v0)`` are propagated through the *same* RK4 stages
(internal differentiation), so they are the exact derivatives of the
discrete simulation: the Jacobian handed to the optimiser is exact for the
model that is actually simulated, not a finite-difference estimate.

The input is given on a fine grid ``f_fine`` holding the force at every
half substep (``2·nsub + 1`` points per sample interval, end points shared),
so any input reconstruction (zero-order, first-order, cubic) is done once
outside the loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .terms.fast_kernel import accel
from .status import DIVERGED as DIVERGED, NONPOSITIVE_MASS as NONPOSITIVE_MASS, OK as OK  # the codes the kernels return


@njit(cache=True)
def _stop(y, sens, want_sens, first_unset, status, index):  # type: ignore[no-untyped-def]
    """Mark samples from ``first_unset`` on as NaN and return the kernel's outputs."""
    y[first_unset:] = np.nan
    if want_sens:
        sens[first_unset:] = np.nan
    return y, sens, status, index


@njit(cache=True, error_model="numpy")
def simulate_rk4(t, f_fine, nsub, x0, v0, theta, terms, want_sens, with_x0, out_ch, x_limit):  # type: ignore[no-untyped-def]
    """Integrate the term model over the sample grid ``t``: :func:`_simulate` with ``want_sens`` a literal, so
    that the compiler specialises the term evaluation for it (without sensitivities 2× faster than a run-time
    flag)."""
    if want_sens:
        return _simulate(t, f_fine, nsub, x0, v0, theta, terms, True, with_x0, out_ch, x_limit)
    return _simulate(t, f_fine, nsub, x0, v0, theta, terms, False, with_x0, out_ch, x_limit)


@njit(cache=True, inline="always", error_model="numpy")
def _simulate(t, f_fine, nsub, x0, v0, theta, terms, want_sens, with_x0, out_ch, x_limit):  # type: ignore[no-untyped-def]
    """Integrate the term model over the sample grid ``t``.

    Returns
    -------
    y : (n, 3) ndarray
        x, ẋ, ẍ at the samples.
    sens : (n, len(out_ch), p + 2) ndarray
        ∂(output channel)/∂(θ, x0, v0) at the samples (p columns, without the
        initial state, when ``with_x0`` is False; shape (1, 1, 1) when
        ``want_sens`` is False).
    status : int
        0 ok, 1 diverged (non-finite or |x| > x_limit), 2 non-positive mass.
    fail_index : int
        Sample index where the run stopped (n when it completed).
    """
    n = t.size
    p = theta.size
    q = p + 2 if with_x0 else p
    nc = out_ch.size
    y = np.empty((n, 3))
    if want_sens:
        sens = np.empty((n, nc, q))
    else:
        sens = np.zeros((1, 1, 1))
    # ∂F/∂θ and ∂m/∂θ of the last evaluation (columns p, p+1, the initial state, stay 0), from which
    # da/dθ = −(∂F/∂θ + a·∂m/∂θ)/m is formed inside each sensitivity loop
    work = np.zeros((2, p + 2))
    # sensitivities: Sx[k], Sv[k] for k in 0..q-1
    Sx = np.zeros(q)
    Sv = np.zeros(q)
    if with_x0:
        Sx[p] = 1.0
        Sv[p + 1] = 1.0
    kx = np.zeros(4)  # stage slopes of x and v
    kv = np.zeros(4)
    skx = np.zeros((4, q))  # and of their sensitivities
    skv = np.zeros((4, q))
    x = x0
    v = v0
    stride = 2 * nsub
    for i in range(n):
        # output at sample i, which is also the first stage of the interval's first substep
        a, dadx, dadv, mass = accel(x, v, f_fine[i * stride], theta, terms, want_sens, work)
        if not mass > 0.0:
            return _stop(y, sens, want_sens, i, NONPOSITIVE_MASS, i)
        if not (np.isfinite(x) and np.isfinite(v) and np.isfinite(a)) or abs(x) > x_limit:
            return _stop(y, sens, want_sens, i, DIVERGED, i)
        y[i, 0] = x
        y[i, 1] = v
        y[i, 2] = a
        if want_sens:
            for c in range(nc):
                ch = out_ch[c]
                for k in range(q):
                    if ch == 0:
                        sens[i, c, k] = Sx[k]
                    elif ch == 1:
                        sens[i, c, k] = Sv[k]
                    else:
                        sens[i, c, k] = dadx * Sx[k] + dadv * Sv[k] - (work[0, k] + a * work[1, k]) / mass
        if i == n - 1:
            break
        h = (t[i + 1] - t[i]) / nsub
        base = i * stride
        for s_i in range(nsub):
            j0 = base + 2 * s_i
            # the four stages share one call site of the (inlined) term evaluation: ten copies of it made the
            # kernel take a minute to compile
            for st in range(4):
                cst = 0.0 if st == 0 else (0.5 * h if st < 3 else h)
                xs = x if st == 0 else x + cst * kx[st - 1]
                vs = v if st == 0 else v + cst * kv[st - 1]
                if st > 0 or s_i > 0:
                    a, dadx, dadv, mass = accel(xs, vs, f_fine[j0 + (st + 1) // 2], theta, terms, want_sens, work)
                    if not mass > 0.0:
                        return _stop(y, sens, want_sens, i + 1, NONPOSITIVE_MASS, i)
                kx[st] = vs
                kv[st] = a
                if want_sens:
                    inv_m = 1.0 / mass
                    if st == 0:
                        for k in range(q):
                            skx[0, k] = Sv[k]
                            skv[0, k] = dadx * Sx[k] + dadv * Sv[k] - (work[0, k] + a * work[1, k]) * inv_m
                    else:
                        for k in range(q):
                            txk = Sx[k] + cst * skx[st - 1, k]
                            tvk = Sv[k] + cst * skv[st - 1, k]
                            skx[st, k] = tvk
                            skv[st, k] = dadx * txk + dadv * tvk - (work[0, k] + a * work[1, k]) * inv_m
            if want_sens:
                for k in range(q):
                    Sx[k] += h / 6.0 * (skx[0, k] + 2.0 * skx[1, k] + 2.0 * skx[2, k] + skx[3, k])
                    Sv[k] += h / 6.0 * (skv[0, k] + 2.0 * skv[1, k] + 2.0 * skv[2, k] + skv[3, k])
            x += h / 6.0 * (kx[0] + 2.0 * kx[1] + 2.0 * kx[2] + kx[3])
            v += h / 6.0 * (kv[0] + 2.0 * kv[1] + 2.0 * kv[2] + kv[3])
            if not (np.isfinite(x) and np.isfinite(v)) or abs(x) > x_limit:
                return _stop(y, sens, want_sens, i + 1, DIVERGED, i + 1)
    return y, sens, OK, n


@njit(cache=True)
def max_rate(x_range, v_range, n_grid, theta, terms):  # type: ignore[no-untyped-def]
    """Largest |∂a/∂v| + sqrt(|∂a/∂x|) over a grid of |x| <= x_range, |v| <= v_range."""
    work = np.zeros((2, theta.size + 2))
    rate = 0.0
    for i in range(n_grid):
        xi = -x_range + 2.0 * x_range * i / (n_grid - 1)
        for j in range(n_grid):
            vj = -v_range + 2.0 * v_range * j / (n_grid - 1)
            _, dadx, dadv, mass = accel(xi, vj, 0.0, theta, terms, False, work)
            if mass > 0.0:
                r = abs(dadv) + np.sqrt(abs(dadx))
                if r > rate:
                    rate = r
    return rate


@njit(cache=True)
def spline_slopes(x, y):  # type: ignore[no-untyped-def]
    """Node slopes of the not-a-knot cubic spline through (x, y) (n >= 4).

    The same tridiagonal system as ``scipy.interpolate.CubicSpline`` with
    ``bc_type="not-a-knot"``, solved by the Thomas algorithm in one pass.
    """
    n = x.size
    dx = np.empty(n - 1)
    slope = np.empty(n - 1)
    for i in range(n - 1):
        dx[i] = x[i + 1] - x[i]
        slope[i] = (y[i + 1] - y[i]) / dx[i]
    sub = np.zeros(n)
    diag = np.empty(n)
    sup = np.zeros(n)
    rhs = np.empty(n)
    d0 = x[2] - x[0]
    diag[0] = dx[1]
    sup[0] = d0
    rhs[0] = ((dx[0] + 2.0 * d0) * dx[1] * slope[0] + dx[0] * dx[0] * slope[1]) / d0
    for i in range(1, n - 1):
        sub[i] = dx[i]
        diag[i] = 2.0 * (dx[i - 1] + dx[i])
        sup[i] = dx[i - 1]
        rhs[i] = 3.0 * (dx[i] * slope[i - 1] + dx[i - 1] * slope[i])
    d1 = x[n - 1] - x[n - 3]
    sub[n - 1] = d1
    diag[n - 1] = dx[n - 3]
    rhs[n - 1] = (dx[n - 2] * dx[n - 2] * slope[n - 3] + (2.0 * d1 + dx[n - 2]) * dx[n - 3] * slope[n - 2]) / d1
    # forward elimination, back substitution
    for i in range(1, n):
        w = sub[i] / diag[i - 1]
        diag[i] -= w * sup[i - 1]
        rhs[i] -= w * rhs[i - 1]
    s = np.empty(n)
    s[n - 1] = rhs[n - 1] / diag[n - 1]
    for i in range(n - 2, -1, -1):
        s[i] = (rhs[i] - sup[i] * s[i + 1]) / diag[i]
    return s


@njit(cache=True)
def spline_fine(x, y, m):  # type: ignore[no-untyped-def]
    """Not-a-knot cubic spline through (x, y) at fractions j/m of every interval, plus the last node."""
    n = x.size
    s = spline_slopes(x, y)
    out = np.empty((n - 1) * m + 1)
    for i in range(n - 1):
        h = x[i + 1] - x[i]
        slope = (y[i + 1] - y[i]) / h
        cub = (s[i] + s[i + 1] - 2.0 * slope) / h
        c0 = cub / h
        c1 = (slope - s[i]) / h - cub
        for j in range(m):
            tau = h * j / m
            out[i * m + j] = ((c0 * tau + c1) * tau + s[i]) * tau + y[i]
    out[(n - 1) * m] = y[n - 1]
    return out
