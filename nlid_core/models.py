r"""The single-DOF grey-box model: terms of the registry (and typed ones) on one degree of freedom.

.. math::

    m(x, \dot x;\theta)\,\ddot x + \sum_j F_j(x, \dot x, z;\theta) = f(t)

:class:`TermModel` is the one-DOF :class:`~nlid_core.dynamics.model.Model` that the estimators,
studies, CLI and dashboard work with. Terms come from :mod:`nlid_core.terms` (the library's public
names ``m0 m1 c1 c2 fc k1 k2 k3 kg f0 lugre bouc_wen``, listed by ``python -m nlid_core terms``)
and from expressions typed by the user (:func:`nlid_core.terms.custom_term`). Parameters are in
term order, each term's own parameters in its declared order; settings such as ``v_eps`` of
``fc`` and ``gap`` of ``kg`` are parameters held fixed by default (:class:`ModelSettings` gives
their start values).

Equation error uses :meth:`TermModel.regressors`: the force is affine in the parameters flagged
linear, ``F = Φ(x, ẋ, ẍ)·θ``, with zero columns for the others (held at their values).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .dynamics.model import Element, Model
from .errors import ModelSpecError
from .params import ParameterSet
from .terms.base import TermDef
from .terms.registry import DEFAULT_TERMS, REGISTRY, get_term, parse_terms
from .terms.units import Dim

__all__ = ["TERMS", "TermModel", "ModelSettings", "parse_terms", "DEFAULT_TERMS"]

FloatArray = NDArray[np.float64]

#: The library terms by name (the registry of :mod:`nlid_core.terms`).
TERMS: Mapping[str, TermDef] = REGISTRY


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Start values of the parameters that are settings (fixed unless freed).

    Attributes
    ----------
    v_eps : float, m/s
        Velocity scale of the smoothed Coulomb term ``fc·tanh(ẋ/v_eps)``.
    gap : float, m
        Half-width of the dead zone of the ``kg`` term.
    """

    v_eps: float = 1e-3
    gap: float = 0.0

    def __post_init__(self) -> None:
        if not (self.v_eps > 0 and math.isfinite(self.v_eps)):
            raise ModelSpecError(f"`v_eps` must be positive and finite, got {self.v_eps}")
        if not (self.gap >= 0 and math.isfinite(self.gap)):
            raise ModelSpecError(f"`gap` must be >= 0 and finite, got {self.gap}")

    def values(self) -> dict[str, float]:
        """The settings as parameter values by name."""
        return {"v_eps": self.v_eps, "gap": self.gap}


def _rebuild(terms: tuple[str, ...], settings: ModelSettings, custom: tuple[tuple[str, str], ...]) -> TermModel:
    from .terms.custom import custom_term

    return TermModel(terms, settings, custom=[custom_term(n, e) for n, e in custom])


class TermModel(Model):
    """A single-DOF model built from term names.

    Parameters
    ----------
    terms : str or sequence of str
        Library term names and names of ``custom`` terms (stored in canonical order: the library's,
        then the custom ones as given).
    settings : ModelSettings or None
        Start values of the setting parameters (``v_eps``, ``gap``).
    custom : sequence of TermDef
        Terms typed by the user (:func:`nlid_core.terms.custom_term`); only those named in
        ``terms`` are used.
    """

    def __init__(self, terms: str | Sequence[str] = DEFAULT_TERMS, settings: ModelSettings | None = None, *,
                 custom: Sequence[TermDef] = ()) -> None:
        custom = tuple(custom)
        names = parse_terms(terms, extra=[c.name for c in custom])
        by_name = {c.name: c for c in custom}
        defs = [REGISTRY[n] if n in REGISTRY else by_name[n] for n in names]
        super().__init__([Element(d) for d in defs], n_dof=1)
        self.settings = settings or ModelSettings()
        self.custom: tuple[TermDef, ...] = tuple(by_name[n] for n in names if n in by_name)
        self.specs: tuple[TermDef, ...] = tuple(defs)
        self._defaults: dict[tuple[str, str], ParameterSet] = {}

    def __repr__(self) -> str:
        return f"TermModel({','.join(self.terms)})"

    def _key(self) -> tuple[Any, ...]:
        return (self.terms, self.settings, tuple((c.name, c.force) for c in self.custom))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TermModel) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.terms, self.settings, tuple((c.name, c.force) for c in self.custom)))

    def with_terms(self, terms: Iterable[str]) -> TermModel:
        """The same settings and custom terms, with another term list."""
        return TermModel(tuple(terms), self.settings, custom=self.custom)

    # ------------------------------------------------------------------ facts
    @cached_property
    def term_of_param(self) -> tuple[str, ...]:
        """The term each parameter belongs to."""
        return tuple(t.name for t in self.specs for _ in t.params)

    def inertia_mask(self) -> NDArray[np.bool_]:
        """Parameters of inertia terms that enter linearly (their regressors multiply ẍ)."""
        inert = np.array([get_def.inertial for get_def in (self._def(n) for n in self.term_of_param)], dtype=bool)
        return inert & self.linear_mask

    def _def(self, term: str) -> TermDef:
        for t in self.specs:
            if t.name == term:
                return t
        return get_term(term)

    @cached_property
    def mass_parameter(self) -> str | None:
        """The linear inertia coefficient with the unit of a mass (``m0``), or None."""
        for name, spec, lin, term in zip(self.param_names, self.param_specs, self.linear_mask, self.term_of_param,
                                         strict=True):
            if lin and self._def(term).inertial and spec.unit == Dim.of(f=1, x=-1, t=2):
                return name
        return None

    @cached_property
    def fast_terms(self) -> NDArray[np.int64] | None:
        """The single-DOF fast kernel's term table (:mod:`nlid_core.terms.fast_kernel`, generated from the terms'
        programs): row 0 each term's branch, row 1 its first parameter's index; None when a term has no branch
        (internal states, typed terms, or a library term the generated module does not match)."""
        from .terms.fast_kernel import TERMS as FAST
        from .terms.fastgen import identity

        codes = [FAST.index(identity(t)) if identity(t) in FAST and not t.custom else None for t in self.specs]
        if any(c is None for c in codes):
            return None
        return np.ascontiguousarray(np.vstack([np.array(codes, dtype=np.int64), self.coefficient_index]))

    @cached_property
    def coefficient_index(self) -> NDArray[np.int64]:
        """Index of each term's first parameter in the parameter vector."""
        out, k = [], 0
        for t in self.specs:
            out.append(k)
            k += t.n_params
        return np.array(out, dtype=np.int64)

    def default_parameters(self, values: Mapping[str, float] | None = None, *, force_unit: str = "N",
                           x_unit: str = "m") -> ParameterSet:
        """Parameters with default bounds, fixed flags and units (settings from :attr:`settings`).

        Parameters
        ----------
        values : mapping or None
            Values instead of the defaults.
        force_unit, x_unit : str
            The record's force and displacement units.
        """
        if not values:  # the common call: one immutable set per unit pair
            key = (force_unit, x_unit)
            if key not in self._defaults:
                base = {k: v for k, v in self.settings.values().items() if k in self.param_names}
                self._defaults[key] = super().default_parameters(base, force_unit=force_unit, x_unit=x_unit)
            return self._defaults[key]
        merged = {k: v for k, v in self.settings.values().items() if k in self.param_names}
        merged.update(values)
        return super().default_parameters(merged, force_unit=force_unit, x_unit=x_unit)

    # ------------------------------------------------------------------ equation error
    def _theta(self, theta: FloatArray | None) -> FloatArray:
        if theta is None:
            return self.default_parameters().values
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        if th.size != self.n_params:
            raise ModelSpecError(f"`theta` has {th.size} values; {self} has {self.n_params} parameters")
        return th

    def compile(self) -> float:
        """Compile the terms' programs (symbolic derivatives, once per process and model) and load the
        compiled evaluators; return the seconds it took. Estimators count it as compile time."""
        t0 = time.perf_counter()
        self._regressor_plan  # noqa: B018
        if self.can_simulate:
            self.plan  # noqa: B018
        z = np.zeros(2)
        self._terms_eval(z, z, z, self.default_parameters().values)
        return time.perf_counter() - t0

    @cached_property
    def _regressor_plan(self) -> tuple[NDArray[np.int64], ...]:
        """Flat arrays of the memoryless terms' regressor programs (see ``vm.evaluate_regressors``)."""
        rows: list[list[int]] = []
        pidx: list[int] = []
        ops: list[NDArray[np.int64]] = []
        aa: list[NDArray[np.int64]] = []
        bb: list[NDArray[np.int64]] = []
        dd: list[NDArray[np.int64]] = []
        outs: list[NDArray[np.int64]] = []
        regs: list[FloatArray] = []
        reg_off = ins_off = out_off = k = 0
        for t in self.specs:
            if t.states:  # their force needs the state's history: see state_force
                k += t.n_params
                continue
            prog = t.regressor_program
            rows.append([reg_off, prog.registers.size, ins_off, ins_off + prog.n_instructions, out_off,
                         len(t.linear_params), len(pidx), t.n_params])
            pidx += [k + j for j in range(t.n_params)] + [k + t.param_names.index(p) for p in t.linear_params]
            ops.append(prog.op)
            aa.append(prog.a + reg_off)
            bb.append(prog.b + reg_off)
            dd.append(prog.dst + reg_off)
            outs.append(prog.outputs + reg_off)
            regs.append(prog.registers)
            reg_off += prog.registers.size
            ins_off += prog.n_instructions
            out_off += prog.outputs.size
            k += t.n_params

        def cat(parts: list[NDArray[np.int64]]) -> NDArray[np.int64]:
            return np.ascontiguousarray(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

        registers = np.concatenate(regs) if regs else np.zeros(1)
        written = set(cat(dd).tolist())
        inputs = {int(r[0]) + j for r in rows for j in range(3 + r[7])}
        consts = np.array([k for k in range(registers.size) if k not in written and k not in inputs], dtype=np.int64)
        return (np.array(rows, dtype=np.int64).reshape(-1, 8), np.array(pidx, dtype=np.int64), cat(ops), cat(aa),
                cat(bb), cat(dd), registers, consts, cat(outs))  # type: ignore[return-value]

    def _terms_eval(self, x: FloatArray, v: FloatArray, a: FloatArray, theta: FloatArray, input_exp: int = 0
                    ) -> tuple[FloatArray, FloatArray]:
        """Φ and the total force at ``(x, v, a)·2**input_exp`` (the power of two is applied exactly, inside
        the evaluator: no scaled copies of the inputs)."""
        from .terms import vm

        evaluate_regressors: Any = vm.evaluate_regressors
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        v = np.ascontiguousarray(v, dtype=np.float64).reshape(-1)
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        phi = np.zeros((x.size, self.n_params))
        total = np.zeros(x.size)
        evaluate_regressors(*self._regressor_plan, x, v, a, math.ldexp(1.0, input_exp),
                            np.ascontiguousarray(theta, dtype=np.float64), phi, total)
        return phi, total

    def regressors(self, x: FloatArray, v: FloatArray, a: FloatArray, theta: FloatArray | None = None, *,
                   input_exp: int = 0) -> FloatArray:
        """Regressor matrix Φ: column k is ∂F/∂θ_k for the linear parameters, zero for the others
        (and for every parameter of a state-carrying term).

        Parameters
        ----------
        x, v, a : (n,) ndarray
            Displacement, velocity, acceleration.
        theta : (p,) ndarray or None
            Values of the non-linear parameters (default: their defaults).
        input_exp : int
            Evaluate at ``(x, v, a)·2**input_exp`` (exact; no scaled copies).

        Returns
        -------
        (n, n_params) ndarray
        """
        return self._terms_eval(x, v, a, self._theta(theta), input_exp)[0]

    def offset_force(self, theta: FloatArray, x: FloatArray, v: FloatArray, a: FloatArray) -> FloatArray:
        """The part of the force not carried by the linear parameters, ``F − Φ·θ`` (zero for every
        library term; a typed term such as ``k*x + 2*x`` has one)."""
        th = self._theta(theta)
        phi, total = self._terms_eval(x, v, a, th)
        return total - phi @ np.where(self.linear_mask, th, 0.0)

    def force(self, theta: FloatArray, x: FloatArray, v: FloatArray, a: FloatArray) -> FloatArray:
        """Force Σ F_j of the memoryless terms (in the force unit); see :meth:`state_force` for the others."""
        return self._terms_eval(x, v, a, self._theta(theta))[1]

    def state_force(self, theta: FloatArray, t: FloatArray, x: FloatArray, v: FloatArray) -> FloatArray:
        """Force of the state-carrying terms along measured motion (their states integrated from the
        measured x, ẋ; zeros without such terms).

        Raises
        ------
        ModelSpecError
            The states cannot be followed (the implicit step fails), naming the time.
        """
        from .dynamics.driven import driven_states

        t = np.asarray(t, dtype=np.float64)
        _, force, index = driven_states(self, t, np.asarray(x, dtype=np.float64), np.asarray(v, dtype=np.float64),
                                        self._theta(theta))
        if index < t.size:
            raise ModelSpecError(f"the internal states of {self} cannot be followed along the record after"
                                 f" t = {t[min(index, t.size - 1)]:.6g} s with these parameters")
        return force

    def restoring_force(self, theta: FloatArray, x: FloatArray, v: FloatArray) -> FloatArray:
        """Force terms only (no inertia): f − m(x)·ẍ of the model."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return self.force(theta, x, v, np.zeros_like(x))
