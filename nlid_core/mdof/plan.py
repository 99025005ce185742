r"""A multi-DOF model on the general layer: one compiled right-hand side and one integrator family.

Every model file becomes the general layer's plan (:mod:`nlid_core.dynamics`), so it is simulated by
:func:`nlid_core.dynamics.integrate.run_plan`: RK4 or SDIRK4 with exact discrete sensitivities, the automatic stiff
switch and the same input reconstruction as a single-DOF model. A term with internal states (LuGre, Bouc-Wen) may sit
on a lumped connection or on a mount axis of the rigid body.

* **Lumped DOFs.** The masses are the inertia term ``m0`` on each DOF, the connections are elements between two DOFs
  or to ground, and lumped gravity along DOF i is a constant force :math:`m_i g_i`, i.e. the offset term ``f0`` with
  the value :math:`-g_i m_i` (the term's force is on the left-hand side).
* **Rigid body.** The six body DOFs carry the body block of :mod:`nlid_core.dynamics.rigid` (full, configuration-
  dependent mass matrix, velocity terms, gravity); each term on a mount axis is an element on that axis's deflection;
  world forces at O drive the position DOFs through ``dof_in``, world moments go through the block.

The plan's parameter indices point into the model's own parameter vector θ (shared parameters included) extended by
the gravity weights :math:`w = -g \odot \theta_{m}`; sensitivities to ``w`` are folded into the mass columns by the
chain rule, :math:`\partial/\partial\theta_{m_i} \mathrel{+}= -g_i\,\partial/\partial w_i`. Inputs map to DOFs
through ``dof_in`` (a held DOF is marked :data:`~nlid_core.dynamics.evaluate.HELD`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dynamics.evaluate import HELD
from ..dynamics.model import Element, Model, Plan
from ..errors import ModelSpecError
from ..terms.base import TermDef
from ..terms.registry import get_term

__all__ = ["ModelPlan", "build_plan"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class ModelPlan:
    """The general layer's plan of a multi-DOF model.

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
        The DOF each input column drives (−1: a world moment on the rigid body).
    """

    plan: Plan
    n_params: int
    grav_mass: IntArray
    grav: FloatArray
    in_dof: IntArray

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
            if dof >= 0:
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
    if not terms:
        z = np.zeros(0, np.int64)
        return Plan(n_dof=0, n_states=0, n_params=0, elem=np.zeros((0, 12), np.int64), pidx=z, op=z, a=z, b=z, dst=z,
                    registers=np.zeros(0), outs=z, dof_in=z)
    return Model([Element(t, dof=k + 1) for k, t in enumerate(terms)], n_dof=len(terms)).plan


def build_plan(n: int, n_params: int, masses: Sequence[tuple[int, int]], grav: FloatArray,
               rigid: tuple[Sequence[int], Sequence[int]] | None, g: float,
               connections: Sequence[tuple[TermDef, int, int, Sequence[int]]], mount_points: FloatArray,
               mount_elements: Sequence[tuple[TermDef, int, int, Sequence[int]]],
               inputs: Sequence[tuple[int, int]]) -> ModelPlan:
    """The general layer's plan of a multi-DOF model described as in
    :func:`nlid_core.mdof.layout.build_layout` (which validates the description first).

    Raises
    ------
    ModelSpecError
        Two inputs on one DOF.
    """
    # (term, DOF i or mount, DOF j (-1 ground) or axis, mount flag, parameter indices into [θ, w])
    placed: list[tuple[TermDef, int, int, int, list[int]]] = []
    m0 = get_term("m0")
    for i, p in masses:
        placed.append((m0, int(i), -1, 0, [int(p)]))
    for term, i, j, idx in connections:
        placed.append((term, int(i), int(j), 0, [int(k) for k in idx]))
    for term, j, axis, idx in mount_elements:
        placed.append((term, int(j), int(axis), 1, [int(k) for k in idx]))
    f0 = get_term("f0")
    gdofs = [(i, p) for i, p in masses if grav[i] != 0.0]
    for k, (i, _) in enumerate(gdofs):
        placed.append((f0, int(i), -1, 0, [n_params + k]))
    virtual = _virtual_plan([p[0] for p in placed])
    elem = virtual.elem.copy()
    pidx: list[int] = []
    z_off = 2 * n
    for row, (term, i, j, mount, idx) in enumerate(placed):
        elem[row, 0], elem[row, 1], elem[row, 4], elem[row, 5], elem[row, 11] = i, j, z_off, len(pidx), mount
        pidx += idx
        z_off += term.n_states
    in_dof: list[int] = []
    moments: list[tuple[int, int]] = []
    for col, (kind, where) in enumerate(inputs):
        in_dof.append(int(where) if kind == 0 else (int(rigid[0][where]) if kind == 1 and rigid else -1))
        if kind == 2:
            moments.append((col, int(where)))
    driven = [d for d in in_dof if d >= 0]
    if len(set(driven)) != len(driven):
        raise ModelSpecError("two inputs drive one DOF; map one column per DOF")
    body = None
    if rigid is not None:
        body = (float(g), np.array(rigid[0], dtype=np.int64), np.array(rigid[1], dtype=np.int64),
                np.ascontiguousarray(mount_points, dtype=np.float64).reshape(-1, 3),
                np.array(moments, dtype=np.int64).reshape(-1, 2))
    plan = Plan(n_dof=n, n_states=z_off, n_params=n_params + len(gdofs), elem=np.ascontiguousarray(elem),
                pidx=np.array(pidx, dtype=np.int64), op=virtual.op, a=virtual.a, b=virtual.b, dst=virtual.dst,
                registers=virtual.registers, outs=virtual.outs, dof_in=np.full(n, -1, dtype=np.int64), rigid=body)
    return ModelPlan(plan=plan, n_params=n_params, grav_mass=np.array([p for _, p in gdofs], dtype=np.int64),
                     grav=np.array([grav[i] for i, _ in gdofs], dtype=np.float64),
                     in_dof=np.array(in_dof, dtype=np.int64))
