r"""A lumped multi-DOF model on the general layer: one compiled right-hand side and one integrator family.

A model of lumped DOFs (no rigid body) is the general layer's model (:mod:`nlid_core.dynamics`): its masses are
the inertia term ``m0`` on each DOF, its connections are elements between two DOFs or to ground, and lumped gravity
along DOF i is a constant force :math:`m_i g_i`, i.e. the offset term ``f0`` with the value :math:`-g_i m_i`
(the term's force is on the left-hand side). So it is simulated by :func:`nlid_core.dynamics.integrate.run_plan`:
RK4 or SDIRK4 with exact discrete sensitivities, the automatic stiff switch and the same input reconstruction as a
single-DOF model; a term with internal states (LuGre, Bouc-Wen) may sit on a connection.

The plan's parameter indices point into the model's own parameter vector θ (shared parameters included) extended by
the gravity weights :math:`w = -g \odot \theta_{m}`; sensitivities to ``w`` are folded into the mass columns by the
chain rule, :math:`\partial/\partial\theta_{m_i} \mathrel{+}= -g_i\,\partial/\partial w_i`. Inputs map to DOFs through
``dof_in`` (a held DOF is marked :data:`~nlid_core.dynamics.evaluate.HELD`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dynamics.evaluate import HELD, OK, rhs
from ..dynamics.model import Element, Model, Plan
from ..errors import ModelSpecError
from ..terms.base import TermDef
from ..terms.registry import get_term

__all__ = ["LumpedPlan", "lumped_plan", "static_tangent"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class LumpedPlan:
    """The general layer's plan of a lumped multi-DOF model.

    Attributes
    ----------
    plan : Plan
        Its ``pidx`` index ``[θ, w]`` (θ the model's P parameters, w one gravity weight per DOF with gravity).
    n_params : int
        P.
    grav_mass : (G,) ndarray of int64
        Parameter index of the mass of each DOF with gravity.
    grav : (G,) ndarray, m/s²
    in_dof : (n_in,) ndarray of int64
        The DOF each input column drives.
    state_names : tuple of str
        ``q``, ``q̇``, then the internal states of the connections' terms (``<state>_<connection>``).
    """

    plan: Plan
    n_params: int
    grav_mass: IntArray
    grav: FloatArray
    in_dof: IntArray
    state_names: tuple[str, ...]

    @property
    def n_states(self) -> int:
        """Length of ``y = (q, q̇, z)``."""
        return self.plan.n_states

    def theta(self, theta: FloatArray) -> FloatArray:
        """θ extended by the gravity weights."""
        return np.ascontiguousarray(np.concatenate([theta, -self.grav * theta[self.grav_mass]]))

    def dof_in(self, held: NDArray[np.bool_]) -> IntArray:
        """Input column of each DOF (−1 none), ``HELD`` for the held ones."""
        out = np.full(self.plan.n_dof, -1, dtype=np.int64)
        for col, dof in enumerate(self.in_dof):
            out[dof] = col
        out[held] = HELD
        return out

    def fold(self, sens: FloatArray) -> FloatArray:
        """Sensitivities over ``[θ, w, initial states]`` → over ``[θ, initial states]``."""
        p, g = self.n_params, self.grav.size
        if g == 0:
            return sens
        out = np.concatenate([sens[..., :p], sens[..., p + g:]], axis=-1)
        for k in range(g):
            out[..., self.grav_mass[k]] -= self.grav[k] * sens[..., p + k]
        return out


def _virtual_plan(terms: list[TermDef]) -> Plan:
    """The terms' programs compiled into one plan, each term on a DOF of its own (rewired by the caller)."""
    return Model([Element(t, dof=k + 1) for k, t in enumerate(terms)], n_dof=len(terms)).plan


def lumped_plan(model: object) -> LumpedPlan:
    """The general layer's plan of a lumped :class:`~nlid_core.mdof.spec.MdofModel`.

    Raises
    ------
    ModelSpecError
        A rigid-body model, or two inputs on one DOF.
    """
    from .spec import MdofModel

    if not isinstance(model, MdofModel) or model.body:
        raise ModelSpecError("only a model of lumped DOFs runs on the general layer's plan")
    n = model.n_dof
    pos = model.element_index()
    dof = {d: i for i, d in enumerate(model.dof_names)}
    # (term, DOF i, DOF j or -1, parameter indices into [θ, w], state names)
    placed: list[tuple[TermDef, int, int, list[int], list[str]]] = []
    m0 = get_term("m0")
    for i, d in enumerate(model.dofs):
        placed.append((m0, i, -1, [pos[f"m_{d.name}"]], []))
    for c in model.connections:
        for t in c.terms:
            placed.append((t, dof[c.a], -1 if c.b is None else dof[c.b], [pos[p.name + f"_{c.name}"] for p in t.params],
                           [f"{s}_{c.name}" for s in t.state_names]))
    f0 = get_term("f0")
    gdofs = [i for i, d in enumerate(model.dofs) if d.gravity != 0.0]
    for k, i in enumerate(gdofs):
        placed.append((f0, i, -1, [model.n_params + k], []))
    virtual = _virtual_plan([p[0] for p in placed])
    elem = virtual.elem.copy()
    pidx: list[int] = []
    z_off = 2 * n
    names: list[str] = []
    for row, (term, i, j, idx, states) in enumerate(placed):
        elem[row, 0], elem[row, 1], elem[row, 4], elem[row, 5] = i, j, z_off, len(pidx)
        pidx += idx
        z_off += term.n_states
        names += states
    plan = Plan(n_dof=n, n_states=z_off, n_params=model.n_params + len(gdofs), elem=np.ascontiguousarray(elem),
                pidx=np.array(pidx, dtype=np.int64), op=virtual.op, a=virtual.a, b=virtual.b, dst=virtual.dst,
                registers=virtual.registers, outs=virtual.outs, dof_in=np.full(n, -1, dtype=np.int64))
    in_dof = [dof[name[2:]] for name in model.used_inputs]
    if len(set(in_dof)) != len(in_dof):
        raise ModelSpecError("two inputs drive one DOF; map one column per DOF")
    qn = [d.name for d in model.dofs]
    return LumpedPlan(plan=plan, n_params=model.n_params,
                      grav_mass=np.array([pos[f"m_{model.dofs[i].name}"] for i in gdofs], dtype=np.int64),
                      grav=np.array([model.dofs[i].gravity for i in gdofs], dtype=np.float64),
                      in_dof=np.array(in_dof, dtype=np.int64),
                      state_names=(*qn, *(f"v_{d}" for d in qn), *names))


def static_tangent(lp: LumpedPlan, q: FloatArray, u: FloatArray, theta: FloatArray
                   ) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""Generalised force at rest :math:`Q = \tau - G(q, 0, z_0)` and its exact :math:`\partial Q/\partial q`,
    :math:`\partial Q/\partial\theta`, from the right-hand side (:math:`Q_i = m_i\ddot q_i`, the masses constant).

    Internal states are at rest at zero (LuGre bristles and Bouc-Wen hysteresis unloaded); a model that cannot be
    evaluated gives NaN forces, which the equilibrium search treats as a failed step.
    """
    n, nst = lp.plan.n_dof, lp.n_states
    th = lp.theta(np.asarray(theta, dtype=np.float64))
    npar = th.size
    p = lp.plan
    y = np.zeros(nst)
    y[:n] = q
    ydot, jy, jp = np.zeros(nst), np.zeros((nst, nst)), np.zeros((nst, npar))
    mass, dmy, dmp = np.zeros(n), np.zeros((n, nst)), np.zeros((n, npar))
    code = rhs(y, np.ascontiguousarray(u, dtype=np.float64), th, n, p.elem, p.pidx, p.op, p.a, p.b, p.dst,
               p.registers.copy(), p.outs, lp.dof_in(np.zeros(n, dtype=bool)), True, ydot, jy, jp, mass, dmy, dmp)
    if code != OK:
        return np.full(n, np.nan), np.full((n, n), np.nan), np.full((n, lp.n_params), np.nan)
    acc = ydot[n:2 * n]
    res = mass * acc
    dq = mass[:, None] * jy[n:2 * n, :n] + acc[:, None] * dmy[:, :n]
    dth = mass[:, None] * jp[n:2 * n] + acc[:, None] * dmp
    return res, dq, lp.fold(dth)
