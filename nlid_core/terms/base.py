r"""What a model term is: its parameters, internal states, force and state equations.

A term contributes a force :math:`F(x, \dot x, \ddot x, z;\,\theta)` to the equation of motion of
the degree of freedom it sits on (``x, v`` are that DOF's displacement and velocity, or the
relative ones of the two ends of a connection), and may carry internal states ``z`` with
:math:`\dot z = R(x, \dot x, z;\,\theta)` (LuGre's bristle deflection, Bouc-Wen's hysteretic force).
The force may depend on the acceleration ``a`` only linearly: :math:`F = m(x, v;\theta)\,a + F_0`,
the first part being inertia.

A :class:`TermDef` is written once, as expression text (parsed by
:func:`nlid_core.terms.expr.parse_expression`); everything else is derived from it: the
inertia/force split, which parameters enter linearly (equation error can estimate those), the exact
partial derivatives of the force and state rates with respect to x, v, every state and every
parameter (symbolic), and the compiled :class:`~nlid_core.terms.program.Program` the simulators run.
The program's outputs come in blocks ``[E, ∂E/∂x, ∂E/∂v, ∂E/∂z..., ∂E/∂θ...]``: first for
:math:`F_0`, then for :math:`m` (inertia terms only), then one block per state rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..errors import ModelSpecError
from .expr import parse_expression, symbol
from .program import Program, compile_outputs
from .units import ACCELERATION, DISPLACEMENT, VELOCITY, Dim, format_unit

__all__ = ["ParamSpec", "StateSpec", "TermDef", "VARIABLES", "affine_params"]

#: The kinematic variables a term's expressions may use.
VARIABLES = ("x", "v", "a")
_VARIABLE_DIMS = {"x": DISPLACEMENT, "v": VELOCITY, "a": ACCELERATION}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a term.

    Attributes
    ----------
    name : str
        Name within the term (the model prefixes it when a term is used more than once).
    unit : Dim or None
        Unit rule as exponents of force, displacement and time (None: unknown).
    lower, upper : float
        Default bounds.
    default : float
        Start value when nothing better is known.
    fixed : bool
        Held fixed unless the user frees it (settings such as a smoothing width or a gap).
    description : str
        One line for tables.
    """

    name: str
    unit: Dim | None
    lower: float = -math.inf
    upper: float = math.inf
    default: float = 0.0
    fixed: bool = False
    description: str = ""

    def unit_text(self, force_unit: str = "N", x_unit: str = "m") -> str:
        """The unit for the record's force and displacement units."""
        return format_unit(self.unit, force_unit, x_unit)


@dataclass(frozen=True)
class StateSpec:
    """One internal state of a term.

    Attributes
    ----------
    name : str
        Name within the term.
    rate : str
        Expression of its time derivative in x, v, the term's states and parameters.
    unit : Dim
        Its unit.
    steady : str
        Its value in steady motion at velocity v (expression in x, v and parameters), used as the
        initial value of a record that starts in motion; evaluated at v = 0 for a record at rest.
    description : str
        One line for tables.
    """

    name: str
    rate: str
    unit: Dim
    steady: str = "0"
    description: str = ""


@dataclass(frozen=True)
class TermDef:
    """A term of the library (or typed by a user).

    Attributes
    ----------
    name : str
        Public name (CLI ``--terms``, files, UI).
    description : str
        One line for tables.
    force : str
        Force expression.
    params : tuple of ParamSpec
        Parameters, in model order.
    states : tuple of StateSpec
        Internal states.
    template : str
        How the term reads in a model equation, with ``{name}`` where each parameter's name or
        value goes, e.g. ``"{k3}·x³"``; for inertia terms the factor of ẍ, e.g. ``"{m1}·x²"``.
    basis : str
        The regressor without its coefficient for one-coefficient terms (``"x³"``), else the force.
    proposable : bool
        The structure check may propose adding this term.
    baseline : bool
        Part of the linear baseline model that the nonlinearity evidence compares against.
    evidence : bool
        Tried by the nonlinearity evidence's equation-error comparison.
    custom : bool
        Typed by a user rather than part of the library.
    redundancies : tuple of ((str, ...), str)
        Parameter groups ``(p0, p1, ..., pk)`` on which the model depends only through the products
        ``p0·p1, ..., p0·pk`` (``p0`` scales out), each with the sentence a fit report gives when
        every parameter of the group is free (the data cannot then determine them separately).
    start_grid : tuple of (str, (float, ...))
        Parameters of a state-carrying term searched over when no start is given, each with
        multipliers of a reference magnitude: the value of the model's linear coefficient of the
        same unit (a hysteretic stiffness against the linear stiffness), else the data's scale of
        that unit (divided by ``p0`` of a redundancy group the parameter belongs to). See
        :mod:`nlid_core.estimate.hysteretic_start`.
    orders : tuple of (str, str, str)
        Physical orders between two of its parameters, ``(low, high, sentence)``: an estimate with
        ``low`` above ``high`` is not the physics the term stands for, and the fit's verdict says so
        with the sentence (:mod:`nlid_core.verdict`).
    """

    name: str
    description: str
    force: str
    params: tuple[ParamSpec, ...]
    states: tuple[StateSpec, ...] = ()
    template: str = ""
    basis: str = ""
    proposable: bool = False
    baseline: bool = False
    evidence: bool = False
    custom: bool = False
    redundancies: tuple[tuple[tuple[str, ...], str], ...] = ()
    start_grid: tuple[tuple[str, tuple[float, ...]], ...] = ()
    orders: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.params] + [s.name for s in self.states]
        if len(set(names)) != len(names):
            raise ModelSpecError(f"term `{self.name}` declares a name twice among {names}")
        clash = [n for n in names if n in VARIABLES]
        if clash:
            raise ModelSpecError(f"term `{self.name}`: {clash} are variable names, not parameters or states")
        pnames = set(self.param_names)
        for group, _ in self.redundancies:
            if len(group) < 2 or not set(group) <= pnames:
                raise ModelSpecError(f"term `{self.name}`: redundancy group {group} must name >= 2 of its parameters")
        for low, high, _ in self.orders:
            if low not in pnames or high not in pnames or low == high:
                raise ModelSpecError(f"term `{self.name}`: an order must name two of its parameters, not {low}, {high}")
        for pname, mults in self.start_grid:
            if pname not in pnames or not mults or not all(math.isfinite(m) for m in mults):
                raise ModelSpecError(f"term `{self.name}`: start grid of `{pname}` must be finite multipliers of"
                                     " one of its parameters")

    # ------------------------------------------------------------------ symbolic form
    @property
    def param_names(self) -> tuple[str, ...]:
        """Parameter names in order."""
        return tuple(p.name for p in self.params)

    @property
    def state_names(self) -> tuple[str, ...]:
        """State names in order."""
        return tuple(s.name for s in self.states)

    @property
    def n_params(self) -> int:
        """Number of parameters."""
        return len(self.params)

    @property
    def n_states(self) -> int:
        """Number of internal states."""
        return len(self.states)

    @cached_property
    def symbolic(self) -> Mapping[str, Any]:
        """Parsed and checked expressions: ``force``, ``mass``, ``force0``, ``rates``, ``steady``.

        Raises
        ------
        ModelSpecError
            Unknown symbols, a force that is not linear in ``a``, or state rates that use ``a``.
        """
        import sympy

        allowed = {symbol(n) for n in (*VARIABLES, *self.param_names, *self.state_names)}
        force = parse_expression(self.force)
        self._check_symbols(force, allowed, "force")
        a = symbol("a")
        mass = sympy.diff(force, a)
        if mass.has(a):  # structural (no simplify: typed text must not cost minutes)
            raise ModelSpecError(f"term `{self.name}`: the force must be linear in the acceleration `a`")
        force0 = force.subs(a, 0)
        rates = []
        steady = []
        for s in self.states:
            r = parse_expression(s.rate)
            self._check_symbols(r, allowed, f"rate of `{s.name}`")
            if r.has(a):
                raise ModelSpecError(f"term `{self.name}`: the rate of `{s.name}` may not use the acceleration `a`")
            rates.append(r)
            st = parse_expression(s.steady)
            self._check_symbols(st, allowed - {symbol(n) for n in self.state_names} - {a}, f"steady value of `{s.name}`")
            steady.append(st)
        if self.states and mass != 0 and mass.has(*[symbol(n) for n in self.state_names]):
            raise ModelSpecError(f"term `{self.name}`: inertia may not depend on internal states")
        return {"force": force, "mass": mass, "force0": force0, "rates": tuple(rates), "steady": tuple(steady)}

    def _check_symbols(self, expr: Any, allowed: set[Any], what: str) -> None:
        extra = sorted(str(s) for s in expr.free_symbols - allowed)
        if extra:
            raise ModelSpecError(f"term `{self.name}`: the {what} uses undeclared name(s) {', '.join(extra)}")

    @property
    def inertial(self) -> bool:
        """True when the force has an acceleration (inertia) part."""
        return bool(self._compiled["inertial"])

    @property
    def memoryless(self) -> bool:
        """True without internal states."""
        return not self.states

    @property
    def linear_params(self) -> tuple[str, ...]:
        """Parameters the force is jointly affine in (equation error can estimate them by a
        linear solve); empty for terms with internal states."""
        return self._compiled["linear"]  # type: ignore[no-any-return]

    @cached_property
    def _compiled(self) -> dict[str, Any]:
        """Inertial flag, linear parameters and the three programs: from the program cache
        (:mod:`nlid_core.terms.cache`) when there, else derived with sympy and stored."""
        from . import cache

        identity = [self.name, self.force, [(p.name, p.lower, p.upper) for p in self.params],
                    [(st.name, st.rate, st.steady) for st in self.states]]
        key = cache.key_for(identity)
        found = cache.load(key)
        if found is not None:
            return found
        compiled = {"inertial": bool(self.symbolic["mass"] != 0), "linear": self._linear_params(),
                    "program": self._program(), "steady": self._steady_program(),
                    "regressor": self._regressor_program()}
        cache.save(key, compiled)
        return compiled

    def _linear_params(self) -> tuple[str, ...]:
        if self.states:
            return ()
        return affine_params(self.symbolic["force"], self.param_names)

    # ------------------------------------------------------------------ compiled form
    @property
    def inputs(self) -> tuple[Any, ...]:
        """Program inputs: x, v, the states, the parameters."""
        return tuple(symbol(n) for n in ("x", "v", *self.state_names, *self.param_names))

    def _block(self, e: Any) -> list[Any]:
        import sympy

        return [e] + [_tidy(sympy.diff(e, s)) for s in self.inputs]

    @property
    def program(self) -> Program:
        """Force, inertia and state-rate blocks with all first derivatives (see the module notes)."""
        return self._compiled["program"]  # type: ignore[no-any-return]

    @property
    def steady_program(self) -> Program:
        """The states' steady values from (x, v, parameters)."""
        return self._compiled["steady"]  # type: ignore[no-any-return]

    @property
    def regressor_program(self) -> Program:
        """Equation-error form: inputs (x, v, a, parameters); outputs the force and ∂F/∂θ of each
        linear parameter (the regressor of that coefficient)."""
        return self._compiled["regressor"]  # type: ignore[no-any-return]

    def _program(self) -> Program:
        sym = self.symbolic
        inertial = sym["mass"] != 0
        outs = self._block(sym["force0"])
        if inertial:
            outs += self._block(sym["mass"])
        for r in sym["rates"]:
            outs += self._block(r)
        return compile_outputs(outs, self.inputs, cse=not self.custom)

    def _steady_program(self) -> Program:
        ins = tuple(symbol(n) for n in ("x", "v", *self.param_names))
        return compile_outputs(list(self.symbolic["steady"]), ins, cse=not self.custom)

    def _regressor_program(self) -> Program:
        import sympy

        ins = tuple(symbol(n) for n in ("x", "v", "a", *self.param_names))
        if self.states:  # equation error drives the states along the record instead (dynamics.driven)
            return compile_outputs([sympy.Integer(0)], ins)
        force = self.symbolic["force"]
        outs = [force] + [_tidy(sympy.diff(force, symbol(p))) for p in self._linear_params()]
        return compile_outputs(outs, ins, cse=not self.custom)

    @property
    def block_size(self) -> int:
        """Outputs per block of :attr:`program`."""
        return 3 + self.n_states + self.n_params

    # ------------------------------------------------------------------ display
    def unit(self, name: str, force_unit: str = "N", x_unit: str = "m") -> str:
        """Unit of parameter or state ``name`` for the record's units."""
        for p in self.params:
            if p.name == name:
                return p.unit_text(force_unit, x_unit)
        for s in self.states:
            if s.name == name:
                return format_unit(s.unit, force_unit, x_unit)
        raise ModelSpecError(f"term `{self.name}` has no parameter or state `{name}`")

    def render(self, coef: Mapping[str, str]) -> str:
        """The term as it reads in an equation, with ``coef[name]`` for each parameter."""
        text = self.template or (self.basis and "{" + self.param_names[0] + "}·" + self.basis) or self.force
        for p in self.param_names:
            text = text.replace("{" + p + "}", coef.get(p, p))
        return text

    @property
    def expr(self) -> str:
        """The force as it reads in tables, e.g. ``k3·x³`` or ``m1·x²·ẍ``."""
        text = self.render({})
        return f"{text}·ẍ" if self.inertial else text

    def dims(self) -> dict[str, Dim | None]:
        """Units of the variables, states and parameters by name."""
        out: dict[str, Dim | None] = dict(_VARIABLE_DIMS)
        out.update({s.name: s.unit for s in self.states})
        out.update({p.name: p.unit for p in self.params})
        return out


def affine_params(force: Any, names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The parameters among ``names`` that ``force`` is jointly affine in.

    A parameter is affine when its first derivative no longer contains it, and the set is joint
    when no such derivative contains another of them (``k*x + k*c*v`` is affine in ``k`` and in
    ``c`` separately, but not jointly). Structural, from first derivatives only: a second
    derivative of a long typed expression can cost sympy minutes.
    """
    import sympy

    partial = {p: sympy.diff(force, symbol(p)) for p in names}
    cand = [p for p in names if not partial[p].has(symbol(p))]
    syms = [symbol(p) for p in cand]
    return tuple(p for p in cand if not partial[p].has(*syms))


def _tidy(e: Any) -> Any:
    """Rewrite a derivative so it stays finite where the function is: ``u·sign(u)`` becomes ``|u|``
    and powers of one base are merged (``|z|^ν/|z|`` is ``|z|^(ν−1)``), so e.g. the derivative of
    ``|z|^(ν−1)·z`` at ``z = 0`` is its limit instead of ``0·∞``."""
    import sympy

    def has_pair(t: Any) -> bool:
        return isinstance(t, sympy.Mul) and any(isinstance(f, sympy.sign) and f.args[0] in t.args for f in t.args)

    def fix(t: Any) -> Any:
        for f in t.args:
            if isinstance(f, sympy.sign) and f.args[0] in t.args:
                u = f.args[0]
                return fix_all(t / (f * u) * sympy.Abs(u))
        return t

    def fix_all(t: Any) -> Any:
        return sympy.powsimp(t, force=True).replace(has_pair, fix)

    return sympy.powsimp(fix_all(e), force=True)
