r"""A model: terms placed on degrees of freedom, assembled into one first-order system.

An :class:`Element` puts a term on DOF ``i`` (acting on that DOF's displacement and velocity,
i.e. a connection to ground) or on the connection between DOFs ``i`` and ``j`` (acting on the
relative displacement ``q_i − q_j`` and velocity, pushing i and j in opposite directions). A
:class:`Model` collects elements on ``n_dof`` degrees of freedom and gives names to everything:

* parameters: the term's own names on a single-DOF model (``m0``, ``k3``, ``sigma0``); on several
  DOFs suffixed with where the element sits, ``k1_1`` (DOF 1 to ground) and ``k1_1_2`` (between
  DOFs 1 and 2);
* in equations, the x, ẋ of a term on several DOFs are those of its place: ``k1·x[1]`` (DOF 1 to
  ground), ``k3·x³[1-2]`` (relative to DOF 2);
* states: ``x``/``v`` (one DOF) or ``x1, x2, …, v1, v2, …``, then every internal state by its
  name, prefixed by its term (``lugre_z``) when two terms would share a name, suffixed like the
  parameters on several DOFs;
* inputs: the force on each DOF, ``f`` (one DOF) or ``f1, f2, …``.

:meth:`Model.plan` flattens the terms' compiled programs into the arrays the compiled
right-hand side (:mod:`nlid_core.dynamics.evaluate`) runs on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..params import Parameter, ParameterSet
from ..terms.base import ParamSpec, TermDef
from ..terms.registry import get_term
from ..terms.units import format_unit

__all__ = ["Element", "Model", "Plan"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: What :meth:`Plan.args` gives the compiled code: n, elem, pidx, op, a, b, dst, registers, outs, dof_in, body.
PlanArgs = tuple[int, IntArray, IntArray, IntArray, IntArray, IntArray, IntArray, FloatArray, IntArray, IntArray,
                 tuple[Any, ...] | None]


@dataclass(frozen=True)
class Element:
    """A term on DOF ``dof`` (1-based), to ground (``other = 0``) or to DOF ``other``."""

    term: TermDef
    dof: int = 1
    other: int = 0


@dataclass(frozen=True)
class Plan:
    """The flat arrays of :func:`nlid_core.dynamics.evaluate.rhs` (see its notes for ``elem``)."""

    n_dof: int
    n_states: int
    n_params: int
    elem: IntArray
    pidx: IntArray
    op: IntArray
    a: IntArray
    b: IntArray
    dst: IntArray
    registers: FloatArray
    outs: IntArray
    dof_in: IntArray
    #: The rigid body, when the model has one: (g, rdof, rpar, mounts, moments) of :func:`.rigid.body_args`.
    rigid: tuple[float, IntArray, IntArray, FloatArray, IntArray] | None = None

    def body(self) -> tuple[Any, ...] | None:
        """The right-hand side's ``body`` argument with fresh work arrays (one per run); None without a rigid body."""
        from .rigid import body_args

        if self.rigid is None:
            return None
        g, rdof, rpar, mounts, moments = self.rigid
        return body_args(self.n_dof, g, rdof, rpar, mounts, moments)

    def args(self) -> PlanArgs:
        """``(n, elem, pidx, op, a, b, dst, registers, outs, dof_in, body)`` as the compiled code takes them, with
        fresh registers and work arrays (one per run: they are written to)."""
        return (self.n_dof, self.elem, self.pidx, self.op, self.a, self.b, self.dst, self.registers.copy(), self.outs,
                self.dof_in, self.body())


class Model:
    """Terms on degrees of freedom, as one first-order system ``y = (q, q̇, z)``.

    Parameters
    ----------
    elements : sequence of Element
        The terms and where they sit.
    n_dof : int or None
        Number of DOFs (default: the largest DOF used).
    """

    def __init__(self, elements: Sequence[Element], n_dof: int | None = None) -> None:
        elements = tuple(elements)
        if not elements:
            raise ModelSpecError("a model needs at least one term")
        used = max(max(e.dof, e.other) for e in elements)
        self.n_dof = int(n_dof) if n_dof is not None else used
        if self.n_dof < 1 or used > self.n_dof:
            raise ModelSpecError(f"`n_dof` = {n_dof} but a term sits on DOF {used}")
        seen: set[tuple[str, int, int]] = set()
        for e in elements:
            if e.dof < 1 or e.other < 0 or e.other == e.dof:
                raise ModelSpecError(f"term `{e.term.name}` is placed on DOF {e.dof} to {e.other}; use DOFs 1..n")
            key = (e.term.name, e.dof, e.other)
            if key in seen:
                raise ModelSpecError(f"term `{e.term.name}` appears twice on the same place")
            seen.add(key)
            if e.other and e.term.inertial:
                raise ModelSpecError(f"inertia term `{e.term.name}` must sit on one DOF, not between two")
        self.elements: tuple[Element, ...] = elements
        self._names()

    # ------------------------------------------------------------------ naming
    def _suffix(self, e: Element) -> str:
        if self.n_dof == 1:
            return ""
        return f"_{e.dof}" if e.other == 0 else f"_{e.dof}_{e.other}"

    def _names(self) -> None:
        pnames: list[str] = []
        owner: dict[str, str] = {}
        self._elem_pidx: list[list[int]] = []
        for e in self.elements:
            idx = []
            for p in e.term.params:
                full = p.name + self._suffix(e)
                if full in owner:
                    raise ModelSpecError(
                        f"parameter `{full}` belongs to both `{owner[full]}` and `{e.term.name}`; rename one"
                    )
                owner[full] = e.term.name
                idx.append(len(pnames))
                pnames.append(full)
            self._elem_pidx.append(idx)
        self.param_names: tuple[str, ...] = tuple(pnames)
        counts: dict[str, int] = {}
        for e in self.elements:
            for s in e.term.states:
                counts[s.name + self._suffix(e)] = counts.get(s.name + self._suffix(e), 0) + 1
        snames: list[str] = []
        for e in self.elements:
            for s in e.term.states:
                base = s.name + self._suffix(e)
                snames.append(base if counts[base] == 1 else f"{e.term.name}_{base}")
        n = self.n_dof
        kin = ["x", "v"] if n == 1 else [f"x{i + 1}" for i in range(n)] + [f"v{i + 1}" for i in range(n)]
        self.state_names: tuple[str, ...] = (*kin, *snames)
        self.internal_state_names: tuple[str, ...] = tuple(snames)
        self.input_names: tuple[str, ...] = ("f",) if n == 1 else tuple(f"f{i + 1}" for i in range(n))
        self.acceleration_names: tuple[str, ...] = ("a",) if n == 1 else tuple(f"a{i + 1}" for i in range(n))

    # ------------------------------------------------------------------ facts
    @property
    def n_params(self) -> int:
        """Number of parameters (fixed ones included)."""
        return len(self.param_names)

    @property
    def n_states(self) -> int:
        """Length of the state vector y = (q, q̇, z)."""
        return len(self.state_names)

    @property
    def has_internal_states(self) -> bool:
        """True when a term carries an internal state."""
        return bool(self.internal_state_names)

    @property
    def terms(self) -> tuple[str, ...]:
        """Term names, in element order."""
        return tuple(e.term.name for e in self.elements)

    @cached_property
    def param_specs(self) -> tuple[ParamSpec, ...]:
        """The ParamSpec of each parameter, in model order."""
        return tuple(p for e in self.elements for p in e.term.params)

    @cached_property
    def force_and_length_powers(self) -> tuple[FloatArray, FloatArray]:
        """Exponents of force and of displacement in each parameter's unit (0 where unknown)."""
        fp = np.array([0.0 if p.unit is None else float(p.unit.f) for p in self.param_specs])
        xp = np.array([0.0 if p.unit is None else float(p.unit.x) for p in self.param_specs])
        return fp, xp

    @cached_property
    def linear_mask(self) -> NDArray[np.bool_]:
        """Parameters that enter a memoryless term linearly (equation error can estimate them)."""
        out = np.zeros(self.n_params, dtype=bool)
        for e, idx in zip(self.elements, self._elem_pidx, strict=True):
            lin = set(e.term.linear_params)
            for p, k in zip(e.term.params, idx, strict=True):
                out[k] = p.name in lin
        return out

    @property
    def can_simulate(self) -> bool:
        """True when every DOF has an inertia term."""
        return not self.missing_inertia()

    def missing_inertia(self) -> tuple[int, ...]:
        """DOFs (1-based) without an inertia term."""
        have = {e.dof for e in self.elements if e.term.inertial}
        return tuple(i for i in range(1, self.n_dof + 1) if i not in have)

    def require_simulable(self) -> None:
        """Raise when some DOF has no inertia term.

        Raises
        ------
        ModelSpecError
            Naming the DOF(s) and the inertia terms that could be added.
        """
        missing = self.missing_inertia()
        if missing:
            where = "the model" if self.n_dof == 1 else "DOF " + ", ".join(map(str, missing)) + " of the model"
            raise ModelSpecError(
                f"{where} {', '.join(self.terms)} has no mass term `m0` (nor any inertia term), so it cannot be simulated; add m0"
            )

    def units(self, force_unit: str = "N", x_unit: str = "m") -> dict[str, str]:
        """Unit of every parameter by name."""
        return {n: format_unit(p.unit, force_unit, x_unit) for n, p in zip(self.param_names, self.param_specs, strict=True)}

    def state_units(self, force_unit: str = "N", x_unit: str = "m") -> dict[str, str]:
        """Unit of every state by name."""
        n = self.n_dof
        out = {name: x_unit if k < n else f"{x_unit}/s" for k, name in enumerate(self.state_names[: 2 * n])}
        specs = [s for e in self.elements for s in e.term.states]
        for name, s in zip(self.internal_state_names, specs, strict=True):
            out[name] = format_unit(s.unit, force_unit, x_unit)
        return out

    def default_parameters(self, values: Mapping[str, float] | None = None, *, force_unit: str = "N",
                           x_unit: str = "m") -> ParameterSet:
        """Parameters with default values, bounds, fixed flags and units.

        Parameters
        ----------
        values : mapping or None
            Values to use instead of the defaults (clipped into the bounds).
        force_unit, x_unit : str
            The record's force and displacement units.

        Raises
        ------
        ModelSpecError
            A value for a name that is not a parameter of the model.
        """
        values = dict(values or {})
        unknown = set(values) - set(self.param_names)
        if unknown:
            raise ModelSpecError(f"values given for {sorted(unknown)}, which are not parameters of {self}")
        out = []
        for name, p in zip(self.param_names, self.param_specs, strict=True):
            v = float(values.get(name, p.default))
            out.append(Parameter(name=name, value=min(max(v, p.lower), p.upper), lower=p.lower, upper=p.upper,
                                 vary=not p.fixed, unit=format_unit(p.unit, force_unit, x_unit),
                                 description=p.description))
        return ParameterSet(out)

    def __repr__(self) -> str:
        places = ",".join(e.term.name + self._suffix(e) for e in self.elements)
        return f"Model({places})"

    # ------------------------------------------------------------------ compiled form
    @cached_property
    def plan(self) -> Plan:
        """The flat arrays of the compiled right-hand side."""
        rows = []
        pidx: list[int] = []
        ops: list[IntArray] = []
        aa: list[IntArray] = []
        bb: list[IntArray] = []
        dd: list[IntArray] = []
        regs: list[FloatArray] = []
        outs: list[IntArray] = []
        reg_off = ins_off = 0
        z_off = 2 * self.n_dof
        for e, idx in zip(self.elements, self._elem_pidx, strict=True):
            prog = e.term.program
            rows.append([e.dof - 1, e.other - 1, e.term.n_states, e.term.n_params, z_off, len(pidx),
                         ins_off, ins_off + prog.n_instructions, reg_off, sum(o.size for o in outs),
                         int(e.term.inertial), 0])
            pidx += idx
            ops.append(prog.op)
            aa.append(prog.a + reg_off)
            bb.append(prog.b + reg_off)
            dd.append(prog.dst + reg_off)
            regs.append(prog.registers)
            outs.append(prog.outputs + reg_off)
            reg_off += prog.registers.size
            ins_off += prog.n_instructions
            z_off += e.term.n_states

        def cat(parts: list[IntArray]) -> IntArray:
            return np.ascontiguousarray(np.concatenate(parts).astype(np.int64)) if parts else np.zeros(0, np.int64)

        return Plan(
            n_dof=self.n_dof, n_states=self.n_states, n_params=self.n_params,
            elem=np.ascontiguousarray(np.array(rows, dtype=np.int64).reshape(-1, 12)),
            pidx=np.array(pidx, dtype=np.int64), op=cat(ops), a=cat(aa), b=cat(bb), dst=cat(dd),
            registers=np.ascontiguousarray(np.concatenate(regs)), outs=cat(outs),
            dof_in=np.arange(self.n_dof, dtype=np.int64),
        )

    def linearise(self, y: FloatArray, theta: FloatArray, u: FloatArray | None = None
                  ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, int]:
        """Right-hand side and Jacobians at one state.

        Parameters
        ----------
        y : (N,) ndarray
            State (q, q̇, z).
        theta : (P,) ndarray
            Parameters.
        u : (n_dof,) ndarray or None
            Inputs (default zero).

        Returns
        -------
        ydot : (N,) ndarray
        jy : (N, N) ndarray
            ∂ẏ/∂y.
        jp : (N, P) ndarray
            ∂ẏ/∂θ.
        mass : (n_dof,) ndarray
            Effective mass of each DOF.
        status : int
            0, or the evaluator's failure code (e.g. 2 for a non-positive mass).
        """
        from . import evaluate

        p = self.plan
        nst, npar, n = self.n_states, self.n_params, self.n_dof
        ydot, jy, jp, mass = np.zeros(nst), np.zeros((nst, nst)), np.zeros((nst, npar)), np.zeros(n)
        uu = np.zeros(n) if u is None else np.ascontiguousarray(u, dtype=np.float64)
        code = evaluate.rhs_call(y, uu, theta, p.args(), True, ydot, jy, jp, mass, np.zeros((n, nst)),
                                 np.zeros((n, npar)))
        return ydot, jy, jp, mass, int(code)

    def steady_states(self, q0: FloatArray, qd0: FloatArray, theta: FloatArray) -> FloatArray:
        """Every internal state at its steady value for positions ``q0`` and velocities ``qd0``
        (zero velocity gives the value at rest)."""
        from ..terms.vm import evaluate_program

        out: list[float] = []
        for e, idx in zip(self.elements, self._elem_pidx, strict=True):
            if not e.term.states:
                continue
            x = q0[e.dof - 1] - (q0[e.other - 1] if e.other else 0.0)
            v = qd0[e.dof - 1] - (qd0[e.other - 1] if e.other else 0.0)
            prog = e.term.steady_program
            row = np.array([[x, v, *theta[idx]]], dtype=np.float64)
            vals = evaluate_program(prog.op, prog.a, prog.b, prog.dst, prog.registers, prog.outputs, row)[0]
            out += [float(z) if math.isfinite(z) else 0.0 for z in vals]
        return np.array(out, dtype=np.float64)

    def initial_state(self, x0: Iterable[float], theta: FloatArray, *, steady: bool = True) -> FloatArray:
        """Full initial state from positions then velocities (``2·n_dof`` numbers), optionally followed
        by the internal states; missing internal states take their steady value (``steady``) or 0.

        Raises
        ------
        ModelSpecError
            Wrong length or non-finite values.
        """
        vals = np.asarray(list(x0), dtype=np.float64).reshape(-1)
        n2 = 2 * self.n_dof
        if vals.size not in (n2, self.n_states) or not np.all(np.isfinite(vals)):
            raise ModelSpecError(
                f"the initial state needs {n2} finite values ({', '.join(self.state_names[:n2])})"
                + (f" or {self.n_states} with the internal states" if self.n_states > n2 else "")
                + f"; got {vals.size}"
            )
        if vals.size == self.n_states:
            return vals
        q0, qd0 = vals[: self.n_dof], vals[self.n_dof : n2]
        z0 = self.steady_states(q0, qd0, theta) if steady else np.zeros(self.n_states - n2)
        return np.concatenate([vals, z0])

    def equation(self, values: Mapping[str, float] | None = None, stderr: Mapping[str, float] | None = None, *,
                 precision: int = 4) -> str:
        """The equations of motion as text, symbolic or with values (± standard errors)."""

        def coef(name: str) -> str:
            if values is None:
                return name
            txt = f"{values[name]:.{precision}g}"
            if stderr is not None and name in stderr and math.isfinite(stderr[name]):
                txt = f"({txt} ± {stderr[name]:.2g})"
            return txt

        lines = []
        for d in range(1, self.n_dof + 1):
            inertia = []
            force = []
            for e, idx in zip(self.elements, self._elem_pidx, strict=True):
                if d not in (e.dof, e.other):
                    continue
                names = {p.name: coef(self.param_names[k]) for p, k in zip(e.term.params, idx, strict=True)}
                text = e.term.render(names)
                if e.term.inertial:
                    inertia.append(text)
                else:
                    sign = "- " if e.other == d else ""
                    if self.n_dof == 1:
                        force.append(text)
                    elif e.other == 0:
                        force.append(f"{text}[{e.dof}]")
                    else:
                        force.append(f"{sign}{text}[{e.dof}-{e.other}]")
            acc = "ẍ" if self.n_dof == 1 else f"ẍ{d}"
            parts = []
            if inertia:
                parts.append(f"({' + '.join(inertia)})·{acc}" if len(inertia) > 1 else f"{inertia[0]}·{acc}")
            parts += force
            rhs = "f(t)" if self.n_dof == 1 else f"f{d}(t)"
            lines.append(" + ".join(parts).replace("+ - ", "- ") + f" = {rhs}")
        return "\n".join(lines)

    @staticmethod
    def single_dof(terms: Iterable[str | TermDef]) -> Model:
        """One DOF with the given library term names or term definitions."""
        return Model([Element(t if isinstance(t, TermDef) else get_term(t)) for t in terms], n_dof=1)
