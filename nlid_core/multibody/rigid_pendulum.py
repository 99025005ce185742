"""The rigid double pendulum, the flexible one's reference: its constants from the same specification, its
energy, and its simulation in the flexible model's output form."""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import NDArray
from scipy.integrate import solve_ivp

from .pendulum_spec import PendulumRun, PendulumSpec, _angles, _grid

FloatArray = NDArray[np.float64]

__all__ = ["rigid_constants", "rigid_energy", "simulate_rigid"]


def rigid_constants(spec: PendulumSpec) -> tuple[float, float, float, float, float, float]:
    """Constants of the rigid model (see the module docstring).

    Parameters
    ----------
    spec : PendulumSpec

    Returns
    -------
    tuple of float
        ``m1, m2`` (kg), ``I1`` about O and ``I2`` about AB's centre (kg·m²), ``L1`` and ``c2 = L2/2`` (m).
    """
    m1 = spec.density * spec.width * spec.height * spec.length_oa
    m2 = spec.density * spec.width * spec.height * spec.length_ab
    i1 = m1 * (spec.length_oa**2 / 3.0 + spec.height**2 / 12.0)
    i2 = m2 * (spec.length_ab**2 + spec.height**2) / 12.0
    return m1, m2, i1, i2, spec.length_oa, 0.5 * spec.length_ab


def rigid_energy(spec: PendulumSpec, phi: FloatArray, dphi: FloatArray) -> FloatArray:
    """Total energy of the rigid model (kinetic + gravity, zero potential on the horizontal through O).

    Parameters
    ----------
    spec : PendulumSpec
    phi : (..., 2) ndarray, rad
        Counter-clockwise angles φ = −θ of OA and AB.
    dphi : (..., 2) ndarray, rad/s
        Their rates.

    Returns
    -------
    (...,) ndarray, J
    """
    m1, m2, i1, i2, l1, c2 = rigid_constants(spec)
    p1, p2, w1, w2 = phi[..., 0], phi[..., 1], dphi[..., 0], dphi[..., 1]
    kin = 0.5 * (i1 + m2 * l1**2) * w1**2 + m2 * l1 * c2 * np.cos(p1 - p2) * w1 * w2 + 0.5 * (i2 + m2 * c2**2) * w2**2
    pot = spec.gravity * (m1 * 0.5 * l1 * np.sin(p1) + m2 * (l1 * np.sin(p1) + c2 * np.sin(p2)))
    return np.asarray(kin + pot, dtype=float)


def simulate_rigid(theta1: float, theta2: float, *, spec: PendulumSpec = PendulumSpec(), t_end: float = 2.0,
                   dt_out: float = 0.05, nodes: bool = False) -> PendulumRun:
    """Simulate the rigid-rod double pendulum (the limit E → ∞ of :func:`simulate`).

    Parameters
    ----------
    theta1, theta2 : float, rad
        Angles of OA and AB below the horizontal.
    spec : PendulumSpec
        The moduli, ν and the element counts are not used (the node positions follow the element counts).
    t_end, dt_out : float, s
        As in :func:`simulate` (``dt_out`` at most ``t_end``).
    nodes : bool
        Record the node positions (at the ANCF nodes' places along the rods).

    Returns
    -------
    PendulumRun
        ``steps`` counts right-hand-side evaluations.

    Raises
    ------
    ModelSpecError
        Non-finite angles or a bad grid.

    Notes
    -----
    The equations are in the module docstring; DOP853 with rtol 1e-10, atol 1e-12.
    """
    th1, th2 = _angles(theta1, theta2)
    n_out, _ = _grid(t_end, dt_out, None)
    t = np.arange(n_out + 1, dtype=np.float64) * float(dt_out)
    t0 = time.perf_counter()
    y, ok, msg, nfev = _rigid_states(spec, th1, th2, t)
    elapsed = time.perf_counter() - t0
    l1 = spec.length_oa
    fr = np.linspace(0.0, 1.0, spec.n_oa + 1)
    fr2 = np.linspace(0.0, 1.0, spec.n_ab + 1)[1:]
    ax = l1 * np.cos(y[:, :1]) * fr
    ay = l1 * np.sin(y[:, :1]) * fr
    bx = l1 * np.cos(y[:, :1]) + spec.length_ab * np.cos(y[:, 1:2]) * fr2
    by = l1 * np.sin(y[:, :1]) + spec.length_ab * np.sin(y[:, 1:2]) * fr2
    pos = np.stack([np.hstack([ax, bx]), np.hstack([ay, by])], axis=-1)
    return PendulumRun(success=ok, message=msg, t=t, x_b=pos[:, -1, 0].copy(), y_b=pos[:, -1, 1].copy(),
                       nodes=pos if nodes else None, sensitivities={}, model="rigid", steps=nfev, newton_iterations=0,
                       elapsed_s=elapsed)


def _rigid_states(spec: PendulumSpec, th1: float, th2: float, t: FloatArray) -> tuple[FloatArray, bool, str, int]:
    """States (φ1, φ2, φ̇1, φ̇2) (len(t), 4) of the rigid model (counter-clockwise angles), success, message,
    nfev."""
    m1, m2, i1, i2, l1, c2 = rigid_constants(spec)
    g = spec.gravity

    def rhs(_t: float, y: FloatArray) -> FloatArray:
        p1, p2, w1, w2 = y
        c, s = math.cos(p1 - p2), math.sin(p1 - p2)
        a11, a12, a22 = i1 + m2 * l1 * l1, m2 * l1 * c2 * c, i2 + m2 * c2 * c2
        b1 = -(m2 * l1 * c2 * s * w2 * w2 + (0.5 * m1 * l1 + m2 * l1) * g * math.cos(p1))
        b2 = -(-m2 * l1 * c2 * s * w1 * w1 + m2 * c2 * g * math.cos(p2))
        det = a11 * a22 - a12 * a12
        return np.array([w1, w2, (a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det])

    sol = solve_ivp(rhs, (0.0, float(t[-1])), np.array([-th1, -th2, 0.0, 0.0]), method="DOP853", t_eval=t,
                    rtol=1e-10, atol=1e-12)
    y = np.full((t.size, 4), np.nan)
    y[: sol.y.shape[1]] = sol.y.T
    return y, bool(sol.success), str(sol.message), int(sol.nfev)
