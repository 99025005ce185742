r"""The description of a multi-DOF model, validated and compiled into the general layer's plan (:mod:`.plan`).

A :class:`Layout` describes ``n_dof`` generalised coordinates ``q``:

* lumped masses: parameter ``m`` on DOF ``i`` adds ``m`` to ``M[i, i]`` and the generalised force
  ``m·grav[i]`` (gravity along the DOF's positive direction, m/s²);
* at most one rigid body on six DOFs (x, y, z, φ, θ, ψ) with the ten parameters
  (m, cx, cy, cz, Jxx, Jyy, Jzz, Jxy, Jxz, Jyz) and gravity ``g`` along −z (world), see
  :mod:`nlid_core.dynamics.rigid`;
* elements: a non-inertial term ``F(x, v, z; θ_e)`` (with internal states ``z`` or without) either on a
  *connection* between DOFs ``i`` and ``j`` (``x = q_i − q_j``, generalised force ``−F`` on i and ``+F`` on j;
  ``j = −1`` is ground) or on one world axis of a *mount* of the rigid body;
* inputs: kind 0 a generalised force on DOF ``in_idx``, kind 1 a world force along axis ``in_idx``
  at the body's reference point, kind 2 a world moment about axis ``in_idx``.

It is simulated, linearised and brought to equilibrium through its :attr:`Layout.plan` and the one compiled
right-hand side (:func:`nlid_core.dynamics.evaluate.rhs`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..terms.base import TermDef
from .plan import build_plan

__all__ = ["INPUT_KINDS", "Layout", "build_layout"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Input kinds: generalised force on a DOF, world force at the reference point, world moment.
INPUT_KINDS: tuple[str, ...] = ("dof_force", "world_force", "world_moment")


@dataclass(frozen=True, eq=False)
class Layout:
    """A validated multi-DOF model description and its plan on the general layer.

    Attributes
    ----------
    n_dof, n_params, n_inputs : int
    plan : ModelPlan
        The model on the general layer (:mod:`.plan`), which simulates it.
    """

    n_dof: int
    n_params: int
    n_inputs: int
    plan: Any

    @property
    def n_states(self) -> int:
        """Length of ``y = (q, q̇, z)``."""
        return int(self.plan.n_states)


def _index(value: Any, size: int, what: str) -> int:
    """``value`` as an index in ``0 .. size - 1``, else a ModelSpecError naming ``what``."""
    try:
        k = int(value)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`{what}` must be an integer; got {value!r}") from None
    if k != value or not 0 <= k < size:
        raise ModelSpecError(f"`{what}` must be an index in 0..{size - 1}; got {value!r}")
    return k


def _count(value: Any, least: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
        raise ModelSpecError(f"`{what}` must be an integer >= {least}; got {value!r}")
    return int(value)


def _element_term(term: Any, what: str) -> TermDef:
    if not isinstance(term, TermDef):
        raise ModelSpecError(f"`{what}` must be a TermDef; got {type(term).__name__}")
    if term.inertial:
        raise ModelSpecError(f"term `{term.name}` in `{what}` is an inertia term; masses are given by `masses`/`rigid`")
    return term


def _params(pidx: Sequence[int], term: TermDef, n_params: int, what: str) -> list[int]:
    idx = list(pidx)
    if len(idx) != term.n_params:
        raise ModelSpecError(f"`{what}` gives {len(idx)} parameter indices for term `{term.name}`, which has "
                             f"{term.n_params} ({', '.join(term.param_names)})")
    return [_index(p, n_params, what) for p in idx]


def build_layout(
    n_dof: int,
    n_params: int,
    *,
    masses: Sequence[tuple[int, int]] = (),
    grav: Sequence[float] | None = None,
    rigid: tuple[Sequence[int], Sequence[int]] | None = None,
    g: float = 9.80665,
    connections: Sequence[tuple[TermDef, int, int, Sequence[int]]] = (),
    mount_points: Sequence[Sequence[float]] = (),
    mount_elements: Sequence[tuple[TermDef, int, int, Sequence[int]]] = (),
    inputs: Sequence[tuple[int, int]] = (),
) -> Layout:
    """Validate a multi-DOF model's description and compile it into a :class:`Layout`.

    All indices are 0-based.

    Parameters
    ----------
    n_dof : int
        Number of generalised coordinates.
    n_params : int
        Length of the parameter vector θ.
    masses : sequence of (dof, pidx)
        Lumped masses.
    grav : (n_dof,) sequence of float or None, m/s²
        Lumped gravity of each DOF (default 0).
    rigid : (dofs, pars) or None
        The rigid body: the six DOFs of x, y, z, φ, θ, ψ and the ten parameter indices of
        m, cx, cy, cz, Jxx, Jyy, Jzz, Jxy, Jxz, Jyz.
    g : float, m/s²
        Gravity acting on the rigid body along −z (world).
    connections : sequence of (TermDef, i, j, pidx)
        Term between DOF i and DOF j (``j = -1``: ground), with the parameter index of each of
        the term's parameters.
    mount_points : sequence of (ax, ay, az), m
        Mount points in body axes (the rigid body is required).
    mount_elements : sequence of (TermDef, mount, axis, pidx)
        Term acting on the deflection of mount ``mount`` along world axis ``axis`` (0, 1, 2).
    inputs : sequence of (kind, idx)
        Input channels: (0, dof) generalised force, (1, axis) world force at the reference
        point, (2, axis) world moment.

    Returns
    -------
    Layout

    Raises
    ------
    ModelSpecError
        An index out of range, a DOF without inertia, a DOF listed twice in the rigid body, a
        term with internal states or inertia, a wrong number of parameter indices, mounts or
        rigid-body inputs without a rigid body, non-finite numbers.
    """
    n = _count(n_dof, 1, "n_dof")
    npar = _count(n_params, 0, "n_params")
    mass_dof = [_index(d, n, "masses (dof)") for d, _ in masses]
    mass_par = [_index(p, npar, "masses (pidx)") for _, p in masses]
    gvec = np.zeros(n) if grav is None else np.asarray(grav, dtype=np.float64).reshape(-1)
    if gvec.shape != (n,) or not np.all(np.isfinite(gvec)):
        raise ModelSpecError(f"`grav` needs {n} finite values; got {np.asarray(grav).shape}")
    if not math.isfinite(float(g)):
        raise ModelSpecError(f"`g` must be finite; got {g!r}")
    rdof = np.zeros(6, np.int64)
    rpar = np.zeros(10, np.int64)
    if rigid is not None:
        dofs, pars = rigid
        if len(dofs) != 6 or len(pars) != 10:
            raise ModelSpecError(f"`rigid` needs 6 DOFs and 10 parameter indices; got {len(dofs)} and {len(pars)}")
        rdof[:] = [_index(d, n, "rigid (dofs)") for d in dofs]
        rpar[:] = [_index(p, npar, "rigid (pars)") for p in pars]
        if len(set(rdof.tolist())) != 6:
            raise ModelSpecError(f"`rigid` lists a DOF twice: {rdof.tolist()}")
    missing = sorted(set(range(n)) - set(mass_dof) - (set(rdof.tolist()) if rigid is not None else set()))
    if missing:
        raise ModelSpecError(f"DOF(s) {missing} have no inertia; give each DOF a mass or make it part of `rigid`")
    pts = np.asarray(mount_points, dtype=np.float64).reshape(-1, 3) if len(mount_points) else np.zeros((0, 3))
    if pts.shape[0] != len(mount_points) or not np.all(np.isfinite(pts)):
        raise ModelSpecError("`mount_points` must be finite (ax, ay, az) triples")
    if pts.shape[0] and rigid is None:
        raise ModelSpecError("`mount_points` need a rigid body (`rigid`)")
    conns: list[tuple[TermDef, int, int, list[int]]] = []
    mels: list[tuple[TermDef, int, int, list[int]]] = []
    for k, (term, i, j, idx) in enumerate(connections):
        what = f"connections[{k}]"
        _element_term(term, what)
        di = _index(i, n, what + " (i)")
        dj = -1 if j == -1 else _index(j, n, what + " (j)")
        if dj == di:
            raise ModelSpecError(f"`{what}` connects DOF {di} to itself")
        conns.append((term, di, dj, _params(idx, term, npar, what)))
    for k, (term, mount, axis, idx) in enumerate(mount_elements):
        what = f"mount_elements[{k}]"
        _element_term(term, what)
        if not pts.shape[0]:
            raise ModelSpecError(f"`{what}` sits on a mount but `mount_points` is empty")
        mels.append((term, _index(mount, pts.shape[0], what + " (mount)"), _index(axis, 3, what + " (axis)"),
                     _params(idx, term, npar, what)))
    kinds: list[int] = []
    where: list[int] = []
    for k, (kind, channel) in enumerate(inputs):
        what = f"inputs[{k}]"
        kd = _index(kind, len(INPUT_KINDS), what + " (kind)")
        if kd and rigid is None:
            raise ModelSpecError(f"`{what}` is a {INPUT_KINDS[kd]} input but the model has no rigid body")
        kinds.append(kd)
        where.append(_index(channel, n if kd == 0 else 3, what + (" (dof)" if kd == 0 else " (axis)")))
    body = (rdof.tolist(), rpar.tolist()) if rigid is not None else None
    plan = build_plan(n, npar, list(zip(mass_dof, mass_par, strict=True)), gvec, body, float(g), conns, pts, mels,
                      list(zip(kinds, where, strict=True)))
    return Layout(n_dof=n, n_params=npar, n_inputs=len(kinds), plan=plan)
