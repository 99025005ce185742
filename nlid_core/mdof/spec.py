r"""Multi-DOF models: degrees of freedom, inertia, gravity, connections and mounts, inputs and outputs.

A :class:`MdofModel` is what an engineer describes in a model file (:mod:`nlid_core.mdof.modelfile`) or builds
from a preset (:mod:`nlid_core.mdof.presets`). It has either

* **lumped DOFs** (translational, unit m, or rotational, unit rad), each with a mass (or a moment of inertia
  for a rotational DOF) parameter ``m_<dof>`` and an optional gravity along it, joined by **connections**
  between two DOFs or from a DOF to ground. A connection is a sum of terms of the library or typed terms
  acting on the relative displacement ``x = q_a − q_b`` and velocity ``v = q̇_a − q̇_b`` (``q_b = 0`` for ground),
  pushing ``a`` by ``−F`` and ``b`` by ``+F``; its parameters are ``<parameter>_<connection>`` (``k1_s12``);
* or one **rigid body** on the six DOFs ``x, y, z, phi, theta, psi`` (reference point O's position in the world
  frame, z up, and ZYX Euler angles, ``R = Rz(ψ)·Ry(θ)·Rx(φ)``) with parameters ``m``, the centre-of-gravity
  offset ``cx, cy, cz`` from O in body axes and the inertia tensor about the centre of gravity in body axes
  ``Jxx, Jyy, Jzz, Jxy, Jxz, Jyz`` (``Jxy`` is the tensor's entry itself); gravity ``g`` along −z; **mounts** at
  body points ``a_j`` anchored to ground at the same world points when q = 0, whose deflection
  ``d_j = o + R·a_j − a_j`` drives per world axis a sum of terms (default ``k1 + k3 + c1 + c2``, i.e.
  ``−(k1·d + k3·d³ + c1·ḋ + c2·|ḋ|·ḋ)`` on the platform); parameters ``<parameter>_<mount>_<axis>``
  (``k3_m1_z``). Inputs are the world force ``Fx, Fy, Fz`` applied at O and the world moment ``Mx, My, Mz``.

Parameters may be **shared**: one name standing for several (identical mounts: ``k1_z`` for every
``k1_m*_z``), so that the data are asked only what they can answer.

The equations of motion, ``M(q)·q̈ = Q(q, q̇, u; θ)``, are assembled and solved by :mod:`nlid_core.dynamics.rigid` on the model's plan (:mod:`nlid_core.mdof.plan`)
(by factorisation, never by inversion) and simulated with exact sensitivities by :mod:`nlid_core.mdof.integrate`.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..params import Parameter, ParameterSet
from ..terms.base import TermDef
from ..terms.units import format_unit

__all__ = [
    "AXES",
    "BODY_DOFS",
    "BODY_INPUTS",
    "BODY_PARAMS",
    "G0",
    "Connection",
    "Dof",
    "MdofModel",
    "Mount",
    "Output",
]

FloatArray = NDArray[np.float64]

#: Largest model accepted: DOFs, connections, mounts, different typed terms (a model file is an upload).
MAX_DOFS = 24
MAX_ELEMENTS = 64
MAX_MOUNTS = 16
MAX_TYPED_TERMS = 8
#: Standard gravity, m/s².
G0 = 9.80665
#: The rigid body's DOFs, in order.
BODY_DOFS: tuple[str, ...] = ("x", "y", "z", "phi", "theta", "psi")
#: The rigid body's inputs (world force at O, world moment), in order.
BODY_INPUTS: tuple[str, ...] = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")
#: The rigid body's inertial parameters, in order.
BODY_PARAMS: tuple[str, ...] = ("m", "cx", "cy", "cz", "Jxx", "Jyy", "Jzz", "Jxy", "Jxz", "Jyz")
_BODY_UNITS = {"m": "kg", "cx": "m", "cy": "m", "cz": "m", "Jxx": "kg·m^2", "Jyy": "kg·m^2", "Jzz": "kg·m^2",
               "Jxy": "kg·m^2", "Jxz": "kg·m^2", "Jyz": "kg·m^2"}
_BODY_DESCRIPTIONS = {"m": "mass of the body", "cx": "centre of gravity from O, body x",
                      "cy": "centre of gravity from O, body y", "cz": "centre of gravity from O, body z",
                      "Jxx": "moment of inertia about the CoG, body x", "Jyy": "moment of inertia about the CoG, body y",
                      "Jzz": "moment of inertia about the CoG, body z", "Jxy": "product of inertia xy (tensor entry)",
                      "Jxz": "product of inertia xz (tensor entry)", "Jyz": "product of inertia yz (tensor entry)"}
#: World axes of a mount.
AXES: tuple[str, ...] = ("x", "y", "z")
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def check_name(name: str, what: str) -> str:
    """``name`` if it is letters and digits (at most 32, starting with a letter), else a ModelSpecError."""
    text = str(name).strip()
    if not text or len(text) > 32 or not text[0].isalpha() or not set(text) <= _NAME_CHARS:
        raise ModelSpecError(f"{what} `{name}` must be letters and digits starting with a letter (at most 32)")
    return text


@dataclass(frozen=True)
class Dof:
    """A lumped degree of freedom: ``unit`` "m" (translational) or "rad" (rotational); ``gravity`` in m/s² (rad/s²
    equivalent for a rotational DOF) along its positive direction (−9.80665 for a vertical DOF pointing up)."""

    name: str
    unit: str = "m"
    gravity: float = 0.0


@dataclass(frozen=True)
class Connection:
    """Terms acting between DOF ``a`` and DOF ``b`` (``None``: ground) on ``x = q_a − q_b``, ``v = q̇_a − q̇_b``."""

    name: str
    a: str
    b: str | None
    terms: tuple[TermDef, ...]


@dataclass(frozen=True)
class Mount:
    """A mount of the rigid body at body point ``at`` (m), with its terms per world axis."""

    name: str
    at: tuple[float, float, float]
    terms: tuple[tuple[str, tuple[TermDef, ...]], ...]


@dataclass(frozen=True)
class Output:
    """A measured DOF: its file column and, when known, its noise standard deviation (the DOF's unit)."""

    dof: str
    column: str
    noise: float | None = None


@dataclass(frozen=True)
class _Raw:
    """One parameter before sharing: name, unit, default, bounds, description."""

    name: str
    unit: str
    default: float
    lower: float
    upper: float
    description: str
    fixed: bool = False


@dataclass(frozen=True, kw_only=True)
class MdofModel:
    """A multi-DOF model (see the module docstring).

    Attributes
    ----------
    name : str
    dofs : tuple of Dof
        The lumped DOFs, or the six rigid-body DOFs (``BODY_DOFS``, units m and rad).
    body : bool
        True for a rigid body on mounts.
    gravity : float, m/s²
        The rigid body's gravity along −z (lumped DOFs carry their own).
    connections : tuple of Connection
    mounts : tuple of Mount
    inputs : tuple of (str, str)
        Model input name (``f_<dof>`` for lumped DOFs, ``BODY_INPUTS`` for the body) and its file column.
    outputs : tuple of Output
    values : mapping of str to Parameter
        Start values, bounds and fixed flags given by the model file, by parameter name (after sharing).
    shares : tuple of (str, tuple of str)
        Shared parameter name and the element parameters it stands for.
    """

    name: str
    dofs: tuple[Dof, ...]
    body: bool = False
    gravity: float = G0
    connections: tuple[Connection, ...] = ()
    mounts: tuple[Mount, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    outputs: tuple[Output, ...] = ()
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    shares: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        names = [d.name for d in self.dofs]
        if not names:
            raise ModelSpecError("a model needs at least one degree of freedom")
        if len(names) > MAX_DOFS:
            raise ModelSpecError(f"the model has {len(names)} DOFs; at most {MAX_DOFS}")
        if len(self.connections) > MAX_ELEMENTS or len(self.mounts) > MAX_MOUNTS:
            raise ModelSpecError(f"the model has {len(self.connections)} connections and {len(self.mounts)} mounts; at most"
                                 f" {MAX_ELEMENTS} connections and {MAX_MOUNTS} mounts")
        all_terms = [t for c in self.connections for t in c.terms] + [t for m in self.mounts for _, ts in m.terms for t in ts]
        typed = {(t.name, t.force) for t in all_terms if t.custom}
        if len(typed) > MAX_TYPED_TERMS or len(all_terms) > 8 * MAX_ELEMENTS:
            raise ModelSpecError(f"the model uses {len(typed)} different typed terms and {len(all_terms)} terms in all; at"
                                 f" most {MAX_TYPED_TERMS} typed terms and {8 * MAX_ELEMENTS} terms")
        for n in names:
            check_name(n, "DOF name")
        if len(set(names)) != len(names):
            raise ModelSpecError(f"DOF names repeat: {names}")
        if "ground" in names:
            raise ModelSpecError("`ground` is reserved for connections to ground; rename the DOF")
        if self.body:
            if tuple(names) != BODY_DOFS:
                raise ModelSpecError(f"a rigid body has the DOFs {', '.join(BODY_DOFS)}")
            if self.connections:
                raise ModelSpecError("a rigid-body model takes mounts, not connections")
            if not self.mounts:
                raise ModelSpecError("a rigid body needs at least one mount")
        elif self.mounts:
            raise ModelSpecError("mounts need a rigid body ([body] in the model file)")
        for d in self.dofs:
            if d.unit not in ("m", "rad"):
                raise ModelSpecError(f"DOF `{d.name}`: unit must be `m` or `rad`, got `{d.unit}`")
            if not math.isfinite(d.gravity):
                raise ModelSpecError(f"DOF `{d.name}`: gravity must be finite")
        if not math.isfinite(self.gravity):
            raise ModelSpecError("`gravity` must be finite")
        seen: set[str] = set()
        for c in self.connections:
            check_name(c.name, "connection name")
            if c.name in seen:
                raise ModelSpecError(f"connection name `{c.name}` is used twice")
            seen.add(c.name)
            for end in (c.a, c.b):
                if end is not None and end not in names:
                    raise ModelSpecError(f"connection `{c.name}` joins `{end}`, which is not a DOF ({', '.join(names)})")
            if c.a == c.b:
                raise ModelSpecError(f"connection `{c.name}` joins `{c.a}` to itself")
            if not c.terms:
                raise ModelSpecError(f"connection `{c.name}` has no terms")
        for m in self.mounts:
            check_name(m.name, "mount name")
            if m.name in seen:
                raise ModelSpecError(f"mount name `{m.name}` is used twice")
            seen.add(m.name)
            if len(m.at) != 3 or not all(math.isfinite(v) for v in m.at):
                raise ModelSpecError(f"mount `{m.name}`: `at` must be three finite numbers (body-frame point, m)")
            for axis, terms in m.terms:
                if axis not in AXES:
                    raise ModelSpecError(f"mount `{m.name}`: axis `{axis}` is not one of x, y, z")
        for terms in [c.terms for c in self.connections] + [t for m in self.mounts for _, t in m.terms]:
            for t in terms:
                if t.inertial:
                    raise ModelSpecError(f"term `{t.name}` is an inertia term; a DOF's mass is its `m_<dof>` parameter")
            if len({t.name for t in terms}) != len(terms):
                raise ModelSpecError(f"a term appears twice in one connection: {[t.name for t in terms]}")
        valid_inputs = self.input_names
        for name, _ in self.inputs:
            if name not in valid_inputs:
                raise ModelSpecError(f"input `{name}` is not an input of the model; inputs are {', '.join(valid_inputs)}")
        if len({n for n, _ in self.inputs}) != len(self.inputs):
            raise ModelSpecError("an input is mapped twice")
        for o in self.outputs:
            if o.dof not in names:
                raise ModelSpecError(f"output `{o.dof}` is not a DOF ({', '.join(names)})")
            if o.noise is not None and not (math.isfinite(o.noise) and o.noise > 0):
                raise ModelSpecError(f"output `{o.dof}`: `noise` must be a positive number")
        if len({o.dof for o in self.outputs}) != len(self.outputs):
            raise ModelSpecError("an output is mapped twice")
        self._parameters  # noqa: B018  (checks shares and values)

    # ------------------------------------------------------------------ names
    @property
    def dof_names(self) -> tuple[str, ...]:
        """DOF names in model order."""
        return tuple(d.name for d in self.dofs)

    @property
    def n_dof(self) -> int:
        """Number of DOFs."""
        return len(self.dofs)

    @property
    def input_names(self) -> tuple[str, ...]:
        """Every input the model can take: the body's six, or a generalised force per lumped DOF."""
        return BODY_INPUTS if self.body else tuple(f"f_{d.name}" for d in self.dofs)

    @property
    def used_inputs(self) -> tuple[str, ...]:
        """The inputs mapped to file columns, in the order records carry them."""
        return tuple(n for n, _ in self.inputs)

    @property
    def output_dofs(self) -> tuple[str, ...]:
        """The measured DOFs, in the order records carry them."""
        return tuple(o.dof for o in self.outputs)

    def dof_unit(self, dof: str) -> str:
        """Unit of a DOF (m or rad)."""
        return {d.name: d.unit for d in self.dofs}[dof]

    def input_unit(self, name: str) -> str:
        """Unit of an input: N for forces, N·m for moments and the generalised force of a rotational DOF."""
        if self.body:
            return "N" if name.startswith("F") else "N·m"
        return "N" if self.dof_unit(name[2:]) == "m" else "N·m"

    # ------------------------------------------------------------------ parameters
    def _element_params(self) -> list[_Raw]:
        raw: list[_Raw] = []
        if self.body:
            for p in BODY_PARAMS:
                lower = 0.0 if p in ("m", "Jxx", "Jyy", "Jzz") else -math.inf
                default = 1.0 if p in ("m", "Jxx", "Jyy", "Jzz") else 0.0
                raw.append(_Raw(p, _BODY_UNITS[p], default, lower, math.inf, _BODY_DESCRIPTIONS[p]))
        else:
            for d in self.dofs:
                unit = "kg" if d.unit == "m" else "kg·m^2"
                raw.append(_Raw(f"m_{d.name}", unit, 1.0, 0.0, math.inf, f"{'mass' if d.unit == 'm' else 'inertia'} of {d.name}"))
        for c in self.connections:
            units = self._units_between(c.a, c.b)
            where = f"{c.a}–{c.b or 'ground'}"
            raw += self._term_params(c.terms, f"_{c.name}", units, f"connection {c.name} ({where})")
        for m in self.mounts:
            for axis, terms in m.terms:
                raw += self._term_params(terms, f"_{m.name}_{axis}", ("N", "m"), f"mount {m.name}, {axis} axis")
        return raw

    def _units_between(self, a: str, b: str | None) -> tuple[str, str]:
        ua = self.dof_unit(a)
        if b is not None and self.dof_unit(b) != ua:
            raise ModelSpecError(f"a connection joins `{a}` ({ua}) and `{b}` ({self.dof_unit(b)}); both ends need one unit")
        return ("N", "m") if ua == "m" else ("N·m", "rad")

    @staticmethod
    def _term_params(terms: Sequence[TermDef], suffix: str, units: tuple[str, str], where: str) -> list[_Raw]:
        out = []
        for t in terms:
            for p in t.params:
                out.append(_Raw(p.name + suffix, format_unit(p.unit, units[0], units[1]), p.default, p.lower, p.upper,
                                f"{p.description or t.description}, {where}", p.fixed))
        return out

    @cached_property
    def _parameters(self) -> tuple[tuple[_Raw, ...], tuple[int, ...], tuple[str, ...]]:
        """(element parameters, index of each into the model parameters, model parameter names)."""
        raw = self._element_params()
        names = [r.name for r in raw]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ModelSpecError(f"parameter names repeat ({', '.join(dup)}); rename a connection or mount")
        owner: dict[str, str] = {}
        for shared, members in self.shares:
            check_name(shared.replace("_", "a"), "shared parameter name")
            if shared in names and shared not in members:
                raise ModelSpecError(f"shared parameter `{shared}` has the name of another parameter")
            if not members:
                raise ModelSpecError(f"shared parameter `{shared}` stands for no parameter")
            units = set()
            for m in members:
                if m not in names:
                    raise ModelSpecError(f"shared parameter `{shared}` lists `{m}`, which is not a parameter of the model")
                if m in owner:
                    raise ModelSpecError(f"`{m}` is shared twice (as `{owner[m]}` and `{shared}`)")
                owner[m] = shared
                units.add(raw[names.index(m)].unit)
            if len(units) > 1:
                raise ModelSpecError(f"shared parameter `{shared}` joins parameters of different units ({', '.join(sorted(units))})")
        model_names: list[str] = []
        index: list[int] = []
        for r in raw:
            target = owner.get(r.name, r.name)
            if target not in model_names:
                model_names.append(target)
            index.append(model_names.index(target))
        unknown = set(self.values) - set(model_names)
        if unknown:
            raise ModelSpecError(f"values given for {sorted(unknown)}, which are not parameters of the model"
                                 f" (parameters: {', '.join(model_names)})")
        return tuple(raw), tuple(index), tuple(model_names)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Model parameter names, in order (after sharing)."""
        return self._parameters[2]

    @property
    def n_params(self) -> int:
        """Number of model parameters."""
        return len(self.param_names)

    def parameters(self, values: Mapping[str, float] | None = None) -> ParameterSet:
        """The parameters with the model file's start values, bounds and fixed flags (``values`` override the values).

        Raises
        ------
        ModelSpecError
            A value for a name that is not a parameter of the model.
        """
        raw, index, names = self._parameters
        extra = dict(values or {})
        unknown = set(extra) - set(names)
        if unknown:
            raise ModelSpecError(f"values given for {sorted(unknown)}, which are not parameters of the model")
        first: dict[int, _Raw] = {}
        for r, k in zip(raw, index, strict=True):
            first.setdefault(k, r)
        out = []
        for k, name in enumerate(names):
            r = first[k]
            given = self.values.get(name, {})
            lower = float(given.get("lower", r.lower))
            upper = float(given.get("upper", r.upper))
            value = float(extra.get(name, given.get("value", r.default)))
            if not lower <= value <= upper:
                raise ModelSpecError(f"parameter `{name}` = {value:g} is outside its bounds [{lower:g}, {upper:g}]")
            description = r.description if name == r.name else f"shared: {r.description.split(',')[0]}"
            out.append(Parameter(name=name, value=value, lower=lower, upper=upper, vary=not bool(given.get("fixed", r.fixed)),
                                 unit=r.unit, description=description))
        return ParameterSet(out)

    def members(self, name: str) -> tuple[str, ...]:
        """The element parameters a model parameter stands for (itself unless shared)."""
        for shared, group in self.shares:
            if shared == name:
                return group
        return (name,)

    # ------------------------------------------------------------------ compiled form
    @cached_property
    def layout(self) -> Any:
        """The compiled layout (:class:`nlid_core.mdof.layout.Layout`)."""
        from .layout import build_layout

        raw, index, _ = self._parameters
        pos = {r.name: k for r, k in zip(raw, index, strict=True)}
        dof = {n: i for i, n in enumerate(self.dof_names)}
        masses = [] if self.body else [(i, pos[f"m_{d.name}"]) for i, d in enumerate(self.dofs)]
        grav = None if self.body else [d.gravity for d in self.dofs]
        rigid = (tuple(range(6)), tuple(pos[p] for p in BODY_PARAMS)) if self.body else None
        connections = [
            (t, dof[c.a], -1 if c.b is None else dof[c.b], [pos[p.name + f"_{c.name}"] for p in t.params])
            for c in self.connections for t in c.terms
        ]
        points = [m.at for m in self.mounts]
        mount_elements = [
            (t, j, AXES.index(axis), [pos[p.name + f"_{m.name}_{axis}"] for p in t.params])
            for j, m in enumerate(self.mounts) for axis, terms in m.terms for t in terms
        ]
        inputs = []
        for name in self.used_inputs:
            if self.body:
                k = BODY_INPUTS.index(name)
                inputs.append((1 if k < 3 else 2, k % 3))
            else:
                inputs.append((0, dof[name[2:]]))
        layout = build_layout(self.n_dof, self.n_params, masses=masses, grav=grav, rigid=rigid, g=self.gravity,
                              connections=connections, mount_points=points, mount_elements=mount_elements, inputs=inputs)
        return layout

    def element_index(self) -> dict[str, int]:
        """Index into the model's parameters of every element parameter (``k1_s12``; a shared one maps to its
        shared parameter)."""
        raw, index, _ = self._parameters
        return {r.name: k for r, k in zip(raw, index, strict=True)}

    def held_mask(self, held: Sequence[str] = ()) -> NDArray[np.bool_]:
        """Boolean mask of held DOFs from their names.

        Raises
        ------
        ModelSpecError
            A name that is not a DOF, or every DOF held.
        """
        mask = np.zeros(self.n_dof, dtype=bool)
        for h in held:
            if h not in self.dof_names:
                raise ModelSpecError(f"held DOF `{h}` is not a DOF ({', '.join(self.dof_names)})")
            mask[self.dof_names.index(h)] = True
        if mask.all():
            raise ModelSpecError("every DOF is held: nothing can move")
        return mask

    # ------------------------------------------------------------------ text
    def describe(self) -> str:
        """The model in words: DOFs, inertia, gravity, connections or mounts, inputs and outputs."""
        lines = [f"{self.name}: {self.n_dof} DOFs ({', '.join(f'{d.name} [{d.unit}]' for d in self.dofs)})"]
        if self.body:
            lines.append(f"rigid body: mass m, CoG offset (cx, cy, cz) from O, inertia J about the CoG; gravity {self.gravity:g} m/s² along −z")
            for m in self.mounts:
                axes = "; ".join(f"{a}: {' + '.join(t.name for t in terms)}" for a, terms in m.terms)
                lines.append(f"mount {m.name} at ({', '.join(f'{v:g}' for v in m.at)}) m — {axes}")
        else:
            for d in self.dofs:
                g = f", gravity {d.gravity:g} along it" if d.gravity else ""
                lines.append(f"{d.name}: {'mass' if d.unit == 'm' else 'inertia'} m_{d.name}{g}")
            for c in self.connections:
                lines.append(f"connection {c.name}: {c.a}–{c.b or 'ground'}: {' + '.join(t.name for t in c.terms)}")
        if self.inputs:
            lines.append("inputs: " + ", ".join(f"{n} ← {col}" for n, col in self.inputs))
        if self.outputs:
            lines.append("outputs: " + ", ".join(f"{o.dof} ← {o.column}" for o in self.outputs))
        for shared, group in self.shares:
            lines.append(f"shared: {shared} = {', '.join(group)}")
        return "\n".join(lines)


def match_names(patterns: Sequence[str], names: Sequence[str], what: str) -> tuple[str, ...]:
    """The names matching any of ``patterns`` (shell wildcards: ``k1_*``, ``J??``), in ``names`` order.

    Raises
    ------
    ModelSpecError
        A pattern that matches nothing (naming ``what`` and the candidates).
    """
    chosen: set[str] = set()
    for p in patterns:
        hit = fnmatch.filter(names, str(p).strip())
        if not hit:
            raise ModelSpecError(f"{what} `{p}` matches no name ({', '.join(names)})")
        chosen.update(hit)
    return tuple(n for n in names if n in chosen)
