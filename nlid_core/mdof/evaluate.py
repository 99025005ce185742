r"""A multi-DOF model at one state: the right-hand side with its exact Jacobians, the mass matrix and the generalised
forces, through the model's plan and the one compiled right-hand side (:func:`nlid_core.dynamics.evaluate.rhs`;
the rigid body's equations are in :mod:`nlid_core.dynamics.rigid`).

The equations of motion are :math:`M(q)\,\ddot q = Q(q, \dot q, z, u;\theta)` with internal states
:math:`\dot z = R(\cdot)`; the state is :math:`y = (q, \dot q, z)`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics.evaluate import rhs_call
from ..dynamics.rigid import GIMBAL_COS
from ..errors import ModelSpecError
from ..status import DIVERGED, GIMBAL_LOCK, NONPOSITIVE_MASS, OK, STIFF
from .layout import Layout
from .plan import ModelPlan

__all__ = ["DIVERGED", "GIMBAL_COS", "GIMBAL_LOCK", "NONPOSITIVE_MASS", "OK", "STIFF", "evaluate",
           "generalised_forces", "gimbal_locked", "held_mask", "mass_matrix"]

FloatArray = NDArray[np.float64]


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


def gimbal_locked(layout: Layout, q: FloatArray) -> bool:
    """True when the rigid body's pitch is within ``GIMBAL_COS`` of ±90°."""
    rigid = layout.plan.plan.rigid
    return rigid is not None and abs(np.cos(q[int(rigid[1][4])])) < GIMBAL_COS


def state_at(layout: Layout, y: FloatArray, u: FloatArray, theta: FloatArray, held: NDArray[np.bool_], want: bool
             ) -> tuple[FloatArray, FloatArray, FloatArray, int, FloatArray]:
    """ẏ, ∂ẏ/∂y, ∂ẏ/∂θ (θ the model's parameters), the status and the mass matrix at the full state ``y``."""
    mp: ModelPlan = layout.plan
    plan = replace(mp.plan, dof_in=mp.dof_in(held))
    th = mp.theta(theta)
    n, nst, npar = plan.n_dof, plan.n_states, th.size
    ydot, jy, jp = np.zeros(nst), np.zeros((nst, nst)), np.zeros((nst, npar))
    mass = np.zeros(n)
    args = plan.args()
    code = rhs_call(y, u, th, args, bool(want), ydot, jy, jp, mass, np.zeros((n, nst)), np.zeros((n, npar)))
    body = args[-1]
    full = np.diag(mass) if body is None else body[5][0].copy()
    return ydot, jy, mp.fold(jp), int(code), full


def evaluate(layout: Layout, y: ArrayLike, u: ArrayLike | None, theta: ArrayLike, held: ArrayLike | None = None,
             want: bool = True) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Right-hand side and exact Jacobians at one state.

    Parameters
    ----------
    layout : Layout
    y : (N,) array_like
        State ``(q, q̇, z)`` (``z``: the elements' internal states, if any).
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
    ydot : (N,) ndarray
    jy : (N, N) ndarray
        ∂ẏ/∂y.
    jp : (N, P) ndarray
        ∂ẏ/∂θ.
    status : int
        ``OK``, ``NONPOSITIVE_MASS`` or ``GIMBAL_LOCK``.

    Raises
    ------
    ModelSpecError
        Wrong sizes or non-finite values.
    """
    ydot, jy, jp, code, _ = state_at(layout, _vector(y, layout.n_states, "y"), _vector(u, layout.n_inputs, "u"),
                                     _vector(theta, layout.n_params, "theta"), held_mask(layout, held), want)
    return ydot, jy, jp, code


def _at_rest(layout: Layout, q: ArrayLike, qd: ArrayLike | None, u: ArrayLike | None, theta: ArrayLike
             ) -> tuple[FloatArray, FloatArray]:
    n = layout.n_dof
    y = np.zeros(layout.n_states)
    y[:n] = _vector(q, n, "q")
    y[n:2 * n] = _vector(qd, n, "qd")
    ydot, _, _, _, full = state_at(layout, y, _vector(u, layout.n_inputs, "u"), _vector(theta, layout.n_params, "theta"),
                                   np.zeros(n, dtype=bool), False)
    return full @ ydot[n:2 * n], full


def generalised_forces(layout: Layout, q: ArrayLike, qd: ArrayLike, u: ArrayLike | None, theta: ArrayLike
                       ) -> FloatArray:
    """The generalised forces ``Q(q, q̇, u; θ) = M(q) q̈`` (n,), velocity terms of the rigid body and gravity included
    (internal states at zero)."""
    return _at_rest(layout, q, qd, u, theta)[0]


def mass_matrix(layout: Layout, q: ArrayLike, theta: ArrayLike) -> FloatArray:
    """The mass matrix ``M(q; θ)`` (n, n)."""
    return _at_rest(layout, q, None, None, theta)[1]
