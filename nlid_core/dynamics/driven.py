r"""Internal states driven by measured motion, for equation error with state-carrying terms.

A term's internal state obeys ``ż = R(x, ẋ, z; θ)``: given the measured displacement and velocity
it is an ODE in z alone. :func:`driven_states` integrates it along a record with the implicit
trapezoidal rule (A-stable, second order; Newton on the exact ``∂R/∂z``; x and ẋ linear between
samples; an interval where Newton's method fails is split into up to 256 steps), so even LuGre bristles with σ0 = 1e7 N/m are followed at the sampling rate, and returns
the states and the force of the state-carrying terms at the samples. Equation error then holds
those terms at fixed parameters and regresses the rest of the force.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .evaluate import OK, rhs
from .model import Element, Model

__all__ = ["driven_states"]

FloatArray = NDArray[np.float64]


@njit(cache=True, error_model="numpy")
def _step(z, xa, va, xb, vb, h, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, y, ydot, jy,  # type: ignore[no-untyped-def]
          jp, mass, dmy, dmp, u):
    """One trapezoidal step of the states from (xa, va) to (xb, vb); (ok, new states)."""
    nz = z.size
    y[0] = xa
    y[1] = va
    for k in range(nz):
        y[2 + k] = z[k]
    if rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False, ydot, jy, jp, mass, dmy, dmp) != OK:
        return False, z
    r0 = ydot[2:].copy()
    znew = z + h * r0
    y[0] = xb
    y[1] = vb
    w = np.zeros((nz, nz))
    g = np.zeros(nz)
    for _ in range(30):
        for k in range(nz):
            y[2 + k] = znew[k]
        if rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, True, ydot, jy, jp, mass, dmy,
               dmp) != OK:
            return False, z
        err = 0.0
        for k in range(nz):
            g[k] = znew[k] - z[k] - 0.5 * h * (r0[k] + ydot[2 + k])
            for m in range(nz):
                w[k, m] = (1.0 if k == m else 0.0) - 0.5 * h * jy[2 + k, 2 + m]
            err = max(err, abs(g[k]) / (1e-300 + abs(znew[k]) + abs(z[k]) + abs(h * r0[k])))
        if not np.isfinite(err):
            return False, z
        if err < 1e-13:
            return True, znew
        znew = znew - np.linalg.solve(w, g)
    return False, z


@njit(cache=True, error_model="numpy")
def _trapezoid(t, x, v, z0, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body):  # type: ignore[no-untyped-def]
    ns = t.size
    nz = z0.size
    nst = 2 + nz
    npar = theta.size
    zs = np.full((ns, nz), np.nan)
    force = np.full(ns, np.nan)
    y = np.zeros(nst)
    ydot = np.zeros(nst)
    jy = np.zeros((nst, nst))
    jp = np.zeros((nst, npar))
    mass = np.zeros(1)
    dmy = np.zeros((1, nst))
    dmp = np.zeros((1, npar))
    u = np.zeros(1)
    z = z0.copy()
    for i in range(ns):
        y[0] = x[i]
        y[1] = v[i]
        for k in range(nz):
            y[2 + k] = z[k]
        if rhs(y, u, theta, n, elem, pidx, op, ia, ib, idst, reg, outs, dof_in, body, False, ydot, jy, jp, mass, dmy,
               dmp) != OK:
            return zs, force, i
        force[i] = -ydot[1] * mass[0]
        for k in range(nz):
            zs[i, k] = z[k]
        if i == ns - 1:
            break
        h = t[i + 1] - t[i]
        done = False
        m = 1
        while m <= 256 and not done:  # where Newton's method fails, smaller steps (x, v linear between samples)
            zt = z.copy()
            ok = True
            for j in range(m):
                fa = j / m
                fb = (j + 1) / m
                ok, zt = _step(zt, x[i] + fa * (x[i + 1] - x[i]), v[i] + fa * (v[i + 1] - v[i]),
                               x[i] + fb * (x[i + 1] - x[i]), v[i] + fb * (v[i + 1] - v[i]), h / m, theta, n, elem,
                               pidx, op, ia, ib, idst, reg, outs, dof_in, body, y, ydot, jy, jp, mass, dmy, dmp,
                               u)
                if not ok:
                    break
            if ok:
                z = zt
                done = True
            m *= 4
        if not done:
            return zs, force, i + 1
    return zs, force, ns


def driven_states(model: Model, t: FloatArray, x: FloatArray, v: FloatArray, theta: FloatArray
                  ) -> tuple[FloatArray, FloatArray, int]:
    """Internal states of a single-DOF model along measured motion, and the force of their terms.

    Parameters
    ----------
    model : Model
        One DOF; only its state-carrying terms are used.
    t : (n,) ndarray, s
    x, v : (n,) ndarray
        Measured displacement and velocity.
    theta : (P,) ndarray
        The model's parameters.

    Returns
    -------
    z : (n, n_z) ndarray
        Internal states (starting at their steady value for ``v[0]``).
    force : (n,) ndarray
        Sum of the forces of the state-carrying terms.
    index : int
        ``n`` when complete, else the sample where Newton's method failed (values after it NaN).
    """
    from ..terms.registry import baseline_terms, get_term

    unit_mass = next(get_term(n) for n in baseline_terms() if get_term(n).inertial)
    keep = [k for k, e in enumerate(model.elements) if e.term.states]
    if not keep:
        return np.zeros((t.size, 0)), np.zeros(t.size), int(t.size)
    sub = Model([Element(unit_mass)] + [model.elements[k] for k in keep], n_dof=1)
    idx = [model.param_names.index(n) if n in model.param_names else -1 for n in sub.param_names]
    th = np.array([1.0 if j < 0 else theta[j] for j in idx], dtype=np.float64)
    z0 = sub.steady_states(np.array([x[0]]), np.array([v[0]]), th)
    p = sub.plan
    zs, force, index = _trapezoid(np.ascontiguousarray(t, dtype=np.float64), np.ascontiguousarray(x, dtype=np.float64),
                                  np.ascontiguousarray(v, dtype=np.float64), z0, th, *p.args())
    return zs, force, int(index)
