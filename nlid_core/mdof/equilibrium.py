"""Static equilibrium of a multi-DOF model with a full mass matrix: damped Newton steps on the generalised
forces at rest with the exact tangent, and the equilibrium's sensitivity to the parameters by the implicit
function theorem (see :mod:`nlid_core.dynamics.rigid`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelSpecError
from .evaluate import OK, _vector, gimbal_locked, held_mask, state_at
from .layout import Layout

FloatArray = NDArray[np.float64]

__all__ = ["static_equilibrium", "static_sensitivity"]


def _static_tangent(layout: Layout, q: FloatArray, u: FloatArray, theta: FloatArray
                    ) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""Q(q, 0, u), ∂Q/∂q and ∂Q/∂θ at rest from the one right-hand side: :math:`Q = M\ddot q`,
    :math:`M\,\partial\ddot q/\partial(q, \theta) = \partial Q/\partial(q, \theta) - (\partial M/\partial(q, \theta))\ddot q`,
    exact where :math:`\ddot q = 0` (at the equilibrium, where the tangent and the sensitivity are used; away from it
    the Newton steps stay descent directions). Internal states are at rest at zero; a model that cannot be evaluated
    gives NaN forces, which the search treats as a failed step."""
    n = layout.n_dof
    y = np.zeros(layout.n_states)
    y[:n] = q
    ydot, jy, jp, code, full = state_at(layout, y, u, theta, np.zeros(n, dtype=bool), True)
    if code != OK:
        return np.full(n, np.nan), np.full((n, n), np.nan), np.full((n, layout.n_params), np.nan)
    return full @ ydot[n:2 * n], full @ jy[n:2 * n, :n], full @ jp[n:2 * n]


def static_equilibrium(layout: Layout, u: ArrayLike | None, theta: ArrayLike, q0: ArrayLike | None = None,
                       held: ArrayLike | None = None, *, rtol: float = 1e-10, max_iter: int = 60
                       ) -> tuple[FloatArray, bool, str]:
    """Positions where the generalised forces vanish at rest, ``Q_f(q, 0, u) = 0``, by damped Newton steps.

    Parameters
    ----------
    layout : Layout
    u : (n_in,) array_like or None
        Constant inputs (loads).
    theta : (P,) array_like
    q0 : (n,) array_like or None
        Start (default 0); held DOFs stay at their start value.
    held : (n,) array_like of bool or None
    rtol : float
        Converged when a Newton step is below ``rtol`` times the largest of the deflections
        from the start and the positions.
    max_iter : int

    Returns
    -------
    q : (n,) ndarray
        The last iterate.
    ok : bool
    message : str
        What converged or why not.

    Raises
    ------
    ModelSpecError
        Wrong sizes or non-finite values.
    """
    n = layout.n_dof
    q = _vector(q0, n, "q0").copy()
    start = q.copy()
    uu = _vector(u, layout.n_inputs, "u")
    th = _vector(theta, layout.n_params, "theta")
    free = ~held_mask(layout, held)
    res, tangent, _ = _static_tangent(layout, q, uu, th)
    # forces below this are rounding: the loads and gravity at the start, on every DOF (held ones too), times 1e-13
    tiny = 1e-13 * max(float(np.max(np.abs(res), initial=0.0)), float(np.max(np.abs(uu), initial=0.0)))
    for it in range(max_iter):
        if gimbal_locked(layout, q):
            return q, False, f"the pitch angle reached ±90° (gimbal lock) at Newton iteration {it}"
        r_f = res[free]
        if not np.any(np.abs(r_f) > tiny):
            return q, True, f"equilibrium found after {it} Newton iteration(s) (zero residual)"
        try:
            step = np.linalg.solve(tangent[np.ix_(free, free)], -r_f)
        except np.linalg.LinAlgError:
            return q, False, f"the stiffness matrix ∂Q/∂q is singular at Newton iteration {it}; no unique equilibrium"
        scale = max(float(np.max(np.abs(q[free] - start[free]))), float(np.max(np.abs(q[free]))), 1e-300)
        if float(np.max(np.abs(step))) <= rtol * scale:  # the residual is at its roundoff level
            q[free] += step
            return q, True, f"equilibrium found after {it + 1} Newton iteration(s)"
        norm0 = float(np.linalg.norm(r_f))
        lam = 1.0
        while True:  # halve the step until the force residual decreases
            trial = q.copy()
            trial[free] += lam * step
            res_t, tan_t, _ = _static_tangent(layout, trial, uu, th)
            if np.all(np.isfinite(res_t)) and np.linalg.norm(res_t[free]) < norm0:
                break
            lam *= 0.5
            if lam < 1e-6:
                return q, False, f"Newton steps stopped reducing the force residual at iteration {it + 1}"
        q, res, tangent = trial, res_t, tan_t
    return q, False, f"no equilibrium within {max_iter} Newton iterations (last step {np.max(np.abs(step)):.3g})"


def static_sensitivity(layout: Layout, q: ArrayLike, u: ArrayLike | None, theta: ArrayLike,
                       held: ArrayLike | None = None) -> FloatArray:
    """Derivative of the equilibrium positions with respect to the parameters.

    By the implicit function theorem, ``∂q_f*/∂θ = −(∂Q_f/∂q_f)⁻¹ ∂Q_f/∂θ`` (solved, not inverted);
    rows of held DOFs are zero.

    Parameters
    ----------
    layout : Layout
    q : (n,) array_like
        An equilibrium (from :func:`static_equilibrium`).
    u : (n_in,) array_like or None
    theta : (P,) array_like
    held : (n,) array_like of bool or None

    Returns
    -------
    (n, P) ndarray

    Raises
    ------
    ModelSpecError
        Wrong sizes, or a singular stiffness matrix.
    """
    n = layout.n_dof
    qq = _vector(q, n, "q")
    free = ~held_mask(layout, held)
    _, tangent, dqp = _static_tangent(layout, qq, _vector(u, layout.n_inputs, "u"),
                                      _vector(theta, layout.n_params, "theta"))
    out = np.zeros((n, layout.n_params))
    try:
        out[free] = np.linalg.solve(tangent[np.ix_(free, free)], -dqp[free])
    except np.linalg.LinAlgError:
        raise ModelSpecError("the stiffness matrix ∂Q/∂q is singular at `q`; the equilibrium is not unique") from None
    return out
